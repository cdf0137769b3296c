//! Packet conservation on a run that certainly drops: a small shared buffer, a heavy background load and a
//! 60-to-1 incast. Every injected packet must be delivered, dropped with a reason or still in flight, every
//! flow must still finish (go-back-N recovers the losses), and the binary must exit 0 on the same file.

mod common;

use bfcsim::experiment::parse_experiment;
use bfcsim::runner::{prepare, simulate};
use common::{TempDir, bfcsim, read_json, s};

/// CLOS-128 with 300 KB switch buffers, Google sizes at 80% core load for 300 us, plus a 60-to-1 incast of
/// 6 MB every 100 us.
const EXPERIMENT: &str = r#"name = "conservation-with-drops"
seed = 1

[switch]
buffer = "300KB"

[workload]
cdf = "google"
load = 0.8
load_on = "core"
duration = "300us"

[[workload.incast]]
degree = 60
aggregate = "6MB"
period = "100us"
"#;

#[test]
fn dropping_run_conserves_packets_and_finishes_every_flow() {
    let tmp = TempDir::new("conservation");
    let file = tmp.write("drops.toml", EXPERIMENT);

    let config = parse_experiment(&file, EXPERIMENT, &[]).unwrap();
    let prepared = prepare(&config, tmp.path()).unwrap();
    let flows = prepared.flows.len();
    assert!(
        prepared.flows.iter().any(|f| f.incast),
        "the incast generator produced no flow"
    );
    let outcome = simulate(&config, prepared, |_| {}).unwrap();
    let c = &outcome.counters;

    assert!(c.dropped_pkts > 0, "the run dropped nothing: {c:?}");
    assert!(
        outcome.violations.is_empty(),
        "conservation violated: {:#?}",
        outcome.violations
    );
    assert!(
        c.injected_pkts >= c.delivered_pkts + c.dropped_pkts,
        "more packets delivered or dropped than injected: {c:?}"
    );
    assert_eq!(outcome.records.len(), flows);
    let unfinished: Vec<_> = outcome
        .records
        .iter()
        .filter(|r| r.finish.is_none())
        .map(|r| r.id)
        .collect();
    assert!(
        unfinished.is_empty(),
        "{} of {flows} flows never finished: {unfinished:?}",
        unfinished.len()
    );
    assert!(outcome.records.iter().all(|r| r.finish.is_some()));
    assert!(
        outcome.summary.drops.total() > 0,
        "the summary reports no drops"
    );
    assert_eq!(
        outcome.summary.drops.total(),
        c.dropped_pkts,
        "drops by reason do not add up to the dropped packets"
    );

    // The binary on the same file: exit 0 (not 3, the invariant-violation status) and the same counts.
    let out = tmp.join("out");
    let run = bfcsim(&["run", s(&file), "--out", s(&out)]);
    assert!(
        run.success(),
        "bfcsim run exited with {:?}\nstderr:\n{}",
        run.code,
        run.stderr
    );
    let info = read_json(&out.join("run.json"));
    assert_eq!(info["unfinished"], 0, "run.json: {info}");
    assert_eq!(
        info["counters"]["dropped_packets"].as_u64(),
        Some(c.dropped_pkts),
        "the binary and the library disagree on drops"
    );
    assert_eq!(
        info["invariant_violations"].as_array().map(Vec::len),
        Some(0),
        "run.json: {info}"
    );
}
