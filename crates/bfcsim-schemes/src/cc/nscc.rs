//! NSCC, the Ultra Ethernet transport's network-signal congestion control (UET specification 1.0 §3.6.13,
//! descended from SMaRTT, Bonato et al. 2024), as a sans-IO window controller, with the constants and the order
//! of operations of the consortium's reference model (`ultraethernet/uet-htsim`, `sim/uec.cpp`:
//! `initNsccParams`, `processAck`, `updateCwndOnAck_NSCC`, `updateCwndOnNack_NSCC`, `quick_adapt`).
//!
//! Every ACK carries two signals: the ECN echo of the packet it acknowledges and that packet's RTT, whose
//! excess over the flow's base RTT (the smallest RTT seen, starting at the fabric's largest unloaded RTT) is
//! the queuing delay. Against the target delay they make four quadrants:
//!
//! | | delay below target | delay at or above target |
//! |---|---|---|
//! | no ECN | proportional increase (or fast increase) | fair increase |
//! | ECN | nothing (the path, not the window, is at fault: REPS moves off it) | multiplicative decrease |
//!
//! - **Proportional increase**: `α · acked · (target − delay)` bytes² are banked, `α = 4 · mss · a · b / target`.
//!   When the delay stays under `fast_increase_delay` (1 µs) for a whole window of ACKs, **fast increase**
//!   instead grows the window at once by `fi_scale · acked` per ACK (`fi_scale = 0.25 · a`) until the delay
//!   rises.
//! - **Fair increase**: `fi · acked` banked, `fi = 5 · mss · a`: every flow grows by the same amount per RTT.
//! - **Multiplicative decrease**: at most once per base RTT, `cwnd · max(1 − γ · (avg − target)/avg, 0.5)`
//!   with the EWMA delay `avg` (γ = 0.8), and only while `avg` is above the target.
//! - The banked increase is applied (`cwnd += bank / cwnd`) once `adjust_bytes` (8 MTUs) have been
//!   acknowledged or a network RTT has passed since the last adjustment; once per network RTT an extra `η =
//!   0.15 · mss · a` is added (the spec's additive probe).
//! - **Quick adapt**: once per `base RTT + target`, if a loss (a NACK from a trimmed packet) was seen or the
//!   delay exceeded `4 · target`, and the bytes acknowledged in that period fall short of `max_window / 2^qa_gate`,
//!   the window becomes the bytes acknowledged in that period (what the path actually delivered), and the
//!   marked ACKs of the packets then in flight are ignored.
//! - A NACK (the header of a trimmed packet) feeds the delay average one network RTT of delay, triggers quick
//!   adapt, and otherwise takes the packet's bytes off the window; a retransmission timeout takes one packet.
//! - The window stays within one MTU and `max_window` (1.5 BDP of the base RTT, shrinking with it).
//!
//! `a = BDP / (100 Gb/s × 12 µs)` and `b = target / 12 µs` scale the constants to the network, with BDP that of
//! the fabric's largest unloaded RTT at the sender's line rate, the spec's reference network being 100 Gb/s and
//! 12 µs. Departures from uet-htsim (docs/FIDELITY.md, "UEC transport"): windows count payload bytes, not wire
//! bytes; a NACK takes one full packet's payload off the window and does not lower the base RTT (uet-htsim's
//! `update_base_rtt_on_nack`), since the controller is not told the NACKed packet's size or send time; the
//! SLEEK loss-recovery probes (off by default in uet-htsim) are not modelled.

use bfcsim_core::{Rate, Time};
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs, WindowSpec};
use crate::fabric::Preset;

/// The spec's reference network, to which NSCC's constants are scaled (uet-htsim's `_reference_network_*`).
const REFERENCE_RATE: Rate = Rate::gbps(100);
/// The reference network's RTT.
const REFERENCE_RTT: Time = Time::from_us(12);

/// NSCC's parameters; the defaults are uet-htsim's `initNsccParams`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NsccConfig {
    /// The target queuing delay; absent: 0.75 × the fabric's largest unloaded RTT (uet-htsim with trimming; it
    /// uses the whole RTT without).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_qdelay: Option<Time>,
    /// γ of the multiplicative decrease.
    pub gamma: f64,
    /// The smallest factor one multiplicative decrease applies (uet-htsim's `_max_md_jump`, 0.5).
    pub max_decrease: f64,
    /// Fair increase per acknowledged byte, in MSS × `a` (uet-htsim's `_fi = 5·mss·a`).
    pub fair_increase: f64,
    /// Proportional increase gain, in MSS × `a` × `b` / target (uet-htsim's `_alpha = 4·mss·a·b/target`).
    pub proportional_increase: f64,
    /// Fast increase per acknowledged byte, × `a` (uet-htsim's `_fi_scale = 0.25·a`).
    pub fast_increase: f64,
    /// Delay under which ACKs count towards fast increase (uet-htsim: 1 µs).
    pub fast_increase_delay: Time,
    /// The additive probe added once per network RTT, in MSS × `a` (uet-htsim's `_eta = 0.15·mss·a`).
    pub eta: f64,
    /// Weight of each sample in the EWMA of the delay (uet-htsim's `_delay_alpha`).
    pub delay_alpha: f64,
    /// Bytes acknowledged, in MTUs, after which the banked increase is applied (uet-htsim's
    /// `_adjust_bytes_threshold = 8·mtu`).
    pub adjust_packets: u32,
    /// Quick adapt acts only when the bytes acknowledged in its period fall short of `max_window / 2^qa_gate`.
    pub qa_gate: u8,
    /// Quick adapt is triggered by a delay above this many targets (uet-htsim's `_qa_threshold = 4·target`).
    pub qa_threshold: f64,
    /// Run quick adapt (uet-htsim's `-disable_quick_adapt` turns it off).
    pub quick_adapt: bool,
    /// The largest window, in BDPs of the flow's base RTT at its line rate.
    pub max_window_bdp: f64,
    /// The first window; absent: `max_window_bdp` BDPs (uet-htsim's `cwnd == 0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<WindowSpec>,
}

impl Default for NsccConfig {
    fn default() -> Self {
        NsccConfig {
            target_qdelay: None,
            gamma: 0.8,
            max_decrease: 0.5,
            fair_increase: 5.0,
            proportional_increase: 4.0,
            fast_increase: 0.25,
            fast_increase_delay: Time::from_us(1),
            eta: 0.15,
            delay_alpha: 0.0125,
            adjust_packets: 8,
            qa_gate: 3,
            qa_threshold: 4.0,
            quick_adapt: true,
            max_window_bdp: 1.5,
            initial_window: None,
        }
    }
}

impl NsccConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(format!("cc.{name} = {v} must be in (0, 1]"))
            }
        };
        unit("gamma", self.gamma)?;
        unit("max_decrease", self.max_decrease)?;
        unit("delay_alpha", self.delay_alpha)?;
        for (name, v) in [
            ("fair_increase", self.fair_increase),
            ("proportional_increase", self.proportional_increase),
            ("fast_increase", self.fast_increase),
            ("eta", self.eta),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("cc.{name} = {v} must be zero or positive"));
            }
        }
        if !(self.qa_threshold > 0.0 && self.qa_threshold.is_finite()) {
            return Err(format!("cc.qa_threshold = {} must be positive", self.qa_threshold));
        }
        if !(self.max_window_bdp > 0.0 && self.max_window_bdp.is_finite()) {
            return Err(format!("cc.max_window_bdp = {} must be positive", self.max_window_bdp));
        }
        if self.qa_gate > 16 {
            return Err(format!("cc.qa_gate = {} must be at most 16", self.qa_gate));
        }
        if self.adjust_packets == 0 {
            return Err("cc.adjust_packets must be at least 1".into());
        }
        if self.target_qdelay == Some(Time::ZERO) {
            return Err("cc.target_qdelay must be positive".into());
        }
        Ok(())
    }
}

/// What an ACK did to the window, by quadrant (for tests and traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quadrant {
    /// Quick adapt set the window, or the ACK was ignored after one.
    QuickAdapt,
    /// No ECN, delay at or above the target.
    FairIncrease,
    /// No ECN, delay below the target (a fast increase when the delay has stayed near zero).
    ProportionalIncrease,
    /// ECN, delay at or above the target.
    MultiplicativeDecrease,
    /// ECN, delay below the target: no change.
    NoChange,
}

/// One flow's NSCC state. Windows in payload bytes, times in picoseconds (as `f64` where the spec computes).
#[derive(Clone, Debug)]
pub struct Nscc {
    // Constants of the run, scaled to the network.
    target: f64,
    qa_threshold: f64,
    gamma: f64,
    max_decrease: f64,
    fi: f64,
    alpha: f64,
    fi_scale: f64,
    fast_delay: f64,
    eta: f64,
    delay_alpha: f64,
    adjust_bytes: u64,
    qa_gate: u8,
    quick_adapt: bool,
    max_window_bdp: f64,
    /// The fabric's largest unloaded RTT (uet-htsim's `_network_rtt`), ps.
    network_rtt: f64,
    /// The sender's line rate, bytes per ps.
    line_bytes_per_ps: f64,
    min_cwnd: f64,
    // The flow's state.
    cwnd: f64,
    max_cwnd: f64,
    base_rtt: f64,
    avg_delay: f64,
    /// Banked increase (bytes²), applied as `bank / cwnd`.
    inc_bytes: f64,
    /// Bytes acknowledged since the last adjustment.
    received_bytes: u64,
    /// Bytes acknowledged in the current quick-adapt period.
    achieved_bytes: u64,
    bytes_ignored: u64,
    bytes_to_ignore: u64,
    /// End of the current quick-adapt period (`None` before the first ACK: uet-htsim's 0).
    qa_end: Option<Time>,
    trigger_qa: bool,
    fi_count: u64,
    increasing: bool,
    last_decrease: Time,
    last_adjust: Time,
    last: Option<Quadrant>,
}

impl Nscc {
    /// A flow's controller at its start.
    pub fn new(cfg: &NsccConfig, ctx: &FlowContext) -> Nscc {
        let mss = ctx.mss as f64;
        let network_rtt = ctx.base_rtt.0 as f64;
        let target = cfg
            .target_qdelay
            .map_or(0.75 * network_rtt, |t| t.0 as f64);
        let line_bytes_per_ps = ctx.line_rate.0 as f64 / 8e12;
        let reference_bdp = REFERENCE_RATE.0 as f64 / 8e12 * REFERENCE_RTT.0 as f64;
        let a = line_bytes_per_ps * network_rtt / reference_bdp;
        let b = target / REFERENCE_RTT.0 as f64;
        let max_cwnd = cfg.max_window_bdp * line_bytes_per_ps * network_rtt;
        let cwnd = cfg
            .initial_window
            .map_or(max_cwnd, |w| w.resolve(ctx) as f64)
            .clamp(mss, max_cwnd.max(mss));
        Nscc {
            target,
            qa_threshold: cfg.qa_threshold * target,
            gamma: cfg.gamma,
            max_decrease: cfg.max_decrease,
            fi: cfg.fair_increase * mss * a,
            alpha: cfg.proportional_increase * mss * a * b / target,
            fi_scale: cfg.fast_increase * a,
            fast_delay: cfg.fast_increase_delay.0 as f64,
            eta: cfg.eta * mss * a,
            delay_alpha: cfg.delay_alpha,
            adjust_bytes: cfg.adjust_packets as u64 * ctx.mss as u64,
            qa_gate: cfg.qa_gate,
            quick_adapt: cfg.quick_adapt,
            max_window_bdp: cfg.max_window_bdp,
            network_rtt,
            line_bytes_per_ps,
            min_cwnd: mss,
            cwnd,
            max_cwnd: max_cwnd.max(mss),
            base_rtt: network_rtt,
            avg_delay: 0.0,
            inc_bytes: 0.0,
            received_bytes: 0,
            achieved_bytes: 0,
            bytes_ignored: 0,
            bytes_to_ignore: 0,
            qa_end: None,
            trigger_qa: false,
            fi_count: 0,
            increasing: false,
            last_decrease: Time::ZERO,
            last_adjust: Time::ZERO,
            last: None,
        }
    }

    /// The window, in payload bytes.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The largest window, which follows the base RTT.
    pub fn max_cwnd(&self) -> f64 {
        self.max_cwnd
    }

    /// The base RTT: the smallest RTT sampled, ps.
    pub fn base_rtt(&self) -> f64 {
        self.base_rtt
    }

    /// The EWMA of the queuing delay, ps.
    pub fn avg_delay(&self) -> f64 {
        self.avg_delay
    }

    /// The target queuing delay, ps.
    pub fn target(&self) -> f64 {
        self.target
    }

    /// The quadrant the last ACK fell in (`None` before the first, or when it carried no delay sample and
    /// changed nothing).
    pub fn last_quadrant(&self) -> Option<Quadrant> {
        self.last
    }

    /// A smaller RTT lowers the base RTT and with it the largest window (uet-htsim's `update_base_rtt`).
    fn update_base_rtt(&mut self, rtt: f64) {
        if rtt < self.base_rtt {
            self.base_rtt = rtt;
            self.max_cwnd = (self.max_window_bdp * self.line_bytes_per_ps * rtt).max(self.min_cwnd);
        }
    }

    /// The delay EWMA (uet-htsim's `update_delay`, with its pull towards a quarter of the base RTT when an
    /// unmarked packet saw a delay above the target).
    fn update_delay(&mut self, delay: f64, ecn: bool) {
        let w = self.delay_alpha;
        self.avg_delay = if !ecn && delay > self.target {
            w * self.base_rtt * 0.25 + (1.0 - w) * self.avg_delay
        } else {
            w * delay + (1.0 - w) * self.avg_delay
        };
    }

    /// Quick adapt's check at an ACK or a NACK; whether it set the window or the signal is to be ignored.
    fn quick_adapt(&mut self, now: Time, (loss, ecn, delay): (bool, bool, f64), in_flight: u64) -> bool {
        if !self.quick_adapt {
            return false;
        }
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && ecn {
            done = true;
        } else if self.qa_end.is_none_or(|end| now > end) {
            let gate = (self.max_cwnd as u64) >> self.qa_gate;
            if self.qa_end.is_some()
                && (self.trigger_qa || loss || delay > self.qa_threshold)
                && self.achieved_bytes < gate
            {
                self.cwnd = (self.achieved_bytes as f64).max(self.min_cwnd);
                self.bytes_to_ignore = in_flight;
                self.bytes_ignored = 0;
                self.trigger_qa = false;
                done = true;
            }
            self.achieved_bytes = 0;
            self.qa_end = Some(now + Time((self.base_rtt + self.target) as u64));
        }
        if done {
            self.inc_bytes = 0.0;
            self.received_bytes = 0;
        }
        done
    }

    /// Fast increase: a whole window of ACKs with a delay under `fast_increase_delay` grows the window at once.
    /// Whether it did.
    fn fast_increase(&mut self, acked: u64, delay: f64) -> bool {
        if delay < self.fast_delay {
            self.fi_count += acked;
            if self.fi_count as f64 > self.cwnd || self.increasing {
                self.cwnd += acked as f64 * self.fi_scale;
                self.increasing = true;
                return true;
            }
        } else {
            self.fi_count = 0;
        }
        self.increasing = false;
        false
    }

    fn multiplicative_decrease(&mut self, now: Time) {
        self.increasing = false;
        self.fi_count = 0;
        let avg = self.avg_delay;
        if avg > self.target && (now - self.last_decrease).0 as f64 > self.base_rtt {
            let factor = (1.0 - self.gamma * (avg - self.target) / avg).max(self.max_decrease);
            self.cwnd = (self.cwnd * factor).max(self.min_cwnd);
            self.last_decrease = now;
        }
    }

    /// Applies the banked increase, and the once-per-network-RTT probe (uet-htsim's `fulfill_adjustment`).
    fn fulfill_adjustment(&mut self, now: Time) {
        self.cwnd += self.inc_bytes / self.cwnd;
        if (now - self.last_adjust).0 as f64 >= self.network_rtt {
            self.cwnd += self.eta;
            self.last_adjust = now;
        }
        self.inc_bytes = 0.0;
        self.received_bytes = 0;
    }

    fn bound(&mut self) {
        self.cwnd = self.cwnd.clamp(self.min_cwnd, self.max_cwnd);
    }

    /// One ACK's window update (uet-htsim's `updateCwndOnAck_NSCC`) for a packet whose queuing delay was `delay`
    /// and ECN mark `ecn`, `acked` bytes newly acknowledged.
    fn react(&mut self, now: Time, (ecn, delay): (bool, f64), acked: u64, in_flight: u64) {
        if self.quick_adapt(now, (false, ecn, delay), in_flight) {
            self.last = Some(Quadrant::QuickAdapt);
            return;
        }
        let quadrant = match (ecn, delay >= self.target) {
            (false, true) => {
                self.inc_bytes += self.fi * acked as f64;
                Quadrant::FairIncrease
            }
            (false, false) => {
                if !self.fast_increase(acked, delay) {
                    self.inc_bytes += self.alpha * acked as f64 * (self.target - delay);
                }
                Quadrant::ProportionalIncrease
            }
            (true, true) => {
                self.multiplicative_decrease(now);
                Quadrant::MultiplicativeDecrease
            }
            (true, false) => Quadrant::NoChange,
        };
        self.last = Some(quadrant);
        self.bound();
        if self.received_bytes > self.adjust_bytes
            || (now - self.last_adjust).0 as f64 > self.network_rtt
        {
            self.fulfill_adjustment(now);
        }
        self.bound();
    }
}

impl DescribeCc for Nscc {
    const NAME: &'static str = "nscc";
    const SUMMARY: &'static str = "NSCC (Ultra Ethernet 1.0, from SMaRTT): a window from ECN and queuing delay in four quadrants, quick adapt on loss; uet-htsim's constants";
    type Config = NsccConfig;

    fn validate(cfg: &NsccConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &NsccConfig, ctx: &FlowContext) -> Nscc {
        Nscc::new(cfg, ctx)
    }

    fn needs(_cfg: &NsccConfig) -> Needs {
        Needs::default()
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "uet-nscc",
                summary: "Ultra Ethernet NSCC over REPS (uet-htsim's defaults): trimming past one 100 Gb/s x 12 us BDP, ECN \
                          RED over 20-80% of it, per-packet SACKs, trimmed headers' NACKs",
                config: UET_NSCC,
            },
            Preset {
                name: "uet-nscc-spray",
                summary: "uet-nscc with oblivious spraying (a fresh entropy per packet) instead of REPS",
                config: UET_NSCC_SPRAY,
            },
        ]
    }
}

/// The `uet-nscc` preset: uet-htsim's `main_uec` defaults scaled to the spec's reference network (100 Gb/s,
/// 12 us: a 150 KB BDP): switches trim past one BDP of queue (150 packets of 1 KB), hold two BDPs of trimmed
/// headers (4,688 of 64 B) in the priority queue, and mark ECN on RED
/// between 20% and 80% of it with a probability rising to 1; the receiver acknowledges every packet, beyond a
/// gap with a SACK (`nic.recovery = "uet"`: packets sprayed over many paths arrive out of order, so a gap is
/// no loss), and the sender learns of losses from the trimmed headers' NACKs and its timer, which is fixed
/// (no RTT estimate, no back-off) at uet-htsim's 15 us plus six queues' drain time (about 100 us).
const UET_NSCC: &str = "[cc]\nname = \"nscc\"\n[nic]\nrecovery = \"uet\"\nrto_initial = \"100us\"\nrto_min = \"100us\"\nrto_max = \"100us\"\n\
                        paths = \"reps\"\n[flow_control]\nkind = \"trim-tail\"\nqueue_packets = 150\nheader_packets = 4688\n\
                        [switch.ecn]\nkmin = \"30KB\"\nkmax = \"120KB\"\npmax = 1.0\n";

/// The `uet-nscc-spray` preset: `uet-nscc` with oblivious spraying.
const UET_NSCC_SPRAY: &str = "[cc]\nname = \"nscc\"\n[nic]\nrecovery = \"uet\"\nrto_initial = \"100us\"\nrto_min = \"100us\"\nrto_max = \"100us\"\n\
                              paths = \"oblivious\"\n[flow_control]\nkind = \"trim-tail\"\nqueue_packets = 150\nheader_packets = 4688\n\
                              [switch.ecn]\nkmin = \"30KB\"\nkmax = \"120KB\"\npmax = 1.0\n";

impl CongestionControl for Nscc {
    #[inline]
    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    /// uet-htsim's `processAck`: the bytes count towards quick adapt and the adjustment, the RTT sample lowers
    /// the base RTT and enters the delay average, then the quadrant's update.
    fn on_ack(&mut self, now: Time, ack: &AckSignal) {
        let acked = ack.newly_acked;
        self.achieved_bytes += acked;
        self.received_bytes += acked;
        self.bytes_ignored += acked;
        let ecn = ack.ce_bytes > 0;
        let delay = match ack.rtt {
            Some(rtt) => {
                let rtt = rtt.0 as f64;
                self.update_base_rtt(rtt);
                let delay = rtt - self.base_rtt;
                self.update_delay(delay, ecn);
                delay
            }
            None => self.avg_delay,
        };
        let in_flight = ack.snd_nxt.saturating_sub(ack.ack_seq);
        self.react(now, (ecn, delay), acked, in_flight);
    }

    /// A NACK (a trimmed packet's header came back): one network RTT of delay into the average, quick adapt
    /// triggered, and otherwise one packet off the window (uet-htsim's `updateCwndOnNack_NSCC`, then
    /// `processNack`'s retransmission bookkeeping).
    fn on_loss(&mut self, now: Time, _snd_nxt: u64) {
        let mss = self.min_cwnd as u64;
        self.bytes_ignored += mss;
        self.update_delay(self.network_rtt, true);
        self.trigger_qa = true;
        if !self.quick_adapt(now, (true, true, 0.0), 0) {
            self.cwnd -= mss as f64;
        }
        self.bound();
    }

    /// A retransmission timeout takes one packet off the window (uet-htsim's `mark_packet_for_retransmission`).
    fn on_timeout(&mut self, _now: Time) {
        self.cwnd -= self.min_cwnd;
        self.bound();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_context as ctx;

    /// An ACK of one 1000 B packet sampled `rtt_us`, marked when `ecn`.
    fn ack(rtt_us: f64, ecn: bool) -> AckSignal<'static> {
        AckSignal {
            newly_acked: 1000,
            ce_bytes: if ecn { 1000 } else { 0 },
            rtt: Some(Time((rtt_us * 1e6) as u64)),
            ..AckSignal::default()
        }
    }

    fn nscc() -> Nscc {
        // Quick adapt off, so that each ACK shows its quadrant alone; a window of 50 packets.
        Nscc::new(
            &NsccConfig {
                quick_adapt: false,
                initial_window: Some(WindowSpec::Bytes(bfcsim_core::Bytes(50_000))),
                ..NsccConfig::default()
            },
            &ctx(),
        )
    }

    #[test]
    fn the_constants_scale_with_the_network_as_uet_htsim_computes_them() {
        // 100 Gb/s and an 8 µs RTT against the reference 100 Gb/s × 12 µs: a = 2/3; target 6 µs, b = 1/2.
        let n = nscc();
        assert_eq!(n.target(), 6e6);
        let a = 8.0 / 12.0;
        assert!((n.fi - 5.0 * 1000.0 * a).abs() < 1e-9);
        assert!((n.eta - 0.15 * 1000.0 * a).abs() < 1e-9);
        assert!((n.alpha - 4.0 * 1000.0 * a * 0.5 / 6e6).abs() < 1e-15);
        assert!((n.max_cwnd() - 1.5 * 100_000.0).abs() < 1e-6);
        let fresh = Nscc::new(&NsccConfig::default(), &ctx());
        assert_eq!(fresh.cwnd(), fresh.max_cwnd(), "the first window is the largest");
    }

    #[test]
    fn each_quadrant_of_delay_and_ecn_takes_its_own_action() {
        // The first sample sets the base RTT at 8 µs; delays are measured from it.
        let t = |us: u64| Time::from_us(us);
        let mut n = nscc();
        n.on_ack(t(1), &ack(8.0, false));
        // Delay 4 µs < target 6 µs, no ECN: proportional increase banks α·acked·(target − delay).
        let bank = n.inc_bytes;
        n.on_ack(t(2), &ack(12.0, false));
        assert_eq!(n.last_quadrant(), Some(Quadrant::ProportionalIncrease));
        assert!((n.inc_bytes - bank - n.alpha * 1000.0 * 2e6).abs() < 1e-6);
        // Delay 10 µs ≥ target, no ECN: fair increase banks fi·acked.
        let bank = n.inc_bytes;
        n.on_ack(t(3), &ack(18.0, false));
        assert_eq!(n.last_quadrant(), Some(Quadrant::FairIncrease));
        assert!((n.inc_bytes - bank - n.fi * 1000.0).abs() < 1e-6);
        // ECN, delay below target: nothing changes.
        let (bank, cwnd) = (n.inc_bytes, n.cwnd());
        n.on_ack(t(4), &ack(10.0, true));
        assert_eq!(n.last_quadrant(), Some(Quadrant::NoChange));
        assert_eq!((n.inc_bytes, n.cwnd()), (bank, cwnd));
        // ECN, delay above target: a multiplicative decrease, once the EWMA is above the target too.
        n.avg_delay = 12e6;
        n.on_ack(t(20), &ack(30.0, true));
        assert_eq!(n.last_quadrant(), Some(Quadrant::MultiplicativeDecrease));
        // (The period's banked increase and the probe η follow the cut: a network RTT has passed.)
        let avg = n.avg_delay();
        let factor = (1.0 - 0.8 * (avg - 6e6) / avg).max(0.5);
        let cut = cwnd * factor;
        assert!((n.cwnd() / cut - 1.0).abs() < 0.01, "{} against {cut}", n.cwnd());
    }

    #[test]
    fn multiplicative_decrease_acts_at_most_once_per_base_rtt_and_never_below_half() {
        let mut n = nscc();
        n.on_ack(Time::from_us(1), &ack(8.0, false));
        n.avg_delay = 1e9; // a huge average: the factor is floored at 0.5
        let before = n.cwnd();
        n.on_ack(Time::from_us(20), &ack(100.0, true));
        // Halved, then the probe η of a network RTT added.
        assert!((n.cwnd() / (before * 0.5) - 1.0).abs() < 0.01, "{}", n.cwnd());
        let cut = n.cwnd();
        n.on_ack(Time::from_us(25), &ack(100.0, true));
        assert_eq!(n.cwnd(), cut, "a second cut within one base RTT (8 µs)");
        n.on_ack(Time::from_us(29), &ack(100.0, true));
        assert!(n.cwnd() < cut, "a base RTT later it cuts again");
    }

    #[test]
    fn the_banked_increase_is_applied_after_eight_packets_divided_by_the_window() {
        let mut n = nscc();
        n.on_ack(Time::from_ns(100), &ack(8.0, false));
        let cwnd = n.cwnd();
        // Fair increase for 8 more packets (delay 10 µs): applied on the ninth ACK's bytes, past 8 MTUs.
        for i in 0..9 {
            n.on_ack(Time::from_ns(200 + i), &ack(18.0, false));
        }
        let grown = n.cwnd() - cwnd;
        assert!(grown > 0.0);
        // 9 ACKs banked fi·1000 each (plus the first's proportional share), divided by the window.
        assert!((grown - 9.0 * n.fi * 1000.0 / cwnd).abs() / grown < 0.2, "{grown}");
    }

    #[test]
    fn a_window_of_near_zero_delay_switches_to_fast_increase() {
        let mut n = nscc();
        n.on_ack(Time::from_ns(1), &ack(8.0, false));
        // 50 ACKs at zero delay make a window's worth: from then on each ACK adds fi_scale·acked at once.
        for i in 0..51 {
            n.on_ack(Time::from_ns(2 + i), &ack(8.0, false));
        }
        assert!(n.increasing);
        let before = n.cwnd();
        n.on_ack(Time::from_ns(100), &ack(8.0, false));
        assert!((n.cwnd() - before - n.fi_scale * 1000.0).abs() < 1e-6);
        // A delay above 1 µs ends it.
        n.on_ack(Time::from_ns(101), &ack(10.0, false));
        assert!(!n.increasing);
    }

    #[test]
    fn quick_adapt_sets_the_window_to_what_the_period_delivered_after_a_loss() {
        let mut n = Nscc::new(&NsccConfig::default(), &ctx());
        let full = n.cwnd();
        // The first ACK opens a quick-adapt period (base RTT + target = 14 µs).
        n.on_ack(Time::from_us(1), &ack(8.0, false));
        // Three packets delivered in the period, then a trimmed packet's NACK after it ended.
        for i in 0..3 {
            n.on_ack(Time::from_us(2 + i), &ack(9.0, false));
        }
        n.on_loss(Time::from_us(16), 0);
        assert_eq!(n.cwnd(), 3000.0, "the window is what the period delivered (from {full})");
        // Within the new period another NACK takes one packet off instead.
        n.on_loss(Time::from_us(17), 0);
        assert_eq!(n.cwnd(), 2000.0);
    }

    #[test]
    fn the_window_stays_between_one_packet_and_max_window_which_follows_the_base_rtt() {
        let mut n = nscc();
        for i in 0..100 {
            n.on_loss(Time::from_us(i), 0);
        }
        assert_eq!(n.cwnd(), 1000.0);
        // A 4 µs RTT halves the base RTT and the largest window.
        n.on_ack(Time::from_us(200), &ack(4.0, false));
        assert!((n.max_cwnd() - 1.5 * 50_000.0).abs() < 1e-6);
        // Each timeout takes one packet off, down to one packet.
        let grown = n.cwnd();
        n.on_timeout(Time::from_us(300));
        assert_eq!(n.cwnd(), (grown - 1000.0).max(1000.0));
        for i in 0..5 {
            n.on_timeout(Time::from_us(301 + i));
        }
        assert_eq!(n.cwnd(), 1000.0);
    }

    #[test]
    fn bad_parameters_are_refused_with_their_name() {
        let bad = NsccConfig {
            gamma: 1.5,
            ..NsccConfig::default()
        };
        assert!(bad.validate().unwrap_err().contains("cc.gamma"));
        let bad = NsccConfig {
            target_qdelay: Some(Time::ZERO),
            ..NsccConfig::default()
        };
        assert!(bad.validate().unwrap_err().contains("target_qdelay"));
    }
}
