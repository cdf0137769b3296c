//! Cross-validation of the delay-, digest- and power-based controllers against their public implementations on
//! identical inputs (issue 68): TIMELY and HPCC-PINT against HPCC's ns-3 (`CC_MODE 7`, `CC_MODE 10`) on
//! `data/reference/ns3-perf-k8`; Swift against htsim's `swift.cpp`, PowerTCP and θ-PowerTCP against the
//! authors' ns-3 (inet-tub/ns3-datacenter) on `data/reference/xval-k8`'s three traces. The peers' outputs are
//! committed; each test replays one trace under the profile that configures bfcsim as the peer ran and checks
//! what docs/FIDELITY.md ("Cross-validation of the delay- and power-based controllers") states:
//!
//! - every flow of the reference matched (same source, destination, size and start), standalone FCTs equal;
//! - the median slowdown within 25% of the peer's in at least 80% of the buckets, for both bucket schemes
//!   (HPCC's ten equal-count groups and BFC's packet-count buckets);
//! - flow by flow, the geometric mean of our FCT over the peer's within 10% of 1;
//! - the p99 within 25% in at least half of the buckets. The others are the largest or second-largest of tens
//!   of flows, which flows collide on a path decides, and the two simulators draw paths differently (our ECMP
//!   hash against ns-3's murmur3 or htsim's random path per flow); docs/FIDELITY.md shows our own spread of
//!   those cells over seeds covering the peer's values.

mod common;

use std::path::Path;

use bfcsim_metrics::BucketScheme;
use bfcsim_metrics::compare::{compare, parse_hpcc_fct};
use common::{TempDir, bfcsim, s, workspace_root};

/// Replays `profile` (in `data/reference/DIR`) with `set`, compares with `reference` there, and checks the file
/// doc's conditions.
fn cross_validate(dir: &str, profile: &str, set: &[&str], reference: &str) {
    let dir = workspace_root().join("data/reference").join(dir);
    let tmp = TempDir::new(&format!("xval-{}", reference.replace('/', "-")));
    let out = tmp.join("out");
    let profile = dir.join(profile);
    let mut args = vec!["run", s(&profile), "--out", s(&out)];
    for o in set {
        args.extend(["--set", o]);
    }
    let run = bfcsim(&args);
    assert!(run.success(), "{reference}: {:?}\n{}", run.code, run.stderr);
    let read = |path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        parse_hpcc_fct(path, &text).unwrap()
    };
    let peer = read(&dir.join(reference));
    let ours = read(&out.join("fct.txt"));
    for buckets in [BucketScheme::EqualCount { n: 10 }, BucketScheme::BfcGoogle] {
        let c = compare(&peer, &ours, &buckets, 0.25, 1).expect("flows match");
        println!("{reference}, {buckets:?}:\n{}", c.render("peer", "bfcsim"));
        assert_eq!(
            c.only_reference, 0,
            "{reference}: unmatched reference flows"
        );
        assert_eq!(c.standalone_differs.0, 0, "{reference}: standalone FCTs");
        let (p50, p99, m) = c.within();
        assert!(
            5 * p50 >= 4 * m,
            "{reference}, {buckets:?}: {p50} of {m} medians within 25%"
        );
        assert!(
            2 * p99 >= m,
            "{reference}, {buckets:?}: {p99} of {m} p99s within 25%"
        );
        let (geo, _, _) = c.flow_ratio;
        assert!(
            (geo - 1.0).abs() <= 0.1,
            "{reference}: flow by flow, our FCTs are {geo:.3} of the peer's"
        );
    }
}

#[test]
fn timely_matches_hpcc_ns3_on_the_k8_web_search_trace() {
    cross_validate("ns3-perf-k8", "timely.toml", &[], "timely.fct.txt");
}

#[test]
fn hpcc_pint_matches_hpcc_ns3_on_the_k8_web_search_trace() {
    cross_validate("ns3-perf-k8", "pint.toml", &[], "pint.fct.txt");
}

#[test]
fn swift_matches_htsim_at_30_and_60_percent() {
    cross_validate(
        "xval-k8",
        "swift-htsim.toml",
        &[],
        "T30/htsim-swift.fct.txt",
    );
    cross_validate(
        "xval-k8",
        "swift-htsim.toml",
        &["flows.file=T60/flow.txt"],
        "T60/htsim-swift.fct.txt",
    );
}

/// htsim with 1000-packet queues leaves 36 of the incast's flows stuck after losses (its RTO resends one
/// packet, whose ACK disarms the timer with the rest of the window unsent, docs/FIDELITY.md); with 4000-packet
/// queues neither simulator drops, and the comparison is of the same flows.
#[test]
fn swift_matches_htsim_under_a_100_to_1_incast() {
    cross_validate(
        "xval-k8",
        "swift-htsim.toml",
        &["flows.file=T60i/flow.txt", "switch.pool_size=4192000B"],
        "T60i/htsim-swift-q4000.fct.txt",
    );
}

#[test]
fn powertcp_matches_its_authors_ns3() {
    for t in ["T30", "T60", "T60i"] {
        cross_validate(
            "xval-k8",
            "powertcp-ns3.toml",
            &[&format!("flows.file={t}/flow.txt")],
            &format!("{t}/ns3-powertcp.fct.txt"),
        );
    }
}

#[test]
fn theta_powertcp_matches_its_authors_ns3() {
    for t in ["T30", "T60", "T60i"] {
        cross_validate(
            "xval-k8",
            "powertcp-ns3.toml",
            &[
                "scheme.name=theta-powertcp",
                &format!("flows.file={t}/flow.txt"),
            ],
            &format!("{t}/ns3-theta-powertcp.fct.txt"),
        );
    }
}
