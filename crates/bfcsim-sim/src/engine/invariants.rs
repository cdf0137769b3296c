//! The end-of-run checks of one shard: every packet accounted for, every drop with a reason, buffers consistent
//! with their queues.

use super::*;

impl Fabric {
    /// Packets and bytes this shard holds (NICs, queues, wires, its outbox and what the scheme holds), for the
    /// conservation check.
    pub(super) fn census<S: Scheme>(&self, side: &S) -> (u64, u64) {
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
        side.census(&mut |id| count(self.packets.get(id).size));
        (pkts, bytes)
    }

    /// Checks this shard's end-of-run invariants: every packet it has allocated is in one of its NICs, queues
    /// or wires; every drop has a reason; no buffer went over its capacity; each switch's occupancy equals what
    /// its queues hold. Conservation over the whole run ([`crate::sim::Sim::check_invariants`]) adds up the
    /// shards' counters and [`Fabric::census`]. Returns every violation found.
    pub(super) fn local_violations<S: Scheme>(&self, side: &S) -> Vec<String> {
        let mut v = Vec::new();
        let c = &self.counters;
        let held = self.census(side).0
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
        v
    }
}
