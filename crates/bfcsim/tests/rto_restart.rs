//! A flow whose retransmission timer found nothing in flight when it last fired (and so stopped), and which has
//! data in flight again when it next sends, starts its timer from that send (RFC 6298, 5.1). Before, it armed the
//! timer at its old deadline, in the past: the event queue filed the event in a bucket its window had left, and
//! popped it 1 ms later as a made-up event (a NIC wake-up of port 2,059,413 in a 360-port network). The run
//! below, PayDebt Fig. 14's Homa(2q) on the non-blocking topology, met that at 78 ms; the event queue now stops
//! at any event scheduled in the past.

mod common;

use common::{TempDir, bfcsim_ok, read_json};

#[test]
fn a_stopped_timer_starts_again_from_the_next_send() {
    let dir = TempDir::new("rto-restart");
    let out = dir.join("out");
    bfcsim_ok(&[
        "run",
        "experiments/paydebt-homa-topology.toml",
        "--set",
        "scheme.name=homa-8",
        "--set",
        "workload.load_on=core",
        "--set",
        "workload.load_counts=wire",
        "--set",
        "workload.cdf=websearch",
        "--set",
        "workload.duration=100ms",
        "--set",
        "run.max_time=79ms",
        "--set",
        "switch.load_balancing=ecmp",
        "--set",
        "flow_control.rtt_bytes=12.5KB",
        "--set",
        "flow_control.priorities=2",
        "--set",
        "switch.classes=2",
        "--set",
        "switch.queues_per_port=2",
        "--set",
        "topology.fabric_rate=40Gbps",
        "--outputs",
        "summary.json",
        "--out",
        common::s(&out),
    ]);
    let summary = read_json(&out.join("summary.json"));
    assert!(summary["flows"].as_u64().unwrap_or(0) > 0, "{summary}");
}
