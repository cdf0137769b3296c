//! PFC in the engine: lossless incast, pause frames and paused time, head-of-line blocking that emerges from
//! the mechanism, and BFC's "HPCC-PFC" (ideal retransmission without PFC) under the same kind of incast.

mod common;

use bfcsim_core::{Bytes, FlowId, FlowSpec, Rate, Time};
use bfcsim_net::build::{Build, Dumbbell};
use bfcsim_schemes::flow_control::pfc::Pfc;
use bfcsim_sim::{Sim, SimParams};
use common::*;

/// Runs to the end; checks the invariants and that every flow finished.
fn run_all(topo: bfcsim_net::Topology, flows: &[FlowSpec], p: SimParams) -> Sim {
    let mut sim = Sim::new(topo, flows, p).unwrap();
    sim.run();
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    assert_eq!(sim.flows_done(), flows.len(), "every flow finishes");
    sim
}

fn fct(sim: &Sim, id: u32) -> Time {
    let (spec, _, _, finish) = sim.flow(FlowId(id));
    finish.expect("finished") - spec.start
}

/// 16 line-rate senders into one receiver through a 1 MB switch: without PFC the buffer overflows; with PFC
/// the ingress ports pause the senders' NICs and nothing is lost.
#[test]
fn incast_into_a_small_buffer_is_lossless_under_pfc() {
    let flows: Vec<_> = (1..=16).map(|s| flow(s, 0, 500_000, Time::ZERO)).collect();
    let mut p = params(no_cc());
    p.switch.buffer = Bytes(1_000_000);
    let lossy = run_all(star(17), &flows, p.clone());
    let sim = run_all(star(17), &flows, with_pfc(p));
    let h = sim.hop_stats();
    let records = sim.pause_records().expect("PFC ran");
    let pauses = records.iter().filter(|r| r.pause).count() as u64;
    let max_paused = (1..=16u32)
        .map(|host| {
            let port = sim.topology().nodes[host as usize].ports[0];
            sim.scheme_at_port::<Pfc>(port)
                .unwrap()
                .port(port)
                .paused_time_any(sim.now())
                .0 as f64
                / sim.now().0 as f64
        })
        .fold(0.0, f64::max);
    println!(
        "16->1 incast, 1 MB buffer: {} drops without PFC; with PFC {} drops, {} PAUSE and {} RESUME frames, \
         NIC paused at most {:.3} of the run",
        drops(&lossy),
        drops(&sim),
        h.pause_frames,
        h.resume_frames,
        max_paused,
    );
    assert!(
        drops(&lossy) > 0,
        "the incast overflows the buffer without PFC"
    );
    assert_eq!(drops(&sim), 0);
    assert!(h.pause_frames > 0 && h.pause_frames == h.resume_frames);
    assert_eq!(
        pauses, h.pause_frames,
        "pfc.txt records every PAUSE received"
    );
    assert!(
        records.iter().all(|r| r.node_type == 0 && r.if_index == 1),
        "only NICs are paused"
    );
    assert!(max_paused > 0.1, "paused fraction {max_paused}");
}

/// Head-of-line blocking (BFC §2.2): three hosts on the left send to one host on the right through a
/// 400 Gb/s trunk; the right switch's egress to that host congests, its trunk ingress crosses the PFC
/// threshold and pauses the trunk. A victim flow from a fourth left host to an idle right host shares only
/// the trunk with them (which has room for all four), yet waits behind the pauses. Without PFC the congested
/// traffic is dropped instead and the victim runs at line rate.
#[test]
fn pfc_pauses_slow_a_victim_flow_to_an_uncongested_host() {
    let topo = Dumbbell {
        left: 4,
        right: 2,
        host_rate: Rate::gbps(100),
        bottleneck_rate: Rate::gbps(400),
        host_delay: Time::from_us(1),
        bottleneck_delay: Time::from_us(1),
    }
    .build()
    .unwrap();
    let victim = flow(3, 5, 2_000_000, Time::from_us(200));
    let mut congested: Vec<_> = (0..3).map(|s| flow(s, 4, 10_000_000, Time::ZERO)).collect();
    congested.push(victim);
    let mut p = params(no_cc());
    p.switch.buffer = Bytes(2_000_000);
    let alone = run_all(
        topo.clone(),
        &[flow(3, 5, 2_000_000, Time::ZERO)],
        with_pfc(p.clone()),
    );
    let lossy = run_all(topo.clone(), &congested, p.clone());
    let sim = run_all(topo, &congested, with_pfc(p));
    let (t_alone, t_lossy, t_pfc) = (fct(&alone, 0), fct(&lossy, 3), fct(&sim, 3));
    // The left switch's port towards the right switch.
    let topo = sim.topology();
    let left_switch = topo.peer_node(topo.nodes[0].ports[0]);
    let trunk = *topo.nodes[left_switch.idx()]
        .ports
        .iter()
        .find(|&&p| !topo.is_host(topo.peer_node(p)))
        .unwrap();
    let trunk_paused = sim
        .scheme_at_port::<Pfc>(trunk)
        .unwrap()
        .port(trunk)
        .paused_time_any(sim.now());
    println!(
        "victim FCT: alone {t_alone}, with congestion and no PFC {t_lossy} ({} drops), with PFC {t_pfc} \
         ({} PAUSE frames, trunk paused {trunk_paused} of {})",
        drops(&lossy),
        sim.hop_stats().pause_frames,
        sim.now()
    );
    assert_eq!(drops(&sim), 0);
    assert!(trunk_paused > Time::ZERO, "the trunk was paused");
    assert!(
        t_lossy.0 < t_alone.0 * 11 / 10,
        "no PFC: the victim is not held up"
    );
    assert!(
        t_pfc.0 > 2 * t_alone.0,
        "PFC: the victim waits behind the pauses"
    );
}

/// A PAUSE of a NIC's every priority stops its flows where they are in its round robin (HPCC's ns-3 NIC skips
/// paused queue pairs and keeps its place, `RdmaEgressQueue::GetNextQindex`), and the RESUME wakes the NIC for
/// them: three line-rate flows of one host, through an incast that pauses it again and again, all finish, and at
/// every instant their acknowledged bytes differ by at most two packets (the first flow sent its first packet
/// alone, before the others started, and stays one ahead). Without the wake-up the flows stall; the order itself
/// is not observable here (the old put-back, which gave one flow two packets in a row, kept the same bound).
#[test]
fn a_paused_nic_keeps_its_round_robin() {
    let mut flows: Vec<_> = (0..3).map(|_| flow(1, 0, 400_000, Time::ZERO)).collect();
    flows.extend((2..=12).map(|s| flow(s, 0, 400_000, Time::ZERO)));
    let mut p = with_pfc(params(no_cc()));
    p.switch.buffer = Bytes(1_000_000);
    let mss = p.nic.payload as u64;
    let mut sim = Sim::new(star(13), &flows, p).unwrap();
    let nic = sim.topology().nodes[1].ports[0];
    let (mut t, mut spread) = (Time::ZERO, 0);
    while !sim.finished() && t < Time::from_ms(5) {
        t += Time::from_ns(20);
        sim.run_until(t);
        let acked: Vec<u64> = (0..3).map(|i| sim.flow_acked(FlowId(i))).collect();
        if acked.iter().all(|&a| a < 400_000) {
            let s = acked.iter().max().unwrap() - acked.iter().min().unwrap();
            spread = spread.max(s);
        }
    }
    sim.run();
    let paused = sim.scheme_at_port::<Pfc>(nic).unwrap().port(nic);
    println!(
        "host 1's NIC: {} PAUSE frames, paused {} of {}; largest spread of its flows' acknowledged bytes {spread} B",
        paused.pauses(),
        paused.paused_time_any(sim.now()),
        sim.now()
    );
    assert_eq!(sim.flows_done(), flows.len());
    assert!(paused.pauses() >= 3, "the incast pauses host 1 repeatedly");
    assert!(
        spread <= 2 * mss,
        "round robin kept across pauses: spread {spread} B"
    );
}

/// With two lossless priorities, a PAUSE stops only its own at the NIC: host 1 sends a class-0 flow into a
/// 10-to-1 incast, which pauses its class 0 again and again, and a class-1 flow to an idle host, which goes on
/// at the NIC's rate while class 0 waits (its flows parked until each RESUME).
#[test]
fn a_pause_of_one_priority_leaves_the_other_sending() {
    let mut p = with_pfc(params(no_cc()));
    p.switch.classes = 2;
    p.switch.queues_per_port = 2;
    p.switch.buffer = Bytes(2_000_000);
    let other = FlowSpec {
        class: 1,
        ..flow(1, 2, 1_000_000, Time::ZERO)
    };
    let mut flows = vec![flow(1, 0, 1_000_000, Time::ZERO), other];
    flows.extend((3..=12).map(|s| flow(s, 0, 1_000_000, Time::ZERO)));
    let alone = run_all(star(13), &[other], p.clone());
    let sim = run_all(star(13), &flows, p);
    let nic = sim.topology().nodes[1].ports[0];
    let pause = sim.scheme_at_port::<Pfc>(nic).unwrap().port(nic);
    let (paused0, paused1) = (
        pause.paused_time(0, sim.now()),
        pause.paused_time(1, sim.now()),
    );
    let (t_alone, t_other, t_incast) = (fct(&alone, 0), fct(&sim, 1), fct(&sim, 0));
    println!(
        "host 1's NIC: class 0 paused {paused0}, class 1 paused {paused1}; class-1 flow {t_other} (alone \
         {t_alone}), class-0 flow {t_incast}"
    );
    assert_eq!(drops(&sim), 0);
    assert!(paused0 > Time::ZERO, "the incast pauses class 0 at host 1");
    assert_eq!(paused1, Time::ZERO, "nothing pauses class 1");
    assert!(
        t_other.0 < 5 * t_alone.0 / 2,
        "class 1 shares the NIC, not class 0's pauses"
    );
    assert!(
        t_incast.0 > 3 * t_other.0,
        "class 0 waits behind the incast"
    );
}

/// BFC §6.2.1's HPCC-PFC: no PFC, every drop reported to the sender at once. A 32->1 incast of HPCC flows
/// starting at line rate overflows a 500 KB buffer; every flow still completes, with no retransmission
/// timeout.
#[test]
fn hpcc_ideal_retx_drops_under_incast_and_delivers_every_flow() {
    let flows: Vec<_> = (1..=32).map(|s| flow(s, 0, 200_000, Time::ZERO)).collect();
    let mut p = params(hpcc());
    p.switch.buffer = Bytes(500_000);
    p.switch.drop_notification = true;
    let sim = run_all(star(33), &flows, p.clone());
    let c = sim.counters();
    let last = (0..32).map(|i| fct(&sim, i)).max().unwrap();
    p.switch.drop_notification = false;
    let plain = run_all(star(33), &flows, p);
    let last_plain = (0..32).map(|i| fct(&plain, i)).max().unwrap();
    println!(
        "32->1 HPCC incast, 500 KB buffer: with drop notices {} drops, {} retransmitted packets, {} timeouts, \
         last flow done in {last}; with receiver NACKs only {} drops, {} timeouts, last done in {last_plain}",
        drops(&sim),
        c.retransmits,
        c.timeouts,
        drops(&plain),
        plain.counters().timeouts
    );
    assert!(drops(&sim) > 0);
    assert_eq!(c.timeouts, 0);
    assert!(sim.schemes::<Pfc>().is_none());
}

/// HPCC ns-3's switches queue ACKs with data (`switch.ack_priority = false`): a flow 0 -> 1 whose ACKs cross the
/// port into host 0, congested by a 16 -> 1 incast, finishes only when its last ACK has waited in that queue;
/// with the control queue it does not wait. The ACKs are admitted and released by PFC's ingress accounting like
/// data, which ends the run empty with no drop.
#[test]
fn acks_share_the_data_queue_and_its_pfc_accounting_without_ack_priority() {
    let mut flows: Vec<_> = (2..=17).map(|s| flow(s, 0, 500_000, Time::ZERO)).collect();
    flows.push(flow(0, 1, 200_000, Time::from_us(20)));
    let mut p = with_pfc(params(no_cc()));
    p.switch.buffer = Bytes(2_000_000);
    let prio = run_all(star(18), &flows, p.clone());
    p.switch.ack_priority = false;
    let fifo = run_all(star(18), &flows, p);
    let (t_prio, t_fifo) = (fct(&prio, 16), fct(&fifo, 16));
    let s = 0;
    let pfc = fifo.scheme_at_switch::<Pfc>(s).unwrap().ingress(s);
    println!(
        "flow 0 -> 1 with its ACKs behind a 16 -> 1 incast: FCT {t_prio} with ACK priority, {t_fifo} with ACKs \
         in the data queue ({} PAUSE frames)",
        fifo.hop_stats().pause_frames
    );
    assert_eq!(drops(&fifo), 0);
    assert_eq!((pfc.total(), pfc.shared_used()), (0, 0));
    assert_eq!(fifo.switch_mmu(s).total(), 0);
    assert!(
        t_fifo.0 > t_prio.0 + 10_000_000,
        "the last ACK waits behind the incast: {t_fifo} vs {t_prio}"
    );
}

/// A cyclic buffer dependency under PFC ([`ring_traffic`], flows at line rate without congestion control,
/// one priority): every ring port ends up paused by the next switch, whose ingress is full of packets waiting
/// for its own paused ring port. The run makes no progress, and the diagnosis names the cycle, every ring
/// switch in it.
#[test]
fn cyclic_buffer_dependency_deadlocks_and_the_diagnosis_names_the_cycle() {
    let (topo, flows) = ring_traffic();
    let mut sim = Sim::new(topo, &flows, with_pfc(params(no_cc()))).unwrap();
    sim.run_until(Time::from_ms(2));
    let before = sim.progress();
    sim.run_until(Time::from_ms(4));
    assert_eq!(sim.progress(), before, "a deadlock makes no progress");
    assert!(sim.flows_done() < flows.len());
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    let diagnosis = sim.stall_diagnosis();
    println!("{diagnosis}");
    assert!(
        diagnosis.starts_with("deadlock: a cyclic buffer dependency"),
        "{diagnosis}"
    );
    let cycle = diagnosis.split(" -> ").count() - 1;
    assert_eq!(cycle, 7, "the seven ring ports: {diagnosis}");
    for s in 0..7 {
        assert!(
            diagnosis.contains(&format!("switch {s} port")),
            "{diagnosis}"
        );
    }
}
