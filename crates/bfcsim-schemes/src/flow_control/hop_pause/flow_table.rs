//! BFC's flow table (§3.3.1): an array indexed by (egress port, hash of the flow id) whose entries hold the
//! queue assigned to the flows that map there, how many of their packets are in the switch (`size`), and when
//! an entry last saw a packet enter or leave (the sticky-assignment timestamp of §3.3.2). Two flows that map to
//! one entry share its queue: index collisions are real, as in the hardware.
//!
//! [`FlowTable::exact`] keys entries by flow id instead, with no collisions: the idealised per-flow state of the
//! ideal baselines (§6.2.1), which no switch could hold.
//!
//! The table is generic over its entry: Aquarius (Algorithm 1) indexes its flow table the same way, by (egress
//! port, hash of the FID), with entries of its own ([`crate::flow_control::aquarius`]).
//!
//! The hashed array is held sparsely. A switch's table has 100 entries per queue of each port (76,800 on a
//! CLOS-128 ToR, 16 M over the 320 switches of a 1024-host fat tree, 330 MB there), of which only the entries of
//! flows with packets in the switch, and those within their sticky time after, differ from a fresh entry: only
//! those take memory, in a map that stays small enough for the cache. An idle entry is forgotten once it is
//! `keep_idle` old (the sticky time), when it behaves exactly as a fresh one, so the table answers every lookup
//! as the full array would.

use bfcsim_core::Time;

/// One flow-table entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The queue the entry's flows are assigned to (`qAssignment`).
    pub queue: u16,
    /// Packets of the entry's flows in the switch (`size`).
    pub size: u32,
    /// Last time a packet of the entry's flows was enqueued or dequeued.
    pub touched: Time,
}

/// What a flow table holds per entry.
pub trait Slot: Copy + Default {
    /// The entry's flows have no packets in the switch. An idle entry must act as a fresh (default) one once it
    /// has been idle for the table's `keep_idle`: the table then forgets it.
    fn idle(&self) -> bool;

    /// When the entry was last stored: the clock by which a table that keeps idle entries for a while
    /// ([`FlowTable::hashed`]'s `keep_idle`) ages them. Tables that forget idle entries at once never ask.
    fn stamp(&self) -> Time {
        Time::ZERO
    }
}

impl Slot for Entry {
    fn idle(&self) -> bool {
        self.size == 0
    }

    fn stamp(&self) -> Time {
        self.touched
    }
}

/// Where an entry lives: an index into the hashed array, or a flow key of the exact table.
pub type EntryKey = u64;

/// How keys are formed.
#[derive(Clone, Copy, Debug)]
enum Index {
    /// `per_port` entries for each of `ports` egress ports, indexed by a hash of the flow id (§3.3.1).
    Hashed { per_port: u64, ports: u64 },
    /// One entry per (egress port, flow).
    Exact,
}

/// The entries of a table that differ from a fresh one: an open-addressing map from key to entry with linear
/// probing and backward-shift deletion, every slot a (key, entry) pair so that a lookup reads one cache line.
/// The keys are array indices and flow numbers, not chosen by an adversary, and the map is never iterated, so a
/// multiplicative hash serves, where `std`'s `HashMap` with its keyed hash costs more than twice as much.
#[derive(Clone, Debug)]
struct LiveMap<E> {
    /// `(EMPTY, _)` marks a free slot; the length is a power of two, at least twice `len`.
    slots: Vec<(EntryKey, E)>,
    len: usize,
    /// 64 minus log2 of the number of slots: a key's home slot is the top bits of its hash.
    shift: u32,
}

/// The key of a free slot (no table forms it: hashed keys are below ports × entries per port, exact ones carry
/// a port number below 2^16 in their high half).
const EMPTY: EntryKey = u64::MAX;

impl<E: Copy + Default> LiveMap<E> {
    const MIN_SLOTS: usize = 64;

    fn with_slots(n: usize) -> LiveMap<E> {
        LiveMap {
            slots: vec![(EMPTY, E::default()); n],
            len: 0,
            shift: 64 - n.trailing_zeros(),
        }
    }

    #[inline]
    fn home(&self, key: EntryKey) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot holding `key`, or the free slot where it would go.
    #[inline]
    fn find(&self, key: EntryKey) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let k = self.slots[i].0;
            if k == key || k == EMPTY {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    #[cfg(test)]
    fn get(&self, key: EntryKey) -> Option<&E> {
        let (k, e) = &self.slots[self.find(key)];
        (*k == key).then_some(e)
    }

    /// Whether one more key fits without the map's slots passing half full.
    #[inline]
    fn has_room(&self) -> bool {
        2 * (self.len + 1) <= self.slots.len()
    }

    /// Puts `key`, absent, in free slot `i` that [`LiveMap::find`] returned for it (room permitting).
    #[inline]
    fn fill(&mut self, i: usize, key: EntryKey, entry: E) {
        debug_assert!(self.slots[i].0 == EMPTY && self.has_room());
        self.slots[i] = (key, entry);
        self.len += 1;
    }

    /// Empties slot `i`, which holds a key.
    fn remove_at(&mut self, mut i: usize) {
        self.len -= 1;
        // Backward-shift deletion: pull later keys of the probe run into the hole unless that would put one
        // before its home slot, so that every key stays reachable without tombstones.
        let mask = self.slots.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let k = self.slots[j].0;
            if k == EMPTY {
                break;
            }
            let home = self.home(k);
            // `k` may move to `i` only if its home is not in the cyclic range (i, j].
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask) {
                self.slots[i] = self.slots[j];
                i = j;
            }
        }
        self.slots[i].0 = EMPTY;
    }

    /// The map rebuilt with the entries `keep` accepts, in as many slots as now or four times as many as it
    /// keeps, whichever is more: a rebuild is then at least a quarter of its slots' insertions away from the
    /// next. One scan of the slots gathers the kept entries, which are then placed from that short list;
    /// counting them in a scan of their own first took two thirds of the rebuilds' instructions on the CLOS-128
    /// bench (19.5 M against 6.2 M; the cache misses, of the first scan of a cold map, stayed).
    #[cold]
    fn rebuilt(&self, keep: impl Fn(&E) -> bool) -> LiveMap<E> {
        let kept: Vec<(EntryKey, E)> = self
            .slots
            .iter()
            .filter(|(k, e)| *k != EMPTY && keep(e))
            .copied()
            .collect();
        let mut map =
            LiveMap::with_slots((4 * kept.len()).next_power_of_two().max(self.slots.len()));
        for (k, e) in kept {
            let i = map.find(k);
            map.fill(i, k, e);
        }
        map
    }
}

/// Where [`FlowTable::lookup`] found a key: its slot in the map, or the free slot where it would go.
#[derive(Clone, Copy, Debug)]
pub struct Spot {
    i: usize,
    held: bool,
}

/// The flow table of one switch.
#[derive(Clone, Debug)]
pub struct FlowTable<E = Entry> {
    index: Index,
    /// The entries that differ from a fresh one, and idle ones not yet forgotten; every other key reads as
    /// `E::default()`.
    live: LiveMap<E>,
    /// How long an idle entry is kept before it acts as a fresh one (and may be forgotten).
    keep_idle: Time,
}

impl<E: Slot> FlowTable<E> {
    /// A hashed table with `per_port` entries for each of `ports` egress ports whose idle entries act as fresh
    /// ones after `keep_idle` (BFC's sticky time; zero for entries that are fresh as soon as they are idle).
    pub fn hashed(ports: usize, per_port: u64, keep_idle: Time) -> FlowTable<E> {
        FlowTable::with_index(
            Index::Hashed {
                per_port: per_port.max(1),
                ports: ports as u64,
            },
            keep_idle,
        )
    }

    /// An exact table (no index collisions), which forgets an entry as soon as it is idle.
    pub fn exact() -> FlowTable<E> {
        FlowTable::with_index(Index::Exact, Time::ZERO)
    }

    fn with_index(index: Index, keep_idle: Time) -> FlowTable<E> {
        FlowTable {
            index,
            live: LiveMap::with_slots(LiveMap::<E>::MIN_SLOTS),
            keep_idle,
        }
    }

    /// The entry key of flow `flow` (with 32-bit FID hash `hash`) at egress `port`.
    #[inline]
    pub fn key(&self, port: u16, hash: u32, flow: u32) -> EntryKey {
        match self.index {
            Index::Hashed { per_port, .. } => {
                port as u64 * per_port + ((hash as u64 * per_port) >> 32)
            }
            Index::Exact => (port as u64) << 32 | flow as u64,
        }
    }

    /// The entry at `key` (a fresh one if the table holds none there).
    #[inline]
    pub fn get(&self, key: EntryKey) -> E {
        self.lookup(key).1
    }

    /// The entry at `key` and where it is, for a [`FlowTable::store`] with no other change to the table in
    /// between (one probe for a read-modify-write).
    #[inline]
    pub fn lookup(&self, key: EntryKey) -> (Spot, E) {
        let i = self.live.find(key);
        let (k, e) = self.live.slots[i];
        if k == key {
            (Spot { i, held: true }, e)
        } else {
            (Spot { i, held: false }, E::default())
        }
    }

    /// Stores `entry` at `key`.
    #[inline]
    pub fn set(&mut self, key: EntryKey, entry: E) {
        let spot = self.lookup(key).0;
        self.store(spot, key, entry);
    }

    /// Stores `entry` at `key`, found at `spot` by the latest [`FlowTable::lookup`]. The entries'
    /// [`stamp`](Slot::stamp)s must not go back from one store to the next: idle entries are forgotten lazily,
    /// when the map fills up, by the age the latest stamp gives them.
    #[inline]
    pub fn store(&mut self, spot: Spot, key: EntryKey, entry: E) {
        let forget_now = entry.idle() && self.keep_idle == Time::ZERO;
        if spot.held {
            if forget_now {
                self.live.remove_at(spot.i);
            } else {
                self.live.slots[spot.i].1 = entry;
            }
        } else if !forget_now {
            if self.live.has_room() {
                self.live.fill(spot.i, key, entry);
            } else {
                self.make_room(entry.stamp());
                let i = self.live.find(key);
                self.live.fill(i, key, entry);
            }
        }
    }

    /// Rebuilds the full map without the entries idle for `keep_idle` by `now` (they read as fresh, which
    /// they act as), in slots for four times the rest.
    #[cold]
    fn make_room(&mut self, now: Time) {
        let keep_idle = self.keep_idle;
        self.live = self
            .live
            .rebuilt(|e| !e.idle() || now.saturating_sub(e.stamp()) < keep_idle);
    }

    /// Entries in the table (for the hardware budget); 0 for the exact table, which has no fixed size.
    pub fn capacity(&self) -> usize {
        match self.index {
            Index::Hashed { per_port, ports } => (per_port * ports) as usize,
            Index::Exact => 0,
        }
    }

    /// Entries held now: those that differ from a fresh one, and idle ones not yet forgotten.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.live.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn entry(queue: u16, size: u32, touched: u64) -> Entry {
        Entry {
            queue,
            size,
            touched: Time(touched),
        }
    }

    #[test]
    fn hashed_keys_stay_within_their_port() {
        let t = FlowTable::<Entry>::hashed(3, 100, Time::ZERO);
        for hash in [0u32, 1, u32::MAX / 2, u32::MAX] {
            for port in 0..3u16 {
                let k = t.key(port, hash, 0);
                assert!(k >= port as u64 * 100 && k < (port as u64 + 1) * 100, "{k}");
            }
        }
        // Two flows whose hashes land in one bucket share an entry: a collision.
        assert_eq!(t.key(1, 0, 1), t.key(1, 1, 2));
        assert_eq!(t.capacity(), 300);
    }

    #[test]
    fn exact_table_keys_by_flow_and_forgets_idle_entries() {
        let mut t = FlowTable::<Entry>::exact();
        let (a, b) = (t.key(0, 5, 1), t.key(0, 5, 2));
        assert_ne!(a, b);
        t.set(a, entry(3, 2, 1));
        assert_eq!(t.get(a).queue, 3);
        assert_eq!(t.get(b), Entry::default());
        t.set(a, entry(3, 0, 2));
        assert_eq!(t.get(a), Entry::default());
        assert_eq!(t.held(), 0);
    }

    #[test]
    fn hashed_table_keeps_idle_entries_for_their_sticky_time_and_forgets_them_when_full() {
        let mut t = FlowTable::<Entry>::hashed(1, 1000, Time(10));
        t.set(7, entry(4, 1, 0));
        t.set(7, entry(4, 0, 5));
        // Idle: the queue is remembered (the switch reuses it within its sticky time).
        assert_eq!(t.get(7), entry(4, 0, 5));
        // The map fills up (32 keys in its 64 slots) before entry 7 is 10 ps idle: nothing is forgotten.
        for k in 100..131 {
            t.set(k, entry(1, 1, 14));
        }
        assert_eq!(t.held(), 32);
        t.set(131, entry(1, 1, 14));
        assert_eq!((t.get(7), t.held()), (entry(4, 0, 5), 33));
        // The next rebuild, once entry 7 is 10 ps idle, forgets it: it reads as fresh, which it now acts as.
        for k in 200..300 {
            t.set(k, entry(1, 1, 15));
        }
        assert_eq!((t.get(7), t.held()), (Entry::default(), 132));
    }

    #[test]
    fn hashed_table_without_sticky_time_forgets_idle_entries_at_once() {
        let mut t = FlowTable::<Entry>::hashed(1, 10, Time::ZERO);
        let k = t.key(0, 1, 1);
        t.set(k, entry(1, 1, 3));
        t.set(k, entry(1, 0, 4));
        assert_eq!(t.get(k), Entry::default());
        assert_eq!(t.held(), 0);
    }

    proptest! {
        /// The open-addressing map against a `BTreeMap`, through growth and backward-shift deletions in
        /// crowded probe runs (keys from a small range collide often).
        #[test]
        fn live_map_agrees_with_a_btree_map(
            ops in prop::collection::vec((0u64..300, any::<bool>(), 0u16..100), 0..2_000),
        ) {
            let mut map = LiveMap::<u16>::with_slots(LiveMap::<u16>::MIN_SLOTS);
            let mut model = BTreeMap::new();
            for (key, insert, value) in ops {
                let i = map.find(key);
                let present = map.slots[i].0 == key;
                if insert {
                    if present {
                        map.slots[i].1 = value;
                    } else if map.has_room() {
                        map.fill(i, key, value);
                    } else {
                        map = map.rebuilt(|_| true);
                        let i = map.find(key);
                        map.fill(i, key, value);
                    }
                    model.insert(key, value);
                } else {
                    if present {
                        map.remove_at(i);
                    }
                    model.remove(&key);
                }
                prop_assert_eq!(map.len, model.len());
                prop_assert_eq!(map.get(key), model.get(&key));
            }
            for key in 0..300 {
                prop_assert_eq!(map.get(key), model.get(&key));
            }
        }

        /// The sparse hashed table answers as the full array would: every entry as last stored, except that
        /// one idle for the sticky time or longer may read as fresh, which the switch treats alike.
        #[test]
        fn hashed_table_reads_as_the_full_array(
            ops in prop::collection::vec((0u64..40, 0u64..4, 0u32..3, 0u16..8), 0..1_000),
        ) {
            let keep = Time(5);
            let mut t = FlowTable::<Entry>::hashed(1, 40, keep);
            let mut array = vec![Entry::default(); 40];
            let mut now = 0;
            for (key, dt, size, queue) in ops {
                now += dt;
                let e = entry(queue, size, now);
                t.set(key, e);
                array[key as usize] = e;
                for (k, want) in array.iter().enumerate() {
                    let got = t.get(k as u64);
                    let expired = want.idle() && now - want.touched.0 >= keep.0;
                    prop_assert!(
                        got == *want || (expired && got == Entry::default()),
                        "key {} at {}: {:?}, the array has {:?}", k, now, got, want
                    );
                }
            }
        }
    }
}
