//! BFC on CLOS-128 (BFC §6.2.1, Fig. 9 and Fig. 10): the incast scenario drops nothing, resends nothing,
//! conserves every packet and repeats bit for bit; without incast the active flows per port stay below the 32 queues; at 95%
//! load the deadlock watchdog stays silent. Runs are shortened to keep the suite fast.

mod common;

use std::path::Path;

use bfcsim::experiment::load_experiment;
use bfcsim::outputs::{OutputFile, write_outputs};
use bfcsim::runner::{Outcome, prepare, simulate};
use common::TempDir;

fn run(overrides: &[&str]) -> Outcome {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/clos128-google-incast-bfc.toml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let config = load_experiment(&path, &overrides).expect("the experiment file parses");
    let prepared = prepare(&config, path.parent().unwrap()).expect("the workload builds");
    simulate(&config, prepared, |_| {}).expect("the run completes")
}

fn fc(out: &Outcome) -> &bfcsim_metrics::FlowControlReport {
    out.summary
        .flow_control
        .as_ref()
        .expect("BFC reports its activity")
}

/// Also: no retransmission timer fires, for nothing is lost (docs/FIDELITY.md, "Figs. 9-11 under incast": with
/// the timer running through pauses and a 1 ms initial RTO, this run had 10 timeouts and resent packets the
/// network still held).
#[test]
fn incast_run_drops_nothing_conserves_packets_and_repeats() {
    let args = ["workload.duration=2ms"];
    let a = run(&args);
    assert_eq!(a.counters.dropped_pkts, 0, "{:?}", a.summary.drops);
    assert_eq!((a.counters.timeouts, a.counters.duplicates), (0, 0));
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert!(a.summary.incast.is_some(), "the run has incast flows");
    assert!(fc(&a).pause_frames > 0);
    let b = run(&args);
    let tmp = TempDir::new("bfc-determinism");
    let mut config = load_experiment(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../experiments/clos128-google-incast-bfc.toml"),
        &args.map(String::from),
    )
    .unwrap();
    config.output.files = vec![OutputFile::FctCsv];
    write_outputs(&tmp.join("a"), &config, None, &a).unwrap();
    write_outputs(&tmp.join("b"), &config, None, &b).unwrap();
    let read = |d: &str| std::fs::read(tmp.join(d).join("fct.csv")).unwrap();
    assert_eq!(read("a"), read("b"), "same seed, same fct.csv");
}

#[test]
fn without_incast_active_flows_per_port_stay_below_the_queues() {
    let out = run(&["workload.duration=1ms", "workload.incast=[]"]);
    let active = out
        .summary
        .active_flows
        .as_ref()
        .expect("active flows sampled");
    eprintln!(
        "active flows per port: mean {:.2} p99 {} max {}",
        active.mean, active.p99, active.max
    );
    assert!(
        active.p99 < 32,
        "p99 {} of active flows per port",
        active.p99
    );
}

#[test]
fn no_deadlock_at_95_percent_load() {
    let out = run(&[
        "workload.duration=1ms",
        "workload.incast=[]",
        "workload.load=0.95",
    ]);
    let f = fc(&out);
    assert_eq!(f.watchdog_alarms, 0, "{:?}", f.first_alarm);
    assert_eq!(out.summary.unfinished, 0);
    assert!(out.violations.is_empty(), "{:?}", out.violations);
}
