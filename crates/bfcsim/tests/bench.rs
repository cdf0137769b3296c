//! `bfcsim bench --all` over 20 µs of arrivals: every scenario of the matrix under every scheme, on one thread
//! and on two, ends and writes a CSV with one sound row per run (issue 15's benchmark), and the two thread
//! counts simulate the same events.

mod common;

use std::collections::HashMap;

use bfcsim::bench::{CSV_HEADER, MATRIX_SCENARIOS, MATRIX_SCHEMES};
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
    assert!(
        !dir.join("bench.csv.tmp").exists(),
        "the temporary file was left behind"
    );
    let mut reader = csv::Reader::from_path(dir.join("bench.csv")).expect("bench.csv is written");
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(header, CSV_HEADER);
    let rows: Vec<HashMap<String, String>> = reader
        .deserialize()
        .collect::<Result<_, _>>()
        .expect("every row reads");
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
        for column in ["flows", "events", "packet_hops", "sim_end_s"] {
            assert_eq!(
                pair[0][column], pair[1][column],
                "{column} differs between one thread and two: {pair:?}"
            );
        }
    }
}
