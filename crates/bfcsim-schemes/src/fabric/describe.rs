//! What a scheme tells the rest of bfcsim about itself through one descriptor ([`Describe`]): the `kind` that
//! runs it, its parameters and their checks, how it is built, its named presets, and what it reports. The
//! registry (`bfcsim-registry`) lists each scheme once; configuration parsing, `bfcsim
//! schemes`, the presets and summary.json all come from these.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use bfcsim_core::{NodeId, Time};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Scheme, Setup};

/// What a scheme needs of the switch it runs on, for [`Describe::validate`].
#[derive(Clone, Copy, Debug)]
pub struct SwitchFacts {
    /// A strict-priority control queue carries per-hop frames (`switch.control_priority`).
    pub control_priority: bool,
    /// ACKs, NACKs and CNPs ride the control queue (`switch.ack_priority`).
    pub ack_priority: bool,
    /// Strict-priority classes among the data queues (`switch.classes`).
    pub classes: u32,
    /// Data queues per port (`switch.queues_per_port`).
    pub queues_per_port: u32,
    /// Every port of a switch in one buffer pool (neither `switch.ports_per_pool` nor `switch.pool_size`).
    pub one_pool: bool,
    /// Flow-level ECMP (`switch.load_balancing = "ecmp"`), not spraying.
    pub ecmp: bool,
}

/// A named configuration that runs a scheme as a paper configures it: what `[scheme] name` picks.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Name used in `[scheme] name = ...` and `--scheme`.
    pub name: &'static str,
    /// What it is and where it comes from.
    pub summary: &'static str,
    /// The configuration it sets, as TOML sections (`[cc]`, `[flow_control]`, `[switch]`, `[nic]`).
    pub config: &'static str,
}

/// The sections of an experiment file tagged by one of their keys, and that key: a preset that names another
/// variant of one of these replaces the section instead of merging into it.
pub const TAGGED: &[(&str, &str)] = &[
    ("cc", "name"),
    ("flow_control", "kind"),
    ("topology", "kind"),
];

impl Preset {
    /// The preset's configuration as a table.
    pub fn table(&self) -> toml::Table {
        toml::from_str(self.config).expect("presets are valid TOML")
    }

    /// The tag the preset gives tagged section `section` (e.g. `flow_control` → `bfc`).
    pub fn tag(&self, section: &str) -> Option<String> {
        let (_, key) = TAGGED.iter().find(|(s, _)| *s == section)?;
        self.table()
            .get(section)?
            .get(key)?
            .as_str()
            .map(str::to_owned)
    }
}

/// How to tell, from a data packet leaving a switch port, which of the port's queues it left; control packets
/// under `switch.control_priority` leave the control queue whatever the scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLeft {
    /// The scheme stamps it as the packet's `upstream_q` when the packet leaves (BFC's `upstreamQ`, §3.3.2).
    Stamped,
    /// The queue of the packet's class and hash ([`bfcsim_net::queues::QueueLayout::data_queue_for`]).
    ByClass,
    /// The scheme chooses in ways the packet does not show (its pauses, if any, are then not attributed).
    Unknown,
}

/// What a scheme's or a controller's parameters are: a TOML table with defaults ([`Describe::Config`],
/// [`crate::cc::DescribeCc::Config`]).
pub trait ConfigType:
    Clone + fmt::Debug + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync
{
}

impl<T> ConfigType for T where
    T: Clone + fmt::Debug + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync
{
}

/// A scheme's descriptor: with its [`Scheme`] hooks, everything bfcsim needs to run, configure, list and report
/// it. Implemented by the scheme's state type; one line in the registry makes it a `kind`.
pub trait Describe: Scheme + Sized + 'static {
    /// The `kind` of `[flow_control]` that runs it.
    const KIND: &'static str;
    /// What it is and where it comes from, one line for `bfcsim schemes`.
    const SUMMARY: &'static str;
    /// Its `[flow_control]` parameters; the default is the paper's configuration.
    type Config: ConfigType;
    /// What it counts in one shard of a run; the shards' counts add up to the run's.
    type Stats: Clone + Default + std::ops::Add<Output = Self::Stats> + Send;

    /// Checks the parameters, and what the scheme needs of the switch it runs on; the message names the field.
    fn validate(_cfg: &Self::Config, _switch: &SwitchFacts) -> Result<(), String> {
        Ok(())
    }

    /// Builds the scheme's state on a fabric whose network and congestion control exist.
    fn new(cfg: &Self::Config, fab: &mut impl Setup) -> Result<Self, String>;

    /// Its named presets, for `[scheme] name`.
    fn presets() -> &'static [Preset] {
        &[]
    }

    /// Parameters of the optional tables its default configuration leaves out (as Aeolus's under Homa), as
    /// `(dotted key, default)` pairs, for `bfcsim schemes` to list after the defaults.
    fn optional_params() -> Vec<(String, String)> {
        Vec::new()
    }

    /// This shard's counts.
    fn stats(&self) -> Self::Stats {
        Self::Stats::default()
    }

    /// Its section of the run's report (summary.json's `flow_control`, the console summary), from the run's
    /// counts; `None` when it has nothing of its own to say.
    fn report(_stats: &Self::Stats) -> Option<SchemeReport> {
        None
    }

    /// Which queue a data packet leaving a switch port left, for `bfcsim run --explain-flow`'s account of the
    /// time it waited there paused ([`QueueLeft`]).
    const QUEUE_LEFT: QueueLeft = QueueLeft::Unknown;

    /// Whether runs sample the active flows of every switch port (BFC §2.3's metric) when
    /// `metrics.active_flows_on` names no ports: the schemes whose mechanism that metric is about. The others
    /// do not pay for the sampling unless asked.
    const SAMPLES_ACTIVE_FLOWS: bool = false;

    /// Packet headers switch `s` recirculated so far to run the scheme's operations (BFC §4); `None` for a
    /// scheme whose switches recirculate nothing.
    fn recirculations(&self, _s: usize) -> Option<u64> {
        None
    }

    /// The scheme's own time series at switch `s`, for runs that trace it (`[trace] scheme = true`): each
    /// `(series, local port, value)`, the port `None` for a value of the whole switch. The default has none.
    fn trace(&self, _s: usize, _out: &mut dyn FnMut(&'static str, Option<u32>, f64)) {}

    /// What switch `s`'s state takes in the scheme's hardware design, for the run's budget report (BFC §3.3 and
    /// §4's Tofino2 budget); `None` for a scheme without one, or a configuration no hardware could hold.
    fn hardware(&self, _s: usize) -> Option<SwitchHardware> {
        None
    }

    /// Every pause and resume frame the shards' ports received, in `pfc.txt`'s order (by time, then node and
    /// port); `None` for a scheme that keeps no such log.
    fn pause_records(_shards: &[&Self]) -> Option<Vec<PauseRecord>> {
        None
    }
}

/// A pause or resume frame a port received, from a scheme that pauses whole links or priorities (PFC;
/// [`Describe::pause_records`]). Its `Display` is one line of HPCC's `pfc.txt` (ns-3 `third.cc` `get_pfc`,
/// hooked to `QbbNetDevice`'s `QbbPfc` trace): `time_ns node_id node_type if_index type` with type 1 pause,
/// 0 resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseRecord {
    /// When the frame arrived (written in whole nanoseconds, rounded down).
    pub time: Time,
    /// The node whose port received it: the upstream that is paused or resumed.
    pub node: NodeId,
    /// 0 for a host, 1 for a switch (ns-3 `Node::GetNodeType`).
    pub node_type: u8,
    /// The receiving port in ns-3 numbering: device 0 is the loopback, so a node's first link is 1 (our local
    /// port index + 1).
    pub if_index: u32,
    /// PAUSE (true) or RESUME (false).
    pub pause: bool,
}

impl fmt::Display for PauseRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {}",
            self.time.ns(),
            self.node.0,
            self.node_type,
            self.if_index,
            u8::from(self.pause)
        )
    }
}

/// One switch's state in a scheme's hardware design ([`Describe::hardware`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchHardware {
    /// Flow-table entries.
    pub flow_table_entries: u64,
    /// Pause-counter entries.
    pub pause_counter_entries: u64,
}

/// A scheme's own section of a run's report: `key` in summary.json's `flow_control` holds `value`; the console
/// summary prints `label: text`, on its own when the scheme does not pause queues (the pause counts would say
/// nothing), after them otherwise.
#[derive(Clone)]
pub struct SchemeReport {
    /// Its key in summary.json's `flow_control`.
    pub key: &'static str,
    /// Its label in the console summary.
    pub label: &'static str,
    /// The scheme pauses queues: the console shows the pause counts too.
    pub pauses: bool,
    /// One line for the console.
    pub text: String,
    /// What summary.json holds.
    pub value: Arc<dyn ReportValue>,
}

/// A report's value: serialized into summary.json, and read back by its type ([`SchemeReport::get`]).
pub trait ReportValue: erased_serde::Serialize + Any + Send + Sync {}

impl<T: Serialize + Any + Send + Sync> ReportValue for T {}

erased_serde::serialize_trait_object!(ReportValue);

impl SchemeReport {
    /// A report of `value` under `key`, shown as `label: value` (its `Display`).
    pub fn new<T>(key: &'static str, label: &'static str, pauses: bool, value: T) -> SchemeReport
    where
        T: Serialize + fmt::Display + Send + Sync + 'static,
    {
        SchemeReport {
            key,
            label,
            pauses,
            text: value.to_string(),
            value: Arc::new(value),
        }
    }
}

impl SchemeReport {
    /// The report's value, if it is a `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.value;
        any.downcast_ref()
    }
}

impl fmt::Debug for SchemeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.text)
    }
}

impl PartialEq for SchemeReport {
    fn eq(&self, other: &SchemeReport) -> bool {
        self.key == other.key && self.text == other.text
    }
}

impl Serialize for SchemeReport {
    /// As the one entry `key: value` of a map, for a `#[serde(flatten)]` field.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(self.key, &*self.value)?;
        map.end()
    }
}
