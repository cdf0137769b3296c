//! Records the source commit the binary was built from (`BFCSIM_COMMIT`), so that a run's completion marker and a
//! figure's report can say which engine made them: `git rev-parse` of the checkout, `-dirty` when tracked files
//! differ from it, `unknown` outside a git checkout (a source archive).

use std::path::Path;
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
}
