//! The developer guide's worked example end to end through the binary: `experiments/trim-tail-incast.toml`
//! runs the `trim-tail` scheme of `bfcsim_schemes::flow_control::trim_tail` (registered with one line), and its statistics
//! reach the terminal, `summary.json` and `run.json`.

mod common;

use common::{TempDir, bfcsim_ok, read_json, s};

#[test]
fn the_trim_tail_example_runs_from_its_experiment_file() {
    let tmp = TempDir::new("trim-tail");
    let out = tmp.join("out");
    let run = bfcsim_ok(&["run", "experiments/trim-tail-incast.toml", "--out", s(&out)]);
    assert!(
        run.stdout
            .contains("trim-tail: 0 headers dropped at full control queues"),
        "no trim-tail line:\n{}",
        run.stdout
    );

    let summary = read_json(&out.join("summary.json"));
    assert_eq!(
        summary["unfinished"], 0,
        "every flow of the incast finished"
    );
    let scheme = &summary["flow_control"];
    assert_eq!(scheme["kind"], "trim-tail");
    let counters = read_json(&out.join("run.json"))["counters"].clone();
    let trimmed = counters["trimmed_packets"]
        .as_u64()
        .expect("run.json counts trimmed packets");
    assert!(trimmed > 1600, "the 8-packet queues overflowed: {counters}");
    assert_eq!(
        scheme["trim_tail"]["header_nacks"].as_u64(),
        Some(trimmed),
        "every header drew a NACK"
    );
    assert!(
        scheme["trim_tail"]["echoes"].as_u64() > Some(trimmed),
        "replies echo the bit"
    );
    assert_eq!(
        counters["timeouts"], 0,
        "the NACKs repaired every cut packet"
    );
    assert!(
        counters["retransmitted_packets"].as_u64() >= Some(trimmed),
        "each cut payload was sent again: {counters}"
    );
}
