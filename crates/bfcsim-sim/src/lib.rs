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
//! Schemes that act at switches and NICs (BFC, PFC) sit behind one interface, the `SchemeSide` trait of
//! `src/engine/scheme/mod.rs`, chosen by the `[flow_control]` section ([`FlowControl`]). The engine moves
//! packets and keeps time; at fixed points it calls the running scheme, dispatched by a `match` on the `Scheme`
//! enum so that calls are static and inline:
//!
//! - `init`: once, when the shard's network and congestion control exist;
//! - switch side: `enqueue` (a packet that does not ride the control queue entered a switch and was routed:
//!   pick its queue, admit it into the buffer or refuse it with a reason, queue it), `dequeued` (the scheduler
//!   took it out for transmission), `frame` (a per-hop PAUSE, RESUME or refresh reached the device at the far
//!   end of its link);
//! - NIC side: `flow_started` (returns the flow's NIC queue), `may_send` (scheduling: whether the flow may send
//!   now), `flow_finished`;
//! - `timer`: the scheme's own timer on a switch port or NIC port is due. All schemes share one event kind,
//!   `SchemeTimer(port)`, at most one pending per port; a scheme keeps its own deadlines behind it. Timers that
//!   fall on a grid (BFC's refreshes) may be armed in batches, one event per instant, and fire alike.
//!
//! Every method has a default that behaves as a network without the scheme, so a scheme implements only the
//! points it acts at. The scheme's state machines are sans-IO (`bfcsim_schemes::bfc::BfcSwitch`,
//! `bfcsim_net::pfc::PfcIngress`): handed `now` and an input, they answer with actions (a queue, a PAUSE to
//! send) and never touch the event queue; the scheme's module in `src/engine/scheme/` describes packets to them
//! and carries out their answers with the engine's helpers. Adding a switch-side mechanism is one module and one
//! line in the `schemes!` list (plus its `[flow_control]` variant); for example a switch marking ECN on its
//! pool's occupancy:
//!
//! ```ignore
//! // src/engine/scheme/pool_marking.rs
//! pub(in crate::engine) struct PoolMarking { threshold: u64 }
//!
//! impl SchemeSide for PoolMarking {
//!     fn init(sh: &mut Shard) -> Result<Self, String> {
//!         let FlowControl::PoolMarking(c) = &sh.params.flow_control else { unreachable!() };
//!         Ok(PoolMarking { threshold: c.threshold.0 })
//!     }
//!     fn enqueue(sh: &mut Shard, e: &Entry) -> Result<(), DropReason> {
//!         let Scheme::PoolMarking(me) = &sh.scheme else { unreachable!() };
//!         if sh.switches[e.s].mmu.total() > me.threshold {
//!             sh.packets.get_mut(e.pkt).ce = e.p.ect;
//!         }
//!         let queue = sh.data_queue_for(e.p.class, e.p.hash);
//!         sh.admit_and_push(e, queue)
//!     }
//! }
//! // src/engine/scheme/mod.rs: `mod pool_marking;` and, in `schemes!`,
//! //     PoolMarking => PoolMarking(pool_marking::PoolMarking),
//! ```

pub mod config;
mod engine;
mod partition;
pub mod sim;
pub mod timers;

pub use config::{
    Connections, EcnConfig, FlowControl, NicConfig, NicScheduler, Scheduler, SwitchConfig,
};
pub use engine::{Counters, HopStats, QueueState, SimParams};
pub use sim::Sim;
