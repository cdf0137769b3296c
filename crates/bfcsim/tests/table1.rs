//! TABLE1 (BFC §2.1) at a short duration, as a regression check of the ordering the paper reports, not of its
//! numbers: the long-lived flow gets more of the shared link under BFC than under HPCC, and more under HPCC than
//! under DCQCN; BFC keeps the tail queuing delay of one-packet flows far below HPCC's. (The full runs and how
//! they compare with the paper are in docs/FIDELITY.md, "TABLE1".)

mod common;

use common::{TempDir, bfcsim, read_json, s, workspace_root};

/// Runs the TABLE1 experiment for 20 ms under `scheme`: (long flow's share of its link, one-packet flows' p99
/// queuing delay in ns).
fn table1(scheme: &str) -> (f64, f64) {
    let tmp = TempDir::new(&format!("table1-{scheme}"));
    let out = tmp.join("out");
    let file = workspace_root().join("experiments/table1-long-flow-hadoop.toml");
    let run = bfcsim(&[
        "run",
        s(&file),
        "--set",
        &format!("scheme.name={scheme}"),
        "--set",
        "workload.duration=20ms",
        "--set",
        "run.max_time=20ms",
        "--out",
        s(&out),
    ]);
    assert!(run.success(), "{scheme}: {:?}\n{}", run.code, run.stderr);
    let summary = read_json(&out.join("summary.json"));
    let long = &summary["long_lived"][0];
    assert_eq!(
        (long["src"].as_u64(), long["dst"].as_u64()),
        (Some(0), Some(2))
    );
    (
        long["share_of_link"].as_f64().unwrap(),
        summary["single_packet_delay"]["p99_ns"].as_f64().unwrap(),
    )
}

#[test]
fn long_flow_gets_more_under_bfc_than_hpcc_than_dcqcn() {
    let (bfc, bfc_delay) = table1("bfc");
    let (hpcc, hpcc_delay) = table1("hpcc");
    let (dcqcn, _) = table1("dcqcn");
    println!(
        "long flow's share: bfc {bfc:.3}, hpcc {hpcc:.3}, dcqcn {dcqcn:.3}; one-packet p99 delay: bfc \
         {bfc_delay:.0} ns, hpcc {hpcc_delay:.0} ns"
    );
    assert!(bfc > hpcc && hpcc > dcqcn, "{bfc} {hpcc} {dcqcn}");
    assert!(
        bfc > 0.3,
        "BFC keeps the long flow near its fair share: {bfc}"
    );
    assert!(bfc_delay * 5.0 < hpcc_delay, "{bfc_delay} {hpcc_delay}");
}
