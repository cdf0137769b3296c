//! The crate's error type.

use bfcsim_core::InputError;

/// Why a workload could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// A problem in an input file (CDF, flow file), naming the file and line.
    #[error(transparent)]
    Input(#[from] InputError),
    /// An inconsistent workload description (e.g. an incast larger than the host count).
    #[error("workload: {0}")]
    Invalid(String),
    /// More flows expected than the caller allows (see [`crate::generate::generate_at_most`]).
    #[error("workload: about {expected:.3e} flows, more than the {max} this run may hold")]
    TooManyFlows {
        /// The flows expected.
        expected: f64,
        /// The most allowed.
        max: u64,
    },
    /// Far more flows drawn than expected (see [`crate::generate::generate_at_most`]).
    #[error(
        "workload: the arrivals drew more than {drawn} flows where about {expected:.0} were expected: with \
         this workload.sigma at this rate almost every gap rounds to zero picoseconds; lower workload.sigma or \
         use arrivals = \"poisson\""
    )]
    Runaway {
        /// The flows expected.
        expected: f64,
        /// The flows drawn when generation stopped.
        drawn: usize,
    },
}
