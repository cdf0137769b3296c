//! The sender's path choice (`nic.paths`, issue 69) end to end: any controller can spray by entropy (DCTCP over
//! REPS), spraying spreads a fat tree's load where flow-level ECMP collides, and the runs stay deterministic
//! across thread counts (each flow's entropy draws are its own stream).

mod common;

use common::{TempDir, bfcsim_ok, read_json, s};

/// `bfcsim run` of the k = 8 fat-tree bench for 0.5 ms of arrivals with `set`; its summary.json and
/// fingerprint line.
fn run(tmp: &TempDir, tag: &str, set: &[&str]) -> serde_json::Value {
    let out = tmp.join(tag);
    let mut args = vec![
        "run",
        "experiments/bench-ft128-websearch.toml",
        "--set",
        "workload.duration=500us",
        "--outputs",
        "summary.json",
        "--out",
        s(&out),
    ];
    for o in set {
        args.extend(["--set", o]);
    }
    bfcsim_ok(&args);
    read_json(&out.join("summary.json"))
}

fn fabric_max_utilization(summary: &serde_json::Value) -> f64 {
    summary["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "fabric")
        .unwrap()["max"]
        .as_f64()
        .unwrap()
}

#[test]
fn dctcp_sprays_by_entropy_and_spreads_the_fabric_load() {
    let tmp = TempDir::new("uet-paths-dctcp");
    let ecmp = run(&tmp, "ecmp", &["scheme.name=dctcp"]);
    for paths in ["oblivious", "reps"] {
        let sprayed = run(
            &tmp,
            paths,
            &[
                "scheme.name=dctcp",
                "nic.recovery=uet",
                &format!("nic.paths={paths}"),
            ],
        );
        assert_eq!(sprayed["unfinished"], 0, "{paths}");
        assert_eq!(sprayed["flows"], ecmp["flows"]);
        let (spread, hashed) = (
            fabric_max_utilization(&sprayed),
            fabric_max_utilization(&ecmp),
        );
        assert!(
            spread < 0.8 * hashed,
            "{paths}: the busiest fabric link at {spread:.3} against ECMP's {hashed:.3}"
        );
    }
}

#[test]
fn sprayed_runs_are_the_same_on_one_thread_and_two() {
    let tmp = TempDir::new("uet-paths-threads");
    for scheme in ["uet-nscc", "uet-nscc-spray"] {
        let one = run(
            &tmp,
            &format!("{scheme}-1"),
            &[&format!("scheme.name={scheme}"), "run.threads=1"],
        );
        let two = run(
            &tmp,
            &format!("{scheme}-2"),
            &[&format!("scheme.name={scheme}"), "run.threads=2"],
        );
        assert_eq!(one, two, "{scheme}");
    }
}
