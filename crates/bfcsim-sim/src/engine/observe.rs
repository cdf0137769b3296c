//! What a caller can read of a shard between slices: counters, flows' outcomes, ports' and queues' state,
//! queuing delays.

use super::*;

impl Fabric {
    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The log of drops, timeouts and pauses so far, if kept ([`Logged`]), in the order they happened here.
    pub fn log(&self) -> Option<&[Logged]> {
        self.log.as_deref()
    }

    /// Counters so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// This shard's part of the run's fingerprint ([`crate::sim::Sim::fingerprint`]).
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Data packets that brought their receiver new bytes, so far.
    pub(crate) fn progress(&self) -> u64 {
        self.progress
    }

    /// Drops so far, by reason.
    pub fn drops(&self) -> Vec<(DropReason, u64)> {
        DropReason::ALL
            .iter()
            .map(|&r| (r, self.drops[r as usize]))
            .collect()
    }

    /// Flows finished so far.
    pub fn flows_done(&self) -> usize {
        self.flows_done
    }

    /// Flows this shard started so far.
    pub fn flows_started(&self) -> usize {
        self.flows_started
    }

    /// When flow `id` (whose source this shard owns) started; `None` for a waiting flow not yet released.
    pub fn flow_start(&self, id: FlowId) -> Option<Time> {
        match &self.waiting {
            Some(w) if w.waits(id.0) => w.started(id),
            _ => Some(self.flows[id.idx()].spec.start),
        }
    }

    /// Number of flows in the run.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The parameters.
    pub fn params(&self) -> &SimParams {
        &self.params
    }

    /// The context controllers are created with (BDP, base RTT).
    pub fn flow_context(&self) -> FlowContext {
        self.flow_ctx
    }

    /// One flow's outcome: its spec, its 5-tuple ports, and when it finished.
    pub fn flow(&self, id: FlowId) -> (&FlowSpec, u16, u16, Option<Time>) {
        let f = &self.flows[id.idx()];
        let finish = self.flow_state[id.idx()].finish;
        (
            &f.spec,
            f.sport,
            f.dport,
            (finish != Time::MAX).then_some(finish),
        )
    }

    /// Payload bytes of flow `id` acknowledged so far (its size once finished, 0 before it starts).
    pub fn flow_acked(&self, id: FlowId) -> u64 {
        let state = self.flow_state[id.idx()];
        match (state.finish, state.slot) {
            (Time::MAX, NO_SLOT) => 0,
            (Time::MAX, slot) => self.active[slot as usize].sender.snd_una(),
            _ => self.flows[id.idx()].spec.size.0,
        }
    }

    /// Flow `id`'s congestion window in payload bytes (`None` without one) and pacing rate (`None` at line
    /// rate), while it is sending; `None` before it starts and once it finished.
    pub fn flow_cc(&self, id: FlowId) -> Option<(Option<u64>, Option<Rate>)> {
        let state = self.flow_state[id.idx()];
        if state.finish != Time::MAX || state.slot == NO_SLOT {
            return None;
        }
        let cc = &self.active[state.slot as usize].cc;
        let window = cc.window();
        Some(((window != u64::MAX).then_some(window), cc.rate()))
    }

    /// Bytes transmitted on `port`'s link so far.
    pub fn port_tx_bytes(&self, port: PortId) -> u64 {
        self.wires[port.idx()].tx_bytes
    }

    /// Bytes serialized onto `port`'s link by now: [`Fabric::port_tx_bytes`] less what of the packet on the
    /// wire is still to go, so that a link's utilization over intervals shorter than a packet reads right.
    pub fn port_serialized_bytes(&self, port: PortId) -> f64 {
        let w = &self.wires[port.idx()];
        let left = w.busy_until.saturating_sub(self.now);
        w.tx_bytes as f64 - left.secs_f64() * w.rate.bps() as f64 / 8.0
    }

    /// Packets that arrived at switch egress port `port`'s queues so far, every kind, and those of them its
    /// buffer dropped (`None` for a host's port).
    pub fn port_arrivals(&self, port: PortId) -> Option<(u64, u64)> {
        let Device::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let dropped = self.port_drops[port.idx()];
        let out = &self.sw_ports[sp as usize];
        let dequeued = self.wires[port.idx()].dequeued;
        Some((dequeued + out.queues.len() as u64 + dropped, dropped))
    }

    /// The most packets that were alive at once (NICs, queues and wires).
    pub fn peak_packets(&self) -> usize {
        self.packets.high_water()
    }

    /// Number of switches.
    pub fn switch_count(&self) -> usize {
        self.switches.len()
    }

    /// The node of switch `s`.
    pub fn switch_node(&self, s: usize) -> NodeId {
        self.switch_keys[s].node
    }

    /// The buffer of switch `s` (occupancy per switch, pool, port and queue).
    pub fn switch_mmu(&self, s: usize) -> &Mmu {
        &self.switches[s].mmu
    }

    /// Bytes waiting in queue `q` of switch egress `port` (not counting the packet being serialized).
    pub fn egress_queue_bytes(&self, port: PortId, q: usize) -> u64 {
        self.egress_queue(port, q).0
    }

    /// Bytes waiting in queue `q` of switch egress `port`, and whether the queue is paused: for sampling
    /// queues often, without [`Fabric::port_queues`]'s scan of their packets. `(0, false)` for a host's port.
    pub fn egress_queue(&self, port: PortId, q: usize) -> (u64, bool) {
        match self.wires[port.idx()].owner {
            Device::Switch(sp) => {
                let queues = &self.sw_ports[sp as usize].queues;
                (queues.queue_bytes(q), queues.is_paused(q))
            }
            Device::Host(_) => (0, false),
        }
    }

    /// Active flows at switch egress `port` (BFC §2.3: flows "with one or more packets queued at the switch"):
    /// distinct flows with a data packet waiting in the port's queues or being serialized onto its link, whatever
    /// the scheme (FIFO, fair queuing, BFC with its hashed flow table alike). The packet on the wire counts so
    /// that a lone flow at line rate, whose packets never wait, is active as in M/G/1-PS. A scan of the port's
    /// packets: for sampling, never on the per-packet path. `None` for a host's port.
    pub fn port_active_flows(&self, port: PortId) -> Option<u32> {
        let Device::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let w = &self.wires[port.idx()];
        let sending = if w.busy_until <= self.now {
            None
        } else if w.remote == LOCAL {
            Some(w.last)
                .filter(|&id| id != PacketId::NONE)
                .map(|id| self.packets.get(id))
                .filter(|p| p.kind == PacketKind::DATA)
                .map(|p| p.flow.0)
        } else {
            Some(w.sending_flow).filter(|&f| f != u32::MAX)
        };
        // One allocation of the right size and a plain loop: the sampler calls this for every switch port, and
        // a chained iterator collected into a growing vector cost more than the sort. The queues keep their
        // runs of one data flow (packets are tagged by it on enqueue), so a packet is read only where a queue
        // holds more than one run, and the sort sees one entry per run.
        let queues = &self.sw_ports[sp as usize].queues;
        // Most ports have nothing queued at most samples: no allocation for them.
        if queues.is_empty() {
            return Some(sending.is_some() as u32);
        }
        let mut flows = Vec::with_capacity(queues.len() + 1);
        for run in queues.runs() {
            let tag = match run {
                Run::Tag(tag) => tag,
                Run::From(id) => flow_tag(self.packets.get(id)),
            };
            if tag != NO_TAG && flows.last() != Some(&tag) {
                flows.push(tag);
            }
        }
        flows.extend(sending);
        flows.sort_unstable();
        flows.dedup();
        Some(flows.len() as u32)
    }

    /// The state of each queue of switch egress `port` now (`None` for a host's port): for looking inside a
    /// run between slices (which queues hold what, which are paused), never on the per-packet path.
    pub fn port_queues(&self, port: PortId) -> Option<Vec<QueueState>> {
        let Device::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let queues = &self.sw_ports[sp as usize].queues;
        let mut out = vec![QueueState::default(); queues.count()];
        let mut seen: Vec<(usize, u32)> = Vec::new();
        for (q, state) in out.iter_mut().enumerate() {
            state.paused = queues.is_paused(q);
            state.bytes = queues.queue_bytes(q);
        }
        for (q, state) in out.iter_mut().enumerate() {
            for id in queues.iter_queue(q) {
                let p = self.packets.get(id);
                state.packets += 1;
                if p.kind == PacketKind::DATA {
                    state.incast_packets += u32::from(p.incast());
                    seen.push((q, p.flow.0));
                }
            }
        }
        seen.sort_unstable();
        seen.dedup();
        for (q, _) in seen {
            out[q].flows += 1;
        }
        Some(out)
    }

    /// Time each data packet waited in each switch egress queue (ps), since the start or the last
    /// [`Fabric::reset_queuing_delay`].
    pub fn queuing_delay(&self) -> &LogHistogram {
        &self.queuing_delay
    }

    /// Time the packets of one-packet flows waited in each switch egress queue (ps), as
    /// [`Fabric::queuing_delay`].
    pub fn single_packet_delay(&self) -> &LogHistogram {
        &self.single_packet_delay
    }

    /// Starts both queuing-delay histograms afresh (the end of a measurement warm-up).
    pub(super) fn reset_queuing_delay(&mut self) {
        self.queuing_delay = LogHistogram::new();
        self.single_packet_delay = LogHistogram::new();
    }

    /// The data queue index of class `class`'s first queue at switch ports.
    pub fn data_queue(&self, class: u8) -> usize {
        self.layout.data_queue(class)
    }

    /// The switch queue flow `id`'s data packets join at every switch port.
    pub fn flow_queue(&self, id: FlowId) -> usize {
        let f = &self.flows[id.idx()];
        self.layout.data_queue_for(f.spec.class, f.hash as u32)
    }
}
