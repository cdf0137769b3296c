//! Which thread runs which part of the network: the nodes split into shards of about equal work, drawn so that
//! few links cross from one shard to another (a packet on such a link is copied between threads as a parcel,
//! and arrives in a cache that has not seen it).

use bfcsim_net::topology::{NodeKind, Topology};

/// Splits the nodes into `shards` groups of about equal `work` (an estimate per node, such as
/// [`crate::engine::node_work`]'s). A host goes with the switch it hangs off, whose work it adds to.
///
/// - The switches with hosts (the edge): where every one links to the same switches (a leaf-spine's racks,
///   all on every spine), each goes, the busiest first, to the shard with the least work so far; elsewhere they
///   are cut into contiguous blocks of about equal work (in a fat tree, a block of pods).
/// - Every other switch, nearest the edge first, joins the shard most of its links to placed switches reach
///   (an aggregation switch, its pod's shard) while that shard's work stays within an even share, and otherwise
///   the shard with the least work so far (the cores and spines, whose links reach every shard alike, even out
///   the shards' totals).
pub(crate) fn partition(topo: &Topology, work: &[u64], shards: u8) -> Vec<u8> {
    const UNPLACED: u8 = u8::MAX;
    let n = shards as usize;
    if n <= 1 {
        return vec![0; topo.nodes.len()];
    }
    // A switch's work with its hosts', plus one so that switches without flows still spread out.
    let mut weight: Vec<u64> = work.iter().map(|w| w + 1).collect();
    let mut is_edge = vec![false; topo.nodes.len()];
    for (i, node) in topo.nodes.iter().enumerate() {
        if node.kind != NodeKind::Host {
            continue;
        }
        weight[i] = 0;
        if let Some(&p) = node.ports.first() {
            let sw = topo.peer_node(p).idx();
            weight[sw] += work[i];
            is_edge[sw] = topo.nodes[sw].kind == NodeKind::Switch;
        }
    }
    let edge: Vec<usize> = (0..topo.nodes.len()).filter(|&i| is_edge[i]).collect();
    let total: u64 = weight.iter().sum();
    let mut of = vec![UNPLACED; topo.nodes.len()];
    let mut load = vec![0u64; n];
    if same_uplinks(topo, &edge) {
        // Every rack reaches the same switches (a leaf-spine), so which racks share a shard does not change how
        // many links cross: the racks go, the busiest first, each to the shard with the least work so far, which
        // evens out a trace whose racks differ (an incast's) better than blocks of neighbouring racks.
        let mut busiest_first = edge.clone();
        busiest_first.sort_by_key(|&i| (std::cmp::Reverse(weight[i]), i));
        for i in busiest_first {
            let k = lightest(&load);
            of[i] = k as u8;
            load[k] += weight[i];
        }
    } else {
        // Each edge switch in the block its midpoint falls in.
        let edge_total: u64 = edge.iter().map(|&i| weight[i]).sum();
        let mut seen = 0u64;
        for &i in &edge {
            let mid = 2 * seen + weight[i];
            let k = ((mid as u128 * n as u128) / (2 * edge_total.max(1)) as u128).min(n as u128 - 1)
                as usize;
            of[i] = k as u8;
            load[k] += weight[i];
            seen += weight[i];
        }
    }
    let share = total.div_ceil(n as u64);
    let mut rest: Vec<usize> = (0..topo.nodes.len())
        .filter(|&i| topo.nodes[i].kind == NodeKind::Switch && of[i] == UNPLACED)
        .collect();
    rest.sort_by_key(|&i| (topo.nodes[i].layer, i));
    let mut links = vec![0u32; n];
    for i in rest {
        links.fill(0);
        for &p in &topo.nodes[i].ports {
            let k = of[topo.peer_node(p).idx()];
            if k != UNPLACED {
                links[k as usize] += 1;
            }
        }
        let placed: u32 = links.iter().sum();
        let most = (0..n)
            .max_by_key(|&k| (links[k], std::cmp::Reverse((load[k], k))))
            .expect("two shards or more");
        let k = if 2 * links[most] > placed && load[most] + weight[i] <= share {
            most
        } else {
            lightest(&load)
        };
        of[i] = k as u8;
        load[k] += weight[i];
    }
    for (i, node) in topo.nodes.iter().enumerate() {
        if node.kind == NodeKind::Host {
            // A host linked to nothing or only to hosts: the first shard.
            of[i] = match node.ports.first().map(|&p| of[topo.peer_node(p).idx()]) {
                Some(k) if k != UNPLACED => k,
                _ => 0,
            };
        }
    }
    of
}

/// The shard with the least work so far (the first of equals).
fn lightest(load: &[u64]) -> usize {
    (0..load.len())
        .min_by_key(|&k| (load[k], k))
        .expect("two shards or more")
}

/// Whether the edge switches `edge` all link to the same other switches.
fn same_uplinks(topo: &Topology, edge: &[usize]) -> bool {
    let uplinks = |i: usize| {
        let mut up: Vec<usize> = topo.nodes[i]
            .ports
            .iter()
            .map(|&p| topo.peer_node(p).idx())
            .filter(|&j| topo.nodes[j].kind == NodeKind::Switch)
            .collect();
        up.sort_unstable();
        up.dedup();
        up
    };
    let Some((&first, rest)) = edge.split_first() else {
        return false;
    };
    let first = uplinks(first);
    rest.iter().all(|&i| uplinks(i) == first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_net::build::{Build, FatTree, LeafSpine};

    /// Each shard's work: every node's, a host's counted with its switch.
    fn loads(work: &[u64], of: &[u8], shards: usize) -> Vec<u64> {
        let mut load = vec![0; shards];
        for (i, &k) in of.iter().enumerate() {
            load[k as usize] += work[i];
        }
        load
    }

    #[test]
    fn a_fat_tree_splits_by_pods_with_their_aggregation_switches() {
        let t = FatTree::k_ary(8).build().unwrap();
        let work = vec![10; t.nodes.len()];
        for shards in [2u8, 3, 4] {
            let of = partition(&t, &work, shards);
            for (i, node) in t.nodes.iter().enumerate() {
                let peers = node.ports.iter().map(|&p| t.peer_node(p).idx());
                match node.layer {
                    // A host with its ToR.
                    0 => peers.for_each(|j| assert_eq!(of[i], of[j])),
                    // An aggregation switch with most of its pod's ToRs.
                    2 => {
                        let down: Vec<usize> = peers.filter(|&j| t.nodes[j].layer == 1).collect();
                        let with = down.iter().filter(|&&j| of[j] == of[i]).count();
                        assert!(
                            2 * with >= down.len(),
                            "{shards} shards: aggregation switch {i}"
                        );
                    }
                    _ => {}
                }
            }
            let load = loads(&work, &of, shards as usize);
            let (lo, hi) = (load.iter().min().unwrap(), load.iter().max().unwrap());
            // Within a ToR and its hosts (5 nodes of 10) of each other.
            assert!(hi - lo <= 50, "{shards} shards: {load:?}");
        }
    }

    #[test]
    fn spines_even_out_a_busy_rack() {
        let t = LeafSpine::default().build().unwrap();
        let mut work = vec![100; t.nodes.len()];
        let tor = |k: usize| {
            (0..t.nodes.len())
                .filter(|&i| t.nodes[i].layer == 1)
                .nth(k)
                .unwrap()
        };
        // The first rack's ToR carries as much as three spines.
        let spine = 100;
        work[tor(0)] += 3 * spine;
        let of = partition(&t, &work, 2);
        let spines_of = |k: u8| {
            (0..t.nodes.len())
                .filter(|&i| t.nodes[i].layer == 2 && of[i] == k)
                .count()
        };
        assert_eq!(of[tor(0)], 0);
        assert!(
            spines_of(1) > spines_of(0),
            "{} and {} spines",
            spines_of(0),
            spines_of(1)
        );
        let load = loads(&work, &of, 2);
        assert!(load[0].abs_diff(load[1]) <= 2 * spine, "{load:?}");
    }

    #[test]
    fn a_leaf_spines_racks_go_busiest_first_to_the_lightest_shard() {
        let t = LeafSpine::default().build().unwrap();
        let tors: Vec<usize> = (0..t.nodes.len())
            .filter(|&i| t.nodes[i].layer == 1)
            .collect();
        // Four busy racks, then four quiet ones: blocks of neighbouring racks would give the first shard three
        // busy racks (903 against 705).
        let mut work = vec![0; t.nodes.len()];
        for (r, &tor) in tors.iter().enumerate() {
            work[tor] = if r < 4 { 300 } else { 100 };
        }
        let of = partition(&t, &work, 2);
        let busy_of = |k: u8| tors[..4].iter().filter(|&&i| of[i] == k).count();
        assert_eq!((busy_of(0), busy_of(1)), (2, 2));
        let load = loads(&work, &of, 2);
        assert_eq!(load[0], load[1]);
    }

    #[test]
    fn one_shard_holds_everything() {
        let t = FatTree::k_ary(4).build().unwrap();
        assert!(
            partition(&t, &vec![1; t.nodes.len()], 1)
                .iter()
                .all(|&k| k == 0)
        );
    }
}
