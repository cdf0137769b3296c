//! Protocol state machines of bfcsim (layer 3 of those `bfcsim_core` lists). Each is sans-IO: it is handed `now`
//! and an input (`on_ack`, `on_cnp`, `on_send`, `on_timer`, `on_loss`, `on_timeout`, or a received packet's
//! fields) and answers with a window, a rate or an action; it never sees the event queue, so it is unit-tested
//! by scripting inputs.
//!
//! - [`transport`]: reliable delivery: the sender's go-back-N state with NACKs and a retransmission timeout,
//!   and the receiver's cumulative ACKs (every packet or every N).
//! - [`cc`]: the congestion-control contract ([`cc::CongestionControl`]) and the [`cc::Cc`] enum that stores
//!   and dispatches every algorithm.
//!   The trait's doc gives the call order the engine follows (timers, pacing, `on_send`, `on_cnp`).
//! - [`dctcp`]: DCTCP (Alizadeh et al., SIGCOMM 2010).
//! - [`dctcp_rate`]: DCTCP's control law on a pacing rate, as HPCC's ns-3 runs it for RDMA (`CC_MODE 8`).
//! - [`bfc`]: Backpressure Flow Control's switch state (Goyal et al., NSDI 2022, §3.3).
//! - [`aquarius`]: Aquarius's contribution-aware pausing and opportunistic re-assigning (Li et al., APNet
//!   2023, Algorithms 1 and 2, §3.2-3.3).
//! - [`expresspass`]: ExpressPass's credit feedback loop and credit rate limiter (Cho et al., SIGCOMM 2017).
//! - [`homa`]: Homa's priority levels and receiver grant scheduler (Montazeri et al., SIGCOMM 2018).
//! - [`dcqcn`]: DCQCN (Zhu et al., SIGCOMM 2015) as HPCC's ns-3 models it, and the receiver's CNP pacing.
//! - [`hpcc`]: HPCC (Li et al., SIGCOMM 2019), driven by the INT records of `bfcsim_net::int`.
//! - [`rtt_target`]: the RTT-target window of BFC App. A.1 (Goyal et al., NSDI 2022).
//! - [`pfc`]: Priority Flow Control (IEEE 802.1Qbb) as HPCC's ns-3 runs it: its ingress accounting, pause state
//!   and `pfc.txt` records as pure modules, and the scheme that drives them on the fabric.
//! - [`trim_tail`]: drop-tail with payload cutting, the developer guide's worked example.
//! - [`fabric`]: the seam every scheme that acts inside the network is written against: the fabric's verbs,
//!   the hooks a scheme implements, its descriptor, and a scripted fabric to test it with.
//! - [`catalog`]: every scheme with its parameters and defaults, for `bfcsim schemes`.
//! - [`developer_guide`]: how to add a scheme, step by step (`docs/SCHEMES.md`, whose examples run as tests).

pub mod aquarius;
pub mod bfc;
pub mod catalog;
pub mod cc;
pub mod dcqcn;
pub mod dctcp;
pub mod dctcp_rate;
#[doc = include_str!("../../../docs/SCHEMES.md")]
pub mod developer_guide {}
pub mod expresspass;
pub mod fabric;
pub mod homa;
pub mod hpcc;
pub mod pfc;
pub mod rtt_target;
pub mod transport;
pub mod trim_tail;

pub use cc::{AckSignal, Cc, CcConfig, CongestionControl, FlowContext};
