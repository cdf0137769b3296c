//! One [`FlowRecord`] per flow: what was offered, when it finished and its ideal FCT, from which the FCT and the
//! slowdown (FCT / ideal FCT, BFC §6.2.1 "FCT normalized to the best possible FCT at link rate") follow.

use bfcsim_core::{Bytes, FlowId, NodeId, Time};
use serde::Serialize;

/// The outcome of one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FlowRecord {
    /// The flow.
    pub id: FlowId,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes.
    pub size: Bytes,
    /// When the sender started the flow.
    pub start: Time,
    /// When the sender received the last ACK; `None` if the flow was unfinished when the run ended.
    pub finish: Option<Time>,
    /// Ideal FCT (see [`crate::Ideal`]); must be positive.
    pub ideal: Time,
    /// Whether the flow belongs to an incast event (summarized separately).
    pub incast: bool,
    /// Priority group / traffic class.
    pub class: u8,
    /// Source port, as written to HPCC's `fct.txt`.
    pub sport: u16,
    /// Destination port for HPCC's `fct.txt`; 0 means unset (then 200 for incast flows, 100 otherwise).
    pub dport: u16,
    /// The named workload group of the flow, by index (summarized separately; its name is the caller's).
    pub group: Option<u16>,
}

impl FlowRecord {
    /// Flow completion time, if the flow finished.
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.start)
    }

    /// Raw slowdown `fct / ideal`, not clamped: a value below 1 means the ideal was not a lower bound.
    /// (HPCC's analysis clamps it to 1; see [`crate::SummaryConfig::clamp_slowdown`].)
    pub fn slowdown(&self) -> Option<f64> {
        self.fct()
            .map(|fct| fct.ps() as f64 / self.ideal.ps() as f64)
    }

    /// The destination port as HPCC reports it: the record's, or 200 for incast and 100 for other flows.
    pub fn hpcc_dport(&self) -> u16 {
        match (self.dport, self.incast) {
            (0, true) => 200,
            (0, false) => 100,
            (port, _) => port,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fct_and_raw_slowdown() {
        let mut r = FlowRecord {
            id: FlowId(1),
            src: NodeId(0),
            dst: NodeId(1),
            size: Bytes(1000),
            start: Time::from_us(10),
            finish: Some(Time::from_us(14)),
            ideal: Time::from_us(8),
            incast: false,
            class: 0,
            sport: 10000,
            dport: 0,
            group: None,
        };
        assert_eq!(r.fct(), Some(Time::from_us(4)));
        assert_eq!(r.slowdown(), Some(0.5));
        assert_eq!(r.hpcc_dport(), 100);
        r.incast = true;
        assert_eq!(r.hpcc_dport(), 200);
        r.dport = 4791;
        assert_eq!(r.hpcc_dport(), 4791);
        r.finish = None;
        assert_eq!((r.fct(), r.slowdown()), (None, None));
    }
}
