//! Resumable runs. A run is an experiment file plus `--set` overrides; resolved, it is an
//! [`ExperimentConfig`], and it lives in `ROOT/<key>/`, where the key is a hash of the resolved configuration,
//! of the files it reads, of the bfcsim version and of its behaviour fingerprint ([`Resolved::key`],
//! [`crate::provenance`]). A run writes its usual outputs there
//! (`fct.parquet`, `summary.json`, ...), then its [`Digest`] (`digest.json`), and last the completion marker
//! `done.json`. So:
//!
//! - a directory with `done.json` holds a complete result, and running the same configuration again reuses it
//!   instead of simulating (a sweep or a figure killed half-way resumes where it stopped);
//! - a run writes into a fresh directory beside its own and renames it into place when complete, so a run
//!   killed half-way leaves no directory of its own (one without `done.json`, left by an older bfcsim, is
//!   deleted and the run starts again);
//! - processes that share a store split its runs: a process claims a run before simulating it (an exclusive
//!   lock on `ROOT/.<key>.claim`, which the operating system releases when the process exits or is killed), a
//!   process that finds a run claimed goes on with its other runs and waits for that one at the end, then reads
//!   it; so two terminals, or sweeps, figures and cluster tasks that need the same configuration, simulate each
//!   run once. A claimant killed half-way leaves its partial directory, which the next claimant clears, and its
//!   claim file, which the next claimant takes (a finished run's claim file is removed).
//!
//! The name of the experiment, `run.threads`, `[output]` and `[limits]` are left out of the key: none changes a
//! result (a reused run has the files its first run wrote). The key changes with the version (`CARGO_PKG_VERSION`)
//! and with the behaviour fingerprint, so results of another release, or of an engine that simulates a fingerprint
//! scenario differently, are not reused; builds of one release that simulate those alike share their runs (a
//! change the fingerprint scenarios do not see, such as a topology builder they do not use, keeps the keys: delete
//! the runs then). Delete a run's directory to force it again. `done.json` records what made the run ([`Made`]:
//! commit, fingerprint, wall time), which a figure's report lists.
//!
//! Every path that runs something (`bfcsim run --sweep`, `bfcsim reproduce`, and one Slurm array task) goes
//! through [`Store::get_or_run`]; [`Store::run_all`] runs many, `jobs` at a time on a rayon pool, with a
//! progress bar (runs done / total, ETA) when stderr is a terminal.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use bfcsim_metrics::write_atomic;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::digest::Digest;
use crate::experiment::{ExperimentConfig, TopologyConfig, load_experiment};
use crate::outputs::{Staging, write_outputs};
use crate::provenance::{Build, hex, short_hash};
use crate::runner::{prepare, simulate};

/// The completion marker, written last.
pub const DONE: &str = "done.json";
/// The run's digest, read back when the run is reused.
pub const DIGEST: &str = "digest.json";

/// A run as the user gives it: an experiment file and `KEY=VALUE` overrides (applied in order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The experiment file.
    pub experiment: PathBuf,
    /// `--set` overrides, `seed=N` included.
    pub overrides: Vec<String>,
}

/// A run resolved: its configuration, the directory its relative paths start from, and its key.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The spec it came from.
    pub spec: RunSpec,
    /// The configuration.
    pub config: ExperimentConfig,
    /// The experiment file's directory (relative paths in the configuration resolve against it).
    pub base: PathBuf,
    /// The run's directory name ([`Resolved::key`]).
    pub key: String,
}

impl RunSpec {
    /// Reads the experiment, applies the overrides and computes the key. Errors name the file.
    pub fn resolve(&self) -> Result<Resolved, String> {
        let mut config =
            load_experiment(&self.experiment, &self.overrides).map_err(|e| e.to_string())?;
        let base = self
            .experiment
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let inputs = Resolved::inputs(&config, &base)
            .map_err(|e| format!("{}: {e}", self.experiment.display()))?;
        let key = Resolved::key(&inputs, &config.scheme.name);
        // The directory's name identifies the run; the file's name would differ between figures sharing it.
        config.name = key.clone();
        Ok(Resolved {
            spec: self.clone(),
            config,
            base,
            key,
        })
    }
}

impl Resolved {
    /// The SHA-256 (hex) of the configuration as JSON (name, threads, output files and limits neutralised: none
    /// changes a result) and of the contents of every file it reads (topology, flows, CDF) or built-in CDF it
    /// names.
    pub fn inputs(config: &ExperimentConfig, base: &Path) -> Result<String, String> {
        let mut neutral = config.clone();
        neutral.name = String::new();
        neutral.run.threads = 1;
        neutral.output = Default::default();
        neutral.limits = Default::default();
        let json = serde_json::to_string(&neutral).map_err(|e| e.to_string())?;
        let mut h = Sha256::new();
        h.update(json.as_bytes());
        for file in referenced_files(config) {
            let path = base.join(&file);
            let bytes =
                std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            h.update([0]);
            h.update(&bytes);
        }
        if let Some(b) = config
            .workload
            .as_ref()
            .and_then(|w| w.cdf.as_deref())
            .and_then(bfcsim_workload::builtin)
        {
            h.update([0]);
            h.update(b.text.as_bytes());
        }
        Ok(hex(&h.finalize()))
    }

    /// The run's key: 12 hex digits of the SHA-256 of the bfcsim version, this build's behaviour fingerprint for
    /// preset `scheme` ([`crate::provenance::behaviour_of`]) and the run's [`Resolved::inputs`].
    pub fn key(inputs: &str, scheme: &str) -> String {
        let build = Build::running(scheme);
        short_hash(format!("{}\0{}\0{inputs}", build.version, build.behaviour).as_bytes())
    }
}

/// The files a configuration reads, relative to its base directory.
pub(crate) fn referenced_files(config: &ExperimentConfig) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let TopologyConfig::Hpcc(t) = &config.topology {
        files.push(t.file.clone());
    }
    if let Some(f) = &config.flows {
        files.push(f.file.clone());
    }
    if let Some(cdf) = config.workload.as_ref().and_then(|w| w.cdf.as_ref())
        && bfcsim_workload::builtin(cdf).is_none()
    {
        files.push(PathBuf::from(cdf));
    }
    files
}

/// What `done.json` records: the run, what made it and how long it took.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Made {
    /// The run's key.
    pub key: String,
    /// The build that simulated it.
    pub build: Build,
    /// Wall time of the simulation.
    pub wall_seconds: f64,
    /// Threads it ran on.
    pub threads: usize,
    /// The SHA-256 of every file the run wrote (hex, by name): a file that differs, or is missing, makes
    /// the run unfinished again (a truncated output, an edited digest), so it is simulated anew.
    #[serde(default)]
    pub files: std::collections::BTreeMap<String, String>,
}

/// Why the finished run in `dir` is not what `marker` says it wrote: a file missing or changed, or no
/// checksums at all (a run of a bfcsim that recorded none).
fn not_whole(dir: &Path, marker: &Made) -> Option<String> {
    if marker.files.is_empty() {
        return Some(format!("{DONE} records no checksums of its files"));
    }
    marker.files.iter().find_map(|(name, sum)| {
        let path = dir.join(name);
        match checksum(&path) {
            Ok(now) if now == *sum => None,
            Ok(_) => Some(format!("{} changed since its run wrote it", path.display())),
            Err(e) => Some(format!("{}: {e}", path.display())),
        }
    })
}

/// The SHA-256 of every file in `dir` but the completion marker, by name.
fn checksums(dir: &Path) -> std::io::Result<std::collections::BTreeMap<String, String>> {
    let mut sums = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != DONE && entry.file_type()?.is_file() {
            sums.insert(name, checksum(&entry.path())?);
        }
    }
    Ok(sums)
}

fn checksum(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let (mut hasher, mut file) = (Sha256::new(), std::fs::File::open(path)?);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut buf)? {
            0 => return Ok(hex(&hasher.finalize())),
            n => hasher.update(&buf[..n]),
        }
    }
}

/// A run's digest and how it was obtained, or what went wrong.
pub type RunResult = Result<(Digest, Source), String>;

/// Where runs live.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

/// How a run's result was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Simulated now.
    Ran,
    /// A finished run found on disk.
    Reused,
}

impl Store {
    /// Runs under `root`.
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    /// The directory of the run with `key`.
    pub fn dir(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    /// The digest of a finished run and what made it, `None` if the run has not finished (or never started).
    pub fn finished(&self, key: &str) -> Result<Option<(Digest, Made)>, String> {
        let dir = self.dir(key);
        let done = dir.join(DONE);
        if !done.exists() {
            return Ok(None);
        }
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
        };
        let marker: Made = serde_json::from_str(&read(&done)?).map_err(|e| {
            format!(
                "{}: {e} (delete {} to run it again)",
                done.display(),
                dir.display()
            )
        })?;
        if marker.key != key {
            return Err(format!(
                "{}: marks run {}, not {key}",
                done.display(),
                marker.key
            ));
        }
        if let Some(why) = not_whole(&dir, &marker) {
            eprintln!(
                "warning: {why}: the run in {} is not what it wrote, so it is simulated again",
                dir.display()
            );
            // Unmarked, it is an unfinished run, which the next simulation of it clears.
            std::fs::remove_file(&done).map_err(|e| format!("removing {}: {e}", done.display()))?;
            return Ok(None);
        }
        let path = dir.join(DIGEST);
        let digest = serde_json::from_str(&read(&path)?).map_err(|e| {
            format!(
                "{}: {e} (delete {} to run it again)",
                path.display(),
                dir.display()
            )
        })?;
        Ok(Some((digest, marker)))
    }

    /// The run's digest: read from disk if it finished, else simulated now into a fresh directory (its
    /// outputs, digest and completion marker written in that order) that then replaces whatever an
    /// interrupted attempt left. While another process has claimed the run, waits for it.
    pub fn get_or_run(&self, run: &Resolved) -> RunResult {
        self.get_or_run_unless(run, false)
            .map(|r| r.expect("a waiting claim is always taken"))
    }

    /// [`Store::get_or_run`], but `None` at once when another process has claimed the run and `skip_claimed` is on.
    fn get_or_run_unless(
        &self,
        run: &Resolved,
        skip_claimed: bool,
    ) -> Result<Option<(Digest, Source)>, String> {
        if let Some((d, _)) = self.finished(&run.key)? {
            return Ok(Some((d, Source::Reused)));
        }
        let Some(claim) = self.claim(&run.key, !skip_claimed)? else {
            return Ok(None);
        };
        // The claim's last holder may have finished the run while this process waited for it.
        if let Some((d, _)) = self.finished(&run.key)? {
            let _ = std::fs::remove_file(&claim.path);
            return Ok(Some((d, Source::Reused)));
        }
        let ran = self.simulate(run)?;
        // Finished runs are never simulated again, so the claim's file can go: a process still waiting on it
        // finds the run done.
        let _ = std::fs::remove_file(&claim.path);
        Ok(Some((ran, Source::Ran)))
    }

    /// Claims run `key` for this process: waits for another claimant with `wait` (saying so on stderr), else
    /// `None` when there is one. On a file system without locks, warns once and goes on unclaimed.
    fn claim(&self, key: &str, wait: bool) -> Result<Option<Claim>, String> {
        let path = self.root.join(format!(".{key}.claim"));
        let shown = path.display();
        std::fs::create_dir_all(&self.root)
            .map_err(|e| format!("creating {}: {e}", self.root.display()))?;
        loop {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| format!("opening {shown}: {e}"))?;
            let locked = match file.try_lock() {
                Ok(()) => Ok(()),
                Err(std::fs::TryLockError::WouldBlock) if !wait => return Ok(None),
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = std::io::Read::read_to_string(&mut file, &mut holder);
                    eprintln!(
                        "waiting for run {key}, which another process ({}) is simulating",
                        holder.trim()
                    );
                    file.lock()
                }
                Err(std::fs::TryLockError::Error(e)) => Err(e),
            };
            if let Err(e) = locked {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    eprintln!(
                        "warning: cannot lock {shown} ({e}): runs are not claimed, so processes sharing {} may \
                         simulate a run twice",
                        self.root.display()
                    )
                });
                return Ok(Some(Claim { _file: file, path }));
            }
            // The last holder removes the file once the run is done: a lock taken on the removed file's inode
            // claims nothing, so open the path again.
            if !same_file(&file, &path) {
                continue;
            }
            // Who holds it, for a process that waits.
            let _ = file.set_len(0);
            let _ = std::io::Write::write_all(
                &mut file,
                format!("pid {}", std::process::id()).as_bytes(),
            );
            return Ok(Some(Claim { _file: file, path }));
        }
    }

    /// Simulates `run` into its directory (claimed by this process).
    fn simulate(&self, run: &Resolved) -> Result<Digest, String> {
        let target = self.dir(&run.key);
        if target.exists() {
            // Unfinished: what a run of an older bfcsim left, which wrote into the directory itself.
            std::fs::remove_dir_all(&target)
                .map_err(|e| format!("clearing {}: {e}", target.display()))?;
        }
        let staged = Staging::begin(&target)?;
        let dir = staged.dir().to_path_buf();
        let io = |what: &str, e: std::io::Error| format!("{what} {}: {e}", dir.display());
        let where_ = |e: String| format!("{}: {e}", run.spec.experiment.display());
        let prepared = prepare(&run.config, &run.base).map_err(where_)?;
        let plan = prepared.plan.clone();
        let outcome = simulate(&run.config, prepared, |_| {}).map_err(where_)?;
        write_outputs(&dir, &run.config, plan.as_deref(), &outcome)
            .map_err(|e| io("writing", e))?;
        let digest = Digest::new(&outcome);
        write_json(&dir.join(DIGEST), &digest).map_err(|e| io("writing", e))?;
        let done = Made {
            key: run.key.clone(),
            build: Build::running(&run.config.scheme.name),
            wall_seconds: outcome.wall_secs,
            threads: outcome.threads,
            files: checksums(&dir).map_err(|e| io("reading back", e))?,
        };
        write_json(&dir.join(DONE), &done).map_err(|e| io("writing", e))?;
        staged.commit()?;
        Ok(digest)
    }

    /// Gets or runs every run of `runs`, `jobs` at a time, calling `each` with its index and result as each
    /// ends. Results come back in the order of `runs`; one run's failure does not stop the others. Runs another
    /// process has claimed are left to the end, then waited for.
    pub fn run_all(
        &self,
        runs: &[Resolved],
        jobs: usize,
        each: &(dyn Fn(usize, &RunResult) + Sync),
    ) -> Result<Vec<RunResult>, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs.max(1))
            .build()
            .map_err(|e| format!("starting {jobs} workers: {e}"))?;
        let bar = progress_bar(runs.len(), "runs, ETA {eta}");
        let done = AtomicUsize::new(0);
        let ended = |i: usize, result: RunResult| {
            if let Some(bar) = &bar {
                bar.set_position(done.fetch_add(1, Ordering::Relaxed) as u64 + 1);
            }
            each(i, &result);
            result
        };
        let first: Vec<Option<RunResult>> = pool.install(|| {
            runs.par_iter()
                .enumerate()
                .map(|(i, run)| {
                    let got = self.get_or_run_unless(run, true).transpose();
                    got.map(|result| ended(i, result))
                })
                .collect()
        });
        let results = pool.install(|| {
            first
                .into_par_iter()
                .enumerate()
                .map(|(i, got)| got.unwrap_or_else(|| ended(i, self.get_or_run(&runs[i]))))
                .collect()
        });
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        Ok(results)
    }
}

/// Whether `file` is still the file at `path` (always, where the platform cannot tell).
fn same_file(file: &std::fs::File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// A run claimed by this process, until dropped.
struct Claim {
    _file: std::fs::File,
    path: PathBuf,
}

/// A progress bar of `len` things on a terminal, `None` otherwise (so logs and pipes stay clean); `what` ends the
/// line (`runs, ETA {eta}`, `flows {msg}`).
pub fn progress_bar(len: usize, what: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {what}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    Some(bar)
}

/// Writes `value` to `path` as pretty JSON, atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    write_atomic(path, |w| {
        serde_json::to_writer_pretty(&mut *w, value).map_err(std::io::Error::other)?;
        writeln!(w)
    })
}
