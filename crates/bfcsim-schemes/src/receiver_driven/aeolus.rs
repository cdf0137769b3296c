//! Aeolus (Hu et al., SIGCOMM 2020), the building block that lets a proactive transport use its first RTT, as
//! PayDebt describes and measures it (§2.3 "Selective drop is not a cure", §5: Homa(A), EP(A)). The Aeolus paper
//! is not in `papers/`; what PayDebt leaves open follows htsim's `AeolusQueue` (Broadcom/csg-htsim,
//! `sim/aeolusqueue.cpp`), and `docs/FIDELITY.md` ("Aeolus") lists each choice.
//!
//! - **Marking** (PayDebt §2.3): a flow's first-RTT packets leave at line rate before any credit or grant, with
//!   the [`UNSCHEDULED`] bit in [`Packet::mark`](bfcsim_net::packet::Packet); every other packet, a
//!   retransmission of a first-RTT byte included, is scheduled. [`FirstRtt`] tells a sender which sends are which.
//! - **Selective drop** (§2.3: "dropped when buffer occupancy exceeds a relatively small threshold (i.e., 8KB).
//!   Thus, scheduled packets are guaranteed to be delivered without loss"): [`selective_enqueue`] drops a marked
//!   packet that would take its queue's bytes (or its port's data, [`ThresholdOver`]) past the threshold,
//!   counted as [`DropReason::SelectiveDrop`]; scheduled packets see only the shared buffer.
//! - **Probe and recovery**: right behind a flow's last first-RTT packet the sender sends a probe, a scheduled
//!   packet on the data's path and queue, so it arrives after every first-RTT packet that was not dropped. Its
//!   receiver names every first-RTT range still missing ([`missing`]) and the transport resends them as
//!   scheduled packets: Homa(A) with RESENDs, the receiver's tokens that PayDebt §5.2 says trigger its
//!   retransmissions; EP(A) with probe answers, resent one per credit.

use bfcsim_core::{Bytes, add_fields};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::PacketKind;
use serde::{Deserialize, Serialize};

use crate::cc::WindowSpec;
use crate::fabric::{Entry, Receiving, SwitchOps};

/// The bit of [`Packet::mark`](bfcsim_net::packet::Packet) that marks a first-RTT (unscheduled) data packet.
pub const UNSCHEDULED: u8 = 1;

/// What the selective-drop threshold is compared with. The two agree where a port has one data queue (htsim's
/// `AeolusQueue`, ExpressPass); under Homa's priority levels they differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThresholdOver {
    /// The bytes of the queue the packet joins (under Homa's levels, its own level's queue): a commodity
    /// switch's AQM, which Aeolus uses (PayDebt §2.3), keeps its thresholds per queue.
    Queue,
    /// The bytes of every data queue of the egress port (PayDebt's "buffer occupancy", read as the port's).
    Port,
}

/// Aeolus's parameters (`[flow_control.aeolus]` of Homa and ExpressPass; absent: Aeolus off).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AeolusConfig {
    /// Bytes above which a switch drops unscheduled packets (PayDebt §2.3: 8 KB).
    pub threshold: Bytes,
    /// What the threshold is compared with.
    pub over: ThresholdOver,
    /// What a new flow sends unscheduled; unset: one BDP under ExpressPass (PayDebt §2.2: "up to one BDP"), and
    /// under Homa its `rtt_bytes`, which a value here may not contradict.
    pub unscheduled: Option<WindowSpec>,
}

impl Default for AeolusConfig {
    fn default() -> Self {
        AeolusConfig {
            threshold: Bytes(8_000),
            over: ThresholdOver::Queue,
            unscheduled: None,
        }
    }
}

impl AeolusConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.threshold.0 == 0 {
            return Err("flow_control.aeolus.threshold must be at least 1 byte".into());
        }
        Ok(())
    }
}

/// Aeolus's parameters as `bfcsim schemes` lists them under the schemes that take it: the table, off by
/// default, then its keys with their defaults once it is given.
pub fn listed_params() -> Vec<(String, String)> {
    let mut params = vec![(
        "aeolus".to_string(),
        "unset (off; a [flow_control.aeolus] table turns it on)".to_string(),
    )];
    params.extend(
        crate::catalog::config_params(&AeolusConfig::default())
            .into_iter()
            .map(|(k, v)| (format!("aeolus.{k}"), v)),
    );
    params
}

/// Queues entry `e` in `queue` of its egress port, unless it is an unscheduled data packet that would take the
/// queue (or the port's data, by `cfg.over`) past `cfg.threshold`: that one is dropped. A packet that fits exactly
/// is admitted (htsim admits only below the threshold; one byte apart).
pub fn selective_enqueue<F: SwitchOps>(
    fab: &mut F,
    e: &Entry,
    queue: usize,
    cfg: &AeolusConfig,
) -> Result<(), DropReason> {
    if e.p.kind == PacketKind::DATA && e.p.mark & UNSCHEDULED != 0 {
        let q = fab.queues(e.out_sp);
        let bytes = match cfg.over {
            ThresholdOver::Queue => q.queue_bytes(queue),
            ThresholdOver::Port => {
                let base = fab.layout().data_base;
                q.bytes() - (0..base).map(|c| q.queue_bytes(c)).sum::<u64>()
            }
        };
        if bytes + u64::from(e.p.size) > cfg.threshold.0 {
            return Err(DropReason::SelectiveDrop);
        }
    }
    fab.admit(e, queue)?;
    fab.push(e, queue);
    Ok(())
}

/// A sender's view of its flow's first RTT: which sends go unscheduled and when the probe is due.
///
/// Call [`FirstRtt::send`] for every data packet as it leaves, then [`FirstRtt::take_probe`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirstRtt {
    /// First-RTT bytes: `[0, end)`.
    end: u64,
    /// The highest byte sent so far (exclusive): a packet below it is a resend.
    sent: u64,
    probed: bool,
}

impl FirstRtt {
    /// A flow whose first `end` bytes go unscheduled.
    pub fn new(end: u64) -> FirstRtt {
        FirstRtt {
            end,
            sent: 0,
            probed: false,
        }
    }

    /// Whether a first-RTT byte is still unsent: the flow may send without a credit or grant.
    pub fn open(&self) -> bool {
        self.sent < self.end
    }

    /// Packet `[seq, seq + len)` leaves; true if it goes unscheduled: a first send that starts in the first RTT.
    /// A resend (below the highest byte sent) is scheduled.
    pub fn send(&mut self, seq: u64, len: u32) -> bool {
        let first = seq >= self.sent && seq < self.end;
        self.sent = self.sent.max(seq + u64::from(len));
        first
    }

    /// Ends the first RTT now (ExpressPass's first credit has come): what went unscheduled so far was all.
    pub fn close(&mut self) {
        self.end = self.end.min(self.sent);
    }

    /// The probe is due once: the first RTT's bytes have all gone, and some went. Returns the bytes it covers.
    pub fn take_probe(&mut self) -> Option<u64> {
        let due = !self.probed && self.end > 0 && self.sent >= self.end;
        self.probed |= due;
        due.then_some(self.sent)
    }
}

/// The ranges of `[0, end)` a receiver lacks when a probe covering `end` bytes arrives: all of it before any
/// data came, none once the flow is complete.
pub fn missing(rx: Receiving<'_>, end: u64, out: &mut Vec<(u64, u64)>) {
    match rx {
        Receiving::NotStarted => out.push((0, end)),
        Receiving::Partly(r) => out.extend(r.missing_below(end)),
        Receiving::Complete => {}
    }
}

/// What Aeolus counted in one shard (the fabric counts its drops, [`DropReason::SelectiveDrop`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AeolusStats {
    /// Data packets sent unscheduled (first sends in the first RTT).
    pub unscheduled: u64,
    /// Probes senders sent.
    pub probes: u64,
    /// Probes that reached a receiver still waiting for the flow.
    pub probes_heard: u64,
    /// Missing first-RTT ranges that probes revealed, each asked for again.
    pub ranges_lost: u64,
    /// Bytes in those ranges.
    pub bytes_lost: u64,
}

add_fields!(AeolusStats {
    unscheduled,
    probes,
    probes_heard,
    ranges_lost,
    bytes_lost,
});

impl AeolusStats {
    /// Counts the ranges a probe revealed.
    pub fn lost(&mut self, ranges: &[(u64, u64)]) {
        self.ranges_lost += ranges.len() as u64;
        self.bytes_lost += ranges.iter().map(|&(s, e)| e - s).sum::<u64>();
    }
}

impl std::fmt::Display for AeolusStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Aeolus: {} packets sent unscheduled, {} probes ({} reached a waiting receiver), {} lost first-RTT \
             ranges ({} bytes) asked for again",
            self.unscheduled, self.probes, self.probes_heard, self.ranges_lost, self.bytes_lost
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sends_in_the_first_rtt_go_unscheduled_and_the_probe_follows_the_last() {
        let mut f = FirstRtt::new(2500);
        assert!(f.open());
        assert!(f.send(0, 1000));
        assert_eq!(f.take_probe(), None);
        assert!(f.send(1000, 1000));
        assert!(f.send(2000, 1000), "starts in the first RTT");
        assert!(!f.open());
        assert_eq!(f.take_probe(), Some(3000), "covers what was sent");
        assert_eq!(f.take_probe(), None, "once");
        assert!(!f.send(1000, 1000), "a resend is scheduled");
        assert!(!f.send(3000, 1000), "beyond the first RTT");
    }

    #[test]
    fn closing_early_probes_what_went_and_nothing_if_nothing_went() {
        let mut f = FirstRtt::new(5000);
        f.send(0, 1000);
        f.close();
        assert!(!f.open());
        assert_eq!(f.take_probe(), Some(1000));
        assert!(!f.send(1000, 1000));
        let mut g = FirstRtt::new(5000);
        g.close();
        assert_eq!(g.take_probe(), None);
    }
}
