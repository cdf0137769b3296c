//! Choosing a flow's source and destination hosts.
//!
//! * [`Endpoints::uniform`]: source uniform over the hosts, destination uniform over the other hosts (HPCC's
//!   `traffic_gen.py` and BFC's `nsdifinal.cc` draw all-to-all traffic this way).
//! * [`Endpoints::local`]: spatially local traffic. The source is uniform; with probability `p_local` the
//!   destination is uniform among the other hosts of the source's rack, otherwise uniform among the hosts of the
//!   other racks. If the chosen side is empty (a rack of one host, or a single rack) the other side is used.
//! * [`Endpoints::to_one`]: many to one. The destination is always the same host, the source uniform over the
//!   others (one bottleneck link, BFC §2.3 Fig. 4).
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
    /// Index of the one destination, for many-to-one traffic.
    receiver: Option<usize>,
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
            receiver: None,
        })
    }

    /// Many-to-one endpoints: every flow goes to `hosts[receiver]` from a uniform other host.
    pub fn to_one(hosts: &[NodeId], receiver: usize) -> Result<Endpoints, String> {
        check_hosts(hosts)?;
        if receiver >= hosts.len() {
            return Err(format!(
                "receiver {receiver} is not a host index (there are {} hosts)",
                hosts.len()
            ));
        }
        Ok(Endpoints {
            hosts: hosts.to_vec(),
            local: None,
            receiver: Some(receiver),
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
            receiver: None,
        })
    }

    /// The hosts, in the order given.
    pub fn hosts(&self) -> &[NodeId] {
        &self.hosts
    }

    /// Draws (source, destination), distinct hosts.
    pub fn pick<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> (NodeId, NodeId) {
        let n = self.hosts.len();
        if let Some(dst) = self.receiver {
            let src = skip(rng.random_range(0..n - 1), dst);
            return (self.hosts[src], self.hosts[dst]);
        }
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
    fn to_one_sends_everything_to_the_receiver_from_every_other_host() {
        let e = Endpoints::to_one(&ids(5), 2).unwrap();
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
        assert!(Endpoints::to_one(&ids(5), 5).is_err());
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
