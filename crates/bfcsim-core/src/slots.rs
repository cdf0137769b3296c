//! A vector of reusable slots: per-flow and per-frame state that comes and goes, indexed by a `u32` that the
//! owner keeps (in a flow record, in a frame's header field) while the state lives.

use std::ops::{Index, IndexMut};

/// Slots holding `T`s; a released slot is reused by the next insertion.
#[derive(Clone, Debug)]
pub struct Slots<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slots<T> {
    /// Stores `item` in a free slot (or a new one) and returns its index.
    pub fn insert(&mut self, item: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = item;
                i
            }
            None => {
                self.items.push(item);
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Stores an item written by `fill` into a free slot's old item (keeping what it allocated, a vector's
    /// buffer say) or into a new default one, and returns its index.
    pub fn insert_with(&mut self, fill: impl FnOnce(&mut T)) -> u32
    where
        T: Default,
    {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.items.push(T::default());
                (self.items.len() - 1) as u32
            }
        };
        fill(&mut self.items[i as usize]);
        i
    }

    /// Marks slot `i` free; its item stays until the slot is reused.
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }
}

impl<T> Index<usize> for Slots<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.items[i]
    }
}

impl<T> IndexMut<usize> for Slots<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[i]
    }
}

/// Implements `Add` for a struct of counters, field by field (two shards' or two switches' counts together).
#[macro_export]
macro_rules! add_fields {
    ($t:ty { $($f:ident),* $(,)? }) => {
        impl std::ops::Add for $t {
            type Output = $t;
            fn add(self, o: $t) -> $t {
                Self { $($f: self.$f + o.$f),* }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_slots_are_reused() {
        let mut s = Slots::default();
        let (a, b) = (s.insert("a"), s.insert("b"));
        s.release(a);
        let c = s.insert("c");
        assert_eq!((a, b, c), (0, 1, 0));
        assert_eq!((s[0], s[1]), ("c", "b"));
        s.release(b);
        assert_eq!(s.insert("d"), 1);
    }
}
