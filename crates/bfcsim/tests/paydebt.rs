//! PayDebt end to end (issue 50): on §5.2's 4:1 topology under Hadoop every flow finishes, each `debt_request`
//! draws one debt, and losses (forced by a small buffer) are each found by a probe and resent once (a lost debt
//! or token costs a probe timeout, and the flow still finishes); through
//! one bottleneck, eight flows to eight receivers share it fairly at the rate its tokens allow, with the token
//! queue's congestion control at work (Fig. 11's setting).

mod common;

use common::{TempDir, bfcsim_ok, read_json, s};

/// Runs PayDebt's topology at 4:1 (load on the core links) under Hadoop for `duration` of arrivals.
fn hadoop(tag: &str, duration: &str, extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let tmp = TempDir::new(tag);
    let out = tmp.join("out");
    let duration = format!("workload.duration={duration}");
    let mut args = vec![
        "run",
        "experiments/paydebt-homa-topology.toml",
        "--set",
        "scheme.name=paydebt",
        "--set",
        "topology.fabric_rate=10Gbps",
        "--set",
        "workload.load_on=core",
        "--set",
        "workload.cdf=homa-hadoop",
        "--set",
        &duration,
        "--out",
        s(&out),
    ];
    args.extend_from_slice(extra);
    let run = bfcsim_ok(&args);
    assert!(
        run.stdout.contains("paydebt: "),
        "no PayDebt line:\n{}",
        run.stdout
    );
    (
        read_json(&out.join("summary.json")),
        read_json(&out.join("run.json")),
    )
}

#[test]
fn every_debt_request_draws_a_debt_and_nothing_is_lost() {
    let (summary, run_json) = hadoop("paydebt-hadoop", "1ms", &[]);
    assert_eq!(summary["unfinished"], 0, "every flow finished");
    assert_eq!(run_json["counters"]["dropped_packets"], 0);
    let p = &summary["flow_control"]["paydebt"];
    let requests = p["debt_requests"].as_u64().unwrap();
    assert!(requests > 1_000, "{p}");
    // Debts held to the end of their flows may still wait for the rate limiter when the last flow completes.
    let debts = p["debts"].as_u64().unwrap();
    assert!(
        debts <= requests && debts * 100 >= requests * 95,
        "debts {debts} for {requests} requests"
    );
    assert!(p["tokens"].as_u64().unwrap() > 10 * requests, "{p}");
    assert!(p["data_marked"].as_u64().unwrap() > 0, "{p}");
    assert_eq!(p["tokens_wasted"], 0, "{p}");
    assert_eq!(p["resend_tokens"], 0, "{p}");
}

#[test]
fn without_end_probes_only_timeouts_probe() {
    let (summary, _) = hadoop(
        "paydebt-no-end-probe",
        "1ms",
        &["--set", "flow_control.probe_at_end=false"],
    );
    assert_eq!(summary["unfinished"], 0, "every flow finished");
    let p = &summary["flow_control"]["paydebt"];
    assert_eq!(p["probes"], p["probe_timeouts"], "{p}");
    assert_eq!(p["probes"], 0, "nothing lost, nothing waited 4 ms: {p}");
}

#[test]
fn probes_find_every_loss_and_each_is_resent_once() {
    // A 60 KB buffer per switch drops a few data packets at the core.
    let (summary, run_json) = hadoop(
        "paydebt-loss",
        "2ms",
        &["--set", "switch.buffer=60KB", "--outputs", "summary.json"],
    );
    assert_eq!(summary["unfinished"], 0, "every flow finished");
    let c = &run_json["counters"];
    let lost = c["dropped_data_packets"].as_u64().unwrap();
    assert!(lost > 0, "the small buffer dropped data: {c}");
    assert_eq!(c["retransmitted_packets"].as_u64(), Some(lost), "{c}");
    assert_eq!(c["duplicate_packets"], 0, "{c}");
    assert_eq!(
        c["timeouts"], 0,
        "the transport's own timer never fired: {c}"
    );
    let p = &summary["flow_control"]["paydebt"];
    assert_eq!(p["resend_tokens"].as_u64(), Some(lost), "{p}");
}

#[test]
fn eight_flows_through_one_bottleneck_share_it_fairly() {
    let tmp = TempDir::new("paydebt-eight");
    let flows: String = std::iter::once("8\n".to_string())
        .chain((0..8).map(|i| format!("{i} {} 3 100 5000000 0\n", 8 + i)))
        .collect();
    tmp.write("flows.txt", &flows);
    let exp = tmp.write(
        "eight.toml",
        "name = \"paydebt-eight\"\n\
         [topology]\nkind = \"dumbbell\"\nleft = 8\nright = 8\nhost_rate = \"10Gbps\"\n\
         bottleneck_rate = \"10Gbps\"\nhost_delay = \"1us\"\nbottleneck_delay = \"1us\"\n\
         [scheme]\nname = \"paydebt\"\n[flows]\nfile = \"flows.txt\"\n",
    );
    let out = tmp.join("out");
    bfcsim_ok(&[
        "run",
        s(&exp),
        "--outputs",
        "fct.csv,summary.json",
        "--out",
        s(&out),
    ]);
    let fct = std::fs::read_to_string(out.join("fct.csv")).unwrap();
    let mut lines = fct.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|&h| h == "fct_ns").unwrap();
    let fcts: Vec<f64> = lines
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    assert_eq!(fcts.len(), 8);
    let (sum, squares) = (
        fcts.iter().sum::<f64>(),
        fcts.iter().map(|x| x * x).sum::<f64>(),
    );
    let jain = sum * sum / (8.0 * squares);
    assert!(
        jain > 0.999,
        "Jain's index of the completion times {jain}: {fcts:?}"
    );
    // 40 MB in 1,000 B payloads (1,048 B packets) through 10 Gb/s, where each packet's token takes 64 B of the
    // other direction's rate limiter: one packet per 1,112 B of line time.
    let ideal = 40e6 / 1000.0 * 1112.0 * 8.0 / 10e9 * 1e9;
    let last = fcts.iter().cloned().fold(0.0, f64::max);
    assert!(
        last < ideal * 1.02,
        "the bottleneck ran below the tokens' rate: {last} ns for {ideal} ns"
    );
    let summary = read_json(&out.join("summary.json"));
    let p = &summary["flow_control"]["paydebt"];
    assert!(
        p["tokens_marked"].as_u64().unwrap() > 0,
        "eight receivers' tokens queue at the bottleneck past K_t: {p}"
    );
}

/// The debt/token rate limiter two deep by default (as ExpressPass's credit limiter): one token deep, every idle
/// gap in a port's token queue is capacity lost for good, and large flows under load run well below the link
/// (FIDELITY "Large flows").
#[test]
fn a_two_token_limiter_keeps_large_flows_faster_than_a_one_token_one() {
    let large_flows_slowdown = |tag, extra: &[&str]| {
        let (summary, _) = hadoop(tag, "5ms", extra);
        assert_eq!(summary["unfinished"], 0, "every flow finished");
        let largest = summary["buckets"].as_array().unwrap().last().unwrap();
        assert!(largest["flows"].as_u64().unwrap() >= 20, "{largest}");
        largest["slowdown"]["avg"].as_f64().unwrap()
    };
    let two = large_flows_slowdown("paydebt-burst-default", &[]);
    let one = large_flows_slowdown("paydebt-burst-1", &["--set", "flow_control.token_burst=1"]);
    assert!(
        two < one * 0.9,
        "flows of 1 MB and more: average slowdown {two} two tokens deep, {one} one token deep"
    );
}

/// §5.2's variant with SRPT and eight priority queues (`paydebt-8`): short flows' unscheduled packets ride the
/// high levels, so the shortest flows' tail falls well below one-queue PayDebt's; probes take the lowest level
/// of their flow's data, so reordering across levels never makes a probe ask for data still on its way.
#[test]
fn eight_priority_queues_speed_the_shortest_flows_and_keep_probes_behind_the_data() {
    let one_packet_p99 =
        |summary: &serde_json::Value| summary["buckets"][0]["slowdown"]["p99"].as_f64().unwrap();
    let (one, _) = hadoop("paydebt-one-queue", "5ms", &[]);
    let (eight, run_json) = hadoop(
        "paydebt-eight-queues",
        "5ms",
        &["--set", "scheme.name=paydebt-8"],
    );
    assert_eq!(eight["unfinished"], 0, "every flow finished");
    let c = &run_json["counters"];
    assert_eq!(c["duplicate_packets"], 0, "{c}");
    assert_eq!(eight["flow_control"]["paydebt"]["resend_tokens"], 0);
    let (p8, p1) = (one_packet_p99(&eight), one_packet_p99(&one));
    assert!(
        p8 < 0.8 * p1,
        "one-packet flows' p99 slowdown: {p8} with eight queues, {p1} with one"
    );
}
