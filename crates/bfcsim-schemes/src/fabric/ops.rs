//! The verbs the fabric offers a scheme: [`FabricOps`] everywhere, [`SwitchOps`] at a switch, [`NicOps`] at a
//! host's NIC, [`Setup`] while the scheme is built.
//!
//! Indices: a switch is `s`, its index among the fabric's switches; a switch port is `sp`, its index among all
//! switch ports (a switch's ports are consecutive, in local order); `local` is a port's number at its switch;
//! a host is `h`, its index among the hosts; a running flow's sender lives in `slot` ([`NicOps::flow_slot`]).
//!
//! Verbs that can start a transmission (resuming a queue, sending a frame or a control packet, readying a flow,
//! waking a port) take the scheme itself as `side`: the port may send at once, and the fabric then calls the
//! scheme's dequeue or NIC hooks on it before the verb returns, exactly as if the packet had been waiting.

use std::ops::Range;

use bfcsim_core::{Bytes, FlowId, NodeId, PacketId, PortId, Rate, Time};
use bfcsim_net::int::IntStacks;
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};
use bfcsim_net::queues::{PortQueues, QueueLayout};
use bfcsim_net::routing::Routes;
use bfcsim_net::telemetry::Stamps;
use bfcsim_net::telemetry::pint::PintPort;
use bfcsim_net::topology::Topology;

use super::{Flow, Scheme};
use crate::cc::{Cc, FlowContext};
use crate::transport::{Receiver, Sender, TransportConfig};

/// Which device transmits on a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// A host's NIC, by host index.
    Host(u32),
    /// A switch egress port, by switch-port index.
    Switch(u32),
}

/// A packet entering a switch's egress queues: where it came in, where routing sends it, and a copy of it.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The switch.
    pub s: usize,
    /// The switch's local number of the port it came in through.
    pub in_local: u16,
    /// The switch port routing chose.
    pub out_sp: u32,
    /// That port's local number at the switch.
    pub out_local: u16,
    /// That port's id.
    pub egress: PortId,
    /// The packet.
    pub pkt: PacketId,
    /// A copy of it as it arrived.
    pub p: Packet,
}

/// Where a flow's receiver stands, at its destination host.
#[derive(Clone, Copy, Debug)]
pub enum Receiving<'a> {
    /// No data packet of the flow has arrived yet.
    NotStarted,
    /// Some bytes have arrived; this is the receiver.
    Partly(&'a Receiver),
    /// Every byte has arrived (the receiver's state is gone).
    Complete,
}

impl Receiving<'_> {
    /// The receiver's next expected byte of a flow of `size` bytes: what an acknowledgement of it carries.
    pub fn next_expected(&self, size: u64) -> u64 {
        match self {
            Receiving::Complete => size,
            Receiving::NotStarted => 0,
            Receiving::Partly(r) => r.rcv_nxt(),
        }
    }
}

/// The verbs of the fabric at any device.
pub trait FabricOps {
    /// The current simulated time.
    fn now(&self) -> Time;
    /// The queues of every switch port.
    fn layout(&self) -> &QueueLayout;
    /// Packet `pkt`.
    fn packet(&self, pkt: PacketId) -> &Packet;
    /// Packet `pkt`, to change its fields (a scheme stamps its own: `aux`, `class`, `upstream_q`, `hop_flags`).
    fn packet_mut(&mut self, pkt: PacketId) -> &mut Packet;
    /// Flow `id`'s fixed facts.
    fn flow(&self, id: FlowId) -> &Flow;
    /// The rate of the link leaving `port`.
    fn link_rate(&self, port: PortId) -> Rate;
    /// The device transmitting on `port`.
    fn device(&self, port: PortId) -> Device;
    /// Consumes per-hop frame `pkt` at the device it reached (counts it delivered, frees it); returns its fields.
    fn take_frame(&mut self, pkt: PacketId) -> Packet;
    /// Drops packet `pkt`, wherever the scheme holds it, for `reason`.
    fn drop_packet(&mut self, pkt: PacketId, reason: DropReason);
    /// Arms the scheme timer of `port` (a switch port or a host's NIC port) at `at`, unless it is due no later
    /// already; the scheme's `switch_timer` or `nic_timer` runs then. An earlier arming supersedes a later one.
    fn arm_timer(&mut self, port: PortId, at: Time);
    /// The words a frame carries ([`SwitchOps::send_frame_words`]), by the index in its `seq`.
    fn frame_words(&self, index: u32) -> &[u64];
    /// Frees the words stored at `index` once the frame that carried them is consumed or dropped.
    fn release_frame_words(&mut self, index: u32);
    /// Arms a timer for `token` at `at`, beside any other the scheme armed: its [`super::Scheme::token_timer`]
    /// runs then with the token. Timers due at one instant fire in the order of their tokens; a token the scheme
    /// no longer wants fires all the same (the scheme ignores it).
    fn arm_token_timer(&mut self, at: Time, token: u64);
    /// Wakes `port`: it sends now if it is idle and has something to send, else when its current packet is out.
    fn kick<S: Scheme>(&mut self, side: &mut S, port: PortId);
    /// The INT stack of every packet (empty unless congestion control has switches stamp them).
    fn int_stacks(&self) -> &IntStacks;
    /// The INT stack of every packet, to stamp, clear or echo one.
    fn int_stacks_mut(&mut self) -> &mut IntStacks;
}

/// The fabric's per-packet stamps besides INT and PINT's per-port state ([`bfcsim_net::telemetry`]): the
/// capability congestion control's NIC and switch side ([`crate::cc::nic::CcNic`]) stamps and reads them by.
pub trait Telemetry: FabricOps {
    /// The stamps of every packet (empty unless the controller asked for some).
    fn stamps(&self) -> &Stamps;
    /// The stamps of every packet, to write one.
    fn stamps_mut(&mut self) -> &mut Stamps;
    /// Switch egress `port`'s PINT state (only under a controller that asks for PINT).
    fn pint_port(&mut self, port: PortId) -> &mut PintPort;
}

/// The verbs of the fabric at a switch.
pub trait SwitchOps: FabricOps {
    /// The queues of switch port `sp` (their levels, pause states, which are empty).
    fn queues(&self, sp: u32) -> &PortQueues;
    /// The switch of switch port `sp` and the port's local number there.
    fn sw_port(&self, sp: u32) -> (usize, u16);
    /// The port id of switch port `sp`.
    fn sw_port_id(&self, sp: u32) -> PortId;
    /// The port id of local port `local` of switch `s`.
    fn switch_port(&self, s: usize, local: u16) -> PortId;
    /// The switch-port indices of switch `s`'s ports, in local order.
    fn switch_ports(&self, s: usize) -> Range<u32>;
    /// The node of switch `s`.
    fn switch_node(&self, s: usize) -> NodeId;
    /// Admits packet `e` into `queue` of its egress port's buffer by the buffer's rule (Dynamic Threshold over
    /// the static reserve, or the configured admission), or refuses it with a reason.
    fn admit(&mut self, e: &Entry, queue: usize) -> Result<(), DropReason>;
    /// Admits packet `e` into `queue` of its egress port's buffer without a test (a lossless priority under PFC,
    /// whose ingress accounting decides instead).
    fn admit_lossless(&mut self, e: &Entry, queue: usize);
    /// Queues packet `e`, admitted, in `queue` of its egress port (ECN marking on enqueue and SRF's rank when
    /// configured).
    fn push(&mut self, e: &Entry, queue: usize);
    /// Cuts data packet `e` to a header of `header` bytes (NDP's trimming): it keeps every field but its payload
    /// and is flagged trimmed, and its payload's bytes are counted lost to trimming. Returns the entry as it now
    /// is, to admit and queue like any packet; at its host the scheme's [`super::NicSide::header_arrived`] takes
    /// it.
    fn trim(&mut self, e: &Entry, header: u32) -> Entry;
    /// [`SwitchOps::push`] under a scheme that pauses queues: the packet keeps its ingress (`in_port`) and the
    /// scheme's `hop_flags` until it leaves, and the port's "link paused" clock sees the new packet.
    fn push_hop(&mut self, e: &Entry, queue: usize, hop_flags: u8);
    /// Keeps switch port `sp`'s "link paused" clock (packets waiting, none sendable) after a change.
    fn pause_changed(&mut self, sp: u32);
    /// Pauses or resumes queues of switch port `sp` (`(queue, paused)`), keeping their pause clocks, without
    /// serving the port: for a change made in `dequeued`, while the port is sending (the port looks for a ready
    /// queue once the hook returns). Returns whether a queue was resumed.
    fn set_queues_paused(
        &mut self,
        sp: u32,
        changes: impl IntoIterator<Item = (usize, bool)>,
    ) -> bool;
    /// Pauses or resumes queues of switch port `sp`, keeping their pause clocks; serves the port if a queue was
    /// resumed.
    fn set_port_paused<S: Scheme>(
        &mut self,
        side: &mut S,
        sp: u32,
        changes: impl IntoIterator<Item = (usize, bool)>,
    );
    /// Holds queue `q` of switch port `sp` back from the scheduler, or lets it go, without counting it as
    /// paused (a rate limiter's gate, not flow control). Returns whether the state changed.
    fn hold_queue(&mut self, sp: u32, q: usize, held: bool) -> bool;
    /// Sends a per-hop frame of `kind` and `size` bytes out of switch port `port` in its strict-priority control
    /// queue, with `seq` as the kind defines it; it reaches the device at the far end of the link.
    fn send_frame<S: Scheme>(
        &mut self,
        side: &mut S,
        port: PortId,
        kind: PacketKind,
        seq: u64,
        size: u32,
    );
    /// [`SwitchOps::send_frame`] of a frame that carries `words` (BFC's refresh bitmap): the fabric holds them
    /// aside until the frame is consumed, under the index in its `seq` ([`FabricOps::frame_words`]).
    fn send_frame_words<S: Scheme>(
        &mut self,
        side: &mut S,
        port: PortId,
        kind: PacketKind,
        words: &[u64],
        size: u32,
    );
    /// [`FabricOps::arm_timer`] for timers on a grid, many ports at an instant: the ports due at one instant
    /// share one event. Armings must come in non-decreasing order of `at`.
    fn arm_batched_timer(&mut self, port: PortId, at: Time);
    /// Routes packet `e` afresh at its switch, after the scheme turned it round (changed its kind and
    /// `dst_host`: NDP's return to sender): the entry toward its new destination, to admit and queue there, by
    /// the fabric's routing and load balancing. The scheme kicks the new egress port once the packet is queued.
    fn reroute(&mut self, e: &Entry) -> Entry;
    /// The port of switch `s` that leads back towards flow `id`'s source along the path its data takes under
    /// flow-level ECMP.
    fn toward_source(&self, id: FlowId, s: usize) -> PortId;
    /// How long switch port `sp` had packets but none it could send, up to now.
    fn port_blocked_time(&self, sp: u32) -> Time;
    /// The bytes the link leaving `port` has carried so far, every packet of every queue (INT's `tx_bytes`).
    fn tx_bytes(&self, port: PortId) -> u64;
}

/// The verbs of the fabric at a host's NIC.
pub trait NicOps: FabricOps {
    /// Host `h`'s NIC port.
    fn host_port(&self, h: u32) -> PortId;
    /// Host `h`'s node.
    fn host_node(&self, h: u32) -> NodeId;
    /// The slot of flow `id`'s sender while it runs at this shard's host (`None` before it starts and after
    /// it completes).
    fn flow_slot(&self, id: FlowId) -> Option<usize>;
    /// The flows waiting in host `h`'s NIC for their turn to send (its ready list).
    fn ready_flows(&self, h: u32) -> usize;
    /// The transport sender of the flow in `slot`.
    fn sender(&self, slot: usize) -> &Sender;
    /// The transport sender of the flow in `slot`, to hand it what the scheme learned (an acknowledgement, a
    /// request to resend).
    fn sender_mut(&mut self, slot: usize) -> &mut Sender;
    /// The congestion controller of the flow in `slot`, with the INT stacks its inputs may borrow.
    fn controller(&mut self, slot: usize) -> (&mut Cc, &IntStacks);
    /// The controller of the flow in `slot` took an input: the NIC re-reads its next timer and its pacing rate.
    fn controller_changed(&mut self, slot: usize);
    /// Where flow `id`'s receiver stands.
    fn receiver(&self, id: FlowId) -> Receiving<'_>;
    /// A NIC queue of host `h` for a new flow: the lowest unused one, or with `limit` queues all in use, one
    /// chosen by the flow's `hash` (flows then share it).
    fn nic_alloc(&mut self, h: u32, limit: Option<u32>, hash: u64) -> u32;
    /// A flow on NIC queue `q` of host `h` ended.
    fn nic_release(&mut self, h: u32, q: u32);
    /// Whether any NIC queue of host `h` is paused.
    fn nic_any_paused(&self, h: u32) -> bool;
    /// The paused bits of host `h`'s NIC queues `64 w` to `64 w + 63`.
    fn nic_paused_word(&self, h: u32, w: usize) -> u64;
    /// How many NIC queues host `h` has used.
    fn nic_queue_count(&self, h: u32) -> usize;
    /// Whether flow `id` (of host `h`, in `slot`) must wait for its NIC queue to be resumed; parks it if so.
    fn park_if_paused(&mut self, h: u32, id: FlowId, slot: usize) -> bool;
    /// Pauses or resumes NIC queues of host `h` (`(queue, paused)`); flows parked on a resumed queue may send
    /// again.
    fn set_nic_paused<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        changes: impl IntoIterator<Item = (u32, bool)>,
    );
    /// Puts flow `id` in its NIC's round if it can send (its window, the scheme's `may_send`).
    fn make_ready<S: Scheme>(&mut self, side: &mut S, id: FlowId);
    /// Builds a control packet of flow `id` of `kind` and `size` bytes, from its receiver to its sender when
    /// `to_sender`, else from its sender to its receiver, with `seq` and `aux` as the kind defines them.
    fn new_control(
        &mut self,
        id: FlowId,
        to_sender: bool,
        kind: PacketKind,
        seq_aux: (u64, u32),
        size: u32,
    ) -> PacketId;
    /// Queues control packet `pkt` at host `h`'s NIC, ahead of data, without waking the NIC: from a hook called
    /// while the NIC is sending (`data_sent`), which sends it next.
    fn queue_control(&mut self, h: u32, pkt: PacketId);
    /// Queues control packet `pkt` at host `h`'s NIC, ahead of data, and wakes the NIC.
    fn send_control<S: Scheme>(&mut self, side: &mut S, h: u32, pkt: PacketId);
    /// Sends the transport's reply of `kind` (an ACK, a NACK) from host `h`, the receiver of data packet `data`,
    /// to its sender, with `seq` and `aux` as the kind defines them: a scheme's answer to what the receiver's own
    /// transport does not answer (a trimmed header). A reply to a trimmed header is flagged trimmed too, and the
    /// sender takes such a NACK as a loss notice for the one segment at `seq` (as a switch's drop notice:
    /// selective repeat resends that segment, go-back-N goes back to it unless a go-back since covers it),
    /// where any other NACK is the receiver's cumulative state.
    fn reply<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        data: &Packet,
        kind: PacketKind,
        seq_aux: (u64, u32),
    );
    /// Starts the retransmission timer of the flow in `slot` (of host `h`) afresh.
    fn restart_rto(&mut self, h: u32, slot: usize);
    /// Flow `id`'s last byte is acknowledged: its sender ends (the scheme's `flow_finished` runs).
    fn complete<S: Scheme>(&mut self, side: &mut S, id: FlowId);
}

/// What a scheme reads of the fabric while it is built, and the fabric features it turns on.
pub trait Setup: SwitchOps + NicOps {
    /// The topology.
    fn topology(&self) -> &Topology;
    /// The routes.
    fn routes(&self) -> &Routes;
    /// The run's master seed, from which each component derives its RNG stream.
    fn seed(&self) -> u64;
    /// How many switches the fabric has.
    fn switch_count(&self) -> usize;
    /// How many switch ports the fabric has.
    fn sw_port_count(&self) -> usize;
    /// How many hosts the fabric has.
    fn host_count(&self) -> usize;
    /// The switch index of `node`, if it is a switch.
    fn switch_of_node(&self, node: NodeId) -> Option<usize>;
    /// The delay of the link leaving `port`: propagation plus the receiving switch's processing delay.
    fn wire_delay(&self, port: PortId) -> Time;
    /// Every flow of the run.
    fn flows(&self) -> &[Flow];
    /// The context every congestion controller starts from (line rate, base RTT, BDP).
    fn flow_context(&self) -> FlowContext;
    /// Each switch's shared buffer (`switch.buffer`).
    fn buffer(&self) -> Bytes;
    /// Payload bytes of a full data packet.
    fn payload(&self) -> u32;
    /// Header bytes of every data packet.
    fn header(&self) -> u32;
    /// Bytes of an ACK, NACK or CNP.
    fn ack_size(&self) -> u32;
    /// Bytes the running congestion control adds to each data packet (HPCC's INT).
    fn int_overhead(&self) -> u32;
    /// The NICs' reliable delivery.
    fn transport(&self) -> &TransportConfig;
    /// The scheme pauses queues (per-hop flow control): NICs check their queues' pause state.
    fn enable_pausing(&mut self);
    /// Starts the watchdog, which reports every queue paused longer than `bound` (once per pause).
    fn start_watchdog(&mut self, bound: Time);
}
