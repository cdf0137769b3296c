//! RED/ECN marking on the instantaneous queue length (Floyd & Jacobson's RED without averaging, as DCTCP and
//! DCQCN configure it): no mark at or below `kmin`, always above `kmax`, and in between with probability
//! `pmax·(q − kmin)/(kmax − kmin)`. `kmin = kmax = K` gives DCTCP's step marking (Alizadeh et al. 2010 §3.1).
//! The comparisons follow HPCC's ns-3 (`q > kmax` marks), the simulator BFC's comparisons ran on.
//!
//! [`SharedEcn`] is BCC's shared-buffer ECN/RED (Bai et al., "One More Config Is Enough", IEEE/ACM ToN, §IV-B):
//! the same RED, on the occupancy of a whole buffer pool instead of one queue, with thresholds derived from the
//! Dynamic Threshold model (§IV-C, [`SharedEcn::derive`]). Both markers run on every packet and a packet is
//! marked if either marks it. The pool's RED spaces its marks as RED does ([`Spacing::Count`], Floyd & Jacobson
//! 1993 §7), or marks each packet independently ([`Spacing::Independent`]).

use bfcsim_core::{Bytes, Rate, Time};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// When the marker looks at the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkPoint {
    /// On arrival, against the bytes already queued (DCTCP paper).
    Enqueue,
    /// On departure, against the bytes left behind (HPCC ns-3's `SwitchNotifyDequeue`).
    Dequeue,
}

/// RED/ECN parameters of a queue. A field left out takes DCQCN's and DCTCP's values in BFC §6.2.1 (Kmin 100 KB,
/// Kmax 400 KB) and HPCC's `run.py` Pmax at 100 Gb/s (0.2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Red {
    /// Marking starts above this queue length.
    pub kmin: Bytes,
    /// Every packet is marked above this queue length.
    pub kmax: Bytes,
    /// Marking probability just below `kmax`.
    pub pmax: f64,
}

impl Default for Red {
    fn default() -> Self {
        Red {
            kmin: Bytes(100_000),
            kmax: Bytes(400_000),
            pmax: 0.2,
        }
    }
}

impl Red {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if self.kmin > self.kmax {
            return Err(format!(
                "ECN kmin ({}) exceeds kmax ({})",
                self.kmin, self.kmax
            ));
        }
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err(format!("ECN pmax {} is not a probability", self.pmax));
        }
        Ok(())
    }

    /// Whether to mark a packet seeing `queue` bytes. Draws from `rng` only in the probabilistic band.
    #[inline]
    pub fn should_mark(&self, queue: u64, rng: &mut impl rand::Rng) -> bool {
        if queue > self.kmax.0 {
            return true;
        }
        if queue <= self.kmin.0 {
            return false;
        }
        rng.random::<f64>() < self.band_probability(queue)
    }

    /// RED's `p_b` inside the band, `kmin < queue < kmax` (or `queue = kmax` for the comparisons of
    /// [`Red::should_mark`]): `pmax·(queue − kmin)/(kmax − kmin)`.
    #[inline]
    fn band_probability(&self, queue: u64) -> f64 {
        self.pmax * (queue - self.kmin.0) as f64 / (self.kmax.0 - self.kmin.0) as f64
    }

    /// RED with its marks spaced by the count since the last one ([`Spacing::Count`]): a packet of `size` bytes
    /// leaving at `occupancy`, where `full` is a full packet's size. At or below `kmin` the count restarts and
    /// nothing is marked; at or above `kmax` every packet is (and restarts it); in between `p_b =
    /// pmax·(occupancy − kmin)/(kmax − kmin)`, `p_a = p_b/(1 − count·p_b)` with `count` the full packets let
    /// through since the last mark, this one included (1 when `count·p_b ≥ 1`), then scaled by `size/full`.
    /// The comparisons and order are those of the BCC authors' `MyRED::sp_mark`.
    pub fn should_mark_counted(
        &self,
        occupancy: u64,
        size: u32,
        full: u32,
        since: &mut SinceMark,
        rng: &mut impl rand::Rng,
    ) -> bool {
        since.0 += u64::from(size);
        if occupancy <= self.kmin.0 {
            since.0 = 0;
            return false;
        }
        if occupancy >= self.kmax.0 {
            since.0 = 0;
            return true;
        }
        let full = f64::from(full.max(1));
        let p_b = self.band_probability(occupancy);
        let count = since.0 as f64 / full;
        let p_a = if count * p_b < 1.0 {
            p_b / (1.0 - count * p_b)
        } else {
            1.0
        };
        let p = if p_a < 1.0 {
            p_a * f64::from(size) / full
        } else {
            p_a
        };
        let mark = rng.random::<f64>() <= p;
        if mark {
            since.0 = 0;
        }
        mark
    }
}

/// How RED chooses, inside its band, which packets to mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spacing {
    /// RED's own rule (Floyd & Jacobson 1993 §7, "Calculating the packet-marking probability"): the probability
    /// `p_b` grows with the packets let through since the last mark, `p_a = p_b/(1 − count·p_b)`, so that marks
    /// come at roughly even intervals rather than geometrically spread: about twice as many marks as
    /// independent draws of `p_b`. Counted in bytes and scaled by the packet's size against a full packet (RED's
    /// byte mode), after the count, as the BCC authors' ns-2 queue does (`MyRED::sp_mark`).
    Count,
    /// Each packet marked with probability `p_b`, independently of the others (HPCC's ns-3 RED).
    Independent,
}

/// RED's count of bytes let through since its last mark ([`Spacing::Count`]), one per marking point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SinceMark(pub u64);

/// BCC's shared-buffer ECN/RED (§IV-B, §IV-C): RED on the shared occupancy of a buffer pool, with `kmax` and
/// `kmin` derived from the pool unless given.
///
/// §IV-B: with Dynamic Threshold's `T = α·(B − ΣQ)`, a queue keeps at least the `B_R` bytes its transport needs
/// while `ΣQ < B − B_R/α`; marking on the pool's occupancy from there on prevents the losses that per-queue ECN
/// alone lets happen once many ports are busy. §IV-C: `B_R = C·RTT·(1 + λ) − S_min`, `Kmax = B − B_R/α_min`,
/// `Kmin = Kmax − C·N·h`, `Pmax` 10%; §V-C.1's cut-off variant marks from one threshold, the middle of the band
/// (2.2 MB between 1.8 and 2.6 MB in §V-B).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SharedEcn {
    /// Mark on pool occupancy at all.
    pub enabled: bool,
    /// Marking starts above this pool occupancy; derived when left out.
    pub kmin: Option<Bytes>,
    /// Every packet is marked above this pool occupancy; derived when left out.
    pub kmax: Option<Bytes>,
    /// Marking probability just below `kmax` (§IV-C: 10%, after RED's guideline).
    pub pmax: f64,
    /// Width of the probabilistic band per port of the pool, in time at the port rate (§IV-C: 8 µs).
    pub h: Time,
    /// The transport's characteristic constant λ (§II-C: DCTCP needs `C·RTT·λ` per port; 0.72 measured).
    pub lambda: f64,
    /// The base RTT in `B_R`; by default the fabric's largest base RTT.
    pub rtt: Option<Time>,
    /// §V-C.1 "BCC cut-off": one threshold, the middle of the derived band, `kmin = kmax`.
    pub cutoff: bool,
    /// How marks are spaced inside the band: RED's count since the last mark (§IV-B's "RED", and the authors'
    /// ns-2 queue) or independent draws.
    pub spacing: Spacing,
}

impl Default for SharedEcn {
    fn default() -> Self {
        SharedEcn {
            enabled: false,
            kmin: None,
            kmax: None,
            pmax: 0.1,
            h: Time::from_us(8),
            lambda: 0.72,
            rtt: None,
            cutoff: false,
            spacing: Spacing::Count,
        }
    }
}

/// What [`SharedEcn::derive`] needs to know of one buffer pool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolFacts {
    /// Its shared size `B`.
    pub size: Bytes,
    /// The smallest Dynamic Threshold α of its queues (§IV-D: `α_min`).
    pub alpha_min: f64,
    /// The smallest static reserve of its queues (§IV-D: `S_min`).
    pub reserve_min: Bytes,
    /// The rate `C` of its ports (the fastest, when they differ).
    pub rate: Rate,
    /// Its ports `N` (§IV-C counts one queue per port).
    pub ports: u32,
    /// The base RTT.
    pub rtt: Time,
}

/// The marking thresholds of one pool and how they were reached.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PoolMarking {
    /// `B_R = C·RTT·(1 + λ) − S_min`.
    pub b_r: Bytes,
    /// The thresholds in force.
    pub red: Red,
}

impl SharedEcn {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err(format!("ECN pmax {} is not a probability", self.pmax));
        }
        if !(self.lambda >= 0.0 && self.lambda.is_finite()) {
            return Err(format!(
                "lambda {} must be a non-negative number",
                self.lambda
            ));
        }
        if let (Some(lo), Some(hi)) = (self.kmin, self.kmax)
            && lo > hi
        {
            return Err(format!("kmin ({lo}) exceeds kmax ({hi})"));
        }
        Ok(())
    }

    /// The thresholds of a pool (§IV-C): the given ones, else `Kmax = B − B_R/α_min` and
    /// `Kmin = Kmax − C·N·h`, each clamped to `[0, B]`; cut-off marking uses the middle of the band for both.
    pub fn derive(&self, pool: &PoolFacts) -> PoolMarking {
        let bdp = pool.rate.bytes_in(pool.rtt).0 as f64;
        let b_r = (bdp * (1.0 + self.lambda) - pool.reserve_min.0 as f64).max(0.0);
        let size = pool.size.0 as f64;
        let clamp = |v: f64| Bytes(v.clamp(0.0, size) as u64);
        let kmax = self
            .kmax
            .unwrap_or_else(|| clamp(size - b_r / pool.alpha_min));
        let band = pool.rate.bytes_in(pool.h_total(self.h)).0 as f64;
        let kmin = self
            .kmin
            .unwrap_or_else(|| clamp(kmax.0 as f64 - band).min(kmax));
        let (kmin, kmax) = if self.cutoff {
            let mid = Bytes((kmin.0 + kmax.0) / 2);
            (mid, mid)
        } else {
            (kmin, kmax)
        };
        PoolMarking {
            b_r: Bytes(b_r as u64),
            red: Red {
                kmin,
                kmax,
                pmax: self.pmax,
            },
        }
    }
}

impl PoolFacts {
    /// `N·h`: the band's width in time at one port's rate.
    fn h_total(&self, h: Time) -> Time {
        Time(h.0 * self.ports as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §V-B's pool: 3 MB shared by 8 ports of 100 Gb/s, α = 4, a 128 KB reserve, an 80 µs base RTT.
    fn paper_pool() -> PoolFacts {
        PoolFacts {
            size: Bytes(3_000_000),
            alpha_min: 4.0,
            reserve_min: Bytes(128_000),
            rate: Rate::gbps(100),
            ports: 8,
            rtt: Time::from_us(80),
        }
    }

    /// §V-B's worked example: 100 Gb/s, 80 µs, λ = 0.72, 128 KB reserve, a 3 MB pool of 8 ports with α = 4, h =
    /// 8 µs: B_R ≈ 1.6 MB, Kmax ≈ 2.6 MB, Kmin ≈ 1.8 MB; the cut-off variant marks from 2.2 MB (§V-C.1).
    #[test]
    fn bcc_parameters_of_the_paper() {
        let pool = paper_pool();
        let on = SharedEcn {
            enabled: true,
            ..SharedEcn::default()
        };
        let m = on.derive(&pool);
        assert_eq!(m.b_r, Bytes(1_592_000));
        assert_eq!(m.red.kmax, Bytes(2_602_000));
        assert_eq!(m.red.kmin, Bytes(1_802_000));
        assert_eq!(m.red.pmax, 0.1);
        let cut = SharedEcn { cutoff: true, ..on }.derive(&pool);
        assert_eq!(
            (cut.red.kmin, cut.red.kmax),
            (Bytes(2_202_000), Bytes(2_202_000))
        );
        let given = SharedEcn {
            kmax: Some(Bytes(2_000_000)),
            ..on
        };
        assert_eq!(
            given.derive(&pool).red.kmin,
            Bytes(1_200_000),
            "Kmin follows a given Kmax"
        );
        // A pool too small for B_R marks from its first byte rather than going negative.
        let tiny = PoolFacts {
            size: Bytes(100_000),
            ..pool
        };
        assert_eq!(on.derive(&tiny).red.kmax, Bytes(0));
    }

    /// §IV-B's argument on §V-B's pool, with the Dynamic Threshold of the MMU: one saturated port settles at
    /// α·B/(1 + α) = 2.4 MB of shared buffer, inside BCC's band (marked with probability 7.5%); eight settle
    /// at α·B/(1 + 8α) = 364 KB each (plus the 128 KB reserve, below K = 720 KB, so per-port ECN never marks
    /// them) and fill the pool to 2.91 MB, above Kmax: BCC marks every packet.
    #[test]
    fn dynamic_threshold_states_and_bcc_decision() {
        use crate::mmu::{Levels, MmuLayout};
        let pool = paper_pool();
        let red = SharedEcn {
            enabled: true,
            ..SharedEcn::default()
        }
        .derive(&pool)
        .red;
        let pkt = 9_000u64;
        for (busy, shared_each, p_mark) in [(1usize, 2_400_000.0, 0.075), (8, 363_636.0, 1.0)] {
            let mut mmu = Levels::new(MmuLayout {
                unlimited: false,
                pool_size: vec![3_000_000],
                pool_of_port: vec![0; 8],
                queues_per_port: 1,
                reserve: 128_000,
                alpha: std::sync::Arc::new(vec![4.0]),
                admission: Default::default(),
            });
            let mut progress = true;
            while progress {
                progress = false;
                for q in 0..busy {
                    progress |= mmu.admit(q, 0, pkt).is_ok();
                }
            }
            for q in 0..busy {
                let shared = mmu.queue_bytes(q, 0) as f64 - 128_000.0;
                assert!(
                    (shared - shared_each).abs() <= pkt as f64,
                    "{busy} ports: {shared}"
                );
            }
            let used = mmu.pool_used(0);
            let expect = busy as f64 * shared_each;
            assert!((used as f64 - expect).abs() <= (busy as u64 * pkt) as f64);
            let p = if used > red.kmax.0 {
                1.0
            } else {
                red.pmax * (used - red.kmin.0) as f64 / (red.kmax.0 - red.kmin.0) as f64
            };
            assert!(
                (p - p_mark).abs() < 0.01,
                "{busy} ports: pool {used} B marks with {p}"
            );
        }
    }

    /// The marking decision for scripted pool states: nothing below Kmin, ramping to Pmax at Kmax, all above.
    #[test]
    fn bcc_marks_on_pool_occupancy() {
        let mut rng = bfcsim_core::rng::stream(2, bfcsim_core::rng::Stream::Other(0));
        let red = Red {
            kmin: Bytes(1_802_000),
            kmax: Bytes(2_602_000),
            pmax: 0.1,
        };
        let rate = |occupancy: u64, rng: &mut _| {
            (0..20_000)
                .filter(|_| red.should_mark(occupancy, rng))
                .count() as f64
                / 20_000.0
        };
        assert_eq!(rate(1_800_000, &mut rng), 0.0);
        assert!((rate(2_202_000, &mut rng) - 0.05).abs() < 0.01);
        assert_eq!(rate(2_602_001, &mut rng), 1.0);
    }

    #[test]
    fn step_and_ramp() {
        let mut rng = bfcsim_core::rng::stream(1, bfcsim_core::rng::Stream::Other(0));
        let step = Red {
            kmin: Bytes(100),
            kmax: Bytes(100),
            pmax: 1.0,
        };
        assert!(!step.should_mark(100, &mut rng));
        assert!(step.should_mark(101, &mut rng));
        let ramp = Red {
            kmin: Bytes(0),
            kmax: Bytes(1000),
            pmax: 0.5,
        };
        let marks = (0..20_000)
            .filter(|_| ramp.should_mark(500, &mut rng))
            .count();
        assert!((4_600..5_400).contains(&marks), "{marks}");
        assert!(
            Red {
                kmin: Bytes(5),
                kmax: Bytes(1),
                pmax: 0.1
            }
            .validate()
            .is_err()
        );
    }

    /// RED's count (Floyd & Jacobson §7) on a band where `p_b = 1/4`: after a mark the next full packets are
    /// marked with probability 1/3, 1/2, then 1, so the gaps between marks are 1, 2 or 3 packets, equally often:
    /// twice `p_b`'s rate. Outside the band the count restarts; a small packet's chance is scaled by its size.
    #[test]
    fn red_count_spaces_the_marks() {
        let mut rng = bfcsim_core::rng::stream(3, bfcsim_core::rng::Stream::Other(0));
        let red = Red {
            kmin: Bytes(1_000),
            kmax: Bytes(3_000),
            pmax: 0.5,
        };
        let mut since = SinceMark::default();
        let mut gaps = [0u32; 5];
        let mut gap = 0;
        for _ in 0..30_000 {
            gap += 1;
            if red.should_mark_counted(2_000, 9_000, 9_000, &mut since, &mut rng) {
                gaps[gap] += 1;
                gap = 0;
            }
        }
        assert_eq!(gaps[0], 0);
        assert_eq!(gaps[4], 0, "no gap reaches 1/p_b: {gaps:?}");
        for g in 1..=3 {
            assert!((4_700..5_300).contains(&gaps[g]), "{gaps:?}");
        }
        // Independent draws of the same p_b: a quarter of the packets.
        let independent = (0..30_000)
            .filter(|_| red.should_mark(2_000, &mut rng))
            .count();
        assert!((7_100..7_900).contains(&independent), "{independent}");

        since = SinceMark(27_000);
        assert!(!red.should_mark_counted(1_000, 9_000, 9_000, &mut since, &mut rng));
        assert_eq!(since, SinceMark(0), "at kmin the count restarts");
        assert!(red.should_mark_counted(3_000, 9_000, 9_000, &mut since, &mut rng));
        assert_eq!(since, SinceMark(0), "at kmax every packet is marked");
        let acks = (0..30_000)
            .filter(|_| {
                let mut fresh = SinceMark::default();
                red.should_mark_counted(2_000, 40, 9_000, &mut fresh, &mut rng)
            })
            .count();
        assert!(
            (15..55).contains(&acks),
            "40 B of 9000: p_b/225, 33 expected: {acks}"
        );
    }
}
