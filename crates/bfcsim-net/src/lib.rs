//! Network model of bfcsim (layer 2 of those `bfcsim_core` lists): the pieces a simulated fabric is made of,
//! each a plain data structure or pure module that can be tested without the event loop.
//!
//! - [`topology`]: nodes, ports and links; [`build`] makes the reference fabrics (leaf-spine, fat-tree, star,
//!   dumbbell) and [`import`] reads HPCC's `topology.txt`.
//! - [`routing`]: shortest-path next hops with flow-level ECMP or per-packet spraying.
//! - [`packet`]: typed packets in a slab with a free list.
//! - [`mmu`]: the shared-buffer memory management unit (pools, static reserves, Dynamic Threshold).
//! - [`queues`]: a port's queues with strict priority between classes and deficit round robin within one.
//! - [`backpressure`]: deadlock prevention for per-hop backpressure (BFC App. B).
//! - [`ecn`]: RED/ECN marking on instantaneous queue length.
//! - [`int`]: in-band network telemetry records (HPCC's per-hop timestamp, tx bytes, queue length, rate).
//! - [`telemetry`]: the other per-packet stamps controllers read (hop count, remote endpoint delay, PINT's
//!   digest) and PINT's per-port utilization.

pub mod backpressure;
pub mod build;
pub mod ecn;
pub mod import;
pub mod int;
pub mod mmu;
pub mod packet;
pub mod queues;
pub mod routing;
pub mod telemetry;
pub mod topology;

pub use topology::{LinkSet, NodeKind, Topology};
