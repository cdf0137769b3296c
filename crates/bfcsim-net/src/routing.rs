//! Shortest-path routing with flow-level ECMP (hash of the 5-tuple with a per-switch seed) or per-packet
//! spraying. Paths never transit a host. Tables are flat arrays indexed by (node, destination host), and the
//! lists of equal-cost ports are interned per node, so the tables stay small on large fabrics.

use std::collections::BTreeMap;

use bfcsim_core::rng::mix64;
use bfcsim_core::{NodeId, PortId};

use crate::topology::{NodeKind, Topology};

/// Next-hop tables for every node and destination host.
#[derive(Clone, Debug)]
pub struct Routes {
    n_hosts: usize,
    /// `(start, len)` into `ports` for each (node, destination host index).
    entries: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Hop count from each node to each destination host (`u8::MAX` if unreachable).
    dist: Vec<u8>,
}

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
        let n_nodes = topo.nodes.len();
        let n_hosts = topo.hosts.len();
        let mut entries = vec![(0u32, 0u32); n_nodes * n_hosts];
        let mut dist_all = vec![u8::MAX; n_nodes * n_hosts];
        let mut ports = Vec::new();
        let mut interned: Vec<BTreeMap<Vec<PortId>, u32>> = vec![BTreeMap::new(); n_nodes];
        let mut dist = vec![u32::MAX; n_nodes];
        let mut queue = std::collections::VecDeque::new();
        for (hi, &dst) in topo.hosts.iter().enumerate() {
            dist.fill(u32::MAX);
            dist[dst.idx()] = 0;
            queue.push_back(dst);
            while let Some(n) = queue.pop_front() {
                // Only the destination itself and switches relay: a path never passes through another host.
                if n != dst && topo.nodes[n.idx()].kind == NodeKind::Host {
                    continue;
                }
                for &p in &topo.nodes[n.idx()].ports {
                    let m = topo.peer_node(p);
                    if dist[m.idx()] == u32::MAX {
                        dist[m.idx()] = dist[n.idx()] + 1;
                        queue.push_back(m);
                    }
                }
            }
            for n in 0..n_nodes {
                if n == dst.idx() || dist[n] == u32::MAX {
                    continue;
                }
                dist_all[n * n_hosts + hi] = u8::try_from(dist[n]).unwrap_or(u8::MAX - 1);
                let hops: Vec<PortId> = topo.nodes[n]
                    .ports
                    .iter()
                    .copied()
                    .filter(|&p| dist[topo.peer_node(p).idx()].wrapping_add(1) == dist[n])
                    .collect();
                let start = *interned[n].entry(hops.clone()).or_insert_with(|| {
                    let s = ports.len() as u32;
                    ports.extend_from_slice(&hops);
                    s
                });
                entries[n * n_hosts + hi] = (start, hops.len() as u32);
            }
            for &src in &topo.hosts {
                if src != dst && dist[src.idx()] == u32::MAX {
                    return Err(format!(
                        "host {src} cannot reach host {dst}: no path through switches joins them"
                    ));
                }
            }
        }
        Ok(Routes {
            n_hosts,
            entries,
            ports,
            dist: dist_all,
        })
    }

    /// The equal-cost egress ports at `node` towards host index `dst`.
    #[inline]
    pub fn next_hops(&self, node: NodeId, dst: u32) -> &[PortId] {
        let (s, l) = self.entries[node.idx() * self.n_hosts + dst as usize];
        &self.ports[s as usize..(s + l) as usize]
    }

    /// Picks one next hop by `hash` (uniform over the candidates).
    #[inline]
    pub fn select(&self, node: NodeId, dst: u32, hash: u64) -> PortId {
        let hops = self.next_hops(node, dst);
        // Multiply-shift maps the hash onto 0..len without a division.
        hops[((hash as u128 * hops.len() as u128) >> 64) as usize]
    }

    /// Every node ordered nearest to host index `dst` first, so that a pass in this order sees each node's
    /// next hops before the node itself (for path sums and maxima over the routing DAG).
    pub fn nodes_towards(&self, dst: u32) -> Vec<NodeId> {
        let mut order: Vec<NodeId> = (0..self.entries.len() / self.n_hosts)
            .map(NodeId::from_idx)
            .collect();
        order.sort_by_key(|&v| self.distance(v, dst));
        order
    }

    /// Hops from `node` to host index `dst`.
    pub fn distance(&self, node: NodeId, dst: u32) -> u8 {
        if self.entries[node.idx() * self.n_hosts + dst as usize].1 == 0 {
            0
        } else {
            self.dist[node.idx() * self.n_hosts + dst as usize]
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
}
