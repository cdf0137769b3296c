//! Issue 17: what a user reads refers only to what the repository holds (or to the papers by name and
//! section), and names things as the user writes them. This test reads every user-visible text source, the
//! command-line help of every subcommand, `bfcsim schemes`, the README and the other Markdown files, the
//! experiment files, the error messages kept in snapshots and the sources whose doc comments and messages a
//! user sees, and finds in none of them
//!
//! - a reference to a file outside the repository: the project's internal guide, the shared folder, absolute
//!   paths of the machine it was written on, or a relative path in a Markdown file that leads nowhere;
//! - a Rust `Debug` form of a name, such as `Port(1)` or `ToHost(2)`, where the user wrote `port:1` or
//!   `to-host:2`.

mod common;

use std::path::{Path, PathBuf};

use common::{bfcsim, workspace_root};

/// Words that only make sense outside the repository.
const OUTSIDE: &[&str] = &["GUIDE", "shared/", "../../workloads", ".library"];

/// Whether `line` refers to something outside the repository: one of [`OUTSIDE`], or an absolute path of the
/// machine it was written on (`/work/...`, not `fuzz/work/`).
fn refers_outside(line: &str) -> bool {
    OUTSIDE.iter().any(|w| line.contains(w))
        || line
            .match_indices("/work/")
            .any(|(i, _)| !line[..i].ends_with(|c: char| c.is_ascii_alphanumeric()))
}

/// Files under `dir` (recursively) whose names end with one of `exts`, skipping build output.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | "work" | "corpus" | "regressions" | ".git"
            ) {
                files(&path, exts, out);
            }
        } else if exts.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

/// `Name(123)`: a capitalised identifier, a parenthesis, digits, a parenthesis.
fn debug_forms(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    for (i, _) in text.match_indices('(') {
        let start = text[..i]
            .char_indices()
            .rev()
            .find(|(_, c)| !c.is_ascii_alphanumeric())
            .map_or(0, |(j, c)| j + c.len_utf8());
        let name = &text[start..i];
        let digits = text[i + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(0);
        let upper = name.as_bytes().first().is_some_and(u8::is_ascii_uppercase);
        let lower = name.bytes().any(|c| c.is_ascii_lowercase());
        if upper && lower && digits > 0 && b.get(i + 1 + digits) == Some(&b')') {
            found.push(text[start..i + 2 + digits].to_string());
        }
    }
    found
}

/// Relative paths in a Markdown file (in backticks or link targets) that start with `../` and do not exist.
fn dangling(path: &Path, text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for piece in text.split(['`', '(', ')', ' ', '\n']) {
        if piece.starts_with("../") && !path.parent().unwrap().join(piece).exists() {
            bad.push(piece.to_string());
        }
    }
    bad
}

#[test]
fn user_visible_texts_refer_to_the_repository_and_use_user_names() {
    let root = workspace_root();
    // (where, text)
    let mut texts: Vec<(String, String)> = Vec::new();
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["reproduce", "--help"],
        &["replay", "--help"],
        &["compare", "--help"],
        &["bench", "--help"],
        &["schemes", "--help"],
        &["schemes"],
    ] {
        let run = bfcsim(args);
        assert!(run.success(), "bfcsim {args:?}: {}", run.stderr);
        texts.push((
            format!("bfcsim {}", args.join(" ")),
            run.stdout + &run.stderr,
        ));
    }
    let mut paths = Vec::new();
    for name in ["README.md", "BENCHMARKS.md"] {
        paths.push(root.join(name));
    }
    files(&root.join("docs"), &[".md"], &mut paths);
    files(&root.join("data"), &[".md"], &mut paths);
    files(&root.join("experiments"), &[".toml", ".md"], &mut paths);
    files(&root.join("crates"), &[".rs", ".snap", ".md"], &mut paths);
    files(&root.join("fuzz"), &[".rs", ".sh", ".toml"], &mut paths);
    let mut problems = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        if shown.ends_with(".md") {
            for d in dangling(path, &text) {
                problems.push(format!("{shown}: `{d}` does not exist"));
            }
        }
        texts.push((shown, text));
    }
    for (where_, text) in &texts {
        for (n, line) in text.lines().enumerate() {
            // This test names the words it looks for.
            if refers_outside(line) && !where_.ends_with("user_texts.rs") {
                problems.push(format!(
                    "{where_}:{}: refers outside the repository: {line}",
                    n + 1
                ));
            }
            // Issue 72: an install that re-resolves the dependencies builds other versions than the tests ran.
            if line.contains("cargo install") && !line.contains("--locked") {
                problems.push(format!(
                    "{where_}:{}: `cargo install` without `--locked`: {line}",
                    n + 1
                ));
            }
            // Sources are Rust, where `Some(1)` is code: only what users read is held to the Debug rule.
            if !where_.ends_with(".rs") {
                for d in debug_forms(line) {
                    problems.push(format!(
                        "{where_}:{}: Debug-style name `{d}`: {line}",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems in {} texts:\n{}",
        problems.len(),
        texts.len(),
        problems.join("\n")
    );
}

#[test]
fn debug_forms_and_outside_references_are_recognised() {
    assert_eq!(
        debug_forms("no Port(999) links; ToHost(2) and Core, f(1) and port:1"),
        ["Port(999)", "ToHost(2)"]
    );
    assert!(refers_outside("see /work/main/x") && refers_outside("GUIDE §2"));
    assert!(!refers_outside("fuzz/work/<target>/"));
}
