//! bfcsim's top layer (GUIDE §3.1): experiment files, the runner that connects a workload, the engine and the
//! metrics, and the command line. `bfcsim run EXPERIMENT.toml` is [`experiment::ExperimentConfig`] +
//! [`runner::run`].

pub mod bench;
pub mod digest;
pub mod experiment;
pub mod figure;
pub mod load;
pub mod presets;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod store;
pub mod sweep;
