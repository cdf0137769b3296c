//! Running an experiment: build the fabric, generate or read the flows (refusing a run whose estimated demands
//! exceed `[limits]`), drive the engine in slices (sampling switch buffers between slices), then turn the
//! outcome into flow records and a summary ([`crate::outputs`] writes the files).

use std::path::Path;
use std::time::Instant;

use rustc_hash::FxHashMap;
use serde::Serialize;

use bfcsim_core::{FlowId, FlowSpec, LogHistogram, PortId, Time};
use bfcsim_metrics::{
    ActiveFlowsReport, BudgetReport, BufferOccupancy, DelayReport, FlowControlReport, FlowRecord,
    Hop, Ideal, LinkUsage, LinkUtilization, LongFlowReport, NodePausedReport, PathProfile,
    PeakRate, QueuePausedReport, Summary, SummaryConfig, SwitchUsage,
};
use bfcsim_net::routing::Routes;
use bfcsim_net::topology::NodeKind;
use bfcsim_net::{LinkSet, Topology};
use bfcsim_schemes::fabric::PauseRecord;
use bfcsim_sim::{Counters, FlowControl, Notify, Sim, SimParams};
use bfcsim_workload::{
    Framing, HostSet, LoadCounts, WorkloadError, generate_at_most, load_connection_matrix,
    load_flow_file, long_lived, plan,
};

use crate::collectives::{Collectives, Origin};
use crate::experiment::{ExperimentConfig, FlowFormat, NotifyConfig};
use crate::limits::Demand;
use crate::load::{Pattern, load_basis};

/// The fabric and the flows of an experiment, before simulation.
pub struct Prepared {
    /// The topology.
    pub topology: Topology,
    /// Its routing tables, computed once for the workload's load basis and the engine.
    pub routes: Routes,
    /// Flows sorted by start time.
    pub flows: Vec<FlowSpec>,
    /// The long-lived flows among them (`[[workload.long_lived]]`), whose throughput is reported.
    pub long_lived: Vec<FlowId>,
    /// Offered-load information for `run.json` (background rate, incast periods), when synthetic.
    pub plan: Option<String>,
    /// The workload's collectives, whose flows wait for each other.
    pub collectives: Option<Collectives>,
    /// The fabric events' timeline (`[[events]]`, and the loss of an imported topology's links with an error
    /// rate), when the experiment has any.
    pub faults: Option<bfcsim_sim::faults::FaultPlan>,
    /// Those events, by the index the timeline counts them under.
    pub events: Vec<crate::events::EventConfig>,
}

/// Builds the topology and the flow list of `config`; relative paths resolve against `base`. The run is
/// refused before anything large is allocated when its estimated demands exceed `config.limits`
/// ([`crate::limits`]).
pub fn prepare(config: &ExperimentConfig, base: &Path) -> Result<Prepared, String> {
    let threads = config.run.threads as u64;
    if let Some(size) = config.topology.size() {
        config.limits.check(&Demand {
            nodes: size.nodes,
            hosts: size.hosts,
            threads,
            ..Demand::default()
        })?;
    }
    let topology = config.topology.build(base)?;
    let fabric = Demand {
        nodes: topology.nodes.len() as u64,
        hosts: topology.hosts.len() as u64,
        threads,
        ..Demand::default()
    };
    config.limits.check(&fabric)?;
    // Every host must reach every other; an imported topology may not, and the error belongs to its file.
    let routes =
        Routes::new(&topology).map_err(|e| format!("{}: {e}", config.topology.source(base)))?;
    let mut prepared = match &config.flows {
        Some(f) if f.format() == FlowFormat::Htsim => {
            let m = load_connection_matrix(base.join(&f.file), &topology.hosts)
                .map_err(|e| e.to_string())?;
            let notify = match f.notify {
                Some(NotifyConfig::Path) => Notify::Path,
                Some(NotifyConfig::Instant) | None => Notify::Instant,
            };
            let (flows, collectives) = crate::collectives::triggered(m, notify);
            Prepared {
                topology,
                routes,
                flows,
                long_lived: Vec::new(),
                plan: None,
                collectives,
                faults: None,
                events: Vec::new(),
            }
        }
        Some(f) => {
            let is_host: Vec<bool> = (0..topology.nodes.len())
                .map(|n| topology.is_host(bfcsim_core::NodeId::from_idx(n)))
                .collect();
            let file = load_flow_file(base.join(&f.file), &is_host).map_err(|e| e.to_string())?;
            Prepared {
                topology,
                routes,
                flows: file.flows,
                long_lived: Vec::new(),
                plan: None,
                collectives: None,
                faults: None,
                events: Vec::new(),
            }
        }
        None => synthetic(config, base, topology, routes, &fabric)?,
    };
    let flows = Demand {
        flows: prepared.flows.len() as f64,
        samples: samples(config, &prepared),
        ..fabric
    };
    config.limits.check(&flows)?;
    prepared.flows.shrink_to_fit();
    prepared.events = config.events.clone();
    prepared
        .events
        .extend(crate::events::from_error_rates(&prepared.topology));
    prepared.faults = fault_plan(config, &prepared)?;
    Ok(prepared)
}

/// The timeline of the prepared events on the prepared fabric.
fn fault_plan(
    config: &ExperimentConfig,
    prepared: &Prepared,
) -> Result<Option<bfcsim_sim::faults::FaultPlan>, String> {
    if prepared.events.is_empty() {
        return Ok(None);
    }
    let end = run_limit(config, &prepared.flows);
    let mut changes = Vec::new();
    for (i, e) in prepared.events.iter().enumerate() {
        changes.extend(e.changes(i, &prepared.topology, end)?);
    }
    bfcsim_sim::faults::FaultPlan::new(&prepared.topology, changes)
        .map(Some)
        .map_err(|e| format!("[[events]]: {e}"))
}

/// When a run of `flows` (sorted by start) stops at the latest: `run.max_time`, or a second after the last start.
fn run_limit(config: &ExperimentConfig, flows: &[FlowSpec]) -> Time {
    let last = flows.last().map_or(Time::ZERO, |f| f.start);
    config
        .run
        .max_time
        .unwrap_or(last.saturating_add(Time::from_secs(1)))
}

/// Buffer samples over the arrival window: one per switch every `run.sample_interval`.
fn samples(config: &ExperimentConfig, prepared: &Prepared) -> f64 {
    let first = prepared.flows.first().map_or(Time::ZERO, |f| f.start);
    let last = prepared.flows.last().map_or(Time::ZERO, |f| f.start);
    let window = config.run.max_time.unwrap_or(last).saturating_sub(first);
    let interval = config.run.sample_interval.max(Time::from_ps(1));
    (window.0 as f64 / interval.0 as f64 + 1.0) * prepared.topology.switch_count() as f64
}

/// The flows of `config`'s `[workload]` on `topology`, at most as many as `config.limits` leaves room for
/// beside the `fabric`.
fn synthetic(
    config: &ExperimentConfig,
    base: &Path,
    topology: Topology,
    routes: Routes,
    fabric: &Demand,
) -> Result<Prepared, String> {
    let spec = config
        .workload
        .as_ref()
        .expect("validated: a workload or a flow file");
    let set = LinkSet::parse(&spec.load_on).map_err(|e| format!("workload.load_on: {e}"))?;
    let subsets = spec
        .subsets(topology.hosts.len())
        .map_err(|e| e.to_string())?;
    let pattern = match (&subsets, spec.partition) {
        (Some((sources, destinations)), _) => Pattern::Between {
            sources,
            destinations,
        },
        (None, Some(size)) => Pattern::Blocks {
            size: size.max(1) as usize,
        },
        (None, None) => Pattern::AllToAll {
            locality: spec.locality,
        },
    };
    let basis = if spec.needs_load_basis() {
        let framing = Framing {
            payload: u64::from(config.nic.payload),
            header: u64::from(config.nic.header),
        };
        Some(load_basis(&topology, &routes, &set, pattern, framing)?)
    } else {
        None
    };
    let cdf = spec.size_cdf(base).map_err(|e| e.to_string())?;
    let p = plan(spec, cdf.as_ref(), basis.as_ref()).map_err(|e| e.to_string())?;
    let racks = topology.racks();
    let link_bps: Vec<f64> = topology
        .hosts
        .iter()
        .map(|&h| {
            let port = topology.nodes[h.idx()].ports[0];
            topology.link_of(port).rate.bps() as f64
        })
        .collect();
    let hosts = HostSet {
        ids: &topology.hosts,
        racks: &racks,
        link_bps: &link_bps,
    };
    let most = config.limits.max_flows(fabric);
    let flows = generate_at_most(
        spec,
        cdf.as_ref(),
        &hosts,
        basis.as_ref(),
        config.seed,
        most,
    )
    .map_err(|e| match e {
        WorkloadError::TooManyFlows { expected, .. } => {
            let demand = Demand {
                flows: expected,
                ..*fabric
            };
            config
                .limits
                .check(&demand)
                .err()
                .unwrap_or_else(|| e.to_string())
        }
        e => e.to_string(),
    })?;
    let mut offered = Vec::new();
    if let (Some(cdf), Some(basis)) = (&cdf, &basis) {
        let on_wire = match spec.load_counts {
            LoadCounts::Payload => String::new(),
            LoadCounts::Wire => {
                let f = basis.framing;
                let wire = cdf.mean() + f.header as f64 * cdf.mean_packets(f.payload);
                format!(", {wire:.0} B on the wire, which the load counts")
            }
        };
        offered.push(format!(
            "{:.4e} background flows/s (mean size {:.0} B{on_wire}, {:.3} `{}` links crossed per flow)",
            p.background_rate,
            cdf.mean(),
            basis.background_crossings,
            set
        ));
    }
    if !p.incast_periods.is_empty() {
        let periods: Vec<String> = p.incast_periods.iter().map(Time::to_string).collect();
        offered.push(format!("incast periods {}", periods.join(", ")));
    }
    for (i, g) in spec.group.iter().enumerate() {
        let n = flows.iter().filter(|f| f.group == Some(i as u16)).count();
        offered.push(format!("group `{}`: {n} flows", g.name));
    }
    // Long-lived flows join the generated ones; a stable sort keeps generation order among equal starts.
    let long = long_lived(spec, &topology.hosts).map_err(|e| e.to_string())?;
    if !long.is_empty() {
        offered.push(format!("{} long-lived flows", long.len()));
    }
    let tagged: Vec<(FlowSpec, Origin)> = flows
        .into_iter()
        .map(|f| (f, Origin::Generated))
        .chain(long.into_iter().map(|f| (f, Origin::LongLived)))
        .collect();
    let coll = match spec.collective.as_slice() {
        [] => None,
        specs => {
            let nic = (config.nic.payload, config.nic.header);
            let (c, infos) = crate::collectives::generate(specs, &topology, nic, config.seed)
                .map_err(|e| format!("workload.collective: {e}"))?;
            for (s, i) in specs.iter().zip(&infos) {
                offered.push(format!(
                    "collective `{}`: {} {} over {} ranks, {} a rank, {} iterations",
                    s.name, i.algorithm, i.kind, i.ranks, s.size, s.iterations
                ));
            }
            Some((c, infos))
        }
    };
    let (flows, origins) = crate::collectives::sorted(tagged, coll.as_ref().map(|(c, _)| c));
    let long_lived = (0..origins.len())
        .filter(|&i| origins[i] == Origin::LongLived)
        .map(FlowId::from_idx)
        .collect();
    let collectives = coll.map(|(c, infos)| crate::collectives::join(&c, infos, &origins));
    if offered.is_empty() {
        offered.push(format!(
            "nothing (workload.load = {}, and no incast, group, long-lived or collective flows)",
            spec.load
        ));
    }
    let plan = offered.join(", ");
    Ok(Prepared {
        topology,
        routes,
        flows,
        long_lived,
        plan: Some(plan),
        collectives,
        faults: None,
        events: Vec::new(),
    })
}

/// What `config` asks for that it may not mean, for a run of `flows` flows: an overloaded workload, or none.
fn config_warnings(config: &ExperimentConfig, flows: usize) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(spec) = config.workload.as_ref().filter(|w| w.load > 1.0) {
        warnings.push(format!(
            "workload.load = {} offers more than the `{}` links carry: their queues, drops and FCTs grow with \
             the run's length instead of settling",
            spec.load, spec.load_on
        ));
    }
    if flows == 0 {
        warnings.push("the run has no flows: it measures nothing".to_string());
    }
    warnings
}

/// Every switch's ports (its egress ports), switch by switch.
pub(crate) fn every_switch_port(sim: &Sim) -> impl Iterator<Item = PortId> + '_ {
    (0..sim.switch_count()).flat_map(|s| {
        sim.topology().nodes[sim.switch_node(s).idx()]
            .ports
            .iter()
            .copied()
    })
}

/// What a finished run produced.
pub struct Outcome {
    /// One record per flow, in flow order.
    pub records: Vec<FlowRecord>,
    /// HPCC's `standalone_fct` of each flow, for the `fct.txt` HPCC's scripts read.
    pub hpcc_ideal: Vec<Time>,
    /// The summary (slowdown table, drops, buffer occupancy, link utilization).
    pub summary: Summary,
    /// Packet and event counts.
    pub counters: Counters,
    /// End-of-run invariant violations (empty on a sound run).
    pub violations: Vec<String>,
    /// Simulated time at the end.
    pub end: Time,
    /// Wall-clock seconds spent simulating.
    pub wall_secs: f64,
    /// The line-rate-start window every flow began with.
    pub bdp: u64,
    /// The fabric's largest base RTT.
    pub base_rtt: Time,
    /// Largest number of packets alive at once (memory high-water of the packet slab).
    pub peak_packets: usize,
    /// Every pause and resume frame received, by time (then node and port), when the scheme logs them (PFC:
    /// HPCC's `pfc.txt`).
    pub pause_records: Option<Vec<PauseRecord>>,
    /// BCC's shared-buffer ECN/RED thresholds of every switch pool, when on (for `run.json`).
    pub shared_ecn: Vec<SharedEcnReport>,
    /// Threads (shards) the run was split over (`run.threads`, or one when it cannot be split).
    pub threads: usize,
    /// The run's fingerprint ([`Sim::fingerprint`]).
    pub fingerprint: u64,
    /// What `[trace]` recorded.
    pub trace: Option<crate::trace::Recorded>,
    /// Where the completion times of the flows asked about went ([`simulate_explaining`]).
    pub explained: Option<crate::explain::Report>,
    /// Why the run ended early: no progress for `run.stall_after` (or nothing left to happen) while flows
    /// remained, with the diagnosis ([`Sim::stall_diagnosis`]).
    pub stalled: Option<String>,
    /// What the run did that its configuration may not have meant (a bound too short for the fabric).
    pub warnings: Vec<String>,
}

/// Told when the simulation loop (what [`Outcome::wall_secs`] times) begins and ends: `bfcsim bench` counts the
/// loop's instructions with it, so that building the engine, the ideal FCTs and the summary stay out of the
/// count as they stay out of the time.
pub trait LoopProbe {
    /// Just before the first slice.
    fn start(&mut self);
    /// Just after the last.
    fn stop(&mut self);
}

/// No probe.
impl LoopProbe for () {
    fn start(&mut self) {}
    fn stop(&mut self) {}
}

/// Simulates `prepared` under `config`, calling `progress` after every slice.
pub fn simulate(
    config: &ExperimentConfig,
    prepared: Prepared,
    progress: impl FnMut(&Sim),
) -> Result<Outcome, String> {
    simulate_probed(config, prepared, progress, &mut ())
}

/// [`simulate`], with `probe` told when the simulation loop begins and ends.
pub fn simulate_probed(
    config: &ExperimentConfig,
    prepared: Prepared,
    progress: impl FnMut(&Sim),
    probe: &mut impl LoopProbe,
) -> Result<Outcome, String> {
    simulate_explaining(config, prepared, &[], progress, probe)
}

/// [`simulate_probed`], recording every hop of the packets of `explain` (flow ids) to say where their
/// completion times went ([`Outcome::explained`], [`crate::explain`]). The run is the same either way.
pub fn simulate_explaining(
    config: &ExperimentConfig,
    prepared: Prepared,
    explain: &[FlowId],
    mut progress: impl FnMut(&Sim),
    probe: &mut impl LoopProbe,
) -> Result<Outcome, String> {
    let params = SimParams {
        switch: config.switch.clone(),
        nic: config.nic,
        cc: config.cc.clone(),
        flow_control: config.flow_control.clone(),
        seed: config.seed,
    };
    let Prepared {
        topology,
        routes,
        flows,
        long_lived,
        collectives,
        faults,
        events,
        ..
    } = prepared;
    let racks = topology.racks();
    let first = flows.first().map_or(Time::ZERO, |f| f.start);
    let limit = run_limit(config, &flows);
    let interval = config.run.sample_interval;
    if let Some(bad) = explain.iter().find(|f| f.idx() >= flows.len()) {
        return Err(format!(
            "--explain-flow {}: the run has {} flows (ids 0 to {})",
            bad.0,
            flows.len(),
            flows.len().saturating_sub(1)
        ));
    }
    let deps = collectives.as_ref().map(|c| c.deps.clone());
    let mut sim =
        Sim::with_dependencies(topology, routes, &flows, deps, params, config.run.threads)?;
    if let Some(plan) = faults {
        sim.with_fabric_events(plan);
    }
    if !explain.is_empty() {
        sim.explain(explain);
    }
    // Start times, to tell a stuck run from one waiting for its next flow.
    let starts: Vec<Time> = flows.iter().map(|f| f.start).collect();
    // The engine keeps its own copy of every flow.
    drop(flows);
    let base_rtt = sim.flow_context().base_rtt;
    let stall_after = crate::experiment::stall_bound(config.run.stall_after, base_rtt);
    let mut warnings = config_warnings(config, starts.len());
    if sim.shard_count() < config.run.threads {
        warnings.push(format!(
            "run.threads = {}, but the run used {} (a run splits only over links that have a delay, into at \
             most one part per switch, and not with switch.drop_notification); run.json's `threads` says what ran",
            config.run.threads,
            sim.shard_count()
        ));
    }
    let nic = &config.nic;
    if base_rtt > nic.transport.rto_max {
        warnings.push(format!(
            "nic.rto_max ({}) is shorter than the fabric's largest base RTT ({base_rtt}): flows on its longest \
             paths time out before their first ACK can arrive and resend spuriously; raise nic.rto_max (and \
             nic.rto_initial) above it",
            nic.transport.rto_max
        ));
    }
    let (mut last_progress, mut progress_at, mut stalled) = (u64::MAX, first, None);
    let ideals = ideal_fcts(config, &sim, &racks)?;
    let mut occupancy = BufferOccupancy::new(bfcsim_metrics::occupancy::DEFAULT_BIN);
    // Active flows per switch port (BFC §2.3) are sampled on the ports `metrics.active_flows_on` names, or on
    // every switch port under a scheme whose metric it is: each sample scans the packets queued at the port, a
    // cost runs that do not report the metric (the benchmark's DCTCP among them) should not pay.
    // `None`: no sampling; `Some(None)`: every switch port; `Some(Some(set))`: the switch ports of `set`.
    let sampled = match (&config.metrics.active_flows_on, &config.flow_control) {
        (Some(text), _) => Some(Some(
            LinkSet::parse(text).map_err(|e| format!("metrics.active_flows_on: {e}"))?,
        )),
        (None, fc) if fc.samples_active_flows() => Some(None),
        (None, _) => None,
    };
    let switch_ports: Vec<PortId> = match &sampled {
        None => Vec::new(),
        Some(set) => every_switch_port(&sim)
            .filter(|&p| set.as_ref().is_none_or(|set| sim.topology().in_set(set, p)))
            .collect(),
    };
    if let (Some(Some(set)), true) = (&sampled, switch_ports.is_empty()) {
        return Err(format!(
            "metrics.active_flows_on: no switch port transmits on `{set}`"
        ));
    }
    // Buffer occupancy: each switch's whole buffer, or the queued bytes of the ports `metrics.buffer_on` names.
    let buffer_ports: Option<Vec<PortId>> = match &config.metrics.buffer_on {
        None => None,
        Some(text) => {
            let set = LinkSet::parse(text).map_err(|e| format!("metrics.buffer_on: {e}"))?;
            let topo = sim.topology();
            let ports: Vec<PortId> = every_switch_port(&sim)
                .filter(|&p| topo.in_set(&set, p))
                .collect();
            if ports.is_empty() {
                return Err(format!(
                    "metrics.buffer_on: no switch port transmits on `{set}`"
                ));
            }
            Some(ports)
        }
    };
    let queues = config.switch.total_queues();
    let (mut active, mut active_sum) = (LogHistogram::new(), 0u64);
    let recirculations = |sim: &Sim, s| sim.recirculations(s).unwrap_or(0);
    let mut recirculation_peaks: Vec<PeakRate> = (0..sim.switch_count())
        .map(|s| PeakRate::new(recirculations(&sim, s), first.secs_f64()))
        .collect();
    let mut tracer = match &config.trace {
        Some(cfg) => Some(crate::trace::Tracer::new(cfg, &mut sim, first)?),
        None => None,
    };
    probe.start();
    let started = Instant::now();
    let warmup = config.metrics.warmup;
    // Acknowledged bytes of each long-lived flow when the measurement window opens.
    let mut at_warmup: Option<(Time, Vec<u64>)> = None;
    let open_window = |sim: &mut Sim| {
        sim.reset_queuing_delay();
        let acked = long_lived.iter().map(|&id| sim.flow_acked(id)).collect();
        Some((sim.now(), acked))
    };
    if warmup <= sim.now() {
        at_warmup = open_window(&mut sim);
    }
    let mut guard = crate::limits::MemoryGuard::for_this_machine();
    let mut t = first;
    loop {
        guard.check()?;
        t = (t + interval).min(limit);
        if at_warmup.is_none() && warmup < t {
            t = warmup; // a slice ends exactly where the window opens
        }
        let more = match tracer.as_mut() {
            Some(tracer) => tracer.run_until(&mut sim, t),
            None => sim.run_until(t),
        };
        if at_warmup.is_none() && sim.now() >= warmup {
            at_warmup = open_window(&mut sim);
        }
        for (s, peak) in recirculation_peaks.iter_mut().enumerate() {
            if buffer_ports.is_none() {
                occupancy.add(sim.switch_node(s), sim.switch_mmu(s).total());
            }
            peak.sample(recirculations(&sim, s), t.secs_f64());
        }
        for &p in buffer_ports.iter().flatten() {
            let bytes = (0..queues).map(|q| sim.egress_queue_bytes(p, q)).sum();
            occupancy.add(sim.topology().ports[p.idx()].node, bytes);
        }
        for &p in &switch_ports {
            if let Some(n) = sim.port_active_flows(p) {
                active.record(n as u64);
                active_sum += n as u64;
            }
        }
        progress(&sim);
        let now = sim.now();
        // Flows that wait for others count once released.
        let started = match &collectives {
            Some(_) => sim.flows_started(),
            None => starts.partition_point(|&s| s <= now),
        };
        if sim.progress() != last_progress || sim.flows_done() >= started {
            (last_progress, progress_at) = (sim.progress(), now);
        } else if !more || now - progress_at >= stall_after {
            let why = if more {
                format!("no flow made progress since {progress_at}")
            } else {
                "nothing is left to happen".to_string()
            };
            let bound = match config.run.stall_after {
                Some(_) => format!("run.stall_after = {stall_after}, as set"),
                None => format!(
                    "run.stall_after unset: {stall_after}, the larger of {} and {} of the fabric's largest base RTT",
                    crate::experiment::DEFAULT_STALL_AFTER,
                    crate::experiment::STALL_RTTS
                ),
            };
            stalled = Some(format!(
                "the run stalled at {now}: {why}; {}{}",
                sim.stall_diagnosis(),
                if more {
                    format!(" ({bound}; raise it if flows here may wait longer)")
                } else {
                    String::new()
                }
            ));
            break;
        }
        if !more || t >= limit {
            break;
        }
    }
    let wall_secs = started.elapsed().as_secs_f64();
    probe.stop();
    let end = sim.now();

    let topo = sim.topology();
    let (ideal, hpcc_ideal): (Vec<Time>, Vec<Time>) = ideals.into_iter().unzip();
    let records: Vec<FlowRecord> = (0..sim.flow_count())
        .map(|i| {
            let id = FlowId::from_idx(i);
            let (spec, sport, dport, finish) = sim.flow(id);
            FlowRecord {
                id,
                src: spec.src,
                dst: spec.dst,
                size: spec.size,
                // A waiting flow started when released (never: at the bound it had, and unfinished).
                start: sim.flow_start(id).unwrap_or(spec.start),
                finish,
                ideal: ideal[i],
                incast: spec.incast,
                class: spec.class,
                sport,
                dport,
                group: spec.group,
            }
        })
        .collect();

    let mut summary = Summary::new(
        &records,
        &SummaryConfig {
            buckets: config.metrics.buckets.clone(),
            clamp_slowdown: config.metrics.clamp_slowdown,
        },
        &group_names(config),
    );
    for (reason, n) in sim.drops() {
        if n > 0 || reason.always_reported() {
            summary.drops.add(reason.as_str(), n);
        }
    }
    summary.occupancy = Some(occupancy.report());
    if let Some(c) = &collectives {
        summary.collectives = c.reports(&records);
    }
    if let Some((drops, queued)) = sim.fabric_event_counts() {
        summary.fabric_events = crate::events::reports(&events, &drops, &queued);
    }
    let duration = end.saturating_sub(first).max(Time::from_ps(1));
    let mut links = LinkUtilization::new();
    let mut sets = vec![
        ("host".to_string(), LinkSet::Host),
        ("fabric".into(), LinkSet::Fabric),
    ];
    for text in &config.metrics.utilization_on {
        let set = LinkSet::parse(text).map_err(|e| format!("metrics.utilization_on: {e}"))?;
        if topo.ports_in_set(&set).is_empty() {
            return Err(format!(
                "metrics.utilization_on: the topology has no {text} links"
            ));
        }
        sets.push((text.clone(), set));
    }
    for (name, set) in &sets {
        for p in topo.ports_in_set(set) {
            let (rate, _) = sim.port_link(p);
            links.add(
                name,
                LinkUsage {
                    bytes: bfcsim_core::Bytes(sim.port_tx_bytes(p)),
                    rate,
                    duration,
                },
            );
        }
    }
    summary.links = links.report();
    summary.queuing_delay = Some(DelayReport::from_ps(&sim.queuing_delay()));
    if sim.single_packet_delay().count() > 0 {
        summary.single_packet_delay = Some(DelayReport::from_ps(&sim.single_packet_delay()));
    }
    if let Some((opened, acked)) = &at_warmup {
        summary.long_lived = long_lived
            .iter()
            .zip(acked)
            .map(|(&id, &acked_start)| {
                let (spec, _, _, finish) = sim.flow(id);
                let start = (*opened).max(spec.start);
                let stop = finish.unwrap_or(end).min(end);
                let (link, _) = sim.port_link(topo.nodes[spec.src.idx()].ports[0]);
                LongFlowReport::new(
                    (spec.src, spec.dst),
                    (start, acked_start),
                    (stop, sim.flow_acked(id)),
                    link,
                )
            })
            .collect();
    }
    let counters = sim.counters();
    summary.timeouts = counters.timeouts;
    summary.data_packets = counters.data_pkts;
    summary.dropped_data_packets = counters.dropped_data_pkts;
    summary.dropped_packets = counters.dropped_pkts;
    summary.packet_hops = counters.hops;
    summary.duplicate_data = sim.counters().duplicates;
    summary.switch_port_loss = bfcsim_metrics::summary::mean_port_loss(
        topo.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Switch)
            .flat_map(|n| &n.ports)
            .filter_map(|&p| sim.port_arrivals(p)),
    );
    if active.count() > 0 {
        summary.active_flows = Some(ActiveFlowsReport::from_counts(&active, active_sum));
    }
    if config.flow_control != FlowControl::None {
        summary.flow_control = Some(flow_control_report(
            &sim,
            config.flow_control.name(),
            duration,
        ));
    }
    summary.hardware = hardware_budget(config, &sim, duration, &recirculation_peaks);
    let ctx = sim.flow_context();
    let explained = (!explain.is_empty()).then(|| {
        let flows: Vec<FlowRecord> = explain.iter().map(|f| records[f.idx()]).collect();
        let log = sim.log().unwrap_or_default();
        crate::explain::explain(&flows, &sim.explained(), &log, topo)
    });
    Ok(Outcome {
        records,
        hpcc_ideal,
        summary,
        counters: sim.counters(),
        violations: sim.check_invariants(),
        end,
        wall_secs,
        bdp: ctx.bdp.0,
        base_rtt: ctx.base_rtt,
        peak_packets: sim.peak_packets(),
        pause_records: sim.pause_records(),
        shared_ecn: shared_ecn_report(&sim),
        threads: sim.shard_count(),
        fingerprint: sim.fingerprint(),
        stalled,
        warnings,
        trace: tracer.map(|t| t.finish(&sim)),
        explained,
    })
}

/// Every switch pool's shared-buffer ECN/RED thresholds.
fn shared_ecn_report(sim: &Sim) -> Vec<SharedEcnReport> {
    let sim = &sim;
    (0..sim.switch_count())
        .flat_map(|s| {
            sim.shared_ecn(s)
                .iter()
                .enumerate()
                .map(move |(pool, m)| SharedEcnReport {
                    node: sim.switch_node(s).0,
                    pool,
                    b_r: m.b_r.0,
                    kmin: m.red.kmin.0,
                    kmax: m.red.kmax.0,
                    pmax: m.red.pmax,
                })
        })
        .collect()
}

/// Each flow's ideal FCT under `metrics.ideal` and HPCC's (for `fct.txt`), computed before the run so that a
/// flow no run could complete within the range of simulated time is refused with its name, not wrapped.
fn ideal_fcts(
    config: &ExperimentConfig,
    sim: &Sim,
    racks: &[u32],
) -> Result<Vec<(Time, Time)>, String> {
    let format = config.packet_format();
    // One profile and its two port lists, refilled for every flow: allocating them per flow was a third of
    // this pass's instructions.
    let mut scratch = PathScratch::default();
    // A fabric has few distinct path profiles (CLOS-128: two, within a rack and across) and a workload far
    // fewer sizes than flows (about 12,000 among the bench's 175,000), so each (profile, size) is worked out
    // once: the formulas were 40% of this pass's instructions.
    let mut profiles: FxHashMap<PathProfile, u32> = FxHashMap::default();
    let mut known: FxHashMap<(u32, u64), (Time, Time)> = FxHashMap::default();
    (0..sim.flow_count())
        .map(|i| {
            let id = FlowId::from_idx(i);
            let path = scratch.profile(sim, id, racks);
            let (spec, ..) = sim.flow(id);
            let profile = match profiles.get(path) {
                Some(&seen) => seen,
                None => {
                    let fresh = profiles.len() as u32;
                    profiles.insert(path.clone(), fresh);
                    fresh
                }
            };
            if let Some(&fcts) = known.get(&(profile, spec.size.0)) {
                return Ok(fcts);
            }
            let fct = |ideal: Ideal| {
                ideal.fct(path, &format, spec.size).ok_or_else(|| {
                    let slowest = path.hops.iter().map(|h| h.rate).min().expect("a path has hops");
                    let source = match &config.flows {
                        Some(f) => f.file.display().to_string(),
                        None => "workload".into(),
                    };
                    format!(
                        "{source}: flow {i} (host {} to host {}, {} over a {slowest} link) would take longer \
                         than the ~213 days of simulated time bfcsim can count, even alone on the network",
                        spec.src, spec.dst, spec.size
                    )
                })
            };
            let fcts = (fct(config.metrics.ideal)?, fct(Ideal::Hpcc)?);
            known.insert((profile, spec.size.0), fcts);
            Ok(fcts)
        })
        .collect()
}

/// One buffer pool's shared-buffer ECN/RED thresholds (BCC §IV-C), as `run.json` lists them.
#[derive(Clone, Debug, Serialize)]
pub struct SharedEcnReport {
    /// The switch's node id.
    pub node: u32,
    /// The pool, by index in the switch.
    pub pool: usize,
    /// `B_R`, bytes.
    pub b_r: u64,
    /// Marking starts above this pool occupancy, bytes.
    pub kmin: u64,
    /// Every packet is marked above this pool occupancy, bytes.
    pub kmax: u64,
    /// Marking probability just below `kmax`.
    pub pmax: f64,
}

/// The names of the workload's groups, by index.
pub fn group_names(config: &ExperimentConfig) -> Vec<String> {
    config
        .workload
        .iter()
        .flat_map(|w| w.group.iter().map(|g| g.name.clone()))
        .collect()
}

/// Per-hop flow control's counts, and the paused fraction over `duration` of every link that can be paused
/// ([`Sim::link_paused_time`]).
fn flow_control_report(sim: &Sim, kind: &str, duration: Time) -> FlowControlReport {
    let h = sim.hop_stats();
    let topo = sim.topology();
    let links: Vec<(u32, &'static str, f64)> = (0..topo.ports.len())
        .filter_map(|i| {
            let port = PortId::from_idx(i);
            let paused = sim.link_paused_time(port)?;
            let node = topo.ports[i].node;
            let kind = match topo.nodes[node.idx()].kind {
                NodeKind::Switch => "switch",
                NodeKind::Host => "host",
            };
            Some((node.0, kind, paused.0 as f64 / duration.0 as f64))
        })
        .collect();
    let fractions: Vec<f64> = links.iter().map(|l| l.2).collect();
    let mut pauses = std::collections::BTreeMap::new();
    for r in sim.pause_records().unwrap_or_default() {
        if r.pause {
            *pauses.entry(r.node.0).or_insert(0) += 1;
        }
    }
    let first_data = sim.data_queue(0);
    let queue_fractions: Vec<f64> = (0..topo.ports.len())
        .filter_map(|i| sim.port_pause_times(PortId::from_idx(i)))
        .flat_map(|(_, queues)| queues.into_iter().skip(first_data))
        .map(|paused| paused.0 as f64 / duration.0 as f64)
        .collect();
    FlowControlReport {
        kind: kind.to_string(),
        pause_frames: h.pause_frames,
        resume_frames: h.resume_frames,
        refresh_frames: h.refresh_frames,
        frames_lost: h.frames_lost,
        assignments: h.assignments,
        queue_collisions: h.queue_collisions,
        index_collisions: h.index_collisions,
        link_paused_mean: fractions.iter().sum::<f64>() / fractions.len().max(1) as f64,
        link_paused_max: fractions.iter().copied().fold(0.0, f64::max),
        queue_paused: QueuePausedReport::from_fractions(queue_fractions),
        per_node: NodePausedReport::by_node(&links, &pauses),
        watchdog_alarms: h.watchdog_alarms,
        first_alarm: h.first_alarm,
        scheme: sim.scheme_report(),
    }
}

/// The hardware budget of the running scheme's design (BFC §3.3, §4's Tofino2): per switch the state it takes
/// ([`Sim::switch_hardware`]) and its recirculated headers, over `duration` and at the busiest sample interval.
/// `None` unless every switch has a hardware account.
fn hardware_budget(
    config: &ExperimentConfig,
    sim: &Sim,
    duration: Time,
    peaks: &[PeakRate],
) -> Option<BudgetReport> {
    let topo = sim.topology();
    let mut usage = Vec::with_capacity(sim.switch_count());
    for (s, peak) in peaks.iter().enumerate() {
        let hardware = sim.switch_hardware(s)?;
        let node = sim.switch_node(s);
        usage.push(SwitchUsage {
            switch: node,
            capacity_bps: topo.nodes[node.idx()]
                .ports
                .iter()
                .map(|&p| topo.link_of(p).rate.bps() as f64)
                .sum(),
            queues_per_port: config.switch.queues_per_port,
            flow_table_entries: hardware.flow_table_entries,
            pause_counter_entries: hardware.pause_counter_entries,
            recirculations_per_sec: sim.recirculations(s).unwrap_or(0) as f64 / duration.secs_f64(),
            peak_recirculations_per_sec: peak.peak(),
        });
    }
    Some(config.metrics.budget.report(&usage))
}

/// The hop-by-hop profile of a flow's path (data out, ACK back) for its ideal FCT.
pub fn path_profile(sim: &Sim, id: FlowId, racks: &[u32]) -> PathProfile {
    let mut scratch = PathScratch::default();
    scratch.profile(sim, id, racks);
    scratch.path
}

/// A [`PathProfile`] and the port lists it is built from, reused from one flow to the next.
#[derive(Default)]
struct PathScratch {
    fwd: Vec<PortId>,
    rev: Vec<PortId>,
    path: PathProfile,
}

impl PathScratch {
    /// Fills the profile with flow `id`'s path ([`path_profile`]) and returns it.
    fn profile(&mut self, sim: &Sim, id: FlowId, racks: &[u32]) -> &PathProfile {
        sim.flow_paths_into(id, &mut self.fwd, &mut self.rev);
        let hop = |p: &PortId| {
            let (rate, delay) = sim.port_link(*p);
            Hop { rate, delay }
        };
        let (spec, ..) = sim.flow(id);
        let topo = sim.topology();
        let rack = |n| topo.host_index(n).map(|h| racks[h as usize]);
        let path = &mut self.path;
        path.hops.clear();
        path.hops.extend(self.fwd.iter().map(hop));
        path.ack_hops.clear();
        path.ack_hops.extend(self.rev.iter().map(hop));
        path.same_rack = rack(spec.src) == rack(spec.dst);
        &self.path
    }
}
