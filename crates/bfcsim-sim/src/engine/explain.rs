//! Every hop of chosen flows' packets, kept only when asked ([`crate::sim::Sim::explain`]) so that
//! `bfcsim run --explain-flow` can say where a slow flow's time went: each transmission of one of the flows'
//! packets (data and the replies, credits or grants that carry its id) on any link, with the queue it left, and
//! every transmission on the flows' senders' own links (what else their NICs were sending).
//!
//! Off, it costs the loop nothing. While explaining, every wire's `exit` sends its transmissions out of line
//! through `Fabric::leave`, the way a packet to another shard takes anyway, and only there is anything
//! recorded. Two designs measured before it (cachegrind, CLOS-128 under DCTCP, 1 ms) cost the loop although
//! they recorded nothing: a test of the recorder in `Fabric::transmit`, never taken, 0.6% of the instructions;
//! the queue a packet left handed down to `transmit`, 0.24%. So the queue is read off the packet instead, as
//! the running scheme says it can be ([`QueueLeft`]). Recording reads the packet and changes nothing, so the
//! run's fingerprint is the same with it.

use bfcsim_core::{FlowId, PortId, Time};
use bfcsim_net::packet::{Packet, PacketKind};

use super::*;

/// One transmission of one packet on one link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopRecord {
    /// The transmitting port (a switch egress port, or a host's NIC).
    pub port: PortId,
    /// The queue the packet left: a switch egress queue, or the NIC queue of the flow; `None` where the
    /// scheme's choice does not show in the packet ([`QueueLeft::Unknown`]).
    pub queue: Option<u32>,
    /// Serialization started.
    pub start: Time,
    /// Serialization ended.
    pub end: Time,
    /// The packet reached the far end (and, at a switch, its egress queue: the wire's delay includes the
    /// switch's processing delay).
    pub arrive: Time,
    /// The host at the far end, when the link ends at one.
    pub to_host: Option<u32>,
    /// Kind of packet.
    pub kind: PacketKind,
    /// Its flow.
    pub flow: FlowId,
    /// Its byte offset.
    pub seq: u64,
    /// Its payload bytes.
    pub payload: u32,
    /// Its bytes on the wire.
    pub size: u32,
    /// When its sender emitted the data packet it is or answers: with its kind, flow and sequence number, the
    /// name of one copy of a packet from hop to hop (a packet crossing to another shard changes its id).
    pub sent_at: Time,
    /// A packet of a flow being explained (else another packet on an explained flow's sender's link).
    pub explained: bool,
}

/// What is recorded: which flows, which ports, and the records so far.
pub(super) struct Explain {
    /// By flow index.
    flows: Vec<bool>,
    /// By port index: the explained flows' senders' NIC ports.
    ports: Vec<bool>,
    /// How to read the queue a data packet left a switch port by.
    queue_left: QueueLeft,
    layout: QueueLayout,
    switch: SwitchConfig,
    pub(super) hops: Vec<HopRecord>,
}

impl Explain {
    /// Records for `flows` on `fab`, whose scheme's packets show the queue they left as `queue_left` says.
    pub(super) fn new(flows: &[FlowId], fab: &Fabric, queue_left: QueueLeft) -> Explain {
        let topo = &fab.topo;
        let mut wanted = vec![false; fab.flows.len()];
        let mut ports = vec![false; topo.ports.len()];
        for &f in flows {
            wanted[f.idx()] = true;
            let src = topo.hosts[fab.flows[f.idx()].src_host as usize];
            for &p in &topo.nodes[src.idx()].ports {
                ports[p.idx()] = true;
            }
        }
        Explain {
            flows: wanted,
            ports,
            queue_left,
            layout: fab.layout,
            switch: fab.params.switch.clone(),
            hops: Vec::new(),
        }
    }

    /// The queue `p` left when its transmission from `owner` started: a NIC's is the one the packet carries;
    /// a switch port's, the control queue or as the scheme says.
    fn queue_left(&self, p: &Packet, owner: Device) -> Option<u32> {
        if matches!(owner, Device::Host(_)) {
            return Some(p.upstream_q);
        }
        if in_control_queue(&self.switch, p.kind) {
            return Some(0);
        }
        match self.queue_left {
            QueueLeft::Stamped => Some(p.upstream_q),
            QueueLeft::ByClass => Some(self.layout.data_queue_for(p.class, p.hash) as u32),
            QueueLeft::Unknown => None,
        }
    }

    /// Records the transmission of `p` on `port` of `owner`, which `times` says started, ended and reached
    /// the far end `far` when, if it is one this keeps.
    #[cold]
    #[inline(never)]
    pub(super) fn hop(
        &mut self,
        p: &Packet,
        port: PortId,
        owner: Device,
        times: (Time, Time, Time),
        far: Device,
    ) {
        let explained = !p.kind.is_hop_local() && self.flows.get(p.flow.idx()) == Some(&true);
        if !explained && !self.ports[port.idx()] {
            return;
        }
        let (start, end, arrive) = times;
        self.hops.push(HopRecord {
            port,
            queue: self.queue_left(p, owner),
            start,
            end,
            arrive,
            to_host: match far {
                Device::Host(h) => Some(h),
                Device::Switch(_) => None,
            },
            kind: p.kind,
            flow: p.flow,
            seq: p.seq,
            payload: p.payload,
            size: p.size,
            sent_at: p.sent_at,
            explained,
        });
    }
}
