//! Cross-validation with HPCC's ns-3 (issue 4's acceptance): replaying `data/reference/ns3-perf-k8` with `hpcc`
//! and `dcqcn` configured as its config files say (the checked-in profiles `hpcc.toml` and `dcqcn.toml`) gives,
//! per size bucket, a median and a 99th-percentile slowdown within 25% of ns-3's in most buckets.
//!
//! "Most" is decided here as *more than half* of the buckets, separately for p50 and for p99, for both bucket
//! schemes the comparison prints: HPCC's equal-count groups (10 groups of ~269 flows, `fct_analysis.py -s 10`)
//! and BFC's packet-count buckets. Slowdowns divide by ns-3's own standalone FCT on both sides, and our
//! standalone FCTs must equal ns-3's flow by flow. Each replay takes ~10 s of CPU; the two tests run in
//! parallel. (`dctcp.toml`, rate-based DCTCP, is compared for information only: `bfcsim run
//! data/reference/ns3-perf-k8/dctcp.toml --compare data/reference/ns3-perf-k8/dctcp.fct.txt`.)

mod common;

use bfcsim_metrics::BucketScheme;
use bfcsim_metrics::compare::{compare, parse_hpcc_fct};
use common::{TempDir, bfcsim, s, workspace_root};

fn cross_validate(reference: &str, scheme: &str) {
    let dir = workspace_root().join("data/reference").join(reference);
    let tmp = TempDir::new(&format!("crossval-{reference}-{scheme}"));
    let out = tmp.join("out");
    let run = bfcsim(&[
        "run",
        s(&dir.join(format!("{scheme}.toml"))),
        "--out",
        s(&out),
    ]);
    assert!(run.success(), "{scheme}: {:?}\n{}", run.code, run.stderr);

    let read = |path: std::path::PathBuf| {
        let text = std::fs::read_to_string(&path).unwrap();
        parse_hpcc_fct(&path, &text).unwrap()
    };
    let reference = read(dir.join(format!("{scheme}.fct.txt")));
    let ours = read(out.join("fct.txt"));
    for buckets in [BucketScheme::EqualCount { n: 10 }, BucketScheme::BfcGoogle] {
        let c = compare(&reference, &ours, &buckets, 0.25, 1).expect("flows match");
        println!("{scheme}, {buckets:?}:\n{}", c.render("ns-3", "bfcsim"));
        // Flows finished by the stop time (2.02 s) on one side only are few (at most 1%); every matched flow
        // has ns-3's standalone FCT.
        assert!(
            (c.only_reference + c.only_ours) * 100 <= reference.len(),
            "{scheme}: {} of ns-3's flows and {} of ours unmatched",
            c.only_reference,
            c.only_ours
        );
        assert_eq!(c.standalone_differs.0, 0, "{scheme}: standalone FCTs");
        let (p50, p99, m) = c.within();
        assert!(
            2 * p50 > m && 2 * p99 > m,
            "{scheme}, {buckets:?}: only {p50} (p50) and {p99} (p99) of {m} buckets within 25% of ns-3"
        );
    }
}

#[test]
fn hpcc_replay_matches_ns3_in_most_buckets() {
    cross_validate("ns3-perf-k8", "hpcc");
}

#[test]
fn dcqcn_replay_matches_ns3_in_most_buckets() {
    cross_validate("ns3-perf-k8", "dcqcn");
}

/// The same HPCC run with 1 packet in 10,000 lost on every link (issue 71: HPCC topology error rates as loss
/// events). HPCC's ns-3 has no retransmission timer and never finishes 8 flows whose tail was lost; ours finish.
#[test]
fn hpcc_replay_on_lossy_links_matches_ns3_in_most_buckets() {
    cross_validate("ns3-perf-k8-lossy", "hpcc");
}
