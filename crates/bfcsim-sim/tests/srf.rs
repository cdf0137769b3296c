//! Shortest remaining first (BFC App. A.2) end to end: at a switch a short flow overtakes a long one at the
//! shared egress, at a NIC it overtakes a long flow of the same host, and over a heavy-tailed mix the ideal SRF
//! baseline completes flows faster on average than ideal fair queuing.

mod common;

use bfcsim_core::rng::{Stream, stream};
use bfcsim_core::{FlowId, FlowSpec, Time};
use bfcsim_schemes::cc::{CcConfig, FixedConfig, WindowSpec};
use bfcsim_schemes::flow_control::bfc::BfcConfig;
use bfcsim_sim::{FlowControl, NicScheduler, Scheduler, Sim, SimParams};
use common::{flow, lone_flow_fct, no_cc, params, star};
use rand::RngExt;

/// The `ideal-fq` scheme (a queue per flow, unlimited buffer, 1-BDP NIC cap) with the given schedulers.
fn ideal(switch: Scheduler, nic: NicScheduler) -> SimParams {
    let mut p = params(no_cc());
    p.flow_control = FlowControl::Bfc(BfcConfig {
        backpressure: false,
        exact_flow_table: true,
        sticky: Some(Time::ZERO),
        ..BfcConfig::default()
    });
    p.switch.queues_per_port = 1024;
    p.switch.unlimited_buffer = true;
    p.switch.scheduler = switch;
    p.nic.scheduler = nic;
    p.cc = CcConfig::None(FixedConfig {
        window: Some(WindowSpec::Bdp(1)),
    });
    p
}

/// Completion time of flow `id`.
fn fct(sim: &Sim, id: usize) -> Time {
    let (spec, _, _, finish) = sim.flow(FlowId::from_idx(id));
    finish.expect("the flow finished") - spec.start
}

/// Ideal FCT of `size` bytes across the star's two 100 Gb/s, 1 µs hops (1000 B + 48 B packets, 64 B ACKs).
fn ideal_fct(size: u64) -> Time {
    let hops = [(100_000_000_000, 1_000_000), (100_000_000_000, 1_000_000)];
    Time(lone_flow_fct(&hops, &hops, size, 1000, 48, 64))
}

/// Serialization of one full packet at 100 Gb/s.
const PACKET: Time = Time(1048 * 80);

/// Runs `flows` on a star of `hosts` hosts to the end.
fn run(hosts: u32, flows: &[FlowSpec], p: SimParams) -> Sim {
    let mut sim = Sim::new(star(hosts), flows, p).unwrap();
    sim.run();
    assert_eq!(sim.flows_done(), sim.flow_count());
    assert!(sim.check_invariants().is_empty());
    sim
}

#[test]
fn switch_srf_lets_a_short_flow_overtake_a_long_one() {
    // Hosts 1 and 2 send to host 0: a 2 MB flow, and 20 KB arriving once the long flow is at line rate.
    let flows = [
        flow(1, 0, 2_000_000, Time::ZERO),
        flow(2, 0, 20_000, Time::from_us(50)),
    ];
    let ideal_short = ideal_fct(20_000);
    let srf = run(3, &flows, ideal(Scheduler::Srf, NicScheduler::RoundRobin));
    let fq = run(3, &flows, ideal(Scheduler::Drr, NicScheduler::RoundRobin));
    let (s, f) = (fct(&srf, 1), fct(&fq, 1));
    eprintln!("short flow: SRF {s}, FQ {f}, ideal {ideal_short}");
    // Under SRF it waits at most for the long flow's packet on the wire; under FQ it gets half the link.
    assert!(s <= ideal_short + PACKET, "SRF {s} vs ideal {ideal_short}");
    assert!(
        f >= ideal_short + PACKET * 10,
        "FQ {f} vs ideal {ideal_short}"
    );
    // The long flow loses what the short one took, no more.
    let (ls, lf) = (fct(&srf, 0), fct(&fq, 0));
    assert!(
        ls.0.abs_diff(lf.0) <= (PACKET * 2).0,
        "long flow: SRF {ls}, FQ {lf}"
    );
}

#[test]
fn nic_srf_sends_a_hosts_short_flow_first() {
    // Host 1 sends a 1 MB flow and, once it runs at line rate, a 10 KB one, both to host 0.
    let flows = [
        flow(1, 0, 1_000_000, Time::ZERO),
        flow(1, 0, 10_000, Time::from_us(20)),
    ];
    let ideal_short = ideal_fct(10_000);
    let srf = run(2, &flows, ideal(Scheduler::Srf, NicScheduler::Srf));
    let rr = run(2, &flows, ideal(Scheduler::Srf, NicScheduler::RoundRobin));
    let (s, r) = (fct(&srf, 1), fct(&rr, 1));
    eprintln!("short flow: NIC SRF {s}, NIC round robin {r}, ideal {ideal_short}");
    assert!(s <= ideal_short + PACKET, "SRF {s} vs ideal {ideal_short}");
    assert!(
        r >= ideal_short + PACKET * 5,
        "RR {r} vs ideal {ideal_short}"
    );
}

#[test]
fn ideal_srf_beats_ideal_fq_on_mean_fct_of_a_heavy_tailed_mix() {
    // Eight senders to host 0 at 70% load, Poisson arrivals; 90% of flows are 10 KB, 10% are 1 MB.
    let mut rng = stream(3, Stream::Other(2));
    let (small, large) = (10_000u64, 1_000_000u64);
    let mean = 0.9 * small as f64 + 0.1 * large as f64;
    let lambda = 0.7 * 12.5e9 / mean;
    let mut t = 0.0f64;
    let flows: Vec<FlowSpec> = (0..2000)
        .map(|_| {
            t += -(1.0 - rng.random::<f64>()).ln() / lambda;
            let size = if rng.random::<f64>() < 0.9 {
                small
            } else {
                large
            };
            flow(
                1 + rng.random_range(0..8),
                0,
                size,
                Time::from_ps((t * 1e12) as u64),
            )
        })
        .collect();
    let mean_fct = |sim: &Sim| {
        (0..sim.flow_count())
            .map(|i| fct(sim, i).0 as f64)
            .sum::<f64>()
            / sim.flow_count() as f64
            / 1e6
    };
    let srf = mean_fct(&run(9, &flows, ideal(Scheduler::Srf, NicScheduler::Srf)));
    let fq = mean_fct(&run(
        9,
        &flows,
        ideal(Scheduler::Drr, NicScheduler::RoundRobin),
    ));
    eprintln!("mean FCT: ideal-srf {srf:.2} us, ideal-fq {fq:.2} us");
    assert!(srf < 0.8 * fq, "SRF {srf:.2} us vs FQ {fq:.2} us");
}
