//! Issue 72, item 7: what a run accepted without a word. An overloaded workload, an empty one, and a run split
//! over fewer threads than `run.threads` asked for each say so (stderr, and `run.json`'s `warnings`), and
//! `run.json` records the threads that ran. (A priority group no switch can have is refused by the flow-file
//! parser: `bfcsim-workload`'s `rejects_non_numeric_fields`.)

mod common;

use common::{TempDir, bfcsim, s};

/// Four hosts on one switch, Google sizes for 20 µs, with `set`; the run and its `run.json`.
fn small(name: &str, set: &[&str]) -> (common::Run, String) {
    let dir = TempDir::new(name);
    let experiment = dir.join("small.toml");
    std::fs::write(
        &experiment,
        "name = \"small\"\n[topology]\nkind = \"star\"\nhosts = 4\n[workload]\ncdf = \"google\"\n\
         load = 0.5\nload_on = \"host\"\nduration = \"20us\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let mut args = vec!["run", s(&experiment), "--out", s(&out)];
    for o in set {
        args.extend(["--set", o]);
    }
    let run = bfcsim(&args);
    let json = std::fs::read_to_string(out.join("run.json")).unwrap_or_default();
    (run, json)
}

#[test]
fn an_overloaded_workload_is_named() {
    let (run, json) = small("overload", &["workload.load=1.5"]);
    assert!(run.success(), "{}", run.stderr);
    let said = "workload.load = 1.5 offers more than the `host` links carry";
    assert!(
        run.stderr.contains(&format!("warning: {said}")),
        "{}",
        run.stderr
    );
    assert!(json.contains(said), "{json}");
    let (run, json) = small("load", &[]);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    assert!(!json.contains("\"warnings\""), "{json}");
}

#[test]
fn an_empty_workload_says_that_nothing_is_offered() {
    let (run, _) = small("empty", &["workload.load=0"]);
    assert!(run.success(), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "offered: nothing (workload.load = 0, and no incast, group, long-lived or collective flows)"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("warning: the run has no flows"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_run_on_fewer_threads_than_asked_says_so_and_records_them() {
    // One switch: nothing to split.
    let (run, json) = small("threads", &["run.threads=2"]);
    assert!(run.success(), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("warning: run.threads = 2, but the run used 1"),
        "{}",
        run.stderr
    );
    assert!(json.contains("\n  \"threads\": 1,"), "{json}");
}
