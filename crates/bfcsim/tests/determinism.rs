//! The same inputs and seed give bit-identical outputs (README), whether run through the binary or the library,
//! and another seed gives a different run.

mod common;

use std::path::Path;

use bfcsim::experiment::parse_experiment;
use bfcsim::outputs::{OutputFile, write_outputs};
use bfcsim::runner::{prepare, simulate};
use common::{TempDir, bfcsim, s};

/// CLOS-128 defaults, Google sizes with lognormal arrivals at 50% core load for 200 us, plus a 20-to-1 incast of
/// 2 MB every 100 us.
const EXPERIMENT: &str = r#"name = "determinism"
seed = 1

[topology]
kind = "leaf-spine"

[workload]
cdf = "google"
arrivals = "lognormal"
load = 0.5
load_on = "core"
duration = "200us"

[[workload.incast]]
degree = 20
aggregate = "2MB"
period = "100us"
"#;

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
}

/// Runs the experiment file through the binary with `extra` arguments into `out`.
fn run_binary(file: &Path, out: &Path, extra: &[&str]) {
    let mut args = vec!["run", s(file), "--out", s(out), "--outputs", "all"];
    args.extend_from_slice(extra);
    let run = bfcsim(&args);
    assert!(
        run.success(),
        "bfcsim {args:?} exited with {:?}\nstderr:\n{}",
        run.code,
        run.stderr
    );
}

/// Runs the experiment file through the library into `out`.
fn run_library(file: &Path, out: &Path) {
    let config = parse_experiment(file, EXPERIMENT, &[]).unwrap();
    let prepared = prepare(&config, file.parent().unwrap()).unwrap();
    let plan = prepared.plan.clone();
    let outcome = simulate(&config, prepared, |_| {}).unwrap();
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    let config = bfcsim::experiment::ExperimentConfig {
        output: bfcsim::outputs::OutputConfig {
            files: OutputFile::ALL.to_vec(),
        },
        ..config
    };
    write_outputs(out, &config, plan.as_deref(), &outcome).unwrap();
}

#[test]
fn same_seed_gives_identical_outputs_and_another_seed_differs() {
    let tmp = TempDir::new("determinism");
    let file = tmp.write("determinism.toml", EXPERIMENT);
    let (a, b, c) = (tmp.join("a"), tmp.join("b"), tmp.join("c"));
    run_binary(&file, &a, &[]);
    run_library(&file, &b);
    run_binary(&file, &c, &["--seed", "2"]);

    let csv = read(&a, "fct.csv");
    let text = String::from_utf8(csv.clone()).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert!(
        rows.len() > 100,
        "too few flows to test anything: {}",
        rows.len()
    );
    assert!(
        rows.iter().any(|r| r.contains(",true,")),
        "the incast generator produced no flow"
    );

    for name in ["fct.csv", "fct.txt", "summary.json"] {
        assert!(
            read(&a, name) == read(&b, name),
            "{name} differs between two runs with the same seed"
        );
    }
    assert!(
        csv != read(&c, "fct.csv"),
        "fct.csv is the same with seed 1 and seed 2"
    );
}
