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
//! `log2apprx` (keep the 16 leading bits, round the rest up with the probability of what was cut, take the
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
    /// In the log domain with randomized truncation, as ns-3's switches (`log2apprx`, b = 20, m = 16, l = 20).
    #[default]
    LogApprox,
    /// In floating point.
    Exact,
}

/// The encoding: values `log_base^p / 512` for digests `p`.
#[derive(Clone, Copy, PartialEq)]
pub struct Pint {
    log_base: f64,
    /// `1 / ln(log_base)`.
    log_factor: f64,
    /// Its powers and the digests next to small utilizations, worked out once a process for each base.
    steps: &'static Steps,
}

impl std::fmt::Debug for Pint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pint")
            .field("log_base", &self.log_base)
            .finish()
    }
}

/// What [`Pint::encode`] and [`Pint::decode`] would otherwise compute at every packet with a logarithm and a
/// power (both computed here with the same formulas, so the results are the same to the bit).
#[derive(PartialEq)]
struct Steps {
    /// `log_base^p` for every digest `p` the encoding has.
    powers: Box<[f64]>,
    /// For `scaled` = ⌈u·512⌉ up to [`SMALL`]: the floor and ceiling of `log_base`'s logarithm of it.
    exponents: Box<[(u16, u16)]>,
}

/// Scaled utilizations whose digests' exponents are tabulated: `u` up to 8.
const SMALL: u32 = 8 * MAX_CONCURRENT;

impl Steps {
    /// The steps of base `log_base`, made the first time a process asks for them.
    fn of(log_base: f64, log_factor: f64, bits: u32) -> &'static Steps {
        static MADE: std::sync::Mutex<Vec<(u64, &'static Steps)>> =
            std::sync::Mutex::new(Vec::new());
        let mut made = MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, steps)) = made.iter().find(|(b, _)| *b == log_base.to_bits()) {
            return steps;
        }
        let steps: &'static Steps = Box::leak(Box::new(Steps {
            powers: (0..1i32 << bits.min(16))
                .map(|p| log_base.powi(p))
                .collect(),
            exponents: (0..=SMALL)
                .map(|scaled| {
                    let power = (scaled.max(1) as f64).ln() * log_factor;
                    (power.floor() as u16, power.ceil() as u16)
                })
                .collect(),
        }));
        made.push((log_base.to_bits(), steps));
        steps
    }

    /// `log_base^p`.
    #[inline]
    fn power(&self, log_base: f64, p: u16) -> f64 {
        match self.powers.get(p as usize) {
            Some(&power) => power,
            None => log_base.powi(p as i32),
        }
    }
}

impl Pint {
    /// The encoding with base `log_base` (> 1).
    pub fn new(log_base: f64) -> Pint {
        let log_factor = 1.0 / log_base.ln();
        Pint {
            log_base,
            log_factor,
            steps: Steps::of(log_base, log_factor, Self::bits_of(log_factor)),
        }
    }

    fn bits_of(log_factor: f64) -> u32 {
        let max = ((MAX_CONCURRENT as f64).powi(2)).ln() * log_factor;
        max.log2().ceil() as u32
    }

    /// Bits a digest takes: enough for the largest utilization, 512 (`Pint::get_n_bits`).
    pub fn bits(&self) -> u32 {
        Self::bits_of(self.log_factor)
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
        let scaled = ((u * MAX_CONCURRENT as f64).ceil() as u32).max(1);
        let (p_lower, p_upper) = match self.steps.exponents.get(scaled as usize) {
            Some(&exponents) => exponents,
            None => {
                let power = (scaled as f64).ln() * self.log_factor;
                (power.floor() as u16, power.ceil() as u16)
            }
        };
        let scaled = scaled as f64;
        // The next power up is one multiplication away (also when the logarithm is whole, as in
        // `Pint::encode_u`).
        let lower = self.steps.power(self.log_base, p_lower);
        let upper = lower * self.log_base;
        let draw = (rng.random::<u32>() % 65536) as f64;
        if draw < (scaled - lower) / (upper - lower) * 65536.0 {
            p_upper
        } else {
            p_lower
        }
    }

    /// The utilization a digest stands for (`Pint::decode_u`).
    pub fn decode(&self, p: u16) -> f64 {
        self.steps.power(self.log_base, p) / MAX_CONCURRENT as f64
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
    /// `log2(T)` in units of 2⁻¹⁵.
    log_t: f64,
    /// The update's constant factors for the port's link rate, `2^((log2(1e9) − log2(B) − 2·log2(T))·2⁻¹⁵)`
    /// and `2^((log2(1e9) − log2(B) − log2(T))·2⁻¹⁵)` with each logarithm in units of 2⁻¹⁵ as ns-3's, which
    /// works them out at every packet; and the rate they are for.
    factors: Option<(Rate, f64, f64)>,
    /// `2^(−log2(T)·2⁻¹⁵)`, the third term's factor.
    u_factor: f64,
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
            log_t: (t.ns().max(1) as f64).log2() * FACTOR,
            factors: None,
            u_factor: (-(t.ns().max(1) as f64).log2() * FACTOR / FACTOR).exp2(),
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
        let rate = Rate(b * 8);
        let (q_factor, byte_factor) = match self.factors {
            Some((r, q, byte)) if r == rate => (q, byte),
            _ => {
                let log = |x: f64| x.log2() * FACTOR;
                let (log_t, log_b, log_1e9) = (self.log_t, log(b as f64), log(1e9));
                let exp = |x: f64| (x / FACTOR).exp2();
                let factors = (
                    exp(log_1e9 - log_b - 2.0 * log_t),
                    exp(log_1e9 - log_b - log_t),
                );
                self.factors = Some((rate, factors.0, factors.1));
                factors
            }
        };
        let rng = &mut self.rng;
        let mut q_term = 0.0;
        if qlen >> 8 > 0 {
            let log_dt = log2_approx(dt, rng);
            let log_qlen = log2_approx(qlen >> 8, rng);
            q_term = exp2_scaled(log_dt + log_qlen) * q_factor * 256.0;
        }
        let mut byte_term = 0.0;
        if self.last_size > 0 {
            let log_byte = log2_approx(self.last_size as u64, rng);
            byte_term = exp2_scaled(log_byte) * byte_factor;
        }
        let mut u_term = 0.0;
        let scaled_u = (self.u * 8192.0).round() as u64;
        if t > dt && scaled_u > 0 {
            let log_t_dt = log2_approx(t - dt, rng);
            let log_u = log2_approx(scaled_u, rng);
            u_term = exp2_scaled(log_t_dt + log_u) * self.u_factor / 8192.0;
        }
        q_term + byte_term + u_term
    }
}

/// `2^(n·2⁻¹⁵)` for `n` ≥ 0, ns-3's `pow(2, n/fct)`: a power of two times two tabulated factors (for the
/// next 8 and the last 7 bits of the fraction), within a few units in the last place of `pow`.
#[inline]
fn exp2_scaled(n: i64) -> f64 {
    let tables = exp2_tables();
    let whole = f64::from_bits(((1023 + (n >> SHIFT)) as u64) << 52);
    whole * tables.0[(n as usize >> 7) & 255] * tables.1[n as usize & 127]
}

/// `2^(i·2⁻⁸)` for i < 256 and `2^(j·2⁻¹⁵)` for j < 128.
fn exp2_tables() -> &'static ([f64; 256], [f64; 128]) {
    static TABLES: std::sync::OnceLock<([f64; 256], [f64; 128])> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        (
            std::array::from_fn(|i| (i as f64 / 256.0).exp2()),
            std::array::from_fn(|j| (j as f64 / FACTOR).exp2()),
        )
    })
}

/// The log resolution of [`log2_approx`]: `logres_shift(20, 20)` = 20 − 5.
const SHIFT: u32 = 15;
/// `2^SHIFT`, ns-3's `fct`.
const FACTOR: f64 = (1u64 << SHIFT) as f64;
/// Leading bits [`log2_approx`] keeps (ns-3's `m`).
const KEEP: u32 = 16;

/// `log2(x)·2^15`, of `x` cut to its 16 leading bits and rounded up with the probability of the cut part
/// (`SwitchNode::log2apprx` with b = 20, m = 16, l = 20). `x` > 0.
///
/// What is kept is `k·2^cut` with `k` ≤ 2^16, whose logarithm is `log2(k) + cut`: a table of `log2(k)·2^15`
/// (rounded down, as ns-3's `int(log2(x)·fct)`) takes the place of a `log2` a call.
pub fn log2_approx(x0: u64, rng: &mut Rng) -> i64 {
    let msb = u64::BITS - x0.leading_zeros();
    let mut cut = 0;
    let mut kept = x0;
    if msb > KEEP {
        cut = msb - KEEP;
        kept = x0 >> cut;
        let mask = (1u64 << cut) - 1;
        if x0 & mask > (rng.random::<u32>() as u64 & mask) {
            kept += 1;
        }
    }
    log2_table()[kept as usize] as i64 + ((cut as i64) << SHIFT)
}

/// `log2(k)·2^15` rounded down for `k` in 1..=2^16 (`[0]` unused).
fn log2_table() -> &'static [u32] {
    static TABLE: std::sync::OnceLock<Box<[u32]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=1u64 << KEEP)
            .map(|k| ((k.max(1) as f64).log2() * FACTOR) as u32)
            .collect()
    })
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
    fn the_tables_hold_what_the_formulas_give() {
        for base in [1.01, 1.05] {
            let pint = Pint::new(base);
            assert!(std::ptr::eq(pint.steps, Pint::new(base).steps));
            for p in [0u16, 1, 17, 255, 1254] {
                assert_eq!(pint.decode(p), base.powi(p as i32) / 512.0);
            }
            for scaled in [1u32, 2, 511, 512, 513, 1500, 4096] {
                let power = (scaled as f64).ln() / base.ln();
                let (lo, hi) = pint.steps.exponents[scaled as usize];
                assert_eq!((lo, hi), (power.floor() as u16, power.ceil() as u16));
            }
        }
    }

    #[test]
    fn the_tabulated_power_of_two_is_pow_to_a_few_units_in_the_last_place() {
        for n in [
            0i64, 1, 127, 128, 32_767, 32_768, 123_456, 654_321, 1_000_003,
        ] {
            let exact = (n as f64 / 32768.0).exp2();
            assert!(
                (exp2_scaled(n) / exact - 1.0).abs() < 1e-15,
                "{n}: {} against {exact}",
                exp2_scaled(n)
            );
        }
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
            // Sixteen leading bits: at most one unit in the sixteenth, a relative 2⁻¹⁵ of x, so log2 within
            // 2⁻¹⁵/ln 2, and one more unit for the rounding down.
            assert!(
                (got - exact).abs() <= 32768.0 / 32768.0 / std::f64::consts::LN_2 + 1.0,
                "{x}: {got} against {exact}"
            );
        }
        // What fits in sixteen bits is not cut: its log, rounded down, exactly as ns-3's `int(log2(x)·fct)`.
        for x in [1u64, 3, 1000, 8191, 65_535] {
            assert_eq!(
                log2_approx(x, &mut rng),
                ((x as f64).log2() * 32768.0) as i64
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
