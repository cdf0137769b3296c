//! The seam between the fabric and the schemes that act inside the network: what a scheme sees of the fabric
//! ([`FabricOps`], [`SwitchOps`], [`NicOps`], [`Setup`]) and what the fabric asks of a scheme ([`SwitchSide`],
//! [`NicSide`], together a [`Scheme`]).
//!
//! The fabric (`bfcsim-sim`'s engine) owns wires, ports, queues, the buffer, routing, NICs, the event queue and
//! time; it never asks which scheme runs. A scheme owns its own state only (BFC's flow tables and pause
//! counters, ExpressPass's shapers, Homa's grant schedulers) and acts on the fabric only through the verbs of
//! the operations traits, handed to each of its hooks as `fab`. The fabric calls the scheme's hooks at these
//! points, in this order for a packet's life:
//!
//! | point | hook | when |
//! |---|---|---|
//! | setup | the scheme's constructor, with a [`Setup`] | once, after the network and congestion control exist |
//! | NIC: a flow starts | [`NicSide::flow_started`] | the flow's sender is created at its source NIC; returns the flow's NIC queue |
//! | NIC: scheduling | [`NicSide::nic_poll`] | the NIC is free: the scheme may send a packet it schedules itself (ExpressPass's rate-limited credits) before control frames and data |
//! | NIC: scheduling | [`NicSide::nic_blocked`] | the NIC is free, or has just sent a control frame: whether all its flows are stopped, so that it neither goes round them nor wakes for them |
//! | NIC: scheduling | [`NicSide::may_send`] | before a flow joins its NIC's round and before each of its packets leaves |
//! | NIC: a data packet leaves | [`NicSide::data_sent`] | the packet is built; the scheme may stamp it (the credit it answers, its priority) |
//! | switch: routing | [`SwitchSide::route`] | a packet entered a switch; the scheme may choose its egress (ExpressPass's credits retrace their data's path) |
//! | switch: admission and enqueue | [`SwitchSide::enqueue`] | a packet that does not ride the control queue entered a switch and was routed; the scheme picks its queue, admits or refuses it, and queues it |
//! | switch: dequeue | [`SwitchSide::dequeued`] | the port's scheduler took a packet out of its queue for transmission |
//! | frame arrival | [`SwitchSide::switch_frame`], [`NicSide::nic_frame`] | a per-hop frame (PAUSE, RESUME, refresh) reached the device at the far end of its link |
//! | control packet arrival | [`NicSide::packet_arrived`] | one of the scheme's own end-to-end control packets (a credit, a grant) reached its host |
//! | NIC: data arrives | [`NicSide::data_arrived`] | a data packet reached its destination and the flow's receiver took it |
//! | NIC: a header arrives | [`NicSide::header_arrived`] | a data packet a switch trimmed ([`SwitchOps::trim`]) reached its destination; the scheme may answer ([`NicOps::reply`]) |
//! | NIC: a reply leaves | [`NicSide::echo`] | the receiver built an ACK or NACK for a data packet; the scheme may copy its own bits into it |
//! | NIC: a reply arrives | [`NicSide::reply_arrived`] | an ACK, NACK or CNP reached the flow's sender, before its transport takes it |
//! | timers | [`SwitchSide::switch_timer`], [`NicSide::nic_timer`] | the timer the scheme armed on a port ([`FabricOps::arm_timer`], or [`SwitchOps::arm_batched_timer`] for timers on a grid) is due |
//! | timers | [`Scheme::token_timer`] | the timer the scheme armed by a token of its own ([`FabricOps::arm_token_timer`]) is due |
//! | NIC: a flow ends | [`NicSide::flow_finished`] | every byte of the flow is acknowledged |
//!
//! End-to-end congestion control acts inside the network through a seam of its own, with the same verbs:
//! [`crate::cc::nic::CcNic`]'s hooks (CNPs, INT stamps and echoes, drop notices) are called at their points
//! beside the scheme's.
//!
//! A hook is a `&mut self` method generic over the operations it is handed, so the fabric's calls are static
//! and inline, and a test can hand it a scripted fake instead ([`fake::FakeFabric`]). A verb that may start a
//! transmission at once (resuming a queue, sending a frame or a control packet, readying a flow) takes the
//! scheme itself as `side`, because the fabric then calls the scheme's own hooks for what that port sends.
//!
//! Adding a scheme: the developer guide (`docs/SCHEMES.md`, `bfcsim_trim_tail::developer_guide`) walks through
//! it, with the skeleton of a scheme and the worked example, the `trim-tail` scheme in a crate of its own
//! (`bfcsim-trim-tail`).
//!
//! Each scheme's state machines are sans-IO and live beside its hooks (BFC's [`crate::flow_control::bfc::BfcSwitch`]):
//! handed `now` and an input, they answer with actions (a queue, a PAUSE to send, a drop); the hooks describe
//! packets to them and carry out their answers with the fabric's verbs.

mod describe;
mod flow;
mod ops;
mod side;
mod stats;

pub mod fake;

pub use describe::{
    ConfigType, Describe, PauseRecord, Preset, QueueLeft, ReportValue, SchemeReport, SwitchFacts,
    SwitchHardware, TAGGED,
};
pub use flow::Flow;
pub use ops::{Device, Entry, FabricOps, NicOps, Receiving, Setup, SwitchOps, Telemetry};
pub use side::{NicSide, NoParams, Plain, Scheme, SwitchSide};
pub use stats::{FrameCounts, HopStats, NoStats};
