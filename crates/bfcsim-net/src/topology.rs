//! Nodes, ports and links. Every link joins two ports; each port owns one transmit direction of its link, so
//! "port p" and "the link direction leaving p" are the same thing. Parallel links between one pair of nodes
//! are distinct links with distinct ports.

use bfcsim_core::{LinkId, NodeId, PortId, Rate, Time};
use serde::{Deserialize, Serialize};

/// Whether a node is an end host (with a NIC) or a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    /// An end host: sends and receives flows.
    Host,
    /// A switch: forwards packets through its shared-buffer MMU.
    Switch,
}

/// A node of the topology.
#[derive(Clone, Debug)]
pub struct Node {
    /// Host or switch.
    pub kind: NodeKind,
    /// Distance in hops from the nearest host: 0 for hosts, 1 for ToR switches, 2 for aggregation or spine, ...
    pub layer: u8,
    /// For a host, its rack: the index of the switch it attaches to. For a switch, its own number among
    /// switches. Used for rack-local traffic and rack-based FCT conventions.
    pub group: u32,
    /// The node's ports, in the order they were created (a switch's local port numbers).
    pub ports: Vec<PortId>,
}

/// One port: the transmit side of one link end.
#[derive(Clone, Copy, Debug)]
pub struct Port {
    /// The node the port belongs to.
    pub node: NodeId,
    /// The port at the other end of the link.
    pub peer: PortId,
    /// The link.
    pub link: LinkId,
    /// This port's index among its node's ports.
    pub local: u32,
}

/// A full-duplex link: both directions share rate and propagation delay.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// The two ports it joins.
    pub ends: [PortId; 2],
    /// Line rate of each direction.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Time,
    /// The probability that a packet crossing it, either way, is lost (HPCC `topology.txt`'s error rate; 0 for
    /// every built topology). The run turns it into a loss event (`[[events]]`, `bfcsim_sim::faults`).
    pub error_rate: f64,
}

/// A named set of links, over which a workload's load is defined (BFC §6.2.1: "X% load on the links in the core").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkSet {
    /// Links with a host at one end.
    Host,
    /// Links between two switches.
    Fabric,
    /// Links that reach the topmost switch layer (the ToR↔spine links of a leaf-spine, agg↔core of a fat-tree).
    Core,
    /// One link, by id (both directions).
    Link(u32),
    /// The directed link into host index N (the last hop of every flow to it).
    ToHost(u32),
    /// The directed links into host indices A to B, both included (`to-host:A-B`: BCC §III-C's "links to
    /// receivers").
    ToHosts(u32, u32),
    /// One direction of a link: the one transmitted by the port with this id (e.g. a receiver's downlink).
    Port(u32),
}

impl LinkSet {
    /// Parses `host`, `fabric`, `core`, `link:N`, `to-host:N`, `to-host:A-B` or `port:N`.
    pub fn parse(text: &str) -> Result<LinkSet, String> {
        if let Some((a, b)) = text
            .strip_prefix("to-host:")
            .and_then(|r| r.split_once('-'))
        {
            return match (a.parse::<u32>(), b.parse::<u32>()) {
                (Ok(a), Ok(b)) if a <= b => Ok(LinkSet::ToHosts(a, b)),
                _ => Err(format!(
                    "link set `{text}`: expected to-host:A-B with host indices A <= B"
                )),
            };
        }
        match text {
            "host" | "hosts" => Ok(LinkSet::Host),
            "fabric" => Ok(LinkSet::Fabric),
            "core" => Ok(LinkSet::Core),
            _ => {
                let numbered = |prefix: &str| text.strip_prefix(prefix).map(str::parse::<u32>);
                match (numbered("link:"), numbered("to-host:"), numbered("port:")) {
                    (Some(Ok(n)), _, _) => Ok(LinkSet::Link(n)),
                    (_, Some(Ok(n)), _) => Ok(LinkSet::ToHost(n)),
                    (_, _, Some(Ok(n))) => Ok(LinkSet::Port(n)),
                    _ => Err(format!(
                        "unknown link set `{text}` (expected host, fabric, core, link:N, to-host:N, to-host:A-B or port:N)"
                    )),
                }
            }
        }
    }
}

/// The spelling [`LinkSet::parse`] reads, so messages name a set as the user wrote it.
impl std::fmt::Display for LinkSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkSet::Host => f.write_str("host"),
            LinkSet::Fabric => f.write_str("fabric"),
            LinkSet::Core => f.write_str("core"),
            LinkSet::Link(n) => write!(f, "link:{n}"),
            LinkSet::ToHost(n) => write!(f, "to-host:{n}"),
            LinkSet::ToHosts(a, b) => write!(f, "to-host:{a}-{b}"),
            LinkSet::Port(n) => write!(f, "port:{n}"),
        }
    }
}

/// A network: nodes, ports and links, plus the host numbering used by routing tables.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// All nodes, indexed by [`NodeId`].
    pub nodes: Vec<Node>,
    /// All ports, indexed by [`PortId`].
    pub ports: Vec<Port>,
    /// All links, indexed by [`LinkId`].
    pub links: Vec<Link>,
    /// Hosts in node order; a host's position here is its host index.
    pub hosts: Vec<NodeId>,
    host_index: Vec<u32>,
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node. Layers and groups are computed by [`Topology::finish`].
    pub fn add_node(&mut self, kind: NodeKind) -> NodeId {
        let id = NodeId::from_idx(self.nodes.len());
        self.nodes.push(Node {
            kind,
            layer: 0,
            group: 0,
            ports: Vec::new(),
        });
        id
    }

    /// Joins `a` and `b` with a new full-duplex link.
    pub fn connect(&mut self, a: NodeId, b: NodeId, rate: Rate, delay: Time) -> LinkId {
        let link = LinkId::from_idx(self.links.len());
        let pa = PortId::from_idx(self.ports.len());
        let pb = PortId::from_idx(self.ports.len() + 1);
        for (node, peer) in [(a, pb), (b, pa)] {
            let local = self.nodes[node.idx()].ports.len() as u32;
            self.nodes[node.idx()]
                .ports
                .push(PortId::from_idx(self.ports.len()));
            self.ports.push(Port {
                node,
                peer,
                link,
                local,
            });
        }
        self.links.push(Link {
            ends: [pa, pb],
            rate,
            delay,
            error_rate: 0.0,
        });
        link
    }

    /// Computes host indices, layers (BFS distance from the hosts) and groups. Call once after the last
    /// `connect`; builders and importers do.
    pub fn finish(&mut self) {
        self.hosts = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].kind == NodeKind::Host)
            .map(NodeId::from_idx)
            .collect();
        self.host_index = vec![u32::MAX; self.nodes.len()];
        for (i, h) in self.hosts.iter().enumerate() {
            self.host_index[h.idx()] = i as u32;
        }
        let mut layer = vec![u8::MAX; self.nodes.len()];
        let mut frontier: Vec<NodeId> = self.hosts.clone();
        for h in &frontier {
            layer[h.idx()] = 0;
        }
        let mut depth = 0u8;
        while !frontier.is_empty() {
            depth = depth.saturating_add(1);
            let mut next = Vec::new();
            for n in frontier {
                for &p in &self.nodes[n.idx()].ports {
                    let m = self.peer_node(p);
                    if layer[m.idx()] == u8::MAX {
                        layer[m.idx()] = depth;
                        next.push(m);
                    }
                }
            }
            frontier = next;
        }
        let mut switch_no = 0;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            node.layer = layer[i];
            if node.kind == NodeKind::Switch {
                node.group = switch_no;
                switch_no += 1;
            }
        }
        for h in self.hosts.clone() {
            let rack = self.nodes[h.idx()]
                .ports
                .first()
                .map(|&p| self.nodes[self.peer_node(p).idx()].group);
            self.nodes[h.idx()].group = rack.unwrap_or(u32::MAX);
        }
    }

    /// The node at the far end of port `p`'s link.
    #[inline]
    pub fn peer_node(&self, p: PortId) -> NodeId {
        self.ports[self.ports[p.idx()].peer.idx()].node
    }

    /// Rate and delay of the link port `p` transmits on.
    #[inline]
    pub fn link_of(&self, p: PortId) -> &Link {
        &self.links[self.ports[p.idx()].link.idx()]
    }

    /// The host index of `n`, if it is a host.
    #[inline]
    pub fn host_index(&self, n: NodeId) -> Option<u32> {
        self.host_index
            .get(n.idx())
            .copied()
            .filter(|&i| i != u32::MAX)
    }

    /// True if `n` is a host of this topology.
    pub fn is_host(&self, n: NodeId) -> bool {
        self.host_index(n).is_some()
    }

    /// Number of switches.
    pub fn switch_count(&self) -> usize {
        self.nodes.len() - self.hosts.len()
    }

    /// The rack of each host, in host-index order.
    pub fn racks(&self) -> Vec<u32> {
        self.hosts
            .iter()
            .map(|h| self.nodes[h.idx()].group)
            .collect()
    }

    /// The topmost switch layer.
    pub fn top_layer(&self) -> u8 {
        self.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Switch)
            .map(|n| n.layer)
            .max()
            .unwrap_or(0)
    }

    /// Whether the directed link leaving port `p` belongs to `set`.
    pub fn in_set(&self, set: &LinkSet, p: PortId) -> bool {
        let port = self.ports[p.idx()];
        let (a, b) = (
            &self.nodes[port.node.idx()],
            &self.nodes[self.peer_node(p).idx()],
        );
        match set {
            LinkSet::Host => a.kind == NodeKind::Host || b.kind == NodeKind::Host,
            LinkSet::Fabric => a.kind == NodeKind::Switch && b.kind == NodeKind::Switch,
            LinkSet::Core => {
                let top = self.top_layer();
                a.kind == NodeKind::Switch
                    && b.kind == NodeKind::Switch
                    && (a.layer == top || b.layer == top)
            }
            LinkSet::Link(id) => port.link.0 == *id,
            LinkSet::ToHost(h) => self.hosts.get(*h as usize) == Some(&self.peer_node(p)),
            LinkSet::ToHosts(a, b) => self
                .host_index(self.peer_node(p))
                .is_some_and(|h| (*a..=*b).contains(&h)),
            LinkSet::Port(id) => p.0 == *id,
        }
    }

    /// The directed links (as their transmitting ports) in `set`.
    pub fn ports_in_set(&self, set: &LinkSet) -> Vec<PortId> {
        (0..self.ports.len())
            .map(PortId::from_idx)
            .filter(|&p| self.in_set(set, p))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{Build, Star};

    #[test]
    fn link_sets_parse_and_select() {
        assert_eq!(LinkSet::parse("link:3"), Ok(LinkSet::Link(3)));
        assert_eq!(LinkSet::parse("to-host:2"), Ok(LinkSet::ToHost(2)));
        assert!(LinkSet::parse("to-host:x").is_err());
        for text in ["host", "fabric", "core", "link:3", "to-host:2", "port:1"] {
            assert_eq!(LinkSet::parse(text).unwrap().to_string(), text);
        }
        let t = Star {
            hosts: 3,
            rate: Rate::gbps(100),
            delay: Time::from_us(1),
        }
        .build()
        .unwrap();
        let into_2 = t.ports_in_set(&LinkSet::ToHost(2));
        assert_eq!(into_2.len(), 1);
        assert_eq!(t.peer_node(into_2[0]), t.hosts[2]);
        assert_eq!(t.ports_in_set(&LinkSet::Host).len(), 6);
        assert!(t.ports_in_set(&LinkSet::ToHost(3)).is_empty());
        assert_eq!(LinkSet::parse("to-host:0-1"), Ok(LinkSet::ToHosts(0, 1)));
        assert!(LinkSet::parse("to-host:2-1").is_err());
        let into = t.ports_in_set(&LinkSet::ToHosts(0, 1));
        assert_eq!(into.len(), 2);
        assert!(into.iter().all(|&p| t.peer_node(p) != t.hosts[2]));
    }
}
