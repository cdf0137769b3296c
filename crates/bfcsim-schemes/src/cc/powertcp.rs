//! PowerTCP and θ-PowerTCP (Addanki et al., "PowerTCP: Pushing the Performance Limits of Datacenter
//! Networks", NSDI 2022) as a sans-IO window-and-rate controller, with the details of the authors' ns-3 model
//! (inet-tub/ns3-datacenter, `rdma-hw.cc` `UpdateRatePower`), the reference this one is checked against.
//!
//! - §3, Algorithm 1: the window follows the bottleneck's **power**, current × voltage: `Γ = λ·(q + B·τ)`,
//!   λ the rate at which bytes arrive at the egress (its transmission rate plus the queue's growth,
//!   `txRate + dq/dt`) and `q + B·τ` the bytes its queue and the link hold; normalized by the base power
//!   `B²·τ` it is `Γ_norm`, the largest over the path's hops ([`Power::Int`]: from the per-hop INT records HPCC
//!   uses, [`bfcsim_net::int`]).
//! - θ-PowerTCP (§3.4, [`Power::Rtt`]): with no INT, from RTT alone: `Γ_norm = (dRTT/dt + 1)·RTT/τ`, the
//!   gradient between successive ACKs (at least 0.5, as the reference code bounds it), τ the smallest RTT the
//!   flow has seen (the authors' code divides by `1.05·τ`).
//! - Smoothing over an RTT: `Γ ← (Γ·(τ − dt) + Γ_norm·dt)/τ`, `dt` the time the sample spans (at most τ).
//! - The update: `W ← γ·(W_c/(Γ/η) + β) + (1 − γ)·W_c`, with `W_c` the window committed once per RTT (on the
//!   first ACK past the `snd_nxt` of the previous commit) and the ACKs in between reacting from the same `W_c`
//!   (the code's fast react, as HPCC's). θ-PowerTCP divides by Γ, not Γ/η. The pacing rate is `W/τ`; windows
//!   stay within `[min_rate·τ, line rate·τ]`.
//!
//! Defaults are the reference code's: γ = 0.9 (θ: 0.7), β = 150 Mb/s·τ, η = 0.95, τ the fabric's largest base
//! RTT (`GLOBAL_T 1`). Departures: the paper's Algorithm 1 divides the window at the acknowledged packet's
//! sending (`cwnd_old`), the code the committed `W_c`, which this follows; θ-PowerTCP needs no INT here, where
//! the reference loops over INT hops to apply the same RTT formula to each (docs/FIDELITY.md).

use bfcsim_core::{Bytes, Rate, Time};
use bfcsim_net::int::IntStack;
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs};
use crate::fabric::Preset;

/// Where the power comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Power {
    /// PowerTCP: per-hop INT records (queue length, bytes sent, timestamp, link rate).
    Int,
    /// θ-PowerTCP: the RTT and its gradient.
    Rtt,
}

/// PowerTCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PowerTcpConfig {
    /// PowerTCP (`int`) or θ-PowerTCP (`rtt`).
    pub power: Power,
    /// EWMA weight γ of the new window; absent: 0.9 for PowerTCP, 0.7 for θ-PowerTCP (the reference code's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gamma: Option<f64>,
    /// Additive increase β as a rate, `β·τ` bytes per update (the reference code's `150Mbps`).
    pub rate_ai: Rate,
    /// Target utilization η of PowerTCP's normalization (HPCC's `U_TARGET`, 0.95); θ-PowerTCP does not use it.
    pub eta: f64,
    /// τ; absent: the fabric's largest base RTT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<Time>,
    /// Lower bound of the rate (`MIN_RATE 1000Mb/s`).
    pub min_rate: Rate,
    /// Bytes of the controller's header on every data packet; absent: 42 B of INT for PowerTCP (the ns-3
    /// `IntHeader`: five 8-byte hops and a hop count), 8 B of timestamp for θ-PowerTCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Bytes>,
}

impl Default for PowerTcpConfig {
    fn default() -> Self {
        PowerTcpConfig {
            power: Power::Int,
            gamma: None,
            rate_ai: Rate(150_000_000),
            eta: 0.95,
            base_rtt: None,
            min_rate: Rate::gbps(1),
            header: None,
        }
    }
}

impl PowerTcpConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(g) = self.gamma
            && !(g > 0.0 && g <= 1.0)
        {
            return Err(format!("powertcp gamma = {g} must be in (0, 1]"));
        }
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("powertcp eta = {} must be in (0, 1]", self.eta));
        }
        if self.base_rtt == Some(Time::ZERO) {
            return Err("powertcp base_rtt must be positive".into());
        }
        if self.min_rate.0 == 0 {
            return Err("powertcp min_rate must be positive".into());
        }
        Ok(())
    }

    fn header_bytes(&self) -> Bytes {
        self.header.unwrap_or(match self.power {
            Power::Int => Bytes(42),
            Power::Rtt => Bytes(8),
        })
    }
}

/// One flow's PowerTCP state. Windows in payload bytes, times in picoseconds.
#[derive(Clone, Debug)]
pub struct PowerTcp {
    power: Power,
    gamma: f64,
    beta: f64,
    eta: f64,
    /// τ for the window-to-rate conversion (fixed).
    t: f64,
    /// τ for normalizing and smoothing: θ-PowerTCP lowers it to the smallest RTT seen.
    tau: f64,
    min_w: f64,
    max_w: f64,
    w: f64,
    wc: f64,
    /// Smoothed normalized power Γ.
    gamma_norm: f64,
    last_update_seq: Option<u64>,
    /// The previous ACK's INT stack (PowerTCP).
    prev: IntStack,
    /// The previous ACK's RTT and arrival (θ-PowerTCP).
    prev_rtt: f64,
    prev_at: Time,
}

impl PowerTcp {
    /// A flow's controller at its start: one BDP, line rate.
    pub fn new(cfg: &PowerTcpConfig, ctx: &FlowContext) -> PowerTcp {
        let t = cfg.base_rtt.unwrap_or(ctx.base_rtt).0 as f64;
        let bytes_in_t = |r: Rate| r.0 as f64 * t / 8e12;
        let max_w = bytes_in_t(ctx.line_rate);
        PowerTcp {
            power: cfg.power,
            gamma: cfg.gamma.unwrap_or(match cfg.power {
                Power::Int => 0.9,
                Power::Rtt => 0.7,
            }),
            beta: bytes_in_t(cfg.rate_ai),
            eta: cfg.eta,
            t,
            tau: t,
            min_w: bytes_in_t(cfg.min_rate).min(max_w),
            max_w,
            w: max_w,
            wc: max_w,
            gamma_norm: 1.0,
            last_update_seq: None,
            prev: IntStack::EMPTY,
            prev_rtt: 0.0,
            prev_at: Time::ZERO,
        }
    }

    /// The current window W in bytes.
    pub fn cwnd(&self) -> f64 {
        self.w
    }

    /// The reference window W_c in bytes.
    pub fn reference_window(&self) -> f64 {
        self.wc
    }

    /// The smoothed normalized power Γ.
    pub fn normalized_power(&self) -> f64 {
        self.gamma_norm
    }

    /// `Γ_norm` of the largest-power hop between the previous ACK's INT stack and `int`, with the time it spans;
    /// `None` when no hop can be compared (a new path, or no time elapsed).
    fn int_power(&self, int: &IntStack) -> Option<(f64, f64)> {
        if int.len() != self.prev.len() {
            return None;
        }
        let mut best: Option<(f64, f64)> = None;
        for (new, old) in int.iter().zip(self.prev.iter()) {
            let dt = new.ts.0.saturating_sub(old.ts.0) as f64;
            let b = new.rate.0 as f64;
            if dt == 0.0 || b == 0.0 {
                continue;
            }
            let tx_rate = new.tx_bytes.saturating_sub(old.tx_bytes) as f64 * 8e12 / dt;
            let dq = (new.qlen as f64 - old.qlen as f64) * 8e12 / dt;
            let current = tx_rate + dq;
            let voltage = new.qlen as f64 * 8.0 + b * self.tau / 1e12;
            let norm = current * voltage / (b * b * self.tau / 1e12);
            if best.is_none_or(|(u, _)| norm > u) {
                best = Some((norm, dt));
            }
        }
        best
    }

    /// θ-PowerTCP's `Γ_norm` for an RTT sample `rtt` at `now`, with the time since the previous ACK.
    fn rtt_power(&self, rtt: f64, now: Time) -> Option<(f64, f64)> {
        let dt = (now - self.prev_at).0 as f64;
        if dt == 0.0 {
            return None;
        }
        let current = ((rtt - self.prev_rtt) / dt + 1.0).max(0.5);
        Some((current * rtt / (1.05 * self.tau), dt))
    }

    /// The smoothing and the window update for one sample; commits W_c when `commit`.
    fn update(&mut self, (norm, dt): (f64, f64), commit: bool) {
        let dt = dt.min(self.tau);
        let sample = if norm < 0.0 { self.gamma_norm } else { norm };
        self.gamma_norm = (self.gamma_norm * (self.tau - dt) + sample * dt) / self.tau;
        let c = match self.power {
            Power::Int => self.gamma_norm / self.eta,
            Power::Rtt => self.gamma_norm,
        };
        let w = self.gamma * (self.wc / c + self.beta) + (1.0 - self.gamma) * self.wc;
        self.w = w.clamp(self.min_w, self.max_w);
        if commit {
            self.wc = self.w;
        }
    }
}

impl DescribeCc for PowerTcp {
    const NAME: &'static str = "powertcp";
    const SUMMARY: &'static str = "PowerTCP (Addanki et al. 2022): window from the bottleneck's power (current x voltage) by INT, or by RTT alone (theta-PowerTCP); the authors' ns-3 constants";
    type Config = PowerTcpConfig;

    fn validate(cfg: &PowerTcpConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &PowerTcpConfig, ctx: &FlowContext) -> PowerTcp {
        PowerTcp::new(cfg, ctx)
    }

    fn needs(cfg: &PowerTcpConfig) -> Needs {
        Needs {
            pacing: true,
            header: cfg.header_bytes(),
            int: cfg.power == Power::Int,
            ..Needs::default()
        }
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "powertcp",
                summary: "PowerTCP (Addanki et al. 2022) over PFC: INT power, gamma 0.9, beta 150 Mb/s x tau, 42 B INT \
                          (the authors' ns-3)",
                config: "[cc]\nname = \"powertcp\"\n[flow_control]\nkind = \"pfc\"\n",
            },
            Preset {
                name: "theta-powertcp",
                summary: "theta-PowerTCP (Addanki et al. 2022, §3.4) over PFC: power from the RTT gradient alone, gamma 0.7",
                config: "[cc]\nname = \"powertcp\"\npower = \"rtt\"\n[flow_control]\nkind = \"pfc\"\n",
            },
        ]
    }
}

impl CongestionControl for PowerTcp {
    #[inline]
    fn window(&self) -> u64 {
        (self.w as i64).max(1) as u64
    }

    #[inline]
    fn rate(&self) -> Option<Rate> {
        Some(Rate(((self.w * 8e12 / self.t) as i64).max(1) as u64))
    }

    fn on_ack(&mut self, now: Time, ack: &AckSignal) {
        let rtt = ack.rtt.map_or(0.0, |r| r.0 as f64);
        if self.power == Power::Rtt && rtt > 0.0 {
            self.tau = self.tau.min(rtt);
        }
        let Some(last) = self.last_update_seq else {
            self.prev = *ack.int;
            self.prev_rtt = rtt;
            self.prev_at = now;
            self.last_update_seq = Some(ack.snd_nxt);
            return;
        };
        let commit = ack.ack_seq > last;
        let sample = match self.power {
            Power::Int if !ack.int.overflowed() => self.int_power(ack.int),
            Power::Int => None,
            Power::Rtt => self.rtt_power(rtt, now),
        };
        if let Some(sample) = sample {
            self.update(sample, commit);
        }
        self.prev = *ack.int;
        self.prev_rtt = rtt;
        self.prev_at = now;
        if commit {
            self.last_update_seq = Some(last.max(ack.snd_nxt));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_context as ctx;
    use bfcsim_net::int::IntHop;

    fn stack(hops: &[(u64, u64, u64)]) -> &'static IntStack {
        let s = Box::leak(Box::new(IntStack::EMPTY));
        for &(ts_ns, tx_bytes, qlen) in hops {
            s.push(IntHop {
                ts: Time::from_ns(ts_ns),
                tx_bytes,
                qlen,
                rate: Rate::gbps(100),
            });
        }
        s
    }

    fn ack(ack_seq: u64, snd_nxt: u64, int: &'static IntStack) -> AckSignal<'static> {
        AckSignal {
            ack_seq,
            snd_nxt,
            int,
            rtt: Some(Time::from_us(8)),
            ..AckSignal::default()
        }
    }

    #[test]
    fn a_link_at_line_rate_with_no_queue_has_power_one_and_the_window_moves_to_eta_times_bdp_plus_beta() {
        // τ = 8 µs, 100 Gb/s: BDP 100 KB, β = 150 Mb/s · 8 µs = 150 B.
        let mut p = PowerTcp::new(&PowerTcpConfig::default(), &ctx());
        p.on_ack(Time::ZERO, &ack(1000, 100_000, stack(&[(0, 0, 0)])));
        // 1 µs later the port sent 12.5 KB (line rate) and its queue is still empty: Γ_norm = 1.
        let s = stack(&[(1000, 12_500, 0)]);
        assert!((p.int_power(s).unwrap().0 - 1.0).abs() < 1e-12);
        // One update from W_c = 100 KB at Γ = 1: the window moves towards η·W_c + β.
        p.on_ack(Time::ZERO, &ack(100_001, 200_000, s));
        // Γ smoothed: (1·(8 − 1) + 1·1)/8 = 1; W = 0.9·(100 000·0.95 + 150) + 0.1·100 000.
        let expected = 0.9 * (100_000.0 * 0.95 + 150.0) + 10_000.0;
        assert!((p.cwnd() - expected).abs() < 1e-6, "{} vs {expected}", p.cwnd());
        assert_eq!(p.reference_window(), p.cwnd(), "an ACK past snd_nxt commits");
    }

    #[test]
    fn a_growing_queue_raises_the_power_and_cuts_the_window_more_than_its_length_alone() {
        let mut p = PowerTcp::new(&PowerTcpConfig::default(), &ctx());
        p.on_ack(Time::ZERO, &ack(1000, 100_000, stack(&[(0, 0, 10_000)])));
        // Queue 10 KB → 30 KB in 1 µs at line rate: λ = 100 + 160 Gb/s; voltage 30 KB + BDP.
        let s = stack(&[(1000, 12_500, 30_000)]);
        let (norm, dt) = p.int_power(s).unwrap();
        let expected = (100e9 + 160e9) * (240_000.0 + 800_000.0) / (100e9 * 800_000.0);
        assert!((norm - expected).abs() < 1e-9, "{norm} vs {expected}");
        assert_eq!(dt, 1e6);
        // The same queue standing still: current = line rate, power = (q + BDP)/BDP only.
        let still = stack(&[(2000, 25_000, 30_000)]);
        let mut q = p.clone();
        q.prev = *s;
        assert!(q.int_power(still).unwrap().0 < norm);
        p.on_ack(Time::ZERO, &ack(1500, 100_000, s)); // fast react: W from W_c, not committed
        assert!(p.cwnd() < 100_000.0 * 0.95);
        assert_eq!(p.reference_window(), 100_000.0);
    }

    #[test]
    fn theta_powertcp_reads_the_rtt_gradient() {
        let cfg = PowerTcpConfig {
            power: Power::Rtt,
            ..PowerTcpConfig::default()
        };
        assert!(!PowerTcp::needs(&cfg).int);
        let mut p = PowerTcp::new(&cfg, &ctx());
        let rtt_ack = |seq: u64, nxt: u64, rtt_us: u64| AckSignal {
            ack_seq: seq,
            snd_nxt: nxt,
            rtt: Some(Time::from_us(rtt_us)),
            ..AckSignal::default()
        };
        p.on_ack(Time::from_us(8), &rtt_ack(1000, 100_000, 8));
        // RTT 8 → 10 µs over 1 µs: (2/1 + 1)·10/(1.05·8) = 3.571..., smoothed over dt = 1 µs of τ = 8 µs.
        p.on_ack(Time::from_us(9), &rtt_ack(100_001, 200_000, 10));
        let sample = 3.0 * 10.0 / (1.05 * 8.0);
        let smoothed = (7.0 + sample) / 8.0;
        assert!((p.normalized_power() - smoothed).abs() < 1e-12);
        let w = 0.7 * (100_000.0 / smoothed + 150.0) + 0.3 * 100_000.0;
        assert!((p.cwnd() - w).abs() < 1e-6);
        // A falling RTT bounds the current at 0.5.
        let (norm, _) = p.rtt_power(2e6, Time::from_us(10)).unwrap();
        assert!((norm - 0.5 * 2.0 / (1.05 * 8.0)).abs() < 1e-12);
    }
}
