//! Issue 48: the binary carries the repository's experiments and figure definitions, so that an installed `bfcsim`
//! (`cargo install --locked --path crates/bfcsim`) reproduces a figure and runs the README's experiments from any
//! directory; files in the working directory still win, and `--export` writes the bundle out.

mod common;

use std::process::Command;

use common::TempDir;

/// Runs the binary in `cwd` with its cache (where the bundle is extracted) inside the temporary directory.
fn bfcsim_at(dir: &TempDir, cwd: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bfcsim"))
        .args(args)
        .current_dir(cwd)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .expect("spawn the bfcsim binary");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_figure_and_an_experiment_run_outside_the_repository() {
    let dir = TempDir::new("installed");
    let cwd = dir.join("elsewhere");
    std::fs::create_dir_all(&cwd).unwrap();
    let (ok, stdout, stderr) = bfcsim_at(
        &dir,
        &cwd,
        &["reproduce", "bfc-table1", "--quick", "--jobs", "1"],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("bfc-table1"), "{stdout}");
    assert!(
        cwd.join("out/reproduce/bfc-table1-quick/report.md")
            .exists()
    );
    let (ok, stdout, stderr) = bfcsim_at(
        &dir,
        &cwd,
        &[
            "run",
            "experiments/clos128-google-dctcp.toml",
            "--set",
            "workload.duration=20us",
        ],
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("1 pkt (<1KB)"), "{stdout}");
    // Nothing of the bundle was written into the working directory but the outputs.
    let mut here: Vec<_> = std::fs::read_dir(&cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    here.sort();
    assert_eq!(here, ["out"]);
}

#[test]
fn exported_definitions_are_used_once_edited() {
    let dir = TempDir::new("export");
    let cwd = dir.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let (ok, _, stderr) = bfcsim_at(&dir, &cwd, &["reproduce", "--export", "."]);
    assert!(ok, "{stderr}");
    // A second export would overwrite what the first wrote (and perhaps edited): refused.
    let (again, _, stderr) = bfcsim_at(&dir, &cwd, &["reproduce", "--export", "."]);
    assert!(!again && stderr.contains("exists"), "{stderr}");
    let table1 = cwd.join("experiments/figures/bfc-table1.toml");
    let text = std::fs::read_to_string(&table1).unwrap();
    // A local edit (the figure's title) overrides the bundle's copy.
    let edited = text.replacen("title = \"", "title = \"EDITED ", 1);
    assert_ne!(edited, text);
    std::fs::write(&table1, edited).unwrap();
    let (ok, stdout, stderr) = bfcsim_at(&dir, &cwd, &["reproduce", "--list"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("bfc-table1") && l.contains("EDITED")),
        "{stdout}"
    );
    assert!(
        !dir.join("cache").exists(),
        "the local files were used, not the bundle"
    );
}

#[test]
fn the_status_outside_the_repository_says_where_reports_are_looked_for() {
    // Issue 72: it listed "no report" for every figure.
    let dir = TempDir::new("installed-status");
    let cwd = dir.join("elsewhere");
    std::fs::create_dir_all(&cwd).unwrap();
    let (ok, stdout, stderr) = bfcsim_at(&dir, &cwd, &["reproduce", "--status"]);
    assert!(!ok, "{stdout}");
    assert!(
        stderr.contains(&format!(
            "no reports directory docs/reproduced (looked in {}): the committed reports are the repository's \
             docs/reproduced; run from the repository's root or name it with --reports DIR",
            cwd.join("docs/reproduced").display()
        )),
        "{stderr}"
    );
}
