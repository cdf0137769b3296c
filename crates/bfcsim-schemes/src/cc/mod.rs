//! End-to-end congestion control: the contract every controller fulfils ([`CongestionControl`], sans-IO), the
//! descriptor that makes it a `[cc] name` ([`DescribeCc`]: its parameters, checks, presets and what it needs of
//! the NIC and the fabric, [`Needs`]), and the registry below, one line per controller, from which follow the
//! [`CcConfig`] every experiment file's `[cc]` parses into, the catalog `bfcsim schemes` prints
//! ([`CcConfig::catalog`]), and the [`Cc`] enum that holds one flow's controller and dispatches its calls
//! statically. The controllers are the modules the `ccs!` list names (DCTCP, its rate-based variant as HPCC's
//! ns-3 runs it, DCQCN, HPCC, BFC App. A.1's RTT-target window, none, TIMELY, Swift, ...); each
//! module's doc says what it implements and from which paper section and reference code.
//!
//! Adding a controller: a module of its own beside these, whose per-flow state implements [`CongestionControl`]
//! and [`DescribeCc`], and one line in the `ccs!` list below, which also declares the module. The trait's doc
//! gives the call order the engine follows (timers, pacing, `on_send`, `on_cnp`); [`nic`] is what the
//! controllers ask of NICs and switches besides ACKs (pacing, DCQCN's CNPs, HPCC's INT, drop notices), which a
//! run turns on by the running controller's [`Needs`].

pub mod nic;

use std::fmt;

use bfcsim_core::{Bytes, Rate, Time};
use bfcsim_net::int::IntStack;
use bfcsim_net::telemetry::PacketStamps;
use bfcsim_net::telemetry::pint::{Arithmetic, Pint};
use serde::{Deserialize, Serialize};

use crate::cc::dcqcn::CnpGenerator;
use crate::fabric::{ConfigType, Preset};

/// Declares the controllers: one line `Variant => module::Type` each, the first the default of `[cc] name`.
/// Each line declares `module` (a file beside this one) and makes `Type`, which implements [`DescribeCc`], a
/// variant of [`CcConfig`] and of [`Cc`].
macro_rules! ccs {
    ($($variant:ident => $module:ident :: $ty:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every end-to-end congestion controller's configuration, tagged by its name (`[cc] name`).
        #[derive(Clone, Debug, PartialEq)]
        pub enum CcConfig {
            $(
                #[doc = concat!("[`", stringify!($module), "::", stringify!($ty), "`] with its parameters.")]
                $variant(<$module::$ty as DescribeCc>::Config),
            )*
        }

        /// One flow's controller: storage and static dispatch for every controller (one per active flow).
        #[derive(Clone, Debug)]
        pub enum Cc {
            $(
                #[doc = concat!("See [`", stringify!($module), "::", stringify!($ty), "`].")]
                $variant($module::$ty),
            )*
        }

        impl CcConfig {
            /// The controller's name as experiment files spell it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(CcConfig::$variant(_) => <$module::$ty as DescribeCc>::NAME,)*
                }
            }

            /// Checks parameter ranges.
            pub fn validate(&self) -> Result<(), String> {
                match self {
                    $(CcConfig::$variant(c) => <$module::$ty as DescribeCc>::validate(c),)*
                }
            }

            /// What the controller asks of the NIC and the fabric ([`Needs`]).
            pub fn needs(&self) -> Needs {
                match self {
                    $(CcConfig::$variant(c) => <$module::$ty as DescribeCc>::needs(c),)*
                }
            }

            /// Whether a persistent connection can hand this controller's state from one flow to the next
            /// ([`DescribeCc::PERSISTS`]).
            pub fn persists(&self) -> bool {
                match self {
                    $(CcConfig::$variant(_) => <$module::$ty as DescribeCc>::PERSISTS,)*
                }
            }

            /// A fresh controller for one flow.
            pub fn instantiate(&self, ctx: &FlowContext) -> Cc {
                match self {
                    $(CcConfig::$variant(c) => Cc::$variant(<$module::$ty as DescribeCc>::new(c, ctx)),)*
                }
            }

            /// Every controller, with its default parameters and presets, in the registry's order.
            pub fn catalog() -> Vec<CcEntry> {
                vec![$(CcEntry::of::<$module::$ty>(CcConfig::$variant(Default::default())),)*]
            }
        }

        impl bfcsim_core::tagged::Tagged for CcConfig {
            const TAG: &'static str = "name";
            const VARIANTS: &'static [&'static str] = &[$(<$module::$ty as DescribeCc>::NAME),*];
            const DEFAULT: &'static str = Self::VARIANTS[0];
            fn from_variant<'de, D: serde::Deserializer<'de>>(
                name: &str,
                rest: D,
            ) -> Result<Self, D::Error> {
                $(
                    if name == <$module::$ty as DescribeCc>::NAME {
                        return <<$module::$ty as DescribeCc>::Config>::deserialize(rest)
                            .map(CcConfig::$variant);
                    }
                )*
                Err(serde::de::Error::unknown_variant(name, Self::VARIANTS))
            }
        }

        impl Serialize for CcConfig {
            /// As a table whose first key is `name`, then the parameters.
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(CcConfig::$variant(c) => Tagged { name: self.name(), params: c }.serialize(s),)*
                }
            }
        }

        impl Cc {
            /// The state a persistent connection hands its next flow, `idle_restart` when it sent nothing for
            /// longer than its RTO ([`DescribeCc::next_flow`]); `None` for the controllers that do not persist.
            pub fn next_flow(mut self, idle_restart: bool) -> Option<Cc> {
                match &mut self {
                    $(Cc::$variant(c) => {
                        if !<$module::$ty as DescribeCc>::PERSISTS {
                            return None;
                        }
                        c.next_flow(idle_restart);
                    })*
                }
                Some(self)
            }
        }

        // Always inlined: the NIC asks for the window and the rate at every packet it sends, and with this many
        // controllers the match alone is past what the inliner takes on its own (an out-of-line call per packet
        // for every controller, BENCHMARKS.md).
        impl CongestionControl for Cc {
            #[inline(always)]
            fn window(&self) -> u64 {
                match self { $(Cc::$variant(c) => c.window(),)* }
            }
            #[inline(always)]
            fn rate(&self) -> Option<Rate> {
                match self { $(Cc::$variant(c) => c.rate(),)* }
            }
            #[inline(always)]
            fn on_ack(&mut self, now: Time, ack: &AckSignal) {
                match self { $(Cc::$variant(c) => c.on_ack(now, ack),)* }
            }
            #[inline]
            fn on_send(&mut self, now: Time, bytes: u64) {
                match self { $(Cc::$variant(c) => c.on_send(now, bytes),)* }
            }
            #[inline]
            fn on_cnp(&mut self, now: Time) {
                match self { $(Cc::$variant(c) => c.on_cnp(now),)* }
            }
            #[inline]
            fn next_timer(&self) -> Option<Time> {
                match self { $(Cc::$variant(c) => c.next_timer(),)* }
            }
            #[inline]
            fn on_timer(&mut self, now: Time) {
                match self { $(Cc::$variant(c) => c.on_timer(now),)* }
            }
            #[inline]
            fn on_loss(&mut self, now: Time, snd_nxt: u64) {
                match self { $(Cc::$variant(c) => c.on_loss(now, snd_nxt),)* }
            }
            #[inline]
            fn on_timeout(&mut self, now: Time) {
                match self { $(Cc::$variant(c) => c.on_timeout(now),)* }
            }
        }
    };
}

ccs! {
    Dctcp => dctcp::Dctcp,
    DctcpRate => dctcp_rate::DctcpRate,
    Dcqcn => dcqcn::Dcqcn,
    Hpcc => hpcc::Hpcc,
    RttTarget => rtt_target::RttTarget,
    None => fixed::Fixed,
    Timely => timely::Timely,
    Swift => swift::Swift,
    PowerTcp => powertcp::PowerTcp,
    Nscc => nscc::Nscc,
}

pub use fixed::{Fixed, FixedConfig};

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
    /// The run's master seed and the flow: a controller that draws random numbers (PINT's ACK sampling) takes
    /// its own stream, `bfcsim_core::rng::stream(seed, Stream::Controller(flow.0))`.
    pub seed: u64,
    /// The flow this controller runs.
    pub flow: bfcsim_core::FlowId,
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
    /// The data packet's hop count, PINT digest and remote endpoint delay, as echoed ([`Needs::hops`],
    /// [`Needs::pint`], [`Needs::endpoint_delay`]); all zero unless the controller asked for them.
    pub stamps: PacketStamps,
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
            stamps: PacketStamps::default(),
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
        seed: 1,
        flow: bfcsim_core::FlowId(0),
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

/// What a controller asks of the NIC and the fabric besides carrying its ACKs, read once when a run is built
/// ([`DescribeCc::needs`]): the fabric does, and stamps, only what the running controller asked for, so a
/// controller that needs none of it pays nothing for the others' (DCTCP's loop does not carry Swift's
/// timestamps).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Needs {
    /// The NIC paces the flow at the controller's [`rate`](CongestionControl::rate) and runs its timers
    /// ([`CongestionControl::next_timer`]).
    pub pacing: bool,
    /// Bytes of the controller's own header on every data packet, which the engine adds to its wire size
    /// (HPCC's INT header, TIMELY's timestamp, PINT's digest).
    pub header: Bytes,
    /// Switches stamp HPCC's per-hop INT records on data packets ([`bfcsim_net::int`]) and receivers echo
    /// them ([`AckSignal::int`]).
    pub int: bool,
    /// Switches count the egresses a data packet leaves and receivers echo the count ([`AckSignal::stamps`]'
    /// `hops`: Swift's hop scaling).
    pub hops: bool,
    /// Receivers' NICs time each data packet from its arrival to its ACK's transmission, and the ACK carries
    /// that remote endpoint delay back ([`AckSignal::stamps`]' `remote`: Swift's endpoint delay).
    pub endpoint_delay: bool,
    /// Switches keep PINT's per-port utilization and stamp its digest on data packets, which receivers echo
    /// ([`bfcsim_net::telemetry::pint`]; [`AckSignal::stamps`]' `digest`).
    pub pint: Option<PintNeeds>,
    /// Receivers send congestion notifications (DCQCN's CNPs) for CE-marked data, at most one per flow per
    /// this interval (0: one for every marked packet).
    pub notifications: Option<Time>,
}

/// What PINT's switches run ([`Needs::pint`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PintNeeds {
    /// The digest's encoding.
    pub encoding: Pint,
    /// How switches compute the utilization update.
    pub arithmetic: Arithmetic,
    /// T, the time constant of the switches' estimate; absent: the fabric's largest base RTT.
    pub t: Option<Time>,
}

/// A controller's descriptor: with its [`CongestionControl`] state machine, everything bfcsim needs to run,
/// configure, list and check it. Implemented by the controller's per-flow state type; one line in the `ccs!`
/// registry of this module makes it a `[cc] name`.
pub trait DescribeCc: CongestionControl + Clone + fmt::Debug + Sized + 'static {
    /// The `[cc] name` that runs it.
    const NAME: &'static str;
    /// What it is and where it comes from, one line for `bfcsim schemes`.
    const SUMMARY: &'static str;
    /// Its `[cc]` parameters; the default is the configuration of its paper or reference code.
    type Config: ConfigType;
    /// A persistent connection (`nic.connections = "persistent"`) may hand one flow's state to the next
    /// ([`DescribeCc::next_flow`]): TCP's window controllers. The rate controllers model RDMA NICs, whose
    /// papers start every flow afresh.
    const PERSISTS: bool = false;

    /// Checks the parameters; the message names the field.
    fn validate(_cfg: &Self::Config) -> Result<(), String> {
        Ok(())
    }

    /// A flow's controller at its start.
    fn new(cfg: &Self::Config, ctx: &FlowContext) -> Self;

    /// What it asks of the NIC and the fabric.
    fn needs(cfg: &Self::Config) -> Needs;

    /// Its named presets, for `[scheme] name`: the controller over the flow control and switch its paper runs.
    fn presets() -> &'static [Preset] {
        &[]
    }

    /// Parameters of the optional tables its default configuration leaves out (HPCC's `[cc.pint]`), as
    /// `(dotted key, default)` pairs, for `bfcsim schemes` to list after the defaults.
    fn optional_params() -> Vec<(String, String)> {
        Vec::new()
    }

    /// The connection carries a new flow ([`DescribeCc::PERSISTS`]); `idle_restart` when it sent nothing for
    /// longer than its RTO.
    fn next_flow(&mut self, _idle_restart: bool) {}
}

/// One controller of the registry, for `bfcsim schemes` and the presets.
pub struct CcEntry {
    /// Its `[cc] name`.
    pub name: &'static str,
    /// What it is.
    pub summary: &'static str,
    /// Its default parameters.
    pub defaults: CcConfig,
    /// Its named presets.
    pub presets: &'static [Preset],
    /// Parameters of its optional tables ([`DescribeCc::optional_params`]).
    pub optional: Vec<(String, String)>,
}

impl CcEntry {
    fn of<C: DescribeCc>(defaults: CcConfig) -> CcEntry {
        CcEntry {
            name: C::NAME,
            summary: C::SUMMARY,
            defaults,
            presets: C::presets(),
            optional: C::optional_params(),
        }
    }
}

/// A controller's configuration as a table: its `name`, then its parameters.
#[derive(Serialize)]
struct Tagged<'a, C: Serialize> {
    name: &'static str,
    #[serde(flatten)]
    params: &'a C,
}

impl<'de> Deserialize<'de> for CcConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        bfcsim_core::tagged::deserialize(d)
    }
}

impl CcConfig {
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
}
