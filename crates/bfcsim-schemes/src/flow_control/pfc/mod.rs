//! Priority Flow Control (IEEE 802.1Qbb) on the fabric: drives the pure modules [`config`], [`ingress`] and
//! [`pause`] in the call order [`ingress`]'s doc gives (HPCC ns-3 `SwitchNode::SendToDev`, `SwitchNotifyDequeue`,
//! `QbbNetDevice::Receive`), with the frames and the pausing of queues the fabric offers every per-hop scheme.
//!
//! - A data packet (and an ACK, NACK or CNP when `switch.ack_priority` is off, as in ns-3's switches) arriving
//!   at a switch is admitted at ingress by [`PfcIngress`] against the (ingress port, priority) it came through,
//!   which it keeps (`Packet::in_port`) until it leaves the switch; a lossless packet then enters the egress
//!   buffer without a test ([`SwitchOps::admit_lossless`]), and one that finds its headroom full is dropped as
//!   [`DropReason::HeadroomFull`]. The first admission over the threshold sends a PAUSE for the priority out of
//!   the ingress port.
//! - When the packet is dequeued, its bytes are released; the release that brings the (port, priority) back
//!   under the resume threshold sends a RESUME.
//! - PAUSE and RESUME are 64 B frames in the strict-priority control queue ([`SwitchOps::send_frame`]), outside
//!   PFC's accounting (ns-3's qIndex 0) but counted in the egress buffer like every queued byte. At the upstream
//!   switch port every data queue of the priority stops (the packet being serialized finishes); at a NIC every
//!   flow of the priority stops (its NIC queue is the priority) while ACKs, NACKs and CNPs still go.
//! - Every frame received is recorded for `pfc.txt` ([`PauseRecord`]); each port's [`PortPause`] gives the
//!   fraction of time it was paused.
//!
//! Departures from HPCC's ns-3 are those of [`ingress`] (64 B frames; headroom and reserve per
//! (port, lossless priority)); in addition, control packets (ACK, NACK, CNP, frames) are counted in the
//! egress buffer and could in principle be dropped there when the whole buffer is full (ns-3 never counts them).

use bfcsim_core::{Bytes, FlowId, NodeId, PacketId, PortId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};

pub mod config;
pub mod ingress;
pub mod pause;

pub use config::{HeadroomRule, MAX_PRIORITIES, PauseThreshold, PfcConfig, PfcLayout};
pub use ingress::{Admission, PfcAction, PfcIngress};
pub use pause::PortPause;

use crate::fabric::{
    Describe, Entry, FrameCounts, HopStats, NicOps, NicSide, NoStats, PauseRecord, Scheme, Setup,
    SwitchFacts, SwitchOps, SwitchSide,
};

/// PFC's state in one shard of a run.
pub struct Pfc {
    /// Bytes of a PAUSE or RESUME frame.
    frame: u32,
    /// Each switch's ingress accounting, by switch index.
    ingress: Vec<PfcIngress>,
    /// Per port (by [`PortId`]): the priorities its transmitter has been told to stop, and for how long.
    ports: Vec<PortPause>,
    /// Every PFC frame received, in event order.
    records: Vec<PauseRecord>,
    /// Bit `p` set for each data priority `p`: a NIC whose paused priorities cover it has every flow stopped.
    all_priorities: u64,
    frames: FrameCounts,
}

impl Pfc {
    /// Every PFC frame received so far, in event order (HPCC's `pfc.txt`).
    pub fn records(&self) -> &[PauseRecord] {
        &self.records
    }

    /// The pause state and paused time of `port`'s transmitter.
    pub fn port(&self, port: PortId) -> &PortPause {
        &self.ports[port.idx()]
    }

    /// Switch `s`'s ingress accounting.
    pub fn ingress(&self, s: usize) -> &PfcIngress {
        &self.ingress[s]
    }

    /// Packet `pkt`, admitted at ingress, leaves switch port `sp`: its ingress bytes are released, which may
    /// resume its ingress. Out of line: inlined, it makes the dequeue it sits in costlier for every packet.
    #[inline(never)]
    fn dequeue_data(&mut self, fab: &mut impl SwitchOps, sp: u32, pkt: PacketId) {
        let p = fab.packet(pkt);
        let prio = fab.layout().class_of(p.class);
        let (in_port, size) = (p.in_port as usize, p.size as u64);
        let (s, _) = fab.sw_port(sp);
        let pfc = &mut self.ingress[s];
        pfc.release(in_port, prio, size);
        if let Some(action) = pfc.poll_resume(in_port, prio) {
            self.send(fab, s, action);
        }
    }

    fn send(&mut self, fab: &mut impl SwitchOps, s: usize, action: PfcAction) {
        let (local, prio, kind) = match action {
            PfcAction::Pause { port, prio } => (port, prio, PacketKind::PAUSE),
            PfcAction::Resume { port, prio } => (port, prio, PacketKind::RESUME),
        };
        let port = fab.switch_port(s, local as u16);
        self.frames.count(kind == PacketKind::PAUSE);
        let size = self.frame;
        fab.send_frame(self, port, kind, prio as u64, size);
    }

    /// Records a PAUSE or RESUME (`p`) that reached `port` (of `node`, local interface `local`, a switch when
    /// `node_type` is 1) and returns the priority it names, whether it pauses, and whether the port's state
    /// changed.
    fn receive(
        &mut self,
        now: Time,
        port: PortId,
        (node, local, node_type): (NodeId, u32, u8),
        p: &Packet,
    ) -> (u8, bool, bool) {
        let prio = p.seq as u8;
        let pause = p.kind == PacketKind::PAUSE;
        self.records.push(PauseRecord {
            time: now,
            node,
            node_type,
            if_index: local + 1,
            pause,
        });
        let pp = &mut self.ports[port.idx()];
        let changed = if pause {
            pp.handle_pause(prio, now)
        } else {
            pp.handle_resume(prio, now)
        };
        (prio, pause, changed)
    }
}

impl SwitchSide for Pfc {
    /// Steps 2–4 and 6 of [`ingress`]'s call order: the packet is admitted at its ingress (a lossless
    /// one into the egress queue without a test), which may pause the ingress.
    ///
    /// Inlined, with [`PfcIngress::admit`]: out of line, the two calls cost about 60 instructions a packet in
    /// saved registers and arguments (CLOS-128 at 1 ms: HPCC and DCQCN −1.9%).
    #[inline(always)]
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let layout = fab.layout();
        let queue = layout.data_queue_for(e.p.class, e.p.hash);
        let prio = layout.class_of(e.p.class);
        let (in_local, size) = (e.in_local as usize, e.p.size as u64);
        if !self.ingress[e.s].is_lossless(prio) {
            fab.admit(e, queue)?;
            self.ingress[e.s].admit(in_local, prio, size);
        } else {
            if self.ingress[e.s].admit(in_local, prio, size) == Admission::Drop {
                return Err(DropReason::HeadroomFull);
            }
            fab.admit_lossless(e, queue);
            if let Some(action) = self.ingress[e.s].poll_pause(in_local, prio) {
                self.send(fab, e.s, action);
            }
        }
        fab.push_hop(e, queue, 0);
        Ok(())
    }

    /// Everything in a data queue (ACKs too, without `ack_priority`) was admitted at ingress and is released
    /// there.
    #[inline]
    fn dequeued<F: SwitchOps>(
        &mut self,
        fab: &mut F,
        sp: u32,
        pkt: PacketId,
        queue: usize,
        _data: bool,
    ) {
        if queue >= fab.layout().data_base {
            self.dequeue_data(fab, sp, pkt);
        }
        fab.pause_changed(sp);
    }

    /// A PAUSE or RESUME for a priority reached switch port `sp`: every data queue of the priority stops or
    /// goes again.
    fn switch_frame<F: SwitchOps>(&mut self, fab: &mut F, sp: u32, pkt: PacketId) {
        let p = fab.take_frame(pkt);
        let (s, local) = fab.sw_port(sp);
        let at = (fab.switch_node(s), local as u32, 1);
        let (prio, pause, changed) = self.receive(fab.now(), fab.sw_port_id(sp), at, &p);
        if changed {
            let layout = fab.layout();
            let first = layout.data_base + prio as usize * layout.per_class;
            let queues = first..first + layout.per_class;
            fab.set_port_paused(self, sp, queues.map(|q| (q, pause)));
        }
    }

    fn violations<F: SwitchOps>(&self, fab: &F, v: &mut Vec<String>) {
        for (s, ingress) in self.ingress.iter().enumerate() {
            let node = fab.switch_node(s);
            v.extend(
                ingress
                    .violations()
                    .into_iter()
                    .map(|e| format!("switch {node}: {e}")),
            );
            // PFC counts every queued data byte at ingress; control packets (queue 0) bypass it.
            let ports = fab.switch_ports(s).map(|sp| fab.queues(sp));
            let queued: u64 = ports.clone().map(|q| q.bytes()).sum();
            let control: u64 = ports.map(|q| q.queue_bytes(0)).sum();
            if ingress.total() + control != queued {
                v.push(format!(
                    "switch {node}: PFC counts {} B at ingress but its data queues hold {} B",
                    ingress.total(),
                    queued - control
                ));
            }
        }
    }
}

impl NicSide for Pfc {
    /// Under PFC a NIC queue is a priority.
    #[inline]
    fn flow_started<F: NicOps>(&mut self, fab: &mut F, _h: u32, id: FlowId, _slot: usize) -> u32 {
        let class = fab.flow(id).spec.class;
        fab.layout().class_of(class) as u32
    }

    /// A NIC with every data priority paused sends only ACKs, NACKs and CNPs: its flows keep their places in its
    /// round robin, as HPCC's ns-3 NIC skips paused queue pairs in its scan without moving them
    /// (`RdmaEgressQueue::GetNextQindex`).
    #[inline(always)]
    fn nic_blocked<F: NicOps>(&self, fab: &F, h: u32) -> bool {
        let all = self.all_priorities;
        fab.nic_any_paused(h) && fab.nic_paused_word(h, 0) & all == all
    }

    /// A flow whose priority is paused waits, parked, for its RESUME; but on a NIC with every priority paused it
    /// joins the round robin behind the flows already there, which the NIC does not go round until a RESUME
    /// ([`NicSide::nic_blocked`]).
    #[inline(always)]
    fn may_send<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> bool {
        if !fab.nic_any_paused(h) {
            return true;
        }
        self.nic_blocked(fab, h) || !fab.park_if_paused(h, id, slot)
    }

    /// A PAUSE or RESUME for a priority reached host `h`'s NIC: every flow of the priority stops or goes again.
    fn nic_frame<F: NicOps>(&mut self, fab: &mut F, h: u32, pkt: PacketId) {
        let p = fab.take_frame(pkt);
        let at = (fab.host_node(h), 0, 0);
        let (prio, pause, changed) = self.receive(fab.now(), fab.host_port(h), at, &p);
        if changed {
            fab.set_nic_paused(self, h, [(prio as u32, pause)]);
        }
    }
}

impl Scheme for Pfc {
    fn add_stats(&self, stats: &mut HopStats) {
        self.frames.add_to(stats);
    }

    /// Under PFC: the time any priority of the port's transmitter (a switch port or a NIC) was paused by the
    /// device downstream, what `pfc.txt` shows.
    fn link_paused_time<F: SwitchOps>(&self, fab: &F, port: PortId) -> Option<Time> {
        Some(self.ports[port.idx()].paused_time_any(fab.now()))
    }
}

impl Describe for Pfc {
    const KIND: &'static str = "pfc";
    const QUEUE_LEFT: crate::fabric::QueueLeft = crate::fabric::QueueLeft::ByClass;
    const SUMMARY: &'static str = "Priority Flow Control (IEEE 802.1Qbb), HPCC ns-3's thresholds";
    type Config = PfcConfig;
    type Stats = NoStats;

    /// PFC accounts the whole switch buffer at ingress: one pool per switch.
    fn validate(cfg: &PfcConfig, switch: &SwitchFacts) -> Result<(), String> {
        if !switch.one_pool {
            return Err(
                "flow_control.kind = \"pfc\" accounts the whole switch buffer at ingress: leave \
                 switch.ports_per_pool and switch.pool_size unset (one pool per switch)"
                    .into(),
            );
        }
        cfg.validate()
    }

    /// Creates each switch's ingress accounting from its links (headroom from each ingress link's rate and
    /// delay, `third.cc`'s per-switch loop).
    fn new(cfg: &PfcConfig, fab: &mut impl Setup) -> Result<Pfc, String> {
        let mtu = Bytes((fab.payload() + fab.header() + fab.int_overhead()) as u64);
        let classes = fab.layout().classes;
        let topo = fab.topology();
        let mut ingress = Vec::with_capacity(fab.switch_count());
        for s in 0..fab.switch_count() {
            let node = fab.switch_node(s);
            let links: Vec<(Rate, Time)> = topo.nodes[node.idx()]
                .ports
                .iter()
                .map(|&p| {
                    let l = &topo.links[topo.ports[p.idx()].link.idx()];
                    (l.rate, l.delay)
                })
                .collect();
            let layout = cfg
                .layout(
                    fab.buffer(),
                    classes,
                    &links,
                    fab.flow_context().line_rate,
                    mtu,
                )
                .map_err(|e| format!("switch {node}: {e}"))?;
            ingress.push(PfcIngress::new(layout));
        }
        let pfc = Pfc {
            frame: cfg.pause_frame.0 as u32,
            ingress,
            ports: vec![PortPause::new(classes); topo.ports.len()],
            records: Vec::new(),
            all_priorities: u64::MAX >> (64 - classes),
            frames: FrameCounts::default(),
        };
        fab.enable_pausing();
        Ok(pfc)
    }

    fn pause_records(shards: &[&Pfc]) -> Option<Vec<PauseRecord>> {
        let mut all: Vec<PauseRecord> = shards
            .iter()
            .flat_map(|p| p.records.iter().copied())
            .collect();
        all.sort_by_key(|r| (r.time, r.node.0, r.if_index, r.pause));
        Some(all)
    }
}
