//! Links: a port's transmitter and the wire it feeds, serialization and propagation, waking a port to send, and
//! handing a packet that reached the far end to the device there.

use super::*;

/// One port's transmit side and the wire it feeds.
///
/// Two cache lines, laid out by who reads them: the first is the transmitter's (what a packet entering the
/// port's switch reads to find the port and wake it, and what a transmission writes), the second the wire's
/// far end (the packets in flight, read by their deliveries, and where they go). A packet entering a switch
/// finds and wakes its egress port in one line of that port's wire, where it read two on a fabric too large
/// for the cache (the owner and the pending wake-up sat in different lines of an unaligned 104-byte wire).
#[repr(C, align(64))]
pub(super) struct Wire {
    pub(super) owner: Device,
    pub(super) busy_until: Time,
    /// Serialization time of one byte when it is a whole number of picoseconds (0 otherwise).
    pub(super) ps_per_byte: u64,
    /// Propagation delay plus the receiving switch's processing delay.
    pub(super) delay: Time,
    pub(super) tx_bytes: u64,
    pub(super) rate: Rate,
    /// Packets a switch port dequeued to send here, every kind (0 on a host's wire): with the port's drops and
    /// what it holds, the arrivals at its queues. Counted here, in the line the transmission writes anyway,
    /// rather than per transmission on every wire (4 instructions per packet-hop) or in the port.
    pub(super) dequeued: u64,
    /// On a wire to another shard (whose packets leave at once): the flow of the data packet serialized last
    /// (`u32::MAX`: not a data packet), for [`Fabric::port_active_flows`].
    pub(super) sending_flow: u32,
    pub(super) wake_pending: bool,
    /// The shard owning the far end when another one does ([`LOCAL`] otherwise): packets leave as parcels.
    pub(super) remote: u8,
    /// `remote`, or [`OBSERVED`] while flows are being explained: a transmission takes [`Fabric::leave`]'s
    /// way unless this is [`LOCAL`], so that recording costs the loop no test of its own.
    pub(super) exit: u8,
    /// The packets on the wire, a list through the packets themselves ([`Packet::wire_next`], with when each
    /// one's successor arrives in [`Packet::stamp`]): the first to arrive and the last ([`PacketId::NONE`]:
    /// none). A delivery reads the next packet and its arrival in the line of the packet it delivers; with a
    /// `VecDeque` of (arrival, packet) it read the deque's buffer, a line of its own that a transmission had
    /// written a link delay earlier (18 M of CLOS-128's DCTCP's 183 M L1 misses at 2 ms).
    pub(super) first: PacketId,
    pub(super) last: PacketId,
    /// The port at the far end (a packet arrives at that port's node through it).
    pub(super) peer: PortId,
    /// The device at the far end (`peer`'s owner) and, when it is a switch, that switch's index and `peer`'s
    /// local port number there: a delivery reads them here, in the line it reads anyway, instead of in the
    /// peer's wire and its switch port (cache misses per switch hop on a large fabric: the local number alone,
    /// read from the ingress's switch port, missed the L2 1.9 M times in 300 µs of BFC on the 1024-host tree).
    pub(super) far: Device,
    pub(super) far_switch: u32,
    pub(super) far_local: u16,
}

// Each side in its own line.
const _: () =
    assert!(std::mem::offset_of!(Wire, first) == 64 && std::mem::size_of::<Wire>() == 128);

/// What the fingerprint keeps of packet `p` starting on `port` at `now`: a hash of when and where (the time, the
/// port and so the node, the kind) and of what (the flow, the sequence number, the size), the two words multiplied
/// as 128-bit numbers and the product's halves folded (wyhash's `mum`), after keying each word so that neither is
/// zero in practice. The product's high half depends on every bit of both words, and the fold spreads it over
/// the term the wrapping sum adds, at 7 instructions per packet-hop (a SplitMix64 round takes 16, and this runs
/// at every hop of every run). The `seq` of a frame that carries words (BFC's refresh) is the index of its words
/// in the sending shard's side table, which depends on the threads, so it is left out.
#[inline(always)]
pub(super) fn hop_hash(now: Time, port: PortId, p: &Packet) -> u64 {
    let seq = if p.flags.has(Flags::WORDS) { 0 } else { p.seq };
    let when_where = now.0 ^ (u64::from(port.0) << 43) ^ (u64::from(p.kind.code()) << 35);
    let what = seq ^ (u64::from(p.flow.0) << 32) ^ u64::from(p.size).rotate_right(16);
    let product =
        u128::from(when_where ^ 0xA076_1D64_78BD_642F) * u128::from(what ^ 0xE703_7ED1_A0B4_28DB);
    (product as u64) ^ ((product >> 64) as u64)
}

impl Fabric {
    /// Starts serializing `pkt` on `port` now; the packet reaches the far end after its serialization and the
    /// wire's delay (store and forward). Always inlined: out of line, saving and restoring its registers
    /// took a third of its instructions, at every packet-hop.
    #[inline(always)]
    pub(super) fn transmit(&mut self, port: PortId, pkt: PacketId) {
        let p = self.packets.get(pkt);
        let size = p.size;
        self.fingerprint = self.fingerprint.wrapping_add(hop_hash(self.now, port, p));
        let w = &mut self.wires[port.idx()];
        let tx = if w.ps_per_byte != 0 {
            Time(size as u64 * w.ps_per_byte)
        } else {
            w.rate.tx_time(Bytes(size as u64))
        };
        debug_assert!(
            self.now >= w.busy_until,
            "port {port:?} starts a packet at {} while sending until {}",
            self.now,
            w.busy_until
        );
        let end = self.now + tx;
        w.busy_until = end;
        let arrive = end + w.delay;
        w.tx_bytes += size as u64;
        self.counters.hops += 1;
        if w.exit != LOCAL {
            self.leave(port, arrive, pkt);
            return;
        }
        self.put_on_wire(port, arrive, pkt);
    }

    /// [`Fabric::transmit`]'s way for a packet that does not simply go on a wire of this shard
    /// ([`Wire::exit`]): lost if a fabric event takes it ([`super::failures`]), recorded when explaining flows,
    /// then posted to the shard owning the far end, or put on the wire here. Out of line: the test that brings
    /// a packet here is one the loop made anyway.
    #[cold]
    #[inline(never)]
    fn leave(&mut self, port: PortId, arrive: Time, pkt: PacketId) {
        if self.lost_on_wire(port, arrive, pkt) {
            return;
        }
        if let Some(x) = self.explain.as_deref_mut() {
            let w = &self.wires[port.idx()];
            let times = (self.now, arrive - w.delay, arrive);
            x.hop(self.packets.get(pkt), port, w.owner, times, w.far);
        }
        if self.wires[port.idx()].remote != LOCAL {
            self.post(port, arrive, pkt);
        } else {
            self.put_on_wire(port, arrive, pkt);
        }
    }

    /// Appends `pkt`, due at the far end at `arrive`, to `port`'s wire, and schedules its delivery if it is the
    /// first there. Arrivals on a wire are in the order of their transmissions.
    #[inline(always)]
    pub(super) fn put_on_wire(&mut self, port: PortId, arrive: Time, pkt: PacketId) {
        self.packets.get_mut(pkt).wire_next = PacketId::NONE;
        let w = &mut self.wires[port.idx()];
        let last = std::mem::replace(&mut w.last, pkt);
        if last == PacketId::NONE {
            w.first = pkt;
            self.events.push(arrive, Event::Deliver(port));
        } else {
            // The last packet went on the wire one transmission ago: its line is usually still in the L2
            // (cachegrind: this write misses the L1 but seldom the L2).
            let p = self.packets.get_mut(last);
            p.wire_next = pkt;
            p.stamp = arrive;
        }
    }

    /// Asks `port` to send if it is idle, or to wake when its current packet is out. A pending wake-up
    /// already covers both cases: it fires at `busy_until` (possibly now, later in this instant's order).
    /// Always inlined: a few compares for every packet entering a switch or a NIC, where a call cost as much.
    #[inline(always)]
    pub(super) fn kick<S: Scheme>(&mut self, side: &mut S, port: PortId) {
        let w = &mut self.wires[port.idx()];
        if w.wake_pending {
            return;
        }
        if self.now >= w.busy_until {
            self.service(side, port);
        } else {
            w.wake_pending = true;
            let at = w.busy_until;
            self.events.push(at, Event::TxDone(port));
        }
    }

    /// The port is idle: send the next packet its owner has, and arrange to wake when it is out if more wait.
    pub(super) fn service<S: Scheme>(&mut self, side: &mut S, port: PortId) {
        let more = match self.wires[port.idx()].owner {
            Device::Switch(sp) => self.switch_send(side, port, sp),
            Device::Host(h) => self.nic_send(side, h),
        };
        if more {
            let w = &mut self.wires[port.idx()];
            w.wake_pending = true;
            let at = w.busy_until;
            self.events.push(at, Event::TxDone(port));
        }
    }

    /// A packet reached the far end of `port`'s wire: hand it to the device there. Always inlined into the event
    /// loop, which calls it for every packet-hop; left to itself the inliner puts it out of line.
    #[inline(always)]
    pub(super) fn deliver<S: Scheme>(&mut self, side: &mut S, port: PortId) {
        let w = &mut self.wires[port.idx()];
        let pkt = w.first;
        debug_assert!(
            pkt != PacketId::NONE,
            "a Deliver event has a packet on the wire"
        );
        let p = self.packets.get(pkt);
        let (kind, next) = (p.kind, p.wire_next);
        w.first = next;
        if next == PacketId::NONE {
            w.last = PacketId::NONE;
        } else {
            self.events.push(p.stamp, Event::Deliver(port));
            self.packets.prefetch(next);
            // Under HPCC its INT stack is stamped, echoed or read soon after it arrives.
            self.int_stacks.prefetch(next);
        }
        let (far, far_switch, far_local) = (w.far, w.far_switch, w.far_local);
        if kind.is_hop_local() {
            match far {
                Device::Switch(sp) => side.switch_frame(self, sp, pkt),
                Device::Host(h) => side.nic_frame(self, h, pkt),
            }
            return;
        }
        match far {
            Device::Switch(_) => self.switch_receive(side, far_local, far_switch as usize, pkt),
            Device::Host(h) => self.host_receive(side, h, pkt),
        }
    }

    /// Rate and delay (propagation plus the receiving switch's processing delay) of the link leaving `port`.
    pub fn port_link(&self, port: PortId) -> (Rate, Time) {
        (self.wires[port.idx()].rate, self.wires[port.idx()].delay)
    }
}
