//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015) as a sans-IO
//! rate controller, with the details of HPCC's ns-3 `rdma-hw.cc` (`CC_MODE 7`: `HandleAckTimely`,
//! `UpdateRateTimely`), the reference implementation this one is checked against.
//!
//! - §4.1, Algorithm 1: each RTT sample `new_rtt` (NIC timestamps: the ACK's arrival less its data packet's
//!   send time, which the 8-byte timestamp header carries and the ACK echoes) updates
//!   `rtt_diff ← (1 − α)·rtt_diff + α·(new_rtt − prev_rtt)` and the normalized gradient `rtt_diff/min_rtt`.
//! - Below `t_low` the rate grows by δ; above `t_high` it is cut to `(1 − β·(1 − t_high/new_rtt))·rate`; in
//!   between a gradient ≤ 0 grows it by δ, a positive one cuts it to `(1 − β·gradient)·rate`.
//! - §4.2 HAI: after N = 5 consecutive increases the step becomes the hyper-additive one, `rate_hai`.
//! - ns-3 takes one sample per RTT, the first ACK past the `snd_nxt` of the previous update (the paper's
//!   per-completion event of a 16-64 KB segment); ACKs in between change nothing (`FastReactTimely` is empty).
//!   The first such ACK only records the RTT. Rates stay within `[min_rate, line rate]`.
//!
//! Departure: ns-3 sets the new rate without moving the flow's next send time (`qp->m_rate = ...`, no
//! `ChangeRate`); bfcsim's NIC reads the rate when it next looks at the flow, so the packet after an update
//! is already paced at the new rate (one packet's gap per RTT; docs/FIDELITY.md).

use bfcsim_core::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs, RateWindow};
use crate::fabric::Preset;

/// TIMELY's parameters. Defaults: the paper's (α, β, T_low, T_high, N) as HPCC's ns-3 has them
/// (`RdmaHw` attributes `TimelyAlpha`, `TimelyBeta`, `TimelyTLow`, `TimelyTHigh`, `TimelyMinRtt`) and the steps
/// HPCC's `run.py` sets for `--cc timely` at 100 Gb/s (`RATE_AI = 10·bw/10` Mb/s, `RATE_HAI = 50·bw/10` Mb/s).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyConfig {
    /// EWMA weight α of a new RTT difference (paper: 0.875 in ns-3's attribute; `TimelyAlpha`).
    pub alpha: f64,
    /// Multiplicative decrease β (`TimelyBeta`: 0.8).
    pub beta: f64,
    /// Below this RTT the rate only grows (`TimelyTLow`: 50 µs).
    pub t_low: Time,
    /// Above this RTT the rate is cut whatever the gradient (`TimelyTHigh`: 500 µs).
    pub t_high: Time,
    /// The normalizer of the RTT gradient, the fabric's minimum RTT (`TimelyMinRtt`: 20 µs).
    pub min_rtt: Time,
    /// Additive step δ (`RATE_AI`: 100 Mb/s at 100 Gb/s).
    pub rate_ai: Rate,
    /// Hyper-additive step, after `hai_after` consecutive increases (`RATE_HAI`: 500 Mb/s at 100 Gb/s).
    pub rate_hai: Rate,
    /// Consecutive increases before the hyper-additive step (paper §4.2's N, ns-3's `m_incStage < 5`).
    pub hai_after: u32,
    /// Floor of the rate (`MIN_RATE 1000Mb/s`).
    pub min_rate: Rate,
    /// In-flight cap (`HAS_WIN 0` in `run.py`'s `timely`: none; `timely_vwin` is `variable`).
    pub window: RateWindow,
    /// Bytes of the timestamp header on every data packet (ns-3's `IntHeader` in `TS` mode: 8).
    pub header: Bytes,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            alpha: 0.875,
            beta: 0.8,
            t_low: Time::from_us(50),
            t_high: Time::from_us(500),
            min_rtt: Time::from_us(20),
            rate_ai: Rate(100_000_000),
            rate_hai: Rate(500_000_000),
            hai_after: 5,
            min_rate: Rate::gbps(1),
            window: RateWindow::None,
            header: Bytes(8),
        }
    }
}

impl TimelyConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(format!("timely alpha = {} must be in (0, 1]", self.alpha));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(format!("timely beta = {} must be in (0, 1]", self.beta));
        }
        if self.t_low >= self.t_high {
            return Err(format!(
                "timely t_low = {} must be below t_high = {}",
                self.t_low, self.t_high
            ));
        }
        if self.min_rtt == Time::ZERO {
            return Err("timely min_rtt must be positive".into());
        }
        for (name, r) in [
            ("rate_ai", self.rate_ai),
            ("rate_hai", self.rate_hai),
            ("min_rate", self.min_rate),
        ] {
            if r.0 == 0 {
                return Err(format!("timely {name} must be positive"));
            }
        }
        Ok(())
    }
}

/// One flow's TIMELY state. Rates in bits per second, times in picoseconds.
#[derive(Clone, Debug)]
pub struct Timely {
    alpha: f64,
    beta: f64,
    t_low: f64,
    t_high: f64,
    min_rtt: f64,
    rate_ai: f64,
    rate_hai: f64,
    hai_after: u32,
    min_rate: f64,
    max_rate: f64,
    window: RateWindow,
    bdp: u64,
    /// The current rate.
    rate: f64,
    /// Consecutive increases.
    inc_stage: u32,
    rtt_diff: f64,
    prev_rtt: f64,
    /// `snd_nxt` at the last update; `None` before the first sample.
    last_update_seq: Option<u64>,
}

impl Timely {
    /// A flow's controller at its start: line rate.
    pub fn new(cfg: &TimelyConfig, ctx: &FlowContext) -> Timely {
        let max_rate = ctx.line_rate.0 as f64;
        Timely {
            alpha: cfg.alpha,
            beta: cfg.beta,
            t_low: cfg.t_low.0 as f64,
            t_high: cfg.t_high.0 as f64,
            min_rtt: cfg.min_rtt.0 as f64,
            rate_ai: cfg.rate_ai.0 as f64,
            rate_hai: cfg.rate_hai.0 as f64,
            hai_after: cfg.hai_after,
            min_rate: (cfg.min_rate.0 as f64).min(max_rate),
            max_rate,
            window: cfg.window,
            bdp: ctx.bdp.0,
            rate: max_rate,
            inc_stage: 0,
            rtt_diff: 0.0,
            prev_rtt: 0.0,
            last_update_seq: None,
        }
    }

    /// The current rate in bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rate
    }

    /// Consecutive increases so far (HAI engages at `hai_after`).
    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }

    /// The smoothed RTT difference in picoseconds.
    pub fn rtt_diff(&self) -> f64 {
        self.rtt_diff
    }

    /// Algorithm 1 for one RTT sample of `rtt` picoseconds.
    fn update(&mut self, rtt: f64) {
        let rtt_diff = (1.0 - self.alpha) * self.rtt_diff + self.alpha * (rtt - self.prev_rtt);
        let gradient = rtt_diff / self.min_rtt;
        let cut = if rtt < self.t_low {
            None
        } else if rtt > self.t_high {
            Some(1.0 - self.beta * (1.0 - self.t_high / rtt))
        } else if gradient <= 0.0 {
            None
        } else {
            Some((1.0 - self.beta * gradient).max(0.0))
        };
        match cut {
            None => {
                let step = if self.inc_stage < self.hai_after {
                    self.rate_ai
                } else {
                    self.rate_hai
                };
                self.rate = (self.rate + step).min(self.max_rate);
                self.inc_stage += 1;
            }
            Some(c) => {
                self.rate = (self.rate * c).max(self.min_rate);
                self.inc_stage = 0;
            }
        }
        self.rtt_diff = rtt_diff;
    }
}

impl DescribeCc for Timely {
    const NAME: &'static str = "timely";
    const SUMMARY: &'static str = "TIMELY (Mittal et al. 2015): RTT-gradient rate control with HAI, as HPCC's ns-3 runs it (rdma-hw.cc CC_MODE 7)";
    type Config = TimelyConfig;

    fn validate(cfg: &TimelyConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &TimelyConfig, ctx: &FlowContext) -> Timely {
        Timely::new(cfg, ctx)
    }

    fn needs(cfg: &TimelyConfig) -> Needs {
        Needs {
            pacing: true,
            header: cfg.header,
            ..Needs::default()
        }
    }

    fn presets() -> &'static [Preset] {
        &[Preset {
            name: "timely",
            summary: "TIMELY (Mittal et al. 2015) over PFC, HPCC ns-3's parameters at 100 Gb/s (T_low 50 us, T_high 500 us, \
                      delta 100 Mb/s, HAI 500 Mb/s after 5)",
            config: "[cc]\nname = \"timely\"\n[flow_control]\nkind = \"pfc\"\n",
        }]
    }
}

impl CongestionControl for Timely {
    #[inline]
    fn window(&self) -> u64 {
        self.window
            .cap(self.bdp, self.rate as u64, self.max_rate as u64)
    }

    #[inline]
    fn rate(&self) -> Option<Rate> {
        Some(Rate((self.rate as u64).max(1)))
    }

    fn on_ack(&mut self, _now: Time, ack: &AckSignal) {
        let Some(rtt) = ack.rtt else { return };
        let rtt = rtt.0 as f64;
        if let Some(last) = self.last_update_seq {
            if ack.ack_seq <= last {
                return;
            }
            self.update(rtt);
        }
        if self.last_update_seq.is_none_or(|last| ack.snd_nxt > last) {
            self.last_update_seq = Some(ack.snd_nxt);
            self.prev_rtt = rtt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_context as ctx;

    /// An ACK of everything below `ack_seq`, `snd_nxt` sent, after an RTT of `rtt_us`.
    fn ack(ack_seq: u64, snd_nxt: u64, rtt_us: u64) -> AckSignal<'static> {
        AckSignal {
            ack_seq,
            snd_nxt,
            rtt: Some(Time::from_us(rtt_us)),
            ..AckSignal::default()
        }
    }

    fn gbps(t: &Timely) -> f64 {
        t.rate_bps() / 1e9
    }

    #[test]
    fn the_first_sample_only_records_the_rtt_and_acks_within_an_rtt_change_nothing() {
        let mut t = Timely::new(&TimelyConfig::default(), &ctx());
        t.on_ack(Time::ZERO, &ack(1000, 10_000, 60));
        assert_eq!(gbps(&t), 100.0);
        assert_eq!(t.inc_stage(), 0);
        // Still inside the first RTT's window of 10 KB: ignored, even with a huge RTT.
        t.on_ack(Time::ZERO, &ack(10_000, 20_000, 900));
        assert_eq!(gbps(&t), 100.0);
    }

    #[test]
    fn a_rising_rtt_cuts_by_the_gradient_and_a_falling_one_adds_delta() {
        let mut t = Timely::new(&TimelyConfig::default(), &ctx());
        t.on_ack(Time::ZERO, &ack(1000, 10_000, 60));
        // RTT 60 → 80 µs: rtt_diff = 0.875·20 µs = 17.5 µs, gradient 17.5/20 = 0.875, c = 1 − 0.8·0.875 = 0.3.
        t.on_ack(Time::ZERO, &ack(10_001, 20_000, 80));
        assert!((gbps(&t) - 30.0).abs() < 1e-9, "{}", gbps(&t));
        assert_eq!(t.inc_stage(), 0);
        // RTT 80 → 70 µs: rtt_diff = 0.125·17.5 − 0.875·10 = −6.5625 µs ≤ 0: + 100 Mb/s.
        t.on_ack(Time::ZERO, &ack(20_001, 30_000, 70));
        assert!((gbps(&t) - 30.1).abs() < 1e-9, "{}", gbps(&t));
        assert!((t.rtt_diff() - (-6.5625e6)).abs() < 1e-3);
        assert_eq!(t.inc_stage(), 1);
    }

    #[test]
    fn hai_engages_after_five_consecutive_increases() {
        let mut t = Timely::new(&TimelyConfig::default(), &ctx());
        t.on_ack(Time::ZERO, &ack(1000, 10_000, 100));
        t.on_ack(Time::ZERO, &ack(10_001, 20_000, 400)); // a cut, far below line rate
        let low = gbps(&t);
        let mut seq = 20_001;
        let mut steps = Vec::new();
        for _ in 0..7 {
            let before = gbps(&t);
            // Below T_low: always an increase.
            t.on_ack(Time::ZERO, &ack(seq, seq + 10_000, 30));
            steps.push(((gbps(&t) - before) * 1000.0).round() / 1000.0);
            seq += 10_001;
        }
        assert!(low < 50.0);
        assert_eq!(steps, vec![0.1, 0.1, 0.1, 0.1, 0.1, 0.5, 0.5]);
    }

    #[test]
    fn above_t_high_the_cut_follows_the_rtt_not_the_gradient() {
        let mut t = Timely::new(&TimelyConfig::default(), &ctx());
        t.on_ack(Time::ZERO, &ack(1000, 10_000, 1000));
        // A falling RTT of 1000 µs: still above T_high, c = 1 − 0.8·(1 − 500/1000) = 0.6.
        t.on_ack(Time::ZERO, &ack(10_001, 20_000, 1000));
        assert!((gbps(&t) - 60.0).abs() < 1e-9);
        // The floor.
        for i in 0..40u64 {
            t.on_ack(
                Time::ZERO,
                &ack(20_001 + i * 10_001, 30_000 + i * 10_001, 5000),
            );
        }
        assert_eq!(gbps(&t), 1.0);
    }
}
