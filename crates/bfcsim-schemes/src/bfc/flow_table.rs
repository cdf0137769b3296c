//! BFC's flow table (§3.3.1): an array indexed by (egress port, hash of the flow id) whose entries hold the
//! queue assigned to the flows that map there, how many of their packets are in the switch (`size`), and when
//! an entry last saw a packet enter or leave (the sticky-assignment timestamp of §3.3.2). Two flows that map to
//! one entry share its queue: index collisions are real, as in the hardware.
//!
//! [`FlowTable::exact`] keys entries by flow id instead, with no collisions: the idealised per-flow state of the
//! ideal baselines (§6.2.1), which no switch could hold.
//!
//! The table is generic over its entry: Aquarius (Algorithm 1) indexes its flow table the same way, by (egress
//! port, hash of the FID), with entries of its own ([`crate::aquarius`]).

use std::collections::HashMap;

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
    /// The entry's flows have no packets in the switch: the exact table forgets it.
    fn idle(&self) -> bool;
}

impl Slot for Entry {
    fn idle(&self) -> bool {
        self.size == 0
    }
}

/// Where an entry lives: an index into the hashed array, or a flow key of the exact table.
pub type EntryKey = u64;

/// The flow table of one switch.
#[derive(Clone, Debug)]
pub enum FlowTable<E = Entry> {
    /// `per_port` entries for each egress port, indexed by a hash of the flow id (§3.3.1).
    Hashed {
        /// Entries per egress port.
        per_port: u64,
        /// All entries, port-major.
        entries: Vec<E>,
    },
    /// One entry per (egress port, flow) while the flow has packets in the switch.
    Exact(HashMap<u64, E>),
}

impl<E: Slot> FlowTable<E> {
    /// A hashed table with `per_port` entries for each of `ports` egress ports.
    pub fn hashed(ports: usize, per_port: u64) -> FlowTable<E> {
        FlowTable::Hashed {
            per_port: per_port.max(1),
            entries: vec![E::default(); ports * per_port.max(1) as usize],
        }
    }

    /// An exact table (no index collisions).
    pub fn exact() -> FlowTable<E> {
        FlowTable::Exact(HashMap::new())
    }

    /// The entry key of flow `flow` (with 32-bit FID hash `hash`) at egress `port`.
    #[inline]
    pub fn key(&self, port: u16, hash: u32, flow: u32) -> EntryKey {
        match self {
            FlowTable::Hashed { per_port, .. } => {
                port as u64 * per_port + ((hash as u64 * per_port) >> 32)
            }
            FlowTable::Exact(_) => (port as u64) << 32 | flow as u64,
        }
    }

    /// The entry at `key` (a fresh, empty one if the exact table has none).
    #[inline]
    pub fn get(&self, key: EntryKey) -> E {
        match self {
            FlowTable::Hashed { entries, .. } => entries[key as usize],
            FlowTable::Exact(map) => map.get(&key).copied().unwrap_or_default(),
        }
    }

    /// Stores `entry` at `key`; the exact table forgets entries with no packets in the switch.
    #[inline]
    pub fn set(&mut self, key: EntryKey, entry: E) {
        match self {
            FlowTable::Hashed { entries, .. } => entries[key as usize] = entry,
            FlowTable::Exact(map) => {
                if entry.idle() {
                    map.remove(&key);
                } else {
                    map.insert(key, entry);
                }
            }
        }
    }

    /// Entries in the table (for the hardware budget); 0 for the exact table, which has no fixed size.
    pub fn capacity(&self) -> usize {
        match self {
            FlowTable::Hashed { entries, .. } => entries.len(),
            FlowTable::Exact(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_keys_stay_within_their_port() {
        let t = FlowTable::<Entry>::hashed(3, 100);
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
        t.set(
            a,
            Entry {
                queue: 3,
                size: 2,
                touched: Time(1),
            },
        );
        assert_eq!(t.get(a).queue, 3);
        assert_eq!(t.get(b), Entry::default());
        t.set(
            a,
            Entry {
                queue: 3,
                size: 0,
                touched: Time(2),
            },
        );
        assert_eq!(t.get(a), Entry::default());
    }
}
