//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015) as a sans-IO rate
//! controller: the reaction point (RP) at the sender, plus the notification point's CNP pacing
//! ([`CnpGenerator`]) at the receiver.
//!
//! The paper's §3 gives the RP's shape: a current rate Rc and a target rate Rt, both at line rate at the start;
//! on congestion notification `Rt ← Rc`, `Rc ← Rc·(1 − α/2)`; α an EWMA of "a CNP arrived" with gain g,
//! decaying when CNPs stop; rate increases driven by a timer and a byte counter, in three phases: fast
//! recovery (`Rc ← (Rc + Rt)/2`, F times), additive increase (`Rt ← Rt + R_AI`), hyper increase
//! (`Rt ← Rt + R_HAI`). The details follow the model the BFC authors' comparison simulator runs, HPCC's ns-3
//! `rdma-hw.cc` (Mellanox's version, `CC_MODE 1`):
//!
//! - `cnp_received_mlx`: a CNP only sets two flags (one for α, one for the rate). The first CNP of a flow
//!   instead sets α = 1, scales both rates by `rate_on_first_cnp` and starts the two periodic timers below.
//! - `UpdateAlphaMlx`: every `alpha_resume_interval`, `α ← (1 − g)·α + g` if a CNP arrived since the last
//!   update, else `α ← (1 − g)·α`.
//! - `CheckRateDecreaseMlx`: every `rate_decrease_interval` (first check one interval plus 1 ns after the
//!   first CNP, so that it follows the α update due at the same microsecond), if a CNP arrived since the last
//!   check: `Rt ← Rc` unless `clamp_target_rate` is off and no increase happened since the last cut;
//!   `Rc ← max(min_rate, Rc·(1 − α/2))`; the increase stage is reset and the increase timer restarted. So the
//!   rate is cut at most once per interval, however many CNPs arrive.
//! - `RateIncEventTimerMlx`: every `rate_increase_interval` after the last cut, one increase; stage
//!   `< F` is fast recovery, `= F` additive increase, `> F` hyper increase (`FastRecoveryMlx`,
//!   `ActiveIncreaseMlx`, `HyperIncreaseMlx`); Rt never exceeds line rate. Rates are integer bits per
//!   second, halved and scaled with truncation, as ns-3's `DataRate`.
//!
//! Departures, all options off by default:
//! - The byte counter (paper §3; not in `rdma-hw.cc`): with `byte_counter = B`, every B bytes sent after a
//!   cut is an increase event too, with its own stage count; the phase is fast recovery while both counts are
//!   below F, hyper increase once both exceed F, additive increase otherwise (with no byte counter this is
//!   exactly ns-3's rule on the timer's count). The hyper increment is R_HAI per event, as in `rdma-hw.cc`.
//! - `window`: HPCC's ns-3 can cap the bytes in flight (`HAS_WIN`, `VAR_WIN`; run.py's `dcqcn_vwin`):
//!   one BDP, or `BDP·Rc/line rate` (`RdmaQueuePair::GetWin` with `m_var_win`).
//!
//! Timers are lazy: every input first replays, in time order and each at its scheduled time,
//! the timer events due at or before its `now`; [`CongestionControl::next_timer`] reports only the events that
//! can change the rate (a pending rate-decrease check, an increase while below line rate), so α updates cost
//! no wake-ups. On a tie the α update comes first, then the increase, then the decrease check (ns-3 runs
//! same-time events in scheduling order, and the increase timer is always scheduled earlier).
//!
//! BFC §6.2 names Yibo Zhu's `ns3-rdma` as its DCQCN simulator. That older model cuts the rate on every CNP
//! (its receivers send at most one per `CNP_INTERVAL`), runs the byte counter, and adds `i·R_HAI` in hyper
//! increase; its `mix/config.txt` has `CNP_INTERVAL 50`, `ALPHA_RESUME_INTERVAL 55`, `CLAMP_TARGET_RATE 1`,
//! `RP_TIMER 60`, `BYTE_COUNTER 300000`, `DCTCP_GAIN 0.00390625`, `FAST_RECOVERY_TIMES 5`, `RATE_AI 40Mb/s`,
//! `RATE_HAI 200Mb/s`. The defaults here are those of HPCC's ns-3, on which the reference runs were made.

use bfcsim_core::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs, RateWindow};
use crate::fabric::Preset;

/// DCQCN parameters. Defaults: HPCC's ns-3 configuration for DCQCN at 100 Gb/s, as run on the reference
/// (`reference/ns3-perf-k8/dcqcn.config.txt`, which is run.py's `dcqcn` profile); the line of that file is
/// given for each.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnConfig {
    /// EWMA gain g of α (`EWMA_GAIN 0.00390625`, line 20).
    pub g: f64,
    /// Period of the α update (`ALPHA_RESUME_INTERVAL 1`, µs, line 16).
    pub alpha_resume_interval: Time,
    /// Period of the rate-decrease check: at most one cut per period (`RATE_DECREASE_INTERVAL 4`, µs,
    /// line 17).
    pub rate_decrease_interval: Time,
    /// Period of the rate-increase timer, restarted at each cut (`RP_TIMER 300`, µs, line 19).
    pub rate_increase_interval: Time,
    /// F: fast-recovery steps before additive increase (`FAST_RECOVERY_TIMES 1`, line 21; the paper uses 5).
    pub fast_recovery_times: u32,
    /// Additive increase of Rt, R_AI (`RATE_AI 20Mb/s`, line 22; run.py: 5 Mb/s per 25 Gb/s of line rate).
    pub rate_ai: Rate,
    /// Hyper increase of Rt, R_HAI (`RATE_HAI 200Mb/s`, line 23; run.py: 50 Mb/s per 25 Gb/s).
    pub rate_hai: Rate,
    /// Floor of Rc after a cut (`MIN_RATE 1000Mb/s`, line 24).
    pub min_rate: Rate,
    /// Set Rt ← Rc at every cut, even with no increase since the previous one (`CLAMP_TARGET_RATE 0`,
    /// line 18).
    pub clamp_target_rate: bool,
    /// Rc and Rt are scaled by this on the first CNP (`rdma-hw.cc` attribute `RateOnFirstCnp`, default 1.0,
    /// which `third.cc` leaves alone).
    pub rate_on_first_cnp: f64,
    /// Byte counter B: every B bytes sent after a cut is a rate-increase event (absent in `rdma-hw.cc`, so
    /// off by default; the DCQCN paper suggests 10 MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_counter: Option<Bytes>,
    /// In-flight cap (`HAS_WIN 0`, line 32: none).
    pub window: RateWindow,
    /// Receiver side: at most one CNP per flow per interval ([`CnpGenerator`]). 0 sends one for every
    /// CE-marked packet, as HPCC's ns-3 does (`RdmaHw::ReceiveUdp` flags every ACK of a marked packet as a
    /// CNP; `L2_ACK_INTERVAL 1`, line 29); the paper's NP uses 50 µs.
    pub cnp_interval: Time,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            g: 1.0 / 256.0,
            alpha_resume_interval: Time::from_us(1),
            rate_decrease_interval: Time::from_us(4),
            rate_increase_interval: Time::from_us(300),
            fast_recovery_times: 1,
            rate_ai: Rate(20_000_000),
            rate_hai: Rate(200_000_000),
            min_rate: Rate::gbps(1),
            clamp_target_rate: false,
            rate_on_first_cnp: 1.0,
            byte_counter: None,
            window: RateWindow::None,
            cnp_interval: Time::ZERO,
        }
    }
}

impl DcqcnConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("dcqcn g = {} must be in (0, 1]", self.g));
        }
        for (name, t) in [
            ("alpha_resume_interval", self.alpha_resume_interval),
            ("rate_decrease_interval", self.rate_decrease_interval),
            ("rate_increase_interval", self.rate_increase_interval),
        ] {
            if t == Time::ZERO {
                return Err(format!("dcqcn {name} must be positive"));
            }
        }
        for (name, r) in [
            ("rate_ai", self.rate_ai),
            ("rate_hai", self.rate_hai),
            ("min_rate", self.min_rate),
        ] {
            if r.0 == 0 {
                return Err(format!("dcqcn {name} must be positive"));
            }
        }
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return Err(format!(
                "dcqcn rate_on_first_cnp = {} must be in (0, 1]",
                self.rate_on_first_cnp
            ));
        }
        if self.byte_counter == Some(Bytes::ZERO) {
            return Err("dcqcn byte_counter must be positive (leave it out to disable it)".into());
        }
        Ok(())
    }
}

/// One rate-increase step's phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    FastRecovery,
    Additive,
    Hyper,
}

/// One flow's DCQCN reaction point. Rates are in bits per second.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    g: f64,
    alpha_iv: Time,
    decrease_iv: Time,
    increase_iv: Time,
    f: u32,
    rai: u64,
    rhai: u64,
    min_rate: u64,
    line: u64,
    clamp_target: bool,
    first_cnp_factor: f64,
    byte_counter: Option<u64>,
    window_mode: RateWindow,
    bdp: u64,

    /// Current rate Rc.
    rc: u64,
    /// Target rate Rt.
    rt: u64,
    alpha: f64,
    /// A CNP has arrived: the timers run (ns-3 `!m_first_cnp`).
    started: bool,
    /// A CNP arrived since the last α update.
    alpha_cnp: bool,
    /// A CNP arrived since the last rate-decrease check.
    decrease_cnp: bool,
    next_alpha: Time,
    next_decrease: Time,
    /// The rate-increase timer; armed by the first cut.
    next_increase: Option<Time>,
    /// Increase events since the last cut, from the timer and from the byte counter.
    timer_stage: u32,
    byte_stage: u32,
    /// Bytes sent since the last byte-counter event.
    bytes: u64,
}

impl Dcqcn {
    /// A flow's controller at its start: both rates at line rate.
    pub fn new(cfg: &DcqcnConfig, ctx: &FlowContext) -> Dcqcn {
        let line = ctx.line_rate.0;
        Dcqcn {
            g: cfg.g,
            alpha_iv: cfg.alpha_resume_interval,
            decrease_iv: cfg.rate_decrease_interval,
            increase_iv: cfg.rate_increase_interval,
            f: cfg.fast_recovery_times,
            rai: cfg.rate_ai.0,
            rhai: cfg.rate_hai.0,
            min_rate: cfg.min_rate.0.min(line),
            line,
            clamp_target: cfg.clamp_target_rate,
            first_cnp_factor: cfg.rate_on_first_cnp,
            byte_counter: cfg.byte_counter.map(|b| b.0),
            window_mode: cfg.window,
            bdp: ctx.bdp.0,
            rc: line,
            rt: line,
            alpha: 1.0,
            started: false,
            alpha_cnp: false,
            decrease_cnp: false,
            next_alpha: Time::ZERO,
            next_decrease: Time::ZERO,
            next_increase: None,
            timer_stage: 0,
            byte_stage: 0,
            bytes: 0,
        }
    }

    /// The current rate Rc.
    pub fn current_rate(&self) -> Rate {
        Rate(self.rc)
    }

    /// The target rate Rt.
    pub fn target_rate(&self) -> Rate {
        Rate(self.rt)
    }

    /// The α estimate, as of the last input.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Increase events since the last cut: `(timer, byte counter)`.
    pub fn stages(&self) -> (u32, u32) {
        (self.timer_stage, self.byte_stage)
    }

    /// Increases leave Rc and Rt where they are: both at an even line rate (halving is exact), so the
    /// timer's events change nothing but the stage count.
    fn saturated(&self) -> bool {
        self.rc == self.line && self.rt == self.line && self.line.is_multiple_of(2)
    }

    /// Replays every timer event due at or before `now`, in time order.
    fn advance(&mut self, now: Time) {
        if !self.started {
            return;
        }
        loop {
            let inc = self.next_increase.filter(|&t| t <= now);
            let dec =
                (self.decrease_cnp && self.next_decrease <= now).then_some(self.next_decrease);
            let (t, is_increase) = match (inc, dec) {
                (None, None) => break,
                (Some(i), None) => (i, true),
                (None, Some(d)) => (d, false),
                (Some(i), Some(d)) if i <= d => (i, true),
                (Some(_), Some(d)) => (d, false),
            };
            if is_increase && dec.is_none() && self.saturated() {
                // Every increase event left before `now` is a no-op but for the stage count.
                let period = self.increase_iv.0;
                let n = (now.0 - t.0) / period + 1;
                self.timer_stage = self
                    .timer_stage
                    .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                self.next_increase = Some(Time(t.0 + n * period));
                continue;
            }
            self.catch_up_alpha(t);
            if is_increase {
                self.next_increase = Some(t + self.increase_iv);
                self.increase(false);
            } else {
                self.decrease(t);
            }
        }
        self.catch_up_alpha(now);
        if !self.decrease_cnp && self.next_decrease <= now {
            // Checks with no CNP since the last one do nothing.
            let period = self.decrease_iv.0;
            let n = (now.0 - self.next_decrease.0) / period + 1;
            self.next_decrease = Time(self.next_decrease.0 + n * period);
        }
    }

    /// `UpdateAlphaMlx` for every α update due at or before `until`.
    fn catch_up_alpha(&mut self, until: Time) {
        if self.next_alpha > until {
            return;
        }
        self.alpha = if self.alpha_cnp {
            (1.0 - self.g) * self.alpha + self.g
        } else {
            (1.0 - self.g) * self.alpha
        };
        self.alpha_cnp = false;
        self.next_alpha += self.alpha_iv;
        if self.next_alpha <= until {
            // No CNP can arrive during a replay: the rest are plain decays.
            let period = self.alpha_iv.0;
            let n = (until.0 - self.next_alpha.0) / period + 1;
            for _ in 0..n {
                if self.alpha == 0.0 {
                    break;
                }
                self.alpha *= 1.0 - self.g;
            }
            self.next_alpha = Time(self.next_alpha.0 + n * period);
        }
    }

    /// `CheckRateDecreaseMlx` at time `t`, a CNP having arrived since the previous check.
    fn decrease(&mut self, t: Time) {
        self.next_decrease = t + self.decrease_iv;
        if self.clamp_target || self.timer_stage != 0 || self.byte_stage != 0 {
            self.rt = self.rc;
        }
        let cut = (self.rc as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.rc = cut.max(self.min_rate);
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.decrease_cnp = false;
        self.next_increase = Some(t + self.increase_iv);
    }

    fn phase(&self) -> Phase {
        let (lo, hi) = match self.byte_counter {
            None => (self.timer_stage, self.timer_stage),
            Some(_) => (
                self.timer_stage.min(self.byte_stage),
                self.timer_stage.max(self.byte_stage),
            ),
        };
        if hi < self.f {
            Phase::FastRecovery
        } else if lo > self.f {
            Phase::Hyper
        } else {
            Phase::Additive
        }
    }

    /// One rate-increase event (`RateIncEventMlx`), from the timer or from the byte counter.
    fn increase(&mut self, from_bytes: bool) {
        match self.phase() {
            Phase::FastRecovery => {}
            Phase::Additive => self.rt = (self.rt + self.rai).min(self.line),
            Phase::Hyper => self.rt = (self.rt + self.rhai).min(self.line),
        }
        self.rc = self.rc / 2 + self.rt / 2;
        if from_bytes {
            self.byte_stage = self.byte_stage.saturating_add(1);
        } else {
            self.timer_stage = self.timer_stage.saturating_add(1);
        }
    }
}

impl DescribeCc for Dcqcn {
    const NAME: &'static str = "dcqcn";
    const SUMMARY: &'static str = "DCQCN (Zhu et al. 2015): ECN/CNP-driven rate control, modelled on HPCC's ns-3 rdma-hw.cc; defaults from its 100 Gb/s config";
    type Config = DcqcnConfig;

    fn validate(cfg: &DcqcnConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &DcqcnConfig, ctx: &FlowContext) -> Dcqcn {
        Dcqcn::new(cfg, ctx)
    }

    fn needs(cfg: &DcqcnConfig) -> Needs {
        Needs {
            pacing: true,
            notifications: Some(cfg.cnp_interval),
            ..Needs::default()
        }
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "dcqcn",
                summary: "DCQCN (Zhu et al. 2015) over PFC, HPCC ns-3's DCQCN profile, ECN at 100/400 KB (BFC §6.2.1)",
                config: "[cc]\nname = \"dcqcn\"\n[flow_control]\nkind = \"pfc\"\n",
            },
            Preset {
                name: "dcqcn-rdma",
                summary: "DCQCN over PFC with the parameters of ns3-rdma, the DCQCN simulator BFC §6.2 names, ECN at 100/400 KB",
                config: "[cc]\nname = \"dcqcn\"\nrate_increase_interval = \"60us\"\nfast_recovery_times = 5\n\
                         rate_ai = \"40Mbps\"\nbyte_counter = \"300KB\"\nclamp_target_rate = true\n\
                         alpha_resume_interval = \"55us\"\ncnp_interval = \"50us\"\n[flow_control]\nkind = \"pfc\"\n",
            },
        ]
    }
}

impl CongestionControl for Dcqcn {
    #[inline]
    fn window(&self) -> u64 {
        self.window_mode.cap(self.bdp, self.rc, self.line)
    }

    #[inline]
    fn rate(&self) -> Option<Rate> {
        Some(Rate(self.rc))
    }

    fn on_ack(&mut self, now: Time, _ack: &AckSignal) {
        self.advance(now);
    }

    fn on_send(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        let Some(b) = self.byte_counter else {
            return;
        };
        if self.next_increase.is_none() {
            return;
        }
        self.bytes += bytes;
        while self.bytes >= b {
            self.bytes -= b;
            self.increase(true);
        }
    }

    fn on_cnp(&mut self, now: Time) {
        self.advance(now);
        self.alpha_cnp = true;
        self.decrease_cnp = true;
        if !self.started {
            self.started = true;
            self.alpha = 1.0;
            self.alpha_cnp = false;
            self.next_alpha = now + self.alpha_iv;
            self.next_decrease = now + self.decrease_iv + Time::from_ns(1);
            self.rc = ((self.rc as f64 * self.first_cnp_factor) as u64).max(1);
            self.rt = self.rc;
        }
    }

    fn next_timer(&self) -> Option<Time> {
        if !self.started {
            return None;
        }
        let dec = self.decrease_cnp.then_some(self.next_decrease);
        let inc = self.next_increase.filter(|_| !self.saturated());
        match (dec, inc) {
            (Some(d), Some(i)) => Some(d.min(i)),
            (d, i) => d.or(i),
        }
    }

    fn on_timer(&mut self, now: Time) {
        self.advance(now);
    }

    fn on_loss(&mut self, now: Time, _snd_nxt: u64) {
        // HPCC's ns-3 leaves the rate alone on a NACK (`RecoverQueue` only rewinds the sender).
        self.advance(now);
    }

    fn on_timeout(&mut self, now: Time) {
        self.advance(now);
    }
}

/// The notification point's CNP pacing at the receiver: for each flow, a CE-marked data packet triggers a CNP
/// unless one was sent less than `interval` ago (DCQCN §3's NP; interval 0 answers every marked packet, as
/// HPCC's ns-3 does). Call [`CnpGenerator::on_data`] for every data packet of the flow as it arrives.
#[derive(Clone, Copy, Debug)]
pub struct CnpGenerator {
    interval: Time,
    last: Option<Time>,
}

impl CnpGenerator {
    /// A generator for one flow.
    pub fn new(interval: Time) -> CnpGenerator {
        CnpGenerator {
            interval,
            last: None,
        }
    }

    /// A data packet arrived at `now`, CE-marked or not: should the receiver send a CNP?
    pub fn on_data(&mut self, now: Time, ce: bool) -> bool {
        if !ce {
            return false;
        }
        if self
            .last
            .is_some_and(|last| now < last.saturating_add(self.interval))
        {
            return false;
        }
        self.last = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000_000;
    /// 1 − g for the default g = 1/256 (exact in binary).
    const A: f64 = 255.0 / 256.0;

    use crate::cc::test_context as ctx;

    fn us(n: u64) -> Time {
        Time::from_us(n)
    }

    /// `n` µs plus 1 ns: the decrease checks' phase after a first CNP at a whole microsecond.
    fn us1(n: u64) -> Time {
        Time::from_us(n) + Time::from_ns(1)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn line_rate_until_the_first_cnp() {
        let d = Dcqcn::new(&DcqcnConfig::default(), &ctx());
        assert_eq!(d.rate(), Some(Rate::gbps(100)));
        assert_eq!(d.window(), u64::MAX);
        assert_eq!(d.next_timer(), None);
    }

    #[test]
    fn cnp_train_exact_rates_and_alpha() {
        // Defaults (HPCC's ns-3 profile): g = 1/256, α every 1 µs, decrease checks every 4 µs, F = 1.
        let mut d = Dcqcn::new(&DcqcnConfig::default(), &ctx());

        // t = 0, first CNP: α = 1, rates × 1.0; α updates at 1, 2, 3 ... µs, decrease checks at 4.001,
        // 8.001 ... µs. Nothing is cut yet.
        d.on_cnp(us(0));
        assert_eq!(d.current_rate(), Rate(LINE));
        assert_eq!(d.next_timer(), Some(us1(4)));

        // 4.001 µs: four updates without CNP, α = A⁴ = 0.98446631...; no increase since the (absent) last
        // cut, so Rt is not clamped; Rc = ⌊100e9·(1 − A⁴/2)⌋ = 50 776 684 272.
        d.on_timer(us1(4));
        assert!(close(d.alpha(), A.powi(4)));
        assert_eq!(d.current_rate(), Rate(50_776_684_272));
        assert_eq!(d.target_rate(), Rate(LINE));
        // The increase timer runs 300 µs after the cut; no check is pending.
        assert_eq!(d.next_timer(), Some(us1(304)));

        // t = 10 µs: second CNP. α has decayed through the updates at 5..10 µs: A¹⁰.
        d.on_cnp(us(10));
        assert!(close(d.alpha(), A.powi(10)));
        assert_eq!(d.next_timer(), Some(us1(12)));
        // 12.001 µs: update at 11 µs saw the CNP (α = A·A¹⁰ + 1/256), 12 µs did not (× A):
        // α = A¹² + A/256 = 0.95801007...; Rc = ⌊50 776 684 272·(1 − α/2)⌋ = 26 454 396 773, Rt unclamped.
        d.on_timer(us1(12));
        let a12 = A.powi(12) + A / 256.0;
        assert!(close(d.alpha(), a12));
        assert_eq!(d.current_rate(), Rate(26_454_396_773));
        assert_eq!(d.target_rate(), Rate(LINE));

        // t = 60 µs: third CNP. The update due at 60 µs fires first: α = A⁴⁸·α₁₂ = 0.79392668...
        d.on_cnp(us(60));
        let a60 = A.powi(48) * a12;
        assert!((d.alpha() - a60).abs() < 1e-12);
        // The check at 60.001 µs cuts: Rc = ⌊26 454 396 773·(1 − α₆₀/2)⌋ = 15 952 970 962.
        assert_eq!(d.next_timer(), Some(us1(60)));
        d.on_timer(us1(60));
        assert_eq!(d.current_rate(), Rate(15_952_970_962));
        assert_eq!(d.target_rate(), Rate(LINE));
        // The CNP at 60 µs still counts for the α update at 61 µs: α = A·α₆₀ + 1/256.
        d.on_timer(us(61));
        assert!((d.alpha() - (A * a60 + 1.0 / 256.0)).abs() < 1e-12);
    }

    #[test]
    fn recovery_then_additive_then_hyper_increase() {
        // The paper's F = 5, target clamped at every cut.
        let cfg = DcqcnConfig {
            fast_recovery_times: 5,
            clamp_target_rate: true,
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(&cfg, &ctx());
        d.on_cnp(us(0));
        d.on_cnp(us(10));
        // Cut at 4.001 µs: Rt = 100e9, Rc = 50 776 684 272 (as above). Cut at 12.001 µs: Rt = 50 776 684 272,
        // Rc = ⌊Rt·(1 − α₁₂/2)⌋ = 26 454 396 773.
        d.on_timer(us1(12));
        let rt = 50_776_684_272u64;
        assert_eq!(d.target_rate(), Rate(rt));
        assert_eq!(d.current_rate(), Rate(26_454_396_773));
        assert_eq!(d.next_timer(), Some(us1(312)));

        // No more CNPs: increase events every 300 µs from 312.001 µs. Stages 0..4: fast recovery,
        // Rc ← ⌊Rc/2⌋ + ⌊Rt/2⌋.
        let recovered = [
            38_615_540_522u64,
            44_696_112_397,
            47_736_398_334,
            49_256_541_303,
            50_016_612_787,
        ];
        for (k, rc) in recovered.into_iter().enumerate() {
            let t = us1(312 + 300 * k as u64);
            assert_eq!(d.next_timer(), Some(t));
            d.on_timer(t);
            assert_eq!(d.current_rate(), Rate(rc), "fast recovery step {k}");
            assert_eq!(d.target_rate(), Rate(rt));
        }
        // Stage 5 = F: additive increase, Rt += 20 Mb/s = 50 796 684 272; Rc = 50 016 612 787/2 + Rt/2.
        d.on_timer(us1(1812));
        assert_eq!(d.target_rate(), Rate(50_796_684_272));
        assert_eq!(d.current_rate(), Rate(50_406_648_529));
        // Stages 6, 7: hyper increase, Rt += 200 Mb/s each.
        d.on_timer(us1(2112));
        assert_eq!(d.target_rate(), Rate(50_996_684_272));
        assert_eq!(d.current_rate(), Rate(50_701_666_400));
        d.on_timer(us1(2412));
        assert_eq!(d.target_rate(), Rate(51_196_684_272));
        assert_eq!(d.current_rate(), Rate(50_949_175_336));
        assert_eq!(d.stages(), (8, 0));
    }

    #[test]
    fn late_timer_calls_replay_the_same_history() {
        let cfg = DcqcnConfig {
            fast_recovery_times: 5,
            clamp_target_rate: true,
            ..DcqcnConfig::default()
        };
        let mut punctual = Dcqcn::new(&cfg, &ctx());
        let mut late = Dcqcn::new(&cfg, &ctx());
        for d in [&mut punctual, &mut late] {
            d.on_cnp(us(0));
            d.on_cnp(us(10));
        }
        while let Some(t) = punctual.next_timer().filter(|&t| t <= us(2500)) {
            punctual.on_timer(t);
        }
        punctual.on_timer(us(2500));
        late.on_timer(us(2500));
        late.on_timer(us(2500));
        assert_eq!(late.current_rate(), punctual.current_rate());
        assert_eq!(late.target_rate(), punctual.target_rate());
        assert_eq!(late.alpha(), punctual.alpha());
        assert_eq!(late.current_rate(), Rate(50_949_175_336));
    }

    #[test]
    fn byte_counter_drives_increases() {
        // Timer out of the way; a 100 KB byte counter; Rc = Rt = 50 Gb/s on the first CNP.
        let cfg = DcqcnConfig {
            fast_recovery_times: 5,
            clamp_target_rate: true,
            rate_increase_interval: Time::from_secs(1),
            rate_on_first_cnp: 0.5,
            byte_counter: Some(Bytes(100_000)),
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(&cfg, &ctx());
        d.on_cnp(us(0));
        assert_eq!(d.current_rate(), Rate(50_000_000_000));
        // Bytes sent before the first cut are not counted.
        d.on_send(us(1), 1_000_000);
        // Cut at 4.001 µs: Rt = 50e9, Rc = ⌊50e9·(1 − A⁴/2)⌋ = 25 388 342 136.
        d.on_timer(us1(4));
        assert_eq!(d.current_rate(), Rate(25_388_342_136));
        // Five byte-counter events (100 KB each): fast recovery toward Rt = 50e9.
        let recovered = [
            37_694_171_068u64,
            43_847_085_534,
            46_923_542_767,
            48_461_771_383,
            49_230_885_691,
        ];
        for (k, rc) in recovered.into_iter().enumerate() {
            d.on_send(us(5 + k as u64), 60_000);
            d.on_send(us(5 + k as u64), 40_000);
            assert_eq!(d.current_rate(), Rate(rc), "byte event {k}");
        }
        // Byte stage 5 but timer stage 0: additive increase (hyper needs both counts past F), twice.
        d.on_send(us(20), 100_000);
        assert_eq!(d.target_rate(), Rate(50_020_000_000));
        assert_eq!(d.current_rate(), Rate(49_625_442_845));
        d.on_send(us(21), 100_000);
        assert_eq!(d.target_rate(), Rate(50_040_000_000));
        assert_eq!(d.current_rate(), Rate(49_832_721_422));
        assert_eq!(d.stages(), (0, 7));
    }

    #[test]
    fn min_rate_floor() {
        let mut d = Dcqcn::new(&DcqcnConfig::default(), &ctx());
        // A CNP every microsecond for 1 ms: α stays near 1 and Rc roughly halves every 4 µs, down to the
        // 1 Gb/s floor.
        for t in 0..1000 {
            d.on_cnp(us(t));
        }
        d.on_timer(us(1000));
        assert_eq!(d.current_rate(), Rate::gbps(1));
    }

    #[test]
    fn window_cap_tracks_rate() {
        let variable = DcqcnConfig {
            window: RateWindow::Variable,
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(&variable, &ctx());
        assert_eq!(d.window(), 100_000);
        d.on_cnp(us(0));
        d.on_timer(us1(4));
        // ⌊100 000 B · 50 776 684 272 / 100e9⌋ = 50 776.
        assert_eq!(d.window(), 50_776);
        let bdp = DcqcnConfig {
            window: RateWindow::Bdp,
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(&bdp, &ctx());
        d.on_cnp(us(0));
        d.on_timer(us1(4));
        assert_eq!(d.window(), 100_000);
    }

    #[test]
    fn cnp_generator_paces_per_interval() {
        let mut g = CnpGenerator::new(us(50));
        assert!(!g.on_data(us(0), false));
        assert!(g.on_data(us(1), true));
        assert!(!g.on_data(us(20), true));
        assert!(!g.on_data(us(50), true));
        assert!(g.on_data(us(51), true));
        assert!(!g.on_data(us(60), false));
        assert!(g.on_data(us(101), true));
        let mut every = CnpGenerator::new(Time::ZERO);
        assert!(every.on_data(us(1), true));
        assert!(every.on_data(us(1), true));
        assert!(!every.on_data(us(2), false));
    }

    #[test]
    fn config_round_trips_and_rejects_unknown_keys() {
        use crate::cc::CcConfig;
        let cfg = CcConfig::Dcqcn(DcqcnConfig {
            byte_counter: Some(Bytes(10_000_000)),
            window: RateWindow::Variable,
            ..DcqcnConfig::default()
        });
        let text = toml::to_string(&cfg).unwrap();
        assert_eq!(toml::from_str::<CcConfig>(&text).unwrap(), cfg);
        let default = CcConfig::Dcqcn(DcqcnConfig::default());
        let text = toml::to_string(&default).unwrap();
        assert!(text.contains("rate_ai = \"20Mbps\""), "{text}");
        assert_eq!(toml::from_str::<CcConfig>(&text).unwrap(), default);
        assert_eq!(
            toml::from_str::<CcConfig>("name = \"dcqcn\"").unwrap(),
            default
        );
        assert!(toml::from_str::<CcConfig>("name = \"dcqcn\"\nrai = \"5Mbps\"").is_err());
        assert!(toml::from_str::<CcConfig>("name = \"dcqcn\"\nwindow = \"huge\"").is_err());
    }

    #[test]
    fn validate_rejects_bad_ranges() {
        assert!(DcqcnConfig::default().validate().is_ok());
        let bad = [
            DcqcnConfig {
                g: 0.0,
                ..DcqcnConfig::default()
            },
            DcqcnConfig {
                g: 1.5,
                ..DcqcnConfig::default()
            },
            DcqcnConfig {
                rate_decrease_interval: Time::ZERO,
                ..DcqcnConfig::default()
            },
            DcqcnConfig {
                rate_on_first_cnp: 0.0,
                ..DcqcnConfig::default()
            },
            DcqcnConfig {
                byte_counter: Some(Bytes::ZERO),
                ..DcqcnConfig::default()
            },
        ];
        for c in bad {
            assert!(c.validate().is_err(), "{c:?}");
        }
    }
}
