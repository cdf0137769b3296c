//! ExpressPass on the fabric.
//!
//! - **Sender** (§3.1): a new flow sends a credit request instead of data; it then sends one data packet per
//!   credit, which echoes the credit's sequence number and send time, and a credit stop once it has nothing
//!   left to send. Credits that find nothing to send are wasted (§6.3) and counted. A request unanswered for
//!   `request_timeout` is sent again; a flow that must resend after its stop (a NACK or a timeout of the
//!   go-back-N transport below) asks for credits anew.
//! - **Receiver** (§3.2): one [`CreditFeedback`] per flow paces credits at its rate, each gap jittered; the
//!   credits carry the receiver's next expected byte, so they acknowledge the data as they go (the receiver
//!   itself sends only the final ACK and NACKs).
//! - **Credit rate limiting** (§3.1): every switch port and NIC sends credits through a [`CreditShaper`] at the
//!   credit share of its link, `credit_size / (credit_size + data packet)`, from a credit queue of
//!   `credit_buffer` credits whose overflow drops them. At a switch port the credit queue is the first of two
//!   strict-priority queues, held back while its tokens are short (the scheme timer of the port lets it go), so
//!   data goes meanwhile; at a NIC the scheme hands the NIC a credit whenever the shaper allows.
//! - **Symmetric paths** (§3.1): a credit retraces the path its flow's data takes under flow-level ECMP, so the
//!   data it calls for crosses the links whose credit queues let it through.
//! - **Aeolus** (`[flow_control.aeolus]`, PayDebt's EP(A), [`crate::receiver_driven::aeolus`]): while its credit
//!   request is on its way, a new flow sends its first BDP at line rate, marked, until the first credit comes;
//!   switches drop those packets above the threshold. A [`PROBE`] follows the last of them in the data queue;
//!   its receiver answers with every range still missing ([`PROBE_ANSWER`]), and the sender resends them, one
//!   per credit (asking for credits again if it had stopped them).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use bfcsim_core::rng::{self, Rng, Stream};
use bfcsim_core::{Bytes, FlowId, PacketId, PortId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::Packet;
use rand::RngExt;

use super::feedback::credit_rate;
use super::{
    CREDIT, CREDIT_REQUEST, CREDIT_STOP, CreditFeedback, CreditShaper, CreditStats,
    ExpressPassConfig, PROBE, PROBE_ANSWER,
};
use crate::cc::WindowSpec;
use crate::fabric::{
    Describe, Entry, NicOps, NicSide, Preset, Receiving, Scheme, SchemeReport, Setup, SwitchFacts,
    SwitchOps, SwitchSide,
};
use crate::receiver_driven::aeolus::{self, AeolusStats, FirstRtt, UNSCHEDULED};
use crate::receiver_driven::shaper::ShapedQueue;
use crate::transport::Recovery;

/// ExpressPass's state in one shard of a run.
pub struct ExpressPass {
    cfg: ExpressPassConfig,
    /// The switch ports' credit queues and their rate limiters.
    credits: ShapedQueue,
    /// The switch ports' data queue.
    data_q: usize,
    /// Payload bytes of a full data packet (a credit request counts the flow's packets in them).
    payload: u32,
    /// Each host's NIC side, by host index.
    hosts: Vec<HostSide>,
    /// Each running flow's sender side, by its slot (reset when a flow takes the slot).
    senders: Vec<SenderSide>,
    /// The flows a receiver paces credits for, by flow id.
    pacers: HashMap<u32, Pacer>,
    stats: CreditStats,
    /// Under Aeolus: the bytes a new flow sends unscheduled (0: Aeolus off).
    first_rtt: u64,
    /// Scratch for the missing ranges a probe reveals.
    gaps: Vec<(u64, u64)>,
}

/// A host's NIC side: its credit queue and rate limiter, and its timers.
struct HostSide {
    /// Credits waiting for the rate limiter, at most `credit_buffer`.
    credits: VecDeque<PacketId>,
    shaper: CreditShaper,
    /// The credit share of the host's link: the largest credit rate of a flow it receives.
    max_rate: Rate,
    /// When each paced flow's next credit is due, earliest first; an entry is live while it is its pacer's
    /// `next_at`.
    due: BinaryHeap<Reverse<(Time, u32)>>,
    /// When each sender asks for credits again, earliest first; live while it is the sender's `request_at`.
    requests: BinaryHeap<Reverse<(Time, u32)>>,
    /// The jitter of credit gaps.
    rng: Rng,
}

/// A running flow's sender side.
#[derive(Default)]
struct SenderSide {
    /// Credits received and not yet answered: sequence number and send time.
    credits: VecDeque<(u64, Time)>,
    /// A credit stop went after the last request: the receiver no longer paces credits.
    stopped: bool,
    /// When to ask for credits again (`Time::MAX`: a credit arrived since the last request).
    request_at: Time,
    /// Under Aeolus: its first-RTT sends and its probe.
    first: FirstRtt,
}

/// A receiver's credits for one flow.
struct Pacer {
    feedback: CreditFeedback,
    next_at: Time,
}

impl ExpressPass {
    /// Sends flow `id`'s credit request from host `h` and arms its retry.
    fn send_credit_request(&mut self, fab: &mut impl NicOps, h: u32, id: FlowId, slot: usize) {
        let at = fab.now() + self.cfg.request_timeout;
        self.stats.requests += 1;
        self.senders[slot].request_at = at;
        self.hosts[h as usize].requests.push(Reverse((at, id.0)));
        let size = self.cfg.credit_size.0 as u32;
        // The request says how many packets the flow has left to send (ns-2's `sendbuffer_`), resends included
        // (under Aeolus a flow may ask again with only resends left), and at least one: no credits at all
        // would be a rate of zero.
        let packets = fab
            .sender(slot)
            .to_send()
            .div_ceil(self.payload as u64)
            .max(1);
        let packets = u32::try_from(packets).unwrap_or(u32::MAX);
        let pkt = fab.new_control(id, false, CREDIT_REQUEST, (0, packets), size);
        fab.send_control(self, h, pkt);
        let port = fab.host_port(h);
        fab.arm_timer(port, at);
    }

    /// A credit request for `packets` packets reached receiver `h`: its first credit goes at once (ns-2's
    /// `recv_credit_request`), at `α` times the largest rate (less for a small flow). A repeated request finds
    /// the flow paced already.
    fn start_pacing(&mut self, fab: &mut impl NicOps, h: u32, id: FlowId, packets: u64) {
        if self.pacers.contains_key(&id.0) {
            return;
        }
        let now = fab.now();
        let feedback =
            CreditFeedback::new(&self.cfg, self.hosts[h as usize].max_rate, packets, now);
        self.pacers.insert(
            id.0,
            Pacer {
                feedback,
                next_at: now,
            },
        );
        self.hosts[h as usize].due.push(Reverse((now, id.0)));
        let port = fab.host_port(h);
        fab.arm_timer(port, now);
    }

    /// A credit reached sender `h`. It acknowledges the data the receiver has; with data left to send it lets
    /// one packet go, else it is wasted.
    fn take_credit(&mut self, fab: &mut impl NicOps, h: u32, p: &Packet) {
        let Some(slot) = fab.flow_slot(p.flow) else {
            self.stats.wasted += 1;
            return;
        };
        let out = fab.sender_mut(slot).handle_ack(p.seq, None);
        if out.complete {
            self.stats.wasted += 1;
            fab.complete(self, p.flow);
            return;
        }
        if out.newly_acked > 0 {
            fab.restart_rto(h, slot);
        }
        let unsent = fab.sender(slot).has_unsent();
        let s = &mut self.senders[slot];
        s.request_at = Time::MAX;
        if !unsent || s.stopped {
            self.stats.wasted += 1;
            return;
        }
        s.credits.push_back((p.aux as u64, p.sent_at));
        fab.make_ready(self, p.flow);
    }

    /// Aeolus: flow `p.flow`'s probe reached receiver `h`, behind every unscheduled packet of it that was not
    /// dropped; each range of its first `p.seq` bytes still missing goes back to the sender in an answer.
    fn probe_arrived(&mut self, fab: &mut impl NicOps, h: u32, p: &Packet) {
        let rx = fab.receiver(p.flow);
        if matches!(rx, Receiving::Complete) {
            return;
        }
        self.stats.aeolus.probes_heard += 1;
        let mut gaps = std::mem::take(&mut self.gaps);
        gaps.clear();
        aeolus::missing(rx, p.seq, &mut gaps);
        self.stats.aeolus.lost(&gaps);
        let size = self.cfg.credit_size.0 as u32;
        for &(from, to) in &gaps {
            let len = u32::try_from(to - from).unwrap_or(u32::MAX);
            let pkt = fab.new_control(p.flow, true, PROBE_ANSWER, (from, len), size);
            fab.send_control(self, h, pkt);
        }
        self.gaps = gaps;
    }

    /// Receiver `h` sends flow `id`'s next credit (after a feedback update) and schedules the one after it.
    fn emit_credit(&mut self, fab: &mut impl NicOps, h: u32, id: FlowId) {
        let now = fab.now();
        // The receiver's next expected byte: the credit acknowledges the data so far.
        let ack = fab.receiver(id).next_expected(fab.flow(id).spec.size.0);
        let hs = &mut self.hosts[h as usize];
        let u = hs.rng.random::<f64>();
        let pacer = self.pacers.get_mut(&id.0).expect("paced");
        pacer.feedback.poll_update(now);
        let (seq, gap) = pacer.feedback.next_credit(u);
        pacer.next_at = now + gap;
        hs.due.push(Reverse((now + gap, id.0)));
        self.stats.sent += 1;
        let (size, cap) = (
            self.cfg.credit_size.0 as u32,
            self.cfg.credit_buffer as usize,
        );
        let pkt = fab.new_control(id, true, CREDIT, (ack, seq as u32), size);
        let hs = &mut self.hosts[h as usize];
        if hs.credits.len() >= cap {
            self.stats.dropped += 1;
            fab.drop_packet(pkt, DropReason::CreditQueueFull);
        } else {
            hs.credits.push_back(pkt);
        }
    }
}

impl SwitchSide for ExpressPass {
    /// §3.1: credits retrace their flow's data path.
    fn route<F: SwitchOps>(&self, fab: &F, s: usize, p: &Packet) -> Option<PortId> {
        (p.kind == CREDIT).then(|| fab.toward_source(p.flow, s))
    }

    /// Credits join the port's credit queue unless it is full; everything else the data queue (where Aeolus drops
    /// unscheduled packets above its threshold).
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let (credit_q, data_q, cap) = (self.credits.queue(), self.data_q, self.cfg.credit_buffer);
        if e.p.kind != CREDIT {
            if let Some(a) = &self.cfg.aeolus {
                return aeolus::selective_enqueue(fab, e, data_q, a);
            }
            fab.admit(e, data_q)?;
            fab.push(e, data_q);
            return Ok(());
        }
        if fab.queues(e.out_sp).queue_len(credit_q) >= cap as usize {
            self.stats.dropped += 1;
            return Err(DropReason::CreditQueueFull);
        }
        fab.admit(e, credit_q)?;
        fab.push(e, credit_q);
        self.credits.gate(fab, e.out_sp);
        Ok(())
    }

    /// A credit left: its tokens are spent; the credit queue waits for the next credit's.
    fn dequeued<F: SwitchOps>(
        &mut self,
        fab: &mut F,
        sp: u32,
        _pkt: PacketId,
        queue: usize,
        _data: bool,
    ) {
        self.credits.dequeued(fab, sp, queue);
    }

    /// The credit queue's tokens are back.
    fn switch_timer<F: SwitchOps>(&mut self, fab: &mut F, sp: u32) {
        if self.credits.release(fab, sp) {
            let port = fab.sw_port_id(sp);
            fab.kick(self, port);
        }
    }
}

impl NicSide for ExpressPass {
    /// A new flow asks its receiver for credits (§3.1) and sends nothing before they come; under Aeolus it
    /// sends its first BDP meanwhile.
    fn flow_started<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> u32 {
        if self.senders.len() <= slot {
            self.senders.resize_with(slot + 1, SenderSide::default);
        }
        let size = fab.flow(id).spec.size.0;
        let s = &mut self.senders[slot];
        s.credits.clear();
        s.stopped = false;
        s.first = FirstRtt::new(self.first_rtt.min(size));
        self.send_credit_request(fab, h, id, slot);
        0
    }

    /// A credit waiting at the NIC goes first, once the NIC's rate limiter has its tokens.
    fn nic_poll<F: NicOps>(&mut self, fab: &mut F, h: u32) -> Option<PacketId> {
        let now = fab.now();
        let hs = &mut self.hosts[h as usize];
        hs.credits.front()?;
        let ready = hs.shaper.ready_at();
        if ready > now {
            let port = fab.host_port(h);
            fab.arm_timer(port, ready);
            return None;
        }
        hs.shaper.take(now);
        hs.credits.pop_front()
    }

    /// One data packet per credit, or under Aeolus a first send in the first RTT; a flow that stopped its
    /// credits and must resend asks for them again.
    fn may_send<F: NicOps>(&mut self, fab: &mut F, h: u32, id: FlowId, slot: usize) -> bool {
        let now = fab.now();
        let s = &mut self.senders[slot];
        if !s.credits.is_empty() || (s.first.open() && !fab.sender(slot).resending()) {
            return true;
        }
        if s.stopped {
            // The NIC may be mid-transmission: the request goes from the host's timer, at once.
            s.stopped = false;
            s.request_at = now;
            self.hosts[h as usize].requests.push(Reverse((now, id.0)));
            let port = fab.host_port(h);
            fab.arm_timer(port, now);
        }
        false
    }

    /// The packet answers the oldest credit; after the flow's last new byte the credit stop follows it. Under
    /// Aeolus a packet sent without a credit is a first-RTT one, marked; the first credit ends the first RTT,
    /// and the probe follows the last first-RTT packet.
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize, pkt: PacketId) {
        let s = &mut self.senders[slot];
        let p = fab.packet_mut(pkt);
        let id = p.flow;
        match s.credits.pop_front() {
            Some((seq, sent)) => {
                p.aux = seq as u32;
                // The receiver measures its update period from the credit's send time, as ns-2's data echoes it.
                p.sent_at = sent;
                s.first.close();
                s.first.send(p.seq, p.payload);
            }
            None => {
                let first = s.first.send(p.seq, p.payload);
                debug_assert!(
                    first,
                    "may_send let a packet go without a credit: a first-RTT one"
                );
                p.mark |= UNSCHEDULED;
                self.stats.aeolus.unscheduled += 1;
            }
        }
        if let Some(covered) = s.first.take_probe() {
            self.stats.aeolus.probes += 1;
            let size = self.cfg.credit_size.0 as u32;
            let probe = fab.new_control(id, false, PROBE, (covered, 0), size);
            fab.queue_control(h, probe);
        }
        if fab.sender(slot).has_unsent() || self.senders[slot].stopped {
            return;
        }
        let s = &mut self.senders[slot];
        s.stopped = true;
        self.stats.wasted += s.credits.len() as u64;
        s.credits.clear();
        self.stats.stops += 1;
        let size = self.cfg.credit_size.0 as u32;
        let stop = fab.new_control(id, false, CREDIT_STOP, (0, 0), size);
        fab.queue_control(h, stop);
    }

    /// The receiver accounts the credit the data answers (§3.2); an unscheduled packet answers none.
    fn data_arrived<F: NicOps>(&mut self, fab: &mut F, _h: u32, p: &Packet, _held: u64) {
        let now = fab.now();
        if p.mark & UNSCHEDULED != 0 {
            return;
        }
        if let Some(pacer) = self.pacers.get_mut(&p.flow.0) {
            pacer.feedback.on_data(p.aux as u64, p.sent_at, now);
        }
    }

    fn packet_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        match p.kind {
            CREDIT_REQUEST => self.start_pacing(fab, h, p.flow, p.aux as u64),
            CREDIT_STOP => {
                self.pacers.remove(&p.flow.0);
            }
            CREDIT => self.take_credit(fab, h, p),
            PROBE => self.probe_arrived(fab, h, p),
            PROBE_ANSWER => {
                let Some(slot) = fab.flow_slot(p.flow) else {
                    return; // complete meanwhile
                };
                fab.sender_mut(slot)
                    .handle_missing(p.seq, p.seq + p.aux as u64);
                fab.restart_rto(h, slot);
                fab.make_ready(self, p.flow);
            }
            _ => unreachable!("not an ExpressPass packet"),
        }
    }

    /// Host `h`'s timer: the credits due from its receivers go into its credit queue (dropped when it is full),
    /// the requests due from its senders go again, and the NIC is woken for the credits.
    fn nic_timer<F: NicOps>(&mut self, fab: &mut F, h: u32) {
        let now = fab.now();
        while let Some(&Reverse((t, f))) = self.hosts[h as usize].due.peek() {
            if t > now {
                break;
            }
            self.hosts[h as usize].due.pop();
            if self.pacers.get(&f).is_some_and(|p| p.next_at == t) {
                self.emit_credit(fab, h, FlowId(f));
            }
        }
        while let Some(&Reverse((t, f))) = self.hosts[h as usize].requests.peek() {
            if t > now {
                break;
            }
            self.hosts[h as usize].requests.pop();
            if let Some(slot) = fab.flow_slot(FlowId(f))
                && self.senders[slot].request_at == t
            {
                self.send_credit_request(fab, h, FlowId(f), slot);
            }
        }
        let hs = &self.hosts[h as usize];
        let next = [hs.due.peek(), hs.requests.peek()]
            .into_iter()
            .flatten()
            .map(|&Reverse((t, _))| t)
            .min();
        let waiting = !hs.credits.is_empty();
        let port = fab.host_port(h);
        if let Some(t) = next {
            fab.arm_timer(port, t);
        }
        if waiting {
            fab.kick(self, port);
        }
    }

    fn census(&self, count: &mut impl FnMut(PacketId)) {
        self.hosts
            .iter()
            .flat_map(|h| &h.credits)
            .for_each(|&p| count(p));
    }
}

impl Scheme for ExpressPass {}

impl Describe for ExpressPass {
    const KIND: &'static str = "expresspass";
    const SUMMARY: &'static str =
        "ExpressPass credits (Cho et al. 2017), the authors' ns-2 defaults";
    type Config = ExpressPassConfig;
    type Stats = CreditStats;

    /// Credits and data in two strict-priority queues; data routed back along its credits' path.
    fn validate(cfg: &ExpressPassConfig, switch: &SwitchFacts) -> Result<(), String> {
        if switch.classes != 2 || switch.queues_per_port != 2 {
            return Err(format!(
                "flow_control.kind = \"expresspass\" puts credits and data in two strict-priority queues: \
                 set switch.classes = 2 and switch.queues_per_port = 2 (not {} and {})",
                switch.classes, switch.queues_per_port
            ));
        }
        if !switch.ecmp {
            return Err(
                "flow_control.kind = \"expresspass\" routes data back along its credits' path: set \
                 switch.load_balancing = \"ecmp\""
                    .into(),
            );
        }
        cfg.validate()
    }

    /// A credit rate limiter for every switch port and NIC, at the credit share of its link.
    fn new(cfg: &ExpressPassConfig, fab: &mut impl Setup) -> Result<ExpressPass, String> {
        let cfg = cfg.clone();
        let first_rtt = match &cfg.aeolus {
            None => 0,
            Some(a) => {
                let t = fab.transport();
                if t.recovery != Recovery::Selective || t.nack {
                    return Err(
                        "flow_control.aeolus under ExpressPass recovers its unscheduled packets' losses from \
                         probes, over selective repeat: set nic.recovery = \"selective\" and nic.nack = false"
                            .into(),
                    );
                }
                a.unscheduled
                    .unwrap_or(WindowSpec::Bdp(1))
                    .resolve(&fab.flow_context())
            }
        };
        let credit = cfg.credit_size;
        let data = Bytes((fab.payload() + fab.header()) as u64);
        let shaper =
            |rate| CreditShaper::new(credit_rate(rate, credit, data), credit, cfg.credit_burst);
        let ports = (0..fab.sw_port_count() as u32)
            .map(|sp| shaper(fab.link_rate(fab.sw_port_id(sp))))
            .collect();
        let hosts = (0..fab.host_count() as u32)
            .map(|h| {
                let rate = fab.link_rate(fab.host_port(h));
                HostSide {
                    credits: VecDeque::new(),
                    shaper: shaper(rate),
                    max_rate: credit_rate(rate, credit, data),
                    due: BinaryHeap::new(),
                    requests: BinaryHeap::new(),
                    rng: rng::stream(fab.seed(), Stream::Other(0xC4ED_0000 | h)),
                }
            })
            .collect();
        let layout = fab.layout();
        Ok(ExpressPass {
            credits: ShapedQueue::new(layout.data_queue(0), ports),
            data_q: layout.data_queue(1),
            payload: fab.payload(),
            cfg,
            hosts,
            senders: Vec::new(),
            pacers: HashMap::new(),
            stats: CreditStats::default(),
            first_rtt,
            gaps: Vec::new(),
        })
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "expresspass",
                summary: "ExpressPass (Cho et al. 2017): receiver-paced credits rate-limited at every port, one data packet per \
                          credit; alpha 0.5, w_init 1/16, 16-credit queues, 12 MB shared buffer (BFC §6.2.1)",
                config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"expresspass\"\n\
                         [switch]\nclasses = 2\nqueues_per_port = 2\n[nic]\nack_every = 0\n",
            },
            Preset {
                name: "expresspass-aeolus",
                summary: "EP(A) (PayDebt §2.3, §5): expresspass with Aeolus: the first BDP sent unscheduled while credits come, \
                          dropped above 8 KB in the data queue, a probe behind it, losses resent one per credit; selective repeat",
                config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"expresspass\"\n\
                         [flow_control.aeolus]\nthreshold = \"8KB\"\n\
                         [switch]\nclasses = 2\nqueues_per_port = 2\n\
                         [nic]\nack_every = 0\nrecovery = \"selective\"\nnack = false\n",
            },
            Preset {
                name: "expresspass-75mb",
                summary: "ExpressPass on switches with a dedicated 75 MB buffer per port, as BFC §6.2.1 ran it (no drops)",
                config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"expresspass\"\n\
                         [switch]\nclasses = 2\nqueues_per_port = 2\nports_per_pool = 1\npool_size = \"75MB\"\n\
                         alpha = 1000000.0\n[nic]\nack_every = 0\n",
            },
        ]
    }

    fn optional_params() -> Vec<(String, String)> {
        aeolus::listed_params()
    }

    fn stats(&self) -> CreditStats {
        self.stats
    }

    fn report(c: &CreditStats) -> Option<SchemeReport> {
        let mut report = CreditReport::new(c.requests, c.sent, c.dropped, c.wasted, c.stops);
        report.aeolus = (c.aeolus != AeolusStats::default()).then_some(c.aeolus);
        Some(SchemeReport::new("credits", "expresspass", false, report))
    }
}

/// What ExpressPass's credits did over a run (Cho et al., SIGCOMM 2017).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CreditReport {
    /// Credit requests senders sent.
    pub requests: u64,
    /// Credits receivers sent.
    pub sent: u64,
    /// Credits dropped at full credit queues (switch ports and receivers' NICs): how ExpressPass signals
    /// congestion.
    pub dropped: u64,
    /// Credits that reached a sender with nothing left to send (§6.3).
    pub wasted: u64,
    /// `wasted / sent`.
    pub wasted_fraction: f64,
    /// Credit stops senders sent.
    pub stops: u64,
    /// Aeolus's counts, under Aeolus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeolus: Option<AeolusStats>,
}

impl CreditReport {
    /// From the counts; the fraction is 0 when no credit was sent.
    pub fn new(requests: u64, sent: u64, dropped: u64, wasted: u64, stops: u64) -> CreditReport {
        CreditReport {
            requests,
            sent,
            dropped,
            wasted,
            wasted_fraction: wasted as f64 / sent.max(1) as f64,
            stops,
            aeolus: None,
        }
    }
}

impl std::fmt::Display for CreditReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} credit requests, {} credits sent, {} dropped at full credit queues, {} wasted ({:.2}% of those \
             sent), {} credit stops",
            self.requests,
            self.sent,
            self.dropped,
            self.wasted,
            self.wasted_fraction * 100.0,
            self.stops
        )?;
        if let Some(a) = &self.aeolus {
            write!(f, "; {a}")?;
        }
        Ok(())
    }
}
