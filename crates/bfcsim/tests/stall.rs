//! Issue 16: a run that stops making progress ends with a diagnosis and a non-zero exit, never a hang. The
//! fabric of `experiments/pfc-ring-deadlock.toml` deadlocks under PFC (a cyclic buffer dependency); the run
//! names the cycle of paused ports, exits with status 5 and still writes its outputs, `run.json` saying why
//! it stopped; in a sweep it counts as an unsound run (status 3).

mod common;

use common::{TempDir, bfcsim, s, workspace_root};

#[test]
fn a_pfc_deadlock_ends_with_the_cycle_named_and_status_5() {
    let dir = TempDir::new("stall");
    let out = dir.join("out");
    let experiment = workspace_root().join("experiments/pfc-ring-deadlock.toml");
    let run = bfcsim(&["run", s(&experiment), "--out", s(&out)]);
    assert_eq!(run.code, Some(5), "{}", run.stderr);
    let ring = "switch 0 port 0 (to switch 1) -> switch 1 port 1 (to switch 2) -> switch 2 port 1 (to switch 3) \
                -> switch 3 port 1 (to switch 4) -> switch 4 port 1 (to switch 5) -> switch 5 port 1 (to switch \
                6) -> switch 6 port 1 (to switch 0) -> switch 0 port 0 (to switch 1); 21 started flows unfinished";
    assert!(
        run.stderr.contains("error: the run stalled at ")
            && run.stderr.contains("deadlock: a cyclic buffer dependency")
            && run.stderr.contains(ring),
        "{}",
        run.stderr
    );
    let info = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(
        info.contains("\"stalled\": \"the run stalled at "),
        "{info}"
    );
}

#[test]
fn a_stalled_run_in_a_sweep_counts_as_unsound() {
    let dir = TempDir::new("stall-sweep");
    let out = dir.join("out");
    let experiment = workspace_root().join("experiments/pfc-ring-deadlock.toml");
    let run = bfcsim(&[
        "run",
        s(&experiment),
        "--sweep",
        "seed=1,2",
        "--out",
        s(&out),
    ]);
    assert_eq!(run.code, Some(3), "{}\n{}", run.stdout, run.stderr);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "violations").unwrap();
    for line in lines {
        assert_eq!(line.split(',').nth(col), Some("1"), "{csv}");
    }
}
