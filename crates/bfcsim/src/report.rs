//! A reproduced figure's report: `report.md` (the setup, one line per claim of the paper with its numbers and
//! ours, summary and per-bucket tables) and the charts its definition asks for, each as PNG, SVG and CSV.
//! Built from the runs' digests and completion markers only, so the same build collecting the same finished runs
//! again gives the same bytes. It says what made it ([`crate::provenance`]: the build writing it, which another
//! build collecting the runs changes, and the builds that simulated the runs): in its header, and in
//! `provenance.json` for `bfcsim reproduce --status`.

use std::fmt::Write as _;
use std::path::Path;

use bfcsim_metrics::write_atomic;
use bfcsim_plot::{Axis, Bar, Body, Chart, Line, Unit, render};

use crate::digest::Digest;
use crate::figure::{
    AcrossSeeds, CdfOf, ClaimDef, ClaimsFrom, Expect, Figure, Metric, PlannedRun, PlotDef, Stat,
};
use crate::provenance::{Build, REPORT_PROVENANCE, ReportProvenance, Scale};
use crate::store::Made;

/// The runs of a figure with their digests.
#[derive(Clone)]
pub struct Results<'a> {
    /// The figure.
    pub figure: &'a Figure,
    /// `--quick` or paper scale.
    pub quick: bool,
    /// Its runs, in plan order.
    pub runs: &'a [PlannedRun],
    /// Their digests, in the same order.
    pub digests: &'a [Digest],
    /// What made each, in the same order.
    pub made: &'a [Made],
    /// The digest of the figure's definition at this scale.
    pub definition: String,
    /// Which of the runs this reads: the scale's own (`false`), or those of its half-scale check
    /// ([`crate::figure::Scale::half`]).
    pub half: bool,
}

impl Results<'_> {
    /// The digests of series `s` at axis value `x` (one per seed).
    fn at(&self, s: usize, x: Option<f64>) -> Vec<&Digest> {
        self.runs
            .iter()
            .zip(self.digests)
            .filter(|(r, _)| r.series == s && r.x == x && r.half == self.half)
            .map(|(_, d)| d)
            .collect()
    }

    /// The mean over seeds of `metric` for series `s` at `x`; `None` unless every seed measured it.
    fn value(&self, metric: &Metric, s: usize, x: Option<f64>) -> Option<f64> {
        let ds = self.at(s, x);
        let vs: Option<Vec<f64>> = ds.iter().map(|d| metric.of(d)).collect();
        vs.filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The coefficient of variation over seeds of `metric` for series `s` at `x` ([`cv`]); `None` unless at
    /// least two seeds measured it.
    fn seed_cv(&self, metric: &Metric, s: usize, x: Option<f64>) -> Option<f64> {
        let vs: Vec<f64> = self
            .at(s, x)
            .iter()
            .map(|d| metric.of(d))
            .collect::<Option<_>>()?;
        cv(&vs)
    }

    /// `metric` of series `s` at `x` over `metric` of series `o` at `ox`, seed by seed (empty unless both
    /// measured it for every seed): the spread behind the mean [`Results::value`] ratios.
    fn seed_ratios(
        &self,
        metric: &Metric,
        (s, x): (usize, Option<f64>),
        (o, ox): (usize, Option<f64>),
    ) -> Vec<f64> {
        let of = |series: usize, x: Option<f64>| -> Option<Vec<(u64, f64)>> {
            self.runs
                .iter()
                .zip(self.digests)
                .filter(|(r, _)| r.series == series && r.x == x && r.half == self.half)
                .map(|(r, d)| metric.of(d).map(|v| (r.seed, v)))
                .collect()
        };
        let (Some(a), Some(b)) = (of(s, x), of(o, ox)) else {
            return Vec::new();
        };
        a.iter()
            .filter_map(|&(seed, v)| {
                let (_, w) = b.iter().find(|&&(t, _)| t == seed)?;
                Some(v / w)
            })
            .filter(|q| q.is_finite())
            .collect()
    }

    /// The series that ran at `x`, by index.
    fn series_at(&self, x: Option<f64>) -> Vec<usize> {
        (0..self.figure.def.series.len())
            .filter(|&s| !self.at(s, x).is_empty())
            .collect()
    }

    fn label(&self, s: usize) -> &str {
        &self.figure.def.series[s].label
    }

    /// `label = value` of an axis point, for titles; empty without an axis.
    fn point_words(&self, x: Option<f64>) -> String {
        match (&self.figure.def.axis, x) {
            (Some(a), Some(x)) => format!("{} = {}", a.label, a.unit.unit().format(x)),
            _ => String::new(),
        }
    }

    /// A file-name suffix for an axis point.
    fn point_file(&self, x: Option<f64>) -> String {
        match (&self.figure.def.axis, x) {
            (Some(a), Some(x)) => format!("-{}{}", slug(&a.label), crate::figure::axis_text(x)),
            _ => String::new(),
        }
    }
}

/// The coefficient of variation of `values`: their population standard deviation (over n, the runs being all
/// there are, not a sample of more) over their mean; `None` for fewer than two.
fn cv(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    Some(var.sqrt() / mean)
}

/// `file`, or when `taken` says another chart has that name (two plots of one time series, at two entities),
/// the first of `file-2`, `file-3`, ... that is free: each chart keeps its own files.
fn unused_name(file: String, taken: impl Fn(&str) -> bool) -> String {
    if !taken(&file) {
        return file;
    }
    (2..)
        .map(|n| format!("{file}-{n}"))
        .find(|f| !taken(f))
        .expect("some suffix is free")
}

/// `text` as a file name: its runs of characters that are not alphanumeric or `.` each one `-`, none at the ends.
fn slug(text: &str) -> String {
    // Each run of other characters becomes one dash, none at the ends: `K_d (BDPs)` is `K-d-BDPs`.
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// A claim checked against our runs.
pub struct Verdict {
    /// Every number we measured for the claim, in words (`DCQCN/BFC 12.1× at load 60%`).
    pub ours: Vec<String>,
    /// How they compare with the paper's.
    pub agreement: Agreement,
}

/// How our numbers for a claim compare with the paper's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// All are within what the paper says.
    Agrees,
    /// Some are not, but every one is a ratio on the paper's side of 1 (the paper has BFC 1.6-5× better, ours
    /// is 1.2× or 10× better): the paper's direction holds, its size does not.
    Direction,
    /// Some are outside what the paper says, and not all on its side of 1.
    Disagrees,
    /// We did not measure some.
    NotMeasured,
}

impl Agreement {
    /// The verdict as a report writes it.
    pub fn words(self) -> &'static str {
        match self {
            Agreement::Agrees => "agree",
            Agreement::Direction => "agrees in direction only",
            Agreement::Disagrees => "disagree",
            Agreement::NotMeasured => "not measured",
        }
    }
}

/// The side of 1 a claimed ratio is on (`Some(true)` above, `Some(false)` below), `None` if the claim allows
/// both (a range across 1, or 1 itself).
fn side_of_one(e: &Expect) -> Option<bool> {
    match *e {
        Expect::Range([lo, hi]) if lo >= 1.0 && hi > 1.0 => Some(true),
        Expect::Range([lo, hi]) if hi <= 1.0 && lo < 1.0 => Some(false),
        Expect::Value(v) if v != 1.0 => Some(v > 1.0),
        _ => None,
    }
}

/// The paper's claimed value in words.
fn expect_words(e: &Expect, tolerance: f64, unit: Unit, ratio: bool) -> String {
    // A ratio reads `2.3–60×`; a value carries its unit on each number.
    let (f, end): (&dyn Fn(f64) -> String, &str) = if ratio {
        (&|v| Unit::Plain.format(v), "×")
    } else {
        (&|v| unit.format(v), "")
    };
    match *e {
        Expect::Range([lo, hi]) if hi.is_infinite() => format!("≥ {}{end}", f(lo)),
        Expect::Range([lo, hi]) if lo.is_infinite() || lo == 0.0 && ratio => {
            format!("≤ {}{end}", f(hi))
        }
        Expect::Range([lo, hi]) if lo == hi => format!("{}{end}", f(lo)),
        Expect::Range([lo, hi]) => format!("{}–{}{end}", f(lo), f(hi)),
        Expect::Value(v) => format!("{}{end} (±{:.0}%)", f(v), tolerance * 100.0),
    }
}

/// Checks `claim` against the runs.
pub fn check(results: &Results, claim: &ClaimDef) -> Verdict {
    let fig = results.figure;
    let metric = &fig.metrics[&claim.metric];
    let tolerance = claim.tolerance.unwrap_or(1.0 / 3.0);
    let over = claim.over.as_ref().and_then(|o| fig.series_index(o));
    let points: Vec<Option<f64>> = match &claim.at {
        Some(at) => at.iter().map(|&x| Some(x)).collect(),
        None => fig.points(results.quick),
    };
    let mut ours = Vec::new();
    let mut values = Vec::new();
    for name in &claim.series {
        let s = fig
            .series_index(name)
            .expect("checked when the figure was read");
        for &x in &points {
            // What each value is divided by: `over` at the same point, or this series at `over_at`.
            let base = match (over, claim.over_at) {
                (Some(o), _) => Some((o, x)),
                (None, Some(at)) if Some(at) != x => Some((s, Some(at))),
                (None, Some(_)) => continue,
                (None, None) => None,
            };
            let here = !results.at(s, x).is_empty()
                && base.is_none_or(|(o, ox)| !results.at(o, ox).is_empty());
            if !here {
                continue;
            }
            let cv = claim.across_seeds == AcrossSeeds::Cv;
            let q = match base {
                None if cv => results.seed_cv(metric, s, x),
                None => results.value(metric, s, x),
                Some((o, ox)) => results
                    .value(metric, s, x)
                    .zip(results.value(metric, o, ox))
                    .map(|(a, b)| a / b),
            };
            let at = results.point_words(x);
            let at = if at.is_empty() {
                at
            } else {
                format!(" at {at}")
            };
            let who = match (over, claim.over_at) {
                (Some(o), _) => format!("{name}/{}", results.label(o)),
                (None, Some(bx)) => format!("{name} (over {})", results.point_words(Some(bx))),
                (None, None) => name.clone(),
            };
            match q.filter(|q| q.is_finite()) {
                None => {
                    ours.push(format!("{who}{at}: not measured"));
                    values.push(None);
                }
                Some(q) => {
                    values.push(Some(q));
                    let spread =
                        base.map_or(Vec::new(), |b| results.seed_ratios(metric, (s, x), b));
                    let text = match base {
                        Some(_) if spread.len() > 1 => {
                            let lo = spread.iter().copied().fold(f64::INFINITY, f64::min);
                            let hi = spread.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                            format!(
                                "{}× (seeds {}–{}×)",
                                Unit::Plain.format(q),
                                Unit::Plain.format(lo),
                                Unit::Plain.format(hi)
                            )
                        }
                        Some(_) => format!("{}×", Unit::Plain.format(q)),
                        None if cv => format!(
                            "{} (population standard deviation over seeds / mean)",
                            Unit::Fraction.format(q)
                        ),
                        None => metric.unit().format(q),
                    };
                    ours.push(format!("{who} {text}{at}"));
                }
            }
        }
    }
    let ratio = over.is_some() || claim.over_at.is_some();
    let agreement = judge(&values, &claim.paper, tolerance, ratio);
    Verdict { ours, agreement }
}

/// The verdict on our `values` (`None`: not measured) against the paper's `expect`: a ratio (`ratio`) outside it
/// but on its side of 1 agrees in direction only.
fn judge(values: &[Option<f64>], expect: &Expect, tolerance: f64, ratio: bool) -> Agreement {
    let Some(values) = values.iter().copied().collect::<Option<Vec<f64>>>() else {
        return Agreement::NotMeasured;
    };
    let within = |q: f64| match *expect {
        Expect::Range([lo, hi]) => q >= lo && q <= hi,
        Expect::Value(v) => (q - v).abs() <= tolerance * v.abs(),
    };
    let side = ratio.then(|| side_of_one(expect)).flatten();
    if values.is_empty() {
        Agreement::NotMeasured
    } else if values.iter().all(|&q| within(q)) {
        Agreement::Agrees
    } else if side.is_some_and(|above| values.iter().all(|&q| q != 1.0 && (q > 1.0) == above)) {
        Agreement::Direction
    } else {
        Agreement::Disagrees
    }
}

/// Writes `report.md` and the charts of `results` into `dir`.
pub fn write(results: &Results, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let fig = results.figure;
    let def = &fig.def;
    let scale = fig.scale(results.quick);
    let mut md = String::new();
    let _ = writeln!(md, "# {}: {}\n", def.name, def.title);
    let _ = writeln!(
        md,
        "{}, {}. Reproduced by `bfcsim reproduce {}{}` ({}; {} runs, seeds {:?}{}). Figure definition: \
         `experiments/figures/{}`.\n",
        def.paper,
        def.source,
        def.name,
        if results.quick { " --quick" } else { "" },
        if results.quick {
            format!("quick scale: {}", scale.describe)
        } else {
            format!("paper scale: {}", scale.describe)
        },
        results.runs.len(),
        fig.seeds(results.quick),
        scale.half.as_ref().map_or(String::new(), |h| format!(
            "; half of them check the claims at half this scale: {}",
            h.describe
        )),
        fig.path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
    );
    let mut provenance = provenance_of(results);
    provenance_words(&provenance, &mut md);
    if results.quick {
        let _ = writeln!(
            md,
            "**Quick scale**: these runs check that the figure runs and what it draws; their numbers are too \
             few to compare with the paper's (run `bfcsim reproduce {}` for that).\n",
            def.name
        );
    }
    let _ = writeln!(md, "Setup: {}\n", def.setup.trim());
    let broken = results.digests.iter().filter(|d| d.violations > 0).count();
    if broken > 0 {
        let _ = writeln!(
            md,
            "**Warning**: {broken} of the runs violated the simulator's end-of-run invariants (see their \
             `run.json`); their numbers are not to be trusted.\n"
        );
    }
    if !def.missing.is_empty() {
        let _ = writeln!(md, "Not in this reproduction:\n");
        for m in &def.missing {
            let _ = writeln!(md, "- {m}");
        }
        md.push('\n');
    }
    if !def.claim.is_empty() {
        let analytic = def.claims_from == ClaimsFrom::Analytic;
        let (heading, expected) = if analytic {
            (
                "## The claims: analytic expectations of the mechanisms (the paper's text is not at hand)",
                "Expected",
            )
        } else {
            ("## The paper's claims", "Paper")
        };
        let _ = writeln!(md, "{heading}\n");
        let half = scale.half.as_ref().map(|h| {
            (
                h,
                Results {
                    half: true,
                    ..results.clone()
                },
            )
        });
        for c in &def.claim {
            let metric = &fig.metrics[&c.metric];
            let v = check(results, c);
            let verdict = v.agreement.words();
            *match v.agreement {
                Agreement::Agrees => &mut provenance.agree,
                Agreement::Direction => provenance.direction_only.get_or_insert(0),
                Agreement::Disagrees => &mut provenance.disagree,
                Agreement::NotMeasured => &mut provenance.not_measured,
            } += 1;
            let paper = expect_words(
                &c.paper,
                c.tolerance.unwrap_or(1.0 / 3.0),
                match c.across_seeds {
                    AcrossSeeds::Mean => metric.unit(),
                    AcrossSeeds::Cv => Unit::Fraction,
                },
                c.over.is_some() || c.over_at.is_some(),
            );
            let ours = |v: &Verdict| {
                if v.ours.is_empty() {
                    "not run at this scale".to_string()
                } else {
                    v.ours.join(", ")
                }
            };
            let settled = half.as_ref().map_or(String::new(), |(h, r)| {
                let v = check(r, c);
                format!(
                    " At half this scale ({}), {}: {}.",
                    h.describe,
                    v.agreement.words(),
                    ours(&v)
                )
            });
            let _ = writeln!(
                md,
                "- **{verdict}**: {} {expected}: {paper}; ours: {}.{settled}",
                c.text.trim(),
                ours(&v)
            );
        }
        let _ = writeln!(
            md,
            "\nWhere our runs disagree, `docs/FIDELITY.md` (\"{}\") gives the likely reason.",
            def.fidelity
        );
        md.push('\n');
    }
    summary_table(results, &mut md);
    let mut charts: Vec<(String, Chart)> = Vec::new();
    for p in &def.plot {
        for (file, chart) in charts_of(results, p, &mut md) {
            let file = unused_name(file, |f| charts.iter().any(|(c, _)| c == f));
            charts.push((file, chart));
        }
    }
    if !charts.is_empty() {
        let _ = writeln!(md, "## Charts\n");
    }
    provenance.main_chart = charts.first().map(|(file, _)| format!("{file}.png"));
    for (file, chart) in &charts {
        let r = render(chart)?;
        let put = |ext: &str, bytes: &[u8]| {
            let path = dir.join(format!("{file}.{ext}"));
            write_atomic(&path, |w| w.write_all(bytes))
                .map_err(|e| format!("writing {}: {e}", path.display()))
        };
        put("png", &r.png)?;
        put("svg", r.svg.as_bytes())?;
        put("csv", &r.csv)?;
        let _ = writeln!(
            md,
            "![{}]({file}.png)\n\n[SVG]({file}.svg), [data]({file}.csv)\n",
            chart.title
        );
    }
    let path = dir.join(REPORT_PROVENANCE);
    crate::store::write_json(&path, &provenance)
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    let path = dir.join("report.md");
    write_atomic(&path, |w| w.write_all(md.as_bytes()))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// What made the report's runs (its claims not yet counted).
fn provenance_of(results: &Results) -> ReportProvenance {
    let mut run_commits = std::collections::BTreeMap::new();
    for m in results.made {
        *run_commits.entry(m.build.commit.clone()).or_insert(0) += 1;
    }
    ReportProvenance {
        figure: results.figure.def.name.clone(),
        scale: Scale::of(results.quick),
        definition: results.definition.clone(),
        written_by: Build::this(),
        schemes: crate::provenance::own_behaviours(results.runs),
        run_commits,
        runs: results.runs.len(),
        seeds: results.figure.seeds(results.quick).to_vec(),
        wall_seconds: results.made.iter().map(|m| m.wall_seconds).sum(),
        core_seconds: results
            .made
            .iter()
            .map(|m| m.wall_seconds * m.threads as f64)
            .sum(),
        agree: 0,
        direction_only: Some(0),
        disagree: 0,
        not_measured: 0,
        main_chart: None,
    }
}

/// The report's line on what made it.
fn provenance_words(p: &ReportProvenance, md: &mut String) {
    let commits: Vec<String> = p
        .run_commits
        .iter()
        .map(|(c, n)| format!("`{c}` ({n} runs)"))
        .collect();
    let own: Vec<String> = p
        .schemes
        .iter()
        .map(|(s, b)| format!("its {s} runs `{b}`"))
        .collect();
    let shared = if own.is_empty() {
        ", which its runs share".to_string()
    } else {
        format!("; {}", own.join(", "))
    };
    let _ = writeln!(
        md,
        "Made by bfcsim {} at commit `{}` (behaviour fingerprint `{}`{shared}) from the definition \
         with digest `{}`. Its {} runs were simulated by commit {} in {} (each run's wall time × its threads, added up).\n",
        p.written_by.version,
        p.written_by.commit,
        p.written_by.behaviour,
        p.definition,
        p.runs,
        commits.join(", "),
        crate::atlas::core_time(p.core_seconds),
    );
}

/// The table every report has: per series (and axis value) the headline numbers.
fn summary_table(results: &Results, md: &mut String) {
    let fig = results.figure;
    let axis = fig.def.axis.as_ref();
    let columns: [(&str, &str); 10] = [
        ("flows", "flows"),
        ("unfinished", "unfinished"),
        ("p99 slowdown < 3KB", "short.p99"),
        ("avg slowdown > 3MB", "long.avg"),
        ("p99 slowdown all", "all.p99"),
        ("p99 buffer", "buffer.p99"),
        ("links paused", "paused.mean"),
        ("drops", "drops"),
        ("loss rate", "loss"),
        ("timeouts", "timeouts"),
    ];
    let _ = writeln!(md, "## Summary\n");
    let _ = write!(md, "| series |");
    if let Some(a) = axis {
        let _ = write!(md, " {} |", a.label);
    }
    for (name, _) in &columns {
        let _ = write!(md, " {name} |");
    }
    md.push('\n');
    let _ = writeln!(
        md,
        "|---|{}{}",
        if axis.is_some() { "---|" } else { "" },
        "---|".repeat(columns.len())
    );
    for x in fig.points(results.quick) {
        for s in results.series_at(x) {
            let _ = write!(md, "| {} |", results.label(s));
            if let (Some(a), Some(x)) = (axis, x) {
                let _ = write!(md, " {} |", a.unit.unit().format(x));
            }
            for (_, m) in &columns {
                let cell = match *m {
                    "flows" => Some(results.at(s, x).iter().map(|d| d.flows).sum::<usize>() as f64),
                    m => {
                        let metric = Metric::parse(m).expect("the summary's metrics parse");
                        results.value(&metric, s, x)
                    }
                };
                let unit = Metric::parse(m).map_or(Unit::Plain, |m| m.unit());
                let _ = write!(md, " {} |", cell.map_or("—".into(), |v| unit.format(v)));
            }
            md.push('\n');
        }
    }
    md.push('\n');
}

/// The charts of one plot definition (file stem and chart), adding a table to `md` where the chart's numbers
/// are worth reading (slowdown per bucket).
fn charts_of(results: &Results, plot: &PlotDef, md: &mut String) -> Vec<(String, Chart)> {
    let fig = results.figure;
    let points = fig.points(results.quick);
    let title = |what: String, x: Option<f64>| {
        let at = results.point_words(x);
        if at.is_empty() {
            what
        } else {
            format!("{what}, {at}")
        }
    };
    let line = |s: usize, points: Vec<(f64, f64)>| Line {
        name: results.label(s).to_string(),
        colour: fig.colours[s],
        points,
        dashed: false,
        markers: true,
    };
    let mut out = Vec::new();
    match plot {
        PlotDef::Slowdown { stats, flows } => {
            let set_file = if flows == "non-incast" {
                String::new()
            } else {
                format!("-{}", slug(flows))
            };
            let set_words = if flows == "non-incast" {
                String::new()
            } else {
                format!(" ({flows} flows)")
            };
            for &x in &points {
                for &stat in stats {
                    let mut lines = Vec::new();
                    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
                    let series = results.series_at(x);
                    for (k, &s) in series.iter().enumerate() {
                        let pts = bucket_points(&results.at(s, x), flows, stat);
                        for (label, _, v) in &pts {
                            let i = match rows.iter().position(|r| &r.0 == label) {
                                Some(i) => i,
                                None => {
                                    rows.push((label.clone(), vec!["—".into(); series.len()]));
                                    rows.len() - 1
                                }
                            };
                            rows[i].1[k] = Unit::Plain.format(*v);
                        }
                        lines.push(line(
                            s,
                            pts.iter().map(|(_, size, v)| (*size, *v)).collect(),
                        ));
                    }
                    let what = format!("{} FCT slowdown{set_words}", stat.words());
                    let _ = writeln!(md, "### {}\n", title(what.clone(), x));
                    let _ = write!(md, "| flow size |");
                    for &s in &series {
                        let _ = write!(md, " {} |", results.label(s));
                    }
                    let _ = writeln!(md, "\n|---|{}", "---|".repeat(series.len()));
                    for (label, cells) in &rows {
                        let _ = writeln!(md, "| {label} | {} |", cells.join(" | "));
                    }
                    md.push('\n');
                    out.push((
                        format!(
                            "slowdown{set_file}-{}{}",
                            stat.name(),
                            results.point_file(x)
                        ),
                        Chart {
                            title: title(what, x),
                            x: Axis::log("flow size (largest in bucket)", Unit::Bytes),
                            y: Axis::log(format!("{} slowdown", stat.words()), Unit::Plain),
                            body: Body::Lines(lines),
                            vline: None,
                        },
                    ));
                }
            }
        }
        PlotDef::Cdf {
            of,
            by_axis,
            vline,
            x_max,
        } => {
            // A series' CDF (its first seed's) up to the cut, and its largest sample.
            let cdf = |d: &Digest| -> (Vec<(f64, f64)>, f64) {
                let all = match of {
                    CdfOf::Buffer => d.buffer.as_ref().map(|b| b.cdf.clone()),
                    CdfOf::Active => d.active.as_ref().map(|a| a.cdf.clone()),
                }
                .unwrap_or_default();
                let largest = all.last().map_or(0.0, |p| p.0);
                let cut = all
                    .into_iter()
                    .filter(|p| x_max.is_none_or(|m| p.0 <= m))
                    .collect();
                (cut, largest)
            };
            let (what, x_axis) = match of {
                CdfOf::Buffer => (
                    "CDF of buffer occupancy",
                    Axis::linear("buffer occupancy", Unit::Bytes),
                ),
                // Incast drives the tail to hundreds of flows while the queues per port are tens: a log axis keeps
                // both in view (the curve starts at 1 with the samples of no or one active flow).
                CdfOf::Active => (
                    "CDF of active flows per switch port",
                    Axis::log("active flows (log scale)", Unit::Plain),
                ),
            };
            // The cut fixes the axis only where some series goes beyond it.
            let cut = x_max.filter(|&m| {
                (0..fig.def.series.len()).any(|s| {
                    points
                        .iter()
                        .any(|&x| results.at(s, x).first().is_some_and(|d| cdf(d).1 > m))
                })
            });
            let x_axis = match cut {
                Some(m) => x_axis.range(0.0, m),
                None => x_axis,
            };
            let y_axis = Axis::linear("fraction of samples", Unit::Fraction).range(0.0, 1.0);
            let mark = vline.map(|v| (v, format!(" {}", x_axis.unit.format(v))));
            // What the title says of the cut: the series beyond it, each with its largest sample.
            let beyond = |cut: &[(String, f64)]| -> String {
                let past: Vec<String> = cut
                    .iter()
                    .filter(|(_, largest)| x_max.is_some_and(|m| *largest > m))
                    .map(|(name, largest)| format!("{name} to {}", x_axis.unit.format(*largest)))
                    .collect();
                match (x_max, past.is_empty()) {
                    (Some(m), false) => {
                        format!(" (cut at {}: {})", x_axis.unit.format(*m), past.join(", "))
                    }
                    _ => String::new(),
                }
            };
            let seed = if fig.seeds(results.quick).len() > 1 {
                format!(", seed {}", fig.seeds(results.quick)[0])
            } else {
                String::new()
            };
            let stem = match of {
                CdfOf::Buffer => "buffer-cdf",
                CdfOf::Active => "active-cdf",
            };
            if *by_axis {
                let axis = fig.def.axis.as_ref();
                for s in 0..fig.def.series.len() {
                    let mut largest = Vec::new();
                    let lines: Vec<Line> = points
                        .iter()
                        .enumerate()
                        .filter_map(|(k, &x)| {
                            let (pts, most) = cdf(results.at(s, x).first()?);
                            largest.push((results.point_words(x), most));
                            Some(Line {
                                name: results.point_words(x),
                                colour: shade(fig.colours[s], k, points.len()),
                                points: pts,
                                dashed: false,
                                markers: false,
                            })
                        })
                        .collect();
                    if lines.is_empty() {
                        continue;
                    }
                    out.push((
                        format!("{stem}-{}", slug(results.label(s))),
                        Chart {
                            title: format!(
                                "{what}, {} (by {}{seed}){}",
                                results.label(s),
                                axis.map_or("point", |a| a.label.as_str()),
                                beyond(&largest)
                            ),
                            x: x_axis.clone(),
                            y: y_axis.clone(),
                            body: Body::Lines(lines),
                            vline: mark.clone(),
                        },
                    ));
                }
            } else {
                for &x in &points {
                    let mut largest = Vec::new();
                    let lines: Vec<Line> = results
                        .series_at(x)
                        .into_iter()
                        .filter_map(|s| {
                            let (pts, most) = cdf(results.at(s, x).first()?);
                            largest.push((results.label(s).to_string(), most));
                            (!pts.is_empty()).then(|| Line {
                                markers: false,
                                ..line(s, pts)
                            })
                        })
                        .collect();
                    out.push((
                        format!("{stem}{}", results.point_file(x)),
                        Chart {
                            title: title(format!("{what}{seed}{}", beyond(&largest)), x),
                            x: x_axis.clone(),
                            y: y_axis.clone(),
                            body: Body::Lines(lines),
                            vline: mark.clone(),
                        },
                    ));
                }
            }
        }
        PlotDef::Bars {
            metric,
            title: named,
            log,
        } => {
            let m = &fig.metrics[metric];
            let words = named.clone().unwrap_or_else(|| m.words());
            for &x in &points {
                let bars = results
                    .series_at(x)
                    .into_iter()
                    .map(|s| Bar {
                        name: results.label(s).to_string(),
                        colour: fig.colours[s],
                        value: results.value(m, s, x).unwrap_or(f64::NAN),
                    })
                    .collect();
                out.push((
                    format!("{}{}", slug(metric), results.point_file(x)),
                    Chart {
                        title: title(words.clone(), x),
                        x: Axis::linear("", Unit::Plain),
                        y: if *log {
                            Axis::log(words.clone(), m.unit())
                        } else {
                            Axis::linear(words.clone(), m.unit())
                        },
                        body: Body::Bars(bars),
                        vline: None,
                    },
                ));
            }
        }
        PlotDef::Metric { metric, log, over } => {
            let m = &fig.metrics[metric];
            let a = fig
                .def
                .axis
                .as_ref()
                .expect("checked when the figure was read");
            let base = over.as_ref().map(|label| {
                let b = fig
                    .series_index(label)
                    .expect("checked when the figure was read");
                (b, label)
            });
            // Normalised: each point divided by the baseline series' value at the same axis point.
            let value = |s: usize, x: Option<f64>| -> Option<f64> {
                let v = results.value(m, s, x)?;
                match base {
                    None => Some(v),
                    Some((b, _)) => Some(v / results.value(m, b, x)?),
                }
            };
            let lines = (0..fig.def.series.len())
                .map(|s| {
                    line(
                        s,
                        points
                            .iter()
                            .filter_map(|&x| Some((x?, value(s, x)?)))
                            .collect(),
                    )
                })
                .filter(|l| !l.points.is_empty())
                .collect();
            let x = Axis {
                log: a.log,
                ..Axis::linear(a.label.clone(), a.unit.unit())
            };
            let (words, unit, file) = match base {
                None => (m.words(), m.unit(), slug(metric)),
                Some((_, label)) => (
                    format!("{} / {label}", m.words()),
                    Unit::Plain,
                    format!("{}-over-{}", slug(metric), slug(label)),
                ),
            };
            let y = Axis {
                log: *log,
                ..Axis::linear(words.clone(), unit)
            };
            out.push((
                format!("{file}-vs-{}", slug(&a.label)),
                Chart {
                    title: format!("{words} against {}", a.label),
                    x,
                    y,
                    body: Body::Lines(lines),
                    vline: None,
                },
            ));
        }
        PlotDef::Timeseries {
            series: name,
            entity,
            title: named,
            hline,
            of,
        } => {
            let (words, unit) = crate::trace::words(name);
            let words = words.to_string();
            let words = named.clone().unwrap_or(words);
            for &x in &points {
                let mut lines = Vec::new();
                let drawn_series = results
                    .series_at(x)
                    .into_iter()
                    .filter(|&s| of.is_empty() || of.iter().any(|l| l == results.label(s)));
                for s in drawn_series {
                    let Some(d) = results.at(s, x).first().copied() else {
                        continue;
                    };
                    let drawn: Vec<_> = d
                        .trace
                        .iter()
                        .filter(|l| &l.series == name && l.entity.starts_with(entity.as_str()))
                        .collect();
                    for (k, l) in drawn.iter().enumerate() {
                        let suffix = l.entity[entity.len()..].trim_start_matches(['/', ':']);
                        let label = match (drawn.len(), suffix.is_empty()) {
                            (1, _) | (_, true) => results.label(s).to_string(),
                            _ => format!("{} {suffix}", results.label(s)),
                        };
                        lines.push(Line {
                            name: label,
                            colour: shade(fig.colours[s], k, drawn.len()),
                            points: l.points.clone(),
                            dashed: false,
                            markers: false,
                        });
                    }
                }
                if let (Some((y, label)), Some(first)) = (hline, lines.first()) {
                    let xs = first.points.iter().map(|p| p.0);
                    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                        (a.min(v), b.max(v))
                    });
                    lines.push(Line {
                        name: label.clone(),
                        colour: [0, 0, 0],
                        points: vec![(lo, *y), (hi, *y)],
                        dashed: true,
                        markers: false,
                    });
                }
                let (stem, whose) = match of.is_empty() {
                    true => (slug(name), String::new()),
                    false => (
                        format!("{}-{}", slug(name), slug(&of.join("-"))),
                        format!(", {}", of.join(", ")),
                    ),
                };
                out.push((
                    format!("{stem}{}", results.point_file(x)),
                    Chart {
                        title: title(format!("{words} over time{whose}"), x),
                        x: Axis::linear("time", Unit::Nanos),
                        y: Axis::linear(words.clone(), unit),
                        body: Body::Lines(lines),
                        vline: None,
                    },
                ));
            }
        }
    }
    out
}

/// `(bucket label, largest flow size, statistic)` of every bucket of flow set `set` that has finished flows,
/// averaged over the seeds' digests (buckets are matched by label).
fn bucket_points(digests: &[&Digest], set: &str, stat: Stat) -> Vec<(String, f64, f64)> {
    let Some(first) = digests.first().and_then(|d| d.set(set)) else {
        return Vec::new();
    };
    first
        .buckets
        .iter()
        .filter_map(|b| {
            let mut size = 0.0f64;
            let mut sum = 0.0;
            for d in digests {
                let other = d.set(set)?.buckets.iter().find(|o| o.label == b.label)?;
                size = size.max(other.max_size? as f64);
                sum += stat.of(other.stats.as_ref()?);
            }
            Some((b.label.clone(), size, sum / digests.len() as f64))
        })
        .collect()
}

/// The `k`th of `n` shades of `c`: `c` itself first, then ever closer to white (up to 70% of the way), so that
/// the lines of one series at several axis values stay apart even for black.
fn shade(c: [u8; 3], k: usize, n: usize) -> [u8; 3] {
    let f = 0.7 * k as f64 / n.saturating_sub(1).max(1) as f64;
    let mix = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * f).round() as u8;
    [mix(c[0]), mix(c[1]), mix(c[2])]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_over_seeds_is_the_population_cv() {
        // Mean 2.5, population standard deviation sqrt(1.25).
        let v = super::cv(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((v - 1.25f64.sqrt() / 2.5).abs() < 1e-12, "{v}");
        assert_eq!(super::cv(&[7.0, 7.0, 7.0]), Some(0.0));
        assert_eq!(super::cv(&[7.0]), None);
    }

    /// BFC Fig. 11a's long flows: the paper has the others 1.6-5× slower than BFC.
    #[test]
    fn a_ratio_on_the_papers_side_of_one_agrees_in_direction_only() {
        let paper = Expect::Range([1.6, 5.0]);
        let third = 1.0 / 3.0;
        let j = |v: &[Option<f64>], ratio| judge(v, &paper, third, ratio);
        assert_eq!(j(&[Some(2.0), Some(4.9)], true), Agreement::Agrees);
        assert_eq!(j(&[Some(10.6), Some(1.22)], true), Agreement::Direction);
        assert_eq!(j(&[Some(10.6), Some(0.9)], true), Agreement::Disagrees);
        assert_eq!(j(&[Some(1.0)], true), Agreement::Disagrees);
        // A value is not a ratio: it has no side of 1.
        assert_eq!(j(&[Some(10.6)], false), Agreement::Disagrees);
        assert_eq!(j(&[Some(2.0), None], true), Agreement::NotMeasured);
        assert_eq!(j(&[], true), Agreement::NotMeasured);
        // Below 1: the paper has PayDebt's buffer a fifth of Homa's; ours is half.
        let below = Expect::Value(0.2);
        assert_eq!(
            judge(&[Some(0.5)], &below, third, true),
            Agreement::Direction
        );
        assert_eq!(
            judge(&[Some(1.5)], &below, third, true),
            Agreement::Disagrees
        );
        // "At least as good" is all direction: outside it is the other side.
        let at_least = Expect::Range([1.0, f64::INFINITY]);
        assert_eq!(
            judge(&[Some(0.8)], &at_least, third, true),
            Agreement::Disagrees
        );
        // A range across 1, or 1 itself, says nothing of a side.
        let one = Expect::Range([1.0, 1.0]);
        assert_eq!(judge(&[Some(2.0)], &one, third, true), Agreement::Disagrees);
        let across = Expect::Range([0.8, 1.2]);
        assert_eq!(
            judge(&[Some(2.0)], &across, third, true),
            Agreement::Disagrees
        );
    }

    #[test]
    fn claimed_values_read_as_the_paper_writes_them() {
        let r = Expect::Range([2.3, 60.0]);
        assert_eq!(expect_words(&r, 0.3, Unit::Plain, true), "2.3–60×");
        let at_least = Expect::Range([1.0, f64::INFINITY]);
        assert_eq!(expect_words(&at_least, 0.3, Unit::Plain, true), "≥ 1×");
        let v = Expect::Value(0.373);
        assert_eq!(
            expect_words(&v, 1.0 / 3.0, Unit::Fraction, false),
            "37.3% (±33%)"
        );
        let none = Expect::Range([0.0, 0.0]);
        assert_eq!(expect_words(&none, 0.3, Unit::Fraction, false), "0%");
        assert_eq!(slug("group:direct"), "group-direct");
        assert_eq!(shade([0, 0, 0], 0, 3), [0, 0, 0]);
        assert_eq!(shade([0, 0, 0], 2, 3), [179, 179, 179]);
    }

    #[test]
    fn two_charts_of_one_name_keep_their_own_files() {
        let taken = ["flow.throughput", "flow.throughput-2"];
        let is_taken = |f: &str| taken.contains(&f);
        assert_eq!(unused_name("queue.bytes".into(), is_taken), "queue.bytes");
        assert_eq!(
            unused_name("flow.throughput".into(), is_taken),
            "flow.throughput-3"
        );
    }
}
