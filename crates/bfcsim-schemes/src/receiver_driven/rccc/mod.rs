//! RCCC, the Ultra Ethernet transport's receiver credit congestion control (UET specification 1.0, 2025; the
//! specification is not in `papers/`, so no section of it is cited), as the consortium's reference model runs
//! it (ultraethernet/uet-htsim, `uec.cpp`: `UecSrc::computePullTarget`, `handlePull`,
//! `UecSink::handlePullTarget`, `pull`, `UecPullPacer`), alone (`[cc] name = "none"`, htsim's
//! `-receiver_cc_only`) or beside NSCC's window (`[cc] name = "nscc"`, htsim's `-sender_cc_algo nscc
//! -receiver_cc`).
//!
//! - **Sender** ([`Credit`]): a flow may send while it holds credit, in bytes on the wire. It starts with a
//!   speculative allowance of [`RcccConfig::max_credit`] (1.5 BDPs) and drops whatever is left of it at the
//!   first ACK, NACK, PULL or timeout (`stopSpeculating`); each PULL then adds the credit it grants, up to that
//!   same maximum. Each data packet carries the flow's **pull target**: the cumulative credit it wants, which is the credit
//!   granted so far plus what it still has to send (new and resent bytes with their headers), capped at its
//!   window plus a packet when NSCC runs beside it and at the maximum credit, less the credit it holds, at
//!   least a packet while speculating with data left, and shared among the host's flows
//!   waiting for the host's NIC (`_nic.activeSources()`).
//! - **Receiver** ([`CreditPacer`], one per host): a flow whose pull target rises past the credit granted
//!   joins the pacer's active list; the pacer grants, in turn across the active flows, a PULL of up to
//!   [`RcccConfig::credit_per_pull`] (four MSS, htsim's `_mtus_per_pull`) but never past the flow's target,
//!   each PULL followed by the time its credit takes at [`RcccConfig::pull_rate`] (0.99) of the host's link
//!   rate. A flow whose target is met moves to the idle list, whose flows get **slow pulls** (a full
//!   `credit_per_pull` each, past the target) while no flow is active, up to the maximum credit beyond the
//!   target: the idle list is a queue that keeps a flow once for each time its demand was met, finished flows
//!   too. Credit is counted in quanta of [`RcccConfig::quantum`] (256 B, `UEC_PULL_QUANTUM`); PULLs carry
//!   the cumulative count, so a lost one is made up by the next.
//! - **Trimmed packets**: switches trim as `trim-tail` does (the flow-control scheme's `queue_packets`,
//!   `header`, `header_packets`); a header draws a NACK at once and puts its flow back among the active ones,
//!   so that the sender gets the credit to resend it.
//! - **After a timeout** (`rtxTimerExpired`): a flow that already had packets to resend, or has no credit,
//!   sends an RTS (a header-sized request, at most once per base RTT: `UecSrc::sendRTS`) carrying the pull
//!   target of its last packet, which puts it back on its receiver's active list.
//!
//! A flow can so be left with data to send, no credit and nothing in flight: each packet asked for its share
//! of what was left, the last grant met the target, and no timer runs for data not in flight. It waits for a
//! slow pull, which comes only once no other flow to its receiver wants credit; uet-htsim's web-search tails
//! are these waits (docs/FIDELITY.md). [`RcccConfig::stall_rts`], off by default, has such a sender send an RTS
//! with its whole target instead, once per base RTT.
//!
//! Departure (docs/FIDELITY.md, "The Ultra Ethernet transport"): an RTS is not acknowledged or given a
//! sequence number.

mod scheme;

use std::collections::VecDeque;

use bfcsim_core::{Bytes, FlowId, Time};
use bfcsim_net::packet::PacketKind;
use serde::{Deserialize, Serialize};

pub use scheme::Rccc;

/// The receiver grants credit; `seq` is the flow's cumulative credit granted, in quanta.
pub const PULL: PacketKind = PacketKind::control(0);

/// A sender asks for credit after a timeout (or, under [`RcccConfig::stall_rts`], when stalled); `aux` is its
/// pull target, in quanta.
pub const RTS: PacketKind = PacketKind::control(1);

/// RCCC's parameters (`[flow_control] kind = "rccc"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RcccConfig {
    /// Packets a switch data queue holds before arriving ones are trimmed (as `trim-tail`'s).
    pub queue_packets: u32,
    /// Bytes of a trimmed packet's header.
    pub header: u32,
    /// Headers a switch's control queue holds; past them a header is dropped.
    pub header_packets: u32,
    /// The most credit a sender holds, and its speculative credit at the start, in BDPs (uet-htsim's
    /// `initRccc`: 1.5).
    pub max_credit: f64,
    /// Credit one PULL grants at most (uet-htsim: 4 MSS, rounded down to whole quanta).
    pub credit_per_pull: Bytes,
    /// The unit credit is counted and carried in (uet-htsim's `UEC_PULL_QUANTUM`: 256 B).
    pub quantum: Bytes,
    /// The share of the receiver's link rate its PULLs grant credit at (uet-htsim: 0.99).
    pub pull_rate: f64,
    /// A sender left with data to send, no credit and nothing in flight asks for credit with an RTS carrying
    /// its whole target, once per base RTT (not in uet-htsim, whose such senders wait for a slow pull).
    pub stall_rts: bool,
}

impl Default for RcccConfig {
    fn default() -> Self {
        RcccConfig {
            queue_packets: 150,
            header: 64,
            header_packets: 4688,
            max_credit: 1.5,
            credit_per_pull: Bytes(4 * 4086),
            quantum: Bytes(256),
            pull_rate: 0.99,
            stall_rts: false,
        }
    }
}

impl RcccConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        crate::flow_control::trimming::validate_trimming(self.queue_packets, self.header)?;
        if !(self.max_credit.is_finite() && self.max_credit > 0.0) {
            return Err("flow_control.max_credit must be a positive number of BDPs".into());
        }
        if self.quantum.0 == 0 {
            return Err("flow_control.quantum must be at least 1 byte".into());
        }
        if self.credit_per_pull < self.quantum {
            return Err("flow_control.credit_per_pull must hold at least one quantum".into());
        }
        if !(self.pull_rate > 0.0 && self.pull_rate <= 1.0) {
            return Err("flow_control.pull_rate must be in (0, 1]".into());
        }
        Ok(())
    }
}

/// What RCCC counted in one shard (the fabric counts trimmed packets and bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RcccStats {
    /// PULLs receivers sent, slow ones included.
    pub pulls: u64,
    /// Slow pulls: credit granted past a flow's target while no flow wanted more.
    pub slow_pulls: u64,
    /// PULLs that reached a sender still running.
    pub pulls_heard: u64,
    /// RTS sent by senders left without credit after a timeout.
    pub rts: u64,
    /// NACKs receivers sent for headers.
    pub header_nacks: u64,
    /// Headers dropped at full control queues.
    pub header_drops: u64,
}

bfcsim_core::add_fields!(RcccStats {
    pulls,
    slow_pulls,
    pulls_heard,
    rts,
    header_nacks,
    header_drops,
});

impl std::fmt::Display for RcccStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} PULLs sent ({} slow, {} reached a running sender), {} RTS, {} NACKs for headers, {} headers \
             dropped at full control queues",
            self.pulls,
            self.slow_pulls,
            self.pulls_heard,
            self.rts,
            self.header_nacks,
            self.header_drops
        )
    }
}

/// What a sender wants credit for when it sends, in bytes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// Bytes still to send, new and resent, with their headers (uet-htsim's `_backlog + _rtx_backlog`).
    pub backlog: u64,
    /// New bytes still to send, with their headers (`_backlog`).
    pub new: u64,
    /// The congestion window (`u64::MAX` without a sender controller).
    pub window: u64,
    /// A full packet's bytes (`_mtu`).
    pub packet: u64,
    /// Flows the host is running (`_nic.activeSources()`).
    pub sources: u64,
}

/// A sender's credit (uet-htsim's `UecSrc::_credit`, `_pull`, `_speculating`), in bytes on the wire. Sans-IO:
/// the scheme tells it what the flow sends and hears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credit {
    /// Credit held; a packet may go while it is positive, so it ends at most a packet below zero.
    credit: i64,
    /// The cumulative credit granted, in quanta, of the latest PULL heard.
    pull: u64,
    /// No PULL heard yet: the credit held is the speculative allowance.
    speculating: bool,
    /// The most credit held.
    max: i64,
    /// The pull target of the last packet sent, in quanta (what a timeout's RTS carries).
    pub last_target: u64,
    /// When the last RTS left.
    pub last_rts: Option<Time>,
}

impl Credit {
    /// A new flow's credit: a speculative `max` bytes.
    pub fn new(max: u64) -> Credit {
        let max = max as i64;
        Credit {
            credit: max,
            pull: 0,
            speculating: true,
            max,
            last_target: 0,
            last_rts: None,
        }
    }

    /// Whether a packet may go now.
    #[inline]
    pub fn may_send(&self) -> bool {
        self.credit > 0
    }

    /// Credit held, in bytes.
    pub fn held(&self) -> i64 {
        self.credit
    }

    /// A packet of `bytes` went (`spendCredit`).
    pub fn spend(&mut self, bytes: u32) {
        self.credit -= i64::from(bytes);
    }

    /// The receiver answered (an ACK, a NACK, a PULL) or the timer fired: the speculative credit left goes
    /// (`stopSpeculating`).
    pub fn stop_speculating(&mut self) {
        if self.speculating {
            self.speculating = false;
            self.credit = self.credit.min(0);
        }
    }

    /// Whether an RTS may go at `now`, one base RTT (`gap`) after the last; if so, it is counted sent.
    pub fn rts_due(&mut self, now: Time, gap: Time) -> bool {
        let due = self.last_rts.is_none_or(|t| now >= t + gap);
        if due {
            self.last_rts = Some(now);
        }
        due
    }

    /// A PULL granting cumulative `pull` quanta of `quantum` bytes arrived (`processPull`): the speculative
    /// credit left goes, and the credit grows by what is new, up to the maximum.
    pub fn pulled(&mut self, pull: u64, quantum: u64) {
        self.stop_speculating();
        if pull > self.pull {
            let granted = ((pull - self.pull) * quantum) as i64;
            self.credit = (self.credit + granted).min(self.max);
            self.pull = pull;
        }
    }

    /// The pull target a packet sent now carries, in cumulative quanta of `quantum` bytes
    /// (`computePullTarget`).
    pub fn pull_target(&self, w: Wanted, quantum: u64) -> u64 {
        let mut want = w.backlog.min(w.window.saturating_add(w.packet)) as i64;
        want = want.min(self.max) - self.credit;
        if self.speculating && want < w.packet as i64 && w.new > 0 {
            want = w.packet as i64;
        }
        if w.sources > 1 {
            want /= w.sources as i64;
        }
        let target = want + (self.pull * quantum) as i64;
        (target.max(0) as u64).div_ceil(quantum)
    }
}

/// A flow's demand at its receiver (uet-htsim's `UecSink::_highest_pull_target`, `_latest_pull`, `_in_pull`,
/// `_in_slow_pull`), in quanta.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Demand {
    /// The highest pull target heard.
    pub target: u64,
    /// The cumulative credit granted.
    pub granted: u64,
    /// On the pacer's active list.
    pub active: bool,
    /// Due slow pulls: its demand was met, and its slow credit is below the maximum.
    pub idle: bool,
}

/// One PULL the pacer sends: the flow, its cumulative credit in quanta, and whether it is a slow pull.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The flow it goes to.
    pub flow: FlowId,
    /// Its cumulative credit, in quanta.
    pub pull: u64,
    /// Granted past the flow's target (the idle list's).
    pub slow: bool,
}

/// The pacing of one receiver's PULLs ([`CreditPacer::poll`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pacing {
    /// Quanta one PULL grants at most.
    pub per_pull: u64,
    /// Picoseconds one quantum of credit takes (the quantum's serialization at the link rate over the pull
    /// rate, truncated as uet-htsim's `_time_per_quanta`).
    pub quantum_ps: u64,
    /// The most slow credit a flow gets past its target, in quanta.
    pub max_slow: u64,
}

impl Pacing {
    /// Pacing at `pull_rate` of a link of `link_bps` bits per second, `per_pull` and `quantum` bytes, flows
    /// holding at most `max_credit` bytes.
    pub fn new(
        per_pull: u64,
        quantum: u64,
        link_bps: u64,
        pull_rate: f64,
        max_credit: u64,
    ) -> Pacing {
        let quantum_ps = (8.0 * quantum as f64 * 1e12 / link_bps as f64) / pull_rate;
        Pacing {
            per_pull: per_pull / quantum,
            quantum_ps: quantum_ps as u64,
            max_slow: max_credit / quantum,
        }
    }
}

/// A receiver's PULL pacer (uet-htsim's `UecPullPacer` with its sinks' side, `UecSink::pull`). Sans-IO: the
/// scheme hands it what arrives with each flow's [`Demand`] and polls it.
#[derive(Clone, Debug, Default)]
pub struct CreditPacer {
    /// Flows whose target is above their credit, in turn.
    active: VecDeque<FlowId>,
    /// Flows whose target is met, due slow pulls while no flow is active.
    idle: VecDeque<FlowId>,
    /// When the next PULL may leave.
    next: Time,
}

impl CreditPacer {
    /// A packet of flow `id` carried pull target `target` (`handlePullTarget`): a higher one puts the flow on
    /// the active list unless it is there.
    pub fn target(&mut self, d: &mut Demand, id: FlowId, target: u64) {
        if target > d.target {
            d.target = target;
            self.activate(d, id);
        }
    }

    /// A trimmed header of flow `id` arrived (`processTrimmed`): the flow goes on the active list whatever its
    /// target, so that its sender gets the credit to resend.
    pub fn trimmed(&mut self, d: &mut Demand, id: FlowId, target: u64) {
        self.target(d, id, target);
        self.activate(d, id);
    }

    /// Puts flow `id` on the active list unless it is there; on the idle list too, it stays there as well
    /// (uet-htsim's `requestPull` leaves it).
    fn activate(&mut self, d: &mut Demand, id: FlowId) {
        if !d.active {
            d.active = true;
            self.active.push_back(id);
        }
    }

    /// At `now`: the PULL to send now, if one is due, and when to poll again (`None`: no flow waits).
    pub fn poll(
        &mut self,
        now: Time,
        demands: &mut [Demand],
        pacing: &Pacing,
    ) -> (Option<Grant>, Option<Time>) {
        if self.active.is_empty() && self.idle.is_empty() {
            return (None, None);
        }
        if now < self.next {
            return (None, Some(self.next));
        }
        let (grant, quanta) = if let Some(id) = self.active.pop_front() {
            let d = &mut demands[id.idx()];
            let before = d.granted;
            d.granted = (d.granted + pacing.per_pull).min(d.target).max(before);
            if d.target > d.granted {
                self.active.push_back(id);
            } else {
                // Once more on the idle list, even if it is there already (uet-htsim's `_idle_senders`).
                d.active = false;
                d.idle = true;
                self.idle.push_back(id);
            }
            let g = Grant {
                flow: id,
                pull: d.granted,
                slow: false,
            };
            (g, d.granted - before)
        } else {
            let id = self.idle.pop_front().expect("a list is not empty");
            let d = &mut demands[id.idx()];
            d.granted += pacing.per_pull;
            if d.target <= d.granted && d.granted - d.target < pacing.max_slow {
                self.idle.push_back(id);
            } else {
                d.idle = false;
            }
            let g = Grant {
                flow: id,
                pull: d.granted,
                slow: true,
            };
            (g, pacing.per_pull)
        };
        // A PULL that grants nothing still takes the time of 1 KB (uet-htsim's `1024 >> UEC_PULL_SHIFT`).
        let quanta = if quanta == 0 { 4 } else { quanta };
        self.next = now + Time(pacing.quantum_ps * quanta);
        (Some(grant), Some(self.next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: u64 = 256;
    const PKT: u64 = 4150;

    fn wanted(backlog: u64, sources: u64) -> Wanted {
        Wanted {
            backlog,
            new: backlog,
            window: u64::MAX,
            packet: PKT,
            sources,
        }
    }

    /// A new flow holds its speculative credit until the first PULL, which takes what is left of it; PULLs are
    /// cumulative and the credit stops at the maximum.
    #[test]
    fn credit_is_speculative_until_the_first_pull_then_granted() {
        let mut c = Credit::new(10_000);
        assert!(c.may_send());
        c.spend(4150);
        c.spend(4150);
        assert!(c.may_send());
        c.spend(4150);
        assert!(!c.may_send(), "12,450 B spent of 10,000");
        assert_eq!(c.held(), -2450);
        c.pulled(20, Q);
        assert_eq!(
            c.held(),
            20 * 256 - 2450,
            "the debt stays, the grant is added"
        );
        c.pulled(10, Q);
        assert_eq!(
            c.held(),
            20 * 256 - 2450,
            "an overtaken PULL grants nothing"
        );
        c.pulled(100, Q);
        assert_eq!(c.held(), 10_000, "capped at the maximum");
        // Spare speculative credit is dropped at the first PULL.
        let mut c = Credit::new(10_000);
        c.spend(4150);
        c.pulled(1, Q);
        assert_eq!(c.held(), 256);
    }

    /// The pull target is the credit granted plus what is left to send less the credit held, capped by the
    /// window plus a packet and by the maximum credit, at least a packet while speculating, shared among the
    /// host's flows.
    #[test]
    fn the_pull_target_asks_for_the_backlog_within_the_caps() {
        let mut c = Credit::new(262_926);
        c.spend(4150);
        // 100 packets left: capped at the maximum, less the credit held: 4,150 B, 17 quanta.
        assert_eq!(c.pull_target(wanted(415_000, 1), Q), 4150_u64.div_ceil(Q));
        // Speculating with data left: at least a packet.
        assert_eq!(c.pull_target(wanted(8300, 1), Q), 4150_u64.div_ceil(Q));
        // Nothing new left while speculating: nothing wanted.
        let none = Wanted {
            new: 0,
            ..wanted(0, 1)
        };
        assert_eq!(c.pull_target(none, Q), 0);
        c.pulled(40, Q);
        assert_eq!(c.held(), 40 * 256);
        // Granted 40 quanta: the target adds the backlog less the credit held to them.
        let t = c.pull_target(wanted(100_000, 1), Q);
        assert_eq!(t, (100_000 - 40 * 256 + 40 * 256_u64).div_ceil(Q));
        // A window of 20,000 B caps the backlog at 24,150 B.
        let w = Wanted {
            window: 20_000,
            ..wanted(100_000, 1)
        };
        assert_eq!(c.pull_target(w, Q), 24_150_u64.div_ceil(Q));
        // Four flows at the host: a quarter each.
        let t4 = c.pull_target(wanted(100_000, 4), Q);
        assert_eq!(t4, ((100_000 - 40 * 256) / 4 + 40 * 256_u64).div_ceil(Q));
    }

    fn pacing() -> Pacing {
        // 100 Gb/s at 0.99: a quantum every 20,686 ps; 63 quanta per PULL (4 x 4,086 B).
        Pacing::new(4 * 4086, Q, 100_000_000_000, 0.99, 262_926)
    }

    #[test]
    fn pacing_is_uet_htsims() {
        let p = pacing();
        assert_eq!(p.per_pull, 63);
        assert_eq!(p.quantum_ps, 20_686);
        assert_eq!(p.max_slow, 1027);
    }

    /// The pacer grants in turn across the flows that want credit, never past a flow's target, one PULL per
    /// its credit's time at the pull rate: two senders share the receiver's rate.
    #[test]
    fn the_pacer_grants_at_the_receivers_rate_in_turn_across_senders() {
        let p = pacing();
        let mut d = vec![Demand::default(); 3];
        let mut pacer = CreditPacer::default();
        let (a, b) = (FlowId(1), FlowId(2));
        pacer.target(&mut d[1], a, 200);
        pacer.target(&mut d[2], b, 100);
        let mut now = Time::ZERO;
        let mut grants = Vec::new();
        while let (Some(g), again) = pacer.poll(now, &mut d, &p) {
            grants.push((now, g));
            match again {
                Some(t) => now = t,
                None => break,
            }
        }
        let seq: Vec<(u32, u64, bool)> = grants
            .iter()
            .take(6)
            .map(|(_, g)| (g.flow.0, g.pull, g.slow))
            .collect();
        assert_eq!(
            seq,
            [
                (1, 63, false),
                (2, 63, false),
                (1, 126, false),
                (2, 100, false),
                (1, 189, false),
                (1, 200, false)
            ]
        );
        // Each PULL is followed by its credit's time: 63 quanta, then 37 for b's last.
        assert_eq!(grants[1].0, Time(63 * 20_686));
        assert_eq!(grants[4].0 - grants[3].0, Time(37 * 20_686));
        // Then slow pulls, b's and a's in turn from where they went idle, each up to the maximum past its
        // target, and the pacer stops.
        let slow: Vec<_> = grants[6..].iter().map(|(_, g)| g.slow).collect();
        assert!(slow.iter().all(|&s| s));
        assert!(
            d[1].granted - d[1].target >= p.max_slow
                && d[1].granted - d[1].target < p.max_slow + 63
        );
        assert!(!d[1].idle && !d[2].idle && !d[1].active);
        // Over the active part, credit was granted at 0.99 of the link rate.
        let bytes = (200 + 100) * Q;
        let rate = bytes as f64 * 8.0 / (grants[6].0.ps() as f64 * 1e-12);
        assert!((rate / 0.99e11 - 1.0).abs() < 0.01, "{rate}");
    }

    /// A header puts its flow back on the active list even when its target is met, and a PULL then granting
    /// nothing still takes 1 KB's time.
    #[test]
    fn a_header_reactivates_its_flow() {
        let p = pacing();
        let mut d = vec![Demand::default(); 2];
        let mut pacer = CreditPacer::default();
        let id = FlowId(1);
        pacer.target(&mut d[1], id, 10);
        let (g, again) = pacer.poll(Time::ZERO, &mut d, &p);
        assert_eq!(g.map(|g| g.pull), Some(10));
        assert!(d[1].idle);
        pacer.trimmed(&mut d[1], id, 10);
        assert!(d[1].active);
        let at = again.expect("a flow waits");
        let (g, again) = pacer.poll(at, &mut d, &p);
        assert_eq!(
            g,
            Some(Grant {
                flow: id,
                pull: 10,
                slow: false
            })
        );
        assert_eq!(again, Some(at + Time(4 * 20_686)));
    }
}
