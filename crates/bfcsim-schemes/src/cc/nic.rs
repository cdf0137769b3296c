//! The NIC and switch side of end-to-end congestion control: what a controller asks of the network besides
//! carrying its ACKs, as hooks the fabric calls at fixed points and that act only through the verbs of
//! [`crate::fabric`] (so they run against [`crate::fabric::fake::FakeFabric`] in tests, with no event loop).
//!
//! | point | hook | who needs it |
//! |---|---|---|
//! | a data packet is built | [`CcNic::data_overhead`] | the controller's header: HPCC's INT (BFC §6.3's 80 B), TIMELY's timestamp, PINT's digest |
//! | a paced flow comes up in its NIC's round | [`next_send`] | the rate controllers (DCQCN, HPCC, rate-based DCTCP) |
//! | a data packet leaves its NIC | [`CcNic::data_sent`] | DCQCN's byte counter; HPCC's fresh INT stack; fresh stamps |
//! | a packet leaves a switch port | [`SwitchStamps::egress`] | HPCC's INT record (HPCC §3.2); Swift's hop count; PINT's per-port utilization and digest |
//! | data reaches its receiver | [`CcNic::notifier`], [`Notifier::on_data`] | DCQCN's notification point (§3): a CNP |
//! | the receiver builds a reply | [`CcNic::reply_built`] | the data packet's INT stack, hop count and digest echoed in its ACK |
//! | a reply leaves the receiver's NIC | [`CcNic::reply_sent`] | Swift: the remote endpoint delay the ACK carries |
//! | an ACK reaches the sender | [`CcNic::ack_arrived`] | every controller |
//! | a CNP reaches the sender | [`CcNic::notification_arrived`] | DCQCN's reaction point |
//! | a switch drops a data packet | [`CcNic::switch_dropped`] | drop notices (BFC §6.2.1's HPCC-PFC, `hpcc-ideal-retx`) |
//!
//! The fabric owns the mechanisms these hooks drive: the NIC's rate limiter, which holds a flow until
//! [`next_send`] and keeps one wake-up per flow at its controller's `next_timer` (re-read at each
//! [`NicOps::controller_changed`]), and the side table of INT stacks ([`bfcsim_net::int::IntStacks`]), which
//! crosses shards with its packets, and of the other stamps ([`bfcsim_net::telemetry`]) with PINT's per-port
//! state. Which of them a run turns on, by the running controller's [`Needs`], and what they record, is
//! decided here.

use bfcsim_core::{Bytes, PacketId, PortId, Time};
use bfcsim_net::int::{IntHop, IntStack};
use bfcsim_net::packet::{Packet, PacketKind};
use bfcsim_net::telemetry::PacketStamps;

use super::dcqcn::CnpGenerator;
use super::{AckSignal, CongestionControl, Needs, Notifier};
use crate::fabric::{FabricOps, NicOps, Scheme, SwitchOps, Telemetry};

/// The NIC and switch side of a run's congestion control, made once from its controller's [`Needs`]. `Copy`
/// and small: the fabric hands a copy to each hook (several a packet-hop), which reads its flags. What PINT's
/// switches compute with is the fabric's per-port state ([`Telemetry::pint_port`]), made from the same needs.
#[derive(Clone, Copy, Debug)]
pub struct CcNic {
    paced: bool,
    int: bool,
    endpoint_delay: bool,
    drop_notices: bool,
    switch: SwitchStamps,
    /// `hops || endpoint_delay || pint || paths`: packets carry stamps besides INT.
    stamps_packets: bool,
    /// ACKs echo their data packets' entropies to a sender that learns from them (REPS, `nic.paths`).
    paths: bool,
    overhead: u32,
    notifier: Notifier,
}

impl CcNic {
    /// The side a controller with `needs` asks for; `drop_notices` when switches tell a sender at once that
    /// they dropped its data (`switch.drop_notification`); `paths` when senders learn from the entropies their
    /// ACKs echo ([`crate::paths::Paths::learns`]).
    pub fn new(needs: Needs, drop_notices: bool, paths: bool) -> CcNic {
        let pint = needs.pint.is_some();
        CcNic {
            paced: needs.pacing,
            int: needs.int,
            endpoint_delay: needs.endpoint_delay,
            drop_notices,
            switch: SwitchStamps::new(needs.int, needs.hops, pint),
            stamps_packets: needs.hops || needs.endpoint_delay || pint || paths,
            paths,
            overhead: needs.header.0 as u32,
            notifier: match needs.notifications {
                Some(interval) => Notifier::Cnp(CnpGenerator::new(interval)),
                None => Notifier::Silent,
            },
        }
    }

    /// The controller paces or has timers: the NIC runs its rate limiter ([`next_send`]) and the
    /// controller's timers.
    #[inline]
    pub fn paced(&self) -> bool {
        self.paced
    }

    /// Switches stamp INT records on data packets, and receivers echo them.
    #[inline]
    pub fn stamps(&self) -> bool {
        self.int
    }

    /// Packets carry stamps besides INT ([`bfcsim_net::telemetry`]: hop count, endpoint delay, PINT's digest,
    /// the entropy), which cross shards with them.
    #[inline]
    pub fn stamps_packets(&self) -> bool {
        self.stamps_packets
    }

    /// ACKs echo the entropy of their data packets, which the sender's path selection learns from.
    #[inline]
    pub fn learns_paths(&self) -> bool {
        self.paths
    }

    /// A data packet leaving its NIC calls [`CcNic::data_sent`]: the controller counts bytes or paces, or the
    /// packet's stamps start afresh.
    #[inline]
    pub fn sees_data_sent(&self) -> bool {
        self.paced || self.int || self.stamps_packets
    }

    /// Bytes congestion control adds to each data packet (its header: HPCC's INT, TIMELY's timestamp, PINT's
    /// digest).
    #[inline]
    pub fn data_overhead(&self) -> u32 {
        self.overhead
    }

    /// Switches tell a sender at once that they dropped its data.
    #[inline]
    pub fn drop_notices(&self) -> bool {
        self.drop_notices
    }

    /// A fresh receiver side for one flow: what its receiver sends back besides ACKs (DCQCN's CNPs).
    #[inline]
    pub fn notifier(&self) -> Notifier {
        self.notifier
    }

    /// Data packet `pkt` of `size` wire bytes of the flow in `slot`, sent with `entropy` (0 for the flow's
    /// own hash), starts transmission at its NIC: the controller counts its bytes (DCQCN's byte counter), and
    /// the packet's INT stack and stamps start empty but for the entropy.
    #[inline(never)]
    pub fn data_sent<F: NicOps + Telemetry>(
        &self,
        fab: &mut F,
        slot: usize,
        (pkt, size): (PacketId, u32),
        entropy: u16,
    ) {
        let now = fab.now();
        fab.controller(slot).0.on_send(now, size as u64);
        if self.int {
            fab.int_stacks_mut().get_mut(pkt).clear();
        }
        if self.stamps_packets() {
            let stamps = PacketStamps {
                entropy,
                ..PacketStamps::default()
            };
            fab.stamps_mut().set(pkt, stamps);
        }
        fab.controller_changed(slot);
    }

    /// What switch egresses stamp ([`SwitchStamps::egress`]): HPCC's INT, the hop count or PINT's digest. The
    /// fabric takes this small copy before the hook, so that a controller that stamps nothing costs one test a
    /// packet-hop and one that stamps costs no copy of the whole side.
    #[inline]
    pub fn switch_stamps(&self) -> SwitchStamps {
        self.switch
    }

    /// Receivers echo something in their ACKs ([`CcNic::reply_built`]).
    #[inline]
    pub fn echoes(&self) -> bool {
        self.int || self.stamps_packets
    }

    /// ACKs carry the remote endpoint delay ([`CcNic::reply_sent`]).
    #[inline]
    pub fn endpoint_delay(&self) -> bool {
        self.endpoint_delay
    }

    /// The receiver built `reply` of `kind` for data packet `data` ([`PacketId::NONE`] for a scheme's reply
    /// to a header): an ACK carries the data packet's INT stack back to its sender (HPCC ns-3 `ReceiveUdp`),
    /// and its hop count and digest, and starts timing the remote endpoint delay.
    /// Called only when [`CcNic::echoes`].
    #[inline(never)]
    pub fn reply_built<F: NicOps + Telemetry>(
        &self,
        fab: &mut F,
        kind: PacketKind,
        data: PacketId,
        reply: PacketId,
    ) {
        if !matches!(kind, PacketKind::ACK | PacketKind::SACK) || data == PacketId::NONE {
            return;
        }
        if self.int {
            fab.int_stacks_mut().echo(data, reply);
        }
        if self.stamps_packets {
            let now = fab.now();
            let stamps = fab.stamps_mut();
            let of_data = stamps.get(data);
            // Until the reply leaves (`reply_sent`), `remote` holds the time its data packet arrived.
            let remote = if self.endpoint_delay { now } else { Time::ZERO };
            stamps.set(reply, PacketStamps { remote, ..of_data });
        }
    }

    /// Reply `pkt` starts transmission at its receiver's NIC: an ACK carries how long its data packet waited
    /// there (Swift §3.3's remote endpoint delay: the NIC's receive and transmit timestamps). Called only when
    /// [`CcNic::endpoint_delay`].
    #[inline]
    pub fn reply_sent<F: FabricOps + Telemetry>(&self, fab: &mut F, pkt: PacketId) {
        if matches!(fab.packet(pkt).kind, PacketKind::ACK | PacketKind::SACK) {
            let now = fab.now();
            let stamps = fab.stamps_mut().get_mut(pkt);
            stamps.remote = now - stamps.remote;
        }
    }

    /// ACK `ack` (its id `pkt`) of the flow in `slot` reached the sender, acknowledging `newly_acked` more
    /// payload bytes, `rtt` after its data packet left: the controller reads it ([`AckSignal`]).
    // Always inlined: every ACK of every scheme passes here, as the controller's own call did before this
    // hook (BENCHMARKS.md's engine v2 table).
    #[inline(always)]
    pub fn ack_arrived<F: NicOps + Telemetry>(
        &self,
        fab: &mut F,
        slot: usize,
        (ack, pkt): (&Packet, PacketId),
        newly_acked: u64,
        rtt: Time,
    ) {
        let now = fab.now();
        let snd_nxt = fab.sender(slot).snd_nxt();
        let stamps = if self.stamps_packets {
            fab.stamps().get(pkt)
        } else {
            PacketStamps::default()
        };
        let int = self.int;
        let (cc, stacks) = fab.controller(slot);
        let signal = AckSignal {
            newly_acked,
            ce_bytes: ack.aux as u64,
            ack_seq: ack.seq,
            snd_nxt,
            rtt: Some(rtt),
            mark: ack.mark,
            int: if int {
                stacks.get(pkt)
            } else {
                &IntStack::EMPTY
            },
            stamps,
        };
        cc.on_ack(now, &signal);
        fab.controller_changed(slot);
    }

    /// A congestion notification (a CNP) for the flow in `slot` reached its sender.
    #[inline]
    pub fn notification_arrived<F: NicOps>(&self, fab: &mut F, slot: usize) {
        let now = fab.now();
        fab.controller(slot).0.on_cnp(now);
        fab.controller_changed(slot);
    }

    /// A switch dropped packet `p`: with drop notices, a data packet's sender learns it at once
    /// ([`loss_notice`]).
    #[inline]
    pub fn switch_dropped<F: NicOps, S: Scheme>(&self, fab: &mut F, side: &mut S, p: &Packet) {
        if self.drop_notices && p.kind == PacketKind::DATA {
            loss_notice(fab, side, p);
        }
    }
}

/// What switch egresses stamp on the packets they send, for the running controller: three flags in a byte,
/// which the fabric copies once a packet-hop ([`CcNic::switch_stamps`]).
#[derive(Clone, Copy, Debug)]
pub struct SwitchStamps(u8);

impl SwitchStamps {
    const INT: u8 = 1;
    const HOPS: u8 = 2;
    const PINT: u8 = 4;

    fn new(int: bool, hops: bool, pint: bool) -> SwitchStamps {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        SwitchStamps(flag(int, Self::INT) | flag(hops, Self::HOPS) | flag(pint, Self::PINT))
    }

    /// Switch egresses stamp something.
    #[inline]
    pub fn any(self) -> bool {
        self.0 != 0
    }

    /// Packet `pkt` (data when `data`) starts transmission on switch egress `port` (switch port `sp`): HPCC's
    /// INT record (HPCC §3.2), the hop count and PINT's digest.
    // Always inlined down to the flags' tests: HPCC's INT and PowerTCP's pass here at every data hop, and the
    // stamping itself stays out of line.
    #[inline(always)]
    pub fn egress<F: SwitchOps + Telemetry>(
        self,
        fab: &mut F,
        (port, sp): (PortId, u32),
        pkt: PacketId,
        data: bool,
    ) {
        let hops = self.0 & Self::HOPS != 0;
        if self.0 & Self::PINT != 0 {
            pint_egress(fab, (port, sp), pkt, data, hops);
        } else if data {
            if self.0 & Self::INT != 0 {
                stamp(fab, port, sp, pkt);
            }
            if hops {
                fab.stamps_mut().get_mut(pkt).hops += 1;
            }
        }
    }
}

/// PINT at switch egress `port` (switch port `sp`): any packet's size and time enter the port's estimate, a
/// data packet `pkt` takes the larger of its digest and this port's (and counts the hop when `hops`).
#[inline(never)]
fn pint_egress<F: SwitchOps + Telemetry>(
    fab: &mut F,
    (port, sp): (PortId, u32),
    pkt: PacketId,
    data: bool,
    hops: bool,
) {
    let (now, size) = (fab.now(), fab.packet(pkt).size);
    if !data {
        fab.pint_port(port).left(now, size);
        return;
    }
    let (qlen, rate) = (fab.queues(sp).bytes(), fab.link_rate(port));
    let digest = fab.pint_port(port).data_leaves((now, size), qlen, rate);
    let stamps = fab.stamps_mut().get_mut(pkt);
    stamps.hops += u8::from(hops);
    stamps.digest = stamps.digest.max(digest);
}

/// Stamps switch egress `port`'s INT record on data packet `pkt` as it leaves switch port `sp` (HPCC ns-3
/// `SwitchNotifyDequeue`; [`bfcsim_net::int`] says what each field holds): the bytes the port sent before it,
/// the bytes still queued after it.
#[inline(never)]
fn stamp<F: SwitchOps>(fab: &mut F, port: PortId, sp: u32, pkt: PacketId) {
    let hop = IntHop {
        ts: fab.now(),
        tx_bytes: fab.tx_bytes(port),
        qlen: fab.queues(sp).bytes(),
        rate: fab.link_rate(port),
    };
    fab.int_stacks_mut().push(pkt, hop);
}

/// When a paced flow whose last data packet of `last_size` wire bytes started at `last_send` may start its
/// next (the contract of [`CongestionControl::rate`]; HPCC ns-3 `RdmaHw::UpdateNextAvail`). The rate is read
/// when the NIC looks at the flow, which is exactly ns-3's `ChangeRate` moving `m_nextAvail` by the last
/// packet's time at the new rate less its time at the old one. [`Time::ZERO`] when the controller does not
/// pace or the flow has sent nothing.
#[inline]
pub fn next_send(cc: &impl CongestionControl, last_send: Time, last_size: u32) -> Time {
    match cc.rate() {
        Some(r) if last_size > 0 => last_send + r.tx_time(Bytes(last_size as u64)),
        _ => Time::ZERO,
    }
}

/// Data packet `p` is known lost before any ACK could say so (a switch's drop notice, or the NACK of its
/// trimmed header): its sender resends it ([`crate::transport::Sender::handle_drop_notice`]) and, if it
/// will, its controller reacts to the loss, the retransmission timer starts afresh and the flow is readied.
#[inline(never)]
pub fn loss_notice<F: NicOps, S: Scheme>(fab: &mut F, side: &mut S, p: &Packet) {
    let Some(slot) = fab.flow_slot(p.flow) else {
        return;
    };
    let now = fab.now();
    let sender = fab.sender_mut(slot);
    let before = sender.snd_nxt();
    if sender.handle_drop_notice(p.seq, p.sent_at, now) {
        fab.controller(slot).0.on_loss(now, before);
        let h = fab.flow(p.flow).src_host;
        fab.restart_rto(h, slot);
        fab.controller_changed(slot);
        fab.make_ready(side, p.flow);
    }
}
