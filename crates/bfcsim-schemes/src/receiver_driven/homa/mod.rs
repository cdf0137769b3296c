//! Homa (Montazeri et al., SIGCOMM 2018): receiver-driven transport with network priorities, sans-IO.
//!
//! - [`Priorities`] (Homa §3 "Packet priorities", in [`super::priorities`]): the switches' priority levels split
//!   between unscheduled and scheduled traffic, and the unscheduled cutoffs cut from the workload.
//! - [`GrantScheduler`] (§3 "Flow control", "Packet priorities", "Overcommitment"): a receiver's view of its
//!   incoming messages; after each data packet it grants the `overcommitment` messages with the fewest bytes left (SRPT)
//!   up to `RTTbytes` beyond what it has received, each at a scheduled priority by its rank, using the lowest
//!   scheduled levels when fewer messages are granted than there are levels.
//!
//! Priority 0 is the highest (the switch model serves its strict-priority classes from 0).
//!
//! [`Homa`] is the scheme on the fabric ([`crate::fabric`]): senders, receivers and the core ports of Table 2.

mod scheme;

use bfcsim_core::{Bytes, Time};
use bfcsim_net::packet::PacketKind;
use serde::{Deserialize, Serialize};

use super::aeolus::{AeolusConfig, AeolusStats};
pub use super::priorities::Priorities;

pub use scheme::{Homa, HomaReport};

/// The receiver lets the sender send up to byte `seq`, its scheduled packets at level `aux` (Homa §3, "Flow
/// control").
pub const GRANT: PacketKind = PacketKind::control(0);
/// The receiver asks the sender to resend the `aux` bytes from byte `seq` (Homa §3, "Lost packets").
pub const RESEND: PacketKind = PacketKind::control(1);
/// Homa(A)'s probe: right behind a message's last unscheduled packet, on its path and in its queue; `seq` is the
/// bytes the unscheduled packets covered ([`super::aeolus`]).
pub const PROBE: PacketKind = PacketKind::scheduled(0);

/// Homa's parameters (`[flow_control] kind = "homa"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HomaConfig {
    /// Priority levels of every switch port (and `switch.classes`): the Homa paper's simulations use 8; BFC App.
    /// A.2 ran 32.
    pub priorities: u32,
    /// Levels for unscheduled packets; 0 derives them from the workload: the share of the bytes that go
    /// unscheduled, at least one level and at most all but one (§3 "Packet priorities").
    pub unscheduled_priorities: u32,
    /// Bytes a sender sends unscheduled and a receiver keeps granted beyond what it received (§3 "Flow
    /// control": RTTbytes, one round trip at the host link rate; 100 KB is CLOS-128's 8 µs at 100 Gb/s).
    pub rtt_bytes: Bytes,
    /// Messages a receiver grants at once (§3 "Overcommitment": the degree of overcommitment); 0 sets it to the
    /// number of scheduled priorities, as Homa and BFC App. A.2 do.
    pub overcommitment: u32,
    /// A receiver that has granted bytes of a message and heard nothing of it for this long asks for them again
    /// with a RESEND (§3 "Lost packets"); each further RESEND waits twice as long. Milliseconds, as Homa's
    /// implementations use: packets queued behind an incast with unbounded buffers wait close to one (at 100 µs,
    /// BFC Fig. 19's setup draws RESENDs for them and 74,000 duplicate packets in 1 ms of arrivals; at 1 ms,
    /// none).
    pub resend_timeout: Time,
    /// Aeolus (`[flow_control.aeolus]`; PayDebt's Homa(A)): unscheduled packets dropped above a small
    /// threshold, a probe behind them, and their losses resent as scheduled packets on RESENDs. Absent: off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeolus: Option<AeolusConfig>,
}

impl Default for HomaConfig {
    fn default() -> Self {
        HomaConfig {
            priorities: 8,
            unscheduled_priorities: 0,
            rtt_bytes: Bytes(100_000),
            overcommitment: 0,
            resend_timeout: Time::from_ms(1),
            aeolus: None,
        }
    }
}

impl HomaConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=63).contains(&self.priorities) {
            return Err(format!(
                "flow_control.priorities = {} must be in 2..=63",
                self.priorities
            ));
        }
        if self.unscheduled_priorities >= self.priorities {
            return Err(format!(
                "flow_control.unscheduled_priorities = {} must leave a scheduled level below priorities = {} \
                 (0 derives it from the workload)",
                self.unscheduled_priorities, self.priorities
            ));
        }
        if self.rtt_bytes.0 == 0 {
            return Err("flow_control.rtt_bytes must be at least 1 byte".into());
        }
        if self.resend_timeout == Time::ZERO {
            return Err("flow_control.resend_timeout must be positive".into());
        }
        if let Some(a) = &self.aeolus {
            if a.unscheduled.is_some() {
                return Err(
                    "flow_control.aeolus.unscheduled: Homa sends its rtt_bytes unscheduled; set \
                     flow_control.rtt_bytes instead"
                        .into(),
                );
            }
            a.validate()?;
        }
        Ok(())
    }
}

/// A grant: the sender of message `id` may send up to byte `offset`, its scheduled packets at `priority`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The message (flow id).
    pub id: u32,
    /// Bytes the sender may have sent.
    pub offset: u64,
    /// The level of its scheduled packets.
    pub priority: u8,
}

/// One incoming message at a receiver.
#[derive(Clone, Copy, Debug)]
struct Incoming {
    id: u32,
    size: u64,
    received: u64,
    granted: u64,
    priority: u8,
}

/// A receiver's grant scheduler: its incoming messages and the grants it owes them.
///
/// Call order: [`GrantScheduler::on_data`] for every data packet of a message (the first one creates it), then
/// [`GrantScheduler::poll_grants`] for the grants to send; [`GrantScheduler::remove`] when a message completes.
#[derive(Clone, Debug, Default)]
pub struct GrantScheduler {
    /// Incoming messages, by arrival (order only breaks ties).
    msgs: Vec<Incoming>,
}

impl GrantScheduler {
    /// Message `id` of `size` bytes, of which the receiver now holds `received`; `unscheduled` bytes were its
    /// sender's to send without a grant.
    pub fn on_data(&mut self, id: u32, size: u64, received: u64, unscheduled: u64) {
        match self.msgs.iter_mut().find(|m| m.id == id) {
            Some(m) => m.received = m.received.max(received),
            None => self.msgs.push(Incoming {
                id,
                size,
                received,
                granted: unscheduled.min(size),
                priority: u8::MAX,
            }),
        }
    }

    /// Message `id` is complete (or gone): it leaves the scheduler.
    pub fn remove(&mut self, id: u32) {
        self.msgs.retain(|m| m.id != id);
    }

    /// Message `id`'s current grant (its offset counting the unscheduled bytes; priority `u8::MAX` before its
    /// first grant) and the bytes held, if it is known.
    pub fn progress(&self, id: u32) -> Option<(Grant, u64)> {
        self.msgs.iter().find(|m| m.id == id).map(|m| {
            let grant = Grant {
                id,
                offset: m.granted,
                priority: m.priority,
            };
            (grant, m.received)
        })
    }

    /// The grants due now (§3 "Flow control", "Overcommitment"): among the messages with bytes not yet granted,
    /// the `overcommitment` with the fewest bytes left get `received + rtt_bytes` (at most their size), each at the scheduled level
    /// of its rank; a grant goes when it moves the offset or changes the level.
    pub fn poll_grants(
        &mut self,
        prio: &Priorities,
        overcommitment: u32,
        rtt_bytes: u64,
        out: &mut Vec<Grant>,
    ) {
        let mut active: Vec<usize> = (0..self.msgs.len())
            .filter(|&i| self.msgs[i].granted < self.msgs[i].size)
            .collect();
        // SRPT; ties by arrival (a stable sort keeps it).
        active.sort_by_key(|&i| self.msgs[i].size - self.msgs[i].received);
        active.truncate(overcommitment as usize);
        let n = active.len() as u32;
        for (rank, &i) in active.iter().enumerate() {
            let m = &mut self.msgs[i];
            let offset = (m.received + rtt_bytes).min(m.size).max(m.granted);
            let level = prio.scheduled_level(rank as u32, n);
            if offset > m.granted || level != m.priority {
                m.granted = offset;
                m.priority = level;
                out.push(Grant {
                    id: m.id,
                    offset,
                    priority: level,
                });
            }
        }
    }
}

/// Homa's counts over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HomaStats {
    /// Grants receivers sent.
    pub grants: u64,
    /// RESENDs receivers sent.
    pub resends: u64,
    /// Queuing delay (ps) of scheduled data packets at switch ports from a ToR up into the core (Table 2's
    /// ToR-Agg).
    pub core_up: bfcsim_core::LogHistogram,
    /// The same at switch ports from the core down to a ToR (Table 2's Agg-ToR).
    pub core_down: bfcsim_core::LogHistogram,
    /// Aeolus's counts (zero without it).
    pub aeolus: AeolusStats,
}

impl std::ops::Add for HomaStats {
    type Output = HomaStats;
    fn add(mut self, o: HomaStats) -> HomaStats {
        self.grants += o.grants;
        self.resends += o.resends;
        self.core_up.merge(&o.core_up);
        self.core_down.merge(&o.core_down);
        self.aeolus = self.aeolus + o.aeolus;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_go_to_the_shortest_remaining_messages_within_the_overcommitment() {
        let p = Priorities::from_sizes(4, 1, 0, &[]);
        let mut g = GrantScheduler::default();
        let mut out = Vec::new();
        // Three messages; each arrived with its first unscheduled packet of 1 KB of 10 KB unscheduled.
        g.on_data(1, 100_000, 1_000, 10_000);
        g.on_data(2, 30_000, 1_000, 10_000);
        g.on_data(3, 60_000, 1_000, 10_000);
        g.poll_grants(&p, 2, 10_000, &mut out);
        // Overcommitment 2: messages 2 (29 KB left) and 3 (59 KB left), at the two lowest of three levels.
        assert_eq!(
            out,
            vec![
                Grant {
                    id: 2,
                    offset: 11_000,
                    priority: 2
                },
                Grant {
                    id: 3,
                    offset: 11_000,
                    priority: 3
                },
            ]
        );
        out.clear();
        // Message 3's next packet: only its grant moves.
        g.on_data(3, 60_000, 2_000, 10_000);
        g.poll_grants(&p, 2, 10_000, &mut out);
        assert_eq!(
            out,
            vec![Grant {
                id: 3,
                offset: 12_000,
                priority: 3
            }]
        );
        out.clear();
        // Message 2 completes: message 3, now the shortest, moves up to level 2 (a grant that only changes
        // the level) and message 1 enters the granted set below it.
        g.remove(2);
        g.poll_grants(&p, 2, 10_000, &mut out);
        assert_eq!(
            out,
            vec![
                Grant {
                    id: 3,
                    offset: 12_000,
                    priority: 2
                },
                Grant {
                    id: 1,
                    offset: 11_000,
                    priority: 3
                },
            ]
        );
    }

    #[test]
    fn a_fully_granted_message_leaves_the_set_and_grants_never_shrink() {
        let p = Priorities::from_sizes(2, 1, 0, &[]);
        let mut g = GrantScheduler::default();
        let mut out = Vec::new();
        g.on_data(1, 15_000, 1_000, 10_000);
        g.poll_grants(&p, 1, 10_000, &mut out);
        assert_eq!(out[0].offset, 11_000);
        out.clear();
        g.on_data(1, 15_000, 6_000, 10_000);
        g.poll_grants(&p, 1, 10_000, &mut out);
        assert_eq!(out[0].offset, 15_000, "capped at the size");
        out.clear();
        // A smaller message now is the only one with ungranted bytes.
        g.on_data(2, 12_000, 1_000, 10_000);
        g.on_data(1, 15_000, 5_000, 10_000);
        g.poll_grants(&p, 1, 10_000, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].id, out[0].offset), (2, 11_000));
        assert_eq!(
            g.progress(1).map(|(g, held)| (g.offset, g.priority, held)),
            Some((15_000, 1, 6_000)),
            "received never goes back"
        );
    }
}
