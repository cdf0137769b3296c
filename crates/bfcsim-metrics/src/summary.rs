//! The run summary: slowdown statistics per flow-size bucket, overall, for incast flows and for each named
//! workload group, plus drops, buffer occupancy and link utilization, serialized to `summary.json`.
//!
//! Percentiles are nearest-rank on the sorted values with index `floor(p·n)` clamped to `n-1`, as both BFC's
//! `calculate_fct_slowdown.py` and HPCC's `analysis/fct_analysis.py` compute them. Means sum the sorted values,
//! so a summary does not depend on the order of the records.

use crate::collective::CollectiveReport;
use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::buckets::{BucketScheme, byte_range, short_bytes};
use crate::budget::BudgetReport;
use crate::drops::DropCounts;
use crate::hop::{ActiveFlowsReport, DelayReport, FlowControlReport};
use crate::occupancy::OccupancyReport;
use crate::record::FlowRecord;
use crate::throughput::LongFlowReport;
use crate::utilization::LinkSetStats;

/// How to summarize flows (e.g. an experiment TOML's `[summary]` table).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SummaryConfig {
    /// Size buckets.
    pub buckets: BucketScheme,
    /// Raise slowdowns below 1 to 1, as HPCC's analysis does (off by default: raw values show a bad ideal).
    pub clamp_slowdown: bool,
}

/// Slowdown statistics of a non-empty set of flows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SlowdownStats {
    /// Mean.
    pub avg: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 95th percentile (nearest rank).
    pub p95: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl SlowdownStats {
    /// Statistics of `values`, sorted ascending; `None` when empty.
    pub fn from_sorted(values: &[f64]) -> Option<SlowdownStats> {
        let max = *values.last()?;
        Some(SlowdownStats {
            avg: values.iter().sum::<f64>() / values.len() as f64,
            p50: nearest_rank(values, 0.5),
            p95: nearest_rank(values, 0.95),
            p99: nearest_rank(values, 0.99),
            max,
        })
    }
}

/// The value at index `floor(p·n)` (clamped to the last) of non-empty, sorted `values`.
///
/// # Panics
/// If `values` is empty.
pub fn nearest_rank(values: &[f64], p: f64) -> f64 {
    let i = ((p * values.len() as f64) as usize).min(values.len() - 1);
    values[i]
}

/// One row of the summary: a size bucket, all non-incast flows, or the incast flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketRow {
    /// Human label, e.g. `3-4 pkts (2-4KB)`.
    pub label: String,
    /// Finished flows (those with a slowdown).
    pub flows: usize,
    /// Flows unfinished at the end of the run.
    pub unfinished: usize,
    /// Smallest finished flow size.
    pub min_size_bytes: Option<u64>,
    /// Largest finished flow size (HPCC labels its equal-count groups with it).
    pub max_size_bytes: Option<u64>,
    /// Slowdown statistics of the finished flows; `None` when there are none.
    pub slowdown: Option<SlowdownStats>,
}

/// Everything a run measured, as written to `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The size buckets used.
    pub bucket_scheme: BucketScheme,
    /// Whether slowdowns below 1 were raised to 1.
    pub clamp_slowdown: bool,
    /// All flows.
    pub flows: usize,
    /// Flows unfinished at the end of the run, incast included.
    pub unfinished: usize,
    /// All non-incast flows.
    pub overall: BucketRow,
    /// Non-incast flows by size.
    pub buckets: Vec<BucketRow>,
    /// Incast flows, if there were any.
    pub incast: Option<BucketRow>,
    /// Each named workload group's flows (labelled with the group's name), in group order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<BucketRow>,
    /// Packet drops by reason.
    pub drops: DropCounts,
    /// Buffer occupancy, if it was sampled.
    pub occupancy: Option<OccupancyReport>,
    /// Link utilization per link set.
    pub links: Vec<LinkSetStats>,
    /// Queuing delay of data packets per switch hop (after the warm-up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queuing_delay: Option<DelayReport>,
    /// Queuing delay per switch hop of the packets of one-packet flows (BFC §2.1's "single packet" delay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single_packet_delay: Option<DelayReport>,
    /// Throughput of each long-lived flow over the measurement window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub long_lived: Vec<LongFlowReport>,
    /// Active flows per sampled switch egress port (BFC §2.3, Fig. 4 and Fig. 10c), when sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_flows: Option<ActiveFlowsReport>,
    /// Per-hop flow control's activity, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_control: Option<FlowControlReport>,
    /// The Tofino2 hardware budget of BFC's switch state and recirculation, when BFC ran with a hashed flow table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware: Option<BudgetReport>,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// Data packets the NICs sent, retransmissions included.
    pub data_packets: u64,
    /// Data packets dropped.
    pub dropped_data_packets: u64,
    /// Packets of every kind (ACKs and control included) dropped.
    pub dropped_packets: u64,
    /// Packet transmissions over a link (packet-hops), every kind.
    pub packet_hops: u64,
    /// Data packets delivered whose bytes their receiver already had: retransmissions that were not needed
    /// (after a timeout that fired while nothing was lost, or a go-back beyond the lost packet).
    pub duplicate_data: u64,
    /// The mean over switch egress ports that saw a packet of each port's drops over its arrivals, every kind:
    /// the "Overall packet drop ratio" the BCC authors' ns-2 scripts print (`finish` in their
    /// `tcp-traffic-gen.tcl` averages `pkt_drop_/pkt_tot_` over the switch queues); `None` without switches.
    pub switch_port_loss: Option<f64>,
    /// Each collective's completion times ([`crate::collective`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub collectives: Vec<CollectiveReport>,
    /// What each fabric event (`[[events]]`) cost ([`crate::fabric_events`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fabric_events: Vec<crate::FabricEventReport>,
}

/// A flow reduced to what the statistics need.
#[derive(Clone, Copy)]
struct Sample {
    size: u64,
    slowdown: Option<f64>,
}

impl Summary {
    /// BCC §III-C's packet loss rate: data packets dropped over data packets sent (0 when none were sent).
    pub fn loss_rate(&self) -> f64 {
        self.dropped_data_packets as f64 / self.data_packets.max(1) as f64
    }

    /// Packets dropped over packets that arrived at a queue, NIC or switch, of every kind (ACKs included): the
    /// BCC authors' ns-2 queue counters (`pkt_drop_`, `pkt_tot_`, both counted at each enqueue) summed over
    /// every queue. A packet arrives at one queue per link it crosses and at the one that drops it. The
    /// authors' scripts print the mean of the switch ports' ratios instead ([`Summary::switch_port_loss`]).
    pub fn queue_loss_rate(&self) -> f64 {
        queue_loss_rate(self.dropped_packets, self.packet_hops)
    }

    /// Summarizes `records`, whose `group` indices name entries of `groups` (an index past its end is labelled
    /// `group N`); drops, occupancy and links start empty for the caller to fill in.
    pub fn new(records: &[FlowRecord], config: &SummaryConfig, groups: &[String]) -> Summary {
        let sample = |r: &FlowRecord| Sample {
            size: r.size.0,
            slowdown: r
                .slowdown()
                .map(|s| if config.clamp_slowdown { s.max(1.0) } else { s }),
        };
        let normal: Vec<Sample> = records.iter().filter(|r| !r.incast).map(sample).collect();
        let incast: Vec<Sample> = records.iter().filter(|r| r.incast).map(sample).collect();
        let count = records
            .iter()
            .filter_map(|r| r.group)
            .map(|g| g as usize + 1)
            .max()
            .unwrap_or(0)
            .max(groups.len());
        let mut members: Vec<Vec<Sample>> = vec![Vec::new(); count];
        for r in records {
            if let Some(g) = r.group {
                members[g as usize].push(sample(r));
            }
        }
        let group_rows = members
            .iter()
            .enumerate()
            .map(|(g, m)| {
                let label = groups.get(g).cloned().unwrap_or(format!("group {g}"));
                row(label, m)
            })
            .collect();
        Summary {
            bucket_scheme: config.buckets.clone(),
            clamp_slowdown: config.clamp_slowdown,
            flows: records.len(),
            unfinished: records.iter().filter(|r| r.finish.is_none()).count(),
            overall: row("all non-incast".into(), &normal),
            buckets: bucket_rows(&config.buckets, &normal),
            incast: (!incast.is_empty()).then(|| row("incast".into(), &incast)),
            groups: group_rows,
            drops: DropCounts::new(),
            occupancy: None,
            links: Vec::new(),
            queuing_delay: None,
            single_packet_delay: None,
            long_lived: Vec::new(),
            active_flows: None,
            flow_control: None,
            hardware: None,
            timeouts: 0,
            data_packets: 0,
            dropped_data_packets: 0,
            dropped_packets: 0,
            packet_hops: 0,
            duplicate_data: 0,
            switch_port_loss: None,
            collectives: Vec::new(),
            fabric_events: Vec::new(),
        }
    }
}

fn row(label: String, samples: &[Sample]) -> BucketRow {
    let mut slowdowns: Vec<f64> = samples.iter().filter_map(|s| s.slowdown).collect();
    sort_total(&mut slowdowns);
    let finished_sizes = samples
        .iter()
        .filter(|s| s.slowdown.is_some())
        .map(|s| s.size);
    BucketRow {
        label,
        flows: slowdowns.len(),
        unfinished: samples.len() - slowdowns.len(),
        min_size_bytes: finished_sizes.clone().min(),
        max_size_bytes: finished_sizes.max(),
        slowdown: SlowdownStats::from_sorted(&slowdowns),
    }
}

/// Sorts `values` in [`f64::total_cmp`]'s order, comparing them as the integers that order is defined by: the
/// bits as a signed number with a negative number's magnitude bits flipped. A summary sorts every finished flow's
/// slowdown several times (all flows, each bucket, each group); comparing integers took a third fewer
/// instructions than `sort_unstable_by(f64::total_cmp)`, which makes the same conversion inside every comparison
/// (89 M to 57 M on the CLOS-128 bench's 175,000 flows, conversions included). Unstable:
/// two values equal under `total_cmp` have the same bits, so the order is the stable sort's.
fn sort_total(values: &mut [f64]) {
    // Its own inverse: the sign bit, which decides whether the other bits flip, is never flipped.
    fn key(bits: u64) -> u64 {
        bits ^ ((bits as i64 >> 63) as u64 >> 1)
    }
    let mut keys: Vec<i64> = values.iter().map(|v| key(v.to_bits()) as i64).collect();
    keys.sort_unstable();
    for (v, k) in values.iter_mut().zip(keys) {
        *v = f64::from_bits(key(k as u64));
    }
}

fn bucket_rows(scheme: &BucketScheme, samples: &[Sample]) -> Vec<BucketRow> {
    match (scheme.fixed(), scheme) {
        (Some(buckets), _) => {
            let mut members: Vec<Vec<Sample>> = vec![Vec::new(); buckets.len()];
            for s in samples {
                let i = buckets
                    .iter()
                    .position(|b| b.max.is_none_or(|m| s.size <= m))
                    .unwrap_or(buckets.len() - 1);
                members[i].push(*s);
            }
            buckets
                .into_iter()
                .zip(members)
                .map(|(b, m)| row(b.label, &m))
                .collect()
        }
        (None, BucketScheme::EqualCount { n }) => equal_count_rows(*n, samples),
        (None, _) => unreachable!("only equal-count buckets depend on the flows"),
    }
}

/// HPCC's equal-count groups over finished flows sorted by size (ties by slowdown); each unfinished flow joins
/// the first group whose largest size is at least its own (else the last).
fn equal_count_rows(n: usize, samples: &[Sample]) -> Vec<BucketRow> {
    let mut finished: Vec<(u64, f64)> = samples
        .iter()
        .filter_map(|s| s.slowdown.map(|sd| (s.size, sd)))
        .collect();
    finished.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.total_cmp(&b.1)));
    let total = finished.len();
    let n = n.max(1);
    let mut groups: Vec<Vec<Sample>> = (0..n)
        .map(|k| finished[k * total / n..(k + 1) * total / n].iter())
        .filter(|g| g.len() > 0)
        .map(|g| {
            g.map(|&(size, sd)| Sample {
                size,
                slowdown: Some(sd),
            })
            .collect()
        })
        .collect();
    if !groups.is_empty() {
        for s in samples.iter().filter(|s| s.slowdown.is_none()) {
            let last = groups.len() - 1;
            let i = groups
                .iter()
                .position(|g| g.last().is_some_and(|l| l.size >= s.size))
                .unwrap_or(last);
            groups[i].push(*s);
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let sizes = g.iter().filter(|s| s.slowdown.is_some()).map(|s| s.size);
            let (lo, hi) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
            let label = match lo.cmp(&hi) {
                Ordering::Equal => short_bytes(hi),
                _ => byte_range(lo, hi),
            };
            row(label, &g)
        })
        .collect()
}

/// Drops over queue arrivals, `hops + dropped` ([`Summary::queue_loss_rate`]); 0 when nothing arrived.
pub fn queue_loss_rate(dropped: u64, hops: u64) -> f64 {
    dropped as f64 / (hops + dropped).max(1) as f64
}

/// The mean over ports of drops over arrivals, each port given as `(arrivals, dropped)`; ports without
/// arrivals are left out (ns-2's script would divide by zero), `None` when none is left
/// ([`Summary::switch_port_loss`]).
pub fn mean_port_loss(ports: impl IntoIterator<Item = (u64, u64)>) -> Option<f64> {
    let (sum, n) = ports
        .into_iter()
        .filter(|&(arrived, _)| arrived > 0)
        .fold((0.0, 0u32), |(sum, n), (arrived, dropped)| {
            (sum + dropped as f64 / arrived as f64, n + 1)
        });
    (n > 0).then(|| sum / f64::from(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Sorting slowdowns as integers gives `f64::total_cmp`'s order bit for bit, signed zeros, infinities and
        /// NaNs of either sign included.
        #[test]
        fn sorting_as_integers_is_total_cmp_order(bits in proptest::collection::vec(any::<u64>(), 0..64),
                                                  specials in proptest::collection::vec(0usize..6, 0..8)) {
            let special = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN];
            let mut values: Vec<f64> = bits.into_iter().map(f64::from_bits).collect();
            values.extend(specials.into_iter().map(|i| special[i]));
            let mut expected = values.clone();
            expected.sort_by(f64::total_cmp);
            sort_total(&mut values);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&values), bits(&expected));
        }
    }
    use bfcsim_core::{Bytes, FlowId, NodeId, Time};

    fn record(id: u32, size: u64, fct_ns: Option<u64>, ideal_ns: u64, incast: bool) -> FlowRecord {
        FlowRecord {
            id: FlowId(id),
            src: NodeId(id % 4),
            dst: NodeId(4 + id % 4),
            size: Bytes(size),
            start: Time::from_ns(1000 * id as u64),
            finish: fct_ns.map(|f| Time::from_ns(1000 * id as u64 + f)),
            ideal: Time::from_ns(ideal_ns),
            incast,
            class: 0,
            sport: 10000 + id as u16,
            dport: 0,
            group: None,
        }
    }

    #[test]
    fn nearest_rank_matches_the_scripts() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        // int(10 * 0.5) = 5 -> 6; int(10 * 0.95) = 9 -> 10; int(10 * 0.99) = 9 -> 10.
        assert_eq!(
            (
                nearest_rank(&v, 0.5),
                nearest_rank(&v, 0.95),
                nearest_rank(&v, 0.99)
            ),
            (6.0, 10.0, 10.0)
        );
        assert_eq!(nearest_rank(&v, 1.0), 10.0);
        assert_eq!(nearest_rank(&[3.0], 0.99), 3.0);
    }

    #[test]
    fn buckets_incast_and_unfinished() {
        let records = vec![
            record(0, 500, Some(2000), 1000, false), // 1 pkt, slowdown 2
            record(1, 999, Some(1000), 1000, false), // 1 pkt, slowdown 1
            record(2, 1000, Some(500), 1000, false), // 2 pkts, slowdown 0.5
            record(3, 50_000, None, 1000, false),    // 17-64 pkts, unfinished
            record(4, 2_000_000, Some(9000), 1000, false),
            record(5, 500, Some(4000), 1000, true),
            record(6, 500, None, 1000, true),
        ];
        let s = Summary::new(&records, &SummaryConfig::default(), &[]);
        assert_eq!((s.flows, s.unfinished), (7, 2));
        assert_eq!((s.overall.flows, s.overall.unfinished), (4, 1));
        let b = &s.buckets;
        assert_eq!(b.len(), 9);
        assert_eq!(
            (
                b[0].flows,
                b[0].slowdown.unwrap().avg,
                b[0].slowdown.unwrap().max
            ),
            (2, 1.5, 2.0)
        );
        assert_eq!(b[1].slowdown.unwrap().p50, 0.5);
        assert_eq!((b[5].flows, b[5].unfinished, b[5].slowdown), (0, 1, None));
        assert_eq!((b[8].flows, b[8].max_size_bytes), (1, Some(2_000_000)));
        let incast = s.incast.as_ref().unwrap();
        assert_eq!(
            (
                incast.flows,
                incast.unfinished,
                incast.slowdown.unwrap().p99
            ),
            (1, 1, 4.0)
        );

        let clamped = Summary::new(
            &records,
            &SummaryConfig {
                clamp_slowdown: true,
                ..Default::default()
            },
            &[],
        );
        assert_eq!(clamped.buckets[1].slowdown.unwrap().p50, 1.0);
    }

    #[test]
    fn equal_count_groups_like_hpcc() {
        // Sizes 1..=10 with slowdown = size; 3 groups over 10 flows: [0,3), [3,6), [6,10).
        let mut records: Vec<FlowRecord> = (1..=10)
            .map(|i| record(i, i as u64, Some(i as u64 * 10), 10, false))
            .collect();
        records.push(record(11, 5, None, 10, false));
        records.push(record(12, 99, None, 10, false));
        let s = Summary::new(
            &records,
            &SummaryConfig {
                buckets: BucketScheme::EqualCount { n: 3 },
                clamp_slowdown: false,
            },
            &[],
        );
        let rows: Vec<(&str, usize, usize, Option<u64>)> = s
            .buckets
            .iter()
            .map(|r| (r.label.as_str(), r.flows, r.unfinished, r.max_size_bytes))
            .collect();
        assert_eq!(
            rows,
            [
                ("1B-3B", 3, 0, Some(3)),
                ("4B-6B", 3, 1, Some(6)),
                ("7B-10B", 4, 1, Some(10))
            ]
        );
        assert_eq!(s.buckets[2].slowdown.unwrap().avg, 8.5);
        // More groups than flows: empty groups are left out.
        let s = Summary::new(
            &records[..2],
            &SummaryConfig {
                buckets: BucketScheme::EqualCount { n: 20 },
                clamp_slowdown: false,
            },
            &[],
        );
        assert_eq!(s.buckets.len(), 2);
    }

    #[test]
    fn summary_ignores_record_order() {
        let records: Vec<FlowRecord> = (0..50)
            .map(|i| {
                record(
                    i,
                    100 * i as u64 + 1,
                    Some(1000 + 37 * i as u64),
                    999,
                    i % 7 == 0,
                )
            })
            .collect();
        let mut reversed = records.clone();
        reversed.reverse();
        let cfg = SummaryConfig {
            buckets: BucketScheme::EqualCount { n: 4 },
            clamp_slowdown: false,
        };
        assert_eq!(
            Summary::new(&records, &cfg, &[]),
            Summary::new(&reversed, &cfg, &[])
        );
    }

    #[test]
    fn groups_are_summarized_apart() {
        let mut records: Vec<FlowRecord> = (0..6)
            .map(|i| record(i, 1000, Some(1000 * (i as u64 + 1)), 1000, false))
            .collect();
        for (r, g) in records
            .iter_mut()
            .zip([None, Some(0), Some(0), Some(2), Some(2), Some(2)])
        {
            r.group = g;
        }
        records[5].finish = None;
        let s = Summary::new(
            &records,
            &SummaryConfig::default(),
            &["long".into(), "mice".into()],
        );
        let rows: Vec<(&str, usize, usize, Option<f64>)> = s
            .groups
            .iter()
            .map(|r| {
                (
                    r.label.as_str(),
                    r.flows,
                    r.unfinished,
                    r.slowdown.map(|x| x.p50),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("long", 2, 0, Some(3.0)),
                ("mice", 0, 0, None),
                ("group 2", 2, 1, Some(5.0))
            ]
        );
        // Group members still count among all non-incast flows.
        assert_eq!((s.overall.flows, s.overall.unfinished), (5, 1));
        assert!(
            Summary::new(&records[..1], &SummaryConfig::default(), &[])
                .groups
                .is_empty()
        );
    }

    /// The BCC authors' figure averages the ports' ratios, so a busy port and a quiet one weigh the same; a
    /// port nothing reached is left out.
    #[test]
    fn port_loss_is_the_mean_of_the_ports_ratios() {
        let ports = [(1_000, 10), (100, 0), (0, 0), (4, 1)];
        let mean = mean_port_loss(ports).unwrap();
        assert!((mean - (0.01 + 0.0 + 0.25) / 3.0).abs() < 1e-12, "{mean}");
        assert_eq!(mean_port_loss([(0, 0)]), None);
        assert_eq!(mean_port_loss([]), None);
        // Against every drop over every arrival: 11 of 1104.
        assert!(queue_loss_rate(11, 1_104 - 11) < mean);
    }
}
