//! The bfcsim engine (layer 4 of GUIDE §3.1): switches, links and NICs from `bfcsim-net` wired to the
//! protocol state machines of `bfcsim-schemes`, driven by one event queue.
//!
//! [`Sim::new`] takes a topology, a start-sorted flow list and [`SimParams`] ([`Sim::with_threads`] splits the
//! run over threads, with identical results); [`Sim::run_until`] advances simulated time (slices give
//! identical results to one long call, which is how callers sample state and show progress);
//! [`Sim::check_invariants`] verifies conservation at the end.

pub mod config;
mod engine;
pub mod sim;
pub mod timers;

pub use config::{EcnConfig, FlowControl, NicConfig, NicScheduler, Scheduler, SwitchConfig};
pub use engine::{Counters, HopStats, QueueState, SimParams};
pub use sim::Sim;
