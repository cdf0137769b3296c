//! A level's ring of ready queues in round order (the DRR active list of Shreedhar & Varghese).
//!
//! A ring never holds more than its level's queues, each once, so its capacity is fixed when the port is built
//! and it never grows. Without `VecDeque`'s growth path, every operation is a few inlined instructions: a
//! queue joins its ring at most packets of a lightly loaded BFC port, where `VecDeque::push_back` is an
//! out-of-line call.

/// Queues a ring holds in its own line ([`Slots::Inline`]): BFC's 32 per port among them.
const INLINE: usize = 52;

/// The ready queues of one priority level, front first: one cache line with its slots for a level of up to
/// [`INLINE`] queues, where a ring operation touched the ring's header and its slots on two (which counts on the
/// 1024-host tree, whose busy ports' rings do not stay in a core's L2).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub(super) struct Ring {
    /// The front's slot.
    head: u16,
    len: u16,
    /// As many slots as the level has queues.
    cap: u16,
    slots: Slots,
}

#[derive(Clone, Debug)]
enum Slots {
    /// A level of at most [`INLINE`] queues of a port of at most 256.
    Inline([u8; INLINE]),
    /// A larger level, or a port of more queues than a byte numbers: two bytes a slot, in a line of their own.
    Heap(Box<[u16]>),
}

const _: () = assert!(std::mem::size_of::<Ring>() == 64);

/// `i` taken into `0..cap`, for `i < 2 cap`: a compare, where `%` is a division.
#[inline(always)]
fn wrap(i: usize, cap: usize) -> usize {
    if i >= cap { i - cap } else { i }
}

impl Ring {
    /// An empty ring for a level of `cap` queues (at most 65,535) of a port whose queues are numbered below
    /// `queues`.
    pub(super) fn new(cap: usize, queues: usize) -> Ring {
        assert!(cap <= u16::MAX as usize, "at most 65535 queues in a level");
        Ring {
            head: 0,
            len: 0,
            cap: cap as u16,
            slots: if cap <= INLINE && queues <= 256 {
                Slots::Inline([0; INLINE])
            } else {
                Slots::Heap(vec![0; cap].into_boxed_slice())
            },
        }
    }

    /// The queue in slot `i`.
    #[inline(always)]
    fn get(&self, i: usize) -> usize {
        match &self.slots {
            Slots::Inline(s) => s[i] as usize,
            Slots::Heap(s) => s[i] as usize,
        }
    }

    /// Puts queue `q` in slot `i`.
    #[inline(always)]
    fn set(&mut self, i: usize, q: usize) {
        match &mut self.slots {
            Slots::Inline(s) => {
                debug_assert!(q <= u8::MAX as usize, "queue {q} in a ring of byte slots");
                s[i] = q as u8
            }
            Slots::Heap(s) => s[i] = q as u16,
        }
    }

    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The queue at the front.
    #[inline(always)]
    pub(super) fn front(&self) -> Option<usize> {
        (self.len > 0).then(|| self.get(self.head as usize))
    }

    /// Appends queue `q`, which must not be in the ring.
    #[inline(always)]
    pub(super) fn push_back(&mut self, q: usize) {
        let cap = self.cap as usize;
        debug_assert!((self.len as usize) < cap, "a queue joined its ring twice");
        self.set(wrap(self.head as usize + self.len as usize, cap), q);
        self.len += 1;
    }

    /// Takes the front out, which must be there.
    #[inline(always)]
    pub(super) fn pop_front(&mut self) {
        debug_assert!(self.len > 0, "pop from an empty ring");
        self.head = wrap(self.head as usize + 1, self.cap as usize) as u16;
        self.len -= 1;
    }

    /// Moves the front, which must be there, to the back.
    #[inline(always)]
    pub(super) fn rotate(&mut self) {
        debug_assert!(self.len > 0, "rotation of an empty ring");
        let (cap, head) = (self.cap as usize, self.head as usize);
        // The slot after the back, which is the front's own when the ring is full.
        let front = self.get(head);
        self.set(wrap(head + self.len as usize, cap), front);
        self.head = wrap(head + 1, cap) as u16;
    }

    /// The queues, front first.
    pub(super) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let cap = self.cap as usize;
        (0..self.len as usize).map(move |i| self.get(wrap(self.head as usize + i, cap)))
    }

    /// Takes out the `at`-th queue from the front, keeping the others' order.
    pub(super) fn remove(&mut self, at: usize) {
        let (cap, head, len) = (self.cap as usize, self.head as usize, self.len as usize);
        assert!(at < len, "no {at}-th queue in a ring of {len}");
        for i in at..len - 1 {
            let next = self.get(wrap(head + i + 1, cap));
            self.set(wrap(head + i, cap), next);
        }
        self.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[derive(Clone, Debug)]
    enum Op {
        Push(usize),
        Pop,
        Rotate,
        Remove(usize),
    }

    proptest! {
        /// A ring does what a `VecDeque` of at most its capacity would.
        #[test]
        fn a_ring_is_a_deque(
            cap in 1..12usize,
            heap in proptest::bool::ANY,
            ops in proptest::collection::vec(prop_oneof![
                (0..12usize).prop_map(Op::Push),
                Just(Op::Pop),
                Just(Op::Rotate),
                (0..12usize).prop_map(Op::Remove),
            ], 1..200),
        ) {
            let mut ring = Ring::new(cap, if heap { 300 } else { 12 });
            let mut model = VecDeque::new();
            for op in ops {
                match op {
                    Op::Push(q) if model.len() < cap => {
                        ring.push_back(q);
                        model.push_back(q);
                    }
                    Op::Pop if !model.is_empty() => {
                        ring.pop_front();
                        model.pop_front();
                    }
                    Op::Rotate if !model.is_empty() => {
                        ring.rotate();
                        model.rotate_left(1);
                    }
                    Op::Remove(at) if at < model.len() => {
                        ring.remove(at);
                        model.remove(at);
                    }
                    _ => {}
                }
                prop_assert_eq!(ring.len(), model.len());
                prop_assert_eq!(ring.front(), model.front().copied());
                prop_assert_eq!(ring.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
            }
        }
    }
}
