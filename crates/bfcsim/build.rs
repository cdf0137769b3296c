//! Records the source commit the binary was built from (`BFCSIM_COMMIT`), so that a run's completion marker and a
//! figure's report can say which engine made them: `git rev-parse` of the checkout, `-dirty` when tracked files
//! differ from it, `unknown` outside a git checkout (a source archive). And bundles the repository's `experiments/`
//! tree into the binary (`OUT_DIR/bundle.rs`, read by `src/bundle.rs`), so that an installed `bfcsim` runs the
//! README's experiments and reproduces figures from any directory.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // A commit moves HEAD or a branch ref; staging moves the index; any edit of the sources may make the tree
    // dirty (Cargo scans a directory given here for any change).
    for watched in [
        ".git/HEAD",
        ".git/index",
        ".git/refs",
        "crates",
        "experiments",
    ] {
        let path = root.join(watched);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) if !c.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}-dirty") } else { c }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=BFCSIM_COMMIT={commit}");
    bundle(&root.join("experiments"));
}

/// Every file under `dir`, sorted, relative to `dir`.
fn walk(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
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
