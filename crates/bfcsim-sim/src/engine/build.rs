//! Building a shard: its switches, ports, wires and hosts from the topology and the parameters, and the flow
//! context every controller starts from.

use super::*;

impl Fabric {
    /// Builds the network for `flows` (which must be sorted by start time); `routes` are `topo`'s. The scheme
    /// is built next, and [`Fabric::start`] then schedules the flows.
    pub(super) fn new(
        topo: Topology,
        routes: Routes,
        flows: Arc<[Flow]>,
        params: SimParams,
        deps: Option<FlowDeps>,
        own: Ownership,
    ) -> Result<Fabric, String> {
        Fabric::check(&topo, &params)?;
        let sw = &params.switch;
        let total_q = sw.total_queues();
        let layout = QueueLayout {
            data_base: usize::from(sw.control_priority),
            per_class: (sw.queues_per_port / sw.classes) as usize,
            classes: sw.classes as usize,
        };
        let levels = layout.levels();
        let quantum = sw
            .quantum
            .map_or(params.nic.payload + params.nic.header, |b| {
                u32::try_from(b.0).expect("switch.quantum is checked to fit 32 bits")
            });
        // One α table for every switch (`MmuLayout::alpha`).
        let alpha = Arc::new(
            sw.alpha_by_queue
                .clone()
                .unwrap_or_else(|| vec![sw.alpha; total_q]),
        );

        let SwitchesBuilt {
            switch_of_node,
            switches,
            switch_keys,
            sw_ports,
            mut port_owner,
            port_local,
        } = Fabric::build_switches(&topo, &params, &levels, quantum, &alpha)?;
        let hosts = Fabric::build_hosts(&topo, &mut port_owner)?;
        let wires = Fabric::build_wires(&topo, sw, &port_owner, &switch_of_node, &own);

        let max_delay = topo
            .links
            .iter()
            .map(|l| l.delay + sw.processing_delay)
            .max()
            .unwrap_or(Time::ZERO)
            + Time::from_us(1);
        let waiting = deps.map(|d| Box::new(Waiting::new(d, &own)));
        let local_flows = (0..flows.len() as u32)
            .filter(|&i| own.node_shard[flows[i as usize].spec.src.idx()] == own.me)
            .filter(|&i| !waiting.as_ref().is_some_and(|w| w.waits(i)))
            .collect();
        let flow_state = vec![
            FlowState {
                slot: NO_SLOT,
                recv_slot: NO_SLOT,
                finish: Time::MAX,
            };
            flows.len()
        ];
        let persistent = params.nic.connections == Connections::Persistent;
        let needs = params.cc.needs();
        let cc_nic = CcNic::new(
            needs,
            params.switch.drop_notification,
            Paths::learns(params.nic.paths),
        );
        let mut sim = Fabric {
            routes,
            params,
            now: Time::ZERO,
            // Almost every event is due within a link delay and a serialization of now: size the calendar so.
            events: EventQueue::with_horizon(max_delay),
            packets: Packets::new(),
            wires,
            sw_ports,
            switches,
            switch_keys,
            port_local,
            switch_of_node,
            hosts,
            flows,
            flow_state,
            local_flows,
            next_arrival: 0,
            flows_started: 0,
            waiting,
            outbox: (0..own.shards).map(|_| Mail::default()).collect(),
            active: Slots::default(),
            connections: persistent.then(ConnectionPool::default),
            inbound: Slots::default(),
            timers: TimerQueue::default(),
            timer_event_at: None,
            flow_ctx: FlowContext {
                mss: 0,
                line_rate: Rate(1),
                base_rtt: Time::ZERO,
                bdp: Bytes(0),
                seed: 0,
                flow: FlowId(0),
            },
            flows_done: 0,
            counters: Counters::default(),
            fingerprint: 0,
            progress: 0,
            log: None,
            explain: None,
            faults: None,
            drops: [0; DropReason::ALL.len()],
            port_drops: vec![0; topo.ports.len()],
            charges: Vec::new(),
            layout,
            timer_batches: TimerBatches::default(),
            token_timers: TokenTimers::default(),
            hop: pause::HopState::new(),
            queuing_delay: LogHistogram::new(),
            single_packet_delay: LogHistogram::new(),
            cc_nic,
            int_stacks: IntStacks::default(),
            stamps: Stamps::default(),
            pint_ports: Vec::new(),
            pacing: pacing::Pacing::default(),
            topo,
        };
        sim.flow_ctx = sim.compute_flow_context();
        if let Some(pint) = needs.pint {
            let (t, seed) = (pint.t.unwrap_or(sim.flow_ctx.base_rtt), sim.params.seed);
            sim.pint_ports = (0..sim.topo.ports.len() as u32)
                .map(|p| {
                    let rng = rng::stream(seed, Stream::Telemetry(p));
                    PintPort::new(pint.encoding, pint.arithmetic, t, rng)
                })
                .collect();
        }
        sim.init_shared_ecn();
        Ok(sim)
    }

    /// Checks the parameters against each other and the topology against the engine's limits.
    fn check(topo: &Topology, params: &SimParams) -> Result<(), String> {
        params.switch.validate()?;
        params.nic.validate()?;
        params.cc.validate()?;
        if params.nic.connections == Connections::Persistent {
            params.cc.check_persistent()?;
        }
        params.flow_control.validate(&params.switch.facts())?;
        if topo.ports.len() > TOKEN_PORT as usize {
            return Err(format!(
                "{} ports exceed the engine's limit of {TOKEN_PORT}",
                topo.ports.len(),
            ));
        }
        Ok(())
    }

    /// Every switch of `topo` with its buffer and its ports' queues, in node order.
    fn build_switches(
        topo: &Topology,
        params: &SimParams,
        levels: &[u8],
        quantum: u32,
        alpha: &Arc<Vec<f64>>,
    ) -> Result<SwitchesBuilt, String> {
        let sw = &params.switch;
        let total_q = sw.total_queues();
        let mut switch_of_node = vec![u32::MAX; topo.nodes.len()];
        let mut switches = Vec::new();
        let mut switch_keys = Vec::new();
        let mut sw_ports = Vec::new();
        let mut port_owner = vec![None; topo.ports.len()];
        let mut port_local = vec![0u16; topo.ports.len()];
        for (i, node) in topo.nodes.iter().enumerate() {
            if node.kind != NodeKind::Switch {
                continue;
            }
            let s = switches.len() as u32;
            switch_of_node[i] = s;
            let n_ports = node.ports.len();
            let ppp = if sw.ports_per_pool == 0 {
                n_ports.max(1)
            } else {
                sw.ports_per_pool as usize
            };
            let n_pools = n_ports.div_ceil(ppp).max(1);
            let pool = sw.pool_size.map_or(sw.buffer.0 / n_pools as u64, |b| b.0);
            let layout = MmuLayout {
                unlimited: sw.unlimited_buffer,
                pool_size: vec![pool; n_pools],
                pool_of_port: (0..n_ports).map(|p| (p / ppp) as u16).collect(),
                queues_per_port: total_q,
                reserve: sw.reserve_per_queue.0,
                alpha: alpha.clone(),
                admission: sw.admission,
            };
            switch_keys.push(SwitchKey {
                node: NodeId::from_idx(i),
                first_sp: sw_ports.len() as u32,
                seed: rng::stream_seed(params.seed, Stream::Node(i as u32)),
            });
            switches.push(Switch {
                mmu: Mmu::new(layout),
                rng: rng::stream(params.seed, Stream::Node(i as u32)),
                shared_red: Vec::new(),
                since_mark: Vec::new(),
            });
            for (local, &p) in node.ports.iter().enumerate() {
                port_owner[p.idx()] = Some(Device::Switch(sw_ports.len() as u32));
                let local = u16::try_from(local).map_err(|_| {
                    format!(
                        "switch {} has more than {} ports, the engine's limit",
                        NodeId::from_idx(i),
                        u16::MAX
                    )
                })?;
                port_local[p.idx()] = local;
                let queues = PortQueues::new(levels, quantum);
                sw_ports.push(SwitchPort {
                    queues: match sw.scheduler {
                        Scheduler::Drr => queues,
                        Scheduler::RoundRobin => queues.with_round_robin(),
                        Scheduler::Srf => queues.with_srf(),
                    },
                    switch: s,
                    local,
                    blocked: false,
                    red_rng: rng::stream(params.seed, Stream::Port(p.0)),
                    pause: pause::PauseClock::new(total_q),
                    timer_at: Time::MAX,
                });
            }
        }
        Ok(SwitchesBuilt {
            switch_of_node,
            switches,
            switch_keys,
            sw_ports,
            port_owner,
            port_local,
        })
    }

    /// Every host's NIC, in host order; records each host's port in `port_owner`.
    fn build_hosts(
        topo: &Topology,
        port_owner: &mut [Option<Device>],
    ) -> Result<Vec<Host>, String> {
        let mut hosts = Vec::with_capacity(topo.hosts.len());
        for (hi, &h) in topo.hosts.iter().enumerate() {
            let ports = &topo.nodes[h.idx()].ports;
            if ports.len() != 1 {
                return Err(format!(
                    "host {h} has {} links; bfcsim's NIC model has exactly one port",
                    ports.len()
                ));
            }
            port_owner[ports[0].idx()] = Some(Device::Host(hi as u32));
            hosts.push(Host {
                port: ports[0],
                ctrl: VecDeque::new(),
                ready: VecDeque::new(),
                nic: pause::NicQueues::default(),
                paced: BinaryHeap::new(),
                wake_at: Time::MAX,
                timer_at: Time::MAX,
            });
        }
        Ok(hosts)
    }

    /// The transmitting side of every port of `topo`: its rate, its delay (a switch's processing delay added
    /// on links into switches), and who owns each end.
    fn build_wires(
        topo: &Topology,
        sw: &SwitchConfig,
        port_owner: &[Option<Device>],
        switch_of_node: &[u32],
        own: &Ownership,
    ) -> Vec<Wire> {
        topo.ports
            .iter()
            .enumerate()
            .map(|(i, port)| {
                let link = &topo.links[port.link.idx()];
                let far = topo.ports[port.peer.idx()].node.idx();
                let into_switch = topo.nodes[far].kind == NodeKind::Switch;
                let owner_of = |p: PortId| {
                    port_owner[p.idx()].expect("every port belongs to a host or a switch")
                };
                let far_shard = own.node_shard[far];
                let remote = if far_shard == own.node_shard[port.node.idx()] {
                    LOCAL
                } else {
                    far_shard
                };
                Wire {
                    rate: link.rate,
                    ps_per_byte: link.rate.ps_per_byte().unwrap_or(0),
                    delay: link.delay
                        + if into_switch {
                            sw.processing_delay
                        } else {
                            Time::ZERO
                        },
                    peer: port.peer,
                    owner: owner_of(PortId::from_idx(i)),
                    far: owner_of(port.peer),
                    far_switch: switch_of_node[far],
                    // Switch ports were checked to number below 2^16 above.
                    far_local: topo.ports[port.peer.idx()].local as u16,
                    busy_until: Time::ZERO,
                    wake_pending: false,
                    remote,
                    exit: remote,
                    sending_flow: u32::MAX,
                    first: PacketId::NONE,
                    last: PacketId::NONE,
                    tx_bytes: 0,
                    dequeued: 0,
                }
            })
            .collect()
    }

    /// Schedules the flows, once the scheme is built: the clock moves to the first flow's start.
    pub(super) fn start(&mut self) {
        if let Some(first) = self.flows.first() {
            self.now = first.spec.start;
        }
        if let Some(&first) = self.local_flows.first() {
            let start = self.flows[first as usize].spec.start;
            self.events.push(start, Event::Arrival);
        }
    }

    /// The flow context every controller is created with: the fastest host's rate and the fabric's largest
    /// base RTT (a full data packet out and its ACK back, store and forward, over the slowest equal-cost
    /// paths), so that a line-rate start of one BDP keeps any lone flow at line rate.
    pub(super) fn compute_flow_context(&self) -> FlowContext {
        let nic = &self.params.nic;
        let line_rate = self
            .hosts
            .iter()
            .map(|h| self.wires[h.port.idx()].rate)
            .max()
            .unwrap_or(Rate(1));
        let data = self.max_one_way(Bytes((nic.payload + nic.header) as u64));
        let ack = self.max_one_way(Bytes(nic.ack_size as u64));
        // The largest data latency plus the largest ACK latency bounds every pair's round trip (and equals the
        // largest one on symmetric fabrics).
        let max = |v: Vec<Time>| v.into_iter().max().unwrap_or(Time::ZERO);
        let base_rtt = max(data) + max(ack);
        FlowContext {
            mss: nic.payload,
            line_rate,
            base_rtt,
            bdp: line_rate.bytes_in(base_rtt),
            seed: self.params.seed,
            flow: FlowId(0),
        }
    }

    /// For each host, the largest one-way latency of a `size`-byte packet from any other host to it: a
    /// longest-path pass over the routing DAG towards each destination, nearest nodes first.
    pub(super) fn max_one_way(&self, size: Bytes) -> Vec<Time> {
        let mut latency = vec![Time::ZERO; self.topo.nodes.len()];
        // Each port's serialization plus propagation, computed once rather than once per destination.
        let hop: Vec<Time> = self
            .wires
            .iter()
            .map(|w| w.rate.tx_time(size) + w.delay)
            .collect();
        (0..self.hosts.len() as u32)
            .map(|d| {
                for v in self.routes.nodes_towards(d) {
                    latency[v.idx()] = self
                        .routes
                        .next_hops(v, d)
                        .iter()
                        .map(|&p| hop[p.idx()] + latency[self.topo.peer_node(p).idx()])
                        .max()
                        .unwrap_or(Time::ZERO);
                }
                self.topo
                    .hosts
                    .iter()
                    .map(|h| latency[h.idx()])
                    .max()
                    .unwrap_or(Time::ZERO)
            })
            .collect()
    }
}

/// What [`Fabric::build_switches`] makes: the switches and their ports, and the maps between nodes, ports and
/// switches.
struct SwitchesBuilt {
    switch_of_node: Vec<u32>,
    switches: Vec<Switch>,
    switch_keys: Vec<SwitchKey>,
    sw_ports: Vec<SwitchPort>,
    port_owner: Vec<Option<Device>>,
    port_local: Vec<u16>,
}
