//! Choosing a flow's source and destination hosts.
//!
//! * [`Endpoints::uniform`]: source uniform over the hosts, destination uniform over the other hosts (HPCC's
//!   `traffic_gen.py` and BFC's `nsdifinal.cc` draw all-to-all traffic this way).
//! * [`Endpoints::local`]: spatially local traffic. The source is uniform; with probability `p_local` the
//!   destination is uniform among the other hosts of the source's rack, otherwise uniform among the hosts of the
//!   other racks. If the chosen side is empty (a rack of one host, or a single rack) the other side is used.
//! * [`Endpoints::between`]: the source uniform over a subset of the hosts, the destination uniform over another
//!   subset, less the source (many-to-one cross traffic, as BFC §2.1's shared link).
//!
//! Every choice is an index drawn with `random_range`, with no rejection loop, so a given RNG state always yields
//! the same pair.

use std::collections::{BTreeMap, BTreeSet};

use bfcsim_core::NodeId;
use rand::RngExt;

/// A source/destination chooser over a fixed host list.
#[derive(Clone, Debug)]
pub struct Endpoints {
    hosts: Vec<NodeId>,
    local: Option<Local>,
    between: Option<Between>,
}

#[derive(Clone, Debug)]
struct Between {
    /// Indices into `hosts` of the possible sources and destinations.
    sources: Vec<usize>,
    destinations: Vec<usize>,
    /// For each host index, its position among `destinations`.
    dst_slot: Vec<Option<usize>>,
}

#[derive(Clone, Debug)]
struct Local {
    p_local: f64,
    /// Host indices grouped by rack (racks in ascending id order, hosts in list order within a rack).
    by_rack: Vec<usize>,
    /// For each host index, the range of `by_rack` holding its rack.
    rack_range: Vec<(usize, usize)>,
    /// For each host index, its position in `by_rack`.
    slot: Vec<usize>,
}

impl Endpoints {
    /// Uniform all-to-all endpoints over `hosts` (at least two, no duplicates).
    pub fn uniform(hosts: &[NodeId]) -> Result<Endpoints, String> {
        check_hosts(hosts)?;
        Ok(Endpoints {
            hosts: hosts.to_vec(),
            local: None,
            between: None,
        })
    }

    /// Sources uniform among `sources`, destinations uniform among `destinations` less the source (both
    /// indices into `hosts`, without duplicates); every source needs a destination other than itself.
    pub fn between(
        hosts: &[NodeId],
        sources: &[usize],
        destinations: &[usize],
    ) -> Result<Endpoints, String> {
        check_hosts(hosts)?;
        for (what, list) in [("sources", sources), ("destinations", destinations)] {
            let mut seen = BTreeSet::new();
            if let Some(bad) = list.iter().find(|&&i| i >= hosts.len() || !seen.insert(i)) {
                return Err(format!(
                    "{what}: host index {bad} is listed twice or is not below the {} hosts",
                    hosts.len()
                ));
            }
        }
        if sources.is_empty() {
            return Err("sources: no host listed".into());
        }
        let mut dst_slot = vec![None; hosts.len()];
        for (k, &d) in destinations.iter().enumerate() {
            dst_slot[d] = Some(k);
        }
        if let Some(s) = sources
            .iter()
            .find(|&&s| destinations.len() <= usize::from(dst_slot[s].is_some()))
        {
            return Err(format!(
                "destinations: none for source host index {s} but itself"
            ));
        }
        Ok(Endpoints {
            hosts: hosts.to_vec(),
            local: None,
            between: Some(Between {
                sources: sources.to_vec(),
                destinations: destinations.to_vec(),
                dst_slot,
            }),
        })
    }

    /// Rack-local endpoints: `racks[i]` is the rack of `hosts[i]`; a destination is in the source's rack with
    /// probability `p_local` (in 0..=1).
    pub fn local(hosts: &[NodeId], racks: &[u32], p_local: f64) -> Result<Endpoints, String> {
        check_hosts(hosts)?;
        if racks.len() != hosts.len() {
            return Err(format!(
                "{} hosts but {} rack indices",
                hosts.len(),
                racks.len()
            ));
        }
        if !(0.0..=1.0).contains(&p_local) {
            return Err(format!(
                "the fraction of rack-local destinations {p_local} must be in 0..=1"
            ));
        }
        let mut members: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, r) in racks.iter().enumerate() {
            members.entry(*r).or_default().push(i);
        }
        let mut by_rack = Vec::with_capacity(hosts.len());
        let mut rack_range = vec![(0, 0); hosts.len()];
        let mut slot = vec![0; hosts.len()];
        for list in members.values() {
            let range = (by_rack.len(), by_rack.len() + list.len());
            for &i in list {
                rack_range[i] = range;
                slot[i] = by_rack.len();
                by_rack.push(i);
            }
        }
        Ok(Endpoints {
            hosts: hosts.to_vec(),
            local: Some(Local {
                p_local,
                by_rack,
                rack_range,
                slot,
            }),
            between: None,
        })
    }

    /// The hosts, in the order given.
    pub fn hosts(&self) -> &[NodeId] {
        &self.hosts
    }

    /// Draws (source, destination), distinct hosts.
    pub fn pick<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> (NodeId, NodeId) {
        if let Some(b) = &self.between {
            let src = b.sources[rng.random_range(0..b.sources.len())];
            let dst = match b.dst_slot[src] {
                Some(own) => {
                    b.destinations[skip(rng.random_range(0..b.destinations.len() - 1), own)]
                }
                None => b.destinations[rng.random_range(0..b.destinations.len())],
            };
            return (self.hosts[src], self.hosts[dst]);
        }
        let n = self.hosts.len();
        let src = rng.random_range(0..n);
        let dst = match &self.local {
            None => skip(rng.random_range(0..n - 1), src),
            Some(l) => {
                let (start, end) = l.rack_range[src];
                let rack_size = end - start;
                let want_local = rng.random::<f64>() < l.p_local;
                let local = if rack_size == 1 {
                    false
                } else if rack_size == n {
                    true
                } else {
                    want_local
                };
                if local {
                    // One of the rack's other hosts: skip the source's own slot.
                    l.by_rack[start + skip(rng.random_range(0..rack_size - 1), l.slot[src] - start)]
                } else {
                    // A host outside the rack: skip over the rack's block.
                    let k = rng.random_range(0..n - rack_size);
                    l.by_rack[if k >= start { k + rack_size } else { k }]
                }
            }
        };
        (self.hosts[src], self.hosts[dst])
    }
}

/// Index `k` in 0..n-1 mapped into 0..n without `excluded`.
#[inline]
fn skip(k: usize, excluded: usize) -> usize {
    if k >= excluded { k + 1 } else { k }
}

fn check_hosts(hosts: &[NodeId]) -> Result<(), String> {
    if hosts.len() < 2 {
        return Err(format!(
            "flows need at least two hosts, {} given",
            hosts.len()
        ));
    }
    let mut seen = BTreeSet::new();
    if let Some(dup) = hosts.iter().find(|h| !seen.insert(**h)) {
        return Err(format!("host {dup} is listed twice"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::rng::{Stream, stream};

    fn ids(n: u32) -> Vec<NodeId> {
        (0..n).map(NodeId).collect()
    }

    #[test]
    fn uniform_covers_all_ordered_pairs() {
        let e = Endpoints::uniform(&ids(4)).unwrap();
        let mut rng = stream(1, Stream::Workload(0));
        let mut counts = [[0u32; 4]; 4];
        for _ in 0..120_000 {
            let (s, d) = e.pick(&mut rng);
            assert_ne!(s, d);
            counts[s.idx()][d.idx()] += 1;
        }
        for (s, row) in counts.iter().enumerate() {
            for (d, &c) in row.iter().enumerate() {
                if s != d {
                    assert!((c as f64 / 10_000.0 - 1.0).abs() < 0.05, "{s}->{d}: {c}");
                }
            }
        }
    }

    #[test]
    fn many_to_one_sends_everything_to_the_receiver_from_every_other_host() {
        let e = Endpoints::between(&ids(5), &[0, 1, 3, 4], &[2]).unwrap();
        let mut rng = stream(3, Stream::Workload(0));
        let mut from = [0u32; 5];
        for _ in 0..40_000 {
            let (s, d) = e.pick(&mut rng);
            assert_eq!(d, NodeId(2));
            from[s.idx()] += 1;
        }
        assert_eq!(from[2], 0);
        assert!(
            from.iter()
                .enumerate()
                .all(|(i, &c)| i == 2 || (c as f64 / 10_000.0 - 1.0).abs() < 0.05),
            "{from:?}"
        );
        assert!(Endpoints::between(&ids(5), &[0, 1, 2, 3, 4], &[2]).is_err());
        assert!(Endpoints::between(&ids(5), &[0], &[5]).is_err());
    }

    #[test]
    fn local_fraction_is_respected() {
        let hosts = ids(32);
        let racks: Vec<u32> = (0..32).map(|h| 7 - h / 4).collect(); // 8 racks of 4, ids descending
        let e = Endpoints::local(&hosts, &racks, 0.3).unwrap();
        let mut rng = stream(2, Stream::Workload(0));
        let n = 100_000;
        let mut local = 0;
        let mut dst_counts = [0u32; 32];
        for _ in 0..n {
            let (s, d) = e.pick(&mut rng);
            assert_ne!(s, d);
            if racks[s.idx()] == racks[d.idx()] {
                local += 1;
            }
            dst_counts[d.idx()] += 1;
        }
        assert!((local as f64 / n as f64 - 0.3).abs() < 0.01, "{local}");
        assert!(
            dst_counts
                .iter()
                .all(|&c| (c as f64 / (n as f64 / 32.0) - 1.0).abs() < 0.1)
        );
        let never = Endpoints::local(&hosts, &racks, 0.0).unwrap();
        assert!((0..10_000).all(|_| {
            let (s, d) = never.pick(&mut rng);
            racks[s.idx()] != racks[d.idx()]
        }));
        let always = Endpoints::local(&hosts, &racks, 1.0).unwrap();
        assert!((0..10_000).all(|_| {
            let (s, d) = always.pick(&mut rng);
            s != d && racks[s.idx()] == racks[d.idx()]
        }));
    }

    #[test]
    fn degenerate_racks_fall_back() {
        // One rack only: every destination is local even with p_local = 0.
        let e = Endpoints::local(&ids(3), &[0, 0, 0], 0.0).unwrap();
        let mut rng = stream(3, Stream::Workload(0));
        assert!((0..1000).all(|_| {
            let (s, d) = e.pick(&mut rng);
            s != d
        }));
        // Single-host racks: every destination is remote even with p_local = 1.
        let e = Endpoints::local(&ids(3), &[0, 1, 2], 1.0).unwrap();
        assert!((0..1000).all(|_| {
            let (s, d) = e.pick(&mut rng);
            s != d
        }));
    }

    #[test]
    fn between_subsets() {
        let e = Endpoints::between(&ids(5), &[0, 1, 2], &[2, 4]).unwrap();
        let mut rng = stream(4, Stream::Workload(0));
        let mut counts = [[0u32; 5]; 5];
        for _ in 0..60_000 {
            let (s, d) = e.pick(&mut rng);
            counts[s.idx()][d.idx()] += 1;
        }
        // Sources 0 and 1 split between 2 and 4; source 2 always sends to 4.
        for (s, d, share) in [
            (0, 2, 0.5),
            (0, 4, 0.5),
            (1, 2, 0.5),
            (1, 4, 0.5),
            (2, 4, 1.0),
        ] {
            let expected = 20_000.0 * share;
            assert!(
                (counts[s][d] as f64 / expected - 1.0).abs() < 0.05,
                "{s}->{d}: {}",
                counts[s][d]
            );
        }
        assert_eq!(counts.iter().flatten().sum::<u32>(), 60_000);
        assert!(Endpoints::between(&ids(3), &[0], &[0]).is_err());
        assert!(Endpoints::between(&ids(3), &[0, 0], &[1]).is_err());
        assert!(Endpoints::between(&ids(3), &[0], &[3]).is_err());
        assert!(Endpoints::between(&ids(3), &[], &[1]).is_err());
    }

    #[test]
    fn rejects_bad_inputs() {
        assert!(
            Endpoints::uniform(&ids(1))
                .unwrap_err()
                .contains("at least two hosts")
        );
        assert!(
            Endpoints::uniform(&[NodeId(1), NodeId(1)])
                .unwrap_err()
                .contains("listed twice")
        );
        assert!(
            Endpoints::local(&ids(4), &[0, 0], 0.5)
                .unwrap_err()
                .contains("rack indices")
        );
        assert!(Endpoints::local(&ids(4), &[0, 0, 1, 1], 1.5).is_err());
    }
}
