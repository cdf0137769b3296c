//! ExpressPass's switch and NIC sides (Cho et al., SIGCOMM 2017) on the seam.
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
//!   strict-priority queues, paused while its tokens are short (the scheme timer of the port resumes it), so
//!   data goes meanwhile; at a NIC the scheme hands the NIC a credit whenever the shaper allows.
//! - **Symmetric paths** (§3.1): a credit retraces the path its flow's data takes under flow-level ECMP, so the
//!   data it calls for crosses the links whose credit queues let it through.

use bfcsim_schemes::expresspass::feedback::credit_rate;
use bfcsim_schemes::expresspass::{CreditFeedback, CreditShaper, CreditStats, ExpressPassConfig};

use super::*;

/// ExpressPass's state in one shard.
pub(in crate::engine) struct ExpressPass {
    cfg: ExpressPassConfig,
    /// Queue indices at switch ports: credits, then data.
    credit_q: usize,
    data_q: usize,
    /// Each switch port's credit rate limiter, by switch-port index.
    ports: Vec<CreditShaper>,
    /// Each host's NIC side, by host index.
    hosts: Vec<HostSide>,
    /// Each running flow's sender side, by its slot (reset when a flow takes the slot).
    senders: Vec<SenderSide>,
    /// The flows a receiver paces credits for, by flow id.
    pacers: HashMap<u32, Pacer>,
    stats: CreditStats,
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
}

/// A receiver's credits for one flow.
struct Pacer {
    feedback: CreditFeedback,
    next_at: Time,
}

fn me(sh: &mut Shard) -> &mut ExpressPass {
    match &mut sh.scheme {
        Scheme::ExpressPass(x) => x,
        _ => unreachable!("ExpressPass runs"),
    }
}

impl SchemeSide for ExpressPass {
    fn init(sh: &mut Shard) -> Result<ExpressPass, String> {
        let FlowControl::ExpressPass(cfg) = &sh.params.flow_control else {
            unreachable!("configured")
        };
        let cfg = cfg.clone();
        let credit = cfg.credit_size;
        let data = Bytes((sh.params.nic.payload + sh.params.nic.header) as u64);
        let shaper =
            |rate| CreditShaper::new(credit_rate(rate, credit, data), credit, cfg.credit_burst);
        let ports = sh
            .sw_ports
            .iter()
            .map(|sp| {
                let port = sh.sw_port_id(sp);
                shaper(sh.wires[port.idx()].rate)
            })
            .collect();
        let hosts = (0..sh.hosts.len() as u32)
            .map(|h| {
                let rate = sh.wires[sh.hosts[h as usize].port.idx()].rate;
                HostSide {
                    credits: VecDeque::new(),
                    shaper: shaper(rate),
                    max_rate: credit_rate(rate, credit, data),
                    due: BinaryHeap::new(),
                    requests: BinaryHeap::new(),
                    rng: rng::stream(sh.params.seed, Stream::Other(0xC4ED_0000 | h)),
                }
            })
            .collect();
        Ok(ExpressPass {
            credit_q: sh.data_queue(0),
            data_q: sh.data_queue(1),
            cfg,
            ports,
            hosts,
            senders: Vec::new(),
            pacers: HashMap::new(),
            stats: CreditStats::default(),
        })
    }

    /// §3.1: credits retrace their flow's data path.
    fn route(sh: &Shard, s: usize, p: &Packet) -> Option<PortId> {
        (p.kind == PacketKind::Credit).then(|| sh.toward_source(p.flow, s))
    }

    /// Credits join the port's credit queue unless it is full; everything else the data queue.
    fn enqueue(sh: &mut Shard, e: &Entry) -> Result<(), DropReason> {
        let x = me(sh);
        let (credit_q, data_q, cap) = (x.credit_q, x.data_q, x.cfg.credit_buffer);
        if e.p.kind != PacketKind::Credit {
            return sh.admit_and_push(e, data_q);
        }
        if sh.sw_ports[e.out_sp as usize].queues.queue_len(credit_q) >= cap as usize {
            me(sh).stats.dropped += 1;
            return Err(DropReason::CreditQueueFull);
        }
        sh.admit_and_push(e, credit_q)?;
        sh.gate_credits(e.out_sp);
        Ok(())
    }

    /// A credit left: its tokens are spent; the credit queue waits for the next credit's.
    fn dequeued(sh: &mut Shard, sp: u32, _pkt: PacketId, queue: usize, _data: bool) {
        let x = me(sh);
        if queue != x.credit_q {
            return;
        }
        let now = sh.now;
        me(sh).ports[sp as usize].take(now);
        if sh.sw_ports[sp as usize].queues.queue_len(queue) > 0 {
            sh.gate_credits(sp);
        }
    }

    fn timer(sh: &mut Shard, port: PortId) {
        match sh.wires[port.idx()].owner {
            // The credit queue's tokens are back.
            Owner::Switch(sp) => {
                let q = me(sh).credit_q;
                if sh.sw_ports[sp as usize].queues.set_paused(q, false) {
                    sh.kick(port);
                }
            }
            Owner::Host(h) => sh.xpass_host_timer(h, port),
        }
    }

    /// A new flow asks its receiver for credits (§3.1) and sends nothing before they come.
    fn flow_started(sh: &mut Shard, h: u32, id: FlowId, slot: usize) -> u32 {
        let senders = &mut me(sh).senders;
        if senders.len() <= slot {
            senders.resize_with(slot + 1, SenderSide::default);
        }
        let s = &mut senders[slot];
        s.credits.clear();
        s.stopped = false;
        sh.send_credit_request(h, id, slot);
        0
    }

    /// A credit waiting at the NIC goes first, once the NIC's rate limiter has its tokens.
    fn nic_poll(sh: &mut Shard, h: u32) -> Option<PacketId> {
        let now = sh.now;
        let hs = &mut me(sh).hosts[h as usize];
        hs.credits.front()?;
        let ready = hs.shaper.ready_at();
        if ready > now {
            let port = sh.hosts[h as usize].port;
            sh.arm_scheme_timer(port, ready);
            return None;
        }
        hs.shaper.take(now);
        hs.credits.pop_front()
    }

    /// One data packet per credit; a flow that stopped its credits and must resend asks for them again.
    fn may_send(sh: &mut Shard, h: u32, id: FlowId, slot: usize) -> bool {
        let now = sh.now;
        let s = &mut me(sh).senders[slot];
        if !s.credits.is_empty() {
            return true;
        }
        if s.stopped {
            // The NIC may be mid-transmission: the request goes from the host's timer, at once.
            s.stopped = false;
            s.request_at = now;
            me(sh).hosts[h as usize].requests.push(Reverse((now, id.0)));
            let port = sh.hosts[h as usize].port;
            sh.arm_scheme_timer(port, now);
        }
        false
    }

    /// The packet answers the oldest credit; after the flow's last new byte the credit stop follows it.
    fn data_sent(sh: &mut Shard, h: u32, slot: usize, pkt: PacketId) {
        let x = me(sh);
        let s = &mut x.senders[slot];
        let (seq, sent) = s.credits.pop_front().expect("may_send saw a credit");
        let p = sh.packets.get_mut(pkt);
        p.aux = seq as u32;
        // The receiver measures its update period from the credit's send time, as ns-2's data echoes it.
        p.sent_at = sent;
        let id = p.flow;
        if sh.active[slot].sender.has_unsent() || me(sh).senders[slot].stopped {
            return;
        }
        let x = me(sh);
        let s = &mut x.senders[slot];
        s.stopped = true;
        x.stats.wasted += s.credits.len() as u64;
        s.credits.clear();
        x.stats.stops += 1;
        let size = x.cfg.credit_size.0 as u32;
        let stop = sh.new_control(id, false, PacketKind::CreditStop, (0, 0), size);
        sh.queue_control(h, stop);
    }

    /// The receiver accounts the credit the data answers (§3.2).
    fn data_arrived(sh: &mut Shard, _h: u32, p: &Packet, _held: u64) {
        let now = sh.now;
        if let Some(pacer) = me(sh).pacers.get_mut(&p.flow.0) {
            pacer.feedback.on_data(p.aux as u64, p.sent_at, now);
        }
    }

    fn packet_arrived(sh: &mut Shard, h: u32, p: &Packet) {
        match p.kind {
            PacketKind::CreditRequest => sh.start_pacing(h, p.flow, p.aux as u64),
            PacketKind::CreditStop => {
                me(sh).pacers.remove(&p.flow.0);
            }
            PacketKind::Credit => sh.take_credit(h, p),
            _ => unreachable!("not an ExpressPass packet"),
        }
    }

    fn census(sh: &Shard, count: &mut impl FnMut(PacketId)) {
        if let Scheme::ExpressPass(x) = &sh.scheme {
            x.hosts
                .iter()
                .flat_map(|h| &h.credits)
                .for_each(|&p| count(p));
        }
    }

    fn add_stats(sh: &Shard, stats: &mut HopStats) {
        if let Scheme::ExpressPass(x) = &sh.scheme {
            stats.credits = stats.credits + x.stats;
        }
    }
}

impl Shard {
    /// Pauses switch port `sp`'s credit queue until its tokens are back, if they are short now.
    fn gate_credits(&mut self, sp: u32) {
        let now = self.now;
        let x = me(self);
        let (q, ready) = (x.credit_q, x.ports[sp as usize].ready_at());
        if ready <= now {
            return;
        }
        self.sw_ports[sp as usize].queues.set_paused(q, true);
        let port = self.sw_port_id(&self.sw_ports[sp as usize]);
        self.arm_scheme_timer(port, ready);
    }

    /// Sends flow `id`'s credit request from host `h` and arms its retry.
    fn send_credit_request(&mut self, h: u32, id: FlowId, slot: usize) {
        let at = self.now + me(self).cfg.request_timeout;
        let x = me(self);
        x.stats.requests += 1;
        x.senders[slot].request_at = at;
        x.hosts[h as usize].requests.push(Reverse((at, id.0)));
        let size = x.cfg.credit_size.0 as u32;
        // The request says how many packets the flow has left to send (ns-2's `sendbuffer_`).
        let remaining = self.active[slot].sender.remaining();
        let packets = remaining.div_ceil(self.params.nic.payload as u64);
        let packets = u32::try_from(packets).unwrap_or(u32::MAX);
        let pkt = self.new_control(id, false, PacketKind::CreditRequest, (0, packets), size);
        self.send_control(h, pkt);
        let port = self.hosts[h as usize].port;
        self.arm_scheme_timer(port, at);
    }

    /// A credit request for `packets` packets reached receiver `h`: its first credit goes at once (ns-2's
    /// `recv_credit_request`), at `α` times the largest rate (less for a small flow). A repeated request finds
    /// the flow paced already.
    fn start_pacing(&mut self, h: u32, id: FlowId, packets: u64) {
        let now = self.now;
        let x = me(self);
        if x.pacers.contains_key(&id.0) {
            return;
        }
        let feedback = CreditFeedback::new(&x.cfg, x.hosts[h as usize].max_rate, packets, now);
        x.pacers.insert(
            id.0,
            Pacer {
                feedback,
                next_at: now,
            },
        );
        x.hosts[h as usize].due.push(Reverse((now, id.0)));
        let port = self.hosts[h as usize].port;
        self.arm_scheme_timer(port, now);
    }

    /// A credit reached sender `h`. It acknowledges the data the receiver has; with data left to send it lets
    /// one packet go, else it is wasted.
    fn take_credit(&mut self, h: u32, p: &Packet) {
        let slot = self.flow_state[p.flow.idx()].slot;
        if slot == NO_SLOT {
            me(self).stats.wasted += 1;
            return;
        }
        let slot = slot as usize;
        let out = self.active[slot].sender.handle_ack(p.seq, None);
        if out.complete {
            me(self).stats.wasted += 1;
            self.complete(p.flow);
            return;
        }
        if out.newly_acked > 0 {
            self.restart_rto(h, slot);
        }
        let unsent = self.active[slot].sender.has_unsent();
        let x = me(self);
        let s = &mut x.senders[slot];
        s.request_at = Time::MAX;
        if !unsent || s.stopped {
            x.stats.wasted += 1;
            return;
        }
        s.credits.push_back((p.aux as u64, p.sent_at));
        self.make_ready(p.flow);
    }

    /// Host `h`'s timer: the credits due from its receivers go into its credit queue (dropped when it is full),
    /// the requests due from its senders go again, and the NIC is woken for the credits.
    fn xpass_host_timer(&mut self, h: u32, port: PortId) {
        let now = self.now;
        while let Some(&Reverse((t, f))) = me(self).hosts[h as usize].due.peek() {
            if t > now {
                break;
            }
            me(self).hosts[h as usize].due.pop();
            if me(self).pacers.get(&f).is_some_and(|p| p.next_at == t) {
                self.emit_credit(h, FlowId(f));
            }
        }
        while let Some(&Reverse((t, f))) = me(self).hosts[h as usize].requests.peek() {
            if t > now {
                break;
            }
            me(self).hosts[h as usize].requests.pop();
            let slot = self.flow_state[f as usize].slot;
            if slot != NO_SLOT && me(self).senders[slot as usize].request_at == t {
                self.send_credit_request(h, FlowId(f), slot as usize);
            }
        }
        let hs = &me(self).hosts[h as usize];
        let next = [hs.due.peek(), hs.requests.peek()]
            .into_iter()
            .flatten()
            .map(|&Reverse((t, _))| t)
            .min();
        let waiting = !hs.credits.is_empty();
        if let Some(t) = next {
            self.arm_scheme_timer(port, t);
        }
        if waiting {
            self.kick(port);
        }
    }

    /// Receiver `h` sends flow `id`'s next credit (after a feedback update) and schedules the one after it.
    fn emit_credit(&mut self, h: u32, id: FlowId) {
        let now = self.now;
        // The receiver's next expected byte: the credit acknowledges the data so far.
        let ack = match self.flow_state[id.idx()].recv_slot {
            RECEIVED => self.flows[id.idx()].spec.size.0,
            NO_SLOT => 0,
            slot => self.inbound[slot as usize].receiver.rcv_nxt(),
        };
        let x = me(self);
        let hs = &mut x.hosts[h as usize];
        let u = hs.rng.random::<f64>();
        let pacer = x.pacers.get_mut(&id.0).expect("paced");
        pacer.feedback.poll_update(now);
        let (seq, gap) = pacer.feedback.next_credit(u);
        pacer.next_at = now + gap;
        hs.due.push(Reverse((now + gap, id.0)));
        x.stats.sent += 1;
        let (size, cap) = (x.cfg.credit_size.0 as u32, x.cfg.credit_buffer as usize);
        let pkt = self.new_control(id, true, PacketKind::Credit, (ack, seq as u32), size);
        let x = me(self);
        let hs = &mut x.hosts[h as usize];
        if hs.credits.len() >= cap {
            x.stats.dropped += 1;
            self.drop_packet(pkt, DropReason::CreditQueueFull);
        } else {
            hs.credits.push_back(pkt);
        }
    }
}
