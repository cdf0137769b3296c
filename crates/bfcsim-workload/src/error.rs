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
}
