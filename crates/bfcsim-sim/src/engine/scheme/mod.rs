//! The seam between the engine and the schemes that act inside the network: one interface,
//! [`SchemeSide`], through which a scheme's switch side and NIC side see and act on packets at fixed points,
//! dispatched through the [`Scheme`] enum with a `match`, so that every call is static and inlines.
//!
//! The engine moves packets and keeps time; it never asks which scheme runs. It calls the running scheme's
//! side at these points, in this order for a packet's life:
//!
//! | point | engine call | when |
//! |---|---|---|
//! | setup | [`SchemeSide::init`] | once, after the network and congestion control exist |
//! | NIC: a flow starts | [`SchemeSide::flow_started`] | the flow's sender is created at its source NIC; returns the flow's NIC queue |
//! | NIC: scheduling | [`SchemeSide::nic_poll`] | the NIC is free: the scheme may send a packet it schedules itself (ExpressPass's rate-limited credits) before control frames and data |
//! | NIC: scheduling | [`SchemeSide::nic_blocked`] | the NIC is free, or has just sent a control frame: whether all its flows are stopped, so that it neither goes round them nor wakes for them |
//! | NIC: scheduling | [`SchemeSide::may_send`] | before a flow joins its NIC's round and before each of its packets leaves |
//! | NIC: a data packet leaves | [`SchemeSide::data_sent`] | the packet is built; the scheme may stamp it (the credit it answers, its priority) |
//! | switch: routing | [`SchemeSide::route`] | a packet entered a switch; the scheme may choose its egress (ExpressPass's credits retrace their data's path) |
//! | switch: admission and enqueue | [`SchemeSide::enqueue`] | a packet that does not ride the control queue entered a switch and was routed; the scheme picks its queue, admits or refuses it, and queues it |
//! | switch: dequeue | [`SchemeSide::dequeued`] | the port's scheduler took a packet out of its queue for transmission |
//! | control-frame arrival | [`SchemeSide::frame`] | a per-hop frame (PAUSE, RESUME, refresh) reached the device at the far end of its link |
//! | control-frame arrival | [`SchemeSide::packet_arrived`] | one of the scheme's own end-to-end control packets (a credit, a grant) reached its host |
//! | NIC: data arrives | [`SchemeSide::data_arrived`] | a data packet reached its destination and the flow's receiver took it |
//! | timers | [`SchemeSide::timer`] | the timer the scheme armed on a port ([`Shard::arm_scheme_timer`], or [`Shard::arm_batched_timer`] for timers on a grid) is due |
//! | NIC: a flow ends | [`SchemeSide::flow_finished`] | every byte of the flow is acknowledged |
//!
//! Every method has a default that does what a network without the scheme does (queues that only drop), so a
//! scheme implements just the points it acts at. Its state machines are sans-IO and live in `bfcsim-schemes`
//! or `bfcsim-net` (BFC's [`bfcsim_schemes::bfc::BfcSwitch`], PFC's [`bfcsim_net::pfc::PfcIngress`]): handed
//! `now` and an input, they answer with actions (a queue, a PAUSE to send, a drop), never touching the event
//! queue. The module here is the scheme's engine side: it describes packets to its state machines and carries
//! out their answers with the engine's helpers (pushing into a queue, [`Shard::send_frame`], pausing a queue,
//! [`Shard::arm_scheme_timer`]). A scheme's timers are one event kind for all schemes, `SchemeTimer(port)`, at
//! most one pending per port (a switch port or a host's NIC port); the scheme keeps its own deadlines behind it.
//! Timers that fall on a grid, many ports at an instant, are armed in batches that share one event
//! (`SchemeTick`) per instant and fire as their own events would.
//!
//! # Adding a scheme
//!
//! A scheme is a variant of the `[flow_control]` configuration ([`crate::FlowControl`]), a module here whose
//! state type implements [`SchemeSide`], and one line in the `schemes!` list below; the crate doc
//! (`bfcsim_sim`) has a worked example. Unit-test the state machine alone (scripted inputs, no event loop),
//! then the scheme end to end through `bfcsim_sim::Sim` (`crates/bfcsim-sim/tests`).

mod aquarius;
mod bfc;
mod expresspass;
mod homa;
mod pfc;

use super::*;

/// A packet entering a switch's egress queues, as [`SchemeSide::enqueue`] sees it.
pub(super) struct Entry {
    /// The switch (index into `Shard::switches`).
    pub s: usize,
    /// The switch's local number of the port it came in through.
    pub in_local: u16,
    /// The switch port routing chose (index into `Shard::sw_ports`).
    pub out_sp: u32,
    /// That port's local number at the switch.
    pub out_local: u16,
    /// That port's id.
    pub egress: PortId,
    /// The packet.
    pub pkt: PacketId,
    /// A copy of it.
    pub p: Packet,
}

/// A scheme's switch and NIC sides: what it does at each of the engine's fixed points (see the module doc for
/// when each is called). Methods take the whole shard: the scheme reads what it needs (queues, the MMU, links)
/// and acts through the engine's helpers; its own state is its variant of [`Scheme`] in `Shard::scheme`.
pub(super) trait SchemeSide: Sized {
    /// Builds the scheme's state for a shard whose network, flows and congestion control exist; may arm the
    /// watchdog ([`Shard::start_watchdog`]) and timers.
    fn init(sh: &mut Shard) -> Result<Self, String>;

    /// Routing at switch `s` of packet `p`: `Some(port)` sends it out of `port` instead of where flow-level
    /// ECMP or spraying would.
    #[inline(always)]
    fn route(_sh: &Shard, _s: usize, _p: &Packet) -> Option<PortId> {
        None
    }

    /// Admission and enqueue of packet `e` at a switch: pick its queue, admit it into the buffer (or refuse it
    /// with a reason, undoing anything the scheme did for it), and queue it ([`Shard::push_admitted`]). Packets
    /// that ride the strict-priority control queue (per-hop frames, and ACKs, NACKs and CNPs with
    /// `switch.ack_priority`) do not come here. On refusal the engine drops the packet.
    #[inline(always)]
    fn enqueue(sh: &mut Shard, e: &Entry) -> Result<(), DropReason> {
        let queue = sh.data_queue_for(e.p.class, e.p.hash);
        sh.admit_and_push(e, queue)
    }

    /// Packet `pkt` (data when `data`) left queue `queue` of switch port `sp`, whose link it is about to start
    /// on; its buffer bytes are already released. The port is mid-send: a queue of `sp` resumed here must not
    /// kick it ([`Shard::set_queues_paused`], not [`Shard::set_port_paused`]); the sender looks for a ready
    /// queue afterwards.
    #[inline(always)]
    fn dequeued(_sh: &mut Shard, _sp: u32, _pkt: PacketId, _queue: usize, _data: bool) {}

    /// A per-hop frame reached the device owning `port` (the upstream of the frame's sender). The scheme
    /// consumes it ([`Shard::take_frame`], or drops it with a reason).
    fn frame(_sh: &mut Shard, _port: PortId, _pkt: PacketId) {
        unreachable!("per-hop frames exist only under a scheme that sends them")
    }

    /// The scheme timer of `port` (a switch port or a host's NIC port) is due.
    fn timer(_sh: &mut Shard, _port: PortId) {}

    /// Flow `id` starts at host `h`, its sender in slot `slot`: returns its NIC queue (the `upstreamQ` its
    /// packets carry, and what a pause of the NIC stops).
    #[inline(always)]
    fn flow_started(_sh: &mut Shard, _h: u32, _id: FlowId, _slot: usize) -> u32 {
        0
    }

    /// The NIC of host `h` is free: a packet the scheme schedules at the NIC itself, sent before control frames
    /// and data (`None`: nothing now; the scheme arms its timer to wake the NIC when it will have one).
    #[inline(always)]
    fn nic_poll(_sh: &mut Shard, _h: u32) -> Option<PacketId> {
        None
    }

    /// Data packet `pkt` of flow `slot` is about to leave host `h` (it passed [`SchemeSide::may_send`]): the
    /// scheme may stamp it and queue control packets with [`Shard::queue_control`]. The NIC is in the middle of
    /// its transmission: nothing here may wake it ([`Shard::send_control`] would).
    #[inline(always)]
    fn data_sent(_sh: &mut Shard, _h: u32, _slot: usize, _pkt: PacketId) {}

    /// Data packet `p` reached its destination host `h` and the flow's receiver took it; the receiver now holds
    /// `held` bytes of the flow (its size once complete, and for a copy arriving after that).
    #[inline(always)]
    fn data_arrived(_sh: &mut Shard, _h: u32, _p: &Packet, _held: u64) {}

    /// One of the scheme's own control packets ([`PacketKind::is_scheme_control`]) reached host `h`.
    fn packet_arrived(_sh: &mut Shard, _h: u32, _p: &Packet) {
        unreachable!("a scheme's control packets exist only under that scheme")
    }

    /// The flow on NIC queue `nic_q` of host `h` finished.
    #[inline(always)]
    fn flow_finished(_sh: &mut Shard, _h: u32, _nic_q: u32) {}

    /// Whether every flow of host `h`'s NIC is stopped (its NIC queues all paused): the NIC then sends only
    /// control frames and leaves its ready flows in their order, where going round them would only park each
    /// one ([`SchemeSide::may_send`]). The NIC is woken when a queue resumes ([`Shard::set_nic_paused`]). The
    /// engine asks only while one of the NIC's queues is paused.
    #[inline(always)]
    fn nic_blocked(_sh: &Shard, _h: u32) -> bool {
        false
    }

    /// Whether flow `id` (in slot `slot` of host `h`) may send now, as far as the scheme is concerned; the scheme
    /// re-readies it ([`Shard::make_ready`]) when that changes.
    #[inline(always)]
    fn may_send(_sh: &mut Shard, _h: u32, _id: FlowId, _slot: usize) -> bool {
        true
    }

    /// Calls `count` on every packet the scheme holds outside the NICs' queues, the switch queues and the
    /// wires (ExpressPass's credits waiting for a NIC's rate limiter), for the conservation check.
    fn census(_sh: &Shard, _count: &mut impl FnMut(PacketId)) {}

    /// Adds the scheme's end-of-run invariant violations to `v`.
    fn violations(_sh: &Shard, _v: &mut Vec<String>) {}

    /// Adds the scheme's own counts to `stats`.
    fn add_stats(_sh: &Shard, _stats: &mut HopStats) {}

    /// How long `port`'s link was paused up to now, for the flow-control report; `None` for a port that is
    /// never paused. By default a switch port's time with packets waiting and none it could send.
    fn link_paused_time(sh: &Shard, port: PortId) -> Option<Time> {
        match sh.wires[port.idx()].owner {
            Owner::Switch(sp) => Some(sh.port_blocked_time(sp)),
            Owner::Host(_) => None,
        }
    }
}

/// No scheme in the network: queues only drop, NICs send whenever their flows may.
pub(super) struct Plain;

impl SchemeSide for Plain {
    fn init(_sh: &mut Shard) -> Result<Self, String> {
        Ok(Plain)
    }
}

/// Declares the schemes: each line is `config variant => Scheme variant(state type)`, where the configuration
/// variant is [`crate::FlowControl`]'s and the state type implements [`SchemeSide`]. Generates the [`Scheme`]
/// enum, `Shard::init_scheme` and the `dispatch!` macro that calls a [`SchemeSide`] method of the running
/// scheme (`$d` is the `$` token, so that the generated macro can have repetitions of its own).
macro_rules! schemes {
    ($d:tt $($config:ident => $variant:ident($side:ty)),* $(,)?) => {
        /// The running scheme and its state; matched to dispatch [`SchemeSide`] calls.
        // An explicit tag byte: each of the seam's several calls per packet-hop reads it and jumps, where the
        // default layout hid the tag in a niche of one variant's fields and decoded it at every call.
        #[repr(u8)]
        pub(super) enum Scheme {
            $(
                #[allow(missing_docs)]
                $variant($side),
            )*
        }

        impl Shard {
            /// Builds the configured scheme's state (after congestion control's).
            pub(super) fn init_scheme(&mut self) -> Result<(), String> {
                self.scheme = match self.params.flow_control {
                    $(FlowControl::$config { .. } => Scheme::$variant(<$side>::init(self)?),)*
                };
                Ok(())
            }
        }

        /// Calls `SchemeSide::$method($sh, args...)` of the running scheme.
        macro_rules! dispatch {
            ($sh:expr, $method:ident($d($arg:expr),*)) => {
                match $sh.scheme {
                    $(Scheme::$variant(_) => <$side as SchemeSide>::$method($sh, $d($arg),*),)*
                }
            };
        }
    };
}

schemes! { $
    None => Plain(Plain),
    Bfc => Bfc(bfc::Bfc),
    Pfc => Pfc(pfc::Pfc),
    ExpressPass => ExpressPass(expresspass::ExpressPass),
    Homa => Homa(homa::Homa),
    Aquarius => Aquarius(aquarius::Aquarius),
}

impl Shard {
    /// [`SchemeSide::enqueue`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_enqueue(&mut self, e: &Entry) -> Result<(), DropReason> {
        dispatch!(self, enqueue(e))
    }

    /// [`SchemeSide::dequeued`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_dequeued(&mut self, sp: u32, pkt: PacketId, queue: usize, data: bool) {
        dispatch!(self, dequeued(sp, pkt, queue, data))
    }

    /// [`SchemeSide::frame`] of the running scheme.
    pub(super) fn scheme_frame(&mut self, port: PortId, pkt: PacketId) {
        dispatch!(self, frame(port, pkt))
    }

    /// [`SchemeSide::route`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_route(&self, s: usize, p: &Packet) -> Option<PortId> {
        dispatch!(self, route(s, p))
    }

    /// [`SchemeSide::flow_started`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_flow_started(&mut self, h: u32, id: FlowId, slot: usize) -> u32 {
        dispatch!(self, flow_started(h, id, slot))
    }

    /// [`SchemeSide::nic_poll`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_nic_poll(&mut self, h: u32) -> Option<PacketId> {
        dispatch!(self, nic_poll(h))
    }

    /// [`SchemeSide::data_sent`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_data_sent(&mut self, h: u32, slot: usize, pkt: PacketId) {
        dispatch!(self, data_sent(h, slot, pkt))
    }

    /// [`SchemeSide::data_arrived`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_data_arrived(&mut self, h: u32, p: &Packet, held: u64) {
        dispatch!(self, data_arrived(h, p, held))
    }

    /// [`SchemeSide::packet_arrived`] of the running scheme.
    pub(super) fn scheme_packet_arrived(&mut self, h: u32, p: &Packet) {
        dispatch!(self, packet_arrived(h, p))
    }

    /// [`SchemeSide::flow_finished`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_flow_finished(&mut self, h: u32, nic_q: u32) {
        dispatch!(self, flow_finished(h, nic_q))
    }

    /// [`SchemeSide::nic_blocked`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_nic_blocked(&self, h: u32) -> bool {
        dispatch!(self, nic_blocked(h))
    }

    /// [`SchemeSide::may_send`] of the running scheme.
    #[inline(always)]
    pub(super) fn scheme_may_send(&mut self, h: u32, id: FlowId, slot: usize) -> bool {
        dispatch!(self, may_send(h, id, slot))
    }

    /// [`SchemeSide::census`] of the running scheme.
    pub(super) fn scheme_census(&self, count: &mut impl FnMut(PacketId)) {
        dispatch!(self, census(count))
    }

    /// [`SchemeSide::violations`] of the running scheme.
    pub(super) fn scheme_violations(&self, v: &mut Vec<String>) {
        dispatch!(self, violations(v))
    }

    /// [`SchemeSide::add_stats`] of the running scheme.
    pub(super) fn scheme_add_stats(&self, stats: &mut HopStats) {
        dispatch!(self, add_stats(stats))
    }

    /// How long `port`'s link was paused up to now, for the flow-control report: under PFC the time any priority
    /// of its transmitter (a switch port or a NIC) was paused by the device downstream, what `pfc.txt` shows;
    /// otherwise the time a switch port had packets but none it could send (BFC pauses single queues). `None`
    /// for a port that is never paused.
    pub fn link_paused_time(&self, port: PortId) -> Option<Time> {
        dispatch!(self, link_paused_time(port))
    }

    /// The time the scheme timer of `port` is due (`Time::MAX`: none pending).
    fn scheme_timer_at(&mut self, port: PortId) -> &mut Time {
        match self.wires[port.idx()].owner {
            Owner::Switch(sp) => &mut self.sw_ports[sp as usize].timer_at,
            Owner::Host(h) => &mut self.hosts[h as usize].timer_at,
        }
    }

    /// Arms the scheme timer of `port` (a switch port or a host's NIC port) at `at`, unless it is already due
    /// no later. One `SchemeTimer` event is pending per port at most in effect: an earlier arming supersedes a
    /// later one, which then fires as a no-op.
    pub(super) fn arm_scheme_timer(&mut self, port: PortId, at: Time) {
        let due = self.scheme_timer_at(port);
        if at < *due {
            *due = at;
            self.events.push(at, Event::SchemeTimer(port));
        }
    }

    /// A `SchemeTimer` event of `port` fired: the scheme's [`SchemeSide::timer`] runs if it is the live one.
    pub(super) fn fire_scheme_timer(&mut self, port: PortId) {
        let now = self.now;
        let due = self.scheme_timer_at(port);
        if *due != now {
            return;
        }
        *due = Time::MAX;
        dispatch!(self, timer(port))
    }

    /// [`Shard::arm_scheme_timer`] for a scheme whose timers fall on few instants, many ports at each (BFC's
    /// refreshes, all on one grid): the ports due at one instant share one event. They fire as separate
    /// events would, in the event queue's order for the instant, but the queue holds one key per instant
    /// where it held hundreds: a bucket of more than seven keys keeps the rest in a heap, whose pushes and
    /// pops were 1.6% of a BFC run's instructions. Armings must come in non-decreasing order of `at` (a grid
    /// ahead of a clock that only moves forward), and a scheme should not mix this with
    /// [`Shard::arm_scheme_timer`] at one instant: the batch pops where its first timer would.
    pub(super) fn arm_batched_timer(&mut self, port: PortId, at: Time) {
        let due = self.scheme_timer_at(port);
        if at >= *due {
            return;
        }
        *due = at;
        if self.timer_batches.arm(port, at) {
            self.events.push(at, Event::SchemeTick);
        }
    }

    /// The batch of scheme timers due now fired: each port's, in the order their own events would pop.
    pub(super) fn fire_timer_batch(&mut self) {
        let now = self.now;
        let mut ports = self.timer_batches.take(now);
        // The batch's event was counted as one; it stands for a timer per port.
        self.counters.events += ports.len() as u64 - 1;
        ports.sort_unstable_by_key(|&p| EventQueue::order_at(now, Event::SchemeTimer(p)));
        for &port in &ports {
            self.fire_scheme_timer(port);
        }
        self.timer_batches.recycle(ports);
    }
}

/// The pending batches of [`Shard::arm_batched_timer`], by instant.
#[derive(Default)]
pub(super) struct TimerBatches {
    /// Each instant with ports due, in time order, and the ports.
    due: std::collections::VecDeque<(Time, Vec<PortId>)>,
    /// Emptied port lists, kept for their capacity.
    spare: Vec<Vec<PortId>>,
}

impl TimerBatches {
    /// Adds `port` to the batch at `at`, no earlier than any pending; returns whether the batch is new (its
    /// event is to be scheduled).
    fn arm(&mut self, port: PortId, at: Time) -> bool {
        if let Some((t, ports)) = self.due.back_mut() {
            assert!(*t <= at, "batched timers are armed in time order");
            if *t == at {
                ports.push(port);
                return false;
            }
        }
        let mut ports = self.spare.pop().unwrap_or_default();
        ports.push(port);
        self.due.push_back((at, ports));
        true
    }

    /// The ports of the batch due at `now`, the earliest.
    fn take(&mut self, now: Time) -> Vec<PortId> {
        let (t, ports) = self.due.pop_front().expect("a batch is pending");
        assert_eq!(t, now, "batches fire in time order");
        ports
    }

    fn recycle(&mut self, mut ports: Vec<PortId>) {
        ports.clear();
        self.spare.push(ports);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_is_its_own_event_beside_every_port_s_timer() {
        let tick = Event::SchemeTick.to_bits();
        assert!(matches!(Event::from_bits(tick), Event::SchemeTick));
        assert_eq!(
            tick >> PORT_BITS,
            Event::SchemeTimer(PortId(0)).to_bits() >> PORT_BITS
        );
        let last = PortId(TICK_PORT - 1);
        assert!(
            matches!(Event::from_bits(Event::SchemeTimer(last).to_bits()), Event::SchemeTimer(p) if p == last)
        );
    }

    #[test]
    fn batches_gather_the_ports_of_one_instant_in_time_order() {
        let mut b = TimerBatches::default();
        assert!(b.arm(PortId(7), Time(10)), "a new instant needs its event");
        assert!(!b.arm(PortId(3), Time(10)));
        assert!(b.arm(PortId(5), Time(20)));
        assert_eq!(b.take(Time(10)), vec![PortId(7), PortId(3)]);
        let ports = b.take(Time(20));
        assert_eq!(ports, vec![PortId(5)]);
        b.recycle(ports);
        assert!(b.arm(PortId(1), Time(30)));
        assert_eq!(b.take(Time(30)), vec![PortId(1)]);
    }

    #[test]
    #[should_panic(expected = "in time order")]
    fn a_batch_armed_before_a_pending_one_is_refused() {
        let mut b = TimerBatches::default();
        b.arm(PortId(1), Time(20));
        b.arm(PortId(2), Time(10));
    }
}
