//! Cross-validation with the BFC authors' ns-3 artifact and HPCC's ns-3 on BFC's Fig. 9 and Fig. 10 setups
//! (issue 74, item 1): `data/reference/bfc-fig9-5ms` and `bfc-fig10-5ms` hold both peers' FCTs of the exact flows
//! the artifact generated for 5 ms of arrivals (CLOS-128, Google all-RPC at UTILIZATION_FACTOR 0.60; Fig. 9's
//! with 100-to-1 incasts of 200 KB flows every ~555 µs, Fig. 10's without). This test replays the first 2.5 ms of
//! those arrivals in bfcsim, `bfc-artifact` against the artifact and
//! `hpcc` against HPCC's ns-3, and compares the flows that started in the first 2.3 ms (later ones would miss the
//! load of arrivals the slice leaves out).
//!
//! What is checked is what agrees on this slice (docs/VALIDATION.md has the tables, the full 5 ms and the
//! commands): per BFC size bucket the median slowdown within 25% everywhere; on Fig. 9's trace, HPCC's 99th
//! percentile within 25% in 8 of the 9 buckets; on Fig. 10's, the 99th percentiles of the buckets each test
//! names. BFC's short-flow p99 is not checked: on this slice it sits at the knee where
//! incast-hit flows begin, and bfcsim's seeds 1 and 2 put it at 0.95× and 2.46× the artifact's (the artifact
//! seeds ns-3's jitter with the clock, so its own value moves too); what is checked instead is that the same
//! flows take the same time (flow-by-flow geometric mean of ours ÷ theirs within 5%) and the incast bucket's p99.

mod common;

use std::path::Path;

use bfcsim_metrics::BucketScheme;
use bfcsim_metrics::compare::{Comparison, FctLine, compare, parse_hpcc_fct};
use common::{TempDir, bfcsim, gunzip, s, workspace_root};

/// Arrivals replayed: this long from the first.
const REPLAYED_NS: u64 = 2_500_000;
/// Flows that started this long after the first are compared.
const COMPARED_NS: u64 = 2_300_000;

fn fct(path: &Path) -> Vec<FctLine> {
    let text = if path.extension().is_some_and(|e| e == "gz") {
        gunzip(path)
    } else {
        std::fs::read_to_string(path).unwrap()
    };
    parse_hpcc_fct(path, &text).unwrap()
}

/// HPCC's `flow.txt` of every flow in `lines`, in their order.
fn flow_txt(lines: &[FctLine]) -> String {
    let mut out = format!("{}\n", lines.len());
    for l in lines {
        out.push_str(&format!(
            "{} {} 3 {} {} {}.{:09}\n",
            l.src,
            l.dst,
            l.dport,
            l.size,
            l.start_ns / 1_000_000_000,
            l.start_ns % 1_000_000_000
        ));
    }
    out
}

/// Replays the slice of `setup` (the data folder) under `scheme` and compares the early flows with `reference`
/// (a file of the folder).
fn replay(setup: &str, scheme: &str, reference: &str) -> Comparison {
    let dir = workspace_root().join("data/reference").join(setup);
    let tmp = TempDir::new(&format!("crossval-{setup}-{scheme}"));
    // HPCC's ns-3 finished every flow; its file lists them by completion.
    let mut flows = fct(&dir.join("hpcc-ns3.fct.txt.gz"));
    let whole = if setup == "bfc-fig9-5ms" {
        763_478
    } else {
        830_639
    };
    assert_eq!(
        flows.len(),
        whole,
        "{setup}/hpcc-ns3.fct.txt.gz is not whole"
    );
    flows.sort_by_key(|l| (l.start_ns, l.src, l.dst));
    let first = flows[0].start_ns;
    flows.retain(|l| l.start_ns < first + REPLAYED_NS);
    let topology = tmp.write("topology.txt", &gunzip(&dir.join("topology.txt.gz")));
    let flow_file = tmp.write("flow.txt", &flow_txt(&flows));
    let out = tmp.join("out");
    let run = bfcsim(&[
        "replay",
        "--topology",
        s(&topology),
        "--flows",
        s(&flow_file),
        "--scheme",
        scheme,
        "--outputs",
        "fct.txt",
        "--out",
        s(&out),
    ]);
    assert!(run.success(), "{scheme}: {:?}\n{}", run.code, run.stderr);
    let early = |v: Vec<FctLine>| -> Vec<FctLine> {
        v.into_iter()
            .filter(|l| l.start_ns < first + COMPARED_NS)
            .collect()
    };
    let theirs = early(fct(&dir.join(reference)));
    let ours = early(fct(&out.join("fct.txt")));
    let c = compare(&theirs, &ours, &BucketScheme::BfcGoogle, 0.25, 1).expect("flows match");
    println!(
        "{scheme} against {reference}:\n{}",
        c.render("peer", "bfcsim")
    );
    assert!(
        (c.only_reference + c.only_ours) * 1000 <= theirs.len(),
        "{scheme}: {} of the peer's flows and {} of ours unmatched",
        c.only_reference,
        c.only_ours
    );
    assert_eq!(c.rows.len(), 9, "{scheme}: every BFC bucket has flows");
    for r in &c.rows {
        let (p50, _) = r.ratios();
        assert!(
            (p50 - 1.0).abs() <= 0.25,
            "{scheme}, {}: median slowdown {:.3} against the peer's {:.3}",
            r.label,
            r.ours.p50,
            r.reference.p50
        );
    }
    c
}

#[test]
fn bfc_artifact_replay_matches_the_authors_artifact() {
    let c = replay("bfc-fig9-5ms", "bfc-artifact", "artifact.fct.txt.gz");
    let (geo, _, _) = c.flow_ratio;
    assert!(
        (0.95..=1.05).contains(&geo),
        "flow by flow, ours ÷ the artifact's FCT: geometric mean {geo:.3}"
    );
    // The 100-to-1 incasts' 200 KB flows and what they hold up.
    let incast = c
        .rows
        .iter()
        .find(|r| r.label.starts_with("65-256"))
        .unwrap();
    let (_, p99) = incast.ratios();
    assert!(
        (p99 - 1.0).abs() <= 0.25,
        "65-256 pkts: p99 slowdown {:.2} against the artifact's {:.2}",
        incast.ours.p99,
        incast.reference.p99
    );
}

/// The p99 of each of the first `n` buckets (BFC's, smallest first) within 25% of the peer's, where it is a
/// percentile: a bucket of fewer than 100 flows (two-packet flows: 36 here) has its maximum for p99.
fn p99_within(c: &Comparison, n: usize) {
    for r in c.rows[..n].iter().filter(|r| r.flows >= 100) {
        let (_, p99) = r.ratios();
        assert!(
            (p99 - 1.0).abs() <= 0.25,
            "{}: p99 slowdown {:.3} against the peer's {:.3}",
            r.label,
            r.ours.p99,
            r.reference.p99
        );
    }
}

/// Without incasts the p99s agree too, every bucket's below 1 MB: flows of 1 MB and more outlive the slice's
/// arrivals (on the whole 5 ms their p99 is within 2%, docs/VALIDATION.md).
#[test]
fn bfc_artifact_replay_matches_the_authors_artifact_without_incast() {
    let c = replay("bfc-fig10-5ms", "bfc-artifact", "artifact.fct.txt.gz");
    p99_within(&c, 8);
}

#[test]
fn hpcc_replay_matches_hpcc_ns3_on_the_artifact_flows() {
    let c = replay("bfc-fig9-5ms", "hpcc", "hpcc-ns3.fct.txt.gz");
    assert_eq!(c.standalone_differs.0, 0, "standalone FCTs");
    let (_, p99, m) = c.within();
    assert!(
        p99 + 1 >= m,
        "only {p99} of {m} buckets' p99 within 25% of HPCC's ns-3"
    );
}

/// Every p99 below 256 KB: HPCC's flows of 256 KB to 1 MB have a p99 above ns-3's here (1.32×) and on the whole
/// 5 ms (1.77×), a difference docs/VALIDATION.md lists as not yet explained.
#[test]
fn hpcc_replay_matches_hpcc_ns3_on_the_artifact_flows_without_incast() {
    let c = replay("bfc-fig10-5ms", "hpcc", "hpcc-ns3.fct.txt.gz");
    assert_eq!(c.standalone_differs.0, 0, "standalone FCTs");
    p99_within(&c, 7);
}
