//! The fabric's verbs as schemes see them ([`bfcsim_schemes::fabric`]'s operations traits), each the engine's
//! own method of the same meaning.

use std::ops::Range;

use bfcsim_schemes::fabric::{FabricOps, NicOps, Receiving, Setup, SwitchOps, Telemetry};
use bfcsim_schemes::transport::TransportConfig;

use super::*;

impl FabricOps for Fabric {
    #[inline(always)]
    fn now(&self) -> Time {
        self.now
    }
    #[inline(always)]
    fn layout(&self) -> &QueueLayout {
        &self.layout
    }
    #[inline(always)]
    fn packet(&self, pkt: PacketId) -> &Packet {
        self.packets.get(pkt)
    }
    #[inline(always)]
    fn packet_mut(&mut self, pkt: PacketId) -> &mut Packet {
        self.packets.get_mut(pkt)
    }
    #[inline(always)]
    fn flow(&self, id: FlowId) -> &Flow {
        &self.flows[id.idx()]
    }
    #[inline(always)]
    fn link_rate(&self, port: PortId) -> Rate {
        self.wires[port.idx()].rate
    }
    #[inline(always)]
    fn device(&self, port: PortId) -> Device {
        self.wires[port.idx()].owner
    }
    fn take_frame(&mut self, pkt: PacketId) -> Packet {
        Fabric::take_frame(self, pkt)
    }
    fn drop_packet(&mut self, pkt: PacketId, reason: DropReason) {
        Fabric::drop_packet(self, pkt, reason)
    }
    fn arm_timer(&mut self, port: PortId, at: Time) {
        self.arm_scheme_timer(port, at)
    }
    fn frame_words(&self, index: u32) -> &[u64] {
        self.hop.map(index)
    }
    fn release_frame_words(&mut self, index: u32) {
        self.hop.release_map(index)
    }
    fn arm_token_timer(&mut self, at: Time, token: u64) {
        Fabric::arm_token_timer(self, at, token)
    }
    #[inline(always)]
    fn kick<S: Scheme>(&mut self, side: &mut S, port: PortId) {
        Fabric::kick(self, side, port)
    }
    #[inline(always)]
    fn int_stacks(&self) -> &IntStacks {
        &self.int_stacks
    }
    #[inline(always)]
    fn int_stacks_mut(&mut self) -> &mut IntStacks {
        &mut self.int_stacks
    }
}

impl Telemetry for Fabric {
    fn stamps(&self) -> &Stamps {
        &self.stamps
    }
    fn stamps_mut(&mut self) -> &mut Stamps {
        &mut self.stamps
    }
    fn pint_port(&mut self, port: PortId) -> &mut PintPort {
        &mut self.pint_ports[port.idx()]
    }
}

impl SwitchOps for Fabric {
    #[inline(always)]
    fn queues(&self, sp: u32) -> &PortQueues {
        &self.sw_ports[sp as usize].queues
    }
    #[inline(always)]
    fn sw_port(&self, sp: u32) -> (usize, u16) {
        let p = &self.sw_ports[sp as usize];
        (p.switch as usize, p.local)
    }
    fn sw_port_id(&self, sp: u32) -> PortId {
        Fabric::sw_port_id(self, &self.sw_ports[sp as usize])
    }
    fn switch_port(&self, s: usize, local: u16) -> PortId {
        Fabric::switch_port(self, s, local as usize)
    }
    fn switch_ports(&self, s: usize) -> Range<u32> {
        let first = self.switch_keys[s].first_sp;
        let n = self.topo.nodes[self.switch_keys[s].node.idx()].ports.len() as u32;
        first..first + n
    }
    fn switch_node(&self, s: usize) -> NodeId {
        self.switch_keys[s].node
    }
    #[inline(always)]
    fn admit(&mut self, e: &Entry, queue: usize) -> Result<(), DropReason> {
        Fabric::admit(self, e.s, e.out_local as usize, queue, e.pkt, e.p.size)
    }
    #[inline(always)]
    fn admit_lossless(&mut self, e: &Entry, queue: usize) {
        Fabric::admit_lossless(self, e, queue)
    }
    #[inline(always)]
    fn push(&mut self, e: &Entry, queue: usize) {
        self.push_admitted(e, queue)
    }
    fn trim(&mut self, e: &Entry, header: u32) -> Entry {
        Fabric::trim(self, e, header)
    }
    #[inline(always)]
    fn push_hop(&mut self, e: &Entry, queue: usize, hop_flags: u8) {
        Fabric::push_hop(self, e, queue, hop_flags)
    }
    #[inline(always)]
    fn pause_changed(&mut self, sp: u32) {
        Fabric::pause_changed(self, sp)
    }
    fn set_queues_paused(
        &mut self,
        sp: u32,
        changes: impl IntoIterator<Item = (usize, bool)>,
    ) -> bool {
        Fabric::set_queues_paused(self, sp, changes)
    }
    fn set_port_paused<S: Scheme>(
        &mut self,
        side: &mut S,
        sp: u32,
        changes: impl IntoIterator<Item = (usize, bool)>,
    ) {
        Fabric::set_port_paused(self, side, sp, changes)
    }
    fn hold_queue(&mut self, sp: u32, q: usize, held: bool) -> bool {
        self.sw_ports[sp as usize].queues.set_paused(q, held)
    }
    fn send_frame<S: Scheme>(
        &mut self,
        side: &mut S,
        port: PortId,
        kind: PacketKind,
        seq: u64,
        size: u32,
    ) {
        Fabric::send_frame(self, side, (port, kind), (seq, None), size)
    }
    fn send_frame_words<S: Scheme>(
        &mut self,
        side: &mut S,
        port: PortId,
        kind: PacketKind,
        words: &[u64],
        size: u32,
    ) {
        Fabric::send_frame(self, side, (port, kind), (0, Some(words)), size)
    }
    fn arm_batched_timer(&mut self, port: PortId, at: Time) {
        Fabric::arm_batched_timer(self, port, at)
    }
    fn reroute(&mut self, e: &Entry) -> Entry {
        Fabric::reroute(self, e)
    }
    fn toward_source(&self, id: FlowId, s: usize) -> PortId {
        Fabric::toward_source(self, id, s)
    }
    fn port_blocked_time(&self, sp: u32) -> Time {
        Fabric::port_blocked_time(self, sp)
    }
    #[inline(always)]
    fn tx_bytes(&self, port: PortId) -> u64 {
        self.wires[port.idx()].tx_bytes
    }
}

impl NicOps for Fabric {
    fn host_port(&self, h: u32) -> PortId {
        self.hosts[h as usize].port
    }
    fn host_node(&self, h: u32) -> NodeId {
        self.topo.hosts[h as usize]
    }
    #[inline(always)]
    fn flow_slot(&self, id: FlowId) -> Option<usize> {
        match self.flow_state[id.idx()].slot {
            NO_SLOT => None,
            slot => Some(slot as usize),
        }
    }
    #[inline(always)]
    fn ready_flows(&self, h: u32) -> usize {
        self.hosts[h as usize].ready.len()
    }
    #[inline(always)]
    fn sender(&self, slot: usize) -> &Sender {
        &self.active[slot].sender
    }
    #[inline(always)]
    fn sender_mut(&mut self, slot: usize) -> &mut Sender {
        &mut self.active[slot].sender
    }
    #[inline(always)]
    fn controller(&mut self, slot: usize) -> (&mut Cc, &IntStacks) {
        (&mut self.active[slot].cc, &self.int_stacks)
    }
    #[inline(always)]
    fn controller_changed(&mut self, slot: usize) {
        self.cc_changed(slot)
    }
    fn receiver(&self, id: FlowId) -> Receiving<'_> {
        match self.flow_state[id.idx()].recv_slot {
            NO_SLOT => Receiving::NotStarted,
            RECEIVED => Receiving::Complete,
            slot => Receiving::Partly(&self.inbound[slot as usize].receiver),
        }
    }
    #[inline(always)]
    fn nic_alloc(&mut self, h: u32, limit: Option<u32>, hash: u64) -> u32 {
        self.hosts[h as usize].nic.alloc(limit, hash)
    }
    #[inline(always)]
    fn nic_release(&mut self, h: u32, q: u32) {
        self.hosts[h as usize].nic.release(q)
    }
    #[inline(always)]
    fn nic_any_paused(&self, h: u32) -> bool {
        self.hosts[h as usize].nic.any_paused()
    }
    #[inline(always)]
    fn nic_paused_word(&self, h: u32, w: usize) -> u64 {
        self.hosts[h as usize].nic.paused_word(w)
    }
    fn nic_queue_count(&self, h: u32) -> usize {
        self.hosts[h as usize].nic.users.len()
    }
    #[inline(always)]
    fn park_if_paused(&mut self, h: u32, id: FlowId, slot: usize) -> bool {
        Fabric::park_if_paused(self, h, id, slot)
    }
    fn set_nic_paused<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        changes: impl IntoIterator<Item = (u32, bool)>,
    ) {
        Fabric::set_nic_paused(self, side, h, changes)
    }
    fn make_ready<S: Scheme>(&mut self, side: &mut S, id: FlowId) {
        Fabric::make_ready(self, side, id)
    }
    fn new_control(
        &mut self,
        id: FlowId,
        to_sender: bool,
        kind: PacketKind,
        seq_aux: (u64, u32),
        size: u32,
    ) -> PacketId {
        Fabric::new_control(self, id, to_sender, kind, seq_aux, size)
    }
    fn queue_control(&mut self, h: u32, pkt: PacketId) {
        Fabric::queue_control(self, h, pkt)
    }
    fn send_control<S: Scheme>(&mut self, side: &mut S, h: u32, pkt: PacketId) {
        Fabric::send_control(self, side, h, pkt)
    }
    fn reply<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        data: &Packet,
        kind: PacketKind,
        seq_aux: (u64, u32),
    ) {
        self.send_reply(side, h, (data, PacketId::NONE), kind, seq_aux)
    }
    fn restart_rto(&mut self, h: u32, slot: usize) {
        Fabric::restart_rto(self, h, slot)
    }
    fn complete<S: Scheme>(&mut self, side: &mut S, id: FlowId) {
        Fabric::complete(self, side, id)
    }
}

impl Setup for Fabric {
    fn topology(&self) -> &Topology {
        &self.topo
    }
    fn routes(&self) -> &Routes {
        &self.routes
    }
    fn seed(&self) -> u64 {
        self.params.seed
    }
    fn switch_count(&self) -> usize {
        self.switches.len()
    }
    fn sw_port_count(&self) -> usize {
        self.sw_ports.len()
    }
    fn host_count(&self) -> usize {
        self.hosts.len()
    }
    fn switch_of_node(&self, node: NodeId) -> Option<usize> {
        match self.switch_of_node[node.idx()] {
            u32::MAX => None,
            s => Some(s as usize),
        }
    }
    fn wire_delay(&self, port: PortId) -> Time {
        self.wires[port.idx()].delay
    }
    fn flows(&self) -> &[Flow] {
        &self.flows
    }
    fn flow_context(&self) -> FlowContext {
        self.flow_ctx
    }
    fn buffer(&self) -> Bytes {
        self.params.switch.buffer
    }
    fn payload(&self) -> u32 {
        self.params.nic.payload
    }
    fn header(&self) -> u32 {
        self.params.nic.header
    }
    fn ack_size(&self) -> u32 {
        self.params.nic.ack_size
    }
    fn int_overhead(&self) -> u32 {
        self.cc_nic.data_overhead()
    }
    fn transport(&self) -> &TransportConfig {
        &self.params.nic.transport
    }
    fn enable_pausing(&mut self) {
        self.hop.enabled = true;
    }
    fn start_watchdog(&mut self, bound: Time) {
        Fabric::start_watchdog(self, bound)
    }
}
