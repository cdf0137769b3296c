//! The engine: one event queue driving links, switch egress ports and host NICs.
//!
//! Each port keeps the packets on its wire in a list threaded through them and has at most two pending events:
//! the arrival of the wire's head packet (`Deliver`) and, only while packets wait behind the one being
//! serialized, the end of that serialization (`TxDone`). The event queue therefore grows with the number of
//! ports, not with the packets in flight. Flow arrivals come from a sorted list with one pending event;
//! retransmission timers live in a [`TimerQueue`] with one pending event.
//!
//! A shard is its [`Fabric`] and its scheme, kept apart: the fabric owns every piece of the network and never
//! asks which scheme runs; each of its methods that may reach a scheme's hook takes the running scheme as
//! `side` ([`bfcsim_schemes::fabric`] has the hooks, the call order and the verbs; [`ops`] implements the verbs,
//! `bfcsim-registry` lists the schemes, [`registry`] is what the engine runs over them). The pausing of queues that per-hop flow control shares lives in [`pause`],
//! a scheme's timers in [`scheme_timer`]. What congestion control asks of NICs and switches besides ACKs (CNPs,
//! INT, drop notices) is [`CcNic`]'s, called at its points; the NIC's rate limiter and the controllers' timers
//! live in [`pacing`]. ECN marking, per queue and on a buffer
//! pool's occupancy (BCC), is switch configuration that composes with any scheme and lives in [`marking`].

mod build;
mod connections;
mod exchange;
mod explain;
mod failures;
mod flows;
mod invariants;
mod log;
mod marking;
mod nic;
mod observe;
mod ops;
mod pacing;
mod paths;
mod pause;
mod receive;
mod registry;
mod rto;
mod scheme_timer;
mod switch;
mod waiting;
mod wire;

pub use explain::HopRecord;
pub use log::{Logged, PausePairs};
pub(crate) use paths::node_work;
pub(crate) use pause::find_cycle;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use bfcsim_core::rng::{self, Rng, Stream, stream_seed};
use bfcsim_core::{
    Bytes, EventBits, EventQueue, FlowId, FlowSpec, LogHistogram, NodeId, PacketId, PortId, Rate,
    Slots, Time,
};
use bfcsim_net::ecn::{MarkPoint, PoolMarking, SinceMark};
use bfcsim_net::int::{IntHop, IntStacks};
use bfcsim_net::mmu::{Charge, DropReason, Mmu, MmuLayout};
use bfcsim_net::packet::{Flags, Packet, PacketKind, Packets};
use bfcsim_net::queues::{NO_TAG, PortQueues, QueueLayout, Run};
use bfcsim_net::routing::{LoadBalancing, Routes, ecmp_hash};
use bfcsim_net::telemetry::pint::PintPort;
use bfcsim_net::telemetry::{PacketStamps, Stamps};
use bfcsim_net::topology::{NodeKind, Topology};
use bfcsim_schemes::cc::nic::{CcNic, loss_notice};
use bfcsim_schemes::cc::{Cc, CcConfig, CongestionControl, FlowContext, Notifier};
use bfcsim_schemes::fabric::{Device, Entry, Flow, HopStats, QueueLeft, Scheme};
use bfcsim_schemes::paths::{Feedback, Paths, route_hash};
use bfcsim_schemes::transport::{Receiver, Reply, Sender};
use rand::RngExt;

use crate::config::{Connections, NicConfig, NicScheduler, Scheduler, SwitchConfig};
use crate::timers::TimerQueue;
use connections::{Connection, ConnectionPool};
pub(crate) use exchange::Mail;
use exchange::*;
use explain::Explain;
use flows::*;
use nic::*;
pub(crate) use registry::{AnyScheme, RunScheme};
pub use registry::{FlowControl, SchemeEntry};
use scheme_timer::{TimerBatches, TokenTimers};
use switch::*;
pub use waiting::{FlowDeps, Notify};
use waiting::{Notice, Waiting};
use wire::*;

/// Everything a run needs besides the topology and the flows.
#[derive(Clone, Debug)]
pub struct SimParams {
    /// Switch model.
    pub switch: SwitchConfig,
    /// NIC model.
    pub nic: NicConfig,
    /// End-to-end congestion control.
    pub cc: CcConfig,
    /// Per-hop flow control.
    pub flow_control: FlowControl,
    /// Master seed of every RNG stream.
    pub seed: u64,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The port finished serializing a packet and has more waiting.
    TxDone(PortId),
    /// The head packet of the port's wire reaches the far end.
    Deliver(PortId),
    /// The next flow of the sorted flow list starts.
    Arrival,
    /// Notices and starts of waiting flows are due ([`waiting`]). Encoded as an `Arrival` of port 1, leaving
    /// every other event's bits as they were.
    Released,
    /// A fabric event's rate or routing change is due ([`failures`]). Encoded as an `Arrival` of port 2.
    FabricChange,
    /// The earliest retransmission timer is due.
    Timer,
    /// A timer the running scheme armed on a port (a switch port or a host's NIC port) is due; schemes keep
    /// their own deadlines behind it ([`scheme_timer`]).
    SchemeTimer(PortId),
    /// The scheme timers armed in one batch for this instant are due ([`Fabric::arm_batched_timer`]). Encoded
    /// as a `SchemeTimer` of a port number no topology has, so that it pops where its timers would.
    SchemeTick,
    /// The earliest of the timers a scheme armed by token ([`Fabric::arm_token_timer`]) is due. Encoded as a
    /// `SchemeTimer` of another port number no topology has, leaving every other event's bits as they were.
    TokenTimer,
    /// Look for queues paused too long.
    Watchdog,
    /// The earliest congestion-control timer is due.
    CcTimer,
    /// A paced flow of the NIC owning this port may send again.
    NicWake(PortId),
}

/// Port ids in events have 21 bits (2M ports), the event kind 3 (all eight kinds are in use).
const PORT_BITS: u32 = 21;

/// The port number of [`Event::SchemeTick`], the largest: topologies have fewer ports.
const TICK_PORT: u32 = (1 << PORT_BITS) - 1;
/// The port number of [`Event::TokenTimer`], the one below [`TICK_PORT`].
const TOKEN_PORT: u32 = TICK_PORT - 1;

impl EventBits for Event {
    #[inline]
    fn to_bits(self) -> u32 {
        match self {
            Event::TxDone(p) => p.0,
            Event::Deliver(p) => 1 << PORT_BITS | p.0,
            Event::Arrival => 2 << PORT_BITS,
            Event::Released => 2 << PORT_BITS | 1,
            Event::FabricChange => 2 << PORT_BITS | 2,
            Event::Timer => 3 << PORT_BITS,
            Event::SchemeTimer(p) => 4 << PORT_BITS | p.0,
            Event::SchemeTick => 4 << PORT_BITS | TICK_PORT,
            Event::TokenTimer => 4 << PORT_BITS | TOKEN_PORT,
            Event::Watchdog => 5 << PORT_BITS,
            Event::CcTimer => 6 << PORT_BITS,
            Event::NicWake(p) => 7 << PORT_BITS | p.0,
        }
    }
    #[inline]
    fn from_bits(bits: u32) -> Self {
        let port = PortId(bits & ((1 << PORT_BITS) - 1));
        match bits >> PORT_BITS {
            0 => Event::TxDone(port),
            1 => Event::Deliver(port),
            2 if port.0 == 1 => Event::Released,
            2 if port.0 == 2 => Event::FabricChange,
            2 => Event::Arrival,
            3 => Event::Timer,
            4 if port.0 == TICK_PORT => Event::SchemeTick,
            4 if port.0 == TOKEN_PORT => Event::TokenTimer,
            4 => Event::SchemeTimer(port),
            5 => Event::Watchdog,
            6 => Event::CcTimer,
            _ => Event::NicWake(port),
        }
    }
}

/// Which shard owns each node, and which shard this is ([`crate::sim`] splits a run into shards).
#[derive(Clone, Debug)]
pub(crate) struct Ownership {
    /// This shard.
    pub me: u8,
    /// The shard of each node, by node index.
    pub node_shard: std::sync::Arc<[u8]>,
    /// Number of shards.
    pub shards: u8,
}

/// Packet and byte counts for the conservation check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets created by NICs (data and control).
    pub injected_pkts: u64,
    /// Bytes created by NICs.
    pub injected_bytes: u64,
    /// Packets consumed by their destination host.
    pub delivered_pkts: u64,
    /// Bytes consumed by their destination host.
    pub delivered_bytes: u64,
    /// Packets dropped (all reasons).
    pub dropped_pkts: u64,
    /// Data packets NICs sent, first transmissions and retransmissions (the denominator of BCC §III-C's
    /// packet loss rate).
    pub data_pkts: u64,
    /// Data packets dropped (all reasons).
    pub dropped_data_pkts: u64,
    /// Packets switches marked CE (per-queue or shared-buffer ECN/RED).
    pub ce_marks: u64,
    /// Bytes dropped.
    pub dropped_bytes: u64,
    /// Packet transmissions over a link (packet-hops).
    pub hops: u64,
    /// Events processed. A batch of scheme timers (`Fabric::arm_batched_timer`) counts as its timers, so
    /// that the count does not depend on how a run is split into shards (each fires its own batch).
    pub events: u64,
    /// Data packets sent again after a NACK or timeout (payload already sent once).
    pub retransmits: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// Data packets delivered whose bytes the receiver already had (unneeded retransmissions).
    pub duplicates: u64,
    /// Data packets that reached their receiver ahead of a byte it still lacked: reordered in the network, or
    /// behind a lost packet. Zero in a run without drops means every flow's packets arrived in order.
    pub out_of_order: u64,
    /// Data packets a switch cut to their header (a trimming scheme's).
    pub trimmed_pkts: u64,
    /// Payload bytes those packets lost: with the delivered and dropped bytes, every injected byte.
    pub trimmed_bytes: u64,
}

bfcsim_core::add_fields!(Counters {
    injected_pkts,
    injected_bytes,
    delivered_pkts,
    delivered_bytes,
    dropped_pkts,
    data_pkts,
    dropped_data_pkts,
    ce_marks,
    dropped_bytes,
    hops,
    events,
    retransmits,
    timeouts,
    duplicates,
    out_of_order,
    trimmed_pkts,
    trimmed_bytes,
});

/// One switch queue as [`crate::Sim::port_queues`] sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueState {
    /// Bytes waiting.
    pub bytes: u64,
    /// Packets waiting (data and control).
    pub packets: u32,
    /// Distinct flows with a data packet waiting.
    pub flows: u32,
    /// Data packets of incast flows waiting.
    pub incast_packets: u32,
    /// Paused by the device downstream.
    pub paused: bool,
}

/// The fabric of one shard: wires, switch ports and their queues, buffers, routing, NICs, flows, the event
/// queue and time, for the nodes the shard owns. It knows no scheme: the running scheme is handed to every
/// method that may reach one of its hooks, as `side` ([`bfcsim_schemes::fabric`]).
pub struct Fabric {
    topo: Topology,
    routes: Routes,
    params: SimParams,
    now: Time,
    events: EventQueue<Event>,
    packets: Packets,
    wires: Vec<Wire>,
    sw_ports: Vec<SwitchPort>,
    switches: Vec<Switch>,
    /// Each switch's [`SwitchKey`], by the same index.
    switch_keys: Vec<SwitchKey>,
    /// Each switch port's local number at its switch, by port id (0 for a host's port): with
    /// [`SwitchKey::first_sp`], the egress's switch port from routing's answer alone, where the engine read the
    /// egress wire's owner to find the switch port, then the port's local number there, each load waiting for
    /// the one before. Two bytes a port, the table stays cached.
    port_local: Vec<u16>,
    /// Switch index of each node (`u32::MAX` for hosts).
    switch_of_node: Vec<u32>,
    hosts: Vec<Host>,
    /// Every flow, shared by the shards.
    flows: Arc<[Flow]>,
    /// This shard's state of every flow, by the same index.
    flow_state: Vec<FlowState>,
    /// The flows whose source this shard owns, by start time.
    local_flows: Vec<u32>,
    next_arrival: usize,
    /// Flows started so far (from the sorted list and released waiting flows).
    flows_started: usize,
    /// The flows that wait for others, when the workload has any ([`waiting`]).
    waiting: Option<Box<Waiting>>,
    /// Packets for other shards since the last exchange, by destination shard.
    outbox: Vec<Mail>,
    active: Slots<Active>,
    /// Idle persistent connections (`nic.connections = "persistent"`), at their source host's shard.
    connections: Option<ConnectionPool>,
    inbound: Slots<Inbound>,
    timers: TimerQueue,
    timer_event_at: Option<Time>,
    flow_ctx: FlowContext,
    flows_done: usize,
    counters: Counters,
    drops: [u64; DropReason::ALL.len()],
    /// Packets each switch egress port's buffer dropped, by port (host ports stay 0).
    port_drops: Vec<u64>,
    /// Where each queued packet's bytes are counted in its switch's buffer, by packet id, when its admission
    /// said ([`Charge::Reserve`] or [`Charge::Shared`], `switch.admission = "bcc-ns2"`); empty under Dynamic
    /// Threshold, whose charges follow the queue's level.
    charges: Vec<Charge>,
    /// Which queue of a switch port serves which class.
    layout: QueueLayout,
    /// Scheme timers armed in batches, one event per instant ([`Fabric::arm_batched_timer`]).
    timer_batches: TimerBatches,
    /// Scheme timers armed by token ([`Fabric::arm_token_timer`]).
    token_timers: TokenTimers,
    /// Pausing state outside the switches and hosts: frame payloads, counts, the watchdog.
    hop: pause::HopState,
    /// Time each data packet waited in each switch egress queue, in picoseconds.
    queuing_delay: LogHistogram,
    /// The same for the packets of one-packet flows (BFC §2.1, Table 1's "single packet" delay).
    single_packet_delay: LogHistogram,
    /// What congestion control asks of NICs and switches besides ACKs ([`bfcsim_schemes::cc::nic`]).
    cc_nic: CcNic,
    /// The INT stack of each packet slot (empty unless [`CcNic::stamps`]).
    int_stacks: IntStacks,
    /// The other stamps of each packet slot (empty unless [`CcNic::stamps_packets`]).
    stamps: Stamps,
    /// Each port's PINT state, by port id (empty unless [`CcNic::pint`]; host ports' are never used).
    pint_ports: Vec<PintPort>,
    /// The controllers' timers, for the NIC's rate limiter.
    pacing: pacing::Pacing,
    /// The run's fingerprint so far: the wrapping sum over every transmission on a link of a hash of what was
    /// sent where and when ([`Fabric::transmit`]). A sum does not depend on the order of its terms, so the
    /// shards' fingerprints add up to the same value whatever the number of threads.
    fingerprint: u64,
    /// Data packets that brought their receiver bytes it did not have: a run whose count stops growing while
    /// flows remain makes no progress ([`crate::sim::Sim::progress`]).
    progress: u64,
    /// Drops, timeouts, pauses and resumes, when kept ([`log`]).
    log: Option<Vec<Logged>>,
    /// Every hop of the packets of the flows being explained, when asked ([`explain`]).
    explain: Option<Box<Explain>>,
    /// The fabric events' plan and what they cost, when the run has any ([`failures`]).
    faults: Option<Box<crate::faults::Faults>>,
}

/// One shard of a simulation of one topology, one flow list and one configuration: it owns some nodes (all of
/// them in a one-thread run) and handles the events of their ports, switches, hosts and flows (a flow belongs
/// to its source's shard, its receiving side to its destination's). Its fabric and its scheme are apart, so
/// that the fabric can hand the scheme to itself; what a caller reads between slices is the fabric's.
pub struct Shard {
    fab: Fabric,
    scheme: AnyScheme,
}

impl std::ops::Deref for Shard {
    type Target = Fabric;
    fn deref(&self) -> &Fabric {
        &self.fab
    }
}

impl Shard {
    /// Keeps the log of drops, timeouts and pauses from now on ([`log`]).
    pub(crate) fn keep_log(&mut self) {
        self.fab.log.get_or_insert_with(Vec::new);
    }

    /// Builds the network, then the configured scheme, and schedules the flows (which must be sorted by start
    /// time); `routes` are `topo`'s.
    pub(crate) fn new(
        topo: Topology,
        routes: Routes,
        flows: Arc<[Flow]>,
        params: SimParams,
        deps: Option<FlowDeps>,
        own: Ownership,
    ) -> Result<Shard, String> {
        let mut fab = Fabric::new(topo, routes, flows, params, deps, own)?;
        let scheme = AnyScheme::new(&fab.params.flow_control.clone(), &mut fab)?;
        fab.start();
        Ok(Shard { fab, scheme })
    }

    /// Runs the fabric events of `plan` ([`crate::faults`]).
    pub(crate) fn install_faults(&mut self, plan: Arc<crate::faults::FaultPlan>) {
        self.fab.install_faults(plan);
    }

    /// Records every hop of `flows`' packets from now on, and keeps the log ([`explain`]).
    pub(crate) fn explain(&mut self, flows: &[FlowId]) {
        self.keep_log();
        let fab = &self.fab;
        let queue_left = self.scheme.queue_left();
        let x = Explain::new(flows, fab, queue_left);
        self.fab.explain = Some(Box::new(x));
        for w in &mut self.fab.wires {
            w.exit = OBSERVED;
        }
    }

    /// The hops recorded so far ([`Shard::explain`]).
    pub(crate) fn explained(&self) -> &[HopRecord] {
        self.fab.explain.as_ref().map_or(&[], |x| &x.hops)
    }

    /// Processes every event due up to and including `end`; the caller ([`crate::sim::Sim`]) makes sure no
    /// parcel from another shard is due by then.
    pub(crate) fn run_window(&mut self, end: Time) {
        self.scheme.run_window(&mut self.fab, end);
    }

    /// Moves the clock to `t` (no earlier than the last event) when a run stops at a time limit.
    pub(crate) fn set_now(&mut self, t: Time) {
        self.fab.now = self.fab.now.max(t);
    }

    /// Moves the parcels for shard `to` posted since the last call into `into`.
    pub(crate) fn take_outbox(&mut self, to: usize, into: &mut Mail) {
        self.fab.take_outbox(to, into);
    }

    /// Puts parcels from other shards on their wires' far ends.
    pub(crate) fn accept(&mut self, mail: &mut Mail) {
        self.fab.accept(mail);
    }

    /// Starts both queuing-delay histograms afresh (the end of a measurement warm-up).
    pub fn reset_queuing_delay(&mut self) {
        self.fab.reset_queuing_delay();
    }

    /// Packets and bytes this shard holds (NICs, queues, wires, its outbox and the scheme's own), for the
    /// conservation check.
    pub(crate) fn census(&self) -> (u64, u64) {
        self.scheme.census(&self.fab)
    }

    /// This shard's end-of-run invariant violations, the scheme's included.
    pub(crate) fn local_violations(&self) -> Vec<String> {
        let mut v = self.scheme.local_violations(&self.fab);
        self.scheme.violations(&self.fab, &mut v);
        v
    }

    /// Per-hop flow control counts so far: the watchdog's and the scheme's.
    pub fn hop_stats(&self) -> HopStats {
        let mut stats = self.fab.hop.watchdog_stats();
        self.scheme.add_stats(&mut stats);
        stats
    }

    /// How long `port`'s link was paused up to now, for the flow-control report: under PFC the time any priority
    /// of its transmitter (a switch port or a NIC) was paused by the device downstream, what `pfc.txt` shows;
    /// otherwise the time a switch port had packets but none it could send (BFC pauses single queues). `None`
    /// for a port that is never paused.
    pub fn link_paused_time(&self, port: PortId) -> Option<Time> {
        self.scheme.link_paused_time(&self.fab, port)
    }

    /// The running scheme.
    pub(crate) fn scheme(&self) -> &AnyScheme {
        &self.scheme
    }
}

impl Fabric {
    /// Processes every event due up to and including `end`, `side` being the running scheme.
    pub(super) fn run_window<S: Scheme>(&mut self, side: &mut S, end: Time) {
        while let Some((t, ev)) = self.events.pop_until_ahead(end, |ev| {
            // The packet a delivery a few pops ahead reads first, last touched as it left a link delay ago, is
            // usually out of the L2 on large fabrics: ask for its line now, so that it is there when the
            // delivery runs (measured in docs/BENCHMARKS-HISTORY.md, "a twelfth pass").
            if let Event::Deliver(p) = ev {
                self.packets.prefetch(self.wires[p.idx()].first);
            }
        }) {
            self.now = t;
            self.counters.events += 1;
            match ev {
                Event::TxDone(p) => {
                    self.wires[p.idx()].wake_pending = false;
                    self.service(side, p);
                }
                Event::Deliver(p) => self.deliver(side, p),
                Event::Arrival => self.arrival(side),
                Event::Released => self.release(side),
                Event::FabricChange => self.fabric_change(),
                Event::Timer => self.fire_timers(side),
                Event::SchemeTimer(p) => self.fire_scheme_timer(side, p),
                Event::SchemeTick => self.fire_timer_batch(side),
                Event::TokenTimer => self.fire_token_timers(side),
                Event::Watchdog => self.watchdog(),
                Event::CcTimer => self.fire_cc_timers(side),
                Event::NicWake(p) => self.nic_wake(side, p),
            }
        }
    }

    /// The time of the earliest pending event (`Time::MAX`: none).
    pub(crate) fn next_event(&self) -> Time {
        self.events.next_time().unwrap_or(Time::MAX)
    }
}
