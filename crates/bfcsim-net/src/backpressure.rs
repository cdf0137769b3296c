//! Deadlock prevention for per-hop backpressure (BFC App. B, after Tagger): the backpressure graph has a node
//! per switch egress port and an edge B → A when a packet can go from egress A to egress B in one hop (and so
//! B's switch can pause A). Without cycles in it, BFC cannot deadlock (App. B, Theorem 1). Given a topology and
//! its routes, [`elided_pairs`] finds the graph's edges and the (ingress, egress) pairs at each switch whose
//! backpressure must be skipped to make it acyclic: the back edges of a depth-first search, so an acyclic graph
//! (any up-down routed Clos, App. B) keeps every edge.
//!
//! Hosts never appear as nodes: NICs always drain (§5), so no cycle passes through one.

use bfcsim_core::{NodeId, PortId};

use crate::routing::Routes;
use crate::topology::{NodeKind, Topology};

/// For each node (by index), the (ingress, egress) local port pairs on which backpressure is elided.
pub fn elided_pairs(topo: &Topology, routes: &Routes) -> Vec<Vec<(u16, u16)>> {
    let edges = backpressure_edges(topo, routes);
    // Iterative depth-first search in port order; an edge into a node still on the stack closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; topo.ports.len()];
    let mut elided = vec![Vec::new(); topo.nodes.len()];
    for root in 0..topo.ports.len() {
        if mark[root] != Mark::New || edges[root].is_empty() {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        mark[root] = Mark::Open;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&(w, s, i, e)) = edges[v].get(*next) {
                *next += 1;
                match mark[w] {
                    Mark::New => {
                        mark[w] = Mark::Open;
                        stack.push((w, 0));
                    }
                    Mark::Open => elided[s].push((i, e)),
                    Mark::Done => {}
                }
            } else {
                mark[v] = Mark::Done;
                stack.pop();
            }
        }
    }
    for list in &mut elided {
        list.sort_unstable();
        list.dedup();
    }
    elided
}

/// The backpressure graph's edges from each egress port (by port index), each as the (upstream port, switch
/// node, ingress local, egress local) that creates it, sorted. An edge is one (ingress, egress) pair of a switch
/// that some destination's route takes from a switch upstream, so a bit matrix of pairs per switch gathers them
/// (every destination finds most pairs again), which on a large fat tree is several times cheaper than sets of
/// edges and a search of the upstream's next hops per ingress.
fn backpressure_edges(topo: &Topology, routes: &Routes) -> Vec<Vec<(usize, usize, u16, u16)>> {
    let is_switch = |n: usize| topo.nodes[n].kind == NodeKind::Switch;
    // Per node, bit `i × ports + e` when pair (ingress i, egress e) carries some destination's packets from a
    // switch upstream.
    let mut pairs: Vec<Vec<u64>> = topo
        .nodes
        .iter()
        .enumerate()
        .map(|(n, node)| match is_switch(n) {
            true => vec![0; (node.ports.len() * node.ports.len()).div_ceil(64)],
            false => Vec::new(),
        })
        .collect();
    // The switches' ingress ports fed by a switch: (switch, ingress local, the upstream's port).
    let fed: Vec<(usize, usize, PortId)> = (0..topo.nodes.len())
        .filter(|&s| is_switch(s))
        .flat_map(|s| {
            topo.nodes[s]
                .ports
                .iter()
                .enumerate()
                .map(move |(i, &p)| (s, i, p))
        })
        .map(|(s, i, p)| (s, i, topo.ports[p.idx()].peer))
        .filter(|&(_, _, up)| is_switch(topo.ports[up.idx()].node.idx()))
        .collect();
    let switches: Vec<NodeId> = (0..topo.nodes.len())
        .filter(|&s| is_switch(s))
        .map(|s| NodeId(s as u32))
        .collect();
    // Per port, the last destination whose route from the port's switch takes it (plus one; 0: none yet).
    let mut routed = vec![0u32; topo.ports.len()];
    for d in 0..topo.hosts.len() as u32 {
        for &u in &switches {
            for &p in routes.next_hops(u, d) {
                routed[p.idx()] = d + 1;
            }
        }
        for &(s, i_local, up) in &fed {
            if routed[up.idx()] != d + 1 {
                continue;
            }
            let n = topo.nodes[s].ports.len();
            for &e in routes.next_hops(NodeId(s as u32), d) {
                let bit = i_local * n + topo.ports[e.idx()].local as usize;
                pairs[s][bit / 64] |= 1 << (bit % 64);
            }
        }
    }
    let mut edges = vec![Vec::new(); topo.ports.len()];
    for (s, bits) in pairs.iter().enumerate() {
        let ports = &topo.nodes[s].ports;
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let bit = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let (i_local, e_local) = (bit / ports.len(), bit % ports.len());
                let up = topo.ports[ports[i_local].idx()].peer;
                edges[ports[e_local].idx()].push((up.idx(), s, i_local as u16, e_local as u16));
            }
        }
    }
    for list in &mut edges {
        list.sort_unstable();
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{Build, FatTree, LeafSpine};
    use bfcsim_core::{Rate, Time};

    #[test]
    fn clos_routes_need_no_elision() {
        let topo = LeafSpine::default().build().unwrap();
        let routes = Routes::new(&topo).unwrap();
        assert!(elided_pairs(&topo, &routes).iter().all(Vec::is_empty));
    }

    /// Five switches in a ring, each with a host: routes of two switch hops go around, and the backpressure
    /// graph has a cycle that one elided pair breaks.
    fn ring(n: usize) -> Topology {
        let mut t = Topology::new();
        let rate = Rate(100_000_000_000);
        let d = Time::from_us(1);
        let sw: Vec<_> = (0..n).map(|_| t.add_node(NodeKind::Switch)).collect();
        for i in 0..n {
            t.connect(sw[i], sw[(i + 1) % n], rate, d);
        }
        for &s in &sw {
            let h = t.add_node(NodeKind::Host);
            t.connect(h, s, rate, d);
        }
        t.finish();
        t
    }

    /// The edges as sets of every destination's finds: the plain form of [`backpressure_edges`].
    fn edges_by_sets(topo: &Topology, routes: &Routes) -> Vec<Vec<(usize, usize, u16, u16)>> {
        let mut found = vec![std::collections::BTreeSet::new(); topo.ports.len()];
        for d in 0..topo.hosts.len() as u32 {
            for (s, node) in topo.nodes.iter().enumerate() {
                if topo.nodes[s].kind != NodeKind::Switch {
                    continue;
                }
                for (i_local, &i) in node.ports.iter().enumerate() {
                    let up = topo.ports[i.idx()].peer;
                    let u = topo.ports[up.idx()].node;
                    if topo.nodes[u.idx()].kind != NodeKind::Switch
                        || !routes.next_hops(u, d).contains(&up)
                    {
                        continue;
                    }
                    for &e in routes.next_hops(NodeId(s as u32), d) {
                        let e_local = topo.ports[e.idx()].local;
                        found[e.idx()].insert((up.idx(), s, i_local as u16, e_local as u16));
                    }
                }
            }
        }
        found
            .into_iter()
            .map(|set| set.into_iter().collect())
            .collect()
    }

    #[test]
    fn edges_are_every_destinations_finds_in_order() {
        let mut topos: Vec<Topology> = (3..9).map(ring).collect();
        topos.push(LeafSpine::default().build().unwrap());
        topos.push(FatTree::k_ary(4).build().unwrap());
        for topo in &topos {
            let routes = Routes::new(topo).unwrap();
            let edges = backpressure_edges(topo, &routes);
            assert!(edges.iter().any(|e| !e.is_empty()));
            assert_eq!(edges, edges_by_sets(topo, &routes));
        }
    }

    #[test]
    fn ring_cycle_is_broken() {
        let topo = ring(5);
        let routes = Routes::new(&topo).unwrap();
        let elided = elided_pairs(&topo, &routes);
        let count: usize = elided.iter().map(Vec::len).sum();
        assert!(count >= 1, "a ring of five has cyclic dependencies");
        assert!(
            count <= 2,
            "one pair per direction breaks each cycle: {elided:?}"
        );
    }
}
