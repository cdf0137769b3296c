//! What a run writes, and where. `[output] files` (or `--outputs`) picks the files; `run.json` (the resolved
//! configuration and what the run measured about itself) is always written, and marks a directory as a
//! bfcsim run's.
//!
//! A run writes into a fresh directory beside its target ([`Staging`]) and, once every file is complete,
//! replaces the target as a whole, so a directory never mixes the files of two runs (a stale `pfc.txt` of a
//! PFC run under a later run without PFC), and a run killed half-way leaves the previous results untouched.
//! The target is replaced only if it is empty or holds a bfcsim run: `--out` naming a directory of other files
//! is refused rather than deleted.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::experiment::ExperimentConfig;
use crate::runner::Outcome;

/// The file every run writes and that marks a run's directory.
pub const RUN_JSON: &str = "run.json";

/// One output file a run may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OutputFile {
    /// Per-flow records as Parquet with zstd ([`bfcsim_metrics::parquet`]).
    #[serde(rename = "fct.parquet")]
    FctParquet,
    /// Per-flow records as CSV ([`bfcsim_metrics::write_fct_csv`]).
    #[serde(rename = "fct.csv")]
    FctCsv,
    /// Finished flows in HPCC's `fct.txt` format ([`bfcsim_metrics::write_hpcc_fct`]).
    #[serde(rename = "fct.txt")]
    FctTxt,
    /// PFC frames in HPCC's `pfc.txt` format, when PFC runs ([`bfcsim_metrics::write_hpcc_pfc`]).
    #[serde(rename = "pfc.txt")]
    PfcTxt,
    /// The summary: slowdown per size bucket, drops, buffers, links, flow control ([`bfcsim_metrics::Summary`]).
    #[serde(rename = "summary.json")]
    SummaryJson,
}

impl OutputFile {
    /// Every output file, in the order they are listed to users.
    pub const ALL: [OutputFile; 5] = [
        OutputFile::FctParquet,
        OutputFile::FctCsv,
        OutputFile::FctTxt,
        OutputFile::PfcTxt,
        OutputFile::SummaryJson,
    ];

    /// The file's name.
    pub fn name(self) -> &'static str {
        match self {
            OutputFile::FctParquet => "fct.parquet",
            OutputFile::FctCsv => "fct.csv",
            OutputFile::FctTxt => "fct.txt",
            OutputFile::PfcTxt => "pfc.txt",
            OutputFile::SummaryJson => "summary.json",
        }
    }

    /// Reads a file name, as `--outputs` and `[output] files` write it.
    pub fn parse(name: &str) -> Result<OutputFile, String> {
        OutputFile::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown output `{name}` (expected {}, or `all`)",
                    names(&OutputFile::ALL)
                )
            })
    }
}

impl fmt::Display for OutputFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn names(files: &[OutputFile]) -> String {
    let names: Vec<&str> = files.iter().map(|f| f.name()).collect();
    names.join(", ")
}

/// `[output]`: which files a run writes besides `run.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// The files. Default: `fct.parquet` and `summary.json` (`fct.csv` instead of `fct.parquet` in a build
    /// without the `parquet` feature), small enough for sweeps of large runs; add `fct.txt` and `pfc.txt` for
    /// HPCC's analysis scripts.
    pub files: Vec<OutputFile>,
}

impl Default for OutputConfig {
    fn default() -> Self {
        let flows = if cfg!(feature = "parquet") {
            OutputFile::FctParquet
        } else {
            OutputFile::FctCsv
        };
        OutputConfig {
            files: vec![flows, OutputFile::SummaryJson],
        }
    }
}

impl OutputConfig {
    /// Whether the run writes `file`.
    pub fn wants(&self, file: OutputFile) -> bool {
        self.files.contains(&file)
    }

    /// Checks that no file is listed twice and that this build can write every one.
    pub fn validate(&self) -> Result<(), String> {
        for (i, f) in self.files.iter().enumerate() {
            if self.files[..i].contains(f) {
                return Err(format!("output.files lists `{f}` twice"));
            }
        }
        if self.wants(OutputFile::FctParquet) && !cfg!(feature = "parquet") {
            return Err(
                "output.files: `fct.parquet` needs bfcsim built with its `parquet` feature (on by default; \
                 this build left it out)"
                    .into(),
            );
        }
        Ok(())
    }
}

/// `--outputs LIST` as the `--set` override it stands for: `fct.csv,summary.json` or `all`.
pub fn outputs_override(list: &str) -> Result<String, String> {
    let files: Vec<OutputFile> = if list.trim() == "all" {
        OutputFile::ALL.to_vec()
    } else {
        list.split(',')
            .map(|name| OutputFile::parse(name.trim()))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("--outputs {list}: {e}"))?
    };
    let quoted: Vec<String> = files.iter().map(|f| format!("\"{f}\"")).collect();
    Ok(format!("output.files=[{}]", quoted.join(", ")))
}

/// A run's output directory while the run writes it: a fresh directory beside the target, which
/// [`Staging::commit`] puts in the target's place. Dropped without a commit, it removes what it wrote.
#[derive(Debug)]
pub struct Staging {
    target: PathBuf,
    partial: PathBuf,
    /// Where the replaced target goes between the two renames of [`Staging::commit`].
    old: PathBuf,
    committed: bool,
}

impl Staging {
    /// Checks that `target` may be replaced (absent, empty, or a bfcsim run's directory) and creates the
    /// fresh directory `.<name>.partial-<pid>` beside it, clearing what earlier interrupted runs left there
    /// (so two runs must not write one `--out` at the same time).
    pub fn begin(target: &Path) -> Result<Staging, String> {
        let shown = target.display();
        if target.exists() {
            if !target.is_dir() {
                return Err(format!("--out {shown} is a file, not a directory"));
            }
            let empty = std::fs::read_dir(target)
                .map_err(|e| format!("reading --out {shown}: {e}"))?
                .next()
                .is_none();
            if !empty && !target.join(RUN_JSON).is_file() {
                return Err(format!(
                    "--out {shown} holds files that are not a bfcsim run's (it has no {RUN_JSON}); a run replaces \
                     its output directory as a whole, so give a new or empty directory"
                ));
            }
        }
        let name = target
            .file_name()
            .ok_or_else(|| format!("--out {shown} does not name a directory"))?
            .to_string_lossy()
            .into_owned();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent)
            .map_err(|e| format!("creating {}: {e}", parent.display()))?;
        let (partial, old) = (format!(".{name}.partial-"), format!(".{name}.old-"));
        if let Ok(entries) = std::fs::read_dir(&parent) {
            for e in entries.flatten() {
                let file = e.file_name().to_string_lossy().into_owned();
                if file.starts_with(&partial) || file.starts_with(&old) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let pid = std::process::id();
        let partial = parent.join(format!("{partial}{pid}"));
        std::fs::create_dir(&partial)
            .map_err(|e| format!("creating {}: {e}", partial.display()))?;
        Ok(Staging {
            target: target.to_path_buf(),
            partial,
            old: parent.join(format!("{old}{pid}")),
            committed: false,
        })
    }

    /// Where the run writes its files.
    pub fn dir(&self) -> &Path {
        &self.partial
    }

    /// The directory the run's files end up in.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Puts the written directory in the target's place: the old target is moved aside, the new one renamed
    /// in, then the old one deleted.
    pub fn commit(mut self) -> Result<(), String> {
        let io =
            |what: &str, path: &Path, e: std::io::Error| format!("{what} {}: {e}", path.display());
        let old = self.old.clone();
        if self.target.exists() {
            std::fs::rename(&self.target, &old).map_err(|e| io("moving aside", &self.target, e))?;
        }
        std::fs::rename(&self.partial, &self.target)
            .map_err(|e| io("renaming into place", &self.target, e))?;
        self.committed = true;
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(|e| io("removing", &old, e))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.partial);
        }
    }
}

/// `run.json`: the resolved configuration and what the run measured about itself.
#[derive(Serialize)]
struct RunInfo<'a> {
    /// What made the run: version, commit, behaviour fingerprint.
    build: crate::provenance::Build,
    config: &'a ExperimentConfig,
    offered_load: Option<&'a str>,
    flows: usize,
    unfinished: usize,
    simulated_end_ns: u64,
    base_rtt_ns: f64,
    initial_window_bytes: u64,
    counters: CountersJson,
    /// The run's fingerprint (`Sim::fingerprint`), 16 hex digits: equal for equal behaviour.
    fingerprint: String,
    invariant_violations: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    stalled: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    warnings: &'a [String],
    /// Threads the run was split over (`run.threads`, or fewer when the fabric cannot be split).
    threads: usize,
    wall_seconds: f64,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    shared_ecn: &'a [crate::runner::SharedEcnReport],
    /// What `[trace]` recorded, when it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    trace: Option<TraceInfo>,
}

/// `run.json`'s account of the trace: its file, size, and the interval it was sampled at in the end (larger
/// than `trace.interval` when the budget thinned it).
#[derive(Serialize)]
struct TraceInfo {
    file: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    view: Option<&'static str>,
    rows: usize,
    samples: usize,
    interval_ns: f64,
    thinned: u32,
}

#[derive(Serialize)]
struct CountersJson {
    events: u64,
    packet_hops: u64,
    injected_packets: u64,
    delivered_packets: u64,
    dropped_packets: u64,
    data_packets: u64,
    dropped_data_packets: u64,
    ce_marked_packets: u64,
    retransmitted_packets: u64,
    duplicate_packets: u64,
    timeouts: u64,
    /// Data packets a trimming scheme's switches cut to their header, and the payload bytes they lost: only
    /// in runs that trim.
    #[serde(skip_serializing_if = "is_zero")]
    trimmed_packets: u64,
    #[serde(skip_serializing_if = "is_zero")]
    trimmed_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Writes the files `config.output` selects and `run.json` into `dir`, each through a temporary file and a
/// rename.
pub fn write_outputs(
    dir: &Path,
    config: &ExperimentConfig,
    plan: Option<&str>,
    out: &Outcome,
) -> std::io::Result<()> {
    use bfcsim_metrics::{write_fct_csv, write_hpcc_fct, write_hpcc_pfc, write_summary_json};
    std::fs::create_dir_all(dir)?;
    let groups = crate::runner::group_names(config);
    let wants = |f| config.output.wants(f);
    #[cfg(feature = "parquet")]
    if wants(OutputFile::FctParquet) {
        bfcsim_metrics::parquet::write_fct_parquet(dir.join("fct.parquet"), &out.records, &groups)?;
    }
    if wants(OutputFile::FctCsv) {
        write_fct_csv(dir.join("fct.csv"), &out.records, &groups)?;
    }
    if wants(OutputFile::FctTxt) {
        // fct.txt follows HPCC's conventions throughout, its standalone FCT included, so existing scripts work.
        write_hpcc_fct(dir.join("fct.txt"), &out.records, |r| {
            out.hpcc_ideal[r.id.idx()]
        })?;
    }
    if let (true, Some(pfc)) = (wants(OutputFile::PfcTxt), &out.pause_records) {
        write_hpcc_pfc(dir.join("pfc.txt"), pfc)?;
    }
    if wants(OutputFile::SummaryJson) {
        write_summary_json(dir.join("summary.json"), &out.summary)?;
    }
    if let Some(recorded) = &out.trace {
        crate::trace::write_trace(dir, recorded, &out.records)?;
    }
    let c = &out.counters;
    let info = RunInfo {
        build: crate::provenance::Build::this(),
        config,
        offered_load: plan,
        flows: out.records.len(),
        unfinished: out.records.iter().filter(|r| r.finish.is_none()).count(),
        simulated_end_ns: out.end.ns(),
        base_rtt_ns: out.base_rtt.0 as f64 / 1e3,
        initial_window_bytes: out.bdp,
        counters: CountersJson {
            events: c.events,
            packet_hops: c.hops,
            injected_packets: c.injected_pkts,
            delivered_packets: c.delivered_pkts,
            dropped_packets: c.dropped_pkts,
            data_packets: c.data_pkts,
            dropped_data_packets: c.dropped_data_pkts,
            ce_marked_packets: c.ce_marks,
            retransmitted_packets: c.retransmits,
            duplicate_packets: c.duplicates,
            timeouts: c.timeouts,
            trimmed_packets: c.trimmed_pkts,
            trimmed_bytes: c.trimmed_bytes,
        },
        fingerprint: format!("{:016x}", out.fingerprint),
        invariant_violations: &out.violations,
        stalled: out.stalled.as_deref(),
        warnings: &out.warnings,
        threads: out.threads,
        wall_seconds: out.wall_secs,
        shared_ecn: &out.shared_ecn,
        trace: out.trace.as_ref().map(|r| TraceInfo {
            file: r.format.file(),
            view: r.view.as_ref().map(|_| crate::trace_view::FILE),
            rows: r.series.len(),
            samples: r.series.sample_count(),
            interval_ns: r.series.interval().ps() as f64 / 1e3,
            thinned: r.series.thinned(),
        }),
    };
    crate::store::write_json(&dir.join(RUN_JSON), &info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("bfcsim-outputs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_committed_run_replaces_the_whole_directory() {
        let root = scratch("replace");
        let out = root.join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join(RUN_JSON), "{}").unwrap();
        std::fs::write(out.join("pfc.txt"), "stale").unwrap();
        let staged = Staging::begin(&out).unwrap();
        std::fs::write(staged.dir().join(RUN_JSON), "{\"new\": 1}").unwrap();
        staged.commit().unwrap();
        assert!(
            !out.join("pfc.txt").exists(),
            "a file of the earlier run survived"
        );
        assert_eq!(
            std::fs::read_to_string(out.join(RUN_JSON)).unwrap(),
            "{\"new\": 1}"
        );
        let left: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
        assert_eq!(left.len(), 1, "only the output directory is left: {left:?}");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn an_abandoned_run_leaves_the_earlier_one_and_no_partial_directory() {
        let root = scratch("abandon");
        let out = root.join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join(RUN_JSON), "old").unwrap();
        let staged = Staging::begin(&out).unwrap();
        std::fs::write(staged.dir().join(RUN_JSON), "new").unwrap();
        drop(staged);
        assert_eq!(std::fs::read_to_string(out.join(RUN_JSON)).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_directory_of_other_files_is_refused() {
        let root = scratch("foreign");
        std::fs::write(root.join("thesis.tex"), "years of work").unwrap();
        let e = Staging::begin(&root).unwrap_err();
        assert!(e.contains("not a bfcsim run's"), "{e}");
        assert!(root.join("thesis.tex").exists());
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn outputs_lists_become_overrides() {
        assert_eq!(
            outputs_override("fct.csv, summary.json").unwrap(),
            "output.files=[\"fct.csv\", \"summary.json\"]"
        );
        assert!(outputs_override("all").unwrap().contains("pfc.txt"));
        let e = outputs_override("fct.xlsx").unwrap_err();
        assert!(e.contains("unknown output `fct.xlsx`"), "{e}");
        let twice = OutputConfig {
            files: vec![OutputFile::FctCsv, OutputFile::FctCsv],
        };
        assert!(twice.validate().unwrap_err().contains("twice"));
    }
}
