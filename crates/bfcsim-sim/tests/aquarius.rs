//! Aquarius end to end: the micro-benchmark of §4 (Fig. 4) re-assigns f3 to a reserved queue at L2 and keeps f4
//! going; opportunistic re-assigning (§3.3) never delivers a flow's packets out of order: the receiver of
//! every flow checks each arriving sequence number against the next byte it expects
//! (`Counters::out_of_order`), in runs without drops so that a gap can only be a reordering; and incasts on a
//! fat-tree with a 12 MB buffer lose nothing, every PAUSE is answered by its RESUME and no link is paused for
//! longer than the run.

mod common;

use bfcsim_core::rng::{Stream, stream};
use bfcsim_core::{Bytes, FlowSpec, PortId, Rate, Time};
use bfcsim_net::build::{Build, FatTree};
use bfcsim_net::{NodeKind, Topology};
use bfcsim_schemes::flow_control::aquarius::{Aquarius, AquariusConfig, Mapping, RsvQueue};
use bfcsim_sim::{FlowControl, Sim, SimParams};
use common::{drops, flow, no_cc, params};
use rand::RngExt;

fn aquarius(cfg: AquariusConfig) -> SimParams {
    let mut p = params(no_cc());
    p.flow_control = FlowControl::Aquarius(cfg);
    p.switch.queues_per_port = 8;
    p
}

/// Fig. 4 as `experiments/data/aquarius-fig4/topology.txt` numbers it: hosts 0-7 (R1 = 0, R2 = 2, f1 from 1
/// over a 33 Gb/s link, f2 from 5, f3 from 7, f4 from 3), L1 = 8, L2 = 9. With these numbers the 5-tuple
/// hashes of f1-f4 fall in one queue.
fn fig4() -> (Topology, Vec<FlowSpec>) {
    let mut t = Topology::new();
    for _ in 0..8 {
        t.add_node(NodeKind::Host);
    }
    let (l1, l2) = (t.add_node(NodeKind::Switch), t.add_node(NodeKind::Switch));
    let (g100, d) = (Rate::gbps(100), Time::from_us(1));
    let n = |i: u32| bfcsim_core::NodeId(i);
    for (h, s, rate) in [
        (0, l1, g100),
        (2, l1, g100),
        (1, l1, Rate::gbps(33)),
        (5, l1, g100),
        (7, l2, g100),
        (3, l2, g100),
    ] {
        t.connect(n(h), s, rate, d);
    }
    t.connect(l2, l1, g100, d);
    t.connect(n(4), l1, g100, d);
    t.connect(n(6), l2, g100, d);
    t.finish();
    let start = Time::from_us(1);
    let flows = vec![
        flow(1, 0, 4_000_000, start),
        flow(5, 0, 4_000_000, start),
        flow(7, 0, 4_000_000, start),
        flow(3, 2, 4_000_000, start),
    ];
    (t, flows)
}

fn run_checked(topo: Topology, flows: &[FlowSpec], p: SimParams) -> Sim {
    let mut sim = Sim::new(topo, flows, p).unwrap();
    sim.run();
    assert!(sim.finished(), "every flow completes");
    assert_eq!(sim.check_invariants(), Vec::<String>::new());
    assert_eq!(
        drops(&sim),
        0,
        "a lossless run: a gap can only be a reordering"
    );
    sim
}

/// Under hash mapping f3 shares L2's queue with f4 and is re-assigned to the rsvQ, whose resume comes from a
/// dequeue of that very port: it once put a second packet on the wire mid-transmission (reordering f3).
#[test]
fn fig4_reassigns_f3_keeps_f4_and_delivers_in_order() {
    let (topo, flows) = fig4();
    let sim = run_checked(
        topo,
        &flows,
        aquarius(AquariusConfig {
            mapping: Mapping::Hash,
            ..AquariusConfig::default()
        }),
    );
    let stats = sim.scheme_stats::<Aquarius>().expect("Aquarius ran");
    assert!(stats.reassigns > 0, "{stats:?}");
    assert!(stats.rsv_allocations > 0, "{stats:?}");
    assert_eq!(sim.counters().out_of_order, 0);
    assert_eq!(sim.counters().retransmits, 0);
    // f4 (flow 3) never shares the bottleneck: it finishes well before f1-f3.
    let fct = |i: u32| {
        let (spec, _, _, finish) = sim.flow(bfcsim_core::FlowId(i));
        finish.unwrap() - spec.start
    };
    assert!(fct(3) * 3 < fct(2) * 2, "f4 {} f3 {}", fct(3), fct(2));
}

/// A k = 4 fat-tree with random flows and incasts, dynamic mapping over 8 queues: many PAUSEs re-assign flows
/// that share queues, to a dynamically allocated rsvQ or a static one (§3.3), and, with `reassign_on_join`,
/// lone paused flows a new flow joins; every packet still arrives in order. Unlimited buffers keep the run
/// lossless.
#[test]
fn reassigning_never_reorders_a_flow() {
    for rsv in [RsvQueue::Dynamic, RsvQueue::Static] {
        for reassign_on_join in [false, true] {
            reassigning_keeps_order_with(rsv, reassign_on_join);
        }
    }
}

fn reassigning_keeps_order_with(rsv: RsvQueue, reassign_on_join: bool) {
    let topo = FatTree::k_ary(4).build().unwrap();
    let hosts: Vec<u32> = topo.hosts.iter().map(|h| h.0).collect();
    let mut rng = stream(3, Stream::Other(14));
    let mut flows = Vec::new();
    for i in 0..400u64 {
        let src = hosts[rng.random_range(0..hosts.len())];
        let mut dst = hosts[rng.random_range(0..hosts.len())];
        if dst == src {
            dst = hosts[(hosts.iter().position(|&h| h == src).unwrap() + 1) % hosts.len()];
        }
        let size = [2_000, 30_000, 200_000, 1_500_000][rng.random_range(0..4)];
        flows.push(flow(src, dst, size, Time::from_ns(i * 500)));
    }
    // Sixteen incasts, 2 us apart, of every other host to host 0: 240 flows over ports of 8 queues, so that new
    // flows find every queue paused for lone flows.
    for k in 0..16u64 {
        for &src in hosts.iter().skip(1) {
            flows.push(flow(src, hosts[0], 200_000, Time::from_us(50 + 2 * k)));
        }
    }
    flows.sort_by_key(|f| f.start);
    let mut p = aquarius(AquariusConfig {
        rsv,
        reassign_on_join,
        ..AquariusConfig::default()
    });
    p.switch.unlimited_buffer = true;
    let sim = run_checked(topo, &flows, p);
    let stats = sim.scheme_stats::<Aquarius>().expect("Aquarius ran");
    assert!(stats.reassigns > 10, "{rsv:?}: {stats:?}");
    assert_eq!(
        stats.join_reassigns > 0,
        reassign_on_join,
        "{rsv:?}, reassign_on_join {reassign_on_join}: {stats:?}"
    );
    assert!(stats.queue_pauses > 0, "{rsv:?}: {stats:?}");
    match rsv {
        RsvQueue::Dynamic => assert!(stats.rsv_allocations > 0, "{stats:?}"),
        RsvQueue::Static => assert_eq!(
            (stats.rsv_allocations, stats.rsv_unavailable),
            (0, 0),
            "a static rsvQ is never allocated and never missing: {stats:?}"
        ),
    }
    assert_eq!(
        sim.counters().out_of_order,
        0,
        "{rsv:?}, reassign_on_join {reassign_on_join}: no packet overtook an earlier one of its flow"
    );
}

/// Random flows on a k = 4 fat-tree with two 15 -> 1 incasts of `incast` bytes per sender.
fn fat_tree_incast(incast: u64) -> (Topology, Vec<FlowSpec>) {
    let topo = FatTree::k_ary(4).build().unwrap();
    let hosts: Vec<u32> = topo.hosts.iter().map(|h| h.0).collect();
    let mut rng = stream(5, Stream::Other(14));
    let mut flows = Vec::new();
    for i in 0..300u64 {
        let src = hosts[rng.random_range(0..hosts.len())];
        let dst = hosts[(hosts.iter().position(|&h| h == src).unwrap()
            + rng.random_range(1..hosts.len()))
            % hosts.len()];
        let size = [1_000, 20_000, 300_000, 2_000_000][rng.random_range(0..4)];
        flows.push(flow(src, dst, size, Time::from_ns(i * 300)));
    }
    for k in 0..2u64 {
        for &src in hosts.iter().skip(1) {
            flows.push(flow(src, hosts[0], incast, Time::from_us(20 + 40 * k)));
        }
    }
    flows.sort_by_key(|f| f.start);
    (topo, flows)
}

/// Per-hop backpressure holds with one PAUSE per flow (Algorithm 1, §3.3) when every flow has its own flow-table
/// entry: with a 1 MB buffer nothing is dropped, every PAUSE is answered, and no link or queue is paused for
/// longer than the run (a dequeue that resumed the rsvQ once sent a second packet on a busy link, losing
/// packets and counting paused time twice).
#[test]
fn incasts_on_a_fat_tree_lose_nothing_and_every_pause_is_resumed() {
    let (topo, flows) = fat_tree_incast(400_000);
    let ports = topo.ports.len();
    let mut p = aquarius(AquariusConfig {
        exact_flow_table: true,
        ..AquariusConfig::default()
    });
    p.switch.buffer = Bytes(1_000_000);
    let sim = run_checked(topo, &flows, p);
    let h = sim.hop_stats();
    let a = sim.scheme_stats::<Aquarius>().expect("Aquarius ran");
    assert!(a.pauses > 100 && a.reassigns > 0, "{a:?}");
    assert_eq!(h.pause_frames, h.resume_frames, "{h:?}");
    assert_eq!(a.unpaused_congested, 0, "no collisions: {a:?}");
    assert_eq!(h.watchdog_alarms, 0, "{:?}", h.first_alarm);
    let now = sim.now();
    for i in 0..ports {
        let port = PortId::from_idx(i);
        if let Some((link, queues)) = sim.port_pause_times(port) {
            assert!(link <= now, "port {i}: link paused {link} of {now}");
            assert!(queues.iter().all(|&q| q <= now), "port {i}: {queues:?}");
        }
    }
}

/// The same incasts with the flow table hashed into one entry per queue: flows collide in entries, and
/// Algorithm 1 sends one PAUSE per entry (line 15), naming the flow whose packet made `pauseNum` 1. Nothing
/// pauses the other flows of the entry upstream; their congested packets are counted, and the buffer overflows.
#[test]
fn colliding_flows_are_not_paused_and_overflow_the_buffer() {
    let (topo, flows) = fat_tree_incast(400_000);
    let mut p = aquarius(AquariusConfig {
        flow_table_per_queue: 1,
        ..AquariusConfig::default()
    });
    p.switch.buffer = Bytes(1_000_000);
    let mut sim = Sim::new(topo, &flows, p).unwrap();
    sim.run();
    assert!(sim.finished());
    let a = sim.scheme_stats::<Aquarius>().expect("Aquarius ran");
    assert!(a.index_collisions > 0 && a.unpaused_congested > 0, "{a:?}");
    assert!(drops(&sim) > 0);
}
