//! `[trace]` (`bfcsim::trace`): recording time series changes nothing of the run (its fingerprint, flows and
//! summary are those of the run without it), the trace is the same for any number of threads, it stays within
//! its budget, and its values agree with what the run counted (bytes delivered to the flows, the queue a port
//! held).

mod common;

use bfcsim::runner::Outcome;
use common::{TempDir, bfcsim, bfcsim_ok, run_experiment, s};

fn run(name: &str, set: &[&str]) -> Outcome {
    run_experiment(name, set, &[])
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
    let trace = &outcome.trace.as_ref().expect("traced").series;
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
    let trace = &out.trace.as_ref().unwrap().series;
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
    let trace = &out.trace.as_ref().unwrap().series;
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

/// Checks `events` against the Chrome trace-event format as ui.perfetto.dev reads it: every event has a name,
/// a phase, integer process and thread ids, and a time (metadata excepted); slices a non-negative duration,
/// counters numeric values, instants a scope; every async begin has its end, later, with the same name.
fn check_format(events: &[serde_json::Value]) {
    let mut open: std::collections::BTreeMap<u64, (f64, String)> = Default::default();
    for e in events {
        let ph = e["ph"].as_str().expect("a phase");
        assert!(e["name"].is_string(), "no name: {e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "pid and tid: {e}");
        if ph == "M" {
            assert!(
                e["args"]["name"].is_string(),
                "metadata without a name: {e}"
            );
            continue;
        }
        let ts = e["ts"].as_f64().expect("a time");
        assert!(ts >= 0.0, "{e}");
        match ph {
            "X" => assert!(e["dur"].as_f64().is_some_and(|d| d >= 0.0), "{e}"),
            "C" => assert!(
                e["args"]
                    .as_object()
                    .is_some_and(|a| a.values().all(|v| v.is_number())),
                "{e}"
            ),
            "i" => assert!(matches!(e["s"].as_str(), Some("t" | "p" | "g")), "{e}"),
            "b" => {
                let id = e["id"].as_u64().expect("an async id");
                assert!(
                    open.insert(id, (ts, e["name"].as_str().unwrap_or("").to_string()))
                        .is_none(),
                    "{e} begun twice"
                );
            }
            "e" => {
                let id = e["id"].as_u64().expect("an async id");
                let (begun, name) = open.remove(&id).expect("an end without a begin");
                assert!(ts >= begun && e["name"] == name.as_str(), "{e}");
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    assert!(open.is_empty(), "{} async slices never end", open.len());
}

fn count(events: &[serde_json::Value], ph: &str, cat: &str) -> usize {
    events
        .iter()
        .filter(|e| e["ph"] == ph && e["cat"].as_str().unwrap_or("") == cat)
        .count()
}

/// `--trace-view`'s timeline is in the format and holds exactly the run's pauses, drops, timeouts and flows.
#[test]
fn the_timeline_holds_the_runs_events() {
    // BFC: a slice per pause; every PAUSE frame pauses one queue (no frame is lost).
    let out = run(
        "clos128-google-incast-bfc.toml",
        &[
            "workload.duration=100us",
            "trace.view=true",
            "run.threads=2",
        ],
    );
    let r = out.trace.as_ref().unwrap();
    let events = bfcsim::trace_view::events(r.view.as_ref().unwrap(), &r.series, &out.records);
    check_format(&events);
    let fc = out.summary.flow_control.as_ref().unwrap();
    assert!(fc.pause_frames > 0);
    assert_eq!(count(&events, "X", "pause") as u64, fc.pause_frames);
    let resumed = events
        .iter()
        .filter(|e| e["cat"] == "pause" && e["args"]["resumed"] == true)
        .count();
    assert_eq!(resumed as u64, fc.resume_frames);
    assert_eq!(count(&events, "b", "flow"), out.records.len());
    assert!(count(&events, "C", "") > 0, "no counters");
    // The same events on one thread.
    let one = run(
        "clos128-google-incast-bfc.toml",
        &[
            "workload.duration=100us",
            "trace.view=true",
            "run.threads=1",
        ],
    );
    let r1 = one.trace.as_ref().unwrap();
    assert_eq!(
        bfcsim::trace_view::events(r1.view.as_ref().unwrap(), &r1.series, &one.records),
        events
    );

    // DCTCP through small buffers: every drop counted at its port, an instant per timeout.
    let out = run(
        "clos128-google-dctcp.toml",
        &[
            "workload.duration=100us",
            "switch.buffer=150KB",
            "trace.view=true",
            "trace.buffers=true",
        ],
    );
    let r = out.trace.as_ref().unwrap();
    let events = bfcsim::trace_view::events(r.view.as_ref().unwrap(), &r.series, &out.records);
    check_format(&events);
    assert!(out.summary.drops.total() > 0, "no drops to show");
    let dropped: u64 = events
        .iter()
        .filter(|e| e["cat"] == "drop")
        .map(|e| e["args"]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(dropped, out.summary.drops.total());
    assert_eq!(count(&events, "i", "timeout") as u64, out.counters.timeouts);
}

/// The command line writes the file the user names, which parses as JSON.
#[test]
fn trace_view_writes_the_file() {
    let tmp = TempDir::new("trace-view");
    let file = tmp.join("t.json");
    let run = bfcsim_ok(&[
        "run",
        "experiments/bfc-fig7b-two-flows.toml",
        "--set",
        "run.max_time=100us",
        "--trace-view",
        s(&file),
        "--out",
        s(&tmp.join("out")),
    ]);
    assert!(run.stdout.contains("ui.perfetto.dev"), "{}", run.stdout);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    check_format(json["traceEvents"].as_array().unwrap());
}

/// Issue 72: an unwritable `--trace-view` path was found only after the whole simulation, and `replay` ignored
/// the option.
#[test]
fn trace_view_checks_its_path_first_and_replay_writes_it_too() {
    let tmp = TempDir::new("trace-view-path");
    let missing = tmp.join("no/such/dir/t.json");
    let run = bfcsim(&[
        "run",
        "experiments/clos128-google-dctcp.toml",
        "--trace-view",
        s(&missing),
        "--out",
        s(&tmp.join("out")),
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "--trace-view {}: cannot write in {}",
            missing.display(),
            missing.parent().unwrap().display()
        )),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("flows, scheme"),
        "it simulated first: {}",
        run.stderr
    );
    let file = tmp.join("replay.json");
    let dir = "data/reference/ns3-perf-k8";
    let replay = bfcsim_ok(&[
        "replay",
        "--topology",
        &format!("{dir}/topology.txt"),
        "--flows",
        &format!("{dir}/flow.txt"),
        "--scheme",
        "dctcp",
        "--set",
        "run.max_time=200us",
        "--trace-view",
        s(&file),
        "--out",
        s(&tmp.join("replay")),
    ]);
    assert!(
        replay.stdout.contains("ui.perfetto.dev"),
        "{}",
        replay.stdout
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    check_format(json["traceEvents"].as_array().unwrap());
}

/// Issue 72: `--trace-view FILE` wrote the timeline twice (FILE and `OUT/trace.json`, 132 MB each in the README's
/// example) through a copy read whole into memory, and built every event in memory before writing (1.8 GB at
/// its peak). FILE is now a second name of the one file the run wrote, and the events are made and written one
/// at a time: an emitter that stops at the fifth event is called five times.
#[test]
fn the_timeline_is_written_once_event_by_event() {
    let tmp = TempDir::new("trace-view-once");
    let file = tmp.join("t.json");
    let out = tmp.join("out");
    let run_it = bfcsim_ok(&[
        "run",
        "experiments/clos128-google-dctcp.toml",
        "--set",
        "workload.duration=50us",
        "--trace-view",
        s(&file),
        "--out",
        s(&out),
    ]);
    assert!(
        run_it.stdout.contains("ui.perfetto.dev"),
        "{}",
        run_it.stdout
    );
    let (a, b) = (
        std::fs::metadata(&file).unwrap(),
        std::fs::metadata(out.join("trace.json")).unwrap(),
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "two files");
    }
    assert_eq!(a.len(), b.len());

    let r = run(
        "clos128-google-dctcp.toml",
        &["workload.duration=50us", "trace.view=true"],
    );
    let t = r.trace.as_ref().unwrap();
    let mut calls = 0;
    let stopped =
        bfcsim::trace_view::stream(t.view.as_ref().unwrap(), &t.series, &r.records, &mut |_| {
            calls += 1;
            if calls == 5 { Err("stop") } else { Ok(()) }
        });
    assert_eq!(stopped, Err("stop"));
    assert_eq!(calls, 5);
}
