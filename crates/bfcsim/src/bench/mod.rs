//! `bfcsim bench`: simulator speed on the scenarios users run, under the schemes they run, on one thread and on
//! several. Each run reports wall time, events/s, packet-hops/s (every packet, data, ACK and control, sent over
//! one link), instructions per packet-hop where a hardware counter can be opened, peak memory and the simulated
//! end; `--csv` writes the same rows for BENCHMARKS.md's tables. Only the simulation loop is timed and counted
//! (not workload generation, the ideal FCTs or the summary), so the numbers follow the engine. Each run is
//! measured in a process of its own (`bfcsim bench --measure`), so that its peak memory is its own and not
//! what the allocator kept from the runs before it. `--against` times another build on the same runs instead,
//! in alternating pairs (module `against`).

use std::path::{Path, PathBuf};
use std::process::Command;

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

use crate::experiment::{ExperimentConfig, parse_experiment};
use crate::runner::{prepare, simulate_probed};

mod against;

pub use against::CSV_HEADER as AGAINST_CSV_HEADER;

/// A benchmark scenario: an experiment file built into the binary, and the overrides that make it the scenario.
pub struct Scenario {
    /// The name `--scenario` takes.
    pub name: &'static str,
    /// One line for `--help` and error messages.
    pub about: &'static str,
    /// Where the experiment file is in the repository (its name in error messages).
    pub file: &'static str,
    /// The experiment file's text.
    pub text: &'static str,
    /// `--set` overrides applied to it.
    pub set: &'static [&'static str],
}

/// The reference scenario of issue 2, the one plain `bfcsim bench` runs.
const CLOS128: &str =
    include_str!("../../../../experiments/bench-clos128-google-incast-dctcp.toml");

/// Every scenario; the first three are the matrix `--all` runs (issue 15).
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "clos128",
        about: "CLOS-128 (8 ToRs x 16 hosts, 8 spines, 2:1), Google 60% + 5% 100->1 incast, 10 ms",
        file: "experiments/bench-clos128-google-incast-dctcp.toml",
        text: CLOS128,
        set: &[],
    },
    Scenario {
        name: "ft128",
        about: "k=8 fat tree (128 hosts, 1:1), web search at 30% of the host links, 10 ms",
        file: "experiments/bench-ft128-websearch.toml",
        text: include_str!("../../../../experiments/bench-ft128-websearch.toml"),
        set: &[],
    },
    Scenario {
        name: "ft1024",
        about: "k=16 fat tree (1024 hosts, 1:1), web search at 30% of the host links, 2 ms",
        file: "experiments/bench-ft1024-websearch.toml",
        text: include_str!("../../../../experiments/bench-ft1024-websearch.toml"),
        set: &[],
    },
    Scenario {
        name: "clos256",
        about: "CLOS-128's leaf-spine twice the size (16 ToRs x 16 hosts, 8 spines), same load: memory growth",
        file: "experiments/bench-clos128-google-incast-dctcp.toml",
        text: CLOS128,
        set: &["topology.tors=16"],
    },
];

/// The scenarios of the matrix (`--all`).
pub const MATRIX_SCENARIOS: &[&str] = &["clos128", "ft128", "ft1024"];

/// The schemes of the matrix (`--all`): the deployed end-to-end schemes (DCQCN and HPCC over PFC), BFC, and
/// the receiver-driven ones.
pub const MATRIX_SCHEMES: &[&str] = &["dctcp", "bfc", "hpcc", "dcqcn", "expresspass", "homa"];

/// What `bfcsim bench` was asked to run.
pub struct Options {
    /// Scenario names; empty: `clos128`, or the matrix's with `all`.
    pub scenarios: Vec<String>,
    /// Scheme names; empty: `dctcp`, or the matrix's with `all`.
    pub schemes: Vec<String>,
    /// Default the scenarios and schemes to the whole matrix.
    pub all: bool,
    /// Add `clos256` (the older `--scaling`).
    pub scaling: bool,
    /// Thread counts; empty: one, then the machine's cores.
    pub threads: Vec<usize>,
    /// Arrival window for every scenario, instead of each one's own.
    pub duration: Option<String>,
    /// Where to write the rows as CSV.
    pub csv: Option<PathBuf>,
    /// Measure the one run the options name in this process and print it as JSON (what the bench's own
    /// processes are asked to do).
    pub measure: bool,
    /// Another build of bfcsim to time on the same runs, in alternating pairs with this one (module `against`).
    pub against: Option<PathBuf>,
    /// Pairs of runs per configuration with `against`.
    pub pairs: usize,
}

/// What one run measured, as its process reports it.
#[derive(Serialize, Deserialize)]
struct Measured {
    flows: usize,
    events: u64,
    hops: u64,
    /// The simulation loop's wall time.
    wall_secs: f64,
    /// Instructions the loop retired, where a hardware counter could be opened.
    instructions: Option<u64>,
    /// The process's peak resident memory.
    peak_bytes: Option<u64>,
    /// The simulated time at the end.
    end: Time,
    /// Why the numbers are not those of a sound run (a stall, broken invariants); empty when they are.
    problem: String,
}

/// One row of the table: a run and what it measured.
struct Row {
    scenario: &'static str,
    scheme: String,
    threads: usize,
    m: Measured,
}

impl Row {
    fn events_per_sec(&self) -> f64 {
        self.m.events as f64 / self.m.wall_secs
    }

    fn hops_per_sec(&self) -> f64 {
        self.m.hops as f64 / self.m.wall_secs
    }

    fn instructions_per_hop(&self) -> Option<f64> {
        self.m
            .instructions
            .map(|i| i as f64 / self.m.hops.max(1) as f64)
    }

    fn peak_mib(&self) -> Option<f64> {
        self.m.peak_bytes.map(|b| b as f64 / (1 << 20) as f64)
    }
}

/// Peak resident memory of this process, in bytes (Linux `VmHWM`).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The items of `asked` (default `default`), each known to `known`; an unknown one is an error naming `what`
/// and listing the valid names. Each item once, in the order given.
fn pick<'a>(
    what: &str,
    asked: &'a [String],
    default: &[&'a str],
    known: &[&str],
) -> Result<Vec<&'a str>, String> {
    let mut picked: Vec<&str> = Vec::new();
    let list: Vec<&str> = if asked.is_empty() {
        default.to_vec()
    } else {
        asked.iter().map(|s| s.trim()).collect()
    };
    for name in list {
        if !known.contains(&name) {
            return Err(format!(
                "unknown {what} `{name}`, expected one of {}",
                known.join(", ")
            ));
        }
        if picked.contains(&name) {
            return Err(format!("--{what} lists {name} twice"));
        }
        picked.push(name);
    }
    Ok(picked)
}

/// One run of the bench: a scenario under a scheme on a number of threads.
struct Run<'a> {
    scenario: &'static Scenario,
    scheme: &'a str,
    threads: usize,
    /// The `--set` overrides that make the scenario's file this run.
    set: Vec<String>,
    config: ExperimentConfig,
}

/// The runs `options` ask for, each configuration read (so a mistake cannot end a long bench part-way).
fn plan(options: &Options) -> Result<Vec<Run<'_>>, String> {
    let duration = match &options.duration {
        Some(d) => {
            Time::parse(d).map_err(|e| format!("--duration {d}: {e}"))?;
            Some(format!("workload.duration={d}"))
        }
        None => None,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match options.threads.as_slice() {
        [] if cores > 1 => vec![1, cores],
        [] => vec![1],
        t => t.to_vec(),
    };
    if let Some(i) = (1..threads.len()).find(|&i| threads[..i].contains(&threads[i])) {
        return Err(format!("--threads lists {} twice", threads[i]));
    }
    let (default_scenarios, default_schemes) = if options.all {
        (MATRIX_SCENARIOS, MATRIX_SCHEMES)
    } else {
        (&["clos128"][..], &["dctcp"][..])
    };
    let names: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
    let mut scenarios = pick("scenario", &options.scenarios, default_scenarios, &names)?;
    if options.scaling && !scenarios.contains(&"clos256") {
        scenarios.push("clos256");
    }
    let schemes = pick(
        "scheme",
        &options.schemes,
        default_schemes,
        &crate::presets::names(),
    )?;
    let mut runs = Vec::new();
    for scenario in SCENARIOS.iter().filter(|s| scenarios.contains(&s.name)) {
        for &scheme in &schemes {
            for &threads in &threads {
                let mut set: Vec<String> = scenario.set.iter().map(|s| s.to_string()).collect();
                set.extend(duration.clone());
                set.push(format!("scheme.name={scheme}"));
                set.push(format!("run.threads={threads}"));
                let config = parse_experiment(Path::new(scenario.file), scenario.text, &set)
                    .map_err(|e| e.to_string())?;
                runs.push(Run {
                    scenario,
                    scheme,
                    threads,
                    set,
                    config,
                });
            }
        }
    }
    Ok(runs)
}

/// Runs every scenario × scheme × thread count of `options`, each in a process of its own, printing a line per
/// run as it ends and rewriting `--csv` after each (so a bench stopped part-way leaves the runs it finished).
/// Fails on a bad option before anything runs, and at the end when a run stalled or broke an invariant (its
/// row says so). With `options.measure`, measures the one run they name here instead and prints it as JSON.
pub fn run(options: &Options) -> Result<(), String> {
    let runs = plan(options)?;
    if let Some(other) = &options.against {
        if options.measure {
            return Err("--measure and --against do not go together".into());
        }
        return against::run(&runs, other, options.pairs, options.csv.as_deref());
    }
    if options.measure {
        let [run] = runs.as_slice() else {
            return Err(
                "--measure measures one run: name one scenario, scheme and thread count".into(),
            );
        };
        let m = measure(run)?;
        println!("{}", serde_json::to_string(&m).map_err(|e| e.to_string())?);
        return Ok(());
    }
    println!(
        "{:<8} {:<12} {:>7} {:>9} {:>8} {:>10} {:>13} {:>10} {:>8} {:>14}",
        "scenario",
        "scheme",
        "threads",
        "flows",
        "wall s",
        "events/s",
        "packet-hops/s",
        "instr/hop",
        "peak MiB",
        "sim time"
    );
    let mut rows = Vec::new();
    for run in &runs {
        let row = Row {
            scenario: run.scenario.name,
            scheme: run.scheme.to_string(),
            threads: run.threads,
            m: measure_apart(run, options.duration.as_deref())?,
        };
        println!(
            "{:<8} {:<12} {:>7} {:>9} {:>8.2} {:>10.3e} {:>13.3e} {:>10} {:>8} {:>14}{}",
            row.scenario,
            row.scheme,
            row.threads,
            row.m.flows,
            row.m.wall_secs,
            row.events_per_sec(),
            row.hops_per_sec(),
            row.instructions_per_hop()
                .map_or("n/a".into(), |i| format!("{i:.0}")),
            row.peak_mib().map_or("n/a".into(), |m| format!("{m:.0}")),
            row.m.end.to_string(),
            if row.m.problem.is_empty() {
                String::new()
            } else {
                format!("  ({})", row.m.problem)
            }
        );
        rows.push(row);
        if let Some(path) = &options.csv {
            write_csv(path, csv(&rows))?;
        }
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.m.problem.is_empty())
        .map(|r| {
            format!(
                "{} under {} on {} thread(s): {}",
                r.scenario, r.scheme, r.threads, r.m.problem
            )
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n"))
    }
}

/// Measures `run` in this process.
fn measure(run: &Run) -> Result<Measured, String> {
    let prepared = prepare(&run.config, Path::new("."))?;
    let flows = prepared.flows.len();
    let mut counter = counter::Instructions::open();
    let out = simulate_probed(&run.config, prepared, |_| {}, &mut counter)?;
    let mut problems: Vec<String> = out.stalled.into_iter().collect();
    if !out.violations.is_empty() {
        problems.push(format!(
            "invariants violated: {}",
            out.violations.join("; ")
        ));
    }
    Ok(Measured {
        flows,
        events: out.counters.events,
        hops: out.counters.hops,
        wall_secs: out.wall_secs,
        instructions: counter.count(),
        peak_bytes: peak_rss(),
        end: out.end,
        problem: problems.join("; "),
    })
}

/// Measures `run` in a new process of this program (`bfcsim bench --measure`), whose peak memory is the run's.
fn measure_apart(run: &Run, duration: Option<&str>) -> Result<Measured, String> {
    let what = format!(
        "{} under {} on {} thread(s)",
        run.scenario.name, run.scheme, run.threads
    );
    let exe = std::env::current_exe().map_err(|e| format!("{what}: finding bfcsim: {e}"))?;
    let mut command = Command::new(exe);
    command.args([
        "bench",
        "--measure",
        "--scenario",
        run.scenario.name,
        "--scheme",
        run.scheme,
        "--threads",
        &run.threads.to_string(),
    ]);
    if let Some(d) = duration {
        command.args(["--duration", d]);
    }
    let out = command
        .output()
        .map_err(|e| format!("{what}: starting bfcsim: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr
            .trim()
            .strip_prefix("error: ")
            .unwrap_or(stderr.trim());
        return Err(format!("{what}: {why} ({})", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("{what}: reading its measurement: {e}"))
}

/// The columns of `--csv`, in order.
pub const CSV_HEADER: &[&str] = &[
    "scenario",
    "scheme",
    "threads",
    "flows",
    "events",
    "packet_hops",
    "wall_s",
    "events_per_s",
    "packet_hops_per_s",
    "instructions_per_hop",
    "peak_mib",
    "sim_end_s",
    "problem",
];

/// `rows` as CSV: [`CSV_HEADER`], then one record per run.
fn csv(rows: &[Row]) -> Result<Vec<u8>, csv::Error> {
    let opt = |v: Option<f64>, digits: usize| v.map_or(String::new(), |v| format!("{v:.digits$}"));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_HEADER)?;
    for r in rows {
        w.write_record([
            r.scenario.to_string(),
            r.scheme.clone(),
            r.threads.to_string(),
            r.m.flows.to_string(),
            r.m.events.to_string(),
            r.m.hops.to_string(),
            format!("{:.3}", r.m.wall_secs),
            format!("{:.0}", r.events_per_sec()),
            format!("{:.0}", r.hops_per_sec()),
            opt(r.instructions_per_hop(), 1),
            opt(r.peak_mib(), 1),
            format!("{:.9}", r.m.end.secs_f64()),
            r.m.problem.clone(),
        ])?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// Writes CSV `bytes` (or the error that made none) to `path`, through a temporary file renamed over it: never
/// a half-written file.
fn write_csv(path: &Path, bytes: Result<Vec<u8>, csv::Error>) -> Result<(), String> {
    let bytes = bytes.map_err(|e| format!("writing {}: {e}", path.display()))?;
    bfcsim_metrics::write_atomic(path, |w| w.write_all(&bytes))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The instructions the simulation loop retires, from a hardware counter opened in-process (Linux
/// `perf_event_open`, inherited by the loop's worker threads); `None` wherever the counter cannot be opened
/// (no PMU in a VM, `perf_event_paranoid`, another OS), so the bench runs everywhere.
#[cfg(target_os = "linux")]
mod counter {
    use perf_event::Builder;
    use perf_event::events::Hardware;

    use crate::runner::LoopProbe;

    /// A counter of retired user-space instructions, and what it counted.
    pub struct Instructions {
        counter: Option<perf_event::Counter>,
        count: Option<u64>,
    }

    impl Instructions {
        /// Opens the counter (disabled); without one, [`Instructions::count`] is `None`.
        pub fn open() -> Instructions {
            let counter = Builder::new(Hardware::INSTRUCTIONS)
                .inherit(true)
                .build()
                .ok();
            Instructions {
                counter,
                count: None,
            }
        }

        /// The instructions counted between `start` and `stop`.
        pub fn count(&self) -> Option<u64> {
            self.count
        }
    }

    impl LoopProbe for Instructions {
        fn start(&mut self) {
            if let Some(c) = &mut self.counter
                && c.enable().is_err()
            {
                self.counter = None;
            }
        }

        fn stop(&mut self) {
            let Some(c) = &mut self.counter else { return };
            let Ok(data) = c.disable().and_then(|()| c.read_full()) else {
                return;
            };
            // When the kernel shared the hardware counter with other events it ran only part of the time;
            // scale as `perf stat` does, and give nothing if it never ran.
            let (enabled, running) = (data.time_enabled(), data.time_running());
            self.count = match (enabled, running) {
                (_, Some(r)) if r.is_zero() => None,
                (Some(e), Some(r)) if r < e => {
                    Some((data.count() as f64 * e.as_secs_f64() / r.as_secs_f64()) as u64)
                }
                _ => Some(data.count()),
            };
        }
    }
}

/// Elsewhere than Linux there is no counter: the column stays empty.
#[cfg(not(target_os = "linux"))]
mod counter {
    use crate::runner::LoopProbe;

    /// No counter.
    pub struct Instructions;

    impl Instructions {
        /// No counter to open.
        pub fn open() -> Instructions {
            Instructions
        }

        /// Nothing counted.
        pub fn count(&self) -> Option<u64> {
            None
        }
    }

    impl LoopProbe for Instructions {
        fn start(&mut self) {}
        fn stop(&mut self) {}
    }
}
