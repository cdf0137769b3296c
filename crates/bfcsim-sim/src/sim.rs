//! A run split across threads: conservative synchronous windows over shards of the network.
//!
//! The nodes are divided among shards (`engine::Shard`), each a complete engine that handles the
//! events of the ports, switches and hosts it owns. A packet sent on a link whose far end belongs to another
//! shard leaves as a parcel and arrives no earlier than the link's delay later. So every shard can process a
//! window of simulated time `[t0, t0 + L)`, `L` the smallest link delay of the fabric (the lookahead), without
//! hearing from the others; between windows the shards swap parcels and agree on the next window, which starts
//! at the earliest pending event anywhere (idle stretches cost nothing).
//!
//! A run's results do not depend on the number of shards: the events due at one instant fire in an order fixed
//! by what they are (see `bfcsim_core::event`), not by when they were scheduled, so each shard sees its events
//! in the order one engine would; a one-shard run uses the same windows and stops, like a split one, at the
//! end of the window in which the last flow finishes. Everything a run reports is added up (counters,
//! histograms) or read from the shard owning the port, switch or flow. Two quantities are per shard: the peak
//! number of live packets (the sum of the shards' peaks, at most that many) and the count of events, since each
//! shard's retransmission and congestion-control timers due at one instant fire in one event of its own (under
//! DCQCN on CLOS-128, about one event in 100,000 more on two shards than on one, by which flows share a shard).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bfcsim_core::{FlowId, FlowSpec, LogHistogram, NodeId, PortId, Rate, Time};
use bfcsim_net::ecn::PoolMarking;
use bfcsim_net::mmu::{DropReason, Mmu};
use bfcsim_net::routing::Routes;
use bfcsim_net::topology::{NodeKind, Topology};
use bfcsim_schemes::cc::FlowContext;
use bfcsim_schemes::fabric::{Describe, Flow, HopStats, PauseRecord, SchemeReport, SwitchHardware};

use crate::engine::{
    AnyScheme, Counters, FlowDeps, HopRecord, Logged, Mail, Notify, Ownership, QueueState, Shard,
    SimParams, node_work,
};
use crate::partition::partition;

/// A simulation of one topology, one flow list and one configuration, on one thread or several.
pub struct Sim {
    shards: Vec<Shard>,
    /// The shard of each node.
    node_shard: Vec<u8>,
    /// The lookahead: no parcel is due sooner than this after it is sent (zero: one shard, one window).
    lookahead: Time,
    /// Every flow has finished, or nothing is pending anywhere.
    done: bool,
    /// Where the shards meet between windows, kept from call to call with its vectors' capacity.
    board: Board,
    /// The threads that run every shard but the last (the caller's thread runs that one), none for one shard.
    /// They live as long as the run: the runner samples the switches every few microseconds, and a thread
    /// started for each slice costs more than many slices' work.
    workers: Option<rayon::ThreadPool>,
}

impl Sim {
    /// Builds the network and schedules the flows (which must be sorted by start time), on one thread.
    pub fn new(topo: Topology, flows: &[FlowSpec], params: SimParams) -> Result<Sim, String> {
        Sim::with_threads(topo, flows, params, 1)
    }

    /// [`Sim::new`] in as many shards, each run by its own thread, as `threads` asks for and the run allows
    /// (see `Sim::shards_for`). The results are the same for any number.
    pub fn with_threads(
        topo: Topology,
        flows: &[FlowSpec],
        params: SimParams,
        threads: usize,
    ) -> Result<Sim, String> {
        let routes = Routes::new(&topo)?;
        Sim::with_routes(topo, routes, flows, params, threads)
    }

    /// [`Sim::with_threads`] with `topo`'s routing tables already computed ([`Routes::new`]), which on a
    /// 1024-host fat tree saves about 10^9 instructions.
    pub fn with_routes(
        topo: Topology,
        routes: Routes,
        flows: &[FlowSpec],
        params: SimParams,
        threads: usize,
    ) -> Result<Sim, String> {
        Sim::with_dependencies(topo, routes, flows, None, params, threads)
    }

    /// [`Sim::with_routes`] for flows of which some wait for others (`deps`, over the same ids; the waiting
    /// flows' start times are then only lower bounds): each starts once the completions it waits for have
    /// reached its host, its compute delay later ([`FlowDeps`]).
    pub fn with_dependencies(
        topo: Topology,
        routes: Routes,
        flows: &[FlowSpec],
        deps: Option<FlowDeps>,
        params: SimParams,
        threads: usize,
    ) -> Result<Sim, String> {
        if let Some(d) = &deps
            && d.graph.len() != flows.len()
        {
            return Err(format!(
                "the dependency graph covers {} flows, the workload has {}",
                d.graph.len(),
                flows.len()
            ));
        }
        // A packet reaches the far end no sooner than the link's propagation delay after it starts (into a
        // switch, its processing delay later still, which only makes the bound safe).
        let lookahead = topo
            .links
            .iter()
            .map(|l| l.delay)
            .min()
            .unwrap_or(Time::ZERO);
        let instant = deps.as_ref().is_some_and(|d| d.notify == Notify::Instant);
        let threads = if instant { 1 } else { threads };
        let shards = Sim::shards_for(&topo, &params, lookahead, threads);
        let table = Flow::table(&topo, flows)?;
        let node_shard = if shards > 1 {
            partition(&topo, &node_work(&topo, &routes, &table, &params), shards)
        } else {
            vec![0; topo.nodes.len()]
        };
        let shared: std::sync::Arc<[u8]> = node_shard.clone().into();
        let mut built = Vec::with_capacity(shards as usize);
        for me in 0..shards {
            let own = Ownership {
                me,
                node_shard: shared.clone(),
                shards,
            };
            built.push(Shard::new(
                topo.clone(),
                routes.clone(),
                table.clone(),
                params.clone(),
                deps.clone(),
                own,
            )?);
        }
        let done = flows.is_empty();
        let workers = match shards {
            1 => None,
            n => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n as usize - 1)
                    .thread_name(|i| format!("bfcsim-shard-{i}"))
                    .build()
                    .map_err(|e| format!("cannot start the run's {} threads: {e}", n - 1))?,
            ),
        };
        Ok(Sim {
            workers,
            board: Board::new(shards as usize),
            shards: built,
            node_shard,
            lookahead,
            done,
        })
    }

    /// How many shards a run gets: `threads`, but one when the links have no delay to look ahead over,
    /// when the fabric has fewer switches than shards, or when switches tell senders of drops at once
    /// (`switch.drop_notification`: a message with no delay, which no window could wait for).
    fn shards_for(topo: &Topology, params: &SimParams, lookahead: Time, threads: usize) -> u8 {
        let switches = topo
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Switch)
            .count();
        let wanted = threads.clamp(1, 64).min(switches.max(1)) as u8;
        if lookahead == Time::ZERO || params.switch.drop_notification {
            1
        } else {
            wanted
        }
    }

    /// Number of shards (threads) the run uses.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    // ----------------------------------------------------------------------------------------------------
    // Driving the run

    /// Processes every event up to and including `limit` (and, once the last flow finishes, the rest of that
    /// window). Returns false once nothing is left to do (every flow finished, or nothing pending but
    /// watchdogs). Slicing a run into several calls gives the same result as one call.
    pub fn run_until(&mut self, limit: Time) -> bool {
        if !self.done {
            self.run_windows(limit);
        }
        if !self.done && limit != Time::MAX {
            self.shards.iter_mut().for_each(|s| s.set_now(limit));
        }
        if self.done {
            // The run ended at its last event anywhere: every shard's clock reads that time, so what is
            // observed afterwards (a port still serializing, say) does not depend on which shard owns it.
            let end = self.now();
            self.shards.iter_mut().for_each(|s| s.set_now(end));
        }
        !self.done
    }

    /// Runs until every flow finished or nothing is pending.
    pub fn run(&mut self) {
        self.run_until(Time::MAX);
    }

    /// True when every flow has finished or nothing is pending.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// Runs windows up to `limit`, each starting at the earliest pending event anywhere and lasting the
    /// lookahead, one thread per shard: the pool's for all but the last, the caller's for that one.
    fn run_windows(&mut self, limit: Time) {
        let rounds = Rounds {
            board: &self.board,
            lookahead: self.lookahead,
            limit,
            first: self
                .shards
                .iter()
                .map(|s| s.next_event())
                .min()
                .expect("shards"),
            flows: self.shards[0].flow_count(),
            over: &AtomicBool::new(false),
        };
        let (last, rest) = self.shards.split_last_mut().expect("shards");
        let me_last = rest.len();
        match &self.workers {
            None => rounds.run(me_last, last),
            // On a worker of another rayon pool (a sweep's), the scope's wait for the pool's shards would run
            // that pool's other jobs meanwhile, whole simulations nested inside this one's slice: there, each
            // slice starts its threads as before.
            Some(_) if rayon::current_thread_index().is_some() => std::thread::scope(|scope| {
                for (me, shard) in rest.iter_mut().enumerate() {
                    scope.spawn(move || rounds.run(me, shard));
                }
                rounds.run(me_last, last);
            }),
            Some(pool) => pool.in_place_scope(|scope| {
                for (me, shard) in rest.iter_mut().enumerate() {
                    scope.spawn(move |_| rounds.run(me, shard));
                }
                rounds.run(me_last, last);
            }),
        }
        self.done = rounds.over.load(Ordering::Relaxed);
    }

    // ----------------------------------------------------------------------------------------------------
    // Observation

    /// The shard owning `node`.
    fn of_node(&self, node: NodeId) -> &Shard {
        &self.shards[self.node_shard[node.idx()] as usize]
    }

    /// The shard owning the transmitting side of `port`.
    fn of_port(&self, port: PortId) -> &Shard {
        let node = self.shards[0].topology().ports[port.idx()].node;
        self.of_node(node)
    }

    /// The shard owning switch `s`.
    fn of_switch(&self, s: usize) -> &Shard {
        self.of_node(self.shards[0].switch_node(s))
    }

    /// The shard owning flow `id`'s source.
    fn of_flow(&self, id: FlowId) -> &Shard {
        let src = self.shards[0].flow(id).0.src;
        self.of_node(src)
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.shards
            .iter()
            .map(|s| s.now())
            .max()
            .unwrap_or(Time::ZERO)
    }
    /// Counters so far.
    pub fn counters(&self) -> Counters {
        self.shards
            .iter()
            .map(|s| s.counters())
            .fold(Counters::default(), |a, b| a + b)
    }
    /// The run's fingerprint so far: a 64-bit hash over every packet's start on every link (time, port, flow,
    /// sequence number, kind, size), folded by a wrapping sum, so that it is the same for any number of threads.
    /// Any change of behaviour changes it (OMNeT++'s fingerprints).
    pub fn fingerprint(&self) -> u64 {
        self.shards
            .iter()
            .fold(0u64, |a, s| a.wrapping_add(s.fingerprint()))
    }
    /// A count that grows while the run makes progress: data packets that brought their receiver bytes it did
    /// not have, and flows completed. Whatever the scheme, a run in which it stops growing while flows remain
    /// is stuck (deadlocked, or livelocked in retransmissions that never get through).
    pub fn progress(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.progress() + s.flows_done() as u64)
            .sum()
    }
    /// Why the run makes no progress, for a user: the cycle of switch ports that wait for each other (a
    /// deadlock: each holds packets in a queue the next one's switch paused, BFC App. B), else the ports with
    /// paused queues holding packets; then the unfinished flows (the first few).
    pub fn stall_diagnosis(&self) -> String {
        let mut edges = Vec::new();
        self.shards.iter().for_each(|s| s.wait_edges(&mut edges));
        let name = |p: PortId| self.of_port(p).describe_port(p);
        let topo = self.topology();
        let is_switch =
            |p: PortId| topo.nodes[topo.ports[p.idx()].node.idx()].kind == NodeKind::Switch;
        let mut text = match crate::engine::find_cycle(&mut edges) {
            Some(cycle) => {
                // The cycle alternates a paused port and the ingress of the device that paused it; the paused
                // ports tell the story.
                let mut ports: Vec<String> = cycle
                    .iter()
                    .filter(|&&p| {
                        edges
                            .iter()
                            .any(|&(a, b)| a == p && b == topo.ports[p.idx()].peer)
                    })
                    .map(|&p| name(p))
                    .collect();
                ports.push(ports[0].clone());
                format!(
                    "deadlock: a cyclic buffer dependency, each port holding packets in a queue paused by the \
                     next one's switch: {}",
                    ports.join(" -> ")
                )
            }
            None => {
                let mut paused: Vec<PortId> = edges
                    .iter()
                    .filter(|&&(a, b)| b == topo.ports[a.idx()].peer && is_switch(a))
                    .map(|&(a, _)| a)
                    .collect();
                paused.dedup();
                if paused.is_empty() {
                    "no queue is paused".to_string()
                } else {
                    let n = paused.len();
                    let shown: Vec<String> = paused.into_iter().take(8).map(name).collect();
                    format!(
                        "{n} switch port{} hold packets in paused queues: {}{}",
                        if n == 1 { "" } else { "s" },
                        shown.join("; "),
                        if n > 8 { "; ..." } else { "" }
                    )
                }
            }
        };
        let unfinished: Vec<FlowId> = (0..self.flow_count())
            .map(FlowId::from_idx)
            .filter(|&id| self.flow(id).3.is_none() && self.flow(id).0.start <= self.now())
            .collect();
        let shown: Vec<String> = unfinished
            .iter()
            .take(5)
            .map(|&id| {
                let spec = self.flow(id).0;
                format!(
                    "flow {} (host {} to host {}, {} of {} B acknowledged)",
                    id.0,
                    spec.src,
                    spec.dst,
                    self.flow_acked(id),
                    spec.size.0
                )
            })
            .collect();
        text += &format!(
            "; {} started flow{} unfinished{}{}",
            unfinished.len(),
            if unfinished.len() == 1 { "" } else { "s" },
            if shown.is_empty() { "" } else { ": " },
            shown.join(", ")
        );
        if unfinished.len() > shown.len() {
            text += ", ...";
        }
        text
    }
    /// Packets dropped, by reason.
    pub fn drops(&self) -> Vec<(DropReason, u64)> {
        let mut all = self.shards[0].drops();
        for s in &self.shards[1..] {
            for (a, (_, n)) in all.iter_mut().zip(s.drops()) {
                a.1 += n;
            }
        }
        all
    }
    /// Flows finished so far.
    pub fn flows_done(&self) -> usize {
        self.shards.iter().map(|s| s.flows_done()).sum()
    }
    /// Flows started so far (a waiting flow once released).
    pub fn flows_started(&self) -> usize {
        self.shards.iter().map(|s| s.flows_started()).sum()
    }
    /// When flow `id` started: its start time, or for a flow that waits for others when it was released
    /// (`None` before).
    pub fn flow_start(&self, id: FlowId) -> Option<Time> {
        self.of_flow(id).flow_start(id)
    }
    /// Number of flows.
    pub fn flow_count(&self) -> usize {
        self.shards[0].flow_count()
    }
    /// The topology.
    pub fn topology(&self) -> &Topology {
        self.shards[0].topology()
    }
    /// The parameters.
    pub fn params(&self) -> &SimParams {
        self.shards[0].params()
    }
    /// The context controllers are created with (BDP, base RTT).
    pub fn flow_context(&self) -> FlowContext {
        self.shards[0].flow_context()
    }
    /// One flow's outcome: its spec, its 5-tuple ports, and when it finished.
    pub fn flow(&self, id: FlowId) -> (&FlowSpec, u16, u16, Option<Time>) {
        self.of_flow(id).flow(id)
    }
    /// Payload bytes of flow `id` acknowledged so far (its size once finished, 0 before it starts).
    pub fn flow_acked(&self, id: FlowId) -> u64 {
        self.of_flow(id).flow_acked(id)
    }
    /// Flow `id`'s congestion window and pacing rate while it sends (`Shard::flow_cc`).
    pub fn flow_cc(&self, id: FlowId) -> Option<(Option<u64>, Option<Rate>)> {
        self.of_flow(id).flow_cc(id)
    }
    /// The forward (data) and reverse (ACK) paths of flow `id` under flow-level ECMP, as ports in order.
    pub fn flow_paths(&self, id: FlowId) -> (Vec<PortId>, Vec<PortId>) {
        let (mut fwd, mut rev) = (Vec::new(), Vec::new());
        self.flow_paths_into(id, &mut fwd, &mut rev);
        (fwd, rev)
    }
    /// [`Sim::flow_paths`] written into `fwd` and `rev` (cleared first), so that a caller walking every flow
    /// reuses two vectors.
    pub fn flow_paths_into(&self, id: FlowId, fwd: &mut Vec<PortId>, rev: &mut Vec<PortId>) {
        self.shards[0].flow_paths_into(id, fwd, rev)
    }
    /// Rate and delay (propagation plus the receiving switch's processing delay) of the link leaving `port`.
    pub fn port_link(&self, port: PortId) -> (Rate, Time) {
        self.shards[0].port_link(port)
    }
    /// Bytes transmitted on `port`'s link so far.
    pub fn port_tx_bytes(&self, port: PortId) -> u64 {
        self.of_port(port).port_tx_bytes(port)
    }
    /// Bytes serialized onto `port`'s link by now (`Shard::port_serialized_bytes`).
    pub fn port_serialized_bytes(&self, port: PortId) -> f64 {
        self.of_port(port).port_serialized_bytes(port)
    }
    /// Packets that arrived at switch egress port `port`'s queues so far, every kind, and those of them its
    /// buffer dropped (`None` for a host's port).
    pub fn port_arrivals(&self, port: PortId) -> Option<(u64, u64)> {
        self.of_port(port).port_arrivals(port)
    }
    /// The most packets that were alive at once in one shard, added over shards (an upper bound on the most
    /// alive at once in the run; exact with one shard).
    pub fn peak_packets(&self) -> usize {
        self.shards.iter().map(|s| s.peak_packets()).sum()
    }
    /// Number of switches.
    pub fn switch_count(&self) -> usize {
        self.shards[0].switch_count()
    }
    /// The node of switch `s`.
    pub fn switch_node(&self, s: usize) -> NodeId {
        self.shards[0].switch_node(s)
    }
    /// The buffer of switch `s` (occupancy per switch, pool, port and queue).
    pub fn switch_mmu(&self, s: usize) -> &Mmu {
        self.of_switch(s).switch_mmu(s)
    }
    /// BCC's shared-buffer RED of each buffer pool of switch `s` (empty unless `switch.ecn.shared` is on).
    pub fn shared_ecn(&self, s: usize) -> &[PoolMarking] {
        self.of_switch(s).shared_ecn(s)
    }
    /// Bytes waiting in queue `q` of switch egress `port` (not counting the packet being serialized).
    pub fn egress_queue_bytes(&self, port: PortId, q: usize) -> u64 {
        self.of_port(port).egress_queue_bytes(port, q)
    }
    /// Bytes waiting in queue `q` of switch egress `port`, and whether it is paused (`Shard::egress_queue`).
    pub fn egress_queue(&self, port: PortId, q: usize) -> (u64, bool) {
        self.of_port(port).egress_queue(port, q)
    }
    /// Active flows at switch egress `port` (`Shard::port_active_flows`).
    pub fn port_active_flows(&self, port: PortId) -> Option<u32> {
        self.of_port(port).port_active_flows(port)
    }
    /// The state of each queue of switch egress `port` now (`Shard::port_queues`).
    pub fn port_queues(&self, port: PortId) -> Option<Vec<QueueState>> {
        self.of_port(port).port_queues(port)
    }
    /// The data queue index of class `class`'s first queue at switch ports.
    pub fn data_queue(&self, class: u8) -> usize {
        self.shards[0].data_queue(class)
    }
    /// The switch queue flow `id`'s data packets join at every switch port.
    pub fn flow_queue(&self, id: FlowId) -> usize {
        self.shards[0].flow_queue(id)
    }
    /// Per-hop flow control counts so far.
    pub fn hop_stats(&self) -> HopStats {
        let mut all = HopStats::default();
        let mut first: Option<(Time, usize, String)> = None;
        for s in &self.shards {
            let h = s.hop_stats();
            if let (Some(at), Some(text)) = (s.first_alarm_at(), h.first_alarm.clone())
                && first.as_ref().is_none_or(|f| (at.0, at.1) < (f.0, f.1))
            {
                first = Some((at.0, at.1, text));
            }
            all = all + h;
        }
        all.first_alarm = first.map(|f| f.2);
        all
    }
    /// Time `port`'s link spent paused so far (per-hop flow control), `None` if it never runs.
    pub fn link_paused_time(&self, port: PortId) -> Option<Time> {
        self.of_port(port).link_paused_time(port)
    }
    /// `Shard::port_pause_times` of the shard owning `port`.
    pub fn port_pause_times(&self, port: PortId) -> Option<(Time, Vec<Time>)> {
        self.of_port(port).port_pause_times(port)
    }
    /// Time each data packet waited in each switch egress queue, in picoseconds.
    pub fn queuing_delay(&self) -> LogHistogram {
        self.merged(|s| s.queuing_delay())
    }
    /// The same for the packets of one-packet flows.
    pub fn single_packet_delay(&self) -> LogHistogram {
        self.merged(|s| s.single_packet_delay())
    }
    fn merged(&self, of: impl Fn(&Shard) -> &LogHistogram) -> LogHistogram {
        let mut all = LogHistogram::new();
        self.shards.iter().for_each(|s| all.merge(of(s)));
        all
    }
    /// Forgets the queuing delays recorded so far (the measurement window opens).
    pub fn reset_queuing_delay(&mut self) {
        self.shards.iter_mut().for_each(Shard::reset_queuing_delay);
    }
    /// The running scheme's state in the shard that owns switch `s`, if the scheme is an `S`.
    pub fn scheme_at_switch<S: Describe>(&self, s: usize) -> Option<&S> {
        self.of_switch(s).scheme().get()
    }
    /// The running scheme's state in the shard that owns `port`, if the scheme is an `S`.
    pub fn scheme_at_port<S: Describe>(&self, port: PortId) -> Option<&S> {
        self.of_port(port).scheme().get()
    }
    /// The running scheme's state in every shard, if the scheme is an `S`.
    pub fn schemes<S: Describe>(&self) -> Option<Vec<&S>> {
        self.shards.iter().map(|s| s.scheme().get()).collect()
    }
    /// The running scheme's counts so far, every shard's added up, if the scheme is an `S`.
    pub fn scheme_stats<S: Describe>(&self) -> Option<S::Stats> {
        let all = self.schemes::<S>()?;
        Some(
            all.iter()
                .fold(S::Stats::default(), |sum, s| sum + s.stats()),
        )
    }
    /// Headers switch `s` recirculated so far, if the running scheme's switches recirculate
    /// ([`Describe::recirculations`]).
    pub fn recirculations(&self, s: usize) -> Option<u64> {
        self.of_switch(s).scheme().recirculations(s)
    }
    /// Keeps the log of drops, timeouts and pauses from now on ([`Logged`]; for a timeline view of the run).
    pub fn keep_log(&mut self) {
        self.shards.iter_mut().for_each(Shard::keep_log);
    }
    /// The log kept so far, every shard's, in time order (ties in a fixed order, whatever the threads); `None`
    /// unless [`Sim::keep_log`] was called.
    pub fn log(&self) -> Option<Vec<Logged>> {
        let mut all = Vec::new();
        for shard in &self.shards {
            all.extend_from_slice(shard.log()?);
        }
        all.sort_unstable_by_key(|e| (e.at(), *e));
        Some(all)
    }
    /// Runs the fabric events of `plan` ([`crate::faults`]), compiled on this run's topology. Call before the
    /// run starts; changes due before then apply at its start.
    pub fn with_fabric_events(&mut self, plan: crate::faults::FaultPlan) {
        let plan = std::sync::Arc::new(plan);
        self.shards
            .iter_mut()
            .for_each(|s| s.install_faults(plan.clone()));
    }

    /// Per fabric event (by index), over every shard: the packets it lost, and those that joined a down port's
    /// queue after routing knew ([`Sim::with_fabric_events`]; `None` without events).
    pub fn fabric_event_counts(&self) -> Option<(Vec<u64>, Vec<u64>)> {
        let mut total: Option<(Vec<u64>, Vec<u64>)> = None;
        for s in &self.shards {
            let Some((drops, queued)) = s.fault_counts() else {
                continue;
            };
            let t = total.get_or_insert_with(|| (vec![0; drops.len()], vec![0; queued.len()]));
            t.0.iter_mut().zip(drops).for_each(|(a, b)| *a += b);
            t.1.iter_mut().zip(queued).for_each(|(a, b)| *a += b);
        }
        total
    }

    /// Records every hop of `flows`' packets, and every transmission on their senders' links, from now on, and
    /// keeps the log ([`Sim::keep_log`]): for `bfcsim run --explain-flow`. Changes nothing the run does.
    pub fn explain(&mut self, flows: &[FlowId]) {
        self.shards.iter_mut().for_each(|s| s.explain(flows));
    }
    /// The hops [`Sim::explain`] recorded, every shard's, in time order (ties in a fixed order, whatever the
    /// threads).
    pub fn explained(&self) -> Vec<HopRecord> {
        let mut all: Vec<HopRecord> = self
            .shards
            .iter()
            .flat_map(|s| s.explained().iter().copied())
            .collect();
        all.sort_unstable_by_key(|h| (h.start, h.port, h.kind.code(), h.flow, h.seq, h.sent_at));
        all
    }
    /// The running scheme's own time series at switch `s` ([`Describe::trace`]): `(series, local port, value)`.
    pub fn scheme_trace(&self, s: usize, out: &mut dyn FnMut(&'static str, Option<u32>, f64)) {
        self.of_switch(s).scheme().trace(s, out)
    }
    /// Switch `s`'s state in the running scheme's hardware design, if it has one ([`Describe::hardware`]).
    pub fn switch_hardware(&self, s: usize) -> Option<SwitchHardware> {
        self.of_switch(s).scheme().hardware(s)
    }
    /// Every pause and resume frame received so far, if the running scheme logs them
    /// ([`Describe::pause_records`]: PFC, for HPCC's `pfc.txt`).
    pub fn pause_records(&self) -> Option<Vec<PauseRecord>> {
        let schemes: Vec<&AnyScheme> = self.shards.iter().map(Shard::scheme).collect();
        AnyScheme::pause_records(&schemes)
    }
    /// The running scheme's own report ([`Describe::report`]) of the run so far.
    pub fn scheme_report(&self) -> Option<SchemeReport> {
        let schemes: Vec<&AnyScheme> = self.shards.iter().map(Shard::scheme).collect();
        AnyScheme::report(&schemes)
    }

    // ----------------------------------------------------------------------------------------------------
    // Invariants

    /// Checks the end-of-run invariants: every injected packet and byte is delivered, dropped with a reason
    /// or still somewhere in the network (NIC, queue, wire or between shards); no buffer went over its
    /// capacity; no counter went negative; each switch's occupancy equals what its queues hold. Returns every
    /// violation found.
    pub fn check_invariants(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .shards
            .iter()
            .flat_map(Shard::local_violations)
            .collect();
        let c = self.counters();
        let (mut pkts, mut bytes) = (0u64, 0u64);
        for s in &self.shards {
            let (p, b) = s.census();
            pkts += p;
            bytes += b;
        }
        if c.injected_pkts != c.delivered_pkts + c.dropped_pkts + pkts {
            v.push(format!(
                "packets: {} injected != {} delivered + {} dropped + {pkts} in flight",
                c.injected_pkts, c.delivered_pkts, c.dropped_pkts
            ));
        }
        if c.injected_bytes != c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes + bytes {
            v.push(format!(
                "bytes: {} injected != {} delivered + {} dropped + {} trimmed + {bytes} in flight",
                c.injected_bytes, c.delivered_bytes, c.dropped_bytes, c.trimmed_bytes
            ));
        }
        v
    }
}

/// Where the shards meet between windows: a slot per shard for each of two alternating rounds (a shard writes
/// round r + 1's slot while slower ones may still read round r's; it cannot reach round r + 2 before every
/// shard has finished reading round r, since that takes everyone at round r + 1's barrier), and a barrier.
struct Board {
    slots: [Vec<Mutex<Slot>>; 2],
    /// A shard's thread panicked: the others must not wait for it at the barrier.
    failed: AtomicBool,
    arrived: AtomicUsize,
    generation: AtomicU64,
    n: usize,
}

/// What a shard posts after a window.
#[derive(Default)]
struct Slot {
    /// Parcels by destination shard (each destination drains its own).
    parcels: Vec<Mail>,
    /// Parcels posted in all (read-only once posted, unlike `parcels`).
    sent: usize,
    /// The earliest of the shard's pending events and of its parcels' arrivals.
    next: Time,
    /// Flows the shard has finished.
    done: usize,
    /// Nothing but watchdogs pending at the shard.
    idle: bool,
}

impl Board {
    fn new(n: usize) -> Board {
        let slot = || {
            Mutex::new(Slot {
                parcels: (0..n).map(|_| Mail::default()).collect(),
                next: Time::MAX,
                ..Slot::default()
            })
        };
        Board {
            slots: [
                (0..n).map(|_| slot()).collect(),
                (0..n).map(|_| slot()).collect(),
            ],
            failed: AtomicBool::new(false),
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            n,
        }
    }

    /// Waits until every shard has arrived: spins briefly (windows are short and shards finish close together),
    /// then yields the core.
    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(generation + 1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            assert!(
                !self.failed.load(Ordering::Relaxed),
                "another shard of the run failed"
            );
            if spins < 2000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// What every shard's thread shares in one call of [`Sim::run_windows`].
#[derive(Clone, Copy)]
struct Rounds<'a> {
    board: &'a Board,
    lookahead: Time,
    limit: Time,
    /// The earliest pending event anywhere: where the first window starts.
    first: Time,
    /// Flows in the whole run.
    flows: usize,
    /// Set by every shard once the run is over (all flows finished, or nothing left to happen).
    over: &'a AtomicBool,
}

impl Rounds<'_> {
    /// Shard `me`'s side of the rounds: runs each window, posts its parcels, next event and progress on the
    /// board, waits for the others, and then reads every shard's post: all reach the same decision on the next
    /// window and on whether the run is over.
    fn run(self, me: usize, shard: &mut Shard) {
        let board = self.board;
        let _guard = FailGuard(&board.failed);
        let (mut t0, mut round, mut inbox) = (self.first, 0usize, Mail::default());
        while t0 <= self.limit {
            // No lookahead (one shard only): one window up to the limit.
            let end = match self.lookahead {
                Time::ZERO => self.limit,
                l => Time(t0.0.saturating_add(l.0 - 1)).min(self.limit),
            };
            shard.run_window(end);
            let slots = &board.slots[round % 2];
            {
                let mut post = slots[me].lock().expect("no shard panicked");
                for (to, mail) in post.parcels.iter_mut().enumerate() {
                    shard.take_outbox(to, mail);
                }
                post.sent = post.parcels.iter().map(Mail::len).sum();
                post.next = post
                    .parcels
                    .iter()
                    .map(Mail::earliest)
                    .fold(shard.next_event(), Time::min);
                post.done = shard.flows_done();
                post.idle = shard.idle();
            }
            board.wait();
            let (mut next, mut done, mut idle) = (Time::MAX, 0, true);
            for slot in slots {
                let mut post = slot.lock().expect("no shard panicked");
                inbox.take_all(&mut post.parcels[me]);
                next = next.min(post.next);
                done += post.done;
                idle &= post.idle && post.sent == 0;
            }
            shard.accept(&mut inbox);
            round += 1;
            if done == self.flows || idle {
                self.over.store(true, Ordering::Relaxed);
                break;
            }
            t0 = next;
        }
    }
}

/// Marks the board failed if its thread unwinds from a panic, so that the other shards stop waiting for it and
/// the panic reaches the caller instead of a hang.
struct FailGuard<'a>(&'a AtomicBool);

impl Drop for FailGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
