//! NDP under a 64-to-1 incast of 100 KB flows on CLOS-128 (`experiments/ndp-incast.toml`, issue 49's
//! acceptance): no payload is lost for good. Every trimmed packet is sent again, the headers that overflow the
//! control queues go back to their senders instead of waiting for a timeout, every flow completes, the receiver's
//! link runs near line rate, and the last flow completes within 20% of the ideal drain of the incast through it.

mod common;

use common::{TempDir, bfcsim_ok, read_json, s};

#[test]
fn ndp_drains_a_64_to_1_incast_at_line_rate_and_loses_nothing() {
    let tmp = TempDir::new("ndp-incast");
    let out = tmp.join("out");
    let run = bfcsim_ok(&["run", "experiments/ndp-incast.toml", "--out", s(&out)]);
    assert!(
        run.stdout.contains("NDP: ") && run.stdout.contains("headers returned to sender"),
        "no NDP line:\n{}",
        run.stdout
    );
    let summary = read_json(&out.join("summary.json"));
    let run_json = read_json(&out.join("run.json"));
    assert_eq!(summary["flows"], 64);
    assert_eq!(
        summary["unfinished"], 0,
        "every flow of the incast finished"
    );

    let counters = &run_json["counters"];
    let trimmed = counters["trimmed_packets"].as_u64().unwrap();
    assert!(trimmed > 1000, "the 8-packet queues overflowed: {counters}");
    assert_eq!(
        counters["retransmitted_packets"].as_u64(),
        Some(trimmed),
        "each trimmed payload was sent again, and nothing else: {counters}"
    );
    assert_eq!(counters["timeouts"], 0, "no segment waited for a timeout");
    assert_eq!(summary["dropped_packets"], 0, "nothing was dropped");

    let ndp = &summary["flow_control"]["ndp"];
    let (nacks, bounces) = (
        ndp["header_nacks"].as_u64().unwrap(),
        ndp["bounces"].as_u64().unwrap(),
    );
    assert!(bounces > 0, "the first windows' headers overflowed: {ndp}");
    assert_eq!(
        nacks + bounces,
        trimmed,
        "every header reached its receiver (a NACK) or came back to its sender: {ndp}"
    );
    assert_eq!(ndp["bounces_heard"], ndp["bounces"], "{ndp}");
    assert_eq!(ndp["header_drops"], 0, "{ndp}");

    // 64 flows of 100 packets of 1,000 B payload and 48 B of headers through one 100 Gb/s link, from 1 us.
    let ideal_ns = 1_000.0 + 64.0 * 100.0 * 1048.0 * 8.0 / 100.0;
    let end_ns = run_json["simulated_end_ns"].as_f64().unwrap();
    assert!(
        end_ns <= 1.2 * ideal_ns,
        "the last flow completed at {end_ns} ns, over 1.2 x the ideal drain ({ideal_ns} ns)"
    );
    let host = summary["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "host")
        .expect("host links");
    assert!(
        host["max"].as_f64().unwrap() > 0.95,
        "the receiver's link ran near line rate over the run: {host}"
    );
}
