//! Workloads for bfcsim: what is offered to the network, as a list of [`FlowSpec`]s.
//!
//! * [`cdf`]: flow-size distributions ([`SizeCdf`]) from HPCC, Homa, BFC and ns-2 CDF files, sampled by inverse
//!   transform; [`builtin`](mod@builtin) embeds the reference files shipped in `data/`.
//! * [`arrivals`]: Poisson and log-normal (BFC §6.2.1) inter-arrival gaps, in integer picoseconds.
//! * [`load`]: the arrival rate that offers a target load on a set of links ([`LoadTarget`]).
//! * [`endpoints`]: uniform and rack-local source/destination choice.
//! * [`spec`] and [`generate`](mod@generate): the `[workload]` section of an experiment file and the flow list it
//!   generates (a background stream, incasts and named groups), deterministic from a master seed.
//! * [`flowfile`]: importing HPCC's `flow.txt`.
//!
//! Typical use:
//!
//! ```no_run
//! # use bfcsim_workload::*;
//! # use bfcsim_core::NodeId;
//! # fn run(spec: &WorkloadSpec, ids: &[NodeId], racks: &[u32], link_bps: &[f64]) -> Result<(), WorkloadError> {
//! let cdf = spec.size_cdf(std::path::Path::new("."))?;
//! let framing = Framing { payload: 1000, header: 48 };
//! let basis = LoadBasis { capacity_bps: 6.4e12, background_crossings: 1.75, incast_crossings: 1.75, framing };
//! let hosts = HostSet { ids, racks, link_bps };
//! let flows = generate(spec, cdf.as_ref(), &hosts, Some(&basis), 42)?;
//! # Ok(()) }
//! ```
//!
//! [`FlowSpec`]: bfcsim_core::FlowSpec

pub mod arrivals;
pub mod builtin;
pub mod cdf;
pub mod collective;
pub mod endpoints;
mod error;
pub mod flowfile;
pub mod generate;
pub mod htsim_cm;
pub mod load;
pub mod spec;

pub use arrivals::{Arrivals, GapSampler};
pub use builtin::{BUILTINS, Builtin, builtin};
pub use cdf::{CdfFormat, CdfOptions, GpdTail, Interpolation, SizeCdf, SizeUnit};
pub use collective::{
    Algorithm, CollectiveFlows, CollectiveKind, CollectiveSpec, FlowLabel, Placement, collectives,
};
pub use endpoints::Endpoints;
pub use error::WorkloadError;
pub use flowfile::{FlowFile, load_flow_file, parse_flow_file};
pub use generate::{HostSet, LoadBasis, Plan, generate, generate_at_most, long_lived, plan};
pub use htsim_cm::{ConnectionMatrix, load_connection_matrix, parse_connection_matrix};
pub use load::{Framing, LoadTarget};
pub use spec::{
    ArrivalKind, GroupSpec, IncastArrival, IncastSpec, LoadCounts, LongLivedSpec, Senders,
    WorkloadSpec,
};
