//! A small experiment drawn from arbitrary bytes, and the properties every run of it must keep. The property
//! tests (`crates/bfcsim/tests/properties.rs`) draw the bytes with proptest and the structured fuzz target
//! (`fuzz/fuzz_targets/small_run.rs`) with libFuzzer; both build the experiment here and check the same
//! properties:
//!
//! - every packet injected is delivered, dropped with a recorded reason, or still in flight; no buffer went
//!   over its capacity; no counter went negative (the engine's end-of-run check, `Sim::check_invariants`);
//! - delivery is in order where the network promises it: with flow-level ECMP every packet of a flow takes
//!   one path through FIFO queues (unless BFC samples, below), so a run that dropped nothing, trimmed
//!   nothing and had no timeout sent no retransmission and delivered no packet twice (a receiver asks again
//!   only for a gap);
//! - no flow finishes faster than alone on the idle network (the exact ideal FCT is a lower bound of one
//!   path's FCT, so again only without spraying);
//! - no run stalls: while flows remain, something is left to happen (these fabrics have no cyclic buffer
//!   dependency);
//! - one thread and two give the same outputs (fingerprint, flow records, HPCC's standalone FCTs, summary,
//!   PFC trace).
//!
//! The experiment is small by construction (at most 9 hosts, tens of microseconds of arrivals, a run cut at
//! 2 ms) so that one check takes milliseconds; every scheme, every topology builder, buffers from 30 KB to
//! 12 MB, incasts, lognormal arrivals, packet spraying and persistent connections are in its range.

use std::path::Path;

use arbitrary::Unstructured;
use bfcsim_metrics::Ideal;
use bfcsim_net::routing::LoadBalancing;
use bfcsim_schemes::paths::PathChoice;
use bfcsim_sim::FlowControl;

use crate::experiment::{ExperimentConfig, parse_experiment};
use crate::runner::{Outcome, prepare, simulate};

/// The experiment every draw starts from: its workload keys are all overridden.
const BASE: &str = "name = \"arbitrary\"\n[workload]\nload_on = \"host\"\nduration = \"10us\"\n";

/// A small experiment: the `--set` overrides drawn, applied to `BASE`.
#[derive(Clone, Debug)]
pub struct SmallRun {
    /// The overrides, in the order drawn (shown when a property fails, to reproduce it with `bfcsim run`).
    pub overrides: Vec<String>,
}

/// What a checked run did, for tests that want to see the range covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Flows in the run.
    pub flows: usize,
    /// Packets dropped.
    pub dropped: u64,
    /// Whether the run was split over two threads (the fabric allowed it).
    pub split: bool,
}

impl SmallRun {
    /// Draws an experiment from `bytes` (short input gives the smallest choices).
    pub fn from_bytes(bytes: &[u8]) -> SmallRun {
        let mut u = Unstructured::new(bytes);
        draw(&mut u)
            .unwrap_or_else(|_| draw(&mut Unstructured::new(&[])).expect("empty input draws"))
    }

    /// The experiment's configuration on `threads` threads.
    pub fn config(&self, threads: usize) -> Result<ExperimentConfig, String> {
        let mut overrides = self.overrides.clone();
        overrides.push(format!("run.threads={threads}"));
        parse_experiment(Path::new("arbitrary.toml"), BASE, &overrides).map_err(|e| e.to_string())
    }

    /// Runs the experiment on one thread and, with `threads_too`, on two, and checks every property of the
    /// module documentation (the last only with `threads_too`); the error names the property broken and the
    /// overrides that reproduce it.
    pub fn check(&self, threads_too: bool) -> Result<Checked, String> {
        let fail = |what: String| {
            format!(
                "{what}\n  reproduce with: --set {}",
                self.overrides.join(" --set ")
            )
        };
        let one_config = self.config(1).map_err(&fail)?;
        let one = run(&one_config).map_err(&fail)?;
        if !one.violations.is_empty() {
            return Err(fail(format!(
                "invariants violated: {}",
                one.violations.join("; ")
            )));
        }
        if let Some(why) = &one.stalled {
            return Err(fail(why.clone()));
        }
        let c = one.counters;
        // Sprayed packets take parallel paths: they may overtake each other, and a flow may beat the ideal
        // of one path, whether the switches spray or the sender does (`nic.paths`). BFC with sampling (App.
        // A.8) may give a flow a new queue while packets it did not track still wait in the old one.
        let one_path = one_config.switch.load_balancing == LoadBalancing::Ecmp
            && one_config.nic.paths == PathChoice::Flow;
        let fifo = !matches!(&one_config.flow_control, FlowControl::Bfc(b) if b.sampling < 1.0);
        if one_path
            && fifo
            && c.dropped_pkts == 0
            && c.trimmed_pkts == 0
            && c.timeouts == 0
            && (c.retransmits > 0 || c.duplicates > 0)
        {
            return Err(fail(format!(
                "out of order on single paths: no drop, no trim and no timeout, yet {} retransmissions and {} \
                 duplicates",
                c.retransmits, c.duplicates
            )));
        }
        if one_path
            && one_config.metrics.ideal == Ideal::Exact
            && let Some(r) = one
                .records
                .iter()
                .find(|r| r.fct().is_some_and(|f| f < r.ideal))
        {
            return Err(fail(format!(
                "flow {} finished in {} but alone it would take {}",
                r.id,
                r.fct().expect("finished"),
                r.ideal
            )));
        }
        let mut split = false;
        if threads_too {
            let two = run(&self.config(2).map_err(&fail)?).map_err(&fail)?;
            if let Some(what) = difference(&one, &two) {
                return Err(fail(format!("one thread and two differ: {what}")));
            }
            split = two.threads > 1;
        }
        Ok(Checked {
            flows: one.records.len(),
            dropped: c.dropped_pkts,
            split,
        })
    }
}

fn run(config: &ExperimentConfig) -> Result<Outcome, String> {
    let prepared = prepare(config, Path::new(""))?;
    simulate(config, prepared, |_| {})
}

/// What differs between the outputs of two runs, if anything.
fn difference(a: &Outcome, b: &Outcome) -> Option<&'static str> {
    let json = |o: &Outcome| serde_json::to_string(&o.summary).expect("summaries serialize");
    let pfc = |o: &Outcome| {
        o.pause_records
            .as_ref()
            .map(|p| p.iter().map(ToString::to_string).collect::<Vec<_>>())
    };
    if a.fingerprint != b.fingerprint {
        Some("fingerprint")
    } else if a.records != b.records {
        Some("flow records")
    } else if a.hpcc_ideal != b.hpcc_ideal {
        Some("HPCC standalone FCTs")
    } else if json(a) != json(b) {
        Some("summary")
    } else if pfc(a) != pfc(b) {
        Some("PFC trace")
    } else {
        None
    }
}

fn draw(u: &mut Unstructured) -> arbitrary::Result<SmallRun> {
    let mut o = Vec::new();
    let delay = *u.choose(&["100ns", "1us", "2us"])?;
    let rate = *u.choose(&["10Gbps", "25Gbps", "100Gbps"])?;
    let hosts = match u.int_in_range(0..=3)? {
        0 => {
            let n = u.int_in_range(2..=6)?;
            o.extend([
                "topology.kind=star".to_string(),
                format!("topology.hosts={n}"),
                format!("topology.delay={delay}"),
            ]);
            n
        }
        1 => {
            let (l, r) = (u.int_in_range(1..=3)?, u.int_in_range(1..=3)?);
            o.extend([
                "topology.kind=dumbbell".to_string(),
                format!("topology.left={l}"),
                format!("topology.right={r}"),
                format!("topology.bottleneck_rate={rate}"),
                format!("topology.bottleneck_delay={delay}"),
            ]);
            l + r
        }
        2 => {
            // At least two hosts: one ToR needs two.
            let tors = u.int_in_range(1..=3)?;
            let per_tor = u.int_in_range(if tors == 1 { 2 } else { 1 }..=3)?;
            o.extend([
                "topology.kind=leaf-spine".to_string(),
                format!("topology.tors={tors}"),
                format!("topology.hosts_per_tor={per_tor}"),
                format!("topology.spines={}", u.int_in_range(1..=2)?),
                format!("topology.links_per_spine={}", u.int_in_range(1..=2)?),
                format!("topology.fabric_rate={rate}"),
                format!("topology.fabric_delay={delay}"),
            ]);
            tors * per_tor
        }
        _ => {
            // k = 2: two pods of one ToR, one aggregation switch each, one core.
            let per_tor = u.int_in_range(1..=3)?;
            o.extend([
                "topology.kind=fat-tree".to_string(),
                "topology.k=2".into(),
                format!("topology.hosts_per_tor={per_tor}"),
                format!("topology.delay={delay}"),
            ]);
            2 * per_tor
        }
    };
    let schemes = crate::presets::names();
    let scheme = *u.choose(&schemes)?;
    o.push(format!("scheme.name={scheme}"));
    // Per-hop flow control reserves headroom for every port: small buffers only for schemes that drop.
    let hop_by_hop = crate::presets::find(scheme).and_then(|p| p.tag("flow_control"));
    let buffers: &[&str] = match hop_by_hop.as_deref() {
        None | Some("none") => &["12MB", "200KB", "30KB", "10KB"],
        Some(_) => &["12MB", "4MB"],
    };
    o.push(format!("switch.buffer={}", u.choose(buffers)?));
    // ExpressPass's credits and PayDebt's debts and tokens retrace their data's path: they refuse spraying.
    if !matches!(hop_by_hop.as_deref(), Some("expresspass" | "paydebt")) && u.ratio(1, 8)? {
        o.push("switch.load_balancing=spray".into());
    }
    o.push(format!(
        "workload.cdf={}",
        u.choose(&["google", "hadoop", "websearch"])?
    ));
    let load = f64::from(u.int_in_range(1..=12)?) / 10.0;
    o.push(format!("workload.load={load}"));
    o.push(format!("workload.duration={}us", u.int_in_range(2..=30)?));
    if u.arbitrary::<bool>()? {
        o.push("workload.arrivals=lognormal".into());
    }
    if hosts >= 3 && u.ratio(1, 2)? {
        let degree = u.int_in_range(2..=hosts - 1)?;
        o.push(format!(
            "workload.incast=[{{degree = {degree}, aggregate = \"{}KB\", share = {}}}]",
            u.int_in_range(4..=200)?,
            load / 4.0
        ));
    }
    o.push(format!("seed={}", u.arbitrary::<u32>()?));
    // Persistent connections hand a window controller's state from flow to flow (BCC's hosts).
    let window_cc = matches!(
        crate::presets::find(scheme)
            .and_then(|p| p.tag("cc"))
            .as_deref(),
        Some("dctcp" | "none")
    );
    if window_cc && u.ratio(1, 4)? {
        o.push("nic.connections=persistent".into());
    }
    // Long enough for every flow of a healthy run to finish; a run that stalls is cut here, its flows
    // reported unfinished.
    o.push("run.max_time=2ms".into());
    Ok(SmallRun { overrides: o })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_draw_is_a_valid_experiment() {
        for seed in 0u8..=255 {
            let bytes: Vec<u8> = (0..64u8)
                .map(|i| i.wrapping_mul(seed).wrapping_add(seed))
                .collect();
            let run = SmallRun::from_bytes(&bytes);
            run.config(1)
                .unwrap_or_else(|e| panic!("{:?}: {e}", run.overrides));
        }
        assert!(SmallRun::from_bytes(&[]).config(2).is_ok());
    }
}
