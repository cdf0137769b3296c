//! Flow arrival processes: the gaps between consecutive flows of a stream.
//!
//! * [`Arrivals::Poisson`]: exponential gaps with mean `1/lambda`.
//! * [`Arrivals::LogNormal`]: gaps ~ LogNormal(mu, sigma) with `mu = -sigma^2/2 - ln(lambda)`, so the mean gap
//!   `exp(mu + sigma^2/2)` is exactly `1/lambda` (BFC NSDI'22 §6.2.1 uses sigma = 2; the formula is the BFC
//!   artifact's `nsdifinal.cc`). Burstier than Poisson for the same rate.
//!
//! A gap is drawn as f64 seconds (the float only feeds the random draw) and rounded to the nearest picosecond, so
//! arrival times are integers and adding gaps is exact.

use bfcsim_core::Time;
use rand_distr::{Distribution, Exp, LogNormal};

/// The shape of a stream's inter-arrival gaps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process).
    Poisson,
    /// Log-normal gaps with shape `sigma` and mean `1/lambda`.
    LogNormal {
        /// The log-normal shape parameter (BFC uses 2).
        sigma: f64,
    },
}

/// Draws gaps of one arrival process at a fixed rate.
#[derive(Clone, Debug)]
pub struct GapSampler(Gaps);

#[derive(Clone, Debug)]
enum Gaps {
    Exp(Exp<f64>),
    LogNormal(LogNormal<f64>),
}

impl Arrivals {
    /// A sampler of gaps for `rate` arrivals per second (`rate` finite and positive; sigma finite and >= 0).
    pub fn sampler(self, rate: f64) -> Result<GapSampler, String> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!(
                "the arrival rate {rate} per second must be positive and finite"
            ));
        }
        Ok(GapSampler(match self {
            Arrivals::Poisson => {
                Gaps::Exp(Exp::new(rate).map_err(|e| format!("exponential gaps: {e}"))?)
            }
            Arrivals::LogNormal { sigma } => {
                if !(sigma.is_finite() && sigma >= 0.0) {
                    return Err(format!(
                        "the log-normal sigma {sigma} must be finite and non-negative"
                    ));
                }
                let mu = -sigma * sigma / 2.0 - rate.ln();
                Gaps::LogNormal(
                    LogNormal::new(mu, sigma).map_err(|e| format!("log-normal gaps: {e}"))?,
                )
            }
        }))
    }
}

impl GapSampler {
    /// The next gap, rounded to the nearest picosecond.
    pub fn next_gap<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Time {
        let secs = match &self.0 {
            Gaps::Exp(d) => d.sample(rng),
            Gaps::LogNormal(d) => d.sample(rng),
        };
        secs_to_time(secs)
    }
}

/// Seconds to the nearest picosecond, saturating at [`Time::MAX`] (and at zero for negative or NaN input).
pub fn secs_to_time(secs: f64) -> Time {
    // `as` saturates: NaN and negatives give 0, huge values u64::MAX.
    Time((secs * 1e12).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::rng::{Stream, stream};

    fn mean_gap_ps(a: Arrivals, rate: f64, n: u64) -> f64 {
        let s = a.sampler(rate).unwrap();
        let mut rng = stream(11, Stream::Workload(0));
        let total: u128 = (0..n).map(|_| s.next_gap(&mut rng).0 as u128).sum();
        total as f64 / n as f64
    }

    #[test]
    fn mean_gaps_are_one_over_rate() {
        let rate = 1e6; // 1 us mean gap
        let m = mean_gap_ps(Arrivals::Poisson, rate, 400_000);
        assert!((m / 1e6 - 1.0).abs() < 0.01, "{m}");
        // sigma = 1: CV^2 = e - 1, so 400k gaps give ~0.2% standard error.
        let m = mean_gap_ps(Arrivals::LogNormal { sigma: 1.0 }, rate, 400_000);
        assert!((m / 1e6 - 1.0).abs() < 0.01, "{m}");
        let m = mean_gap_ps(Arrivals::LogNormal { sigma: 0.0 }, rate, 10);
        assert_eq!(m, 1e6);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(Arrivals::Poisson.sampler(0.0).is_err());
        assert!(Arrivals::Poisson.sampler(f64::INFINITY).is_err());
        assert!(Arrivals::LogNormal { sigma: -1.0 }.sampler(1.0).is_err());
        assert!(
            Arrivals::LogNormal { sigma: f64::NAN }
                .sampler(1.0)
                .is_err()
        );
    }

    #[test]
    fn seconds_round_to_the_nearest_picosecond() {
        assert_eq!(secs_to_time(3.6e-12), Time(4));
        assert_eq!(secs_to_time(3.4e-12), Time(3));
        assert_eq!(secs_to_time(-1.0), Time(0));
        assert_eq!(secs_to_time(1e300), Time::MAX);
    }
}
