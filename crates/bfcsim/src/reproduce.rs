//! `bfcsim reproduce`: run a figure's runs through the store ([`crate::store`]) and write its report
//! ([`crate::report`]); or, for a cluster, write the runs as a Slurm job array ([`write_slurm`]) whose tasks each
//! run one of them by index ([`run_task`], the same [`Store::get_or_run`] as a local run), and build the report
//! from the finished runs afterwards ([`collect`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::figure::{Figure, PlannedRun, plan};
use crate::provenance::definition_digest;
use crate::report::{Results, write};
use crate::store::{Made, RunSpec, Source, Store, write_json};

/// Where a figure's outputs go: `OUT/NAME` (paper scale) or `OUT/NAME-quick`, runs under `OUT/runs`.
pub struct Layout {
    /// `--out`.
    pub out: PathBuf,
}

impl Layout {
    /// The run store.
    pub fn store(&self) -> Store {
        Store::new(self.out.join("runs"))
    }

    /// The directory of a figure's report.
    pub fn figure_dir(&self, figure: &Figure, quick: bool) -> PathBuf {
        self.out
            .join(crate::provenance::Scale::of(quick).report_dir(&figure.def.name))
    }
}

/// Runs what has not finished of `figure`, `jobs` at a time, then writes its report. Returns the report's path.
pub fn reproduce(
    figure: &Figure,
    quick: bool,
    jobs: usize,
    layout: &Layout,
) -> Result<PathBuf, String> {
    let runs = plan(figure, quick)?;
    let store = layout.store();
    let started = Instant::now();
    eprintln!(
        "{}: {} runs, {} at a time; runs in {}",
        figure.def.name,
        runs.len(),
        jobs.max(1),
        store.dir("").display()
    );
    let resolved: Vec<_> = runs.iter().map(|r| r.run.clone()).collect();
    let results = store.run_all(&resolved, jobs, &|i, r| {
        if let Err(e) = r {
            eprintln!("error: {} run {}: {e}", figure.def.name, runs[i].run.key);
        }
    })?;
    let mut reused = 0;
    let mut failed = 0;
    for r in &results {
        match r {
            Ok((_, source)) => reused += usize::from(*source == Source::Reused),
            Err(_) => failed += 1,
        }
    }
    if failed > 0 {
        return Err(format!(
            "{failed} of {} runs of {} failed",
            runs.len(),
            figure.def.name
        ));
    }
    eprintln!(
        "{}: {} runs ({} simulated, {reused} reused) in {:.1} s",
        figure.def.name,
        runs.len(),
        runs.len() - reused,
        started.elapsed().as_secs_f64()
    );
    // The report is built from the digests as stored, exactly as `--collect` builds it after a cluster ran the
    // runs: so both give the same bytes (a digest read back from JSON may differ from the one in memory in the
    // last bit of a float).
    collect(figure, quick, layout)
}

/// Writes the report of `runs` and returns its path.
fn report(
    figure: &Figure,
    quick: bool,
    runs: &[PlannedRun],
    finished: (&[Digest], &[Made]),
    layout: &Layout,
) -> Result<PathBuf, String> {
    let dir = layout.figure_dir(figure, quick);
    let results = Results {
        figure,
        quick,
        runs,
        digests: finished.0,
        made: finished.1,
        definition: definition_digest(figure, runs)?,
        half: false,
    };
    write(&results, &dir)?;
    Ok(dir.join("report.md"))
}

/// Builds the report of `figure` from runs that finished (on a cluster, or earlier); an error lists what has not.
pub fn collect(figure: &Figure, quick: bool, layout: &Layout) -> Result<PathBuf, String> {
    let runs = plan(figure, quick)?;
    let store = layout.store();
    let mut digests = Vec::new();
    let mut made = Vec::new();
    let mut missing = Vec::new();
    for r in &runs {
        match store.finished(&r.run.key)? {
            Some((d, m)) => {
                digests.push(d);
                made.push(m);
            }
            None => missing.push(r.run.key.clone()),
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "{} of {} runs of {} have not finished in {} (first: {}); wait for the job array, or run \
             `bfcsim reproduce {}{}` to finish them here",
            missing.len(),
            runs.len(),
            figure.def.name,
            store.dir("").display(),
            missing[0],
            figure.def.name,
            if quick { " --quick" } else { "" }
        ));
    }
    report(figure, quick, &runs, (&digests, &made), layout)
}

/// A Slurm job array's runs: what each task index runs, and where.
#[derive(Serialize, Deserialize)]
pub struct Manifest {
    /// The figure.
    pub figure: String,
    /// Whether these are `--quick` runs.
    pub quick: bool,
    /// The run store (absolute).
    pub store: PathBuf,
    /// The runs, task index = position.
    pub runs: Vec<ManifestRun>,
}

/// One task of the array.
#[derive(Serialize, Deserialize)]
pub struct ManifestRun {
    /// The run's key: the task checks that the spec still resolves to it.
    pub key: String,
    /// The experiment (absolute path) and its overrides.
    #[serde(flatten)]
    pub spec: RunSpec,
}

/// Writes `DIR/manifest.json` (the runs of `figure` that have not finished) and `DIR/job.sh`, an `sbatch
/// --array` script whose task `i` runs manifest entry `i`. Returns the number of tasks.
pub fn write_slurm(
    figure: &Figure,
    quick: bool,
    layout: &Layout,
    dir: &Path,
) -> Result<usize, String> {
    let runs = plan(figure, quick)?;
    let store = layout.store();
    let abs =
        |p: &Path| std::path::absolute(p).map_err(|e| format!("resolving {}: {e}", p.display()));
    let mut entries = Vec::new();
    for r in &runs {
        if store.finished(&r.run.key)?.is_some()
            || entries.iter().any(|e: &ManifestRun| e.key == r.run.key)
        {
            continue;
        }
        entries.push(ManifestRun {
            key: r.run.key.clone(),
            spec: RunSpec {
                experiment: abs(&r.run.spec.experiment)?,
                overrides: r.run.spec.overrides.clone(),
            },
        });
    }
    let io = |what: &Path, e: std::io::Error| format!("writing {}: {e}", what.display());
    std::fs::create_dir_all(dir.join("logs")).map_err(|e| io(dir, e))?;
    let dir = abs(dir)?;
    let manifest = Manifest {
        figure: figure.def.name.clone(),
        quick,
        store: abs(&store.dir(""))?,
        runs: entries,
    };
    let path = dir.join("manifest.json");
    write_json(&path, &manifest).map_err(|e| io(&path, e))?;
    let exe = std::env::current_exe().map_err(|e| format!("finding the bfcsim binary: {e}"))?;
    let n = manifest.runs.len();
    let flags = if quick { " --quick" } else { "" };
    let script = format!(
        "#!/bin/bash\n\
         # bfcsim reproduce {name}{flags}: {n} runs, one per task of this array. Submit with\n\
         #   sbatch {job}\n\
         # (add sbatch options such as --partition, --time or --mem on that command line); when every task has\n\
         # finished, write the report with\n\
         #   {exe} reproduce {name}{flags} --out {out} --collect\n\
         #SBATCH --job-name=bfcsim-{name}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --cpus-per-task=1\n\
         #SBATCH --output={logs}/task-%a.out\n\
         exec '{exe}' reproduce --task '{manifest}' --index \"$SLURM_ARRAY_TASK_ID\"\n",
        name = figure.def.name,
        job = dir.join("job.sh").display(),
        exe = exe.display(),
        out = abs(&layout.out)?.display(),
        last = n.saturating_sub(1),
        logs = dir.join("logs").display(),
        manifest = path.display(),
    );
    let job = dir.join("job.sh");
    bfcsim_metrics::write_atomic(&job, |w| w.write_all(script.as_bytes()))
        .map_err(|e| io(&job, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&job, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| io(&job, e))?;
    }
    Ok(n)
}

/// Runs manifest entry `index` (one Slurm task) through the store, as a local run would.
pub fn run_task(manifest: &Path, index: usize) -> Result<(String, Source), String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("reading {}: {e}", manifest.display()))?;
    let m: Manifest =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let entry = m.runs.get(index).ok_or_else(|| {
        format!(
            "{}: no run {index} (it lists {})",
            manifest.display(),
            m.runs.len()
        )
    })?;
    let run = entry.spec.resolve()?;
    if run.key != entry.key {
        return Err(format!(
            "{}: run {index} now resolves to {} instead of {} (a file or the binary changed since --slurm)",
            manifest.display(),
            run.key,
            entry.key
        ));
    }
    let (_, source) = Store::new(&m.store).get_or_run(&run)?;
    Ok((run.key, source))
}
