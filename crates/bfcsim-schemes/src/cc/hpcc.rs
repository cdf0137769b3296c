//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019) as a sans-IO window-and-rate
//! controller driven by the INT records ACKs echo ([`bfcsim_net::int`]).
//!
//! Algorithm 1 of the paper, with the details of HPCC's ns-3 `rdma-hw.cc` (`HandleAckHp`, `UpdateRateHp`,
//! `FastReactHp`, aggregate mode `MULTI_RATE 0`):
//!
//! - MeasureInflight (§3.2, per ACK): for each hop i, from this ACK's record and the previous ACK's,
//!   `txRate = Δtx_bytes/Δts` and `u′ = min(qlen, previous qlen)/(B·T) + txRate/B` (B the hop's link rate,
//!   T the base RTT); keep the hop with the largest u′ (strictly larger: ties keep the first) and its
//!   `τ = Δts`; then `U ← (1 − τ/T)·U + (τ/T)·u′` with τ capped at T. U starts at 1 (ns-3 `hp.u = 1`).
//! - ComputeWind (§3.3): if `U ≥ η` or `incStage ≥ maxStage`, `W = W_c/(U/η) + W_AI` (multiplicative step,
//!   incStage reset); else `W = W_c + W_AI` (additive step, incStage + 1). W is kept within
//!   `[min_rate·T, line rate·T]` (ns-3 bounds the rate by `m_minRate` and `m_max_rate`).
//! - NewAck (§3.3): the reference window W_c and incStage are committed once per RTT, on the first ACK whose
//!   `ack_seq` passes the `snd_nxt` recorded at the previous commit (`m_lastUpdateSeq`); other ACKs compute W
//!   from the same W_c without committing ("fast react", ns-3 `FAST_REACT 1`). The very first ACK only
//!   records the INT stack and `snd_nxt` (ns-3's "first RTT" branch).
//! - Start at line rate: W = W_c = one BDP (`line rate·T`); the pacing rate is always `R = W/T` (ns-3 `VAR_WIN 1`:
//!   window = BDP·rate/line rate).
//!
//! Departures: INT values are exact (ns-3 quantizes them, see [`bfcsim_net::int`]); a hop whose timestamp did
//! not advance, or whose rate is zero, is skipped (ns-3 would divide by zero); when the number of hops
//! changes (a new path), the ACK only re-baselines the records; a stack that overflowed
//! ([`bfcsim_net::int::IntStack::overflowed`]) is ignored, as ns-3 ignores `nhop > maxHop`. Losses and
//! timeouts leave W alone (ns-3's NACK handling only rewinds the sender).
//!
//! **HPCC-PINT** (Ben Basat et al., "PINT: Probabilistic In-band Network Telemetry", SIGCOMM 2020, §5.1; HPCC's
//! ns-3 `CC_MODE 10`: `RdmaHw::HandleAckHpPint`, `UpdateRateHpPint`), with a `[cc.pint]` table ([`PintConfig`]):
//! instead of the INT stack, every data packet carries PINT's digest, the largest utilization estimate of the
//! egress ports it left, encoded in a byte or two ([`bfcsim_net::telemetry::pint`]), which its ACK echoes. The
//! sender decodes it as `U` directly (the switches smoothed over T) and applies the same ComputeWind and
//! once-per-RTT commit, every ACK reacting (ns-3 always fast-reacts here); it reads each ACK with probability
//! `pint.probability` (PINT's sampling, `PINT_PROB`), the others changing nothing.

use bfcsim_core::{Bytes, Rate, Time};
use bfcsim_core::rng::{Rng, Stream, stream};
use bfcsim_net::int::IntStack;
use bfcsim_net::telemetry::pint::{Arithmetic, Pint};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs, PintNeeds};
use crate::fabric::Preset;

/// Bytes of INT header HPCC adds to every data packet in BFC's comparisons (BFC §6.3: "the overhead of the
/// INT header (80 B per-packet)"), the default of [`HpccConfig::int_overhead`]. (HPCC's ns-3 header is 42 B:
/// five 8-byte hops and a hop count.)
pub const INT_OVERHEAD: Bytes = Bytes(80);

/// HPCC parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilization η (paper §3.3 and BFC §6.2.1: 0.95; ns-3 `U_TARGET 0.95`).
    pub eta: f64,
    /// maxStage: additive steps before a multiplicative one is forced (paper §3.3 and BFC §6.2.1: 5; the
    /// reference ns-3 runs use `MI_THRESH 0`, run.py's default).
    pub max_stage: u32,
    /// Additive increase as a rate, W_AI = rate_ai·T (ns-3 `RATE_AI 50Mb/s` in
    /// `reference/ns3-perf-k8/hpcc.config.txt` line 22; run.py's default is 10 Mb/s per 25 Gb/s of line rate).
    pub rate_ai: Rate,
    /// W_AI in bytes, overriding `rate_ai` (the paper's §3.3 suggests W_init·(1 − η)/N for N expected flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_ai: Option<Bytes>,
    /// T, the base RTT of the utilization estimate and of `R = W/T`; absent: the fabric's largest base RTT
    /// (ns-3 `GLOBAL_T 1`: one T, the maximum RTT, for every flow). Under HPCC-PINT also the switches' T.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<Time>,
    /// Lower bound of the rate, W ≥ min_rate·T (ns-3 `MIN_RATE 1000Mb/s`, line 24).
    pub min_rate: Rate,
    /// React to every ACK, not only once per RTT (ns-3 `FAST_REACT 1`, line 35; the paper's Algorithm 1).
    pub fast_react: bool,
    /// Bytes of INT header on every data packet, which the engine adds to its wire size (BFC §6.3: 80 B;
    /// HPCC's ns-3 `IntHeader` is 42 B: five 8-byte hops and a 2-byte hop count).
    pub int_overhead: Bytes,
    /// HPCC-PINT: feedback from PINT's digest instead of the INT stack (`[cc.pint]`; absent: INT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pint: Option<PintConfig>,
}

/// HPCC-PINT's parameters (`[cc.pint]`), with the defaults of HPCC's `run.py` for `--cc hpccPint`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PintConfig {
    /// The digest's logarithm base (`PINT_LOG_BASE`: 1.01 in `run.py`, two bytes; 1.05 in `pint.cc`, one).
    pub log_base: f64,
    /// Probability that a sender reads an ACK's digest (`PINT_PROB`, 1 in `run.py`).
    pub probability: f64,
    /// How switches compute their utilization update.
    pub arithmetic: Arithmetic,
}

impl Default for PintConfig {
    fn default() -> Self {
        PintConfig {
            log_base: 1.01,
            probability: 1.0,
            arithmetic: Arithmetic::LogApprox,
        }
    }
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: 0.95,
            max_stage: 5,
            rate_ai: Rate(50_000_000),
            w_ai: None,
            base_rtt: None,
            min_rate: Rate::gbps(1),
            fast_react: true,
            int_overhead: INT_OVERHEAD,
            pint: None,
        }
    }
}

impl HpccConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("hpcc eta = {} must be in (0, 1]", self.eta));
        }
        if self.rate_ai.0 == 0 {
            return Err("hpcc rate_ai must be positive".into());
        }
        if self.w_ai == Some(Bytes::ZERO) {
            return Err("hpcc w_ai must be positive".into());
        }
        if self.base_rtt == Some(Time::ZERO) {
            return Err("hpcc base_rtt must be positive".into());
        }
        if self.min_rate.0 == 0 {
            return Err("hpcc min_rate must be positive".into());
        }
        if let Some(p) = &self.pint {
            if !(p.log_base > 1.0 && p.log_base <= 2.0) {
                return Err(format!(
                    "hpcc pint.log_base = {} must be in (1, 2]",
                    p.log_base
                ));
            }
            if !(p.probability > 0.0 && p.probability <= 1.0) {
                return Err(format!(
                    "hpcc pint.probability = {} must be in (0, 1]",
                    p.probability
                ));
            }
        }
        Ok(())
    }
}

/// One flow's HPCC state. Windows are in payload bytes, kept as `f64` between ACKs.
#[derive(Clone, Debug)]
pub struct Hpcc {
    law: WindowLaw,
    fast_react: bool,
    /// Normalized inflight estimate U.
    u: f64,
    /// `snd_nxt` at the last commit of W_c; `None` before the first ACK.
    last_update_seq: Option<u64>,
    /// The INT stack of the previous ACK.
    prev: IntStack,
    /// HPCC-PINT's reader of digests (boxed: only its flows carry it, and every flow's controller is the size
    /// of the largest).
    pint: Option<Box<PintReader>>,
}

/// What an HPCC-PINT sender needs to read digests.
#[derive(Clone, Debug)]
struct PintReader {
    encoding: Pint,
    /// `probability` in 1/65536 (ns-3's `pint_smpl_thresh`).
    threshold: u32,
    rng: Rng,
}

impl PintReader {
    /// Whether the next ACK is read (`rand() % 65536 < pint_smpl_thresh`).
    fn sampled(&mut self) -> bool {
        self.threshold >= 65536 || self.rng.random::<u32>() % 65536 < self.threshold
    }
}

/// HPCC §3.3's window from a utilization estimate: ComputeWind, and NewAck's commit of the reference window
/// W_c and incStage once per RTT, which the INT and the PINT feedback share. The pacing rate is `W/T`.
#[derive(Clone, Debug)]
pub(crate) struct WindowLaw {
    eta: f64,
    max_stage: u32,
    w_ai: f64,
    /// T in picoseconds.
    t: f64,
    min_w: f64,
    max_w: f64,
    /// Current window W.
    w: f64,
    /// Reference window W_c.
    wc: f64,
    inc_stage: u32,
}

impl WindowLaw {
    /// At a flow's start: one BDP (`line rate·T`), T `base_rtt` or the fabric's, additive step `w_ai` bytes or
    /// `rate_ai·T`.
    pub(crate) fn new(
        (eta, max_stage): (f64, u32),
        (rate_ai, w_ai): (Rate, Option<Bytes>),
        (base_rtt, min_rate): (Option<Time>, Rate),
        ctx: &FlowContext,
    ) -> WindowLaw {
        let t = base_rtt.unwrap_or(ctx.base_rtt).0 as f64;
        let bytes_in_t = |r: Rate| r.0 as f64 * t / 8e12;
        let max_w = bytes_in_t(ctx.line_rate);
        WindowLaw {
            eta,
            max_stage,
            w_ai: w_ai.map_or_else(|| bytes_in_t(rate_ai), |b| b.0 as f64),
            t,
            min_w: bytes_in_t(min_rate).min(max_w),
            max_w,
            w: max_w,
            wc: max_w,
            inc_stage: 0,
        }
    }

    /// ComputeWind for utilization `u`; commits W_c and incStage when `commit`.
    pub(crate) fn compute(&mut self, u: f64, commit: bool) {
        let c = u / self.eta;
        let (w, stage) = if c >= 1.0 || self.inc_stage >= self.max_stage {
            (self.wc / c + self.w_ai, 0)
        } else {
            (self.wc + self.w_ai, self.inc_stage + 1)
        };
        self.w = w.clamp(self.min_w, self.max_w);
        if commit {
            self.wc = self.w;
            self.inc_stage = stage;
        }
    }

    // The window and rate convert through `i64`: one instruction, where an `f64`'s conversion to `u64` is a branching
    // sequence, and the NIC asks for both at every packet it sends. The same values: `w` is clamped to
    // [`min_w`, `max_w`], positive and far below 2⁶³.
    #[inline]
    pub(crate) fn window(&self) -> u64 {
        (self.w as i64).max(1) as u64
    }

    /// The pacing rate `W/T`.
    #[inline]
    pub(crate) fn rate(&self) -> Rate {
        Rate(((self.w * 8e12 / self.t) as i64).max(1) as u64)
    }

    /// The current window W in bytes, unrounded.
    pub(crate) fn cwnd(&self) -> f64 {
        self.w
    }

    /// The reference window W_c in bytes.
    pub(crate) fn reference_window(&self) -> f64 {
        self.wc
    }

    /// Additive steps since the last multiplicative one.
    pub(crate) fn inc_stage(&self) -> u32 {
        self.inc_stage
    }
}

impl Hpcc {
    /// A flow's controller at its start: one BDP, line rate.
    pub fn new(cfg: &HpccConfig, ctx: &FlowContext) -> Hpcc {
        Hpcc {
            law: WindowLaw::new(
                (cfg.eta, cfg.max_stage),
                (cfg.rate_ai, cfg.w_ai),
                (cfg.base_rtt, cfg.min_rate),
                ctx,
            ),
            fast_react: cfg.fast_react,
            u: 1.0,
            last_update_seq: None,
            prev: IntStack::EMPTY,
            pint: cfg.pint.map(|p| {
                Box::new(PintReader {
                    encoding: Pint::new(p.log_base),
                    threshold: (65536.0 * p.probability) as u32,
                    rng: stream(ctx.seed, Stream::Controller(ctx.flow.0)),
                })
            }),
        }
    }

    /// The current window W in bytes, unrounded.
    pub fn cwnd(&self) -> f64 {
        self.law.cwnd()
    }

    /// The reference window W_c in bytes.
    pub fn reference_window(&self) -> f64 {
        self.law.reference_window()
    }

    /// The normalized inflight estimate U.
    pub fn utilization(&self) -> f64 {
        self.u
    }

    /// Additive steps since the last multiplicative one.
    pub fn inc_stage(&self) -> u32 {
        self.law.inc_stage()
    }

    /// MeasureInflight and ComputeWind for one ACK's INT stack; commits W_c when `commit`.
    fn react(&mut self, int: &IntStack, commit: bool) {
        if int.len() != self.prev.len() {
            self.prev = *int;
            return;
        }
        let t = self.law.t;
        let mut u_max = 0.0;
        let mut tau = 0u64;
        for (new, old) in int.iter().zip(self.prev.iter()) {
            let dt = new.ts.0.saturating_sub(old.ts.0);
            if dt == 0 || new.rate.0 == 0 {
                continue;
            }
            let b = new.rate.0 as f64;
            let tx_rate = new.tx_bytes.saturating_sub(old.tx_bytes) as f64 * 8e12 / dt as f64;
            let qlen = new.qlen.min(old.qlen) as f64;
            let u = tx_rate / b + qlen * 8e12 / (b * t);
            if u > u_max {
                u_max = u;
                tau = dt;
            }
        }
        self.prev = *int;
        if int.is_empty() {
            return;
        }
        let tau = (tau as f64).min(t);
        self.u = (self.u * (t - tau) + u_max * tau) / t;
        self.law.compute(self.u, commit);
    }
}

impl DescribeCc for Hpcc {
    const NAME: &'static str = "hpcc";
    const SUMMARY: &'static str = "HPCC (Li et al. 2019): INT-driven window and rate, Algorithm 1 with ns-3's fast react; η = 0.95, maxStage = 5 (BFC §6.2.1)";
    type Config = HpccConfig;

    fn validate(cfg: &HpccConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &HpccConfig, ctx: &FlowContext) -> Hpcc {
        Hpcc::new(cfg, ctx)
    }

    fn needs(cfg: &HpccConfig) -> Needs {
        let Some(p) = cfg.pint else {
            return Needs {
                pacing: true,
                header: cfg.int_overhead,
                int: true,
                ..Needs::default()
            };
        };
        let encoding = Pint::new(p.log_base);
        Needs {
            pacing: true,
            header: Bytes(encoding.bytes() as u64),
            pint: Some(PintNeeds {
                encoding,
                arithmetic: p.arithmetic,
                t: cfg.base_rtt,
            }),
            ..Needs::default()
        }
    }

    fn optional_params() -> Vec<(String, String)> {
        let mut params = vec![(
            "pint".to_string(),
            "unset (INT; a [cc.pint] table turns HPCC-PINT on)".to_string(),
        )];
        params.extend(
            crate::catalog::config_params(&PintConfig::default())
                .into_iter()
                .map(|(k, v)| (format!("pint.{k}"), v)),
        );
        params
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "hpcc",
                summary: "HPCC (Li et al. 2019) over PFC: INT, eta 0.95, maxStage 5, 80 B INT per packet (BFC §6.2.1, §6.3)",
                config: "[cc]\nname = \"hpcc\"\n[flow_control]\nkind = \"pfc\"\n",
            },
            Preset {
                name: "hpcc-ideal-retx",
                summary: "BFC's HPCC-PFC: HPCC without PFC; a switch that drops a packet tells its sender at once, which resends \
                          that packet alone (BFC §6.2.1)",
                config: "[cc]\nname = \"hpcc\"\n[switch]\ndrop_notification = true\n[nic]\nrecovery = \"selective\"\n",
            },
            Preset {
                name: "hpcc-sfq",
                summary: "HPCC-PFC with stochastic fair queuing over 32 queues per port (BFC §6.4)",
                config: "[cc]\nname = \"hpcc\"\n[switch]\ndrop_notification = true\nqueues_per_port = 32\n\
                         [nic]\nrecovery = \"selective\"\n",
            },
            Preset {
                name: "hpcc-pint",
                summary: "HPCC-PINT (Ben Basat et al. 2020) over PFC: HPCC on PINT's 2-byte utilization digest (log base \
                          1.01, every ACK read), HPCC ns-3's CC_MODE 10",
                config: "[cc]\nname = \"hpcc\"\n[cc.pint]\n[flow_control]\nkind = \"pfc\"\n",
            },
            Preset {
                name: "hpcc-dqa",
                summary: "HPCC-PFC with BFC's dynamic queue assignment over 32 queues and no backpressure (BFC §6.4)",
                config: "[cc]\nname = \"hpcc\"\n[flow_control]\nkind = \"bfc\"\nbackpressure = false\n\
                         [switch]\ndrop_notification = true\nqueues_per_port = 32\n[nic]\nrecovery = \"selective\"\n",
            },
        ]
    }
}

impl CongestionControl for Hpcc {
    #[inline]
    fn window(&self) -> u64 {
        self.law.window()
    }

    #[inline]
    fn rate(&self) -> Option<Rate> {
        Some(self.law.rate())
    }

    fn on_ack(&mut self, _now: Time, ack: &AckSignal) {
        if let Some(pint) = &mut self.pint {
            if !pint.sampled() {
                return;
            }
            let u = pint.encoding.decode(ack.stamps.digest);
            let Some(last) = self.last_update_seq else {
                self.last_update_seq = Some(ack.snd_nxt);
                return;
            };
            let commit = ack.ack_seq > last;
            self.law.compute(u, commit);
            if commit {
                self.last_update_seq = Some(last.max(ack.snd_nxt));
            }
            return;
        }
        let Some(last) = self.last_update_seq else {
            self.prev = *ack.int;
            self.last_update_seq = Some(ack.snd_nxt);
            return;
        };
        let commit = ack.ack_seq > last;
        if (commit || self.fast_react) && !ack.int.overflowed() {
            self.react(ack.int, commit);
        }
        if commit {
            self.last_update_seq = Some(last.max(ack.snd_nxt));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_net::int::IntHop;

    use crate::cc::test_context as ctx;

    fn hop(ts_us: u64, tx_bytes: u64, qlen: u64, gbps: u64) -> IntHop {
        IntHop {
            ts: Time::from_us(ts_us),
            tx_bytes,
            qlen,
            rate: Rate::gbps(gbps),
        }
    }

    /// An ACK with these hops; its stack is leaked, as a test's few ACKs may be.
    fn ack(ack_seq: u64, snd_nxt: u64, hops: &[IntHop]) -> AckSignal<'static> {
        let int = Box::leak(Box::new(IntStack::EMPTY));
        for h in hops {
            int.push(*h);
        }
        AckSignal {
            ack_seq,
            snd_nxt,
            int,
            ..AckSignal::default()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    // All tests: 100 Gb/s, T = 8 µs, so BDP = 100 000 B, W_AI = 50 Mb/s·8 µs = 50 B, W ≥ 1 Gb/s·8 µs =
    // 1000 B. A hop's u′ = Δtx·8/(Δts·B) + min(qlen)·8/(B·T); at 100 Gb/s, qlen/(B·T) = qlen/100 000 B.

    #[test]
    fn one_hop_decrease_then_additive_steps_to_max_stage() {
        let mut h = Hpcc::new(&HpccConfig::default(), &ctx());
        assert_eq!(h.window(), 100_000);
        assert_eq!(h.rate(), Some(Rate::gbps(100)));

        // ACK 0: records the stack and snd_nxt = 100 000; nothing else.
        h.on_ack(Time::ZERO, &ack(1_000, 100_000, &[hop(0, 0, 20_000, 100)]));
        assert_eq!(h.window(), 100_000);

        // ACK 1 (ack_seq 2 000 ≤ 100 000: fast react): 12 500 B in 1 µs = 100 Gb/s, u′ = 1 + 20 000/100 000
        // = 1.2, τ = 1 µs: U = (1·7 + 1.2·1)/8 = 1.025 ≥ η. W = W_c·η/U + W_AI = 100 000·0.95/1.025 + 50
        // = 92 732.93; W_c and incStage are not committed.
        h.on_ack(
            Time::ZERO,
            &ack(2_000, 101_000, &[hop(1, 12_500, 20_000, 100)]),
        );
        assert!(close(h.utilization(), 1.025));
        assert!(close(h.cwnd(), 100_000.0 * 0.95 / 1.025 + 50.0));
        assert_eq!(h.window(), 92_732);
        assert_eq!(h.rate(), Some(Rate(92_732_926_829)));
        assert_eq!(h.reference_window(), 100_000.0);

        // ACK 2 (ack_seq 101 000 > 100 000: commit): 100 000 B in 8 µs = 100 Gb/s, min(40 000, 20 000)
        // = 20 000 queued: u′ = 1.2, τ = T so U = 1.2. W = 100 000·0.95/1.2 + 50 = 79 216.67 = W_c.
        h.on_ack(
            Time::ZERO,
            &ack(101_000, 120_000, &[hop(9, 112_500, 40_000, 100)]),
        );
        let w2 = 100_000.0 * 0.95 / 1.2 + 50.0;
        assert!(close(h.utilization(), 1.2));
        assert!(close(h.cwnd(), w2));
        assert!(close(h.reference_window(), w2));
        assert_eq!(h.inc_stage(), 0);
        assert_eq!(h.rate(), Some(Rate(79_216_666_666)));

        // ACK 3 (commit, 121 000 > 120 000): 40 000 B in 8 µs = 40 Gb/s, queue gone: u′ = U = 0.4 < η,
        // incStage 0 < 5: additive, W = W_c + 50.
        h.on_ack(
            Time::ZERO,
            &ack(121_000, 130_000, &[hop(17, 152_500, 0, 100)]),
        );
        assert!(close(h.utilization(), 0.4));
        assert!(close(h.cwnd(), w2 + 50.0));
        assert_eq!(h.inc_stage(), 1);

        // A fast-react ACK in between: W = W_c + 50 again, not accumulated.
        h.on_ack(
            Time::ZERO,
            &ack(125_000, 131_000, &[hop(18, 157_500, 0, 100)]),
        );
        assert!(close(h.cwnd(), w2 + 100.0));
        assert!(close(h.reference_window(), w2 + 50.0));
        assert_eq!(h.inc_stage(), 1);

        // Four more committing ACKs at 40 Gb/s: incStage 2..5, W = w2 + 100 ... w2 + 250.
        let mut ts = 18;
        let mut tx = 157_500;
        let mut seq = 131_000;
        for k in 2..=5u32 {
            ts += 8;
            tx += 40_000;
            h.on_ack(
                Time::ZERO,
                &ack(seq + 1, seq + 10_000, &[hop(ts, tx, 0, 100)]),
            );
            seq += 10_000;
            assert!(close(h.cwnd(), w2 + 50.0 * k as f64), "stage {k}");
            assert_eq!(h.inc_stage(), k);
        }
        // incStage = maxStage: the next commit is multiplicative although U = 0.4 < η:
        // W = W_c·0.95/0.4 + 50 = 188 783 → capped at one BDP.
        h.on_ack(
            Time::ZERO,
            &ack(seq + 1, seq + 10_000, &[hop(ts + 8, tx + 40_000, 0, 100)]),
        );
        assert_eq!(h.cwnd(), 100_000.0);
        assert_eq!(h.inc_stage(), 0);
        assert_eq!(h.rate(), Some(Rate::gbps(100)));
    }

    #[test]
    fn two_hops_take_the_most_utilized_with_its_own_tau() {
        let mut h = Hpcc::new(&HpccConfig::default(), &ctx());
        h.on_ack(
            Time::ZERO,
            &ack(1_000, 100_000, &[hop(0, 0, 0, 100), hop(0, 0, 10_000, 50)]),
        );
        // Hop 0 (100 Gb/s): 50 000 B in 8 µs = 50 Gb/s, no queue: u′ = 0.5.
        // Hop 1 (50 Gb/s): 25 000 B in 4 µs = 50 Gb/s = B, min(15 000, 10 000) queued:
        // u′ = 1 + 10 000·8/(50e9·8 µs) = 1.2, τ = 4 µs. U = (1·(8 − 4) + 1.2·4)/8 = 1.1.
        // W = 100 000·0.95/1.1 + 50 = 86 413.64.
        h.on_ack(
            Time::ZERO,
            &ack(
                101_000,
                150_000,
                &[hop(8, 50_000, 0, 100), hop(4, 25_000, 15_000, 50)],
            ),
        );
        assert!(close(h.utilization(), 1.1));
        assert!(close(h.cwnd(), 100_000.0 * 0.95 / 1.1 + 50.0));
        assert_eq!(h.window(), 86_413);
        assert_eq!(h.rate(), Some(Rate(86_413_636_363)));
    }

    #[test]
    fn reference_profile_is_always_multiplicative() {
        // max_stage = 0 (the reference ns-3 runs): every step is W = W_c·η/U + W_AI, even below η.
        let cfg = HpccConfig {
            max_stage: 0,
            ..HpccConfig::default()
        };
        let mut h = Hpcc::new(&cfg, &ctx());
        h.on_ack(
            Time::ZERO,
            &ack(1_000, 100_000, &[hop(0, 0, 1_000_000, 100)]),
        );
        // 100 Gb/s and min(10 MB, 1 MB) = 1 MB queued: u′ = 1 + 10 = 11 = U; W = 100 000·0.95/11 + 50.
        h.on_ack(
            Time::ZERO,
            &ack(101_000, 200_000, &[hop(8, 100_000, 10_000_000, 100)]),
        );
        let w1 = 100_000.0 * 0.95 / 11.0 + 50.0;
        assert!(close(h.cwnd(), w1));
        // 40 Gb/s, no queue: U = 0.4, W = W_c·0.95/0.4 + 50 twice (20 680.6, 49 166.9), then capped.
        let w2 = w1 * 0.95 / 0.4 + 50.0;
        h.on_ack(
            Time::ZERO,
            &ack(201_000, 300_000, &[hop(16, 140_000, 0, 100)]),
        );
        assert!(close(h.cwnd(), w2));
        assert_eq!(h.inc_stage(), 0);
        h.on_ack(
            Time::ZERO,
            &ack(301_000, 400_000, &[hop(24, 180_000, 0, 100)]),
        );
        assert!(close(h.cwnd(), w2 * 0.95 / 0.4 + 50.0));
        h.on_ack(
            Time::ZERO,
            &ack(401_000, 500_000, &[hop(32, 220_000, 0, 100)]),
        );
        assert_eq!(h.cwnd(), 100_000.0);
        // Floor: 100 Gb/s with the queue only just built (min(100 MB, 0) = 0): U = 1, W = 95 050; then
        // 100 MB on both records: U = 1001, W = 95 050·0.95/1001 + 50 = 140 → 1 Gb/s·8 µs = 1000 B.
        h.on_ack(
            Time::ZERO,
            &ack(501_000, 600_000, &[hop(40, 320_000, 100_000_000, 100)]),
        );
        assert!(close(h.cwnd(), 100_000.0 * 0.95 + 50.0));
        h.on_ack(
            Time::ZERO,
            &ack(601_000, 700_000, &[hop(48, 420_000, 100_000_000, 100)]),
        );
        assert_eq!(h.window(), 1_000);
        assert_eq!(h.rate(), Some(Rate::gbps(1)));
    }

    #[test]
    fn no_fast_react_waits_for_the_next_rtt() {
        let cfg = HpccConfig {
            fast_react: false,
            ..HpccConfig::default()
        };
        let mut h = Hpcc::new(&cfg, &ctx());
        h.on_ack(Time::ZERO, &ack(1_000, 100_000, &[hop(0, 0, 20_000, 100)]));
        h.on_ack(
            Time::ZERO,
            &ack(2_000, 101_000, &[hop(1, 12_500, 20_000, 100)]),
        );
        assert_eq!(h.cwnd(), 100_000.0);
        assert_eq!(h.utilization(), 1.0);
        // The committing ACK compares with ACK 0's records (the ignored ACK did not replace them):
        // 112 500 B in 9 µs = 100 Gb/s, τ = 9 µs capped at T: U = u′ = 1.2.
        h.on_ack(
            Time::ZERO,
            &ack(101_000, 120_000, &[hop(9, 112_500, 40_000, 100)]),
        );
        assert!(close(h.utilization(), 1.2));
        assert!(close(h.cwnd(), 100_000.0 * 0.95 / 1.2 + 50.0));
    }

    #[test]
    fn path_change_and_overflow_only_rebaseline() {
        let mut h = Hpcc::new(&HpccConfig::default(), &ctx());
        h.on_ack(Time::ZERO, &ack(1_000, 100_000, &[hop(0, 0, 0, 100)]));
        // Two hops now: records replaced, W unchanged.
        h.on_ack(
            Time::ZERO,
            &ack(
                101_000,
                200_000,
                &[hop(8, 0, 50_000, 100), hop(8, 0, 0, 100)],
            ),
        );
        assert_eq!(h.cwnd(), 100_000.0);
        assert_eq!(h.utilization(), 1.0);
        let mut six = IntStack::EMPTY;
        for _ in 0..6 {
            six.push(hop(16, 100_000, 90_000, 100));
        }
        let overflow = AckSignal {
            ack_seq: 201_000,
            snd_nxt: 300_000,
            int: &six,
            ..AckSignal::default()
        };
        h.on_ack(Time::ZERO, &overflow);
        assert_eq!(h.cwnd(), 100_000.0);
    }

    #[test]
    fn config_round_trips_and_rejects_unknown_keys() {
        use crate::cc::CcConfig;
        let cfg = CcConfig::Hpcc(HpccConfig {
            w_ai: Some(Bytes(80)),
            base_rtt: Some(Time::from_us(13)),
            ..HpccConfig::default()
        });
        let text = toml::to_string(&cfg).unwrap();
        assert_eq!(toml::from_str::<CcConfig>(&text).unwrap(), cfg);
        let default = CcConfig::Hpcc(HpccConfig::default());
        assert_eq!(
            toml::from_str::<CcConfig>(&toml::to_string(&default).unwrap()).unwrap(),
            default
        );
        assert_eq!(
            toml::from_str::<CcConfig>("name = \"hpcc\"\neta = 0.9").unwrap(),
            CcConfig::Hpcc(HpccConfig {
                eta: 0.9,
                ..HpccConfig::default()
            })
        );
        assert!(toml::from_str::<CcConfig>("name = \"hpcc\"\nmaxStage = 5").is_err());
    }

    #[test]
    fn validate_rejects_bad_ranges() {
        assert!(HpccConfig::default().validate().is_ok());
        for c in [
            HpccConfig {
                eta: 0.0,
                ..HpccConfig::default()
            },
            HpccConfig {
                eta: 1.2,
                ..HpccConfig::default()
            },
            HpccConfig {
                w_ai: Some(Bytes::ZERO),
                ..HpccConfig::default()
            },
            HpccConfig {
                base_rtt: Some(Time::ZERO),
                ..HpccConfig::default()
            },
        ] {
            assert!(c.validate().is_err(), "{c:?}");
        }
    }

    fn pint_ack(ack_seq: u64, snd_nxt: u64, digest: u16) -> AckSignal<'static> {
        AckSignal {
            ack_seq,
            snd_nxt,
            stamps: bfcsim_net::telemetry::PacketStamps {
                digest,
                ..Default::default()
            },
            ..AckSignal::default()
        }
    }

    fn pint_config(probability: f64) -> HpccConfig {
        HpccConfig {
            pint: Some(PintConfig {
                probability,
                ..PintConfig::default()
            }),
            ..HpccConfig::default()
        }
    }

    #[test]
    fn hpcc_pint_drives_the_window_law_from_the_digest() {
        let cfg = pint_config(1.0);
        let needs = Hpcc::needs(&cfg);
        assert!(!needs.int && needs.pint.is_some());
        assert_eq!(needs.header, Bytes(2), "base 1.01: two bytes of digest, no INT header");
        let pint = Pint::new(1.01);
        let mut h = Hpcc::new(&cfg, &ctx());
        h.on_ack(Time::ZERO, &pint_ack(1000, 100_000, 0));
        assert_eq!(h.cwnd(), 100_000.0, "the first ACK only records snd_nxt");
        // A digest for U ≈ 1.9, twice η: W = W_c/(U/η) + W_AI, committed (the ACK is past snd_nxt).
        let p = (0..2000u16)
            .min_by(|&a, &b| {
                let d = |p| (pint.decode(p) - 1.9).abs();
                d(a).total_cmp(&d(b))
            })
            .unwrap();
        let u = pint.decode(p);
        h.on_ack(Time::ZERO, &pint_ack(100_001, 200_000, p));
        let w_ai = 50e6 * 8e6 / 8e12;
        assert!((h.cwnd() - (100_000.0 / (u / 0.95) + w_ai)).abs() < 1e-6);
        assert_eq!(h.reference_window(), h.cwnd());
        // An ACK inside the RTT reacts from the committed W_c without committing.
        h.on_ack(Time::ZERO, &pint_ack(150_000, 200_000, p));
        assert!(h.cwnd() < h.reference_window());
    }

    #[test]
    fn hpcc_pint_reads_its_sampling_probability_of_the_acks() {
        let mut h = Hpcc::new(&pint_config(0.25), &ctx());
        let reader = h.pint.as_mut().unwrap();
        let read = (0..40_000).filter(|_| reader.sampled()).count();
        assert!((9_600..10_400).contains(&read), "{read} of 40000");
        let mut all = Hpcc::new(&pint_config(1.0), &ctx());
        let reader = all.pint.as_mut().unwrap();
        assert!((0..1000).all(|_| reader.sampled()));
        assert!(pint_config(0.0).validate().is_err());
    }
}
