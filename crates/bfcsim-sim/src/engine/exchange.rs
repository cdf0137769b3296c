//! Packets between shards: a packet leaving over a link whose far end another shard owns travels as a
//! [`Parcel`], gathered in a [`Mail`] per destination shard and exchanged at each window's end ([`crate::sim`]).

use super::*;

/// A packet leaving its shard over a link whose far end another shard owns: the packet itself, one line. The
/// two fields that mean something only on a wire ([`Packet::wire_next`] and [`Packet::stamp`], which the
/// receiving shard's wire sets anew) carry the transmitting port and when the packet reaches the far end. Kept
/// beside the 64-byte-aligned packet, those two made a parcel two lines, each one copied into the mail, read by
/// the other core and copied into its slab.
#[derive(Clone, Copy)]
pub(crate) struct Parcel(pub(super) Packet);

impl Parcel {
    fn new(mut packet: Packet, port: PortId, arrive: Time) -> Parcel {
        packet.wire_next = PacketId(port.0);
        packet.stamp = arrive;
        Parcel(packet)
    }

    /// When it reaches the far end.
    pub(crate) fn arrive(&self) -> Time {
        self.0.stamp
    }

    /// The transmitting port (the far end is its peer), when it reaches the far end, and the packet.
    fn open(self) -> (PortId, Time, Packet) {
        (PortId(self.0.wire_next.0), self.0.stamp, self.0)
    }
}

/// Parcels for one shard, with the side-table state that travels with them: a BFC refresh frame's bitmap of
/// paused queues (its words), under INT each packet's stack (its stored hops), and under a controller that
/// asks for them each packet's other stamps (one per parcel). Each vector holds its items in the order of the
/// parcels they go with; `counts` has, for every parcel with such state, the number
/// of words of its bitmap or the hops pushed on its stack ([`IntStack::pack_into`]), which tells the reader
/// where the next parcel's items start. A parcel once carried its own vector or boxed stack, allocated in one
/// thread and freed in the other (under two threads, allocation was a tenth of an HPCC run's time), and later
/// the offsets of its items, which a second line per parcel carried.
#[derive(Default)]
pub(crate) struct Mail {
    pub(super) parcels: Vec<Parcel>,
    pub(super) counts: Vec<u32>,
    pub(super) hops: Vec<IntHop>,
    pub(super) words: Vec<u64>,
    pub(super) stamps: Vec<PacketStamps>,
    /// Notices for flows waiting at the shard's hosts ([`super::waiting`]).
    pub(super) notices: Vec<Notice>,
}

impl Mail {
    /// Moves everything in `from` to the end of this mail (by swapping the vectors when this one is empty, so
    /// that their capacities circulate).
    pub(crate) fn take_all(&mut self, from: &mut Mail) {
        take_all(&mut from.parcels, &mut self.parcels);
        take_all(&mut from.counts, &mut self.counts);
        take_all(&mut from.hops, &mut self.hops);
        take_all(&mut from.words, &mut self.words);
        take_all(&mut from.stamps, &mut self.stamps);
        take_all(&mut from.notices, &mut self.notices);
    }

    /// The parcels, in the order they were posted.
    pub(crate) fn parcels(&self) -> &[Parcel] {
        &self.parcels
    }

    /// How many parcels and notices it carries.
    pub(crate) fn len(&self) -> usize {
        self.parcels.len() + self.notices.len()
    }

    /// When the first of its parcels and notices is due, `Time::MAX` for none.
    pub(crate) fn earliest(&self) -> Time {
        let parcels = self.parcels.iter().map(Parcel::arrive);
        parcels
            .chain(self.notices.iter().map(|n| n.at))
            .min()
            .unwrap_or(Time::MAX)
    }
}

/// Moves every element of `from` to the end of `into`, by swapping the two when `into` is empty.
pub(crate) fn take_all<T>(from: &mut Vec<T>, into: &mut Vec<T>) {
    if into.is_empty() {
        std::mem::swap(from, into);
    } else {
        into.append(from);
    }
}

/// `Wire::remote` for a wire whose far end this shard owns.
pub(super) const LOCAL: u8 = u8::MAX;

/// `Wire::exit` of every wire while flows are being explained ([`super::explain`]).
pub(super) const OBSERVED: u8 = u8::MAX - 1;

impl Fabric {
    /// Moves the parcels for shard `to` posted since the last call into `into` (empty: by swapping the
    /// vectors, so that parcels are not copied and the two vectors' capacities circulate).
    pub(crate) fn take_outbox(&mut self, to: usize, into: &mut Mail) {
        into.take_all(&mut self.outbox[to]);
    }

    /// Puts parcels from other shards on their wires' far ends, to be delivered when due, with their side-table
    /// state (read in the order [`Fabric::post`] wrote it).
    pub(crate) fn accept(&mut self, mail: &mut Mail) {
        let Mail {
            parcels,
            counts,
            hops,
            words,
            stamps,
            notices,
        } = mail;
        if !notices.is_empty() {
            self.accept_notices(notices);
        }
        let (mut counts, mut hops, mut words) = (counts.iter(), &hops[..], &words[..]);
        let mut stamps = stamps.iter();
        // The number of a parcel's bitmap words or of its stack's pushed hops.
        let mut count = || {
            *counts
                .next()
                .expect("a count for each parcel with side-table state")
        };
        for parcel in parcels.drain(..) {
            let (port, arrive, packet) = parcel.open();
            let id = self.packets.alloc(packet);
            if packet.flags.has(Flags::WORDS) {
                let (map, rest) = words.split_at(count() as usize);
                words = rest;
                self.packets.get_mut(id).seq = self.hop.store_map(map) as u64;
            } else if self.cc_nic.stamps() {
                hops = &hops[self.int_stacks.get_mut(id).unpack(hops, count() as u8)..];
            }
            if self.cc_nic.stamps_packets() {
                let s = *stamps.next().expect("stamps for each parcel");
                self.stamps.set(id, s);
            }
            self.put_on_wire(port, arrive, id);
        }
        debug_assert!(
            counts.next().is_none()
                && hops.is_empty()
                && words.is_empty()
                && stamps.next().is_none(),
            "every item of the mail read"
        );
        mail.counts.clear();
        mail.hops.clear();
        mail.words.clear();
        mail.stamps.clear();
    }

    /// Hands `pkt`, just sent on `port`, to the shard owning the far end, with its side-table state.
    #[cold]
    pub(super) fn post(&mut self, port: PortId, arrive: Time, pkt: PacketId) {
        let packet = *self.packets.get(pkt);
        self.wires[port.idx()].sending_flow = if packet.kind == PacketKind::DATA {
            packet.flow.0
        } else {
            u32::MAX
        };
        let mail = &mut self.outbox[self.wires[port.idx()].remote as usize];
        if packet.flags.has(Flags::WORDS) {
            let map = self.hop.map(packet.seq as u32);
            mail.words.extend_from_slice(map);
            mail.counts.push(map.len() as u32);
            self.hop.release_map(packet.seq as u32);
        } else if self.cc_nic.stamps() {
            let stack = self.int_stacks.get(pkt);
            mail.counts.push(stack.pack_into(&mut mail.hops) as u32);
        }
        if self.cc_nic.stamps_packets() {
            mail.stamps.push(self.stamps.get(pkt));
        }
        self.packets.free(pkt);
        mail.parcels.push(Parcel::new(packet, port, arrive));
    }
}
