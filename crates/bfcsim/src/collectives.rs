//! A workload's collectives (`[[workload.collective]]`, [`bfcsim_workload::collective`]) joined to its other
//! flows: their dependency graph over the run's flow ids, where each flow belongs, and what the summary's
//! report needs of each collective.

use std::sync::Arc;

use bfcsim_core::{Dependencies, Edge, FlowId, FlowSpec};
use bfcsim_metrics::{CollectiveInfo, CollectiveReport, FlowRecord, StepOf};
use bfcsim_net::Topology;
use bfcsim_sim::{FlowDeps, Notify};
use bfcsim_workload::{CollectiveFlows, CollectiveSpec, ConnectionMatrix, collectives};

/// The collectives of a run, over its flow ids.
#[derive(Clone, Debug)]
pub struct Collectives {
    /// Which flows wait for which.
    pub deps: FlowDeps,
    /// Each flow's collective, iteration and step (`None`: not a collective's).
    pub steps: Vec<Option<StepOf>>,
    /// Each collective.
    pub infos: Vec<CollectiveInfo>,
}

impl Collectives {
    /// The summary's reports of the run's `records`.
    pub fn reports(&self, records: &[FlowRecord]) -> Vec<CollectiveReport> {
        CollectiveReport::all(&self.infos, records, &self.steps)
    }
}

/// Where a flow of the joined list came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The background, incasts or groups.
    Generated,
    /// A long-lived flow.
    LongLived,
    /// Flow `k` of the collectives.
    Collective(u32),
}

/// The collectives' flows of `specs` on `topology`.
pub fn generate(
    specs: &[CollectiveSpec],
    topology: &Topology,
    (payload, header): (u32, u32),
    seed: u64,
) -> Result<(CollectiveFlows, Vec<CollectiveInfo>), String> {
    let racks = topology.racks();
    let flows = collectives(specs, &topology.hosts, &racks, seed).map_err(|e| e.to_string())?;
    let share = f64::from(payload) / f64::from(payload + header);
    let infos = specs
        .iter()
        .zip(&flows.communicators)
        .map(|(s, comm)| {
            let slowest = comm
                .iter()
                .map(|&h| {
                    let port = topology.nodes[topology.hosts[h as usize].idx()].ports[0];
                    topology.link_of(port).rate.bps() as f64
                })
                .fold(f64::INFINITY, f64::min);
            CollectiveInfo {
                name: s.name.clone(),
                kind: s.kind.as_str().into(),
                algorithm: s.algorithm().map(|a| a.as_str()).unwrap_or("?").into(),
                ranks: comm.len(),
                bytes: s.size.0,
                bus_factor: s.bus_factor(comm.len()),
                goodput_bps: slowest * share,
            }
        })
        .collect();
    Ok((flows, infos))
}

/// The dependency graph and labels of `c` once the joined list is sorted: `origins` says, by final flow id,
/// where each flow came from.
pub fn join(c: &CollectiveFlows, infos: Vec<CollectiveInfo>, origins: &[Origin]) -> Collectives {
    let mut new_of_old = vec![0u32; c.flows.len()];
    let mut steps = vec![None; origins.len()];
    for (i, o) in origins.iter().enumerate() {
        if let Origin::Collective(k) = *o {
            new_of_old[k as usize] = i as u32;
            let l = c.labels[k as usize];
            steps[i] = Some(StepOf {
                collective: l.collective,
                iteration: l.iteration,
                step: l.step,
            });
        }
    }
    let id = |f: FlowId| FlowId(new_of_old[f.idx()]);
    let edges: Vec<Edge> = c
        .edges
        .iter()
        .map(|e| Edge {
            after: id(e.after),
            on: e.on,
            flow: id(e.flow),
        })
        .collect();
    let waits = c.waits.iter().map(|&(f, w)| (id(f), w));
    let graph = Dependencies::new(origins.len(), waits, &edges)
        .expect("the collectives' generator builds a valid graph");
    Collectives {
        deps: FlowDeps {
            graph: Arc::new(graph),
            notify: Notify::Path,
        },
        steps,
        infos,
    }
}

/// The flows of an htsim connection matrix sorted by start time, and their triggers over the sorted ids
/// (`None` when nothing waits).
pub fn triggered(m: ConnectionMatrix, notify: Notify) -> (Vec<FlowSpec>, Option<Collectives>) {
    let mut order: Vec<u32> = (0..m.flows.len() as u32).collect();
    order.sort_by_key(|&i| m.flows[i as usize].start);
    let mut new_of_old = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_of_old[old as usize] = new as u32;
    }
    let flows = order.iter().map(|&i| m.flows[i as usize]).collect();
    let c = (m.deps.waiting() > 0).then(|| Collectives {
        deps: FlowDeps {
            graph: Arc::new(m.deps.renumbered(&new_of_old)),
            notify,
        },
        steps: vec![None; order.len()],
        infos: Vec::new(),
    });
    (flows, c)
}

/// `tagged` flows with the collectives' appended, sorted by start time (stably: generation order among equal
/// starts), and where each came from.
pub fn sorted(
    mut tagged: Vec<(FlowSpec, Origin)>,
    c: Option<&CollectiveFlows>,
) -> (Vec<FlowSpec>, Vec<Origin>) {
    if let Some(c) = c {
        tagged.extend(
            c.flows
                .iter()
                .enumerate()
                .map(|(k, &f)| (f, Origin::Collective(k as u32))),
        );
    }
    tagged.sort_by_key(|(f, _)| f.start);
    tagged.into_iter().unzip()
}
