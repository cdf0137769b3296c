//! Shortest-path routing with flow-level ECMP (hash of the 5-tuple with a per-switch seed) or per-packet
//! spraying. Paths never transit a host. Tables are flat arrays indexed by (node, destination host), and the
//! lists of equal-cost ports are interned per node, so the tables stay small on large fabrics.

use std::collections::BTreeMap;

use bfcsim_core::rng::mix64;
use bfcsim_core::{NodeId, PortId};

use crate::topology::{NodeKind, Topology};

/// Next-hop tables for every node and destination host.
///
/// Destinations share rows: shortest paths to a host with one link go through the switch at its other end,
/// and every node but that switch has the same next hops towards the host as towards the switch. So the
/// tables hold one column per such switch (a "group": on a fat tree, a rack) and the switch's last hop per
/// host on the side; a host with several links gets a column of its own. This keeps the tables at
/// nodes × racks instead of nodes × hosts (12.4 MB on a 1024-host fat tree, now 1.5 MB), which matters for the
/// memory of large fabrics and for the cache misses of every routing decision.
#[derive(Clone, Debug)]
pub struct Routes {
    n_groups: usize,
    /// Per destination host, what every routing decision towards it reads first (one 16-byte record).
    dests: Vec<Dest>,
    /// `(start, len)` into `ports` for each (node, column).
    entries: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Hop count from each node to each column's root (`u8::MAX` if unreachable).
    dist: Vec<u8>,
    /// The ports these routes avoid, sorted ([`Routes::avoiding`]; empty for [`Routes::new`]'s).
    avoided: Vec<PortId>,
}

/// A destination host as the tables see it.
#[derive(Clone, Copy, Debug)]
struct Dest {
    /// Its column of the tables.
    column: u32,
    /// The host's node.
    host: NodeId,
    /// The switch at the other end of its one link ([`NO_SWITCH`] for a host with several links, which has a
    /// column of its own).
    switch: NodeId,
    /// That switch's port towards the host.
    port: PortId,
}

/// No node: [`Dest::switch`] of a host with several links.
const NO_SWITCH: NodeId = NodeId(u32::MAX);

/// How a switch picks among equal-cost next hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadBalancing {
    /// Hash of the flow's 5-tuple and the switch's seed: every packet of a flow takes one path (BFC §6.2.1).
    Ecmp,
    /// A fresh choice for every packet (packet spraying, BFC App. A.2's Homa comparison).
    Spray,
}

impl Routes {
    /// Computes shortest-path next hops towards every host. Fails if some host cannot reach another.
    pub fn new(topo: &Topology) -> Result<Routes, String> {
        Routes::build(topo, None).map(|(r, _)| r)
    }

    /// The shortest paths over the ports not marked in `dead` (by port id; a dead port transmits nothing):
    /// what switches use once they know of a failure. A node left with no live path to a destination keeps
    /// its next hops of the whole topology (packets sent there are lost on the dead link). Also returns the
    /// number of ordered host pairs that no live path joins. Fails only if the whole topology does.
    pub fn avoiding(topo: &Topology, dead: &[bool]) -> Result<(Routes, u64), String> {
        Routes::build(topo, Some(dead))
    }

    /// Whether these routes were computed avoiding `port` ([`Routes::avoiding`]).
    pub fn avoids(&self, port: PortId) -> bool {
        self.avoided.binary_search(&port).is_ok()
    }

    fn build(topo: &Topology, dead: Option<&[bool]>) -> Result<(Routes, u64), String> {
        let n_nodes = topo.nodes.len();
        let n_hosts = topo.hosts.len();
        let live = |p: PortId| dead.is_none_or(|d| !d[p.idx()]);
        // Each column's root: the switch of a host with one link, or the host itself.
        let mut roots: Vec<NodeId> = Vec::new();
        let mut column_of_switch: Vec<u32> = vec![u32::MAX; n_nodes];
        let mut dests = Vec::with_capacity(n_hosts);
        for &host in &topo.hosts {
            dests.push(match topo.nodes[host.idx()].ports.as_slice() {
                &[p] => {
                    let switch = topo.peer_node(p);
                    if column_of_switch[switch.idx()] == u32::MAX {
                        column_of_switch[switch.idx()] = roots.len() as u32;
                        roots.push(switch);
                    }
                    Dest {
                        column: column_of_switch[switch.idx()],
                        host,
                        switch,
                        port: topo.ports[p.idx()].peer,
                    }
                }
                _ => {
                    roots.push(host);
                    Dest {
                        column: roots.len() as u32 - 1,
                        host,
                        switch: NO_SWITCH,
                        port: PortId::default(),
                    }
                }
            });
        }
        let n_groups = roots.len();
        let mut entries = vec![(0u32, 0u32); n_nodes * n_groups];
        let mut dist_all = vec![u8::MAX; n_nodes * n_groups];
        let mut ports = Vec::new();
        let mut interned: Vec<BTreeMap<Vec<PortId>, u32>> = vec![BTreeMap::new(); n_nodes];
        let mut full = vec![u32::MAX; n_nodes];
        let mut dist = vec![u32::MAX; n_nodes];
        let mut hops: Vec<PortId> = Vec::new();
        let mut unreachable = 0u64;
        for (g, &root) in roots.iter().enumerate() {
            hop_counts(topo, root, |_| true, &mut full);
            if dead.is_some() {
                hop_counts(topo, root, live, &mut dist);
            } else {
                dist.copy_from_slice(&full);
            }
            for n in 0..n_nodes {
                if n == root.idx() || full[n] == u32::MAX {
                    continue;
                }
                // Cut off from the root: the whole topology's next hops, into the dead link.
                let (d, usable): (&[u32], bool) = if dist[n] == u32::MAX {
                    (&full, false)
                } else {
                    (&dist, true)
                };
                dist_all[n * n_groups + g] = u8::try_from(d[n]).unwrap_or(u8::MAX - 2);
                // One buffer for every (node, column): a node has few distinct lists of next hops, so a list
                // is copied only the first time it is seen.
                hops.clear();
                hops.extend(topo.nodes[n].ports.iter().copied().filter(|&p| {
                    (!usable || live(p)) && d[topo.peer_node(p).idx()].wrapping_add(1) == d[n]
                }));
                let start = match interned[n].get(hops.as_slice()) {
                    Some(&s) => s,
                    None => {
                        let s = ports.len() as u32;
                        ports.extend_from_slice(&hops);
                        interned[n].insert(hops.clone(), s);
                        s
                    }
                };
                entries[n * n_groups + g] = (start, hops.len() as u32);
            }
            for &src in &topo.hosts {
                if src != root && full[src.idx()] == u32::MAX {
                    let dst = dests
                        .iter()
                        .find(|d| d.column == g as u32)
                        .expect("a column has a host")
                        .host;
                    return Err(format!(
                        "host {src} cannot reach host {dst}: no path through switches joins them"
                    ));
                }
            }
            if dead.is_some() {
                // Ordered pairs (s, d) with no live path, d in this column: every s when d's last hop is
                // dead, else the s cut off from the root.
                let cut = topo
                    .hosts
                    .iter()
                    .filter(|&&s| s != root && dist[s.idx()] == u32::MAX)
                    .count() as u64;
                for d in dests.iter().filter(|d| d.column == g as u32) {
                    unreachable += if d.switch != NO_SWITCH && !live(d.port) {
                        n_hosts as u64 - 1
                    } else {
                        cut - u64::from(d.host != root && dist[d.host.idx()] == u32::MAX)
                    };
                }
            }
        }
        let avoided = dead.map_or(Vec::new(), |d| {
            (0..d.len())
                .filter(|&i| d[i])
                .map(|i| PortId(i as u32))
                .collect()
        });
        let routes = Routes {
            n_groups,
            dests,
            entries,
            ports,
            dist: dist_all,
            avoided,
        };
        Ok((routes, unreachable))
    }

    /// The equal-cost egress ports at `node` towards host index `dst`.
    #[inline]
    pub fn next_hops(&self, node: NodeId, dst: u32) -> &[PortId] {
        let dest = &self.dests[dst as usize];
        if node == dest.switch {
            return std::slice::from_ref(&dest.port);
        }
        if node == dest.host {
            return &[];
        }
        let (s, l) = self.entries[node.idx() * self.n_groups + dest.column as usize];
        &self.ports[s as usize..(s + l) as usize]
    }

    /// Picks one next hop at switch `node` by `hash` (uniform over the candidates). A switch is never the
    /// destination host, so this skips [`Routes::next_hops`]'s test for it: the fewer instructions keep the
    /// switch's receive path inlined in the event loop.
    #[inline]
    pub fn select(&self, node: NodeId, dst: u32, hash: u64) -> PortId {
        let dest = &self.dests[dst as usize];
        if node == dest.switch {
            return dest.port;
        }
        let (s, l) = self.entries[node.idx() * self.n_groups + dest.column as usize];
        let hops = &self.ports[s as usize..(s + l) as usize];
        // Multiply-shift maps the hash onto 0..len without a division.
        hops[((hash as u128 * hops.len() as u128) >> 64) as usize]
    }

    /// Every node ordered nearest to host index `dst` first, so that a pass in this order sees each node's
    /// next hops before the node itself (for path sums and maxima over the routing DAG).
    pub fn nodes_towards(&self, dst: u32) -> Vec<NodeId> {
        // A counting sort on the hop count (below 256): stable like a sort by key, and linear, which matters
        // because every destination host asks once (1024 × 1344 nodes on a 1024-host fat tree).
        let nodes = self.entries.len() / self.n_groups;
        let mut count = [0usize; 257];
        for v in 0..nodes {
            count[self.distance(NodeId::from_idx(v), dst) as usize + 1] += 1;
        }
        for d in 1..count.len() {
            count[d] += count[d - 1];
        }
        let mut order = vec![NodeId::from_idx(0); nodes];
        for v in 0..nodes {
            let node = NodeId::from_idx(v);
            let slot = &mut count[self.distance(node, dst) as usize];
            order[*slot] = node;
            *slot += 1;
        }
        order
    }

    /// Hops from `node` to host index `dst` (0 from the host itself).
    pub fn distance(&self, node: NodeId, dst: u32) -> u8 {
        let dest = &self.dests[dst as usize];
        let i = node.idx() * self.n_groups + dest.column as usize;
        if node == dest.host || self.entries[i].1 == 0 && node != dest.switch {
            0
        } else if node == dest.switch {
            1
        } else {
            // Beyond the host's switch: one hop more than to the switch, the column's root.
            self.dist[i].saturating_add(u8::from(dest.switch != NO_SWITCH))
        }
    }
}

/// Hop counts to `root` from every node into `dist` (`u32::MAX`: none), over the links whose transmitting port
/// towards the root is `usable`, by a BFS that only the root and switches relay: a path never passes through
/// another host.
fn hop_counts(topo: &Topology, root: NodeId, usable: impl Fn(PortId) -> bool, dist: &mut [u32]) {
    dist.fill(u32::MAX);
    dist[root.idx()] = 0;
    let mut queue = std::collections::VecDeque::from([root]);
    while let Some(n) = queue.pop_front() {
        if n != root && topo.nodes[n.idx()].kind == NodeKind::Host {
            continue;
        }
        for &p in &topo.nodes[n.idx()].ports {
            let m = topo.peer_node(p);
            // m sends towards n through the far end of p.
            if dist[m.idx()] == u32::MAX && usable(topo.ports[p.idx()].peer) {
                dist[m.idx()] = dist[n.idx()] + 1;
                queue.push_back(m);
            }
        }
    }
}

/// The per-switch hash that spreads flows over equal-cost ports: the flow's 5-tuple hash mixed with the
/// switch's seed, so that consecutive switches make independent choices.
#[inline]
pub fn ecmp_hash(flow_hash: u64, switch_seed: u64) -> u64 {
    mix64(flow_hash ^ switch_seed)
}

/// The hash of a flow's 5-tuple (source, destination, ports; the protocol is fixed).
pub fn five_tuple_hash(src: NodeId, dst: NodeId, sport: u16, dport: u16) -> u64 {
    mix64(((src.0 as u64) << 32 | dst.0 as u64) ^ mix64(((sport as u64) << 16) | dport as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{Build, FatTree, LeafSpine};
    use bfcsim_core::{Rate, Time};

    #[test]
    fn leaf_spine_paths() {
        let t = LeafSpine::default().build().unwrap();
        let r = Routes::new(&t).unwrap();
        let tor0 = t.peer_node(t.nodes[0].ports[0]);
        // Towards a host in another rack: all 8 uplinks. Towards a local host: its one port.
        assert_eq!(r.next_hops(tor0, 20).len(), 8);
        assert_eq!(r.next_hops(tor0, 3).len(), 1);
        assert_eq!(r.distance(t.hosts[0], 20), 4);
        assert_eq!(r.distance(t.hosts[0], 3), 2);
    }

    #[test]
    fn fat_tree_paths_and_spread() {
        let t = FatTree::k_ary(8).build().unwrap();
        let r = Routes::new(&t).unwrap();
        assert_eq!(r.distance(t.hosts[0], 127), 6);
        let tor0 = t.peer_node(t.nodes[0].ports[0]);
        let hops = r.next_hops(tor0, 127);
        assert_eq!(hops.len(), 4);
        let mut counts = [0u32; 4];
        for f in 0..4000u64 {
            let p = r.select(tor0, 127, ecmp_hash(mix64(f), 99));
            counts[hops.iter().position(|&h| h == p).unwrap()] += 1;
        }
        assert!(
            counts.iter().all(|&c| (900..1100).contains(&c)),
            "{counts:?}"
        );
    }

    /// Hop counts to host `d` from every node, by a BFS from `d` that no other host relays.
    fn hops_to(topo: &Topology, d: NodeId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; topo.nodes.len()];
        dist[d.idx()] = 0;
        let mut queue = std::collections::VecDeque::from([d]);
        while let Some(n) = queue.pop_front() {
            if n == d || !topo.is_host(n) {
                for &p in &topo.nodes[n.idx()].ports {
                    let m = topo.peer_node(p);
                    if dist[m.idx()] == u32::MAX {
                        dist[m.idx()] = dist[n.idx()] + 1;
                        queue.push_back(m);
                    }
                }
            }
        }
        dist
    }

    /// Every (node, host) pair: the distance is the BFS's, and the next hops are exactly the node's ports, in
    /// port order, that lead one hop closer (none at the host itself).
    fn assert_per_host(topo: &Topology) {
        let r = Routes::new(topo).unwrap();
        for (dst, &d) in topo.hosts.iter().enumerate() {
            let dist = hops_to(topo, d);
            for n in (0..topo.nodes.len()).map(NodeId::from_idx) {
                let (hops, want) = (r.next_hops(n, dst as u32), dist[n.idx()]);
                assert_eq!(
                    u32::from(r.distance(n, dst as u32)),
                    want,
                    "{n} to host {dst}"
                );
                let closer = |p: &PortId| dist[topo.peer_node(*p).idx()] + 1 == want;
                assert!(hops.windows(2).all(|w| w[0] < w[1]), "{n} to host {dst}");
                assert!(hops.iter().all(closer), "{n} to host {dst}");
                let all = topo.nodes[n.idx()].ports.iter().filter(|p| closer(p));
                assert_eq!(all.count(), if n == d { 0 } else { hops.len() });
            }
        }
    }

    /// Hosts share a column per switch, a host with two links has its own, and every (node, host) gets the
    /// next hops and distance a BFS from that host gives.
    #[test]
    fn shared_columns_equal_per_host_routes() {
        assert_per_host(&FatTree::k_ary(4).build().unwrap());
        let ls = LeafSpine {
            tors: 3,
            hosts_per_tor: 2,
            spines: 2,
            links_per_spine: 2,
            ..LeafSpine::default()
        };
        let mut t = ls.build().unwrap();
        // A host with a link to each of two ToRs.
        let (rate, delay) = (Rate::gbps(100), Time(1000));
        let tors: Vec<NodeId> = (0..t.nodes.len())
            .map(NodeId::from_idx)
            .filter(|&n| t.nodes[n.idx()].layer == 1)
            .collect();
        let h = t.add_node(NodeKind::Host);
        t.connect(h, tors[0], rate, delay);
        t.connect(h, tors[1], rate, delay);
        t.finish();
        let r = Routes::new(&t).unwrap();
        assert_eq!(
            r.n_groups, 4,
            "one column per ToR and one for the dual-homed host"
        );
        assert_per_host(&t);
    }

    /// `nodes_towards` is the stable sort of the nodes by distance, nearest first.
    #[test]
    fn nodes_towards_is_a_stable_sort_by_distance() {
        let t = FatTree::k_ary(4).build().unwrap();
        let r = Routes::new(&t).unwrap();
        for dst in 0..t.hosts.len() as u32 {
            let mut expected: Vec<NodeId> = (0..t.nodes.len()).map(NodeId::from_idx).collect();
            expected.sort_by_key(|&v| r.distance(v, dst));
            assert_eq!(r.nodes_towards(dst), expected);
        }
    }
}
