//! The bfcsim engine (layer 4 of those `bfcsim_core` lists): switches, links and NICs from `bfcsim-net` wired to the
//! protocol state machines of `bfcsim-schemes`, driven by one event queue.
//!
//! [`Sim::new`] takes a topology, a start-sorted flow list and [`SimParams`] ([`Sim::with_threads`] splits the
//! run over threads, with identical results); [`Sim::run_until`] advances simulated time (slices give
//! identical results to one long call, which is how callers sample state and show progress);
//! [`Sim::check_invariants`] verifies conservation at the end.
//!
//! # Schemes inside the network: one seam
//!
//! The engine is a fabric (wires, switch ports and their queues, buffers, routing, NICs, the event queue,
//! time) that knows no scheme. A scheme that acts at switches and NICs (BFC, PFC, Aquarius, ExpressPass, Homa)
//! is a type of `bfcsim-schemes` written against [`bfcsim_schemes::fabric`]: the fabric calls its switch side
//! and NIC side at fixed points (admission and enqueue, dequeue, frame arrival, its timers, a flow's start and
//! end, NIC scheduling) as `&mut self` methods and hands them the fabric's verbs. The schemes a run can choose
//! by `[flow_control] kind` are listed once, in `bfcsim-registry`, whose `schemes!` line per scheme generates the
//! enum that dispatches every hook statically; the engine runs its event loop over that enum's scheme, compiled
//! for each (`src/engine/registry.rs`), and never names a scheme.

pub mod config;
mod engine;
pub mod faults;
mod partition;
pub mod sim;
pub mod timers;

pub use bfcsim_schemes::fabric::HopStats;
pub use config::{
    Connections, EcnConfig, FlowControl, NicConfig, NicScheduler, Scheduler, SwitchConfig,
};
pub use engine::{
    Counters, FlowDeps, HopRecord, Logged, Notify, PausePairs, QueueState, SchemeEntry, SimParams,
};
pub use sim::Sim;
