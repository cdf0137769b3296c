//! Aeolus on PayDebt's topology under Memcached at 80% load (`experiments/paydebt-homa-topology.toml`, 100 us
//! of arrivals), as Homa(A) on the non-blocking topology and EP(A) on the 4:1 one: switches drop unscheduled
//! packets and nothing else (credits aside), every probe finds its flow's losses, and each lost packet is sent
//! once more, as a scheduled one, with no timeout and no duplicate (issue 49).

mod common;

use common::{TempDir, bfcsim_ok, read_json, s};

fn run(tag: &str, extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let tmp = TempDir::new(tag);
    let out = tmp.join("out");
    let mut args = vec![
        "run",
        "experiments/paydebt-homa-topology.toml",
        "--set",
        "workload.duration=100us",
        "--out",
        s(&out),
    ];
    args.extend_from_slice(extra);
    let run = bfcsim_ok(&args);
    assert!(
        run.stdout.contains("Aeolus: "),
        "no Aeolus line:\n{}",
        run.stdout
    );
    (
        read_json(&out.join("summary.json")),
        read_json(&out.join("run.json")),
    )
}

/// The checks common to both: losses only by selective drop, each resent once.
fn check(summary: &serde_json::Value, run_json: &serde_json::Value, aeolus: &serde_json::Value) {
    assert_eq!(summary["unfinished"], 0, "every flow finished");
    let drops = &summary["drops"];
    let selective = drops["selective-drop"].as_u64().unwrap();
    assert!(
        selective > 100,
        "unscheduled packets met full ports: {drops}"
    );
    for reason in [
        "pool-full",
        "dynamic-threshold",
        "headroom-full",
        "injected-loss",
    ] {
        assert_eq!(drops[reason], 0, "{reason}: {drops}");
    }
    let counters = &run_json["counters"];
    assert_eq!(
        counters["dropped_data_packets"].as_u64(),
        Some(selective),
        "every data packet lost was an unscheduled one: {counters}"
    );
    assert_eq!(
        counters["retransmitted_packets"].as_u64(),
        Some(selective),
        "each sent again once, and nothing else: {counters}"
    );
    assert_eq!(
        counters["duplicate_packets"], 0,
        "no resend of what had arrived"
    );
    assert_eq!(
        counters["timeouts"], 0,
        "probes found the losses, not timers"
    );
    assert_eq!(
        aeolus["probes"], summary["flows"],
        "a probe per flow: {aeolus}"
    );
    assert!(aeolus["ranges_lost"].as_u64().unwrap() > 0, "{aeolus}");
}

#[test]
fn homa_a_recovers_every_selective_drop_through_its_probes() {
    let (summary, run_json) = run("aeolus-homa", &["--set", "scheme.name=homa-aeolus"]);
    let homa = &summary["flow_control"]["homa"];
    check(&summary, &run_json, &homa["aeolus"]);
    assert!(
        homa["resends"].as_u64() >= homa["aeolus"]["ranges_lost"].as_u64(),
        "a RESEND per missing range: {homa}"
    );
}

#[test]
fn ep_a_recovers_every_selective_drop_through_its_probes() {
    let (summary, run_json) = run(
        "aeolus-ep",
        &[
            "--set",
            "scheme.name=expresspass-aeolus",
            "--set",
            "topology.fabric_rate=10Gbps",
            "--set",
            "workload.load_on=core",
        ],
    );
    let credits = &summary["flow_control"]["credits"];
    check(&summary, &run_json, &credits["aeolus"]);
}
