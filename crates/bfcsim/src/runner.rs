//! Running an experiment: build the fabric, generate or read the flows, drive the engine in slices (sampling
//! switch buffers between slices), then turn the outcome into flow records, a summary and output files.

use std::path::Path;
use std::time::Instant;

use bfcsim_core::{FlowId, FlowSpec, LogHistogram, PortId, Time};
use bfcsim_metrics::{
    ActiveFlowsReport, BufferOccupancy, DelayReport, FlowControlReport, FlowRecord, Hop, Ideal,
    LinkUsage, LinkUtilization, PathProfile, Summary, SummaryConfig, write_atomic, write_fct_csv,
    write_hpcc_fct, write_hpcc_pfc, write_summary_json,
};
use bfcsim_net::pfc::PfcRecord;
use bfcsim_net::routing::Routes;
use bfcsim_net::{LinkSet, Topology};
use bfcsim_sim::{Counters, FlowControl, Sim, SimParams};
use bfcsim_workload::{generate, load_flow_file, plan};
use serde::Serialize;

use crate::experiment::ExperimentConfig;
use crate::load::load_basis;

/// The fabric and the flows of an experiment, before simulation.
pub struct Prepared {
    /// The topology.
    pub topology: Topology,
    /// Flows sorted by start time.
    pub flows: Vec<FlowSpec>,
    /// Offered-load information for `run.json` (background rate, incast periods), when synthetic.
    pub plan: Option<String>,
}

/// Builds the topology and the flow list of `config`; relative paths resolve against `base`.
pub fn prepare(config: &ExperimentConfig, base: &Path) -> Result<Prepared, String> {
    let topology = config.topology.build(base)?;
    if let Some(f) = &config.flows {
        let is_host: Vec<bool> = (0..topology.nodes.len())
            .map(|n| topology.is_host(bfcsim_core::NodeId::from_idx(n)))
            .collect();
        let file = load_flow_file(base.join(&f.file), &is_host).map_err(|e| e.to_string())?;
        return Ok(Prepared {
            topology,
            flows: file.flows,
            plan: None,
        });
    }
    let spec = config
        .workload
        .as_ref()
        .expect("validated: a workload or a flow file");
    let set = LinkSet::parse(&spec.load_on).map_err(|e| format!("workload.load_on: {e}"))?;
    let routes = Routes::new(&topology)?;
    let basis = load_basis(&topology, &routes, &set, spec.locality, spec.receiver)?;
    let cdf = spec.size_cdf(base).map_err(|e| e.to_string())?;
    let p = plan(spec, &cdf, &basis).map_err(|e| e.to_string())?;
    let flows = generate(
        spec,
        &cdf,
        &topology.hosts,
        &topology.racks(),
        &basis,
        config.seed,
    )
    .map_err(|e| e.to_string())?;
    let plan = format!(
        "{:.4e} background flows/s (mean size {:.0} B, {:.3} {:?} links crossed per flow), incast periods {:?}",
        p.background_rate,
        cdf.mean(),
        basis.background_crossings,
        set,
        p.incast_periods
    );
    Ok(Prepared {
        topology,
        flows,
        plan: Some(plan),
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
    /// Every PFC frame received, in event order, when PFC ran (HPCC's `pfc.txt`).
    pub pfc: Option<Vec<PfcRecord>>,
}

/// Simulates `prepared` under `config`, calling `progress` after every slice.
pub fn simulate(
    config: &ExperimentConfig,
    prepared: Prepared,
    mut progress: impl FnMut(&Sim),
) -> Result<Outcome, String> {
    let params = SimParams {
        switch: config.switch.clone(),
        nic: config.nic,
        cc: config.cc.clone(),
        flow_control: config.flow_control.clone(),
        seed: config.seed,
    };
    let Prepared {
        topology, flows, ..
    } = prepared;
    let racks = topology.racks();
    let first = flows.first().map_or(Time::ZERO, |f| f.start);
    let last = flows.last().map_or(Time::ZERO, |f| f.start);
    let limit = config.run.max_time.unwrap_or(last + Time::from_secs(1));
    let interval = config.run.sample_interval.max(Time::from_ps(1));
    let mut sim = Sim::new(topology, &flows, params)?;
    // The engine keeps its own copy of every flow.
    drop(flows);
    let mut occupancy = BufferOccupancy::new(bfcsim_metrics::occupancy::DEFAULT_BIN);
    let sampled = match &config.metrics.active_flows_on {
        Some(text) => {
            Some(LinkSet::parse(text).map_err(|e| format!("metrics.active_flows_on: {e}"))?)
        }
        None => None,
    };
    let switch_ports: Vec<PortId> = (0..sim.switch_count())
        .flat_map(|s| sim.topology().nodes[sim.switch_node(s).idx()].ports.clone())
        .filter(|&p| {
            sampled
                .as_ref()
                .is_none_or(|set| sim.topology().in_set(set, p))
        })
        .collect();
    if switch_ports.is_empty() {
        return Err(format!(
            "metrics.active_flows_on: no switch port transmits on {:?}",
            sampled.expect("a fabric without switch ports has none to sample")
        ));
    }
    let (mut active, mut active_sum) = (LogHistogram::new(), 0u64);
    let started = Instant::now();
    let mut t = first;
    loop {
        t = (t + interval).min(limit);
        let more = sim.run_until(t);
        for s in 0..sim.switch_count() {
            occupancy.add(sim.switch_node(s), sim.switch_mmu(s).total());
        }
        for &p in &switch_ports {
            if let Some(n) = sim.port_active_flows(p) {
                active.record(n as u64);
                active_sum += n as u64;
            }
        }
        progress(&sim);
        if !more || t >= limit {
            break;
        }
    }
    let wall_secs = started.elapsed().as_secs_f64();
    let end = sim.now();

    let format = config.packet_format();
    let topo = sim.topology();
    let mut hpcc_ideal = Vec::with_capacity(sim.flow_count());
    let records: Vec<FlowRecord> = (0..sim.flow_count())
        .map(|i| {
            let id = FlowId::from_idx(i);
            let (spec, sport, dport, finish) = sim.flow(id);
            let path = path_profile(&sim, id, &racks);
            hpcc_ideal.push(Ideal::Hpcc.fct(&path, &format, spec.size));
            FlowRecord {
                id,
                src: spec.src,
                dst: spec.dst,
                size: spec.size,
                start: spec.start,
                finish,
                ideal: config.metrics.ideal.fct(&path, &format, spec.size),
                incast: spec.incast,
                class: spec.class,
                sport,
                dport,
            }
        })
        .collect();

    let mut summary = Summary::new(
        &records,
        &SummaryConfig {
            buckets: config.metrics.buckets.clone(),
            clamp_slowdown: config.metrics.clamp_slowdown,
        },
    );
    for (reason, n) in sim.drops() {
        summary.drops.add(reason.as_str(), n);
    }
    summary.occupancy = Some(occupancy.report());
    let duration = end.saturating_sub(first).max(Time::from_ps(1));
    let mut links = LinkUtilization::new();
    for (name, set) in [("host", LinkSet::Host), ("fabric", LinkSet::Fabric)] {
        for p in topo.ports_in_set(&set) {
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
    summary.queuing_delay = Some(DelayReport::from_ps(sim.queuing_delay()));
    summary.timeouts = sim.counters().timeouts;
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
    let ctx = sim.flow_context();
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
        pfc: sim.pfc_records().map(<[PfcRecord]>::to_vec),
    })
}

/// Per-hop flow control's counts, and the paused fraction over `duration` of every link that can be paused
/// ([`Sim::link_paused_time`]).
fn flow_control_report(sim: &Sim, kind: &str, duration: Time) -> FlowControlReport {
    let h = sim.hop_stats();
    let topo = sim.topology();
    let fractions: Vec<f64> = (0..topo.ports.len())
        .filter_map(|i| sim.link_paused_time(bfcsim_core::PortId::from_idx(i)))
        .map(|paused| paused.0 as f64 / duration.0 as f64)
        .collect();
    FlowControlReport {
        kind: kind.to_string(),
        pause_frames: h.pause_frames,
        resume_frames: h.resume_frames,
        refresh_frames: h.refresh_frames,
        frames_lost: h.frames_lost,
        assignments: h.bfc.assignments,
        queue_collisions: h.bfc.queue_collisions,
        index_collisions: h.bfc.index_collisions,
        link_paused_mean: fractions.iter().sum::<f64>() / fractions.len().max(1) as f64,
        link_paused_max: fractions.iter().copied().fold(0.0, f64::max),
        watchdog_alarms: h.watchdog_alarms,
        first_alarm: h.first_alarm,
    }
}

/// The hop-by-hop profile of a flow's path (data out, ACK back) for its ideal FCT.
pub fn path_profile(sim: &Sim, id: FlowId, racks: &[u32]) -> PathProfile {
    let (fwd, rev) = sim.flow_paths(id);
    let hop = |p: &bfcsim_core::PortId| {
        let (rate, delay) = sim.port_link(*p);
        Hop { rate, delay }
    };
    let (spec, ..) = sim.flow(id);
    let topo = sim.topology();
    let rack = |n| topo.host_index(n).map(|h| racks[h as usize]);
    PathProfile {
        hops: fwd.iter().map(hop).collect(),
        ack_hops: rev.iter().map(hop).collect(),
        same_rack: rack(spec.src) == rack(spec.dst),
    }
}

/// `run.json`: the resolved configuration and what the run measured about itself.
#[derive(Serialize)]
struct RunInfo<'a> {
    bfcsim_version: &'static str,
    config: &'a ExperimentConfig,
    offered_load: Option<&'a str>,
    flows: usize,
    unfinished: usize,
    simulated_end_ns: u64,
    base_rtt_ns: f64,
    initial_window_bytes: u64,
    counters: CountersJson,
    invariant_violations: &'a [String],
    wall_seconds: f64,
}

#[derive(Serialize)]
struct CountersJson {
    events: u64,
    packet_hops: u64,
    injected_packets: u64,
    delivered_packets: u64,
    dropped_packets: u64,
    retransmitted_packets: u64,
    timeouts: u64,
}

/// Writes `fct.csv`, the HPCC-format `fct.txt` (and `pfc.txt` when PFC ran), `summary.json` and `run.json`
/// into `dir`, each through a temporary file and a rename.
pub fn write_outputs(
    dir: &Path,
    config: &ExperimentConfig,
    plan: Option<&str>,
    out: &Outcome,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_fct_csv(dir.join("fct.csv"), &out.records)?;
    // fct.txt follows HPCC's conventions throughout, its standalone FCT included, so existing scripts work.
    write_hpcc_fct(dir.join("fct.txt"), &out.records, |r| {
        out.hpcc_ideal[r.id.idx()]
    })?;
    if let Some(pfc) = &out.pfc {
        write_hpcc_pfc(dir.join("pfc.txt"), pfc)?;
    }
    write_summary_json(dir.join("summary.json"), &out.summary)?;
    let c = &out.counters;
    let info = RunInfo {
        bfcsim_version: env!("CARGO_PKG_VERSION"),
        config,
        offered_load: plan,
        flows: out.records.len(),
        unfinished: out.records.iter().filter(|r| r.finish.is_none()).count(),
        simulated_end_ns: out.end.ns(),
        base_rtt_ns: out.base_rtt.0 as f64 / 1e3,
        initial_window_bytes: out.bdp,
        counters: CountersJson {
            events: c.events,
            packet_hops: c.hops,
            injected_packets: c.injected_pkts,
            delivered_packets: c.delivered_pkts,
            dropped_packets: c.dropped_pkts,
            retransmitted_packets: c.retransmits,
            timeouts: c.timeouts,
        },
        invariant_violations: &out.violations,
        wall_seconds: out.wall_secs,
    };
    write_atomic(dir.join("run.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &info).map_err(std::io::Error::other)?;
        writeln!(w)
    })
}
