//! The delay-, digest- and power-based controllers in the engine (TIMELY, Swift, HPCC-PINT), on small fabrics,
//! against what their papers say they do: the stamps they read are made where the papers say (hop count,
//! remote endpoint delay, PINT's digest), and the queues they keep are the papers'.

mod common;

use bfcsim_core::{FlowId, PortId, Time};
use bfcsim_schemes::cc::CcConfig;
use bfcsim_schemes::cc::hpcc::{HpccConfig, PintConfig};
use bfcsim_schemes::cc::powertcp::{Power, PowerTcpConfig};
use bfcsim_schemes::cc::swift::SwiftConfig;
use bfcsim_schemes::cc::timely::TimelyConfig;
use bfcsim_sim::{Sim, SimParams};
use common::*;

/// `senders` long flows from hosts 1..=senders to host 0 of a star, all at time 0, run to `warm` then sampled
/// every 500 ns to `end`: the bottleneck's wire utilization and its queue's mean and max bytes.
fn incast(p: SimParams, senders: u32, warm: Time, end: Time) -> (f64, f64, u64, Sim) {
    let flows: Vec<_> = (1..=senders)
        .map(|s| flow(s, 0, 100_000_000_000, Time::ZERO))
        .collect();
    let mut sim = Sim::new(star(senders + 1), &flows, p).unwrap();
    let port: PortId = port_to_host(&sim, 0);
    sim.run_until(warm);
    let tx0 = sim.port_tx_bytes(port);
    let (mut sum, mut max, mut n) = (0.0, 0, 0);
    let mut t = warm;
    while t < end {
        t += Time::from_ns(500);
        sim.run_until(t);
        let q = sim.egress_queue_bytes(port, sim.data_queue(0));
        sum += q as f64;
        max = max.max(q);
        n += 1;
    }
    let util = (sim.port_tx_bytes(port) - tx0) as f64 * 8.0 / (100e9 * (end - warm).secs_f64());
    assert!(
        sim.check_invariants().is_empty(),
        "{:?}",
        sim.check_invariants()
    );
    (util, sum / n as f64, max, sim)
}

fn hpcc_pint() -> CcConfig {
    CcConfig::Hpcc(HpccConfig {
        pint: Some(PintConfig::default()),
        ..HpccConfig::default()
    })
}

fn swift() -> SwiftConfig {
    SwiftConfig::default()
}

/// Swift §3 / Fig. 5: the queue settles where the delay meets the fabric target, base + one hop's scaling +
/// flow scaling at each flow's window, with the link full.
#[test]
fn swift_keeps_the_queue_at_its_target_delay_and_the_link_full() {
    let p = params(CcConfig::Swift(swift()));
    let (util, mean, max, sim) = incast(p, 8, Time::from_ms(2), Time::from_ms(4));
    let base = sim.flow_context().base_rtt.secs_f64() * 1e6;
    // Eight flows share 100 Gb/s: about BDP/8 each plus the queue; the target is 20 µs + 3.05 µs (one switch)
    // + flow scaling at that window (≈ 5-8 µs), so the queue holds about (target − base RTT) of the link.
    let queue_us = mean * 8.0 / 100e9 * 1e6;
    println!(
        "Swift 8→1: utilization {util:.4}, queue mean {mean:.0} B ({queue_us:.1} us) max {max} B, base RTT {base:.2} us"
    );
    assert!(util > 0.97, "utilization {util}");
    assert!(
        (18.0..32.0).contains(&(queue_us + base)),
        "queuing {queue_us:.1} us + base {base:.2} us is not near the target"
    );
}

/// Swift §3.3: with the endpoint window off (htsim's Swift) the fabric window alone decides; on a star
/// the endpoint delay (the wait of a data packet's ACK at the receiver's NIC) is below a microsecond, so the
/// two runs keep the same queue.
#[test]
fn swift_without_the_endpoint_window_keeps_the_same_fabric_queue() {
    let (_, with, _, _) = incast(
        params(CcConfig::Swift(swift())),
        4,
        Time::from_ms(2),
        Time::from_ms(3),
    );
    let (_, without, _, _) = incast(
        params(CcConfig::Swift(SwiftConfig {
            endpoint: false,
            ..swift()
        })),
        4,
        Time::from_ms(2),
        Time::from_ms(3),
    );
    assert!(
        (with / without - 1.0).abs() < 0.1,
        "queue {with:.0} B with, {without:.0} B without"
    );
}

/// HPCC-PINT (§5.1): one flow settles, as HPCC does, near η·C with almost no queue, on the digest alone.
#[test]
fn hpcc_pint_lone_flow_settles_near_eta_c_with_an_empty_queue() {
    let p = with_pfc(params(hpcc_pint()));
    let (util, mean, max, _) = incast(p, 1, Time::from_ms(1), Time::from_ms(3));
    println!("HPCC-PINT lone flow: utilization {util:.4}, queue mean {mean:.0} B max {max} B");
    assert!((util / 0.95 - 1.0).abs() < 0.04, "utilization {util}");
    assert!(max < 10_000, "max queue {max}");
}

/// HPCC-PINT under an 8-to-1 incast: the link stays full and the queue short, as HPCC's.
#[test]
fn hpcc_pint_incast_keeps_the_link_full_and_the_queue_short() {
    let p = with_pfc(params(hpcc_pint()));
    let (util, mean, _, _) = incast(p, 8, Time::from_ms(2), Time::from_ms(4));
    println!("HPCC-PINT 8→1: utilization {util:.4}, queue mean {mean:.0} B");
    assert!(util > 0.9, "utilization {util}");
    assert!(mean < 50_000.0, "queue mean {mean}");
}

/// TIMELY (§4): rate-based with RTT thresholds of 50 and 500 µs. Two flows into one port get fair shares; below
/// T_low the rates only grow (hyper-additively after five steps), so the queue builds until the RTT passes
/// T_low and the gradient cuts it, and the queue swings between empty and a peak past T_low's worth of bytes
/// (with HPCC's ns-3 parameters at 100 Gb/s, the oscillation HPCC §2.3 describes).
#[test]
fn timely_two_flows_share_the_link_with_the_rtt_between_its_thresholds() {
    let p = with_pfc(params(CcConfig::Timely(TimelyConfig::default())));
    let flows = [
        flow(1, 0, 100_000_000_000, Time::ZERO),
        flow(2, 0, 100_000_000_000, Time::from_us(500)),
    ];
    let mut sim = Sim::new(star(3), &flows, p).unwrap();
    let port = port_to_host(&sim, 0);
    sim.run_until(Time::from_ms(20));
    let acked0 = [sim.flow_acked(FlowId(0)), sim.flow_acked(FlowId(1))];
    let tx0 = sim.port_tx_bytes(port);
    let (mut queue, mut max, mut empty) = (0.0, 0, 0);
    for i in 1..=20_000 {
        sim.run_until(Time::from_ms(20) + Time::from_ns(500 * i));
        let q = sim.egress_queue_bytes(port, sim.data_queue(0));
        queue += q as f64 / 20_000.0;
        max = max.max(q);
        empty += usize::from(q == 0);
    }
    let secs = 0.01;
    let rate = |i: usize| (sim.flow_acked(FlowId(i as u32)) - acked0[i]) as f64 * 8.0 / secs / 1e9;
    let util = (sim.port_tx_bytes(port) - tx0) as f64 * 8.0 / (100e9 * secs);
    let delay_us = queue * 8.0 / 100e9 * 1e6;
    let peak_us = max as f64 * 8.0 / 100e9 * 1e6;
    println!(
        "TIMELY two flows: {:.2} and {:.2} Gb/s, utilization {util:.4}, queue {queue:.0} B ({delay_us:.1} us) \
         max {max} B, empty {empty} of 20000 samples",
        rate(0),
        rate(1)
    );
    assert!((rate(0) / rate(1) - 1.0).abs() < 0.15, "unfair");
    assert!(util > 0.85, "utilization {util}");
    assert!(
        (40.0..500.0).contains(&peak_us),
        "peak queuing delay {peak_us} us"
    );
    assert!(
        empty > 0 && delay_us < 50.0,
        "mean queuing delay {delay_us} us, empty {empty}"
    );
    assert!(sim.check_invariants().is_empty());
}

/// PowerTCP (§3, Fig. 4): the window follows the bottleneck's power, so an 8-to-1 incast of long flows keeps
/// the link full with almost no standing queue (the paper's "near-zero queue"), where HPCC, reacting to the
/// queue length alone, keeps η·C.
#[test]
fn powertcp_incast_keeps_the_link_full_with_a_near_empty_queue() {
    let p = with_pfc(params(CcConfig::PowerTcp(PowerTcpConfig::default())));
    let (util, mean, max, _) = incast(p, 8, Time::from_ms(2), Time::from_ms(4));
    println!("PowerTCP 8→1: utilization {util:.4}, queue mean {mean:.0} B max {max} B");
    assert!(util > 0.93, "utilization {util}");
    assert!(mean < 20_000.0, "queue mean {mean}");
}

/// θ-PowerTCP (§3.4): the same from RTTs alone, no INT.
#[test]
fn theta_powertcp_incast_keeps_the_link_busy_and_the_queue_short() {
    let cfg = PowerTcpConfig {
        power: Power::Rtt,
        ..PowerTcpConfig::default()
    };
    let p = with_pfc(params(CcConfig::PowerTcp(cfg)));
    let (util, mean, max, _) = incast(p, 8, Time::from_ms(2), Time::from_ms(4));
    println!("theta-PowerTCP 8→1: utilization {util:.4}, queue mean {mean:.0} B max {max} B");
    assert!(util > 0.9, "utilization {util}");
    assert!(mean < 100_000.0, "queue mean {mean}");
}
