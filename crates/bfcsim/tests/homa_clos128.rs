//! Homa on CLOS-128 (BFC App. A.2, Table 2; Fig. 17a's setup, shortened to keep the suite fast): with packet
//! spraying the 99th-percentile queuing delay of scheduled packets in the core stays below 10 us; with
//! flow-level ECMP it is several times longer; every message completes and nothing is lost.

use std::path::Path;

use bfcsim::experiment::load_experiment;
use bfcsim::runner::{prepare, simulate};
use bfcsim_schemes::receiver_driven::homa::HomaReport;

fn run(scheme: &str) -> HomaReport {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/clos128-google-dctcp.toml");
    let set = [
        "workload.duration=300us".to_string(),
        format!("scheme.name={scheme}"),
    ];
    let config = load_experiment(&path, &set).unwrap();
    let prepared = prepare(&config, path.parent().unwrap()).unwrap();
    let out = simulate(&config, prepared, |_| {}).unwrap();
    assert!(out.violations.is_empty(), "{:?}", out.violations);
    assert_eq!(out.summary.unfinished, 0);
    assert_eq!(
        out.summary.drops.total(),
        0,
        "unbounded buffers drop nothing"
    );
    let homa = out
        .summary
        .flow_control
        .as_ref()
        .and_then(|f| f.scheme.as_ref()?.get::<HomaReport>().copied())
        .expect("Homa reports its grants and core delays");
    eprintln!("{scheme}: {homa}");
    homa
}

#[test]
fn spraying_keeps_the_core_queues_short_and_ecmp_does_not() {
    let spray = run("homa");
    let ecmp = run("homa-ecmp");
    assert!(spray.grants > 0 && spray.core_up.samples > 0);
    for (s, e) in [
        (spray.core_up, ecmp.core_up),
        (spray.core_down, ecmp.core_down),
    ] {
        assert!(s.p99_ns < 10_000.0, "{s:?}");
        assert!(e.p99_ns > 3.0 * s.p99_ns, "{e:?} against {s:?}");
    }
}
