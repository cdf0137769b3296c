//! Drop-tail with payload cutting: a switch whose data queue is full cuts an arriving packet's payload and
//! forwards its header at high priority in the control queue instead of dropping it, and the receiver answers a
//! header with a NACK, so the sender learns of the loss within a round trip rather than at a timeout (the idea of
//! CP, Cheng et al., "Catch the Whole Lot in an Action", NSDI 2014, and of NDP's switches, Handley et al.,
//! SIGCOMM 2017; neither paper is in `papers/`). Data packets also carry a bit that ACKs echo back, which the
//! scheme counts: the smallest use of a scheme's own end-to-end field.
//!
//! It is also the worked example of the developer guide (`docs/SCHEMES.md`): a scheme that acts at switches
//! and NICs, in a crate of its own that depends only on `bfcsim-schemes`'s seam (`bfcsim_schemes::fabric`)
//! and its trimming ([`bfcsim_schemes::flow_control::trimming`]), against the fabric's verbs, and is registered
//! with one line in `bfcsim-registry`.
//!
//! - **Switch** ([`SwitchSide::enqueue`]): a data packet joins its class's queue while that queue holds fewer
//!   than `queue_packets` packets; otherwise it is trimmed to `header` bytes ([`SwitchOps::trim`]) and joins the
//!   control queue, unless that already holds `header_packets` headers, when it is dropped
//!   ([`DropReason::HeaderQueueFull`]). Other packets, and data packets no larger than a header (nothing to
//!   cut), are queued as without a scheme.
//! - **Receiver** ([`NicSide::header_arrived`]): a header draws a NACK for its first byte ([`NicOps::reply`]),
//!   which its sender takes as a loss notice for that one segment: selective repeat resends it, go-back-N goes
//!   back to it. Headers overtake the data queued ahead of them, so the NACK cannot be cumulative.
//! - **Echo** ([`NicSide::data_sent`], [`NicSide::echo`], [`NicSide::reply_arrived`]): every data packet leaves
//!   with [`ECHO`] in its `mark`; the receiver copies the bit into its ACK or NACK; the sender counts the replies
//!   that bring it back.

#[doc = include_str!("../../../docs/SCHEMES.md")]
pub mod developer_guide {}

use bfcsim_core::PacketId;
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};
use bfcsim_schemes::fabric::{
    Describe, Entry, NicOps, NicSide, Preset, Scheme, SchemeReport, Setup, SwitchFacts, SwitchOps,
    SwitchSide,
};
use bfcsim_schemes::flow_control::trimming::{trim_tail_enqueue, validate_trimming};
use serde::{Deserialize, Serialize};

/// The bit every data packet carries out and its reply echoes back.
pub const ECHO: u8 = 1;

/// The parameters (`[flow_control] kind = "trim-tail"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrimTailConfig {
    /// Packets a data queue holds before arriving ones are trimmed (NDP's switches: 8).
    pub queue_packets: u32,
    /// Bytes of a trimmed packet's header (NDP: 64).
    pub header: u32,
    /// Headers the control queue holds before further ones are dropped.
    pub header_packets: u32,
}

impl Default for TrimTailConfig {
    fn default() -> Self {
        TrimTailConfig {
            queue_packets: 8,
            header: 64,
            header_packets: 1024,
        }
    }
}

impl TrimTailConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        validate_trimming(self.queue_packets, self.header)
    }
}

/// What the scheme counted in one shard (the fabric counts the trimmed packets and bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TrimTailStats {
    /// Headers dropped at a full control queue.
    pub header_drops: u64,
    /// NACKs receivers sent for headers.
    pub header_nacks: u64,
    /// Replies (ACKs, NACKs) that came back to their sender with the echo bit.
    pub echoes: u64,
}

bfcsim_core::add_fields!(TrimTailStats {
    header_drops,
    header_nacks,
    echoes,
});

impl std::fmt::Display for TrimTailStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} headers dropped at full control queues, {} NACKs for headers, {} replies echoed the bit",
            self.header_drops, self.header_nacks, self.echoes
        )
    }
}

/// The scheme's state in one shard of a run.
pub struct TrimTail {
    cfg: TrimTailConfig,
    stats: TrimTailStats,
}

impl SwitchSide for TrimTail {
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let c = &self.cfg;
        let queued = trim_tail_enqueue(fab, e, (c.queue_packets, c.header, c.header_packets));
        self.stats.header_drops += u64::from(queued == Err(DropReason::HeaderQueueFull));
        queued
    }
}

impl NicSide for TrimTail {
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, _h: u32, _slot: usize, pkt: PacketId) {
        fab.packet_mut(pkt).mark = ECHO;
    }

    fn echo(&self, data: &Packet, reply: &mut Packet) {
        reply.mark = data.mark & ECHO;
    }

    fn reply_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _slot: usize, p: &Packet) {
        self.stats.echoes += u64::from(p.mark & ECHO != 0);
    }

    /// The payload is gone: the sender is asked for it again at once.
    fn header_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        self.stats.header_nacks += 1;
        fab.reply(self, h, p, PacketKind::NACK, (p.seq, 0));
    }
}

impl Scheme for TrimTail {}

impl Describe for TrimTail {
    const KIND: &'static str = "trim-tail";
    const SUMMARY: &'static str = "drop-tail that cuts the payload of a packet finding its queue full and forwards the header (CP, NDP's switches)";
    type Config = TrimTailConfig;
    type Stats = TrimTailStats;

    /// Headers ride the control queue.
    fn validate(cfg: &TrimTailConfig, switch: &SwitchFacts) -> Result<(), String> {
        if !switch.ack_priority {
            return Err(
                "flow_control.kind = \"trim-tail\" forwards headers in the control queue with the ACKs: leave \
                 switch.ack_priority = true"
                    .into(),
            );
        }
        cfg.validate()
    }

    fn new(cfg: &TrimTailConfig, _fab: &mut impl Setup) -> Result<TrimTail, String> {
        Ok(TrimTail {
            cfg: cfg.clone(),
            stats: TrimTailStats::default(),
        })
    }

    fn presets() -> &'static [Preset] {
        &[Preset {
            name: "dctcp-trim",
            summary: "DCTCP with selective repeat over drop-tail switches that cut payloads instead of dropping \
                      (8-packet queues, 64 B headers)",
            config: "[cc]\nname = \"dctcp\"\n[nic]\nrecovery = \"selective\"\n[flow_control]\nkind = \"trim-tail\"\n",
        }]
    }

    fn stats(&self) -> TrimTailStats {
        self.stats
    }

    fn report(stats: &TrimTailStats) -> Option<SchemeReport> {
        Some(SchemeReport::new("trim_tail", "trim-tail", false, *stats))
    }
}
