//! Protocol state machines of bfcsim (layer 3 of those `bfcsim_core` lists). Each is sans-IO: it is handed `now`
//! and an input (`on_ack`, `on_cnp`, `on_send`, `on_timer`, `on_loss`, `on_timeout`, or a received packet's
//! fields) and answers with a window, a rate or an action; it never sees the event queue, so it is unit-tested
//! by scripting inputs.
//!
//! The folders are the map of the schemes, by role:
//!
//! - [`transport`]: reliable delivery: the sender's go-back-N or selective-repeat state with NACKs and a
//!   retransmission timeout, and the receiver's cumulative ACKs (every packet or every N).
//! - [`cc`]: end-to-end congestion control: the contract ([`cc::CongestionControl`]) and descriptor
//!   ([`cc::DescribeCc`]), the registry of controllers from which the [`cc::Cc`] enum that stores and dispatches
//!   them follows, and the controllers (DCTCP, rate-based DCTCP, DCQCN, HPCC, BFC's RTT-target window).
//! - [`flow_control`]: the schemes that act at switches, hop by hop: BFC, PFC, Aquarius, and the trimming NDP
//!   and `trim-tail` (crate `bfcsim-trim-tail`, the developer guide's worked example) share.
//! - [`receiver_driven`]: the transports whose receivers schedule the senders: ExpressPass and Homa.
//! - [`fabric`]: the seam every scheme that acts inside the network is written against: the fabric's verbs,
//!   the hooks a scheme implements, its descriptor, and a scripted fabric to test it with.
//! - [`catalog`]: every congestion controller with its parameters and defaults, for `bfcsim schemes`.
//!
//! How to add a scheme, step by step, is `docs/SCHEMES.md` (the documentation of
//! `bfcsim_trim_tail::developer_guide`, whose examples run as tests). The schemes a run can choose are listed
//! in `bfcsim-registry`, above this crate, so that a scheme can live in a crate of its own.

pub mod catalog;
pub mod cc;
pub mod fabric;
pub mod flow_control;
pub mod paths;
pub mod receiver_driven;
pub mod transport;

pub use cc::{AckSignal, Cc, CcConfig, CongestionControl, FlowContext};
