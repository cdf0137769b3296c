//! RED/ECN marking on the instantaneous queue length (Floyd & Jacobson's RED without averaging, as DCTCP and
//! DCQCN configure it): no mark at or below `kmin`, always above `kmax`, and in between with probability
//! `pmax·(q − kmin)/(kmax − kmin)`. `kmin = kmax = K` gives DCTCP's step marking (Alizadeh et al. 2010 §3.1).
//! The comparisons follow HPCC's ns-3 (`q > kmax` marks), the simulator BFC's comparisons ran on.

use bfcsim_core::Bytes;
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

/// RED/ECN parameters of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Red {
    /// Marking starts above this queue length.
    pub kmin: Bytes,
    /// Every packet is marked above this queue length.
    pub kmax: Bytes,
    /// Marking probability just below `kmax`.
    pub pmax: f64,
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
        let p = self.pmax * (queue - self.kmin.0) as f64 / (self.kmax.0 - self.kmin.0) as f64;
        rng.random::<f64>() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
