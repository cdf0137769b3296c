//! A run split over threads (`run.threads`, `bfcsim_sim::sim`) writes exactly the files a one-thread run
//! writes, for every kind of mechanism that crosses the cut between shards: DCTCP's data and ACKs, BFC's pause,
//! resume and refresh frames (with lost frames), PFC's frames under DCQCN and HPCC (with INT records), the
//! BFC-SRF and flow-group features, ExpressPass's credits (routed back along their data's path, rate-limited
//! at every port), and Homa's grants and sprayed packets at priority levels.

mod common;

use std::path::Path;

use bfcsim::experiment::parse_experiment;
use bfcsim::outputs::{OutputFile, write_outputs};
use bfcsim::runner::{prepare, simulate};
use common::TempDir;

/// Runs experiment file `name` with `set` and `run.threads=threads` into `out`; returns the threads used.
fn run(name: &str, set: &[&str], threads: usize, out: &Path) -> usize {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(name);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    set.push(format!("run.threads={threads}"));
    let config = parse_experiment(&file, &text, &set).unwrap();
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
    outcome.threads
}

fn same_outputs(name: &str, set: &[&str]) {
    let tmp = TempDir::new("threads");
    let one = tmp.join("one");
    assert_eq!(run(name, set, 1, &one), 1);
    for threads in [2, 3] {
        let many = tmp.join(&format!("t{threads}"));
        assert_eq!(run(name, set, threads, &many), threads, "{name}: not split");
        for file in ["fct.csv", "fct.txt", "summary.json", "pfc.txt"] {
            let (a, b) = (one.join(file), many.join(file));
            if !a.exists() {
                continue;
            }
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "{name} {set:?}: {file} differs between 1 and {threads} threads"
            );
        }
    }
}

#[test]
fn dctcp_on_clos128() {
    same_outputs("clos128-google-dctcp.toml", &["workload.duration=300us"]);
}

/// A three-layer fabric, where the shards split the aggregation switches by pod and the cores between them.
#[test]
fn dctcp_on_a_fat_tree() {
    same_outputs("bench-ft128-websearch.toml", &["workload.duration=300us"]);
}

/// A split run on a worker of a rayon pool, as in a sweep (`bfcsim::store`), where its shards' threads start
/// with each slice rather than wait in the run's own pool: same outputs.
#[test]
fn a_split_run_on_a_sweeps_worker() {
    let tmp = TempDir::new("threads-sweep");
    let set = ["workload.duration=100us"];
    let (one, two) = (tmp.join("one"), tmp.join("two"));
    run("clos128-google-dctcp.toml", &set, 1, &one);
    let sweep = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let threads = sweep.install(|| run("clos128-google-dctcp.toml", &set, 2, &two));
    assert_eq!(threads, 2);
    for file in ["fct.csv", "summary.json"] {
        assert!(
            std::fs::read(one.join(file)).unwrap() == std::fs::read(two.join(file)).unwrap(),
            "{file} differs"
        );
    }
}

#[test]
fn bfc_with_incast_and_lost_frames() {
    same_outputs(
        "clos128-google-incast-bfc.toml",
        &["workload.duration=200us", "flow_control.lose_frames=0.01"],
    );
}

#[test]
fn pfc_under_dcqcn_and_hpcc() {
    for scheme in ["dcqcn", "hpcc"] {
        same_outputs(
            "clos128-incast-pfc.toml",
            &[&format!("scheme.name={scheme}")],
        );
    }
}

#[test]
fn bfc_srf_and_flow_groups() {
    same_outputs(
        "bfc-fig15-long-flows-mice.toml",
        &["scheme.name=bfc-srf", "run.max_time=1300us"],
    );
}

#[test]
fn expresspass_credits_with_incast() {
    same_outputs(
        "clos128-google-incast-bfc.toml",
        &["workload.duration=200us", "scheme.name=expresspass"],
    );
}

#[test]
fn homa_grants_with_spraying() {
    same_outputs(
        "clos128-google-incast-bfc.toml",
        &["workload.duration=200us", "scheme.name=homa"],
    );
}

/// The stamps the delay and digest controllers read (hop count, endpoint delay, PINT's digest and per-port
/// state) cross shards with their packets.
#[test]
fn swift_timely_and_hpcc_pint_stamps_cross_shards() {
    for scheme in ["swift", "timely", "hpcc-pint"] {
        same_outputs(
            "clos128-incast-pfc.toml",
            &[&format!("scheme.name={scheme}")],
        );
    }
}
