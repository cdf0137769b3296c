//! Issue 11: a sweep killed half-way leaves only complete results marked complete, and starting it again
//! finishes it without simulating the runs that had finished.

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

#[test]
fn a_killed_sweep_resumes_without_recomputing_finished_runs() {
    let dir = TempDir::new("resume");
    let experiment = dir.write("resume.toml", EXPERIMENT);
    let out = dir.join("out");
    let runs = out.join("runs");
    let args = [
        "run",
        s(&experiment),
        "--sweep",
        LOADS,
        "--jobs",
        "1",
        "--outputs",
        "fct.csv,summary.json",
        "--out",
        s(&out),
    ];
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
        "{} of 6 runs had finished before and were reused",
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
