//! Packets reaching their destination host: the receiver's answer to data, and the sender's handling of ACKs,
//! NACKs and CNPs.

use super::*;

impl Fabric {
    // Out of line: it keeps `deliver` small enough to be inlined into the event loop with the switch path
    // (hosts receive one packet for every few switch hops).
    #[inline(never)]
    pub(super) fn host_receive<S: Scheme>(&mut self, side: &mut S, h: u32, pkt: PacketId) {
        let p = *self.packets.get(pkt);
        self.counters.delivered_pkts += 1;
        self.counters.delivered_bytes += p.size as u64;
        self.packets.free(pkt);
        if p.kind == PacketKind::DATA {
            if p.trimmed() {
                side.header_arrived(self, h, &p);
            } else {
                self.receive_data(side, h, &p, pkt);
            }
            return;
        }
        if p.kind.is_scheme_control() {
            side.packet_arrived(self, h, &p);
            return;
        }
        let slot = self.flow_state[p.flow.idx()].slot;
        if slot == NO_SLOT {
            return; // a late reply for a flow that already completed
        }
        let slot = slot as usize;
        side.reply_arrived(self, h, slot, &p);
        match p.kind {
            PacketKind::ACK => {
                let a = &mut self.active[slot];
                let rtt = self.now - p.sent_at;
                let out = a.sender.handle_ack(p.seq, Some(rtt));
                if out.complete {
                    self.complete(side, p.flow);
                    return;
                }
                if out.newly_acked > 0 {
                    self.restart_rto(h, slot);
                }
                let cc_nic = self.cc_nic;
                cc_nic.ack_arrived(self, slot, (&p, pkt), out.newly_acked, rtt);
                if cc_nic.learns_paths() {
                    self.path_feedback(slot, &p, pkt);
                }
                self.make_ready(side, p.flow);
            }
            PacketKind::SACK => {
                let a = &mut self.active[slot];
                let newly = a.sender.handle_sack(p.seq, Some(self.now - p.sent_at));
                if newly == 0 {
                    return;
                }
                self.restart_rto(h, slot);
                self.sack_arrived(slot, p, pkt, newly);
                self.make_ready(side, p.flow);
            }
            PacketKind::CNP => {
                let cc_nic = self.cc_nic;
                cc_nic.notification_arrived(self, slot);
                self.make_ready(side, p.flow);
            }
            // A header's NACK names its segment lost, as a switch's drop notice would; other NACKs are the
            // receiver's cumulative state.
            PacketKind::NACK if p.trimmed() => loss_notice(self, side, &p),
            PacketKind::NACK => {
                let a = &mut self.active[slot];
                let before = a.sender.snd_nxt();
                a.sender.handle_ack(p.seq, None);
                // With drop notices, the go-back the switch's notice caused already resends the gap.
                let covered = self.cc_nic.drop_notices() && a.sender.covered(p.seq, p.sent_at);
                let sacked = (p.aux > 0).then(|| p.seq + p.aux as u64);
                if !covered && a.sender.handle_nack(p.seq, sacked) {
                    a.cc.on_loss(self.now, before);
                    self.restart_rto(h, slot);
                    self.cc_changed(slot);
                }
                self.make_ready(side, p.flow);
            }
            kind => unreachable!("{kind:?} is not a transport reply"),
        }
    }

    /// SACK `p` (its id `pkt`) of the flow in `slot` reports `newly` bytes received beyond a gap: congestion
    /// control reads it as an ACK of those bytes that leaves the cumulative point where it was, and the path
    /// selection learns from its entropy.
    #[inline(never)]
    fn sack_arrived(&mut self, slot: usize, mut p: Packet, pkt: PacketId, newly: u64) {
        p.seq = self.active[slot].sender.snd_una();
        let rtt = self.now - p.sent_at;
        let cc_nic = self.cc_nic;
        cc_nic.ack_arrived(self, slot, (&p, pkt), newly, rtt);
        if cc_nic.learns_paths() {
            self.path_feedback(slot, &p, pkt);
        }
    }

    /// ACK `p` (its id `pkt`) of the flow in `slot` echoes the entropy of its data packet: the sender's path
    /// selection learns whether that path was marked (REPS).
    #[inline(never)]
    fn path_feedback(&mut self, slot: usize, p: &Packet, pkt: PacketId) {
        let entropy = self.stamps.get(pkt).entropy;
        let feedback = if p.aux > 0 {
            Feedback::Marked
        } else {
            Feedback::Good
        };
        self.active[slot]
            .paths
            .feedback(self.now, entropy, feedback);
    }

    /// Data packet `p` (whose id was `pkt`) reached its destination host `h`: the flow's receiver answers.
    #[inline]
    pub(super) fn receive_data<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        p: &Packet,
        pkt: PacketId,
    ) {
        let size = self.flows[p.flow.idx()].spec.size.0;
        let recv_slot = self.flow_state[p.flow.idx()].recv_slot;
        if recv_slot == RECEIVED {
            self.counters.duplicates += 1;
            // A late copy: the receiver has the whole flow and acknowledges all of it, as its last ACK did
            // (`Receiver::handle_data` answers a duplicate so, and its state is gone).
            self.send_reply(side, h, (p, pkt), PacketKind::ACK, (size, 0));
            side.data_arrived(self, h, p, size);
            return;
        }
        let slot = match recv_slot {
            NO_SLOT => {
                let state = Inbound {
                    receiver: Receiver::new(size, &self.params.nic.transport),
                    notifier: self.cc_nic.notifier(),
                };
                let slot = self.inbound.insert(state);
                self.flow_state[p.flow.idx()].recv_slot = slot;
                slot as usize
            }
            s => s as usize,
        };
        if self.inbound[slot].notifier.on_data(self.now, p.ce()) {
            self.send_reply(side, h, (p, pkt), PacketKind::CNP, (p.seq, 0));
        }
        let receiver = &mut self.inbound[slot].receiver;
        if p.seq + (p.payload as u64) <= receiver.rcv_nxt() {
            self.counters.duplicates += 1;
        } else {
            self.counters.out_of_order += u64::from(p.seq > receiver.rcv_nxt());
            self.progress += 1;
        }
        let reply = receiver.handle_data(p.seq, p.payload, p.ce());
        let held = receiver.received();
        if receiver.rcv_nxt() == size {
            self.flow_state[p.flow.idx()].recv_slot = RECEIVED;
            self.inbound.release(slot as u32);
            self.completed(p.flow, bfcsim_core::Done::Received, h);
        }
        match reply {
            Reply::Nothing => {}
            Reply::Ack { seq, ce_bytes } => {
                self.send_reply(side, h, (p, pkt), PacketKind::ACK, (seq, ce_bytes))
            }
            Reply::Sack { seq, ce_bytes } => {
                self.send_reply(side, h, (p, pkt), PacketKind::SACK, (seq, ce_bytes))
            }
            Reply::Nack { seq, sacked } => {
                // The SACK block travels as its distance above the expected byte (0: none, too far to say).
                let sack = u32::try_from(sacked - seq).unwrap_or(0);
                self.send_reply(side, h, (p, pkt), PacketKind::NACK, (seq, sack))
            }
        }
        side.data_arrived(self, h, p, held);
    }
}
