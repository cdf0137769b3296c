//! The schemes that act at switches, hop by hop, each written against [`crate::fabric`] and registered with
//! one line in `bfcsim-registry`:
//!
//! - [`bfc`]: Backpressure Flow Control (Goyal et al., NSDI 2022, §3.3): per-hop per-flow pausing of
//!   dynamically assigned queues, with its variants and the ideal baselines.
//! - [`pfc`]: Priority Flow Control (IEEE 802.1Qbb) as HPCC's ns-3 runs it: its ingress accounting, pause
//!   state and `pfc.txt` records as pure modules, and the scheme that drives them on the fabric.
//! - [`aquarius`]: Aquarius's contribution-aware pausing and opportunistic re-assigning (Li et al., APNet
//!   2023, Algorithms 1 and 2, §3.2-3.3).
//! - [`hop_pause`]: the per-hop, per-flow pausing BFC and Aquarius share: their flow table, what they see of
//!   an egress, the packet's `upstreamQ`, and their PAUSE and RESUME frames.
//! - [`trimming`]: cutting a packet to its header at a full queue, which NDP's switches and the `trim-tail`
//!   scheme (crate `bfcsim-trim-tail`, the developer guide's worked example) share.

pub mod aquarius;
pub mod bfc;
pub mod hop_pause;
pub mod pfc;
pub mod trimming;
