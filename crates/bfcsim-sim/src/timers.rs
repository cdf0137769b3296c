//! Per-flow retransmission timers without one heap entry per re-arm (GUIDE §3.6).
//!
//! Most deadlines are `now + rto_min`, so they arrive in nondecreasing order and go in a FIFO (O(1) push and
//! pop); the rest (backed-off or RTT-derived timeouts) go in a small heap. A flow keeps at most one entry:
//! re-arming only moves the flow's own deadline, and a stale entry that fires early is pushed again at the new
//! deadline (lazy cancellation). The event queue holds one wake-up for the earliest entry.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use bfcsim_core::{FlowId, Time};

/// Pending timer entries, earliest first.
#[derive(Default)]
pub struct TimerQueue {
    fifo: VecDeque<(Time, FlowId)>,
    heap: BinaryHeap<Reverse<(Time, u32)>>,
}

impl TimerQueue {
    /// Adds an entry.
    pub fn push(&mut self, at: Time, flow: FlowId) {
        match self.fifo.back() {
            Some(&(last, _)) if at < last => self.heap.push(Reverse((at, flow.0))),
            _ => self.fifo.push_back((at, flow)),
        }
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Time> {
        let f = self.fifo.front().map(|e| e.0);
        let h = self.heap.peek().map(|e| e.0.0);
        match (f, h) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes and returns an entry due at or before `now`.
    pub fn pop_due(&mut self, now: Time) -> Option<FlowId> {
        let f = self.fifo.front().map(|e| e.0);
        let h = self.heap.peek().map(|e| e.0.0);
        match (f, h) {
            (Some(a), Some(b)) if b < a => (b <= now).then(|| FlowId(self.heap.pop().unwrap().0.1)),
            (Some(a), _) => (a <= now).then(|| self.fifo.pop_front().unwrap().1),
            (None, Some(b)) => (b <= now).then(|| FlowId(self.heap.pop().unwrap().0.1)),
            (None, None) => None,
        }
    }

    /// Entries pending.
    pub fn len(&self) -> usize {
        self.fifo.len() + self.heap.len()
    }

    /// True when no entry is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_deadline_order_across_fifo_and_heap() {
        let mut q = TimerQueue::default();
        q.push(Time(10), FlowId(1));
        q.push(Time(20), FlowId(2));
        q.push(Time(5), FlowId(3));
        q.push(Time(30), FlowId(4));
        assert_eq!(q.next_deadline(), Some(Time(5)));
        assert_eq!(q.pop_due(Time(4)), None);
        let got: Vec<u32> = std::iter::from_fn(|| q.pop_due(Time(100)).map(|f| f.0)).collect();
        assert_eq!(got, vec![3, 1, 2, 4]);
        assert!(q.is_empty());
    }
}
