//! Records the source commit the binary was built from (`BFCSIM_COMMIT`), so that a run's completion marker and a
//! figure's report can say which engine made them: `git rev-parse` of the checkout, `-dirty` when tracked files
//! differ from it, `unknown` outside a git checkout (a source archive). And bundles the repository's `experiments/`
//! tree into the binary (`OUT_DIR/bundle.rs`, read by `src/bundle.rs`), so that an installed `bfcsim` runs the
//! README's experiments and reproduces figures from any directory. And embeds the fingerprint tables of the schemes
//! that have their own (`tests/fingerprints/NAME.txt`, `OUT_DIR/scheme_fingerprints.rs`, read by
//! `src/provenance.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `git -C root ARGS` without taking optional locks (a plain `git status` rewrites the index, which is watched).
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    // A commit moves HEAD or a branch ref (loose or packed); staging moves the index; an edit of the sources may
    // make the tree dirty (Cargo scans a directory given here for any change). The git paths are asked of git,
    // so that worktrees (whose `.git` is a file) are followed.
    let is_ours = git(&root, &["rev-parse", "--show-toplevel"])
        .is_some_and(|top| Path::new(&top).canonicalize().ok().as_deref() == Some(root.as_path()));
    let commit = if is_ours {
        for (what, name) in [
            ("--git-dir", "HEAD"),
            ("--git-dir", "index"),
            ("--git-common-dir", "refs"),
            ("--git-common-dir", "packed-refs"),
        ] {
            if let Some(dir) = git(&root, &["rev-parse", what]) {
                watch(&root.join(dir).join(name));
            }
        }
        match git(&root, &["rev-parse", "--short=12", "HEAD"]) {
            Some(c) if !c.is_empty() => {
                let dirty = git(&root, &["status", "--porcelain", "--untracked-files=no"])
                    .is_some_and(|s| !s.is_empty());
                if dirty { format!("{c}-dirty") } else { c }
            }
            _ => "unknown".to_string(),
        }
    } else {
        // A source archive, or a copy inside some other repository: not ours to name.
        "unknown".to_string()
    };
    for file in ["Cargo.toml", "Cargo.lock", "experiments"] {
        watch(&root.join(file));
    }
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        for c in crates.flatten() {
            watch(&c.path().join("src"));
        }
    }
    println!("cargo:rustc-env=BFCSIM_COMMIT={commit}");
    bundle(&root.join("experiments"));
    scheme_fingerprints(&root.join("crates/bfcsim/tests/fingerprints"));
}

/// Writes `OUT_DIR/scheme_fingerprints.rs`: `SCHEME_FINGERPRINTS`, each `dir/NAME.txt` as its preset's name and
/// its bytes, sorted by name.
fn scheme_fingerprints(dir: &Path) {
    watch(dir);
    let mut files = Vec::new();
    walk(dir, Path::new(""), &mut files);
    files.retain(|f| f.extension().is_some_and(|e| e == "txt"));
    files.sort();
    let mut code = String::from(
        "/// The schemes with a fingerprint table of their own: preset name, the table's bytes.\n\
         pub static SCHEME_FINGERPRINTS: &[(&str, &[u8])] = &[\n",
    );
    for rel in &files {
        let abs = dir.join(rel);
        let stem = rel.file_stem().expect("NAME.txt").to_string_lossy();
        code.push_str(&format!(
            "    ({stem:?}, include_bytes!({:?})),\n",
            abs.canonicalize()
                .unwrap_or(abs.clone())
                .display()
                .to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("scheme_fingerprints.rs");
    std::fs::write(&out, code).expect("writing scheme_fingerprints.rs");
}

/// Every file under `dir`, sorted, relative to `dir`.
fn walk(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        // Hidden files (editor swap files, `.DS_Store`) are not experiments.
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let rel = rel.join(e.file_name());
        if e.path().is_dir() {
            walk(dir, &rel, out);
        } else {
            out.push(rel);
        }
    }
}

/// Writes `OUT_DIR/bundle.rs`: `FILES`, each file of `experiments` (none outside a full checkout) as its path
/// under `experiments/` and its bytes.
fn bundle(experiments: &Path) {
    let mut files = Vec::new();
    walk(experiments, Path::new(""), &mut files);
    files.sort();
    let mut code = String::from(
        "/// The files of `experiments/`: path (`/`-separated, under `experiments/`), bytes.\n",
    );
    code.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for rel in &files {
        let abs = experiments.join(rel);
        let name: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        code.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            format!("experiments/{}", name.join("/")),
            abs.canonicalize()
                .unwrap_or(abs.clone())
                .display()
                .to_string()
        ));
    }
    code.push_str("];\n");
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("bundle.rs");
    std::fs::write(&out, code).expect("writing bundle.rs");
}
