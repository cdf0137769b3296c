//! What per-hop mechanisms did during a run: per-packet queuing delay at switch egresses, and the work of
//! per-hop flow control (pause frames, paused time, queue assignment collisions, the deadlock watchdog).

use bfcsim_core::LogHistogram;
pub use bfcsim_core::hist::DelayReport;
use bfcsim_schemes::fabric::SchemeReport;
use serde::Serialize;

use crate::summary::nearest_rank;

/// Active flows per switch egress port, sampled over time on every port (BFC §2.3, Fig. 4 and Fig. 10c).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ActiveFlowsReport {
    /// Port samples taken.
    pub samples: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Maximum.
    pub max: u64,
    /// `(active flows, fraction of samples at or below)` for every count seen.
    pub cdf: Vec<(u64, f64)>,
}

impl ActiveFlowsReport {
    /// From per-sample counts (exact below 128, within 1.6% above).
    pub fn from_counts(h: &LogHistogram, sum: u64) -> ActiveFlowsReport {
        let n = h.count();
        let mut cdf = Vec::new();
        let mut q = 0.0;
        while n > 0 && q < 1.0 {
            let v = h.quantile(q).unwrap_or(0);
            let below = h.rank_at_or_below(v) as f64 / n as f64;
            cdf.push((v, below));
            q = below + 0.5 / n as f64;
        }
        ActiveFlowsReport {
            samples: n,
            mean: sum as f64 / n.max(1) as f64,
            p50: h.quantile(0.5).unwrap_or(0),
            p90: h.quantile(0.9).unwrap_or(0),
            p99: h.quantile(0.99).unwrap_or(0),
            max: h.max(),
            cdf,
        }
    }

    /// The fraction of samples with more than `n` active flows (Fig. 4 marks n = 32, Tofino2's queues per port).
    pub fn fraction_above(&self, n: u64) -> f64 {
        let at_or_below = self
            .cdf
            .iter()
            .take_while(|&&(v, _)| v <= n)
            .last()
            .map_or(0.0, |&(_, f)| f);
        1.0 - at_or_below
    }
}

impl std::fmt::Display for ActiveFlowsReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "mean {:.2} p50 {} p90 {} p99 {} max {}, above 32 in {:.4} of {} samples",
            self.mean,
            self.p50,
            self.p90,
            self.p99,
            self.max,
            self.fraction_above(32),
            self.samples
        )
    }
}

/// Per-hop flow control's activity over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowControlReport {
    /// The mechanism (`bfc`, `pfc`).
    pub kind: String,
    /// PAUSE frames sent.
    pub pause_frames: u64,
    /// RESUME frames sent.
    pub resume_frames: u64,
    /// Periodic refresh frames sent.
    pub refresh_frames: u64,
    /// Frames lost on purpose (fault injection).
    pub frames_lost: u64,
    /// Queue assignments made (BFC).
    pub assignments: u64,
    /// Assignments that found no empty queue: a new flow shares an occupied one (BFC §3.3.1).
    pub queue_collisions: u64,
    /// Packets that found their flow-table entry holding another flow's packets (BFC §3.3.1).
    pub index_collisions: u64,
    /// Mean over the links that can be paused of the fraction of time each was paused. BFC (which pauses single
    /// queues): switch ports with packets waiting and none sendable. PFC: switch ports and NICs with a priority
    /// paused by the device downstream, as `pfc.txt` records it.
    pub link_paused_mean: f64,
    /// The largest such fraction.
    pub link_paused_max: f64,
    /// The fraction of time each switch data queue was paused, over all (port, queue) pairs.
    pub queue_paused: Option<QueuePausedReport>,
    /// The same link fractions per transmitting node (switch or NIC), for the nodes whose links were ever
    /// paused, most paused first: where a PFC storm or BFC's backpressure sits in the fabric.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_node: Vec<NodePausedReport>,
    /// Queues found paused longer than the watchdog bound.
    pub watchdog_alarms: u64,
    /// The first of them.
    pub first_alarm: Option<String>,
    /// What the scheme reports of its own (ExpressPass's credits under `credits`, Homa's grants under `homa`,
    /// Aquarius's pausing under `aquarius`), from the scheme's descriptor.
    #[serde(flatten)]
    pub scheme: Option<SchemeReport>,
}

/// One node's share of [`FlowControlReport`]'s link pauses.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodePausedReport {
    /// Node id.
    pub node: u32,
    /// `switch` or `host`.
    pub kind: &'static str,
    /// Its links that can be paused.
    pub links: usize,
    /// Mean over them of the fraction of time each was paused.
    pub paused_mean: f64,
    /// The largest such fraction.
    pub paused_max: f64,
    /// PFC PAUSE frames the node received (what `pfc.txt` lists for it); 0 under BFC, whose frames pause single
    /// queues and are counted in total only.
    pub pauses_received: u64,
}

impl NodePausedReport {
    /// The nodes among `links` (node, kind, paused fraction) with a paused fraction above zero or a PAUSE
    /// received (`pauses`: node and count), most paused (by mean) first, ties by node id.
    pub fn by_node(
        links: &[(u32, &'static str, f64)],
        pauses: &std::collections::BTreeMap<u32, u64>,
    ) -> Vec<NodePausedReport> {
        let mut nodes: std::collections::BTreeMap<u32, NodePausedReport> = Default::default();
        for &(node, kind, fraction) in links {
            let r = nodes.entry(node).or_insert(NodePausedReport {
                node,
                kind,
                links: 0,
                paused_mean: 0.0,
                paused_max: 0.0,
                pauses_received: pauses.get(&node).copied().unwrap_or(0),
            });
            r.links += 1;
            r.paused_mean += fraction;
            r.paused_max = r.paused_max.max(fraction);
        }
        let mut out: Vec<NodePausedReport> = nodes
            .into_values()
            .map(|mut r| {
                r.paused_mean /= r.links as f64;
                r
            })
            .filter(|r| r.paused_max > 0.0 || r.pauses_received > 0)
            .collect();
        out.sort_by(|a, b| {
            b.paused_mean
                .total_cmp(&a.paused_mean)
                .then(a.node.cmp(&b.node))
        });
        out
    }
}

/// How the fraction of time each switch egress data queue was paused is distributed over the (port, queue)
/// pairs: BFC pauses single queues (§3.3.2), so a link can be busy while some of its queues wait.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct QueuePausedReport {
    /// Data queues measured.
    pub queues: u64,
    /// Those paused at some time.
    pub ever_paused: u64,
    /// Mean over the queues.
    pub mean: f64,
    /// 99th percentile over the queues (nearest rank).
    pub p99: f64,
    /// The largest.
    pub max: f64,
}

impl QueuePausedReport {
    /// From each queue's paused fraction; `None` when there are none.
    pub fn from_fractions(mut fractions: Vec<f64>) -> Option<QueuePausedReport> {
        fractions.sort_unstable_by(f64::total_cmp);
        let max = *fractions.last()?;
        Some(QueuePausedReport {
            queues: fractions.len() as u64,
            ever_paused: fractions.iter().filter(|&&f| f > 0.0).count() as u64,
            mean: fractions.iter().sum::<f64>() / fractions.len() as f64,
            p99: nearest_rank(&fractions, 0.99),
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn active_flows_report_percentiles_and_tail_above_a_count() {
        // 100 samples: 0 (50 times), 1..=40 once each, 100 (10 times).
        let mut h = LogHistogram::new();
        let mut sum = 0;
        for v in std::iter::repeat_n(0, 50)
            .chain(1..=40)
            .chain(std::iter::repeat_n(100, 10))
        {
            h.record(v);
            sum += v;
        }
        let r = ActiveFlowsReport::from_counts(&h, sum);
        assert_eq!((r.samples, r.p50, r.max), (100, 0, 100));
        assert_eq!(r.p90, 40);
        assert!((r.mean - sum as f64 / 100.0).abs() < 1e-12);
        // Above 32: 33..=40 and the ten 100s.
        assert!(
            (r.fraction_above(32) - 0.18).abs() < 1e-12,
            "{}",
            r.fraction_above(32)
        );
        assert_eq!(r.fraction_above(1000), 0.0);
        assert!((r.fraction_above(0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn paused_links_group_by_node_most_paused_first() {
        let links = [
            (3, "switch", 0.2),
            (3, "switch", 0.0),
            (5, "host", 0.0),
            (7, "switch", 0.5),
            (9, "host", 0.0),
        ];
        let pauses = [(9, 2)].into_iter().collect();
        let r = NodePausedReport::by_node(&links, &pauses);
        let got: Vec<(u32, usize, f64, f64, u64)> = r
            .iter()
            .map(|n| {
                (
                    n.node,
                    n.links,
                    n.paused_mean,
                    n.paused_max,
                    n.pauses_received,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (7, 1, 0.5, 0.5, 0),
                (3, 2, 0.1, 0.2, 0),
                (9, 1, 0.0, 0.0, 2)
            ]
        );
    }

    #[test]
    fn queue_paused_distribution() {
        assert_eq!(QueuePausedReport::from_fractions(Vec::new()), None);
        // 200 queues: 190 never paused, ten paused 10%, 20%, ..., 100% of the time.
        let mut f = vec![0.0; 190];
        f.extend((1..=10).map(|i| i as f64 / 10.0));
        let r = QueuePausedReport::from_fractions(f).unwrap();
        assert_eq!((r.queues, r.ever_paused, r.max), (200, 10, 1.0));
        assert!((r.mean - 5.5 / 200.0).abs() < 1e-12);
        // Nearest rank: index floor(0.99 × 200) = 198 of the sorted values, the ninth largest.
        assert_eq!(r.p99, 0.9);
    }
}
