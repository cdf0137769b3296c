//! Per-flow retransmission timers without one heap entry per re-arm.
//!
//! Most deadlines are `now + rto_min`, so they arrive in nondecreasing order and go in a FIFO (O(1) push and
//! pop); the rest (backed-off or RTT-derived timeouts) go in a small heap. A flow keeps at most one entry:
//! re-arming only moves the flow's own deadline, and a stale entry that fires early is pushed again at the new
//! deadline (lazy cancellation). The event queue holds one wake-up for the earliest entry.
//!
//! Entries due at one instant come out ordered by (deadline, flow id), not by how they were stored: which
//! entries exist does not depend on how a run is split across threads, but the FIFO/heap split does, and the
//! order timers fire in must not.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use bfcsim_core::{FlowId, Time};

/// Pending timer entries, earliest first.
#[derive(Default)]
pub struct TimerQueue {
    fifo: VecDeque<(Time, FlowId)>,
    heap: BinaryHeap<Reverse<(Time, u32)>>,
    /// Entries already due, sorted by (deadline, flow id) descending: `pop_due` takes from the end.
    due: Vec<(Time, u32)>,
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
        let d = self.due.last().map(|e| e.0);
        [f, h, d].into_iter().flatten().min()
    }

    /// Removes and returns an entry due at or before `now`, the earliest first and the smallest flow id on a
    /// tie.
    pub fn pop_due(&mut self, now: Time) -> Option<FlowId> {
        if self.due.is_empty() {
            while let Some(&(t, f)) = self.fifo.front().filter(|e| e.0 <= now) {
                self.due.push((t, f.0));
                self.fifo.pop_front();
            }
            while let Some(&Reverse(e)) = self.heap.peek().filter(|e| e.0.0 <= now) {
                self.due.push(e);
                self.heap.pop();
            }
            self.due.sort_unstable_by(|a, b| b.cmp(a));
        }
        self.due.pop().map(|(_, f)| FlowId(f))
    }

    /// Entries pending.
    pub fn len(&self) -> usize {
        self.fifo.len() + self.heap.len() + self.due.len()
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

    #[test]
    fn simultaneous_entries_pop_by_flow_id_wherever_they_are_stored() {
        let mut q = TimerQueue::default();
        q.push(Time(10), FlowId(7));
        q.push(Time(20), FlowId(1));
        q.push(Time(10), FlowId(5)); // behind a later deadline: goes to the heap
        q.push(Time(20), FlowId(0));
        let got: Vec<u32> = std::iter::from_fn(|| q.pop_due(Time(20)).map(|f| f.0)).collect();
        assert_eq!(got, vec![5, 7, 0, 1]);
    }
}
