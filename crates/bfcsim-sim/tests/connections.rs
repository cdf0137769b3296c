//! Persistent connections (`nic.connections = "persistent"`, BCC's ns-2 traffic generator): a flow starts from
//! the state its connection's previous flow left, unless the connection sat idle for longer than its RTO.

mod common;

use bfcsim_core::{FlowId, FlowSpec, Time};
use bfcsim_net::build::{Build, LeafSpine};
use bfcsim_schemes::cc::CcConfig;
use bfcsim_schemes::cc::dctcp::{DctcpConfig, Start};
use bfcsim_sim::Sim;
use bfcsim_sim::{Connections, SimParams};
use common::*;

fn slow_start(connections: Connections) -> SimParams {
    let mut p = params(CcConfig::Dctcp(DctcpConfig {
        start: Start::SlowStart,
        initial_window: 10,
        ..DctcpConfig::default()
    }));
    p.nic.connections = connections;
    p
}

/// The FCT of the second of two flows from host 0 to host 1 on an idle star, the second starting `gap` after
/// the first one's last byte was acknowledged.
fn second_fct(connections: Connections, gap: Time) -> Time {
    let first = [flow(0, 1, 2_000_000, Time::ZERO)];
    let mut sim = Sim::new(star(2), &first, slow_start(connections)).unwrap();
    sim.run();
    let done = sim.flow(FlowId(0)).3.expect("the first flow finished");
    let flows = [first[0], flow(0, 1, 200_000, done + gap)];
    let mut sim = Sim::new(star(2), &flows, slow_start(connections)).unwrap();
    sim.run();
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    let (spec, _, _, finish) = sim.flow(FlowId(1));
    finish.expect("the second flow finished") - spec.start
}

#[test]
fn a_flow_starts_from_its_connections_window_unless_the_connection_idled_past_its_rto() {
    let fresh = second_fct(Connections::PerFlow, Time::from_us(10));
    // Soon after: the window the first flow grew to carries over, and the second flow needs no slow start.
    let warm = second_fct(Connections::Persistent, Time::from_us(10));
    assert!(warm < fresh, "warm {warm} against fresh {fresh}");
    // After more than an RTO of silence (the first flow's RTO is at least the 1 ms floor): the initial window
    // again, and nothing else a fresh flow would do differently on an idle network.
    let idle = Time::from_ms(70);
    assert_eq!(
        second_fct(Connections::Persistent, idle),
        second_fct(Connections::PerFlow, idle)
    );
}

#[test]
fn connections_hand_over_state_alike_on_one_and_two_threads() {
    let topo = LeafSpine::default().build().unwrap();
    // Many flows per host pair, overlapping and not, so that connections are reused and new ones opened.
    let flows: Vec<FlowSpec> = (0..600u64)
        .map(|i| {
            let src = (i % 8) as u32;
            let dst = 64 + (i % 3) as u32 * 16;
            flow(
                src,
                dst,
                20_000 + (i * 7919) % 400_000,
                Time::from_ns(i * 2_000),
            )
        })
        .collect();
    let run = |threads| {
        let mut sim = Sim::with_threads(
            topo.clone(),
            &flows,
            slow_start(Connections::Persistent),
            threads,
        )
        .unwrap();
        sim.run();
        assert!(
            sim.check_invariants().is_empty(),
            "{:?}",
            sim.check_invariants()
        );
        (sim.shard_count(), sim.fingerprint())
    };
    let (one, fp1) = run(1);
    let (two, fp2) = run(2);
    assert_eq!((one, two), (1, 2));
    assert_eq!(fp1, fp2);
}

#[test]
fn rate_controllers_refuse_persistent_connections() {
    let mut p = params(hpcc());
    p.nic.connections = Connections::Persistent;
    let err = Sim::new(star(2), &[flow(0, 1, 1000, Time::ZERO)], p)
        .err()
        .expect("refused");
    assert!(err.contains("nic.connections"), "{err}");
}
