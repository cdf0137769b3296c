//! Flows that wait for others: when each starts, against the completions it waits for, and the same run on any
//! number of threads.

mod common;

use std::sync::Arc;

use bfcsim_core::{Dependencies, Done, Edge, FlowId, FlowSpec, Time, Wait};
use bfcsim_net::build::{Build, LeafSpine};
use bfcsim_net::routing::Routes;
use bfcsim_sim::{FlowDeps, Notify, Sim};
use common::*;

fn edge(after: u32, on: Done, flow: u32) -> Edge {
    Edge {
        after: FlowId(after),
        on,
        flow: FlowId(flow),
    }
}

fn wait(needed: u32, delay: Time) -> Wait {
    Wait { needed, delay }
}

fn run(
    flows: &[FlowSpec],
    waits: &[(u32, Wait)],
    edges: &[Edge],
    notify: Notify,
    threads: usize,
) -> Sim {
    let topo = LeafSpine::default().build().unwrap();
    let graph = Dependencies::new(
        flows.len(),
        waits.iter().map(|&(f, w)| (FlowId(f), w)),
        edges,
    )
    .unwrap();
    let deps = FlowDeps {
        graph: Arc::new(graph),
        notify,
    };
    let routes = Routes::new(&topo).unwrap();
    let mut sim =
        Sim::with_dependencies(topo, routes, flows, Some(deps), params(dctcp()), threads).unwrap();
    sim.run();
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    assert_eq!(sim.flows_done(), flows.len());
    sim
}

/// When flow `id` started and finished.
fn span(sim: &Sim, id: u32) -> (Time, Time) {
    let id = FlowId(id);
    (sim.flow_start(id).unwrap(), sim.flow(id).3.unwrap())
}

#[test]
fn a_chain_starts_each_flow_where_and_when_the_one_before_arrived() {
    // 0 -> 20 -> 40 -> 60 (other racks each time), each forwarding once it has received the whole flow, the
    // last after a 3 us compute delay.
    let flows = [
        flow(0, 20, 50_000, Time::ZERO),
        flow(20, 40, 50_000, Time::ZERO),
        flow(40, 60, 50_000, Time::ZERO),
    ];
    let waits = [(1, wait(1, Time::ZERO)), (2, wait(1, Time::from_us(3)))];
    let edges = [edge(0, Done::Received, 1), edge(1, Done::Received, 2)];
    let sim = run(&flows, &waits, &edges, Notify::Path, 1);
    let (s1, _) = span(&sim, 1);
    let (s2, _) = span(&sim, 2);
    // A lone flow's last byte reaches its receiver half an RTT before its sender hears of it: each next flow
    // starts before the previous one's FCT ends, by the ACK's trip back.
    let (s0, f0) = span(&sim, 0);
    assert_eq!(s0, Time::ZERO);
    assert!(
        s1 < f0 && s1 > Time::from_us(4),
        "flow 1 started at {s1}, flow 0 done at {f0}"
    );
    let (_, f1) = span(&sim, 1);
    assert!(
        s2 < f1 + Time::from_us(3) && s2 > s1 + Time::from_us(7),
        "{s1} {s2} {f1}"
    );
    // Each flow took as long as the first (same size, same kind of path, idle fabric), but for the last ACK
    // of the flow before, which its sender's NIC sends first (64 B at 100 Gb/s).
    let fct = |i| {
        let (s, f) = span(&sim, i);
        f - s
    };
    for i in 1..3 {
        assert!(
            fct(i) >= fct(0) && fct(i) - fct(0) <= Time::from_ps(5_120),
            "{} {}",
            fct(0),
            fct(i)
        );
    }
}

#[test]
fn a_notice_from_another_host_takes_the_path_delay() {
    // Flow 1 (from host 5) waits for flow 0's sender (host 0) to be acknowledged: a notice from host 0 to host
    // 5, in the same rack: two 1 us links.
    let flows = [
        flow(0, 20, 10_000, Time::ZERO),
        flow(5, 30, 10_000, Time::ZERO),
    ];
    let waits = [(1, wait(1, Time::ZERO))];
    let edges = [edge(0, Done::Acked, 1)];
    let sim = run(&flows, &waits, &edges, Notify::Path, 1);
    let (_, f0) = span(&sim, 0);
    let (s1, _) = span(&sim, 1);
    assert_eq!(s1, f0 + Time::from_us(2));
    let sim = run(&flows, &waits, &edges, Notify::Instant, 1);
    assert_eq!(span(&sim, 1).0, span(&sim, 0).1);
}

#[test]
fn all_of_or_the_first_of() {
    // Flow 3 waits for both 0 and 1 (the later one, 1, is larger); flow 4 for the first of them.
    let flows = [
        flow(0, 30, 10_000, Time::ZERO),
        flow(1, 31, 100_000, Time::ZERO),
        flow(2, 32, 10_000, Time::ZERO),
        flow(30, 2, 10_000, Time::ZERO),
        flow(30, 3, 10_000, Time::ZERO),
    ];
    let waits = [(3, wait(2, Time::ZERO)), (4, wait(1, Time::ZERO))];
    let edges = [
        edge(0, Done::Received, 3),
        edge(1, Done::Received, 3),
        edge(0, Done::Received, 4),
        edge(1, Done::Received, 4),
    ];
    let sim = run(&flows, &waits, &edges, Notify::Path, 1);
    let (s3, s4) = (span(&sim, 3).0, span(&sim, 4).0);
    assert!(s4 < s3, "the first of two comes first: {s4} {s3}");
    // Flow 1's receiver is host 31, flow 3's sender host 30 (same rack): a 2 us notice.
    let t = (0..2).map(|i| span(&sim, i).1).max().unwrap();
    assert!(s3 < t, "received before acknowledged");
}

#[test]
fn the_same_run_on_any_number_of_threads() {
    // A ring of 64 ranks over all racks, three steps, with notices within and across hosts and shards.
    let n = 64u32;
    let hosts: Vec<u32> = (0..n).map(|i| (i * 13) % 128).collect();
    let mut flows = Vec::new();
    let (mut waits, mut edges) = (Vec::new(), Vec::new());
    for step in 0..3u32 {
        for r in 0..n {
            let id = step * n + r;
            flows.push(flow(
                hosts[r as usize],
                hosts[((r + 1) % n) as usize],
                20_000,
                Time::ZERO,
            ));
            if step > 0 {
                let from_left = (step - 1) * n + (r + n - 1) % n;
                waits.push((id, wait(2, Time::from_ns(500))));
                edges.push(edge(from_left, Done::Received, id));
                // and the rank's own previous send, acknowledged
                edges.push(edge((step - 1) * n + r, Done::Acked, id));
            }
        }
    }
    let a = run(&flows, &waits, &edges, Notify::Path, 1);
    for threads in [2, 4] {
        let b = run(&flows, &waits, &edges, Notify::Path, threads);
        assert!(b.shard_count() > 1);
        assert_eq!(a.fingerprint(), b.fingerprint(), "{threads} threads");
        for i in 0..flows.len() as u32 {
            assert_eq!(span(&a, i), span(&b, i), "flow {i} on {threads} threads");
        }
    }
}
