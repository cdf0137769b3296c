//! What a packet carries for the delay- and digest-based congestion controllers besides HPCC's INT stack
//! ([`crate::int`]), in a side table indexed by packet slot so that [`crate::packet::Packet`] does not grow for
//! the schemes that read none of it:
//!
//! - the **hop count** of a data packet's path, counted at each switch egress it leaves and echoed in its ACK
//!   (Swift §3.5 scales its fabric target delay with the hops; real NICs read it off the IP TTL);
//! - the **remote endpoint delay**: from a data packet's arrival at its receiver's NIC to the start of its
//!   ACK's transmission there, which the ACK carries back (Swift §3.3: the endpoint delay is what the remote
//!   host's NIC and stack add, separated from the fabric delay by NIC timestamps);
//! - **PINT's digest** (Ben Basat et al., SIGCOMM 2020, §4; HPCC's ns-3 `CC_MODE 10`): the largest encoded
//!   utilization of the egress ports the data packet left, echoed in its ACK ([`pint`]).
//!
//! The send and receive timestamps themselves need no field: a data packet's `sent_at` is its NIC transmit
//! time, echoed in its ACK, whose arrival time is the sender NIC's receive time.

use bfcsim_core::{PacketId, Time};

pub mod pint;

/// One packet's stamps (see the module's doc). For a data packet: the hops so far, the digest so far, and
/// nothing in `remote`; for an ACK: its data packet's hops and digest, and the remote endpoint delay (before
/// the ACK leaves the remote NIC: the time its data packet arrived).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketStamps {
    /// Switch egresses the data packet left.
    pub hops: u8,
    /// PINT's digest: the largest encoded utilization along the path ([`pint::Pint::encode`]).
    pub digest: u16,
    /// For an ACK: the delay of its data packet at the remote NIC, from arrival to the ACK's transmission.
    pub remote: Time,
    /// The entropy value the sender chose for the data packet (`nic.paths`), echoed in its ACK so that REPS
    /// learns which paths were good.
    pub entropy: u16,
}

/// The stamps of every packet slot. Empty, and never grown, unless the running controller asks for stamps.
#[derive(Default)]
pub struct Stamps(Vec<PacketStamps>);

impl Stamps {
    /// The stamps of packet `pkt` (none if it never had any).
    #[inline]
    pub fn get(&self, pkt: PacketId) -> PacketStamps {
        self.0.get(pkt.idx()).copied().unwrap_or_default()
    }

    /// The stamps of packet `pkt`, for writing.
    #[inline]
    pub fn get_mut(&mut self, pkt: PacketId) -> &mut PacketStamps {
        let i = pkt.idx();
        if i >= self.0.len() {
            self.0.resize(i + 1, PacketStamps::default());
        }
        &mut self.0[i]
    }

    /// Packet `pkt` carries `stamps` (a reply built for a data packet, or a packet arriving from another shard).
    #[inline]
    pub fn set(&mut self, pkt: PacketId, stamps: PacketStamps) {
        *self.get_mut(pkt) = stamps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_never_stamped_reads_as_none_and_writes_grow_the_table() {
        let mut s = Stamps::default();
        assert_eq!(s.get(PacketId(7)), PacketStamps::default());
        s.get_mut(PacketId(7)).hops += 2;
        s.set(
            PacketId(3),
            PacketStamps {
                hops: 1,
                digest: 9,
                remote: Time::from_ns(5),
                entropy: 42,
            },
        );
        assert_eq!(s.get(PacketId(7)).hops, 2);
        assert_eq!(s.get(PacketId(3)).digest, 9);
        assert_eq!(s.get(PacketId(3)).entropy, 42);
        assert_eq!(s.get(PacketId(4)), PacketStamps::default());
    }
}
