//! The atlas: every figure definition with the state of its committed report (`bfcsim reproduce --status`), and
//! the index of the reports (`docs/reproduced/README.md`, `--status --write-index`), both read from each report's
//! `provenance.json` ([`crate::provenance`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::figure::{ClaimsFrom, Figure};
use crate::provenance::{ReportState, behaviour, report_state};

/// `seconds` of cores in words: core-minutes below an hour, else core-hours.
pub fn core_time(seconds: f64) -> String {
    if seconds < 3600.0 {
        format!("{:.1} core-minutes", seconds / 60.0)
    } else {
        format!("{:.2} core-hours", seconds / 3600.0)
    }
}

/// A report's count of claims that agree in direction only, `?` if it predates that verdict.
fn direction_words(n: Option<usize>) -> String {
    n.map_or("?".into(), |n| n.to_string())
}

/// The state of `state` in words, and whether it is current.
fn words(state: &ReportState) -> (String, bool) {
    match state {
        ReportState::Missing => ("no report".into(), false),
        ReportState::Unrecorded { scale } => (
            format!(
                "{scale} scale, made before reports recorded what made them: run it again to know"
            ),
            false,
        ),
        ReportState::Recorded {
            provenance: p,
            stale,
        } => {
            let commits: Vec<&str> = p.run_commits.keys().map(String::as_str).collect();
            let line = format!(
                "{} scale, {} runs, seeds {:?}; {} agree, {} in direction only, {} disagree, {} not measured; runs \
                 by {}, {}; {}",
                p.scale,
                p.runs,
                p.seeds,
                p.agree,
                direction_words(p.direction_only),
                p.disagree,
                p.not_measured,
                commits.join(" "),
                core_time(p.core_seconds),
                if stale.is_empty() {
                    "current".to_string()
                } else {
                    format!("NOT CURRENT: {}", stale.join("; "))
                }
            );
            (line, stale.is_empty())
        }
    }
}

/// One line per figure of `all` with its report's state under `reports`, and a count of the current ones.
pub fn status(all: &[Figure], reports: &Path) -> Result<String, String> {
    if !reports.is_dir() {
        let here =
            std::env::current_dir().map_or_else(|_| reports.to_path_buf(), |d| d.join(reports));
        return Err(format!(
            "no reports directory {} (looked in {}): the committed reports are the repository's \
             docs/reproduced; run from the repository's root or name it with --reports DIR",
            reports.display(),
            here.display()
        ));
    }
    let width = all.iter().map(|f| f.def.name.len()).max().unwrap_or(0);
    let mut out = format!(
        "Reports in {}, against this build (behaviour fingerprint {}):\n",
        reports.display(),
        behaviour()
    );
    let mut current = 0;
    for f in all {
        let (line, now) = words(&report_state(f, reports)?);
        current += usize::from(now);
        let _ = writeln!(out, "{:<width$}  {line}", f.def.name);
    }
    let _ = writeln!(
        out,
        "{current} of {} figures have a report current for this build.",
        all.len()
    );
    Ok(out)
}

/// Writes `reports/README.md`: a table of every figure (paper, section, what it shows), its report's scale and
/// verdicts, and links to the report and its first chart. Returns its path.
pub fn write_index(all: &[Figure], reports: &Path) -> Result<PathBuf, String> {
    let mut md = String::from(
        "# Reproduced figures\n\n\
         Every figure definition of `experiments/figures/` and its committed report, written by \
         `bfcsim reproduce --status --write-index` from each report's `provenance.json`. A report is *current* when its \
         definition is unchanged since it was made and its runs have this build's behaviour fingerprint \
         (`bfcsim reproduce --status` checks both against the binary at hand). Where a claim disagrees, \
         `docs/FIDELITY.md` gives the reason we know, or says that it is not known yet.\n\n\
         A claim *agrees in direction only* when our ratio is on the paper's side of 1 but outside its \
         numbers (`?`: a report written before that verdict, which counted them among its disagreements).\n\n\
         | figure | paper | what it shows | scale | agree | in direction only | disagree | not measured | report |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    // The papers' claims, and apart from them the figures whose claims are analytic expectations.
    let (mut made, mut agree, mut direction, mut disagree) = (0, 0, 0, 0);
    let (mut analytic, mut analytic_agree, mut analytic_disagree) = (0, 0, 0);
    for f in all {
        let d = &f.def;
        let from_paper = d.claims_from == ClaimsFrom::Paper;
        let paper = d.paper.split(" (").next().unwrap_or(&d.paper);
        let paper = if from_paper {
            paper.to_string()
        } else {
            format!("{paper} (analytic claims)")
        };
        let row = match report_state(f, reports)? {
            ReportState::Missing => "not yet run | | | | | ".to_string(),
            ReportState::Unrecorded { scale } => {
                format!(
                    "{scale}, before provenance | ? | ? | ? | ? | [report]({}/report.md)",
                    scale.report_dir(&d.name)
                )
            }
            ReportState::Recorded {
                provenance: p,
                stale,
            } => {
                if from_paper {
                    made += 1;
                    agree += p.agree;
                    direction += p.direction_only.unwrap_or(0);
                    disagree += p.disagree;
                } else {
                    analytic += 1;
                    analytic_agree += p.agree;
                    analytic_disagree += p.disagree + p.direction_only.unwrap_or(0);
                }
                let dir = p.scale.report_dir(&d.name);
                let chart = p
                    .main_chart
                    .as_ref()
                    .map_or(String::new(), |c| format!(", [chart]({dir}/{c})"));
                format!(
                    "{}{} ({} runs, seeds {:?}) | {} | {} | {} | {} | [report]({dir}/report.md){chart}",
                    p.scale,
                    if stale.is_empty() {
                        ""
                    } else {
                        ", not current"
                    },
                    p.runs,
                    p.seeds,
                    p.agree,
                    direction_words(p.direction_only),
                    p.disagree,
                    p.not_measured
                )
            }
        };
        let _ = writeln!(
            md,
            "| {} | {paper}, {} | {} | {row} |",
            d.name, d.source, d.title
        );
    }
    let papers = all
        .iter()
        .filter(|f| f.def.claims_from == ClaimsFrom::Paper)
        .count();
    let _ = writeln!(
        md,
        "\n{made} of {papers} figures of the papers have a report with its provenance: {agree} claims agree, \
         {direction} agree in direction only, {disagree} disagree."
    );
    if analytic > 0 {
        let _ = writeln!(
            md,
            "\n{analytic} more figures check the analytic expectations of mechanisms whose papers' text is not at \
             hand (marked *analytic claims*; not counted above): {analytic_agree} claims agree, \
             {analytic_disagree} do not."
        );
    }
    let path = reports.join("README.md");
    bfcsim_metrics::write_atomic(&path, |w| w.write_all(md.as_bytes()))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}
