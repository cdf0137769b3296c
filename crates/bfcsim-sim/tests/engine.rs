//! End-to-end properties of the engine on small scenarios.

mod common;

use bfcsim_core::{FlowId, Time};
use bfcsim_net::build::{Build, LeafSpine};
use bfcsim_sim::Sim;
use common::*;

#[test]
fn lone_flows_finish_at_store_and_forward_time() {
    let topo = LeafSpine::default().build().unwrap();
    for size in [1u64, 1000, 1001, 1_000_000, 10_000_000] {
        let flows = [flow(0, 127, size, Time::from_us(5))];
        let mut sim = Sim::new(topo.clone(), &flows, params(dctcp())).unwrap();
        sim.run();
        assert!(
            sim.check_invariants().is_empty(),
            "{:?}",
            sim.check_invariants()
        );
        let (spec, _, _, finish) = sim.flow(FlowId(0));
        let fct = (finish.expect("finished") - spec.start).0;
        let (fwd, rev) = sim.flow_paths(FlowId(0));
        let hop = |p: &bfcsim_core::PortId| {
            let (r, d) = sim.port_link(*p);
            (r.0, d.0)
        };
        let fwd: Vec<_> = fwd.iter().map(hop).collect();
        let rev: Vec<_> = rev.iter().map(hop).collect();
        assert_eq!(fwd.len(), 4);
        assert_eq!(
            fct,
            lone_flow_fct(&fwd, &rev, size, 1000, 48, 64),
            "size {size}"
        );
    }
}

use bfcsim_core::{Bytes, PortId};
use bfcsim_net::build::Star;
use bfcsim_net::mmu::Admission;

#[test]
fn saturated_queues_settle_at_the_dynamic_threshold() {
    // M receivers, each fed by two line-rate senders without congestion control, share one pool of B bytes.
    let (b, alpha, pkt) = (2_000_000u64, 1.0f64, 1048.0f64);
    for m in [1u32, 2, 4] {
        let hosts = 3 * m;
        let topo = Star {
            hosts,
            rate: bfcsim_core::Rate::gbps(100),
            delay: Time::from_us(1),
        }
        .build()
        .unwrap();
        let mut flows = Vec::new();
        // Each receiver's pair starts 7 ns after the previous one's, so that different ports' departures are
        // not simultaneous: at one picosecond, the order in which M ports release buffer is arbitrary (and
        // with M departures freeing M packets at once a queue may briefly pass its share by up to M·α/(1+M·α)
        // packets); the Dynamic Threshold's settled value is what this test is about.
        for r in 0..m {
            for s in 0..2 {
                flows.push(flow(
                    m + 2 * r + s,
                    r,
                    50_000_000,
                    Time::from_ns(7 * r as u64),
                ));
            }
        }
        let mut p = params(no_cc());
        p.switch.buffer = Bytes(b);
        p.switch.alpha = alpha;
        let mut sim = Sim::new(topo, &flows, p).unwrap();
        let target = alpha * b as f64 / (1.0 + m as f64 * alpha);
        let ports: Vec<PortId> = (0..m).map(|r| port_to_host(&sim, r)).collect();
        let mut t = Time::from_us(200);
        let mut sums = vec![0.0; m as usize];
        let samples = 400;
        for _ in 0..samples {
            sim.run_until(t);
            for (i, &p) in ports.iter().enumerate() {
                let q = sim.egress_queue_bytes(p, sim.data_queue(0)) as f64;
                assert!(
                    (q - target).abs() <= 2.0 * pkt,
                    "M={m}: queue {q} vs target {target}"
                );
                sums[i] += q;
            }
            t += Time::from_ns(2_500);
        }
        for s in sums {
            let mean = s / samples as f64;
            assert!(
                (mean - target).abs() <= pkt,
                "M={m}: mean {mean} vs {target}"
            );
        }
        assert!(sim.drops().iter().any(|&(_, n)| n > 0));
    }
}

/// The BCC authors' ns-2 admission (`switch.admission = "bcc-ns2"`): a saturated queue's reserve fills up for
/// good, so two saturated queues settle at α·B/(1 + 2α) in all, where Dynamic Threshold keeps the reserve on
/// top; every byte comes back (the run's invariants check the buffer's accounts).
#[test]
fn bcc_ns2_admission_leaves_saturated_queues_no_reserve() {
    let (b, reserve, pkt) = (2_000_000u64, 128_000u64, 1048.0f64);
    let topo = || {
        Star {
            hosts: 6,
            rate: bfcsim_core::Rate::gbps(100),
            delay: Time::from_us(1),
        }
        .build()
        .unwrap()
    };
    let flows: Vec<_> = (0..4)
        .map(|s| flow(2 + s, s / 2, 50_000_000, Time::from_ns(7 * (s / 2) as u64)))
        .collect();
    let target = b as f64 / 3.0;
    for (admission, expect) in [
        (Admission::DynamicThreshold, target + reserve as f64),
        (Admission::BccNs2, target),
    ] {
        let mut p = params(no_cc());
        p.switch.buffer = Bytes(b);
        p.switch.reserve_per_queue = Bytes(reserve);
        p.switch.admission = admission;
        let mut sim = Sim::new(topo(), &flows, p).unwrap();
        let port = port_to_host(&sim, 0);
        let mut sum = 0.0;
        for i in 0..200 {
            sim.run_until(Time::from_us(200) + Time::from_ns(2_500 * i));
            sum += sim.egress_queue_bytes(port, sim.data_queue(0)) as f64;
        }
        let mean = sum / 200.0;
        assert!(
            (mean - expect).abs() <= 2.0 * pkt,
            "{admission:?}: mean queue {mean} vs {expect}"
        );
        sim.run_until(Time::from_ms(1));
        assert!(sim.drops().iter().any(|&(_, n)| n > 0));
        assert_eq!(sim.check_invariants(), Vec::<String>::new());
    }
}

/// DCTCP with a step marking threshold K on a star: returns (mean queue, max queue after warm-up, bottleneck
/// utilization over the measurement window).
fn dctcp_bottleneck(n: u32, k: u64) -> (f64, u64, f64) {
    let topo = Star {
        hosts: n + 1,
        rate: bfcsim_core::Rate::gbps(100),
        delay: Time::from_us(1),
    }
    .build()
    .unwrap();
    let flows: Vec<_> = (1..=n)
        .map(|s| flow(s, 0, 1_000_000_000, Time::ZERO))
        .collect();
    let mut p = params(dctcp());
    p.switch.ecn.red = bfcsim_net::ecn::Red {
        kmin: Bytes(k),
        kmax: Bytes(k),
        pmax: 1.0,
    };
    let mut sim = Sim::new(topo, &flows, p).unwrap();
    let port = port_to_host(&sim, 0);
    let (warm, end) = (Time::from_us(500), Time::from_us(5_500));
    sim.run_until(warm);
    let tx0 = sim.port_tx_bytes(port);
    let (mut sum, mut max, mut n_samples) = (0.0, 0, 0);
    let mut t = warm;
    while t < end {
        t += Time::from_ns(500);
        sim.run_until(t);
        let q = sim.egress_queue_bytes(port, sim.data_queue(0));
        sum += q as f64;
        max = max.max(q);
        n_samples += 1;
    }
    let util = (sim.port_tx_bytes(port) - tx0) as f64 * 8.0 / (100e9 * (end - warm).secs_f64());
    assert!(sim.check_invariants().is_empty());
    (sum / n_samples as f64, max, util)
}

#[test]
fn dctcp_holds_the_queue_near_k_at_full_utilization() {
    let k = 100_000;
    let (mean, max, util) = dctcp_bottleneck(2, k);
    println!("DCTCP 2 flows, K = {k}: mean queue {mean:.0} B, max {max} B, utilization {util:.4}");
    assert!(util >= 0.95, "utilization {util}");
    assert!(
        mean > 0.5 * k as f64 && mean < 1.5 * k as f64,
        "mean queue {mean}"
    );
    assert!(max < 2 * k, "max queue {max}");
}

/// Each flow's share of the bottleneck while all are active: wire-rate goodput over a window after warm-up,
/// relative to C/N. With `distinct_queues`, senders are chosen so that the flows hash to different queues.
fn shares(n: u32, queues: u32, distinct_queues: bool) -> Vec<f64> {
    let topo = LeafSpine::default().build().unwrap();
    let mut p = params(dctcp());
    p.switch.queues_per_port = queues;
    // Senders in other racks, so that all share one base RTT (DCTCP, like TCP, favours short RTTs).
    let mut senders: Vec<u32> = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for cand in 16..128u32 {
        if senders.len() == n as usize {
            break;
        }
        let probe = Sim::new(topo.clone(), &[flow(cand, 0, 1, Time::ZERO)], p.clone()).unwrap();
        if !distinct_queues || used.insert(probe.flow_queue(FlowId(0))) {
            senders.push(cand);
        }
    }
    let flows: Vec<_> = senders
        .iter()
        .map(|&s| flow(s, 0, 10_000_000_000, Time::ZERO))
        .collect();
    let mut sim = Sim::new(topo, &flows, p).unwrap();
    let (warm, end) = (Time::from_ms(5), Time::from_ms(45));
    sim.run_until(warm);
    let before: Vec<u64> = (0..n).map(|i| sim.flow_acked(FlowId(i))).collect();
    sim.run_until(end);
    assert!(sim.check_invariants().is_empty());
    let fair = 100e9 / n as f64;
    (0..n)
        .map(|i| {
            let payload = (sim.flow_acked(FlowId(i)) - before[i as usize]) as f64;
            payload * 1048.0 / 1000.0 * 8.0 / (end - warm).secs_f64() / fair
        })
        .collect()
}

#[test]
fn long_flows_into_one_receiver_get_equal_shares() {
    // N long flows on one fair-queued bottleneck each get C/N (DRR over a queue per flow).
    for n in [2u32, 4, 8] {
        let fq = shares(n, 64, true);
        println!("n={n}: fair-queued {fq:.4?}");
        assert!(fq.iter().all(|s| (s - 1.0).abs() <= 0.02), "n={n}: {fq:?}");
    }
}

#[test]
fn dctcp_flows_sharing_one_fifo_converge_to_fair_shares() {
    for n in [2u32, 4, 8] {
        let fifo = shares(n, 1, false);
        println!("n={n}: one FIFO {fifo:.4?}");
        assert!(
            fifo.iter().all(|s| (s - 1.0).abs() <= 0.05),
            "n={n}: {fifo:?}"
        );
    }
}

/// BCC §IV-B on a star: four receivers share one buffer pool, each fed by two long DCTCP flows. The per-queue
/// threshold is far above anything a queue can hold, so per-queue ECN alone never marks and the queues run into
/// the Dynamic Threshold and drop; shared-buffer ECN/RED on the pool's occupancy marks, and the drops stop.
#[test]
fn shared_buffer_ecn_marks_where_per_queue_ecn_does_not() {
    let run = |shared: bool| {
        let flows: Vec<_> = (0..8)
            .map(|s| flow(4 + s, s / 2, 100_000_000, Time::from_ns(13 * s as u64)))
            .collect();
        let mut p = params(dctcp());
        p.switch.ports_per_pool = 4;
        p.switch.pool_size = Some(bfcsim_core::Bytes(1_000_000));
        p.switch.alpha = 1.0;
        p.switch.ecn.red = bfcsim_net::ecn::Red {
            kmin: bfcsim_core::Bytes(10_000_000),
            kmax: bfcsim_core::Bytes(10_000_000),
            pmax: 1.0,
        };
        p.switch.ecn.shared = bfcsim_net::ecn::SharedEcn {
            enabled: shared,
            kmin: Some(bfcsim_core::Bytes(300_000)),
            kmax: Some(bfcsim_core::Bytes(500_000)),
            ..Default::default()
        };
        let mut sim = Sim::new(star(12), &flows, p).unwrap();
        sim.run_until(Time::from_ms(2));
        assert!(sim.check_invariants().is_empty());
        let marking = sim.shared_ecn(0).to_vec();
        (sim.counters(), marking, drops(&sim))
    };
    let (off, none, dropped_off) = run(false);
    assert_eq!(off.ce_marks, 0, "per-queue ECN alone never marks");
    assert!(none.is_empty());
    assert!(
        dropped_off > 0,
        "without marks the queues hit the Dynamic Threshold"
    );
    let (on, pools, dropped_on) = run(true);
    assert!(on.ce_marks > 0, "the pool's occupancy marks");
    assert_eq!(pools.len(), 3, "12 ports in pools of 4");
    assert_eq!(pools[0].red.kmin.0, 300_000);
    assert!(
        dropped_on * 10 < dropped_off,
        "shared-buffer ECN prevents most drops: {dropped_on} against {dropped_off}"
    );
}

/// Each switch egress port counts the packets that arrive at its queues and those its buffer drops (what the
/// BCC authors' ns-2 queues count, `pkt_tot_` and `pkt_drop_`): on a star where eight senders overrun four
/// receivers' ports in a small pool, the receivers' ports drop every lost packet and the senders' ports carry
/// only ACKs and drop none.
#[test]
fn switch_ports_count_their_arrivals_and_drops() {
    let flows: Vec<_> = (0..8)
        .map(|s| flow(4 + s, s / 2, 20_000_000, Time::from_ns(13 * s as u64)))
        .collect();
    let mut p = params(dctcp());
    p.switch.ports_per_pool = 4;
    p.switch.pool_size = Some(bfcsim_core::Bytes(1_000_000));
    p.switch.alpha = 1.0;
    p.switch.ecn.enabled = false;
    let topo = star(12);
    let switch = topo.nodes.len() - 1;
    assert_eq!(topo.nodes[switch].kind, bfcsim_net::NodeKind::Switch);
    // The switch's port towards each host, by host.
    let towards: Vec<PortId> = (0..12)
        .map(|h| topo.ports[topo.nodes[h].ports[0].idx()].peer)
        .collect();
    let mut sim = Sim::new(topo, &flows, p).unwrap();
    sim.run_until(Time::from_ms(2));
    let counted: Vec<(u64, u64)> = towards
        .iter()
        .map(|&port| sim.port_arrivals(port).expect("a switch port"))
        .collect();
    let host_port = sim.topology().nodes[0].ports[0];
    assert_eq!(sim.port_arrivals(host_port), None, "a host's port");
    let dropped: u64 = counted.iter().map(|c| c.1).sum();
    assert!(dropped > 0, "the receivers' ports overflow");
    assert_eq!(dropped, sim.counters().dropped_pkts);
    assert!(counted[..4].iter().all(|&(arrived, d)| arrived > d));
    assert!(
        counted[4..]
            .iter()
            .all(|&(arrived, d)| arrived > 0 && d == 0),
        "the senders' ports carry ACKs and drop none: {counted:?}"
    );
}
