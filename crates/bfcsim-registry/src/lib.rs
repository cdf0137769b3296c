//! The schemes a run can choose by the `[flow_control]` section's `kind`: one line each in the `schemes!` list
//! below (layer 3½ of those `bfcsim_core` lists: above the schemes, below the engine). Each is a type with its
//! hooks ([`bfcsim_schemes::fabric::Scheme`]) and its descriptor ([`Describe`]: kind, parameters, checks,
//! presets, counts, report), in `bfcsim-schemes` or in a crate of its own (`trim-tail`, the developer guide's
//! worked example, is `bfcsim-trim-tail`). From the list follow the [`FlowControl`] configuration and its
//! parsing, naming and checks, the catalog `bfcsim schemes` prints, and the [`AnyScheme`] enum that holds the
//! running scheme and dispatches its hooks statically.
//!
//! The engine never names a scheme: it runs code of its own over the running scheme's concrete type through
//! [`AnyScheme::with_mut`] ([`OnScheme`]), so that its event loop is compiled for each scheme and the hooks are
//! called directly.

use std::any::Any;

use bfcsim_core::{PortId, Time};
use bfcsim_schemes::fabric::{
    Describe, HopStats, NoParams, PauseRecord, Plain, Preset, QueueLeft, Scheme, SchemeReport,
    Setup, SwitchFacts, SwitchHardware, SwitchOps, SwitchSide,
};
use bfcsim_schemes::flow_control::aquarius::Aquarius;
use bfcsim_schemes::flow_control::bfc::Bfc;
use bfcsim_schemes::flow_control::pfc::Pfc;
use bfcsim_schemes::receiver_driven::expresspass::ExpressPass;
use bfcsim_schemes::receiver_driven::homa::Homa;
use bfcsim_schemes::receiver_driven::ndp::Ndp;
use bfcsim_schemes::receiver_driven::paydebt::PayDebt;
use bfcsim_schemes::receiver_driven::rccc::Rccc;
use bfcsim_trim_tail::TrimTail;
use serde::{Deserialize, Serialize};

/// Code the engine writes once and runs over the running scheme's own state, its concrete type
/// ([`AnyScheme::with_mut`]): compiled for each scheme, so that the hooks it calls are static.
pub trait OnScheme {
    /// What it returns.
    type Out;
    /// Runs over `scheme`.
    fn run<S: Describe>(self, scheme: &mut S) -> Self::Out;
}

/// [`OnScheme`] over a shared reference ([`AnyScheme::with`]); what it returns may borrow from the scheme.
pub trait OnSchemeRef<'a> {
    /// What it returns.
    type Out;
    /// Runs over `scheme`.
    fn run<S: Describe>(self, scheme: &'a S) -> Self::Out;
}

/// Declares the schemes: the scheme without parameters that runs when `[flow_control]` names none, then one
/// line `Variant => Type` per scheme, where `Type` implements [`Describe`] and `Variant` names its
/// [`FlowControl`] and [`AnyScheme`] variants. `$d` is the `$` token, so that the generated macro can have
/// repetitions of its own.
macro_rules! schemes {
    ($d:tt $none:ident => $plain:ty, $($variant:ident => $side:ty),* $(,)?) => {
        /// The scheme that acts inside the network, at switches and NICs (`[flow_control]`, tagged by `kind`):
        /// per-hop flow control between neighbouring devices (BFC, PFC, Aquarius) or a receiver-driven scheme's
        /// switch and NIC sides (ExpressPass, Homa), with its parameters.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub enum FlowControl {
            /// None: queues only drop.
            #[default]
            $none,
            $(
                #[doc = concat!("[`", stringify!($side), "`] with its parameters.")]
                $variant(<$side as Describe>::Config),
            )*
        }

        impl FlowControl {
            /// The `kind` as experiment files spell it.
            pub fn name(&self) -> &'static str {
                match self {
                    FlowControl::$none => <$plain>::KIND,
                    $(FlowControl::$variant(_) => <$side>::KIND,)*
                }
            }

            /// Checks the parameters against the switch they run on.
            pub fn validate(&self, switch: &SwitchFacts) -> Result<(), String> {
                if *self != FlowControl::$none && !switch.control_priority {
                    return Err(format!(
                        "flow_control.kind = \"{}\" sends PAUSE/RESUME in the strict-priority control queue: set \
                         switch.control_priority = true",
                        self.name()
                    ));
                }
                match self {
                    FlowControl::$none => Ok(()),
                    $(FlowControl::$variant(c) => <$side>::validate(c, switch),)*
                }
            }

            /// Whether runs sample the active flows of every switch port by default
            /// ([`Describe::SAMPLES_ACTIVE_FLOWS`]).
            pub fn samples_active_flows(&self) -> bool {
                match self {
                    FlowControl::$none => <$plain>::SAMPLES_ACTIVE_FLOWS,
                    $(FlowControl::$variant(_) => <$side>::SAMPLES_ACTIVE_FLOWS,)*
                }
            }

            /// Every scheme a run can choose, with its default parameters, in the registry's order.
            pub fn catalog() -> Vec<SchemeEntry> {
                vec![
                    SchemeEntry::of::<$plain>(FlowControl::$none),
                    $(SchemeEntry::of::<$side>(FlowControl::$variant(Default::default())),)*
                ]
            }
        }

        impl bfcsim_core::tagged::Tagged for FlowControl {
            const TAG: &'static str = "kind";
            const VARIANTS: &'static [&'static str] = &[<$plain>::KIND, $(<$side>::KIND),*];
            const DEFAULT: &'static str = <$plain>::KIND;
            fn from_variant<'de, D: serde::Deserializer<'de>>(
                name: &str,
                rest: D,
            ) -> Result<Self, D::Error> {
                if name == <$plain>::KIND {
                    return NoParams::deserialize(rest).map(|_| FlowControl::$none);
                }
                $(
                    if name == <$side>::KIND {
                        return <$side as Describe>::Config::deserialize(rest).map(FlowControl::$variant);
                    }
                )*
                Err(serde::de::Error::unknown_variant(name, Self::VARIANTS))
            }
        }

        impl Serialize for FlowControl {
            /// As a table whose first key is `kind`, then the parameters.
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    FlowControl::$none => Tagged { kind: <$plain>::KIND, params: &NoParams {} }.serialize(s),
                    $(FlowControl::$variant(c) => Tagged { kind: <$side>::KIND, params: c }.serialize(s),)*
                }
            }
        }

        /// The running scheme and its state, matched to dispatch each hook statically.
        // An explicit tag byte: each of the hooks' several calls per packet-hop reads it and jumps, where the
        // default layout hid the tag in a niche of one variant's fields and decoded it at every call.
        #[repr(u8)]
        pub enum AnyScheme {
            /// The scheme without parameters.
            $none($plain),
            $(
                #[doc = concat!("[`", stringify!($side), "`] and its state.")]
                $variant($side),
            )*
        }

        impl AnyScheme {
            /// Which queue a data packet leaving a switch port left ([`Describe::QUEUE_LEFT`]).
            pub fn queue_left(&self) -> QueueLeft {
                match self {
                    AnyScheme::$none(_) => <$plain>::QUEUE_LEFT,
                    $(AnyScheme::$variant(_) => <$side>::QUEUE_LEFT,)*
                }
            }

            /// Builds the configured scheme on `fab`, whose network and congestion control exist.
            pub fn new(config: &FlowControl, fab: &mut impl Setup) -> Result<AnyScheme, String> {
                Ok(match config {
                    FlowControl::$none => AnyScheme::$none(<$plain as Describe>::new(&NoParams {}, fab)?),
                    $(FlowControl::$variant(c) => AnyScheme::$variant(<$side as Describe>::new(c, fab)?),)*
                })
            }

            /// Every pause and resume frame the shards' ports received ([`Describe::pause_records`]).
            pub fn pause_records(schemes: &[&AnyScheme]) -> Option<Vec<PauseRecord>> {
                match schemes.first()? {
                    AnyScheme::$none(_) => pause_records_of::<$plain>(schemes),
                    $(AnyScheme::$variant(_) => pause_records_of::<$side>(schemes),)*
                }
            }

            /// The run's report of the scheme the shards run, their counts added up.
            pub fn report(schemes: &[&AnyScheme]) -> Option<SchemeReport> {
                match schemes.first()? {
                    AnyScheme::$none(_) => report_of::<$plain>(schemes),
                    $(AnyScheme::$variant(_) => report_of::<$side>(schemes),)*
                }
            }

            /// Runs `code` over the running scheme's own state, its concrete type.
            #[inline]
            pub fn with_mut<V: OnScheme>(&mut self, code: V) -> V::Out {
                match self {
                    AnyScheme::$none(s) => code.run(s),
                    $(AnyScheme::$variant(s) => code.run(s),)*
                }
            }

            /// Runs `code` over the running scheme's own state, its concrete type, by shared reference.
            #[inline]
            pub fn with<'a, V: OnSchemeRef<'a>>(&'a self, code: V) -> V::Out {
                match self {
                    AnyScheme::$none(s) => code.run(s),
                    $(AnyScheme::$variant(s) => code.run(s),)*
                }
            }
        }

        /// Runs `$body` with `$x` bound to the running scheme's own state, its concrete type: code written once
        /// and compiled for each scheme.
        macro_rules! with_scheme {
            ($s:expr, |$x:ident| $body:expr) => {
                match $s {
                    AnyScheme::$none($x) => $body,
                    $(AnyScheme::$variant($x) => $body,)*
                }
            };
        }
    };
}

schemes! { $
    None => Plain,
    Bfc => Bfc,
    Pfc => Pfc,
    ExpressPass => ExpressPass,
    Homa => Homa,
    Ndp => Ndp,
    PayDebt => PayDebt,
    Aquarius => Aquarius,
    TrimTail => TrimTail,
    Rccc => Rccc,
}

impl<'de> Deserialize<'de> for FlowControl {
    /// From a table tagged by `kind` (its first key, so that errors keep their line).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        bfcsim_core::tagged::deserialize(d)
    }
}

/// A scheme's configuration as a table: its `kind`, then its parameters.
#[derive(Serialize)]
struct Tagged<'a, C: Serialize> {
    kind: &'static str,
    #[serde(flatten)]
    params: &'a C,
}

/// One scheme of the registry, for `bfcsim schemes` and the presets.
pub struct SchemeEntry {
    /// Its `kind`.
    pub kind: &'static str,
    /// What it is.
    pub summary: &'static str,
    /// Its default parameters.
    pub defaults: FlowControl,
    /// Its named presets.
    pub presets: &'static [Preset],
    /// Parameters of its optional tables ([`Describe::optional_params`]).
    pub optional: Vec<(String, String)>,
}

impl SchemeEntry {
    fn of<S: Describe>(defaults: FlowControl) -> SchemeEntry {
        SchemeEntry {
            kind: S::KIND,
            summary: S::SUMMARY,
            defaults,
            presets: S::presets(),
            optional: S::optional_params(),
        }
    }
}

/// [`Describe::report`] of scheme `S` over the shards' counts added up.
fn report_of<S: Describe>(schemes: &[&AnyScheme]) -> Option<SchemeReport> {
    let total = schemes
        .iter()
        .filter_map(|s| s.get::<S>())
        .fold(S::Stats::default(), |all, s| all + s.stats());
    S::report(&total)
}

/// [`Describe::pause_records`] of scheme `S` over the shards.
fn pause_records_of<S: Describe>(schemes: &[&AnyScheme]) -> Option<Vec<PauseRecord>> {
    let shards: Vec<&S> = schemes.iter().filter_map(|s| s.get::<S>()).collect();
    S::pause_records(&shards)
}

impl AnyScheme {
    /// The running scheme's state, if it is of type `S`.
    pub fn get<S: Describe>(&self) -> Option<&S> {
        let any: &dyn Any = with_scheme!(self, |s| s);
        any.downcast_ref::<S>()
    }

    /// Adds the running scheme's end-of-run violations on `fab` to `v` ([`SwitchSide::violations`]).
    pub fn violations<F: SwitchOps>(&self, fab: &F, v: &mut Vec<String>) {
        with_scheme!(self, |s| s.violations(fab, v))
    }

    /// Adds the running scheme's counts to `stats` ([`Scheme::add_stats`]).
    pub fn add_stats(&self, stats: &mut HopStats) {
        with_scheme!(self, |s| s.add_stats(stats))
    }

    /// How long `port`'s link was paused up to now ([`Scheme::link_paused_time`]).
    pub fn link_paused_time<F: SwitchOps>(&self, fab: &F, port: PortId) -> Option<Time> {
        with_scheme!(self, |s| s.link_paused_time(fab, port))
    }

    /// Headers switch `s` recirculated so far ([`Describe::recirculations`]).
    pub fn recirculations(&self, s: usize) -> Option<u64> {
        with_scheme!(self, |x| Describe::recirculations(x, s))
    }

    /// The scheme's own time series at switch `s` ([`Describe::trace`]).
    pub fn trace(&self, s: usize, out: &mut dyn FnMut(&'static str, Option<u32>, f64)) {
        with_scheme!(self, |x| Describe::trace(x, s, out))
    }

    /// Switch `s`'s state in the scheme's hardware design ([`Describe::hardware`]).
    pub fn hardware(&self, s: usize) -> Option<SwitchHardware> {
        with_scheme!(self, |x| Describe::hardware(x, s))
    }
}
