//! The run's rare events in time order, kept only when asked ([`crate::sim::Sim::keep_log`]) for a timeline
//! view of the run (`bfcsim run --trace-view`): retransmission timeouts and each pause and resume of a queue.
//! Off, each of those places pays one test of an empty `Option`; nothing per packet-hop. Drops are not logged
//! here: a test in the dropping path, rare as drops are, changed how the enqueue path compiled (+0.4% of the
//! instructions of CLOS-128 under DCTCP); the timeline counts them per port from the ports' drop counters.

use std::collections::BTreeMap;

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

/// Pairs each pause of a queue in a log with its resume: [`PausePairs::feed`] the log's events in order, and it
/// returns each pause that an event ended; [`PausePairs::still_paused`] gives those the log left open. A second
/// pause of a paused queue and a resume of one not paused pair with nothing.
#[derive(Default)]
pub struct PausePairs {
    open: BTreeMap<(PortId, u32), Time>,
}

impl PausePairs {
    /// Takes the log's next event: `Some((port, queue, paused at, resumed at))` when it resumes a paused queue.
    pub fn feed(&mut self, e: &Logged) -> Option<(PortId, u32, Time, Time)> {
        let Logged::Pause {
            at,
            port,
            queue,
            paused,
        } = *e
        else {
            return None;
        };
        if paused {
            self.open.entry((port, queue)).or_insert(at);
            None
        } else {
            let from = self.open.remove(&(port, queue))?;
            Some((port, queue, from, at))
        }
    }

    /// The queues still paused, by port and queue: `(port, queue, paused at)`.
    pub fn still_paused(self) -> impl Iterator<Item = (PortId, u32, Time)> {
        self.open.into_iter().map(|((p, q), at)| (p, q, at))
    }
}
