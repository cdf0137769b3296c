//! `bfcsim bench --all` over 20 µs of arrivals: every scenario of the matrix under every scheme, on one thread
//! and on two, ends and writes a CSV with one sound row per run (issue 15's benchmark), and the two thread
//! counts simulate the same events. `bfcsim bench --against` times another build in pairs and refuses one that
//! simulates something else.

mod common;

use std::collections::HashMap;

use bfcsim::bench::{AGAINST_CSV_HEADER, CSV_HEADER, MATRIX_SCENARIOS, MATRIX_SCHEMES};
use common::{TempDir, bfcsim_in};

#[test]
fn the_matrix_writes_a_row_per_run() {
    let dir = TempDir::new("bench");
    let run = bfcsim_in(
        dir.path(),
        &[
            "bench",
            "--all",
            "--duration",
            "20us",
            "--threads",
            "1,2",
            "--csv",
            "bench.csv",
        ],
    );
    assert!(
        run.success(),
        "bench failed:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
    let rows = csv_rows(&dir.join("bench.csv"), CSV_HEADER);
    let num = |r: &HashMap<String, String>, column: &str| -> f64 {
        r[column]
            .parse()
            .unwrap_or_else(|_| panic!("{column} `{}` is not a number: {r:?}", r[column]))
    };
    let mut expected = Vec::new();
    for scenario in MATRIX_SCENARIOS {
        for scheme in MATRIX_SCHEMES {
            for threads in ["1", "2"] {
                expected.push((
                    scenario.to_string(),
                    scheme.to_string(),
                    threads.to_string(),
                ));
            }
        }
    }
    let got: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["scenario"].clone(),
                r["scheme"].clone(),
                r["threads"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got, expected,
        "one row per scenario, scheme and thread count, in order"
    );
    for r in &rows {
        assert_eq!(r["problem"], "", "{r:?}");
        // Every count, time and rate; instructions and memory are checked below.
        let measured = CSV_HEADER.iter().filter(|c| {
            ![
                "scenario",
                "scheme",
                "instructions_per_hop",
                "peak_mib",
                "problem",
            ]
            .contains(c)
        });
        for &column in measured {
            assert!(num(r, column) > 0.0, "{column} is not positive: {r:?}");
        }
        assert!(num(r, "events") >= num(r, "packet_hops") / 2.0, "{r:?}");
        // Empty where no hardware counter opens (a VM, another OS); a plausible count where one does.
        if !r["instructions_per_hop"].is_empty() {
            assert!(num(r, "instructions_per_hop") > 10.0, "{r:?}");
        }
        if cfg!(target_os = "linux") {
            assert!(num(r, "peak_mib") > 1.0, "{r:?}");
        }
    }
    for pair in rows.chunks(2) {
        for column in ["flows", "packet_hops", "sim_end_s"] {
            assert_eq!(
                pair[0][column], pair[1][column],
                "{column} differs between one thread and two: {pair:?}"
            );
        }
        // Each shard's timers due at one instant fire in one event of its own, so two shards may count a few
        // events more than one (`bfcsim_sim::sim`'s doc): DCQCN here, 106,286 against 106,292.
        let (one, two) = (num(&pair[0], "events"), num(&pair[1], "events"));
        assert!(
            (two - one).abs() <= one / 1000.0,
            "events differ by more than timers can between one thread and two: {pair:?}"
        );
    }
}

/// The rows of the CSV at `path`, after checking its header is `header`.
fn csv_rows(path: &std::path::Path, header: &[&str]) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).expect("the CSV is written");
    let found: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(found, header);
    reader
        .deserialize()
        .collect::<Result<_, _>>()
        .expect("every row reads")
}

/// `bfcsim bench --against other` in `dir` on CLOS-128 over 20 µs, on one thread, with `more` options, writing
/// `against.csv`.
fn bench_against(dir: &TempDir, other: &str, more: &[&str]) -> common::Run {
    let mut args = vec![
        "bench",
        "--against",
        other,
        "--duration",
        "20us",
        "--threads",
        "1",
        "--csv",
        "against.csv",
    ];
    args.extend_from_slice(more);
    bfcsim_in(dir.path(), &args)
}

#[test]
fn a_build_timed_against_itself_simulates_the_same_runs() {
    let dir = TempDir::new("bench-against");
    let run = bench_against(
        &dir,
        env!("CARGO_BIN_EXE_bfcsim"),
        &["--pairs", "2", "--scheme", "dctcp,bfc"],
    );
    assert!(
        run.success(),
        "bench failed:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let rows = csv_rows(&dir.join("against.csv"), AGAINST_CSV_HEADER);
    let schemes: Vec<&str> = rows.iter().map(|r| r["scheme"].as_str()).collect();
    assert_eq!(schemes, ["dctcp", "bfc"]);
    for r in &rows {
        assert_eq!(r["pairs"], "2", "{r:?}");
        assert_eq!(r["same_counters"], "true", "{r:?}");
        for column in ["packet_hops", "this_wall_s", "other_wall_s", "speedup"] {
            let v: f64 = r[column].parse().expect("a number");
            assert!(v > 0.0, "{column} is not positive: {r:?}");
        }
    }
}

#[cfg(unix)]
#[test]
fn a_build_that_simulates_another_run_fails_the_pairing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("bench-against-other");
    // The "other build": this one, asked for half the load.
    let other = dir.write(
        "other-bfcsim",
        &format!(
            "#!/bin/sh\nexec '{}' \"$@\" --set workload.load=0.3\n",
            env!("CARGO_BIN_EXE_bfcsim")
        ),
    );
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = bench_against(&dir, common::s(&other), &["--pairs", "1"]);
    assert!(!run.success(), "a different run passed:\n{}", run.stdout);
    assert!(
        run.stderr
            .contains("the two builds simulated different runs"),
        "{}",
        run.stderr
    );
    let rows = csv_rows(&dir.join("against.csv"), AGAINST_CSV_HEADER);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["same_counters"], "false");
}
