//! DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010), as a sans-IO window controller.
//!
//! - §3.1: switches mark CE above K; the receiver echoes the marked bytes (our ACKs carry the exact count,
//!   which is what the paper's two-state delayed-ACK machine reconstructs).
//! - §3.1: once per window of data, `α ← (1 − g)·α + g·F`, F the fraction of marked bytes in that window.
//! - §3.1: on a window with marks, `cwnd ← cwnd·(1 − α/2)`, at most once per RTT (a CWR episode ends when
//!   the data outstanding at the cut has been acknowledged).
//! - Otherwise TCP's growth: slow start below ssthresh, then one MSS per RTT.
//!
//! Start: BFC §6.2.1 starts DCTCP flows at line rate ("flows start at line rate to avoid degradation in FCTs
//! from slow-start"): an initial window of one BDP, in congestion avoidance. [`Start::SlowStart`] is standard
//! TCP slow start from an initial window in packets (BFC App. A.6 uses 10), i.e. `dctcp-ss`.
//! Losses (a NACK) halve the window like TCP's fast retransmit; a timeout restarts from one MSS.
//!
//! On a persistent connection (`nic.connections = "persistent"`) a flow takes over the state its
//! connection's previous flow left ([`Dctcp::next_flow`]): α, ssthresh and the window, restarted from the
//! initial window after an idle time longer than the RTO (RFC 5681 §4.1, ns-2's `slow_start_restart_`).

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs};
use crate::fabric::Preset;

/// How a DCTCP flow starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Start {
    /// Initial window of one BDP, straight into congestion avoidance (BFC §6.2.1).
    LineRate,
    /// Slow start from `initial_window` packets (TCP; BFC App. A.6's DCTCP + SS).
    SlowStart,
}

/// DCTCP parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// EWMA gain g for α (paper: 1/16).
    pub g: f64,
    /// α before the first window completes (Linux starts at 1: the first marks halve the window).
    pub initial_alpha: f64,
    /// Line-rate start or slow start.
    pub start: Start,
    /// Initial window in packets, for slow start.
    pub initial_window: u32,
    /// Largest window in packets (the receiver's advertised window: ns-2's `window_`, 125 packets in the BCC
    /// authors' single-switch scripts); none by default.
    pub max_window: Option<u32>,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
            start: Start::LineRate,
            initial_window: 10,
            max_window: None,
        }
    }
}

impl DctcpConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("dctcp g = {} must be in (0, 1]", self.g));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(format!(
                "dctcp initial_alpha = {} must be in [0, 1]",
                self.initial_alpha
            ));
        }
        if self.initial_window == 0 {
            return Err("dctcp initial_window must be at least 1 packet".into());
        }
        if self.max_window == Some(0) {
            return Err("dctcp max_window must be at least 1 packet".into());
        }
        Ok(())
    }
}

/// One flow's DCTCP state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    g: f64,
    mss: f64,
    cwnd: f64,
    ssthresh: f64,
    alpha: f64,
    /// Bytes acknowledged / marked in the current observation window.
    acked: u64,
    marked: u64,
    /// The observation window ends when this sequence is acknowledged.
    window_end: u64,
    /// No further reduction until this sequence is acknowledged.
    cwr_end: u64,
    /// The window never grows beyond this (bytes).
    max_cwnd: f64,
    /// The window a slow start begins from (bytes), for the restart after idle.
    initial_cwnd: f64,
}

impl Dctcp {
    /// A flow's controller at its start.
    pub fn new(cfg: &DctcpConfig, ctx: &FlowContext) -> Dctcp {
        let mss = ctx.mss as f64;
        let (cwnd, ssthresh) = match cfg.start {
            Start::LineRate => {
                let w = (ctx.bdp.0 as f64).max(mss);
                (w, w)
            }
            Start::SlowStart => (cfg.initial_window as f64 * mss, f64::INFINITY),
        };
        Dctcp {
            g: cfg.g,
            mss,
            cwnd,
            ssthresh,
            alpha: cfg.initial_alpha,
            acked: 0,
            marked: 0,
            window_end: 0,
            cwr_end: 0,
            max_cwnd: cfg.max_window.map_or(f64::INFINITY, |w| w as f64 * mss),
            initial_cwnd: cwnd,
        }
    }

    /// The connection carries a new flow. Its sequence numbers start again at 0, so the observation window
    /// and the CWR episode, which end at a sequence, end with the new flow's first ACK (the bytes counted in
    /// the unfinished window stay in it); α, ssthresh and the window carry over. `idle_restart`: the
    /// connection sent nothing for longer than its RTO, and the window restarts from the initial window
    /// without touching ssthresh (ns-2 FullTcp's `slow_start_restart_`: `slowdown(CLOSE_CWND_INIT)`, "a
    /// slow-start that does not set ssthresh"; RFC 5681 §4.1 would keep a smaller window).
    pub fn next_flow(&mut self, idle_restart: bool) {
        self.window_end = 0;
        self.cwr_end = 0;
        if idle_restart {
            self.cwnd = self.initial_cwnd;
        }
    }

    /// The current α estimate.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The congestion window in bytes, unrounded.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }
}

impl DescribeCc for Dctcp {
    const NAME: &'static str = "dctcp";
    const SUMMARY: &'static str =
        "DCTCP (Alizadeh et al. 2010): ECN-fraction window control; line-rate start (BFC §6.2.1)";
    type Config = DctcpConfig;
    const PERSISTS: bool = true;

    fn validate(cfg: &DctcpConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &DctcpConfig, ctx: &FlowContext) -> Dctcp {
        Dctcp::new(cfg, ctx)
    }

    fn needs(_: &DctcpConfig) -> Needs {
        Needs::default()
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "dctcp",
                summary: "DCTCP (Alizadeh et al. 2010) starting at line rate with one BDP (BFC §6.2.1), ECN at 100/400 KB",
                config: "[cc]\nname = \"dctcp\"\n",
            },
            Preset {
                name: "dctcp-ss",
                summary: "DCTCP with TCP slow start from 10 packets (BFC App. A.6)",
                config: "[cc]\nname = \"dctcp\"\nstart = \"slow-start\"\ninitial_window = 10\n",
            },
            Preset {
                name: "dctcp-pfc",
                summary: "DCTCP over PFC (BFC §6.2.1: the same PFC thresholds as HPCC's), ECN at 100/400 KB",
                config: "[cc]\nname = \"dctcp\"\n[flow_control]\nkind = \"pfc\"\n",
            },
            Preset {
                name: "bcc",
                summary: "BCC (Bai et al., ToN, §IV-B/C): DCTCP from 20 packets in slow start, per-port ECN at 720 KB plus \
                          shared-buffer ECN/RED on each pool (derived Kmin/Kmax, Pmax 10%, h 8 us)",
                config: "[cc]\nname = \"dctcp\"\nstart = \"slow-start\"\ninitial_window = 20\n\
                         [switch.ecn]\nkmin = \"720KB\"\nkmax = \"720KB\"\n[switch.ecn.shared]\nenabled = true\n",
            },
            Preset {
                name: "bcc-cutoff",
                summary: "BCC with cut-off shared-buffer marking (§V-C.1): one pool threshold, the middle of the derived \
                          band (2.2 MB for a 3 MB pool of 8 ports)",
                config: "[cc]\nname = \"dctcp\"\nstart = \"slow-start\"\ninitial_window = 20\n\
                         [switch.ecn]\nkmin = \"720KB\"\nkmax = \"720KB\"\n[switch.ecn.shared]\nenabled = true\n\
                         cutoff = true\n",
            },
        ]
    }

    fn next_flow(&mut self, idle_restart: bool) {
        Dctcp::next_flow(self, idle_restart)
    }
}

impl CongestionControl for Dctcp {
    #[inline]
    fn window(&self) -> u64 {
        self.cwnd.min(self.max_cwnd) as u64
    }

    fn on_ack(&mut self, _now: Time, ack: &AckSignal) {
        self.acked += ack.newly_acked;
        self.marked += ack.ce_bytes;
        if ack.ack_seq >= self.window_end && self.acked > 0 {
            let f = self.marked as f64 / self.acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.acked = 0;
            self.marked = 0;
            self.window_end = ack.snd_nxt;
        }
        if ack.ce_bytes > 0 {
            if ack.ack_seq >= self.cwr_end {
                self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(self.mss);
                self.ssthresh = self.cwnd;
                self.cwr_end = ack.snd_nxt;
            }
        } else if self.cwnd < self.ssthresh {
            self.cwnd = (self.cwnd + ack.newly_acked as f64).min(self.max_cwnd);
        } else {
            self.cwnd =
                (self.cwnd + self.mss * ack.newly_acked as f64 / self.cwnd).min(self.max_cwnd);
        }
    }

    fn on_loss(&mut self, _now: Time, snd_nxt: u64) {
        // One reduction per window, shared with ECN reductions (RFC 3168 §6.1.2).
        if snd_nxt > self.cwr_end {
            self.cwnd = (self.cwnd / 2.0).max(self.mss);
            self.ssthresh = self.cwnd;
            self.cwr_end = snd_nxt;
        }
    }

    fn on_timeout(&mut self, _now: Time) {
        self.ssthresh = (self.cwnd / 2.0).max(2.0 * self.mss);
        self.cwnd = self.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cc::test_context as ctx;

    fn ack(newly: u64, ce: u64, ack_seq: u64, snd_nxt: u64) -> AckSignal<'static> {
        AckSignal {
            newly_acked: newly,
            ce_bytes: ce,
            ack_seq,
            snd_nxt,
            ..AckSignal::default()
        }
    }

    #[test]
    fn line_rate_start_is_one_bdp_in_congestion_avoidance() {
        let mut d = Dctcp::new(&DctcpConfig::default(), &ctx());
        assert_eq!(d.window(), 100_000);
        d.on_ack(Time::ZERO, &ack(1000, 0, 1000, 100_000));
        assert!((d.cwnd() - 100_010.0).abs() < 1e-9);
    }

    #[test]
    fn alpha_tracks_marked_fraction_and_cuts_once_per_window() {
        let cfg = DctcpConfig {
            initial_alpha: 0.0,
            ..DctcpConfig::default()
        };
        let mut d = Dctcp::new(&cfg, &ctx());
        // First ACK closes the (empty) first window: F = 0, α stays 0; window_end moves to 100 000.
        d.on_ack(Time::ZERO, &ack(1000, 0, 1000, 100_000));
        assert_eq!(d.alpha(), 0.0);
        // A window where half the bytes are marked.
        let w0 = d.cwnd();
        for i in 0..100u64 {
            let ce = if i % 2 == 0 { 1000 } else { 0 };
            d.on_ack(Time::ZERO, &ack(1000, ce, 2000 + i * 1000, 200_000));
        }
        // α = (1 − 1/16)·0 + (1/16)·(50/99) at the window's last ACK... the cut happened on the first marked
        // ACK, with α still 0, so cwnd was multiplied by (1 − 0/2) once and grew otherwise.
        let f = 50_000.0 / 99_000.0;
        assert!((d.alpha() - f / 16.0).abs() < 1e-12, "{}", d.alpha());
        assert!(d.cwnd() >= w0);
        // Next window: all marked; exactly one cut (CWR until snd_nxt at the cut is acknowledged).
        let a = d.alpha();
        let before = d.cwnd();
        d.on_ack(Time::ZERO, &ack(1000, 1000, 200_000, 300_000));
        // This window holds the unmarked last ACK of the previous loop and this marked one: F = 1/2.
        let a2 = (1.0 - 1.0 / 16.0) * a + (1.0 / 16.0) * 0.5;
        assert!((d.alpha() - a2).abs() < 1e-12);
        assert!((d.cwnd() - before * (1.0 - a2 / 2.0)).abs() < 1e-6);
        let after_cut = d.cwnd();
        d.on_ack(Time::ZERO, &ack(1000, 1000, 201_000, 300_000));
        assert_eq!(d.cwnd(), after_cut);
    }

    #[test]
    fn a_persistent_connection_keeps_alpha_and_ssthresh_and_restarts_its_window_after_idle() {
        let cfg = DctcpConfig {
            start: Start::SlowStart,
            initial_alpha: 0.5,
            ..DctcpConfig::default()
        };
        let mut d = Dctcp::new(&cfg, &ctx());
        // A marked window: α moves, the window is cut and ssthresh set.
        d.on_ack(Time::ZERO, &ack(1000, 1000, 1000, 10_000));
        d.on_ack(Time::ZERO, &ack(1000, 1000, 10_000, 20_000));
        let (alpha, cut) = (d.alpha(), d.cwnd());
        assert!(alpha < 1.0 && cut < 10_000.0);
        // The next flow, soon after: everything carries over, and its first ACK (sequence 1000, below the old
        // flow's window end of 20 000) closes the observation window and may cut again.
        let mut soon = d.clone();
        soon.next_flow(false);
        assert_eq!((soon.alpha(), soon.cwnd()), (alpha, cut));
        soon.on_ack(Time::ZERO, &ack(1000, 1000, 1000, 5_000));
        assert!(soon.alpha() > alpha && soon.cwnd() < cut);
        // After an idle RTO: the initial window again, but ssthresh (the cut window) ends the slow start.
        d.next_flow(true);
        assert_eq!((d.alpha(), d.window()), (alpha, 10_000));
        d.on_ack(Time::ZERO, &ack(1000, 0, 1000, 11_000));
        assert!(
            d.cwnd() < 11_000.0,
            "congestion avoidance above ssthresh: {}",
            d.cwnd()
        );
    }

    #[test]
    fn slow_start_loss_and_timeout() {
        let cfg = DctcpConfig {
            start: Start::SlowStart,
            ..DctcpConfig::default()
        };
        let mut d = Dctcp::new(&cfg, &ctx());
        assert_eq!(d.window(), 10_000);
        d.on_ack(Time::ZERO, &ack(5000, 0, 5000, 10_000));
        assert_eq!(d.window(), 15_000);
        d.on_loss(Time::ZERO, 20_000);
        assert_eq!(d.window(), 7_500);
        d.on_loss(Time::ZERO, 20_000);
        assert_eq!(d.window(), 7_500);
        d.on_timeout(Time::ZERO);
        assert_eq!(d.window(), 1_000);
    }
}
