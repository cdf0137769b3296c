//! The README's main job (CLOS-128, Google sizes, DCTCP), shortened, through the binary; and the `exact` ideal
//! FCT's promise that a lone flow on the idle CLOS-128 fabric has slowdown exactly 1.

mod common;

use common::{TempDir, bfcsim, s};

#[test]
fn main_job_prints_bucket_table_and_writes_summary_json() {
    let tmp = TempDir::new("main-job");
    let out = tmp.join("out");
    let run = bfcsim(&[
        "run",
        "experiments/clos128-google-dctcp.toml",
        "--set",
        "workload.duration=300us",
        "--out",
        s(&out),
    ]);
    assert!(
        run.success(),
        "the main job exited with {:?}\nstderr:\n{}",
        run.code,
        run.stderr
    );
    let header = run
        .stdout
        .lines()
        .find(|l| l.starts_with("bucket"))
        .unwrap_or_else(|| panic!("no bucket table header on stdout:\n{}", run.stdout));
    assert!(header.contains("p99"), "header without p99: {header:?}");
    assert!(
        run.stdout.lines().any(|l| l.starts_with("1 pkt")),
        "no `1 pkt` row on stdout:\n{}",
        run.stdout
    );

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
            .expect("summary.json is JSON");
    let buckets = summary["buckets"]
        .as_array()
        .unwrap_or_else(|| panic!("summary.json has no `buckets` array: {summary}"));
    assert!(!buckets.is_empty(), "summary.json's buckets are empty");
    assert!(
        buckets[0]["label"]
            .as_str()
            .is_some_and(|l| l.starts_with("1 pkt")),
        "first bucket: {}",
        buckets[0]
    );
}

/// Runs one flow of `size` bytes from host 0 to host 127 (rack 0 to rack 7) on the default CLOS-128 fabric and
/// checks that `fct.csv` reports it finished with slowdown 1 (its FCT equal to the exact ideal).
fn assert_lone_flow_has_slowdown_one(size: u64) {
    let tmp = TempDir::new(&format!("lone-{size}"));
    tmp.write("flow.txt", &format!("1\n0 127 3 100 {size} 0.000001\n"));
    let file = tmp.write(
        "lone.toml",
        "name = \"lone-flow\"\n[topology]\nkind = \"leaf-spine\"\n[flows]\nfile = \"flow.txt\"\n",
    );
    let out = tmp.join("out");
    let run = bfcsim(&["run", s(&file), "--outputs", "fct.csv", "--out", s(&out)]);
    assert!(
        run.success(),
        "exited with {:?}\nstderr:\n{}",
        run.code,
        run.stderr
    );

    let csv = std::fs::read_to_string(out.join("fct.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("fct.csv has no `{name}` column: {header:?}"))
    };
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1, "fct.csv:\n{csv}");
    let row = &rows[0];
    assert_eq!(row.len(), header.len(), "fct.csv:\n{csv}");
    assert_eq!(
        (row[col("src")], row[col("dst")], row[col("size_bytes")]),
        ("0", "127", size.to_string().as_str()),
        "fct.csv:\n{csv}"
    );
    let slowdown: f64 = row[col("slowdown")]
        .parse()
        .unwrap_or_else(|_| panic!("no slowdown (unfinished?) in fct.csv:\n{csv}"));
    assert!(
        (slowdown - 1.0).abs() < 1e-9,
        "lone {size} B flow: slowdown {slowdown}, expected 1\n{csv}"
    );
    // The slowdown column has six decimals; the FCT and the ideal are exact to the picosecond.
    assert_eq!(
        row[col("fct_ns")],
        row[col("ideal_ns")],
        "lone {size} B flow: FCT differs from the ideal\n{csv}"
    );
}

#[test]
fn lone_one_packet_flow_across_clos128_has_slowdown_one() {
    assert_lone_flow_has_slowdown_one(1000);
}

#[test]
fn lone_1mb_flow_across_clos128_has_slowdown_one() {
    assert_lone_flow_has_slowdown_one(1_000_000);
}

#[test]
fn lone_10mb_flow_across_clos128_has_slowdown_one() {
    assert_lone_flow_has_slowdown_one(10_000_000);
}
