//! `--explain-flow` (`bfcsim::explain`): recording every hop of some flows' packets changes nothing of the run
//! (its fingerprint), each explained flow's parts sum to its completion time exactly and none is negative, the
//! account is the same for any number of threads, and it names recovery where a flow lost a packet.

mod common;

use bfcsim::explain::{Report, What};
use bfcsim::runner::Outcome;
use bfcsim_core::{FlowId, Time};
use common::{TempDir, bfcsim, bfcsim_ok, run_experiment as run, s};

/// The `n` finished flows of `outcome` with the largest slowdowns.
fn slowest(outcome: &Outcome, n: usize) -> Vec<FlowId> {
    let mut done: Vec<_> = outcome
        .records
        .iter()
        .filter(|r| r.finish.is_some())
        .collect();
    done.sort_by(|a, b| b.slowdown().unwrap().total_cmp(&a.slowdown().unwrap()));
    done.iter().take(n).map(|r| r.id).collect()
}

/// Every explained flow has a breakdown whose parts are positive and sum to its completion time.
fn check_sums(report: &Report) {
    for e in &report.flows {
        let parts = e
            .parts
            .as_ref()
            .unwrap_or_else(|why| panic!("flow {}: {why}", e.record.id.0));
        assert!(parts.iter().all(|p| p.time > Time::ZERO), "{parts:?}");
        let sum = parts.iter().fold(Time::ZERO, |s, p| s + p.time);
        assert_eq!(
            sum,
            e.record.fct().unwrap(),
            "flow {}: {parts:?}",
            e.record.id.0
        );
    }
}

/// Fig. 9's setup (Google workload with incast on CLOS-128, BFC), shortened: the three slowest flows.
#[test]
fn slowest_flows_of_fig9_setup_sum_to_their_completion_times() {
    const FIG9: &str = "clos128-google-incast-bfc.toml";
    let set = ["workload.duration=500us"];
    let plain = run(FIG9, &set, &[]);
    assert!(plain.explained.is_none());
    let ids = slowest(&plain, 3);
    let explained = run(FIG9, &set, &ids);
    assert_eq!(
        explained.fingerprint, plain.fingerprint,
        "recording changed the run"
    );
    assert_eq!(explained.records, plain.records);
    let report = explained.explained.as_ref().unwrap();
    assert_eq!(report.flows.len(), 3);
    check_sums(report);
    // Incast at BFC: the slowest flows waited at paused queues.
    assert!(report.flows.iter().any(|e| {
        e.parts
            .as_ref()
            .unwrap()
            .iter()
            .any(|p| p.what == What::Paused)
    }));
    // Every hop recorded starts no earlier than its packet joined the queue, and the table has a row for each.
    assert!(
        report
            .hops
            .iter()
            .all(|h| h.queued_at.is_none_or(|t| t <= h.record.start))
    );
    assert!(
        report
            .hops
            .iter()
            .all(|h| h.paused <= h.record.start - h.queued_at.unwrap_or(h.record.start))
    );

    let two = run(FIG9, &[set[0], "run.threads=2"], &ids);
    let two = two.explained.unwrap();
    for (a, b) in report.flows.iter().zip(&two.flows) {
        assert_eq!(a.parts, b.parts, "flow {}", a.record.id.0);
    }
    assert_eq!(report.hops.len(), two.hops.len());
}

/// DCTCP drops under incast: a flow that timed out spends its time in recovery, and its parts still sum.
#[test]
fn a_flow_that_lost_a_packet_is_in_recovery() {
    const RUN: &str = "clos128-google-incast-bfc.toml";
    let set = ["workload.duration=500us", "scheme.name=dctcp"];
    let plain = run(RUN, &set, &[]);
    let ids = slowest(&plain, 2);
    let explained = run(RUN, &set, &ids);
    assert_eq!(explained.fingerprint, plain.fingerprint);
    let report = explained.explained.unwrap();
    check_sums(&report);
    let lost = report
        .flows
        .iter()
        .find(|e| e.lost_data > 0)
        .expect("a slowest flow lost data");
    assert!(lost.resent > 0);
    let parts = lost.parts.as_ref().unwrap();
    let recovery = parts
        .iter()
        .find(|p| p.what == What::Recovery)
        .expect("recovery")
        .time;
    assert!(recovery * 2 > lost.record.fct().unwrap(), "{parts:?}");
}

/// The command line: `--explain-slowest` prints the breakdown and writes both tables; a flow id beyond the
/// run is refused by name.
#[test]
fn command_line_explains_and_refuses_unknown_flows() {
    let dir = TempDir::new("explain-cli");
    let out = dir.join("out");
    let text = bfcsim_ok(&[
        "run",
        "experiments/clos128-google-incast-bfc.toml",
        "--set",
        "workload.duration=200us",
        "--explain-slowest",
        "2",
        "--out",
        s(&out),
    ])
    .stdout;
    assert!(text.contains("in all (= the completion time)"), "{text}");
    let breakdown = std::fs::read_to_string(out.join("explain.csv")).unwrap();
    assert!(
        breakdown.starts_with("flow,part,port,where,time_ns,share\n"),
        "{breakdown}"
    );
    let hops = std::fs::read_to_string(out.join("explain-hops.csv")).unwrap();
    assert!(hops.lines().count() > 2);

    let bad = bfcsim(&[
        "run",
        "experiments/clos128-google-incast-bfc.toml",
        "--set",
        "workload.duration=200us",
        "--explain-flow",
        "99999999",
        "--out",
        s(&dir.join("bad")),
    ]);
    assert_eq!(bad.code, Some(1));
    assert!(
        bad.stderr.contains("--explain-flow 99999999: the run has"),
        "{}",
        bad.stderr
    );
}
