//! Priority Flow Control (IEEE 802.1Qbb) in the engine: drives the pure [`bfcsim_net::pfc`] module in the call
//! order its module doc gives (HPCC ns-3 `SwitchNode::SendToDev`, `SwitchNotifyDequeue`,
//! `QbbNetDevice::Receive`), with the frames and the pausing of queues shared with BFC ([`super::hop`]).
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

/// Run-wide PFC state.
pub(super) struct PfcState {
    /// Bytes of a PAUSE or RESUME frame.
    frame: u32,
    /// Per port (by [`PortId`]): the priorities its transmitter has been told to stop, and for how long.
    ports: Vec<PortPause>,
    /// Every PFC frame received, in event order.
    records: Vec<PfcRecord>,
}

impl Shard {
    /// Creates each switch's ingress accounting from its links (headroom from each ingress link's rate and
    /// delay, `third.cc`'s per-switch loop).
    pub(super) fn init_pfc(&mut self) -> Result<(), String> {
        let FlowControl::Pfc(cfg) = &self.params.flow_control else {
            return Ok(());
        };
        let (sw, nic) = (&self.params.switch, &self.params.nic);
        let mtu = Bytes((nic.payload + nic.header + self.rate.int_overhead) as u64);
        let classes = sw.classes as usize;
        for s in 0..self.switches.len() {
            let node = self.switches[s].node;
            let links: Vec<(Rate, Time)> = self.topo.nodes[node.idx()]
                .ports
                .iter()
                .map(|&p| {
                    let l = &self.topo.links[self.topo.ports[p.idx()].link.idx()];
                    (l.rate, l.delay)
                })
                .collect();
            let layout = cfg
                .layout(sw.buffer, classes, &links, self.flow_ctx.line_rate, mtu)
                .map_err(|e| format!("switch {node}: {e}"))?;
            self.switches[s].pfc = Some(PfcIngress::new(layout));
        }
        self.pfc = Some(Box::new(PfcState {
            frame: cfg.pause_frame.0 as u32,
            ports: vec![PortPause::new(classes); self.topo.ports.len()],
            records: Vec::new(),
        }));
        self.hop.enabled = true;
        Ok(())
    }

    /// The priority (and PFC class) of packets of traffic class `class`.
    #[inline]
    pub(super) fn priority(&self, class: u8) -> u8 {
        class.min(self.params.switch.classes as u8 - 1)
    }

    /// Admits packet `p` (data, or an ACK without `switch.ack_priority`), which entered switch `s` through `in_sp`, into `queue` of local egress port
    /// `out`: steps 2–4 and 6 of [`bfcsim_net::pfc`]'s call order.
    #[inline(never)]
    pub(super) fn pfc_admit(
        &mut self,
        s: usize,
        in_sp: u32,
        out: usize,
        queue: usize,
        p: &Packet,
    ) -> Result<(), DropReason> {
        let prio = self.priority(p.class);
        let in_local = self.sw_ports[in_sp as usize].local as usize;
        let size = p.size as u64;
        let Switch { mmu, pfc, .. } = &mut self.switches[s];
        let pfc = pfc.as_mut().expect("called only with PFC");
        if !pfc.is_lossless(prio) {
            mmu.admit(out, queue, size)?;
            pfc.admit(in_local, prio, size);
            return Ok(());
        }
        if pfc.admit(in_local, prio, size) == Admission::Drop {
            return Err(DropReason::HeadroomFull);
        }
        mmu.admit_lossless(out, queue, size);
        if let Some(action) = pfc.poll_pause(in_local, prio) {
            self.pfc_send(s, action);
        }
        Ok(())
    }

    /// Packet `pkt`, admitted by [`Shard::pfc_admit`], leaves switch port `sp`: its ingress bytes are released, which may resume its
    /// ingress.
    #[inline(never)]
    pub(super) fn pfc_dequeue(&mut self, sp: u32, pkt: PacketId) {
        let p = self.packets.get(pkt);
        let (in_port, prio, size) = (p.in_port as usize, self.priority(p.class), p.size as u64);
        let s = self.sw_ports[sp as usize].switch as usize;
        let pfc = self.switches[s].pfc.as_mut().expect("called only with PFC");
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
        let size = self.pfc.as_ref().expect("PFC runs").frame;
        self.send_hop_frame(s, local, kind, prio as u64, size);
    }

    /// A PAUSE or RESUME for priority `p.seq` reached the device owning `port`, the upstream of its sender.
    pub(super) fn pfc_receive(&mut self, port: PortId, p: &Packet) {
        let prio = p.seq as u8;
        let pause = p.kind == PacketKind::Pause;
        let owner = self.wires[port.idx()].owner;
        let (node, local, node_type) = match owner {
            Owner::Switch(sp) => {
                let sp = &self.sw_ports[sp as usize];
                (self.switches[sp.switch as usize].node, sp.local, 1)
            }
            Owner::Host(h) => (self.topo.hosts[h as usize], 0, 0),
        };
        let now = self.now;
        let st = self.pfc.as_mut().expect("PFC runs");
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
        self.pfc.as_ref().map(|st| st.records.as_slice())
    }

    /// The pause state and paused time of `port`'s transmitter under PFC.
    pub fn pfc_port(&self, port: PortId) -> Option<&PortPause> {
        self.pfc.as_ref().map(|st| &st.ports[port.idx()])
    }

    /// Switch `s`'s PFC ingress accounting, when PFC runs.
    pub fn switch_pfc(&self, s: usize) -> Option<&PfcIngress> {
        self.switches[s].pfc.as_ref()
    }
}
