//! Which queue of a switch port serves which traffic class: an optional strict-priority control queue first,
//! then each class's data queues in order (BFC App. A.3: classes own disjoint queues), one priority level per
//! class.

use std::ops::Range;

/// The queues of every switch port: `data_base` control queues (0 or 1), then `classes` classes of `per_class`
/// data queues each. A class beyond the last is served as the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLayout {
    /// The index of the first data queue (1 with a control queue, 0 without).
    pub data_base: usize,
    /// Data queues of each class.
    pub per_class: usize,
    /// Classes (strict-priority levels among the data queues), at least 1.
    pub classes: usize,
}

impl QueueLayout {
    /// Queues per port, the control queue included.
    pub fn total(&self) -> usize {
        self.data_base + self.per_class * self.classes
    }

    /// The class a packet of class `class` is served as: the last one for a class beyond it.
    #[inline]
    pub fn class_of(&self, class: u8) -> u8 {
        class.min(self.classes as u8 - 1)
    }

    /// The first data queue of class `class` (not bounded to the last class).
    pub fn data_queue(&self, class: u8) -> usize {
        self.data_base + class as usize * self.per_class
    }

    /// The data queues of class `class`.
    #[inline]
    pub fn class_queues(&self, class: u8) -> Range<u16> {
        let class = (class as u64).min(self.classes as u64 - 1);
        let first = self.data_base as u64 + class * self.per_class as u64;
        first as u16..(first + self.per_class as u64) as u16
    }

    /// The priority level of class `class`'s data queues: one level per class, after the control queue's.
    #[inline]
    pub fn class_level(&self, class: u8) -> usize {
        self.data_base + (class as usize).min(self.classes - 1)
    }

    /// The queue a packet of class `class` and 5-tuple hash `hash` joins: its class's queues are shared by
    /// hashing, i.e. stochastic fair queuing (McKenney 1990) when a class has several queues.
    #[inline]
    pub fn data_queue_for(&self, class: u8, hash: u32) -> usize {
        let class = (class as u64).min(self.classes as u64 - 1);
        let per_class = self.per_class as u64;
        let within = (hash as u64 * per_class) >> 32;
        self.data_base + (class * per_class + within) as usize
    }

    /// The priority level of each queue, control queue first (for [`super::PortQueues::new`]).
    pub fn levels(&self) -> Vec<u8> {
        (0..self.total())
            .map(|q| {
                if q < self.data_base {
                    0
                } else {
                    (self.data_base + (q - self.data_base) / self.per_class) as u8
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_own_disjoint_queues_after_the_control_queue() {
        let l = QueueLayout {
            data_base: 1,
            per_class: 4,
            classes: 2,
        };
        assert_eq!(l.total(), 9);
        assert_eq!(l.class_queues(0), 1..5);
        assert_eq!(l.class_queues(1), 5..9);
        assert_eq!(
            l.class_queues(7),
            5..9,
            "a class beyond the last is the last"
        );
        assert_eq!(l.levels(), vec![0, 1, 1, 1, 1, 2, 2, 2, 2]);
        assert_eq!(l.data_queue_for(1, 0), 5);
        assert_eq!(l.data_queue_for(1, u32::MAX), 8);
        assert_eq!(l.class_level(3), 2);
    }
}
