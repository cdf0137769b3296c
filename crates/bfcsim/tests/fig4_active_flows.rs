//! BFC §2.3, Fig. 4 (`experiments/bfc-fig4-active-flows.toml`), shortened: at one bottleneck the active flows
//! are counted as flows for every scheme (the single FIFO queue holds many), SRF keeps fewer active than fair
//! queuing and FIFO far more; and `bfcsim run --sweep` runs every point, one line each, plus `sweep.csv`.

mod common;

use std::path::{Path, PathBuf};

use bfcsim::experiment::load_experiment;
use bfcsim::runner::{prepare, simulate};
use bfcsim_metrics::ActiveFlowsReport;
use common::{TempDir, bfcsim_in, s, workspace_root};

fn experiment() -> PathBuf {
    workspace_root().join("experiments/bfc-fig4-active-flows.toml")
}

fn active_flows(scheme: &str) -> ActiveFlowsReport {
    let overrides = [
        format!("scheme.name={scheme}"),
        "workload.duration=5ms".into(),
        "workload.load=0.8".into(),
    ];
    let path = experiment();
    let config = load_experiment(&path, &overrides).expect("the experiment file parses");
    let prepared = prepare(&config, path.parent().unwrap()).expect("the workload builds");
    let out = simulate(&config, prepared, |_| {}).expect("the run completes");
    assert!(out.violations.is_empty(), "{:?}", out.violations);
    assert_eq!(out.summary.unfinished, 0);
    out.summary.active_flows.expect("active flows sampled")
}

#[test]
fn srf_keeps_fewer_flows_active_than_fair_queuing_and_fifo_far_more() {
    let [fq, srf, fifo] = ["ideal-fq", "ideal-srf", "fifo"].map(active_flows);
    for (name, a) in [("fq", &fq), ("srf", &srf), ("fifo", &fifo)] {
        eprintln!("{name}: {a}");
    }
    // One port sampled every 2 us over the 5 ms of arrivals (and the drain after them).
    assert!(fq.samples >= 2500, "{}", fq.samples);
    // One FIFO queue, yet many flows: the sampler counts flows, not queues.
    assert!(fifo.max > 32, "FIFO max {}", fifo.max);
    assert!(srf.mean < fq.mean && fq.mean < fifo.mean);
    assert!(srf.p99 < fq.p99 && fq.p99 < fifo.p99);
    assert!(fifo.mean > 2.0 * fq.mean);
}

#[test]
fn sweep_runs_every_point_and_writes_sweep_csv() {
    let dir = TempDir::new("sweep");
    let out = dir.join("out");
    let run = bfcsim_in(
        Path::new("."),
        &[
            "run",
            s(&experiment()),
            "--set",
            "workload.duration=200us",
            "--sweep",
            "scheme.name=ideal-fq,fifo",
            "--sweep",
            "workload.load=0.5,0.9",
            "--jobs",
            "2",
            "--out",
            s(&out),
        ],
    );
    assert!(run.success(), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", run.stdout);
    assert!(lines[0].starts_with("point"));
    assert!(lines[1].starts_with("scheme.name=ideal-fq workload.load=0.5"));
    assert!(lines[4].starts_with("scheme.name=fifo workload.load=0.9"));
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    // The last column names the point's run directory, which holds the run's outputs.
    let last = csv.lines().last().unwrap();
    assert!(
        last.starts_with("scheme.name=fifo workload.load=0.9,"),
        "{last}"
    );
    let run_dir = out.join(last.rsplit(',').next().unwrap());
    assert!(run_dir.join("summary.json").exists() && run_dir.join("done.json").exists());
    // A bad value stops the sweep before anything runs.
    let bad = bfcsim_in(
        Path::new("."),
        &[
            "run",
            s(&experiment()),
            "--sweep",
            "workload.load=0.5,x",
            "--out",
            s(&dir.join("bad")),
        ],
    );
    assert!(
        !bad.success() && bad.stderr.contains("error:"),
        "{}",
        bad.stderr
    );
    assert!(!dir.join("bad").exists());
}
