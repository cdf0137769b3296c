//! `bfcsim bench`: speed on the reference scenario (GUIDE §4 CLOS-128, Google workload at 60% + 5% incast,
//! DCTCP acknowledging every packet), reported as events/s, packet-hops/s, wall time and peak memory.

use std::path::Path;

use bfcsim_core::Time;

use crate::experiment::parse_experiment;
use crate::runner::{prepare, simulate};

/// The benchmark scenario's experiment file.
pub const CLOS128_BENCH: &str =
    include_str!("../../../experiments/bench-clos128-google-incast-dctcp.toml");

/// Resets the peak-memory mark, so that each scenario reports its own (Linux; a no-op elsewhere).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process, in bytes (Linux `VmHWM`).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs the benchmark and prints one line per scenario and thread count (`threads`; empty: one thread, then as
/// many as the machine has cores, `run.threads`).
pub fn run(duration: &str, scaling: bool, threads: &[usize]) -> Result<(), String> {
    Time::parse(duration).map_err(|e| e.to_string())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match threads {
        [] if cores > 1 => vec![1, cores],
        [] => vec![1],
        t => t.to_vec(),
    };
    if let Some(i) = (1..threads.len()).find(|&i| threads[..i].contains(&threads[i])) {
        return Err(format!("--threads lists {} twice", threads[i]));
    }
    let mut scenarios = vec![(
        "CLOS-128 google 60%+5% incast, DCTCP",
        vec![format!("workload.duration={duration}")],
    )];
    if scaling {
        scenarios.push((
            "leaf-spine 256 hosts (16 ToR x 16, 8 spines, 2:1), same load",
            vec![
                format!("workload.duration={duration}"),
                "topology.tors=16".into(),
            ],
        ));
    }
    println!(
        "{:<62} {:>7} {:>9} {:>10} {:>12} {:>14} {:>10} {:>9}",
        "scenario",
        "threads",
        "flows",
        "wall s",
        "events/s",
        "packet-hops/s",
        "peak MiB",
        "sim time"
    );
    let runs = scenarios
        .iter()
        .flat_map(|s| threads.iter().map(move |&t| (s, t)));
    for ((name, overrides), threads) in runs {
        reset_peak_rss();
        let mut overrides = overrides.clone();
        overrides.push(format!("run.threads={threads}"));
        let config = parse_experiment(Path::new("bench.toml"), CLOS128_BENCH, &overrides)
            .map_err(|e| e.to_string())?;
        let prepared = prepare(&config, Path::new("."))?;
        let flows = prepared.flows.len();
        let out = simulate(&config, prepared, |_| {})?;
        if !out.violations.is_empty() {
            return Err(format!(
                "{name}: invariants violated: {}",
                out.violations.join("; ")
            ));
        }
        let c = out.counters;
        println!(
            "{:<62} {:>7} {:>9} {:>10.2} {:>12.3e} {:>14.3e} {:>10.0} {:>9}",
            name,
            threads,
            flows,
            out.wall_secs,
            c.events as f64 / out.wall_secs,
            c.hops as f64 / out.wall_secs,
            peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64,
            out.end.to_string()
        );
    }
    Ok(())
}
