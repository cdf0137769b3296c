//! Flows' paths under flow-level ECMP, known before a packet moves: for the ideal FCTs and the route reports
//! ([`Fabric::flow_paths_into`]), and for splitting a run across threads by the work each node will do
//! ([`node_work`]).

use super::*;

/// Calls `visit` with each port a packet with 5-tuple hash `hash` crosses from host index `src` to host index
/// `dst` under flow-level ECMP, in order. `seed_of` gives a switch node's ECMP seed, `None` for a host (the
/// path's end).
fn walk(
    topo: &Topology,
    routes: &Routes,
    (src, dst, hash): (u32, u32, u64),
    seed_of: impl Fn(NodeId) -> Option<u64>,
    mut visit: impl FnMut(PortId),
) {
    // A host without a link has no path (and `Fabric::new` refuses it).
    let Some(&first) = topo.nodes[topo.hosts[src as usize].idx()].ports.first() else {
        return;
    };
    visit(first);
    let mut node = topo.peer_node(first);
    while let Some(seed) = seed_of(node) {
        let p = routes.select(node, dst, ecmp_hash(hash & 0xffff_ffff, seed));
        visit(p);
        node = topo.peer_node(p);
    }
}

impl Fabric {
    /// The ports a packet with 5-tuple hash `hash` crosses from host index `src` to host index `dst` under
    /// flow-level ECMP, written into `path` (cleared first).
    pub(super) fn path_by_hash(&self, src: u32, dst: u32, hash: u64, path: &mut Vec<PortId>) {
        path.clear();
        let seed_of = |n: NodeId| match self.switch_of_node[n.idx()] {
            u32::MAX => None,
            s => Some(self.switch_keys[s as usize].seed),
        };
        walk(&self.topo, &self.routes, (src, dst, hash), seed_of, |p| {
            path.push(p)
        });
    }

    /// The forward (data) and reverse (ACK) paths of flow `id` under flow-level ECMP, as ports in order,
    /// written into `fwd` and `rev` (cleared first; reusing them saves two allocations per flow where every
    /// flow's paths are wanted, as for the ideal FCTs).
    pub fn flow_paths_into(&self, id: FlowId, fwd: &mut Vec<PortId>, rev: &mut Vec<PortId>) {
        let f = &self.flows[id.idx()];
        self.path_by_hash(f.src_host, f.dst_host, f.hash, fwd);
        self.path_by_hash(f.dst_host, f.src_host, f.rev_hash, rev);
    }
}

/// The work each node of `topo` will do for `flows`, in packet-hops begun or ended there: each flow's
/// packets (its size over the NIC's payload) along its ECMP path, and as many replies back along the reverse
/// path (an ACK a packet, as under DCTCP, HPCC and DCQCN by default). An estimate for balancing threads: it
/// leaves out retransmissions, drops, per-hop control frames and spraying's spread, and weighs a host's
/// packet-hop like a switch's.
pub(crate) fn node_work(
    topo: &Topology,
    routes: &Routes,
    flows: &[Flow],
    params: &SimParams,
) -> Vec<u64> {
    // The switches' ECMP seeds, as `Fabric::new` draws them.
    let seeds: Vec<Option<u64>> = (0..topo.nodes.len())
        .map(|i| {
            (topo.nodes[i].kind == NodeKind::Switch)
                .then(|| rng::stream_seed(params.seed, Stream::Node(i as u32)))
        })
        .collect();
    let payload = u64::from(params.nic.payload.max(1));
    let mut work = vec![0u64; topo.nodes.len()];
    for f in flows {
        let packets = f.spec.size.0.div_ceil(payload);
        for (src, dst, hash) in [
            (f.src_host, f.dst_host, f.hash),
            (f.dst_host, f.src_host, f.rev_hash),
        ] {
            walk(
                topo,
                routes,
                (src, dst, hash),
                |n| seeds[n.idx()],
                |p| {
                    work[topo.ports[p.idx()].node.idx()] += packets;
                    work[topo.peer_node(p).idx()] += packets;
                },
            );
        }
    }
    work
}

impl Fabric {
    /// The port of switch `s` that leads back towards flow `id`'s source along the path its data packets take
    /// under flow-level ECMP (the link they reach `s` through): ExpressPass's symmetric routing of credits.
    pub(super) fn toward_source(&self, id: FlowId, s: usize) -> PortId {
        let f = &self.flows[id.idx()];
        let at = self.switch_keys[s].node;
        let mut port = self.hosts[f.src_host as usize].port;
        loop {
            let node = self.topo.peer_node(port);
            if node == at {
                return self.topo.ports[port.idx()].peer;
            }
            let sw = self.switch_of_node[node.idx()];
            assert!(sw != u32::MAX, "switch {at} is not on flow {id}'s path");
            let seed = self.switch_keys[sw as usize].seed;
            port = self
                .routes
                .select(node, f.dst_host, ecmp_hash(f.hash & 0xffff_ffff, seed));
        }
    }
}
