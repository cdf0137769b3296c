//! Simulation core of bfcsim, the bottom layer every other crate builds on.
//!
//! Layers, each crate depending only on the ones above it in this list:
//!
//! 1. `bfcsim-core` (this crate): [`Time`] in integer picoseconds, unit newtypes ([`Bytes`], [`Rate`]),
//!    typed ids, the [`EventQueue`] ordered by time then by what the event is, per-component RNG streams
//!    ([`rng`]) and the small containers of the per-packet path ([`Slots`], [`HeadQueue`]).
//! 2. `bfcsim-net`: topology, routing, packets, the shared-buffer MMU, queues and schedulers.
//! 3. `bfcsim-schemes`: sans-IO protocol state machines (congestion control, reliable delivery).
//! 4. `bfcsim-sim`: the engine that wires switches, links and NICs to the schemes and runs events.
//! 5. `bfcsim-workload` and `bfcsim-metrics`: what is offered to the network and what is measured.
//! 6. `bfcsim`: experiments, configuration files and the command line.

pub mod deps;
pub mod event;
pub mod flow;
pub mod head_queue;
pub mod hint;
pub mod hist;
pub mod ids;
pub mod input;
pub mod parse;
pub mod rng;
pub mod slots;
pub mod tagged;
pub mod time;
pub mod units;

pub use deps::{Dependencies, DepsError, Done, Edge, Wait};
pub use event::{EventBits, EventQueue};
pub use flow::FlowSpec;
pub use head_queue::{HeadQueue, Vacant};
pub use hist::LogHistogram;
pub use ids::{FlowId, LinkId, NodeId, PacketId, PortId};
pub use input::InputError;
pub use slots::Slots;
pub use time::Time;
pub use units::{Bytes, Rate};
