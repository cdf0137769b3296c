//! RCCC on the fabric: the hooks that carry out [`super`]'s switches, receivers and senders.

use bfcsim_core::{FlowId, PacketId, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};

use super::{Credit, CreditPacer, Demand, PULL, Pacing, RTS, RcccConfig, RcccStats, Wanted};
use crate::cc::CongestionControl;
use crate::fabric::{
    Describe, Entry, NicOps, NicSide, Preset, Scheme, SchemeReport, Setup, SwitchFacts, SwitchOps,
    SwitchSide,
};
use crate::flow_control::trimming::trim_tail_enqueue;

/// RCCC's state in one shard of a run.
pub struct Rccc {
    cfg: RcccConfig,
    /// The credit unit, in bytes.
    quantum: u64,
    /// The most credit a sender holds, in bytes.
    max_credit: u64,
    /// Bytes of a data packet's header at the NIC, and of a PULL or an RTS.
    header: u32,
    control_size: u32,
    /// Payload bytes per full packet.
    mss: u64,
    /// The fabric's base RTT: an RTS goes at most once per it.
    base_rtt: Time,
    /// Each running flow's credit, by its sender's slot.
    senders: Vec<Credit>,
    /// Each flow's demand at its receiver, by flow id.
    demands: Vec<Demand>,
    /// Each host's PULL pacer and its pacing, by host index.
    pacers: Vec<(CreditPacer, Pacing)>,
    /// The RTS due at each host's next timer: the flow and the target it carries.
    rts_due: Vec<Vec<(FlowId, u64)>>,
    stats: RcccStats,
}

impl Rccc {
    /// The pull target of the flow in `slot` of host `h` as it sends now.
    fn pull_target<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize) -> u64 {
        let s = fab.sender(slot);
        let wire = |payload: u64| payload + payload.div_ceil(self.mss) * u64::from(self.header);
        let (backlog, new) = (wire(s.to_send()), wire(s.remaining()));
        let window = fab.controller(slot).0.window();
        let wanted = Wanted {
            backlog,
            new,
            window,
            packet: self.mss + u64::from(self.header),
            sources: fab.ready_flows(h) as u64,
        };
        self.senders[slot].pull_target(wanted, self.quantum)
    }

    /// Host `h`'s pacer: sends the PULL due now, if any, and comes back when the next may go.
    fn pace(&mut self, fab: &mut impl NicOps, h: u32) {
        let now = fab.now();
        let (pacer, pacing) = &mut self.pacers[h as usize];
        let (due, again) = pacer.poll(now, &mut self.demands, pacing);
        if let Some(g) = due {
            self.stats.pulls += 1;
            self.stats.slow_pulls += u64::from(g.slow);
            let pkt = fab.new_control(g.flow, true, PULL, (g.pull, 0), self.control_size);
            fab.send_control(self, h, pkt);
        }
        if let Some(at) = again {
            let port = fab.host_port(h);
            fab.arm_timer(port, at);
        }
    }

    /// Sends, from host `h`'s next timer, an RTS for flow `id` carrying `target` if one may go now.
    fn ask<F: NicOps>(&mut self, fab: &mut F, (h, slot): (u32, usize), id: FlowId, target: u64) {
        let now = fab.now();
        if self.senders[slot].rts_due(now, self.base_rtt) {
            self.rts_due[h as usize].push((id, target));
            let port = fab.host_port(h);
            fab.arm_timer(port, now);
        }
    }

    /// The RTS of flow `id` at host `h`, carrying `target`, if the flow still runs.
    fn send_rts<F: NicOps>(&mut self, fab: &mut F, h: u32, (id, target): (FlowId, u64)) {
        if fab.flow_slot(id).is_none() {
            return;
        }
        self.stats.rts += 1;
        let aux = u32::try_from(target).unwrap_or(u32::MAX);
        let pkt = fab.new_control(id, false, RTS, (0, aux), self.control_size);
        fab.send_control(self, h, pkt);
    }
}

impl SwitchSide for Rccc {
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let c = &self.cfg;
        let queued = trim_tail_enqueue(fab, e, (c.queue_packets, c.header, c.header_packets));
        self.stats.header_drops += u64::from(queued == Err(DropReason::HeaderQueueFull));
        queued
    }
}

impl NicSide for Rccc {
    fn flow_started<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _id: FlowId, slot: usize) -> u32 {
        if self.senders.len() <= slot {
            self.senders.resize(slot + 1, Credit::new(0));
        }
        self.senders[slot] = Credit::new(self.max_credit);
        0
    }

    /// While the flow holds credit. Without it, under [`RcccConfig::stall_rts`], a flow with data to send
    /// and nothing in flight asks for its whole target with an RTS.
    #[inline]
    fn may_send<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> bool {
        if self.senders[slot].may_send() {
            return true;
        }
        let s = fab.sender(slot);
        if self.cfg.stall_rts && s.has_unsent() && s.in_flight() == 0 {
            let target = self.pull_target(fab, h, slot);
            self.ask(fab, (h, slot), id, target);
        }
        false
    }

    /// The timer ends speculation; a flow that had packets to resend already, or has no credit, sends an RTS
    /// with its last packet's target.
    fn timed_out<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) {
        let c = &mut self.senders[slot];
        c.stop_speculating();
        if fab.sender(slot).resending() || !c.may_send() {
            let target = c.last_target;
            self.ask(fab, (h, slot), id, target);
        }
    }

    /// The receiver answered: the speculative credit left goes.
    #[inline]
    fn reply_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, slot: usize, _p: &Packet) {
        self.senders[slot].stop_speculating();
    }

    /// The packet spends its bytes of credit and carries the flow's pull target.
    #[inline]
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize, pkt: PacketId) {
        let size = fab.packet(pkt).size;
        self.senders[slot].spend(size);
        let target = self.pull_target(fab, h, slot);
        self.senders[slot].last_target = target;
        fab.packet_mut(pkt).aux = u32::try_from(target).unwrap_or(u32::MAX);
    }

    fn data_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet, _held: u64) {
        let pacer = &mut self.pacers[h as usize].0;
        pacer.target(&mut self.demands[p.flow.idx()], p.flow, u64::from(p.aux));
        self.pace(fab, h);
    }

    /// The payload is gone: a NACK asks for it at once, and the flow wants credit to resend it.
    fn header_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        self.stats.header_nacks += 1;
        fab.reply(self, h, p, PacketKind::NACK, (p.seq, 0));
        let pacer = &mut self.pacers[h as usize].0;
        pacer.trimmed(&mut self.demands[p.flow.idx()], p.flow, u64::from(p.aux));
        self.pace(fab, h);
    }

    /// A PULL at a sender: its credit grows. An RTS at a receiver: its flow's target.
    fn packet_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        if p.kind == RTS {
            let pacer = &mut self.pacers[h as usize].0;
            pacer.trimmed(&mut self.demands[p.flow.idx()], p.flow, u64::from(p.aux));
            self.pace(fab, h);
            return;
        }
        debug_assert_eq!(p.kind, PULL, "RCCC's control packets are PULLs and RTS");
        let Some(slot) = fab.flow_slot(p.flow) else {
            return; // the flow completed: a late or slow PULL
        };
        self.stats.pulls_heard += 1;
        self.senders[slot].pulled(p.seq, self.quantum);
        fab.make_ready(self, p.flow);
    }

    /// The pacer's next PULL, or an RTS, is due.
    fn nic_timer<F: NicOps>(&mut self, fab: &mut F, h: u32) {
        for rts in std::mem::take(&mut self.rts_due[h as usize]) {
            self.send_rts(fab, h, rts);
        }
        self.pace(fab, h);
    }
}

impl Scheme for Rccc {}

impl Describe for Rccc {
    const KIND: &'static str = "rccc";
    const SUMMARY: &'static str = "RCCC (Ultra Ethernet 1.0): receivers pace credit to their senders at 0.99 of their link rate, senders send on credit (speculatively for the first 1.5 BDPs), trimming switches; uet-htsim's constants";
    type Config = RcccConfig;
    type Stats = RcccStats;

    /// Headers ride the control queue with the replies and PULLs.
    fn validate(cfg: &RcccConfig, switch: &SwitchFacts) -> Result<(), String> {
        if !switch.ack_priority {
            return Err(
                "flow_control.kind = \"rccc\" forwards headers and PULLs in the control queue: leave \
                 switch.ack_priority = true"
                    .into(),
            );
        }
        cfg.validate()
    }

    /// Each host's pacing is its link's.
    fn new(cfg: &RcccConfig, fab: &mut impl Setup) -> Result<Rccc, String> {
        if !fab.transport().recovery.selective() {
            return Err(
                "flow_control.kind = \"rccc\" resends the trimmed packets a NACK names: set nic.recovery = \
                 \"uet\" (or \"selective\")"
                    .into(),
            );
        }
        let ctx = fab.flow_context();
        let max_credit = (cfg.max_credit * ctx.bdp.0 as f64) as u64;
        let pacers = (0..fab.host_count() as u32)
            .map(|h| {
                let rate = fab.link_rate(fab.host_port(h));
                let pacing = Pacing::new(
                    cfg.credit_per_pull.0,
                    cfg.quantum.0,
                    rate.0,
                    cfg.pull_rate,
                    max_credit,
                );
                (CreditPacer::default(), pacing)
            })
            .collect();
        Ok(Rccc {
            cfg: cfg.clone(),
            quantum: cfg.quantum.0,
            max_credit,
            header: fab.header(),
            control_size: fab.ack_size(),
            mss: u64::from(ctx.mss),
            base_rtt: ctx.base_rtt,
            senders: Vec::new(),
            demands: vec![Demand::default(); fab.flows().len()],
            pacers,
            rts_due: vec![Vec::new(); fab.host_count()],
            stats: RcccStats::default(),
        })
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "uet-rccc",
                summary: "Ultra Ethernet RCCC alone over REPS (uet-htsim's defaults): receivers pace credit, \
                          senders have no window; trimming past 150 packets, per-packet SACKs",
                config: UET_RCCC,
            },
            Preset {
                name: "uet-nscc-rccc",
                summary: "Ultra Ethernet NSCC's window and RCCC's credit together over REPS (uet-htsim's \
                          -sender_cc_algo nscc -receiver_cc)",
                config: UET_NSCC_RCCC,
            },
        ]
    }

    fn stats(&self) -> RcccStats {
        self.stats
    }

    fn report(stats: &RcccStats) -> Option<SchemeReport> {
        Some(SchemeReport::new("rccc", "RCCC", false, *stats))
    }
}

/// The switches, NICs and paths of the UEC presets (`uet-nscc`'s): trimming past 150 packets, ECN RED over
/// 20-80% of a 150 KB BDP, per-packet SACKs, a fixed 100 us timer, REPS.
macro_rules! uet_fabric {
    () => {
        "[nic]\nrecovery = \"uet\"\nrto_initial = \"100us\"\nrto_min = \"100us\"\nrto_max = \"100us\"\npaths = \"reps\"\n\
         [flow_control]\nkind = \"rccc\"\n[switch.ecn]\nkmin = \"30KB\"\nkmax = \"120KB\"\npmax = 1.0\n"
    };
}

/// The `uet-rccc` preset: credit alone, no sender window.
const UET_RCCC: &str = concat!("[cc]\nname = \"none\"\n", uet_fabric!());

/// The `uet-nscc-rccc` preset: NSCC's window under RCCC's credit.
const UET_NSCC_RCCC: &str = concat!("[cc]\nname = \"nscc\"\n", uet_fabric!());
