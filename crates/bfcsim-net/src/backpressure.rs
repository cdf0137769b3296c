//! Deadlock prevention for per-hop backpressure (BFC App. B, after Tagger): the backpressure graph has a node
//! per switch egress port and an edge B → A when a packet can go from egress A to egress B in one hop (and so
//! B's switch can pause A). Without cycles in it, BFC cannot deadlock (App. B, Theorem 1). Given a topology and
//! its routes, [`elided_pairs`] finds the graph's edges and the (ingress, egress) pairs at each switch whose
//! backpressure must be skipped to make it acyclic: the back edges of a depth-first search, so an acyclic graph
//! (any up-down routed Clos, App. B) keeps every edge.
//!
//! Hosts never appear as nodes: NICs always drain (§5), so no cycle passes through one.

use std::collections::BTreeSet;

use crate::routing::Routes;
use crate::topology::{NodeKind, Topology};

/// For each node (by index), the (ingress, egress) local port pairs on which backpressure is elided.
pub fn elided_pairs(topo: &Topology, routes: &Routes) -> Vec<Vec<(u16, u16)>> {
    let is_switch = |n: usize| topo.nodes[n].kind == NodeKind::Switch;
    // Edges of the backpressure graph, from each egress port (by port index) with the (switch node, ingress
    // local, egress local) pair that creates it. A set per port: every destination host finds most edges again
    // (on a 1024-host fat tree, a list of every find held 230 MB before its duplicates were removed).
    let mut found: Vec<BTreeSet<(usize, usize, u16, u16)>> =
        vec![BTreeSet::new(); topo.ports.len()];
    for d in 0..topo.hosts.len() as u32 {
        for (s, node) in topo.nodes.iter().enumerate() {
            if !is_switch(s) {
                continue;
            }
            let outs = routes.next_hops(topo.ports[node.ports[0].idx()].node, d);
            for (i_local, &i) in node.ports.iter().enumerate() {
                let up = topo.ports[i.idx()].peer; // the upstream's port facing this switch
                let u = topo.ports[up.idx()].node;
                if !is_switch(u.idx()) || !routes.next_hops(u, d).contains(&up) {
                    continue;
                }
                for &e in outs {
                    let e_local = topo.ports[e.idx()].local;
                    found[e.idx()].insert((up.idx(), s, i_local as u16, e_local as u16));
                }
            }
        }
    }
    let edges: Vec<Vec<(usize, usize, u16, u16)>> = found
        .into_iter()
        .map(|set| set.into_iter().collect())
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{Build, LeafSpine};
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
