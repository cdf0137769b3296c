//! A port's egress queues: strict priority between levels, deficit round robin among the queues of one level
//! (Shreedhar & Varghese), or per-packet round robin, or shortest remaining first (BFC App. A.2). Any number of
//! queues per port; at most 64 priority levels.
//!
//! A queue can be paused by per-hop flow control (BFC §3.3.2: "the packet scheduler uses deficit round robin
//! to implement fair queuing among the queues that are not paused"): a paused queue keeps its packets and
//! accepts new ones but leaves the scheduler's rings until it is resumed. A bitmap of empty queues answers
//! BFC's "is an empty queue available" (§3.3.1) without a scan of the queues.
//!
//! Each queue entry carries the packet's wire size so the scheduler never touches the packet slab; under SRF a
//! parallel ring per queue carries each packet's rank (its flow's remaining bytes), for the same reason.
//!
//! A packet is pushed with a tag (the engine's: its data flow), and each queue knows its runs of equal tags
//! ([`PortQueues::runs`]) from one bit in each entry and the tag of its last packet, so that the active-flow
//! sampler learns which flows a queue holds without reading its packets (under BFC a queue holds one flow's
//! run, and reading every packet of every queue every 10 µs was a tenth of BFC's cache misses).

use std::collections::VecDeque;

use bfcsim_core::{HeadQueue, PacketId, Vacant};

mod layout;
mod ring;
pub use layout::QueueLayout;
use ring::Ring;

/// A packet's tag when it has none (a control frame): a run of its own kind like any other tag.
pub const NO_TAG: u32 = u32::MAX;

/// The bit of a queue entry's id word set when the packet's tag differs from that of the packet pushed
/// before it. Packet ids stay below 2^31: the slab would need 128 GiB of packets to reach it.
const RUN_START: u32 = 1 << 31;

/// A queue entry: the packet's id word (with [`RUN_START`]) and its wire size, never 0 (a packet has at least
/// its header on the wire), so that size 0 marks the vacant head of a [`HeadQueue`].
#[derive(Clone, Copy, Debug)]
struct Entry {
    word: u32,
    size: u32,
}

impl Vacant for Entry {
    const VACANT: Entry = Entry { word: 0, size: 0 };
    #[inline(always)]
    fn is_vacant(&self) -> bool {
        self.size == 0
    }
}

/// One queue with its scheduler state, kept together (one cache line) so that serving a packet touches one
/// entry.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Fifo {
    /// Each packet's id, [`RUN_START`] set when its tag differs from the packet's before it (the head's bit
    /// says nothing: the head starts a run whatever it is), and its wire size. The bit is set on the pushed
    /// entry, so that neither a push nor a pop touches a second entry. The head is held inline: serving a
    /// queue reads its head, and in a `VecDeque` buffer (a line of its own, cold by the queue's next turn under
    /// BFC's 32 queues per port) that read was the scheduler's costliest cache miss.
    pkts: HeadQueue<Entry>,
    bytes: u64,
    /// DRR deficit counter.
    deficit: u64,
    /// The tag of the last packet pushed.
    tail_tag: u32,
    /// Strict-priority level; 0 is served first.
    level: u8,
}

// One line per queue: with the head inline, 61 bytes of fields padded to the line.
const _: () = assert!(std::mem::size_of::<Fifo>() == 64);

impl Fifo {
    /// Takes the head out; returns its id and wire size.
    #[inline(always)]
    fn pop_head(&mut self) -> (PacketId, u32) {
        let Entry { word, size } = self.pkts.pop_front().expect("queue is non-empty");
        let id = packet(word);
        self.bytes -= size as u64;
        (id, size)
    }
}

/// The packet of a queue entry's id word.
#[inline(always)]
fn packet(word: u32) -> PacketId {
    PacketId(word & !RUN_START)
}

/// A run of packets of one tag in a queue ([`PortQueues::runs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// A run whose tag the queue knows (its last).
    Tag(u32),
    /// A run starting at this packet, whose tag is the packet's.
    From(PacketId),
}

/// Bits of 64 queues: empty ones, and paused ones.
#[derive(Clone, Copy, Debug)]
struct Bits {
    empty: u64,
    paused: u64,
}

/// Bit word `w` of a port's queues, of `first` (queues 0 to 63) and `more` (the rest): a function of the two
/// fields, so that it can be used while another field (a level's ring) is borrowed.
#[inline(always)]
fn bit_word<'a>(first: &'a mut Bits, more: &'a mut [Bits], w: usize) -> &'a mut Bits {
    if w == 0 { first } else { &mut more[w - 1] }
}

/// How a level's ready queues take turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Serve {
    /// Every queue is a priority level of its own, in order: the busy levels say which queue goes, and there
    /// are no rings to keep (a port of one data queue and the control queue, the default). Deficit round
    /// robin, round robin and SRF all serve such a port alike.
    Strict,
    /// Deficit round robin with this quantum in bytes.
    Drr { quantum: u32 },
    /// One packet per turn whatever its size (the BFC artifact's round robin).
    RoundRobin,
    /// Shortest remaining first (BFC App. A.2).
    Srf,
}

/// The queues of one egress port and their scheduler state.
///
/// Laid out by use, in `repr(C)` order: the first [`PortQueues::HEAD`] bytes hold what every push and pop reads
/// (the queues, the first word of their bits, the busy levels, the byte count and the service), so that a
/// holder putting `64 - HEAD` bytes of its own first at a line's start has them in one line with its own (the
/// engine's switch port, whose index fields sit before them). The rings follow, which a pop reads when a level
/// has several queues, then what the per-packet path does not read.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct PortQueues {
    // ---- every push and pop
    queues: Box<[Fifo]>,
    /// Empty and paused bits of queues 0 to 63; `more_bits` has the rest.
    bits: Bits,
    /// Bit `l` set when level `l` has a queue that is ready (non-empty and not paused).
    busy_levels: u64,
    total_bytes: u64,
    serve: Serve,
    // ---- levels of several queues
    /// Per level, the queues that are ready, in DRR order (none under [`Serve::Strict`]).
    rings: Box<[Ring]>,
    // ---- off the per-packet path
    /// Bits of queues 64 on, 64 per word: a port seldom has more than 64 queues.
    more_bits: Box<[Bits]>,
    /// Shortest remaining first: per queue, the rank of each waiting packet (empty unless SRF is on).
    ranks: Box<[VecDeque<u64>]>,
}

// The layout the doc comment promises.
const _: () = assert!(std::mem::offset_of!(PortQueues, rings) == PortQueues::HEAD);

impl PortQueues {
    /// Bytes at the start of a `PortQueues` that every push and pop reads.
    pub const HEAD: usize = 56;

    /// `levels[i]` is queue i's priority level; `quantum` is the DRR quantum in bytes (one MTU gives per-packet
    /// round robin for full-size packets).
    pub fn new(levels: &[u8], quantum: u32) -> PortQueues {
        assert!(
            !levels.is_empty() && levels.len() <= u16::MAX as usize,
            "1..=65535 queues per port"
        );
        let n_levels = *levels.iter().max().unwrap() as usize + 1;
        assert!(n_levels <= 64, "at most 64 priority levels");
        let strict = levels.iter().enumerate().all(|(q, &l)| l as usize == q);
        let mut bits = (0..levels.len().div_ceil(64)).map(|w| {
            let n = (levels.len() - w * 64).min(64);
            Bits {
                empty: if n == 64 { u64::MAX } else { (1 << n) - 1 },
                paused: 0,
            }
        });
        PortQueues {
            queues: levels
                .iter()
                .map(|&level| Fifo {
                    pkts: HeadQueue::default(),
                    bytes: 0,
                    deficit: 0,
                    tail_tag: NO_TAG,
                    level,
                })
                .collect(),
            bits: bits.next().expect("at least one queue"),
            busy_levels: 0,
            total_bytes: 0,
            serve: if strict {
                Serve::Strict
            } else {
                Serve::Drr {
                    quantum: quantum.max(1),
                }
            },
            rings: if strict {
                Box::default()
            } else {
                (0..n_levels)
                    .map(|l| {
                        Ring::new(
                            levels.iter().filter(|&&x| x as usize == l).count(),
                            levels.len(),
                        )
                    })
                    .collect()
            },
            more_bits: bits.collect(),
            ranks: Box::default(),
        }
    }

    /// Per-packet round robin among the queues of a level instead of DRR (BFC's public artifact).
    pub fn with_round_robin(mut self) -> Self {
        if !matches!(self.serve, Serve::Strict) {
            self.serve = Serve::RoundRobin;
        }
        self
    }

    /// BFC App. A.2 "BFC-SRF": among the ready queues of a level, serve the one whose head packet has the
    /// smallest rank (the remaining size its flow wrote into the packet); ties go to the queue that has been
    /// ready longest. Strict priority between levels and pausing are unchanged.
    pub fn with_srf(mut self) -> Self {
        if !matches!(self.serve, Serve::Strict) {
            self.serve = Serve::Srf;
            self.ranks = vec![VecDeque::new(); self.queues.len()].into_boxed_slice();
        }
        self
    }

    /// The bits of queues `64 w` to `64 w + 63`.
    #[inline(always)]
    fn word(&self, w: usize) -> &Bits {
        if w == 0 {
            &self.bits
        } else {
            &self.more_bits[w - 1]
        }
    }

    #[inline(always)]
    fn word_mut(&mut self, w: usize) -> &mut Bits {
        bit_word(&mut self.bits, &mut self.more_bits, w)
    }

    /// Every bit word, queues 0 to 63 first.
    fn words(&self) -> impl Iterator<Item = &Bits> + '_ {
        std::iter::once(&self.bits).chain(self.more_bits.iter())
    }

    /// Appends a packet of `size` wire bytes to queue `q` with rank 0 and no tag (a control frame: under SRF
    /// it has nothing left to send, so it goes first within its level).
    #[inline]
    pub fn push(&mut self, q: usize, id: PacketId, size: u32) {
        self.push_ranked(q, id, size, 0, NO_TAG);
    }

    /// Appends a packet of `size` wire bytes, SRF rank `rank` and tag `tag` to queue `q` (the rank
    /// is ignored unless the queues were built [`with_srf`](Self::with_srf)). Always inlined into the switch's
    /// enqueue: it runs for every packet entering a switch queue, and out of line much of its work is saving
    /// and restoring registers. `size` must be positive (every packet has a header on the wire): a
    /// queue's entry of size 0 would read as an empty head. Configurations are checked for it
    /// (`nic.payload`, `nic.ack_size` and every frame size are at least 1 byte).
    #[inline(always)]
    pub fn push_ranked(&mut self, q: usize, id: PacketId, size: u32, rank: u64, tag: u32) {
        debug_assert!(id.0 < RUN_START, "2^31 packets in the slab");
        if matches!(self.serve, Serve::Srf) {
            self.ranks[q].push_back(rank);
        }
        if self.queues[q].pkts.is_empty() {
            self.word_mut(q / 64).empty &= !(1 << (q % 64));
            if !self.is_paused(q) {
                self.join_ring(q);
            }
        }
        let fifo = &mut self.queues[q];
        let starts = (fifo.tail_tag != tag) as u32;
        fifo.tail_tag = tag;
        fifo.pkts.push_back(Entry {
            word: id.0 | starts << 31,
            size,
        });
        fifo.bytes += size as u64;
        self.total_bytes += size as u64;
    }

    /// Removes the next packet to transmit: from the highest non-empty level, the DRR choice within it.
    /// Returns the packet, its size and its queue.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(PacketId, u32, usize)> {
        if self.busy_levels == 0 {
            return None;
        }
        let level = self.busy_levels.trailing_zeros() as usize;
        let quantum = match self.serve {
            Serve::Strict => return Some(self.pop_strict(level)),
            Serve::Drr { quantum } => Some(quantum as u64),
            Serve::RoundRobin => None,
            Serve::Srf => return Some(self.pop_srf(level)),
        };
        let ring = &mut self.rings[level];
        loop {
            let q = ring.front().expect("busy level has a queue");
            let fifo = &mut self.queues[q];
            let size = fifo.pkts.front().expect("queue in ring is non-empty").size;
            let turn = match quantum {
                None => true,
                Some(_) => fifo.deficit >= size as u64,
            };
            if turn {
                if quantum.is_some() {
                    fifo.deficit -= size as u64;
                }
                let (id, _) = fifo.pop_head();
                self.total_bytes -= size as u64;
                if fifo.pkts.is_empty() {
                    fifo.deficit = 0;
                    ring.pop_front();
                    bit_word(&mut self.bits, &mut self.more_bits, q / 64).empty |= 1 << (q % 64);
                    if ring.is_empty() {
                        self.busy_levels &= !(1 << level);
                    }
                } else if quantum.is_none() {
                    // One packet per turn.
                    ring.rotate();
                }
                return Some((id, size, q));
            }
            // The queue's turn is over: credit its next turn and let the next queue go.
            fifo.deficit += quantum.expect("a turn ends under DRR only");
            ring.rotate();
        }
    }

    /// [`Serve::Strict`]'s choice in busy `level`: its one queue.
    #[inline(always)]
    fn pop_strict(&mut self, level: usize) -> (PacketId, u32, usize) {
        let q = level;
        let fifo = &mut self.queues[q];
        let (id, size) = fifo.pop_head();
        self.total_bytes -= size as u64;
        if fifo.pkts.is_empty() {
            self.bits.empty |= 1 << q;
            self.busy_levels &= !(1 << level);
        }
        (id, size, q)
    }

    /// SRF's choice in busy `level`: the ready queue whose head packet has the smallest rank, the earliest in
    /// the ring on a tie (`min_by_key` keeps the first minimum). A scan of the ready queues: SRF keeps few
    /// flows active (BFC §2.3), so the ring stays short.
    fn pop_srf(&mut self, level: usize) -> (PacketId, u32, usize) {
        let ring = &mut self.rings[level];
        let (at, q) = ring
            .iter()
            .enumerate()
            .min_by_key(|&(_, q)| self.ranks[q][0])
            .expect("busy level has a queue");
        self.ranks[q].pop_front();
        let (id, size) = self.queues[q].pop_head();
        self.total_bytes -= size as u64;
        if self.queues[q].pkts.is_empty() {
            ring.remove(at);
            bit_word(&mut self.bits, &mut self.more_bits, q / 64).empty |= 1 << (q % 64);
            if ring.is_empty() {
                self.busy_levels &= !(1 << level);
            }
        }
        (id, size, q)
    }

    /// Puts queue `q` in its level's ring, credited for its first turn so that joining costs no extra round
    /// (under [`Serve::Strict`], marks its level busy: the level is the queue). Always inlined: a queue joins
    /// its ring whenever a packet reaches it empty, most packets at a lightly loaded port.
    #[inline(always)]
    fn join_ring(&mut self, q: usize) {
        let level = self.queues[q].level as usize;
        self.busy_levels |= 1 << level;
        if matches!(self.serve, Serve::Strict) {
            return;
        }
        self.rings[level].push_back(q);
        if let Serve::Drr { quantum } = self.serve {
            self.queues[q].deficit = quantum as u64;
        }
    }

    /// Pauses or resumes queue `q`. Returns whether its state changed. A paused queue keeps and accepts
    /// packets; it is not served until resumed, when it rejoins the back of its level's round.
    pub fn set_paused(&mut self, q: usize, paused: bool) -> bool {
        if self.is_paused(q) == paused {
            return false;
        }
        self.word_mut(q / 64).paused ^= 1 << (q % 64);
        if self.queues[q].pkts.is_empty() {
            return true;
        }
        let level = self.queues[q].level as usize;
        if paused && matches!(self.serve, Serve::Strict) {
            self.busy_levels &= !(1 << level);
        } else if paused {
            let ring = &mut self.rings[level];
            let at = ring
                .iter()
                .position(|x| x == q)
                .expect("a non-empty queue is in its ring");
            ring.remove(at);
            self.queues[q].deficit = 0;
            if ring.is_empty() {
                self.busy_levels &= !(1 << level);
            }
        } else {
            self.join_ring(q);
        }
        true
    }

    /// True when queue `q` is paused.
    #[inline]
    pub fn is_paused(&self, q: usize) -> bool {
        self.word(q / 64).paused >> (q % 64) & 1 == 1
    }

    /// The paused bits of queues `64 w` to `64 w + 63` (bit `i`: queue `64 w + i`).
    #[inline]
    pub fn paused_word(&self, w: usize) -> u64 {
        self.word(w).paused
    }

    /// An empty queue in `range` that is not paused, the first at or after `start` in circular order (BFC
    /// §3.3.1's bitmap of empty queues, searched from a rotating start as on Tofino2, §4).
    pub fn first_empty(&self, range: std::ops::Range<usize>, start: usize) -> Option<usize> {
        let free = |w: usize| self.word(w).empty & !self.word(w).paused;
        let scan = |from: usize, to: usize| {
            let mut w = from / 64;
            while w * 64 < to {
                let mut bits = free(w);
                if w == from / 64 {
                    bits &= u64::MAX << (from % 64);
                }
                if bits != 0 {
                    let q = w * 64 + bits.trailing_zeros() as usize;
                    return (q < to).then_some(q);
                }
                w += 1;
            }
            None
        };
        let start = start.clamp(range.start, range.end);
        scan(start, range.end).or_else(|| scan(range.start, start))
    }

    /// Queues of priority level `level` that have packets and are not paused (BFC's N_active, §3.3.2).
    #[inline]
    pub fn ready_in_level(&self, level: usize) -> usize {
        if matches!(self.serve, Serve::Strict) {
            (self.busy_levels >> level & 1) as usize
        } else {
            self.rings[level].len()
        }
    }

    /// Queues of priority level `level` that would be ready once queue `q`, of that level, has a packet: BFC's
    /// N_active for a packet joining `q` (§3.3.2). Read from the port's bits, not the queue's line.
    #[inline]
    pub fn ready_with(&self, q: usize, level: usize) -> usize {
        let w = self.word(q / 64);
        let bit = 1 << (q % 64);
        self.ready_in_level(level) + usize::from(w.empty & bit != 0 && w.paused & bit == 0)
    }

    /// True when some queue has a packet it may send now (non-empty and not paused).
    #[inline]
    pub fn has_ready(&self) -> bool {
        self.busy_levels != 0
    }

    /// Bytes waiting in queue `q`.
    #[inline]
    pub fn queue_bytes(&self, q: usize) -> u64 {
        self.queues[q].bytes
    }
    /// The packet at the head of queue `q`, if any.
    #[inline]
    pub fn head(&self, q: usize) -> Option<PacketId> {
        self.queues[q].pkts.front().map(|e| packet(e.word))
    }
    /// Packets waiting in queue `q`.
    pub fn queue_len(&self, q: usize) -> usize {
        self.queues[q].pkts.len()
    }
    /// Bytes waiting in all queues.
    pub fn bytes(&self) -> u64 {
        self.total_bytes
    }
    /// Packets waiting in all queues (a sum over the occupied queues: off the per-packet path, it is not kept).
    pub fn len(&self) -> usize {
        self.occupied().map(|f| f.pkts.len()).sum()
    }
    /// True when every queue is empty (paused ones included): no bytes, as every packet has some.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// Number of queues.
    pub fn count(&self) -> usize {
        self.queues.len()
    }

    /// The queues holding packets, in index order, found from the bitmap of empty queues so that the empty
    /// ones are not read: a BFC port has 32 queues, mostly empty, and the runner's active-flow sampler visits
    /// every switch port every 10 µs, where reading every queue's header would miss the cache.
    fn occupied(&self) -> impl Iterator<Item = &Fifo> + '_ {
        let n = self.queues.len();
        self.words().enumerate().flat_map(move |(w, b)| {
            let width = (n - w * 64).min(64);
            let all = if width == 64 {
                u64::MAX
            } else {
                (1 << width) - 1
            };
            let mut held = !b.empty & all;
            std::iter::from_fn(move || {
                (held != 0).then(|| {
                    let q = w * 64 + held.trailing_zeros() as usize;
                    held &= held - 1;
                    &self.queues[q]
                })
            })
        })
    }

    /// Every queued packet id, queue by queue (for end-of-run accounting and the active-flow sampler).
    pub fn iter(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.occupied()
            .flat_map(|f| f.pkts.iter().map(|e| packet(e.word)))
    }

    /// The runs of equal tags in every queue holding packets, queue by queue, head first: a queue's last run
    /// by its tag, any other by its first packet. Reads a queue's entries, not its packets.
    pub fn runs(&self) -> impl Iterator<Item = Run> + '_ {
        self.occupied().flat_map(|f| {
            // A run starts at the head and at each packet whose tag differs from the one before it.
            let mut starts = f
                .pkts
                .iter()
                .enumerate()
                .filter(|&(i, e)| i == 0 || e.word & RUN_START != 0)
                .map(|(_, e)| packet(e.word))
                .peekable();
            std::iter::from_fn(move || {
                let start = starts.next()?;
                Some(if starts.peek().is_some() {
                    Run::From(start)
                } else {
                    Run::Tag(f.tail_tag)
                })
            })
        })
    }

    /// Every packet waiting in queue `q`, head first.
    pub fn iter_queue(&self, q: usize) -> impl Iterator<Item = PacketId> + '_ {
        self.queues[q].pkts.iter().map(|e| packet(e.word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(pq: &mut PortQueues) -> Vec<usize> {
        std::iter::from_fn(|| pq.pop().map(|(_, _, q)| q)).collect()
    }

    #[test]
    fn strict_priority_first() {
        let mut pq = PortQueues::new(&[0, 1], 1000);
        pq.push(1, PacketId(0), 1000);
        pq.push(0, PacketId(1), 64);
        pq.push(1, PacketId(2), 1000);
        pq.push(0, PacketId(3), 64);
        assert_eq!(drain(&mut pq), vec![0, 0, 1, 1]);
    }

    #[test]
    fn drr_shares_bytes_not_packets() {
        // Queue 0 sends 500 B packets, queue 1 1000 B packets: equal bytes means twice the packets for queue 0.
        let mut pq = PortQueues::new(&[0, 0], 1000);
        for i in 0..40 {
            pq.push(0, PacketId(i), 500);
        }
        for i in 0..20 {
            pq.push(1, PacketId(100 + i), 1000);
        }
        let order = drain(&mut pq);
        let first30 = &order[..30];
        let q0 = first30.iter().filter(|&&q| q == 0).count();
        assert_eq!(q0, 20, "{order:?}");
        assert!(pq.is_empty());
        assert_eq!(pq.bytes(), 0);
    }

    #[test]
    fn paused_queue_keeps_packets_and_rejoins_on_resume() {
        let mut pq = PortQueues::new(&[0, 0, 0], 1000);
        for i in 0..2 {
            for q in 0..3 {
                pq.push(q, PacketId(i * 3 + q as u32), 1000);
            }
        }
        assert!(pq.set_paused(1, true));
        assert!(!pq.set_paused(1, true), "already paused");
        assert_eq!(pq.ready_in_level(0), 2);
        assert_eq!(drain(&mut pq), vec![0, 2, 0, 2]);
        assert!(!pq.has_ready() && !pq.is_empty());
        pq.push(1, PacketId(9), 1000); // a paused queue still accepts packets
        assert!(!pq.has_ready());
        assert!(pq.set_paused(1, false));
        assert_eq!(drain(&mut pq), vec![1, 1, 1]);
        // An empty queue paused and resumed never enters the ring.
        pq.set_paused(2, true);
        pq.set_paused(2, false);
        assert!(!pq.has_ready());
    }

    #[test]
    fn empty_bitmap_tracks_queues() {
        let n = 130;
        let mut pq = PortQueues::new(&vec![0; n], 1000);
        assert_eq!(pq.first_empty(0..n, 0), Some(0));
        assert_eq!(pq.first_empty(65..n, 65), Some(65));
        assert_eq!(pq.first_empty(0..n, 100), Some(100));
        for q in 0..129 {
            pq.push(q, PacketId(q as u32), 100);
        }
        assert_eq!(pq.first_empty(0..n, 0), Some(129));
        assert_eq!(pq.first_empty(0..129, 5), None);
        pq.pop();
        assert_eq!(pq.first_empty(0..n, 1), Some(129), "circular from 1");
        assert_eq!(pq.first_empty(0..129, 1), Some(0), "wraps around");
        assert_eq!(pq.first_empty(1..129, 1), None);
        pq.set_paused(129, true);
        assert_eq!(
            pq.first_empty(1..n, 1),
            None,
            "a paused empty queue is not available"
        );
    }

    #[test]
    fn iter_visits_the_occupied_queues_in_order() {
        // Three bitmap words, the last partial; queues filled across word boundaries, one of them emptied again.
        let n = 130;
        let mut pq = PortQueues::new(&vec![0; n], 1000);
        assert_eq!(pq.iter().count(), 0);
        let filled = [0, 5, 63, 64, 127, 128, 129];
        for (i, &q) in filled.iter().enumerate().rev() {
            pq.push(q, PacketId(10 * i as u32), 100);
            pq.push(q, PacketId(10 * i as u32 + 1), 100);
        }
        let ids = |pq: &PortQueues| pq.iter().map(|id| id.0).collect::<Vec<_>>();
        assert_eq!(
            ids(&pq),
            [0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61]
        );
        assert_eq!(
            pq.iter_queue(64).map(|id| id.0).collect::<Vec<_>>(),
            [30, 31]
        );
        // Queue 129 joined the ring first and its turn covers both packets: it is empty again.
        pq.pop();
        pq.pop();
        assert_eq!(ids(&pq), [0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51]);
    }

    #[test]
    fn per_packet_round_robin_ignores_sizes() {
        let mut pq = PortQueues::new(&[0, 0], 1000).with_round_robin();
        for i in 0..3 {
            pq.push(0, PacketId(i), 500);
            pq.push(1, PacketId(10 + i), 1000);
        }
        assert_eq!(drain(&mut pq), vec![0, 1, 0, 1, 0, 1]);
        assert_eq!(pq.first_empty(0..2, 0), Some(0));
    }

    #[test]
    fn srf_serves_the_smallest_head_rank() {
        let mut pq = PortQueues::new(&[0, 0, 0], 1000).with_srf();
        // Queue 0: a long flow (ranks 5000, 4000); queue 1: a short one (2000, 1000); queue 2: ranks by head
        // only, 9000 then 1.
        pq.push_ranked(0, PacketId(0), 1000, 5000, NO_TAG);
        pq.push_ranked(0, PacketId(1), 1000, 4000, NO_TAG);
        pq.push_ranked(1, PacketId(2), 1000, 2000, NO_TAG);
        pq.push_ranked(1, PacketId(3), 1000, 1000, NO_TAG);
        pq.push_ranked(2, PacketId(4), 1000, 9000, NO_TAG);
        pq.push_ranked(2, PacketId(5), 1000, 1, NO_TAG);
        let ids: Vec<u32> = std::iter::from_fn(|| pq.pop().map(|(id, _, _)| id.0)).collect();
        assert_eq!(ids, vec![2, 3, 0, 1, 4, 5]);
        assert!(pq.is_empty() && !pq.has_ready());
        assert_eq!(
            pq.first_empty(0..3, 0),
            Some(0),
            "emptied queues are free again"
        );
    }

    #[test]
    fn srf_ties_go_to_the_queue_ready_longest() {
        let mut pq = PortQueues::new(&[0, 0, 0], 1000).with_srf();
        pq.push_ranked(2, PacketId(0), 1000, 3000, NO_TAG);
        pq.push_ranked(0, PacketId(1), 1000, 3000, NO_TAG);
        pq.push_ranked(1, PacketId(2), 1000, 3000, NO_TAG);
        assert_eq!(drain(&mut pq), vec![2, 0, 1]);
    }

    #[test]
    fn srf_keeps_strict_priority_and_pauses() {
        // Queue 0 is a control level above two data queues; control frames rank 0.
        let mut pq = PortQueues::new(&[0, 1, 1], 1000).with_srf();
        pq.push_ranked(1, PacketId(0), 1000, 500, NO_TAG);
        pq.push_ranked(2, PacketId(1), 1000, 100_000, NO_TAG);
        pq.push_ranked(2, PacketId(2), 1000, 99_000, NO_TAG);
        pq.push(0, PacketId(3), 64);
        assert_eq!(
            pq.pop().map(|(id, _, q)| (id.0, q)),
            Some((3, 0)),
            "control first"
        );
        // The short flow's queue is paused: the long one goes meanwhile, whatever the ranks.
        assert!(pq.set_paused(1, true));
        assert_eq!(pq.ready_in_level(1), 1);
        assert_eq!(pq.pop().map(|(id, _, q)| (id.0, q)), Some((1, 2)));
        assert!(pq.set_paused(1, false));
        assert_eq!(
            drain(&mut pq),
            vec![1, 2],
            "resumed, the smaller rank goes first"
        );
        assert_eq!(pq.bytes(), 0);
    }

    #[test]
    fn equal_packets_round_robin() {
        let mut pq = PortQueues::new(&[0, 0, 0], 1048);
        for i in 0..3 {
            for q in 0..3 {
                pq.push(q, PacketId(i * 3 + q as u32), 1048);
            }
        }
        assert_eq!(drain(&mut pq), vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn head_is_the_queue_s_next_packet() {
        let mut pq = PortQueues::new(&[0, 0], 1048);
        assert_eq!(pq.head(0), None);
        pq.push(0, PacketId(7), 1048);
        pq.push(0, PacketId(8), 1048);
        pq.push(1, PacketId(9), 1048);
        assert_eq!(pq.head(0), Some(PacketId(7)));
        assert_eq!(pq.pop().map(|(id, ..)| id), Some(PacketId(7)));
        assert_eq!(pq.head(0), Some(PacketId(8)));
        assert_eq!(pq.head(1), Some(PacketId(9)));
    }

    /// Properties under random pushes of a few tags, pops and pauses: the runs of one tag each queue holds, as
    /// [`PortQueues::runs`] gives them with each packet resolved to its tag, against the queues' contents read
    /// packet by packet, under every scheduler (DRR, per-packet round robin, SRF), and so does
    /// [`PortQueues::ready_with`] its count of ready queues; and strict priority without rounds against
    /// rounds.
    mod random_ops {
        use super::*;
        use proptest::prelude::*;
        use std::collections::HashMap;

        #[derive(Clone, Debug)]
        enum Op {
            Push { q: usize, tag: u32, size: u32 },
            Pop,
            Pause { q: usize, paused: bool },
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                4 => (0..4usize, prop_oneof![0..3u32, Just(NO_TAG)], 64..1500u32)
                    .prop_map(|(q, tag, size)| Op::Push { q, tag, size }),
                3 => Just(Op::Pop),
                1 => (0..4usize, any::<bool>()).prop_map(|(q, paused)| Op::Pause { q, paused }),
            ]
        }

        proptest! {
            /// A port whose every queue is a level of its own keeps no rounds and serves as deficit round robin
            /// with rounds would, under pushes, pops and pauses.
            #[test]
            fn strict_levels_serve_as_rounds_would(
                ops in proptest::collection::vec(op(), 1..300),
            ) {
                let mut strict = PortQueues::new(&[0, 1, 2, 3], 1500);
                prop_assert_eq!(strict.serve, Serve::Strict);
                let mut rounds = strict.clone();
                rounds.serve = Serve::Drr { quantum: 1500 };
                rounds.rings = (0..4).map(|_| Ring::new(1, 4)).collect();
                for (i, op) in ops.into_iter().enumerate() {
                    for pq in [&mut strict, &mut rounds] {
                        match op {
                            Op::Push { q, tag, size } => pq.push_ranked(q, PacketId(i as u32), size, 0, tag),
                            Op::Pop => {}
                            Op::Pause { q, paused } => {
                                pq.set_paused(q, paused);
                            }
                        }
                    }
                    if let Op::Pop = op {
                        prop_assert_eq!(strict.pop(), rounds.pop());
                    }
                    for level in 0..4 {
                        prop_assert_eq!(strict.ready_in_level(level), rounds.ready_in_level(level));
                    }
                    prop_assert_eq!(strict.has_ready(), rounds.has_ready());
                    prop_assert_eq!(strict.is_empty(), rounds.is_empty());
                    prop_assert_eq!(strict.bytes(), rounds.bytes());
                }
            }

            #[test]
            fn runs_are_the_queues_runs_of_one_tag(
                scheduler in 0..3u8,
                ops in proptest::collection::vec(op(), 1..300),
            ) {
                let pq = PortQueues::new(&[0, 0, 1, 1], 1500);
                let mut pq = match scheduler {
                    0 => pq,
                    1 => pq.with_round_robin(),
                    _ => pq.with_srf(),
                };
                let mut tags = HashMap::new();
                for (i, op) in ops.into_iter().enumerate() {
                    match op {
                        Op::Push { q, tag, size } => {
                            let id = PacketId(i as u32);
                            tags.insert(id, tag);
                            pq.push_ranked(q, id, size, size as u64, tag);
                        }
                        Op::Pop => {
                            pq.pop();
                        }
                        Op::Pause { q, paused } => {
                            pq.set_paused(q, paused);
                        }
                    }
                    let got: Vec<u32> = pq
                        .runs()
                        .map(|run| match run {
                            Run::Tag(tag) => tag,
                            Run::From(id) => tags[&id],
                        })
                        .collect();
                    let mut want = Vec::new();
                    for q in 0..pq.count() {
                        let mut queue: Vec<u32> = pq.iter_queue(q).map(|id| tags[&id]).collect();
                        queue.dedup();
                        want.extend(queue);
                    }
                    prop_assert_eq!(got, want);
                    // N_active for a packet joining each queue: the ready queues of its level, with the queue
                    // counted once it has the packet unless it is paused.
                    for q in 0..pq.count() {
                        let level = pq.queues[q].level as usize;
                        let ready = |x: usize| pq.queue_len(x) > 0 && !pq.is_paused(x);
                        let others = (0..pq.count())
                            .filter(|&x| x != q && pq.queues[x].level as usize == level && ready(x))
                            .count();
                        prop_assert_eq!(pq.ready_with(q, level), others + usize::from(!pq.is_paused(q)));
                    }
                }
            }
        }
    }
}
