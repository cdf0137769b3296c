//! PINT's one-value digest for HPCC (Ben Basat et al., "PINT: Probabilistic In-band Network Telemetry",
//! SIGCOMM 2020, §4 and §5's HPCC-PINT), as HPCC's ns-3 implements it (`CC_MODE 10`: `SwitchNode::
//! SwitchNotifyDequeue`, `pint.cc`, `RdmaHw::HandleAckHpPint`).
//!
//! Instead of a stack of per-hop INT records, each switch egress port keeps its own utilization estimate
//! `U = (1 − dt/T)·U + (dt/T)·(qlen/(B·T) + txRate/B)` (HPCC's MeasureInflight moved into the switch, with T
//! the fabric's largest base RTT), updated as each data packet leaves, and a data packet carries only the
//! largest utilization along its path, encoded in a few bits on a logarithmic scale with randomized rounding
//! (`log_base`, 1.05 in the paper's Fig. 7 and HPCC's `pint.cc`, 1.01 in its `run.py`), which its ACK echoes.
//!
//! Switches have no multipliers: ns-3 computes the three terms of the update in the log domain, with
//! `log2apprx` (keep the 9 leading bits, round the rest up with the probability of what was cut, take the
//! log at a resolution of 2⁻¹⁵) and one exponentiation ([`Arithmetic::LogApprox`], the default here too);
//! [`Arithmetic::Exact`] does the update in floating point (ns-3's `#if 0` branch).

use bfcsim_core::rng::Rng;
use bfcsim_core::{Rate, Time};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// Concurrent flows the encoding resolves (`Pint::max_concurrent`, 512): the smallest utilization it can tell
/// from zero is 1/512.
pub const MAX_CONCURRENT: u32 = 512;

/// How switches compute the utilization update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arithmetic {
    /// In the log domain with randomized truncation, as ns-3's switches (`log2apprx`, b = 20, m = 9, l = 20).
    #[default]
    LogApprox,
    /// In floating point.
    Exact,
}

/// The encoding: values `log_base^p / 512` for digests `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pint {
    log_base: f64,
    /// `1 / ln(log_base)`.
    log_factor: f64,
}

impl Pint {
    /// The encoding with base `log_base` (> 1).
    pub fn new(log_base: f64) -> Pint {
        Pint {
            log_base,
            log_factor: 1.0 / log_base.ln(),
        }
    }

    /// Bits a digest takes: enough for the largest utilization, 512 (`Pint::get_n_bits`).
    pub fn bits(&self) -> u32 {
        let max = ((MAX_CONCURRENT as f64).powi(2)).ln() * self.log_factor;
        max.log2().ceil() as u32
    }

    /// Bytes a digest takes in the packet header (`Pint::get_n_bytes`: 1 with base 1.05, 2 with 1.01).
    pub fn bytes(&self) -> u32 {
        match self.bits() {
            0 => 0,
            b => (b - 1) / 8 + 1,
        }
    }

    /// Utilization `u` as a digest, rounded up or down at random so that it is unbiased (`Pint::encode_u`).
    pub fn encode(&self, u: f64, rng: &mut Rng) -> u16 {
        let scaled = ((u * MAX_CONCURRENT as f64).ceil() as u32).max(1) as f64;
        let power = scaled.ln() * self.log_factor;
        let (p_upper, p_lower) = (power.ceil() as u16, power.floor() as u16);
        let mut upper = self.log_base.powi(p_upper as i32);
        let lower = self.log_base.powi(p_lower as i32);
        if p_upper == p_lower {
            upper *= self.log_base;
        }
        let draw = (rng.random::<u32>() % 65536) as f64;
        if draw < (scaled - lower) / (upper - lower) * 65536.0 {
            p_upper
        } else {
            p_lower
        }
    }

    /// The utilization a digest stands for (`Pint::decode_u`).
    pub fn decode(&self, p: u16) -> f64 {
        self.log_base.powi(p as i32) / MAX_CONCURRENT as f64
    }
}

/// One switch egress port's PINT state: its utilization estimate and its last packet (any packet: ns-3
/// records every dequeue's size and time, and updates the estimate at data packets only).
#[derive(Clone, Debug)]
pub struct PintPort {
    encoding: Pint,
    arithmetic: Arithmetic,
    u: f64,
    last_size: u32,
    last_at: Option<Time>,
    /// T, the estimate's time constant, in ns (`SwitchNode::m_maxRtt`: the fabric's largest base RTT).
    t_ns: u64,
    rng: Rng,
}

impl PintPort {
    /// A port that has sent nothing, encoding with `encoding`, updating with `arithmetic`, averaging over `t`
    /// (the fabric's largest base RTT) and drawing its randomized roundings from `rng`.
    pub fn new(encoding: Pint, arithmetic: Arithmetic, t: Time, rng: Rng) -> PintPort {
        PintPort {
            encoding,
            arithmetic,
            u: 0.0,
            last_size: 0,
            last_at: None,
            t_ns: t.ns().max(1),
            rng,
        }
    }

    /// Data packet of `size` wire bytes leaves the port at `now`, with `qlen` bytes still queued behind it on a
    /// link of `rate`. Updates the estimate and returns the packet's digest for this hop.
    pub fn data_leaves(&mut self, (now, size): (Time, u32), qlen: u64, rate: Rate) -> u16 {
        let t_ns = self.t_ns;
        let dt = self
            .last_at
            .map_or(now.ns(), |at| (now - at).ns())
            .min(t_ns);
        let bytes_per_s = rate.0 / 8;
        let u = match self.arithmetic {
            Arithmetic::Exact => {
                let w = dt as f64 / t_ns as f64;
                let sample = if self.last_size == 0 {
                    0.0
                } else {
                    let tx_rate = self.last_size as f64 / dt.max(1) as f64; // bytes per ns
                    (qlen as f64 / t_ns as f64 + tx_rate) * 1e9 / bytes_per_s as f64
                };
                self.u * (1.0 - w) + sample * w
            }
            Arithmetic::LogApprox => self.approximate(dt, t_ns, qlen, bytes_per_s),
        };
        self.u = u;
        let digest = self.encoding.encode(u, &mut self.rng);
        self.left(now, size);
        digest
    }

    /// A packet that is not data leaves at `now`: only its size and time are recorded.
    pub fn left(&mut self, now: Time, size: u32) {
        self.last_size = size;
        self.last_at = Some(now);
    }

    /// The current estimate.
    pub fn utilization(&self) -> f64 {
        self.u
    }

    /// ns-3's update in the log domain: `qlen·dt·1e9/(B·T²) + size·1e9/(B·T) + (T − dt)·U/T`, each term an
    /// exponentiation of sums of [`log2_approx`] values (times in ns, `B` in bytes per second).
    fn approximate(&mut self, dt: u64, t: u64, qlen: u64, b: u64) -> f64 {
        let fct = (1u64 << SHIFT) as f64;
        let log_t = (t as f64).log2() * fct;
        let log_b = (b as f64).log2() * fct;
        let log_1e9 = 1e9f64.log2() * fct;
        let rng = &mut self.rng;
        let mut q_term = 0.0;
        if qlen >> 8 > 0 {
            let log_dt = log2_approx(dt, rng);
            let log_qlen = log2_approx(qlen >> 8, rng);
            q_term = ((log_dt + log_qlen) as f64 + log_1e9 - log_b - 2.0 * log_t) / fct;
            q_term = q_term.exp2() * 256.0;
        }
        let mut byte_term = 0.0;
        if self.last_size > 0 {
            let log_byte = log2_approx(self.last_size as u64, rng);
            byte_term = ((log_byte as f64 + log_1e9 - log_b - log_t) / fct).exp2();
        }
        let mut u_term = 0.0;
        let scaled_u = (self.u * 8192.0).round() as u64;
        if t > dt && scaled_u > 0 {
            let log_t_dt = log2_approx(t - dt, rng);
            let log_u = log2_approx(scaled_u, rng);
            u_term = (((log_t_dt + log_u) as f64 - log_t) / fct).exp2() / 8192.0;
        }
        q_term + byte_term + u_term
    }
}

/// The log resolution of [`log2_approx`]: `logres_shift(20, 20)` = 20 − 5.
const SHIFT: u32 = 15;
/// Leading bits [`log2_approx`] keeps.
const KEEP: u32 = 9;

/// `log2(x)·2^15`, of `x` cut to its 9 leading bits and rounded up with the probability of the cut part
/// (`SwitchNode::log2apprx` with b = 20, m = 9, l = 20). `x` > 0.
pub fn log2_approx(x0: u64, rng: &mut Rng) -> i64 {
    let msb = u64::BITS - x0.leading_zeros();
    let mut x = x0;
    if msb > KEEP {
        let cut = msb - KEEP;
        x = x >> cut << cut;
        let mask = (1u64 << cut) - 1;
        if x0 & mask > (rng.random::<u32>() as u64 & mask) {
            x += 1 << cut;
        }
    }
    ((x as f64).log2() * (1u64 << SHIFT) as f64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::rng::{Stream, stream};

    #[test]
    fn the_encoding_takes_one_byte_at_base_1_05_and_two_at_1_01() {
        assert_eq!((Pint::new(1.05).bits(), Pint::new(1.05).bytes()), (8, 1));
        assert_eq!((Pint::new(1.01).bits(), Pint::new(1.01).bytes()), (11, 2));
    }

    #[test]
    fn digests_are_unbiased_within_one_step_of_the_base() {
        let pint = Pint::new(1.05);
        let mut rng = stream(1, Stream::Other(0));
        for u in [0.01, 0.37, 0.95, 1.3, 4.0] {
            let n = 20_000;
            let mean: f64 = (0..n)
                .map(|_| pint.decode(pint.encode(u, &mut rng)))
                .sum::<f64>()
                / n as f64;
            // Encoding rounds u·512 up to an integer first, then to a neighbouring power of the base at random.
            let scaled = (u * 512.0).ceil() / 512.0;
            assert!(
                (mean / scaled - 1.0).abs() < 0.005,
                "u {u}: mean decoded {mean}"
            );
            let p = pint.encode(u, &mut rng);
            let d = pint.decode(p);
            assert!(d / scaled < 1.051 && scaled / d < 1.051, "u {u} → {d}");
        }
    }

    #[test]
    fn the_log_approximation_is_within_the_kept_bits() {
        let mut rng = stream(1, Stream::Other(1));
        for x in [1u64, 2, 255, 511, 512, 1000, 123_456, 10_000_000] {
            let exact = (x as f64).log2() * 32768.0;
            let got = log2_approx(x, &mut rng) as f64;
            // Nine leading bits: at most one unit in the ninth, a relative 2⁻⁸ of x, so log2 within 2⁻⁸/ln 2.
            assert!(
                (got - exact).abs() <= 32768.0 * (1.0 / 256.0) / std::f64::consts::LN_2 + 1.0,
                "{x}: {got} against {exact}"
            );
        }
    }

    #[test]
    fn a_saturated_port_settles_at_its_utilization_in_either_arithmetic() {
        // 1000 B packets back to back on 100 Gb/s (80 ns each), an empty queue, T = 8 µs: U → 1.
        for arithmetic in [Arithmetic::Exact, Arithmetic::LogApprox] {
            let pint = Pint::new(1.05);
            let mut port = PintPort::new(
                pint,
                arithmetic,
                Time::from_us(8),
                stream(3, Stream::Other(2)),
            );
            let mut digest = 0;
            for i in 0..2000u64 {
                digest = port.data_leaves((Time::from_ns(80 * (i + 1)), 1000), 0, Rate::gbps(100));
            }
            let u = port.utilization();
            assert!((u - 1.0).abs() < 0.02, "{arithmetic:?}: U = {u}");
            assert!((pint.decode(digest) - 1.0).abs() < 0.06, "{arithmetic:?}");
            // A standing queue of one T's worth of bytes (100 KB) adds 1.
            for i in 2000..4000u64 {
                port.data_leaves(
                    (Time::from_ns(80 * (i + 1)), 1000),
                    100_000,
                    Rate::gbps(100),
                );
            }
            let u = port.utilization();
            assert!((u - 2.0).abs() < 0.04, "{arithmetic:?}: U = {u}");
        }
    }
}
