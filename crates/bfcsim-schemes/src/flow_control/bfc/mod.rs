//! Backpressure Flow Control (Goyal et al., NSDI 2022) as sans-IO switch state: per-hop, per-flow backpressure
//! with dynamic queue assignment. The engine owns queues and links; [`BfcSwitch`] owns BFC's own state (the
//! flow table of §3.3.1 and the pause counter of §3.3.2) and is told of every enqueue and dequeue.
//!
//! - [`pause_counter`]: the pause counter (§3.3.2).
//! - [`switch`]: queue assignment, the pause threshold and the enqueue/dequeue operations of §3.3.
//! - [`Bfc`]: the scheme on the fabric ([`crate::fabric`]): BFC's switch and NIC sides, its frames and
//!   refreshes, through the per-hop pausing it shares with Aquarius ([`crate::flow_control::hop_pause`], whose
//!   flow table is §3.3.1's).
//!
//! Where the paper and the authors' public ns-3 artifact differ, the paper is the default and the
//! artifact's behaviour a named option; `docs/FIDELITY.md` lists each.

pub mod pause_counter;
mod scheme;
pub mod switch;

use bfcsim_core::Time;
use bfcsim_net::packet::PacketKind;
use serde::{Deserialize, Serialize};

pub use pause_counter::Signal;

/// §3.3.2's periodic refresh: the full set of upstream queues an ingress wants paused, a bitmap the frame
/// carries as words ([`crate::fabric::SwitchOps::send_frame_words`]).
pub const REFRESH: PacketKind = PacketKind::frame(2);
pub use scheme::Bfc;
pub use switch::{BfcStats, BfcSwitch, Departure, Enqueued, Kept};

/// How a switch picks the queue of a flow at an egress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Assignment {
    /// §3.3.1: an empty queue when the flow (its flow-table entry) has no packets in the switch and its sticky
    /// time has passed, a random queue when none is empty.
    Dynamic,
    /// App. A.10 "BFC + stochastic": a fixed queue from the hash of the flow's 5-tuple, as stochastic fair
    /// queuing ([`StochasticHash`]).
    Stochastic,
    /// §6.1 "BFC + single": every flow in one queue, like PFC.
    Single,
}

/// What stochastic assignment hashes (BFC App. A.10, §6.1's "BFC + stochastic").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StochasticHash {
    /// The flow's 5-tuple hash alone: a flow takes the same queue index at every switch and in every run.
    #[default]
    Flow,
    /// The 5-tuple hash mixed with each switch's own seed, drawn from the run's seed, as switches seed their
    /// hashes: two flows that share a queue at one switch need not at the next, nor in a run with another
    /// seed (§6.1: over repeated testbed runs, group 1 and 2 flows shared a queue in some and not in others).
    Seeded,
}

impl StochasticHash {
    fn is_flow(&self) -> bool {
        *self == StochasticHash::Flow
    }
}

/// Which pause threshold rule a switch applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThresholdRule {
    /// §3.3.2: pause when the assigned queue holds more than `Th = HRTT · μ / N_active`.
    Paper,
    /// The public artifact: `Th = 1.5 · 2 µs · μ / N_active`, compared with the queue including the packet,
    /// and only when the flow's entry already has another packet in the switch. `pause_min_packets` and
    /// `threshold_counts_arrival` set the last two apart.
    Artifact,
}

/// BFC's parameters. Defaults are the paper's (§3.3, §6.2.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BfcConfig {
    /// Queue assignment policy.
    pub assignment: Assignment,
    /// The hash of stochastic assignment. (Left out of the written configuration at its default, so that the
    /// keys of stored runs stay as they were.)
    #[serde(skip_serializing_if = "StochasticHash::is_flow")]
    pub stochastic_hash: StochasticHash,
    /// Pause threshold rule.
    pub threshold: ThresholdRule,
    /// Multiplier of the threshold (Fig. 7b varies Th; the artifact uses 1.5).
    pub threshold_factor: f64,
    /// A packet can pause its upstream queue only when its flow-table entry holds at least this many packets,
    /// itself included: 1 in the paper's pseudocode (§3.3.2, every packet is checked), 2 in the artifact (the
    /// first packet of a burst never pauses). Default by `threshold`.
    pub pause_min_packets: Option<u32>,
    /// Compare the queue with the arriving packet in it (the artifact enqueues first) rather than as the packet
    /// finds it (the paper's ingress pipeline sees the queue depth before the enqueue, §4). Default by
    /// `threshold`.
    pub threshold_counts_arrival: Option<bool>,
    /// The 1-hop RTT used in the threshold; by default each switch's largest over its ingresses (2 × the
    /// link's delay), 2 µs on CLOS-128 (§6.2.1). The artifact fixes 2 µs.
    pub hrtt: Option<Time>,
    /// Sticky window: an idle flow-table entry keeps its queue this long; default 2 × HRTT (§3.3.2), 6 µs in
    /// the artifact.
    pub sticky: Option<Time>,
    /// Flow-table entries per queue of each egress port (§3.3.1: 100 ×; App. A.11 varies it).
    pub flow_table_per_queue: u32,
    /// Key the flow table by flow id, with no index collisions (the ideal baselines' per-flow state).
    pub exact_flow_table: bool,
    /// Pause upstream queues at all (false for `ideal-fq`, which only uses the per-flow queues).
    pub backpressure: bool,
    /// Period of the refresh that re-sends each ingress's bitmap of paused upstream queues (§3.3.2), so a lost
    /// PAUSE or RESUME is repaired; `0ns` disables it. The artifact's is 1 µs.
    pub refresh_interval: Time,
    /// Queues per NIC; by default one per flow (§6.2.1).
    pub nic_queues: Option<u32>,
    /// NICs pause their queues on command (false: App. A.8 "BFC − NIC", NICs ignore backpressure).
    pub nic_obeys_pause: bool,
    /// App. A.7 "BFC + IncastLabel": every incast flow at an egress shares one queue, kept from the others.
    pub incast_label: bool,
    /// App. A.8 "BFC + sampling": the fraction of packets that update the flow table and the pause counter.
    pub sampling: f64,
    /// App. B: elide backpressure on (ingress, egress) pairs that could close a cyclic buffer dependency.
    pub deadlock_prevention: bool,
    /// Report a queue paused for longer than this (App. B's deadlocks made visible).
    pub watchdog: Time,
    /// Wire bytes of a PAUSE, RESUME or refresh frame (a refresh adds its bitmap's bytes).
    pub frame_size: u32,
    /// Fault injection: the fraction of PAUSE and RESUME frames lost on the wire, to show that the periodic
    /// refresh repairs the paused state.
    pub lose_frames: f64,
}

impl Default for BfcConfig {
    fn default() -> Self {
        BfcConfig {
            assignment: Assignment::Dynamic,
            stochastic_hash: StochasticHash::Flow,
            threshold: ThresholdRule::Paper,
            threshold_factor: 1.0,
            pause_min_packets: None,
            threshold_counts_arrival: None,
            hrtt: None,
            sticky: None,
            flow_table_per_queue: 100,
            exact_flow_table: false,
            backpressure: true,
            refresh_interval: Time::from_us(1),
            nic_queues: None,
            nic_obeys_pause: true,
            incast_label: false,
            sampling: 1.0,
            deadlock_prevention: true,
            watchdog: Time::from_ms(2),
            frame_size: 64,
            lose_frames: 0.0,
        }
    }
}

impl BfcConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.threshold_factor > 0.0 && self.threshold_factor.is_finite()) {
            return Err(format!(
                "flow_control.threshold_factor = {} must be positive",
                self.threshold_factor
            ));
        }
        if self.pause_min_packets == Some(0) {
            return Err("flow_control.pause_min_packets must be at least 1".into());
        }
        if self.flow_table_per_queue == 0 {
            return Err("flow_control.flow_table_per_queue must be at least 1".into());
        }
        if self.stochastic_hash == StochasticHash::Seeded
            && self.assignment != Assignment::Stochastic
        {
            return Err(
                "flow_control.stochastic_hash = \"seeded\" is the hash of stochastic assignment: it needs \
                 flow_control.assignment = \"stochastic\""
                    .into(),
            );
        }
        if !(self.sampling > 0.0 && self.sampling <= 1.0) {
            return Err(format!(
                "flow_control.sampling = {} must be in (0, 1]",
                self.sampling
            ));
        }
        if self.nic_queues == Some(0) {
            return Err("flow_control.nic_queues must be at least 1".into());
        }
        if self.watchdog == Time::ZERO {
            return Err("flow_control.watchdog must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.lose_frames) {
            return Err(format!(
                "flow_control.lose_frames = {} must be in [0, 1]",
                self.lose_frames
            ));
        }
        if self.frame_size == 0 {
            return Err("flow_control.frame_size must be at least 1 byte".into());
        }
        Ok(())
    }
}
