//! A log-linear histogram of `u64` values (HdrHistogram's layout): exact below 128, then 64 sub-buckets per
//! power of two, so any recorded value is known within 1/64 (1.6%). Recording is a few instructions, cheap
//! enough for every packet at every hop (per-hop queuing delays).

/// Sub-buckets per power of two.
const SUB: u32 = 64;

/// See the module doc.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
}

#[inline]
fn index(v: u64) -> usize {
    if v < 2 * SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // 2^e <= v, e >= 7
    let shift = e - SUB.trailing_zeros();
    let sub = (v >> shift) as u32 - SUB; // 0..64
    (2 * SUB + (e - 7) * SUB + sub) as usize
}

/// The smallest value that falls in bucket `i`.
fn lower(i: usize) -> u64 {
    let i = i as u32;
    if i < 2 * SUB {
        return i as u64;
    }
    let e = (i - 2 * SUB) / SUB + 7;
    let sub = (i - 2 * SUB) % SUB;
    ((SUB + sub) as u64) << (e - SUB.trailing_zeros())
}

impl LogHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = index(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.total += 1;
        self.max = self.max.max(v);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest value recorded (exact).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `q`-quantile (0..=1): the lower edge of the bucket holding the ⌈q·n⌉-th smallest value, so within
    /// 1.6% below the exact value; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(lower(i).min(self.max));
            }
        }
        Some(self.max)
    }

    /// Values recorded in the buckets up to and including the one holding `v`.
    pub fn rank_at_or_below(&self, v: u64) -> u64 {
        let i = index(v);
        self.counts.iter().take(i + 1).sum()
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }
}

/// Percentiles of a histogram of delays, in nanoseconds: the report of the time packets waited somewhere (switch
/// egress queues, per hop).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct DelayReport {
    /// Packet-hops measured.
    pub samples: u64,
    /// Median, ns.
    pub p50_ns: f64,
    /// 95th percentile, ns.
    pub p95_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
    /// 99.9th percentile, ns.
    pub p999_ns: f64,
    /// Maximum, ns.
    pub max_ns: f64,
}

impl DelayReport {
    /// From a histogram of delays in picoseconds (percentiles within 1.6% below the exact values).
    pub fn from_ps(h: &LogHistogram) -> DelayReport {
        let q = |x| h.quantile(x).unwrap_or(0) as f64 / 1e3;
        DelayReport {
            samples: h.count(),
            p50_ns: q(0.5),
            p95_ns: q(0.95),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            max_ns: h.max() as f64 / 1e3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_tight() {
        for i in 0..2000 {
            assert_eq!(index(lower(i)), i, "bucket {i}");
            assert!(lower(i + 1) > lower(i));
        }
        for v in [0u64, 1, 127, 128, 129, 1000, 123_456_789, u64::MAX / 3] {
            let l = lower(index(v));
            assert!(l <= v && (v - l) as f64 <= v as f64 / 64.0, "{v} -> {l}");
        }
    }

    #[test]
    fn quantiles() {
        let mut h = LogHistogram::new();
        for v in 1..=100u64 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(50));
        assert_eq!(h.quantile(0.99), Some(99));
        assert_eq!(h.quantile(1.0), Some(100));
        assert_eq!(h.max(), 100);
        let mut g = LogHistogram::new();
        g.record(1_000_000);
        h.merge(&g);
        assert_eq!(h.count(), 101);
        let top = h.quantile(1.0).unwrap();
        assert!((984_375..=1_000_000).contains(&top), "{top}");
    }
}
