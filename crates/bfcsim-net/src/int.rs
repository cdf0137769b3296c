//! In-band network telemetry (INT) records, as HPCC uses them (Li et al., SIGCOMM 2019, §3.2 and §4; HPCC's
//! ns-3 `int-header.h`): every switch egress a data packet leaves appends one [`IntHop`], the receiver copies
//! the packet's [`IntStack`] into its ACK, and the sender's controller compares it with the stack of the
//! previous ACK, hop by hop.
//!
//! Where the engine stamps a hop (HPCC's ns-3 `SwitchNode::SwitchNotifyDequeue`): when the data packet is
//! dequeued at a switch egress port to start its transmission, with
//! - `ts`: the dequeue time;
//! - `tx_bytes`: the bytes that port has transmitted so far, every packet and every queue, *excluding* this
//!   packet (ns-3 adds the packet's size to `m_txBytes` after stamping);
//! - `qlen`: the bytes still queued at that port, all queues together, after this packet left the queue;
//! - `rate`: the port's link rate.
//!
//! Hosts push nothing. The values are exact: ns-3 packs them into 64 bits per hop (24-bit nanosecond
//! timestamps, byte counts in units of 128·`INT_MULTI` B, queue lengths in units of 80·`INT_MULTI` B); we keep
//! full precision, which only removes quantization noise.

use bfcsim_core::{PacketId, Rate, Time};

/// The most hops a stack records (ns-3 `IntHeader::maxHop`).
pub const MAX_HOPS: usize = 5;

/// One switch egress's record, stamped as the packet starts transmission there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet was dequeued at this egress.
    pub ts: Time,
    /// Cumulative bytes the egress had transmitted before this packet.
    pub tx_bytes: u64,
    /// Bytes queued at the egress (all queues) as the packet left.
    pub qlen: u64,
    /// The egress link's rate.
    pub rate: Rate,
}

impl IntHop {
    /// Placeholder for the unused slots of a stack; never visible through the stack's API.
    const UNUSED: IntHop = IntHop {
        ts: Time::ZERO,
        tx_bytes: 0,
        qlen: 0,
        rate: Rate(0),
    };
}

/// The INT records a packet carries: up to [`MAX_HOPS`] hops in path order. Fixed capacity and `Copy`, so
/// packets stay allocation-free. The slots past the stored hops hold whatever they held (a stack is cleared
/// and copied by its stored hops alone); nothing reads them, and equality and `Debug` look at the stored hops
/// only.
///
/// Laid out in whole cache lines, the count first: a stack of one hop is one line, of up to three (a path
/// through three switches, the most common in a fat tree) two, where the count at the end of an unaligned
/// stack made most stamps touch a line of their own besides the hop's.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct IntStack {
    /// Hops pushed, including any beyond the capacity (saturating).
    pushed: u8,
    hops: [IntHop; MAX_HOPS],
}

const _: () = assert!(std::mem::size_of::<IntStack>() == 192);

impl Default for IntStack {
    fn default() -> Self {
        IntStack::EMPTY
    }
}

impl PartialEq for IntStack {
    fn eq(&self, other: &IntStack) -> bool {
        self.pushed == other.pushed && self.hops() == other.hops()
    }
}

impl Eq for IntStack {}

impl std::fmt::Debug for IntStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntStack")
            .field("hops", &self.hops())
            .field("pushed", &self.pushed)
            .finish()
    }
}

impl IntStack {
    /// A stack with no hops (what packets carry when the scheme uses no INT).
    pub const EMPTY: IntStack = IntStack {
        pushed: 0,
        hops: [IntHop::UNUSED; MAX_HOPS],
    };

    /// Asks for the stack's first two lines (its count and the first three hops), for a stamp a little later
    /// (the next packet of a queue, one serialization ahead). Reads nothing: which hop is next is not known
    /// until the line is in.
    #[inline(always)]
    pub fn prefetch(&self) {
        bfcsim_core::hint::prefetch(self);
        bfcsim_core::hint::prefetch(&self.hops[2]);
    }

    /// Removes every hop (a packet's stack reused for a new packet).
    #[inline]
    pub fn clear(&mut self) {
        self.pushed = 0;
    }

    /// Makes this stack a copy of `other` (the receiver echoing a data packet's stack in its ACK), copying
    /// the stored hops only.
    #[inline]
    pub fn copy_from(&mut self, other: &IntStack) {
        self.unpack(other.hops(), other.pushed);
    }

    /// Appends the stored hops to `out` and returns the count of hops pushed, which with them is the whole
    /// stack ([`IntStack::unpack`]): a stack crossing to another thread travels as its hops alone, a third of
    /// its size on a path of two switches.
    #[inline]
    pub fn pack_into(&self, out: &mut Vec<IntHop>) -> u8 {
        out.extend_from_slice(self.hops());
        self.pushed
    }

    /// Makes this stack the one [`IntStack::pack_into`] packed, from the count it returned and the packed
    /// hops (`hops` starts where they start); returns how many of `hops` were its own (the stored ones), so that
    /// a reader of several packed stacks finds where the next one starts.
    #[inline]
    pub fn unpack(&mut self, hops: &[IntHop], pushed: u8) -> usize {
        let n = (pushed as usize).min(MAX_HOPS);
        self.hops[..n].copy_from_slice(&hops[..n]);
        self.pushed = pushed;
        n
    }

    /// Appends a hop. Past [`MAX_HOPS`] the hop is not stored and the stack is marked as overflowed
    /// ([`IntStack::overflowed`]); returns whether the hop was stored.
    #[inline]
    pub fn push(&mut self, hop: IntHop) -> bool {
        let i = self.pushed as usize;
        self.pushed = self.pushed.saturating_add(1);
        if i < MAX_HOPS {
            self.hops[i] = hop;
            true
        } else {
            false
        }
    }

    /// Number of stored hops.
    #[inline]
    pub fn len(&self) -> usize {
        (self.pushed as usize).min(MAX_HOPS)
    }

    /// No hop recorded.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// More hops were pushed than fit. HPCC's ns-3 then ignores the whole record (`UpdateRateHp` only acts
    /// when `nhop <= maxHop`), and so does bfcsim's HPCC controller.
    #[inline]
    pub fn overflowed(&self) -> bool {
        self.pushed as usize > MAX_HOPS
    }

    /// The stored hops, in path order.
    #[inline]
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.len()]
    }

    /// Iterates over the stored hops in path order.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, IntHop> {
        self.hops().iter()
    }
}

impl<'a> IntoIterator for &'a IntStack {
    type Item = &'a IntHop;
    type IntoIter = std::slice::Iter<'a, IntHop>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The INT stack of every packet slot: a side table indexed by [`PacketId`], so that [`crate::packet::Packet`]
/// does not grow for the schemes that carry no telemetry. Empty, and never grown, unless switches stamp.
#[derive(Default)]
pub struct IntStacks(Vec<IntStack>);

impl IntStacks {
    /// The stack of packet `pkt` (empty if it never had one).
    #[inline]
    pub fn get(&self, pkt: PacketId) -> &IntStack {
        self.0.get(pkt.idx()).unwrap_or(&IntStack::EMPTY)
    }

    /// The stack of packet `pkt`, for writing.
    #[inline]
    pub fn get_mut(&mut self, pkt: PacketId) -> &mut IntStack {
        let i = pkt.idx();
        if i >= self.0.len() {
            self.0.resize(i + 1, IntStack::EMPTY);
        }
        &mut self.0[i]
    }

    /// Appends `hop` to the stack of packet `pkt`, which has one (it was cleared as the packet was sent).
    #[inline]
    pub fn push(&mut self, pkt: PacketId, hop: IntHop) {
        self.0[pkt.idx()].push(hop);
    }

    /// Asks for packet `pkt`'s stack ahead of its stamp, echo or reading, if it has one.
    #[inline(always)]
    pub fn prefetch(&self, pkt: PacketId) {
        if let Some(stack) = self.0.get(pkt.idx()) {
            stack.prefetch();
        }
    }

    /// Makes reply `reply`'s stack a copy of data packet `data`'s (the receiver's echo, HPCC ns-3
    /// `ReceiveUdp`). The reply may have taken the data packet's slot, freed as it was received: its stack is
    /// then already in place.
    pub fn echo(&mut self, data: PacketId, reply: PacketId) {
        self.get_mut(reply); // grows the table to the reply's slot; the data packet's is there
        let (data, reply) = (data.idx(), reply.idx());
        if data < reply {
            let (low, high) = self.0.split_at_mut(reply);
            high[0].copy_from(&low[data]);
        } else if data > reply {
            let (low, high) = self.0.split_at_mut(data);
            low[reply].copy_from(&high[0]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(i: u64) -> IntHop {
        IntHop {
            ts: Time::from_ns(i),
            tx_bytes: 1000 * i,
            qlen: i,
            rate: Rate::gbps(100),
        }
    }

    #[test]
    fn a_cleared_or_copied_stack_is_its_stored_hops() {
        let mut used = IntStack::EMPTY;
        for i in 1..=4 {
            used.push(hop(i));
        }
        used.clear();
        assert_eq!(used, IntStack::EMPTY, "the stale hops are not part of it");
        used.push(hop(9));
        let mut fresh = IntStack::EMPTY;
        fresh.push(hop(9));
        assert_eq!(used, fresh);
        let mut ack = IntStack::EMPTY;
        for i in 1..=3 {
            ack.push(hop(i));
        }
        ack.copy_from(&fresh);
        assert_eq!(ack, fresh);
        assert_eq!(ack.hops(), &[hop(9)]);
        let mut six = IntStack::EMPTY;
        (0..6).for_each(|i| {
            six.push(hop(i));
        });
        ack.copy_from(&six);
        assert!(ack.overflowed());
        assert_eq!(ack, six);
    }

    #[test]
    fn a_packed_stack_unpacks_to_itself() {
        let mut packed = Vec::new();
        let stacks: Vec<IntStack> = [0, 2, 6]
            .iter()
            .map(|&n| {
                let mut s = IntStack::EMPTY;
                (0..n).for_each(|i| {
                    s.push(hop(i));
                });
                s
            })
            .collect();
        let counts: Vec<(usize, u8)> = stacks
            .iter()
            .map(|s| (packed.len(), s.pack_into(&mut packed)))
            .collect();
        assert_eq!(packed.len(), 2 + MAX_HOPS, "only the stored hops travel");
        for (s, &(first, pushed)) in stacks.iter().zip(&counts) {
            let mut out = IntStack::EMPTY;
            (0..4).for_each(|i| {
                out.push(hop(10 + i));
            });
            out.unpack(&packed[first..], pushed);
            assert_eq!(&out, s);
            assert_eq!(out.overflowed(), s.overflowed());
        }
    }

    #[test]
    fn push_and_iterate_in_path_order() {
        let mut s = IntStack::default();
        assert!(s.is_empty());
        assert_eq!(s.len(), 0);
        assert!(s.push(hop(1)));
        assert!(s.push(hop(2)));
        assert_eq!(s.len(), 2);
        let ts: Vec<Time> = s.iter().map(|h| h.ts).collect();
        assert_eq!(ts, vec![Time::from_ns(1), Time::from_ns(2)]);
        assert_eq!((&s).into_iter().count(), 2);
        assert!(!s.overflowed());
        // Copy: the ACK keeps its own stack.
        let copy = s;
        s.push(hop(3));
        assert_eq!(copy.len(), 2);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn sixth_hop_overflows() {
        let mut s = IntStack::EMPTY;
        for i in 0..MAX_HOPS as u64 {
            assert!(s.push(hop(i)));
        }
        assert!(!s.overflowed());
        assert!(!s.push(hop(9)));
        assert!(s.overflowed());
        assert_eq!(s.len(), MAX_HOPS);
        assert_eq!(s.hops()[MAX_HOPS - 1], hop(MAX_HOPS as u64 - 1));
    }
}
