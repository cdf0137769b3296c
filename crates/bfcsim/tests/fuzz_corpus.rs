//! Issue 16: the fuzz campaign's corpus and every crash it found, replayed through the fuzz targets on stable
//! Rust as an ordinary test (`fuzz/corpus/<target>/` and `fuzz/regressions/<target>/`; docs/FUZZING.md).
//! Each input must return normally: a panic is a regression of a bug the fuzzer once found, or a new one.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use bfcsim::fuzz_targets::TARGETS;
use common::workspace_root;

#[test]
fn every_kept_fuzz_input_runs_without_a_panic() {
    let fuzz = workspace_root().join("fuzz");
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for &(target, run) in TARGETS {
        let mut n = 0;
        for kind in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(fuzz.join(kind).join(target)) else {
                continue;
            };
            let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
            files.sort();
            for file in files {
                let bytes = std::fs::read(&file).unwrap();
                if catch_unwind(AssertUnwindSafe(|| run(&bytes))).is_err() {
                    failures.push(file.display().to_string());
                }
                n += 1;
            }
        }
        counts.push(format!("{target} {n}"));
    }
    assert!(failures.is_empty(), "inputs that panic: {failures:#?}");
    // Every target keeps inputs: an empty directory would test nothing.
    assert!(
        counts.iter().all(|c| !c.ends_with(" 0")),
        "targets without inputs: {counts:?}"
    );
}
