//! The `bfcsim` command line: `run`, `replay`, `compare`, `bench` and `schemes`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use bfcsim::experiment::{
    ExperimentConfig, FlowsConfig, HpccTopology, TopologyConfig, load_experiment,
};
use bfcsim::outputs::{OutputFile, Staging, write_outputs};
use bfcsim::runner::{Outcome, Prepared, prepare};
use bfcsim::store::{RunSpec, Source, Store};
use bfcsim::sweep::{self, Sweep};
use bfcsim_core::FlowId;
use bfcsim_metrics::{render_table, write_atomic};
use bfcsim_sim::Sim;
use clap::{Parser, Subcommand};
use indicatif::ProgressBar;

#[derive(Parser)]
#[command(
    name = "bfcsim",
    version,
    about = "Packet-level simulator of datacenter networks and Backpressure Flow Control"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment file.
    Run {
        /// The experiment (TOML). `experiments/...` files of the repository are bundled: without the file here,
        /// the bundled one runs.
        #[arg(value_parser = bundled)]
        experiment: PathBuf,
        /// Override a field: `--set switch.buffer=6MB`, `--set workload.load=0.5`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Run once per value (several `--sweep`s: once per combination) and print one summary line per run:
        /// `--sweep workload.load=0.5,0.7,0.9 --sweep scheme.name=ideal-fq,ideal-srf`. Each run writes its
        /// outputs to `OUT/runs/<hash of its configuration>/`, and a run that finished before is reused;
        /// `OUT/sweep.csv` collects the lines and names each point's directory.
        #[arg(long = "sweep", value_name = "KEY=V1,V2,...")]
        sweep: Vec<String>,
        /// Runs of a sweep to simulate at once (each run's results do not depend on it).
        #[arg(long, default_value_t = 1, value_parser = at_least_one)]
        jobs: usize,
        /// Master seed (overrides the file's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Output directory (default `out/<name>`), replaced as a whole when the run ends.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        outputs: Outputs,
        #[command(flatten)]
        explain: ExplainOptions,
        /// After the run, compare its `fct.txt` with this HPCC-format `fct.txt` of the same flows (as `compare`).
        #[arg(long, value_name = "REFERENCE_FCT")]
        compare: Option<PathBuf>,
        #[command(flatten)]
        compare_options: CompareOptions,
    },
    /// Replay HPCC ns-3 inputs (`topology.txt`, `flow.txt`) under a scheme, with CLOS-128's switch defaults.
    Replay {
        /// HPCC `topology.txt`.
        #[arg(long)]
        topology: PathBuf,
        /// HPCC `flow.txt`.
        #[arg(long)]
        flows: PathBuf,
        /// Scheme name (see `bfcsim schemes`).
        #[arg(long, default_value = "dctcp")]
        scheme: String,
        /// Override a field, as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Master seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output directory, replaced as a whole when the run ends.
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        outputs: Outputs,
        #[command(flatten)]
        explain: ExplainOptions,
        /// After the run, compare its `fct.txt` with this HPCC-format `fct.txt` of the same flows (as `compare`).
        #[arg(long, value_name = "REFERENCE_FCT")]
        compare: Option<PathBuf>,
        #[command(flatten)]
        compare_options: CompareOptions,
    },
    /// Compare two HPCC-format `fct.txt` files of the same flows (e.g. HPCC's ns-3 and a replay): p50 and p99
    /// slowdown per size bucket side by side. Exits with status 4 when a bucket is outside the tolerance.
    Compare {
        /// The reference `fct.txt` (its standalone FCTs divide both sides).
        #[arg(long)]
        reference: PathBuf,
        /// Our `fct.txt`.
        #[arg(long)]
        ours: PathBuf,
        #[command(flatten)]
        options: CompareOptions,
    },
    /// Measure simulator speed on the scenarios users run (events/s, packet-hops/s, wall time, peak memory).
    ///
    /// Per scenario, scheme and thread count: wall time, events/s, packet-hops/s (every packet, data, ACK and
    /// control, over every link), instructions per packet-hop (where a hardware counter can be opened, else
    /// n/a), peak memory and the simulated end, all of the simulation loop alone. Plain `bfcsim bench` runs CLOS-128 under DCTCP on one thread, then on all cores; `--all` runs the
    /// whole matrix (clos128, ft128, ft1024 under dctcp, bfc, hpcc, dcqcn, expresspass, homa).
    #[command(after_help = bench_scenarios())]
    Bench {
        /// Scenarios to run, comma-separated (listed below). Default: clos128 (with --all: clos128, ft128, ft1024).
        #[arg(long, value_delimiter = ',', value_name = "NAMES")]
        scenario: Vec<String>,
        /// Schemes to run each scenario under, comma-separated (any name of `bfcsim schemes`). Default: dctcp
        /// (with --all: dctcp, bfc, hpcc, dcqcn, expresspass, homa).
        #[arg(long, value_delimiter = ',', value_name = "NAMES")]
        scheme: Vec<String>,
        /// Run the whole matrix: every scenario under every scheme above (--scenario and --scheme narrow it).
        #[arg(long)]
        all: bool,
        /// Simulated arrival window of every scenario (`workload.duration`), instead of each one's own.
        #[arg(long, value_name = "TIME")]
        duration: Option<String>,
        /// Thread counts to run each scenario with (`run.threads`), comma-separated. Default: 1, then the
        /// machine's core count.
        #[arg(long, value_delimiter = ',', value_parser = at_least_one)]
        threads: Vec<usize>,
        /// Also write the rows to this CSV file (rewritten whole after each run; the source of BENCHMARKS.md's
        /// tables).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// Also run clos256, CLOS-128's fabric twice the size (memory growth).
        #[arg(long)]
        scaling: bool,
        /// Measure the one run named here in this process and print it as JSON (the bench runs each run so,
        /// in a process of its own).
        #[arg(long, hide = true)]
        measure: bool,
        /// Time another build of bfcsim (its binary) on the same runs, in alternating pairs with this one, and
        /// print each configuration's speed-up (the other's loop time over this one's, median of the pairs).
        /// Both run `bfcsim run`, so any build whose runs write `run.json` will do, e.g. the commit a change
        /// started from: `git worktree add /tmp/bfcsim-base COMMIT && cargo build --release --manifest-path
        /// /tmp/bfcsim-base/Cargo.toml`. Fails if the two simulated different runs (their counters differ).
        #[arg(long, value_name = "BFCSIM")]
        against: Option<PathBuf>,
        /// Pairs of runs per configuration with --against.
        #[arg(long, default_value_t = 5, value_parser = at_least_one, requires = "against")]
        pairs: usize,
    },
    /// List every scheme with its parameters and defaults.
    Schemes,
    /// Reproduce a figure of a paper (`experiments/figures/NAME.toml`): its runs (reusing finished ones), then
    /// `OUT/NAME/report.md` with the paper's claims checked, tables and charts (PNG, SVG, CSV).
    Reproduce {
        /// The figure (`--list` shows them), or `all`.
        #[arg(required_unless_present_any = ["list", "status", "task", "export"])]
        name: Option<String>,
        /// List the figures.
        #[arg(long)]
        list: bool,
        /// List the figures with the state of their committed reports (in `--reports`): scale, verdicts, what
        /// made them, and whether they are current for this build.
        #[arg(long, conflicts_with_all = ["name", "list"])]
        status: bool,
        /// Where the committed reports are, for `--status`.
        #[arg(long, value_name = "DIR", default_value = "docs/reproduced")]
        reports: PathBuf,
        /// With `--status`: also write the index of the reports, `REPORTS/README.md`.
        #[arg(long, requires = "status")]
        write_index: bool,
        /// A smaller run of each figure for checking (seconds to a minute), reported in `OUT/NAME-quick`.
        #[arg(long)]
        quick: bool,
        /// Runs simulated at once (default: the machine's cores).
        #[arg(long, value_parser = at_least_one)]
        jobs: Option<usize>,
        /// Root of reports (`OUT/NAME`) and runs (`OUT/runs`, shared between figures).
        #[arg(long, default_value = "out/reproduce")]
        out: PathBuf,
        /// Where the figure definitions are (without them here, the bundled ones).
        #[arg(long, default_value = "experiments/figures")]
        figures: PathBuf,
        /// Write the bundled experiments and figure definitions into DIR/experiments, to edit them.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["name", "list", "status"])]
        export: Option<PathBuf>,
        /// Do not run: write DIR/manifest.json and DIR/job.sh, a Slurm job array of the unfinished runs.
        #[arg(long, value_name = "DIR", conflicts_with = "collect")]
        slurm: Option<PathBuf>,
        /// Do not run: build the report from finished runs (after a Slurm array).
        #[arg(long)]
        collect: bool,
        /// Run one entry of a Slurm manifest (what each array task does).
        #[arg(long, value_name = "MANIFEST", requires = "index", conflicts_with_all = ["name", "list"])]
        task: Option<PathBuf>,
        /// The entry of `--task`.
        #[arg(long)]
        index: Option<usize>,
    },
}

/// How `compare` (and `--compare`) groups and judges flows.
#[derive(clap::Args)]
struct CompareOptions {
    /// Size buckets, one table each: `equal_count:N` (HPCC's equal-count groups), `bfc_google`, `bfc_hadoop`
    /// or `edges:10KB,100KB,1MB`.
    #[arg(long = "buckets", default_values_t = ["equal_count:10".to_string(), "bfc_google".to_string()])]
    buckets: Vec<String>,
    /// Allowed relative difference of a bucket's percentile.
    #[arg(long, default_value_t = 0.25)]
    tolerance: f64,
    /// Matched flows' start times may differ by this many ns (ns-3 truncates `flow.txt`'s seconds).
    #[arg(long, default_value_t = 1)]
    start_tolerance_ns: u64,
    /// Largest share of the reference's flows that may have no partner among ours (a run stopped early, flows
    /// that differ): past it the comparison fails, as it does for a bucket outside the tolerance.
    #[arg(long, default_value_t = 0.01, value_name = "FRACTION")]
    max_unmatched: f64,
    /// Print the comparison but exit 0 even when buckets fall outside the tolerance.
    #[arg(long)]
    report_only: bool,
}

/// Which flows a run explains.
#[derive(clap::Args)]
struct ExplainOptions {
    /// Say where flow ID's completion time went (repeatable): every hop of its packets is recorded, and the
    /// time from its start to its last ACK is split into sending at line rate, waiting at the sender (window,
    /// rate, credits or grants), recovery, and queuing and pausing at each switch port; also written as
    /// `explain.csv` and, hop by hop, `explain-hops.csv`. The run is the same with it.
    #[arg(long = "explain-flow", value_name = "ID")]
    explain_flows: Vec<u32>,
    /// Explain the N flows with the largest slowdowns: the experiment runs twice, once to find them and once
    /// recording their packets (the two runs' fingerprints are checked to be equal).
    #[arg(long = "explain-slowest", value_name = "N", value_parser = at_least_one)]
    explain_slowest: Option<usize>,
}

impl ExplainOptions {
    fn wanted(&self) -> bool {
        !self.explain_flows.is_empty() || self.explain_slowest.is_some()
    }
}

/// Which files a run writes.
#[derive(clap::Args)]
struct Outputs {
    /// Files to write besides `run.json`, comma-separated: `fct.parquet`, `fct.csv`, `fct.txt`, `pfc.txt`,
    /// `summary.json`, or `all` (overrides `[output] files`; default `fct.parquet,summary.json`).
    #[arg(long, value_name = "FILES")]
    outputs: Option<String>,
    /// Record time series into `trace.parquet` (the keys of `[trace]`, separated by spaces; list keys take
    /// comma-separated values): `--trace "buffers ports=to-host:1 queues flows=0-7 interval=1us"`.
    #[arg(long, value_name = "ITEMS")]
    trace: Option<String>,
    /// Also write the run as a timeline for ui.perfetto.dev or chrome://tracing (Chrome trace-event JSON) to
    /// FILE: counters of what `--trace` records (by default every switch port's queues and every buffer, each
    /// 10 µs), a slice per pause of a queue and per flow, an instant per drop and timeout.
    #[arg(long, value_name = "FILE")]
    trace_view: Option<PathBuf>,
}

impl Outputs {
    /// `--trace-view FILE` can be written, checked before anything is simulated (by creating and removing a
    /// file beside it).
    fn check_trace_view(&self) -> Result<(), String> {
        let Some(file) = &self.trace_view else {
            return Ok(());
        };
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let probe = dir.join(format!(".bfcsim-probe-{}", std::process::id()));
        std::fs::write(&probe, b"")
            .and_then(|()| std::fs::remove_file(&probe))
            .map_err(|e| {
                format!(
                    "--trace-view {}: cannot write in {}: {e}",
                    file.display(),
                    dir.display()
                )
            })
    }

    /// Gives the timeline the run wrote in `out` the name `--trace-view FILE` too: a second link to the same
    /// file where both are on one file system (the timeline is written once), else a copy the system streams;
    /// either replaces FILE at once, never leaving part of it.
    fn deliver_trace_view(&self, out: &Path) -> Result<(), String> {
        let Some(file) = &self.trace_view else {
            return Ok(());
        };
        let written = out.join(bfcsim::trace_view::FILE);
        let name = file
            .file_name()
            .map_or_else(Default::default, |n| n.to_string_lossy());
        let staged = file.with_file_name(format!(".{name}.bfcsim-{}", std::process::id()));
        let _ = std::fs::remove_file(&staged);
        std::fs::hard_link(&written, &staged)
            .or_else(|_| std::fs::copy(&written, &staged).map(|_| ()))
            .and_then(|()| std::fs::rename(&staged, file))
            .map_err(|e| {
                let _ = std::fs::remove_file(&staged);
                format!("writing --trace-view {}: {e}", file.display())
            })?;
        println!("timeline: {} (open it in ui.perfetto.dev)", file.display());
        Ok(())
    }

    /// `set` and the `--set` override `--outputs` stands for.
    fn overrides(&self, set: &[String]) -> Result<Vec<String>, String> {
        let mut all = set.to_vec();
        if let Some(list) = &self.outputs {
            all.push(bfcsim::outputs::outputs_override(list)?);
        }
        if let Some(spec) = &self.trace {
            all.extend(bfcsim::trace::trace_overrides(spec)?);
        }
        if self.trace_view.is_some() {
            all.push("trace.view=true".into());
        }
        Ok(all)
    }
}

/// `bfcsim bench --help`'s list of scenarios.
fn bench_scenarios() -> String {
    let mut text = String::from("Scenarios (experiment files built into bfcsim):\n");
    for s in bfcsim::bench::SCENARIOS {
        text += &format!("  {:<8} {}\n           {}\n", s.name, s.about, s.file);
    }
    text
}

/// A count of at least one (`--jobs`, `--threads`).
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<ExitCode, String> {
    match Cli::parse().command {
        Command::Run {
            experiment,
            set,
            sweep,
            jobs,
            seed,
            out,
            outputs,
            compare,
            explain,
            ..
        } if !sweep.is_empty() => {
            if compare.is_some() {
                return Err("--compare compares one run; it does not go with --sweep".into());
            }
            if explain.wanted() {
                return Err("--explain-flow and --explain-slowest explain one run; they do not go with --sweep".into());
            }
            let sweeps = sweep
                .iter()
                .map(|s| Sweep::parse(s))
                .collect::<Result<Vec<_>, _>>()?;
            sweep::check_keys(&sweeps)?;
            sweep::check_size(&sweeps)?;
            let set = outputs.overrides(&set)?;
            run_sweep(&experiment, &set, &sweeps, seed, out, jobs)
        }
        Command::Run {
            experiment,
            set,
            seed,
            out,
            outputs,
            explain,
            compare,
            compare_options,
            ..
        } => {
            outputs.check_trace_view()?;
            let set = outputs.overrides(&set)?;
            let mut config = load_experiment(&experiment, &set).map_err(|e| e.to_string())?;
            if let Some(seed) = seed {
                config.seed = seed;
            }
            let base = experiment.parent().unwrap_or(Path::new(".")).to_path_buf();
            let out = out.unwrap_or_else(|| Path::new("out").join(&config.name));
            let staged = Staging::begin(&out)?;
            // Problems found while building the fabric or the workload belong to the experiment file.
            let code = execute(&mut config, &base, staged, compare.is_some(), &explain)
                .map_err(|e| format!("{}: {e}", experiment.display()))?;
            outputs.deliver_trace_view(&out)?;
            compare_after(code, compare.as_deref(), &out, &compare_options)
        }
        Command::Replay {
            topology,
            flows,
            scheme,
            set,
            seed,
            out,
            outputs,
            explain,
            compare,
            compare_options,
        } => {
            outputs.check_trace_view()?;
            let set = outputs.overrides(&set)?;
            let mut config = bfcsim::experiment::replay_config(&scheme, &set)?;
            config.seed = seed;
            config.topology = TopologyConfig::Hpcc(HpccTopology { file: topology });
            config.flows = Some(FlowsConfig::new(flows));
            // Paths on the command line are the user's, relative to the working directory, as written.
            let code = execute(
                &mut config,
                Path::new(""),
                Staging::begin(&out)?,
                compare.is_some(),
                &explain,
            )?;
            outputs.deliver_trace_view(&out)?;
            compare_after(code, compare.as_deref(), &out, &compare_options)
        }
        Command::Compare {
            reference,
            ours,
            options,
        } => compare_files(&reference, &ours, &options),
        Command::Bench {
            scenario,
            scheme,
            all,
            duration,
            threads,
            csv,
            scaling,
            measure,
            against,
            pairs,
        } => bfcsim::bench::run(&bfcsim::bench::Options {
            scenarios: scenario,
            schemes: scheme,
            all,
            scaling,
            threads,
            duration,
            csv,
            measure,
            against,
            pairs,
        })
        .map(|()| ExitCode::SUCCESS),
        Command::Schemes => {
            print!("{}", bfcsim::presets::describe());
            Ok(ExitCode::SUCCESS)
        }
        Command::Reproduce {
            name,
            list,
            status,
            reports,
            write_index,
            export,
            quick,
            jobs,
            out,
            figures,
            slurm,
            collect,
            task,
            index,
        } => {
            if let (Some(manifest), Some(index)) = (task, index) {
                let (key, source) = bfcsim::reproduce::run_task(&manifest, index)?;
                let how = if source == Source::Ran {
                    "ran"
                } else {
                    "had already finished"
                };
                eprintln!("run {key} {how}");
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(dir) = export {
                let n = bfcsim::bundle::export(&dir)?;
                println!(
                    "wrote {n} files into {}; run figures from there with `--figures {}`",
                    dir.join("experiments").display(),
                    dir.join("experiments/figures").display()
                );
                return Ok(ExitCode::SUCCESS);
            }
            let figures = bfcsim::bundle::resolve(&figures)?;
            let all = bfcsim::figure::read_all(&figures)?;
            if list {
                list_figures(&all);
                return Ok(ExitCode::SUCCESS);
            }
            if status {
                print!("{}", bfcsim::atlas::status(&all, &reports)?);
                if write_index {
                    let path = bfcsim::atlas::write_index(&all, &reports)?;
                    println!("wrote {}", path.display());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let name = name.expect("clap requires a name without --list or --task");
            let chosen: Vec<&bfcsim::figure::Figure> = if name == "all" {
                all.iter().collect()
            } else {
                let f = all.iter().find(|f| f.def.name == name).ok_or_else(|| {
                    format!("no figure `{name}` in {} (see --list)", figures.display())
                })?;
                vec![f]
            };
            let layout = bfcsim::reproduce::Layout { out };
            let jobs = jobs.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
            });
            let several = chosen.len() > 1;
            for figure in chosen {
                if let Some(dir) = &slurm {
                    // One array per figure: with `all`, each in its own subdirectory.
                    let dir = if several {
                        dir.join(&figure.def.name)
                    } else {
                        dir.clone()
                    };
                    let n = bfcsim::reproduce::write_slurm(figure, quick, &layout, &dir)?;
                    println!(
                        "{}: {n} unfinished runs; submit with `sbatch {}`",
                        figure.def.name,
                        dir.join("job.sh").display()
                    );
                    continue;
                }
                let report = if collect {
                    bfcsim::reproduce::collect(figure, quick, &layout)?
                } else {
                    bfcsim::reproduce::reproduce(figure, quick, jobs, &layout)?
                };
                println!("{}: {}", figure.def.name, report.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `reproduce --list`: one line per figure with its runs at both scales.
fn list_figures(all: &[bfcsim::figure::Figure]) {
    let width = all.iter().map(|f| f.def.name.len()).max().unwrap_or(0);
    for f in all {
        let count = |quick| f.run_count(quick);
        println!(
            "{:<width$}  {:<22} {} ({} runs, {} with --quick)",
            f.def.name,
            f.def.source,
            f.def.title,
            count(false),
            count(true)
        );
    }
}

/// A path from the command line, or the bundled copy of an `experiments/...` file that is not here.
fn bundled(arg: &str) -> Result<PathBuf, String> {
    bfcsim::bundle::resolve(Path::new(arg))
}

/// Runs `compare` on a finished run's `fct.txt` when the user asked for it; the run's own failure comes first.
fn compare_after(
    code: ExitCode,
    reference: Option<&Path>,
    out: &Path,
    options: &CompareOptions,
) -> Result<ExitCode, String> {
    match reference {
        Some(reference) if code == ExitCode::SUCCESS => {
            compare_files(reference, &out.join("fct.txt"), options)
        }
        _ => Ok(code),
    }
}

/// Exit status of a comparison outside its tolerance (1 is an error, 3 a run that violated its invariants).
const COMPARISON_FAILED: u8 = 4;

/// Prints one side-by-side table per bucket scheme of `options`; fails (status 4, unless `--report-only`)
/// when a bucket's p50 or p99 is outside the tolerance, saying which.
fn compare_files(
    reference: &Path,
    ours: &Path,
    options: &CompareOptions,
) -> Result<ExitCode, String> {
    use bfcsim_metrics::compare::{compare, parse_hpcc_fct};
    if !(options.tolerance > 0.0 && options.tolerance.is_finite()) {
        return Err(format!(
            "--tolerance {} must be positive",
            options.tolerance
        ));
    }
    if !(0.0..=1.0).contains(&options.max_unmatched) {
        return Err(format!(
            "--max-unmatched {} must be a fraction in [0, 1]",
            options.max_unmatched
        ));
    }
    let read = |path: &Path| {
        bfcsim_core::input::read_to_string(path)
            .and_then(|text| parse_hpcc_fct(path, &text))
            .map_err(|e| e.to_string())
    };
    let (theirs, mine) = (read(reference)?, read(ours)?);
    println!(
        "reference: {} ({} flows); ours: {} ({} flows)",
        reference.display(),
        theirs.len(),
        ours.display(),
        mine.len()
    );
    let mut outside = Vec::new();
    for spec in &options.buckets {
        let scheme: bfcsim_metrics::BucketScheme =
            spec.parse().map_err(|e| format!("--buckets: {e}"))?;
        let c = compare(
            &theirs,
            &mine,
            &scheme,
            options.tolerance,
            options.start_tolerance_ns,
        )
        .ok_or_else(|| {
            format!(
                "no flow of {} matches one of {} by (source, destination, size, start)",
                ours.display(),
                reference.display()
            )
        })?;
        println!("\nbuckets {spec}:\n{}", c.render("reference", "ours"));
        let unmatched = c.only_reference as f64 / theirs.len().max(1) as f64;
        // Matching does not depend on the buckets: said once.
        if unmatched > options.max_unmatched && outside.is_empty() {
            outside.push(format!(
                "{} of the reference's {} flows ({:.1}%) have no partner among ours, more than --max-unmatched {}",
                c.only_reference,
                theirs.len(),
                unmatched * 100.0,
                options.max_unmatched
            ));
        }
        let (p50, p99, m) = c.within();
        if p50 < m || p99 < m {
            outside.push(format!(
                "buckets {spec}: {} of {m} outside at p50, {} at p99",
                m - p50,
                m - p99
            ));
        }
    }
    if outside.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let verdict = format!(
        "the comparison fails its tolerance of {}%: {}",
        options.tolerance * 100.0,
        outside.join("; ")
    );
    if options.report_only {
        eprintln!("{verdict} (--report-only: exit status 0)");
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("error: {verdict}");
    Ok(ExitCode::from(COMPARISON_FAILED))
}

/// Runs every point of `sweeps` over `experiment` (with `set` applied first), `jobs` at a time, through the run
/// store under `OUT/runs` (a point that finished before is not simulated again), printing one line per point in
/// point order as soon as it and those before it are done.
fn run_sweep(
    experiment: &Path,
    set: &[String],
    sweeps: &[Sweep],
    seed: Option<u64>,
    out: Option<PathBuf>,
    jobs: usize,
) -> Result<ExitCode, String> {
    let points = sweep::points(sweeps);
    // Every point resolved first, so that a bad value stops the sweep before anything runs.
    let runs = points
        .iter()
        .map(|point| {
            let overrides = set
                .iter()
                .chain(point)
                .cloned()
                .chain(seed.map(|s| format!("seed={s}")))
                .collect();
            RunSpec {
                experiment: experiment.to_path_buf(),
                overrides,
            }
            .resolve()
        })
        .collect::<Result<Vec<_>, String>>()?;
    // Two points that resolve to one configuration would be one run in one directory, counted twice.
    for (i, run) in runs.iter().enumerate() {
        if let Some(j) = runs[..i].iter().position(|r| r.key == run.key) {
            return Err(format!(
                "--sweep: the points `{}` and `{}` are the same run (the values differ only in spelling)",
                points[j].join(" "),
                points[i].join(" ")
            ));
        }
    }
    let name = load_experiment(experiment, set)
        .map_err(|e| e.to_string())?
        .name;
    let root = out.unwrap_or_else(|| Path::new("out").join(&name));
    let store = Store::new(root.join("runs"));
    let width = points
        .iter()
        .map(|p| p.join(" ").len())
        .max()
        .unwrap_or(0)
        .max(5);
    eprintln!(
        "bfcsim {name}: {} runs, {} at a time; outputs in {}",
        points.len(),
        jobs.clamp(1, points.len()),
        store.dir("").display()
    );
    println!("{}", sweep::header(width));
    // Results by point, and how many have been printed.
    let done = Mutex::new((vec![None; points.len()], 0usize));
    let results = store.run_all(&runs, jobs, &|i, result| {
        let mut d = done.lock().expect("no run panics while printing");
        d.0[i] = Some(
            result
                .as_ref()
                .map(|(digest, _)| sweep::values(&points[i], digest))
                .map_err(String::clone),
        );
        while let Some(Some(r)) = d.0.get(d.1) {
            match r {
                Ok(values) => println!("{}", sweep::line(values, width)),
                Err(e) => eprintln!("error: {}: {e}", points[d.1].join(" ")),
            }
            d.1 += 1;
        }
    })?;
    let reused = results
        .iter()
        .filter(|r| matches!(r, Ok((_, Source::Reused))))
        .count();
    if reused > 0 {
        eprintln!(
            "{reused} of {} runs were reused (finished before, or by another process sharing the store)",
            runs.len()
        );
    }
    let rows: Vec<(Vec<String>, String)> = results
        .iter()
        .zip(&points)
        .zip(&runs)
        .filter_map(|((r, point), run)| {
            let (digest, _) = r.as_ref().ok()?;
            Some((sweep::values(point, digest), format!("runs/{}", run.key)))
        })
        .collect();
    let csv = root.join("sweep.csv");
    let bytes = sweep::csv(&rows).map_err(|e| format!("writing {}: {e}", csv.display()))?;
    write_atomic(&csv, |w| w.write_all(&bytes))
        .map_err(|e| format!("writing {}: {e}", csv.display()))?;
    if results.iter().any(Result::is_err) {
        return Ok(ExitCode::FAILURE);
    }
    if rows.iter().any(|(r, _)| r.last().is_some_and(|v| v != "0")) {
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the flows `explain` asks about spent their completion times: those of `outcome`'s run (which
/// explained the flows named by id unless the slowest were asked for too), or, for the slowest, of a second run
/// of `config` that records their packets and must have the first one's fingerprint.
fn explain_flows(
    config: &ExperimentConfig,
    base: &Path,
    explain: &ExplainOptions,
    outcome: &mut Outcome,
) -> Result<bfcsim::explain::Report, String> {
    let Some(n) = explain.explain_slowest else {
        return outcome
            .explained
            .take()
            .ok_or_else(|| "the run explained no flow".to_string());
    };
    let mut finished: Vec<&bfcsim_metrics::FlowRecord> = outcome
        .records
        .iter()
        .filter(|r| r.finish.is_some())
        .collect();
    let slowdown = |r: &bfcsim_metrics::FlowRecord| r.slowdown().unwrap_or(0.0);
    finished.sort_by(|a, b| slowdown(b).total_cmp(&slowdown(a)).then(a.id.cmp(&b.id)));
    let mut ids: Vec<FlowId> = explain.explain_flows.iter().map(|&f| FlowId(f)).collect();
    for r in finished.iter().take(n) {
        if !ids.contains(&r.id) {
            ids.push(r.id);
        }
    }
    let names: Vec<String> = ids.iter().map(|f| f.0.to_string()).collect();
    eprintln!(
        "explaining flows {}: running the experiment again, recording their packets",
        names.join(", ")
    );
    let again =
        bfcsim::runner::simulate_explaining(config, prepare(config, base)?, &ids, |_| {}, &mut ())?;
    if again.fingerprint != outcome.fingerprint {
        return Err(format!(
            "recording the flows' packets changed the run (fingerprint {:016x}, first {:016x}): a bug, please report it",
            again.fingerprint, outcome.fingerprint
        ));
    }
    again
        .explained
        .ok_or_else(|| "the second run explained no flow".to_string())
}

/// Simulates `prepared` under `config`, reporting to `bar` if given, explaining the flows `explain`, and writes
/// its outputs to `out`.
fn simulate_to(
    config: &ExperimentConfig,
    prepared: Prepared,
    out: &Path,
    bar: Option<&ProgressBar>,
    explain: &[FlowId],
) -> Result<Outcome, String> {
    let plan = prepared.plan.clone();
    let started = Instant::now();
    let outcome = bfcsim::runner::simulate_explaining(
        config,
        prepared,
        explain,
        |sim: &Sim| {
            if let Some(bar) = bar {
                let c = sim.counters();
                let secs = started.elapsed().as_secs_f64().max(1e-9);
                bar.set_position(sim.flows_done() as u64);
                bar.set_message(format!(
                    "t = {} | {:.1} M events/s",
                    sim.now(),
                    c.events as f64 / secs / 1e6
                ));
            }
        },
        &mut (),
    )?;
    write_outputs(out, config, plan.as_deref(), &outcome)
        .map_err(|e| format!("writing {}: {e}", out.display()))?;
    Ok(outcome)
}

/// Runs `config` and writes its outputs into `staged`, which replaces its target as a whole at the end (the
/// caller begins it before anything runs, so that a target that is not ours to replace is refused at once);
/// with `compare`, the run also writes the `fct.txt` the comparison reads; `explain` says which flows to
/// explain after it.
fn execute(
    config: &mut ExperimentConfig,
    base: &Path,
    staged: Staging,
    compare: bool,
    explain: &ExplainOptions,
) -> Result<ExitCode, String> {
    if compare && !config.output.wants(OutputFile::FctTxt) {
        config.output.files.push(OutputFile::FctTxt);
    }
    let config = &*config;
    let out = staged.target().to_path_buf();
    let out = out.as_path();
    let prepared = prepare(config, base)?;
    let plan = prepared.plan.clone();
    let flows = prepared.flows.len();
    eprintln!(
        "bfcsim {}: {} hosts, {} switches, {} flows, scheme {}",
        config.name,
        prepared.topology.hosts.len(),
        prepared.topology.switch_count(),
        flows,
        config.scheme.name
    );
    if let Some(p) = &plan {
        eprintln!("offered: {p}");
    }
    let bar = bfcsim::store::progress_bar(flows, "flows {msg}");
    // Flows named by id are explained in the run itself; the slowest are known only after it.
    let named: Vec<FlowId> = match explain.explain_slowest {
        None => explain.explain_flows.iter().map(|&f| FlowId(f)).collect(),
        Some(_) => Vec::new(),
    };
    let mut outcome = simulate_to(config, prepared, staged.dir(), bar.as_ref(), &named)?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    staged.commit()?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    println!("{}", render_table(&outcome.summary));
    let c = &outcome.counters;
    let trace_files = outcome.trace.iter().flat_map(|r| {
        std::iter::once(r.format.file()).chain(r.view.as_ref().map(|_| bfcsim::trace_view::FILE))
    });
    let written: Vec<&str> = std::iter::once(bfcsim::outputs::RUN_JSON)
        .chain(config.output.files.iter().map(|f| f.name()))
        .chain(trace_files)
        .filter(|f| out.join(f).exists())
        .collect();
    println!(
        "simulated {} in {:.2} s on {} thread{}: {} events ({:.2} M/s), {} packet-hops ({:.2} M/s); wrote {} in {}",
        outcome.end,
        outcome.wall_secs,
        outcome.threads,
        if outcome.threads == 1 { "" } else { "s" },
        c.events,
        c.events as f64 / outcome.wall_secs / 1e6,
        c.hops,
        c.hops as f64 / outcome.wall_secs / 1e6,
        written.join(", "),
        out.display()
    );
    if let Some(r) = &outcome.trace {
        println!(
            "{}",
            bfcsim::trace::describe(&r.series, config.trace.as_ref(), r.format)
        );
    }
    if explain.wanted() {
        let report = explain_flows(config, base, explain, &mut outcome)?;
        print!("{}", bfcsim::explain::render(&report));
        bfcsim::explain::write(out, &report)?;
        println!(
            "wrote {} and {} in {}",
            bfcsim::explain::FILE,
            bfcsim::explain::FILE_HOPS,
            out.display()
        );
    }
    if !outcome.violations.is_empty() {
        eprintln!("error: the run violated its invariants:");
        for v in &outcome.violations {
            eprintln!("  {v}");
        }
        return Ok(ExitCode::from(3));
    }
    if let Some(why) = &outcome.stalled {
        eprintln!("error: {why}");
        return Ok(ExitCode::from(RUN_STALLED));
    }
    Ok(ExitCode::SUCCESS)
}

/// Exit status of a run that stopped making progress (`run.stall_after`).
const RUN_STALLED: u8 = 5;
