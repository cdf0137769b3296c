//! Buffer occupancy: a fixed-bin-width histogram of sampled switch buffer occupancy, per switch and aggregated.
//!
//! Adding a sample is an index and an increment (the bin vector grows on demand), so a sampler can run often.
//! Quantiles use the same nearest-rank rule as the slowdown statistics and are reported rounded down to the bin
//! width (exact with a 1-byte bin); the maximum is exact.

use bfcsim_core::NodeId;
use serde::Serialize;

/// Default bin width: 1 KB.
pub const DEFAULT_BIN: u64 = 1000;

/// A histogram of occupancy samples in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OccupancyHistogram {
    bin: u64,
    counts: Vec<u64>,
    samples: u64,
    max: u64,
}

impl OccupancyHistogram {
    /// An empty histogram with bins of `bin` bytes.
    ///
    /// # Panics
    /// If `bin` is 0.
    pub fn new(bin: u64) -> Self {
        assert!(bin > 0, "histogram bin width must be positive");
        OccupancyHistogram {
            bin,
            counts: Vec::new(),
            samples: 0,
            max: 0,
        }
    }

    /// Records one sample.
    #[inline]
    pub fn add(&mut self, bytes: u64) {
        let i = (bytes / self.bin) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.samples += 1;
        self.max = self.max.max(bytes);
    }

    /// Adds every sample of `other`.
    ///
    /// # Panics
    /// If the bin widths differ.
    pub fn merge(&mut self, other: &OccupancyHistogram) {
        assert_eq!(
            self.bin, other.bin,
            "merging histograms of different bin widths"
        );
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        self.samples += other.samples;
        self.max = self.max.max(other.max);
    }

    /// Number of samples.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The largest sample (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The nearest-rank `p` quantile (sample index `floor(p·n)`, clamped to the last), rounded down to the bin
    /// width; `None` when empty.
    pub fn quantile(&self, p: f64) -> Option<u64> {
        if self.samples == 0 {
            return None;
        }
        let rank = ((p * self.samples as f64) as u64).min(self.samples - 1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return Some(i as u64 * self.bin);
            }
        }
        unreachable!("rank below the sample count")
    }

    /// The CDF as `(bytes, fraction of samples below bytes)`, one point per non-empty bin at its upper edge.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut seen = 0;
        let mut points = Vec::new();
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                seen += c;
                points.push(((i as u64 + 1) * self.bin, seen as f64 / self.samples as f64));
            }
        }
        points
    }

    /// Samples, p50, p99 and max; with the CDF when `with_cdf`.
    pub fn stats(&self, with_cdf: bool) -> OccupancyStats {
        OccupancyStats {
            samples: self.samples,
            p50_bytes: self.quantile(0.5).unwrap_or(0),
            p99_bytes: self.quantile(0.99).unwrap_or(0),
            max_bytes: self.max,
            cdf: if with_cdf { self.cdf() } else { Vec::new() },
        }
    }
}

/// Summary of one histogram.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccupancyStats {
    /// Number of samples.
    pub samples: u64,
    /// Median, rounded down to the bin width.
    pub p50_bytes: u64,
    /// 99th percentile, rounded down to the bin width.
    pub p99_bytes: u64,
    /// Largest sample, exact.
    pub max_bytes: u64,
    /// `(bytes, fraction of samples below)` points; empty when not requested.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cdf: Vec<(u64, f64)>,
}

/// Occupancy statistics of one switch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchOccupancy {
    /// The switch.
    pub switch: NodeId,
    /// Its statistics (without CDF).
    #[serde(flatten)]
    pub stats: OccupancyStats,
}

/// The buffer-occupancy part of a summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccupancyReport {
    /// Histogram bin width in bytes.
    pub bin_bytes: u64,
    /// All switches' samples together, with the CDF.
    pub all: OccupancyStats,
    /// Each switch that has samples, by id (without CDF; see [`BufferOccupancy::switch`]).
    pub per_switch: Vec<SwitchOccupancy>,
}

/// Occupancy histograms of every switch, indexed by node id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferOccupancy {
    bin: u64,
    switches: Vec<OccupancyHistogram>,
}

impl Default for BufferOccupancy {
    fn default() -> Self {
        BufferOccupancy::new(DEFAULT_BIN)
    }
}

impl BufferOccupancy {
    /// No samples yet; bins of `bin` bytes.
    pub fn new(bin: u64) -> Self {
        assert!(bin > 0, "histogram bin width must be positive");
        BufferOccupancy {
            bin,
            switches: Vec::new(),
        }
    }

    /// Records that `switch`'s buffer held `bytes`.
    #[inline]
    pub fn add(&mut self, switch: NodeId, bytes: u64) {
        let i = switch.idx();
        if i >= self.switches.len() {
            self.switches
                .resize(i + 1, OccupancyHistogram::new(self.bin));
        }
        self.switches[i].add(bytes);
    }

    /// The histogram of one switch, if it has samples.
    pub fn switch(&self, switch: NodeId) -> Option<&OccupancyHistogram> {
        self.switches.get(switch.idx()).filter(|h| h.samples > 0)
    }

    /// All switches' samples in one histogram.
    pub fn aggregate(&self) -> OccupancyHistogram {
        let mut all = OccupancyHistogram::new(self.bin);
        for h in &self.switches {
            all.merge(h);
        }
        all
    }

    /// Statistics per switch and aggregated (the aggregate with its CDF).
    pub fn report(&self) -> OccupancyReport {
        let per_switch = (self.switches.iter().enumerate())
            .filter(|(_, h)| h.samples > 0)
            .map(|(i, h)| SwitchOccupancy {
                switch: NodeId::from_idx(i),
                stats: h.stats(false),
            })
            .collect();
        OccupancyReport {
            bin_bytes: self.bin,
            all: self.aggregate().stats(true),
            per_switch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_cdf_and_merge() {
        let mut h = OccupancyHistogram::new(1000);
        assert_eq!(h.quantile(0.5), None);
        for b in [0, 0, 0, 0, 0, 500, 1500, 2500, 9999, 120_000] {
            h.add(b);
        }
        assert_eq!(h.quantile(0.5), Some(0)); // index 5 = 500 B, bin [0, 1000)
        assert_eq!(h.quantile(0.7), Some(2000)); // index 7 = 2500 B, bin [2000, 3000)
        assert_eq!(h.quantile(0.99), Some(120_000)); // index 9
        assert_eq!(h.max(), 120_000);
        let cdf = h.cdf();
        assert_eq!(cdf.first(), Some(&(1000, 0.6)));
        assert_eq!(cdf.last(), Some(&(121_000, 1.0)));
        let mut occ = BufferOccupancy::default();
        occ.add(NodeId(3), 5000);
        occ.add(NodeId(1), 0);
        occ.add(NodeId(1), 200);
        let report = occ.report();
        assert_eq!(
            report
                .per_switch
                .iter()
                .map(|s| s.switch)
                .collect::<Vec<_>>(),
            vec![NodeId(1), NodeId(3)]
        );
        assert_eq!(
            (
                report.all.samples,
                report.all.p50_bytes,
                report.all.max_bytes
            ),
            (3, 0, 5000)
        );
        assert!(occ.switch(NodeId(2)).is_none());
    }
}
