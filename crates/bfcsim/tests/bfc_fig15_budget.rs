//! BFC App. A.1's Fig. 15 setup (long-running flows to one receiver, direct and indirect 1 KB mice as named
//! workload groups) on CLOS-128, shortened: each group is summarized and labelled apart, and the run reports
//! the Tofino2 hardware budget (§3.3, §4) and the paused fraction of every switch queue.

mod common;

use std::path::Path;

use bfcsim::experiment::load_experiment;
use bfcsim::outputs::{OutputFile, write_outputs};
use bfcsim::runner::{Outcome, prepare, simulate};
use bfcsim_core::NodeId;
use common::TempDir;

const FIG15: &str = "../../experiments/bfc-fig15-long-flows-mice.toml";

fn run(extra: &[&str]) -> (bfcsim::experiment::ExperimentConfig, Outcome) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIG15);
    // Eight long flows, mice over [1 ms, 1.3 ms): about 110 per group.
    let overrides: Vec<String> = [
        "workload.group.0.count=8",
        "workload.duration=1.3ms",
        "run.max_time=2ms",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect();
    let config = load_experiment(&path, &overrides).expect("the experiment file parses");
    let prepared = prepare(&config, path.parent().unwrap()).expect("the workload builds");
    let out = simulate(&config, prepared, |_| {}).expect("the run completes");
    assert!(out.violations.is_empty(), "{:?}", out.violations);
    (config, out)
}

#[test]
fn mice_groups_are_reported_apart() {
    let (config, out) = run(&[]);
    let groups = &out.summary.groups;
    let labels: Vec<&str> = groups.iter().map(|g| g.label.as_str()).collect();
    assert_eq!(labels, ["long", "direct", "indirect"]);
    assert_eq!(
        (groups[0].flows, groups[0].unfinished),
        (0, 8),
        "long flows run on"
    );
    for mice in &groups[1..] {
        assert!(mice.flows > 60 && mice.unfinished == 0, "{mice:?}");
        assert_eq!(mice.max_size_bytes, Some(1000));
    }
    // Eight long flows use 8 of the 32 queues towards A: the mice hardly wait.
    let p50 = |g: usize| groups[g].slowdown.unwrap().p50;
    assert!(p50(1) < 1.5 && p50(2) < 1.1, "{} {}", p50(1), p50(2));
    let tmp = TempDir::new("fig15");
    let config = bfcsim::experiment::ExperimentConfig {
        output: bfcsim::outputs::OutputConfig {
            files: vec![OutputFile::FctCsv],
        },
        ..config
    };
    write_outputs(tmp.path(), &config, None, &out).unwrap();
    let csv = std::fs::read_to_string(tmp.join("fct.csv")).unwrap();
    assert!(csv.starts_with("id,") && csv.lines().next().unwrap().ends_with(",group"));
    let count = |name: &str| csv.lines().filter(|l| l.ends_with(name)).count();
    assert_eq!(count(",long"), 8);
    assert_eq!(count(",direct"), groups[1].flows);
}

#[test]
fn hardware_budget_and_queue_pauses() {
    let (_, out) = run(&[]);
    let hw = out
        .summary
        .hardware
        .as_ref()
        .expect("BFC reports its budget");
    assert_eq!(hw.per_switch.len(), 16);
    // §6.2.1: a ToR's flow table has 24 ports × 32 queues × 100 = 76,800 entries, 384 KB at 5 B each.
    assert_eq!(
        (hw.max.flow_table_entries, hw.max.flow_table_bytes),
        (76_800, 384_000)
    );
    let switch = |id: u32| {
        &hw.per_switch
            .iter()
            .find(|s| s.switch == NodeId(id))
            .unwrap()
            .budget
    };
    // Node 128 is rack 0's ToR: its hosts only receive (their ACKs bypass BFC), so its pause counter covers
    // the 32 queues of each of the 8 spines upstream; a spine's covers the 8 ToRs'.
    let (tor0, spine) = (switch(128), switch(136));
    assert_eq!(tor0.pause_counter_entries, 8 * 32);
    assert_eq!(
        (spine.flow_table_entries, spine.pause_counter_entries),
        (8 * 32 * 100, 8 * 32)
    );
    assert!(
        switch(129).pause_counter_entries > 8 * 32,
        "senders' NIC queues"
    );
    assert!(hw.max.recirculations_per_sec > 0.0 && hw.within_recirculation_budget);
    assert!(tor0.peak_recirculations_per_sec >= tor0.recirculations_per_sec);
    let queues = out
        .summary
        .flow_control
        .as_ref()
        .and_then(|f| f.queue_paused)
        .expect("per-queue paused fractions");
    assert_eq!(queues.queues, (8 * 24 + 8 * 8) * 32);
    assert!(queues.ever_paused > 0 && queues.max <= 1.0 && queues.mean <= queues.max);

    // App. A.8: sampling half the packets recirculates about half the headers.
    let (_, sampled) = run(&["scheme.name=bfc-sampling"]);
    let total = |o: &Outcome| {
        let hw = o.summary.hardware.as_ref().unwrap();
        hw.per_switch
            .iter()
            .map(|s| s.budget.recirculations_per_sec)
            .sum::<f64>()
    };
    let ratio = total(&sampled) / total(&out);
    assert!((0.45..0.55).contains(&ratio), "{ratio}");
    // IdealFQ's exact per-flow table has no hardware counterpart.
    let (_, ideal) = run(&["scheme.name=ideal-fq"]);
    assert!(ideal.summary.hardware.is_none());
}
