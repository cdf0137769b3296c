//! Flow-size buckets for slowdown statistics.
//!
//! - [`BucketScheme::BfcGoogle`] and [`BucketScheme::BfcHadoop`]: the BFC artifact's buckets
//!   (`calculate_fct_slowdown.py`), by packet count `np = floor(size/1000) + 1`, so the byte range of
//!   "`a+1`-`b` pkts" is `a·1000 ≤ size < b·1000`.
//! - [`BucketScheme::EqualCount`]: HPCC's `analysis/fct_analysis.py`: finished flows sorted by size and cut into
//!   `n` groups of equal count (group `k` holds sorted flows `k·N/n .. (k+1)·N/n`), each known by its largest size.
//! - [`BucketScheme::Edges`]: user-defined inclusive upper edges; "`a`-`b`" means `a < size ≤ b`.

use bfcsim_core::Bytes;
use serde::{Deserialize, Serialize};

/// How flows are grouped by size. In TOML: `buckets = "bfc_google"`, `buckets = { equal_count = { n = 20 } }` or
/// `buckets = { edges = ["10KB", "100KB", "1MB"] }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BucketScheme {
    /// BFC artifact, Google workload: ≤1, ≤2, ≤4, ≤8, ≤16, ≤64, ≤256, ≤1024, >1024 packets.
    #[default]
    BfcGoogle,
    /// BFC artifact, Hadoop workload: ≤3, ≤12, ≤48, ≤192, ≤768, ≤3072, ≤12288, ≤49152, >49152 packets.
    BfcHadoop,
    /// HPCC: `n` groups of equal flow count by size.
    EqualCount {
        /// Number of groups (HPCC's default step of 5% is 20).
        n: usize,
    },
    /// Buckets `≤ e0`, `(e0, e1]`, ..., `> e_last` (edges are sorted and deduplicated).
    Edges(Vec<Bytes>),
}

const GOOGLE_PKTS: [u64; 8] = [1, 2, 4, 8, 16, 64, 256, 1024];
const HADOOP_PKTS: [u64; 8] = [3, 12, 48, 192, 768, 3072, 12288, 49152];
/// The BFC artifact's packet size for bucketing.
const BFC_PKT: u64 = 1000;

/// A size bucket with a fixed range: flows with `size ≤ max` (the last one unbounded).
pub(crate) struct FixedBucket {
    pub label: String,
    pub max: Option<u64>,
}

impl BucketScheme {
    /// The fixed buckets of this scheme, or `None` for [`BucketScheme::EqualCount`], whose ranges depend on the
    /// flows.
    pub(crate) fn fixed(&self) -> Option<Vec<FixedBucket>> {
        match self {
            BucketScheme::BfcGoogle => Some(packet_buckets(&GOOGLE_PKTS)),
            BucketScheme::BfcHadoop => Some(packet_buckets(&HADOOP_PKTS)),
            BucketScheme::EqualCount { .. } => None,
            BucketScheme::Edges(edges) => {
                let mut edges: Vec<u64> = edges.iter().map(|b| b.0).collect();
                edges.sort_unstable();
                edges.dedup();
                let mut buckets = Vec::with_capacity(edges.len() + 1);
                let mut prev = None;
                for &e in &edges {
                    let label = match prev {
                        None => format!("≤{}", short_bytes(e)),
                        Some(p) => byte_range(p, e),
                    };
                    buckets.push(FixedBucket {
                        label,
                        max: Some(e),
                    });
                    prev = Some(e);
                }
                let label = match prev {
                    None => "all sizes".to_string(),
                    Some(p) => format!(">{}", short_bytes(p)),
                };
                buckets.push(FixedBucket { label, max: None });
                Some(buckets)
            }
        }
    }
}

impl std::str::FromStr for BucketScheme {
    type Err = String;

    /// The command-line spelling: `bfc_google`, `bfc_hadoop`, `equal_count:N` or `edges:10KB,100KB,1MB`.
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected bfc_google, bfc_hadoop, equal_count:N or edges:SIZE,SIZE,...";
        match s.split_once(':') {
            None if s == "bfc_google" => Ok(BucketScheme::BfcGoogle),
            None if s == "bfc_hadoop" => Ok(BucketScheme::BfcHadoop),
            Some(("equal_count", n)) => match n.parse::<usize>() {
                Ok(n) if n > 0 => Ok(BucketScheme::EqualCount { n }),
                _ => Err(format!("`{s}`: the group count must be a positive integer")),
            },
            Some(("edges", list)) => list
                .split(',')
                .map(|e| Bytes::parse(e.trim()).map_err(|err| format!("`{s}`: {err}")))
                .collect::<Result<Vec<_>, _>>()
                .map(BucketScheme::Edges),
            _ => Err(format!("unknown buckets `{s}`: {expected}")),
        }
    }
}

/// Buckets by BFC packet count with inclusive upper edges `edges`, then one for everything above.
fn packet_buckets(edges: &[u64]) -> Vec<FixedBucket> {
    let mut buckets = Vec::with_capacity(edges.len() + 1);
    let mut prev = 0;
    for &e in edges {
        let pkts = if prev + 1 == e {
            format!("{e} pkt{}", if e == 1 { "" } else { "s" })
        } else {
            format!("{}-{e} pkts", prev + 1)
        };
        let bytes = if prev == 0 {
            format!("<{}", short_bytes(e * BFC_PKT))
        } else {
            byte_range(prev * BFC_PKT, e * BFC_PKT)
        };
        buckets.push(FixedBucket {
            label: format!("{pkts} ({bytes})"),
            max: Some(e * BFC_PKT - 1),
        });
        prev = e;
    }
    buckets.push(FixedBucket {
        label: format!(">{prev} pkts (≥{})", short_bytes(prev * BFC_PKT)),
        max: None,
    });
    buckets
}

/// `lo-hi` with a shared unit when both are whole in it (`2-4KB`), else each with its own (`768KB-3.072MB`).
pub(crate) fn byte_range(lo: u64, hi: u64) -> String {
    for (unit, scale) in [("MB", 1_000_000), ("KB", 1_000)] {
        if lo >= scale && lo.is_multiple_of(scale) && hi.is_multiple_of(scale) && hi < scale * 1000
        {
            return format!("{}-{}{unit}", lo / scale, hi / scale);
        }
    }
    format!("{}-{}", short_bytes(lo), short_bytes(hi))
}

/// A byte count in the largest decimal unit below it, exact, trailing zeros trimmed: `999B`, `1KB`, `38.884KB`,
/// `3.072MB`.
pub(crate) fn short_bytes(b: u64) -> String {
    for (unit, scale, digits) in [
        ("GB", 1_000_000_000u64, 9),
        ("MB", 1_000_000, 6),
        ("KB", 1_000, 3),
    ] {
        if b >= scale {
            let frac = b % scale;
            if frac == 0 {
                return format!("{}{unit}", b / scale);
            }
            let frac = format!("{frac:0digits$}");
            return format!("{}.{}{unit}", b / scale, frac.trim_end_matches('0'));
        }
    }
    format!("{b}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(scheme: BucketScheme) -> Vec<String> {
        scheme
            .fixed()
            .unwrap()
            .into_iter()
            .map(|b| b.label)
            .collect()
    }

    #[test]
    fn bfc_labels_and_ranges() {
        assert_eq!(
            labels(BucketScheme::BfcGoogle),
            [
                "1 pkt (<1KB)",
                "2 pkts (1-2KB)",
                "3-4 pkts (2-4KB)",
                "5-8 pkts (4-8KB)",
                "9-16 pkts (8-16KB)",
                "17-64 pkts (16-64KB)",
                "65-256 pkts (64-256KB)",
                "257-1024 pkts (256KB-1.024MB)",
                ">1024 pkts (≥1.024MB)"
            ]
        );
        assert_eq!(labels(BucketScheme::BfcHadoop)[0], "1-3 pkts (<3KB)");
        assert_eq!(
            labels(BucketScheme::BfcHadoop)[5],
            "769-3072 pkts (768KB-3.072MB)"
        );
        let google = BucketScheme::BfcGoogle.fixed().unwrap();
        // np = floor(size/1000)+1 ≤ 1 ⟺ size ≤ 999.
        assert_eq!(google[0].max, Some(999));
        assert_eq!(google[1].max, Some(1999));
    }

    #[test]
    fn edge_labels() {
        let scheme = BucketScheme::Edges(vec![Bytes(100_000), Bytes(10_000), Bytes(10_000)]);
        assert_eq!(labels(scheme), ["≤10KB", "10-100KB", ">100KB"]);
        assert_eq!(labels(BucketScheme::Edges(vec![])), ["all sizes"]);
        assert_eq!(short_bytes(38_884), "38.884KB");
        assert_eq!(short_bytes(1_500_000), "1.5MB");
        assert_eq!(short_bytes(999), "999B");
        assert_eq!(byte_range(500, 1000), "500B-1KB");
    }

    #[test]
    fn command_line_spellings() {
        assert_eq!("bfc_google".parse(), Ok(BucketScheme::BfcGoogle));
        assert_eq!("bfc_hadoop".parse(), Ok(BucketScheme::BfcHadoop));
        assert_eq!(
            "equal_count:10".parse(),
            Ok(BucketScheme::EqualCount { n: 10 })
        );
        assert_eq!(
            "edges:10KB, 1MB".parse(),
            Ok(BucketScheme::Edges(vec![Bytes(10_000), Bytes(1_000_000)]))
        );
        for bad in ["equal_count:0", "equal_count:x", "edges:10QB", "hpcc", ""] {
            assert!(bad.parse::<BucketScheme>().is_err(), "{bad}");
        }
    }

    #[test]
    fn scheme_serde_names() {
        let s: BucketScheme = serde_json::from_str(r#""bfc_hadoop""#).unwrap();
        assert_eq!(s, BucketScheme::BfcHadoop);
        let s: BucketScheme = serde_json::from_str(r#"{"equal_count":{"n":20}}"#).unwrap();
        assert_eq!(s, BucketScheme::EqualCount { n: 20 });
        let s: BucketScheme = serde_json::from_str(r#"{"edges":["10KB","1MB"]}"#).unwrap();
        assert_eq!(
            s,
            BucketScheme::Edges(vec![Bytes(10_000), Bytes(1_000_000)])
        );
    }
}
