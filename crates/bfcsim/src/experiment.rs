//! Experiment files: one TOML file says what to simulate (topology, switch, NIC, scheme, workload, metrics),
//! every field optional except the workload, with CLOS-128's defaults (BFC §6.2.1). `--set KEY=VALUE`
//! overrides any field by its dotted path.
//!
//! `[scheme] name` picks a named scheme ([`crate::presets`]), which presets `[cc]`, `[flow_control]`,
//! `[switch]` and `[nic]`; keys the file (or `--set`) gives override the preset's.
//!
//! ```toml
//! name = "clos128-google-dctcp"
//! seed = 1
//! [topology]              # kind = leaf-spine | fat-tree | star | dumbbell | two-dc | hpcc (file = "topology.txt")
//! kind = "leaf-spine"
//! [switch]
//! buffer = "12MB"
//! [scheme]
//! name = "dctcp"
//! [workload]
//! cdf = "google"
//! arrivals = "lognormal"
//! load = 0.6
//! load_on = "core"
//! duration = "5ms"
//! ```

use std::path::{Path, PathBuf};

use bfcsim_core::{InputError, Rate, Time};
use bfcsim_metrics::{BucketScheme, BudgetConfig, Ideal, PacketFormat};
use bfcsim_net::Topology;
use bfcsim_net::build::{Build, Dumbbell, FatTree, LeafSpine, Size, Star, TwoDc};
use bfcsim_net::import::read_hpcc_topology;
use bfcsim_schemes::cc::CcConfig;
use bfcsim_sim::{FlowControl, NicConfig, SwitchConfig};
use bfcsim_workload::WorkloadSpec;
use serde::{Deserialize, Serialize};

use crate::limits::LimitsConfig;
use crate::outputs::OutputConfig;

/// A whole experiment.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// A name for the run (the default output directory is `out/<name>`).
    #[serde(default = "default_name")]
    pub name: String,
    /// Master seed of every random stream.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The fabric.
    #[serde(default)]
    pub topology: TopologyConfig,
    /// The switch model.
    #[serde(default)]
    pub switch: SwitchConfig,
    /// The NICs.
    #[serde(default)]
    pub nic: NicConfig,
    /// The named scheme, a preset of the sections below.
    #[serde(default)]
    pub scheme: SchemeName,
    /// End-to-end congestion control (`name` selects the algorithm; the other keys are its parameters).
    #[serde(default = "default_cc")]
    pub cc: CcConfig,
    /// Per-hop flow control (`kind` selects it).
    #[serde(default)]
    pub flow_control: FlowControl,
    /// A synthetic workload ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSpec>,
    /// ... or an HPCC `flow.txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<FlowsConfig>,
    /// How long to run and what to sample.
    #[serde(default)]
    pub run: RunConfig,
    /// How to report.
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// Which files to write.
    #[serde(default)]
    pub output: OutputConfig,
    /// What the run may ask of the machine.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Time series to record (`trace.parquet`; [`crate::trace`]). Not serialized when absent, so that the run
    /// keys of existing run stores stay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TraceConfig>,
    /// The fabric changing during the run (`[[events]]`, [`crate::events`]). Not serialized when empty, for the
    /// same reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::events::EventConfig>,
}

fn default_name() -> String {
    "experiment".into()
}
fn default_seed() -> u64 {
    1
}
fn default_cc() -> CcConfig {
    CcConfig::Dctcp(bfcsim_schemes::cc::dctcp::DctcpConfig::default())
}

/// `[scheme]`: the name of a preset in [`crate::presets`].
#[derive(Clone, Debug, Serialize)]
pub struct SchemeName {
    /// The preset's name.
    pub name: String,
}

impl Default for SchemeName {
    fn default() -> Self {
        SchemeName {
            name: "dctcp".into(),
        }
    }
}

impl<'de> Deserialize<'de> for SchemeName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            name: Known,
        }
        /// A name checked against the presets while the parser still knows its line.
        struct Known(String);
        impl<'de> Deserialize<'de> for Known {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = String::deserialize(d)?;
                if crate::presets::find(&name).is_none() {
                    let names = crate::presets::names();
                    return Err(serde::de::Error::custom(format!(
                        "unknown scheme `{name}`, expected one of {}",
                        names.join(", ")
                    )));
                }
                Ok(Known(name))
            }
        }
        Raw::deserialize(d).map(|r| SchemeName { name: r.name.0 })
    }
}

/// Which fabric to build.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TopologyConfig {
    /// Two-tier Clos (CLOS-128 by default).
    LeafSpine(LeafSpine),
    /// Three-tier fat-tree: `k` for the k-ary one, or explicit counts.
    FatTree(FatTreeConfig),
    /// Hosts on one switch.
    Star(Star),
    /// Two switches joined by one bottleneck.
    Dumbbell(Dumbbell),
    /// HPCC ns-3's `topology.txt`.
    Hpcc(HpccTopology),
    /// Two leaf-spine data centres joined by a long link (BFC App. A.9).
    TwoDc(TwoDc),
}

/// An HPCC ns-3 `topology.txt`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HpccTopology {
    /// Path, relative to the experiment file.
    pub file: PathBuf,
}

impl bfcsim_core::tagged::Tagged for TopologyConfig {
    const TAG: &'static str = "kind";
    const VARIANTS: &'static [&'static str] = &[
        "leaf-spine",
        "fat-tree",
        "star",
        "dumbbell",
        "hpcc",
        "two-dc",
    ];
    const DEFAULT: &'static str = "leaf-spine";
    fn from_variant<'de, D: serde::Deserializer<'de>>(
        name: &str,
        rest: D,
    ) -> Result<Self, D::Error> {
        match name {
            "leaf-spine" => LeafSpine::deserialize(rest).map(TopologyConfig::LeafSpine),
            "fat-tree" => FatTreeConfig::deserialize(rest).map(TopologyConfig::FatTree),
            "star" => Star::deserialize(rest).map(TopologyConfig::Star),
            "dumbbell" => Dumbbell::deserialize(rest).map(TopologyConfig::Dumbbell),
            "hpcc" => HpccTopology::deserialize(rest).map(TopologyConfig::Hpcc),
            "two-dc" => TwoDc::deserialize(rest).map(TopologyConfig::TwoDc),
            _ => Err(serde::de::Error::unknown_variant(name, Self::VARIANTS)),
        }
    }
}

impl<'de> Deserialize<'de> for TopologyConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        bfcsim_core::tagged::deserialize(d)
    }
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig::LeafSpine(LeafSpine::default())
    }
}

/// A fat-tree given as `k` (k-ary) or by explicit counts (see [`FatTree`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// k of a k-ary fat-tree; the explicit counts below override its values.
    pub k: Option<u32>,
    /// Pods.
    pub pods: Option<u32>,
    /// ToRs per pod.
    pub tors_per_pod: Option<u32>,
    /// Aggregation switches per pod.
    pub aggs_per_pod: Option<u32>,
    /// Core switches.
    pub cores: Option<u32>,
    /// Hosts per ToR.
    pub hosts_per_tor: Option<u32>,
    /// Parallel ToR–aggregation links.
    pub tor_agg_links: Option<u32>,
    /// Parallel aggregation–core links.
    pub agg_core_links: Option<u32>,
    /// Link rate (100 Gb/s).
    pub rate: Option<Rate>,
    /// Link delay (1 µs).
    pub delay: Option<Time>,
}

impl FatTreeConfig {
    fn resolve(&self) -> Result<FatTree, String> {
        let mut ft = match self.k {
            Some(k) if k >= 2 && k % 2 == 0 => FatTree::k_ary(k),
            Some(k) => return Err(format!("topology.k = {k} must be an even number >= 2")),
            None => {
                let need =
                    |v: Option<u32>, name: &str| v.ok_or(format!("topology: give `k` or `{name}`"));
                FatTree {
                    pods: need(self.pods, "pods")?,
                    tors_per_pod: need(self.tors_per_pod, "tors_per_pod")?,
                    aggs_per_pod: need(self.aggs_per_pod, "aggs_per_pod")?,
                    cores: need(self.cores, "cores")?,
                    hosts_per_tor: need(self.hosts_per_tor, "hosts_per_tor")?,
                    ..FatTree::k_ary(2)
                }
            }
        };
        let set = |dst: &mut u32, v: Option<u32>| {
            if let Some(v) = v {
                *dst = v;
            }
        };
        set(&mut ft.pods, self.pods);
        set(&mut ft.tors_per_pod, self.tors_per_pod);
        set(&mut ft.aggs_per_pod, self.aggs_per_pod);
        set(&mut ft.cores, self.cores);
        set(&mut ft.hosts_per_tor, self.hosts_per_tor);
        set(&mut ft.tor_agg_links, self.tor_agg_links);
        set(&mut ft.agg_core_links, self.agg_core_links);
        ft.rate = self.rate.unwrap_or(ft.rate);
        ft.delay = self.delay.unwrap_or(ft.delay);
        Ok(ft)
    }
}

impl TopologyConfig {
    /// The size of a built fabric, known before it is built; `None` for an imported file (read whole, its
    /// counts checked against its lines).
    pub fn size(&self) -> Option<Size> {
        match self {
            TopologyConfig::LeafSpine(t) => Some(t.size()),
            TopologyConfig::FatTree(t) => t.resolve().ok().map(|t| t.size()),
            TopologyConfig::Star(t) => Some(t.size()),
            TopologyConfig::Dumbbell(t) => Some(t.size()),
            TopologyConfig::TwoDc(t) => Some(t.size()),
            TopologyConfig::Hpcc(_) => None,
        }
    }

    /// What errors about the fabric name: the imported file, or `topology`.
    pub fn source(&self, base: &Path) -> String {
        match self {
            TopologyConfig::Hpcc(h) => base.join(&h.file).display().to_string(),
            _ => "topology".into(),
        }
    }

    /// Builds (or reads) the topology; relative paths are resolved against `base`.
    pub fn build(&self, base: &Path) -> Result<Topology, String> {
        match self {
            TopologyConfig::LeafSpine(t) => t.build(),
            TopologyConfig::FatTree(t) => t.resolve()?.build(),
            TopologyConfig::Star(t) => t.build(),
            TopologyConfig::Dumbbell(t) => t.build(),
            TopologyConfig::TwoDc(t) => t.build(),
            // The file's errors name the file.
            TopologyConfig::Hpcc(h) => {
                return read_hpcc_topology(&base.join(&h.file)).map_err(|e| e.to_string());
            }
        }
        .map_err(|e| format!("topology: {e}"))
    }
}

/// Flows read from a file: HPCC's `flow.txt`, or an htsim connection matrix with its triggers.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowsConfig {
    /// Path, relative to the experiment file.
    pub file: PathBuf,
    /// The file's format; absent: `htsim` for a name ending in `.cm`, else `hpcc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<FlowFormat>,
    /// How a trigger's completion reaches a flow on another host (htsim format): `instant`, as htsim starts
    /// triggered flows (the run then takes one thread; the default), or `path`, after the propagation delay of
    /// the path between the two hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify: Option<NotifyConfig>,
}

/// A flow file's format ([`FlowsConfig::format`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowFormat {
    /// HPCC's `flow.txt` (`bfcsim_workload::flowfile`).
    Hpcc,
    /// htsim's connection matrix (`bfcsim_workload::htsim_cm`).
    Htsim,
}

/// How dependency notices travel between hosts ([`bfcsim_sim::Notify`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyConfig {
    /// At once.
    Instant,
    /// After the path's propagation delay.
    Path,
}

impl FlowsConfig {
    /// A file in HPCC's format or named by its extension.
    pub fn new(file: PathBuf) -> FlowsConfig {
        FlowsConfig {
            file,
            format: None,
            notify: None,
        }
    }

    /// The file's format, as set or from its extension.
    pub fn format(&self) -> FlowFormat {
        self.format
            .unwrap_or(match self.file.extension().and_then(|e| e.to_str()) {
                Some("cm") => FlowFormat::Htsim,
                _ => FlowFormat::Hpcc,
            })
    }
}

/// Run control.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Stop at this simulated time even if flows remain (they are reported unfinished). Default: one second
    /// after the last flow starts.
    pub max_time: Option<Time>,
    /// Interval at which switch buffer occupancy and active flows per switch port are sampled.
    pub sample_interval: Time,
    /// Threads one run is split over (`bfcsim_sim::sim`): the fabric is cut into that many shards that
    /// synchronise every link delay. The results are identical for any number; it only changes the speed.
    /// One when the run cannot be split (no link delay, or `switch.drop_notification`).
    pub threads: usize,
    /// A run in which flows have started but none has made progress (no data packet brought its receiver new
    /// bytes, no flow completed) for this long is stuck, deadlocked or livelocked, whatever the scheme: it
    /// ends there with a diagnosis (`Sim::stall_diagnosis`) and a non-zero exit status. Default
    /// [`stall_bound`]: [`DEFAULT_STALL_AFTER`] or [`STALL_RTTS`] of the fabric's largest base RTT. (Not serialized when unset, so that the run keys of existing run stores stay.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_after: Option<Time>,
}

/// `run.stall_after` when unset: far above any wait of a healthy run (a retransmission timeout and its
/// back-offs, BFC's deepest pause), far below the default run length; on fabrics whose round trips are long
/// (a WAN link, a slow link whose one packet takes longer), [`STALL_RTTS`] of the largest base RTT.
pub const DEFAULT_STALL_AFTER: Time = Time::from_ms(100);

/// Base RTTs without progress after which an unset `run.stall_after` calls a run stalled: a flow's first
/// new byte arrives within one, its ACK's next packet within two.
pub const STALL_RTTS: u64 = 4;

/// How long a run may make no progress before it is stalled: `set` when the experiment sets
/// `run.stall_after`, otherwise the larger of [`DEFAULT_STALL_AFTER`] and [`STALL_RTTS`] base RTTs.
pub fn stall_bound(set: Option<Time>, base_rtt: Time) -> Time {
    set.unwrap_or_else(|| DEFAULT_STALL_AFTER.max(Time(base_rtt.0.saturating_mul(STALL_RTTS))))
}

impl RunConfig {
    /// Checks each value for its domain.
    pub fn validate(&self) -> Result<(), String> {
        if self.sample_interval == Time::ZERO {
            return Err("run.sample_interval = 0ps must be positive".into());
        }
        if !(1..=64).contains(&self.threads) {
            return Err(format!("run.threads = {} must be in 1..=64", self.threads));
        }
        if self.max_time == Some(Time::ZERO) {
            return Err("run.max_time = 0ps must be positive".into());
        }
        if self.stall_after == Some(Time::ZERO) {
            return Err("run.stall_after = 0ps must be positive".into());
        }
        Ok(())
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            max_time: None,
            sample_interval: Time::from_us(10),
            threads: 1,
            stall_after: None,
        }
    }
}

/// What the summary reports.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// The ideal FCT slowdowns divide by: `exact` (alone on the idle network, slowdown 1 for a lone flow),
    /// `bfc_artifact` or `hpcc`.
    pub ideal: Ideal,
    /// Size buckets of the table: BFC's (`bfc_google`, `bfc_hadoop`), `{ equal_count = { n = 20 } }` or edges.
    pub buckets: BucketScheme,
    /// Clamp slowdowns below 1 to 1 (HPCC's analysis script does).
    pub clamp_slowdown: bool,
    /// How BFC's Tofino2 hardware budget is sized (field widths, recirculated header, 12% budget).
    pub budget: BudgetConfig,
    /// Start of the measurement window of long-lived flows' throughput and of the queuing-delay percentiles
    /// (simulated time; both run to the end of the run).
    pub warmup: Time,
    /// The links whose switch egress ports have their active flows sampled (`core`, `fabric`, `host`, `link:N`,
    /// `port:N`); when absent, every switch port if BFC runs and none otherwise (each sample scans the queued
    /// packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_flows_on: Option<String>,
    /// Further link sets whose utilization the summary reports, each under its own text (`link:112`: the
    /// interconnect of a `two-dc` topology, App. A.9's Fig. 26b).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub utilization_on: Vec<String>,
    /// The links whose switch egress ports' queued bytes make the buffer-occupancy samples, each port its own
    /// sample (`to-host:N`: BCC Fig. 4's congested port), instead of each switch's whole buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_on: Option<String>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            ideal: Ideal::Exact,
            buckets: BucketScheme::BfcGoogle,
            clamp_slowdown: false,
            budget: BudgetConfig::default(),
            warmup: Time::ZERO,
            active_flows_on: None,
            utilization_on: Vec::new(),
            buffer_on: None,
        }
    }
}

impl ExperimentConfig {
    /// The packet format the ideal FCT assumes, from the NIC configuration.
    pub fn packet_format(&self) -> PacketFormat {
        PacketFormat {
            payload: self.nic.payload as u64,
            header: self.nic.header as u64,
            ack_size: self.nic.ack_size as u64,
            // 0: only the whole flow is acknowledged, once.
            ack_every: match self.nic.transport.ack_every {
                0 => u64::MAX,
                n => n as u64,
            },
        }
    }
}

/// Parses an experiment from TOML text, applying `overrides` (`KEY=VALUE`, dotted keys). Errors name the file
/// and the line, or the `--set`, that the problem comes from ([`crate::locate`]).
pub fn parse_experiment(
    file: &Path,
    text: &str,
    overrides: &[String],
) -> Result<ExperimentConfig, InputError> {
    let toml_error = |e: toml::de::Error| crate::locate::toml_error(file, text, &e);
    let mut table: toml::Table = toml::from_str(text).map_err(toml_error)?;
    let file_table = table.clone();
    for o in overrides {
        apply_override(&mut table, o)
            .map_err(|m| InputError::file(file, format!("--set {o}: {m}")))?;
    }
    // First from the text itself, so that mistakes in the file are reported with their line. The scheme
    // decides what a `[flow_control]` or `[cc]` without its tag means.
    with_preset_tags(scheme_name(&table), || {
        toml::from_str::<ExperimentConfig>(text)
    })
    .map_err(toml_error)?;
    let config = resolve(table)
        .map_err(|e| InputError::file(file, blame_override(&file_table, overrides, e)))?;
    validate(&config).map_err(|m| crate::locate::blame(file, text, overrides, m))?;
    Ok(config)
}

/// The error of resolving `table` with `overrides` (which apply cleanly), naming the first override that
/// makes it fail: a value of the wrong type is only found when the whole configuration is read.
fn blame_override(table: &toml::Table, overrides: &[String], error: String) -> String {
    let mut table = table.clone();
    for o in overrides {
        let _ = apply_override(&mut table, o);
        if let Err(e) = resolve(table.clone()) {
            return format!("--set {o}: {e}");
        }
    }
    error
}

/// The scheme an experiment table names (`dctcp` when it names none).
fn scheme_name(table: &toml::Table) -> String {
    table
        .get("scheme")
        .and_then(|s| s.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("dctcp")
        .to_owned()
}

/// Runs `f` with tagless `[cc]` and `[flow_control]` tables read as scheme `name`'s preset has them.
fn with_preset_tags<R>(name: String, f: impl FnOnce() -> R) -> R {
    let preset = crate::presets::find(&name);
    let cc = preset.and_then(|p| p.tag("cc"));
    let fc = preset.and_then(|p| p.tag("flow_control"));
    bfcsim_core::tagged::with_default::<CcConfig, _>(cc.as_deref(), || {
        bfcsim_core::tagged::with_default::<FlowControl, _>(fc.as_deref(), f)
    })
}

/// The experiment `table` (file and overrides) laid over its scheme's preset.
fn resolve(table: toml::Table) -> Result<ExperimentConfig, String> {
    let name = scheme_name(&table);
    let mut merged = crate::presets::find(&name)
        .ok_or_else(|| {
            format!(
                "unknown scheme `{name}`, expected one of {}",
                crate::presets::names().join(", ")
            )
        })?
        .table();
    crate::presets::merge(&mut merged, table);
    with_preset_tags(name, || {
        ExperimentConfig::deserialize(toml::Value::Table(merged))
    })
    .map_err(|e| e.message().trim().to_string())
}

/// The configuration of `bfcsim replay`: the `--set` assignments over scheme `scheme`'s preset.
pub fn replay_config(scheme: &str, overrides: &[String]) -> Result<ExperimentConfig, String> {
    let mut base = toml::Table::new();
    base.insert("name".into(), toml::Value::String("replay".into()));
    apply_override(&mut base, &format!("scheme.name={scheme}"))
        .map_err(|e| format!("--scheme {scheme}: {e}"))?;
    let mut table = base.clone();
    for o in overrides {
        apply_override(&mut table, o).map_err(|e| format!("--set {o}: {e}"))?;
    }
    let config = resolve(table).map_err(|e| blame_override(&base, overrides, e))?;
    // The messages name their key, which only `--set` can have given.
    validate_sections(&config)?;
    Ok(config)
}

/// Reads an experiment file.
pub fn load_experiment(path: &Path, overrides: &[String]) -> Result<ExperimentConfig, InputError> {
    parse_experiment(path, &bfcsim_core::input::read_to_string(path)?, overrides)
}

/// Checks every section but the flows': the name, the switch, NIC and scheme, the run, outputs and limits.
fn validate_sections(c: &ExperimentConfig) -> Result<(), String> {
    validate_name(&c.name)?;
    c.switch.validate()?;
    c.nic.validate()?;
    c.cc.validate()?;
    c.flow_control.validate(&c.switch.facts())?;
    c.metrics.budget.validate(c.switch.queues_per_port)?;
    c.run.validate()?;
    c.output.validate()?;
    if let Some(trace) = &c.trace {
        trace.validate()?;
    }
    let nodes = c.topology.size().map(|s| s.nodes);
    for (i, e) in c.events.iter().enumerate() {
        e.validate(i, nodes)?;
    }
    if c.limits.samples == 0 || c.limits.memory == Some(bfcsim_core::Bytes(0)) {
        return Err("limits.samples and limits.memory must be positive".into());
    }
    Ok(())
}

/// The name becomes the directory `out/<name>`: one plain path component, which cannot escape `out/`.
fn validate_name(name: &str) -> Result<(), String> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if name.is_empty() || !plain || name.starts_with('.') || name.len() > 128 {
        return Err(format!(
            "name = {name:?} must be a plain name of at most 128 letters, digits, `-`, `_` and `.`, not starting \
             with `.` (the default output directory is out/<name>)"
        ));
    }
    Ok(())
}

fn validate(c: &ExperimentConfig) -> Result<(), String> {
    validate_sections(c)?;
    match (&c.workload, &c.flows) {
        (None, None) => Err("give a [workload] or a [flows] file".into()),
        (Some(_), Some(_)) => Err("give either a [workload] or a [flows] file, not both".into()),
        (Some(w), None) => w.validate(),
        (None, Some(_)) => Ok(()),
    }
}

/// Sets `key` (dotted) to `value` in `table`. The value is read as TOML (`0.5`, `true`, `"12MB"`), or as a bare
/// string when it is not valid TOML (`12MB`, `dctcp`). A number after the name of an array of tables picks one of
/// its entries: `workload.group.0.count=64`.
pub fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<(), String> {
    let (key, value) = assignment.split_once('=').ok_or("expected KEY=VALUE")?;
    let (key, value) = (key.trim(), value.trim());
    let parsed: toml::Value = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("`{key}` is not a dotted key"));
    }
    let (last, path) = parts.split_last().expect("split gives at least one part");
    let mut cur = table;
    let mut i = 0;
    while i < path.len() {
        let part = path[i];
        if !cur.contains_key(part)
            && let Ok(index) = parts[i + 1].parse::<usize>()
        {
            let list = parts[..=i].join(".");
            return Err(format!(
                "`{list}` has no entries, so no entry {index}: a list's entries are written in the file \
                 ([[{list}]] tables), and --set changes one that is there"
            ));
        }
        let entry = cur
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            toml::Value::Array(items) if i + 1 < path.len() => {
                let index: usize = path[i + 1].parse().map_err(|_| {
                    format!("`{part}` is a list: name an entry by its index, as `{part}.0`")
                })?;
                let len = items.len();
                i += 1;
                items
                    .get_mut(index)
                    .ok_or(format!("`{part}` has {len} entries, so no entry {index}"))?
                    .as_table_mut()
                    .ok_or(format!("`{part}.{index}` is not a table"))?
            }
            _ => return Err(format!("`{part}` is not a table")),
        };
        i += 1;
    }
    cur.insert(last.to_string(), parsed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str =
        "[workload]\ncdf = \"google\"\nload = 0.5\nload_on = \"core\"\nduration = \"1ms\"\n";

    #[test]
    fn setting_an_entry_of_a_list_the_file_does_not_have_says_so() {
        // Issue 72: "invalid type: map, expected a sequence".
        let e = parse_experiment(
            Path::new("e.toml"),
            MINIMAL,
            &["workload.group.5.count=1".into()],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "e.toml: --set workload.group.5.count=1: `workload.group` has no entries, so no entry 5: a list's \
             entries are written in the file ([[workload.group]] tables), and --set changes one that is there"
        );
    }

    #[test]
    fn defaults_are_clos128_with_dctcp() {
        let c = parse_experiment(Path::new("e.toml"), MINIMAL, &[]).unwrap();
        assert!(
            matches!(c.topology, TopologyConfig::LeafSpine(ref l) if l.tors == 8 && l.spines == 8)
        );
        assert_eq!(c.switch.buffer, bfcsim_core::Bytes(12_000_000));
        assert_eq!(c.scheme.name, "dctcp");
        assert_eq!(c.cc.name(), "dctcp");
        assert_eq!(c.flow_control, FlowControl::None);
    }

    #[test]
    fn a_scheme_presets_its_sections_and_the_file_overrides_them() {
        let text = format!("[scheme]\nname = \"bfc\"\n[flow_control]\nsampling = 0.5\n{MINIMAL}");
        let c = parse_experiment(
            Path::new("e.toml"),
            &text,
            &["switch.queues_per_port=8".into()],
        )
        .unwrap();
        assert_eq!(c.cc.name(), "none");
        assert_eq!(c.switch.queues_per_port, 8);
        match &c.flow_control {
            FlowControl::Bfc(b) => assert_eq!(b.sampling, 0.5),
            other => panic!("{other:?}"),
        }
        let bad = format!("[scheme]\nname = \"bfc\"\n[flow_control]\nsampled = 0.5\n{MINIMAL}");
        let msg = parse_experiment(Path::new("e.toml"), &bad, &[])
            .unwrap_err()
            .to_string();
        // The parser points at the section's header; the key's own line is found below it.
        assert!(
            msg.contains("e.toml:4: unknown field `sampled`, expected one of `assignment`"),
            "{msg}"
        );
    }

    #[test]
    fn overrides_set_nested_keys() {
        let o = [
            "switch.buffer=6MB".to_string(),
            "workload.load=0.3".into(),
            "scheme.name=none".into(),
            "topology.tors=4".into(),
        ];
        let c = parse_experiment(Path::new("e.toml"), MINIMAL, &o).unwrap();
        assert_eq!(c.switch.buffer, bfcsim_core::Bytes(6_000_000));
        assert_eq!(c.workload.unwrap().load, 0.3);
        assert_eq!(c.cc.name(), "none");
        assert!(
            matches!(c.topology, TopologyConfig::LeafSpine(ref l) if l.tors == 4),
            "no kind means leaf-spine"
        );
    }

    #[test]
    fn overrides_reach_into_lists_of_tables() {
        let text = format!(
            "{MINIMAL}[[workload.group]]\nname = \"long\"\nsize = \"1GB\"\nto = 0\ncount = 8\n\
             [[workload.group]]\nname = \"mice\"\nsize = \"1KB\"\nto = 1\nload = 0.03\n"
        );
        let c = parse_experiment(
            Path::new("e.toml"),
            &text,
            &[
                "workload.group.0.count=64".into(),
                "workload.group.1.to=2".into(),
            ],
        )
        .unwrap();
        let groups = c.workload.unwrap().group;
        assert_eq!((groups[0].count, groups[1].to), (Some(64), 2));
        for (o, want) in [
            (
                "workload.group.2.count=1",
                "`group` has 2 entries, so no entry 2",
            ),
            ("workload.group.first.count=1", "name an entry by its index"),
            ("workload.load.x=1", "`load` is not a table"),
        ] {
            let e = parse_experiment(Path::new("e.toml"), &text, &[o.into()])
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{o}: {e}");
        }
    }

    #[test]
    fn malformed_experiments_name_the_line() {
        let cases = [
            ("[switch]\nbuffer = 12\n", "e.toml:2:"),
            (
                "[switch]\nbufer = \"12MB\"\n",
                "e.toml:2: unknown field `bufer`",
            ),
            (
                "[scheme]\nname = \"tcp-reno\"\n",
                "e.toml:2: unknown scheme `tcp-reno`",
            ),
            (
                "[topology]\nkind = \"leaf-spine\"\ntors = -1\n",
                "e.toml:3:",
            ),
            ("seed = \n", "e.toml:1:"),
            (
                "[switch]\nqueues_per_port = 0\n[flows]\nfile = \"f\"\n",
                "queues_per_port = 0",
            ),
            ("name = \"x\"\n", "give a [workload]"),
            (
                "[switch]\nquantum = \"5GiB\"\n[flows]\nfile = \"f\"\n",
                "switch.quantum = 5368709120 B must be in 1..=4294967295 bytes",
            ),
        ];
        for (text, want) in cases {
            let msg = parse_experiment(Path::new("e.toml"), text, &[])
                .unwrap_err()
                .to_string();
            assert!(msg.contains(want), "{text:?}: got `{msg}`, want `{want}`");
        }
        let bad = parse_experiment(Path::new("e.toml"), MINIMAL, &["switch.alpha=-1".into()])
            .unwrap_err();
        assert!(bad.to_string().contains("switch.alpha = -1"), "{bad}");
        let bad = parse_experiment(Path::new("e.toml"), MINIMAL, &["novalue".into()]).unwrap_err();
        assert!(
            bad.to_string()
                .contains("--set novalue: expected KEY=VALUE"),
            "{bad}"
        );
    }
}
