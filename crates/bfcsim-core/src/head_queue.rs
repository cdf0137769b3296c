//! A FIFO whose head entry is held inline, beside its owner's other fields.
//!
//! A switch queue's entries are read at the head once per packet served, and each `VecDeque` buffer is a
//! cache line of its own: with thousands of queues, the buffer is usually cold by the queue's next turn, and
//! that read sat on the path of everything the scheduler does next. Held inline, the head is in the line its
//! owner is read from anyway; refilling it from the buffer after a pop still reads the buffer, but nothing
//! waits on that load, and a queue of one entry never touches its buffer at all. (Wires do not use it: a
//! wire's packets are a list through the packets themselves, which needs no buffer at all.)

use std::collections::VecDeque;

/// An entry type with one value that no real entry takes, marking an empty head.
pub trait Vacant: Copy {
    /// The value no real entry takes.
    const VACANT: Self;
    /// True for [`Vacant::VACANT`].
    fn is_vacant(&self) -> bool;
}

/// A FIFO of `T`s, its head held inline.
#[derive(Clone, Debug)]
pub struct HeadQueue<T> {
    /// The first entry, [`Vacant::VACANT`] when the queue is empty.
    head: T,
    /// The entries behind the head.
    rest: VecDeque<T>,
}

impl<T: Vacant> Default for HeadQueue<T> {
    fn default() -> Self {
        HeadQueue {
            head: T::VACANT,
            rest: VecDeque::new(),
        }
    }
}

impl<T: Vacant> HeadQueue<T> {
    /// True when the queue holds no entry.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.head.is_vacant()
    }

    /// The number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        !self.is_empty() as usize + self.rest.len()
    }

    /// The first entry.
    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        (!self.is_empty()).then_some(&self.head)
    }

    /// The last entry.
    #[inline]
    pub fn back(&self) -> Option<&T> {
        self.rest.back().or(self.front())
    }

    /// Appends `e`, which must not be [`Vacant::VACANT`].
    #[inline(always)]
    pub fn push_back(&mut self, e: T) {
        debug_assert!(!e.is_vacant(), "a vacant entry pushed");
        if self.is_empty() {
            self.head = e;
        } else {
            self.rest.push_back(e);
        }
    }

    /// Removes and returns the first entry.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let e = self.head;
        self.head = self.rest.pop_front().unwrap_or(T::VACANT);
        Some(e)
    }

    /// The entries, first to last.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.front().into_iter().chain(&self.rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl Vacant for u32 {
        const VACANT: u32 = 0;
        fn is_vacant(&self) -> bool {
            *self == 0
        }
    }

    proptest! {
        /// Any sequence of pushes and pops behaves as on a `VecDeque`.
        #[test]
        fn behaves_as_a_vecdeque(ops in proptest::collection::vec(proptest::option::of(1u32..1000), 0..200)) {
            let mut q = HeadQueue::<u32>::default();
            let mut model = VecDeque::new();
            for op in ops {
                match op {
                    Some(e) => {
                        q.push_back(e);
                        model.push_back(e);
                    }
                    None => prop_assert_eq!(q.pop_front(), model.pop_front()),
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.is_empty(), model.is_empty());
                prop_assert_eq!(q.front(), model.front());
                prop_assert_eq!(q.back(), model.back());
                prop_assert!(q.iter().eq(model.iter()));
            }
        }
    }
}
