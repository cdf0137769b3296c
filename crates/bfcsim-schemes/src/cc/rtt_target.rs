//! BFC's simple end-to-end congestion control (Goyal et al., NSDI 2022, App. A.1, Algorithm 1): a delay-based
//! window that keeps the RTT near a loose target, meant only to stop flows from flooding BFC's queues with
//! packets, not to control queuing precisely.
//!
//! `RTT_target = target_factor × base RTT` (2.5 in the paper); the window w starts at one BDP; on every ACK
//! with an RTT sample, `w ← w − (RTT − RTT_target)/RTT` if `RTT > RTT_target`, else
//! `w ← w + (RTT_target − RTT)/RTT`, w counted in packets (MSS). Over one RTT of ACKs this takes w to about
//! `w·RTT_target/RTT` (App. A.1).
//!
//! Left open by the paper: w is floored at one packet and has no ceiling; the base RTT is the fabric's largest
//! ([`FlowContext::base_rtt`]); ACKs without an RTT sample change nothing; losses and timeouts leave w alone
//! (BFC runs it without drops, and go-back-N retransmission is the transport's job).

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs};

/// RTT-target parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RttTargetConfig {
    /// RTT_target as a multiple of the base RTT (BFC App. A.1: 2.5).
    pub target_factor: f64,
}

impl Default for RttTargetConfig {
    fn default() -> Self {
        RttTargetConfig { target_factor: 2.5 }
    }
}

impl RttTargetConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.target_factor > 0.0 && self.target_factor.is_finite()) {
            return Err(format!(
                "rtt-target target_factor = {} must be positive",
                self.target_factor
            ));
        }
        Ok(())
    }
}

/// One flow's RTT-target window.
#[derive(Clone, Debug)]
pub struct RttTarget {
    mss: f64,
    /// RTT_target in picoseconds.
    target: f64,
    /// The window in bytes (w packets × MSS, so one step is MSS·|RTT − RTT_target|/RTT bytes).
    w: f64,
}

impl RttTarget {
    /// A flow's controller at its start: one BDP.
    pub fn new(cfg: &RttTargetConfig, ctx: &FlowContext) -> RttTarget {
        let mss = ctx.mss as f64;
        RttTarget {
            mss,
            target: ctx.base_rtt.0 as f64 * cfg.target_factor,
            w: (ctx.bdp.0 as f64).max(mss),
        }
    }

    /// The window in bytes, unrounded.
    pub fn cwnd(&self) -> f64 {
        self.w
    }

    /// RTT_target.
    pub fn target(&self) -> Time {
        Time(self.target as u64)
    }
}

impl DescribeCc for RttTarget {
    const NAME: &'static str = "rtt-target";
    const SUMMARY: &'static str = "BFC App. A.1 Algorithm 1 (Goyal et al. 2022): delay-based window keeping the RTT near 2.5 × base RTT";
    type Config = RttTargetConfig;

    fn validate(cfg: &RttTargetConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &RttTargetConfig, ctx: &FlowContext) -> RttTarget {
        RttTarget::new(cfg, ctx)
    }

    fn needs(_: &RttTargetConfig) -> Needs {
        Needs::default()
    }
}

impl CongestionControl for RttTarget {
    #[inline]
    fn window(&self) -> u64 {
        self.w as u64
    }

    fn on_ack(&mut self, _now: Time, ack: &AckSignal) {
        let Some(rtt) = ack.rtt else {
            return;
        };
        if rtt == Time::ZERO {
            return;
        }
        let rtt = rtt.0 as f64;
        // MSS·(target − RTT)/RTT, multiplied first so that round numbers stay exact.
        self.w += self.mss * (self.target - rtt) / rtt;
        self.w = self.w.max(self.mss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cc::test_context as ctx;

    fn rtt_us(n: u64) -> AckSignal<'static> {
        AckSignal {
            rtt: Some(Time::from_us(n)),
            ..AckSignal::default()
        }
    }

    #[test]
    fn window_follows_rtt_samples() {
        let mut c = RttTarget::new(&RttTargetConfig::default(), &ctx());
        // Target 2.5 × 8 µs = 20 µs; w = 1 BDP = 100 packets.
        assert_eq!(c.target(), Time::from_us(20));
        assert_eq!(c.window(), 100_000);
        // RTT 10 µs < 20: w += (20 − 10)/10 = 1 packet.
        c.on_ack(Time::ZERO, &rtt_us(10));
        assert_eq!(c.window(), 101_000);
        // RTT 40 µs > 20: w −= (40 − 20)/40 = 0.5 packet.
        c.on_ack(Time::ZERO, &rtt_us(40));
        assert_eq!(c.window(), 100_500);
        // RTT = target: unchanged.
        c.on_ack(Time::ZERO, &rtt_us(20));
        assert_eq!(c.window(), 100_500);
        // RTT 25 µs: w −= 5/25 = 0.2 packet.
        c.on_ack(Time::ZERO, &rtt_us(25));
        assert_eq!(c.window(), 100_300);
        // RTT 8 µs (idle): w += 12/8 = 1.5 packets.
        c.on_ack(Time::ZERO, &rtt_us(8));
        assert_eq!(c.window(), 101_800);
        // No sample: unchanged.
        c.on_ack(Time::ZERO, &AckSignal::default());
        assert_eq!(c.window(), 101_800);
    }

    #[test]
    fn window_floors_at_one_packet() {
        let mut c = RttTarget::new(&RttTargetConfig::default(), &ctx());
        // RTT 2 ms: w −= 1980/2000 = 0.99 packet per ACK; 200 ACKs would take it below zero.
        for _ in 0..200 {
            c.on_ack(Time::ZERO, &rtt_us(2000));
        }
        assert_eq!(c.window(), 1000);
        // A factor of 1 targets the base RTT itself.
        let mut tight = RttTarget::new(&RttTargetConfig { target_factor: 1.0 }, &ctx());
        tight.on_ack(Time::ZERO, &rtt_us(16));
        // w −= (16 − 8)/16 = 0.5 packet.
        assert_eq!(tight.window(), 99_500);
    }

    #[test]
    fn config_round_trips_and_rejects_unknown_keys() {
        use crate::cc::CcConfig;
        let cfg = CcConfig::RttTarget(RttTargetConfig { target_factor: 3.0 });
        let text = toml::to_string(&cfg).unwrap();
        assert!(text.contains("name = \"rtt-target\""), "{text}");
        assert_eq!(toml::from_str::<CcConfig>(&text).unwrap(), cfg);
        assert_eq!(
            toml::from_str::<CcConfig>("name = \"rtt-target\"").unwrap(),
            CcConfig::RttTarget(RttTargetConfig::default())
        );
        assert!(toml::from_str::<CcConfig>("name = \"rtt-target\"\ntarget = 2.5").is_err());
        assert!(RttTargetConfig { target_factor: 0.0 }.validate().is_err());
        assert!(
            RttTargetConfig {
                target_factor: f64::NAN
            }
            .validate()
            .is_err()
        );
        assert!(RttTargetConfig::default().validate().is_ok());
    }
}
