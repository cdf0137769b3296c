//! What made a result: the bfcsim version, the source commit it was built from, and its behaviour fingerprint.
//!
//! The behaviour fingerprint is a hash of `tests/fingerprints.txt`, the per-scheme digests of the fingerprint
//! scenarios that the fingerprint test checks on every build. A change of any scheme's behaviour re-records that
//! file (its own commit, by the project's rules), so two builds with the same fingerprint simulate the
//! fingerprint scenarios alike: within one release a run stored by one is reused by the other (the store's key
//! holds the version and the fingerprint), and a report is current for main when its runs have main's
//! fingerprint, whichever commits made them.
//!
//! `fingerprints.txt` holds the schemes the atlas was first made with; a scheme added since records its lines
//! in a table of its own, `tests/fingerprints/NAME.txt` (NAME its preset), so that adding a scheme leaves every
//! other scheme's runs and reports current, and so does a scheme of the main table that runs a scenario of its
//! own besides the two every scheme runs (Homa's `homa-recovery`), with that scenario's lines. A run of such a
//! scheme has the fingerprint [`behaviour_of`] it: the hash of the main fingerprint and its own table, which a
//! change of either moves. The run's scheme is its preset (`scheme.name`): a run that builds an added scheme from
//! raw keys under another preset's name has that preset's fingerprint, so name the preset.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The source commit of this build (`git rev-parse --short=12`, `-dirty` for uncommitted changes, `unknown`
/// outside a git checkout).
pub const COMMIT: &str = env!("BFCSIM_COMMIT");

/// The bfcsim release.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

static BEHAVIOUR: LazyLock<String> =
    LazyLock::new(|| short_hash(include_bytes!("../tests/fingerprints.txt")));

/// The behaviour fingerprint of this build (12 hex digits of the SHA-256 of `tests/fingerprints.txt`).
pub fn behaviour() -> &'static str {
    &BEHAVIOUR
}

mod own {
    include!(concat!(env!("OUT_DIR"), "/scheme_fingerprints.rs"));
}

/// Whether preset `scheme` has a fingerprint table of its own (`tests/fingerprints/NAME.txt`).
pub fn has_own_table(scheme: &str) -> bool {
    own::SCHEME_FINGERPRINTS
        .iter()
        .any(|(name, _)| *name == scheme)
}

/// The behaviour fingerprint of this build's runs of preset `scheme`: [`behaviour`], or for a scheme with a
/// table of its own, 12 hex digits of the SHA-256 of `behaviour()` and that table.
pub fn behaviour_of(scheme: &str) -> String {
    match own::SCHEME_FINGERPRINTS
        .iter()
        .find(|(name, _)| *name == scheme)
    {
        Some((_, table)) => {
            let mut bytes = format!("{}\0", behaviour()).into_bytes();
            bytes.extend_from_slice(table);
            short_hash(&bytes)
        }
        None => behaviour().to_string(),
    }
}

/// 12 hex digits of the SHA-256 of `bytes`.
pub fn short_hash(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes)[..6])
}

/// `bytes` in lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What made a result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The bfcsim release.
    pub version: String,
    /// The source commit.
    pub commit: String,
    /// The behaviour fingerprint.
    pub behaviour: String,
}

impl Build {
    /// This binary.
    pub fn this() -> Build {
        Build {
            version: VERSION.into(),
            commit: COMMIT.into(),
            behaviour: behaviour().into(),
        }
    }

    /// This binary, for runs of preset `scheme` ([`behaviour_of`]).
    pub fn running(scheme: &str) -> Build {
        Build {
            behaviour: behaviour_of(scheme),
            ..Build::this()
        }
    }
}

/// The scale a figure ran at: the paper's, or `--quick`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Paper scale.
    Paper,
    /// `--quick`.
    Quick,
}

impl Scale {
    /// `--quick` or not.
    pub fn of(quick: bool) -> Scale {
        if quick { Scale::Quick } else { Scale::Paper }
    }

    /// The directory of figure `name`'s report at this scale: `NAME` or `NAME-quick`.
    pub fn report_dir(self, name: &str) -> String {
        match self {
            Scale::Paper => name.to_string(),
            Scale::Quick => format!("{name}-quick"),
        }
    }
}

impl std::fmt::Display for Scale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Scale::Paper => "paper",
            Scale::Quick => "quick",
        })
    }
}

/// What a figure's report was made from and what it found (`provenance.json`, beside `report.md`): read back by
/// `bfcsim reproduce --status` and by the test that keeps committed reports in step with their definitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportProvenance {
    /// The figure.
    pub figure: String,
    /// The scale it ran at.
    pub scale: Scale,
    /// The digest of the figure's definition ([`definition_digest`]).
    pub definition: String,
    /// The build that wrote the report (its runs have its behaviour fingerprint, a run's key holds it; those
    /// of a scheme with a table of its own have the one in `schemes`).
    pub written_by: Build,
    /// The behaviour fingerprints of the figure's schemes that have a fingerprint table of their own, by preset
    /// ([`behaviour_of`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub schemes: std::collections::BTreeMap<String, String>,
    /// The commits that simulated the runs, with how many each.
    pub run_commits: std::collections::BTreeMap<String, usize>,
    /// Runs.
    pub runs: usize,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// The runs' wall times added up.
    pub wall_seconds: f64,
    /// The runs' wall times × their threads, added up: the cores the figure took.
    pub core_seconds: f64,
    /// The claims our runs agree with.
    pub agree: usize,
    /// The claims whose direction our runs agree with but not their size (`None`: a report written before
    /// verdicts counted these apart, among its disagreements).
    #[serde(default)]
    pub direction_only: Option<usize>,
    /// The claims our runs disagree with.
    pub disagree: usize,
    /// The claims not measured at this scale.
    pub not_measured: usize,
    /// The report's first chart (PNG), if it has one.
    #[serde(default)]
    pub main_chart: Option<String>,
}

/// The file beside `report.md`.
pub const REPORT_PROVENANCE: &str = "provenance.json";

/// 12 hex digits of the SHA-256 of what defines `figure` at this scale: its definition file and every experiment
/// file its runs start from with the topology, flow and CDF files they read, as bytes. Editing any of them
/// changes it; a change of the engine or of a preset does not (the behaviour fingerprint tracks those), nor one of
/// the palette (colours only: `--collect` redraws a report's charts from its stored runs).
pub fn definition_digest(
    figure: &crate::figure::Figure,
    runs: &[crate::figure::PlannedRun],
) -> Result<String, String> {
    let read =
        |p: &std::path::Path| std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
    let mut h = Sha256::new();
    h.update(read(&figure.path)?);
    let mut files = std::collections::BTreeSet::new();
    for r in runs {
        files.insert(r.run.spec.experiment.clone());
        for f in crate::store::referenced_files(&r.run.config) {
            files.insert(r.run.base.join(f));
        }
    }
    for f in files {
        h.update([0]);
        h.update(read(&f)?);
    }
    Ok(hex(&h.finalize()[..6]))
}

/// The behaviour fingerprints of the schemes of `runs` that have a fingerprint table of their own, by preset.
pub fn own_behaviours(
    runs: &[crate::figure::PlannedRun],
) -> std::collections::BTreeMap<String, String> {
    runs.iter()
        .map(|r| r.run.config.scheme.name.as_str())
        .filter(|s| has_own_table(s))
        .map(|s| (s.to_string(), behaviour_of(s)))
        .collect()
}

/// Where a figure's committed report stands against this build (`bfcsim reproduce --status`).
#[derive(Clone, Debug, PartialEq)]
pub enum ReportState {
    /// No report of the figure.
    Missing,
    /// A report made before reports recorded what made them.
    Unrecorded {
        /// Its scale.
        scale: Scale,
    },
    /// A report with its provenance, and what is out of date about it (nothing: current).
    Recorded {
        /// Its provenance.
        provenance: Box<ReportProvenance>,
        /// Why it is not current: its definition or its behaviour fingerprint differs from this build's.
        stale: Vec<String>,
    },
}

/// The state of `figure`'s report under `reports` (`NAME/`, or `NAME-quick/` when only that exists).
pub fn report_state(
    figure: &crate::figure::Figure,
    reports: &std::path::Path,
) -> Result<ReportState, String> {
    for scale in [Scale::Paper, Scale::Quick] {
        let dir = reports.join(scale.report_dir(&figure.def.name));
        let path = dir.join(REPORT_PROVENANCE);
        if !path.exists() {
            if dir.join("report.md").exists() {
                return Ok(ReportState::Unrecorded { scale });
            }
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let provenance: ReportProvenance =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let runs = crate::figure::plan(figure, scale == Scale::Quick)?;
        let mut stale = Vec::new();
        let definition = definition_digest(figure, &runs)?;
        if provenance.definition != definition {
            stale.push(format!(
                "definition changed ({} → {definition})",
                provenance.definition
            ));
        }
        if provenance.direction_only.is_none() {
            stale.push(
                "its verdicts predate \"agrees in direction only\" (counted among its disagreements): \
                 build it again from its runs (`--collect`) or run it again"
                    .into(),
            );
        }
        if provenance.written_by.behaviour != behaviour() {
            stale.push(format!(
                "engine behaves differently (fingerprint {} → {})",
                provenance.written_by.behaviour,
                behaviour()
            ));
        }
        for (scheme, now) in own_behaviours(&runs) {
            // A scheme the report lists no fingerprint for had the engine's when it was written.
            let then = provenance
                .schemes
                .get(&scheme)
                .map_or(provenance.written_by.behaviour.as_str(), String::as_str);
            if then != now {
                stale.push(format!(
                    "{scheme} behaves differently (fingerprint {then} → {now})"
                ));
            }
        }
        return Ok(ReportState::Recorded {
            provenance: Box::new(provenance),
            stale,
        });
    }
    Ok(ReportState::Missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schemes of the main table have its fingerprint; one with a table of its own has another, which both
    /// tables make.
    #[test]
    fn a_scheme_has_the_main_fingerprint_unless_it_has_a_table_of_its_own() {
        assert!(!has_own_table("dctcp"));
        assert_eq!(behaviour_of("dctcp"), behaviour());
        assert_eq!(Build::running("dctcp"), Build::this());
        for (name, _) in own::SCHEME_FINGERPRINTS {
            assert!(has_own_table(name));
            assert_ne!(behaviour_of(name), behaviour(), "{name}");
        }
    }
}
