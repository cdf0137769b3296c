//! bfcsim's top layer: experiment files, the runner that connects a workload, the engine and the
//! metrics, and the command line. `bfcsim run EXPERIMENT.toml` is [`experiment::ExperimentConfig`] +
//! [`runner::prepare`] + [`runner::simulate`], with [`trace`]'s time series and [`explain`]'s account of chosen
//! flows when asked. Sweeps and reproduced figures go through the resumable run store
//! ([`store`], each run's [`digest`]); a figure of a paper is a definition ([`figure`]) that [`reproduce`] runs
//! and [`report`] turns into `report.md` and charts.

pub mod arbitrary_run;
pub mod atlas;
pub mod bench;
pub mod bundle;
pub mod collectives;
pub mod digest;
pub mod events;
pub mod experiment;
pub mod explain;
pub mod figure;
pub mod fuzz_targets;
pub mod limits;
pub mod load;
pub mod locate;
pub mod outputs;
pub mod presets;
pub mod provenance;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod store;
pub mod sweep;
pub mod trace;
pub mod trace_view;
