//! Flows as a shard runs them: the per-shard state of each flow, and its sender's and receiver's sides (the
//! run-wide table of every flow's fixed facts is [`Flow`]'s).

use super::*;

/// What one shard keeps of each flow as the run goes: 16 bytes a flow, where the sender and the receiver of
/// the flow live in this shard's slots.
#[derive(Clone, Copy)]
pub(super) struct FlowState {
    /// Index into `Fabric::active` while the flow's sender runs ([`NO_SLOT`] before and after).
    pub(super) slot: u32,
    /// Index into `Fabric::inbound` while its receiver waits for bytes (from its first packet to its last),
    /// [`NO_SLOT`] before, [`RECEIVED`] once it has every byte.
    pub(super) recv_slot: u32,
    /// When the sender saw its last byte acknowledged ([`Time::MAX`]: not yet).
    pub(super) finish: Time,
}

const _: () = assert!(std::mem::size_of::<FlowState>() == 16);

pub(super) const NO_SLOT: u32 = u32::MAX;

/// [`FlowState::recv_slot`] of a flow whose receiver has every byte.
pub(super) const RECEIVED: u32 = u32::MAX - 1;

/// The sending side of a running flow: its transport half, congestion controller and NIC state. It lives at
/// the source host from the flow's start until every byte is acknowledged.
///
/// In `repr(C)` order: the transport's state and the NIC's flags, which every send and ACK read, first; the
/// controller, sized by its largest variant (320 bytes), last. The compiler's order put the controller first:
/// CLOS-128's DCTCP at 2 ms took 33.05 M L2 misses so, 32.83 M in this order (cachegrind, a 1 MiB L2).
#[repr(C)]
pub(super) struct Active {
    pub(super) sender: Sender,
    pub(super) id: FlowId,
    pub(super) in_ring: bool,
    /// Waiting in its host's parked list for its NIC queue to be resumed.
    pub(super) parked: bool,
    /// The flow's NIC queue, stamped as `upstreamQ` in its packets (BFC §3.3.2).
    pub(super) nic_q: u32,
    pub(super) timer_armed: bool,
    pub(super) rto_deadline: Time,
    /// How long the flow's NIC queue had been paused in all when `rto_deadline` was set: the timer does not run
    /// while the queue is paused (`nic.rto_holds_while_paused`).
    pub(super) rto_paused_base: Time,
    /// When the last data packet started and its wire size. Pacing (rate-based CC): the next may start
    /// `last_size / rate` later (HPCC ns-3's `m_nextAvail`); a persistent connection's idle time counts from it.
    pub(super) last_send: Time,
    pub(super) last_size: u32,
    /// Waiting in its host's `paced` heap (while `in_ring` stays set), with its entry due at `wait_until`.
    pub(super) waiting: bool,
    pub(super) wait_until: Time,
    /// The earliest pending congestion-control timer entry of the flow (`Time::MAX`: none).
    pub(super) cc_timer_at: Time,
    /// The persistent connection the flow travels on (`nic.connections = "persistent"`).
    pub(super) conn: Option<u32>,
    pub(super) cc: Cc,
    /// How its data packets' paths are chosen (`nic.paths`).
    pub(super) paths: Paths,
}

/// The receiving side of a flow, at the destination host from its first data packet until it has every byte.
/// Kept apart from [`Active`] so that each side lives only at its own host: nothing the receiver does reads
/// the sender's state, and back.
pub(super) struct Inbound {
    pub(super) receiver: Receiver,
    /// What it sends back besides ACKs, for the sender's congestion control.
    pub(super) notifier: Notifier,
}
