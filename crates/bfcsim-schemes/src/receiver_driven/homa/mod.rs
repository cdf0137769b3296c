//! Homa (Montazeri et al., SIGCOMM 2018): receiver-driven transport with network priorities, sans-IO.
//!
//! - [`Priorities`] (Homa §3 "Packet priorities"): the split of the switches' priority levels between
//!   unscheduled and scheduled traffic in proportion to the bytes each carries in the workload, and the
//!   unscheduled cutoffs, cut from the workload's message sizes so that each unscheduled level carries about the
//!   same unscheduled bytes, smaller messages on higher levels.
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

/// The priority levels of a run: which go to unscheduled packets and the message sizes that choose among them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Priorities {
    /// Unscheduled level `i` (0 highest) carries messages of at most `cutoffs[i]` bytes; the last is `u64::MAX`.
    cutoffs: Vec<u64>,
    /// Scheduled levels: `unscheduled()..total`.
    total: u32,
}

impl Priorities {
    /// Levels for a workload whose messages have `sizes` bytes (any order; the run's own messages stand for the
    /// size distribution), with `cfg`'s count of levels and RTTbytes.
    pub fn from_sizes(cfg: &HomaConfig, sizes: &[u64]) -> Priorities {
        let rtt = cfg.rtt_bytes.0;
        let mut sizes = sizes.to_vec();
        sizes.sort_unstable();
        let unsched_bytes: u128 = sizes.iter().map(|&s| s.min(rtt) as u128).sum();
        let total_bytes: u128 = sizes.iter().map(|&s| s as u128).sum();
        let levels = if cfg.unscheduled_priorities > 0 {
            cfg.unscheduled_priorities
        } else if total_bytes == 0 {
            1
        } else {
            let share = unsched_bytes as f64 / total_bytes as f64;
            ((share * cfg.priorities as f64).round() as u32).clamp(1, cfg.priorities - 1)
        };
        // Cut where the cumulative unscheduled bytes pass each 1/levels of their total (smallest first).
        let mut cutoffs = Vec::with_capacity(levels as usize);
        let mut acc = 0u128;
        let mut next = 1;
        for &s in &sizes {
            acc += s.min(rtt) as u128;
            while next < levels && acc * levels as u128 >= unsched_bytes * next as u128 {
                if cutoffs.last() != Some(&s) {
                    cutoffs.push(s);
                }
                next += 1;
            }
        }
        cutoffs.truncate(levels as usize - 1);
        cutoffs.push(u64::MAX);
        Priorities {
            cutoffs,
            total: cfg.priorities,
        }
    }

    /// Levels given to unscheduled packets: `0..unscheduled()`.
    pub fn unscheduled(&self) -> u32 {
        self.cutoffs.len() as u32
    }

    /// The level of the unscheduled packets of a message of `size` bytes (§3 "Packet priorities": set by the
    /// sender from the message's size).
    pub fn unscheduled_level(&self, size: u64) -> u8 {
        self.cutoffs.partition_point(|&c| c < size) as u8
    }

    /// Scheduled levels (`total - unscheduled()`).
    pub fn scheduled(&self) -> u32 {
        self.total - self.unscheduled()
    }

    /// The scheduled level of the message ranked `rank` (0: fewest bytes left) among `n` granted ones: the
    /// highest scheduled level for rank 0 when every level is used, the lowest `n` levels otherwise (§3 "Packet
    /// priorities": leaving the higher ones free for shorter messages that come later).
    pub fn scheduled_level(&self, rank: u32, n: u32) -> u8 {
        let s = self.scheduled();
        let n = n.min(s);
        (self.unscheduled() + (s - n) + rank.min(n - 1)) as u8
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

    fn cfg(priorities: u32) -> HomaConfig {
        HomaConfig {
            priorities,
            rtt_bytes: Bytes(10_000),
            ..HomaConfig::default()
        }
    }

    #[test]
    fn levels_split_by_bytes_and_cutoffs_by_equal_unscheduled_bytes() {
        // 90 messages of 1 KB and 10 of 1 MB: unscheduled bytes 90 KB + 100 KB of 10.09 MB in all, 1.9%:
        // one unscheduled level of 8.
        let mut sizes = vec![1_000; 90];
        sizes.extend([1_000_000; 10]);
        let p = Priorities::from_sizes(&cfg(8), &sizes);
        assert_eq!((p.unscheduled(), p.scheduled()), (1, 7));
        assert_eq!(p.unscheduled_level(1), 0);
        assert_eq!(p.unscheduled_level(u64::MAX), 0);
        // All short messages: every byte unscheduled, so all levels but one; cutoffs at equal byte shares.
        let sizes: Vec<u64> = (1..=100).map(|i| i * 100).collect();
        let p = Priorities::from_sizes(&cfg(4), &sizes);
        assert_eq!(p.unscheduled(), 3);
        // Unscheduled bytes 100·5050 = 505,000: a third is passed at 5,800 (171,100 ≥ 168,333) and two
        // thirds at 8,200 (340,300 ≥ 336,667).
        assert_eq!(p.cutoffs, vec![5_800, 8_200, u64::MAX]);
        assert_eq!(p.unscheduled_level(5_800), 0);
        assert_eq!(p.unscheduled_level(5_801), 1);
        assert_eq!(p.unscheduled_level(1_000_000), 2);
        let fixed = HomaConfig {
            unscheduled_priorities: 2,
            ..cfg(4)
        };
        assert_eq!(Priorities::from_sizes(&fixed, &sizes).unscheduled(), 2);
    }

    #[test]
    fn fewer_granted_messages_than_levels_use_the_lowest() {
        let p = Priorities {
            cutoffs: vec![u64::MAX],
            total: 8,
        };
        // Seven scheduled levels, 1..=7; two messages take 6 and 7, the shorter 6.
        assert_eq!(p.scheduled_level(0, 2), 6);
        assert_eq!(p.scheduled_level(1, 2), 7);
        assert_eq!(p.scheduled_level(0, 7), 1);
        assert_eq!(p.scheduled_level(6, 9), 7);
    }

    #[test]
    fn grants_go_to_the_shortest_remaining_messages_within_the_overcommitment() {
        let p = Priorities {
            cutoffs: vec![u64::MAX],
            total: 4,
        };
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
        let p = Priorities {
            cutoffs: vec![u64::MAX],
            total: 2,
        };
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
