//! Figures as data (`experiments/figures/*.toml`): a figure of a paper is a named set of runs (series ×
//! parameter points × seeds, each an experiment file plus overrides), what to draw from them and which of the
//! paper's claims to check, with the paper's numbers. Adding a figure is adding such a file; this module reads
//! it, and [`plan`] turns it into runs for the store ([`crate::store`]).
//!
//! ```toml
//! name = "bfc-fig12"
//! paper = "BFC (Goyal et al., NSDI 2022)"
//! source = "§6.3, Fig. 12"
//! title = "Average slowdown of long flows and p99 of short flows against load"
//! setup = "CLOS-128, Facebook Hadoop, lognormal arrivals, no incast"
//! experiment = "../clos128-hadoop.toml"   # relative to this file
//! missing = ["ExpressPass (no receiver-driven schemes yet)"]
//! fidelity = "Reproduced figures"         # the docs/FIDELITY.md section explaining disagreements (default)
//! # claims_from = "analytic"              # the claims are the mechanism's analytic expectations, not the
//!                                         # paper's numbers (its text not at hand): counted apart in the index
//! set = ["metrics.buckets=bfc_hadoop"]    # overrides for every run
//! seeds = [1]
//! [paper_scale]                           # what "paper scale" means (overrides, and optionally seeds/axis)
//! set = ["workload.duration=50ms"]
//! describe = "50 ms of arrivals"
//! [paper_scale.half]                      # optional: the claims again at half the scale, to show they settled
//! set = ["workload.duration=25ms"]
//! describe = "25 ms of arrivals"
//! [quick]                                 # `--quick`: seconds per run
//! set = ["workload.duration=1ms"]
//! axis = [0.5, 0.8]
//! describe = "1 ms of arrivals, two loads"
//! [axis]                                  # the parameter the figure varies (optional)
//! key = "workload.load"
//! label = "load"
//! unit = "percent"                        # plain | percent | bytes | ns
//! # log = true; suffix = "Gbps"           # log-scale axis; appended to each value in the override
//! values = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
//! [[series]]                              # one line or bar per series; label = colour (palette.toml)
//! label = "BFC-32"
//! scheme = "bfc"
//! [[series]]
//! label = "HPCC"
//! scheme = "hpcc"
//! only = [0.5, 0.6, 0.7]                  # axis values this series runs at
//! [[plot]]
//! kind = "metric"                         # slowdown | cdf | bars | metric | timeseries
//! metric = "long.avg"
//! # bars only: title = "average throughput of f1 (Gb/s)"   (instead of the metric's words); log = true
//! [[claim]]
//! text = "BFC-128 has a lower short-flow tail than BFC-32 at loads >= 90%"
//! metric = "short.p99"
//! series = ["BFC-32"]
//! over = "BFC-128"                        # the claim is about series / over
//! # over_at = 0.9                         # or about each series / itself at this axis value
//! at = [0.9, 0.95]
//! paper = [1.0, inf]                      # a range, or one number (± `tolerance`, relative, default 1/3)
//!                                         # (a ratio outside it on the paper's side of 1: "agrees in direction only")
//! # across_seeds = "cv"                   # check the spread over seeds (standard deviation / mean), no `over`
//! ```
//!
//! Metrics ([`Metric`]) name a number of a run's digest: `short.p99`, `long.avg`, `all.p95` (slowdowns of BFC
//! §6.3's short flows < 3 KB, long flows > 3 MB, or all, of the non-incast flows; prefix `incast:`, `classN:` or
//! `group:NAME:` for another flow set), `buffer.p99`, `paused.mean`, `active.p99`, `util.NAME`, `throughput`,
//! `single-delay.p99`, `core.up.p50|p99` and `core.down.p50|p99` (Homa's scheduled packets into and out of the
//! core, BFC Table 2), `idle`, `drops`, `loss`, `timeouts`, `unfinished`, `retx`, `collisions`; and flow
//! completion times in ns by BCC §V-B's size classes, `fct.small.p99`, `fct.medium.avg`, `fct.large.avg`,
//! `fct.all.avg` (with the same flow-set prefixes), and by Aquarius §4's, `fct.short.p99` (< 3 KB) and
//! `fct.big.avg` (> 1 MB), and `fct.top.avg` (> 500 KB: the Web Server distribution ends at 1 MB, so its
//! largest flows stand in for Aquarius's large ones); `[SET:]goodput` is the mean over a set's finished flows of
//! size / FCT in Gb/s (Aquarius Fig. 5's average throughput per flow). `loss` is BCC §III-C's packet loss rate
//! (data packets dropped over data packets sent); `loss.queues` sums the BCC authors' ns-2 queue counters over
//! every queue (every packet dropped over every packet arriving at a queue, ACKs included;
//! [`bfcsim_metrics::Summary::queue_loss_rate`]); `loss.ports` is the figure the authors' scripts print, the mean
//! over switch egress ports of each one's drops over its arrivals ([`bfcsim_metrics::Summary::switch_port_loss`]).
//!
//! `trace.mean:SERIES@ENTITY` and `trace.max:SERIES@ENTITY` read the runs' time series ([`crate::trace`], which
//! the figure's `set` turns on): `trace.mean:link.util@port:1`, `trace.max:queue.bytes@port:1/q*` (a trailing
//! `*`: every entity it starts). A `timeseries` plot draws one such series over time:
//!
//! ```toml
//! [[plot]]
//! kind = "timeseries"
//! series = "queue.bytes"
//! entity = "port:1/"                      # every entity starting with it (each queue of port 1)
//! hline = [12500.0, "Th (2 active flows)"]  # a dashed reference line
//! of = ["BFC"]                            # only these series (default: all)
//! ```
//!
//! A `metric` plot with `over = "LABEL"` divides each series' value by that series' value at the same axis
//! point, as papers that normalise to a baseline draw (BCC Figs. 3 and 9-13); claims do the same with `over`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bfcsim_plot::Unit;
use serde::Deserialize;

use crate::digest::{Digest, Fct, Stats};
use crate::store::{Resolved, RunSpec};

/// The colours of the series of every figure, by label (`palette.toml` next to the figures).
pub const PALETTE: &str = "palette.toml";

/// A figure definition, as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureDef {
    /// The name `bfcsim reproduce` knows it by.
    pub name: String,
    /// The paper.
    pub paper: String,
    /// Where in the paper (section, figure).
    pub source: String,
    /// What the figure shows.
    pub title: String,
    /// The paper's setup, in words, with what we had to choose where it says nothing.
    pub setup: String,
    /// The experiment file every series starts from, relative to the figure file.
    pub experiment: PathBuf,
    /// What of the paper's figure this definition cannot run (missing schemes or engine features).
    #[serde(default)]
    pub missing: Vec<String>,
    /// The `docs/FIDELITY.md` section (the start of its heading) that explains where our runs disagree.
    #[serde(default = "reproduced_figures")]
    pub fidelity: String,
    /// Where the claims' numbers come from: the paper (the default), or, where the paper's text is not at hand,
    /// the analytic expectation of the mechanism (`"analytic"`). The index counts the two apart.
    #[serde(default)]
    pub claims_from: ClaimsFrom,
    /// Overrides applied to every run.
    #[serde(default)]
    pub set: Vec<String>,
    /// Seeds; each run is repeated per seed and numbers are averaged.
    #[serde(default = "one_seed")]
    pub seeds: Vec<u64>,
    /// The paper's scale.
    pub paper_scale: Scale,
    /// The `--quick` scale.
    pub quick: Scale,
    /// The parameter the figure varies.
    #[serde(default)]
    pub axis: Option<AxisDef>,
    /// The series.
    pub series: Vec<SeriesDef>,
    /// The charts.
    #[serde(default)]
    pub plot: Vec<PlotDef>,
    /// The paper's claims.
    #[serde(default)]
    pub claim: Vec<ClaimDef>,
}

/// Where a figure's claims' numbers come from ([`FigureDef::claims_from`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimsFrom {
    /// The paper's text: its numbers or the direction it states.
    #[default]
    Paper,
    /// The mechanism's analytic expectation (a fixed point, a bound), the paper's text not being at hand.
    Analytic,
}

fn reproduced_figures() -> String {
    "Reproduced figures".into()
}

fn one_seed() -> Vec<u64> {
    vec![1]
}

/// What a scale changes.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scale {
    /// Overrides of every run (after the figure's).
    #[serde(default)]
    pub set: Vec<String>,
    /// Seeds instead of the figure's.
    #[serde(default)]
    pub seeds: Option<Vec<u64>>,
    /// Axis values instead of the axis's.
    #[serde(default)]
    pub axis: Option<Vec<f64>>,
    /// The scale in words, for the report.
    pub describe: String,
    /// The claims checked again at half this scale, to show that they have settled (a figure too long to run
    /// at the paper's scale within about two hours on two cores runs at the largest scale that does, with its
    /// headline at half of it beside).
    #[serde(default)]
    pub half: Option<HalfScale>,
}

/// Half a figure's scale: overrides after the scale's own (the same series, points and seeds), for its claims.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HalfScale {
    /// Overrides of every run (after the scale's).
    pub set: Vec<String>,
    /// This scale in words, for the report.
    pub describe: String,
}

/// The varied parameter.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisDef {
    /// The dotted key it sets.
    pub key: String,
    /// Its name on charts and in tables.
    pub label: String,
    /// Its unit.
    #[serde(default)]
    pub unit: UnitName,
    /// Draw it on a logarithmic scale.
    #[serde(default)]
    pub log: bool,
    /// Appended to each value in the override (`suffix = "Gbps"` sets `topology.bottleneck_rate=50Gbps`).
    #[serde(default)]
    pub suffix: String,
    /// Its values (numbers; integers are written without a decimal point).
    pub values: Vec<f64>,
}

/// A unit, as named in a figure file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitName {
    /// A plain number.
    #[default]
    Plain,
    /// A fraction shown as a percentage.
    Percent,
    /// Bytes.
    Bytes,
    /// Nanoseconds.
    Ns,
}

impl UnitName {
    /// The plot crate's unit.
    pub fn unit(self) -> Unit {
        match self {
            UnitName::Plain => Unit::Plain,
            UnitName::Percent => Unit::Fraction,
            UnitName::Bytes => Unit::Bytes,
            UnitName::Ns => Unit::Nanos,
        }
    }
}

/// One series.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesDef {
    /// Its label (and colour, through the palette).
    pub label: String,
    /// The scheme (`scheme.name`).
    #[serde(default)]
    pub scheme: Option<String>,
    /// Another experiment file than the figure's.
    #[serde(default)]
    pub experiment: Option<PathBuf>,
    /// Its own overrides (after the figure's and the scale's).
    #[serde(default)]
    pub set: Vec<String>,
    /// The axis values it runs at (default: all).
    #[serde(default)]
    pub only: Option<Vec<f64>>,
}

/// A statistic of slowdowns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stat {
    /// Mean.
    Avg,
    /// Median.
    P50,
    /// 95th percentile.
    P95,
    /// 99th percentile.
    P99,
    /// Largest.
    Max,
}

impl Stat {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Stat::Avg => "avg",
            Stat::P50 => "p50",
            Stat::P95 => "p95",
            Stat::P99 => "p99",
            Stat::Max => "max",
        }
    }

    /// In words, for axis titles.
    pub fn words(self) -> &'static str {
        match self {
            Stat::Avg => "average",
            Stat::P50 => "median",
            Stat::P95 => "95th-percentile",
            Stat::P99 => "99th-percentile",
            Stat::Max => "largest",
        }
    }

    /// Its value in `s`.
    pub fn of(self, s: &Stats) -> f64 {
        match self {
            Stat::Avg => s.avg,
            Stat::P50 => s.p50,
            Stat::P95 => s.p95,
            Stat::P99 => s.p99,
            Stat::Max => s.max,
        }
    }

    fn parse(text: &str) -> Option<Stat> {
        [Stat::Avg, Stat::P50, Stat::P95, Stat::P99, Stat::Max]
            .into_iter()
            .find(|s| s.name() == text)
    }
}

/// What a CDF chart shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CdfOf {
    /// Switch buffer occupancy.
    Buffer,
    /// Active flows per switch port.
    Active,
}

/// A chart.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum PlotDef {
    /// Slowdown against flow size (log-log), one line per series, one chart per statistic (and axis value).
    Slowdown {
        /// The statistics.
        #[serde(default = "p99")]
        stats: Vec<Stat>,
        /// The flow set (`non-incast`, `incast`, `classN`, `group:NAME`).
        #[serde(default = "non_incast")]
        flows: String,
    },
    /// A CDF, one line per series (one chart per axis value), or with `by_axis` one line per axis value (one
    /// chart per series).
    Cdf {
        /// Of what.
        of: CdfOf,
        /// Lines per axis value.
        #[serde(default)]
        by_axis: bool,
        /// A vertical line at this x, labelled with its value (e.g. the 32 queues per port).
        #[serde(default)]
        vline: Option<f64>,
        /// Cut the x axis here (e.g. at the switch buffer, where one unlimited-buffer series would squeeze the
        /// others into a corner); the title names the series that go beyond and how far.
        #[serde(default)]
        x_max: Option<f64>,
    },
    /// One bar per series (one chart per axis value).
    Bars {
        /// The metric.
        metric: String,
        /// The chart's title and value axis instead of the metric's words (e.g. the paper's name of a flow set).
        #[serde(default)]
        title: Option<String>,
        /// Logarithmic value axis (bars whose values span decades).
        #[serde(default)]
        log: bool,
    },
    /// A metric against the axis, one line per series.
    Metric {
        /// The metric.
        metric: String,
        /// Logarithmic y axis.
        #[serde(default)]
        log: bool,
        /// Divide by this series' value at the same axis point (the paper's normalisation to a baseline).
        #[serde(default)]
        over: Option<String>,
    },
    /// A time series of the runs' `[trace]` (the figure's `set` turns it on), one chart per axis value, one line
    /// per series and entity.
    Timeseries {
        /// The series (`queue.bytes`, `flow.throughput`, ...; [`crate::trace`]).
        series: String,
        /// The entities drawn: those whose name starts with this (`port:1/q`: every queue of port 1). Entities
        /// whose series never rose above zero are left out.
        #[serde(default)]
        entity: String,
        /// The chart's title (default: the series in words).
        #[serde(default)]
        title: Option<String>,
        /// A dashed horizontal line at this value (the pause threshold on a queue-length plot), with its label.
        #[serde(default)]
        hline: Option<(f64, String)>,
        /// The figure's series drawn, by label (default: every series); a chart of each scheme apart, as
        /// papers draw one panel per scheme.
        #[serde(default)]
        of: Vec<String>,
    },
}

fn p99() -> Vec<Stat> {
    vec![Stat::P99]
}

fn non_incast() -> String {
    "non-incast".into()
}

/// A claim of the paper.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimDef {
    /// The claim in words, with where the paper makes it.
    pub text: String,
    /// The metric compared.
    pub metric: String,
    /// The series whose metric is checked (each on its own).
    pub series: Vec<String>,
    /// Divide each by this series' metric (at the same point): the claim is about a ratio.
    #[serde(default)]
    pub over: Option<String>,
    /// Divide each by the same series' metric at this axis value: the claim is about a ratio along the axis
    /// (PayDebt Fig. 16c: "as K_d increases, the buffer increases").
    #[serde(default)]
    pub over_at: Option<f64>,
    /// The axis values the claim is about (default: every value all its series ran at).
    #[serde(default)]
    pub at: Option<Vec<f64>>,
    /// What the paper says: a range `[lo, hi]` (`inf` allowed) or one number.
    pub paper: Expect,
    /// Relative tolerance around one number (default 1/3).
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// What of the per-seed values is checked: their mean (default), or how much they vary from seed to seed.
    #[serde(default)]
    pub across_seeds: AcrossSeeds,
}

/// How a claim reads a series' values over its seeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcrossSeeds {
    /// Their mean.
    #[default]
    Mean,
    /// Their coefficient of variation: the standard deviation over the mean (BFC Fig. 8's whiskers, one
    /// standard deviation over repeated runs, made relative). Needs two seeds or more and no `over`.
    Cv,
}

/// A claimed value.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Expect {
    /// Within this range, ends included.
    Range([f64; 2]),
    /// About this number.
    Value(f64),
}

/// Slowdowns of which flows by size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizes {
    /// < 3 KB.
    Short,
    /// > 3 MB.
    Long,
    /// All.
    All,
}

/// BCC §V-B's flow size classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FctClass {
    /// (0, 100 KB].
    Small,
    /// (100 KB, 10 MB].
    Medium,
    /// Above 10 MB.
    Large,
    /// All.
    All,
    /// < 3 KB (Aquarius §4's short flows).
    Short,
    /// Above 1 MB (Aquarius §4's large flows).
    Big,
    /// Above 500 KB: the largest flows of a distribution that ends at 1 MB (Web Server's), standing in for
    /// Aquarius §4's large flows.
    Top,
}

impl FctClass {
    fn parse(text: &str) -> Option<FctClass> {
        match text {
            "small" => Some(FctClass::Small),
            "medium" => Some(FctClass::Medium),
            "large" => Some(FctClass::Large),
            "all" => Some(FctClass::All),
            "short" => Some(FctClass::Short),
            "big" => Some(FctClass::Big),
            "top" => Some(FctClass::Top),
            _ => None,
        }
    }

    fn of(self, f: &Fct) -> Option<Stats> {
        match self {
            FctClass::Small => f.small,
            FctClass::Medium => f.medium,
            FctClass::Large => f.large,
            FctClass::All => f.all,
            FctClass::Short => f.short,
            FctClass::Big => f.big,
            FctClass::Top => f.top,
        }
    }

    fn words(self) -> &'static str {
        match self {
            FctClass::Small => "flows <= 100KB",
            FctClass::Medium => "flows 100KB-10MB",
            FctClass::Large => "flows > 10MB",
            FctClass::All => "all flows",
            FctClass::Short => "flows < 3KB",
            FctClass::Big => "flows > 1MB",
            FctClass::Top => "flows > 500KB",
        }
    }
}

/// A number of a run's digest.
#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// A slowdown statistic of a flow set's flows of some sizes.
    Slowdown {
        /// The flow set.
        set: String,
        /// Which sizes.
        sizes: Sizes,
        /// The statistic.
        stat: Stat,
    },
    /// A flow completion time statistic of a flow set's flows of one BCC size class, ns.
    Fct {
        /// The flow set.
        set: String,
        /// Which sizes.
        class: FctClass,
        /// The statistic.
        stat: Stat,
    },
    /// Buffer occupancy (p50, p99 or max), bytes.
    Buffer(Stat),
    /// Fraction of time links were paused, mean or max over links.
    Paused(Stat),
    /// Active flows per port: mean or p99.
    Active(Stat),
    /// Fraction of samples with more than 32 active flows.
    ActiveAbove32,
    /// Mean utilization of a link set.
    Utilization(String),
    /// Mean throughput of the long-lived flows, as a fraction of their link.
    Throughput,
    /// Mean over a flow set's finished flows of size / FCT, Gb/s.
    Goodput(String),
    /// p99 queuing delay of one-packet flows' packets per switch hop, ns.
    SingleDelay,
    /// Queuing delay of Homa's scheduled packets at ports into the core (`down` false) or out of it, ns: median
    /// or p99.
    CoreDelay {
        /// Out of the core (Agg-ToR) rather than into it (ToR-Agg).
        down: bool,
        /// Median or p99.
        stat: Stat,
    },
    /// 1 − 1/(average slowdown of all non-incast flows): the time a bottleneck lacks a lone flow's packets
    /// (BFC App. C's E).
    Idle,
    /// Packets dropped.
    Drops,
    /// Data packets dropped over data packets sent.
    Loss,
    /// Packets dropped over packets arriving at a queue, every kind.
    QueueLoss,
    /// The mean over switch egress ports of each one's drops over its arrivals.
    PortLoss,
    /// Retransmission timeouts.
    Timeouts,
    /// Unfinished flows.
    Unfinished,
    /// Retransmitted data packets over packets injected.
    Retransmitted,
    /// BFC queue assignments that found no empty queue, over all assignments.
    Collisions,
    /// The mean or largest sample of one traced series of one entity (`trace.mean:queue.bytes@port:1`; the
    /// runs' `[trace]` records it); an entity ending in `*` names every entity it starts (`port:1/q*`: the
    /// largest sample of any, or the mean of their means).
    Trace {
        /// Mean (`mean`) or largest (`max`).
        stat: Stat,
        /// The series (`queue.bytes`).
        series: String,
        /// The entity (`port:1`), exactly.
        entity: String,
    },
}

impl Metric {
    /// Parses the names listed in the module documentation.
    pub fn parse(text: &str) -> Result<Metric, String> {
        let bad = || {
            format!(
                "unknown metric `{text}` (expected [SET:]short|long|all.avg|p50|p95|p99|max, \
                 [SET:]fct.small|medium|large|all|short|big.avg|p50|p95|p99|max, [SET:]goodput, buffer.p50|p99|max, paused.mean|max, \
                 active.mean|p99|above32, util.SET, throughput, single-delay.p99, core.up|down.p50|p99, idle, \
                 drops, loss, loss.queues, loss.ports, timeouts, unfinished, retx, collisions or \
                 trace.mean|max:SERIES@ENTITY)"
            )
        };
        if let Some(rest) = text.strip_prefix("trace.") {
            let (stat, rest) = rest.split_once(':').ok_or_else(bad)?;
            let (series, entity) = rest.split_once('@').ok_or_else(bad)?;
            let stat = match stat {
                "mean" => Stat::Avg,
                "max" => Stat::Max,
                _ => return Err(bad()),
            };
            return Ok(Metric::Trace {
                stat,
                series: series.to_string(),
                entity: entity.to_string(),
            });
        }
        let simple = match text {
            "throughput" => Some(Metric::Throughput),
            "single-delay.p99" => Some(Metric::SingleDelay),
            "core.up.p50" | "core.up.p99" | "core.down.p50" | "core.down.p99" => {
                Some(Metric::CoreDelay {
                    down: text.starts_with("core.down"),
                    stat: if text.ends_with("p50") {
                        Stat::P50
                    } else {
                        Stat::P99
                    },
                })
            }
            "idle" => Some(Metric::Idle),
            "drops" => Some(Metric::Drops),
            "loss" => Some(Metric::Loss),
            "loss.queues" => Some(Metric::QueueLoss),
            "loss.ports" => Some(Metric::PortLoss),
            "timeouts" => Some(Metric::Timeouts),
            "unfinished" => Some(Metric::Unfinished),
            "retx" => Some(Metric::Retransmitted),
            "collisions" => Some(Metric::Collisions),
            "paused.mean" => Some(Metric::Paused(Stat::Avg)),
            "paused.max" => Some(Metric::Paused(Stat::Max)),
            "active.mean" => Some(Metric::Active(Stat::Avg)),
            "active.p99" => Some(Metric::Active(Stat::P99)),
            "active.above32" => Some(Metric::ActiveAbove32),
            _ => None,
        };
        if let Some(m) = simple {
            return Ok(m);
        }
        if let Some(set) = text.strip_prefix("util.") {
            return Ok(Metric::Utilization(set.to_string()));
        }
        if text == "goodput" {
            return Ok(Metric::Goodput("non-incast".into()));
        }
        if let Some(set) = text.strip_suffix(":goodput") {
            return Ok(Metric::Goodput(set.to_string()));
        }
        let (set, rest) = match text.rsplit_once(':') {
            Some((set, rest)) => (set, rest),
            None => ("non-incast", text),
        };
        if let Some(fct) = rest.strip_prefix("fct.") {
            let (class, stat) = fct.split_once('.').ok_or_else(bad)?;
            return Ok(Metric::Fct {
                set: set.to_string(),
                class: FctClass::parse(class).ok_or_else(bad)?,
                stat: Stat::parse(stat).ok_or_else(bad)?,
            });
        }
        let (what, stat) = rest.split_once('.').ok_or_else(bad)?;
        let stat = Stat::parse(stat).ok_or_else(bad)?;
        let sizes = match what {
            "short" => Sizes::Short,
            "long" => Sizes::Long,
            "all" => Sizes::All,
            "buffer" if set == "non-incast" && stat != Stat::Avg && stat != Stat::P95 => {
                return Ok(Metric::Buffer(stat));
            }
            _ => return Err(bad()),
        };
        Ok(Metric::Slowdown {
            set: set.to_string(),
            sizes,
            stat,
        })
    }

    /// Its value in one run, `None` where the run did not measure it.
    pub fn of(&self, d: &Digest) -> Option<f64> {
        match self {
            Metric::Slowdown { set, sizes, stat } => {
                let s = d.set(set)?;
                let stats = match sizes {
                    Sizes::Short => s.short,
                    Sizes::Long => s.long,
                    Sizes::All => s.all,
                }?;
                Some(stat.of(&stats))
            }
            Metric::Fct { set, class, stat } => Some(stat.of(&class.of(&d.set(set)?.fct)?)),
            Metric::Buffer(stat) => d.buffer.as_ref().map(|b| match stat {
                Stat::P50 => b.p50,
                Stat::Max => b.max,
                _ => b.p99,
            }),
            Metric::Paused(stat) => d.paused.as_ref().map(|p| match stat {
                Stat::Max => p.max,
                _ => p.mean,
            }),
            Metric::Active(stat) => d.active.as_ref().map(|a| match stat {
                Stat::P99 => a.p99 as f64,
                _ => a.mean,
            }),
            Metric::ActiveAbove32 => d.active.as_ref().map(|a| a.above_32),
            Metric::Utilization(set) => d.utilization.get(set).copied(),
            Metric::Throughput => (!d.throughput.is_empty())
                .then(|| d.throughput.iter().sum::<f64>() / d.throughput.len() as f64),
            Metric::Goodput(set) => d.set(set)?.goodput_gbps,
            Metric::SingleDelay => d.single_packet_delay_p99_ns,
            Metric::CoreDelay { down, stat } => d.core_delay.map(|c| {
                let (p50, p99) = if *down { c.down } else { c.up };
                if *stat == Stat::P50 { p50 } else { p99 }
            }),
            Metric::Idle => d
                .set("non-incast")
                .and_then(|s| s.all)
                .map(|s| 1.0 - 1.0 / s.avg),
            Metric::Drops => Some(d.drops as f64),
            Metric::Loss => {
                (d.data_packets > 0).then(|| d.dropped_data_packets as f64 / d.data_packets as f64)
            }
            Metric::QueueLoss => (d.packet_hops > 0)
                .then(|| bfcsim_metrics::summary::queue_loss_rate(d.drops, d.packet_hops)),
            Metric::PortLoss => d.port_loss,
            Metric::Timeouts => Some(d.timeouts as f64),
            Metric::Unfinished => Some(d.unfinished as f64),
            Metric::Retransmitted => Some(d.retransmitted as f64 / d.injected.max(1) as f64),
            Metric::Collisions => d
                .paused
                .as_ref()
                .filter(|p| p.assignments > 0)
                .map(|p| p.queue_collisions as f64 / p.assignments as f64),
            Metric::Trace {
                stat,
                series,
                entity,
            } => {
                // Lines never above zero are left out of the digest: a traced run without one reads 0.
                if d.trace.is_empty() {
                    return None;
                }
                let matches = |e: &str| match entity.strip_suffix('*') {
                    Some(prefix) => e.starts_with(prefix),
                    None => e == entity,
                };
                let lines = d
                    .trace
                    .iter()
                    .filter(|l| &l.series == series && matches(&l.entity));
                let (mut max, mut means, mut n) = (0.0f64, 0.0, 0usize);
                for l in lines {
                    max = l.points.iter().map(|p| p.1).fold(max, f64::max);
                    means +=
                        l.points.iter().map(|p| p.1).sum::<f64>() / l.points.len().max(1) as f64;
                    n += 1;
                }
                Some(if *stat == Stat::Max {
                    max
                } else {
                    means / n.max(1) as f64
                })
            }
        }
    }

    /// The metric in words, for axis titles and tables.
    pub fn words(&self) -> String {
        let sizes = |s: Sizes| match s {
            Sizes::Short => "flows < 3KB",
            Sizes::Long => "flows > 3MB",
            Sizes::All => "all flows",
        };
        match self {
            Metric::Slowdown {
                set,
                sizes: s,
                stat,
            } if set == "non-incast" => {
                format!("{} slowdown, {}", stat.words(), sizes(*s))
            }
            Metric::Slowdown {
                set,
                sizes: s,
                stat,
            } => {
                format!("{} slowdown, {set} {}", stat.words(), sizes(*s))
            }
            Metric::Fct { set, class, stat } if set == "non-incast" => {
                format!("{} FCT, {}", stat.words(), class.words())
            }
            Metric::Fct { set, class, stat } => {
                format!("{} FCT, {set} {}", stat.words(), class.words())
            }
            Metric::Buffer(stat) => format!("{} buffer occupancy", stat.words()),
            Metric::Paused(Stat::Max) => "largest fraction of time a link was paused".into(),
            Metric::Paused(_) => "fraction of time links were paused".into(),
            Metric::Active(Stat::P99) => "99th-percentile active flows per port".into(),
            Metric::Active(_) => "mean active flows per port".into(),
            Metric::ActiveAbove32 => "fraction of samples with > 32 active flows".into(),
            Metric::Utilization(set) => format!("utilization of {set}"),
            Metric::Throughput => "long-lived flow throughput (of its link)".into(),
            Metric::Goodput(set) if set == "non-incast" => "average flow throughput (Gb/s)".into(),
            Metric::Goodput(set) => format!("average throughput of {set} (Gb/s)"),
            Metric::SingleDelay => "p99 queuing delay of one-packet flows".into(),
            Metric::CoreDelay { down, stat } => format!(
                "{} queuing delay of scheduled packets {}",
                stat.words(),
                if *down { "core->ToR" } else { "ToR->core" }
            ),
            Metric::Idle => "fraction of time without the flow's packets (1 − 1/slowdown)".into(),
            Metric::Drops => "packets dropped".into(),
            Metric::Loss => "packet loss rate (data packets dropped of sent)".into(),
            Metric::QueueLoss => "packets dropped of arrivals at queues (ACKs included)".into(),
            Metric::PortLoss => "mean over switch ports of packets dropped of arrivals".into(),
            Metric::Timeouts => "retransmission timeouts".into(),
            Metric::Unfinished => "unfinished flows".into(),
            Metric::Retransmitted => "retransmitted packets (of injected)".into(),
            Metric::Collisions => "queue assignments without an empty queue".into(),
            Metric::Trace {
                stat,
                series,
                entity,
            } => format!(
                "{} {} of {entity}",
                if *stat == Stat::Max {
                    "largest"
                } else {
                    "mean"
                },
                crate::trace::words(series).0
            ),
        }
    }

    /// How its values read.
    pub fn unit(&self) -> Unit {
        match self {
            Metric::Buffer(_) => Unit::Bytes,
            Metric::Trace { series, .. } => crate::trace::words(series).1,
            Metric::SingleDelay | Metric::CoreDelay { .. } | Metric::Fct { .. } => Unit::Nanos,
            Metric::Paused(_)
            | Metric::ActiveAbove32
            | Metric::Utilization(_)
            | Metric::Throughput
            | Metric::Idle
            | Metric::Retransmitted
            | Metric::Loss
            | Metric::QueueLoss
            | Metric::PortLoss
            | Metric::Collisions => Unit::Fraction,
            _ => Unit::Plain,
        }
    }
}

/// A figure file, read and checked.
#[derive(Clone, Debug)]
pub struct Figure {
    /// The file.
    pub path: PathBuf,
    /// Its definition.
    pub def: FigureDef,
    /// Each series' colour, by series index.
    pub colours: Vec<[u8; 3]>,
    /// Parsed metrics of its plots and claims, by their text.
    pub metrics: BTreeMap<String, Metric>,
}

/// Parses TOML `text` of `file` into `T`, errors with the file and line.
fn parse_toml<T: serde::de::DeserializeOwned>(file: &Path, text: &str) -> Result<T, String> {
    toml::from_str(text).map_err(|e| crate::locate::toml_error(file, text, &e).to_string())
}

/// Reads `palette.toml` in `dir`: `[colours]` label = "#rrggbb".
pub fn read_palette(dir: &Path) -> Result<BTreeMap<String, [u8; 3]>, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Palette {
        colours: BTreeMap<String, String>,
    }
    let path = dir.join(PALETTE);
    let text = bfcsim_core::input::read_to_string(&path).map_err(|e| e.to_string())?;
    let p: Palette = parse_toml(&path, &text)?;
    p.colours
        .into_iter()
        .map(|(label, hex)| {
            let rgb = hex
                .strip_prefix('#')
                .filter(|h| h.len() == 6)
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{}: `{label}` = `{hex}` is not #rrggbb", path.display()))?;
            Ok((label, [(rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8]))
        })
        .collect()
}

impl Figure {
    /// Reads and checks a figure file (series labels unique and coloured, metrics known, claims naming
    /// series that exist).
    pub fn read(path: &Path, palette: &BTreeMap<String, [u8; 3]>) -> Result<Figure, String> {
        let text = bfcsim_core::input::read_to_string(path).map_err(|e| e.to_string())?;
        let def: FigureDef = parse_toml(path, &text)?;
        let err = |m: String| format!("{}: {m}", path.display());
        let mut colours = Vec::new();
        for (i, s) in def.series.iter().enumerate() {
            if def.series[..i].iter().any(|o| o.label == s.label) {
                return Err(err(format!("two series are labelled `{}`", s.label)));
            }
            colours.push(*palette.get(&s.label).ok_or_else(|| {
                err(format!(
                    "series `{}` has no colour in {PALETTE} (every label keeps one colour across figures)",
                    s.label
                ))
            })?);
        }
        if def.series.is_empty() {
            return Err(err("no [[series]]".into()));
        }
        let mut metrics = BTreeMap::new();
        let texts = def
            .plot
            .iter()
            .filter_map(|p| match p {
                PlotDef::Bars { metric, .. } | PlotDef::Metric { metric, .. } => Some(metric),
                _ => None,
            })
            .chain(def.claim.iter().map(|c| &c.metric));
        for t in texts {
            metrics.insert(t.clone(), Metric::parse(t).map_err(err)?);
        }
        for p in &def.plot {
            if let PlotDef::Metric {
                over: Some(name), ..
            } = p
                && !def.series.iter().any(|s| &s.label == name)
            {
                return Err(err(format!(
                    "a metric plot is normalised to no series `{name}`"
                )));
            }
        }
        for p in &def.plot {
            if let PlotDef::Timeseries { of, .. } = p
                && let Some(name) = of
                    .iter()
                    .find(|name| !def.series.iter().any(|s| &s.label == *name))
            {
                return Err(err(format!(
                    "a timeseries plot's `of` names `{name}`, which is not a series of this figure"
                )));
            }
        }
        for c in &def.claim {
            for name in c.series.iter().chain(&c.over) {
                if !def.series.iter().any(|s| &s.label == name) {
                    return Err(err(format!("claim `{}` names no series `{name}`", c.text)));
                }
            }
            let ratio = c.over.is_some() || c.over_at.is_some();
            if c.across_seeds == AcrossSeeds::Cv && ratio {
                return Err(err(format!(
                    "claim `{}`: `across_seeds = \"cv\"` checks one series' spread, so it takes no `over` \
                     or `over_at`",
                    c.text
                )));
            }
            if let Some(at) = c.over_at {
                let on_axis = def.axis.as_ref().is_some_and(|a| a.values.contains(&at));
                if c.over.is_some() || !on_axis {
                    return Err(err(format!(
                        "claim `{}`: `over_at = {at}` needs an axis value of the figure, and no `over`",
                        c.text
                    )));
                }
            }
            let seeds = def.paper_scale.seeds.as_ref().unwrap_or(&def.seeds);
            if c.across_seeds == AcrossSeeds::Cv && seeds.len() < 2 {
                return Err(err(format!(
                    "claim `{}`: `across_seeds = \"cv\"` needs two seeds or more at paper scale, not {seeds:?}",
                    c.text
                )));
            }
        }
        if def.axis.is_none() && def.plot.iter().any(|p| matches!(p, PlotDef::Metric { .. })) {
            return Err(err("a `metric` plot needs an [axis]".into()));
        }
        Ok(Figure {
            path: path.to_path_buf(),
            def,
            colours,
            metrics,
        })
    }

    /// The scale in force.
    pub fn scale(&self, quick: bool) -> &Scale {
        if quick {
            &self.def.quick
        } else {
            &self.def.paper_scale
        }
    }

    /// The axis values at this scale (one `None` point without an axis).
    pub fn points(&self, quick: bool) -> Vec<Option<f64>> {
        match &self.def.axis {
            None => vec![None],
            Some(a) => self
                .scale(quick)
                .axis
                .as_ref()
                .unwrap_or(&a.values)
                .iter()
                .map(|&v| Some(v))
                .collect(),
        }
    }

    /// The seeds at this scale.
    pub fn seeds(&self, quick: bool) -> &[u64] {
        self.scale(quick)
            .seeds
            .as_deref()
            .unwrap_or(&self.def.seeds)
    }

    /// How many runs [`plan`] makes at this scale, its half-scale check's included (without resolving them).
    pub fn run_count(&self, quick: bool) -> usize {
        let points = self.points(quick);
        let per_seed: usize = (0..self.def.series.len())
            .map(|s| points.iter().filter(|&&x| self.runs_at(s, x)).count())
            .sum();
        let scales = if self.scale(quick).half.is_some() {
            2
        } else {
            1
        };
        per_seed * self.seeds(quick).len() * scales
    }

    /// Whether series `s` runs at axis value `x`.
    pub fn runs_at(&self, s: usize, x: Option<f64>) -> bool {
        match (&self.def.series[s].only, x) {
            (Some(only), Some(x)) => only.contains(&x),
            _ => true,
        }
    }

    /// The series with label `label`.
    pub fn series_index(&self, label: &str) -> Option<usize> {
        self.def.series.iter().position(|s| s.label == label)
    }
}

/// An axis value as an override value: integers without a decimal point.
pub fn axis_text(v: f64) -> String {
    format!("{v}")
}

/// One run of a figure.
#[derive(Clone, Debug)]
pub struct PlannedRun {
    /// The series, by index.
    pub series: usize,
    /// The axis value.
    pub x: Option<f64>,
    /// The seed.
    pub seed: u64,
    /// Whether it is a run of the scale's half-scale check ([`Scale::half`]).
    pub half: bool,
    /// The run.
    pub run: Resolved,
}

/// Every run of `figure` at this scale, series by series, then axis values, then seeds; then those of its
/// half-scale check ([`Scale::half`]), in the same order.
pub fn plan(figure: &Figure, quick: bool) -> Result<Vec<PlannedRun>, String> {
    let scale = figure.scale(quick);
    let mut runs = plan_with(figure, quick, &scale.set, false)?;
    if let Some(half) = &scale.half {
        let set: Vec<String> = scale.set.iter().chain(&half.set).cloned().collect();
        runs.extend(plan_with(figure, quick, &set, true)?);
    }
    Ok(runs)
}

/// The runs of `figure` with the scale's overrides `scale_set`, marked `half` or not.
fn plan_with(
    figure: &Figure,
    quick: bool,
    scale_set: &[String],
    half: bool,
) -> Result<Vec<PlannedRun>, String> {
    let dir = figure.path.parent().unwrap_or(Path::new("."));
    let mut runs = Vec::new();
    for (i, s) in figure.def.series.iter().enumerate() {
        let experiment = dir.join(s.experiment.as_ref().unwrap_or(&figure.def.experiment));
        for x in figure.points(quick) {
            if !figure.runs_at(i, x) {
                continue;
            }
            for &seed in figure.seeds(quick) {
                let overrides: Vec<String> = (s.scheme.iter().map(|n| format!("scheme.name={n}")))
                    .chain(figure.def.set.iter().cloned())
                    .chain(scale_set.iter().cloned())
                    .chain(s.set.iter().cloned())
                    .chain(
                        (figure.def.axis.iter().zip(x))
                            .map(|(a, x)| format!("{}={}{}", a.key, axis_text(x), a.suffix)),
                    )
                    .chain([format!("seed={seed}")])
                    .collect();
                let spec = RunSpec {
                    experiment: experiment.clone(),
                    overrides,
                };
                let run = spec.resolve().map_err(|e| {
                    format!("{} (series `{}`): {e}", figure.path.display(), s.label)
                })?;
                runs.push(PlannedRun {
                    series: i,
                    x,
                    seed,
                    half,
                    run,
                });
            }
        }
    }
    Ok(runs)
}

/// Every figure file in `dir` (all `*.toml` but the palette), sorted by name.
pub fn read_all(dir: &Path) -> Result<Vec<Figure>, String> {
    let palette = read_palette(dir)?;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| p.file_name().is_some_and(|n| n != PALETTE))
        .collect();
    paths.sort();
    let mut figures: Vec<Figure> = paths
        .iter()
        .map(|p| Figure::read(p, &palette))
        .collect::<Result<_, _>>()?;
    figures.sort_by(|a, b| a.def.name.cmp(&b.def.name));
    for w in figures.windows(2) {
        if w[0].def.name == w[1].def.name {
            return Err(format!(
                "{} and {} are both named `{}`",
                w[0].path.display(),
                w[1].path.display(),
                w[0].def.name
            ));
        }
    }
    Ok(figures)
}

#[cfg(test)]
mod tests;
