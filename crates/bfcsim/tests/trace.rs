//! `[trace]` (`bfcsim::trace`): recording time series changes nothing of the run (its fingerprint, flows and
//! summary are those of the run without it), the trace is the same for any number of threads, it stays within
//! its budget, and its values agree with what the run counted (bytes delivered to the flows, the queue a port
//! held).

mod common;

use std::path::Path;

use bfcsim::experiment::parse_experiment;
use bfcsim::runner::{Outcome, prepare, simulate};
use common::{TempDir, bfcsim_ok, s};

fn run(name: &str, set: &[&str]) -> Outcome {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(name);
    let text = std::fs::read_to_string(&file).unwrap();
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let config = parse_experiment(&file, &text, &set).unwrap();
    let prepared = prepare(&config, file.parent().unwrap()).unwrap();
    let outcome = simulate(&config, prepared, |_| {}).unwrap();
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    outcome
}

const TRACE: [&str; 7] = [
    "trace.interval=3us",
    "trace.ports=[\"core\"]",
    "trace.queues=true",
    "trace.buffers=true",
    "trace.links=[\"core\"]",
    "trace.flows=[\"0-40\"]",
    "trace.scheme=true",
];

fn csv(outcome: &Outcome) -> String {
    let tmp = TempDir::new("trace-csv");
    let (trace, _) = outcome.trace.as_ref().expect("traced");
    trace.write_csv(tmp.join("trace.csv")).unwrap();
    std::fs::read_to_string(tmp.join("trace.csv")).unwrap()
}

#[test]
fn tracing_changes_nothing_and_is_the_same_on_any_thread_count() {
    let base = ["workload.duration=100us", "scheme.name=bfc"];
    let plain = run("clos128-google-incast-bfc.toml", &base);
    let with = |threads: &str| {
        let mut set: Vec<&str> = base.to_vec();
        set.extend(TRACE);
        set.push(threads);
        run("clos128-google-incast-bfc.toml", &set)
    };
    let one = with("run.threads=1");
    assert_eq!(one.fingerprint, plain.fingerprint);
    assert_eq!(one.end, plain.end);
    assert_eq!(one.records, plain.records);
    assert_eq!(
        serde_json::to_string(&one.summary).unwrap(),
        serde_json::to_string(&plain.summary).unwrap()
    );
    let two = with("run.threads=2");
    assert_eq!(two.threads, 2, "the run was not split");
    assert_eq!(two.fingerprint, plain.fingerprint);
    let text = csv(&one);
    assert_eq!(text, csv(&two), "the trace differs between 1 and 2 threads");
    // Every kind of series asked for is there, BFC's own included, and the queues were not all empty.
    for series in [
        ",queue.bytes,port:",
        ",queue.paused,port:",
        ",queue.active,port:",
        ",buffer.bytes,switch:",
        ",link.util,port:",
        ",flow.acked,flow:",
        ",flow.throughput,flow:",
        ",bfc.paused_upstream,port:",
    ] {
        assert!(text.contains(series), "no {series} in the trace");
    }
    assert!(
        text.lines()
            .any(|l| l.contains(",buffer.bytes,") && !l.ends_with(",0")),
        "every buffer sample is empty"
    );
}

/// A flow's last `flow.acked` sample after it finished is its size, and the samples never go down.
#[test]
fn flow_samples_add_up_to_the_flows() {
    let mut set = vec!["workload.duration=50us", "scheme.name=dctcp"];
    set.extend(TRACE);
    let out = run("clos128-google-dctcp.toml", &set);
    let (trace, _) = out.trace.as_ref().unwrap();
    for id in 0..=40u32 {
        let entity = format!("flow:{id}");
        let acked: Vec<f64> = trace
            .rows()
            .filter(|r| r.1 == "flow.acked" && r.2 == entity)
            .map(|r| r.3)
            .collect();
        assert!(acked.windows(2).all(|w| w[0] <= w[1]), "{entity} went down");
        let record = &out.records[id as usize];
        if let Some(finish) = record.finish {
            let after = trace
                .rows()
                .filter(|r| r.1 == "flow.acked" && r.2 == entity && r.0 >= finish)
                .map(|r| r.3)
                .next();
            if let Some(after) = after {
                assert_eq!(
                    after, record.size.0 as f64,
                    "{entity} finished but its samples say otherwise"
                );
            }
        }
    }
}

#[test]
fn the_budget_thins_the_trace_evenly() {
    let mut set = vec!["workload.duration=50us", "trace.budget=5000"];
    set.extend(TRACE);
    let out = run("clos128-google-dctcp.toml", &set);
    let (trace, _) = out.trace.as_ref().unwrap();
    assert!(trace.len() <= 5000, "{} rows over the budget", trace.len());
    assert!(trace.thinned() > 0);
    let step = trace.interval().ps();
    assert!(
        trace.rows().all(|r| r.0.ps() % step == 0),
        "a sample off the thinned grid"
    );
}

/// The command line: `--trace` writes `trace.parquet` and says what it holds; bad items are refused with the
/// key they are about.
#[test]
fn the_command_line_writes_and_describes_the_trace() {
    let tmp = TempDir::new("trace-cli");
    let out = tmp.join("out");
    let run = bfcsim_ok(&[
        "run",
        "experiments/bfc-fig7b-two-flows.toml",
        "--trace",
        "ports=to-host:0 queues scheme interval=1us",
        "--out",
        s(&out),
    ]);
    assert!(out.join("trace.parquet").is_file());
    assert!(run.stdout.contains("trace: "), "{}", run.stdout);
    assert!(run.stdout.contains("trace.parquet"), "{}", run.stdout);
    let bad = common::bfcsim(&[
        "run",
        "experiments/bfc-fig7b-two-flows.toml",
        "--trace",
        "ports=core",
        "--out",
        s(&tmp.join("bad")),
    ]);
    assert!(!bad.success());
    assert!(
        bad.stderr
            .contains("trace.ports: no switch port transmits on `core`"),
        "{}",
        bad.stderr
    );
}
