//! ExpressPass end to end (Cho et al., SIGCOMM 2017): a lone flow at line rate once its credits have ramped
//! up, two flows sharing a bottleneck converge to equal shares, data is never dropped, and the wasted credits
//! of a flow's last round trip are counted.

mod common;

use bfcsim_core::{Rate, Time};
use bfcsim_net::build::{Build, Dumbbell};
use bfcsim_schemes::receiver_driven::expresspass::{ExpressPass, ExpressPassConfig};
use bfcsim_sim::{FlowControl, Sim, SimParams};
use common::{flow, no_cc, params, port_to_host, star};

fn expresspass() -> SimParams {
    let mut p = params(no_cc());
    p.flow_control = FlowControl::ExpressPass(ExpressPassConfig::default());
    p.switch.classes = 2;
    p.switch.queues_per_port = 2;
    p.nic.transport.ack_every = 0;
    p
}

/// Wire bytes a port sent between `t1` and `t2`, as a fraction of its link's capacity.
fn utilization(sim: &mut Sim, port: bfcsim_core::PortId, t1: Time, t2: Time) -> f64 {
    sim.run_until(t1);
    let b1 = sim.port_tx_bytes(port);
    sim.run_until(t2);
    let b2 = sim.port_tx_bytes(port);
    let (rate, _) = sim.port_link(port);
    (b2 - b1) as f64 / rate.bytes_in(t2 - t1).0 as f64
}

/// Utilization of the receiver's link by a lone flow started at 0 with ExpressPass parameters `cfg`: per
/// 10 µs for the first 100 µs, then from 100 µs to 1 ms.
fn lone_flow(cfg: ExpressPassConfig) -> (Vec<f64>, f64) {
    let mut p = expresspass();
    p.flow_control = FlowControl::ExpressPass(cfg);
    let mut sim = Sim::new(star(2), &[flow(0, 1, 20_000_000, Time::ZERO)], p).unwrap();
    let port = port_to_host(&sim, 1);
    let rates = (0..10)
        .map(|k| {
            let t = Time::from_us(10 * k);
            utilization(&mut sim, port, t, t + Time::from_us(10))
        })
        .collect();
    let steady = utilization(&mut sim, port, Time::from_us(100), Time::from_us(1000));
    sim.run();
    assert!(sim.check_invariants().is_empty());
    assert_eq!(common::drops(&sim), 0);
    (rates, steady)
}

/// A lone flow fills its receiver's link but for the credits' share in the other direction (1048 B of data
/// per 64 B credit: 94.2%). Its credits start at α of the largest rate and climb by a fraction w of the
/// remaining gap per round trip (§3.2): with α = 1 it runs at line rate right after its first RTT (about
/// 4 µs here); with BFC's α = 0.5 and w_init = 1/16 it takes about ten round trips to pass 90%.
#[test]
fn a_lone_flow_reaches_line_rate() {
    let line = 1048.0 / 1112.0;
    let (rates, steady) = lone_flow(ExpressPassConfig {
        alpha: 1.0,
        ..ExpressPassConfig::default()
    });
    eprintln!("alpha 1: utilization per 10 us {rates:.3?}; 100 us to 1 ms {steady:.4}");
    // A 10 µs window ends within a packet: a percent of slack above the line.
    assert!(
        rates[1..].iter().all(|&r| r >= 0.9 && r <= line + 0.01),
        "{rates:?}"
    );
    let (rates, steady) = lone_flow(ExpressPassConfig::default());
    eprintln!("alpha 0.5: utilization per 10 us {rates:.3?}; 100 us to 1 ms {steady:.4}");
    assert!(steady >= 0.9 && steady <= line + 1e-3, "{steady}");
    let first = rates.iter().position(|&r| r >= 0.9).expect("reaches 90%");
    assert!(first <= 5, "90% only after {first}0 us: {rates:.3?}");
}

/// Two flows whose credits share a bottleneck (left → right of a dumbbell: the credits cross it right to left
/// and meet in its credit queue) converge to equal throughputs within 10%.
#[test]
fn two_flows_converge_to_equal_shares() {
    let topo = Dumbbell {
        left: 2,
        right: 2,
        host_rate: Rate::gbps(100),
        bottleneck_rate: Rate::gbps(100),
        host_delay: Time::from_us(1),
        bottleneck_delay: Time::from_us(1),
    }
    .build()
    .unwrap();
    let flows = [
        flow(0, 2, 100_000_000, Time::ZERO),
        flow(1, 3, 100_000_000, Time::from_us(50)),
    ];
    let mut sim = Sim::new(topo, &flows, expresspass()).unwrap();
    let (t1, t2) = (Time::from_us(500), Time::from_us(1500));
    sim.run_until(t1);
    let a1: Vec<u64> = (0..2)
        .map(|i| sim.flow_acked(bfcsim_core::FlowId(i)))
        .collect();
    sim.run_until(t2);
    let got: Vec<f64> = (0..2)
        .map(|i| {
            (sim.flow_acked(bfcsim_core::FlowId(i)) - a1[i as usize]) as f64 * 8.0 / 1e-3 / 1e9
        })
        .collect();
    eprintln!("Gb/s from 0.5 to 1.5 ms: {got:.2?}");
    let (lo, hi) = (got[0].min(got[1]), got[0].max(got[1]));
    assert!(hi <= lo * 1.1, "{got:?}");
    assert!(lo + hi >= 80.0, "the bottleneck stays busy: {got:?}");
}

/// Many flows into one receiver (a 31 → 1 incast of 1 MB each): their credits are dropped at the receiver's
/// credit queue, never their data; every flow completes; credits of each flow's last round trip are wasted
/// and counted.
#[test]
fn incast_drops_credits_not_data_and_counts_waste() {
    let flows: Vec<_> = (1..32).map(|s| flow(s, 0, 1_000_000, Time::ZERO)).collect();
    let mut sim = Sim::new(star(32), &flows, expresspass()).unwrap();
    sim.run();
    assert_eq!(sim.flows_done(), flows.len());
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    let data_drops: u64 = sim
        .drops()
        .iter()
        .filter(|(r, _)| *r != bfcsim_net::mmu::DropReason::CreditQueueFull)
        .map(|&(_, n)| n)
        .sum();
    assert_eq!(data_drops, 0);
    let c = sim.scheme_stats::<ExpressPass>().expect("ExpressPass ran");
    eprintln!("{c:?}");
    assert_eq!(c.requests, 31);
    assert_eq!(c.stops, 31);
    assert!(c.dropped > 0, "credits meet a full queue");
    assert!(c.wasted > 0 && c.wasted < c.sent / 4, "{c:?}");
    // Every credit that was not dropped called for a data packet or was wasted (or was still on its way).
    let data_packets = 31 * 1000;
    assert!(c.sent - c.dropped >= data_packets + c.wasted, "{c:?}");
}
