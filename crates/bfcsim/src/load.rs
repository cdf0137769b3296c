//! Resolving a workload's `load_on` link set into a [`LoadBasis`]: the set's capacity and the expected number
//! of its links a flow crosses, so that "X% load on the core links" (BFC §6.2.1) means X% average utilization
//! of those links.

use bfcsim_net::routing::Routes;
use bfcsim_net::{LinkSet, Topology};
use bfcsim_workload::{Framing, LoadBasis};

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

/// Where background flows go: what `bfcsim_workload::Endpoints` draws from.
#[derive(Clone, Copy, Debug)]
pub enum Pattern<'a> {
    /// Uniform all-to-all, or rack-local with probability `locality`.
    AllToAll {
        /// Fraction of rack-local destinations.
        locality: Option<f64>,
    },
    /// Source uniform, destination uniform among the other hosts of the source's block of `size` consecutive
    /// host indices (`workload.partition`).
    Blocks {
        /// Hosts per block.
        size: usize,
    },
    /// Source uniform among `sources`, destination uniform among `destinations` less the source (host indices).
    Between {
        /// Possible sources.
        sources: &'a [usize],
        /// Possible destinations.
        destinations: &'a [usize],
    },
}

/// The load basis of `set`: capacity of its directed links, expected crossings of a background flow (drawn as
/// `pattern` says) and of an incast flow (uniform), with the NICs' `framing`.
pub fn load_basis(
    topo: &Topology,
    routes: &Routes,
    set: &LinkSet,
    pattern: Pattern,
    framing: Framing,
) -> Result<LoadBasis, String> {
    let ports = topo.ports_in_set(set);
    if ports.is_empty() {
        return Err(format!(
            "workload.load_on: the topology has no `{set}` links"
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
    let racks = topo.racks();
    let (mut all, mut local, mut remote) = ((0.0, 0u64), (0.0, 0u64), (0.0, 0u64));
    let mut in_block = (0.0, 0u64);
    // Per source: the sum and count of its crossings to the destinations `Pattern::Between` allows.
    let mut per_source = vec![(0.0, 0u64); hosts.len()];
    let allowed = |list: &[usize], i: usize| list.contains(&i);
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
            if let Pattern::Blocks { size } = pattern
                && s / size == d as usize / size
            {
                in_block = (in_block.0 + x, in_block.1 + 1);
            }
            if let Pattern::Between { destinations, .. } = pattern
                && allowed(destinations, d as usize)
            {
                per_source[s] = (per_source[s].0 + x, per_source[s].1 + 1);
            }
        }
    }
    let mean = |(sum, n): (f64, u64)| if n == 0 { 0.0 } else { sum / n as f64 };
    let uniform = mean(all);
    let background = match pattern {
        Pattern::AllToAll { locality: None } => uniform,
        Pattern::AllToAll { locality: Some(p) } => p * mean(local) + (1.0 - p) * mean(remote),
        // Blocks are equally large: every pair inside one is equally likely.
        Pattern::Blocks { .. } => mean(in_block),
        // The source is uniform, then the destination uniform among its allowed ones.
        Pattern::Between { sources, .. } => {
            sources.iter().map(|&s| mean(per_source[s])).sum::<f64>() / sources.len().max(1) as f64
        }
    };
    if background <= 0.0 {
        return Err(format!(
            "workload.load_on: flows never cross the `{set}` links, so no load can be put on them"
        ));
    }
    Ok(LoadBasis {
        capacity_bps,
        background_crossings: background,
        incast_crossings: uniform,
        framing,
    })
}

#[cfg(test)]
mod tests {
    const FRAMING: Framing = Framing {
        payload: 1000,
        header: 48,
    };
    use super::*;
    use bfcsim_net::build::{Build, LeafSpine};

    #[test]
    fn clos128_core_crossings() {
        let t = LeafSpine::default().build().unwrap();
        let r = Routes::new(&t).unwrap();
        let all = Pattern::AllToAll { locality: None };
        let b = load_basis(&t, &r, &LinkSet::Core, all, FRAMING).unwrap();
        assert_eq!(b.capacity_bps, 128.0 * 100e9);
        // A uniform pair crosses racks with probability 112/127, and then two core links.
        assert!((b.background_crossings - 2.0 * 112.0 / 127.0).abs() < 1e-12);
        let h = load_basis(&t, &r, &LinkSet::Host, all, FRAMING).unwrap();
        assert!((h.background_crossings - 2.0).abs() < 1e-12);
        let local = Pattern::AllToAll {
            locality: Some(1.0),
        };
        let local = load_basis(&t, &r, &LinkSet::Core, local, FRAMING).unwrap_err();
        assert!(local.contains("never cross"));
        // Hosts 0..15 (rack 0) and 16 (rack 1) to host 17 (rack 1): 15 of 16 sources cross two core links.
        let (sources, destinations): (Vec<usize>, _) = ((0..17).collect(), [17]);
        let between = Pattern::Between {
            sources: &sources,
            destinations: &destinations,
        };
        let b = load_basis(&t, &r, &LinkSet::Core, between, FRAMING).unwrap();
        assert!((b.background_crossings - 2.0 * 16.0 / 17.0).abs() < 1e-12);
        let into = load_basis(&t, &r, &LinkSet::ToHost(17), between, FRAMING).unwrap();
        assert_eq!(into.capacity_bps, 100e9);
        assert!((into.background_crossings - 1.0).abs() < 1e-12);
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
        let to_0 = Pattern::Between {
            sources: &[1, 2, 3, 4],
            destinations: &[0],
        };
        let b = load_basis(&t, &r, &LinkSet::Port(1), to_0, FRAMING).unwrap();
        assert_eq!(b.capacity_bps, 100e9);
        assert_eq!(b.background_crossings, 1.0);
        let to_3 = Pattern::Between {
            sources: &[0, 1, 2, 4],
            destinations: &[3],
        };
        let other = load_basis(&t, &r, &LinkSet::Port(1), to_3, FRAMING).unwrap_err();
        assert!(other.contains("never cross"));
    }
}
