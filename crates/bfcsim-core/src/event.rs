//! The event queue: small `Copy` events ordered by time, simultaneous ones in an order fixed by what they are.
//!
//! Events due at the same picosecond pop in the order of their packed bits ([`EventBits`]: kind and
//! component) scrambled by a mask drawn from that time. Ordering by what an event is rather than by when it was
//! scheduled is what lets a run split across threads (each with its own queue, exchanging packets every link
//! delay) pop every event in the same relative order as one thread: which events exist at a time does not
//! depend on the split, the order they were pushed in does. Two entries with the same time and bits are the
//! same event (a duplicate left by lazy cancellation, say), which pop in either order alike. The mask keeps that
//! order from favouring low component ids: in lock-step scenarios (line-rate senders, equal links) many events
//! coincide, and a fixed order would, say, let port 0 always take freed buffer first; with the mask each pair of
//! simultaneous events comes out either way with even odds, from one instant to the next.
//!
//! The structure is a calendar queue (Brown 1988) specialised to a network simulator, where almost every event
//! is due within one link delay and one serialization of now: a ring of buckets, each `2^shift` ps wide,
//! covers a sliding window (the horizon) in which every bucket holds the events of one time slot; a bitmap finds
//! the next non-empty bucket. A bucket is one cache line holding up to seven keys unsorted, scanned for the
//! smallest, with a spill heap for the eighth and later keys. A key in a bucket is one `u64`: the time within
//! the bucket's slot above the masked event's 24 bits, so that ordering two entries is one integer comparison
//! (the slot gives the time's high bits). Events beyond the horizon (timeouts, pacing, far arrivals) wait as
//! full (time, masked event) keys in a coarser wheel (module `far`) and move into the ring as the window reaches
//! them. Pops come out in exactly key order, as from a heap.
//!
//! The slot width follows the events' density, as Brown's queue resizes its buckets: a ring whose buckets hold
//! more keys than a line spills them to heaps, and one whose buckets hold about one key moves its window at
//! every pop. Every `EPOCH` moves of the window the queue looks at how the last ones went
//! (`EventQueue::review`) and halves or doubles its slots, between the horizon's width and a sixteenth of it.
//! At the horizon's width a 1024-host fat tree pops five to seven events from each slot it reaches, and a
//! quarter to two fifths of its pushes spill; CLOS-128 pops three or four, and one push in 20 to 60 spills.
//! The width changes only how fast the queue runs: the keys, and so the order events pop in, are the same at
//! every width.

mod far;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::Time;
use far::Far;

/// An event that packs into 24 bits, so that an event and its time within a slot are one `u64` key.
pub trait EventBits: Copy {
    /// The event as a number below 2²⁴.
    fn to_bits(self) -> u32;
    /// The inverse of [`EventBits::to_bits`].
    fn from_bits(bits: u32) -> Self;
}

const EVENT_BITS: u32 = 24;
const EVENT_MASK: u64 = (1 << EVENT_BITS) - 1;
/// Buckets in the ring: 4096 lines, 256 KiB, which stays in a core's L2 beside the packets and queues. Fewer
/// buckets hold more keys each (more instructions, more spills) and more would leave the L2; 4096 is where the
/// two costs met (docs/BENCHMARKS-HISTORY.md, "a fifth pass").
const BUCKETS: usize = 4096;
const WORDS: usize = BUCKETS / 64;
/// Words of the summary bitmap, one bit per word of `occupied` (at least one, for rings under 4096 buckets).
const SUMMARY: usize = WORDS.div_ceil(64);
/// Keys a bucket holds in place: seven `u64` and the bookkeeping fill one 64-byte line.
const INLINE: usize = 7;
/// How many buckets ahead of the window's start [`EventQueue::advance`] asks for.
const PREFETCH_AHEAD: u64 = 4;
/// How many buckets ahead of the window's start [`EventQueue::pop_until_ahead`] shows the events of, each time
/// the window moves: where the window stopped two buckets earlier, [`PREFETCH_AHEAD`] asked for that line then,
/// and the events are still a few pops away.
const SHOW_AHEAD: u64 = 2;
/// The widest slot: its time offsets and the event bits fill a `u64` key.
const MAX_SHIFT: u32 = 64 - EVENT_BITS;
/// Moves of the window between two reviews of the slot width: about a million pops, a tenth of a second of a
/// busy run, so that a review's cost (a few compares; a rebuild of the pending events when the width changes)
/// is lost in it. The unit tests review every 16 moves, to reshape the queue often.
const EPOCH: u64 = if cfg!(test) { 16 } else { 1 << 18 };
/// How much narrower than the horizon's width the slots may become, log2: a sixteenth.
const NARROWEST: u32 = 4;
/// A push that leaves more keys than this in its bucket looks at the bucket's neighbour ([`Review::crowded`]).
/// Pushes into a bucket with fewer keys are not looked at, so that most pushes read no second line: the count
/// is an estimate on the low side (two buckets of four keys would spill once at twice the width, uncounted).
const CROWDED: u8 = INLINE.div_ceil(2) as u8;

/// The 24-bit mask that orders the events due at `time` among themselves: a multiplicative hash of the time.
#[inline]
fn tie_mask(time: Time) -> u32 {
    (time.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - EVENT_BITS)) as u32
}

/// The key of masked event `masked` due at `time` within its slot of 2^`shift` ps: the time's offset in the slot
/// above the event's bits.
#[inline(always)]
fn slot_key(shift: u32, time: u64, masked: u64) -> u64 {
    (time & ((1 << shift) - 1)) << EVENT_BITS | masked
}

/// The time of key `key` of absolute slot `slot` (slots of 2^`shift` ps): the inverse of [`slot_key`].
#[inline(always)]
fn key_time(shift: u32, slot: u64, key: u64) -> u64 {
    slot << shift | key >> EVENT_BITS
}

/// One bucket: up to [`INLINE`] keys in place; more go to a spill heap, and while it has any the inline part
/// stays full.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Bucket {
    keys: [u64; INLINE],
    len: u8,
    /// Index into `EventQueue::spill` plus one while this bucket has spilled keys (0: none).
    spill: u32,
}

/// A priority queue of events keyed by (time, masked event bits).
pub struct EventQueue<E> {
    /// The ring, a fixed-size array so that indexing it with a slot taken modulo [`BUCKETS`] needs no bounds
    /// check.
    buckets: Box<[Bucket; BUCKETS]>,
    /// Keys beyond their bucket's inline capacity, a min-heap per bucket: a bucket can gather hundreds of keys
    /// (per-hop flow control's frames and timers at the same instants), and each pop takes the smallest.
    spill: Vec<BinaryHeap<Reverse<u64>>>,
    /// Indices of `spill` heaps not in use (kept for reuse).
    spill_free: Vec<u32>,
    /// Bit i set when bucket i is non-empty.
    occupied: Box<[u64; WORDS]>,
    /// Bit w set when word w of `occupied` is non-zero: finds the next bucket in a few word reads.
    summary: [u64; SUMMARY],
    /// Absolute slot (time >> shift) of the window's first bucket; no event is earlier.
    cur: u64,
    shift: u32,
    /// The slot width's bounds, log2 ps: the horizon's, and [`NARROWEST`] below it.
    widest: u32,
    narrowest: u32,
    /// [`CROWDED`] while the slots are narrower than the widest, else more keys than a bucket holds: at the
    /// widest width nothing asks whether twice the width would spill.
    crowded_above: u8,
    /// What the queue did since the last review, to choose the width by.
    review: Review,
    in_ring: usize,
    /// Events beyond the window, as (time << 24 | masked event bits).
    far: Far,
    /// The keys `far` hands over as the window reaches them (kept for its capacity).
    drained: Vec<u128>,
    _event: std::marker::PhantomData<E>,
}

/// Counts since the last review of the slot width.
#[derive(Clone, Copy, Default)]
struct Review {
    /// Moves of the window to a later slot ([`EventQueue::advance`]): at about one key a slot, one a pop.
    advances: u64,
    /// Pushes into the ring that found their bucket full and went to its spill heap.
    spills: u64,
    /// Pushes that would have spilled at twice the width: their bucket and its neighbour (bucket index xor 1,
    /// the slot it would share a bucket with) held [`INLINE`] keys between them.
    crowded: u64,
}

impl<E: EventBits> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: EventBits> EventQueue<E> {
    /// An empty queue with a horizon of about 4 µs.
    pub fn new() -> Self {
        Self::with_horizon(Time::from_us(4))
    }

    /// An empty queue whose ring spans at least `horizon` (the largest link delay plus a serialization is a
    /// good choice) at its widest slots, where it starts; crowded, it narrows them (`EventQueue::review`). Any
    /// horizon is correct; it only affects speed.
    pub fn with_horizon(horizon: Time) -> Self {
        let width = horizon
            .0
            .div_ceil(BUCKETS as u64)
            .max(1)
            .next_power_of_two();
        let shift = width.trailing_zeros().min(MAX_SHIFT);
        EventQueue {
            buckets: vec![Bucket::default(); BUCKETS]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| unreachable!("BUCKETS buckets")),
            spill: Vec::new(),
            spill_free: Vec::new(),
            occupied: Box::new([0; WORDS]),
            summary: [0; SUMMARY],
            cur: 0,
            shift,
            widest: shift,
            crowded_above: u8::MAX,
            narrowest: shift.saturating_sub(NARROWEST),
            review: Review::default(),
            in_ring: 0,
            far: Far::new(shift),
            drained: Vec::new(),
            _event: std::marker::PhantomData,
        }
    }

    /// Schedules `event` at `time`, which must not be earlier than the last popped event. Events at equal
    /// times pop in the order of their bits under that time's mask. Always inlined, and
    /// `EventQueue::insert` never: otherwise the inliner takes `insert` into `push` and leaves `push` out of
    /// line, and inlining both pushes the switch's receive path out of the event loop.
    #[inline(always)]
    pub fn push(&mut self, time: Time, event: E) {
        // The mask has 24 bits: the masked event fits them exactly when the event does.
        let masked = Self::order_at(time, event);
        assert!(
            masked < 1 << EVENT_BITS,
            "event does not fit in {EVENT_BITS} bits"
        );
        self.insert(time, masked as u64);
    }

    /// Puts the masked event `masked` at `time` in its bucket, or with the far events beyond the window.
    #[inline(never)]
    fn insert(&mut self, time: Time, masked: u64) {
        let slot = time.0 >> self.shift;
        // An event before the window would land in a bucket the window reaches later, and pop there at a wrong
        // time as a wrong event: a scheme or the engine scheduling into the past is a bug to stop at.
        assert!(
            slot >= self.cur,
            "an event scheduled in the past (at {time:?}, before the queue's window)"
        );
        if slot < self.cur + BUCKETS as u64 {
            let key = slot_key(self.shift, time.0, masked);
            let b = (slot % BUCKETS as u64) as usize;
            let bucket = &mut self.buckets[b];
            self.in_ring += 1;
            if (bucket.len as usize) < INLINE {
                bucket.keys[bucket.len as usize] = key;
                bucket.len += 1;
                // A bucket's bit is set while it holds keys: only its first key sets it.
                if bucket.len == 1 {
                    self.occupied[b / 64] |= 1 << (b % 64);
                    self.summary[b / 4096] |= 1 << (b / 64 % 64);
                } else if bucket.len > self.crowded_above
                    && bucket.len as usize + self.buckets[b ^ 1].len as usize > INLINE
                {
                    self.review.crowded += 1;
                }
            } else {
                self.spill_push(b, key);
            }
        } else {
            self.push_far((time.0 as u128) << EVENT_BITS | masked as u128, slot);
        }
    }

    /// Puts `key`, in ring slot `slot` beyond the window, with the far events. Out of line: the far events'
    /// bookkeeping kept registers busy in every `insert`, where few keys go far.
    #[cold]
    fn push_far(&mut self, key: u128, slot: u64) {
        self.far.push(key, slot);
    }

    /// Moves the window to start at `slot` and pulls in the far events it now covers. Asks for the line of a
    /// bucket a few slots ahead, which the pops reach a few events from now: it was last written about a link
    /// delay ago, and the packets since have usually pushed it out of the cache.
    #[inline]
    fn advance(&mut self, slot: u64) {
        self.review.advances += 1;
        self.cur = slot;
        crate::hint::prefetch(&self.buckets[((slot + PREFETCH_AHEAD) % BUCKETS as u64) as usize]);
        if self.far.min_slot() < slot + BUCKETS as u64 {
            self.pull_far();
        }
    }

    /// Moves the far events the window now covers into the ring.
    #[cold]
    fn pull_far(&mut self) {
        let mut keys = std::mem::take(&mut self.drained);
        self.far.drain_below(self.cur + BUCKETS as u64, &mut keys);
        for k in keys.drain(..) {
            self.insert(Time((k >> EVENT_BITS) as u64), k as u64 & EVENT_MASK);
        }
        self.drained = keys;
    }

    /// The first non-empty bucket at or after the window's start, as an absolute slot.
    #[inline]
    fn next_slot(&self) -> Option<u64> {
        if self.in_ring == 0 {
            return None;
        }
        let start = (self.cur % BUCKETS as u64) as usize;
        // Most pops (about two in three on the bench) come from the bucket the window starts at, whose line the
        // pop reads next anyway: no bitmap search for them.
        if self.buckets[start].len > 0 {
            return Some(self.cur);
        }
        let b = self
            .next_set_bucket(start)
            .or_else(|| self.next_set_bucket(0))
            .expect("in_ring > 0");
        Some(self.cur + ((b + BUCKETS - start) % BUCKETS) as u64)
    }

    /// The first non-empty bucket at index `from` or later (no wrap-around).
    #[inline]
    fn next_set_bucket(&self, from: usize) -> Option<usize> {
        let w = from / 64;
        let bits = self.occupied[w] & (!0u64 << (from % 64));
        if bits != 0 {
            return Some(w * 64 + bits.trailing_zeros() as usize);
        }
        // The next non-zero word after w, through the summary bitmap.
        let next = w + 1;
        for s in next / 64..SUMMARY {
            let mut words = self.summary[s];
            if s == next / 64 {
                words &= if next.is_multiple_of(64) {
                    !0
                } else {
                    !0u64 << (next % 64)
                };
            }
            if words != 0 {
                let w = s * 64 + words.trailing_zeros() as usize;
                return Some(w * 64 + self.occupied[w].trailing_zeros() as usize);
            }
        }
        None
    }

    /// The time and event of bucket key `key` of absolute slot `slot`.
    #[inline]
    fn decode(&self, slot: u64, key: u64) -> (Time, E) {
        let time = Time(key_time(self.shift, slot, key));
        let masked = (key & EVENT_MASK) as u32;
        (time, E::from_bits(masked ^ tie_mask(time)))
    }

    /// Where `event` due at `time` falls among the events due then: events of one instant pop in increasing
    /// order of this number. A holder that fires several events of one instant from one entry of its own
    /// (the engine's batched scheme timers) orders them by it, as separate entries would pop.
    #[inline]
    pub fn order_at(time: Time, event: E) -> u32 {
        event.to_bits() ^ tie_mask(time)
    }

    /// Removes and returns the earliest event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        self.pop_until_ahead(limit, |_| {})
    }

    /// [`EventQueue::pop_until`], which also shows `ahead` the events a few buckets further on (those held in
    /// their bucket's line, not its spill) each time the window moves to a new bucket: the caller can ask for
    /// the memory they will need a few pops from now.
    #[inline]
    pub fn pop_until_ahead(&mut self, limit: Time, ahead: impl FnMut(E)) -> Option<(Time, E)> {
        let slot = match self.next_slot() {
            Some(s) => s,
            None => {
                let k = self.far.min_key()?;
                let time = (k >> EVENT_BITS) as u64;
                if time > limit.0 {
                    return None;
                }
                self.advance(time >> self.shift);
                self.next_slot().expect("the far event moved into the ring")
            }
        };
        // Keys at or before `limit` in this slot: its time offset at most `limit`'s (all of them when the
        // limit is past the slot).
        let bound = match limit.0 >> self.shift {
            l if l > slot => u64::MAX,
            l if l == slot => slot_key(self.shift, limit.0, EVENT_MASK),
            _ => return None,
        };
        let key = self.take_min((slot % BUCKETS as u64) as usize, bound)?;
        self.in_ring -= 1;
        let (mut slot, mut key) = (slot, key);
        if slot != self.cur {
            self.advance(slot);
            if self.review.advances >= EPOCH {
                (slot, key) = self.review(slot, key);
            }
            self.show(slot + SHOW_AHEAD, ahead);
        }
        Some(self.decode(slot, key))
    }

    /// Chooses the slot width for the next [`EPOCH`] moves of the window from the last ones: narrower when pushes
    /// spilled more than half as often as the window moved, wider when pushes that would have spilled at twice the
    /// width came less than once every eight moves (where the window moves about 0.6 times as often: the gap between
    /// the two keeps the width from flapping). A spill writes a heap of its own, apart from the ring's lines, where a
    /// move of the window reads the next bucket's line. Events due at one instant share a slot at every width: a burst
    /// of them can narrow the slots to no gain, down to the narrowest. (Why a width that follows the density: the
    /// 1024-host tree spills many times more per move than CLOS-128, and each gains from the width the other loses
    /// by; docs/BENCHMARKS-HISTORY.md, "a nineteenth pass".) Returns `key`, just taken from slot `slot` and not yet
    /// decoded, as the slot and key it has at the new width.
    #[cold]
    fn review(&mut self, slot: u64, key: u64) -> (u64, u64) {
        let r = self.review;
        let shift = if r.spills * 2 > r.advances && self.shift > self.narrowest {
            self.shift - 1
        } else if r.crowded * 8 < r.advances && self.shift < self.widest {
            self.shift + 1
        } else {
            self.shift
        };
        if shift == self.shift {
            self.review = Review::default();
            return (slot, key);
        }
        let time = key_time(self.shift, slot, key);
        self.reshape(shift);
        // The rebuild's own pushes are not the next epoch's.
        self.review = Review::default();
        (time >> shift, slot_key(shift, time, key & EVENT_MASK))
    }

    /// Rebuilds the queue with slots of 2^`shift` ps: every pending key, in the ring, its spills and the far
    /// events, is taken out and pushed again. The window starts at the slot of its old start's time.
    fn reshape(&mut self, shift: u32) {
        let mut keys = std::mem::take(&mut self.drained);
        let pending = self.len();
        let start = (self.cur % BUCKETS as u64) as usize;
        for b in 0..BUCKETS {
            let bucket = &mut self.buckets[b];
            if bucket.len == 0 {
                continue;
            }
            let slot = self.cur + ((b + BUCKETS - start) % BUCKETS) as u64;
            let full = |key: u64| {
                (key_time(self.shift, slot, key) as u128) << EVENT_BITS | (key & EVENT_MASK) as u128
            };
            keys.extend(bucket.keys[..bucket.len as usize].iter().map(|&k| full(k)));
            if bucket.spill != 0 {
                let s = bucket.spill as usize - 1;
                keys.extend(self.spill[s].drain().map(|Reverse(k)| full(k)));
                self.spill_free.push(s as u32);
            }
            *bucket = Bucket::default();
        }
        self.far.drain_below(u64::MAX, &mut keys);
        debug_assert_eq!(keys.len(), pending, "a reshape moves every pending key");
        self.occupied.fill(0);
        self.summary.fill(0);
        self.in_ring = 0;
        self.cur = (self.cur << self.shift) >> shift;
        self.shift = shift;
        self.crowded_above = if shift < self.widest {
            CROWDED
        } else {
            u8::MAX
        };
        self.far = Far::new(shift);
        for &k in &keys {
            self.insert(Time((k >> EVENT_BITS) as u64), k as u64 & EVENT_MASK);
        }
        keys.clear();
        self.drained = keys;
    }

    /// Shows `ahead` the events of absolute slot `slot` held in its bucket's line. Out of line but for the
    /// test of an empty bucket: inlined, its loop takes registers from the whole event loop.
    #[inline]
    fn show(&self, slot: u64, ahead: impl FnMut(E)) {
        let b = (slot % BUCKETS as u64) as usize;
        if self.buckets[b].len > 0 {
            self.show_bucket(slot, b, ahead);
        }
    }

    #[inline(never)]
    fn show_bucket(&self, slot: u64, b: usize, mut ahead: impl FnMut(E)) {
        let bucket = &self.buckets[b];
        for &key in &bucket.keys[..bucket.len as usize] {
            ahead(self.decode(slot, key).1);
        }
    }

    /// Removes the smallest key of bucket `b` (non-empty) if it is at most `bound`.
    #[inline(always)]
    fn take_min(&mut self, b: usize, bound: u64) -> Option<u64> {
        let bucket = &mut self.buckets[b];
        let n = bucket.len as usize;
        let keys = &bucket.keys;
        let mut best = 0;
        for i in 1..INLINE {
            if i < n && keys[i] < keys[best] {
                best = i;
            }
        }
        if bucket.spill != 0 {
            return self.take_min_spilled(b, best, bound);
        }
        let key = bucket.keys[best];
        if key > bound {
            return None;
        }
        bucket.keys[best] = bucket.keys[n - 1];
        bucket.len -= 1;
        if bucket.len == 0 {
            self.occupied[b / 64] &= !(1 << (b % 64));
            if self.occupied[b / 64] == 0 {
                self.summary[b / 4096] &= !(1 << (b / 64 % 64));
            }
        }
        Some(key)
    }

    /// [`EventQueue::take_min`] for a bucket with spilled keys; `best` is its smallest inline key. The
    /// inline part stays full: a key taken from it is replaced by one from the spill.
    #[cold]
    fn take_min_spilled(&mut self, b: usize, best: usize, bound: u64) -> Option<u64> {
        let s = self.buckets[b].spill as usize - 1;
        let spill = &mut self.spill[s];
        let Reverse(sk) = *spill.peek().expect("a spill heap in use is non-empty");
        let bucket = &mut self.buckets[b];
        let key = bucket.keys[best].min(sk);
        if key > bound {
            return None;
        }
        spill.pop();
        if key != sk {
            bucket.keys[best] = sk;
        }
        if spill.is_empty() {
            bucket.spill = 0;
            self.spill_free.push(s as u32);
        }
        Some(key)
    }

    /// Adds `key` to full bucket `b`'s spill heap, taking one if the bucket has none.
    #[cold]
    fn spill_push(&mut self, b: usize, key: u64) {
        self.review.spills += 1;
        self.review.crowded += 1;
        if self.buckets[b].spill == 0 {
            let s = self.spill_free.pop().unwrap_or_else(|| {
                self.spill.push(BinaryHeap::new());
                (self.spill.len() - 1) as u32
            });
            self.buckets[b].spill = s + 1;
        }
        self.spill[self.buckets[b].spill as usize - 1].push(Reverse(key));
    }

    /// The time of the earliest pending event.
    pub fn next_time(&self) -> Option<Time> {
        let Some(slot) = self.next_slot() else {
            return self.far.min_key().map(|k| Time((k >> EVENT_BITS) as u64));
        };
        let bucket = &self.buckets[(slot % BUCKETS as u64) as usize];
        let inline = bucket.keys[..bucket.len as usize].iter();
        let spilled = match bucket.spill {
            0 => None,
            s => self.spill[s as usize - 1].peek().map(|&Reverse(k)| k),
        };
        let key = inline
            .copied()
            .chain(spilled)
            .min()
            .expect("a bucket in use is non-empty");
        Some(self.decode(slot, key).0)
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time::MAX)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.in_ring + self.far.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl EventBits for u32 {
        fn to_bits(self) -> u32 {
            self
        }
        fn from_bits(bits: u32) -> Self {
            bits
        }
    }

    #[test]
    fn ties_pop_in_masked_event_order() {
        let mut q = EventQueue::new();
        q.push(Time(5), 4u32);
        q.push(Time(1), 9);
        q.push(Time(5), 2);
        q.push(Time(5), 3);
        q.push(Time(5), 2);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        let mut tied = [4u32, 2, 3, 2];
        tied.sort_by_key(|&e| EventQueue::order_at(Time(5), e));
        assert_eq!(order[0], 9);
        assert_eq!(order[1..], tied[..]);
    }

    #[test]
    fn the_tie_order_of_two_events_varies_between_instants() {
        let first = |t: u64| (2u32 ^ tie_mask(Time(t))) < (3 ^ tie_mask(Time(t)));
        let wins = (0..1000u64).filter(|&t| first(t * 83_840)).count();
        assert!(
            (400..600).contains(&wins),
            "event 2 first at {wins} of 1000 instants"
        );
    }

    #[test]
    fn pop_until_respects_the_limit() {
        let mut q = EventQueue::with_horizon(Time(1000));
        q.push(Time(10), 1u32);
        q.push(Time(1_000_000), 2);
        assert_eq!(q.pop_until(Time(5)), None);
        assert_eq!(q.next_time(), Some(Time(10)));
        assert_eq!(q.pop_until(Time(10)), Some((Time(10), 1)));
        assert_eq!(q.next_time(), Some(Time(1_000_000)));
        assert_eq!(q.pop_until(Time(999_999)), None);
        assert_eq!(q.pop_until(Time::MAX), Some((Time(1_000_000), 2)));
        assert!(q.is_empty());
    }

    /// Runs `ops` against a sorted model of (time, masked event): op 0 pops, op 1 pops with a limit `dt` past
    /// now, others push `dt` past now (never earlier than the last pop, as in a simulation).
    fn check_against_model(horizon: u64, ops: &[(u64, u8, u32)]) -> Result<(), TestCaseError> {
        let mut q = EventQueue::with_horizon(Time(horizon));
        let mut model: Vec<(u64, u32)> = Vec::new();
        let mut now = 0;
        for &(dt, op, ev) in ops {
            if op <= 1 {
                let limit = if op == 0 { u64::MAX } else { now + dt };
                model.sort();
                let want = match model.first() {
                    Some(&(t, e)) if t <= limit => {
                        model.remove(0);
                        Some((t, e ^ tie_mask(Time(t))))
                    }
                    _ => None,
                };
                let mut shown = Vec::new();
                let got = q
                    .pop_until_ahead(Time(limit), |e| shown.push(e))
                    .map(|(t, e)| (t.0, e));
                prop_assert_eq!(got, want);
                // What a pop shows ahead is pending and later than the event it popped.
                for e in shown {
                    let later = |&(t, m): &(u64, u32)| {
                        m ^ tie_mask(Time(t)) == e && Some(t) > got.map(|g| g.0)
                    };
                    prop_assert!(model.iter().any(later), "{e} shown but not pending");
                }
                if let Some((t, _)) = got {
                    now = t;
                }
                prop_assert_eq!(q.len(), model.len());
            } else {
                q.push(Time(now + dt), ev);
                model.push((now + dt, ev ^ tie_mask(Time(now + dt))));
            }
        }
        model.sort();
        let rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
        let want: Vec<(u64, u32)> = model
            .into_iter()
            .map(|(t, e)| (t, e ^ tie_mask(Time(t))))
            .collect();
        prop_assert_eq!(rest, want);
        Ok(())
    }

    /// A crowded phase narrows the slots to the narrowest width, a sparse one widens them back, and events pop
    /// in order throughout (the reviews come every 16 moves of the window in tests).
    #[test]
    fn the_slot_width_follows_the_density() {
        let mut q = EventQueue::with_horizon(Time(4096 * 1024));
        assert_eq!(q.shift, 10);
        let mut model = BinaryHeap::new();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let push = |q: &mut EventQueue<u32>, model: &mut BinaryHeap<_>, t: u64, e: u32| {
            q.push(Time(t), e);
            model.push(Reverse((t, e ^ tie_mask(Time(t)))));
        };
        for e in 0..2000 {
            push(&mut q, &mut model, random(50_000), e);
        }
        let mut widths = Vec::new();
        for round in 0..30_000u32 {
            let Reverse((t, masked)) = model.pop().expect("events pending");
            assert_eq!(q.pop(), Some((Time(t), masked ^ tie_mask(Time(t)))));
            if widths.last() != Some(&q.shift) {
                widths.push(q.shift);
            }
            // 2,000 events within 50 ns at first (40 a slot of 1024 ps), then a few within 262 ns; and now and
            // then one 3 to 6 µs ahead, beyond the ring, with the far events as the queue reshapes.
            if round < 20_000 || model.len() < 20 {
                let ahead = if round < 20_000 { 50_000 } else { 262_144 };
                push(&mut q, &mut model, t + random(ahead), round % 1000);
            }
            if round % 97 == 0 {
                push(&mut q, &mut model, t + 3_000_000 + random(3_000_000), 1000);
            }
        }
        assert_eq!(widths, [10, 9, 8, 7, 6, 7, 8, 9, 10]);
        while let Some(Reverse((t, masked))) = model.pop() {
            assert_eq!(q.pop(), Some((Time(t), masked ^ tie_mask(Time(t)))));
        }
        assert!(q.is_empty());
    }

    proptest! {
        /// Horizons small and large relative to the spread of times, and repeated events.
        #[test]
        fn pops_sorted_by_time_then_event(
            horizon in 1u64..5_000,
            ops in prop::collection::vec((0u64..20_000, 0u8..4, 0u32..8), 0..400),
        ) {
            check_against_model(horizon, &ops)?;
        }

        /// Events far beyond the ring: in the far wheel's lists, partly reached by the window, and beyond the
        /// wheel's reach in its heap, with long empty gaps the window jumps.
        #[test]
        fn far_events_pop_in_order(
            horizon in 1u64..5_000,
            ops in prop::collection::vec(
                (prop_oneof![0u64..20_000, 0u64..3_000_000], 0u8..4, 0u32..8),
                0..400,
            ),
        ) {
            check_against_model(horizon, &ops)?;
        }

        /// Many events in few slots: buckets fill beyond their seven inline keys and spill.
        #[test]
        fn crowded_slots_spill_and_pop_in_order(
            horizon in 1_000_000u64..100_000_000,
            ops in prop::collection::vec((0u64..300, 0u8..5, 0u32..1_000), 0..600),
        ) {
            check_against_model(horizon, &ops)?;
        }
    }
}
