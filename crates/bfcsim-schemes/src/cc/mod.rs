//! End-to-end congestion control: the contract and the enum that stores every algorithm (the trait says what
//! an algorithm must answer; the enum, matched directly, keeps calls static and inlinable), and the algorithms:
//!
//! - [`dctcp`]: DCTCP (Alizadeh et al., SIGCOMM 2010).
//! - [`dctcp_rate`]: DCTCP's control law on a pacing rate, as HPCC's ns-3 runs it for RDMA (`CC_MODE 8`).
//! - [`dcqcn`]: DCQCN (Zhu et al., SIGCOMM 2015) as HPCC's ns-3 models it, and the receiver's CNP pacing.
//! - [`hpcc`]: HPCC (Li et al., SIGCOMM 2019), driven by the INT records of `bfcsim_net::int`.
//! - [`rtt_target`]: the RTT-target window of BFC App. A.1 (Goyal et al., NSDI 2022).
//!
//! The trait's doc gives the call order the engine follows (timers, pacing, `on_send`, `on_cnp`); [`nic`] is
//! what the controllers ask of NICs and switches besides ACKs (pacing, DCQCN's CNPs, HPCC's INT, drop notices).

pub mod dcqcn;
pub mod dctcp;
pub mod dctcp_rate;
pub mod hpcc;
pub mod nic;
pub mod rtt_target;

use bfcsim_core::{Bytes, Rate, Time};
use bfcsim_net::int::IntStack;
use serde::{Deserialize, Serialize};

use crate::cc::dcqcn::{CnpGenerator, Dcqcn, DcqcnConfig};
use crate::cc::dctcp::{Dctcp, DctcpConfig};
use crate::cc::dctcp_rate::{DctcpRate, DctcpRateConfig};
use crate::cc::hpcc::{Hpcc, HpccConfig};
use crate::cc::rtt_target::{RttTarget, RttTargetConfig};

/// What a controller is told when a flow starts.
#[derive(Clone, Copy, Debug)]
pub struct FlowContext {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// The sender's line rate.
    pub line_rate: Rate,
    /// The fabric's largest base RTT (a full-size packet out and its ACK back on an idle network).
    pub base_rtt: Time,
    /// `line_rate × base_rtt`: one bandwidth-delay product.
    pub bdp: Bytes,
}

/// What an acknowledgement tells the controller. `Copy` and `Default`: each scheme reads the fields it needs and
/// the engine may leave the others at their defaults. The INT stack is borrowed from the ACK, not copied
/// into the signal: a copy was 168 bytes written for every ACK of every scheme.
#[derive(Clone, Copy, Debug)]
pub struct AckSignal<'a> {
    /// Payload bytes newly acknowledged by this ACK.
    pub newly_acked: u64,
    /// Payload bytes among them that carried the CE mark (DCTCP's ECN echo).
    pub ce_bytes: u64,
    /// The cumulative acknowledgement (next byte the receiver expects); HPCC compares it with the `snd_nxt`
    /// recorded at its last reference-window update.
    pub ack_seq: u64,
    /// The sender's next sequence to send, at the time of the ACK.
    pub snd_nxt: u64,
    /// RTT sample: `now` minus the send time of the data packet that triggered this ACK (echoed in the ACK).
    /// `None` when the engine has no sample. Used by the RTT-target controller.
    pub rtt: Option<Time>,
    /// The INT records of the data packet that triggered this ACK, echoed by the receiver (HPCC; see
    /// [`bfcsim_net::int`] for what each switch egress stamps and when). Empty for schemes without INT.
    pub int: &'a IntStack,
    /// The bits the running scheme echoed in the ACK (`NicSide::echo`); 0 without one.
    pub mark: u8,
}

impl Default for AckSignal<'_> {
    fn default() -> Self {
        AckSignal {
            newly_acked: 0,
            ce_bytes: 0,
            ack_seq: 0,
            snd_nxt: 0,
            rtt: None,
            int: &IntStack::EMPTY,
            mark: 0,
        }
    }
}

/// The contract every congestion controller fulfils: sans-IO, it is told `now` and an input and
/// answers with a window and a pacing rate; it never sees the event queue.
///
/// # Call order (the engine's side of the contract)
///
/// 1. Flow start: [`CcConfig::instantiate`].
/// 2. Timers: whenever `now >= next_timer()`, call [`on_timer(now)`](CongestionControl::on_timer) before
///    anything else at `now`. Keep one pending wake-up per flow at `next_timer()` (re-read it after *every*
///    call below, since any input may move it) and drop stale wake-ups lazily. Calling late, or
///    more than once, is harmless: every input method first fires, in time order and each at its own
///    scheduled time, all timers due at or before its `now` (timers due exactly at `now` fire before the
///    input).
/// 3. Before each data transmission: [`window()`](CongestionControl::window) caps the payload bytes in flight
///    (`u64::MAX`: no cap); [`rate()`](CongestionControl::rate) paces: the flow's next packet may start
///    `size / rate` after its previous one started (`None`: line rate, no pacing). Rates change in `on_ack`,
///    `on_cnp` and `on_timer`; re-read them after those calls and move the flow's next-send time (HPCC's
///    ns-3 `RdmaHw::ChangeRate` shifts it by the difference between the last packet's transmission time at
///    the new and at the old rate).
/// 4. When a data packet of the flow starts transmission at the NIC:
///    [`on_send(now, bytes)`](CongestionControl::on_send), `bytes` its size on the wire (DCQCN's byte counter).
/// 5. Each ACK: [`on_ack`](CongestionControl::on_ack); a NACK reporting a gap:
///    [`on_loss`](CongestionControl::on_loss); the retransmission timer:
///    [`on_timeout`](CongestionControl::on_timeout).
/// 6. Each congestion notification for the flow (DCQCN; [`Notifier`] is the receiver side):
///    [`on_cnp`](CongestionControl::on_cnp). HPCC's ns-3 carries the CNP as a flag on the ACK of a CE-marked
///    packet; an engine doing the same calls `on_cnp` then `on_ack` at the ACK's arrival
///    (`RdmaHw::ReceiveAck` calls `cnp_received_mlx` before the per-ACK handlers).
pub trait CongestionControl {
    /// Bytes of payload the sender may have in flight (`u64::MAX`: no window).
    fn window(&self) -> u64;
    /// Pacing rate; `None` sends at line rate (the default, for window-only schemes).
    fn rate(&self) -> Option<Rate> {
        None
    }
    /// An ACK arrived.
    fn on_ack(&mut self, now: Time, ack: &AckSignal);
    /// A data packet of `bytes` bytes on the wire started transmission (default: ignored).
    fn on_send(&mut self, _now: Time, _bytes: u64) {}
    /// A congestion notification packet arrived (DCQCN; default: ignored).
    fn on_cnp(&mut self, _now: Time) {}
    /// When [`CongestionControl::on_timer`] must next be called; `None` for never (the default). Only timers
    /// that can change the window or the rate are reported; the others are caught up by the next call.
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// Fires every timer due at or before `now` (default: nothing to do).
    fn on_timer(&mut self, _now: Time) {}
    /// A NACK reported a lost packet; `snd_nxt` is the sender's next sequence before it goes back (default:
    /// no reaction, as HPCC's ns-3 has for its rate-based schemes).
    fn on_loss(&mut self, _now: Time, _snd_nxt: u64) {}
    /// The retransmission timer fired (default: no reaction).
    fn on_timeout(&mut self, _now: Time) {}
}

/// The flow context the controllers' unit tests share: 100 Gb/s, 1000 B packets, an 8 µs base RTT, one
/// 100 KB BDP (CLOS-128's nominal values).
#[cfg(test)]
pub(crate) fn test_context() -> FlowContext {
    FlowContext {
        mss: 1000,
        line_rate: Rate::gbps(100),
        base_rtt: Time::from_us(8),
        bdp: Bytes(100_000),
    }
}

/// The in-flight cap of HPCC's ns-3 rate-based schemes (`HAS_WIN`, `VAR_WIN`; `RdmaQueuePair::GetWin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateWindow {
    /// Rate only (ns-3 `HAS_WIN 0`).
    None,
    /// One BDP (ns-3 `HAS_WIN 1`, `VAR_WIN 0`).
    Bdp,
    /// `BDP · rate / line rate`, at least 1 byte (ns-3 `HAS_WIN 1`, `VAR_WIN 1`).
    Variable,
}

impl RateWindow {
    /// The cap in payload bytes for a flow of `bdp` bytes sending at `rate` of `line` (both in b/s).
    #[inline]
    pub fn cap(self, bdp: u64, rate: u64, line: u64) -> u64 {
        match self {
            RateWindow::None => u64::MAX,
            RateWindow::Bdp => bdp,
            RateWindow::Variable => ((bdp as u128 * rate as u128 / line as u128) as u64).max(1),
        }
    }
}

/// A window that never changes: no end-to-end congestion control. `window = None` sends at line rate without
/// limit (BFC's NICs, §6.2.1); a window of one BDP is the NIC in-flight cap of BFC's ideal baselines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedConfig {
    /// In-flight cap; absent for none, `"bdp"` for one bandwidth-delay product, or a size such as `"64KB"`.
    #[serde(default)]
    pub window: Option<WindowSpec>,
}

/// A window size given either as a size or in bandwidth-delay products.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WindowSpec {
    /// This many bytes.
    Bytes(Bytes),
    /// This many BDPs (`"bdp"` is 1, `"2bdp"` is 2).
    Bdp(u32),
}

impl WindowSpec {
    /// The window in bytes for this flow.
    pub fn resolve(self, ctx: &FlowContext) -> u64 {
        match self {
            WindowSpec::Bytes(b) => b.0,
            WindowSpec::Bdp(n) => ctx.bdp.0 * n as u64,
        }
    }
}

impl Serialize for WindowSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WindowSpec::Bytes(b) => b.serialize(s),
            WindowSpec::Bdp(1) => s.serialize_str("bdp"),
            WindowSpec::Bdp(n) => s.serialize_str(&format!("{n}bdp")),
        }
    }
}

impl<'de> Deserialize<'de> for WindowSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if let Some(n) = text.strip_suffix("bdp") {
            if n.is_empty() {
                return Ok(WindowSpec::Bdp(1));
            }
            return n.parse().map(WindowSpec::Bdp).map_err(|_| {
                serde::de::Error::custom(format!(
                    "`{text}` is not a window such as bdp, 2bdp or 64KB"
                ))
            });
        }
        Bytes::parse(&text)
            .map(WindowSpec::Bytes)
            .map_err(serde::de::Error::custom)
    }
}

/// See [`FixedConfig`].
#[derive(Clone, Copy, Debug)]
pub struct Fixed {
    window: u64,
}

impl CongestionControl for Fixed {
    fn window(&self) -> u64 {
        self.window
    }
    fn on_ack(&mut self, _: Time, _: &AckSignal) {}
}

/// Every end-to-end congestion controller's configuration, tagged by scheme name in the experiment file.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum CcConfig {
    /// No congestion control: a fixed (or no) window.
    None(FixedConfig),
    /// DCTCP.
    Dctcp(DctcpConfig),
    /// Rate-based DCTCP (HPCC's ns-3 `CC_MODE 8`).
    DctcpRate(DctcpRateConfig),
    /// DCQCN.
    Dcqcn(DcqcnConfig),
    /// HPCC.
    Hpcc(HpccConfig),
    /// BFC App. A.1's RTT-target window.
    RttTarget(RttTargetConfig),
}

impl bfcsim_core::tagged::Tagged for CcConfig {
    const TAG: &'static str = "name";
    const VARIANTS: &'static [&'static str] =
        &["none", "dctcp", "dctcp-rate", "dcqcn", "hpcc", "rtt-target"];
    const DEFAULT: &'static str = "dctcp";
    fn from_variant<'de, D: serde::Deserializer<'de>>(
        name: &str,
        rest: D,
    ) -> Result<Self, D::Error> {
        match name {
            "none" => FixedConfig::deserialize(rest).map(CcConfig::None),
            "dctcp" => DctcpConfig::deserialize(rest).map(CcConfig::Dctcp),
            "dctcp-rate" => DctcpRateConfig::deserialize(rest).map(CcConfig::DctcpRate),
            "dcqcn" => DcqcnConfig::deserialize(rest).map(CcConfig::Dcqcn),
            "hpcc" => HpccConfig::deserialize(rest).map(CcConfig::Hpcc),
            "rtt-target" => RttTargetConfig::deserialize(rest).map(CcConfig::RttTarget),
            _ => Err(serde::de::Error::unknown_variant(name, Self::VARIANTS)),
        }
    }
}

impl<'de> Deserialize<'de> for CcConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        bfcsim_core::tagged::deserialize(d)
    }
}

/// The receiver's side of a flow's congestion control, made per flow by [`nic::CcNic::notifier`]: what the
/// receiver sends back besides ACKs.
#[derive(Clone, Copy, Debug, Default)]
pub enum Notifier {
    /// Nothing but ACKs.
    #[default]
    Silent,
    /// DCQCN's notification point (§3): a CNP for CE-marked data, paced per flow ([`CnpGenerator`]).
    Cnp(CnpGenerator),
}

impl Notifier {
    /// A data packet of the flow arrived at `now`, CE-marked or not: whether the receiver sends a congestion
    /// notification (a [`PacketKind::CNP`](bfcsim_net::packet::PacketKind::CNP)), which goes before its ACK so
    /// that the sender reacts to it first (HPCC's ns-3 order).
    #[inline]
    pub fn on_data(&mut self, now: Time, ce: bool) -> bool {
        match self {
            Notifier::Silent => false,
            Notifier::Cnp(cnp) => cnp.on_data(now, ce),
        }
    }
}

impl CcConfig {
    /// The scheme's name as experiment files spell it.
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::None(_) => "none",
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::DctcpRate(_) => "dctcp-rate",
            CcConfig::Dcqcn(_) => "dcqcn",
            CcConfig::Hpcc(_) => "hpcc",
            CcConfig::RttTarget(_) => "rtt-target",
        }
    }

    /// Checks parameter ranges.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            CcConfig::None(_) => Ok(()),
            CcConfig::Dctcp(c) => c.validate(),
            CcConfig::DctcpRate(c) => c.validate(),
            CcConfig::Dcqcn(c) => c.validate(),
            CcConfig::Hpcc(c) => c.validate(),
            CcConfig::RttTarget(c) => c.validate(),
        }
    }

    /// Whether a persistent connection can hand this controller's state from one flow to the next
    /// ([`Cc::next_flow`]): the window controllers of TCP. The rate controllers model RDMA NICs, whose
    /// papers start every flow afresh.
    pub fn persists(&self) -> bool {
        matches!(self, CcConfig::None(_) | CcConfig::Dctcp(_))
    }

    /// Refuses persistent connections (`nic.connections = "persistent"`) to a controller that does not persist.
    pub fn check_persistent(&self) -> Result<(), String> {
        if self.persists() {
            return Ok(());
        }
        Err(format!(
            "nic.connections = \"persistent\" hands a window controller's state from flow to flow; \
             cc.name = \"{}\" starts every flow afresh (use dctcp or none)",
            self.name()
        ))
    }

    /// A fresh controller for one flow.
    pub fn instantiate(&self, ctx: &FlowContext) -> Cc {
        match self {
            CcConfig::None(c) => Cc::Fixed(Fixed {
                window: c.window.map_or(u64::MAX, |w| w.resolve(ctx)),
            }),
            CcConfig::Dctcp(c) => Cc::Dctcp(Dctcp::new(c, ctx)),
            CcConfig::DctcpRate(c) => Cc::DctcpRate(DctcpRate::new(c, ctx)),
            CcConfig::Dcqcn(c) => Cc::Dcqcn(Dcqcn::new(c, ctx)),
            CcConfig::Hpcc(c) => Cc::Hpcc(Hpcc::new(c, ctx)),
            CcConfig::RttTarget(c) => Cc::RttTarget(RttTarget::new(c, ctx)),
        }
    }
}

/// Storage and dispatch for every controller (one per active flow).
#[derive(Clone, Debug)]
pub enum Cc {
    /// See [`Fixed`].
    Fixed(Fixed),
    /// See [`Dctcp`].
    Dctcp(Dctcp),
    /// See [`DctcpRate`].
    DctcpRate(DctcpRate),
    /// See [`Dcqcn`].
    Dcqcn(Dcqcn),
    /// See [`Hpcc`].
    Hpcc(Hpcc),
    /// See [`RttTarget`].
    RttTarget(RttTarget),
}

impl Cc {
    /// The state a persistent connection hands its next flow, `idle_restart` when it sent nothing for longer
    /// than its RTO (see [`Dctcp::next_flow`]); `None` for the controllers [`CcConfig::persists`] excludes.
    pub fn next_flow(mut self, idle_restart: bool) -> Option<Cc> {
        match &mut self {
            Cc::Fixed(_) => {}
            Cc::Dctcp(d) => d.next_flow(idle_restart),
            Cc::DctcpRate(_) | Cc::Dcqcn(_) | Cc::Hpcc(_) | Cc::RttTarget(_) => return None,
        }
        Some(self)
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::Fixed($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::DctcpRate($c) => $e,
            Cc::Dcqcn($c) => $e,
            Cc::Hpcc($c) => $e,
            Cc::RttTarget($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn window(&self) -> u64 {
        dispatch!(self, c => c.window())
    }
    #[inline]
    fn rate(&self) -> Option<Rate> {
        dispatch!(self, c => c.rate())
    }
    #[inline]
    fn on_ack(&mut self, now: Time, ack: &AckSignal) {
        dispatch!(self, c => c.on_ack(now, ack))
    }
    #[inline]
    fn on_send(&mut self, now: Time, bytes: u64) {
        dispatch!(self, c => c.on_send(now, bytes))
    }
    #[inline]
    fn on_cnp(&mut self, now: Time) {
        dispatch!(self, c => c.on_cnp(now))
    }
    #[inline]
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, c => c.next_timer())
    }
    #[inline]
    fn on_timer(&mut self, now: Time) {
        dispatch!(self, c => c.on_timer(now))
    }
    #[inline]
    fn on_loss(&mut self, now: Time, snd_nxt: u64) {
        dispatch!(self, c => c.on_loss(now, snd_nxt))
    }
    #[inline]
    fn on_timeout(&mut self, now: Time) {
        dispatch!(self, c => c.on_timeout(now))
    }
}
