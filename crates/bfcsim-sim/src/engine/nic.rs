//! Host NICs: flows starting, the NIC's round of flows that may send, building data and control packets, and
//! a flow's completion.

use super::*;

pub(super) struct Host {
    pub(super) port: PortId,
    /// ACKs and NACKs waiting for the NIC; served before data.
    pub(super) ctrl: VecDeque<PacketId>,
    /// Flows that may have a packet to send, served round robin.
    pub(super) ready: VecDeque<FlowId>,
    /// Per-hop flow control at the NIC: paused queues and the flows parked on them.
    pub(super) nic: pause::NicQueues,
    /// Paced flows waiting for their next send time, earliest first (rate-based CC only).
    pub(super) paced: BinaryHeap<Reverse<(Time, u32)>>,
    /// When the pending `NicWake` is due (`Time::MAX`: none).
    pub(super) wake_at: Time,
    /// When the NIC port's scheme timer is due (`Time::MAX`: none pending).
    pub(super) timer_at: Time,
}

impl Fabric {
    pub(super) fn arrival<S: Scheme>(&mut self, side: &mut S) {
        let id = FlowId(self.local_flows[self.next_arrival]);
        self.next_arrival += 1;
        if let Some(&next) = self.local_flows.get(self.next_arrival) {
            self.events
                .push(self.flows[next as usize].spec.start, Event::Arrival);
        }
        self.start_flow(side, id);
    }

    /// Flow `id`'s sender starts now: the flow's next arrival from the sorted list, or a waiting flow
    /// released ([`super::waiting`]). Inlined into the arrival, as that was before a released flow shared it.
    #[inline(always)]
    pub(super) fn start_flow<S: Scheme>(&mut self, side: &mut S, id: FlowId) {
        self.flows_started += 1;
        let info = &self.flows[id.idx()];
        let (src_host, dst_host) = (info.src_host, info.dst_host);
        let sender = Sender::new(
            info.spec.size.0,
            self.params.nic.payload,
            &self.params.nic.transport,
        );
        let (conn, carried) = match &mut self.connections {
            Some(pool) => {
                let (index, carried) = pool.open(src_host, dst_host);
                (Some(index), carried)
            }
            None => (None, None),
        };
        let (sender, cc) = match carried.and_then(|c| c.next_flow(self.now)) {
            Some((rtt, cc)) => (sender.with_rtt_estimate(rtt), cc),
            None => {
                let ctx = FlowContext {
                    flow: id,
                    ..self.flow_ctx
                };
                (sender, self.params.cc.instantiate(&ctx))
            }
        };
        let active = Active {
            id,
            sender,
            cc,
            in_ring: false,
            parked: false,
            nic_q: 0,
            timer_armed: false,
            rto_deadline: Time::ZERO,
            rto_paused_base: Time::ZERO,
            last_send: Time::ZERO,
            last_size: 0,
            waiting: false,
            wait_until: Time::MAX,
            cc_timer_at: Time::MAX,
            conn,
            paths: Paths::new(self.params.nic.paths, &self.params.nic.entropy, || {
                stream_seed(self.flow_ctx.seed, Stream::Paths(id.0))
            }),
        };
        let slot = self.active.insert(active);
        self.flow_state[id.idx()].slot = slot;
        self.active[slot as usize].nic_q = side.flow_started(self, src_host, id, slot as usize);
        self.make_ready(side, id);
    }

    /// Puts a flow in its NIC's round robin if it can send and is not already there.
    pub(super) fn make_ready<S: Scheme>(&mut self, side: &mut S, id: FlowId) {
        let (slot, h) = (
            self.flow_state[id.idx()].slot as usize,
            self.flows[id.idx()].src_host,
        );
        let a = &self.active[slot];
        if a.in_ring || a.parked || !a.sender.can_send(a.cc.window()) {
            return;
        }
        if !side.may_send(self, h, id, slot) {
            return;
        }
        self.active[slot].in_ring = true;
        let host = &mut self.hosts[h as usize];
        host.ready.push_back(id);
        let port = host.port;
        self.kick(side, port);
    }

    /// The next flow host `h`'s NIC considers, taken out of its ready list: the longest waiting under round
    /// robin; under SRF (BFC App. A.2: "NICs also follow SRF scheduling") the one with the fewest bytes left to
    /// send, the longest waiting on a tie. A finished flow ranks 0 so that it is dropped from the list at once.
    #[inline(always)]
    pub(super) fn next_ready(&mut self, h: u32) -> Option<FlowId> {
        let ready = &mut self.hosts[h as usize].ready;
        if self.params.nic.scheduler == NicScheduler::RoundRobin {
            return ready.pop_front();
        }
        let (state, active) = (&self.flow_state, &self.active);
        let remaining = |id: FlowId| match state[id.idx()].slot {
            NO_SLOT => 0,
            slot => active[slot as usize].sender.remaining(),
        };
        let (at, _) = ready
            .iter()
            .enumerate()
            .min_by_key(|&(_, &id)| remaining(id))?;
        ready.remove(at)
    }

    /// The NIC of host `h` is idle: send a control frame if one waits, else the next data packet of the ready
    /// flows in the NIC's order ([`Fabric::next_ready`]). Returns whether more may wait.
    pub(super) fn nic_send<S: Scheme>(&mut self, side: &mut S, h: u32) -> bool {
        let port = self.hosts[h as usize].port;
        if let Some(pkt) = side.nic_poll(self, h) {
            self.transmit(port, pkt);
            // More of the scheme's packets, control frames or data may wait; a spare wake-up finds none.
            return true;
        }
        let host = &mut self.hosts[h as usize];
        // Only a NIC with a paused queue can be held whole by the scheme.
        let paused = host.nic.any_paused();
        if let Some(pkt) = host.ctrl.pop_front() {
            let flows_wait = !host.ready.is_empty();
            let more =
                !host.ctrl.is_empty() || flows_wait && !(paused && side.nic_blocked(self, h));
            if self.cc_nic.endpoint_delay() {
                let cc_nic = self.cc_nic;
                cc_nic.reply_sent(self, pkt);
            }
            self.transmit(port, pkt);
            return more;
        }
        if paused && side.nic_blocked(self, h) {
            return false;
        }
        while let Some(id) = self.next_ready(h) {
            let slot = self.flow_state[id.idx()].slot;
            if slot == NO_SLOT {
                continue; // finished while queued
            }
            let slot = slot as usize;
            if !side.may_send(self, h, id, slot) {
                self.active[slot].in_ring = false;
                continue;
            }
            let a = &mut self.active[slot];
            let window = a.cc.window();
            if !a.sender.can_send(window) {
                a.in_ring = false;
                continue;
            }
            if self.cc_nic.paced() && self.pace(h, id, slot) {
                continue;
            }
            let info = &self.flows[id.idx()];
            let a = &mut self.active[slot];
            let idle_before = a.sender.in_flight() == 0;
            let (seq, len, resend) = a.sender.next_segment();
            if a.sender.can_send(window) {
                self.hosts[h as usize].ready.push_back(id);
            } else {
                a.in_ring = false;
            }
            let entropy = a.paths.next(self.now);
            let hash = entropy.map_or(info.hash as u32, |e| route_hash(info.hash as u32, e));
            let nic = &self.params.nic;
            let size = len + nic.header + self.cc_nic.data_overhead();
            let pkt = self.packets.alloc(Packet {
                seq,
                sent_at: self.now,
                flow: id,
                size,
                payload: len,
                dst_host: info.dst_host,
                hash,
                class: info.spec.class,
                flags: Flags::ECT.with_if(Flags::INCAST, info.spec.incast),
                upstream_q: a.nic_q,
                ..Packet::blank(PacketKind::DATA)
            });
            self.counters.injected_pkts += 1;
            self.counters.injected_bytes += size as u64;
            self.counters.data_pkts += 1;
            if resend {
                self.counters.retransmits += 1;
            }
            // RFC 6298 (5.1): a packet sent while the flow's timer is not running starts it. Besides a flow
            // with nothing in flight, that is one whose timer found nothing in flight when it last fired
            // ([`Fabric::fire_timers`] disarms it then) and which has had some since without sending.
            if idle_before || !self.active[slot].timer_armed {
                self.restart_rto(h, slot);
            }
            let a = &mut self.active[slot];
            a.last_send = self.now;
            a.last_size = size;
            if !a.timer_armed {
                a.timer_armed = true;
                let at = a.rto_deadline;
                self.arm_timer(at, id);
            }
            if self.cc_nic.sees_data_sent() {
                let cc_nic = self.cc_nic;
                cc_nic.data_sent(self, slot, (pkt, size), entropy.unwrap_or(0));
            }
            side.data_sent(self, h, slot, pkt);
            // The scheme may have queued a control packet behind this one.
            let host = &self.hosts[h as usize];
            let more = !host.ready.is_empty() || !host.ctrl.is_empty();
            self.transmit(port, pkt);
            return more;
        }
        false
    }

    /// A control packet of flow `id` of `kind` and `size` bytes, from its receiver to its sender when
    /// `to_sender`, else from its sender to its receiver: `seq` and `aux` as the kind defines them.
    pub(super) fn new_control(
        &mut self,
        id: FlowId,
        to_sender: bool,
        kind: PacketKind,
        (seq, aux): (u64, u32),
        size: u32,
    ) -> PacketId {
        self.counters.injected_pkts += 1;
        self.counters.injected_bytes += size as u64;
        let p =
            self.flows[id.idx()].control_packet(id, to_sender, kind, (seq, aux), size, self.now);
        self.packets.alloc(p)
    }

    /// Queues control packet `pkt` at host `h`'s NIC, ahead of data, without waking the NIC: for the NIC's own
    /// transmit path, which sends it next.
    pub(super) fn queue_control(&mut self, h: u32, pkt: PacketId) {
        self.hosts[h as usize].ctrl.push_back(pkt);
    }

    /// Queues control packet `pkt` at host `h`'s NIC, ahead of data, and wakes the NIC.
    pub(super) fn send_control<S: Scheme>(&mut self, side: &mut S, h: u32, pkt: PacketId) {
        self.queue_control(h, pkt);
        let port = self.hosts[h as usize].port;
        self.kick(side, port);
    }

    /// Sends a control packet (ACK, NACK or CNP) from host `h` back to the sender of data packet `data`
    /// (whose id was `data_id`, [`PacketId::NONE`] for a scheme's reply to a header), ahead of data at the NIC,
    /// with `seq` and `aux` as its kind defines them; the scheme may echo its bits in it.
    #[inline]
    pub(super) fn send_reply<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        (data, data_id): (&Packet, PacketId),
        kind: PacketKind,
        (seq, aux): (u64, u32),
    ) {
        let info = &self.flows[data.flow.idx()];
        let size = self.params.nic.ack_size;
        let mut reply = Packet {
            seq,
            sent_at: data.sent_at,
            flow: data.flow,
            size,
            dst_host: info.src_host,
            hash: info.rev_hash as u32,
            aux,
            class: data.class,
            // A reply to a trimmed header says so: a NACK for one names that segment lost (see `host_receive`).
            flags: Flags::NONE
                .with_if(Flags::INCAST, data.incast())
                .with_if(Flags::TRIMMED, data.trimmed()),
            ..Packet::blank(kind)
        };
        side.echo(data, &mut reply);
        let reply = self.packets.alloc(reply);
        if self.cc_nic.echoes() {
            let cc_nic = self.cc_nic;
            cc_nic.reply_built(self, kind, data_id, reply);
        }
        self.counters.injected_pkts += 1;
        self.counters.injected_bytes += size as u64;
        let host = &mut self.hosts[h as usize];
        host.ctrl.push_back(reply);
        let port = host.port;
        self.kick(side, port);
    }

    pub(super) fn complete<S: Scheme>(&mut self, side: &mut S, id: FlowId) {
        let info = &self.flows[id.idx()];
        let slot = self.flow_state[id.idx()].slot;
        let a = &self.active[slot as usize];
        let (h, q) = (info.src_host, a.nic_q);
        if let (Some(pool), Some(index)) = (&mut self.connections, a.conn) {
            pool.release(
                h,
                info.dst_host,
                index,
                Connection::after(a.cc.clone(), a.sender.rtt_estimate(), a.last_send),
            );
        }
        side.flow_finished(self, h, q);
        self.active.release(slot);
        let state = &mut self.flow_state[id.idx()];
        state.slot = NO_SLOT;
        state.finish = self.now;
        self.flows_done += 1;
        self.completed(id, bfcsim_core::Done::Acked, h);
    }
}
