//! NDP on the fabric: the hooks that carry out [`super`]'s switch, receiver and sender.

use bfcsim_core::{FlowId, PacketId, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};

use super::{BOUNCE, Credit, NdpConfig, NdpStats, PULL, PullPacer};
use crate::cc::nic::loss_notice;
use crate::fabric::{
    Describe, Entry, NicOps, NicSide, Preset, Receiving, Scheme, SchemeReport, Setup, SwitchFacts,
    SwitchOps, SwitchSide,
};
use crate::flow_control::trimming::{Trimmed, queue_header, trim_enqueue};
use crate::transport::Recovery;

/// NDP's state in one shard of a run.
pub struct Ndp {
    cfg: NdpConfig,
    /// Packets a new flow sends before its first PULL.
    initial_packets: u64,
    /// Bytes a switch's control queue holds.
    header_queue: u64,
    /// Bytes of a PULL.
    control_size: u32,
    /// Each running flow's sender side, by its slot.
    senders: Vec<SenderSide>,
    /// Each host's PULL pacer and its spacing, by host index.
    pacers: Vec<(PullPacer, Time)>,
    /// PULLs sent for each flow so far, by flow id (the count each PULL carries).
    pulls: Vec<u32>,
    stats: NdpStats,
}

/// A running flow's sender side.
#[derive(Clone, Copy, Default)]
struct SenderSide {
    /// What it may send.
    credit: Credit,
    /// The end of the highest byte it sent: below it, the sender is going back after a timeout.
    high: u64,
}

impl Ndp {
    /// Header `e` found its control queue full: it turns round as a [`BOUNCE`] to its flow's source, through
    /// that switch's control queue toward the source (htsim sends it on at once, along its reverse path).
    fn bounce<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let src = fab.flow(e.p.flow).src_host;
        let p = fab.packet_mut(e.pkt);
        p.kind = BOUNCE;
        p.dst_host = src;
        let back = fab.reroute(e);
        fab.admit(&back, 0)?;
        fab.push(&back, 0);
        self.stats.bounces += 1;
        fab.kick(self, back.egress);
        Ok(())
    }

    /// Host `h`'s pacer: sends the PULL due now, if any, and comes back when the next is.
    fn pace(&mut self, fab: &mut impl NicOps, h: u32) {
        let now = fab.now();
        let (pacer, spacing) = &mut self.pacers[h as usize];
        let (due, again) = pacer.poll(now, *spacing);
        if let Some(id) = due
            && !matches!(fab.receiver(id), Receiving::Complete)
        {
            let n = &mut self.pulls[id.idx()];
            *n += 1;
            self.stats.pulls += 1;
            let pkt = fab.new_control(id, true, PULL, (u64::from(*n), 0), self.control_size);
            fab.send_control(self, h, pkt);
        }
        if let Some(at) = again {
            let port = fab.host_port(h);
            fab.arm_timer(port, at);
        }
    }
}

impl SwitchSide for Ndp {
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let c = &self.cfg;
        let Trimmed::Header { cut } = trim_enqueue(fab, e, c.queue_packets, c.header)? else {
            return Ok(());
        };
        let size = if cut { c.header } else { e.p.size };
        if fab.queues(e.out_sp).queue_bytes(0) + u64::from(size) <= self.header_queue {
            return queue_header(fab, e, cut, c.header);
        }
        if !c.return_to_sender {
            self.stats.header_drops += 1;
            return Err(DropReason::HeaderQueueFull);
        }
        let header = if cut { fab.trim(e, c.header) } else { *e };
        self.bounce(fab, &header)
    }
}

impl NicSide for Ndp {
    fn flow_started<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _id: FlowId, slot: usize) -> u32 {
        if self.senders.len() <= slot {
            self.senders.resize(slot + 1, SenderSide::default());
        }
        self.senders[slot] = SenderSide::default();
        0
    }

    /// The first window, then a packet per PULL; after a retransmission timeout (the sender going back below
    /// the highest byte it sent), what it had sent goes again at once, as the PULLs a lost window would have
    /// earned can no longer come.
    #[inline]
    fn may_send<F: NicOps>(&mut self, fab: &mut F, _h: u32, _id: FlowId, slot: usize) -> bool {
        let s = self.senders[slot];
        s.credit.may_send(self.initial_packets) || fab.sender(slot).snd_nxt() < s.high
    }

    #[inline]
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, _h: u32, slot: usize, pkt: PacketId) {
        let p = fab.packet(pkt);
        let s = &mut self.senders[slot];
        s.credit.sent += 1;
        s.high = s.high.max(p.seq + u64::from(p.payload));
    }

    /// Each data packet that leaves the flow unfinished asks for the next; the one that completes it
    /// releases the PULLs still waiting.
    fn data_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet, held: u64) {
        let pacer = &mut self.pacers[h as usize].0;
        if held < fab.flow(p.flow).spec.size.0 {
            pacer.push(p.flow);
            self.pace(fab, h);
        } else {
            pacer.release(p.flow);
        }
    }

    /// The payload is gone: a NACK asks for it at once, and a PULL lets the sender resend it.
    fn header_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        self.stats.header_nacks += 1;
        fab.reply(self, h, p, PacketKind::NACK, (p.seq, 0));
        self.pacers[h as usize].0.push(p.flow);
        self.pace(fab, h);
    }

    /// An ACK or a header's NACK: the receiver saw the packet, and owes the sender a PULL for it.
    #[inline]
    fn reply_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, slot: usize, _p: &Packet) {
        self.senders[slot].credit.answered += 1;
    }

    /// A PULL: one more packet may go. A returned header: its segment is resent, after a PULL unless none can
    /// come.
    fn packet_arrived<F: NicOps>(&mut self, fab: &mut F, _h: u32, p: &Packet) {
        let Some(slot) = fab.flow_slot(p.flow) else {
            return; // the flow completed: a late PULL or return
        };
        let credit = &mut self.senders[slot].credit;
        if p.kind == BOUNCE {
            self.stats.bounces_heard += 1;
            self.stats.bounce_resends += u64::from(credit.returned());
            loss_notice(fab, self, p);
            return;
        }
        debug_assert_eq!(p.kind, PULL, "NDP's control packets are PULLs and returns");
        self.stats.pulls_heard += 1;
        credit.pulled(p.seq);
        fab.make_ready(self, p.flow);
    }

    /// The pacer's next PULL is due.
    fn nic_timer<F: NicOps>(&mut self, fab: &mut F, h: u32) {
        self.pace(fab, h);
    }
}

impl Scheme for Ndp {}

impl Describe for Ndp {
    const KIND: &'static str = "ndp";
    const SUMMARY: &'static str = "NDP (Handley et al., SIGCOMM 2017): trimming switches, receivers that pace a PULL per packet, senders that send a window then one packet per PULL";
    type Config = NdpConfig;
    type Stats = NdpStats;

    /// Headers ride the control queue with the replies and PULLs.
    fn validate(cfg: &NdpConfig, switch: &SwitchFacts) -> Result<(), String> {
        if !switch.ack_priority {
            return Err(
                "flow_control.kind = \"ndp\" forwards headers and PULLs in the control queue: leave \
                 switch.ack_priority = true"
                    .into(),
            );
        }
        cfg.validate()
    }

    /// Each host's PULL spacing is a full packet's serialization at its link rate.
    fn new(cfg: &NdpConfig, fab: &mut impl Setup) -> Result<Ndp, String> {
        if fab.transport().recovery != Recovery::Selective {
            return Err(
                "flow_control.kind = \"ndp\" resends the trimmed packets a NACK names, one per PULL: set \
                 nic.recovery = \"selective\""
                    .into(),
            );
        }
        let ctx = fab.flow_context();
        let packet = fab.payload() + fab.header();
        let pacers = (0..fab.host_count() as u32)
            .map(|h| {
                let rate = fab.link_rate(fab.host_port(h));
                (
                    PullPacer::default(),
                    rate.tx_time(bfcsim_core::Bytes(packet as u64)),
                )
            })
            .collect();
        Ok(Ndp {
            header_queue: cfg.header_queue_bytes(packet),
            initial_packets: cfg
                .initial_window
                .resolve(&ctx)
                .div_ceil(u64::from(ctx.mss)),
            cfg: cfg.clone(),
            control_size: fab.ack_size(),
            senders: Vec::new(),
            pacers,
            pulls: vec![0; fab.flows().len()],
            stats: NdpStats::default(),
        })
    }

    fn presets() -> &'static [Preset] {
        &[Preset {
            name: "ndp",
            summary: "NDP: 8-packet trimming queues, a PULL per packet paced at the receiver's link rate, one BDP \
                      unscheduled, return to sender, packet spraying, selective repeat",
            config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"ndp\"\n[switch]\nload_balancing = \"spray\"\n\
                     [nic]\nrecovery = \"selective\"\nnack = false\n",
        }]
    }

    fn stats(&self) -> NdpStats {
        self.stats
    }

    fn report(stats: &NdpStats) -> Option<SchemeReport> {
        Some(SchemeReport::new("ndp", "NDP", false, *stats))
    }
}
