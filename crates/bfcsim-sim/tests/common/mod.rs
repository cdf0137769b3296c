//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use bfcsim_core::PortId;
use bfcsim_core::{FlowSpec, NodeId, Time};
use bfcsim_schemes::cc::dcqcn::DcqcnConfig;
use bfcsim_schemes::cc::dctcp::DctcpConfig;
use bfcsim_schemes::cc::hpcc::HpccConfig;
use bfcsim_schemes::cc::{CcConfig, FixedConfig};
use bfcsim_schemes::flow_control::pfc::PfcConfig;
use bfcsim_sim::Sim;
use bfcsim_sim::{FlowControl, NicConfig, SimParams, SwitchConfig};

pub fn params(cc: CcConfig) -> SimParams {
    SimParams {
        switch: SwitchConfig::default(),
        nic: NicConfig::default(),
        cc,
        flow_control: FlowControl::None,
        seed: 1,
    }
}

pub fn dctcp() -> CcConfig {
    CcConfig::Dctcp(DctcpConfig::default())
}

pub fn no_cc() -> CcConfig {
    CcConfig::None(FixedConfig::default())
}

pub fn hpcc() -> CcConfig {
    CcConfig::Hpcc(HpccConfig::default())
}

pub fn dcqcn() -> CcConfig {
    CcConfig::Dcqcn(DcqcnConfig::default())
}

/// `p` with PFC at HPCC ns-3's defaults.
pub fn with_pfc(mut p: SimParams) -> SimParams {
    p.flow_control = FlowControl::Pfc(PfcConfig::default());
    p
}

/// `hosts` hosts on one switch, 100 Gb/s links of 1 µs.
pub fn star(hosts: u32) -> bfcsim_net::Topology {
    use bfcsim_net::build::{Build, Star};
    Star {
        hosts,
        rate: bfcsim_core::Rate::gbps(100),
        delay: Time::from_us(1),
    }
    .build()
    .unwrap()
}

/// A cyclic buffer dependency (BFC App. B): seven switches in a ring, a host on each (host `i` on switch `i`),
/// 100 Gb/s links of 1 µs; every host sends three 5 MB flows, 1 µs apart, to the host three switches
/// clockwise, so that every ring link carries three hosts' traffic and each switch's ingress from the ring
/// waits on its egress to the ring.
pub fn ring_traffic() -> (bfcsim_net::Topology, Vec<FlowSpec>) {
    use bfcsim_net::{NodeKind, Topology};
    let n = 7;
    let mut t = Topology::new();
    let sw: Vec<NodeId> = (0..n).map(|_| t.add_node(NodeKind::Switch)).collect();
    for i in 0..n {
        t.connect(
            sw[i],
            sw[(i + 1) % n],
            bfcsim_core::Rate::gbps(100),
            Time::from_us(1),
        );
    }
    for &s in &sw {
        let h = t.add_node(NodeKind::Host);
        t.connect(h, s, bfcsim_core::Rate::gbps(100), Time::from_us(1));
    }
    t.finish();
    let host = |i: usize| t.hosts[i % n].0;
    let mut flows: Vec<FlowSpec> = (0..n)
        .flat_map(|i| (0..3).map(move |k| flow(host(i), host(i + 3), 5_000_000, Time::from_us(k))))
        .collect();
    flows.sort_by_key(|f| f.start);
    (t, flows)
}

/// The switch egress port that leads to host `h` (a host's one link).
pub fn port_to_host(sim: &Sim, h: u32) -> PortId {
    let host_port = sim.topology().nodes[h as usize].ports[0];
    sim.topology().ports[host_port.idx()].peer
}

/// Total drops of a run so far.
pub fn drops(sim: &Sim) -> u64 {
    sim.drops().iter().map(|&(_, n)| n).sum()
}

pub fn flow(src: u32, dst: u32, size: u64, start: Time) -> FlowSpec {
    FlowSpec::new(src, dst, size, start)
}

/// Completion time of a lone flow computed packet by packet: store-and-forward FIFO at every hop, one ACK
/// per data packet sent back the same way, completion when the last ACK is in. Independent of the engine and of
/// the closed form in bfcsim-metrics.
pub fn lone_flow_fct(
    hops: &[(u64, u64)],
    ack_hops: &[(u64, u64)],
    size: u64,
    payload: u64,
    header: u64,
    ack: u64,
) -> u64 {
    let tx = |bytes: u64, rate: u64| {
        (bytes as u128 * 8 * 1_000_000_000_000).div_ceil(rate as u128) as u64
    };
    let n = size.div_ceil(payload);
    let mut free = vec![0u64; hops.len()];
    let mut ack_free = vec![0u64; ack_hops.len()];
    let mut done = 0;
    for i in 0..n {
        let len = payload.min(size - i * payload) + header;
        let mut t = 0;
        for (h, &(rate, delay)) in hops.iter().enumerate() {
            free[h] = t.max(free[h]) + tx(len, rate);
            t = free[h] + delay;
        }
        for (h, &(rate, delay)) in ack_hops.iter().enumerate() {
            ack_free[h] = t.max(ack_free[h]) + tx(ack, rate);
            t = ack_free[h] + delay;
        }
        done = t;
    }
    done
}
