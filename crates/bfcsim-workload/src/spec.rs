//! The workload description as it appears in an experiment file (`[workload]`), deserialised with serde.
//!
//! ```toml
//! [workload]
//! cdf = "google"            # a built-in name (see `builtin`) or a path to a CDF file
//! interpolation = "linear"  # or "step"
//! arrivals = "lognormal"    # or "poisson" (the default)
//! sigma = 2.0               # lognormal only; default 2 (BFC §6.2.1)
//! load = 0.6                # total load on `load_on`, incast shares included (as in BFC's nsdifinal.cc)
//! load_on = "core"          # resolved by the caller into a `LoadBasis`
//! load_counts = "payload"   # or "wire": the load counts each data packet's headers too (Homa, PayDebt §5)
//! duration = "5ms"          # flows start in [0, duration)
//! locality = 0.0            # optional: fraction of rack-local destinations; absent = uniform all-to-all
//! partition = 32            # optional: flows stay within blocks of 32 consecutive hosts (one data centre each)
//! sources = [0, 1, 2]       # optional: background sources among these host indices (default: all that
//!                           # have a destination besides themselves)
//! destinations = [3]        # optional: background destinations among these host indices (default: all)
//! class = 0
//! classes = 1               # optional: background classes class..class+classes-1, equal load each
//! [[workload.incast]]
//! degree = 100              # senders per event
//! aggregate = "20MB"        # bytes per event, split evenly among the senders
//! period = "500us"          # or: share = 0.05 (fraction of the link set's capacity)
//! arrival = "periodic"      # or "poisson"
//! [[workload.group]]        # a named group of flows of one size to one host, reported apart
//! name = "direct"
//! size = "1KB"
//! to = 0                    # the destination, an index into the topology's hosts
//! from = "other-racks"      # senders: "any" (default), "other-racks" or "same-rack" (relative to `to`)
//! # senders = [4, 5]        # ... or exactly these hosts, instead of `from`
//! load = 0.03               # Poisson arrivals offering 3% of the destination's host link ...
//! # count = 64              # ... or that many flows, all starting at `start` (default 0)
//! # start_spread = "1us"    # ... each within this of `start` (count only; default 0)
//! [[workload.collective]]   # a collective of distributed training (see `collective` for every key)
//! name = "grads"
//! kind = "all-reduce"
//! size = "16MB"
//! ranks = 64
//! [[workload.long_lived]]   # a flow active for the whole run, whose throughput the summary reports
//! src = 0                   # host indices
//! dst = 3
//! start = "0us"             # default 0
//! ```
//!
//! The background stream (`cdf`, `load`, `load_on`) is optional: `load` defaults to 0 and `cdf` is needed only
//! when the background carries some of it; `load_on` defaults to `core`.
//!
//! Optional CDF keys: `bytes_per_packet` (sizes are packets of that many bytes; overrides the 1000 B default of the
//! packet-unit built-ins) and `min_size` (BFC's rule: sizes up to it get probability 0; overrides a built-in's).

use std::path::Path;

use bfcsim_core::{Bytes, InputError, Time};
use serde::{Deserialize, Serialize};

use crate::arrivals::Arrivals;
use crate::builtin::builtin;
use crate::cdf::{CdfOptions, Interpolation, SizeCdf, SizeUnit};
use crate::collective::CollectiveSpec;
use crate::error::WorkloadError;

/// The arrival process of the background stream, as named in the experiment file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalKind {
    /// Exponential gaps.
    #[default]
    Poisson,
    /// Log-normal gaps with shape `sigma`.
    LogNormal,
}

/// When an incast generator fires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IncastArrival {
    /// Every period, from a uniformly random offset in [0, period).
    #[default]
    Periodic,
    /// Exponential gaps with mean = period.
    Poisson,
}

/// A background workload plus optional incasts (`[workload]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// The background's flow sizes: a built-in distribution name or a path to a CDF file (relative paths
    /// resolve against the caller's base). Needed only when the background carries load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf: Option<String>,
    /// How sizes between CDF points are drawn.
    #[serde(default)]
    pub interpolation: Interpolation,
    /// CDF sizes are packets of this many payload bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_packet: Option<u64>,
    /// BFC's rule: sizes up to this get probability 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size: Option<u64>,
    /// The background arrival process.
    #[serde(default)]
    pub arrivals: ArrivalKind,
    /// Log-normal shape (only with `arrivals = "lognormal"`; default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
    /// Total target load on the `load_on` link set, incast included (default 0: no background).
    #[serde(default)]
    pub load: f64,
    /// The link set the load is defined on; the caller resolves it into a [`LoadBasis`](crate::LoadBasis).
    /// Default `core` (BFC §6.2.1: the load on the ToR-spine links).
    #[serde(default = "default_load_on")]
    pub load_on: String,
    /// What the load counts: the flows' payload bytes (the default), or the bytes they put on the wire, each
    /// packet's headers included (Homa's simulations, which PayDebt §5 follows: "the real load factor
    /// observed on the network"). Applies to the background and the incasts.
    #[serde(default, skip_serializing_if = "LoadCounts::is_payload")]
    pub load_counts: LoadCounts,
    /// Flows start in [0, duration).
    pub duration: Time,
    /// Stop the background's arrivals at this many flows (BCC §V-B: "each simulation lasts for 100,000
    /// flows"); `duration` then only bounds them, and one too short to reach the count is an error. Not with
    /// incasts or groups, whose arrivals follow `duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u64>,
    /// Fraction of rack-local destinations; absent means uniform all-to-all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locality: Option<f64>,
    /// Background flows stay inside blocks of this many consecutive host indices: the destination is uniform
    /// among the other hosts of the source's block (BFC App. A.9's intra-data-centre traffic, each data centre
    /// one block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<u32>,
    /// Background sources are drawn uniformly among these host indices; absent: every host that has a
    /// destination other than itself (so `destinations = [0]` alone is many-to-one traffic into host 0, the
    /// single bottleneck of BFC §2.3's Fig. 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<u32>>,
    /// Background destinations are drawn uniformly among these host indices (other than the source); absent:
    /// every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destinations: Option<Vec<u32>>,
    /// Traffic class of the background flows.
    #[serde(default)]
    pub class: u8,
    /// Spread the background flows uniformly over this many classes from `class` on (equal load per class, BFC
    /// App. A.3's four priority classes); default 1.
    #[serde(default = "one_class", skip_serializing_if = "is_one")]
    pub classes: u8,
    /// Incast generators.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incast: Vec<IncastSpec>,
    /// Named groups of flows, each reported apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group: Vec<GroupSpec>,
    /// Long-lived flows (BFC §2.1's long flow), added to the generated ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub long_lived: Vec<LongLivedSpec>,
    /// Collectives of distributed training, whose flows wait for each other ([`crate::collective`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collective: Vec<CollectiveSpec>,
}

/// What a workload's `load` counts ([`WorkloadSpec::load_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadCounts {
    /// The flows' payload bytes (BFC's `nsdifinal.cc`, HPCC's traffic generator).
    #[default]
    Payload,
    /// The bytes the flows' data packets put on the wire: payload plus `nic.header` per packet of at most
    /// `nic.payload` bytes. ACKs, credits and grants are left out: they differ by scheme, and every scheme of
    /// a figure runs the same flows.
    Wire,
}

impl LoadCounts {
    fn is_payload(&self) -> bool {
        *self == LoadCounts::Payload
    }
}

fn one_class() -> u8 {
    1
}

fn is_one(n: &u8) -> bool {
    *n == 1
}

fn default_load_on() -> String {
    "core".into()
}

/// A long-lived flow (`[[workload.long_lived]]`): it sends for the whole run (its size, 10¹⁵ B by default, lasts
/// 80 000 s at 100 Gb/s), and the summary reports its throughput over the measurement window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongLivedSpec {
    /// Source host index.
    pub src: u32,
    /// Destination host index.
    pub dst: u32,
    /// When it starts.
    #[serde(default)]
    pub start: Time,
    /// Payload bytes.
    #[serde(default = "LongLivedSpec::default_size")]
    pub size: Bytes,
    /// Traffic class (default: the workload's `class`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
}

impl LongLivedSpec {
    fn default_size() -> Bytes {
        Bytes(1_000_000_000_000_000)
    }
}

/// One incast generator (`[[workload.incast]]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncastSpec {
    /// Senders per event.
    pub degree: u32,
    /// Bytes per event, split evenly among the senders (the first `aggregate % degree` send one byte more).
    pub aggregate: Bytes,
    /// Time between events (exactly one of `period` and `share`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Time>,
    /// Fraction of the link set's capacity this incast offers; the period follows from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Periodic or Poisson events.
    #[serde(default)]
    pub arrival: IncastArrival,
    /// Traffic class of the incast flows (default: the workload's `class`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
}

/// Where the senders of a [`GroupSpec`] are, relative to its destination.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Senders {
    /// Any host but the destination.
    #[default]
    Any,
    /// Hosts outside the destination's rack: their flows cross the fabric (BFC App. A.1's senders, so that
    /// long flows and mice meet at the spine switches).
    OtherRacks,
    /// The destination's rack-mates.
    SameRack,
}

/// The spelling of the experiment file (`any`, `other-racks`, `same-rack`).
impl std::fmt::Display for Senders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Senders::Any => "any",
            Senders::OtherRacks => "other-racks",
            Senders::SameRack => "same-rack",
        })
    }
}

/// A named group of flows of one fixed size to one destination (`[[workload.group]]`), reported apart in
/// `fct.csv` and the summary. Either `count` flows that all start at `start`, or within `start_spread` of it (BFC
/// App. A.1, Fig. 15: long-running flows to one receiver; §6.1, Fig. 8), or Poisson arrivals from `start` to the workload's `duration` that offer `load` of the
/// destination's host link in payload bytes (Fig. 15's mice: 1 KB flows at 3% of the link).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// The label of the group's flows in `fct.csv` and the summary.
    pub name: String,
    /// Payload bytes of every flow.
    pub size: Bytes,
    /// The destination: an index into the topology's host list.
    pub to: u32,
    /// Where the senders are.
    #[serde(default)]
    pub from: Senders,
    /// Exactly these senders, by host index, instead of `from` (BFC §6.1, Fig. 8: each group of the testbed
    /// sends from the hosts behind one switch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub senders: Vec<u32>,
    /// This many flows, all starting at `start` (or within `start_spread` of it); senders cycle through a shuffled list of the eligible hosts,
    /// so they are distinct while there are enough (exactly one of `count` and `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Poisson arrivals offering this fraction of the destination's host link; each flow's sender is uniform
    /// over the eligible hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// When the group's flows start (`count`), or its arrivals begin (`load`).
    #[serde(default)]
    pub start: Time,
    /// With `count`: each flow starts at a time drawn uniformly from [`start`, `start` + this), so that flows
    /// "started together" by hand or by a traffic generator do not reach a switch at the same picosecond.
    #[serde(default, skip_serializing_if = "Time::is_zero")]
    pub start_spread: Time,
    /// Traffic class of the group's flows (default: the workload's `class`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
}

/// Background source and destination host indices, from `sources` and `destinations`.
pub type Subsets = (Vec<usize>, Vec<usize>);

/// The largest lognormal σ: beyond it nearly every gap rounds to zero picoseconds and rare gaps are
/// astronomically long, so no run of sensible length sees the mean rate the load asks for.
pub const MAX_SIGMA: f64 = 10.0;

impl WorkloadSpec {
    /// Checks each value for its domain (the checks that need the topology come later, in [`crate::plan`] and
    /// [`crate::generate()`]); the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.load.is_finite() && self.load >= 0.0) {
            return Err(format!(
                "workload.load = {} must be a number at least 0 (a fraction of the `load_on` links' capacity)",
                self.load
            ));
        }
        if let Some(sigma) = self.sigma
            && !(sigma > 0.0 && sigma <= MAX_SIGMA)
        {
            return Err(format!(
                "workload.sigma = {sigma} must be in (0, {MAX_SIGMA}]: beyond it almost every gap between \
                     arrivals rounds to zero and no run sees the mean rate"
            ));
        }
        if self.duration == Time::ZERO {
            return Err(
                "workload.duration = 0ps must be positive: flows start in [0, duration)".into(),
            );
        }
        match self.flows {
            Some(0) => return Err("workload.flows = 0 must be at least 1".into()),
            Some(n) if !self.incast.is_empty() || !self.group.is_empty() => {
                return Err(format!(
                    "workload.flows = {n} counts the background's flows only: drop it, or the [[workload.incast]] \
                     and [[workload.group]] tables, whose arrivals follow workload.duration"
                ));
            }
            _ => {}
        }
        if let Some(p) = self.locality
            && !(0.0..=1.0).contains(&p)
        {
            return Err(format!(
                "workload.locality = {p} must be a fraction in [0, 1]"
            ));
        }
        if self.classes == 0 || self.class as u32 + self.classes as u32 > 256 {
            return Err(format!(
                "workload.classes = {} must be at least 1, and class + classes ({} + {}) at most 256",
                self.classes, self.class, self.classes
            ));
        }
        if let Some(b) = self.bytes_per_packet
            && b == 0
        {
            return Err("workload.bytes_per_packet = 0 must be at least 1".into());
        }
        for (i, g) in self.group.iter().enumerate() {
            if let Some(load) = g.load
                && !(load.is_finite() && load > 0.0)
            {
                return Err(format!(
                    "workload.group.{i}.load = {load} must be a positive fraction of the destination's link"
                ));
            }
        }
        for (i, inc) in self.incast.iter().enumerate() {
            if let Some(share) = inc.share
                && !(share.is_finite() && share > 0.0)
            {
                return Err(format!(
                    "workload.incast.{i}.share = {share} must be a positive fraction of the `load_on` links' \
                         capacity"
                ));
            }
        }
        Ok(())
    }

    /// The background's source and destination host indices when `sources` or `destinations` restricts them
    /// (`None`: all-to-all), checked against `hosts` hosts.
    pub fn subsets(&self, hosts: usize) -> Result<Option<Subsets>, WorkloadError> {
        if self.sources.is_none() && self.destinations.is_none() {
            return Ok(None);
        }
        let indices = |list: &Option<Vec<u32>>, what: &str| match list {
            None => Ok((0..hosts).collect::<Vec<usize>>()),
            Some(l) => l
                .iter()
                .map(|&i| match i as usize {
                    i if i < hosts => Ok(i),
                    _ => Err(WorkloadError::Invalid(format!(
                        "workload.{what}: host index {i} is not below the {hosts} hosts"
                    ))),
                })
                .collect(),
        };
        let destinations = indices(&self.destinations, "destinations")?;
        let sources = match &self.sources {
            Some(_) => indices(&self.sources, "sources")?,
            None => (0..hosts)
                .filter(|&h| destinations.iter().any(|&d| d != h))
                .collect(),
        };
        Ok(Some((sources, destinations)))
    }

    /// The background arrival process, checking that `sigma` goes with `lognormal`.
    pub fn arrival_process(&self) -> Result<Arrivals, WorkloadError> {
        match (self.arrivals, self.sigma) {
            (ArrivalKind::Poisson, None) => Ok(Arrivals::Poisson),
            (ArrivalKind::Poisson, Some(_)) => Err(WorkloadError::Invalid(
                "`sigma` applies only to `arrivals = \"lognormal\"`".into(),
            )),
            (ArrivalKind::LogNormal, sigma) => Ok(Arrivals::LogNormal {
                sigma: sigma.unwrap_or(2.0),
            }),
        }
    }

    /// Whether the background or the incasts put load on the `load_on` set, so that the caller must resolve it
    /// into a [`LoadBasis`](crate::LoadBasis).
    pub fn needs_load_basis(&self) -> bool {
        self.load > 0.0 || !self.incast.is_empty()
    }

    /// Loads the background's size distribution, `None` when `cdf` is not given: a built-in if `cdf` names
    /// one, else the file at `cdf` (relative to `base_dir`), in an auto-detected format.
    pub fn size_cdf(&self, base_dir: &Path) -> Result<Option<SizeCdf>, WorkloadError> {
        let Some(cdf) = &self.cdf else {
            return Ok(None);
        };
        self.load_cdf(cdf, base_dir).map(Some)
    }

    fn load_cdf(&self, cdf: &str, base_dir: &Path) -> Result<SizeCdf, WorkloadError> {
        if let Some(b) = builtin(cdf) {
            let mut options = b.options(self.interpolation);
            if let Some(bytes_per_packet) = self.bytes_per_packet {
                if !b.in_packets() {
                    return Err(WorkloadError::Invalid(format!(
                        "`bytes_per_packet` applies only to CDFs in packets; `{cdf}` is in bytes"
                    )));
                }
                options.unit = SizeUnit::Packets { bytes_per_packet };
            }
            if self.min_size.is_some() {
                options.min_size = self.min_size;
            }
            return Ok(b.load_with(&options)?);
        }
        let path = base_dir.join(cdf);
        if !path.exists() {
            return Err(InputError::file(
                &path,
                format!(
                    "`{cdf}` is neither a built-in distribution nor a readable file (built-ins: {})",
                    {
                        let names: Vec<&str> =
                            crate::builtin::BUILTINS.iter().map(|b| b.name()).collect();
                        names.join(", ")
                    }
                ),
            )
            .into());
        }
        let options = CdfOptions {
            unit: self
                .bytes_per_packet
                .map_or(SizeUnit::Bytes, |bytes_per_packet| SizeUnit::Packets {
                    bytes_per_packet,
                }),
            min_size: self.min_size,
            interpolation: self.interpolation,
            ..Default::default()
        };
        Ok(SizeCdf::load(&path, &options)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
        [workload]
        cdf = "google"
        interpolation = "linear"
        arrivals = "lognormal"
        sigma = 2.0
        load = 0.6
        load_on = "core"
        duration = "5ms"
        locality = 0.0
        class = 0
        [[workload.incast]]
        degree = 100
        aggregate = "20MB"
        period = "500us"
        [[workload.incast]]
        degree = 10
        aggregate = "1MB"
        share = 0.05
        arrival = "poisson"
        class = 3
    "#;

    #[derive(Deserialize)]
    struct File {
        workload: WorkloadSpec,
    }

    #[test]
    fn parses_the_documented_example() {
        let w = toml::from_str::<File>(EXAMPLE).unwrap().workload;
        assert_eq!(w.cdf.as_deref(), Some("google"));
        assert_eq!(
            w.arrival_process().unwrap(),
            Arrivals::LogNormal { sigma: 2.0 }
        );
        assert_eq!(w.duration, Time::from_ms(5));
        assert_eq!(w.locality, Some(0.0));
        assert_eq!(w.incast.len(), 2);
        assert_eq!(w.incast[0].aggregate, Bytes(20_000_000));
        assert_eq!(w.incast[0].period, Some(Time::from_us(500)));
        assert_eq!(w.incast[0].arrival, IncastArrival::Periodic);
        assert_eq!(w.incast[1].share, Some(0.05));
        assert_eq!(w.incast[1].arrival, IncastArrival::Poisson);
        assert_eq!(w.incast[1].class, Some(3));
        let cdf = w.size_cdf(Path::new(".")).unwrap().unwrap();
        assert_eq!(cdf.points().next(), Some((101.0, 0.0)));
        // Round trip through serialisation.
        let text = toml::to_string(&w).unwrap();
        assert_eq!(toml::from_str::<WorkloadSpec>(&text).unwrap(), w);
    }

    #[test]
    fn minimal_spec_uses_defaults() {
        let w: WorkloadSpec = toml::from_str(
            "cdf = \"websearch\"\nload = 0.5\nload_on = \"hosts\"\nduration = \"1ms\"",
        )
        .unwrap();
        assert_eq!(w.arrival_process().unwrap(), Arrivals::Poisson);
        assert_eq!(w.interpolation, Interpolation::Linear);
        assert_eq!(w.locality, None);
        assert!(w.incast.is_empty());
    }

    #[test]
    fn groups_parse_and_the_background_is_optional() {
        let w: WorkloadSpec = toml::from_str(
            r#"
            duration = "2ms"
            [[group]]
            name = "long"
            size = "1GB"
            to = 0
            from = "other-racks"
            count = 64
            [[group]]
            name = "direct"
            size = "1KB"
            to = 0
            load = 0.03
            start = "10us"
            class = 1
            "#,
        )
        .unwrap();
        assert_eq!(
            (w.cdf.as_ref(), w.load, w.load_on.as_str()),
            (None, 0.0, "core")
        );
        assert!(!w.needs_load_basis());
        assert_eq!(w.size_cdf(Path::new(".")).unwrap(), None);
        assert_eq!(w.group.len(), 2);
        let (long, direct) = (&w.group[0], &w.group[1]);
        assert_eq!(
            (long.size, long.from, long.count, long.load, long.start),
            (
                Bytes(1_000_000_000),
                Senders::OtherRacks,
                Some(64),
                None,
                Time::ZERO
            )
        );
        assert_eq!(
            (
                direct.size,
                direct.from,
                direct.load,
                direct.start,
                direct.class
            ),
            (
                Bytes(1000),
                Senders::Any,
                Some(0.03),
                Time::from_us(10),
                Some(1)
            )
        );
        let text = toml::to_string(&w).unwrap();
        assert_eq!(toml::from_str::<WorkloadSpec>(&text).unwrap(), w);
        // Unset, the listed senders and the start spread are not written, so stored runs keep their keys.
        assert!(
            !text.contains("senders") && !text.contains("start_spread"),
            "{text}"
        );
        let mut listed = w.clone();
        listed.group[0].senders = vec![4, 5];
        listed.group[0].start_spread = Time::from_us(1);
        let text = toml::to_string(&listed).unwrap();
        assert!(
            text.contains("senders = [4, 5]") && text.contains("start_spread"),
            "{text}"
        );
        assert_eq!(toml::from_str::<WorkloadSpec>(&text).unwrap(), listed);
        let e = toml::from_str::<WorkloadSpec>(
            "duration = \"1ms\"\n[[group]]\nname = \"x\"\nsize = \"1KB\"\nto = 0\nfrom = \"elsewhere\"",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown variant `elsewhere`"), "{e}");
    }

    #[test]
    fn rejects_unknown_and_misplaced_keys() {
        let e = toml::from_str::<WorkloadSpec>(
            "cdf = \"x\"\nload = 0.5\nload_on = \"h\"\nduration = \"1ms\"\nlod = 1",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field `lod`"), "{e}");
        let e = toml::from_str::<IncastSpec>("degree = 2\naggregate = \"1MB\"\nperiood = \"1us\"")
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `periood`"), "{e}");
        let e = toml::from_str::<WorkloadSpec>(
            "cdf = \"x\"\nload = 0.5\nload_on = \"h\"\nduration = \"5\"",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unit is missing"), "{e}");
        let w: WorkloadSpec = toml::from_str(
            "cdf = \"x\"\nload = 0.5\nload_on = \"h\"\nduration = \"5ms\"\nsigma = 1.0",
        )
        .unwrap();
        assert!(
            w.arrival_process()
                .unwrap_err()
                .to_string()
                .contains("sigma")
        );
    }

    #[test]
    fn resolves_paths_and_packet_units() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let mut w: WorkloadSpec = toml::from_str(
            "cdf = \"homa_DCTCP_MsgSizeDist.txt\"\nload = 0.5\nload_on = \"h\"\nduration = \"1ms\"\nbytes_per_packet = 1000",
        )
        .unwrap();
        let from_file = w.size_cdf(&dir).unwrap();
        assert!(from_file.is_some());
        w.cdf = Some("homa-dctcp".into());
        assert_eq!(w.size_cdf(&dir).unwrap(), from_file);
        w.cdf = Some("websearch".into());
        assert!(
            w.size_cdf(&dir)
                .unwrap_err()
                .to_string()
                .contains("bytes_per_packet")
        );
        w.cdf = Some("no-such-thing".into());
        let e = w.size_cdf(&dir).unwrap_err().to_string();
        assert!(
            e.contains("neither a built-in") && e.contains("google"),
            "{e}"
        );
    }
}
