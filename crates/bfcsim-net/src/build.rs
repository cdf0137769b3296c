//! Builders for the reference fabrics. Hosts are created first, then each switch's host-facing
//! ports, then its uplinks, so a switch's local port numbers run downlinks first: BCC's "every 8 ports share a
//! pool" then groups a leaf's 16 down ports into two pools and its 8 up ports into a third (BCC §V-B).

use bfcsim_core::{NodeId, Rate, Time};
use serde::{Deserialize, Serialize};

use crate::topology::{NodeKind, Topology};

fn default_rate() -> Rate {
    Rate::gbps(100)
}
fn default_delay() -> Time {
    Time::from_us(1)
}
fn one() -> u32 {
    1
}

/// A parametric two-tier leaf-spine (Clos). Defaults are CLOS-128 (BFC §6.2.1): 8 ToRs × 16 hosts, 8 spines,
/// every ToR linked to every spine (2:1 oversubscription), 100 Gb/s links with 1 µs propagation.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpine {
    /// Number of ToR (leaf) switches.
    #[serde(default = "LeafSpine::default_tors")]
    pub tors: u32,
    /// Hosts under each ToR.
    #[serde(default = "LeafSpine::default_hosts_per_tor")]
    pub hosts_per_tor: u32,
    /// Number of spine switches.
    #[serde(default = "LeafSpine::default_spines")]
    pub spines: u32,
    /// Parallel links between each ToR and each spine.
    #[serde(default = "one")]
    pub links_per_spine: u32,
    /// Host link rate.
    #[serde(default = "default_rate")]
    pub host_rate: Rate,
    /// ToR↔spine link rate.
    #[serde(default = "default_rate")]
    pub fabric_rate: Rate,
    /// Host link propagation delay.
    #[serde(default = "default_delay")]
    pub host_delay: Time,
    /// ToR↔spine propagation delay.
    #[serde(default = "default_delay")]
    pub fabric_delay: Time,
}

impl LeafSpine {
    fn default_tors() -> u32 {
        8
    }
    fn default_hosts_per_tor() -> u32 {
        16
    }
    fn default_spines() -> u32 {
        8
    }
}

impl Default for LeafSpine {
    fn default() -> Self {
        LeafSpine {
            tors: 8,
            hosts_per_tor: 16,
            spines: 8,
            links_per_spine: 1,
            host_rate: default_rate(),
            fabric_rate: default_rate(),
            host_delay: default_delay(),
            fabric_delay: default_delay(),
        }
    }
}

/// A three-tier fat-tree: `pods` pods of `tors_per_pod` ToRs and `aggs_per_pod` aggregation switches, and
/// `cores` core switches. Each ToR links to every aggregation switch of its pod; aggregation switch `i` of
/// every pod links to the cores of stripe `i` (cores `i·c/a .. (i+1)·c/a`). `FatTree::k_ary(k)` is the classic
/// k-ary fat-tree (k³/4 hosts); explicit counts give fabrics like AQUARIUS-FT's 48 switches.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTree {
    /// Number of pods.
    pub pods: u32,
    /// ToR switches per pod.
    pub tors_per_pod: u32,
    /// Aggregation switches per pod.
    pub aggs_per_pod: u32,
    /// Core switches (a multiple of `aggs_per_pod`).
    pub cores: u32,
    /// Hosts under each ToR.
    pub hosts_per_tor: u32,
    /// Parallel links between a ToR and each aggregation switch of its pod.
    #[serde(default = "one")]
    pub tor_agg_links: u32,
    /// Parallel links between an aggregation switch and each core of its stripe.
    #[serde(default = "one")]
    pub agg_core_links: u32,
    /// Rate of every link.
    #[serde(default = "default_rate")]
    pub rate: Rate,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub delay: Time,
}

impl FatTree {
    /// The k-ary fat-tree of Al-Fares et al.: k pods of k/2 ToRs and k/2 aggregation switches, (k/2)² cores,
    /// k/2 hosts per ToR.
    pub fn k_ary(k: u32) -> FatTree {
        FatTree {
            pods: k,
            tors_per_pod: k / 2,
            aggs_per_pod: k / 2,
            cores: (k / 2) * (k / 2),
            hosts_per_tor: k / 2,
            tor_agg_links: 1,
            agg_core_links: 1,
            rate: default_rate(),
            delay: default_delay(),
        }
    }
}

/// `hosts` hosts on one switch (BCC-STAR).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Star {
    /// Number of hosts.
    pub hosts: u32,
    /// Host link rate.
    #[serde(default = "default_rate")]
    pub rate: Rate,
    /// Host link propagation delay.
    #[serde(default = "default_delay")]
    pub delay: Time,
}

/// `left` hosts on switch A, `right` hosts on switch B, and one A–B bottleneck link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// Hosts on the sending side.
    pub left: u32,
    /// Hosts on the receiving side.
    pub right: u32,
    /// Host link rate.
    #[serde(default = "default_rate")]
    pub host_rate: Rate,
    /// Bottleneck rate.
    #[serde(default = "default_rate")]
    pub bottleneck_rate: Rate,
    /// Host link propagation delay.
    #[serde(default = "default_delay")]
    pub host_delay: Time,
    /// Bottleneck propagation delay.
    #[serde(default = "default_delay")]
    pub bottleneck_delay: Time,
}

/// Two data centres joined by one long link (BFC App. A.9): each is a leaf-spine of `tors` ToRs × `hosts_per_tor`
/// hosts and `spines` spines, whose spines all link to the data centre's gateway switch; the two gateways are
/// joined by the interconnect. Hosts of data centre 0 come first (indices 0..H/2). The interconnect is the last
/// link built, so it is `link:N` for N = the number of links − 1 ([`TwoDc::interconnect_link`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwoDc {
    /// ToR switches per data centre.
    #[serde(default = "TwoDc::default_tors")]
    pub tors: u32,
    /// Hosts under each ToR.
    #[serde(default = "LeafSpine::default_hosts_per_tor")]
    pub hosts_per_tor: u32,
    /// Spine switches per data centre.
    #[serde(default = "LeafSpine::default_spines")]
    pub spines: u32,
    /// Rate of every link inside a data centre.
    #[serde(default = "default_rate")]
    pub rate: Rate,
    /// Propagation delay of every link inside a data centre.
    #[serde(default = "default_delay")]
    pub delay: Time,
    /// Rate of the interconnect (200 Gb/s in App. A.9).
    #[serde(default = "TwoDc::default_interconnect_rate")]
    pub interconnect_rate: Rate,
    /// One-way delay of the interconnect (200 µs in App. A.9).
    #[serde(default = "TwoDc::default_interconnect_delay")]
    pub interconnect_delay: Time,
}

impl TwoDc {
    fn default_tors() -> u32 {
        2
    }
    fn default_interconnect_rate() -> Rate {
        Rate::gbps(200)
    }
    fn default_interconnect_delay() -> Time {
        Time::from_us(200)
    }

    /// The link id of the interconnect.
    pub fn interconnect_link(&self) -> u32 {
        let per_dc = self.tors * self.hosts_per_tor + self.tors * self.spines + self.spines;
        2 * per_dc
    }
}

impl Default for TwoDc {
    fn default() -> Self {
        TwoDc {
            tors: TwoDc::default_tors(),
            hosts_per_tor: LeafSpine::default_hosts_per_tor(),
            spines: LeafSpine::default_spines(),
            rate: default_rate(),
            delay: default_delay(),
            interconnect_rate: TwoDc::default_interconnect_rate(),
            interconnect_delay: TwoDc::default_interconnect_delay(),
        }
    }
}

/// Builds the topology. Hosts get node ids 0..H (in rack order), switches follow.
pub trait Build {
    /// The fabric as a [`Topology`], or a message saying which parameter is invalid.
    fn build(&self) -> Result<Topology, String>;

    /// How large the fabric would be, known without building it (so that a run can be refused before
    /// anything is allocated).
    fn size(&self) -> Size;
}

/// The counts of a fabric, computed in 64 bits from the builder's 32-bit parameters so that no product of
/// them wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Hosts and switches.
    pub nodes: u64,
    /// Hosts.
    pub hosts: u64,
    /// Links (each has two ports).
    pub links: u64,
}

impl Size {
    /// Checks that node and port ids (32 bits) can number the fabric.
    fn check(self) -> Result<(), String> {
        if self.nodes > u64::from(u32::MAX) || 2 * self.links > u64::from(u32::MAX) {
            return Err(format!(
                "the fabric would have {} nodes and {} links, more than 32-bit node and port ids can number",
                self.nodes, self.links
            ));
        }
        Ok(())
    }
}

fn positive(name: &str, v: u32) -> Result<(), String> {
    if v == 0 {
        Err(format!("{name} must be at least 1"))
    } else {
        Ok(())
    }
}

fn add_hosts(t: &mut Topology, n: u32) -> Vec<NodeId> {
    (0..n).map(|_| t.add_node(NodeKind::Host)).collect()
}

impl Build for LeafSpine {
    fn build(&self) -> Result<Topology, String> {
        positive("tors", self.tors)?;
        positive("hosts_per_tor", self.hosts_per_tor)?;
        positive("spines", self.spines)?;
        positive("links_per_spine", self.links_per_spine)?;
        self.size().check()?;
        let mut t = Topology::new();
        let hosts = add_hosts(&mut t, self.tors * self.hosts_per_tor);
        let tors: Vec<NodeId> = (0..self.tors)
            .map(|_| t.add_node(NodeKind::Switch))
            .collect();
        let spines: Vec<NodeId> = (0..self.spines)
            .map(|_| t.add_node(NodeKind::Switch))
            .collect();
        for (i, &h) in hosts.iter().enumerate() {
            t.connect(
                h,
                tors[i / self.hosts_per_tor as usize],
                self.host_rate,
                self.host_delay,
            );
        }
        for &tor in &tors {
            for &spine in &spines {
                for _ in 0..self.links_per_spine {
                    t.connect(tor, spine, self.fabric_rate, self.fabric_delay);
                }
            }
        }
        t.finish();
        Ok(t)
    }

    fn size(&self) -> Size {
        let (tors, spines) = (u64::from(self.tors), u64::from(self.spines));
        let hosts = tors * u64::from(self.hosts_per_tor);
        Size {
            nodes: hosts + tors + spines,
            hosts,
            links: hosts + tors * spines * u64::from(self.links_per_spine),
        }
    }
}

impl Build for TwoDc {
    fn build(&self) -> Result<Topology, String> {
        positive("tors", self.tors)?;
        positive("hosts_per_tor", self.hosts_per_tor)?;
        positive("spines", self.spines)?;
        self.size().check()?;
        let mut t = Topology::new();
        let per_dc = (self.tors * self.hosts_per_tor) as usize;
        let hosts = add_hosts(&mut t, 2 * self.tors * self.hosts_per_tor);
        let mut switches =
            |n: u32| -> Vec<NodeId> { (0..n).map(|_| t.add_node(NodeKind::Switch)).collect() };
        let tors = [switches(self.tors), switches(self.tors)];
        let spines = [switches(self.spines), switches(self.spines)];
        let gateways = [t.add_node(NodeKind::Switch), t.add_node(NodeKind::Switch)];
        for (i, &h) in hosts.iter().enumerate() {
            let tor = tors[i / per_dc][(i % per_dc) / self.hosts_per_tor as usize];
            t.connect(h, tor, self.rate, self.delay);
        }
        for dc in 0..2 {
            for &tor in &tors[dc] {
                for &spine in &spines[dc] {
                    t.connect(tor, spine, self.rate, self.delay);
                }
            }
        }
        for dc in 0..2 {
            for &spine in &spines[dc] {
                t.connect(spine, gateways[dc], self.rate, self.delay);
            }
        }
        let link = t.connect(
            gateways[0],
            gateways[1],
            self.interconnect_rate,
            self.interconnect_delay,
        );
        debug_assert_eq!(link.0, self.interconnect_link());
        t.finish();
        Ok(t)
    }

    fn size(&self) -> Size {
        let (tors, spines) = (u64::from(self.tors), u64::from(self.spines));
        let per_dc = tors * u64::from(self.hosts_per_tor);
        Size {
            nodes: 2 * (per_dc + tors + spines + 1),
            hosts: 2 * per_dc,
            links: 2 * (per_dc + tors * spines + spines) + 1,
        }
    }
}

impl Build for FatTree {
    fn build(&self) -> Result<Topology, String> {
        positive("pods", self.pods)?;
        positive("tors_per_pod", self.tors_per_pod)?;
        positive("aggs_per_pod", self.aggs_per_pod)?;
        positive("cores", self.cores)?;
        positive("hosts_per_tor", self.hosts_per_tor)?;
        positive("tor_agg_links", self.tor_agg_links)?;
        positive("agg_core_links", self.agg_core_links)?;
        if !self.cores.is_multiple_of(self.aggs_per_pod) {
            return Err(format!(
                "cores ({}) must be a multiple of aggs_per_pod ({}) so that each aggregation switch has a stripe",
                self.cores, self.aggs_per_pod
            ));
        }
        self.size().check()?;
        let mut t = Topology::new();
        let n_tors = self.pods * self.tors_per_pod;
        let hosts = add_hosts(&mut t, n_tors * self.hosts_per_tor);
        let tors: Vec<NodeId> = (0..n_tors).map(|_| t.add_node(NodeKind::Switch)).collect();
        let aggs: Vec<NodeId> = (0..self.pods * self.aggs_per_pod)
            .map(|_| t.add_node(NodeKind::Switch))
            .collect();
        let cores: Vec<NodeId> = (0..self.cores)
            .map(|_| t.add_node(NodeKind::Switch))
            .collect();
        for (i, &h) in hosts.iter().enumerate() {
            t.connect(
                h,
                tors[i / self.hosts_per_tor as usize],
                self.rate,
                self.delay,
            );
        }
        let stripe = self.cores / self.aggs_per_pod;
        for pod in 0..self.pods {
            for ti in 0..self.tors_per_pod {
                for ai in 0..self.aggs_per_pod {
                    for _ in 0..self.tor_agg_links {
                        let (tor, agg) = (
                            tors[(pod * self.tors_per_pod + ti) as usize],
                            aggs[(pod * self.aggs_per_pod + ai) as usize],
                        );
                        t.connect(tor, agg, self.rate, self.delay);
                    }
                }
            }
        }
        for pod in 0..self.pods {
            for ai in 0..self.aggs_per_pod {
                for ci in 0..stripe {
                    for _ in 0..self.agg_core_links {
                        let agg = aggs[(pod * self.aggs_per_pod + ai) as usize];
                        t.connect(
                            agg,
                            cores[(ai * stripe + ci) as usize],
                            self.rate,
                            self.delay,
                        );
                    }
                }
            }
        }
        t.finish();
        Ok(t)
    }

    fn size(&self) -> Size {
        let (pods, cores) = (u64::from(self.pods), u64::from(self.cores));
        let tors = pods * u64::from(self.tors_per_pod);
        let aggs = pods * u64::from(self.aggs_per_pod);
        let hosts = tors * u64::from(self.hosts_per_tor);
        let stripe = cores / u64::from(self.aggs_per_pod.max(1));
        Size {
            nodes: hosts + tors + aggs + cores,
            hosts,
            links: hosts
                + tors * u64::from(self.aggs_per_pod) * u64::from(self.tor_agg_links)
                + aggs * stripe * u64::from(self.agg_core_links),
        }
    }
}

impl Build for Star {
    fn build(&self) -> Result<Topology, String> {
        if self.hosts < 2 {
            return Err("a star needs at least 2 hosts".into());
        }
        self.size().check()?;
        let mut t = Topology::new();
        let hosts = add_hosts(&mut t, self.hosts);
        let sw = t.add_node(NodeKind::Switch);
        for h in hosts {
            t.connect(h, sw, self.rate, self.delay);
        }
        t.finish();
        Ok(t)
    }

    fn size(&self) -> Size {
        let hosts = u64::from(self.hosts);
        Size {
            nodes: hosts + 1,
            hosts,
            links: hosts,
        }
    }
}

impl Build for Dumbbell {
    fn build(&self) -> Result<Topology, String> {
        positive("left", self.left)?;
        positive("right", self.right)?;
        self.size().check()?;
        let mut t = Topology::new();
        let left = add_hosts(&mut t, self.left);
        let right = add_hosts(&mut t, self.right);
        let (a, b) = (t.add_node(NodeKind::Switch), t.add_node(NodeKind::Switch));
        for h in left {
            t.connect(h, a, self.host_rate, self.host_delay);
        }
        for h in right {
            t.connect(h, b, self.host_rate, self.host_delay);
        }
        t.connect(a, b, self.bottleneck_rate, self.bottleneck_delay);
        t.finish();
        Ok(t)
    }

    fn size(&self) -> Size {
        let hosts = u64::from(self.left) + u64::from(self.right);
        Size {
            nodes: hosts + 2,
            hosts,
            links: hosts + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::LinkSet;
    use bfcsim_core::PortId;

    #[test]
    fn clos128_shape() {
        let t = LeafSpine::default().build().unwrap();
        assert_eq!(t.hosts.len(), 128);
        assert_eq!(t.switch_count(), 16);
        assert_eq!(t.links.len(), 128 + 64);
        assert_eq!(t.ports_in_set(&LinkSet::Core).len(), 128);
        assert_eq!(t.ports_in_set(&LinkSet::Host).len(), 256);
        let racks = t.racks();
        assert_eq!(racks[0], racks[15]);
        assert_ne!(racks[15], racks[16]);
        assert_eq!(t.top_layer(), 2);
    }

    #[test]
    fn two_dc_shape() {
        let dc = TwoDc::default();
        let t = dc.build().unwrap();
        assert_eq!(t.hosts.len(), 64);
        assert_eq!(t.switch_count(), 2 * (2 + 8) + 2);
        // Hosts, ToR-spine, spine-gateway, and the interconnect last.
        assert_eq!(t.links.len(), 64 + 2 * 16 + 2 * 8 + 1);
        let ic = &t.links[dc.interconnect_link() as usize];
        assert_eq!(ic.rate, Rate::gbps(200));
        assert_eq!(ic.delay, Time::from_us(200));
        let racks = t.racks();
        assert_eq!((racks[0], racks[15]), (racks[15], racks[0]));
        assert_ne!(racks[31], racks[32]);
    }

    #[test]
    fn star_link_sets_name_one_link_or_one_direction() {
        let t = Star {
            hosts: 4,
            rate: default_rate(),
            delay: default_delay(),
        }
        .build()
        .unwrap();
        // Link 0 joins host 0 and the switch: port 0 is host 0's uplink, port 1 the switch's port to host 0.
        let link = LinkSet::parse("link:0").unwrap();
        assert_eq!(t.ports_in_set(&link), vec![PortId(0), PortId(1)]);
        let down = LinkSet::parse("port:1").unwrap();
        assert_eq!(t.ports_in_set(&down), vec![PortId(1)]);
        assert_eq!(t.peer_node(PortId(1)), t.hosts[0]);
        assert!(LinkSet::parse("port:x").unwrap_err().contains("port:N"));
    }

    #[test]
    fn fat_tree_k8_matches_hpcc_reference_shape() {
        let t = FatTree::k_ary(8).build().unwrap();
        assert_eq!(t.hosts.len(), 128);
        assert_eq!(t.switch_count(), 80);
        assert_eq!(t.links.len(), 384);
        assert_eq!(t.top_layer(), 3);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(
            LeafSpine {
                tors: 0,
                ..LeafSpine::default()
            }
            .build()
            .is_err()
        );
        let mut ft = FatTree::k_ary(4);
        ft.cores = 3;
        assert!(ft.build().unwrap_err().contains("multiple"));
    }
}
