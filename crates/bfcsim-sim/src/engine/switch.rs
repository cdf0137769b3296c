//! Switches: routing a packet that entered a switch, admission into its egress port's buffer and queues, and
//! the dequeue that sends it on.

use super::*;

/// One switch egress port: its queues, and what the engine keeps with them.
///
/// Laid out by use: the switch and local port, which an arriving packet's buffer admission and a dequeue's
/// release read, go before the queues' own per-packet head ([`PortQueues::HEAD`]) so that a push or a pop
/// reads one line of the port, and the next one too where a level of several queues has a ring to serve. The
/// rest is off the per-packet path. Unaligned, the 312-byte port spread what a push and a pop read over four
/// lines, and reading `local` was the costliest single stall on the 1024-host fabric.
#[repr(C, align(64))]
pub(super) struct SwitchPort {
    pub(super) switch: u32,
    pub(super) local: u16,
    /// The queues held packets but none they could send, as the pause clock last heard: kept in this line so
    /// that a push or a pop that leaves it unchanged does not read the clock's.
    pub(super) blocked: bool,
    pub(super) queues: PortQueues,
    /// When the port's scheme timer is due (`Time::MAX`: none pending).
    pub(super) timer_at: Time,
    pub(super) red_rng: Rng,
    /// Pause bookkeeping of this port's queues (per-hop flow control only).
    pub(super) pause: pause::PauseClock,
}

// The index fields and the queues' head fill the first line.
const _: () = assert!(std::mem::offset_of!(SwitchPort, queues) + PortQueues::HEAD == 64);

/// What routing at a switch reads for every packet: its node (the routing tables' key), its ECMP seed, and
/// where its ports start in `Fabric::sw_ports`. Kept apart from [`Switch`], 16 bytes a switch, so that it stays
/// cached on a fabric whose switches' state does not.
#[derive(Clone, Copy)]
pub(super) struct SwitchKey {
    pub(super) node: NodeId,
    /// The index in `Fabric::sw_ports` of the switch's local port 0; its ports follow in local order.
    pub(super) first_sp: u32,
    pub(super) seed: u64,
}

const _: () = assert!(std::mem::size_of::<SwitchKey>() == 16);

pub(super) struct Switch {
    pub(super) mmu: Mmu,
    /// Packet spraying's choices.
    pub(super) rng: Rng,
    /// BCC's shared-buffer RED of each buffer pool, when on (`switch.ecn.shared`); empty otherwise.
    pub(super) shared_red: Vec<PoolMarking>,
    /// The pool RED's bytes since its last mark at each port (`Spacing::Count`); empty when the pools don't mark.
    pub(super) since_mark: Vec<SinceMark>,
}

/// A packet's tag in the port queues: its data flow, or [`NO_TAG`] for any other packet, so that the queues
/// know their runs of one flow for the active-flow sampler ([`Fabric::port_active_flows`]).
#[inline(always)]
pub(super) fn flow_tag(p: &Packet) -> u32 {
    if p.kind == PacketKind::DATA {
        p.flow.0
    } else {
        NO_TAG
    }
}

/// Whether a packet of `kind` joins its egress port's strict-priority control queue (queue 0) rather than the
/// queue the scheme chooses.
#[inline(always)]
pub(super) fn in_control_queue(sc: &SwitchConfig, kind: PacketKind) -> bool {
    kind.is_control() && sc.control_priority && (sc.ack_priority || kind.is_hop_local())
}

/// The hash routing picks a packet's next hop by among equal-cost ones: under flow-level ECMP the packet's
/// `hash` keyed by the switch's `seed`, under spraying a draw of the switch's `rng`.
#[inline(always)]
fn route_hash(lb: LoadBalancing, hash: u32, seed: u64, rng: &mut Rng) -> u64 {
    match lb {
        LoadBalancing::Ecmp => ecmp_hash(hash as u64, seed),
        LoadBalancing::Spray => rng.random(),
    }
}

impl Fabric {
    /// A packet entered local port `in_local` of switch `s`: route it, admit it into the egress queue, or drop
    /// it.
    /// Always inlined into the event loop: it is the one caller's hottest path, and the inliner's size limit
    /// would otherwise leave it out of line whenever routing grows a branch.
    #[inline(always)]
    pub(super) fn switch_receive<S: Scheme>(
        &mut self,
        side: &mut S,
        in_local: u16,
        s: usize,
        pkt: PacketId,
    ) {
        // Read in place; the one copy of the packet is the scheme's, in `Entry`.
        let p = self.packets.get(pkt);
        let key = self.switch_keys[s];
        let egress = match side.route(self, s, p) {
            Some(port) => port,
            None => {
                let lb = self.params.switch.load_balancing;
                let hash = route_hash(lb, p.hash, key.seed, &mut self.switches[s].rng);
                self.routes.select(key.node, p.dst_host, hash)
            }
        };
        let (out_sp, out_local) = self.egress_of(s, key.first_sp, egress);
        let control = in_control_queue(&self.params.switch, p.kind);
        let entry = Entry {
            s,
            in_local,
            out_sp,
            out_local,
            egress,
            pkt,
            p: *p,
        };
        let admitted = if control {
            self.admit_and_push(&entry, 0)
        } else {
            side.enqueue(self, &entry)
        };
        if let Err(reason) = admitted {
            let cc_nic = self.cc_nic;
            cc_nic.switch_dropped(self, side, &entry.p);
            self.port_drops[egress.idx()] += 1;
            self.drop_packet(pkt, reason);
            return;
        }
        self.kick(side, egress);
    }

    /// Egress port `egress` of switch `s`, whose first switch port is `first_sp`, as a switch-port index and its
    /// local number.
    #[inline(always)]
    fn egress_of(&self, s: usize, first_sp: u32, egress: PortId) -> (u32, u16) {
        let out_local = self.port_local[egress.idx()];
        let out_sp = first_sp + out_local as u32;
        debug_assert!(
            matches!(self.wires[egress.idx()].owner, Device::Switch(sp) if sp == out_sp),
            "port {egress} is local port {out_local} of switch {s}"
        );
        (out_sp, out_local)
    }

    /// [`SwitchOps::reroute`]: packet `e`, turned round by its scheme, routed afresh at its switch.
    pub(super) fn reroute(&mut self, e: &Entry) -> Entry {
        let p = self.packets.get(e.pkt);
        let key = self.switch_keys[e.s];
        let lb = self.params.switch.load_balancing;
        let hash = route_hash(lb, p.hash, key.seed, &mut self.switches[e.s].rng);
        let egress = self.routes.select(key.node, p.dst_host, hash);
        let (out_sp, out_local) = self.egress_of(e.s, key.first_sp, egress);
        Entry {
            out_sp,
            out_local,
            egress,
            p: *self.packets.get(e.pkt),
            ..*e
        }
    }

    /// Admits packet `e` into queue `queue` of its egress port's buffer (Dynamic Threshold) and queues it there.
    #[inline(always)]
    pub(super) fn admit_and_push(&mut self, e: &Entry, queue: usize) -> Result<(), DropReason> {
        self.admit(e.s, e.out_local as usize, queue, e.pkt, e.p.size)?;
        self.push_admitted(e, queue);
        Ok(())
    }

    /// Admits packet `pkt` of `size` bytes into `queue` of local port `port` of switch `s`'s buffer, and keeps
    /// where its bytes are counted for [`Fabric::switch_send`]'s release.
    #[inline(always)]
    pub(super) fn admit(
        &mut self,
        s: usize,
        port: usize,
        queue: usize,
        pkt: PacketId,
        size: u32,
    ) -> Result<(), DropReason> {
        let held = self.queue_level(s, port, queue);
        let charge = self.switches[s].mmu.admit(port, queue, size as u64, held)?;
        self.hold_charge(pkt, charge);
        Ok(())
    }

    /// Cuts data packet `e` to a header of `header` bytes (NDP's trimming): it keeps its fields but its payload,
    /// and is flagged [`Flags::TRIMMED`]; the payload's bytes are counted lost to trimming. Returns the entry as
    /// it now is, to admit and queue.
    pub(super) fn trim(&mut self, e: &Entry, header: u32) -> Entry {
        let p = self.packets.get_mut(e.pkt);
        debug_assert!(p.kind == PacketKind::DATA && !p.trimmed() && header <= p.size);
        self.counters.trimmed_pkts += 1;
        self.counters.trimmed_bytes += u64::from(p.size - header);
        p.size = header;
        p.payload = 0;
        p.flags = p.flags.with(Flags::TRIMMED);
        Entry { p: *p, ..*e }
    }

    /// Admits packet `e` into `queue` of its egress port's buffer without a test (a lossless priority under
    /// PFC), and keeps where its bytes are counted.
    #[inline(always)]
    pub(super) fn admit_lossless(&mut self, e: &Entry, queue: usize) {
        let (s, port) = (e.s, e.out_local as usize);
        let held = self.queue_level(s, port, queue);
        let charge = self.switches[s]
            .mmu
            .admit_lossless(port, e.p.size as u64, held);
        self.hold_charge(e.pkt, charge);
    }

    /// The bytes `queue` of local port `port` of switch `s` holds: the level its buffer admits against, counted
    /// once, by the port's queues.
    #[inline(always)]
    pub(super) fn queue_level(&self, s: usize, port: usize, queue: usize) -> u64 {
        let sp = self.switch_keys[s].first_sp as usize + port;
        self.sw_ports[sp].queues.queue_bytes(queue)
    }

    /// Keeps a per-packet charge of the buffer ([`Fabric::charges`]).
    #[inline(always)]
    pub(super) fn hold_charge(&mut self, pkt: PacketId, charge: Charge) {
        if charge != Charge::ByLevel {
            let i = pkt.idx();
            if i >= self.charges.len() {
                self.charges.resize(i + 1, Charge::ByLevel);
            }
            self.charges[i] = charge;
        }
    }

    /// Queues packet `e`, admitted into the buffer, in `queue` of its egress port: ECN marking on enqueue and
    /// SRF's rank when configured, and the time it joined (per-hop queuing delay).
    #[inline(always)]
    pub(super) fn push_admitted(&mut self, e: &Entry, queue: usize) {
        let p = &e.p;
        // BFC-SRF's header field (App. A.2): the flow's payload bytes from this packet's first byte to its end,
        // which the sender writes into each data packet. Derived here rather than carried, so that `Packet`
        // stays one cache line; only SRF switches read it.
        let rank = if self.params.switch.scheduler == Scheduler::Srf && p.kind == PacketKind::DATA {
            self.flows[p.flow.idx()].spec.size.0 - p.seq
        } else {
            0
        };
        let ecn = &self.params.switch.ecn;
        if ecn.enabled
            && ecn.mark_on == MarkPoint::Enqueue
            && p.ect()
            && self.ecn_marks(e.out_sp, queue, p.size)
        {
            self.mark_ce(e.pkt);
        }
        let out = &mut self.sw_ports[e.out_sp as usize];
        out.queues
            .push_ranked(queue, e.pkt, p.size, rank, flow_tag(p));
        self.packets.get_mut(e.pkt).stamp = self.now;
    }

    /// Dequeues and transmits the next packet of switch port `sp`. Returns whether more wait.
    pub(super) fn switch_send<S: Scheme>(&mut self, side: &mut S, port: PortId, sp: u32) -> bool {
        let out = &mut self.sw_ports[sp as usize];
        let Some((pkt, size, queue)) = out.queues.pop() else {
            return false;
        };
        // The queue's next packet is likely the port's next to send, one serialization from now; behind a
        // deep queue its line has left the cache since it arrived.
        if let Some(next) = out.queues.head(queue) {
            self.packets.prefetch(next);
            // HPCC stamps its INT stack as it leaves.
            self.int_stacks.prefetch(next);
        }
        let mmu = &mut self.switches[out.switch as usize].mmu;
        // The queue held the packet's bytes until the pop.
        let held = out.queues.queue_bytes(queue) + size as u64;
        if self.charges.is_empty() {
            mmu.release(out.local as usize, size as u64, held);
        } else {
            mmu.release_charged(
                out.local as usize,
                queue,
                size as u64,
                held,
                self.charges[pkt.idx()],
            );
        }
        let p = self.packets.get_mut(pkt);
        let data = p.kind == PacketKind::DATA;
        if data {
            let delay = (self.now - p.stamp).0;
            self.queuing_delay.record(delay);
            // A first packet shorter than a full one is a whole flow; a full one is when the flow is that size.
            let mss = self.params.nic.payload;
            if p.seq == 0
                && (p.payload < mss || self.flows[p.flow.idx()].spec.size.0 == p.payload as u64)
            {
                self.single_packet_delay.record(delay);
            }
        }
        side.dequeued(self, sp, pkt, queue, data);
        let stamps = self.cc_nic.switch_stamps();
        if stamps.any() {
            stamps.egress(self, (port, sp), pkt, data);
        }
        let ecn = &self.params.switch.ecn;
        if ecn.enabled
            && ecn.mark_on == MarkPoint::Dequeue
            && self.packets.get(pkt).ect()
            && self.ecn_marks(sp, queue, size)
        {
            self.mark_ce(pkt);
        }
        let more = self.sw_ports[sp as usize].queues.has_ready();
        self.wires[port.idx()].dequeued += 1;
        self.transmit(port, pkt);
        more
    }

    pub(super) fn drop_packet(&mut self, pkt: PacketId, reason: DropReason) {
        let p = self.packets.get(pkt);
        let size = p.size as u64;
        self.counters.dropped_data_pkts += u64::from(p.kind == PacketKind::DATA);
        self.counters.dropped_pkts += 1;
        self.counters.dropped_bytes += size;
        self.drops[reason as usize] += 1;
        self.packets.free(pkt);
    }
}
