//! A run's digest (`digest.json`): the numbers figures, reports and sweep lines are made of, small enough to
//! read back for every run of a sweep, and kept with the run so that a finished run never has to be simulated
//! or re-read flow by flow again.
//!
//! Slowdowns are given per *flow set* ([`Digest::sets`]): `non-incast` (every flow not part of an incast, what
//! the papers' FCT figures show), `incast`, `classN` per traffic class when a run has several, and `group:NAME`
//! per named workload group. Each set has the run's size buckets and three size ranges of BFC §6.3: short flows
//! (< 3 KB, whose 99th percentile the paper reports), long flows (> 3 MB, whose average it reports) and all.
//! Each set also has flow completion times (not slowdowns) by BCC §V-B's size classes ([`Fct`]): small
//! (0, 100 KB], medium (100 KB, 10 MB], large (> 10 MB) and all.

use std::collections::BTreeMap;

use bfcsim_metrics::summary::nearest_rank;
use bfcsim_metrics::{FlowRecord, Summary, SummaryConfig};
use bfcsim_schemes::receiver_driven::homa::HomaReport;
use serde::{Deserialize, Serialize};

use crate::runner::Outcome;

/// Flows shorter than this are BFC §6.3's "short flows".
pub const SHORT_BELOW: u64 = 3_000;
/// Flows longer than this are BFC §6.3's "long flows".
pub const LONG_ABOVE: u64 = 3_000_000;
/// BCC §V-B's small flows are at most this large.
pub const SMALL_UP_TO: u64 = 100_000;
/// BCC §V-B's large flows are larger than this.
pub const LARGE_ABOVE: u64 = 10_000_000;
/// Aquarius §4's large flows are larger than this (its short flows are BFC's, < [`SHORT_BELOW`]).
pub const BIG_ABOVE: u64 = 1_000_000;
/// The largest flows of the Web Server distribution, which ends at 1 MB (so that none is above
/// [`BIG_ABOVE`]), are larger than this: the stand-in for Aquarius §4's large flows.
pub const TOP_ABOVE: u64 = 500_000;
/// Points kept of each time series of a traced run.
pub const TRACE_POINTS: usize = 2000;
/// Points kept of the buffer-occupancy CDF (evenly spaced in probability).
const CDF_POINTS: usize = 200;

/// Slowdown statistics of a non-empty set of finished flows (nearest-rank percentiles, as `summary.json`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Finished flows.
    pub flows: usize,
    /// Mean.
    pub avg: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Stats {
    /// Statistics of `slowdowns` (any order); `None` when empty.
    fn of(mut slowdowns: Vec<f64>) -> Option<Stats> {
        slowdowns.sort_unstable_by(f64::total_cmp);
        let max = *slowdowns.last()?;
        Some(Stats {
            flows: slowdowns.len(),
            avg: slowdowns.iter().sum::<f64>() / slowdowns.len() as f64,
            p50: nearest_rank(&slowdowns, 0.5),
            p95: nearest_rank(&slowdowns, 0.95),
            p99: nearest_rank(&slowdowns, 0.99),
            max,
        })
    }
}

/// One size bucket of a flow set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The bucket's label (`1-3 pkts (<3KB)`).
    pub label: String,
    /// The largest finished flow in it: where a plot against flow size puts the bucket.
    pub max_size: Option<u64>,
    /// Flows unfinished at the end of the run.
    pub unfinished: usize,
    /// Slowdowns of its finished flows.
    pub stats: Option<Stats>,
}

/// Slowdowns of one set of flows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowSet {
    /// Flows in the set.
    pub flows: usize,
    /// Of which unfinished at the end of the run.
    pub unfinished: usize,
    /// By size bucket (`metrics.buckets`).
    pub buckets: Vec<Bucket>,
    /// Flows below [`SHORT_BELOW`].
    pub short: Option<Stats>,
    /// Flows above [`LONG_ABOVE`].
    pub long: Option<Stats>,
    /// Every finished flow of the set.
    pub all: Option<Stats>,
    /// Completion times by BCC's size classes (absent from digests of older versions).
    #[serde(default)]
    pub fct: Fct,
    /// Mean over the finished flows of size / FCT, Gb/s: each flow's average throughput (Aquarius Fig. 5;
    /// absent from digests of older versions).
    #[serde(default)]
    pub goodput_gbps: Option<f64>,
}

/// Flow completion times in nanoseconds by BCC §V-B's size classes, whose figures give the small flows' 99th
/// percentile and the others' average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fct {
    /// (0, 100 KB].
    pub small: Option<Stats>,
    /// (100 KB, 10 MB].
    pub medium: Option<Stats>,
    /// Above 10 MB.
    pub large: Option<Stats>,
    /// Every finished flow.
    pub all: Option<Stats>,
    /// Flows below [`SHORT_BELOW`] (Aquarius §4's short flows; absent from digests of older versions).
    #[serde(default)]
    pub short: Option<Stats>,
    /// Flows above [`BIG_ABOVE`] (Aquarius §4's large flows; absent from digests of older versions).
    #[serde(default)]
    pub big: Option<Stats>,
    /// Flows above [`TOP_ABOVE`] (absent from digests of older versions).
    #[serde(default)]
    pub top: Option<Stats>,
}

impl Fct {
    fn new(records: &[FlowRecord]) -> Fct {
        let fcts = |keep: &dyn Fn(u64) -> bool| {
            records
                .iter()
                .filter(|r| keep(r.size.0))
                .filter_map(|r| r.fct().map(|t| t.ps() as f64 / 1e3))
                .collect::<Vec<f64>>()
        };
        Fct {
            small: Stats::of(fcts(&|s| s <= SMALL_UP_TO)),
            medium: Stats::of(fcts(&|s| s > SMALL_UP_TO && s <= LARGE_ABOVE)),
            large: Stats::of(fcts(&|s| s > LARGE_ABOVE)),
            all: Stats::of(fcts(&|_| true)),
            short: Stats::of(fcts(&|s| s < SHORT_BELOW)),
            big: Stats::of(fcts(&|s| s > BIG_ABOVE)),
            top: Stats::of(fcts(&|s| s > TOP_ABOVE)),
        }
    }
}

impl FlowSet {
    fn new(records: &[FlowRecord], config: &SummaryConfig) -> FlowSet {
        // The summary's buckets count non-incast flows only: present every member as one.
        let members: Vec<FlowRecord> = records
            .iter()
            .map(|r| FlowRecord {
                incast: false,
                ..*r
            })
            .collect();
        let summary = Summary::new(&members, config, &[]);
        let slowdowns = |keep: &dyn Fn(u64) -> bool| {
            records
                .iter()
                .filter(|r| keep(r.size.0))
                .filter_map(FlowRecord::slowdown)
                .collect::<Vec<f64>>()
        };
        FlowSet {
            flows: records.len(),
            unfinished: records.iter().filter(|r| r.finish.is_none()).count(),
            buckets: summary
                .buckets
                .into_iter()
                .map(|b| Bucket {
                    label: b.label,
                    max_size: b.max_size_bytes,
                    unfinished: b.unfinished,
                    stats: b.slowdown.map(|x| Stats {
                        flows: b.flows,
                        avg: x.avg,
                        p50: x.p50,
                        p95: x.p95,
                        p99: x.p99,
                        max: x.max,
                    }),
                })
                .collect(),
            short: Stats::of(slowdowns(&|s| s < SHORT_BELOW)),
            long: Stats::of(slowdowns(&|s| s > LONG_ABOVE)),
            all: Stats::of(slowdowns(&|_| true)),
            fct: Fct::new(records),
            goodput_gbps: {
                let rates: Vec<f64> = records
                    .iter()
                    .filter_map(|r| Some(r.size.0 as f64 * 8.0 / r.fct()?.ps() as f64 * 1e3))
                    .collect();
                (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
            },
        }
    }
}

/// Switch buffer occupancy, all switches' samples together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Buffer {
    /// Median, bytes.
    pub p50: f64,
    /// 99th percentile, bytes.
    pub p99: f64,
    /// Largest sample, bytes.
    pub max: f64,
    /// `(bytes, fraction of samples at or below)`, at most 200 points (evenly spaced in probability).
    pub cdf: Vec<(f64, f64)>,
}

/// Active flows per sampled switch port (BFC §2.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Active {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
    /// Fraction of samples above 32 (Tofino2's queues per port).
    pub above_32: f64,
    /// `(active flows, fraction of samples at or below)`.
    pub cdf: Vec<(f64, f64)>,
}

/// Per-hop flow control.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Paused {
    /// The mechanism (`pfc`, `bfc`).
    pub kind: String,
    /// Mean over pausable links of the fraction of time each was paused.
    pub mean: f64,
    /// The largest such fraction.
    pub max: f64,
    /// PAUSE frames sent.
    pub pause_frames: u64,
    /// Queue assignments (BFC).
    pub assignments: u64,
    /// Assignments that found no empty queue (BFC).
    pub queue_collisions: u64,
}

/// Queuing delays of Homa's scheduled packets in the core (BFC App. A.2, Table 2), ns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoreDelay {
    /// From a ToR into the core (ToR-Agg): median and 99th percentile.
    pub up: (f64, f64),
    /// From the core to a ToR (Agg-ToR): median and 99th percentile.
    pub down: (f64, f64),
}

/// Everything a report needs from one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Digest {
    /// Flows in the run.
    pub flows: usize,
    /// Unfinished at the end, incast included.
    pub unfinished: usize,
    /// Slowdowns per flow set (see the module documentation).
    pub sets: BTreeMap<String, FlowSet>,
    /// Buffer occupancy, when sampled.
    pub buffer: Option<Buffer>,
    /// Active flows per switch port, when sampled.
    pub active: Option<Active>,
    /// Per-hop flow control, when it ran.
    pub paused: Option<Paused>,
    /// Mean utilization per link set (`host`, `fabric`, and `metrics.utilization_on`).
    pub utilization: BTreeMap<String, f64>,
    /// Each long-lived flow's throughput as a fraction of its sender's link.
    pub throughput: Vec<f64>,
    /// 99th-percentile queuing delay per switch hop of the packets of one-packet flows, ns.
    pub single_packet_delay_p99_ns: Option<f64>,
    /// Homa: queuing delay of scheduled packets at ports into and out of the core (BFC Table 2); absent from
    /// runs stored before it existed.
    #[serde(default)]
    pub core_delay: Option<CoreDelay>,
    /// Packets dropped.
    pub drops: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Data packets sent again.
    pub retransmitted: u64,
    /// Packets the NICs created.
    pub injected: u64,
    /// Data packets the NICs sent, retransmissions included (absent from digests of older versions).
    #[serde(default)]
    pub data_packets: u64,
    /// Data packets dropped.
    #[serde(default)]
    pub dropped_data_packets: u64,
    /// Packet transmissions over a link, every kind (absent from digests of older versions).
    #[serde(default)]
    pub packet_hops: u64,
    /// The mean over switch egress ports of each one's drops over its arrivals (the BCC authors' ns-2 scripts'
    /// figure, [`bfcsim_metrics::Summary::switch_port_loss`]; absent from digests of older versions).
    #[serde(default)]
    pub port_loss: Option<f64>,
    /// The run's time series (`[trace]`), each at most [`TRACE_POINTS`] points, those never above zero left out:
    /// what figures plot over time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<bfcsim_metrics::TraceLine>,
    /// End-of-run invariant violations, one more if the run stalled (`run.stall_after`): either makes the
    /// run unsound, and a sweep that had one exits with status 3.
    pub violations: usize,
}

impl Digest {
    /// The digest of a finished simulation.
    pub fn new(out: &Outcome) -> Digest {
        let s = &out.summary;
        let config = SummaryConfig {
            buckets: s.bucket_scheme.clone(),
            clamp_slowdown: s.clamp_slowdown,
        };
        let mut sets = BTreeMap::new();
        let subset = |keep: &dyn Fn(&FlowRecord) -> bool| {
            out.records
                .iter()
                .filter(|r| keep(r))
                .copied()
                .collect::<Vec<_>>()
        };
        sets.insert(
            "non-incast".to_string(),
            FlowSet::new(&subset(&|r| !r.incast), &config),
        );
        let incast = subset(&|r| r.incast);
        if !incast.is_empty() {
            sets.insert("incast".into(), FlowSet::new(&incast, &config));
        }
        let classes: std::collections::BTreeSet<u8> = out.records.iter().map(|r| r.class).collect();
        if classes.len() > 1 {
            for c in classes {
                let members = subset(&|r| !r.incast && r.class == c);
                sets.insert(format!("class{c}"), FlowSet::new(&members, &config));
            }
        }
        for (g, row) in s.groups.iter().enumerate() {
            let members = subset(&|r| r.group == Some(g as u16));
            sets.insert(
                format!("group:{}", row.label),
                FlowSet::new(&members, &config),
            );
        }
        let buffer = s.occupancy.as_ref().map(|o| Buffer {
            p50: o.all.p50_bytes as f64,
            p99: o.all.p99_bytes as f64,
            max: o.all.max_bytes as f64,
            cdf: thin(&o.all.cdf),
        });
        let active = s.active_flows.as_ref().map(|a| Active {
            mean: a.mean,
            p50: a.p50,
            p90: a.p90,
            p99: a.p99,
            max: a.max,
            above_32: a.fraction_above(32),
            cdf: a.cdf.iter().map(|&(n, f)| (n as f64, f)).collect(),
        });
        let paused = s.flow_control.as_ref().map(|f| Paused {
            kind: f.kind.clone(),
            mean: f.link_paused_mean,
            max: f.link_paused_max,
            pause_frames: f.pause_frames,
            assignments: f.assignments,
            queue_collisions: f.queue_collisions,
        });
        Digest {
            flows: s.flows,
            unfinished: s.unfinished,
            sets,
            buffer,
            active,
            paused,
            utilization: s.links.iter().map(|l| (l.name.clone(), l.mean)).collect(),
            throughput: s.long_lived.iter().map(|l| l.share_of_link).collect(),
            single_packet_delay_p99_ns: s.single_packet_delay.map(|d| d.p99_ns),
            core_delay: s
                .flow_control
                .as_ref()
                .and_then(|f| f.scheme.as_ref()?.get::<HomaReport>())
                .map(|h| CoreDelay {
                    up: (h.core_up.p50_ns, h.core_up.p99_ns),
                    down: (h.core_down.p50_ns, h.core_down.p99_ns),
                }),
            drops: s.drops.total(),
            timeouts: out.counters.timeouts,
            retransmitted: out.counters.retransmits,
            injected: out.counters.injected_pkts,
            data_packets: out.counters.data_pkts,
            dropped_data_packets: out.counters.dropped_data_pkts,
            packet_hops: out.counters.hops,
            port_loss: s.switch_port_loss,
            trace: out.trace.as_ref().map_or_else(Vec::new, |recorded| {
                let mut lines = recorded.series.lines(TRACE_POINTS);
                lines.retain(|l| l.points.iter().any(|p| p.1 != 0.0));
                lines
            }),
            violations: out.violations.len() + usize::from(out.stalled.is_some()),
        }
    }

    /// The flow set `name`, if the run had such flows.
    pub fn set(&self, name: &str) -> Option<&FlowSet> {
        self.sets.get(name)
    }
}

/// At most [`CDF_POINTS`] points of a CDF of `(bytes, fraction)`: the last point at or below each of evenly
/// spaced fractions, and the end.
fn thin(cdf: &[(u64, f64)]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut next = 0.0;
    for (i, &(x, f)) in cdf.iter().enumerate() {
        if f >= next || i + 1 == cdf.len() {
            out.push((x as f64, f));
            next = f + 1.0 / CDF_POINTS as f64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_the_ends_and_at_most_the_budget() {
        let cdf: Vec<(u64, f64)> = (1..=10_000)
            .map(|i| (i * 1000, i as f64 / 10_000.0))
            .collect();
        let t = thin(&cdf);
        assert!(t.len() <= CDF_POINTS + 1, "{}", t.len());
        assert_eq!(t.first(), Some(&(1000.0, 0.0001)));
        assert_eq!(t.last(), Some(&(10_000_000.0, 1.0)));
    }

    #[test]
    fn stats_use_nearest_rank() {
        let s = Stats::of((1..=100).map(f64::from).collect()).unwrap();
        assert_eq!((s.flows, s.p50, s.p99, s.max), (100, 51.0, 100.0, 100.0));
        assert!(Stats::of(Vec::new()).is_none());
    }
}
