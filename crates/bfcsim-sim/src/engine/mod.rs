//! The engine: one event queue driving links, switch egress ports and host NICs.
//!
//! Each port keeps the packets on its wire in a list threaded through them and has at most two pending events:
//! the arrival of the wire's head packet (`Deliver`) and, only while packets wait behind the one being
//! serialized, the end of that serialization (`TxDone`). The event queue therefore grows with the number of
//! ports, not with the packets in flight. Flow arrivals come from a sorted list with one pending event;
//! retransmission timers live in a [`TimerQueue`] with one pending event.
//!
//! Schemes that act inside the network (BFC, PFC) sit behind one interface, [`scheme`]: the engine calls the
//! running scheme's switch and NIC sides at fixed points (admission and enqueue, dequeue, frame arrival, its
//! timers, a flow's start and end at its NIC, NIC scheduling) and never asks which scheme runs. The pausing of
//! queues that per-hop flow control shares lives in [`pause`]. Rate-based congestion control (DCQCN, HPCC)
//! lives in [`rate`]: per-flow pacing, controller timers, CNPs, INT and switch drop notices. ECN marking,
//! per queue and on a buffer pool's occupancy (BCC), is switch configuration that composes with any scheme and
//! lives in [`marking`].

mod connections;
mod marking;
mod paths;
mod pause;
mod rate;
mod scheme;

pub(crate) use paths::node_work;
pub use pause::HopStats;
pub(crate) use pause::find_cycle;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use bfcsim_core::rng::{self, Rng, Stream};
use bfcsim_core::{
    Bytes, EventBits, EventQueue, FlowId, FlowSpec, LogHistogram, NodeId, PacketId, PortId, Rate,
    Slots, Time,
};
use bfcsim_net::ecn::{MarkPoint, PoolMarking, SinceMark};
use bfcsim_net::int::{IntHop, IntStack};
use bfcsim_net::mmu::{Charge, DropReason, Mmu, MmuLayout};
use bfcsim_net::packet::{Packet, PacketKind, Packets};
use bfcsim_net::pfc::{PfcIngress, PfcRecord, PortPause};
use bfcsim_net::queues::{NO_TAG, PortQueues, Run};
use bfcsim_net::routing::{LoadBalancing, Routes, ecmp_hash, five_tuple_hash};
use bfcsim_net::topology::{NodeKind, Topology};
use bfcsim_schemes::cc::{AckSignal, Cc, CcConfig, CongestionControl, FlowContext};
use bfcsim_schemes::dcqcn::CnpGenerator;
use bfcsim_schemes::transport::{Receiver, Reply, Sender};
use rand::RngExt;

use crate::config::{Connections, FlowControl, NicConfig, NicScheduler, Scheduler, SwitchConfig};
use crate::timers::TimerQueue;
use connections::{Connection, ConnectionPool};
use scheme::{Entry, Scheme};

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
    /// The earliest retransmission timer is due.
    Timer,
    /// A timer the running scheme armed on a port (a switch port or a host's NIC port) is due; schemes keep
    /// their own deadlines behind it ([`scheme`]).
    SchemeTimer(PortId),
    /// The scheme timers armed in one batch for this instant are due ([`Shard::arm_batched_timer`]). Encoded
    /// as a `SchemeTimer` of a port number no topology has, so that it pops where its timers would.
    SchemeTick,
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

impl EventBits for Event {
    #[inline]
    fn to_bits(self) -> u32 {
        match self {
            Event::TxDone(p) => p.0,
            Event::Deliver(p) => 1 << PORT_BITS | p.0,
            Event::Arrival => 2 << PORT_BITS,
            Event::Timer => 3 << PORT_BITS,
            Event::SchemeTimer(p) => 4 << PORT_BITS | p.0,
            Event::SchemeTick => 4 << PORT_BITS | TICK_PORT,
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
            2 => Event::Arrival,
            3 => Event::Timer,
            4 if port.0 == TICK_PORT => Event::SchemeTick,
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

/// A packet leaving its shard over a link whose far end another shard owns: the packet itself, one line. The
/// two fields that mean something only on a wire ([`Packet::wire_next`] and [`Packet::stamp`], which the
/// receiving shard's wire sets anew) carry the transmitting port and when the packet reaches the far end. Kept
/// beside the 64-byte-aligned packet, those two made a parcel two lines, each one copied into the mail, read by
/// the other core and copied into its slab.
#[derive(Clone, Copy)]
pub(crate) struct Parcel(Packet);

impl Parcel {
    fn new(mut packet: Packet, port: PortId, arrive: Time) -> Parcel {
        packet.wire_next = PacketId(port.0);
        packet.stamp = arrive;
        Parcel(packet)
    }

    /// When it reaches the far end.
    pub(crate) fn arrive(&self) -> Time {
        self.0.stamp
    }

    /// The transmitting port (the far end is its peer), when it reaches the far end, and the packet.
    fn open(self) -> (PortId, Time, Packet) {
        (PortId(self.0.wire_next.0), self.0.stamp, self.0)
    }
}

/// Parcels for one shard, with the side-table state that travels with them: a BFC refresh frame's bitmap of
/// paused queues (its words), and under INT each packet's stack (its stored hops). Each vector holds its
/// items in the order of the parcels they go with; `counts` has, for every parcel with such state, the number
/// of words of its bitmap or the hops pushed on its stack ([`IntStack::pack_into`]), which tells the reader
/// where the next parcel's items start. A parcel once carried its own vector or boxed stack, allocated in one
/// thread and freed in the other (under two threads, allocation was a tenth of an HPCC run's time), and later
/// the offsets of its items, which a second line per parcel carried.
#[derive(Default)]
pub(crate) struct Mail {
    parcels: Vec<Parcel>,
    counts: Vec<u32>,
    hops: Vec<IntHop>,
    words: Vec<u64>,
}

impl Mail {
    /// Moves everything in `from` to the end of this mail (by swapping the vectors when this one is empty, so
    /// that their capacities circulate).
    pub(crate) fn take_all(&mut self, from: &mut Mail) {
        take_all(&mut from.parcels, &mut self.parcels);
        take_all(&mut from.counts, &mut self.counts);
        take_all(&mut from.hops, &mut self.hops);
        take_all(&mut from.words, &mut self.words);
    }

    /// The parcels, in the order they were posted.
    pub(crate) fn parcels(&self) -> &[Parcel] {
        &self.parcels
    }
}

/// Moves every element of `from` to the end of `into`, by swapping the two when `into` is empty.
pub(crate) fn take_all<T>(from: &mut Vec<T>, into: &mut Vec<T>) {
    if into.is_empty() {
        std::mem::swap(from, into);
    } else {
        into.append(from);
    }
}

/// `Wire::remote` for a wire whose far end this shard owns.
const LOCAL: u8 = u8::MAX;

/// Which device transmits on a port.
#[derive(Clone, Copy, Debug)]
enum Owner {
    /// A host NIC, by host index.
    Host(u32),
    /// A switch egress port, by index into `Shard::sw_ports`.
    Switch(u32),
}

/// One port's transmit side and the wire it feeds.
///
/// Two cache lines, laid out by who reads them: the first is the transmitter's (what a packet entering the
/// port's switch reads to find the port and wake it, and what a transmission writes), the second the wire's
/// far end (the packets in flight, read by their deliveries, and where they go). A packet entering a switch
/// finds and wakes its egress port in one line of that port's wire, where it read two on a fabric too large
/// for the cache (the owner and the pending wake-up sat in different lines of an unaligned 104-byte wire).
#[repr(C, align(64))]
struct Wire {
    // ---- the transmitter
    owner: Owner,
    busy_until: Time,
    /// Serialization time of one byte when it is a whole number of picoseconds (0 otherwise).
    ps_per_byte: u64,
    /// Propagation delay plus the receiving switch's processing delay.
    delay: Time,
    tx_bytes: u64,
    rate: Rate,
    /// Packets a switch port dequeued to send here, every kind (0 on a host's wire): with the port's drops and
    /// what it holds, the arrivals at its queues. Counted here, in the line the transmission writes anyway,
    /// rather than per transmission on every wire (4 instructions per packet-hop) or in the port.
    dequeued: u64,
    /// On a wire to another shard (whose packets leave at once): the flow of the data packet serialized last
    /// (`u32::MAX`: not a data packet), for [`Shard::port_active_flows`].
    sending_flow: u32,
    wake_pending: bool,
    /// The shard owning the far end when another one does ([`LOCAL`] otherwise): packets leave as parcels.
    remote: u8,
    // ---- the far end
    /// The packets on the wire, a list through the packets themselves ([`Packet::wire_next`], with when each
    /// one's successor arrives in [`Packet::stamp`]): the first to arrive and the last ([`PacketId::NONE`]:
    /// none). A delivery reads the next packet and its arrival in the line of the packet it delivers; with a
    /// `VecDeque` of (arrival, packet) it read the deque's buffer, a line of its own that a transmission had
    /// written a link delay earlier (18 M of CLOS-128's DCTCP's 183 M L1 misses at 2 ms).
    first: PacketId,
    last: PacketId,
    /// The port at the far end (a packet arrives at that port's node through it).
    peer: PortId,
    /// The device at the far end (`peer`'s owner) and, when it is a switch, that switch's index and `peer`'s
    /// local port number there: a delivery reads them here, in the line it reads anyway, instead of in the
    /// peer's wire and its switch port (cache misses per switch hop on a large fabric: the local number alone,
    /// read from the ingress's switch port, missed the L2 1.9 M times in 300 µs of BFC on the 1024-host tree).
    far: Owner,
    far_switch: u32,
    far_local: u16,
}

// Each side in its own line.
const _: () =
    assert!(std::mem::offset_of!(Wire, first) == 64 && std::mem::size_of::<Wire>() == 128);

/// One switch egress port: its queues, and what the engine keeps with them.
///
/// Laid out by use: the switch and local port, which an arriving packet's buffer admission and a dequeue's
/// release read, go before the queues' own per-packet head ([`PortQueues::HEAD`]) so that a push or a pop
/// reads one line of the port, and the next one too where a level of several queues has a ring to serve. The
/// rest is off the per-packet path. Unaligned, the 312-byte port spread what a push and a pop read over four
/// lines, and reading `local` was the costliest single stall on the 1024-host fabric.
#[repr(C, align(64))]
struct SwitchPort {
    switch: u32,
    local: u16,
    /// The queues held packets but none they could send, as the pause clock last heard: kept in this line so
    /// that a push or a pop that leaves it unchanged does not read the clock's.
    blocked: bool,
    queues: PortQueues,
    /// When the port's scheme timer is due (`Time::MAX`: none pending).
    timer_at: Time,
    red_rng: Rng,
    /// Pause bookkeeping of this port's queues (per-hop flow control only).
    pause: pause::PauseClock,
}

// The index fields and the queues' head fill the first line.
const _: () = assert!(std::mem::offset_of!(SwitchPort, queues) + PortQueues::HEAD == 64);

/// What routing at a switch reads for every packet: its node (the routing tables' key), its ECMP seed, and
/// where its ports start in `Shard::sw_ports`. Kept apart from [`Switch`], 16 bytes a switch, so that it stays
/// cached on a fabric whose switches' state does not.
#[derive(Clone, Copy)]
struct SwitchKey {
    node: NodeId,
    /// The index in `Shard::sw_ports` of the switch's local port 0; its ports follow in local order.
    first_sp: u32,
    seed: u64,
}

const _: () = assert!(std::mem::size_of::<SwitchKey>() == 16);

struct Switch {
    mmu: Mmu,
    /// Packet spraying's choices.
    rng: Rng,
    /// BCC's shared-buffer RED of each buffer pool, when on (`switch.ecn.shared`); empty otherwise.
    shared_red: Vec<PoolMarking>,
    /// The pool RED's bytes since its last mark at each port (`Spacing::Count`); empty when the pools don't mark.
    since_mark: Vec<SinceMark>,
}

struct Host {
    port: PortId,
    /// ACKs and NACKs waiting for the NIC; served before data.
    ctrl: VecDeque<PacketId>,
    /// Flows that may have a packet to send, served round robin.
    ready: VecDeque<FlowId>,
    /// Per-hop flow control at the NIC: paused queues and the flows parked on them.
    nic: pause::NicQueues,
    /// Paced flows waiting for their next send time, earliest first (rate-based CC only).
    paced: BinaryHeap<Reverse<(Time, u32)>>,
    /// When the pending `NicWake` is due (`Time::MAX`: none).
    wake_at: Time,
    /// When the NIC port's scheme timer is due (`Time::MAX`: none pending).
    timer_at: Time,
}

/// A flow as the run sees it, fixed from its start: one table that the shards of a split run share, so that
/// threads do not each hold a copy of every flow (on the CLOS-128 bench, 1.7 M flows of 88 bytes in every
/// shard, the second thread's 160 MB). One cache line a flow: the table's records, 60 bytes, each straddled two
/// lines unaligned.
#[repr(align(64))]
pub(crate) struct FlowInfo {
    spec: FlowSpec,
    src_host: u32,
    dst_host: u32,
    sport: u16,
    dport: u16,
    hash: u64,
    rev_hash: u64,
}

impl FlowInfo {
    /// The table of `flows` (sorted by start time) on `topo`; fails on a flow that is not between two distinct
    /// hosts or has no bytes, naming it.
    pub(crate) fn table(topo: &Topology, flows: &[FlowSpec]) -> Result<Arc<[FlowInfo]>, String> {
        let mut infos = Vec::with_capacity(flows.len());
        let mut pair_ports: HashMap<(u32, u32), u16> = HashMap::new();
        let mut last_start = Time::ZERO;
        for (i, f) in flows.iter().enumerate() {
            let (Some(src_host), Some(dst_host)) = (topo.host_index(f.src), topo.host_index(f.dst))
            else {
                return Err(format!(
                    "flow {i}: {} -> {} is not between two hosts",
                    f.src, f.dst
                ));
            };
            if f.src == f.dst || f.size.0 == 0 {
                return Err(format!(
                    "flow {i}: needs distinct hosts and at least one byte"
                ));
            }
            if f.start < last_start {
                return Err(format!("flow {i}: flows must be sorted by start time"));
            }
            last_start = f.start;
            // Source ports count up per host pair from 10000, as HPCC's ns-3 assigns them.
            let next = pair_ports.entry((f.src.0, f.dst.0)).or_insert(10000);
            let sport = *next;
            *next = next.wrapping_add(1);
            let dport = if f.incast { 200 } else { 100 };
            infos.push(FlowInfo {
                spec: *f,
                src_host,
                dst_host,
                sport,
                dport,
                hash: five_tuple_hash(f.src, f.dst, sport, dport),
                rev_hash: five_tuple_hash(f.dst, f.src, dport, sport),
            });
        }
        Ok(infos.into())
    }
}

/// What one shard keeps of each flow as the run goes: 16 bytes a flow, where the sender and the receiver of
/// the flow live in this shard's slots.
#[derive(Clone, Copy)]
struct FlowState {
    /// Index into `Shard::active` while the flow's sender runs ([`NO_SLOT`] before and after).
    slot: u32,
    /// Index into `Shard::inbound` while its receiver waits for bytes (from its first packet to its last),
    /// [`NO_SLOT`] before, [`RECEIVED`] once it has every byte.
    recv_slot: u32,
    /// When the sender saw its last byte acknowledged ([`Time::MAX`]: not yet).
    finish: Time,
}

const _: () =
    assert!(std::mem::size_of::<FlowState>() == 16 && std::mem::size_of::<FlowInfo>() == 64);

const NO_SLOT: u32 = u32::MAX;
/// [`FlowState::recv_slot`] of a flow whose receiver has every byte.
const RECEIVED: u32 = u32::MAX - 1;

/// What the fingerprint keeps of packet `p` starting on `port` at `now`: a hash of when and where (the time, the
/// port and so the node, the kind) and of what (the flow, the sequence number, the size), the two words multiplied
/// as 128-bit numbers and the product's halves folded (wyhash's `mum`), after keying each word so that neither is
/// zero in practice. The product's high half depends on every bit of both words, and the fold spreads it over
/// the term the wrapping sum adds, at 7 instructions per packet-hop (a SplitMix64 round takes 16, and this runs
/// at every hop of every run). A refresh frame's `seq` is the index of its bitmap in the sending shard's side
/// table, which depends on the threads, so it is left out.
#[inline(always)]
fn hop_hash(now: Time, port: PortId, p: &Packet) -> u64 {
    let seq = if p.kind == PacketKind::Refresh {
        0
    } else {
        p.seq
    };
    let when_where = now.0 ^ (u64::from(port.0) << 43) ^ ((p.kind as u64) << 38);
    let what = seq ^ (u64::from(p.flow.0) << 32) ^ u64::from(p.size).rotate_right(16);
    let product =
        u128::from(when_where ^ 0xA076_1D64_78BD_642F) * u128::from(what ^ 0xE703_7ED1_A0B4_28DB);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The sending side of a running flow: its transport half, congestion controller and NIC state. It lives at
/// the source host from the flow's start until every byte is acknowledged.
///
/// In `repr(C)` order: the transport's state and the NIC's flags, which every send and ACK read, first; the
/// controller, sized by its largest variant (320 bytes), last. The compiler's order put the controller first:
/// CLOS-128's DCTCP at 2 ms took 33.05 M L2 misses so, 32.83 M in this order (cachegrind, a 1 MiB L2).
#[repr(C)]
struct Active {
    sender: Sender,
    id: FlowId,
    in_ring: bool,
    /// Waiting in its host's parked list for its NIC queue to be resumed.
    parked: bool,
    /// The flow's NIC queue, stamped as `upstreamQ` in its packets (BFC §3.3.2).
    nic_q: u32,
    timer_armed: bool,
    rto_deadline: Time,
    /// How long the flow's NIC queue had been paused in all when `rto_deadline` was set: the timer does not run
    /// while the queue is paused (`nic.rto_holds_while_paused`).
    rto_paused_base: Time,
    /// When the last data packet started and its wire size. Pacing (rate-based CC): the next may start
    /// `last_size / rate` later (HPCC ns-3's `m_nextAvail`); a persistent connection's idle time counts from it.
    last_send: Time,
    last_size: u32,
    /// Waiting in its host's `paced` heap (while `in_ring` stays set), with its entry due at `wait_until`.
    waiting: bool,
    wait_until: Time,
    /// The earliest pending congestion-control timer entry of the flow (`Time::MAX`: none).
    cc_timer_at: Time,
    /// The persistent connection the flow travels on (`nic.connections = "persistent"`).
    conn: Option<u32>,
    cc: Cc,
}

/// The receiving side of a flow, at the destination host from its first data packet until it has every byte.
/// Kept apart from [`Active`] so that each side lives only at its own host: nothing the receiver does reads
/// the sender's state, and back.
struct Inbound {
    receiver: Receiver,
    /// CNP pacing (DCQCN).
    cnp: CnpGenerator,
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
    /// Events processed. A batch of scheme timers (`Shard::arm_batched_timer`) counts as its timers, so
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

/// One shard of a simulation of one topology, one flow list and one configuration: it owns some nodes (all of
/// them in a one-thread run) and handles the events of their ports, switches, hosts and flows (a flow belongs
/// to its source's shard, its receiving side to its destination's).
pub struct Shard {
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
    /// the one before. Two bytes a port, the table stays cached (CLOS-128's DCTCP: 0.3% fewer instructions).
    port_local: Vec<u16>,
    /// Switch index of each node (`u32::MAX` for hosts).
    switch_of_node: Vec<u32>,
    hosts: Vec<Host>,
    /// Every flow, shared by the shards.
    flows: Arc<[FlowInfo]>,
    /// This shard's state of every flow, by the same index.
    flow_state: Vec<FlowState>,
    /// The flows whose source this shard owns, by start time.
    local_flows: Vec<u32>,
    next_arrival: usize,
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
    /// Data queue layout at switch ports.
    data_base: usize,
    queues_per_class: u64,
    /// The running scheme's switch and NIC sides and their state ([`scheme`]).
    scheme: Scheme,
    /// Scheme timers armed in batches, one event per instant ([`Shard::arm_batched_timer`]).
    timer_batches: scheme::TimerBatches,
    /// Pausing state outside the switches and hosts: frame payloads, counts, the watchdog.
    hop: pause::HopState,
    /// Time each data packet waited in each switch egress queue, in picoseconds.
    queuing_delay: LogHistogram,
    /// The same for the packets of one-packet flows (BFC §2.1, Table 1's "single packet" delay).
    single_packet_delay: LogHistogram,
    /// Rate-based CC's run-wide state: which of its mechanisms run, the INT side slab, the CC timers.
    rate: rate::RateState,
    /// The run's fingerprint so far: the wrapping sum over every transmission on a link of a hash of what was
    /// sent where and when ([`Shard::transmit`]). A sum does not depend on the order of its terms, so the
    /// shards' fingerprints add up to the same value whatever the number of threads.
    fingerprint: u64,
    /// Data packets that brought their receiver bytes it did not have: a run whose count stops growing while
    /// flows remain makes no progress ([`crate::sim::Sim::progress`]).
    progress: u64,
}

/// A packet's tag in the port queues: its data flow, or [`NO_TAG`] for any other packet, so that the queues
/// know their runs of one flow for the active-flow sampler ([`Shard::port_active_flows`]).
#[inline(always)]
fn flow_tag(p: &Packet) -> u32 {
    if p.kind == PacketKind::Data {
        p.flow.0
    } else {
        NO_TAG
    }
}

impl Shard {
    /// Builds the network and schedules the flows (which must be sorted by start time); `routes` are
    /// `topo`'s.
    pub(crate) fn new(
        topo: Topology,
        routes: Routes,
        flows: Arc<[FlowInfo]>,
        params: SimParams,
        own: Ownership,
    ) -> Result<Shard, String> {
        params.switch.validate()?;
        params.nic.validate()?;
        params.cc.validate()?;
        if params.nic.connections == Connections::Persistent && !params.cc.persists() {
            return Err(format!(
                "nic.connections = \"persistent\" hands a window controller's state from flow to flow; \
                 cc.name = \"{}\" starts every flow afresh (use dctcp or none)",
                params.cc.name()
            ));
        }
        params.flow_control.validate(&params.switch)?;
        if topo.ports.len() > TICK_PORT as usize {
            return Err(format!(
                "{} ports exceed the engine's limit of {TICK_PORT}",
                topo.ports.len(),
            ));
        }
        let sw = &params.switch;
        let total_q = sw.total_queues();
        let data_base = usize::from(sw.control_priority);
        let per_class = sw.queues_per_port / sw.classes;
        let levels: Vec<u8> = (0..total_q)
            .map(|q| {
                if q < data_base {
                    0
                } else {
                    (data_base + (q - data_base) / per_class as usize) as u8
                }
            })
            .collect();
        let quantum = sw
            .quantum
            .map_or(params.nic.payload + params.nic.header, |b| {
                u32::try_from(b.0).expect("switch.quantum is checked to fit 32 bits")
            });
        // One α table for every switch (`MmuLayout::alpha`).
        let alpha = Arc::new(
            sw.alpha_by_queue
                .clone()
                .unwrap_or_else(|| vec![sw.alpha; total_q]),
        );

        let mut switch_of_node = vec![u32::MAX; topo.nodes.len()];
        let mut switches = Vec::new();
        let mut switch_keys = Vec::new();
        let mut sw_ports = Vec::new();
        let mut port_owner = vec![None; topo.ports.len()];
        let mut port_local = vec![0u16; topo.ports.len()];
        for (i, node) in topo.nodes.iter().enumerate() {
            if node.kind != NodeKind::Switch {
                continue;
            }
            let s = switches.len() as u32;
            switch_of_node[i] = s;
            let n_ports = node.ports.len();
            let ppp = if sw.ports_per_pool == 0 {
                n_ports.max(1)
            } else {
                sw.ports_per_pool as usize
            };
            let n_pools = n_ports.div_ceil(ppp).max(1);
            let pool = sw.pool_size.map_or(sw.buffer.0 / n_pools as u64, |b| b.0);
            let layout = MmuLayout {
                unlimited: sw.unlimited_buffer,
                pool_size: vec![pool; n_pools],
                pool_of_port: (0..n_ports).map(|p| (p / ppp) as u16).collect(),
                queues_per_port: total_q,
                reserve: sw.reserve_per_queue.0,
                alpha: alpha.clone(),
                admission: sw.admission,
            };
            switch_keys.push(SwitchKey {
                node: NodeId::from_idx(i),
                first_sp: sw_ports.len() as u32,
                seed: rng::stream_seed(params.seed, Stream::Node(i as u32)),
            });
            switches.push(Switch {
                mmu: Mmu::new(layout),
                rng: rng::stream(params.seed, Stream::Node(i as u32)),
                shared_red: Vec::new(),
                since_mark: Vec::new(),
            });
            for (local, &p) in node.ports.iter().enumerate() {
                port_owner[p.idx()] = Some(Owner::Switch(sw_ports.len() as u32));
                let local = u16::try_from(local).map_err(|_| {
                    format!(
                        "switch {} has more than {} ports, the engine's limit",
                        NodeId::from_idx(i),
                        u16::MAX
                    )
                })?;
                port_local[p.idx()] = local;
                let queues = PortQueues::new(&levels, quantum);
                sw_ports.push(SwitchPort {
                    queues: match sw.scheduler {
                        Scheduler::Drr => queues,
                        Scheduler::RoundRobin => queues.with_round_robin(),
                        Scheduler::Srf => queues.with_srf(),
                    },
                    switch: s,
                    local,
                    blocked: false,
                    red_rng: rng::stream(params.seed, Stream::Port(p.0)),
                    pause: pause::PauseClock::new(total_q),
                    timer_at: Time::MAX,
                });
            }
        }
        let mut hosts = Vec::with_capacity(topo.hosts.len());
        for (hi, &h) in topo.hosts.iter().enumerate() {
            let ports = &topo.nodes[h.idx()].ports;
            if ports.len() != 1 {
                return Err(format!(
                    "host {h} has {} links; bfcsim's NIC model has exactly one port",
                    ports.len()
                ));
            }
            port_owner[ports[0].idx()] = Some(Owner::Host(hi as u32));
            hosts.push(Host {
                port: ports[0],
                ctrl: VecDeque::new(),
                ready: VecDeque::new(),
                nic: pause::NicQueues::default(),
                paced: BinaryHeap::new(),
                wake_at: Time::MAX,
                timer_at: Time::MAX,
            });
        }
        let wires = topo
            .ports
            .iter()
            .enumerate()
            .map(|(i, port)| {
                let link = &topo.links[port.link.idx()];
                let far = topo.ports[port.peer.idx()].node.idx();
                let into_switch = topo.nodes[far].kind == NodeKind::Switch;
                let owner_of = |p: PortId| {
                    port_owner[p.idx()].expect("every port belongs to a host or a switch")
                };
                let far_shard = own.node_shard[far];
                Wire {
                    rate: link.rate,
                    ps_per_byte: link.rate.ps_per_byte().unwrap_or(0),
                    delay: link.delay
                        + if into_switch {
                            sw.processing_delay
                        } else {
                            Time::ZERO
                        },
                    peer: port.peer,
                    owner: owner_of(PortId::from_idx(i)),
                    far: owner_of(port.peer),
                    far_switch: switch_of_node[far],
                    // Switch ports were checked to number below 2^16 above.
                    far_local: topo.ports[port.peer.idx()].local as u16,
                    busy_until: Time::ZERO,
                    wake_pending: false,
                    remote: if far_shard == own.node_shard[port.node.idx()] {
                        LOCAL
                    } else {
                        far_shard
                    },
                    sending_flow: u32::MAX,
                    first: PacketId::NONE,
                    last: PacketId::NONE,
                    tx_bytes: 0,
                    dequeued: 0,
                }
            })
            .collect();

        let max_delay = topo
            .links
            .iter()
            .map(|l| l.delay + sw.processing_delay)
            .max()
            .unwrap_or(Time::ZERO)
            + Time::from_us(1);
        let local_flows = (0..flows.len() as u32)
            .filter(|&i| own.node_shard[flows[i as usize].spec.src.idx()] == own.me)
            .collect();
        let flow_state = vec![
            FlowState {
                slot: NO_SLOT,
                recv_slot: NO_SLOT,
                finish: Time::MAX,
            };
            flows.len()
        ];
        let persistent = params.nic.connections == Connections::Persistent;
        let mut sim = Shard {
            routes,
            params,
            now: Time::ZERO,
            // Almost every event is due within a link delay and a serialization of now: size the calendar so.
            events: EventQueue::with_horizon(max_delay),
            packets: Packets::new(),
            wires,
            sw_ports,
            switches,
            switch_keys,
            port_local,
            switch_of_node,
            hosts,
            flows,
            flow_state,
            local_flows,
            next_arrival: 0,
            outbox: (0..own.shards).map(|_| Mail::default()).collect(),
            active: Slots::default(),
            connections: persistent.then(ConnectionPool::default),
            inbound: Slots::default(),
            timers: TimerQueue::default(),
            timer_event_at: None,
            flow_ctx: FlowContext {
                mss: 0,
                line_rate: Rate(1),
                base_rtt: Time::ZERO,
                bdp: Bytes(0),
            },
            flows_done: 0,
            counters: Counters::default(),
            fingerprint: 0,
            progress: 0,
            drops: [0; DropReason::ALL.len()],
            port_drops: vec![0; topo.ports.len()],
            charges: Vec::new(),
            data_base,
            queues_per_class: per_class as u64,
            scheme: Scheme::Plain(scheme::Plain),
            timer_batches: scheme::TimerBatches::default(),
            hop: pause::HopState::new(),
            queuing_delay: LogHistogram::new(),
            single_packet_delay: LogHistogram::new(),
            rate: rate::RateState::default(),
            topo,
        };
        sim.flow_ctx = sim.compute_flow_context();
        sim.init_shared_ecn();
        sim.init_rate();
        sim.init_scheme()?;
        if let Some(first) = sim.flows.first() {
            sim.now = first.spec.start;
        }
        if let Some(&first) = sim.local_flows.first() {
            let start = sim.flows[first as usize].spec.start;
            sim.events.push(start, Event::Arrival);
        }
        Ok(sim)
    }

    /// The flow context every controller is created with: the fastest host's rate and the fabric's largest
    /// base RTT (a full data packet out and its ACK back, store and forward, over the slowest equal-cost
    /// paths), so that a line-rate start of one BDP keeps any lone flow at line rate.
    fn compute_flow_context(&self) -> FlowContext {
        let nic = &self.params.nic;
        let line_rate = self
            .hosts
            .iter()
            .map(|h| self.wires[h.port.idx()].rate)
            .max()
            .unwrap_or(Rate(1));
        let data = self.max_one_way(Bytes((nic.payload + nic.header) as u64));
        let ack = self.max_one_way(Bytes(nic.ack_size as u64));
        // The largest data latency plus the largest ACK latency bounds every pair's round trip (and equals the
        // largest one on symmetric fabrics).
        let max = |v: Vec<Time>| v.into_iter().max().unwrap_or(Time::ZERO);
        let base_rtt = max(data) + max(ack);
        FlowContext {
            mss: nic.payload,
            line_rate,
            base_rtt,
            bdp: line_rate.bytes_in(base_rtt),
        }
    }

    /// For each host, the largest one-way latency of a `size`-byte packet from any other host to it: a
    /// longest-path pass over the routing DAG towards each destination, nearest nodes first.
    fn max_one_way(&self, size: Bytes) -> Vec<Time> {
        let mut latency = vec![Time::ZERO; self.topo.nodes.len()];
        // Each port's serialization plus propagation, computed once rather than once per destination.
        let hop: Vec<Time> = self
            .wires
            .iter()
            .map(|w| w.rate.tx_time(size) + w.delay)
            .collect();
        (0..self.hosts.len() as u32)
            .map(|d| {
                for v in self.routes.nodes_towards(d) {
                    latency[v.idx()] = self
                        .routes
                        .next_hops(v, d)
                        .iter()
                        .map(|&p| hop[p.idx()] + latency[self.topo.peer_node(p).idx()])
                        .max()
                        .unwrap_or(Time::ZERO);
                }
                self.topo
                    .hosts
                    .iter()
                    .map(|h| latency[h.idx()])
                    .max()
                    .unwrap_or(Time::ZERO)
            })
            .collect()
    }

    /// Rate and delay (propagation plus the receiving switch's processing delay) of the link leaving `port`.
    pub fn port_link(&self, port: PortId) -> (Rate, Time) {
        (self.wires[port.idx()].rate, self.wires[port.idx()].delay)
    }

    // ----------------------------------------------------------------------------------------------------
    // Driving the run

    /// Processes every event due up to and including `end`; the caller ([`crate::sim::Sim`]) makes sure no
    /// parcel from another shard is due by then.
    pub(crate) fn run_window(&mut self, end: Time) {
        while let Some((t, ev)) = self.events.pop_until_ahead(end, |ev| {
            // The packet a delivery a few pops ahead reads first, last touched as it left a link delay ago: on
            // the 1024-host tree its line missed the L2 in a quarter of the loop's misses. Asking for it costs
            // about 25 instructions an event shown (+5%), which CLOS-128's DCTCP, mostly in cache, pays back
            // only just; the tree's DCTCP and BFC on CLOS-128 run 6-17% faster (BENCHMARKS.md).
            if let Event::Deliver(p) = ev {
                self.packets.prefetch(self.wires[p.idx()].first);
            }
        }) {
            self.now = t;
            self.counters.events += 1;
            match ev {
                Event::TxDone(p) => {
                    self.wires[p.idx()].wake_pending = false;
                    self.service(p);
                }
                Event::Deliver(p) => self.deliver(p),
                Event::Arrival => self.arrival(),
                Event::Timer => self.fire_timers(),
                Event::SchemeTimer(p) => self.fire_scheme_timer(p),
                Event::SchemeTick => self.fire_timer_batch(),
                Event::Watchdog => self.watchdog(),
                Event::CcTimer => self.fire_cc_timers(),
                Event::NicWake(p) => self.nic_wake(p),
            }
        }
    }

    /// The time of the earliest pending event (`Time::MAX`: none).
    pub(crate) fn next_event(&self) -> Time {
        self.events.next_time().unwrap_or(Time::MAX)
    }

    /// Moves the clock to `t` (no earlier than the last event) when a run stops at a time limit.
    pub(crate) fn set_now(&mut self, t: Time) {
        self.now = self.now.max(t);
    }

    /// Moves the parcels for shard `to` posted since the last call into `into` (empty: by swapping the
    /// vectors, so that parcels are not copied and the two vectors' capacities circulate).
    pub(crate) fn take_outbox(&mut self, to: usize, into: &mut Mail) {
        into.take_all(&mut self.outbox[to]);
    }

    /// Puts parcels from other shards on their wires' far ends, to be delivered when due, with their side-table
    /// state (read in the order [`Shard::post`] wrote it).
    pub(crate) fn accept(&mut self, mail: &mut Mail) {
        let Mail {
            parcels,
            counts,
            hops,
            words,
        } = mail;
        let (mut counts, mut hops, mut words) = (counts.iter(), &hops[..], &words[..]);
        // The number of a parcel's bitmap words or of its stack's pushed hops.
        let mut count = || {
            *counts
                .next()
                .expect("a count for each parcel with side-table state")
        };
        for parcel in parcels.drain(..) {
            let (port, arrive, packet) = parcel.open();
            let id = self.packets.alloc(packet);
            if packet.kind == PacketKind::Refresh {
                let (map, rest) = words.split_at(count() as usize);
                words = rest;
                self.packets.get_mut(id).seq = self.hop.store_map(map) as u64;
            } else if self.rate.int {
                if id.idx() >= self.rate.stacks.len() {
                    self.rate.stacks.resize(id.idx() + 1, IntStack::EMPTY);
                }
                hops = &hops[self.rate.stacks[id.idx()].unpack(hops, count() as u8)..];
            }
            self.put_on_wire(port, arrive, id);
        }
        debug_assert!(
            counts.next().is_none() && hops.is_empty() && words.is_empty(),
            "every item of the mail read"
        );
        mail.counts.clear();
        mail.hops.clear();
        mail.words.clear();
    }

    /// Packets and bytes this shard holds (NICs, queues, wires and its outbox), for the conservation check.
    pub(crate) fn census(&self) -> (u64, u64) {
        let (mut pkts, mut bytes) = (0u64, 0u64);
        let mut count = |size: u32| {
            pkts += 1;
            bytes += size as u64;
        };
        for w in &self.wires {
            let mut id = w.first;
            while id != PacketId::NONE {
                let p = self.packets.get(id);
                count(p.size);
                id = p.wire_next;
            }
        }
        for sp in &self.sw_ports {
            sp.queues
                .iter()
                .for_each(|id| count(self.packets.get(id).size));
        }
        for h in &self.hosts {
            h.ctrl
                .iter()
                .for_each(|&id| count(self.packets.get(id).size));
        }
        for p in self.outbox.iter().flat_map(Mail::parcels) {
            count(p.0.size);
        }
        self.scheme_census(&mut |id| count(self.packets.get(id).size));
        (pkts, bytes)
    }

    // ----------------------------------------------------------------------------------------------------
    // Links

    /// Starts serializing `pkt` on `port` now; the packet reaches the far end after its serialization and the
    /// wire's delay (store and forward). Always inlined: out of line, saving and restoring its registers
    /// took a third of its instructions, at every packet-hop.
    #[inline(always)]
    fn transmit(&mut self, port: PortId, pkt: PacketId) {
        let p = self.packets.get(pkt);
        let size = p.size;
        self.fingerprint = self.fingerprint.wrapping_add(hop_hash(self.now, port, p));
        let w = &mut self.wires[port.idx()];
        let tx = if w.ps_per_byte != 0 {
            Time(size as u64 * w.ps_per_byte)
        } else {
            w.rate.tx_time(Bytes(size as u64))
        };
        debug_assert!(
            self.now >= w.busy_until,
            "port {port:?} starts a packet at {} while sending until {}",
            self.now,
            w.busy_until
        );
        let end = self.now + tx;
        w.busy_until = end;
        let arrive = end + w.delay;
        w.tx_bytes += size as u64;
        self.counters.hops += 1;
        if w.remote != LOCAL {
            self.post(port, arrive, pkt);
            return;
        }
        self.put_on_wire(port, arrive, pkt);
    }

    /// Appends `pkt`, due at the far end at `arrive`, to `port`'s wire, and schedules its delivery if it is the
    /// first there. Arrivals on a wire are in the order of their transmissions.
    #[inline(always)]
    fn put_on_wire(&mut self, port: PortId, arrive: Time, pkt: PacketId) {
        self.packets.get_mut(pkt).wire_next = PacketId::NONE;
        let w = &mut self.wires[port.idx()];
        let last = std::mem::replace(&mut w.last, pkt);
        if last == PacketId::NONE {
            w.first = pkt;
            self.events.push(arrive, Event::Deliver(port));
        } else {
            // The last packet went on the wire one transmission ago: its line is usually still in the L2
            // (cachegrind: this write misses the L1 but seldom the L2).
            let p = self.packets.get_mut(last);
            p.wire_next = pkt;
            p.stamp = arrive;
        }
    }

    /// Hands `pkt`, just sent on `port`, to the shard owning the far end, with its side-table state.
    #[cold]
    fn post(&mut self, port: PortId, arrive: Time, pkt: PacketId) {
        let packet = *self.packets.get(pkt);
        self.wires[port.idx()].sending_flow = if packet.kind == PacketKind::Data {
            packet.flow.0
        } else {
            u32::MAX
        };
        let mail = &mut self.outbox[self.wires[port.idx()].remote as usize];
        if packet.kind == PacketKind::Refresh {
            let map = self.hop.map(packet.seq as u32);
            mail.words.extend_from_slice(map);
            mail.counts.push(map.len() as u32);
            self.hop.release_map(packet.seq as u32);
        } else if self.rate.int {
            let stack = self.rate.stacks.get(pkt.idx()).unwrap_or(&IntStack::EMPTY);
            mail.counts.push(stack.pack_into(&mut mail.hops) as u32);
        }
        self.packets.free(pkt);
        mail.parcels.push(Parcel::new(packet, port, arrive));
    }

    /// Asks `port` to send if it is idle, or to wake when its current packet is out. A pending wake-up
    /// already covers both cases: it fires at `busy_until` (possibly now, later in this instant's order).
    /// Always inlined: a few compares for every packet entering a switch or a NIC, where a call cost as much.
    #[inline(always)]
    fn kick(&mut self, port: PortId) {
        let w = &mut self.wires[port.idx()];
        if w.wake_pending {
            return;
        }
        if self.now >= w.busy_until {
            self.service(port);
        } else {
            w.wake_pending = true;
            let at = w.busy_until;
            self.events.push(at, Event::TxDone(port));
        }
    }

    /// The port is idle: send the next packet its owner has, and arrange to wake when it is out if more wait.
    fn service(&mut self, port: PortId) {
        let more = match self.wires[port.idx()].owner {
            Owner::Switch(sp) => self.switch_send(port, sp),
            Owner::Host(h) => self.nic_send(h),
        };
        if more {
            let w = &mut self.wires[port.idx()];
            w.wake_pending = true;
            let at = w.busy_until;
            self.events.push(at, Event::TxDone(port));
        }
    }

    /// A packet reached the far end of `port`'s wire: hand it to the device there. Always inlined into the event
    /// loop: with six schemes behind the seam's dispatch, the inliner left it out of line (1.48e9 instructions
    /// of its own on the 1 ms bench, 1.7% more in all than inline).
    #[inline(always)]
    fn deliver(&mut self, port: PortId) {
        let w = &mut self.wires[port.idx()];
        let pkt = w.first;
        debug_assert!(
            pkt != PacketId::NONE,
            "a Deliver event has a packet on the wire"
        );
        let p = self.packets.get(pkt);
        let (kind, next) = (p.kind, p.wire_next);
        w.first = next;
        if next == PacketId::NONE {
            w.last = PacketId::NONE;
        } else {
            self.events.push(p.stamp, Event::Deliver(port));
            self.packets.prefetch(next);
            // Under HPCC its INT stack is stamped, echoed or read soon after it arrives.
            if let Some(stack) = self.rate.stacks.get(next.idx()) {
                stack.prefetch();
            }
        }
        let (peer, far, far_switch, far_local) = (w.peer, w.far, w.far_switch, w.far_local);
        if kind.is_hop_local() {
            self.scheme_frame(peer, pkt);
            return;
        }
        match far {
            Owner::Switch(_) => self.switch_receive(far_local, far_switch as usize, pkt),
            Owner::Host(h) => self.host_receive(h, pkt),
        }
    }

    // ----------------------------------------------------------------------------------------------------
    // Switches

    /// A packet entered local port `in_local` of switch `s`: route it, admit it into the egress queue, or drop
    /// it.
    /// Always inlined into the event loop: it is the one caller's hottest path, and the inliner's size limit
    /// left it out of line as soon as routing grew a branch (+1.5% instructions on the 1 ms bench).
    #[inline(always)]
    fn switch_receive(&mut self, in_local: u16, s: usize, pkt: PacketId) {
        // Read in place; the one copy of the packet is the scheme's, in `Entry`.
        let p = self.packets.get(pkt);
        let key = self.switch_keys[s];
        let egress = match self.scheme_route(s, p) {
            Some(port) => port,
            None => {
                let hash = match self.params.switch.load_balancing {
                    LoadBalancing::Ecmp => ecmp_hash(p.hash as u64, key.seed),
                    LoadBalancing::Spray => self.switches[s].rng.random(),
                };
                self.routes.select(key.node, p.dst_host, hash)
            }
        };
        let out_local = self.port_local[egress.idx()];
        let out_sp = key.first_sp + out_local as u32;
        debug_assert!(
            matches!(self.wires[egress.idx()].owner, Owner::Switch(sp) if sp == out_sp),
            "port {egress} is local port {out_local} of switch {s}"
        );
        let sc = &self.params.switch;
        let control = p.kind.is_control()
            && sc.control_priority
            && (sc.ack_priority || p.kind.is_hop_local());
        let entry = Entry {
            s,
            in_local,
            out_sp,
            out_local,
            egress,
            pkt,
            p: *p,
        };
        let admitted = if control {
            self.admit_and_push(&entry, 0)
        } else {
            self.scheme_enqueue(&entry)
        };
        if let Err(reason) = admitted {
            if self.rate.drop_notify && entry.p.kind == PacketKind::Data {
                self.notify_drop(&entry.p);
            }
            self.port_drops[egress.idx()] += 1;
            self.drop_packet(pkt, reason);
            return;
        }
        self.kick(egress);
    }

    /// Admits packet `e` into queue `queue` of its egress port's buffer (Dynamic Threshold) and queues it there.
    #[inline(always)]
    fn admit_and_push(&mut self, e: &Entry, queue: usize) -> Result<(), DropReason> {
        self.admit(e.s, e.out_local as usize, queue, e.pkt, e.p.size)?;
        self.push_admitted(e, queue);
        Ok(())
    }

    /// Admits packet `pkt` of `size` bytes into `queue` of local port `port` of switch `s`'s buffer, and keeps
    /// where its bytes are counted for [`Shard::switch_send`]'s release.
    #[inline(always)]
    fn admit(
        &mut self,
        s: usize,
        port: usize,
        queue: usize,
        pkt: PacketId,
        size: u32,
    ) -> Result<(), DropReason> {
        let held = self.queue_level(s, port, queue);
        let charge = self.switches[s].mmu.admit(port, queue, size as u64, held)?;
        self.hold_charge(pkt, charge);
        Ok(())
    }

    /// The bytes `queue` of local port `port` of switch `s` holds: the level its buffer admits against, counted
    /// once, by the port's queues.
    #[inline(always)]
    fn queue_level(&self, s: usize, port: usize, queue: usize) -> u64 {
        let sp = self.switch_keys[s].first_sp as usize + port;
        self.sw_ports[sp].queues.queue_bytes(queue)
    }

    /// Keeps a per-packet charge of the buffer ([`Shard::charges`]).
    #[inline(always)]
    fn hold_charge(&mut self, pkt: PacketId, charge: Charge) {
        if charge != Charge::ByLevel {
            let i = pkt.idx();
            if i >= self.charges.len() {
                self.charges.resize(i + 1, Charge::ByLevel);
            }
            self.charges[i] = charge;
        }
    }

    /// Queues packet `e`, admitted into the buffer, in `queue` of its egress port: ECN marking on enqueue and
    /// SRF's rank when configured, and the time it joined (per-hop queuing delay).
    #[inline(always)]
    fn push_admitted(&mut self, e: &Entry, queue: usize) {
        let p = &e.p;
        // BFC-SRF's header field (App. A.2): the flow's payload bytes from this packet's first byte to its end,
        // which the sender writes into each data packet. Derived here rather than carried, so that `Packet`
        // stays one cache line; only SRF switches read it.
        let rank = if self.params.switch.scheduler == Scheduler::Srf && p.kind == PacketKind::Data {
            self.flows[p.flow.idx()].spec.size.0 - p.seq
        } else {
            0
        };
        let ecn = &self.params.switch.ecn;
        if ecn.enabled
            && ecn.mark_on == MarkPoint::Enqueue
            && p.ect
            && self.ecn_marks(e.out_sp, queue, p.size)
        {
            self.mark_ce(e.pkt);
        }
        let out = &mut self.sw_ports[e.out_sp as usize];
        out.queues
            .push_ranked(queue, e.pkt, p.size, rank, flow_tag(p));
        self.packets.get_mut(e.pkt).stamp = self.now;
    }

    /// Dequeues and transmits the next packet of switch port `sp`. Returns whether more wait.
    fn switch_send(&mut self, port: PortId, sp: u32) -> bool {
        let out = &mut self.sw_ports[sp as usize];
        let Some((pkt, size, queue)) = out.queues.pop() else {
            return false;
        };
        // The queue's next packet is likely the port's next to send, one serialization from now; behind a
        // deep queue its line has left the cache since it arrived.
        if let Some(next) = out.queues.head(queue) {
            self.packets.prefetch(next);
            // HPCC stamps its INT stack as it leaves.
            if let Some(stack) = self.rate.stacks.get(next.idx()) {
                stack.prefetch();
            }
        }
        let mmu = &mut self.switches[out.switch as usize].mmu;
        // The queue held the packet's bytes until the pop.
        let held = out.queues.queue_bytes(queue) + size as u64;
        if self.charges.is_empty() {
            mmu.release(out.local as usize, size as u64, held);
        } else {
            mmu.release_charged(
                out.local as usize,
                queue,
                size as u64,
                held,
                self.charges[pkt.idx()],
            );
        }
        let p = self.packets.get_mut(pkt);
        let data = p.kind == PacketKind::Data;
        if data {
            let delay = (self.now - p.stamp).0;
            self.queuing_delay.record(delay);
            // A first packet shorter than a full one is a whole flow; a full one is when the flow is that size.
            let mss = self.params.nic.payload;
            if p.seq == 0
                && (p.payload < mss || self.flows[p.flow.idx()].spec.size.0 == p.payload as u64)
            {
                self.single_packet_delay.record(delay);
            }
        }
        self.scheme_dequeued(sp, pkt, queue, data);
        if data && self.rate.int {
            self.int_stamp(port, sp, pkt);
        }
        let ecn = &self.params.switch.ecn;
        if ecn.enabled
            && ecn.mark_on == MarkPoint::Dequeue
            && self.packets.get(pkt).ect
            && self.ecn_marks(sp, queue, size)
        {
            self.mark_ce(pkt);
        }
        let more = self.sw_ports[sp as usize].queues.has_ready();
        self.wires[port.idx()].dequeued += 1;
        self.transmit(port, pkt);
        more
    }

    fn drop_packet(&mut self, pkt: PacketId, reason: DropReason) {
        let p = self.packets.get(pkt);
        let size = p.size as u64;
        self.counters.dropped_data_pkts += u64::from(p.kind == PacketKind::Data);
        self.counters.dropped_pkts += 1;
        self.counters.dropped_bytes += size;
        self.drops[reason as usize] += 1;
        self.packets.free(pkt);
    }

    // ----------------------------------------------------------------------------------------------------
    // Hosts

    fn arrival(&mut self) {
        let id = FlowId(self.local_flows[self.next_arrival]);
        self.next_arrival += 1;
        if let Some(&next) = self.local_flows.get(self.next_arrival) {
            self.events
                .push(self.flows[next as usize].spec.start, Event::Arrival);
        }
        let info = &self.flows[id.idx()];
        let (src_host, dst_host) = (info.src_host, info.dst_host);
        let sender = Sender::new(
            info.spec.size.0,
            self.params.nic.payload,
            &self.params.nic.transport,
        );
        let (conn, carried) = match &mut self.connections {
            Some(pool) => {
                let (index, carried) = pool.open(src_host, dst_host);
                (Some(index), carried)
            }
            None => (None, None),
        };
        let (sender, cc) = match carried.and_then(|c| c.next_flow(self.now)) {
            Some((rtt, cc)) => (sender.with_rtt_estimate(rtt), cc),
            None => (sender, self.params.cc.instantiate(&self.flow_ctx)),
        };
        let active = Active {
            id,
            sender,
            cc,
            in_ring: false,
            parked: false,
            nic_q: 0,
            timer_armed: false,
            rto_deadline: Time::ZERO,
            rto_paused_base: Time::ZERO,
            last_send: Time::ZERO,
            last_size: 0,
            waiting: false,
            wait_until: Time::MAX,
            cc_timer_at: Time::MAX,
            conn,
        };
        let slot = self.active.insert(active);
        self.flow_state[id.idx()].slot = slot;
        self.active[slot as usize].nic_q = self.scheme_flow_started(src_host, id, slot as usize);
        self.make_ready(id);
    }

    /// Puts a flow in its NIC's round robin if it can send and is not already there.
    fn make_ready(&mut self, id: FlowId) {
        let (slot, h) = (
            self.flow_state[id.idx()].slot as usize,
            self.flows[id.idx()].src_host,
        );
        let a = &self.active[slot];
        if a.in_ring || a.parked || !a.sender.can_send(a.cc.window()) {
            return;
        }
        if !self.scheme_may_send(h, id, slot) {
            return;
        }
        self.active[slot].in_ring = true;
        let host = &mut self.hosts[h as usize];
        host.ready.push_back(id);
        let port = host.port;
        self.kick(port);
    }

    /// The next flow host `h`'s NIC considers, taken out of its ready list: the longest waiting under round
    /// robin; under SRF (BFC App. A.2: "NICs also follow SRF scheduling") the one with the fewest bytes left to
    /// send, the longest waiting on a tie. A finished flow ranks 0 so that it is dropped from the list at once.
    #[inline]
    fn next_ready(&mut self, h: u32) -> Option<FlowId> {
        let ready = &mut self.hosts[h as usize].ready;
        if self.params.nic.scheduler == NicScheduler::RoundRobin {
            return ready.pop_front();
        }
        let (state, active) = (&self.flow_state, &self.active);
        let remaining = |id: FlowId| match state[id.idx()].slot {
            NO_SLOT => 0,
            slot => active[slot as usize].sender.remaining(),
        };
        let (at, _) = ready
            .iter()
            .enumerate()
            .min_by_key(|&(_, &id)| remaining(id))?;
        ready.remove(at)
    }

    /// The NIC of host `h` is idle: send a control frame if one waits, else the next data packet of the ready
    /// flows in the NIC's order ([`Shard::next_ready`]). Returns whether more may wait.
    fn nic_send(&mut self, h: u32) -> bool {
        let port = self.hosts[h as usize].port;
        if let Some(pkt) = self.scheme_nic_poll(h) {
            self.transmit(port, pkt);
            // More of the scheme's packets, control frames or data may wait; a spare wake-up finds none.
            return true;
        }
        let host = &mut self.hosts[h as usize];
        // Only a NIC with a paused queue can be held whole by the scheme.
        let paused = host.nic.any_paused();
        if let Some(pkt) = host.ctrl.pop_front() {
            let flows_wait = !host.ready.is_empty();
            let more =
                !host.ctrl.is_empty() || flows_wait && !(paused && self.scheme_nic_blocked(h));
            self.transmit(port, pkt);
            return more;
        }
        if paused && self.scheme_nic_blocked(h) {
            return false;
        }
        while let Some(id) = self.next_ready(h) {
            let slot = self.flow_state[id.idx()].slot;
            if slot == NO_SLOT {
                continue; // finished while queued
            }
            let slot = slot as usize;
            if !self.scheme_may_send(h, id, slot) {
                self.active[slot].in_ring = false;
                continue;
            }
            let a = &mut self.active[slot];
            let window = a.cc.window();
            if !a.sender.can_send(window) {
                a.in_ring = false;
                continue;
            }
            if self.rate.active && self.pace(h, id, slot) {
                continue;
            }
            let info = &self.flows[id.idx()];
            let a = &mut self.active[slot];
            let idle_before = a.sender.in_flight() == 0;
            let (seq, len, resend) = a.sender.next_segment();
            if a.sender.can_send(window) {
                self.hosts[h as usize].ready.push_back(id);
            } else {
                a.in_ring = false;
            }
            let nic = &self.params.nic;
            let size = len + nic.header + self.rate.int_overhead;
            let pkt = self.packets.alloc(Packet {
                seq,
                sent_at: self.now,
                flow: id,
                size,
                payload: len,
                dst_host: info.dst_host,
                wire_next: PacketId::NONE,
                hash: info.hash as u32,
                aux: 0,
                kind: PacketKind::Data,
                class: info.spec.class,
                ect: true,
                ce: false,
                incast: info.spec.incast,
                upstream_q: a.nic_q,
                in_port: 0,
                hop_flags: 0,
                stamp: Time::ZERO,
            });
            self.counters.injected_pkts += 1;
            self.counters.injected_bytes += size as u64;
            self.counters.data_pkts += 1;
            if resend {
                self.counters.retransmits += 1;
            }
            if idle_before {
                self.restart_rto(h, slot);
            }
            let a = &mut self.active[slot];
            a.last_send = self.now;
            a.last_size = size;
            if !a.timer_armed {
                a.timer_armed = true;
                let at = a.rto_deadline;
                self.arm_timer(at, id);
            }
            if self.rate.active {
                self.data_sent(slot, pkt, size);
            }
            self.scheme_data_sent(h, slot, pkt);
            // The scheme may have queued a control packet behind this one.
            let host = &self.hosts[h as usize];
            let more = !host.ready.is_empty() || !host.ctrl.is_empty();
            self.transmit(port, pkt);
            return more;
        }
        false
    }

    // Out of line: it keeps `deliver` small enough to be inlined into the event loop with the switch path
    // (hosts receive one packet for every few switch hops).
    #[inline(never)]
    fn host_receive(&mut self, h: u32, pkt: PacketId) {
        let p = *self.packets.get(pkt);
        self.counters.delivered_pkts += 1;
        self.counters.delivered_bytes += p.size as u64;
        self.packets.free(pkt);
        if p.kind == PacketKind::Data {
            self.receive_data(h, &p, pkt);
            return;
        }
        if p.kind.is_scheme_control() {
            self.scheme_packet_arrived(h, &p);
            return;
        }
        let slot = self.flow_state[p.flow.idx()].slot;
        if slot == NO_SLOT {
            return; // a late reply for a flow that already completed
        }
        let slot = slot as usize;
        match p.kind {
            PacketKind::Data => unreachable!("handled above"),
            PacketKind::Ack => {
                let a = &mut self.active[slot];
                let rtt = self.now - p.sent_at;
                let out = a.sender.handle_ack(p.seq, Some(rtt));
                if out.complete {
                    self.complete(p.flow);
                    return;
                }
                if out.newly_acked > 0 {
                    self.restart_rto(h, slot);
                }
                let a = &mut self.active[slot];
                let mut signal = AckSignal {
                    newly_acked: out.newly_acked,
                    ce_bytes: p.aux as u64,
                    ack_seq: p.seq,
                    snd_nxt: a.sender.snd_nxt(),
                    rtt: Some(rtt),
                    ..AckSignal::default()
                };
                if self.rate.int {
                    signal.int = &self.rate.stacks[pkt.idx()];
                }
                a.cc.on_ack(self.now, &signal);
                self.cc_changed(slot);
                self.make_ready(p.flow);
            }
            PacketKind::Cnp => {
                self.active[slot].cc.on_cnp(self.now);
                self.cc_changed(slot);
                self.make_ready(p.flow);
            }
            PacketKind::Pause | PacketKind::Resume | PacketKind::Refresh => {
                unreachable!("per-hop frames are consumed where they arrive")
            }
            PacketKind::CreditRequest
            | PacketKind::Credit
            | PacketKind::CreditStop
            | PacketKind::Grant
            | PacketKind::Resend => {
                unreachable!("handled above")
            }
            PacketKind::Nack => {
                let a = &mut self.active[slot];
                let before = a.sender.snd_nxt();
                a.sender.handle_ack(p.seq, None);
                // With drop notices, the go-back the switch's notice caused already resends the gap.
                let covered = self.rate.drop_notify && a.sender.covered(p.seq, p.sent_at);
                let sacked = (p.aux > 0).then(|| p.seq + p.aux as u64);
                if !covered && a.sender.handle_nack(p.seq, sacked) {
                    a.cc.on_loss(self.now, before);
                    self.restart_rto(h, slot);
                    self.cc_changed(slot);
                }
                self.make_ready(p.flow);
            }
        }
    }

    /// Data packet `p` (whose id was `pkt`) reached its destination host `h`: the flow's receiver answers.
    #[inline]
    fn receive_data(&mut self, h: u32, p: &Packet, pkt: PacketId) {
        let size = self.flows[p.flow.idx()].spec.size.0;
        let recv_slot = self.flow_state[p.flow.idx()].recv_slot;
        if recv_slot == RECEIVED {
            self.counters.duplicates += 1;
            // A late copy: the receiver has the whole flow and acknowledges all of it, as its last ACK did
            // (`Receiver::handle_data` answers a duplicate so, and its state is gone).
            self.send_reply(h, p, pkt, PacketKind::Ack, size, 0);
            self.scheme_data_arrived(h, p, size);
            return;
        }
        let slot = match recv_slot {
            NO_SLOT => {
                let state = Inbound {
                    receiver: Receiver::new(size, &self.params.nic.transport),
                    cnp: CnpGenerator::new(self.rate.cnp_interval),
                };
                let slot = self.inbound.insert(state);
                self.flow_state[p.flow.idx()].recv_slot = slot;
                slot as usize
            }
            s => s as usize,
        };
        // The CNP goes first, so that the sender reacts to it before the ACK (HPCC ns-3's order).
        if self.rate.cnp && self.inbound[slot].cnp.on_data(self.now, p.ce) {
            self.send_reply(h, p, pkt, PacketKind::Cnp, p.seq, 0);
        }
        let receiver = &mut self.inbound[slot].receiver;
        if p.seq + (p.payload as u64) <= receiver.rcv_nxt() {
            self.counters.duplicates += 1;
        } else {
            self.counters.out_of_order += u64::from(p.seq > receiver.rcv_nxt());
            self.progress += 1;
        }
        let reply = receiver.handle_data(p.seq, p.payload, p.ce);
        let held = receiver.received();
        if receiver.rcv_nxt() == size {
            self.flow_state[p.flow.idx()].recv_slot = RECEIVED;
            self.inbound.release(slot as u32);
        }
        match reply {
            Reply::Nothing => {}
            Reply::Ack { seq, ce_bytes } => {
                self.send_reply(h, p, pkt, PacketKind::Ack, seq, ce_bytes)
            }
            Reply::Nack { seq, sacked } => {
                // The SACK block travels as its distance above the expected byte (0: none, too far to say).
                let sack = u32::try_from(sacked - seq).unwrap_or(0);
                self.send_reply(h, p, pkt, PacketKind::Nack, seq, sack)
            }
        }
        self.scheme_data_arrived(h, p, held);
    }

    /// A control packet of flow `id` of `kind` and `size` bytes, from its receiver to its sender when
    /// `to_sender`, else from its sender to its receiver: `seq` and `aux` as the kind defines them.
    fn new_control(
        &mut self,
        id: FlowId,
        to_sender: bool,
        kind: PacketKind,
        (seq, aux): (u64, u32),
        size: u32,
    ) -> PacketId {
        let f = &self.flows[id.idx()];
        let (dst_host, hash) = if to_sender {
            (f.src_host, f.rev_hash)
        } else {
            (f.dst_host, f.hash)
        };
        self.counters.injected_pkts += 1;
        self.counters.injected_bytes += size as u64;
        self.packets.alloc(Packet {
            seq,
            sent_at: self.now,
            flow: id,
            size,
            payload: 0,
            dst_host,
            wire_next: PacketId::NONE,
            hash: hash as u32,
            aux,
            kind,
            class: 0,
            ect: false,
            ce: false,
            incast: f.spec.incast,
            upstream_q: 0,
            in_port: 0,
            hop_flags: 0,
            stamp: Time::ZERO,
        })
    }

    /// Queues control packet `pkt` at host `h`'s NIC, ahead of data, without waking the NIC: for the NIC's own
    /// transmit path, which sends it next.
    fn queue_control(&mut self, h: u32, pkt: PacketId) {
        self.hosts[h as usize].ctrl.push_back(pkt);
    }

    /// Queues control packet `pkt` at host `h`'s NIC, ahead of data, and wakes the NIC.
    fn send_control(&mut self, h: u32, pkt: PacketId) {
        self.queue_control(h, pkt);
        let port = self.hosts[h as usize].port;
        self.kick(port);
    }

    /// The port of switch `s` that leads back towards flow `id`'s source along the path its data packets take
    /// under flow-level ECMP (the link they reach `s` through): ExpressPass's symmetric routing of credits.
    fn toward_source(&self, id: FlowId, s: usize) -> PortId {
        let f = &self.flows[id.idx()];
        let at = self.switch_keys[s].node;
        let mut port = self.hosts[f.src_host as usize].port;
        loop {
            let node = self.topo.peer_node(port);
            if node == at {
                return self.topo.ports[port.idx()].peer;
            }
            let sw = self.switch_of_node[node.idx()];
            assert!(sw != u32::MAX, "switch {at} is not on flow {id}'s path");
            let seed = self.switch_keys[sw as usize].seed;
            port = self
                .routes
                .select(node, f.dst_host, ecmp_hash(f.hash & 0xffff_ffff, seed));
        }
    }

    /// Sends a control packet (ACK, NACK or CNP) from host `h` back to the sender of data packet `data`
    /// (whose id was `data_id`), ahead of data at the NIC.
    #[inline]
    fn send_reply(
        &mut self,
        h: u32,
        data: &Packet,
        data_id: PacketId,
        kind: PacketKind,
        seq: u64,
        aux: u32,
    ) {
        let info = &self.flows[data.flow.idx()];
        let size = self.params.nic.ack_size;
        let reply = self.packets.alloc(Packet {
            seq,
            sent_at: data.sent_at,
            flow: data.flow,
            size,
            payload: 0,
            dst_host: info.src_host,
            wire_next: PacketId::NONE,
            hash: info.rev_hash as u32,
            aux,
            kind,
            class: data.class,
            ect: false,
            ce: false,
            incast: data.incast,
            upstream_q: 0,
            in_port: 0,
            hop_flags: 0,
            stamp: Time::ZERO,
        });
        if self.rate.int && kind == PacketKind::Ack {
            self.echo_int(data_id, reply);
        }
        self.counters.injected_pkts += 1;
        self.counters.injected_bytes += size as u64;
        let host = &mut self.hosts[h as usize];
        host.ctrl.push_back(reply);
        let port = host.port;
        self.kick(port);
    }

    fn complete(&mut self, id: FlowId) {
        let info = &self.flows[id.idx()];
        let slot = self.flow_state[id.idx()].slot;
        let a = &self.active[slot as usize];
        let (h, q) = (info.src_host, a.nic_q);
        if let (Some(pool), Some(index)) = (&mut self.connections, a.conn) {
            pool.release(
                h,
                info.dst_host,
                index,
                Connection::after(a.cc.clone(), a.sender.rtt_estimate(), a.last_send),
            );
        }
        self.scheme_flow_finished(h, q);
        self.active.release(slot);
        let state = &mut self.flow_state[id.idx()];
        state.slot = NO_SLOT;
        state.finish = self.now;
        self.flows_done += 1;
    }

    // ----------------------------------------------------------------------------------------------------
    // Timers

    fn arm_timer(&mut self, at: Time, id: FlowId) {
        self.timers.push(at, id);
        if self.timer_event_at.is_none_or(|t| at < t) {
            self.timer_event_at = Some(at);
            self.events.push(at, Event::Timer);
        }
    }

    fn fire_timers(&mut self) {
        if self.timer_event_at == Some(self.now) {
            self.timer_event_at = None;
        }
        while let Some(id) = self.timers.pop_due(self.now) {
            let slot = self.flow_state[id.idx()].slot;
            if slot == NO_SLOT {
                continue;
            }
            let a = &mut self.active[slot as usize];
            debug_assert_eq!(a.id, id);
            if self.now < a.rto_deadline {
                let at = a.rto_deadline;
                self.timers.push(at, id);
                continue;
            }
            if a.sender.in_flight() == 0 {
                a.timer_armed = false;
                continue;
            }
            let h = self.flows[id.idx()].src_host;
            let held =
                self.nic_paused_time(h, slot as usize) - self.active[slot as usize].rto_paused_base;
            let a = &mut self.active[slot as usize];
            if held > Time::ZERO {
                // The queue was paused for `held` since the timer started: that time does not count.
                a.rto_deadline += held;
                a.rto_paused_base += held;
                let at = a.rto_deadline;
                self.timers.push(at, id);
                continue;
            }
            self.counters.timeouts += 1;
            a.sender.handle_timeout();
            a.cc.on_timeout(self.now);
            self.restart_rto(h, slot as usize);
            let at = self.active[slot as usize].rto_deadline;
            self.timers.push(at, id);
            self.cc_changed(slot as usize);
            self.make_ready(id);
        }
        if let Some(next) = self.timers.next_deadline()
            && self.timer_event_at.is_none_or(|t| next < t)
        {
            self.timer_event_at = Some(next);
            self.events.push(next, Event::Timer);
        }
    }

    /// Starts flow `slot`'s retransmission timer afresh: one RTO from now, of time its NIC queue (at host `h`)
    /// is not paused.
    #[inline]
    fn restart_rto(&mut self, h: u32, slot: usize) {
        let base = self.nic_paused_time(h, slot);
        let a = &mut self.active[slot];
        a.rto_deadline = self.now + a.sender.rto();
        a.rto_paused_base = base;
    }

    /// How long flow `slot`'s NIC queue (at host `h`) has been paused in all up to now; zero when timers do not
    /// hold during pauses or nothing pauses NIC queues.
    #[inline]
    fn nic_paused_time(&self, h: u32, slot: usize) -> Time {
        if !self.hop.enabled || !self.params.nic.transport.rto_holds_while_paused {
            return Time::ZERO;
        }
        self.hosts[h as usize]
            .nic
            .paused_time(self.active[slot].nic_q, self.now)
    }

    // ----------------------------------------------------------------------------------------------------
    // Observation

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }
    /// Counters so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }
    /// This shard's part of the run's fingerprint ([`crate::sim::Sim::fingerprint`]).
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
    /// Data packets that brought their receiver new bytes, so far.
    pub(crate) fn progress(&self) -> u64 {
        self.progress
    }
    /// Drops so far, by reason.
    pub fn drops(&self) -> Vec<(DropReason, u64)> {
        DropReason::ALL
            .iter()
            .map(|&r| (r, self.drops[r as usize]))
            .collect()
    }
    /// Flows finished so far.
    pub fn flows_done(&self) -> usize {
        self.flows_done
    }
    /// Number of flows in the run.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    /// The parameters.
    pub fn params(&self) -> &SimParams {
        &self.params
    }
    /// The context controllers are created with (BDP, base RTT).
    pub fn flow_context(&self) -> FlowContext {
        self.flow_ctx
    }
    /// One flow's outcome: its spec, its 5-tuple ports, and when it finished.
    pub fn flow(&self, id: FlowId) -> (&FlowSpec, u16, u16, Option<Time>) {
        let f = &self.flows[id.idx()];
        let finish = self.flow_state[id.idx()].finish;
        (
            &f.spec,
            f.sport,
            f.dport,
            (finish != Time::MAX).then_some(finish),
        )
    }
    /// Payload bytes of flow `id` acknowledged so far (its size once finished, 0 before it starts).
    pub fn flow_acked(&self, id: FlowId) -> u64 {
        let state = self.flow_state[id.idx()];
        match (state.finish, state.slot) {
            (Time::MAX, NO_SLOT) => 0,
            (Time::MAX, slot) => self.active[slot as usize].sender.snd_una(),
            _ => self.flows[id.idx()].spec.size.0,
        }
    }
    /// Bytes transmitted on `port`'s link so far.
    pub fn port_tx_bytes(&self, port: PortId) -> u64 {
        self.wires[port.idx()].tx_bytes
    }
    /// Packets that arrived at switch egress port `port`'s queues so far, every kind, and those of them its
    /// buffer dropped (`None` for a host's port).
    pub fn port_arrivals(&self, port: PortId) -> Option<(u64, u64)> {
        let Owner::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let dropped = self.port_drops[port.idx()];
        let out = &self.sw_ports[sp as usize];
        let dequeued = self.wires[port.idx()].dequeued;
        Some((dequeued + out.queues.len() as u64 + dropped, dropped))
    }
    /// The most packets that were alive at once (NICs, queues and wires).
    pub fn peak_packets(&self) -> usize {
        self.packets.high_water()
    }
    /// Number of switches.
    pub fn switch_count(&self) -> usize {
        self.switches.len()
    }
    /// The node of switch `s`.
    pub fn switch_node(&self, s: usize) -> NodeId {
        self.switch_keys[s].node
    }
    /// The buffer of switch `s` (occupancy per switch, pool, port and queue).
    pub fn switch_mmu(&self, s: usize) -> &Mmu {
        &self.switches[s].mmu
    }
    /// Bytes waiting in queue `q` of switch egress `port` (not counting the packet being serialized).
    pub fn egress_queue_bytes(&self, port: PortId, q: usize) -> u64 {
        match self.wires[port.idx()].owner {
            Owner::Switch(sp) => self.sw_ports[sp as usize].queues.queue_bytes(q),
            Owner::Host(_) => 0,
        }
    }
    /// Active flows at switch egress `port` (BFC §2.3: flows "with one or more packets queued at the switch"):
    /// distinct flows with a data packet waiting in the port's queues or being serialized onto its link, whatever
    /// the scheme (FIFO, fair queuing, BFC with its hashed flow table alike). The packet on the wire counts so
    /// that a lone flow at line rate, whose packets never wait, is active as in M/G/1-PS. A scan of the port's
    /// packets: for sampling, never on the per-packet path. `None` for a host's port.
    pub fn port_active_flows(&self, port: PortId) -> Option<u32> {
        let Owner::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let w = &self.wires[port.idx()];
        let sending = if w.busy_until <= self.now {
            None
        } else if w.remote == LOCAL {
            Some(w.last)
                .filter(|&id| id != PacketId::NONE)
                .map(|id| self.packets.get(id))
                .filter(|p| p.kind == PacketKind::Data)
                .map(|p| p.flow.0)
        } else {
            Some(w.sending_flow).filter(|&f| f != u32::MAX)
        };
        // One allocation of the right size and a plain loop: the sampler calls this for every switch port, and
        // a chained iterator collected into a growing vector cost more than the sort. The queues keep their
        // runs of one data flow (packets are tagged by it on enqueue), so a packet is read only where a queue
        // holds more than one run, and the sort sees one entry per run.
        let queues = &self.sw_ports[sp as usize].queues;
        // Most ports have nothing queued at most samples: no allocation for them (on the 1024-host tree, BFC's
        // sampler took 4% of a run's instructions before this test).
        if queues.is_empty() {
            return Some(sending.is_some() as u32);
        }
        let mut flows = Vec::with_capacity(queues.len() + 1);
        for run in queues.runs() {
            let tag = match run {
                Run::Tag(tag) => tag,
                Run::From(id) => flow_tag(self.packets.get(id)),
            };
            if tag != NO_TAG && flows.last() != Some(&tag) {
                flows.push(tag);
            }
        }
        flows.extend(sending);
        flows.sort_unstable();
        flows.dedup();
        Some(flows.len() as u32)
    }

    /// The state of each queue of switch egress `port` now (`None` for a host's port): for looking inside a
    /// run between slices (which queues hold what, which are paused), never on the per-packet path.
    pub fn port_queues(&self, port: PortId) -> Option<Vec<QueueState>> {
        let Owner::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let queues = &self.sw_ports[sp as usize].queues;
        let mut out = vec![QueueState::default(); queues.count()];
        let mut seen: Vec<(usize, u32)> = Vec::new();
        for (q, state) in out.iter_mut().enumerate() {
            state.paused = queues.is_paused(q);
            state.bytes = queues.queue_bytes(q);
        }
        for (q, state) in out.iter_mut().enumerate() {
            for id in queues.iter_queue(q) {
                let p = self.packets.get(id);
                state.packets += 1;
                if p.kind == PacketKind::Data {
                    state.incast_packets += u32::from(p.incast);
                    seen.push((q, p.flow.0));
                }
            }
        }
        seen.sort_unstable();
        seen.dedup();
        for (q, _) in seen {
            out[q].flows += 1;
        }
        Some(out)
    }

    /// Time each data packet waited in each switch egress queue (ps), since the start or the last
    /// [`Shard::reset_queuing_delay`].
    pub fn queuing_delay(&self) -> &LogHistogram {
        &self.queuing_delay
    }

    /// Time the packets of one-packet flows waited in each switch egress queue (ps), as
    /// [`Shard::queuing_delay`].
    pub fn single_packet_delay(&self) -> &LogHistogram {
        &self.single_packet_delay
    }

    /// Starts both queuing-delay histograms afresh (the end of a measurement warm-up).
    pub fn reset_queuing_delay(&mut self) {
        self.queuing_delay = LogHistogram::new();
        self.single_packet_delay = LogHistogram::new();
    }

    /// The data queue index of class `class`'s first queue at switch ports.
    pub fn data_queue(&self, class: u8) -> usize {
        self.data_base + class as usize * self.queues_per_class as usize
    }

    /// The data queues of class `class` at switch ports (BFC App. A.3: classes own disjoint queues).
    fn class_queues(&self, class: u8) -> std::ops::Range<u16> {
        let class = (class as u64).min(self.params.switch.classes as u64 - 1);
        let first = self.data_base as u64 + class * self.queues_per_class;
        first as u16..(first + self.queues_per_class) as u16
    }

    /// The priority level of class `class`'s data queues ([`Shard::class_queues`]): one level per class, after
    /// the control queue's.
    fn class_level(&self, class: u8) -> usize {
        self.data_base + (class as usize).min(self.params.switch.classes as usize - 1)
    }

    /// The switch queue a packet of class `class` and 5-tuple hash `hash` joins: its class's queues are shared
    /// by hashing, i.e. stochastic fair queuing (McKenney 1990) when a class has several queues.
    #[inline]
    fn data_queue_for(&self, class: u8, hash: u32) -> usize {
        let class = (class as u64).min(self.params.switch.classes as u64 - 1);
        let within = (hash as u64 * self.queues_per_class) >> 32;
        self.data_base + (class * self.queues_per_class + within) as usize
    }

    /// The switch queue flow `id`'s data packets join at every switch port.
    pub fn flow_queue(&self, id: FlowId) -> usize {
        let f = &self.flows[id.idx()];
        self.data_queue_for(f.spec.class, f.hash as u32)
    }

    // ----------------------------------------------------------------------------------------------------
    // Invariants

    /// Checks this shard's end-of-run invariants: every packet it has allocated is in one of its NICs, queues
    /// or wires; every drop has a reason; no buffer went over its capacity; each switch's occupancy equals what
    /// its queues hold. Conservation over the whole run ([`crate::sim::Sim::check_invariants`]) adds up the
    /// shards' counters and [`Shard::census`]. Returns every violation found.
    pub(crate) fn local_violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        let c = &self.counters;
        let held = self.census().0
            - self
                .outbox
                .iter()
                .map(|o| o.parcels.len() as u64)
                .sum::<u64>();
        if held != self.packets.live() as u64 {
            v.push(format!(
                "{} packets are allocated but {held} are in NICs, queues or wires",
                self.packets.live()
            ));
        }
        let dropped: u64 = self.drops.iter().sum();
        if dropped != c.dropped_pkts {
            v.push(format!(
                "{} drops recorded with a reason, {} dropped",
                dropped, c.dropped_pkts
            ));
        }
        for (s, sw) in self.switches.iter().enumerate() {
            for e in sw.mmu.violations() {
                v.push(format!("switch {}: {e}", self.switch_keys[s].node));
            }
            let queued: u64 = self
                .sw_ports
                .iter()
                .filter(|p| p.switch as usize == s)
                .map(|p| p.queues.bytes())
                .sum();
            if queued != sw.mmu.total() {
                v.push(format!(
                    "switch {}: MMU counts {} B but its queues hold {queued} B",
                    self.switch_keys[s].node,
                    sw.mmu.total()
                ));
            }
        }
        self.scheme_violations(&mut v);
        v
    }
}
