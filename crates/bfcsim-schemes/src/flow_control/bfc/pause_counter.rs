//! BFC's pause counter (§3.3.2): an array indexed by (ingress port, `upstreamQ`). The upstream queue is paused
//! if and only if its counter is non-zero; a packet that found its queue above the pause threshold increments
//! it on enqueue and decrements it when it leaves the switch. A PAUSE is sent on 0 → 1 and a RESUME on 1 → 0.
//!
//! Each ingress's counters grow on demand to the largest `upstreamQ` seen, so a NIC upstream with one queue per
//! flow and a switch upstream with 32 queues are held alike.

use crate::flow_control::hop_pause;

/// A change of an upstream queue's state to signal: it names the queue (`upstreamQ`).
pub type Signal = hop_pause::Signal<u32>;

/// The pause counters of one switch.
#[derive(Clone, Debug)]
pub struct PauseCounter {
    counts: Vec<Vec<u32>>,
    /// Non-zero counters per ingress port.
    paused: Vec<u32>,
    /// Per ingress port, a bit per counter set while it is non-zero, `counts[port].len().div_ceil(64)` words:
    /// the refresh's bitmap, kept as the counters change rather than built from a scan of them at every
    /// refresh.
    bits: Vec<Vec<u64>>,
}

impl PauseCounter {
    /// Counters for `ports` ingress ports.
    pub fn new(ports: usize) -> PauseCounter {
        PauseCounter {
            counts: vec![Vec::new(); ports],
            paused: vec![0; ports],
            bits: vec![Vec::new(); ports],
        }
    }

    /// A packet from (`port`, `queue`) found its queue above the threshold. Returns the PAUSE to send on 0 → 1.
    pub fn increment(&mut self, port: u16, queue: u32) -> Option<Signal> {
        let counts = &mut self.counts[port as usize];
        let bits = &mut self.bits[port as usize];
        if counts.len() <= queue as usize {
            counts.resize(queue as usize + 1, 0);
            bits.resize(counts.len().div_ceil(64), 0);
        }
        let c = &mut counts[queue as usize];
        *c += 1;
        (*c == 1).then(|| {
            bits[queue as usize / 64] |= 1 << (queue % 64);
            self.paused[port as usize] += 1;
            Signal::Pause {
                port,
                target: queue,
            }
        })
    }

    /// A packet that incremented (`port`, `queue`) left the switch. Returns the RESUME to send on 1 → 0.
    pub fn decrement(&mut self, port: u16, queue: u32) -> Option<Signal> {
        let c = &mut self.counts[port as usize][queue as usize];
        debug_assert!(*c > 0, "pause counter underflow at ({port}, {queue})");
        *c -= 1;
        (*c == 0).then(|| {
            self.bits[port as usize][queue as usize / 64] &= !(1 << (queue % 64));
            self.paused[port as usize] -= 1;
            Signal::Resume {
                port,
                target: queue,
            }
        })
    }

    /// The counter of (`port`, `queue`).
    pub fn get(&self, port: u16, queue: u32) -> u32 {
        self.counts[port as usize]
            .get(queue as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Upstream queues of ingress `port` that should be paused now, as a bitmap (the periodic refresh).
    pub fn bitmap(&self, port: u16) -> &[u64] {
        &self.bits[port as usize]
    }

    /// How many upstream queues of ingress `port` are paused.
    pub fn paused_at(&self, port: u16) -> u32 {
        self.paused[port as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_on_first_resume_on_last() {
        let mut pc = PauseCounter::new(2);
        assert_eq!(
            pc.increment(1, 7),
            Some(Signal::Pause { port: 1, target: 7 })
        );
        assert_eq!(pc.increment(1, 7), None);
        assert_eq!(
            pc.increment(0, 7),
            Some(Signal::Pause { port: 0, target: 7 })
        );
        assert_eq!(pc.paused_at(1), 1);
        assert_eq!(pc.bitmap(1), [1 << 7]);
        assert_eq!(pc.decrement(1, 7), None);
        assert_eq!(pc.get(1, 7), 1);
        assert_eq!(
            pc.decrement(1, 7),
            Some(Signal::Resume { port: 1, target: 7 })
        );
        assert_eq!(pc.paused_at(1), 0);
        assert_eq!(pc.bitmap(1), [0]);
        assert_eq!(pc.get(0, 7), 1, "ingresses are counted apart");
    }

    #[test]
    fn nic_queues_grow_the_counter() {
        let mut pc = PauseCounter::new(1);
        pc.increment(0, 130);
        assert_eq!(pc.bitmap(0), [0, 0, 1 << 2]);
    }

    #[test]
    fn bitmap_follows_the_counters() {
        let mut pc = PauseCounter::new(2);
        let mut rng = 12345u64;
        let mut held: Vec<(u16, u32)> = Vec::new();
        for _ in 0..5000 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (port, queue) = ((rng >> 60) as u16 % 2, (rng >> 33) as u32 % 150);
            if rng >> 32 & 1 == 0 || held.is_empty() {
                pc.increment(port, queue);
                held.push((port, queue));
            } else {
                let (port, queue) = held.swap_remove((rng >> 40) as usize % held.len());
                pc.decrement(port, queue);
            }
            for port in 0..2 {
                let counts = &pc.counts[port as usize];
                let mut scan = vec![0u64; counts.len().div_ceil(64)];
                for (q, _) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                    scan[q / 64] |= 1 << (q % 64);
                }
                assert_eq!(pc.bitmap(port), scan);
            }
        }
    }
}
