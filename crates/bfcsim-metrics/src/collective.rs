//! What a collective took (`summary.json`'s `collectives`): per iteration its completion time (the first of
//! its flows starting to the last finishing), each step's span, and NCCL's algorithm and bus bandwidth
//! (nccl-tests' PERFORMANCE.md: algbw = S / t for S bytes a rank, busbw = algbw × the collective's factor,
//! 2(n-1)/n for all-reduce), against the bandwidth bound: busbw's bytes at the hosts' goodput.

use bfcsim_core::Time;
use serde::Serialize;

use crate::record::FlowRecord;

/// What a report needs to know of one collective.
#[derive(Clone, Debug)]
pub struct CollectiveInfo {
    /// Its name.
    pub name: String,
    /// What it computes (`all-reduce`, ...).
    pub kind: String,
    /// How (`ring`, ...).
    pub algorithm: String,
    /// Ranks in its communicator.
    pub ranks: usize,
    /// Bytes per rank.
    pub bytes: u64,
    /// busbw / algbw.
    pub bus_factor: f64,
    /// Payload bits per second a host's link carries at line rate (the slowest rank's).
    pub goodput_bps: f64,
}

/// A collective flow's place: collective, iteration, step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepOf {
    /// The collective, by index.
    pub collective: u16,
    /// Its iteration.
    pub iteration: u32,
    /// Its step.
    pub step: u16,
}

/// One step of one iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepReport {
    /// The step.
    pub step: u16,
    /// Its flows.
    pub flows: usize,
    /// When its first flow started, in µs.
    pub start_us: f64,
    /// When its last flow finished, in µs (`None`: one never did).
    pub end_us: Option<f64>,
}

/// One iteration of a collective.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationReport {
    /// The iteration.
    pub iteration: u32,
    /// When its first flow started, in µs.
    pub start_us: f64,
    /// Its completion time, in µs (`None`: unfinished).
    pub cct_us: Option<f64>,
    /// Algorithm bandwidth, Gb/s.
    pub algbw_gbps: Option<f64>,
    /// Bus bandwidth, Gb/s.
    pub busbw_gbps: Option<f64>,
    /// Completion time over the bandwidth bound.
    pub over_bound: Option<f64>,
    /// The longest step (start of its first flow to the end of its last).
    pub slowest_step: Option<u16>,
    /// Flows that never finished.
    pub unfinished: usize,
    /// Every step.
    pub steps: Vec<StepReport>,
}

/// One collective, every iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveReport {
    /// Its name.
    pub name: String,
    /// What it computes.
    pub kind: String,
    /// How.
    pub algorithm: String,
    /// Ranks.
    pub ranks: usize,
    /// Bytes per rank.
    pub bytes: u64,
    /// The bandwidth bound of one iteration, in µs: bytes × bus factor at the hosts' goodput (no latency).
    pub bound_us: f64,
    /// Each iteration.
    pub iterations: Vec<IterationReport>,
}

impl CollectiveReport {
    /// Its lines in the run's printed summary: the collective, then each iteration's completion time.
    pub fn text(&self) -> String {
        let mut out = format!(
            "collective `{}`: {} {} over {} ranks, {} B a rank (bandwidth bound {:.2} us)\n",
            self.name, self.algorithm, self.kind, self.ranks, self.bytes, self.bound_us
        );
        for i in &self.iterations {
            out.push_str(&match (i.cct_us, i.busbw_gbps, i.over_bound) {
                (Some(cct), Some(bus), Some(over)) => format!(
                    "  iteration {}: from {:.2} us, CCT {cct:.2} us ({over:.3}x the bound), busbw {bus:.1} Gb/s, \
                     slowest step {}\n",
                    i.iteration,
                    i.start_us,
                    i.slowest_step.map_or("-".into(), |s| s.to_string())
                ),
                _ => format!(
                    "  iteration {}: from {:.2} us, unfinished ({} flows)\n",
                    i.iteration, i.start_us, i.unfinished
                ),
            });
        }
        out
    }

    /// The reports of `infos` from the flows' `records` and where each belongs (`steps`, by record index;
    /// `None` for flows of no collective).
    pub fn all(
        infos: &[CollectiveInfo],
        records: &[FlowRecord],
        steps: &[Option<StepOf>],
    ) -> Vec<CollectiveReport> {
        // (collective, iteration, step) -> (flows, first start, last finish, unfinished)
        type Span = (usize, Time, Option<Time>, usize);
        let mut spans: std::collections::BTreeMap<(u16, u32, u16), Span> = Default::default();
        for (r, s) in records.iter().zip(steps) {
            let Some(s) = s else { continue };
            let e = spans.entry((s.collective, s.iteration, s.step)).or_insert((
                0,
                Time::MAX,
                Some(Time::ZERO),
                0,
            ));
            e.0 += 1;
            e.1 = e.1.min(r.start);
            match r.finish {
                Some(f) => e.2 = e.2.map(|t| t.max(f)),
                None => {
                    e.2 = None;
                    e.3 += 1;
                }
            }
        }
        let us = |t: Time| t.ps() as f64 / 1e6;
        infos
            .iter()
            .enumerate()
            .map(|(ci, info)| {
                let bound = info.bytes as f64 * 8.0 * info.bus_factor / info.goodput_bps * 1e6;
                let mut iterations: Vec<IterationReport> = Vec::new();
                for (&(c, it, step), &(flows, start, end, unfinished)) in &spans {
                    if c as usize != ci {
                        continue;
                    }
                    if iterations.last().is_none_or(|i| i.iteration != it) {
                        iterations.push(IterationReport {
                            iteration: it,
                            start_us: us(start),
                            cct_us: Some(0.0),
                            algbw_gbps: None,
                            busbw_gbps: None,
                            over_bound: None,
                            slowest_step: None,
                            unfinished: 0,
                            steps: Vec::new(),
                        });
                    }
                    let i = iterations.last_mut().expect("pushed");
                    i.start_us = i.start_us.min(us(start));
                    i.unfinished += unfinished;
                    i.steps.push(StepReport {
                        step,
                        flows,
                        start_us: us(start),
                        end_us: end.map(us),
                    });
                }
                for i in &mut iterations {
                    let end = i
                        .steps
                        .iter()
                        .map(|s| s.end_us)
                        .try_fold(0.0f64, |m, e| e.map(|e| m.max(e)));
                    i.cct_us = end.map(|e| e - i.start_us);
                    if let Some(cct) = i.cct_us.filter(|&c| c > 0.0) {
                        let algbw = info.bytes as f64 * 8.0 / (cct * 1e-6) / 1e9;
                        i.algbw_gbps = Some(algbw);
                        i.busbw_gbps = Some(algbw * info.bus_factor);
                        i.over_bound = Some(cct / bound);
                    }
                    i.slowest_step = i
                        .steps
                        .iter()
                        .filter_map(|s| s.end_us.map(|e| (e - s.start_us, s.step)))
                        .max_by(|a, b| a.0.total_cmp(&b.0))
                        .map(|(_, s)| s);
                }
                CollectiveReport {
                    name: info.name.clone(),
                    kind: info.kind.clone(),
                    algorithm: info.algorithm.clone(),
                    ranks: info.ranks,
                    bytes: info.bytes,
                    bound_us: bound,
                    iterations,
                }
            })
            .collect()
    }
}
