//! PayDebt on the fabric.
//!
//! - **Sender** (§4.2, §4.4): a new flow sends its first BDP unscheduled at line rate, as far as the bound on
//!   unscheduled bytes in flight to its receiver host allows, then one packet per token ([`Tokens`]); packets
//!   carry `token_request`, `debt_request` ([`DebtCounter`]) and the echo of their token's mark. A [`PROBE`]
//!   follows its last new packet (`probe_at_end`); another goes after each `probe_timeout` without a token, debt or
//!   acknowledgement, carrying the number of the last token it received. A token with nothing left to send is wasted.
//! - **Receiver** (§4.1, Fig. 6): each host's [`Receiver`] generates debts and tokens from the data and sends
//!   them through the host's rate limiter at the debt/token share of its link, debts first, tokens round-robin
//!   within each flow's Algorithm 1 window ([`super::window`]). Debts and tokens carry the receiver's next
//!   expected byte: they acknowledge the data as they go (the transport itself acknowledges only whole flows).
//!   A probe names the ranges still missing below its byte, each asked for again by a [`RESEND_TOKEN`] (§4.4:
//!   "the same logic as that of re-ordered data packets"), and on a timeout the tokens lost on the way.
//! - **Switches** (§4.3): data (and probes) in one queue (or, in the eight-queue variant, at the level of their flow's
//!   size or of their token: [`Priorities`]), marked above `K_d` bytes of data at the port; debts and tokens in a
//!   strict-priority queue ahead of it ([`ShapedQueue`]), rate-limited at the debt/token share of the link, admitted
//!   by the shared buffer (never dropped for congestion, §4.1.1), tokens marked above `K_t`. The transport's
//!   acknowledgements (one per flow) ride the switches' control queue, ahead of both and not rate-limited (§5.2 has
//!   them beside the debts and tokens, out of the data queue; behind the rate limiter, Memcached's acknowledgements
//!   alone would exceed its share). Debts and tokens retrace their flow's data path (§4.1.1's symmetric paths), so
//!   they compete for the rate limiters of the links their data crosses.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use bfcsim_core::{Bytes, FlowId, PacketId, PortId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};

use super::receiver::{Arrival, Emit, Receiver};
use super::sender::{DebtCounter, PairBound, Sent, Tokens};
use super::{DEBT, PROBE, PayDebtConfig, PayDebtStats, RESEND_TOKEN, TOKEN, bits};
use crate::cc::WindowSpec;
use crate::fabric::{
    Describe, Entry, NicOps, NicSide, Preset, Receiving, Scheme, SchemeReport, Setup, SwitchFacts,
    SwitchOps, SwitchSide,
};
use crate::receiver_driven::aeolus;
use crate::receiver_driven::priorities::Priorities;
use crate::receiver_driven::shaper::{CreditShaper, ShapedQueue, credit_rate};
use crate::transport::Recovery;

/// PayDebt's state in one shard of a run.
pub struct PayDebt {
    cfg: PayDebtConfig,
    /// The switch ports' debt/token queues and their rate limiters.
    tokens: ShapedQueue,
    /// The switch ports' data queue (the highest of the variant's data levels).
    data_q: usize,
    /// The variant's data levels (`priorities` > 1); none: one data queue.
    prio: Option<Priorities>,
    /// Payload bytes of a full data packet (the MTU of §4.4's `debt_to_receive`).
    mss: u32,
    /// Bytes a flow sends unscheduled.
    unscheduled: u64,
    /// The bound on unscheduled bytes in flight per host pair.
    pair_limit: Option<u64>,
    /// `K_d`, bytes of a data queue.
    k_d: u64,
    /// `K_t`, tokens in a debt/token queue.
    k_t: f64,
    /// Each host's sides, by host index.
    hosts: Vec<HostSide>,
    /// Each running flow's sender side, by its slot (reset when a flow takes the slot).
    senders: Vec<SenderSide>,
    stats: PayDebtStats,
    /// Scratch for the missing ranges a probe reveals.
    gaps: Vec<(u64, u64)>,
}

/// A host: its receiver, its rate limiter, and its senders' shared state.
struct HostSide {
    rx: Receiver,
    shaper: CreditShaper,
    debts: DebtCounter,
    pairs: PairBound,
    /// Flows waiting for the pair bound, by receiver host.
    parked: HashMap<u32, Vec<FlowId>>,
    /// When each sender's probe timer is due, earliest first; an entry is checked against the flow's last word
    /// from its receiver when it comes up.
    probes: BinaryHeap<Reverse<(Time, u32)>>,
}

/// A running flow's sender side.
#[derive(Default)]
struct SenderSide {
    tokens: Tokens,
    size: u64,
    dst: u32,
    /// Bytes of its pair bound the flow holds: taken when it opens, given back as its unscheduled packets are
    /// acknowledged.
    reserved: u64,
    /// Unscheduled packets not yet acknowledged, in sequence order: `(seq, payload)`.
    unacked: VecDeque<(u64, u32)>,
    /// The number of the last token received.
    heard: u32,
    /// The highest byte sent, plus one.
    sent_high: u64,
    /// When the receiver last said anything.
    heard_at: Time,
    /// The probe behind the last new packet went.
    end_probe: bool,
    /// Waiting for the pair bound.
    parked: bool,
    /// The level of its unscheduled packets (the variant's, by the flow's size).
    unscheduled_level: u8,
    /// The level of its scheduled packets: its latest token's.
    level: u8,
    /// The lowest level (largest number) its data has taken, which its probes take, so that a probe arrives
    /// behind all of the flow's data sent before it (§4.4: "the same priority as data packets; therefore, it
    /// will not arrive out-of-order"). Stays 0, a control packet's class, with one data level.
    class: u8,
}

impl PayDebt {
    /// Opens the flow in `slot` of host `h` with what its pair bound allows; false if it allows nothing now.
    fn open(&mut self, h: u32, slot: usize) -> bool {
        let hs = &mut self.hosts[h as usize];
        let s = &mut self.senders[slot];
        let room = hs.pairs.room(s.dst, self.mss, self.pair_limit);
        if room == 0 {
            return false;
        }
        let free = s.tokens.open(room);
        s.reserved = (free * self.mss as u64).min(s.size);
        hs.pairs.take(s.dst, s.reserved);
        true
    }

    /// The acknowledgements in `ack` reached the sender of the flow in `slot` (host `h`): its unscheduled
    /// packets below it give back their share of the pair bound (all of it once the flow is acknowledged), and
    /// flows that waited for the pair may try again.
    fn release(&mut self, fab: &mut impl NicOps, h: u32, slot: usize, ack: u64) {
        let s = &mut self.senders[slot];
        let hs = &mut self.hosts[h as usize];
        let mut freed = 0;
        while let Some(&(seq, len)) = s.unacked.front() {
            if seq + len as u64 > ack {
                break;
            }
            s.unacked.pop_front();
            freed += len as u64;
        }
        if ack >= s.size {
            freed = s.reserved;
        }
        let freed = freed.min(s.reserved);
        if freed == 0 {
            return;
        }
        s.reserved -= freed;
        hs.pairs.give_back(s.dst, freed);
        let Some(waiting) = hs.parked.remove(&s.dst) else {
            return;
        };
        for id in waiting {
            if let Some(slot) = fab.flow_slot(id) {
                self.senders[slot].parked = false;
                fab.make_ready(self, id);
            }
        }
    }

    /// A debt, token or resend token reached sender `h`: it acknowledges data (a resend token names a loss
    /// instead) and, but for a debt, lets one packet go.
    fn token_arrived(&mut self, fab: &mut impl NicOps, h: u32, p: &Packet) {
        let Some(slot) = fab.flow_slot(p.flow) else {
            self.stats.tokens_wasted += u64::from(p.kind != DEBT);
            return;
        };
        self.senders[slot].heard_at = fab.now();
        fab.restart_rto(h, slot);
        if p.kind == RESEND_TOKEN {
            fab.sender_mut(slot)
                .handle_missing(p.seq, p.seq + p.aux as u64);
        } else {
            let out = fab.sender_mut(slot).handle_ack(p.seq, None);
            self.release(fab, h, slot, p.seq);
            if out.complete {
                fab.complete(self, p.flow);
                return;
            }
        }
        if p.kind == DEBT {
            return;
        }
        let s = &mut self.senders[slot];
        s.level = p.class;
        if p.kind == TOKEN {
            s.heard = s.heard.max(p.aux);
        }
        if fab.sender(slot).has_unsent() {
            s.tokens.add(p.mark & bits::TOKEN_CE != 0);
            fab.make_ready(self, p.flow);
        } else {
            self.stats.tokens_wasted += 1;
        }
    }

    /// A probe reached receiver `h`: the ranges it reveals missing are asked for again, and on a timeout the
    /// tokens the sender never got are generated again; a complete flow's sender gets its acknowledgement.
    fn probe_arrived(&mut self, fab: &mut impl NicOps, h: u32, p: &Packet) {
        let rx = fab.receiver(p.flow);
        let timed_out = p.mark & bits::TIMED_OUT != 0;
        // A complete flow's acknowledgement is on its way unless the sender timed out.
        if matches!(rx, Receiving::Complete) && !timed_out {
            return;
        }
        let complete = matches!(rx, Receiving::Complete);
        let mut gaps = std::mem::take(&mut self.gaps);
        gaps.clear();
        aeolus::missing(rx, p.seq, &mut gaps);
        let heard = timed_out.then_some(p.aux);
        let now = fab.now();
        self.hosts[h as usize]
            .rx
            .on_probe(p.flow.0, &gaps, self.mss, heard, complete, now);
        self.gaps = gaps;
        let port = fab.host_port(h);
        fab.kick(self, port);
    }
}

impl SwitchSide for PayDebt {
    /// §4.1.1: debts and tokens retrace their flow's data path.
    fn route<F: SwitchOps>(&self, fab: &F, s: usize, p: &Packet) -> Option<PortId> {
        matches!(p.kind, TOKEN | DEBT | RESEND_TOKEN).then(|| fab.toward_source(p.flow, s))
    }

    /// Data and probes join the data queue (the variant's: their level's), data marked above `K_d` bytes of
    /// data at the port; debts and tokens the debt/token queue, tokens marked above `K_t`.
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let kind = e.p.kind;
        if kind == PacketKind::DATA || kind == PROBE {
            let levels = self.prio.as_ref().map_or(1, Priorities::levels);
            let q = self.data_q + if levels > 1 { e.p.class as usize } else { 0 };
            fab.admit(e, q)?;
            let queues = fab.queues(e.out_sp);
            let data = || -> u64 {
                (self.data_q..self.data_q + levels as usize)
                    .map(|q| queues.queue_bytes(q))
                    .sum()
            };
            if kind == PacketKind::DATA && data() > self.k_d {
                fab.packet_mut(e.pkt).mark |= bits::DATA_CE;
                self.stats.data_marked += 1;
            }
            fab.push(e, q);
            return Ok(());
        }
        let q = self.tokens.queue();
        fab.admit(e, q)?;
        if kind != DEBT
            && kind.is_scheme_control()
            && fab.queues(e.out_sp).queue_len(q) as f64 > self.k_t
        {
            fab.packet_mut(e.pkt).mark |= bits::TOKEN_CE;
            self.stats.tokens_marked += 1;
        }
        fab.push(e, q);
        self.tokens.gate(fab, e.out_sp);
        Ok(())
    }

    /// A packet left the debt/token queue: its rate limiter's tokens are spent.
    fn dequeued<F: SwitchOps>(
        &mut self,
        fab: &mut F,
        sp: u32,
        _pkt: PacketId,
        queue: usize,
        _data: bool,
    ) {
        self.tokens.dequeued(fab, sp, queue);
    }

    /// The debt/token queue's rate limiter has its tokens back.
    fn switch_timer<F: SwitchOps>(&mut self, fab: &mut F, sp: u32) {
        if self.tokens.release(fab, sp) {
            let port = fab.sw_port_id(sp);
            fab.kick(self, port);
        }
    }
}

impl NicSide for PayDebt {
    /// A new flow may send its first BDP unscheduled; its probe timer starts.
    fn flow_started<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> u32 {
        if self.senders.len() <= slot {
            self.senders.resize_with(slot + 1, SenderSide::default);
        }
        let now = fab.now();
        let flow = fab.flow(id);
        let size = flow.spec.size.0;
        self.senders[slot] = SenderSide {
            tokens: Tokens::new(size, self.mss, self.unscheduled),
            size,
            dst: flow.dst_host,
            heard_at: now,
            unscheduled_level: self.prio.as_ref().map_or(0, |p| p.unscheduled_level(size)),
            ..SenderSide::default()
        };
        self.open(h, slot);
        let at = now + self.cfg.probe_timeout;
        self.hosts[h as usize].probes.push(Reverse((at, id.0)));
        let port = fab.host_port(h);
        fab.arm_timer(port, at);
        0
    }

    /// The receiver's next debt or token, once the host's rate limiter allows one.
    fn nic_poll<F: NicOps>(&mut self, fab: &mut F, h: u32) -> Option<PacketId> {
        let now = fab.now();
        let hs = &mut self.hosts[h as usize];
        if !hs.rx.pending() {
            return None;
        }
        let ready = hs.shaper.ready_at();
        if ready > now {
            let port = fab.host_port(h);
            fab.arm_timer(port, ready);
            return None;
        }
        let emit = hs.rx.emit()?;
        hs.shaper.take(now);
        let size = self.cfg.token_size.0 as u32;
        let (f, kind, aux, resend) = match emit {
            Emit::Debt(f) => {
                self.stats.debts += 1;
                (f, DEBT, 0, None)
            }
            Emit::Ack(f) => (f, TOKEN, 0, None),
            Emit::Token(f, number) => {
                self.stats.tokens += 1;
                (f, TOKEN, number, None)
            }
            Emit::Resend(f, seq, len) => {
                self.stats.tokens += 1;
                self.stats.resend_tokens += 1;
                (f, RESEND_TOKEN, len, Some(seq))
            }
        };
        // Debts and tokens carry the receiver's next expected byte (all of a complete flow's, for the
        // acknowledgement a timed-out probe draws); a resend token, the range it asks for.
        let id = FlowId(f);
        let seq =
            resend.unwrap_or_else(|| fab.receiver(id).next_expected(fab.flow(id).spec.size.0));
        let pkt = fab.new_control(id, true, kind, (seq, aux), size);
        // The variant: a token carries the level of the packet it calls for, by its flow's rank here.
        if let Some(prio) = &self.prio
            && kind != DEBT
        {
            let (rank, n) = self.hosts[h as usize].rx.rank(f);
            fab.packet_mut(pkt).class = prio.scheduled_level(rank, n);
        }
        Some(pkt)
    }

    /// A token waits, or (new data only) an unscheduled packet is left; a flow that its pair bound did not
    /// let open waits for its pair's acknowledgements.
    fn may_send<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> bool {
        if !self.senders[slot].tokens.is_open() && !self.open(h, slot) {
            let s = &mut self.senders[slot];
            if !s.parked {
                s.parked = true;
                self.stats.pair_waits += 1;
                let dst = s.dst;
                self.hosts[h as usize]
                    .parked
                    .entry(dst)
                    .or_default()
                    .push(id);
            }
            return false;
        }
        let resend = fab.sender(slot).resending();
        self.senders[slot].tokens.may_send(resend)
    }

    /// Stamps the packet: unscheduled (with `debt_request` by the host's counter) or the echo of its token's
    /// mark, and `token_request`; the probe follows the flow's last new packet.
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize, pkt: PacketId) {
        let mss = self.mss;
        let hs = &mut self.hosts[h as usize];
        let s = &mut self.senders[slot];
        let p = fab.packet_mut(pkt);
        let (id, seq, payload) = (p.flow, p.seq, p.payload);
        let sent = s.tokens.spend();
        if self.prio.is_some() {
            p.class = match sent {
                Sent::Token(_) => s.level,
                Sent::Unscheduled => s.unscheduled_level,
            };
            s.class = s.class.max(p.class);
        }
        match sent {
            Sent::Token(marked) => {
                if marked {
                    p.mark |= bits::TOKEN_ECHO;
                }
            }
            Sent::Unscheduled => {
                p.mark |= bits::UNSCHEDULED;
                self.stats.unscheduled += 1;
                if hs.debts.unscheduled(payload, mss) {
                    p.mark |= bits::DEBT_REQUEST;
                    self.stats.debt_requests += 1;
                }
                s.unacked.push_back((seq, payload));
            }
        }
        if s.tokens.requests_token(seq, mss) {
            p.mark |= bits::TOKEN_REQUEST;
        }
        s.sent_high = s.sent_high.max(seq + payload as u64);
        if s.end_probe || !self.cfg.probe_at_end || fab.sender(slot).has_unsent() {
            return;
        }
        s.end_probe = true;
        let (high, heard) = (s.sent_high, s.heard);
        self.stats.probes += 1;
        let size = self.cfg.token_size.0 as u32;
        let class = s.class;
        let probe = fab.new_control(id, false, PROBE, (high, heard), size);
        fab.packet_mut(probe).class = class;
        fab.queue_control(h, probe);
    }

    /// The receiver generates the packet's debt and token.
    fn data_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet, held: u64) {
        let size = fab.flow(p.flow).spec.size.0;
        let a = Arrival {
            unscheduled: p.mark & bits::UNSCHEDULED != 0,
            debt_request: p.mark & bits::DEBT_REQUEST != 0,
            token_request: p.mark & bits::TOKEN_REQUEST != 0,
            marked: p.mark & bits::DATA_CE != 0,
            token_echo: p.mark & bits::TOKEN_ECHO != 0,
            complete: held >= size,
            remaining: size.saturating_sub(held),
        };
        let now = fab.now();
        let rx = &mut self.hosts[h as usize].rx;
        rx.on_data(p.flow.0, a, now);
        if rx.pending() {
            let port = fab.host_port(h);
            fab.kick(self, port);
        }
    }

    fn packet_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        match p.kind {
            PROBE => self.probe_arrived(fab, h, p),
            TOKEN | DEBT | RESEND_TOKEN => self.token_arrived(fab, h, p),
            _ => unreachable!("not a PayDebt packet"),
        }
    }

    /// The flow's acknowledgement: its unscheduled packets leave the pair bound.
    fn reply_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize, p: &Packet) {
        if p.kind == PacketKind::ACK {
            self.senders[slot].heard_at = fab.now();
            self.release(fab, h, slot, p.seq);
        }
    }

    /// Host `h`'s timer: probes of flows that heard nothing for `probe_timeout`, and the rate limiter's tokens
    /// back for the receiver's debts and tokens.
    fn nic_timer<F: NicOps>(&mut self, fab: &mut F, h: u32) {
        let now = fab.now();
        let timeout = self.cfg.probe_timeout;
        let size = self.cfg.token_size.0 as u32;
        while let Some(&Reverse((t, f))) = self.hosts[h as usize].probes.peek() {
            if t > now {
                break;
            }
            self.hosts[h as usize].probes.pop();
            let Some(slot) = fab.flow_slot(FlowId(f)) else {
                continue;
            };
            let s = &mut self.senders[slot];
            let due = s.heard_at + timeout;
            if due <= now {
                s.heard_at = now;
            }
            self.hosts[h as usize]
                .probes
                .push(Reverse((due.max(now + timeout), f)));
            if due > now {
                continue;
            }
            let (high, heard, class) = (s.sent_high, s.heard, s.class);
            self.stats.probes += 1;
            self.stats.probe_timeouts += 1;
            let probe = fab.new_control(FlowId(f), false, PROBE, (high, heard), size);
            let p = fab.packet_mut(probe);
            p.mark |= bits::TIMED_OUT;
            p.class = class;
            fab.send_control(self, h, probe);
        }
        let hs = &self.hosts[h as usize];
        let next = hs.probes.peek().map(|&Reverse((t, _))| t);
        let pending = hs.rx.pending();
        let port = fab.host_port(h);
        if let Some(t) = next {
            fab.arm_timer(port, t);
        }
        if pending {
            fab.kick(self, port);
        }
    }
}

impl Scheme for PayDebt {}

/// A PayDebt preset's configuration: `$extra` lines of `[flow_control]`, `$queues` strict-priority queues per
/// port (debts/tokens, then data; 2 but for the eight-queue variant), `$nic` lines of `[nic]`, flow-level ECMP
/// (the default), whole-flow ACKs over selective repeat, and the transport's own timeout only as a last resort
/// behind the probes (64 ms).
macro_rules! preset {
    ($extra:literal) => {
        preset!($extra, "2", "")
    };
    ($extra:literal, $queues:literal, $nic:literal) => {
        concat!(
            "[cc]\nname = \"none\"\n[flow_control]\nkind = \"paydebt\"\n",
            $extra,
            "[switch]\nclasses = ",
            $queues,
            "\nqueues_per_port = ",
            $queues,
            "\ncontrol_priority = true\nack_priority = true\n\
             [nic]\n",
            $nic,
            "ack_every = 0\nrecovery = \"selective\"\nnack = false\n\
             rto_initial = \"64ms\"\nrto_min = \"64ms\"\n"
        )
    };
}

impl Describe for PayDebt {
    const KIND: &'static str = "paydebt";
    const SUMMARY: &'static str =
        "PayDebt's debts and data-driven tokens (Liu et al., IEEE TPDS), §5's defaults";
    type Config = PayDebtConfig;
    type Stats = PayDebtStats;

    /// Debts/tokens and data (each of its levels) in strict-priority queues; debts and tokens retrace the
    /// data's path.
    fn validate(cfg: &PayDebtConfig, switch: &SwitchFacts) -> Result<(), String> {
        let queues = cfg.priorities + 1;
        if switch.classes != queues || switch.queues_per_port != queues {
            return Err(format!(
                "flow_control.kind = \"paydebt\" puts debts and tokens in one strict-priority queue and data in \
                 flow_control.priorities = {} more (§4.3): set switch.classes = {queues} and \
                 switch.queues_per_port = {queues} (not {} and {})",
                cfg.priorities, switch.classes, switch.queues_per_port
            ));
        }
        if !switch.ecmp {
            return Err(
                "flow_control.kind = \"paydebt\" sends debts and tokens back along their data's path (§4.1.1): \
                 set switch.load_balancing = \"ecmp\""
                    .into(),
            );
        }
        cfg.validate()
    }

    /// A rate limiter for every switch port and NIC at the debt/token share of its link, and the thresholds in
    /// bytes and tokens from the fabric's BDP.
    fn new(cfg: &PayDebtConfig, fab: &mut impl Setup) -> Result<PayDebt, String> {
        let t = fab.transport();
        if t.recovery != Recovery::Selective || t.nack || t.ack_every != 0 {
            return Err(
                "flow_control.kind = \"paydebt\" recovers losses from probes over selective repeat and acknowledges \
                 whole flows (debts and tokens carry the acknowledgements between): set nic.recovery = \
                 \"selective\", nic.nack = false, nic.ack_every = 0"
                    .into(),
            );
        }
        let cfg = cfg.clone();
        let ctx = fab.flow_context();
        let mss = fab.payload();
        let bdp = ctx.bdp.0 as f64;
        let token = cfg.token_size;
        let data = Bytes((fab.payload() + fab.header()) as u64);
        let share = |link: Rate| match cfg.token_share {
            Some(s) => Rate((link.bps() as f64 * s).round() as u64),
            None => credit_rate(link, token, data),
        };
        let shaper = |link| CreditShaper::new(share(link), token, cfg.token_burst);
        let ports = (0..fab.sw_port_count() as u32)
            .map(|sp| shaper(fab.link_rate(fab.sw_port_id(sp))))
            .collect();
        let period = cfg.update_period.unwrap_or(ctx.base_rtt);
        let hosts = (0..fab.host_count() as u32)
            .map(|h| HostSide {
                rx: Receiver::new(&cfg, bdp / mss as f64, period),
                shaper: shaper(fab.link_rate(fab.host_port(h))),
                debts: DebtCounter::default(),
                pairs: PairBound::default(),
                parked: HashMap::new(),
                probes: BinaryHeap::new(),
            })
            .collect();
        let unscheduled = cfg.unscheduled.resolve(&ctx);
        let prio = (cfg.priorities > 1).then(|| {
            let sizes: Vec<u64> = fab.flows().iter().map(|f| f.spec.size.0).collect();
            Priorities::from_sizes(
                cfg.priorities,
                cfg.unscheduled_priorities,
                unscheduled,
                &sizes,
            )
        });
        let layout = fab.layout();
        Ok(PayDebt {
            tokens: ShapedQueue::new(layout.data_queue(0), ports),
            data_q: layout.data_queue(1),
            prio,
            mss,
            unscheduled,
            pair_limit: cfg.pair_limit.map(|w: WindowSpec| w.resolve(&ctx)),
            k_d: (cfg.k_d * bdp) as u64,
            k_t: cfg.k_t * bdp / mss as f64,
            cfg,
            hosts,
            senders: Vec::new(),
            stats: PayDebtStats::default(),
            gaps: Vec::new(),
        })
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "paydebt",
                summary: "PayDebt (Liu et al., IEEE TPDS): first BDP unscheduled, a token per token_request packet, debts \
                          sent on ECN (K_d 1 BDP), tokens round-robin under Algorithm 1 (K_t 1 BDP), debts and tokens \
                          rate-limited together at every port; unscheduled bytes per host pair bounded at 1 BDP",
                config: preset!(""),
            },
            Preset {
                name: "paydebt-8",
                summary: "paydebt with SRPT and eight priority queues (PayDebt §5.2's variant): tokens and the \
                          senders' NICs by bytes left, data on eight levels as Homa's (unscheduled packets by their \
                          flow's size, scheduled ones at the level their token carries)",
                config: preset!(
                    "priorities = 8\nscheduling = \"srpt\"\n",
                    "9",
                    "scheduler = \"srf\"\n"
                ),
            },
            Preset {
                name: "paydebt-no-debt",
                summary: "paydebt without debts (PayDebt §5.5's \"no debt\")",
                config: preset!("debt = \"none\"\n"),
            },
            Preset {
                name: "paydebt-late-debt",
                summary: "paydebt with every debt sent once the flow's data is all received (§5.5's \"w/ late-debt\")",
                config: preset!("debt = \"late\"\n"),
            },
            Preset {
                name: "paydebt-early-debt",
                summary: "paydebt with every debt sent as soon as its unscheduled packet arrives (§5.5's \"w/ early-debt\")",
                config: preset!("debt = \"early\"\n"),
            },
        ]
    }

    fn stats(&self) -> PayDebtStats {
        self.stats
    }

    fn report(c: &PayDebtStats) -> Option<SchemeReport> {
        Some(SchemeReport::new(
            "paydebt",
            "paydebt",
            false,
            PayDebtReport(*c),
        ))
    }
}

/// What PayDebt's debts and tokens did over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct PayDebtReport(pub PayDebtStats);

impl std::fmt::Display for PayDebtReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.0;
        write!(
            f,
            "{} unscheduled packets ({} with debt_request), {} debts and {} tokens sent ({} resend tokens), \
             {} tokens marked above K_t, {} data packets marked above K_d, {} tokens wasted, {} waits for the \
             pair bound, {} probes ({} on a timeout)",
            c.unscheduled,
            c.debt_requests,
            c.debts,
            c.tokens,
            c.resend_tokens,
            c.tokens_marked,
            c.data_marked,
            c.tokens_wasted,
            c.pair_waits,
            c.probes,
            c.probe_timeouts
        )
    }
}
