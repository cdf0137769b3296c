//! Throughput of long-lived flows (BFC §2.1, Table 1: "throughput for the long flow"): payload bytes the
//! receiver acknowledged during the measurement window, over the window's length, also as a fraction of the
//! rate of the sender's link (the share of a 100 Gb/s link the flow obtained).

use bfcsim_core::{NodeId, Rate, Time};
use serde::Serialize;

/// One long-lived flow's throughput over the measurement window.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LongFlowReport {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Window start (the end of the warm-up, or the flow's start if later), ns.
    pub window_start_ns: u64,
    /// Window end (the end of the run, or the flow's finish if earlier), ns.
    pub window_end_ns: u64,
    /// Payload bytes acknowledged in the window.
    pub bytes: u64,
    /// `bytes · 8 / window`, Gb/s.
    pub gbps: f64,
    /// `gbps` over the sender's link rate.
    pub share_of_link: f64,
}

impl LongFlowReport {
    /// The report of a flow that had `acked_start` bytes acknowledged at `start` and `acked_end` at `end`, on a
    /// sender link of `link`.
    pub fn new(
        (src, dst): (NodeId, NodeId),
        (start, acked_start): (Time, u64),
        (end, acked_end): (Time, u64),
        link: Rate,
    ) -> LongFlowReport {
        let bytes = acked_end.saturating_sub(acked_start);
        let secs = end.saturating_sub(start).secs_f64();
        let bps = if secs > 0.0 {
            bytes as f64 * 8.0 / secs
        } else {
            0.0
        };
        LongFlowReport {
            src,
            dst,
            window_start_ns: start.ns(),
            window_end_ns: end.ns(),
            bytes,
            gbps: bps / 1e9,
            share_of_link: bps / link.0 as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_over_the_window() {
        let r = LongFlowReport::new(
            (NodeId(0), NodeId(5)),
            (Time::from_ms(1), 1_000_000),
            (Time::from_ms(3), 11_000_000),
            Rate::gbps(100),
        );
        assert_eq!(r.bytes, 10_000_000);
        assert!((r.gbps - 40.0).abs() < 1e-9);
        assert!((r.share_of_link - 0.4).abs() < 1e-12);
        assert_eq!((r.window_start_ns, r.window_end_ns), (1_000_000, 3_000_000));
    }
}
