//! NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency and high performance",
//! SIGCOMM 2017; the paper is not in `papers/`, its sections are cited by number; htsim's `ndp.cpp`,
//! `compositequeue.cpp` and `ndp.h` in Broadcom/csg-htsim settle what it leaves open). PayDebt (§2.2, §5)
//! compares against it.
//!
//! - **Switches** (§3.1): small data queues (8 packets by default) that trim an arriving packet's payload
//!   when full and forward its header in the high-priority control queue; the enqueue is trim-tail's
//!   ([`crate::flow_control::trimming::trim_enqueue`]). The control queue, which also carries the PULLs and
//!   replies, is bounded in bytes ([`NdpConfig::header_queue`]; htsim: twice the data queue's bytes). A header
//!   that finds it full is **returned to its sender** (§3.1's return-to-sender, htsim's `bounce`) when
//!   [`NdpConfig::return_to_sender`] is on: it turns round as a [`BOUNCE`] addressed to the flow's source,
//!   routed back from that switch; a bounced header that meets a full queue again is dropped, as in htsim.
//! - **Receiver** (§3.2): every arriving data packet or header adds a PULL for its flow to the receiver's
//!   [`PullPacer`], which sends one per full packet's serialization time at the receiver's link rate (htsim's
//!   `NdpPullPacer`, packet plus ACK bytes), taking the flows with PULLs waiting in turn (htsim's
//!   `FairPullQueue`), so the data they release arrives at line rate and is shared fairly. A header also draws a
//!   NACK at once (trim-tail's reply), which the sender takes as a loss notice for that segment. PULLs carry
//!   the flow's cumulative pull count, so a lost PULL is made up by the next; a flow's waiting PULLs are
//!   released when it completes.
//! - **Sender** (§3.2, [`Credit`]): a new flow sends its first window ([`NdpConfig::initial_window`], one
//!   BDP) at line rate, then one packet per PULL: a trimmed or returned packet's retransmission first (selective
//!   repeat resends what a NACK or a return named before new data), else the next new packet. A returned
//!   packet waits for a PULL like any other unless no PULL can come (htsim's `processRTS`: nothing else of the
//!   flow in flight and every PULL its answered packets earned already here), when it is resent at once.
//!   Packets are sprayed over all paths (`switch.load_balancing = "spray"` in the preset).
//!
//! Departures (`docs/FIDELITY.md`, NDP): a full data queue always trims the arriving packet (htsim trims the
//! packet at the queue's tail instead half the time, against phase effects); a returned header is routed back
//! by the fabric's routing, not along its own path reversed; the transport's retransmission timeout stays on
//! as a last resort (htsim's NDP has none: return-to-sender makes it unneeded in simulation); PULLs are not
//! prioritised between a receiver's flows (§3.2 allows it; htsim's default pacer does not).

mod scheme;

use std::collections::VecDeque;

use bfcsim_core::{Bytes, FlowId, Time};
use bfcsim_net::packet::PacketKind;
use serde::{Deserialize, Serialize};

use crate::cc::WindowSpec;

pub use scheme::Ndp;

/// The receiver asks the sender for one more packet; `seq` is the flow's cumulative count of PULLs.
pub const PULL: PacketKind = PacketKind::control(0);

/// A header a switch returned to its sender; `seq` and `sent_at` are the data packet's.
pub const BOUNCE: PacketKind = PacketKind::control(1);

/// NDP's parameters (`[flow_control] kind = "ndp"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NdpConfig {
    /// Packets a switch data queue holds before arriving ones are trimmed (§3.1: 8).
    pub queue_packets: u32,
    /// Bytes of a trimmed packet's header (htsim: 64).
    pub header: u32,
    /// Bytes the control queue (headers, PULLs, replies) holds; unset: twice the data queue's, `queue_packets`
    /// full packets (htsim's `CompositeQueue`).
    pub header_queue: Option<Bytes>,
    /// A header that finds the control queue full goes back to its sender (§3.1), else it is dropped and its
    /// segment waits for the retransmission timeout.
    pub return_to_sender: bool,
    /// What a new flow sends before its first PULL (§3.2: one BDP); `"bdp"`, `"2bdp"` or a size.
    pub initial_window: WindowSpec,
}

impl Default for NdpConfig {
    fn default() -> Self {
        NdpConfig {
            queue_packets: 8,
            header: 64,
            header_queue: None,
            return_to_sender: true,
            initial_window: WindowSpec::Bdp(1),
        }
    }
}

impl NdpConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        crate::flow_control::trimming::validate_trimming(self.queue_packets, self.header)?;
        if self
            .header_queue
            .is_some_and(|b| b.0 < u64::from(self.header))
        {
            return Err("flow_control.header_queue must hold at least one header".into());
        }
        Ok(())
    }

    /// The control queue's bound in bytes, for full packets of `packet` bytes.
    pub fn header_queue_bytes(&self, packet: u32) -> u64 {
        self.header_queue
            .map_or(2 * u64::from(self.queue_packets) * u64::from(packet), |b| {
                b.0
            })
    }
}

/// What NDP counted in one shard (the fabric counts trimmed packets and bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NdpStats {
    /// PULLs receivers sent.
    pub pulls: u64,
    /// PULLs that reached a sender still running.
    pub pulls_heard: u64,
    /// NACKs receivers sent for headers.
    pub header_nacks: u64,
    /// Headers returned to their senders from full control queues.
    pub bounces: u64,
    /// Returned headers that reached a sender still running.
    pub bounces_heard: u64,
    /// Returned packets resent at once, with no PULL to wait for.
    pub bounce_resends: u64,
    /// Headers dropped at full control queues (return to sender off, or returned already).
    pub header_drops: u64,
}

bfcsim_core::add_fields!(NdpStats {
    pulls,
    pulls_heard,
    header_nacks,
    bounces,
    bounces_heard,
    bounce_resends,
    header_drops,
});

impl std::fmt::Display for NdpStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} PULLs sent ({} reached a running sender), {} NACKs for headers, {} headers returned to \
             sender ({} reached it, {} resent at once), {} headers dropped at full control queues",
            self.pulls,
            self.pulls_heard,
            self.header_nacks,
            self.bounces,
            self.bounces_heard,
            self.bounce_resends,
            self.header_drops
        )
    }
}

/// A receiver's PULL pacer (§3.2, htsim `NdpPullPacer` over a `FairPullQueue`): the PULLs its arrivals asked
/// for, sent one per `spacing` (a full packet's serialization at the receiver's link rate), one flow's at a
/// time in turn across the flows that have PULLs waiting. Sans-IO: the receiver pushes a flow's PULL and
/// polls; a poll says which flow's PULL to send now and when to poll again.
#[derive(Clone, Debug, Default)]
pub struct PullPacer {
    /// The flows with PULLs waiting, in turn, with how many each.
    ring: VecDeque<(FlowId, u32)>,
    /// When the next PULL may leave.
    next: Time,
}

impl PullPacer {
    /// A packet of flow `id` arrived: one more PULL for it.
    pub fn push(&mut self, id: FlowId) {
        match self.ring.iter_mut().find(|(f, _)| *f == id) {
            Some((_, n)) => *n += 1,
            None => self.ring.push_back((id, 1)),
        }
    }

    /// Flow `id` completed: its waiting PULLs are not sent (htsim's `release_pulls`).
    pub fn release(&mut self, id: FlowId) {
        self.ring.retain(|(f, _)| *f != id);
    }

    /// At `now`: the flow whose PULL to send now, if one is due, and when to poll again (`None`: nothing
    /// waits).
    pub fn poll(&mut self, now: Time, spacing: Time) -> (Option<FlowId>, Option<Time>) {
        if self.ring.is_empty() {
            return (None, None);
        }
        if now < self.next {
            return (None, Some(self.next));
        }
        let (id, n) = self.ring.pop_front().expect("not empty");
        if n > 1 {
            self.ring.push_back((id, n - 1));
        }
        self.next = now + spacing;
        (Some(id), (!self.ring.is_empty()).then_some(self.next))
    }

    /// PULLs waiting.
    pub fn len(&self) -> usize {
        self.ring.iter().map(|&(_, n)| n as usize).sum()
    }

    /// No PULL waits.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

/// A sender's credit (§3.2, htsim `NdpSrc`): its first window, then a packet per PULL, and what it knows of
/// the PULLs still to come, which decides whether a returned packet waits for one. Sans-IO: the scheme feeds
/// it what the sender sends and hears.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Credit {
    /// Data packets sent.
    pub sent: u64,
    /// The highest cumulative PULL count heard.
    pub pulled: u64,
    /// Packets the receiver answered (ACKs and NACKs heard): each earned one PULL.
    pub answered: u64,
    /// Packets returned by a switch.
    pub returned: u64,
    /// Sends granted beyond the PULLs: returned packets resent at once.
    pub extra: u64,
}

impl Credit {
    /// Whether a packet may go now, with `initial` packets of first window.
    #[inline]
    pub fn may_send(&self, initial: u64) -> bool {
        self.sent < initial + self.pulled + self.extra
    }

    /// A PULL with cumulative count `count` arrived.
    pub fn pulled(&mut self, count: u64) {
        self.pulled = self.pulled.max(count);
    }

    /// A packet of the flow came back from a switch; returns whether it is resent at once, because no PULL
    /// can come to release it: every other packet sent is answered or returned, and every PULL the answered
    /// ones earned has arrived (htsim resends at once only then, else "swallows" the return and waits).
    pub fn returned(&mut self) -> bool {
        self.returned += 1;
        let in_flight = self.sent.saturating_sub(self.answered + self.returned);
        let none_coming = in_flight == 0 && self.pulled >= self.answered;
        self.extra += u64::from(none_coming);
        none_coming
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(n: u64) -> Time {
        Time::from_ns(n)
    }

    /// The pacer sends its PULLs one spacing apart and says when to come back.
    #[test]
    fn pulls_leave_one_spacing_apart() {
        let mut p = PullPacer::default();
        let spacing = ns(84);
        for id in [1, 2, 1] {
            p.push(FlowId(id));
        }
        assert_eq!(p.len(), 3);
        assert_eq!(p.poll(ns(1000), spacing), (Some(FlowId(1)), Some(ns(1084))));
        assert_eq!(
            p.poll(ns(1050), spacing),
            (None, Some(ns(1084))),
            "too early"
        );
        assert_eq!(p.poll(ns(1084), spacing), (Some(FlowId(2)), Some(ns(1168))));
        assert_eq!(p.poll(ns(1168), spacing), (Some(FlowId(1)), None));
        assert!(p.is_empty());
        assert_eq!(p.poll(ns(1200), spacing), (None, None));
        // A PULL asked for after a quiet spell leaves at once if the last left a spacing ago.
        p.push(FlowId(3));
        assert_eq!(p.poll(ns(1252), spacing), (Some(FlowId(3)), None));
        p.push(FlowId(3));
        assert_eq!(p.poll(ns(1260), spacing), (None, Some(ns(1336))));
    }

    /// The receiver's link is shared across its senders: a flow whose packets arrived in a burst does not hold
    /// the PULLs of one that arrived after it, and a completed flow's PULLs are dropped.
    #[test]
    fn pulls_take_the_flows_in_turn() {
        let mut p = PullPacer::default();
        for id in [1, 1, 1, 2, 2, 3] {
            p.push(FlowId(id));
        }
        let spacing = ns(10);
        let order: Vec<u32> = (0..6)
            .map(|i| p.poll(ns(10 * i), spacing).0.expect("due").0)
            .collect();
        assert_eq!(order, [1, 2, 3, 1, 2, 1]);
        for id in [1, 1, 2] {
            p.push(FlowId(id));
        }
        p.release(FlowId(1));
        assert_eq!(p.len(), 1);
        assert_eq!(p.poll(ns(100), spacing), (Some(FlowId(2)), None));
    }

    /// A sender sends its first window, then one packet per PULL; PULLs are cumulative, so a late one
    /// changes nothing.
    #[test]
    fn credit_is_the_window_then_a_packet_per_pull() {
        let mut c = Credit::default();
        let initial = 3;
        while c.may_send(initial) {
            c.sent += 1;
        }
        assert_eq!(c.sent, 3);
        c.pulled(2);
        assert!(c.may_send(initial));
        c.sent += 1;
        c.pulled(1); // a PULL overtaken by a later one
        assert!(c.may_send(initial));
        c.sent += 1;
        assert!(!c.may_send(initial));
    }

    /// A returned packet waits for a PULL while any can still come (htsim swallows it), and is resent at once
    /// when none can: the flow's other packets all answered or returned, their PULLs all here.
    #[test]
    fn a_returned_packet_is_resent_at_once_only_when_no_pull_can_come() {
        let mut c = Credit {
            sent: 4,
            ..Credit::default()
        };
        // Two answered (their PULLs still to come), one returned, one still in flight.
        c.answered = 2;
        assert!(!c.returned(), "PULLs are coming");
        // The last one comes back too, but the two answered packets' PULLs have not arrived.
        assert!(!c.returned());
        assert!(!c.may_send(4));
        c.pulled(2);
        assert!(c.may_send(4), "a PULL releases a resend");
        c.sent += 2;
        // Both resends come back, with every PULL here: once neither is in flight nothing more can come, and
        // the last goes at once.
        assert!(!c.returned(), "the other resend is in flight");
        assert!(c.returned());
        assert!(c.may_send(4));
        c.sent += 1;
        assert_eq!(c.extra, 1);
    }
}
