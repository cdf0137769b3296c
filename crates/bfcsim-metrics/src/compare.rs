//! Cross-validation against another simulator: two HPCC-format `fct.txt` files of the same flows (for example
//! HPCC's ns-3 and a bfcsim replay of its `topology.txt` and `flow.txt`), compared per size bucket.
//!
//! - [`parse_hpcc_fct`] reads `sip dip sport dport size start_ns fct_ns standalone_fct_ns` (`third.cc`'s
//!   `qp_finish`: IPs as `%08x`, node id = `(ip >> 8) & 0xffff`); errors name the file and line.
//! - [`match_flows`] pairs a reference flow with ours by (source, destination, size) and a start time within
//!   `tolerance_ns`: ns-3 converts `flow.txt`'s start in seconds through a `double`, so its `start_ns` can be
//!   1 ns below ours. Source ports are not part of the key (simulators may number them differently); how many
//!   pairs disagree on them is reported. A flow that finished on one side only (unfinished at the other's stop
//!   time) is reported, never guessed.
//! - [`compare`]: both sides' slowdowns divide by the *reference's* `standalone_fct`, so a bucket's ratio
//!   compares FCTs alone; how many of our standalone values differ from the reference's is reported (they should
//!   all agree when both use HPCC's convention). Buckets are formed once from the matched flows, so both sides
//!   summarize exactly the same flows: HPCC's equal-count groups over the matched flows sorted by size (ties by
//!   start time, then endpoints), or fixed size ranges. Percentiles are nearest rank, as in
//!   [`crate::summary`].
//! - A bucket is within tolerance `t` for a percentile when `|ours/reference − 1| ≤ t`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use bfcsim_core::InputError;

use crate::buckets::{BucketScheme, byte_range, short_bytes};
use crate::summary::nearest_rank;

/// One line of an HPCC `fct.txt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FctLine {
    /// Source node id.
    pub src: u32,
    /// Destination node id.
    pub dst: u32,
    /// Source port.
    pub sport: u32,
    /// Destination port (HPCC: 100, incast 200).
    pub dport: u32,
    /// Flow size in bytes.
    pub size: u64,
    /// Start time in ns.
    pub start_ns: u64,
    /// Flow completion time in ns.
    pub fct_ns: u64,
    /// HPCC's ideal: base RTT plus size with headers at the path's slowest link, in ns.
    pub standalone_ns: u64,
}

/// Reads every line of an HPCC `fct.txt` (`file` names it in errors). Blank lines are skipped.
pub fn parse_hpcc_fct(file: &Path, text: &str) -> Result<Vec<FctLine>, InputError> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| InputError::at(file, i + 1, m);
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 8 {
            return Err(at(format!(
                "expected 8 fields `sip dip sport dport size start_ns fct_ns standalone_fct_ns`, found {}",
                f.len()
            )));
        }
        let node = |field: &str, what: &str| {
            u32::from_str_radix(field, 16)
                .map(|ip| (ip >> 8) & 0xffff)
                .map_err(|_| at(format!("{what} `{field}` is not a hexadecimal IP")))
        };
        let int = |field: &str, what: &str| {
            field
                .parse::<u64>()
                .map_err(|_| at(format!("{what} `{field}` is not an unsigned integer")))
        };
        let port = |field: &str, what: &str| {
            int(field, what).and_then(|v| {
                u32::try_from(v).map_err(|_| at(format!("{what} `{field}` is out of range")))
            })
        };
        let parsed = FctLine {
            src: node(f[0], "sip")?,
            dst: node(f[1], "dip")?,
            sport: port(f[2], "sport")?,
            dport: port(f[3], "dport")?,
            size: int(f[4], "size")?,
            start_ns: int(f[5], "start")?,
            fct_ns: int(f[6], "fct")?,
            standalone_ns: int(f[7], "standalone_fct")?,
        };
        if parsed.standalone_ns == 0 {
            return Err(at("standalone_fct is 0: no slowdown can be computed".into()));
        }
        lines.push(parsed);
    }
    Ok(lines)
}

/// Reference flows paired with ours, and those left over on either side.
#[derive(Clone, Debug, Default)]
pub struct Matching {
    /// (reference, ours) pairs.
    pub pairs: Vec<(FctLine, FctLine)>,
    /// Reference flows with no partner among ours.
    pub only_reference: Vec<FctLine>,
    /// Our flows with no partner in the reference.
    pub only_ours: Vec<FctLine>,
}

/// Pairs each reference flow with the unused flow of ours that has the same (source, destination, size) and
/// the nearest start time within `tolerance_ns`; ties go to the earlier start. Pairs come out in the
/// reference's order.
pub fn match_flows(reference: &[FctLine], ours: &[FctLine], tolerance_ns: u64) -> Matching {
    let mut by_key: BTreeMap<(u32, u32, u64), Vec<(u64, usize)>> = BTreeMap::new();
    for (i, o) in ours.iter().enumerate() {
        by_key
            .entry((o.src, o.dst, o.size))
            .or_default()
            .push((o.start_ns, i));
    }
    for v in by_key.values_mut() {
        v.sort_unstable();
    }
    let mut used = vec![false; ours.len()];
    let mut m = Matching::default();
    for r in reference {
        let best = by_key.get(&(r.src, r.dst, r.size)).and_then(|cands| {
            cands
                .iter()
                .filter(|&&(_, i)| !used[i])
                .map(|&(start, i)| (start.abs_diff(r.start_ns), i))
                .filter(|&(d, _)| d <= tolerance_ns)
                .min()
        });
        match best {
            Some((_, i)) => {
                used[i] = true;
                m.pairs.push((*r, ours[i]));
            }
            None => m.only_reference.push(*r),
        }
    }
    m.only_ours = ours
        .iter()
        .zip(&used)
        .filter(|&(_, &u)| !u)
        .map(|(o, _)| *o)
        .collect();
    m
}

/// p50 and p99 of one side's slowdowns in a bucket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tail {
    /// Median (nearest rank).
    pub p50: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
}

impl Tail {
    fn of(mut slowdowns: Vec<f64>) -> Tail {
        slowdowns.sort_unstable_by(f64::total_cmp);
        Tail {
            p50: nearest_rank(&slowdowns, 0.5),
            p99: nearest_rank(&slowdowns, 0.99),
        }
    }
}

/// One size bucket of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    /// Size range.
    pub label: String,
    /// Matched flows in the bucket.
    pub flows: usize,
    /// The reference's slowdowns.
    pub reference: Tail,
    /// Ours.
    pub ours: Tail,
}

impl CompareRow {
    /// ours/reference at p50 and p99.
    pub fn ratios(&self) -> (f64, f64) {
        (
            self.ours.p50 / self.reference.p50,
            self.ours.p99 / self.reference.p99,
        )
    }
}

/// A bucket-by-bucket comparison of two runs of the same flows.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Non-empty buckets, smallest sizes first.
    pub rows: Vec<CompareRow>,
    /// Every matched flow.
    pub all: CompareRow,
    /// Allowed relative difference per percentile.
    pub tolerance: f64,
    /// Matched flows.
    pub matched: usize,
    /// Reference flows with no partner among ours.
    pub only_reference: usize,
    /// Our flows with no partner in the reference.
    pub only_ours: usize,
    /// Matched flows whose source ports differ.
    pub sport_differs: usize,
    /// Matched flows whose standalone FCTs differ, and the largest difference in ns.
    pub standalone_differs: (usize, u64),
    /// Flow by flow, our FCT over the reference's: their geometric mean, and the 10th and 90th percentiles.
    /// Where the buckets' p99s are a few flows each (which flows collide depends on the paths each
    /// simulator's hash or random draw gave them), this says whether the same flows take the same time.
    pub flow_ratio: (f64, f64, f64),
}

impl Comparison {
    /// Buckets within tolerance at p50, at p99, and the number of buckets.
    pub fn within(&self) -> (usize, usize, usize) {
        let ok = |r: f64| (r - 1.0).abs() <= self.tolerance;
        let p50 = self.rows.iter().filter(|r| ok(r.ratios().0)).count();
        let p99 = self.rows.iter().filter(|r| ok(r.ratios().1)).count();
        (p50, p99, self.rows.len())
    }

    /// The side-by-side table, its matching report and the final count.
    pub fn render(&self, reference: &str, ours: &str) -> String {
        let width = self
            .rows
            .iter()
            .map(|r| r.label.chars().count())
            .chain(["bucket".len(), "all".len()])
            .max()
            .unwrap_or(0);
        let pct = (self.tolerance * 100.0).round();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "matched {} flows; {} only in {reference}, {} only in {ours}; source port differs for {}; \
             standalone FCT differs for {} (max {} ns); slowdowns use {reference}'s standalone FCT",
            self.matched,
            self.only_reference,
            self.only_ours,
            self.sport_differs,
            self.standalone_differs.0,
            self.standalone_differs.1
        );
        let _ = writeln!(
            out,
            "{:<width$} {:>6} | {:>24} | {:>24} | {:>15}",
            "",
            "",
            format!("{reference} slowdown"),
            format!("{ours} slowdown"),
            "ours/reference"
        );
        let _ = writeln!(
            out,
            "{:<width$} {:>6} | {:>11} {:>12} | {:>11} {:>12} | {:>7} {:>7}",
            "bucket", "flows", "p50", "p99", "p50", "p99", "p50", "p99"
        );
        let ok = |r: f64| (r - 1.0).abs() <= self.tolerance;
        let mark = |r: f64| if ok(r) { ' ' } else { '*' };
        for r in self.rows.iter().chain(std::iter::once(&self.all)) {
            if std::ptr::eq(r, &self.all) {
                let _ = writeln!(out, "{}", "-".repeat(width + 73));
            }
            let (r50, r99) = r.ratios();
            let _ = writeln!(
                out,
                "{:<width$} {:>6} | {:>11.3} {:>12.3} | {:>11.3} {:>12.3} | {:>6.2}{} {:>6.2}{}",
                r.label,
                r.flows,
                r.reference.p50,
                r.reference.p99,
                r.ours.p50,
                r.ours.p99,
                r50,
                mark(r50),
                r99,
                mark(r99)
            );
        }
        let (p50, p99, m) = self.within();
        let _ = writeln!(
            out,
            "{p50} of {m} buckets within {pct}% (p50), {p99} of {m} (p99); * marks a bucket outside"
        );
        let (geo, p10, p90) = self.flow_ratio;
        let _ = writeln!(
            out,
            "flow by flow, {ours} FCT / {reference} FCT: geometric mean {geo:.3}, 10th-90th percentile \
             {p10:.3}-{p90:.3}"
        );
        out
    }
}

/// Compares `reference` with `ours` per bucket of `buckets`, matching flows whose start times differ by at most
/// `start_tolerance_ns`. `None` when no flow matches.
pub fn compare(
    reference: &[FctLine],
    ours: &[FctLine],
    buckets: &BucketScheme,
    tolerance: f64,
    start_tolerance_ns: u64,
) -> Option<Comparison> {
    let m = match_flows(reference, ours, start_tolerance_ns);
    if m.pairs.is_empty() {
        return None;
    }
    let mut pairs = m.pairs.clone();
    pairs.sort_by_key(|(r, _)| (r.size, r.start_ns, r.src, r.dst));
    let groups: Vec<(String, &[(FctLine, FctLine)])> = match (buckets.fixed(), buckets) {
        (Some(fixed), _) => {
            let mut groups = Vec::new();
            let mut rest = pairs.as_slice();
            for b in fixed {
                let n = rest
                    .iter()
                    .take_while(|(r, _)| b.max.is_none_or(|max| r.size <= max))
                    .count();
                groups.push((b.label, &rest[..n]));
                rest = &rest[n..];
            }
            groups
        }
        (None, BucketScheme::EqualCount { n }) => {
            let (n, total) = ((*n).max(1), pairs.len());
            (0..n)
                .map(|k| {
                    let g = &pairs[k * total / n..(k + 1) * total / n];
                    let label = match g {
                        [] => String::new(),
                        [first, ..] => {
                            let (lo, hi) = (first.0.size, g[g.len() - 1].0.size);
                            if lo == hi {
                                short_bytes(hi)
                            } else {
                                byte_range(lo, hi)
                            }
                        }
                    };
                    (label, g)
                })
                .collect()
        }
        (None, _) => unreachable!("only equal-count buckets depend on the flows"),
    };
    let row = |label: String, g: &[(FctLine, FctLine)]| {
        let side = |pick: fn(&(FctLine, FctLine)) -> u64| {
            Tail::of(
                g.iter()
                    .map(|p| pick(p) as f64 / p.0.standalone_ns as f64)
                    .collect(),
            )
        };
        CompareRow {
            label,
            flows: g.len(),
            reference: side(|p| p.0.fct_ns),
            ours: side(|p| p.1.fct_ns),
        }
    };
    let rows = groups
        .into_iter()
        .filter(|(_, g)| !g.is_empty())
        .map(|(label, g)| row(label, g))
        .collect();
    let standalone: Vec<u64> = pairs
        .iter()
        .map(|(r, o)| r.standalone_ns.abs_diff(o.standalone_ns))
        .filter(|&d| d > 0)
        .collect();
    let mut ratios: Vec<f64> = pairs
        .iter()
        .map(|(r, o)| o.fct_ns.max(1) as f64 / r.fct_ns.max(1) as f64)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    Some(Comparison {
        rows,
        all: row("all".into(), &pairs),
        tolerance,
        matched: pairs.len(),
        only_reference: m.only_reference.len(),
        only_ours: m.only_ours.len(),
        sport_differs: pairs.iter().filter(|(r, o)| r.sport != o.sport).count(),
        standalone_differs: (
            standalone.len(),
            standalone.iter().copied().max().unwrap_or(0),
        ),
        flow_ratio: (geo, at(0.1), at(0.9)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(src: u32, size: u64, start: u64, fct: u64, standalone: u64) -> FctLine {
        FctLine {
            src,
            dst: src + 1,
            sport: 10000,
            dport: 100,
            size,
            start_ns: start,
            fct_ns: fct,
            standalone_ns: standalone,
        }
    }

    #[test]
    fn parses_hpcc_lines_and_names_bad_ones() {
        let file = Path::new("ref.txt");
        let text = "0b000d01 0b002f01 10000 100 38884 2000000962 15860 15740\n\n";
        let lines = parse_hpcc_fct(file, text).unwrap();
        assert_eq!(
            lines,
            [FctLine {
                src: 13,
                dst: 47,
                sport: 10000,
                dport: 100,
                size: 38884,
                start_ns: 2_000_000_962,
                fct_ns: 15860,
                standalone_ns: 15740,
            }]
        );
        let bad =
            "0b000d01 0b002f01 10000 100 38884 2000000962 15860 15740\n0b000d01 zz 1 1 1 1 1 1\n";
        let e = parse_hpcc_fct(file, bad).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("dip `zz`"), "{e}");
        let e = parse_hpcc_fct(file, "0b000d01 0b002f01 1 1 1 1 1\n").unwrap_err();
        assert!(e.message.contains("found 7"), "{e}");
        let e = parse_hpcc_fct(file, "0b000d01 0b002f01 1 1 1 1 1 0\n").unwrap_err();
        assert!(e.message.contains("standalone_fct is 0"), "{e}");
    }

    #[test]
    fn matching_tolerates_a_nanosecond_and_reports_leftovers() {
        let reference = [
            line(1, 1000, 5_000, 10, 10),
            line(1, 1000, 9_000, 10, 10),
            line(2, 500, 7_000, 10, 10),
        ];
        let ours = [
            line(1, 1000, 9_001, 20, 10),
            line(1, 1000, 5_000, 30, 10),
            line(2, 500, 7_050, 10, 10),
            line(3, 500, 1, 10, 10),
        ];
        let m = match_flows(&reference, &ours, 1);
        assert_eq!(m.pairs.len(), 2);
        assert_eq!(m.pairs[0].1.fct_ns, 30);
        assert_eq!(m.pairs[1].1.fct_ns, 20);
        assert_eq!(m.only_reference, [reference[2]]);
        assert_eq!(m.only_ours, [ours[2], ours[3]]);
    }

    #[test]
    fn equal_count_buckets_use_the_reference_standalone_and_count_the_tolerance() {
        // Four flows of sizes 1..4 KB; ours are 10%, 20%, 50% and 100% slower; the last one reports another
        // standalone FCT and another source port.
        let reference: Vec<FctLine> = (1..=4)
            .map(|k| line(k, 1000 * k as u64, 100 * k as u64, 1000, 100))
            .collect();
        let mut ours: Vec<FctLine> = reference
            .iter()
            .zip([1100, 1200, 1500, 2000])
            .map(|(r, fct)| FctLine { fct_ns: fct, ..*r })
            .collect();
        ours[3].standalone_ns = 90;
        ours[3].sport = 10001;
        let c = compare(
            &reference,
            &ours,
            &BucketScheme::EqualCount { n: 2 },
            0.25,
            0,
        )
        .unwrap();
        assert_eq!(c.rows.len(), 2);
        assert_eq!(c.rows[0].label, "1-2KB");
        assert_eq!(c.rows[0].flows, 2);
        // Bucket 1: reference slowdowns [10, 10], ours [11, 12]: p50 = index 1 of 2 = 12, p99 = 12.
        assert_eq!(
            c.rows[0].reference,
            Tail {
                p50: 10.0,
                p99: 10.0
            }
        );
        assert_eq!(
            c.rows[0].ours,
            Tail {
                p50: 12.0,
                p99: 12.0
            }
        );
        // Bucket 2: ours [15, 20] (the reference's standalone divides both): ratio 2.
        assert_eq!(
            c.rows[1].ours,
            Tail {
                p50: 20.0,
                p99: 20.0
            }
        );
        assert_eq!(c.within(), (1, 1, 2));
        assert_eq!(c.all.flows, 4);
        assert_eq!(c.sport_differs, 1);
        assert_eq!(c.standalone_differs, (1, 10));
        let text = c.render("ns-3", "bfcsim");
        assert!(
            text.contains(
                "1 of 2 buckets within 25% (p50), 1 of 2 (p99); * marks a bucket outside\n"
            ),
            "{text}"
        );
        // The four flows' FCT ratios are 1.1, 1.2, 1.5 and 2 (the 10th and 90th percentiles by nearest rank).
        let geo = (1.1f64 * 1.2 * 1.5 * 2.0).powf(0.25);
        assert!((c.flow_ratio.0 - geo).abs() < 1e-9, "{:?}", c.flow_ratio);
        assert!(
            text.ends_with(
                "flow by flow, bfcsim FCT / ns-3 FCT: geometric mean 1.411, 10th-90th percentile 1.100-2.000\n"
            ),
            "{text}"
        );
        assert!(text.contains("2.00*"), "{text}");
    }

    #[test]
    fn fixed_buckets_skip_empty_ranges() {
        let reference = [line(1, 500, 0, 10, 10), line(2, 5_000_000, 0, 10, 10)];
        let c = compare(&reference, &reference, &BucketScheme::BfcGoogle, 0.25, 0).unwrap();
        let labels: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["1 pkt (<1KB)", ">1024 pkts (≥1.024MB)"]);
        assert_eq!(c.within(), (2, 2, 2));
        assert!(compare(&reference, &[], &BucketScheme::BfcGoogle, 0.25, 0).is_none());
    }
}
