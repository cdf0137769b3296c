//! What the fabric asks of a scheme: its switch side ([`SwitchSide`]) and its NIC side ([`NicSide`]), together a
//! [`Scheme`]. Every hook has a default that does what a network without the scheme does (queues that only
//! drop, NICs that send whenever their flows may), so a scheme implements just the points it acts at.

use bfcsim_core::{FlowId, PacketId, PortId, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::Packet;

use super::{Device, Entry, HopStats, NicOps, SwitchOps};

/// A scheme's switch side: what it does as packets enter and leave switch queues and as its frames and timers
/// reach switch ports.
pub trait SwitchSide {
    /// Routing at switch `s` of packet `p`: `Some(port)` sends it out of `port` instead of where flow-level
    /// ECMP or spraying would.
    #[inline(always)]
    fn route<F: SwitchOps>(&self, _fab: &F, _s: usize, _p: &Packet) -> Option<PortId> {
        None
    }

    /// Admission and enqueue of packet `e` at a switch: pick its queue, admit it into the buffer (or refuse it
    /// with a reason, undoing anything the scheme did for it), and queue it ([`SwitchOps::push`]). Packets
    /// that ride the strict-priority control queue (per-hop frames, and ACKs, NACKs and CNPs with
    /// `switch.ack_priority`) do not come here. On refusal the fabric drops the packet. By default the packet
    /// joins its class's queue for its hash.
    #[inline(always)]
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let queue = fab.layout().data_queue_for(e.p.class, e.p.hash);
        fab.admit(e, queue)?;
        fab.push(e, queue);
        Ok(())
    }

    /// Packet `pkt` (data when `data`) left queue `queue` of switch port `sp`, whose link it is about to start
    /// on; its buffer bytes are already released. The port is mid-send: a queue of `sp` resumed here must not
    /// serve it ([`SwitchOps::set_queues_paused`], not [`SwitchOps::set_port_paused`]); the port looks for a
    /// ready queue afterwards.
    #[inline(always)]
    fn dequeued<F: SwitchOps>(
        &mut self,
        _fab: &mut F,
        _sp: u32,
        _pkt: PacketId,
        _queue: usize,
        _data: bool,
    ) {
    }

    /// A per-hop frame `pkt` of the scheme reached switch port `sp` (the upstream of the frame's sender). The
    /// scheme consumes it ([`super::FabricOps::take_frame`], or drops it with a reason).
    fn switch_frame<F: SwitchOps>(&mut self, _fab: &mut F, _sp: u32, _pkt: PacketId) {
        unreachable!("per-hop frames exist only under a scheme that sends them")
    }

    /// The scheme timer of switch port `sp` is due.
    fn switch_timer<F: SwitchOps>(&mut self, _fab: &mut F, _sp: u32) {}

    /// Adds the scheme's end-of-run invariant violations to `v`.
    fn violations<F: SwitchOps>(&self, _fab: &F, _v: &mut Vec<String>) {}
}

/// A scheme's NIC side: what it does as flows start, send, receive and end at hosts, and as its frames, control
/// packets and timers reach NICs.
pub trait NicSide {
    /// Flow `id` starts at host `h`, its sender in `slot`: returns its NIC queue (the `upstreamQ` its packets
    /// carry, and what a pause of the NIC stops).
    #[inline(always)]
    fn flow_started<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _id: FlowId, _slot: usize) -> u32 {
        0
    }

    /// The NIC of host `h` is free: a packet the scheme schedules at the NIC itself, sent before control
    /// frames and data (`None`: nothing now; the scheme arms its timer to wake the NIC when it will have one).
    #[inline(always)]
    fn nic_poll<F: NicOps>(&mut self, _fab: &mut F, _h: u32) -> Option<PacketId> {
        None
    }

    /// Whether every flow of host `h`'s NIC is stopped (its NIC queues all paused): the NIC then sends only
    /// control frames and leaves its ready flows in their order, where going round them would only park each
    /// one ([`NicSide::may_send`]). The NIC is woken when a queue resumes ([`NicOps::set_nic_paused`]). The
    /// fabric asks only while one of the NIC's queues is paused.
    #[inline(always)]
    fn nic_blocked<F: NicOps>(&self, _fab: &F, _h: u32) -> bool {
        false
    }

    /// Whether flow `id` (in `slot` of host `h`) may send now, as far as the scheme is concerned; the scheme
    /// re-readies it ([`NicOps::make_ready`]) when that changes.
    #[inline(always)]
    fn may_send<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _id: FlowId, _slot: usize) -> bool {
        true
    }

    /// Data packet `pkt` of the flow in `slot` is about to leave host `h` (it passed [`NicSide::may_send`]): the
    /// scheme may stamp it and queue control packets with [`NicOps::queue_control`]. The NIC is in the middle
    /// of its transmission: nothing here may wake it ([`NicOps::send_control`] would).
    #[inline(always)]
    fn data_sent<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _slot: usize, _pkt: PacketId) {}

    /// Data packet `p` reached its destination host `h` and the flow's receiver took it; the receiver now holds
    /// `held` bytes of the flow (its size once complete, and for a copy arriving after that).
    #[inline(always)]
    fn data_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _p: &Packet, _held: u64) {}

    /// One of the scheme's own end-to-end control packets (`PacketKind::is_scheme_control`) reached host `h`.
    fn packet_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _p: &Packet) {
        unreachable!("a scheme's control packets exist only under that scheme")
    }

    /// Data packet `data` reached its destination and the receiver answers it with `reply` (an ACK, a NACK, a
    /// CNP): the scheme may echo its own bits in `reply.mark`, which its sender side reads in
    /// [`NicSide::reply_arrived`] (and a controller in its `AckSignal`).
    #[inline(always)]
    fn echo(&self, _data: &Packet, _reply: &mut Packet) {}

    /// The retransmission timer of flow `id` (in `slot` of host `h`) fired with data in flight, before the
    /// transport marks what it resends.
    #[inline(always)]
    fn timed_out<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _id: FlowId, _slot: usize) {}

    /// A reply (ACK, NACK, CNP) of the flow in `slot` reached its sender, host `h`, before the transport and the
    /// controller take it.
    #[inline(always)]
    fn reply_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _slot: usize, _p: &Packet) {}

    /// A data packet a switch trimmed ([`SwitchOps::trim`]) reached its destination host `h`: its payload is
    /// gone, and the flow's receiver never sees it. By default nothing answers it; its loss is left to the
    /// transport's recovery.
    #[inline(always)]
    fn header_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _p: &Packet) {}

    /// The flow on NIC queue `nic_q` of host `h` finished.
    #[inline(always)]
    fn flow_finished<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _nic_q: u32) {}

    /// A per-hop frame `pkt` of the scheme reached host `h`'s NIC. The scheme consumes it.
    fn nic_frame<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _pkt: PacketId) {
        unreachable!("per-hop frames exist only under a scheme that sends them")
    }

    /// The scheme timer of host `h`'s NIC port is due.
    fn nic_timer<F: NicOps>(&mut self, _fab: &mut F, _h: u32) {}

    /// Calls `count` on every packet the scheme holds outside the NICs' queues, the switch queues and the
    /// wires (ExpressPass's credits waiting for a NIC's rate limiter), for the conservation check.
    fn census(&self, _count: &mut impl FnMut(PacketId)) {}
}

/// A scheme: its switch side and its NIC side, and what it reports.
pub trait Scheme: SwitchSide + NicSide + Sized {
    /// Adds the scheme's own counts to `stats`.
    fn add_stats(&self, _stats: &mut HopStats) {}

    /// A timer armed with [`super::FabricOps::arm_token_timer`] for `token` is due.
    fn token_timer<F: SwitchOps + NicOps>(&mut self, _fab: &mut F, _token: u64) {
        unreachable!("token timers exist only under a scheme that arms them")
    }

    /// How long `port`'s link was paused up to now, for the flow-control report; `None` for a port that is
    /// never paused. By default a switch port's time with packets waiting and none it could send.
    fn link_paused_time<F: SwitchOps>(&self, fab: &F, port: PortId) -> Option<Time> {
        match fab.device(port) {
            Device::Switch(sp) => Some(fab.port_blocked_time(sp)),
            Device::Host(_) => None,
        }
    }
}

/// No scheme in the network: queues only drop, NICs send whenever their flows may.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain;

impl SwitchSide for Plain {}
impl NicSide for Plain {}
impl Scheme for Plain {}

/// The parameters of a scheme that has none: an empty `[flow_control]` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl super::Describe for Plain {
    const KIND: &'static str = "none";
    const SUMMARY: &'static str = "none: queues only drop";
    const QUEUE_LEFT: super::QueueLeft = super::QueueLeft::ByClass;
    type Config = NoParams;
    type Stats = super::NoStats;

    fn new(_cfg: &NoParams, _fab: &mut impl super::Setup) -> Result<Plain, String> {
        Ok(Plain)
    }
}
