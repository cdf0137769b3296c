//! The events beyond the event ring's window: a second, coarser ring (a hierarchical timing wheel, Varghese and
//! Lauck 1987) of unsorted lists, each 2^[`SPAN_SHIFT`] ring slots wide, and a binary heap for the few events
//! beyond its own reach. A DCQCN run keeps its controllers' timer events 300 µs ahead and its NICs' pacing
//! wake-ups up to tens of microseconds ahead, past the ring's one link delay: thousands pending at once, so that
//! in one binary heap each push and pop would walk a tree larger than the L1. Here a push appends to a list, and a
//! list moves into the ring once, when the window reaches it. The order the events pop in is the ring's
//! business: [`Far::drain_below`] hands them over in no particular order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::EVENT_BITS;

/// Ring slots per list: 2^9, so that the lists are short (a few keys on a busy run) and a list the window
/// reaches in part is re-scanned cheaply.
const SPAN_SHIFT: u32 = 9;
/// Lists in the wheel: with the ring's 256 ps slots of a 1 µs link, the wheel reaches 537 µs ahead.
const LISTS: usize = 4096;
const WORDS: usize = LISTS / 64;

/// Far events as full keys, `time << 24 | masked event bits` (the ring slot of a key is its time shifted by the
/// ring's `shift`).
pub(super) struct Far {
    /// List `c % LISTS` holds the keys of coarse index `c` (ring slot >> [`SPAN_SHIFT`]), for `c` in
    /// `[base, base + LISTS)`.
    lists: Box<[Vec<u128>]>,
    /// Bit `i` set when list `i` is non-empty.
    occupied: Box<[u64; WORDS]>,
    /// No key in the wheel has a coarse index below this; it only grows.
    base: u64,
    /// Keys whose coarse index was `base + LISTS` or more when they came.
    heap: BinaryHeap<Reverse<u128>>,
    /// The ring slot of the earliest key, `u64::MAX` when there is none: the ring compares it each time its
    /// window moves.
    min_slot: u64,
    len: usize,
    /// The ring's slot width, log2 ps.
    shift: u32,
}

impl Far {
    pub(super) fn new(shift: u32) -> Far {
        Far {
            lists: vec![Vec::new(); LISTS].into_boxed_slice(),
            occupied: Box::new([0; WORDS]),
            base: 0,
            heap: BinaryHeap::new(),
            min_slot: u64::MAX,
            len: 0,
            shift,
        }
    }

    /// The ring slot of `key`.
    #[inline]
    fn slot(&self, key: u128) -> u64 {
        ring_slot(key, self.shift)
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The ring slot of the earliest key (`u64::MAX`: none).
    #[inline]
    pub(super) fn min_slot(&self) -> u64 {
        self.min_slot
    }

    /// Adds `key`, due in ring slot `slot`, which must not be below the `limit` of any earlier
    /// [`Far::drain_below`].
    pub(super) fn push(&mut self, key: u128, slot: u64) {
        self.len += 1;
        self.min_slot = self.min_slot.min(slot);
        self.place(key, slot >> SPAN_SHIFT);
    }

    fn place(&mut self, key: u128, coarse: u64) {
        debug_assert!(coarse >= self.base, "a far key below the wheel's base");
        if coarse >= self.base + LISTS as u64 {
            self.heap.push(Reverse(key));
            return;
        }
        let i = (coarse % LISTS as u64) as usize;
        self.lists[i].push(key);
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// The first non-empty list at or after `base`'s, as a coarse index.
    fn first_list(&self) -> Option<u64> {
        let start = (self.base % LISTS as u64) as usize;
        let found = |from: usize, to: usize| {
            (from / 64..to.div_ceil(64)).find_map(|w| {
                let mut bits = self.occupied[w];
                if w == from / 64 {
                    bits &= !0u64 << (from % 64);
                }
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        };
        let i = found(start, LISTS).or_else(|| found(0, start))?;
        Some(self.base + ((i + LISTS - start) % LISTS) as u64)
    }

    /// Moves the keys the heap holds within the wheel's reach into the wheel.
    fn refill(&mut self) {
        while let Some(&Reverse(k)) = self.heap.peek() {
            let coarse = self.slot(k) >> SPAN_SHIFT;
            if coarse >= self.base + LISTS as u64 {
                break;
            }
            self.heap.pop();
            self.place(k, coarse);
        }
    }

    /// Hands `out` every key due in a ring slot below `limit`, in no particular order; the ring's window then
    /// starts at `limit` minus its size, and later pushes are at `limit` or beyond.
    pub(super) fn drain_below(&mut self, limit: u64, out: &mut Vec<u128>) {
        loop {
            let Some(coarse) = self.first_list() else {
                // The wheel is empty: jump it to the heap's earliest key, if that is due.
                match self.heap.peek() {
                    Some(&Reverse(k)) if self.slot(k) < limit => {
                        self.base = self.slot(k) >> SPAN_SHIFT;
                        self.refill();
                        continue;
                    }
                    _ => break,
                }
            };
            if coarse << SPAN_SHIFT >= limit {
                break;
            }
            // Every list before this one is empty, and no later push comes below `limit`.
            if coarse > self.base {
                self.base = coarse;
                self.refill();
            }
            let i = (coarse % LISTS as u64) as usize;
            let shift = self.shift;
            let before = out.len();
            self.lists[i].retain(|&k| {
                let due = ring_slot(k, shift) < limit;
                if due {
                    out.push(k);
                }
                !due
            });
            self.len -= out.len() - before;
            if !self.lists[i].is_empty() {
                break; // the list reaches past `limit`: the rest waits
            }
            self.occupied[i / 64] &= !(1 << (i % 64));
        }
        self.min_slot = self.min_key().map_or(u64::MAX, |k| self.slot(k));
    }

    /// The earliest key.
    pub(super) fn min_key(&self) -> Option<u128> {
        let listed = self.first_list().and_then(|c| {
            self.lists[(c % LISTS as u64) as usize]
                .iter()
                .copied()
                .min()
        });
        let heaped = self.heap.peek().map(|&Reverse(k)| k);
        match (listed, heaped) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The ring slot of `key` under slots of 2^`shift` ps.
#[inline]
fn ring_slot(key: u128, shift: u32) -> u64 {
    ((key >> EVENT_BITS) as u64) >> shift
}
