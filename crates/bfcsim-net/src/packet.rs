//! Typed packets in a slab with a free list (§3.7). Queues hold [`PacketId`]s and wires lists of packets linked
//! through them; a packet is written when created (and its per-hop fields at each hop) and freed when it is
//! delivered or dropped.

use bfcsim_core::{FlowId, PacketId, Time};

/// What a packet is: a class the fabric acts on, in the top three bits, and within the class a number its owner
/// defines. The fabric knows data and the transport's replies; a scheme names its own packets with
/// [`PacketKind::control`], [`PacketKind::scheduled`] or [`PacketKind::frame`] (ExpressPass's credits, Homa's
/// grants, BFC's refresh), so that a new scheme adds kinds without touching this type. Only one scheme runs, so
/// two schemes may use the same numbers.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketKind(u8);

/// The classes, in [`PacketKind`]'s top three bits.
const CLASS: u8 = 0xE0;
const REPLY: u8 = 0x20;
const CONTROL: u8 = 0x40;
const SCHEDULED: u8 = 0x60;
const FRAME: u8 = 0x80;

impl PacketKind {
    /// Payload of a flow.
    pub const DATA: PacketKind = PacketKind(0);
    /// Cumulative acknowledgement.
    pub const ACK: PacketKind = PacketKind::reply(0);
    /// Negative acknowledgement: the receiver saw a gap and wants `seq` next (a duplicate ACK); `aux` is how far
    /// above `seq` the out-of-order segment that drew it starts (its SACK block; 0 if unknown).
    pub const NACK: PacketKind = PacketKind::reply(1);
    /// Congestion notification (DCQCN's CNP): the receiver saw CE-marked data of the flow.
    pub const CNP: PacketKind = PacketKind::reply(2);
    /// Selective acknowledgement (the Ultra Ethernet transport's, `nic.recovery = "uet"`): the receiver holds
    /// the out-of-order segment starting at `seq`; `aux` is its CE-marked payload bytes (0 if unmarked).
    pub const SACK: PacketKind = PacketKind::reply(3);
    /// Per-hop flow control: stop serving queue `seq` of the port this frame arrives on (BFC §3.3.2), or under
    /// PFC every queue of priority `seq` (IEEE 802.1Qbb XOFF).
    pub const PAUSE: PacketKind = PacketKind::frame(0);
    /// Per-hop flow control: serve queue `seq` (PFC: priority `seq`) again.
    pub const RESUME: PacketKind = PacketKind::frame(1);

    /// The transport's reply number `n` (below 32) from a flow's receiver to its sender: the ACK, the NACK,
    /// the CNP. Rides the control queue when `switch.ack_priority` is on.
    pub const fn reply(n: u8) -> PacketKind {
        assert!(n < 32, "a kind's number is below 32");
        PacketKind(REPLY | n)
    }

    /// A scheme's own end-to-end control packet number `n` (below 32), handled at hosts by the scheme
    /// (`NicSide::packet_arrived`) and carried like a reply (Homa's grants, ExpressPass's credit requests).
    pub const fn control(n: u8) -> PacketKind {
        assert!(n < 32, "a kind's number is below 32");
        PacketKind(CONTROL | n)
    }

    /// A scheme's own end-to-end control packet number `n` (below 32) that the scheme's switch side queues
    /// itself, never in the control queue (ExpressPass's rate-limited credits).
    pub const fn scheduled(n: u8) -> PacketKind {
        assert!(n < 32, "a kind's number is below 32");
        PacketKind(SCHEDULED | n)
    }

    /// A per-hop frame number `n` (below 32): consumed by the device at the far end of its link rather than
    /// routed, in the strict-priority control queue (PAUSE, RESUME, BFC's refresh).
    pub const fn frame(n: u8) -> PacketKind {
        assert!(n < 32, "a kind's number is below 32");
        PacketKind(FRAME | n)
    }

    /// May ride the strict-priority control queue: replies, a scheme's control packets and frames.
    #[inline]
    pub fn is_control(self) -> bool {
        matches!(self.0 & CLASS, REPLY | CONTROL | FRAME)
    }

    /// A scheme's own end-to-end control packets, handled at hosts by the running scheme.
    #[inline]
    pub fn is_scheme_control(self) -> bool {
        matches!(self.0 & CLASS, CONTROL | SCHEDULED)
    }

    /// Hop-by-hop frames, consumed by the device at the far end of the link rather than routed.
    #[inline]
    pub fn is_hop_local(self) -> bool {
        self.0 & CLASS == FRAME
    }

    /// The kind as a number, for hashing.
    #[inline(always)]
    pub fn code(self) -> u8 {
        self.0
    }
}

impl std::fmt::Debug for PacketKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0 & !CLASS;
        match *self {
            PacketKind::DATA => write!(f, "Data"),
            PacketKind::ACK => write!(f, "Ack"),
            PacketKind::NACK => write!(f, "Nack"),
            PacketKind::CNP => write!(f, "Cnp"),
            PacketKind::SACK => write!(f, "Sack"),
            PacketKind::PAUSE => write!(f, "Pause"),
            PacketKind::RESUME => write!(f, "Resume"),
            _ => match self.0 & CLASS {
                REPLY => write!(f, "reply({n})"),
                CONTROL => write!(f, "control({n})"),
                SCHEDULED => write!(f, "scheduled({n})"),
                FRAME => write!(f, "frame({n})"),
                _ => write!(f, "kind({:#x})", self.0),
            },
        }
    }
}

/// A packet's one-bit facts, in one byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    /// ECN-capable transport: switches may mark instead of leaving the packet unmarked.
    pub const ECT: Flags = Flags(1);
    /// Congestion Experienced, set by a switch's RED/ECN marker.
    pub const CE: Flags = Flags(2);
    /// The flow is labelled as part of an incast (BFC App. A.7).
    pub const INCAST: Flags = Flags(4);
    /// A switch cut the packet to its header (NDP's trimming): it carries no payload.
    pub const TRIMMED: Flags = Flags(8);
    /// A frame whose `seq` is the index of words the fabric holds aside for it (BFC's refresh bitmap), which
    /// travel with it between shards.
    pub const WORDS: Flags = Flags(16);
    /// None set.
    pub const NONE: Flags = Flags(0);

    /// Whether every flag of `f` is set.
    #[inline(always)]
    pub fn has(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }

    /// These flags and `f`'s.
    #[inline(always)]
    pub const fn with(self, f: Flags) -> Flags {
        Flags(self.0 | f.0)
    }

    /// These flags with `f`'s set when `on`.
    #[inline(always)]
    pub const fn with_if(self, f: Flags, on: bool) -> Flags {
        Flags(self.0 | if on { f.0 } else { 0 })
    }
}

/// A packet. `seq` is a byte offset: for data the first payload byte carried, for an ACK or NACK the next byte
/// the receiver expects.
///
/// Aligned to a cache line (it is 64 bytes): reading a packet that arrives after a link delay is usually a
/// cache miss, and an unaligned slab would make it two.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    /// Byte offset (see the type's doc).
    pub seq: u64,
    /// When the sender emitted the data packet this is, or that triggered this ACK (echoed for RTT samples).
    pub sent_at: Time,
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Bytes on the wire (payload plus headers).
    pub size: u32,
    /// Payload bytes (0 for control frames).
    pub payload: u32,
    /// Host index of the destination, the key of the routing tables.
    pub dst_host: u32,
    /// On a wire, the packet behind this one on the same wire ([`PacketId::NONE`] when it is the last): a
    /// wire's packets are a list through the packets themselves, so that a delivery finds the next one, and
    /// when it arrives ([`Packet::stamp`]), in the line of the packet it reads anyway. Meaningless elsewhere.
    pub wire_next: PacketId,
    /// The flow's 5-tuple hash, for ECMP.
    pub hash: u32,
    /// A number whose meaning depends on the kind: for an ACK, the payload bytes that arrived with the CE mark
    /// since the previous ACK (DCTCP's ECN echo); for an ExpressPass credit, its sequence number, and for data
    /// under ExpressPass, the sequence number of the credit it answers.
    pub aux: u32,
    /// Kind of packet.
    pub kind: PacketKind,
    /// Traffic class (priority group).
    pub class: u8,
    /// ECN capability and mark, incast label, trimming.
    pub flags: Flags,
    /// The running scheme's own bits, carried end to end; the fabric never reads them.
    pub mark: u8,
    /// BFC's `upstreamQ` (§3.3.2): the queue the packet left at the previous device, stamped by each switch
    /// egress and NIC.
    pub upstream_q: u32,
    /// Local number of the port the packet entered the current switch through.
    pub in_port: u16,
    /// Per-hop bookkeeping the current switch keeps with the packet (BFC's `counterIncr`, sampling).
    pub hop_flags: u8,
    /// A time that depends on where the packet is. In a switch queue: when it joined (per-hop queuing delay).
    /// On a wire, with a packet behind it: when that one ([`Packet::wire_next`]) reaches the far end. The two
    /// never overlap: a packet leaves its queue before it goes on a wire, and its next queue sets the time
    /// again on entry.
    pub stamp: Time,
}

impl Packet {
    /// A packet of `kind` whose other fields are zero, none or unset, for a struct update naming the rest.
    #[inline(always)]
    pub const fn blank(kind: PacketKind) -> Packet {
        Packet {
            seq: 0,
            sent_at: Time::ZERO,
            flow: FlowId(u32::MAX),
            size: 0,
            payload: 0,
            dst_host: u32::MAX,
            wire_next: PacketId::NONE,
            hash: 0,
            aux: 0,
            kind,
            class: 0,
            flags: Flags::NONE,
            mark: 0,
            upstream_q: 0,
            in_port: 0,
            hop_flags: 0,
            stamp: Time::ZERO,
        }
    }

    /// ECN-capable transport.
    #[inline(always)]
    pub fn ect(&self) -> bool {
        self.flags.has(Flags::ECT)
    }

    /// Marked Congestion Experienced.
    #[inline(always)]
    pub fn ce(&self) -> bool {
        self.flags.has(Flags::CE)
    }

    /// Of an incast flow.
    #[inline(always)]
    pub fn incast(&self) -> bool {
        self.flags.has(Flags::INCAST)
    }

    /// Cut to its header by a switch.
    #[inline(always)]
    pub fn trimmed(&self) -> bool {
        self.flags.has(Flags::TRIMMED)
    }

    /// Marks the packet Congestion Experienced; returns whether it was not marked before.
    #[inline(always)]
    pub fn set_ce(&mut self) -> bool {
        let new = !self.ce();
        self.flags = self.flags.with(Flags::CE);
        new
    }
}

// One line a packet: the list of a wire's packets lives in the freed bytes of a field no one read.
const _: () = assert!(std::mem::size_of::<Packet>() == 64);

/// The packet slab.
#[derive(Default)]
pub struct Packets {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl Packets {
    /// An empty slab.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `p` and returns its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                PacketId(i)
            }
            None => {
                self.slots.push(p);
                PacketId::from_idx(self.slots.len() - 1)
            }
        }
    }

    /// Releases `id`; its slot will be reused.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id.0);
    }

    /// The packet `id`.
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.idx()]
    }

    /// Starts bringing packet `id`'s line into the cache, for a read a few events from now: the packet next on
    /// a wire is read when it arrives, one serialization later, and by then the line has usually left the
    /// cache on a large fabric. A hint only: nothing changes but timing ([`PacketId::NONE`] included).
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id.idx()) {
            bfcsim_core::hint::prefetch(p);
        }
    }

    /// The packet `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.idx()]
    }

    /// Packets currently allocated (in NICs, queues or on wires).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The most packets that were ever live at once (the slab's size).
    pub fn high_water(&self) -> usize {
        self.slots.len()
    }
}
