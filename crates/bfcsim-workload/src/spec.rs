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
//! duration = "5ms"          # flows start in [0, duration)
//! locality = 0.0            # optional: fraction of rack-local destinations; absent = uniform all-to-all
//! receiver = 0              # optional, instead of locality: every background flow goes to this host index
//! class = 0
//! [[workload.incast]]
//! degree = 100              # senders per event
//! aggregate = "20MB"        # bytes per event, split evenly among the senders
//! period = "500us"          # or: share = 0.05 (fraction of the link set's capacity)
//! arrival = "periodic"      # or "poisson"
//! ```
//!
//! Optional CDF keys: `bytes_per_packet` (sizes are packets of that many bytes; overrides the 1000 B default of the
//! packet-unit built-ins) and `min_size` (BFC's rule: sizes up to it get probability 0; overrides a built-in's).

use std::path::Path;

use bfcsim_core::{Bytes, InputError, Time};
use serde::{Deserialize, Serialize};

use crate::arrivals::Arrivals;
use crate::builtin::builtin;
use crate::cdf::{CdfOptions, Interpolation, SizeCdf, SizeUnit};
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
    /// A built-in distribution name or a path to a CDF file (relative paths resolve against the caller's base).
    pub cdf: String,
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
    /// Total target load on the `load_on` link set, incast included.
    pub load: f64,
    /// The link set the load is defined on; the caller resolves it into a [`LoadBasis`](crate::LoadBasis).
    pub load_on: String,
    /// Flows start in [0, duration).
    pub duration: Time,
    /// Fraction of rack-local destinations; absent means uniform all-to-all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locality: Option<f64>,
    /// Every background flow goes to this host (by host index) from a uniform other host: one bottleneck, the
    /// receiver's downlink (BFC §2.3 Fig. 4; App. A.2 Fig. 18's single receiver). Excludes `locality`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<u32>,
    /// Traffic class of the background flows.
    #[serde(default)]
    pub class: u8,
    /// Incast generators.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incast: Vec<IncastSpec>,
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

impl WorkloadSpec {
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

    /// Loads the size distribution: a built-in if `cdf` names one, else the file at `cdf` (relative to
    /// `base_dir`), in an auto-detected format.
    pub fn size_cdf(&self, base_dir: &Path) -> Result<SizeCdf, WorkloadError> {
        if let Some(b) = builtin(&self.cdf) {
            let mut options = b.options(self.interpolation);
            if let Some(bytes_per_packet) = self.bytes_per_packet {
                if !b.in_packets() {
                    return Err(WorkloadError::Invalid(format!(
                        "`bytes_per_packet` applies only to CDFs in packets; `{}` is in bytes",
                        self.cdf
                    )));
                }
                options.unit = SizeUnit::Packets { bytes_per_packet };
            }
            if self.min_size.is_some() {
                options.min_size = self.min_size;
            }
            return Ok(b.load_with(&options)?);
        }
        let path = base_dir.join(&self.cdf);
        if !path.exists() {
            return Err(InputError::file(
                &path,
                format!(
                    "`{}` is neither a built-in distribution nor a readable file (built-ins: {})",
                    self.cdf,
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
        assert_eq!(w.cdf, "google");
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
        let cdf = w.size_cdf(Path::new(".")).unwrap();
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
        w.cdf = "homa-dctcp".into();
        assert_eq!(w.size_cdf(&dir).unwrap(), from_file);
        w.cdf = "websearch".into();
        assert!(
            w.size_cdf(&dir)
                .unwrap_err()
                .to_string()
                .contains("bytes_per_packet")
        );
        w.cdf = "no-such-thing".into();
        let e = w.size_cdf(&dir).unwrap_err().to_string();
        assert!(
            e.contains("neither a built-in") && e.contains("google"),
            "{e}"
        );
    }
}
