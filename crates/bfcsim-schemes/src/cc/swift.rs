//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the Datacenter",
//! SIGCOMM 2020) as a sans-IO window controller.
//!
//! - §3.1, Algorithm 1: on each ACK, a delay below the target grows the window additively (`ai/cwnd` packets
//!   per packet acknowledged, `ai` per packet below one packet of window); a delay above it cuts the window to
//!   `max(1 − β·(delay − target)/delay, 1 − max_mdf)·cwnd`, at most once per RTT (`can_decrease`: an RTT
//!   since the last decrease).
//! - §3.3: two windows, each with its own delay and target: the **fabric** window against the fabric delay
//!   (the RTT less the remote endpoint delay, from NIC timestamps: the ACK carries the time its data packet
//!   waited at the remote NIC), and the **endpoint** window against that endpoint delay; the flow sends with
//!   the smaller.
//! - §3.5, Fig. 5: the fabric target is `base_target + hops·h + max(0, min(α/√fcwnd + β_fs, fs_range))`, with
//!   the path's hop count (echoed in the ACK) and flow scaling over `[fs_min_cwnd, fs_max_cwnd]` packets,
//!   `α = fs_range/(1/√fs_min_cwnd − 1/√fs_max_cwnd)`, `β_fs = −α/√fs_max_cwnd`.
//! - §3.4: a window below one packet becomes pacing: one packet every `rtt/cwnd` packets' worth of time, with
//!   no window (the NIC's rate limiter at `cwnd/rtt`).
//! - Loss: a retransmission timeout counts `retransmit_cnt`; at `retx_reset_threshold` the window falls to
//!   `min_cwnd`, before that it is cut by `max_mdf` if it may decrease; fast recovery (a NACK) cuts by
//!   `max_mdf` if it may decrease; any ACK clears the count. Windows stay within `[min_cwnd, max_cwnd]`.
//!
//! The paper gives the algorithm but not every constant; the defaults are csg-htsim's `swift.cpp` (the
//! implementation this one is checked against, whose comments call most of them a guess): `ai` 1, β 0.8,
//! `max_mdf` 0.5, base target 20 µs, `h` = base target / 6.55 per hop, `fs_range` = 5 × base target,
//! `fs_min_cwnd` 0.1 and `fs_max_cwnd` 100 packets, a reset after 5 timeouts, `min_cwnd` 10 bytes, `max_cwnd`
//! 1000 packets. The RTT behind `can_decrease` and the pacing delay is smoothed (`srtt ← 7/8·srtt +
//! 1/8·sample`, htsim's `update_rtt`). htsim's Swift has the fabric window only (`endpoint = false` here).

use bfcsim_core::{Rate, Time};
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs, WindowSpec};
use crate::fabric::Preset;

/// Swift's parameters (windows in packets of `mss` payload bytes, as the paper gives them).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwiftConfig {
    /// Additive increase per RTT, in packets (`ai`).
    pub ai: f64,
    /// Multiplicative decrease factor β.
    pub beta: f64,
    /// The largest cut of one decrease (`max_mdf`).
    pub max_mdf: f64,
    /// The fabric target's base (`base_target`).
    pub base_target: Time,
    /// Target added per switch hop of the path (`h`); absent: `base_target / 6.55` (htsim's `_h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hop_scale: Option<Time>,
    /// The largest flow-scaling addition (`fs_range`); absent: 5 × `base_target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_range: Option<Time>,
    /// Window (packets) at which flow scaling adds all of `fs_range`.
    pub fs_min_cwnd: f64,
    /// Window (packets) at which flow scaling adds nothing.
    pub fs_max_cwnd: f64,
    /// Run the endpoint window beside the fabric window (§3.3); `false` is htsim's one window.
    pub endpoint: bool,
    /// The endpoint window's target delay.
    pub endpoint_target: Time,
    /// Consecutive timeouts after which the window falls to `min_cwnd` (`RETX_RESET_THRESHOLD`).
    pub retx_reset_threshold: u32,
    /// Smallest window, in packets (htsim: 10 bytes).
    pub min_cwnd: f64,
    /// Largest window, in packets.
    pub max_cwnd: f64,
    /// First window: `"bdp"` (a line-rate start, as every scheme of BFC §6.2.1), or a size.
    pub initial_window: WindowSpec,
}

impl Default for SwiftConfig {
    fn default() -> Self {
        SwiftConfig {
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target: Time::from_us(20),
            hop_scale: None,
            fs_range: None,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            endpoint: true,
            endpoint_target: Time::from_us(10),
            retx_reset_threshold: 5,
            min_cwnd: 0.01,
            max_cwnd: 1000.0,
            initial_window: WindowSpec::Bdp(1),
        }
    }
}

impl SwiftConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(format!("swift {name} = {v} must be in (0, 1]"))
            }
        };
        unit("beta", self.beta)?;
        unit("max_mdf", self.max_mdf)?;
        if self.ai.is_nan() || self.ai <= 0.0 {
            return Err(format!("swift ai = {} must be positive", self.ai));
        }
        if self.base_target == Time::ZERO || self.endpoint_target == Time::ZERO {
            return Err("swift base_target and endpoint_target must be positive".into());
        }
        if !(self.fs_min_cwnd > 0.0 && self.fs_min_cwnd < self.fs_max_cwnd) {
            return Err(format!(
                "swift fs_min_cwnd = {} must be positive and below fs_max_cwnd = {}",
                self.fs_min_cwnd, self.fs_max_cwnd
            ));
        }
        if !(self.min_cwnd > 0.0 && self.min_cwnd <= self.max_cwnd) {
            return Err(format!(
                "swift min_cwnd = {} must be positive and at most max_cwnd = {}",
                self.min_cwnd, self.max_cwnd
            ));
        }
        if self.retx_reset_threshold == 0 {
            return Err("swift retx_reset_threshold must be at least 1".into());
        }
        Ok(())
    }
}

/// One of Swift's two windows: its AIMD state against its own delay and target (§3.3).
#[derive(Clone, Copy, Debug)]
struct Window {
    /// Bytes.
    cwnd: f64,
    /// When it last decreased.
    last_decrease: Option<Time>,
}

/// One flow's Swift state. Windows in payload bytes, times in picoseconds.
#[derive(Clone, Debug)]
pub struct Swift {
    ai: f64,
    beta: f64,
    max_mdf: f64,
    base_target: f64,
    hop_scale: f64,
    fs_range: f64,
    fs_alpha: f64,
    fs_beta: f64,
    endpoint: bool,
    endpoint_target: f64,
    retx_reset_threshold: u32,
    mss: f64,
    min_cwnd: f64,
    max_cwnd: f64,
    fabric: Window,
    host: Window,
    /// Smoothed RTT; `None` before the first sample.
    srtt: Option<f64>,
    retransmit_cnt: u32,
}

impl Swift {
    /// A flow's controller at its start.
    pub fn new(cfg: &SwiftConfig, ctx: &FlowContext) -> Swift {
        let mss = ctx.mss as f64;
        let base_target = cfg.base_target.0 as f64;
        let fs_range = cfg.fs_range.map_or(5.0 * base_target, |t| t.0 as f64);
        let fs_alpha = fs_range / (1.0 / cfg.fs_min_cwnd.sqrt() - 1.0 / cfg.fs_max_cwnd.sqrt());
        let (min_cwnd, max_cwnd) = (cfg.min_cwnd * mss, cfg.max_cwnd * mss);
        let first = (cfg.initial_window.resolve(ctx) as f64).clamp(min_cwnd, max_cwnd);
        let window = Window {
            cwnd: first,
            last_decrease: None,
        };
        Swift {
            ai: cfg.ai,
            beta: cfg.beta,
            max_mdf: cfg.max_mdf,
            base_target,
            hop_scale: cfg.hop_scale.map_or(base_target / 6.55, |t| t.0 as f64),
            fs_range,
            fs_alpha,
            fs_beta: -fs_alpha / cfg.fs_max_cwnd.sqrt(),
            endpoint: cfg.endpoint,
            endpoint_target: cfg.endpoint_target.0 as f64,
            retx_reset_threshold: cfg.retx_reset_threshold,
            mss,
            min_cwnd,
            max_cwnd,
            fabric: window,
            host: window,
            srtt: None,
            retransmit_cnt: 0,
        }
    }

    /// The window the flow sends with, in bytes: the smaller of the fabric and the endpoint window.
    pub fn cwnd(&self) -> f64 {
        if self.endpoint {
            self.fabric.cwnd.min(self.host.cwnd)
        } else {
            self.fabric.cwnd
        }
    }

    /// The fabric window, in bytes.
    pub fn fabric_cwnd(&self) -> f64 {
        self.fabric.cwnd
    }

    /// The endpoint window, in bytes.
    pub fn endpoint_cwnd(&self) -> f64 {
        self.host.cwnd
    }

    /// The fabric target delay for a path of `hops` switch hops at the current fabric window, in ps (§3.5).
    pub fn fabric_target(&self, hops: u8) -> f64 {
        let packets = self.fabric.cwnd / self.mss;
        let fs = (self.fs_alpha / packets.sqrt() + self.fs_beta).clamp(0.0, self.fs_range);
        self.base_target + hops as f64 * self.hop_scale + fs
    }

    /// Whether `w` may decrease at `now`: an RTT since its last decrease.
    fn can_decrease(&self, w: &Window, now: Time) -> bool {
        let rtt = self.srtt.unwrap_or(0.0);
        w.last_decrease
            .is_none_or(|at| (now - at).0 as f64 >= rtt)
    }

    /// Algorithm 1's ACK branch for window `w` against `delay` and `target`, `acked` bytes newly acknowledged.
    fn react(&self, mut w: Window, now: Time, (delay, target): (f64, f64), acked: f64) -> Window {
        if delay < target {
            if w.cwnd >= self.mss {
                w.cwnd += self.mss * self.ai * acked / w.cwnd;
            } else {
                w.cwnd += self.ai * acked;
            }
        } else if self.can_decrease(&w, now) {
            let factor = (1.0 - self.beta * (delay - target) / delay).max(1.0 - self.max_mdf);
            w.cwnd *= factor;
        }
        w
    }

    /// `w` cut by `max_mdf` if it may decrease (fast recovery, a timeout).
    fn cut(&self, mut w: Window, now: Time) -> Window {
        if self.can_decrease(&w, now) {
            w.cwnd *= 1.0 - self.max_mdf;
        }
        w
    }

    /// Makes `fabric` and `host` the windows, clamped to `[min_cwnd, max_cwnd]`, marking a decrease at `now`
    /// where one shrank (htsim's `applySwiftLimits`).
    fn commit(&mut self, fabric: Window, host: Window, now: Time) {
        let (min, max) = (self.min_cwnd, self.max_cwnd);
        let mark = |old: &Window, mut new: Window| {
            new.cwnd = new.cwnd.clamp(min, max);
            if new.cwnd < old.cwnd {
                new.last_decrease = Some(now);
            }
            new
        };
        self.fabric = mark(&self.fabric, fabric);
        self.host = mark(&self.host, host);
    }
}

impl DescribeCc for Swift {
    const NAME: &'static str = "swift";
    const SUMMARY: &'static str = "Swift (Kumar et al. 2020): fabric and endpoint delay windows (AIMD) with hop and flow scaling, pacing below one packet; htsim's constants";
    type Config = SwiftConfig;

    fn validate(cfg: &SwiftConfig) -> Result<(), String> {
        cfg.validate()
    }

    fn new(cfg: &SwiftConfig, ctx: &FlowContext) -> Swift {
        Swift::new(cfg, ctx)
    }

    fn needs(cfg: &SwiftConfig) -> Needs {
        Needs {
            pacing: true,
            hops: true,
            endpoint_delay: cfg.endpoint,
            ..Needs::default()
        }
    }

    fn presets() -> &'static [Preset] {
        &[Preset {
            name: "swift",
            summary: "Swift (Kumar et al. 2020) on lossy switches: fabric and endpoint windows, base target 20 us + \
                      hops x 3.05 us + flow scaling (htsim's constants), go-back-N as DCTCP's",
            config: "[cc]\nname = \"swift\"\n",
        }]
    }
}

impl CongestionControl for Swift {
    #[inline]
    fn window(&self) -> u64 {
        let cwnd = self.cwnd();
        if cwnd < self.mss {
            u64::MAX // pacing: one packet every pacing delay, whatever is in flight
        } else {
            cwnd as u64
        }
    }

    #[inline]
    fn rate(&self) -> Option<Rate> {
        let cwnd = self.cwnd();
        let rtt = self.srtt?;
        (cwnd < self.mss).then(|| Rate(((cwnd * 8e12 / rtt) as u64).max(1)))
    }

    /// Whether each window may decrease is decided on the RTT known before this sample (htsim's `adjust_cwnd`
    /// computes `can_decrease` before `update_rtt`).
    fn on_ack(&mut self, now: Time, ack: &AckSignal) {
        let Some(rtt) = ack.rtt else { return };
        let rtt = rtt.0 as f64;
        self.retransmit_cnt = 0;
        let acked = ack.newly_acked as f64;
        let remote = ack.stamps.remote.0 as f64;
        let fabric_delay = (rtt - remote).max(0.0);
        let fabric = self.react(
            self.fabric,
            now,
            (fabric_delay, self.fabric_target(ack.stamps.hops)),
            acked,
        );
        let host = if self.endpoint {
            self.react(self.host, now, (remote, self.endpoint_target), acked)
        } else {
            self.host
        };
        self.commit(fabric, host, now);
        self.srtt = Some(self.srtt.map_or(rtt, |s| 0.875 * s + 0.125 * rtt));
    }

    /// Fast recovery (a NACK reporting a gap): cut by `max_mdf` if the window may decrease.
    fn on_loss(&mut self, now: Time, _snd_nxt: u64) {
        self.retransmit_cnt = 0;
        let (fabric, host) = (self.cut(self.fabric, now), self.cut(self.host, now));
        self.commit(fabric, host, now);
    }

    fn on_timeout(&mut self, now: Time) {
        self.retransmit_cnt += 1;
        let (fabric, host) = if self.retransmit_cnt >= self.retx_reset_threshold {
            let floor = |w: Window| Window {
                cwnd: self.min_cwnd,
                ..w
            };
            (floor(self.fabric), floor(self.host))
        } else {
            (self.cut(self.fabric, now), self.cut(self.host, now))
        };
        self.commit(fabric, host, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_context as ctx;
    use bfcsim_core::Bytes;
    use bfcsim_net::telemetry::PacketStamps;

    fn ack(newly_acked: u64, rtt_us: f64, remote_us: f64, hops: u8) -> AckSignal<'static> {
        AckSignal {
            newly_acked,
            rtt: Some(Time((rtt_us * 1e6) as u64)),
            stamps: PacketStamps {
                hops,
                digest: 0,
                remote: Time((remote_us * 1e6) as u64),
                ..PacketStamps::default()
            },
            ..AckSignal::default()
        }
    }

    fn cfg() -> SwiftConfig {
        SwiftConfig {
            initial_window: WindowSpec::Bytes(Bytes(50_000)),
            ..SwiftConfig::default()
        }
    }

    #[test]
    fn the_fabric_target_scales_with_hops_and_shrinks_as_the_window_grows() {
        let s = Swift::new(&cfg(), &ctx());
        // 50 packets: fs = α/√50 + β with α = 100 µs/(1/√0.1 − 1/√100) = 35.78 µs, β = −3.578 µs.
        let alpha = 100e6 / (1.0 / 0.1f64.sqrt() - 0.1);
        let fs = alpha / 50f64.sqrt() - alpha / 10.0;
        assert!((s.fabric_target(0) - (20e6 + fs)).abs() < 1.0);
        assert!((s.fabric_target(4) - s.fabric_target(0) - 4.0 * 20e6 / 6.55).abs() < 1.0);
        let big = Swift::new(
            &SwiftConfig {
                initial_window: WindowSpec::Bytes(Bytes(200_000)),
                ..cfg()
            },
            &ctx(),
        );
        assert_eq!(big.fabric_target(0), 20e6, "past fs_max_cwnd flow scaling adds nothing");
    }

    #[test]
    fn a_delay_below_target_grows_by_ai_per_rtt_and_above_cuts_at_most_once_per_rtt() {
        let mut s = Swift::new(&cfg(), &ctx());
        // A whole window of ACKs below the target: + 1 packet in all.
        for _ in 0..50 {
            s.on_ack(Time::ZERO, &ack(1000, 10.0, 0.0, 2));
        }
        assert!((s.fabric_cwnd() - 51_000.0).abs() < 600.0, "{}", s.fabric_cwnd());
        // Delay 100 µs against a target near 30 µs: cut by max(1 − 0.8·(100 − t)/100, 0.5) = 0.5.
        let before = s.fabric_cwnd();
        s.on_ack(Time::from_us(100), &ack(1000, 100.0, 0.0, 2));
        let cut = s.fabric_cwnd();
        assert!((cut / before - 0.5).abs() < 0.01, "{cut} after {before}");
        // Within one (smoothed) RTT of that cut, no further decrease however high the delay.
        s.on_ack(Time::from_us(110), &ack(1000, 150.0, 0.0, 2));
        assert!(s.fabric_cwnd() >= cut, "cut twice within an RTT");
        // An RTT later it may cut again.
        s.on_ack(Time::from_us(300), &ack(1000, 150.0, 0.0, 2));
        assert!(s.fabric_cwnd() < cut);
    }

    #[test]
    fn the_endpoint_window_reacts_to_the_remote_delay_alone() {
        let mut s = Swift::new(&cfg(), &ctx());
        // RTT 60 µs of which 50 µs at the remote NIC: the fabric delay (10 µs) is below target, the endpoint
        // delay (50 µs) above the endpoint target (10 µs).
        s.on_ack(Time::from_us(60), &ack(1000, 60.0, 50.0, 2));
        assert!(s.fabric_cwnd() > 50_000.0);
        assert!(s.endpoint_cwnd() < 50_000.0);
        assert_eq!(s.cwnd(), s.endpoint_cwnd());
        let without = Swift::new(
            &SwiftConfig {
                endpoint: false,
                ..cfg()
            },
            &ctx(),
        );
        assert_eq!(without.cwnd(), without.fabric_cwnd());
    }

    #[test]
    fn below_one_packet_the_window_becomes_pacing_at_cwnd_per_rtt() {
        let mut s = Swift::new(
            &SwiftConfig {
                initial_window: WindowSpec::Bytes(Bytes(2000)),
                ..cfg()
            },
            &ctx(),
        );
        assert_eq!(s.rate(), None, "no RTT yet, a window of two packets");
        s.on_ack(Time::from_us(10), &ack(1000, 100.0, 0.0, 2));
        // Cut to 1000 B (×0.5): still one packet, a window.
        assert_eq!(s.rate(), None);
        s.on_ack(Time::from_us(200), &ack(1000, 100.0, 0.0, 2));
        let cwnd = s.cwnd();
        assert!(cwnd < 1000.0, "{cwnd}");
        assert_eq!(s.window(), u64::MAX);
        let r = s.rate().expect("paced").0 as f64;
        let srtt = 100e6;
        assert!((r - cwnd * 8e12 / srtt).abs() / r < 1e-9);
    }

    #[test]
    fn timeouts_cut_then_reset_to_the_floor_and_an_ack_clears_the_count() {
        let mut s = Swift::new(&cfg(), &ctx());
        s.on_ack(Time::from_us(1), &ack(1000, 10.0, 0.0, 2));
        s.on_timeout(Time::from_ms(1));
        assert!((s.fabric_cwnd() / 50_000.0 - 0.5).abs() < 0.02);
        for i in 2..5 {
            s.on_timeout(Time::from_ms(i));
        }
        assert!(s.fabric_cwnd() > s.min_cwnd, "four timeouts: cuts only");
        s.on_timeout(Time::from_ms(5));
        assert_eq!(s.fabric_cwnd(), s.min_cwnd, "the fifth resets");
        s.on_ack(Time::from_ms(6), &ack(1000, 10.0, 0.0, 2));
        s.on_timeout(Time::from_ms(7));
        assert!(s.fabric_cwnd() > s.min_cwnd * 0.4, "the count started again");
    }
}
