//! Rate-based DCTCP, as HPCC's ns-3 runs "DCTCP" for RDMA (`rdma-hw.cc` `HandleAckDctcp`, `CC_MODE 8`): DCTCP's
//! control law (Alizadeh et al. 2010, §3.1) applied to a pacing rate instead of a window. This is the DCTCP of
//! the reference outputs in `data/reference/ns3-perf-k8`; bfcsim's window-based DCTCP is [`crate::cc::dctcp`].
//!
//! Per ACK, with `mark` = the acknowledged packet carried CE (ns-3 flags the ACK; with an ACK per packet, our
//! ACK's CE byte count is non-zero exactly then):
//!
//! - α (§3.1's once-per-window estimate): marks are counted per ACK; the first ACK whose `ack_seq` passes the
//!   `snd_nxt` recorded at the previous update closes a batch: `α ← (1 − g)·α + g·min(1, marks/batch)`, where
//!   `batch` is the number of packets that were in flight when the batch opened (`(snd_nxt − ack_seq)/MTU + 1`;
//!   the first batch, opened by the first ACK, is `snd_nxt/MTU + 1`). α starts at 1.
//! - Cut (§3.1's once-per-RTT reaction): on a marked ACK outside a CWR episode, `R ← max(min_rate,
//!   R·(1 − α/2))` and a CWR episode starts, lasting until an ACK passes the `snd_nxt` of the cut.
//! - Additive increase: outside CWR, each ACK that closes a batch adds `rate_ai`, up to line rate.
//! - Start at line rate; the window is ns-3's `HAS_WIN`/`VAR_WIN` cap ([`RateWindow`]), by default
//!   `BDP·R/line rate`, with the BDP over `base_rtt` when given (ns-3 `GLOBAL_T 1`: the fabric's largest RTT).
//!
//! Rates are integer bits per second, scaled with truncation as ns-3's `DataRate` is. Losses and timeouts leave
//! the rate alone (ns-3 only rewinds the sender).

use bfcsim_core::{Rate, Time};
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs, RateWindow};
use crate::fabric::Preset;

/// Parameters of rate-based DCTCP. Defaults: `data/reference/ns3-perf-k8/dctcp.config.txt` (run.py's `dctcp`
/// profile at 100 Gb/s); the key is named for each.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpRateConfig {
    /// EWMA gain g of α (`EWMA_GAIN 0.0625`).
    pub g: f64,
    /// Additive increase per batch (`DCTCP_RATE_AI 615Mb/s`; `rdma-hw.cc`'s default is 1000 Mb/s).
    pub rate_ai: Rate,
    /// Floor of the rate after a cut (`MIN_RATE 1000Mb/s`).
    pub min_rate: Rate,
    /// In-flight cap (`HAS_WIN 1`, `VAR_WIN 1`: `BDP·R/line rate`).
    pub window: RateWindow,
    /// The RTT of the window's BDP; absent: the fabric's largest base RTT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<Time>,
}

impl Default for DctcpRateConfig {
    fn default() -> Self {
        DctcpRateConfig {
            g: 1.0 / 16.0,
            rate_ai: Rate(615_000_000),
            min_rate: Rate::gbps(1),
            window: RateWindow::Variable,
            base_rtt: None,
        }
    }
}

impl DctcpRateConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("dctcp-rate g = {} must be in (0, 1]", self.g));
        }
        if self.rate_ai.0 == 0 || self.min_rate.0 == 0 {
            return Err("dctcp-rate rate_ai and min_rate must be positive".into());
        }
        if self.base_rtt == Some(Time::ZERO) {
            return Err("dctcp-rate base_rtt must be positive".into());
        }
        Ok(())
    }
}

/// One flow's rate-based DCTCP state. Rates in bits per second.
#[derive(Clone, Debug)]
pub struct DctcpRate {
    g: f64,
    rai: u64,
    min_rate: u64,
    line: u64,
    mtu: u64,
    window: RateWindow,
    bdp: u64,

    rate: u64,
    alpha: f64,
    /// `snd_nxt` when the current batch opened; `None` before the first ACK.
    batch_end: Option<u64>,
    /// Packets in flight when the batch opened.
    batch_packets: u64,
    /// Marked ACKs in the current batch.
    marks: u64,
    /// In a CWR episode until an ACK passes this `snd_nxt`.
    cwr_until: Option<u64>,
}

impl DctcpRate {
    /// A flow's controller at its start: line rate, α = 1.
    pub fn new(cfg: &DctcpRateConfig, ctx: &FlowContext) -> DctcpRate {
        let bdp = cfg
            .base_rtt
            .map_or(ctx.bdp, |t| ctx.line_rate.bytes_in(t))
            .0;
        DctcpRate {
            g: cfg.g,
            rai: cfg.rate_ai.0,
            min_rate: cfg.min_rate.0.min(ctx.line_rate.0),
            line: ctx.line_rate.0,
            mtu: ctx.mss.max(1) as u64,
            window: cfg.window,
            bdp,
            rate: ctx.line_rate.0,
            alpha: 1.0,
            batch_end: None,
            batch_packets: 0,
            marks: 0,
            cwr_until: None,
        }
    }

    /// The EWMA of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl DescribeCc for DctcpRate {
    const NAME: &'static str = "dctcp-rate";
    const SUMMARY: &'static str = "rate-based DCTCP as HPCC's ns-3 runs it for RDMA (rdma-hw.cc CC_MODE 8); defaults from its 100 Gb/s config";
    type Config = DctcpRateConfig;

    fn validate(cfg: &DctcpRateConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &DctcpRateConfig, ctx: &FlowContext) -> DctcpRate {
        DctcpRate::new(cfg, ctx)
    }

    fn needs(_: &DctcpRateConfig) -> Needs {
        Needs {
            pacing: true,
            ..Needs::default()
        }
    }

    fn presets() -> &'static [Preset] {
        &[Preset {
            name: "dctcp-rate",
            summary: "rate-based DCTCP over PFC, as HPCC's ns-3 runs DCTCP (rdma-hw.cc CC_MODE 8), ECN at 100/400 KB",
            config: "[cc]\nname = \"dctcp-rate\"\n[flow_control]\nkind = \"pfc\"\n",
        }]
    }
}

impl CongestionControl for DctcpRate {
    #[inline]
    fn window(&self) -> u64 {
        self.window.cap(self.bdp, self.rate, self.line)
    }

    #[inline]
    fn rate(&self) -> Option<Rate> {
        Some(Rate(self.rate))
    }

    fn on_ack(&mut self, _now: Time, ack: &AckSignal) {
        let mark = ack.ce_bytes > 0;
        self.marks += u64::from(mark);
        let new_batch = self.batch_end.is_none_or(|end| ack.ack_seq > end);
        if new_batch {
            match self.batch_end {
                None => self.batch_packets = ack.snd_nxt / self.mtu + 1,
                Some(_) => {
                    let frac = (self.marks as f64 / self.batch_packets as f64).min(1.0);
                    self.alpha = (1.0 - self.g) * self.alpha + self.g * frac;
                    self.marks = 0;
                    self.batch_packets = ack.snd_nxt.saturating_sub(ack.ack_seq) / self.mtu + 1;
                }
            }
            self.batch_end = Some(ack.snd_nxt);
        }
        if self.cwr_until.is_some_and(|end| ack.ack_seq > end) {
            self.cwr_until = None;
        }
        if mark && self.cwr_until.is_none() {
            let cut = (self.rate as f64 * (1.0 - self.alpha / 2.0)) as u64;
            self.rate = cut.max(self.min_rate);
            self.cwr_until = Some(ack.snd_nxt);
        }
        if self.cwr_until.is_none() && new_batch {
            self.rate = (self.rate + self.rai).min(self.line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_context as ctx;

    fn ack(ack_seq: u64, snd_nxt: u64, marked: bool) -> AckSignal<'static> {
        AckSignal {
            ack_seq,
            snd_nxt,
            ce_bytes: if marked { 1000 } else { 0 },
            ..AckSignal::default()
        }
    }

    // 100 Gb/s, MTU 1000 B, BDP 100 000 B; g = 1/16, AI 615 Mb/s, floor 1 Gb/s.

    #[test]
    fn first_mark_halves_then_cwr_holds_then_batches_update_alpha() {
        let mut d = DctcpRate::new(&DctcpRateConfig::default(), &ctx());
        assert_eq!(d.rate(), Some(Rate::gbps(100)));
        assert_eq!(d.window(), 100_000);

        // First ACK opens batch 1 (snd_nxt 20 000: 21 packets) and is marked: α = 1, R = 50 Gb/s, CWR until
        // 20 000. No increase (in CWR).
        d.on_ack(Time::ZERO, &ack(1_000, 20_000, true));
        assert_eq!(d.rate(), Some(Rate::gbps(50)));
        assert_eq!(d.window(), 50_000);

        // Marked ACKs inside CWR (ack_seq ≤ 20 000) neither cut nor close the batch.
        d.on_ack(Time::ZERO, &ack(2_000, 21_000, true));
        d.on_ack(Time::ZERO, &ack(20_000, 40_000, false));
        assert_eq!(d.rate(), Some(Rate::gbps(50)));
        assert_eq!(d.alpha(), 1.0);

        // ack_seq 21 000 > 20 000 closes batch 1 with 2 marks of 21: α = 15/16 + 2/21/16; the batch now holds
        // (41 000 − 21 000)/1000 + 1 = 21 packets; CWR ends; unmarked: + 615 Mb/s.
        d.on_ack(Time::ZERO, &ack(21_000, 41_000, false));
        let alpha = 15.0 / 16.0 + (2.0 / 21.0) / 16.0;
        assert!((d.alpha() - alpha).abs() < 1e-12);
        assert_eq!(d.rate(), Some(Rate(50_615_000_000)));

        // Within the batch, an unmarked ACK changes nothing; a marked one cuts by α/2 and starts CWR.
        d.on_ack(Time::ZERO, &ack(22_000, 42_000, false));
        assert_eq!(d.rate(), Some(Rate(50_615_000_000)));
        d.on_ack(Time::ZERO, &ack(23_000, 43_000, true));
        let cut = (50_615_000_000.0 * (1.0 - alpha / 2.0)) as u64;
        assert_eq!(d.rate(), Some(Rate(cut)));
        assert_eq!(
            d.window(),
            (100_000u128 * cut as u128 / 100_000_000_000) as u64
        );
    }

    #[test]
    fn increases_once_per_batch_up_to_line_rate_and_floors_cuts() {
        let cfg = DctcpRateConfig {
            rate_ai: Rate::gbps(30),
            ..DctcpRateConfig::default()
        };
        let mut d = DctcpRate::new(&cfg, &ctx());
        d.on_ack(Time::ZERO, &ack(1_000, 10_000, true)); // 50 Gb/s, CWR until 10 000
        d.on_ack(Time::ZERO, &ack(11_000, 20_000, false)); // batch closes, CWR over: 80
        d.on_ack(Time::ZERO, &ack(12_000, 21_000, false)); // same batch: 80
        assert_eq!(d.rate(), Some(Rate::gbps(80)));
        d.on_ack(Time::ZERO, &ack(21_000, 30_000, false)); // next batch: 110 → 100
        assert_eq!(d.rate(), Some(Rate::gbps(100)));

        let mut d = DctcpRate::new(&DctcpRateConfig::default(), &ctx());
        let mut seq = 0;
        for _ in 0..20 {
            d.on_ack(Time::ZERO, &ack(seq + 1, seq + 1_000, true));
            seq += 1_000;
        }
        assert_eq!(d.rate(), Some(Rate::gbps(1)));
    }

    #[test]
    fn window_modes_and_base_rtt() {
        let cfg = DctcpRateConfig {
            window: RateWindow::None,
            ..DctcpRateConfig::default()
        };
        assert_eq!(DctcpRate::new(&cfg, &ctx()).window(), u64::MAX);
        let cfg = DctcpRateConfig {
            base_rtt: Some(Time::from_ns(12_480)),
            ..DctcpRateConfig::default()
        };
        assert_eq!(DctcpRate::new(&cfg, &ctx()).window(), 156_000);
    }

    #[test]
    fn config_parses_and_validates() {
        use crate::cc::CcConfig;
        let c: CcConfig = toml::from_str("name = \"dctcp-rate\"\nrate_ai = \"1Gbps\"").unwrap();
        assert_eq!(
            c,
            CcConfig::DctcpRate(DctcpRateConfig {
                rate_ai: Rate::gbps(1),
                ..DctcpRateConfig::default()
            })
        );
        assert!(DctcpRateConfig::default().validate().is_ok());
        let bad = DctcpRateConfig {
            g: 0.0,
            ..DctcpRateConfig::default()
        };
        assert!(bad.validate().is_err());
    }
}
