//! Resolving a workload's `load_on` link set into a [`LoadBasis`]: the set's capacity and the expected number
//! of its links a flow crosses, so that "X% load on the core links" (BFC §6.2.1) means X% average utilization
//! of those links.

use bfcsim_net::routing::Routes;
use bfcsim_net::{LinkSet, Topology};
use bfcsim_workload::LoadBasis;

/// Expected number of links of `set` on the path from every node to host `dst`, with ECMP spreading flows
/// evenly over equal-cost next hops.
fn crossings_to(topo: &Topology, routes: &Routes, in_set: &[bool], dst: u32) -> Vec<f64> {
    let mut e = vec![0.0; topo.nodes.len()];
    for v in routes.nodes_towards(dst) {
        let hops = routes.next_hops(v, dst);
        if hops.is_empty() {
            continue;
        }
        let sum: f64 = hops
            .iter()
            .map(|&p| f64::from(u8::from(in_set[p.idx()])) + e[topo.peer_node(p).idx()])
            .sum();
        e[v.idx()] = sum / hops.len() as f64;
    }
    e
}

/// The load basis of `set`: capacity of its directed links, expected crossings of a background flow (uniform
/// all-to-all, rack-local with probability `locality`, or to host index `receiver` from a uniform other host)
/// and of an incast flow (uniform).
pub fn load_basis(
    topo: &Topology,
    routes: &Routes,
    set: &LinkSet,
    locality: Option<f64>,
    receiver: Option<u32>,
) -> Result<LoadBasis, String> {
    let ports = topo.ports_in_set(set);
    if ports.is_empty() {
        return Err(format!(
            "workload.load_on: the topology has no {set:?} links"
        ));
    }
    let capacity_bps: f64 = ports
        .iter()
        .map(|&p| topo.link_of(p).rate.bps() as f64)
        .sum();
    let mut in_set = vec![false; topo.ports.len()];
    for p in ports {
        in_set[p.idx()] = true;
    }
    let hosts = &topo.hosts;
    if let Some(r) = receiver.filter(|&r| r as usize >= hosts.len()) {
        return Err(format!(
            "workload.receiver = {r} is not a host index (the topology has {} hosts)",
            hosts.len()
        ));
    }
    let racks = topo.racks();
    let (mut all, mut local, mut remote, mut to_one) =
        ((0.0, 0u64), (0.0, 0u64), (0.0, 0u64), (0.0, 0u64));
    for d in 0..hosts.len() as u32 {
        let e = crossings_to(topo, routes, &in_set, d);
        for (s, &h) in hosts.iter().enumerate() {
            if s as u32 == d {
                continue;
            }
            let x = e[h.idx()];
            all = (all.0 + x, all.1 + 1);
            if racks[s] == racks[d as usize] {
                local = (local.0 + x, local.1 + 1);
            } else {
                remote = (remote.0 + x, remote.1 + 1);
            }
            if receiver == Some(d) {
                to_one = (to_one.0 + x, to_one.1 + 1);
            }
        }
    }
    let mean = |(sum, n): (f64, u64)| if n == 0 { 0.0 } else { sum / n as f64 };
    let uniform = mean(all);
    let background = match (locality, receiver) {
        (_, Some(_)) => mean(to_one),
        (None, None) => uniform,
        (Some(p), None) => p * mean(local) + (1.0 - p) * mean(remote),
    };
    if background <= 0.0 {
        return Err(format!(
            "workload.load_on: flows never cross the {set:?} links, so no load can be put on them"
        ));
    }
    Ok(LoadBasis {
        capacity_bps,
        background_crossings: background,
        incast_crossings: uniform,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_net::build::{Build, LeafSpine};

    #[test]
    fn clos128_core_crossings() {
        let t = LeafSpine::default().build().unwrap();
        let r = Routes::new(&t).unwrap();
        let b = load_basis(&t, &r, &LinkSet::Core, None, None).unwrap();
        assert_eq!(b.capacity_bps, 128.0 * 100e9);
        // A uniform pair crosses racks with probability 112/127, and then two core links.
        assert!((b.background_crossings - 2.0 * 112.0 / 127.0).abs() < 1e-12);
        let h = load_basis(&t, &r, &LinkSet::Host, None, None).unwrap();
        assert!((h.background_crossings - 2.0).abs() < 1e-12);
        let local = load_basis(&t, &r, &LinkSet::Core, Some(1.0), None).unwrap_err();
        assert!(local.contains("never cross"));
    }

    #[test]
    fn many_to_one_on_a_star_crosses_the_receivers_downlink_once() {
        use bfcsim_net::build::Star;
        let t = Star {
            hosts: 5,
            rate: bfcsim_core::Rate::gbps(100),
            delay: bfcsim_core::Time::from_us(1),
        }
        .build()
        .unwrap();
        let r = Routes::new(&t).unwrap();
        // Port 1 is the switch's port to host 0.
        let b = load_basis(&t, &r, &LinkSet::Port(1), None, Some(0)).unwrap();
        assert_eq!(b.capacity_bps, 100e9);
        assert_eq!(b.background_crossings, 1.0);
        let other = load_basis(&t, &r, &LinkSet::Port(1), None, Some(3)).unwrap_err();
        assert!(other.contains("never cross"));
    }
}
