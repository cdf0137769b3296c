//! The schemes a run can choose by the `[flow_control]` section's `kind`: one line each in the `schemes!` list
//! below, from which the [`AnyScheme`] enum, its construction and its static dispatch of every hook follow.
//! The schemes themselves live in `bfcsim-schemes`, written against [`bfcsim_schemes::fabric`].

use bfcsim_core::PacketId;
use bfcsim_net::pfc::{PfcIngress, PfcRecord, PortPause};
use bfcsim_schemes::aquarius::Aquarius;
use bfcsim_schemes::bfc::{Bfc, BfcSwitch};
use bfcsim_schemes::expresspass::ExpressPass;
use bfcsim_schemes::fabric::{
    Entry, HopStats, NicOps, NicSide, Plain, Scheme, Setup, SwitchOps, SwitchSide,
};
use bfcsim_schemes::homa::Homa;
use bfcsim_schemes::pfc::Pfc;

use super::*;

/// Declares the schemes: each line is `config variant => AnyScheme variant(state type)`, where the
/// configuration variant is [`FlowControl`]'s and the state type implements [`Scheme`] and has a constructor
/// `new(&config, &mut impl Setup) -> Result<Self, String>` (`Plain`'s takes no configuration). Generates the
/// enum, [`AnyScheme::new`] and the `dispatch!` macro that calls a hook of the running scheme (`$d` is the `$`
/// token, so that the generated macro can have repetitions of its own).
macro_rules! schemes {
    ($d:tt $($config:ident $(($cfg:ident))? => $variant:ident($side:ty)),* $(,)?) => {
        /// The running scheme and its state, matched to dispatch each hook statically.
        // An explicit tag byte: each of the hooks' several calls per packet-hop reads it and jumps, where the
        // default layout hid the tag in a niche of one variant's fields and decoded it at every call.
        #[repr(u8)]
        pub(crate) enum AnyScheme {
            $(
                #[allow(missing_docs)]
                $variant($side),
            )*
        }

        impl AnyScheme {
            /// Builds the configured scheme on `fab`, whose network and congestion control exist.
            pub(super) fn new(config: &FlowControl, fab: &mut impl Setup) -> Result<AnyScheme, String> {
                Ok(match config {
                    $(FlowControl::$config $(($cfg))? => AnyScheme::$variant(<$side>::new($($cfg,)? fab)?),)*
                })
            }
        }

        /// Runs `$body` with `$x` bound to the running scheme's own state, its concrete type: code written once
        /// and compiled for each scheme.
        macro_rules! with_scheme {
            ($s:expr, |$x:ident| $body:expr) => {
                match $s {
                    $(AnyScheme::$variant($x) => $body,)*
                }
            };
        }

        /// Calls hook `$method(args...)` of the running scheme.
        macro_rules! dispatch {
            ($s:expr, $method:ident($d($arg:expr),*)) => {
                match $s {
                    $(AnyScheme::$variant(x) => x.$method($d($arg),*),)*
                }
            };
        }
    };
}

schemes! { $
    None => Plain(Plain),
    Bfc(c) => Bfc(Bfc),
    Pfc(c) => Pfc(Pfc),
    ExpressPass(c) => ExpressPass(ExpressPass),
    Homa(c) => Homa(Homa),
    Aquarius(c) => Aquarius(Aquarius),
}

impl AnyScheme {
    /// Processes every event of `fab` due up to and including `end`: the event loop compiled for the running
    /// scheme, so that its hooks are called directly (and those of a scheme without them vanish).
    pub(super) fn run_window(&mut self, fab: &mut Fabric, end: Time) {
        with_scheme!(self, |s| fab.run_window(s, end))
    }
}

impl SwitchSide for AnyScheme {
    #[inline(always)]
    fn route<F: SwitchOps>(&self, fab: &F, s: usize, p: &Packet) -> Option<PortId> {
        dispatch!(self, route(fab, s, p))
    }
    #[inline(always)]
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        dispatch!(self, enqueue(fab, e))
    }
    #[inline(always)]
    fn dequeued<F: SwitchOps>(
        &mut self,
        fab: &mut F,
        sp: u32,
        pkt: PacketId,
        queue: usize,
        data: bool,
    ) {
        dispatch!(self, dequeued(fab, sp, pkt, queue, data))
    }
    fn switch_frame<F: SwitchOps>(&mut self, fab: &mut F, sp: u32, pkt: PacketId) {
        dispatch!(self, switch_frame(fab, sp, pkt))
    }
    fn switch_timer<F: SwitchOps>(&mut self, fab: &mut F, sp: u32) {
        dispatch!(self, switch_timer(fab, sp))
    }
    fn violations<F: SwitchOps>(&self, fab: &F, v: &mut Vec<String>) {
        dispatch!(self, violations(fab, v))
    }
}

impl NicSide for AnyScheme {
    #[inline(always)]
    fn flow_started<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> u32 {
        dispatch!(self, flow_started(fab, h, id, slot))
    }
    #[inline(always)]
    fn nic_poll<F: NicOps>(&mut self, fab: &mut F, h: u32) -> Option<PacketId> {
        dispatch!(self, nic_poll(fab, h))
    }
    #[inline(always)]
    fn nic_blocked<F: NicOps>(&self, fab: &F, h: u32) -> bool {
        dispatch!(self, nic_blocked(fab, h))
    }
    #[inline(always)]
    fn may_send<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> bool {
        dispatch!(self, may_send(fab, h, id, slot))
    }
    #[inline(always)]
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize, pkt: PacketId) {
        dispatch!(self, data_sent(fab, h, slot, pkt))
    }
    #[inline(always)]
    fn data_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet, held: u64) {
        dispatch!(self, data_arrived(fab, h, p, held))
    }
    fn packet_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        dispatch!(self, packet_arrived(fab, h, p))
    }
    #[inline(always)]
    fn flow_finished<F: NicOps>(&mut self, fab: &mut F, h: u32, nic_q: u32) {
        dispatch!(self, flow_finished(fab, h, nic_q))
    }
    #[inline(always)]
    fn echo(&self, data: &Packet, reply: &mut Packet) {
        dispatch!(self, echo(data, reply))
    }
    #[inline(always)]
    fn reply_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize, p: &Packet) {
        dispatch!(self, reply_arrived(fab, h, slot, p))
    }
    fn header_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        dispatch!(self, header_arrived(fab, h, p))
    }
    fn nic_frame<F: NicOps>(&mut self, fab: &mut F, h: u32, pkt: PacketId) {
        dispatch!(self, nic_frame(fab, h, pkt))
    }
    fn nic_timer<F: NicOps>(&mut self, fab: &mut F, h: u32) {
        dispatch!(self, nic_timer(fab, h))
    }
    fn census(&self, count: &mut impl FnMut(PacketId)) {
        dispatch!(self, census(count))
    }
}

impl Scheme for AnyScheme {
    fn add_stats(&self, stats: &mut HopStats) {
        dispatch!(self, add_stats(stats))
    }
    fn link_paused_time<F: SwitchOps>(&self, fab: &F, port: PortId) -> Option<Time> {
        dispatch!(self, link_paused_time(fab, port))
    }
    fn token_timer<F: SwitchOps + NicOps>(&mut self, fab: &mut F, token: u64) {
        dispatch!(self, token_timer(fab, token))
    }
}

/// What the reports read of the schemes that keep more than counts.
impl AnyScheme {
    /// Every PFC frame received so far, in event order (HPCC's `pfc.txt`); `None` unless PFC runs.
    pub(crate) fn pfc_records(&self) -> Option<&[PfcRecord]> {
        match self {
            AnyScheme::Pfc(p) => Some(p.records()),
            _ => None,
        }
    }

    /// The pause state and paused time of `port`'s transmitter under PFC.
    pub(crate) fn pfc_port(&self, port: PortId) -> Option<&PortPause> {
        match self {
            AnyScheme::Pfc(p) => Some(p.port(port)),
            _ => None,
        }
    }

    /// Switch `s`'s PFC ingress accounting, when PFC runs.
    pub(crate) fn switch_pfc(&self, s: usize) -> Option<&PfcIngress> {
        match self {
            AnyScheme::Pfc(p) => Some(p.ingress(s)),
            _ => None,
        }
    }

    /// The BFC state of switch `s`, when BFC runs.
    pub(crate) fn switch_bfc(&self, s: usize) -> Option<&BfcSwitch> {
        match self {
            AnyScheme::Bfc(b) => Some(b.switch(s)),
            _ => None,
        }
    }
}
