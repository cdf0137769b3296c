//! Priority Flow Control (IEEE 802.1Qbb) on the seam: drives the pure [`bfcsim_net::pfc`] module in the call
//! order its module doc gives (HPCC ns-3 `SwitchNode::SendToDev`, `SwitchNotifyDequeue`,
//! `QbbNetDevice::Receive`), with the frames and the pausing of queues shared with BFC ([`crate::engine::pause`]).
//!
//! - A data packet (and an ACK, NACK or CNP when `switch.ack_priority` is off, as in ns-3's switches) arriving
//!   at a switch is admitted at ingress by [`PfcIngress`] against the (ingress port,
//!   priority) it came through, which it keeps (`Packet::in_port`) until it leaves the switch; a lossless
//!   packet then enters the egress MMU without a test ([`Mmu::admit_lossless`]), and one that finds its
//!   headroom full is dropped as [`DropReason::HeadroomFull`]. The first admission over the threshold sends a
//!   PAUSE for the priority out of the ingress port.
//! - When the packet is dequeued, its bytes are released; the release that brings the (port, priority) back
//!   under the resume threshold sends a RESUME.
//! - PAUSE and RESUME are 64 B frames in the strict-priority control queue ([`Shard::send_frame`]), outside
//!   PFC's accounting (ns-3's qIndex 0) but counted in the egress MMU like every queued byte. At the upstream
//!   switch port every data queue of the priority stops (the packet being serialized finishes); at a NIC
//!   every flow of the priority stops (its NIC queue is the priority) while ACKs, NACKs and CNPs still go.
//! - Every frame received is recorded for `pfc.txt` ([`PfcRecord`]); each port's [`PortPause`] gives the
//!   fraction of time it was paused.
//!
//! Departures from HPCC's ns-3 are those of [`bfcsim_net::pfc`] (64 B frames; headroom and reserve per
//! (port, lossless priority)); in addition, control packets (ACK, NACK, CNP, frames) are counted in the
//! egress MMU and could in principle be dropped there when the whole buffer is full (ns-3 never counts them).

use bfcsim_net::pfc::{Admission, PfcAction};

use super::*;

/// PFC's state in one shard.
pub(in crate::engine) struct Pfc {
    /// Bytes of a PAUSE or RESUME frame.
    frame: u32,
    /// Each switch's ingress accounting, by switch index.
    ingress: Vec<PfcIngress>,
    /// Per port (by [`PortId`]): the priorities its transmitter has been told to stop, and for how long.
    ports: Vec<PortPause>,
    /// Every PFC frame received, in event order.
    records: Vec<PfcRecord>,
    /// Bit `p` set for each data priority `p`: a NIC whose paused priorities cover it has every flow stopped.
    all_priorities: u64,
}

fn me(sh: &mut Shard) -> &mut Pfc {
    match &mut sh.scheme {
        Scheme::Pfc(p) => p,
        _ => unreachable!("PFC runs"),
    }
}

fn me_ref(sh: &Shard) -> Option<&Pfc> {
    match &sh.scheme {
        Scheme::Pfc(p) => Some(p),
        _ => None,
    }
}

impl SchemeSide for Pfc {
    /// Creates each switch's ingress accounting from its links (headroom from each ingress link's rate and
    /// delay, `third.cc`'s per-switch loop).
    fn init(sh: &mut Shard) -> Result<Pfc, String> {
        let FlowControl::Pfc(cfg) = &sh.params.flow_control else {
            unreachable!("configured")
        };
        let (sw, nic) = (&sh.params.switch, &sh.params.nic);
        let mtu = Bytes((nic.payload + nic.header + sh.rate.int_overhead) as u64);
        let classes = sw.classes as usize;
        let mut ingress = Vec::with_capacity(sh.switches.len());
        for key in &sh.switch_keys {
            let node = key.node;
            let links: Vec<(Rate, Time)> = sh.topo.nodes[node.idx()]
                .ports
                .iter()
                .map(|&p| {
                    let l = &sh.topo.links[sh.topo.ports[p.idx()].link.idx()];
                    (l.rate, l.delay)
                })
                .collect();
            let layout = cfg
                .layout(sw.buffer, classes, &links, sh.flow_ctx.line_rate, mtu)
                .map_err(|e| format!("switch {node}: {e}"))?;
            ingress.push(PfcIngress::new(layout));
        }
        let pfc = Pfc {
            frame: cfg.pause_frame.0 as u32,
            ingress,
            ports: vec![PortPause::new(classes); sh.topo.ports.len()],
            records: Vec::new(),
            all_priorities: u64::MAX >> (64 - classes),
        };
        sh.hop.enabled = true;
        Ok(pfc)
    }

    /// Steps 2–4 and 6 of [`bfcsim_net::pfc`]'s call order: the packet is admitted at its ingress (a lossless
    /// one into the egress queue without a test), which may pause the ingress.
    #[inline]
    fn enqueue(sh: &mut Shard, e: &Entry) -> Result<(), DropReason> {
        let queue = sh.data_queue_for(e.p.class, e.p.hash);
        let out_local = e.out_local as usize;
        let charge = sh.pfc_admit(e.s, e.in_local as usize, out_local, queue, &e.p)?;
        sh.hold_charge(e.pkt, charge);
        sh.push_admitted(e, queue);
        sh.packets.get_mut(e.pkt).in_port = e.in_local;
        sh.pause_changed(e.out_sp);
        Ok(())
    }

    /// Everything in a data queue (ACKs too, without `ack_priority`) was admitted at ingress and is released
    /// there.
    #[inline]
    fn dequeued(sh: &mut Shard, sp: u32, pkt: PacketId, queue: usize, _data: bool) {
        if queue >= sh.data_base {
            sh.pfc_dequeue(sp, pkt);
        }
        sh.pause_changed(sp);
    }

    fn frame(sh: &mut Shard, port: PortId, pkt: PacketId) {
        let p = sh.take_frame(pkt);
        sh.pfc_receive(port, &p);
    }

    /// Under PFC a NIC queue is a priority.
    #[inline]
    fn flow_started(sh: &mut Shard, _h: u32, id: FlowId, _slot: usize) -> u32 {
        sh.priority(sh.flows[id.idx()].spec.class) as u32
    }

    /// A NIC with every data priority paused sends only ACKs, NACKs and CNPs: its flows keep their places in its
    /// round robin, as HPCC's ns-3 NIC skips paused queue pairs in its scan without moving them
    /// (`RdmaEgressQueue::GetNextQindex`).
    #[inline(always)]
    fn nic_blocked(sh: &Shard, h: u32) -> bool {
        let nic = &sh.hosts[h as usize].nic;
        nic.any_paused() && {
            let all = me_ref(sh).expect("PFC runs").all_priorities;
            nic.paused_word(0) & all == all
        }
    }

    /// A flow whose priority is paused waits, parked, for its RESUME; but on a NIC with every priority paused it
    /// joins the round robin behind the flows already there, which the NIC does not go round until a RESUME
    /// ([`SchemeSide::nic_blocked`]).
    #[inline(always)]
    fn may_send(sh: &mut Shard, h: u32, id: FlowId, slot: usize) -> bool {
        if !sh.hosts[h as usize].nic.any_paused() {
            return true;
        }
        Self::nic_blocked(sh, h) || !sh.park_if_paused(h, id, slot)
    }

    fn violations(sh: &Shard, v: &mut Vec<String>) {
        let pfc = me_ref(sh).expect("PFC runs");
        for (s, ingress) in pfc.ingress.iter().enumerate() {
            v.extend(
                ingress
                    .violations()
                    .into_iter()
                    .map(|e| format!("switch {}: {e}", sh.switch_keys[s].node)),
            );
            // PFC counts every queued data byte at ingress; control packets (queue 0) bypass it.
            let ports = sh.sw_ports.iter().filter(|p| p.switch as usize == s);
            let queued: u64 = ports.clone().map(|p| p.queues.bytes()).sum();
            let control: u64 = ports.map(|p| p.queues.queue_bytes(0)).sum();
            if ingress.total() + control != queued {
                v.push(format!(
                    "switch {}: PFC counts {} B at ingress but its data queues hold {} B",
                    sh.switch_keys[s].node,
                    ingress.total(),
                    queued - control
                ));
            }
        }
    }

    /// Under PFC: the time any priority of the port's transmitter (a switch port or a NIC) was paused by the
    /// device downstream, what `pfc.txt` shows.
    fn link_paused_time(sh: &Shard, port: PortId) -> Option<Time> {
        sh.pfc_port(port).map(|pp| pp.paused_time_any(sh.now))
    }
}

impl Shard {
    /// The priority (and PFC class) of packets of traffic class `class`.
    #[inline]
    fn priority(&self, class: u8) -> u8 {
        class.min(self.params.switch.classes as u8 - 1)
    }

    /// Admits packet `p` (data, or an ACK without `switch.ack_priority`), which entered switch `s` through
    /// local port `in_local`, into `queue` of local egress port `out`: steps 2–4 and 6 of [`bfcsim_net::pfc`]'s
    /// call order.
    ///
    /// Inlined into the enqueue, with [`PfcIngress::admit`]: out of line, the two calls cost about 60
    /// instructions a packet in saved registers and arguments (CLOS-128 at 1 ms: HPCC and DCQCN −1.9%).
    #[inline(always)]
    fn pfc_admit(
        &mut self,
        s: usize,
        in_local: usize,
        out: usize,
        queue: usize,
        p: &Packet,
    ) -> Result<Charge, DropReason> {
        let prio = self.priority(p.class);
        let size = p.size as u64;
        let held = self.queue_level(s, out, queue);
        let Shard {
            switches, scheme, ..
        } = self;
        let mmu = &mut switches[s].mmu;
        let Scheme::Pfc(st) = scheme else {
            unreachable!("PFC runs")
        };
        let pfc = &mut st.ingress[s];
        if !pfc.is_lossless(prio) {
            let charge = mmu.admit(out, queue, size, held)?;
            pfc.admit(in_local, prio, size);
            return Ok(charge);
        }
        if pfc.admit(in_local, prio, size) == Admission::Drop {
            return Err(DropReason::HeadroomFull);
        }
        let charge = mmu.admit_lossless(out, size, held);
        if let Some(action) = pfc.poll_pause(in_local, prio) {
            self.pfc_send(s, action);
        }
        Ok(charge)
    }

    /// Packet `pkt`, admitted by [`Shard::pfc_admit`], leaves switch port `sp`: its ingress bytes are released,
    /// which may resume its ingress. Out of line: inlined into the dequeue it cost 0.6% more instructions.
    #[inline(never)]
    fn pfc_dequeue(&mut self, sp: u32, pkt: PacketId) {
        let p = self.packets.get(pkt);
        let (in_port, prio, size) = (p.in_port as usize, self.priority(p.class), p.size as u64);
        let s = self.sw_ports[sp as usize].switch as usize;
        let pfc = &mut me(self).ingress[s];
        pfc.release(in_port, prio, size);
        if let Some(action) = pfc.poll_resume(in_port, prio) {
            self.pfc_send(s, action);
        }
    }

    fn pfc_send(&mut self, s: usize, action: PfcAction) {
        let (local, prio, kind) = match action {
            PfcAction::Pause { port, prio } => (port, prio, PacketKind::Pause),
            PfcAction::Resume { port, prio } => (port, prio, PacketKind::Resume),
        };
        let size = me(self).frame;
        let port = self.switch_port(s, local);
        self.count_frame(kind);
        self.send_frame(port, kind, prio as u64, size);
    }

    /// A PAUSE or RESUME for priority `p.seq` reached the device owning `port`, the upstream of its sender.
    fn pfc_receive(&mut self, port: PortId, p: &Packet) {
        let prio = p.seq as u8;
        let pause = p.kind == PacketKind::Pause;
        let owner = self.wires[port.idx()].owner;
        let (node, local, node_type) = match owner {
            Owner::Switch(sp) => {
                let sp = &self.sw_ports[sp as usize];
                (
                    self.switch_keys[sp.switch as usize].node,
                    sp.local as u32,
                    1,
                )
            }
            Owner::Host(h) => (self.topo.hosts[h as usize], 0, 0),
        };
        let now = self.now;
        let st = me(self);
        st.records.push(PfcRecord {
            time: now,
            node,
            node_type,
            if_index: local + 1,
            pause,
        });
        let pp = &mut st.ports[port.idx()];
        let changed = if pause {
            pp.handle_pause(prio, now)
        } else {
            pp.handle_resume(prio, now)
        };
        if !changed {
            return;
        }
        match owner {
            Owner::Switch(sp) => {
                let per = self.queues_per_class as usize;
                let first = self.data_base + prio as usize * per;
                self.set_port_paused(port, sp, (first..first + per).map(|q| (q, pause)));
            }
            Owner::Host(h) => self.set_nic_paused(h, [(prio as u32, pause)]),
        }
    }

    /// Every PFC frame received so far, in event order (HPCC's `pfc.txt`); `None` unless PFC runs.
    pub fn pfc_records(&self) -> Option<&[PfcRecord]> {
        me_ref(self).map(|st| st.records.as_slice())
    }

    /// The pause state and paused time of `port`'s transmitter under PFC.
    pub fn pfc_port(&self, port: PortId) -> Option<&PortPause> {
        me_ref(self).map(|st| &st.ports[port.idx()])
    }

    /// Switch `s`'s PFC ingress accounting, when PFC runs.
    pub fn switch_pfc(&self, s: usize) -> Option<&PfcIngress> {
        me_ref(self).map(|st| &st.ingress[s])
    }
}
