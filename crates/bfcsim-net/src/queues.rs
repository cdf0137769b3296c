//! A port's egress queues: strict priority between levels, deficit round robin among the queues of one level
//! (Shreedhar & Varghese). Any number of queues per port; at most 64 priority levels.
//!
//! Each queue entry carries the packet's wire size so the scheduler never touches the packet slab.

use std::collections::VecDeque;

use bfcsim_core::PacketId;

#[derive(Clone, Debug, Default)]
struct Fifo {
    pkts: VecDeque<(PacketId, u32)>,
    bytes: u64,
}

/// The queues of one egress port and their scheduler state.
#[derive(Clone, Debug)]
pub struct PortQueues {
    queues: Vec<Fifo>,
    /// Strict-priority level of each queue; 0 is served first.
    level_of: Vec<u8>,
    /// Per level, the non-empty queues in DRR order.
    rings: Vec<VecDeque<u16>>,
    deficit: Vec<u64>,
    quantum: u64,
    /// Bit `l` set when level `l` has a non-empty queue.
    busy_levels: u64,
    total_bytes: u64,
    total_pkts: usize,
}

impl PortQueues {
    /// `levels[i]` is queue i's priority level; `quantum` is the DRR quantum in bytes (one MTU gives per-packet
    /// round robin for full-size packets).
    pub fn new(levels: &[u8], quantum: u64) -> PortQueues {
        assert!(
            !levels.is_empty() && levels.len() <= u16::MAX as usize,
            "1..=65535 queues per port"
        );
        let n_levels = *levels.iter().max().unwrap() as usize + 1;
        assert!(n_levels <= 64, "at most 64 priority levels");
        PortQueues {
            queues: vec![Fifo::default(); levels.len()],
            level_of: levels.to_vec(),
            rings: vec![VecDeque::new(); n_levels],
            deficit: vec![0; levels.len()],
            quantum: quantum.max(1),
            busy_levels: 0,
            total_bytes: 0,
            total_pkts: 0,
        }
    }

    /// Appends a packet of `size` wire bytes to queue `q`.
    #[inline]
    pub fn push(&mut self, q: usize, id: PacketId, size: u32) {
        let fifo = &mut self.queues[q];
        if fifo.pkts.is_empty() {
            let level = self.level_of[q] as usize;
            self.rings[level].push_back(q as u16);
            self.busy_levels |= 1 << level;
            // Credited now for its first turn, so that joining the ring costs no extra round.
            self.deficit[q] = self.quantum;
        }
        fifo.pkts.push_back((id, size));
        fifo.bytes += size as u64;
        self.total_bytes += size as u64;
        self.total_pkts += 1;
    }

    /// Removes the next packet to transmit: from the highest non-empty level, the DRR choice within it.
    /// Returns the packet, its size and its queue.
    #[inline]
    pub fn pop(&mut self) -> Option<(PacketId, u32, usize)> {
        if self.busy_levels == 0 {
            return None;
        }
        let level = self.busy_levels.trailing_zeros() as usize;
        let ring = &mut self.rings[level];
        loop {
            let q = *ring.front().expect("busy level has a queue") as usize;
            let fifo = &mut self.queues[q];
            let (id, size) = *fifo.pkts.front().expect("queue in ring is non-empty");
            if self.deficit[q] >= size as u64 {
                self.deficit[q] -= size as u64;
                fifo.pkts.pop_front();
                fifo.bytes -= size as u64;
                self.total_bytes -= size as u64;
                self.total_pkts -= 1;
                if fifo.pkts.is_empty() {
                    ring.pop_front();
                    self.deficit[q] = 0;
                    if ring.is_empty() {
                        self.busy_levels &= !(1 << level);
                    }
                }
                return Some((id, size, q));
            }
            // The queue's turn is over: credit its next turn and let the next queue go.
            self.deficit[q] += self.quantum;
            ring.rotate_left(1);
        }
    }

    /// Bytes waiting in queue `q`.
    #[inline]
    pub fn queue_bytes(&self, q: usize) -> u64 {
        self.queues[q].bytes
    }
    /// Packets waiting in queue `q`.
    pub fn queue_len(&self, q: usize) -> usize {
        self.queues[q].pkts.len()
    }
    /// Bytes waiting in all queues.
    pub fn bytes(&self) -> u64 {
        self.total_bytes
    }
    /// Packets waiting in all queues.
    pub fn len(&self) -> usize {
        self.total_pkts
    }
    /// True when every queue is empty.
    pub fn is_empty(&self) -> bool {
        self.total_pkts == 0
    }
    /// Number of queues.
    pub fn count(&self) -> usize {
        self.queues.len()
    }
    /// Every queued packet id (for end-of-run accounting).
    pub fn iter(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.queues
            .iter()
            .flat_map(|f| f.pkts.iter().map(|&(id, _)| id))
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
    fn equal_packets_round_robin() {
        let mut pq = PortQueues::new(&[0, 0, 0], 1048);
        for i in 0..3 {
            for q in 0..3 {
                pq.push(q, PacketId(i * 3 + q as u32), 1048);
            }
        }
        assert_eq!(drain(&mut pq), vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }
}
