//! Issue 11: `bfcsim reproduce` end to end on one `--quick` figure (runs, report with the paper's claims,
//! charts as PNG, SVG and CSV), `--collect` giving the same report, a Slurm manifest whose task runs one run by
//! index, and `--list` naming every figure of BFC's evaluation.

mod common;

use std::path::Path;

use common::{TempDir, bfcsim, s, workspace_root};

const FIGURE: &str = "bfc-fig11a";

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_quick_figure_writes_its_report_charts_and_claims() {
    let dir = TempDir::new("reproduce");
    let out = dir.join("out");
    let fig = quick(&out, FIGURE);
    let report = std::fs::read_to_string(fig.join("report.md")).unwrap();
    // The setup, what is missing, and one verdict line per claim of the definition.
    assert!(report.contains("ExpressPass"), "{report}");
    let definition = std::fs::read_to_string(
        workspace_root().join(format!("experiments/figures/{FIGURE}.toml")),
    )
    .unwrap();
    let claims = definition.matches("[[claim]]").count();
    let verdicts = report
        .lines()
        .filter(|l| {
            [
                "- **agree**",
                "- **agrees in direction only**",
                "- **disagree**",
            ]
            .iter()
            .any(|v| l.starts_with(v))
        })
        .count();
    assert_eq!(verdicts, claims, "{report}");
    assert!(
        report.contains("Paper: 2.3–60×; ours: DCQCN/BFC"),
        "{report}"
    );
    // Every chart in three forms, each linked from the report.
    for stem in ["slowdown-p99", "buffer-cdf", "paused.mean"] {
        for ext in ["png", "svg", "csv"] {
            let f = fig.join(format!("{stem}.{ext}"));
            assert!(f.exists(), "{} missing", f.display());
        }
        assert!(report.contains(&format!("({stem}.png)")), "{report}");
    }
    // What made it: in the header, and in provenance.json for `--status`.
    assert!(
        report.contains(&format!(
            "behaviour fingerprint `{}`",
            bfcsim::provenance::behaviour()
        )),
        "{report}"
    );
    let provenance: bfcsim::provenance::ReportProvenance =
        serde_json::from_str(&std::fs::read_to_string(fig.join("provenance.json")).unwrap())
            .unwrap();
    assert_eq!(
        (provenance.scale.to_string().as_str(), provenance.runs),
        ("quick", 8)
    );
    assert_eq!(provenance.run_commits.values().sum::<usize>(), 8);
    assert_eq!(
        provenance.agree
            + provenance.direction_only.unwrap()
            + provenance.disagree
            + provenance.not_measured,
        claims
    );
    let status = bfcsim(&[
        "reproduce",
        "--status",
        "--write-index",
        "--reports",
        s(&out),
    ]);
    assert!(status.success(), "{}", status.stderr);
    assert!(
        status.stdout.lines().any(|l| l.starts_with(FIGURE)
            && l.contains("quick scale, 8 runs")
            && l.ends_with("current")),
        "{}",
        status.stdout
    );
    let index = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        index
            .lines()
            .any(|l| l.starts_with(&format!("| {FIGURE} |"))
                && l.contains(&format!(
                    "| quick (8 runs, seeds [1]) | {} |",
                    provenance.agree
                ))
                && l.contains(&format!("[chart]({FIGURE}-quick/slowdown-p99.png)"))),
        "{index}"
    );
    let csv = std::fs::read_to_string(fig.join("slowdown-p99.csv")).unwrap();
    assert!(csv.starts_with("series,"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("BFC,")), "{csv}");

    // Collecting the finished runs gives the same bytes, and simulates nothing.
    let before = files(&fig);
    let again = bfcsim(&[
        "reproduce",
        FIGURE,
        "--quick",
        "--collect",
        "--out",
        s(&out),
    ]);
    assert!(again.success(), "{}", again.stderr);
    assert_eq!(files(&fig), before);

    // A Slurm manifest of a fresh store lists the eight runs (one per series); its task 0 runs the first into that store.
    let fresh = dir.join("fresh");
    let array = dir.join("array");
    let slurm = bfcsim(&[
        "reproduce",
        FIGURE,
        "--quick",
        "--out",
        s(&fresh),
        "--slurm",
        s(&array),
    ]);
    assert!(slurm.success(), "{}", slurm.stderr);
    let script = std::fs::read_to_string(array.join("job.sh")).unwrap();
    assert!(script.contains("#SBATCH --array=0-7"), "{script}");
    assert!(
        script.contains("--index \"$SLURM_ARRAY_TASK_ID\""),
        "{script}"
    );
    let manifest = array.join("manifest.json");
    let task = bfcsim(&["reproduce", "--task", s(&manifest), "--index", "0"]);
    assert!(task.success(), "{}", task.stderr);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let key = m["runs"][0]["key"].as_str().unwrap();
    assert!(fresh.join("runs").join(key).join("done.json").exists());
    // The report cannot be collected before the other seven have finished.
    let early = bfcsim(&[
        "reproduce",
        FIGURE,
        "--quick",
        "--collect",
        "--out",
        s(&fresh),
    ]);
    assert!(
        !early.success() && early.stderr.contains("7 of 8 runs"),
        "{}",
        early.stderr
    );
}

/// `bfcsim reproduce bfc-fig16a --quick --jobs 1 --out OUT` from the workspace root, to spawn.
fn fig16a_quick(out: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_bfcsim"));
    c.current_dir(workspace_root()).args([
        "reproduce",
        "bfc-fig16a",
        "--quick",
        "--jobs",
        "1",
        "--out",
        s(out),
    ]);
    c
}

/// Two `reproduce` processes on one `--out` split the figure's runs (each simulated once) and both write the
/// whole report.
#[test]
fn two_processes_split_a_figure() {
    let dir = TempDir::new("reproduce-shared");
    let out = dir.join("out");
    let spawn = || fig16a_quick(&out).output();
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(spawn);
        let b = scope.spawn(spawn);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    let mut simulated = 0;
    for done in [a, b] {
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{stderr}");
        // `bfc-fig16a: 3 runs (S simulated, R reused) in T s`
        let line = stderr
            .lines()
            .find(|l| l.contains(" simulated, "))
            .expect("a count");
        let count = line.split('(').nth(1).unwrap().split(' ').next().unwrap();
        simulated += count.parse::<usize>().unwrap();
    }
    assert_eq!(simulated, 3, "each of the three runs simulated once");
    assert!(out.join("bfc-fig16a-quick/report.md").exists());
}

/// A run another process has claimed is left to the end and waited for: with the first run's claim held here,
/// `reproduce` simulates the other two, says it waits, and simulates the first once the claim is let go.
#[test]
fn a_claimed_run_is_waited_for() {
    use std::io::Read as _;
    let dir = TempDir::new("reproduce-claimed");
    let out = dir.join("out");
    let manifest = bfcsim(&[
        "reproduce",
        "bfc-fig16a",
        "--quick",
        "--out",
        s(&out),
        "--slurm",
        s(&dir.join("array")),
    ]);
    assert!(manifest.success(), "{}", manifest.stderr);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("array/manifest.json")).unwrap())
            .unwrap();
    let keys: Vec<&str> = (0..3)
        .map(|i| m["runs"][i]["key"].as_str().unwrap())
        .collect();
    let runs = out.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let claim = std::fs::File::create(runs.join(format!(".{}.claim", keys[0]))).unwrap();
    claim.lock().unwrap();
    let mut child = fig16a_quick(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its stderr, read as it comes: the claim is let go only once it says it waits.
    let mut pipe = child.stderr.take().unwrap();
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let stderr = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                stderr
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let waiting = format!("waiting for run {}", keys[0]);
    let started = std::time::Instant::now();
    while !stderr.lock().unwrap().contains(&waiting) {
        assert!(
            started.elapsed().as_secs() < 120,
            "{}",
            stderr.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        keys[1..]
            .iter()
            .all(|k| runs.join(k).join("done.json").exists())
    );
    assert!(
        !runs.join(keys[0]).exists(),
        "the claimed run was simulated"
    );
    drop(claim);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
    let stderr = stderr.lock().unwrap().clone();
    assert!(
        stderr.contains("3 runs (3 simulated, 0 reused)"),
        "{stderr}"
    );
}

/// A committed report whose figure definition (or experiment files) changed since it was made no longer shows
/// what the definition produces: rerun the figure, or put the definition back.
#[test]
fn committed_reports_match_their_definitions() {
    use bfcsim::provenance::{ReportState, report_state};
    let root = workspace_root();
    let figures = bfcsim::figure::read_all(&root.join("experiments/figures")).unwrap();
    for f in &figures {
        if let ReportState::Recorded { provenance, stale } =
            report_state(f, &root.join("docs/reproduced")).unwrap()
        {
            assert_eq!(provenance.figure, f.def.name);
            let changed: Vec<_> = stale
                .iter()
                .filter(|s| s.starts_with("definition"))
                .collect();
            assert!(
                changed.is_empty(),
                "docs/reproduced/{}: {changed:?}; run `bfcsim reproduce {}` again",
                f.def.name,
                f.def.name
            );
        }
    }
}

#[test]
fn every_definition_resolves_at_both_scales() {
    let figures = bfcsim::figure::read_all(&workspace_root().join("experiments/figures")).unwrap();
    let fidelity = std::fs::read_to_string(workspace_root().join("docs/FIDELITY.md")).unwrap();
    for f in &figures {
        let section = &f.def.fidelity;
        assert!(
            fidelity.lines().any(|l| l
                .trim_start_matches('#')
                .trim_start()
                .starts_with(section.as_str())
                && l.starts_with('#')),
            "{}: docs/FIDELITY.md has no section \"{section}\"",
            f.def.name
        );
        for quick in [true, false] {
            let runs = bfcsim::figure::plan(f, quick)
                .unwrap_or_else(|e| panic!("{} (quick {quick}): {e}", f.def.name));
            assert!(!runs.is_empty(), "{}", f.def.name);
        }
    }
}

#[test]
fn the_list_names_every_figure_of_the_evaluation() {
    let run = bfcsim(&["reproduce", "--list"]);
    assert!(run.success(), "{}", run.stderr);
    let names: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for want in [
        "bfc-fig4",
        "bfc-fig9",
        "bfc-fig10",
        "bfc-fig11a",
        "bfc-fig11b",
        "bfc-fig12",
        "bfc-fig13",
        "bfc-fig14",
        "bfc-fig15",
        "bfc-fig16a",
        "bfc-fig16b",
        "bfc-fig20",
        "bfc-table2",
        "bfc-fig22a",
        "bfc-fig22b",
        "bfc-fig23a",
        "bfc-fig23b",
        "bfc-fig24",
        "bfc-fig25",
        "bfc-fig26",
        "bfc-fig27",
        "bfc-fig28",
        "bfc-fig29",
        "bfc-table1",
        "bfc-appc",
    ] {
        assert!(names.contains(&want), "{want} not in\n{}", run.stdout);
    }
}

/// Fig. 8's claims about the spread over runs (`across_seeds = "cv"`): the coefficient of variation over seeds
/// of one series, in percent; and a definition that would divide such a spread by another series is refused.
#[test]
fn a_claim_can_check_the_spread_over_seeds() {
    let dir = TempDir::new("reproduce-cv");
    let out = dir.join("out");
    let report = std::fs::read_to_string(quick(&out, "bfc-fig8").join("report.md")).unwrap();
    let line = report
        .lines()
        .find(|l| l.contains("With stochastic assignment the standard deviation"))
        .unwrap();
    // "Paper: ≥ 10%; ours: BFC + stochastic 27.2% (standard deviation over seeds / mean) at group 2 flows = 4, ..."
    assert!(
        line.contains("Paper: ≥ 10%; ours: BFC + stochastic "),
        "{line}"
    );
    let cvs: Vec<f64> = line
        .split("BFC + stochastic ")
        .skip(1)
        .map(|t| t.split('%').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(cvs.len(), 2, "{line}");
    assert!(cvs.iter().all(|&c| (0.0..100.0).contains(&c)), "{line}");
    assert!(
        line.contains("(population standard deviation over seeds / mean) at group 2 flows = 20")
    );

    // `over` with a spread is refused when the figure is read, naming the claim.
    refused(
        &dir,
        "bfc-fig8",
        |def| {
            def.replace(
                "series = [\"BFC + stochastic\"]\nacross_seeds",
                "series = [\"BFC + stochastic\"]\nover = \"BFC + dynamic\"\nacross_seeds",
            )
        },
        "checks one series' spread, so it takes no `over`",
    );
}

/// A timeseries plot can draw one series of the figure (`of`), as PayDebt's Fig. 11 has a panel per scheme:
/// one chart per `of`, named after it; a series the figure does not have is refused.
#[test]
fn a_timeseries_plot_can_draw_one_series() {
    let dir = TempDir::new("reproduce-of");
    let out = dir.join("out");
    let fig = quick(&out, "paydebt-fig11");
    for stem in [
        "flow.throughput-PayDebt",
        "flow.throughput-ExpressPass",
        "queue.bytes-PayDebt",
    ] {
        assert!(fig.join(format!("{stem}.png")).exists(), "{stem} missing");
    }
    let csv = std::fs::read_to_string(fig.join("flow.throughput-PayDebt.csv")).unwrap();
    assert!(
        csv.contains("PayDebt 0") && !csv.contains("ExpressPass"),
        "{csv}"
    );

    refused(
        &dir,
        "paydebt-fig11",
        |def| def.replacen("of = [\"ExpressPass\"]", "of = [\"Homa\"]", 1),
        "a timeseries plot's `of` names `Homa`, which is not a series of this figure",
    );
}

/// `bfcsim reproduce NAME --quick` with NAME's definition edited by `edit` (in a directory of its own) fails with
/// an error containing `want`.
fn refused(dir: &TempDir, name: &str, edit: impl Fn(String) -> String, want: &str) {
    let bad = edited(dir, name, edit);
    assert!(!bad.success());
    assert!(bad.stderr.contains(want), "{}", bad.stderr);
}

/// `bfcsim reproduce NAME --quick --out DIR/edited` with NAME's definition edited by `edit`, in `DIR/figures`.
fn edited(dir: &TempDir, name: &str, edit: impl Fn(String) -> String) -> common::Run {
    let figures = dir.join("figures");
    std::fs::create_dir_all(&figures).unwrap();
    let src = workspace_root().join("experiments/figures");
    std::fs::copy(src.join("palette.toml"), figures.join("palette.toml")).unwrap();
    let def = std::fs::read_to_string(src.join(format!("{name}.toml")))
        .unwrap()
        .replace(
            "experiment = \"../",
            &format!("experiment = \"{}/", s(&src.join(".."))),
        );
    std::fs::write(figures.join(format!("{name}.toml")), edit(def)).unwrap();
    bfcsim(&[
        "reproduce",
        name,
        "--quick",
        "--jobs",
        "2",
        "--figures",
        s(&figures),
        "--out",
        s(&dir.join("edited")),
    ])
}

/// A scale's `half` runs every run again at half of it and checks the claims there too, beside the scale's own
/// verdicts (which alone are counted, and alone drawn).
#[test]
fn a_figure_can_check_its_claims_at_half_its_scale() {
    let dir = TempDir::new("reproduce-half");
    let name = "bfc-fig16a";
    let run = edited(&dir, name, |def| {
        let quick = "describe = \"1 ms of flow arrivals\"\n";
        assert!(def.contains(quick), "{def}");
        def.replacen(
            quick,
            &format!(
                "{quick}\n[quick.half]\nset = [\"workload.duration=250us\"]\n\
                 describe = \"250 us of flow arrivals\"\n"
            ),
            1,
        )
    });
    assert!(run.success(), "{}", run.stderr);
    let fig = dir.join("edited").join(format!("{name}-quick"));
    let report = std::fs::read_to_string(fig.join("report.md")).unwrap();
    let claims: Vec<&str> = report.lines().filter(|l| l.starts_with("- **")).collect();
    assert!(!claims.is_empty(), "{report}");
    for c in &claims {
        assert!(
            c.contains(". At half this scale (250 us of flow arrivals), "),
            "{c}"
        );
    }
    let provenance: bfcsim::provenance::ReportProvenance =
        serde_json::from_str(&std::fs::read_to_string(fig.join("provenance.json")).unwrap())
            .unwrap();
    let counted = provenance.agree
        + provenance.direction_only.unwrap()
        + provenance.disagree
        + provenance.not_measured;
    assert_eq!(counted, claims.len());
    let figures = bfcsim::figure::read_all(&workspace_root().join("experiments/figures")).unwrap();
    let unedited = figures.iter().find(|f| f.def.name == name).unwrap();
    let own = bfcsim::figure::plan(unedited, true).unwrap().len();
    assert_eq!(provenance.runs, 2 * own, "{report}");
    let edited = bfcsim::figure::read_all(&dir.join("figures")).unwrap();
    assert_eq!(
        edited[0].run_count(true),
        provenance.runs,
        "as --list counts"
    );
    assert!(
        report.contains("; half of them check the claims at half this scale: 250 us"),
        "{report}"
    );
}

/// A CDF plot's `x_max` cuts its axis there, and its title names the series that go beyond.
#[test]
fn a_cdf_can_cut_its_axis() {
    let dir = TempDir::new("reproduce-cut");
    let name = "bfc-fig16a";
    let run = edited(&dir, name, |def| {
        // The figure cuts at its 12 MB buffer; here at 100 KB, where every series goes beyond.
        let cut = "x_max = 12000000.0\n";
        assert!(def.contains(cut), "{def}");
        def.replacen(cut, "x_max = 100000.0\n", 1)
    });
    assert!(run.success(), "{}", run.stderr);
    let fig = dir.join("edited").join(format!("{name}-quick"));
    let csv = std::fs::read_to_string(fig.join("buffer-cdf.csv")).unwrap();
    let xs: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(!xs.is_empty() && xs.iter().all(|&x| x <= 1e5), "{csv}");
    let svg = std::fs::read_to_string(fig.join("buffer-cdf.svg")).unwrap();
    assert!(
        svg.contains("(cut at 100KB: "),
        "the title names what goes beyond"
    );
}

/// `over_at` divides a series by itself at another axis value (PayDebt Fig. 16c's thresholds), skipping that
/// value; it must name a value of the axis.
#[test]
fn a_claim_can_compare_a_series_along_its_axis() {
    let dir = TempDir::new("reproduce-over-at");
    let report =
        std::fs::read_to_string(quick(&dir.join("out"), "paydebt-fig16c").join("report.md"))
            .unwrap();
    let line = report
        .lines()
        .find(|l| l.contains("no threshold gives small flows"))
        .unwrap();
    assert!(
        line.contains("ours: PayDebt (over K_d (BDPs) = 1) ")
            && line.ends_with("× at K_d (BDPs) = 0.5."),
        "{line}"
    );
    refused(
        &dir,
        "paydebt-fig16c",
        |def| def.replacen("over_at = 1.0", "over_at = 3.0", 1),
        "`over_at = 3` needs an axis value of the figure, and no `over`",
    );
}

/// `bfcsim reproduce NAME --quick --jobs 2 --out OUT`, which must succeed; the report's directory.
fn quick(out: &Path, name: &str) -> std::path::PathBuf {
    let run = bfcsim(&["reproduce", name, "--quick", "--jobs", "2", "--out", s(out)]);
    assert!(run.success(), "{}", run.stderr);
    out.join(format!("{name}-quick"))
}
