//! Per-hop, per-flow pausing on the fabric, written once for BFC (Goyal et al., NSDI 2022, §3.3) and Aquarius
//! (Li et al., APNet 2023, Algorithms 1 and 2, §3.3).
//!
//! Both are a sans-IO switch core that is told of every data packet entering and leaving an egress queue: at
//! enqueue it maps the packet to its flow's queue through a flow table keyed by (egress port, hash of the flow
//! id) and may answer with a PAUSE for the queue upstream the packet came from; at dequeue it may answer with
//! the RESUME that undoes it; a packet the buffer refuses after the enqueue is undone as if it had left at once.
//! What they decide differs (BFC counts packets over a threshold per upstream queue, §3.3.2; Aquarius counts
//! congested packets per flow-table entry and re-assigns paused flows through a QueueTable, §3.2–3.3); how they
//! meet the fabric does not, and lives here:
//!
//! - [`flow_table`]: the flow table both index by (egress port, flow-id hash), generic over its entry;
//! - [`EgressView`] and [`Egress`]: what a core sees of an egress port's queues;
//! - [`Arrival`] and [`Departure`]: a data packet entering and leaving an egress as a core is told of it; the
//!   [`Memo`] a core keeps with a packet while it is in the switch rides in the packet's hop flags, and the queue
//!   it leaves becomes its `upstreamQ` at the next hop ([`Departure::leave`]);
//! - [`Upstream`]: the PAUSE and RESUME frames sent out of the ingress port a packet came in on, counted;
//! - [`hop_rtt`]: a switch's 1-hop RTT, which sizes both schemes' thresholds;
//! - [`PerHopPausing`]: what a scheme decides; its [`SwitchSide`] and [`NicSide`] come from this module, so
//!   that the lifecycle around the decisions (admission, undoing a refused packet, `upstreamQ`, frames, NICs
//!   with a queue per flow that park the flows of a paused queue) is written once.

pub mod flow_table;

use std::ops::Range;

use bfcsim_core::{FlowId, PacketId, PortId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::PacketKind;
use bfcsim_net::queues::PortQueues;

use crate::fabric::{
    Entry, FrameCounts, HopStats, NicOps, NicSide, Scheme, Setup, SwitchFacts, SwitchOps,
    SwitchSide,
};

/// What a pausing switch sees of an egress port's queues.
pub trait EgressView {
    /// An empty queue in `range` that is not paused by the downstream (BFC §3.3.1's bitmap of empty queues),
    /// the first at or after `start` in circular order.
    fn first_empty(&self, range: Range<usize>, start: usize) -> Option<usize>;
    /// Bytes waiting in queue `q`.
    fn queue_bytes(&self, q: usize) -> u64;
    /// N_active once queue `q` has a packet: queues at `q`'s level with data that are not paused (BFC §3.3.2).
    fn active_with(&self, q: usize) -> usize;
}

/// An egress port's queues on the fabric.
pub struct Egress<'a> {
    /// The port's queues.
    pub queues: &'a PortQueues,
    /// The priority level of the packet's class.
    pub level: usize,
}

impl EgressView for Egress<'_> {
    fn first_empty(&self, range: Range<usize>, start: usize) -> Option<usize> {
        self.queues.first_empty(range, start)
    }
    fn queue_bytes(&self, q: usize) -> u64 {
        self.queues.queue_bytes(q)
    }
    fn active_with(&self, q: usize) -> usize {
        self.queues.ready_with(q, self.level)
    }
}

/// A data packet about to be enqueued at an egress.
#[derive(Clone, Debug)]
pub struct Arrival {
    /// Now.
    pub now: Time,
    /// Ingress port (local number).
    pub in_port: u16,
    /// Egress port (local number).
    pub out_port: u16,
    /// 32-bit hash of the flow id (5-tuple).
    pub hash: u32,
    /// Flow number (for exact flow tables, collision statistics and Aquarius's per-flow PAUSE).
    pub flow: u32,
    /// The `upstreamQ` the packet carries.
    pub upstream_q: u32,
    /// Wire bytes of the packet.
    pub size: u32,
    /// The sender labelled the flow as part of an incast (BFC App. A.7).
    pub incast: bool,
    /// The data queues of the packet's traffic class at this port (BFC App. A.3: classes own disjoint queues).
    pub queues: Range<u16>,
    /// Drain rate μ of the egress.
    pub rate: Rate,
    /// The priority level of the packet's class, whose queues N_active counts (BFC §3.3.2).
    pub level: usize,
    /// BFC App. B's table forbids backpressure for this (ingress, egress) pair.
    pub elide: bool,
}

impl Arrival {
    /// Data packet `e` entering its egress, with `elide` from App. B's table.
    #[inline]
    pub fn of(fab: &impl SwitchOps, e: &Entry, elide: bool) -> Arrival {
        let p = &e.p;
        let layout = fab.layout();
        Arrival {
            now: fab.now(),
            in_port: e.in_local,
            out_port: e.out_local,
            hash: p.hash,
            flow: p.flow.0,
            upstream_q: p.upstream_q,
            size: p.size,
            incast: p.incast(),
            queues: layout.class_queues(p.class),
            rate: fab.link_rate(e.egress),
            level: layout.class_level(p.class),
            elide,
        }
    }
}

/// What a core remembers about a packet from its enqueue to its departure, kept in the packet's hop flags.
pub trait Memo: Copy {
    /// The hop flags that hold it.
    fn to_bits(self) -> u8;
    /// It again, from the hop flags.
    fn from_bits(bits: u8) -> Self;
}

/// One flag: Aquarius's `congested`.
impl Memo for bool {
    fn to_bits(self) -> u8 {
        u8::from(self)
    }
    fn from_bits(bits: u8) -> bool {
        bits & 1 != 0
    }
}

/// A data packet leaving an egress queue (or refused by the buffer after its enqueue), with what the core
/// remembered about it.
#[derive(Clone, Copy, Debug)]
pub struct Departure<M> {
    /// Egress port.
    pub out_port: u16,
    /// The queue it leaves.
    pub queue: u16,
    /// Its flow-id hash.
    pub hash: u32,
    /// Its flow.
    pub flow: u32,
    /// Now.
    pub now: Time,
    /// Ingress port it came in on.
    pub in_port: u16,
    /// The `upstreamQ` it carried in.
    pub upstream_q: u32,
    /// What the core's enqueue remembered.
    pub memo: M,
}

impl<M: Memo> Departure<M> {
    /// Packet `a`, which the core put in `queue` remembering `memo`, refused by the buffer: it leaves at once.
    pub fn refused(a: &Arrival, queue: u16, memo: M) -> Departure<M> {
        Departure {
            out_port: a.out_port,
            queue,
            hash: a.hash,
            flow: a.flow,
            now: a.now,
            in_port: a.in_port,
            upstream_q: a.upstream_q,
            memo,
        }
    }

    /// Data packet `pkt` leaves switch port `sp` from `queue`: the queue becomes the packet's `upstreamQ` for
    /// the next hop and its hop flags are cleared. Returns the switch and the departure.
    #[inline(always)]
    pub fn leave(
        fab: &mut impl SwitchOps,
        sp: u32,
        pkt: PacketId,
        queue: usize,
    ) -> (usize, Departure<M>) {
        let (s, local) = fab.sw_port(sp);
        let now = fab.now();
        let p = fab.packet_mut(pkt);
        let d = Departure {
            out_port: local,
            queue: queue as u16,
            hash: p.hash,
            flow: p.flow.0,
            now,
            in_port: p.in_port,
            upstream_q: p.upstream_q,
            memo: M::from_bits(p.hop_flags),
        };
        p.upstream_q = queue as u32;
        p.hop_flags = 0;
        (s, d)
    }
}

/// A PAUSE or RESUME a core answers with, out of ingress `port`, naming `target` in the device upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal<T> {
    /// Pause `target` in the device upstream of ingress `port`.
    Pause {
        /// Ingress port (local number).
        port: u16,
        /// What it pauses upstream.
        target: T,
    },
    /// Resume it.
    Resume {
        /// Ingress port (local number).
        port: u16,
        /// What it resumes upstream.
        target: T,
    },
}

/// What a PAUSE or RESUME names upstream, carried in the frame's `seq`.
pub trait Target: Copy {
    /// The frame's `seq`.
    fn seq(self) -> u64;
}

/// BFC's target: the upstream queue (`upstreamQ`, §3.3.2).
impl Target for u32 {
    fn seq(self) -> u64 {
        self as u64
    }
}

impl<T: Target> Signal<T> {
    /// Whether it pauses.
    pub fn pause(&self) -> bool {
        matches!(self, Signal::Pause { .. })
    }

    /// The ingress port (local number) it goes out of, and what it names upstream.
    pub fn parts(&self) -> (u16, T) {
        match *self {
            Signal::Pause { port, target } | Signal::Resume { port, target } => (port, target),
        }
    }
}

/// A PAUSE or RESUME frame ready to go upstream.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The port it goes out of.
    pub port: PortId,
    /// PAUSE or RESUME.
    pub kind: PacketKind,
    /// What it names upstream.
    pub seq: u64,
    /// Its wire bytes.
    pub size: u32,
}

/// The PAUSE and RESUME frames a scheme sends upstream: their size and counts.
#[derive(Clone, Debug)]
pub struct Upstream {
    frames: FrameCounts,
    size: u32,
}

impl Upstream {
    /// Frames of `size` wire bytes.
    pub fn new(size: u32) -> Upstream {
        Upstream {
            frames: FrameCounts::default(),
            size,
        }
    }

    /// Counts `signal` of switch `s` and makes its frame, which the scheme sends with
    /// [`SwitchOps::send_frame`].
    pub fn frame<T: Target>(&mut self, fab: &impl SwitchOps, s: usize, signal: Signal<T>) -> Frame {
        let pause = signal.pause();
        let (ingress, target) = signal.parts();
        self.frames.count(pause);
        Frame {
            port: fab.switch_port(s, ingress),
            kind: if pause {
                PacketKind::PAUSE
            } else {
                PacketKind::RESUME
            },
            seq: target.seq(),
            size: self.size,
        }
    }

    /// Adds the frame counts and the core's queue assignments (`core`, summed over switches) to `stats`.
    pub fn add_to(&self, stats: &mut HopStats, core: &impl Assignments) {
        self.frames.add_to(stats);
        let (made, queue_collisions, index_collisions) = core.assignments();
        stats.assignments += made;
        stats.queue_collisions += queue_collisions;
        stats.index_collisions += index_collisions;
    }
}

/// The counts of a core's queue assignments that [`HopStats`] keeps for every pausing scheme.
pub trait Assignments {
    /// (assignments made, those that found no empty queue, packets that found their flow-table entry holding
    /// another flow's).
    fn assignments(&self) -> (u64, u64, u64);
}

/// A pausing scheme assigns queues to data packets only: `kind`'s configuration is refused unless ACKs ride the
/// control queue.
pub fn check_ack_priority(kind: &str, switch: &SwitchFacts) -> Result<(), String> {
    if switch.ack_priority {
        return Ok(());
    }
    Err(format!(
        "flow_control.kind = \"{kind}\" assigns queues to data packets: leave switch.ack_priority = true"
    ))
}

/// The largest round trip of a link's delays over switch `s`'s ports: its 1-hop RTT (BFC §3.3.2, which
/// Aquarius's HRTT follows).
pub fn hop_rtt(fab: &impl Setup, s: usize) -> Time {
    let topo = fab.topology();
    topo.nodes[fab.switch_node(s).idx()]
        .ports
        .iter()
        .map(|&p| fab.wire_delay(p) + fab.wire_delay(topo.ports[p.idx()].peer))
        .max()
        .unwrap_or(Time::ZERO)
}

/// What a core's enqueue operations decide about a data packet.
pub trait Decision {
    /// What the switch keeps with the packet until it leaves.
    type Kept: Memo;
    /// What the core's PAUSEs and RESUMEs name upstream.
    type Target: Target;
    /// The queue the packet joins.
    fn queue(&self) -> u16;
    /// What the switch keeps with it.
    fn kept(&self) -> Self::Kept;
    /// A PAUSE to send upstream.
    fn signal(&self) -> Option<Signal<Self::Target>>;
}

/// [`Decision::Kept`] of scheme `S`.
pub type KeptOf<S> = <<S as PerHopPausing>::Decision as Decision>::Kept;
/// The PAUSEs and RESUMEs of scheme `S`.
pub type SignalOf<S> = Signal<<<S as PerHopPausing>::Decision as Decision>::Target>;

/// A scheme that pauses per hop and per flow through a sans-IO switch core (BFC, Aquarius): what it decides at
/// each step. The lifecycle around the decisions is this module's, as the scheme's [`SwitchSide`] and
/// [`NicSide`]:
///
/// - **enqueue**: the core decides ([`PerHopPausing::decide`]); the buffer admits the packet into the queue it
///   named, which then keeps the [`Decision::kept`] in its hop flags, and the PAUSE, if any, goes upstream; a
///   packet the buffer refuses is undone ([`PerHopPausing::refused`]) as if it had left at once, and the RESUME
///   that undoing returns cancels its PAUSE, so that neither is sent;
/// - **dequeue**: the data packet leaves ([`Departure::leave`]: its queue becomes its `upstreamQ`) and the core
///   answers ([`PerHopPausing::departed`]); the port's "link paused" clock follows;
/// - **NICs**: a queue per flow (sharing by hash past [`PerHopPausing::nic_queues`]), and a flow whose queue is
///   paused waits, parked, for its RESUME.
pub trait PerHopPausing {
    /// What the core's enqueue decides.
    type Decision: Decision;

    /// Backpressure is elided for packet `e`'s (ingress, egress) pair (BFC App. B).
    fn elided(&self, _e: &Entry) -> bool {
        false
    }
    /// The core's enqueue operations for data packet `a` at switch `e.s`; may act on the egress's queues.
    fn decide<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry, a: &Arrival) -> Self::Decision;
    /// Undoes `decision` at switch `s` for a packet the buffer refused, `d` its departure at once; returns the
    /// RESUME that cancels exactly the PAUSE it caused.
    fn refused(
        &mut self,
        s: usize,
        d: &Departure<KeptOf<Self>>,
        decision: &Self::Decision,
    ) -> Option<SignalOf<Self>>;
    /// The core's dequeue operations for `d` leaving switch port `sp` of switch `s`; sends what they answer
    /// with ([`send`]).
    fn departed<F: SwitchOps>(
        &mut self,
        fab: &mut F,
        s: usize,
        sp: u32,
        d: &Departure<KeptOf<Self>>,
    );
    /// The scheme's PAUSE and RESUME frames.
    fn upstream(&mut self) -> &mut Upstream;
    /// `frame` is about to go upstream.
    fn sending<F: SwitchOps>(&mut self, _fab: &mut F, _frame: &Frame) {}
    /// A frame of the scheme reached switch port `sp` ([`SwitchSide::switch_frame`]).
    fn switch_frame<F: SwitchOps>(&mut self, fab: &mut F, sp: u32, pkt: PacketId);
    /// The scheme timer of switch port `sp` fired ([`SwitchSide::switch_timer`]).
    fn switch_timer<F: SwitchOps>(&mut self, _fab: &mut F, _sp: u32) {}
    /// How many queues a NIC gives flows before they share by hash (`None`: one per flow).
    fn nic_queues(&self) -> Option<u32>;
    /// A frame of the scheme reached host `h`'s NIC ([`NicSide::nic_frame`]).
    fn nic_frame<F: NicOps>(&mut self, fab: &mut F, h: u32, pkt: PacketId);
}

/// Sends `signal` of switch `s` upstream, out of the ingress port it concerns.
pub fn send<S: PerHopPausing + Scheme>(
    side: &mut S,
    fab: &mut impl SwitchOps,
    s: usize,
    signal: SignalOf<S>,
) {
    let frame = side.upstream().frame(fab, s, signal);
    side.sending(fab, &frame);
    fab.send_frame(side, frame.port, frame.kind, frame.seq, frame.size);
}

impl<S: PerHopPausing + Scheme> SwitchSide for S {
    #[inline]
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let arrival = Arrival::of(fab, e, self.elided(e));
        let decision = self.decide(fab, e, &arrival);
        let (queue, kept) = (decision.queue(), decision.kept());
        if let Err(reason) = fab.admit(e, queue as usize) {
            let d = Departure::refused(&arrival, queue, kept);
            let resume = self.refused(e.s, &d, &decision);
            assert_eq!(
                resume.is_some(),
                decision.signal().is_some(),
                "a refused packet's RESUME cancels exactly its own PAUSE"
            );
            return Err(reason);
        }
        fab.push_hop(e, queue as usize, kept.to_bits());
        if let Some(signal) = decision.signal() {
            send(self, fab, e.s, signal);
        }
        Ok(())
    }

    #[inline]
    fn dequeued<F: SwitchOps>(
        &mut self,
        fab: &mut F,
        sp: u32,
        pkt: PacketId,
        queue: usize,
        data: bool,
    ) {
        if data {
            let (s, d) = Departure::leave(fab, sp, pkt, queue);
            self.departed(fab, s, sp, &d);
        }
        fab.pause_changed(sp);
    }

    fn switch_frame<F: SwitchOps>(&mut self, fab: &mut F, sp: u32, pkt: PacketId) {
        PerHopPausing::switch_frame(self, fab, sp, pkt);
    }

    fn switch_timer<F: SwitchOps>(&mut self, fab: &mut F, sp: u32) {
        PerHopPausing::switch_timer(self, fab, sp);
    }
}

impl<S: PerHopPausing + Scheme> NicSide for S {
    #[inline]
    fn flow_started<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, _slot: usize) -> u32 {
        let hash = fab.flow(id).hash;
        fab.nic_alloc(h, self.nic_queues(), hash)
    }

    #[inline]
    fn flow_finished<F: NicOps>(&mut self, fab: &mut F, h: u32, nic_q: u32) {
        fab.nic_release(h, nic_q);
    }

    #[inline]
    fn may_send<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> bool {
        !fab.park_if_paused(h, id, slot)
    }

    fn nic_frame<F: NicOps>(&mut self, fab: &mut F, h: u32, pkt: PacketId) {
        PerHopPausing::nic_frame(self, fab, h, pkt);
    }
}
