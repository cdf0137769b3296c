//! Issue 11: a sweep killed half-way leaves only complete results marked complete, and starting it again
//! finishes it without simulating the runs that had finished. Issue 48: processes sharing a store split its runs.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::{TempDir, bfcsim, s};

const EXPERIMENT: &str = "name = \"resume\"\n[scheme]\nname = \"bfc\"\n[workload]\ncdf = \"hadoop\"\n\
                          arrivals = \"lognormal\"\nload = 0.5\nload_on = \"core\"\nduration = \"1ms\"\n";
const LOADS: &str = "workload.load=0.30,0.35,0.40,0.45,0.50,0.55";

/// The run directories under `runs`, each with the time its completion marker was written (if it has one).
/// A run being written is in a hidden directory beside its own until it is complete, and is not one of them.
fn on_disk(runs: &Path) -> BTreeMap<PathBuf, Option<SystemTime>> {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .map(|p| {
            let done = std::fs::metadata(p.join("done.json")).ok();
            let written = done.map(|m| m.modified().unwrap());
            (p, written)
        })
        .collect()
}

/// `bfcsim run` of the sweep over [`LOADS`], one run at a time, writing `outputs` under `out`.
fn sweep<'a>(experiment: &'a Path, out: &'a Path, outputs: &'a str) -> [&'a str; 10] {
    [
        "run",
        s(experiment),
        "--sweep",
        LOADS,
        "--jobs",
        "1",
        "--outputs",
        outputs,
        "--out",
        s(out),
    ]
}

#[test]
fn a_killed_sweep_resumes_without_recomputing_finished_runs() {
    let dir = TempDir::new("resume");
    let experiment = dir.write("resume.toml", EXPERIMENT);
    let out = dir.join("out");
    let runs = out.join("runs");
    let args = sweep(&experiment, &out, "fct.csv,summary.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bfcsim"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the bfcsim binary");
    // Kill it once two of the six runs have finished (and while it is still going).
    let started = Instant::now();
    loop {
        let finished = on_disk(&runs).values().filter(|d| d.is_some()).count();
        if finished >= 2 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it could be killed"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no run finished"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let killed = on_disk(&runs);
    let finished: BTreeMap<&PathBuf, SystemTime> = killed
        .iter()
        .filter_map(|(p, d)| d.map(|t| (p, t)))
        .collect();
    assert!(
        finished.len() >= 2 && finished.len() < 6,
        "{} finished",
        finished.len()
    );
    // What is marked complete is complete, and the run in progress left no directory of its own.
    for p in finished.keys() {
        for f in ["digest.json", "summary.json", "run.json", "fct.csv"] {
            assert!(p.join(f).exists(), "{} lacks {f}", p.display());
        }
    }
    assert_eq!(killed.len(), finished.len(), "{killed:?}");
    assert!(
        !out.join("sweep.csv").exists(),
        "the killed sweep wrote sweep.csv"
    );

    let again = bfcsim(&args);
    assert!(again.success(), "{}", again.stderr);
    let reused = format!(
        "{} of 6 runs were reused (finished before, or by another process sharing the store)",
        finished.len()
    );
    assert!(again.stderr.contains(&reused), "{}", again.stderr);
    assert_eq!(again.stdout.lines().count(), 7, "{}", again.stdout);
    let after = on_disk(&runs);
    assert_eq!(after.len(), 6, "{after:?}");
    assert!(after.values().all(Option::is_some), "{after:?}");
    // The runs that had finished were not written again.
    for (p, t) in finished {
        assert_eq!(after[p], Some(t), "{} was run again", p.display());
    }
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "{csv}");
}

/// Two sweeps started together on one store split its runs: each run is simulated once, by one of them, and the
/// other reads it; both print every point.
#[test]
fn two_processes_sharing_a_store_simulate_each_run_once() {
    let dir = TempDir::new("shared-store");
    let experiment = dir.write("resume.toml", EXPERIMENT);
    let out = dir.join("out");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_bfcsim"))
            .args(sweep(&experiment, &out, "summary.json"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the bfcsim binary")
    };
    let (a, b) = (spawn(), spawn());
    let mut simulated = 0;
    for child in [a, b] {
        let done = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{stderr}");
        let stdout = String::from_utf8_lossy(&done.stdout);
        assert_eq!(
            stdout.lines().count(),
            1 + 6,
            "a header and six points:\n{stdout}"
        );
        let reused = stderr
            .lines()
            .find_map(|l| l.strip_suffix(" of 6 runs were reused (finished before, or by another process sharing the store)"))
            .map_or(0, |n| n.parse::<usize>().unwrap());
        simulated += 6 - reused;
    }
    assert_eq!(
        simulated, 6,
        "every run simulated exactly once between the two"
    );
    let runs = on_disk(&out.join("runs"));
    assert_eq!(runs.len(), 6);
    assert!(runs.values().all(Option::is_some), "{runs:?}");
}

/// Issue 72: a finished run whose files were truncated or edited is not reused: it is simulated again, with a
/// warning naming the file.
#[test]
fn a_finished_run_whose_files_changed_is_simulated_again() {
    let dir = TempDir::new("resume-tampered");
    let experiment = dir.write(
        "small.toml",
        "name = \"small\"\n[topology]\nkind = \"star\"\nhosts = 4\n[workload]\ncdf = \"google\"\n\
         load = 0.5\nload_on = \"host\"\nduration = \"20us\"\n",
    );
    let out = dir.join("out");
    let runs = out.join("runs");
    let args = [
        "run",
        s(&experiment),
        "--sweep",
        "workload.load=0.3,0.4",
        "--jobs",
        "1",
        "--outputs",
        "summary.json",
        "--out",
        s(&out),
    ];
    let first = bfcsim(&args);
    assert!(first.success(), "{}", first.stderr);
    let done = on_disk(&runs);
    assert_eq!(done.len(), 2, "{done:?}");
    let mut dirs = done.keys();
    let (truncated, edited) = (dirs.next().unwrap(), dirs.next().unwrap());
    let summary = truncated.join("summary.json");
    let text = std::fs::read_to_string(&summary).unwrap();
    std::fs::write(&summary, &text[..text.len() / 2]).unwrap();
    let digest = edited.join("digest.json");
    let text = std::fs::read_to_string(&digest).unwrap();
    std::fs::write(&digest, text.replacen("\"flows\": ", "\"flows\": 1", 1)).unwrap();

    let again = bfcsim(&args);
    assert!(again.success(), "{}", again.stderr);
    for path in [&summary, &digest] {
        assert!(
            again.stderr.contains(&format!(
                "warning: {} changed since its run wrote it",
                path.display()
            )),
            "{}",
            again.stderr
        );
    }
    assert!(!again.stderr.contains("were reused"), "{}", again.stderr);
    let after = on_disk(&runs);
    for p in [truncated, edited] {
        assert!(after[p] > done[p], "{} was not run again", p.display());
    }
    // Whole again: reused the next time.
    let third = bfcsim(&args);
    assert!(
        third.stderr.contains("2 of 2 runs were reused"),
        "{}",
        third.stderr
    );
}
