//! Turning a target load on a set of links into an arrival rate.
//!
//! A load is defined on a named set of directed links (the caller resolves names such as `"core"` or `"hosts"`
//! against its topology; this crate never sees the topology). Each flow of `s` bytes puts `s` bytes on every link
//! of the set that its path crosses, so a stream of `lambda` flows per second with mean size `S` and, on average,
//! `X` crossings of the set per flow offers `lambda * 8 * S * X` bits per second to links of total capacity `C`:
//!
//! ```text
//! load = lambda * 8 * S * X / C      =>      lambda = load * C / (8 * S * X)
//! ```
//!
//! This is BFC's `nsdifinal.cc` formula (`flows_per_sec = flow_rate / (avg_flow_size * 8)`, `flow_rate` = load
//! times the host links' capacity, X = 1 for host uplinks) generalised to any link set. An incast generator given a
//! share of the load derives its period the same way from its aggregate bytes per event and its own mean crossings:
//! `period = 8 * aggregate * X_incast / (share * C)`.

use bfcsim_core::Time;

/// How the NICs cut a flow into packets, for loads counted in bytes on the wire (`load_counts = "wire"`):
/// each packet carries up to `payload` bytes of the flow and `header` bytes besides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Framing {
    /// Payload bytes per packet (the MSS).
    pub payload: u64,
    /// Header bytes per packet.
    pub header: u64,
}

impl Framing {
    /// The bytes a flow of `size` payload bytes puts on each link it crosses: `size + ceil(size / payload) *
    /// header`.
    pub fn wire(&self, size: f64) -> f64 {
        size + (size / self.payload as f64).ceil() * self.header as f64
    }
}

/// A load target on a set of directed links.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadTarget {
    /// Fraction of the set's capacity to offer, e.g. 0.6.
    pub load: f64,
    /// Sum of the capacities of the directed links in the set, in bits per second.
    pub capacity_bps: f64,
    /// Expected number of links of the set one flow's path crosses, averaged over the src/dst pattern and ECMP.
    pub mean_crossings: f64,
}

impl LoadTarget {
    /// Checks that the numbers are finite, the load non-negative and the capacity and crossings positive.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.load.is_finite() && self.load >= 0.0) {
            return Err(format!(
                "the load {} must be a non-negative number",
                self.load
            ));
        }
        if !(self.capacity_bps.is_finite() && self.capacity_bps > 0.0) {
            return Err(format!(
                "the link set's capacity {} bps must be positive",
                self.capacity_bps
            ));
        }
        if !(self.mean_crossings.is_finite() && self.mean_crossings > 0.0) {
            return Err(format!(
                "the mean number of crossings {} must be positive",
                self.mean_crossings
            ));
        }
        Ok(())
    }

    /// Flows per second that offer this load when flows average `mean_size_bytes`:
    /// `load * capacity / (8 * mean_size * mean_crossings)`.
    pub fn flow_rate(&self, mean_size_bytes: f64) -> f64 {
        self.load * self.capacity_bps / (8.0 * mean_size_bytes * self.mean_crossings)
    }

    /// Seconds between events of `bytes_per_event` bytes that offer this load (an incast's period).
    pub fn period_secs(&self, bytes_per_event: f64) -> f64 {
        1.0 / self.flow_rate(bytes_per_event)
    }

    /// The load `bytes` offered in `duration` put on the set: `bytes * 8 * mean_crossings / (capacity * duration)`.
    pub fn achieved(&self, bytes: u64, duration: Time) -> f64 {
        bytes as f64 * 8.0 * self.mean_crossings / (self.capacity_bps * duration.secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_achieved_load_are_inverse() {
        let t = LoadTarget {
            load: 0.6,
            capacity_bps: 6.4e12,
            mean_crossings: 1.75,
        };
        let rate = t.flow_rate(3000.0);
        assert!((rate - 0.6 * 6.4e12 / (8.0 * 3000.0 * 1.75)).abs() < 1e-6);
        let secs = 0.01;
        let bytes = (rate * secs * 3000.0) as u64;
        assert!((t.achieved(bytes, Time::from_ms(10)) - 0.6).abs() < 1e-6);
        assert!((t.period_secs(20e6) - 20e6 * 8.0 * 1.75 / (0.6 * 6.4e12)).abs() < 1e-15);
        assert!(t.validate().is_ok());
        assert!(
            LoadTarget {
                mean_crossings: 0.0,
                ..t
            }
            .validate()
            .is_err()
        );
        assert!(
            LoadTarget {
                load: f64::NAN,
                ..t
            }
            .validate()
            .is_err()
        );
    }
}
