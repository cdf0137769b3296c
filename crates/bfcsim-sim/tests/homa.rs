//! Homa end to end (Montazeri et al., SIGCOMM 2018): a lone message runs at line rate through its grants, the
//! receiver's SRPT lets a short message through a long one, and messages whose packets are dropped complete
//! through RESENDs.

mod common;

use bfcsim_core::{Bytes, FlowId, Time};
use bfcsim_net::routing::LoadBalancing;
use bfcsim_schemes::receiver_driven::homa::{Homa, HomaConfig};
use bfcsim_schemes::transport::Recovery;
use bfcsim_sim::{FlowControl, NicScheduler, Sim, SimParams};
use common::{flow, no_cc, params, star};

fn homa(priorities: u32) -> SimParams {
    let mut p = params(no_cc());
    p.flow_control = FlowControl::Homa(HomaConfig {
        priorities,
        // The star's round trip: 4 us at 100 Gb/s.
        rtt_bytes: Bytes(50_000),
        ..HomaConfig::default()
    });
    p.switch.classes = priorities;
    p.switch.queues_per_port = priorities;
    p.switch.unlimited_buffer = true;
    p.switch.load_balancing = LoadBalancing::Spray;
    p.nic.scheduler = NicScheduler::Srf;
    p.nic.transport.ack_every = 0;
    p.nic.transport.recovery = Recovery::Selective;
    p.nic.transport.nack = false;
    p
}

fn fct(sim: &Sim, id: u32) -> Time {
    let (spec, _, _, finish) = sim.flow(FlowId(id));
    finish.expect("finished") - spec.start
}

/// A lone 10 MB message: its grants keep RTTbytes ahead of what arrived, so it runs at line rate: its FCT is
/// within 1% of the time its wire bytes take at 100 Gb/s plus a round trip.
#[test]
fn a_lone_message_runs_at_line_rate() {
    let size = 10_000_000u64;
    let mut sim = Sim::new(star(2), &[flow(0, 1, size, Time::ZERO)], homa(8)).unwrap();
    sim.run();
    assert!(sim.check_invariants().is_empty());
    let wire = size.div_ceil(1000) * 1048;
    let ideal = Time::from_ps(wire * 80) + Time::from_us(4);
    let got = fct(&sim, 0);
    eprintln!(
        "FCT {got} against {ideal}; {:?}",
        sim.scheme_stats::<Homa>().expect("Homa ran").grants
    );
    assert!(got.0 as f64 <= ideal.0 as f64 * 1.01, "{got} vs {ideal}");
    assert!(sim.scheme_stats::<Homa>().expect("Homa ran").grants > 9_000);
    assert_eq!(sim.scheme_stats::<Homa>().expect("Homa ran").resends, 0);
}

/// SRPT at the receiver: a 20 KB message arriving during a 10 MB one to the same receiver goes at a higher
/// unscheduled level and finishes in about its own ideal time; the long one is delayed by about as much.
#[test]
fn a_short_message_passes_a_long_one() {
    let flows = [
        flow(0, 2, 10_000_000, Time::ZERO),
        flow(1, 2, 20_000, Time::from_us(200)),
    ];
    let mut sim = Sim::new(star(3), &flows, homa(8)).unwrap();
    sim.run();
    assert!(sim.check_invariants().is_empty());
    let short = fct(&sim, 1);
    eprintln!("short FCT {short}, long {}", fct(&sim, 0));
    // 20 packets of 1048 B (1.68 us) plus one round trip (4 us) and the long message's packet ahead at each hop.
    assert!(short < Time::from_us(8), "{short}");
}

/// Packets dropped on purpose (a switch buffer of 20-100 KB under a 16 -> 1 incast of 200 KB messages; with the
/// pool full, Dynamic Threshold refuses grants too): every message completes, its losses repaired by RESENDs
/// (which repeat the current grant, in case the grant was lost) and a message lost whole by its sender's
/// timeout.
#[test]
fn dropped_packets_are_resent_until_every_message_completes() {
    for pool in [20_000, 40_000, 100_000] {
        let mut p = homa(8);
        p.switch.unlimited_buffer = false;
        p.switch.pool_size = Some(Bytes(pool));
        let flows: Vec<_> = (1..17).map(|s| flow(s, 0, 200_000, Time::ZERO)).collect();
        let mut sim = Sim::new(star(17), &flows, p).unwrap();
        sim.run();
        let violations = sim.check_invariants();
        assert!(violations.is_empty(), "{violations:?}");
        assert_eq!(sim.flows_done(), flows.len(), "pool {pool}");
        let dropped = common::drops(&sim);
        let h = sim.scheme_stats::<Homa>().expect("Homa ran");
        eprintln!(
            "pool {pool}: {dropped} drops, {} resends, {} retransmits, {} timeouts, done at {}",
            h.resends,
            sim.counters().retransmits,
            sim.counters().timeouts,
            sim.now()
        );
        assert!(dropped > 0, "the buffer overflows");
        assert!(h.resends > 0);
    }
}

/// The number of levels must match the switch's queues; the transport must be the one RESENDs drive.
#[test]
fn inconsistent_settings_are_refused() {
    let mut p = homa(8);
    p.nic.transport.recovery = Recovery::GoBackN;
    let err = Sim::new(star(2), &[flow(0, 1, 1000, Time::ZERO)], p)
        .err()
        .unwrap();
    assert!(err.contains("nic.recovery"), "{err}");
}
