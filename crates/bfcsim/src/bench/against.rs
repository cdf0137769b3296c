//! `bfcsim bench --against OTHER`: this build's speed against another build's (the commit a line of work started
//! from, say) on the same runs, in alternating pairs.
//!
//! On a shared machine whose speed drifts by tens of percent over minutes, two builds compare only in runs close
//! in time: each pair runs both builds on one configuration, one after the other (this build first in every
//! other pair), and the speed-up is taken pair by pair (issue 15 asks for its figures measured so). Both builds
//! run as `bfcsim run FILE --set ...`, each in a process of its own, and the simulation loop's wall time
//! (`wall_seconds`) and the run's counters are read from the `run.json` it wrote: every build since the bench
//! scenarios exist writes both, so builds from before this option can be timed. The two builds must simulate the
//! same run: the counters both report (packet-hops, packets delivered and dropped, marks, retransmissions,
//! timeouts) are compared, and a row whose counters differ says so and fails the bench at the end, as a
//! behaviour change would. The engine's count of events is not compared: a build that no longer schedules events
//! that did nothing (DCQCN's superseded timer events) simulates the same run with fewer. Nor is the run's
//! fingerprint, whose hash changed during issue 15 (93f71fa): the starting commit's runs hash differently.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

use super::{Run, write_csv};

/// The columns of `--csv` with `--against`, in order.
pub const CSV_HEADER: &[&str] = &[
    "scenario",
    "scheme",
    "threads",
    "pairs",
    "packet_hops",
    "this_wall_s",
    "other_wall_s",
    "speedup",
    "speedup_min",
    "speedup_max",
    "this_packet_hops_per_s",
    "other_packet_hops_per_s",
    "same_counters",
];

/// What one build's run reported in its `run.json`.
struct Timed {
    wall_secs: f64,
    /// What says which run it simulated: its counters but the event count.
    counters: Map<String, Value>,
}

/// One configuration timed in pairs.
struct Paired<'a> {
    run: &'a Run<'a>,
    /// Loop wall times of this build and of the other, pair by pair.
    this: Vec<f64>,
    other: Vec<f64>,
    hops: u64,
    /// The first counter the two builds disagree on, if any.
    differs: Option<String>,
}

impl Paired<'_> {
    /// The other build's time over this one's, pair by pair, sorted (above 1: this build is faster).
    fn speedups(&self) -> Vec<f64> {
        let mut r: Vec<f64> = self
            .other
            .iter()
            .zip(&self.this)
            .map(|(o, t)| o / t)
            .collect();
        r.sort_by(f64::total_cmp);
        r
    }
}

/// The median of `v` (not empty).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// A scratch directory for the scenario files and the runs' outputs, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Times every run of `runs` `pairs` times with this build and with the build at `other`, alternating, printing a
/// row per configuration and rewriting `csv` after each. Fails on a build that cannot run, and at the end when
/// the builds' counters differed on some run.
pub(super) fn run(
    runs: &[Run],
    other: &Path,
    pairs: usize,
    csv_path: Option<&Path>,
) -> Result<(), String> {
    if pairs == 0 {
        return Err("--pairs must be at least 1".into());
    }
    if !other.is_file() {
        return Err(format!(
            "--against {}: no such file (the other build's bfcsim binary)",
            other.display()
        ));
    }
    let this = std::env::current_exe().map_err(|e| format!("finding bfcsim: {e}"))?;
    let scratch =
        Scratch(std::env::temp_dir().join(format!("bfcsim-bench-against-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0)
        .map_err(|e| format!("creating {}: {e}", scratch.0.display()))?;
    println!(
        "{:<8} {:<12} {:>7} {:>5} {:>9} {:>9} {:>20} {:>13}  counters",
        "scenario",
        "scheme",
        "threads",
        "pairs",
        "this s",
        "other s",
        "speed-up (range)",
        "packet-hops/s"
    );
    let mut rows = Vec::new();
    for run in runs {
        let file = scenario_file(&scratch.0, run)?;
        let mut row = Paired {
            run,
            this: Vec::new(),
            other: Vec::new(),
            hops: 0,
            differs: None,
        };
        for pair in 0..pairs {
            // Which build goes first alternates, so that neither always runs in the other's wake (a warmer
            // page cache, a CPU that has just clocked down).
            let timed = |exe: &Path, dir: &str| time(exe, run, &file, &scratch.0.join(dir));
            let (a, b) = if pair % 2 == 0 {
                let a = timed(&this, "this")?;
                (a, timed(other, "other")?)
            } else {
                let b = timed(other, "other")?;
                (timed(&this, "this")?, b)
            };
            if row.this.is_empty() {
                row.hops = a
                    .counters
                    .get("packet_hops")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                row.differs = first_difference(&a.counters, &b.counters);
            }
            row.this.push(a.wall_secs);
            row.other.push(b.wall_secs);
        }
        let s = row.speedups();
        println!(
            "{:<8} {:<12} {:>7} {:>5} {:>9.3} {:>9.3} {:>20} {:>13.3e}  {}",
            run.scenario.name,
            run.scheme,
            run.threads,
            pairs,
            median(&row.this),
            median(&row.other),
            format!("{:.3} ({:.3}-{:.3})", median(&s), s[0], s[s.len() - 1]),
            row.hops as f64 / median(&row.this),
            row.differs.as_deref().unwrap_or("same")
        );
        rows.push(row);
        if let Some(path) = csv_path {
            write_csv(path, csv(&rows))?;
        }
    }
    let differ: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            r.differs.as_ref().map(|d| {
                format!(
                    "{} under {} on {} thread(s): {d}",
                    r.run.scenario.name, r.run.scheme, r.run.threads
                )
            })
        })
        .collect();
    if differ.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the two builds simulated different runs:\n{}",
            differ.join("\n")
        ))
    }
}

/// Writes `run`'s scenario file into `dir` (once) and returns its path: the other build reads the scenario as
/// this build defines it, not as its own tree had it.
fn scenario_file(dir: &Path, run: &Run) -> Result<PathBuf, String> {
    let name = Path::new(run.scenario.file)
        .file_name()
        .unwrap_or(run.scenario.file.as_ref());
    let path = dir.join(name);
    if !path.exists() {
        std::fs::write(&path, run.scenario.text)
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(path)
}

/// Runs `run` with the bfcsim at `exe`, its outputs in `out`, and reads what its `run.json` reports.
fn time(exe: &Path, run: &Run, file: &Path, out: &Path) -> Result<Timed, String> {
    let what = format!(
        "{} under {} on {} thread(s) with {}",
        run.scenario.name,
        run.scheme,
        run.threads,
        exe.display()
    );
    let mut command = Command::new(exe);
    command.arg("run").arg(file);
    for s in &run.set {
        command.args(["--set", s]);
    }
    // `run.json` is always written; `summary.json` is the cheapest output every build knows.
    command
        .args(["--outputs", "summary.json", "--out"])
        .arg(out);
    let done = command
        .output()
        .map_err(|e| format!("{what}: starting it: {e}"))?;
    if !done.status.success() {
        let stderr = String::from_utf8_lossy(&done.stderr);
        return Err(format!("{what}: {} ({})", stderr.trim(), done.status));
    }
    let path = out.join("run.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{what}: reading {}: {e}", path.display()))?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{what}: reading {}: {e}", path.display()))?;
    let wall_secs = json
        .get("wall_seconds")
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("{what}: {} has no `wall_seconds`", path.display()))?;
    let mut counters = json
        .get("counters")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| format!("{what}: {} has no `counters`", path.display()))?;
    counters.remove("events");
    Ok(Timed {
        wall_secs,
        counters,
    })
}

/// The first counter both builds report with different values, described; `None` when they agree on all.
fn first_difference(this: &Map<String, Value>, other: &Map<String, Value>) -> Option<String> {
    this.iter().find_map(|(key, a)| {
        let b = other.get(key)?;
        (a != b).then(|| format!("{key} {a} here, {b} in the other build"))
    })
}

/// `rows` as CSV: [`CSV_HEADER`], then one record per configuration.
fn csv(rows: &[Paired]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_HEADER)?;
    for r in rows {
        let s = r.speedups();
        let (this, other) = (median(&r.this), median(&r.other));
        w.write_record([
            r.run.scenario.name.to_string(),
            r.run.scheme.to_string(),
            r.run.threads.to_string(),
            r.this.len().to_string(),
            r.hops.to_string(),
            format!("{this:.3}"),
            format!("{other:.3}"),
            format!("{:.3}", median(&s)),
            format!("{:.3}", s[0]),
            format!("{:.3}", s[s.len() - 1]),
            format!("{:.0}", r.hops as f64 / this),
            format!("{:.0}", r.hops as f64 / other),
            r.differs.is_none().to_string(),
        ])?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}
