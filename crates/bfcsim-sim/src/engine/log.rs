//! The run's rare events in time order, kept only when asked ([`crate::sim::Sim::keep_log`]) for a timeline
//! view of the run (`bfcsim run --trace-view`): retransmission timeouts and each pause and resume of a queue.
//! Off, each of those places pays one test of an empty `Option`; nothing per packet-hop. Drops are not logged
//! here: a test in the dropping path, rare as drops are, changed how the enqueue path compiled (+0.4% of the
//! instructions of CLOS-128 under DCTCP); the timeline counts them per port from the ports' drop counters.

use bfcsim_core::{FlowId, PortId, Time};

/// One event of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Logged {
    /// Flow `flow`'s retransmission timer fired.
    Timeout {
        /// When.
        at: Time,
        /// The flow.
        flow: FlowId,
    },
    /// Queue `queue` of the device transmitting on `port` (a switch egress port, or a host's NIC) was paused or
    /// resumed.
    Pause {
        /// When.
        at: Time,
        /// The port (switch egress, or the host's).
        port: PortId,
        /// The queue.
        queue: u32,
        /// Paused (else resumed).
        paused: bool,
    },
}

impl Logged {
    /// When it happened.
    pub fn at(&self) -> Time {
        match *self {
            Logged::Timeout { at, .. } | Logged::Pause { at, .. } => at,
        }
    }
}
