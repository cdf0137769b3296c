//! Aquarius (Li et al., *Scaling Switch-driven Flow Control with Aquarius*, APNet 2023) as sans-IO switch state:
//! per-hop flow control that pauses individual flows inside a shared queue, so that it works with the few queues
//! per port common switches have (8 or fewer).
//!
//! - [`queue_table`]: the upstream side (§3.3): the QueueTable of each egress port and opportunistic
//!   re-assigning of a paused flow to a reserved queue (rsvQ) when it shares its queue with uncongested flows.
//! - [`switch`]: one switch's flow table and its enqueue and dequeue operations, Algorithms 1 and 2
//!   (dynamic flow mapping, §3.1; contribution-aware pausing with Q_low, Q_high, T_min and Occu_fair, §3.2),
//!   and the PAUSE/RESUME handling of §3.3 through the [`queue_table`] of each port.
//!
//! The engine owns queues and links; [`AquariusSwitch`] is told of every data packet's enqueue and dequeue and
//! of every PAUSE and RESUME that reaches one of its egress ports, and answers with the frames to send and the
//! queues to pause or resume; [`Aquarius`] is the scheme on the fabric ([`crate::fabric`]) that does so. What the paper leaves open is decided here, each a named option or a documented
//! choice; `docs/FIDELITY.md` (section "Aquarius") lists them.

pub mod queue_table;
mod scheme;
pub mod switch;

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

pub use queue_table::{Joined, QueueAction, QueueTable};
pub use scheme::{Aquarius, AquariusReport};
pub use switch::{AquariusStats, AquariusSwitch, Departure, Enqueued, QueueFlow, Signal, View};

/// How a switch maps a new active flow (one with no packets buffered at the egress) to a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mapping {
    /// §3.1, Algorithm 1 line 4: an empty queue if possible, else the shortest (in bytes), among the queues that
    /// are neither paused nor the reserved queue.
    Dynamic,
    /// A fixed queue from the hash of the flow id (stochastic fair queuing). Not the paper's mapping: the
    /// micro-benchmark of §4 (Fig. 4) pins flows to shared queues, which this reproduces with chosen ports.
    Hash,
}

/// What NQ_active counts in Q_low, Q_high and T_min (§3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActiveQueues {
    /// The queues of the port that hold packets and are not paused, the packet's own queue counted: BFC's
    /// N_active (BFC §3.3.2), which Aquarius builds on.
    Ready,
    /// §3.2 read literally: "the number of queues that are not paused in the port", empty ones included.
    Unpaused,
}

/// Where the reserved queue (rsvQ) of §3.3 comes from: "The rsvQ can be dynamically allocated or statically
/// configured."
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RsvQueue {
    /// §4's choice: taken from the empty queues when a PAUSE first needs it, released when it is empty again;
    /// when no queue is empty the flow's shared queue is paused instead.
    Dynamic,
    /// The port's last data queue, set aside: never mapped to a new flow, never released, always available.
    Static,
}

/// Aquarius's parameters. Defaults are the paper's where it gives them (§3.2, §4) and documented choices where
/// it does not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AquariusConfig {
    /// How new active flows are mapped to queues.
    pub mapping: Mapping,
    /// What NQ_active counts.
    pub active_queues: ActiveQueues,
    /// α, the weight of the newest inter-arrival time in T_avg (Algorithm 1 line 14). The paper gives no value;
    /// 1/8 is TCP's smoothed-RTT gain.
    pub alpha: f64,
    /// Q_low in units of HRTT · μ / NQ_active (§3.2: 1).
    pub q_low: f64,
    /// Q_high in units of HRTT · μ / NQ_active (§3.2: 3).
    pub q_high: f64,
    /// The 1-hop RTT in Q_low and Q_high; by default each switch's largest over its ingresses (2 × the link's
    /// delay), as for BFC.
    pub hrtt: Option<Time>,
    /// The MTU in T_min = MTU · NQ_active / μ, wire bytes; by default a full data packet (payload and headers).
    pub mtu: Option<u32>,
    /// Opportunistic re-assigning (§3.3). Off, a PAUSE always pauses the flow's whole queue upstream (the
    /// ablation of contribution-aware pausing alone).
    pub reassign: bool,
    /// Where the rsvQ comes from (§3.3).
    pub rsv: RsvQueue,
    /// Re-assign on a later share: when a new flow finds every queue of the port paused and joins one held for
    /// flows that were alone there, those flows now share it with an uncongested flow and move to the rsvQ as
    /// §3.3 moves a paused flow that shares its queue, and the queue resumes. The paper applies §3.3's two
    /// rules when the PAUSE arrives and does not say what happens when the sharing begins later; off, the new
    /// flow waits in the paused queue.
    pub reassign_on_join: bool,
    /// Flow-table entries per queue of each egress port (§5: an array without collision resolution, like BFC's
    /// 100 ×).
    pub flow_table_per_queue: u32,
    /// Key the flow table by flow id, with no index collisions.
    pub exact_flow_table: bool,
    /// Report a queue paused for longer than this.
    pub watchdog: Time,
    /// Wire bytes of a PAUSE or RESUME frame.
    pub frame_size: u32,
}

impl Default for AquariusConfig {
    fn default() -> Self {
        AquariusConfig {
            mapping: Mapping::Dynamic,
            active_queues: ActiveQueues::Ready,
            alpha: 0.125,
            q_low: 1.0,
            q_high: 3.0,
            hrtt: None,
            mtu: None,
            reassign: true,
            rsv: RsvQueue::Dynamic,
            reassign_on_join: false,
            flow_table_per_queue: 100,
            exact_flow_table: false,
            watchdog: Time::from_ms(2),
            frame_size: 64,
        }
    }
}

impl AquariusConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(format!(
                "flow_control.alpha = {} must be in (0, 1]",
                self.alpha
            ));
        }
        if !(self.q_low > 0.0 && self.q_low.is_finite()) {
            return Err(format!(
                "flow_control.q_low = {} must be positive",
                self.q_low
            ));
        }
        if !(self.q_high >= self.q_low && self.q_high.is_finite()) {
            return Err(format!(
                "flow_control.q_high = {} must be at least q_low = {}",
                self.q_high, self.q_low
            ));
        }
        if self.mtu == Some(0) {
            return Err("flow_control.mtu must be at least 1 byte".into());
        }
        if self.flow_table_per_queue == 0 {
            return Err("flow_control.flow_table_per_queue must be at least 1".into());
        }
        if self.watchdog == Time::ZERO {
            return Err("flow_control.watchdog must be positive".into());
        }
        if self.frame_size == 0 {
            return Err("flow_control.frame_size must be at least 1 byte".into());
        }
        if self.reassign_on_join && !self.reassign {
            return Err(
                "flow_control.reassign_on_join = true moves paused flows to the rsvQ, which needs \
                 flow_control.reassign = true"
                    .into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassigning_on_a_join_needs_reassigning() {
        let cfg = AquariusConfig {
            reassign: false,
            reassign_on_join: true,
            ..AquariusConfig::default()
        };
        let err = cfg.validate().unwrap_err();
        assert!(err.contains("flow_control.reassign = true"), "{err}");
        let cfg = AquariusConfig {
            reassign_on_join: true,
            ..AquariusConfig::default()
        };
        assert_eq!(cfg.validate(), Ok(()));
    }
}
