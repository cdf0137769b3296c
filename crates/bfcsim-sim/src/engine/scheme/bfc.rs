//! BFC's switch and NIC sides (§3.3) on the seam: each switch's flow table and pause counter
//! ([`BfcSwitch`], sans-IO) are told of every data packet's enqueue and dequeue; the PAUSE or RESUME they answer
//! with goes upstream as a per-hop frame in the strict-priority control queue; each ingress with paused
//! upstream queues re-sends its bitmap periodically (the scheme timer of its port, armed in a batch with the
//! other ports due at the same tick of the refresh grid); a NIC gives each flow a
//! queue of its own and parks the flows of a paused queue. App. B's table of (ingress, egress) pairs whose
//! backpressure is elided comes from the routes.

use bfcsim_net::backpressure::elided_pairs;
use bfcsim_schemes::bfc::{Arrival, BfcConfig, BfcSwitch, Departure, EgressView, Enqueued, Signal};

use super::*;

/// [`Enqueued::tracked`] kept with a packet while it is in a switch.
const TRACKED: u8 = 1;
/// [`Enqueued::counted`] kept with a packet while it is in a switch.
const COUNTED: u8 = 2;

/// The per-hop flags a packet carries through a switch.
fn flags(e: &Enqueued) -> u8 {
    (if e.tracked { TRACKED } else { 0 }) | (if e.counted { COUNTED } else { 0 })
}

/// BFC's state in one shard.
pub(in crate::engine) struct Bfc {
    cfg: BfcConfig,
    /// Each switch's flow table and pause counter, by switch index.
    switches: Vec<BfcSwitch>,
    /// App. B: per switch, the (ingress, egress) pairs whose backpressure is elided.
    elide: Vec<ElidedPairs>,
    /// The draws of `lose_frames`, one stream per receiving port (empty unless frames are lost on purpose), so
    /// that a frame's fate depends only on its port's history.
    loss_rngs: Vec<Rng>,
}

/// The egress port's queues as BFC (and Aquarius, which builds on its view) sees them.
pub(super) struct Egress<'a> {
    pub(super) queues: &'a PortQueues,
    /// The priority level of the packet's class.
    pub(super) level: usize,
}

impl EgressView for Egress<'_> {
    fn first_empty(&self, range: std::ops::Range<usize>, start: usize) -> Option<usize> {
        self.queues.first_empty(range, start)
    }
    fn queue_bytes(&self, q: usize) -> u64 {
        self.queues.queue_bytes(q)
    }
    fn active_with(&self, q: usize) -> usize {
        self.queues.ready_with(q, self.level)
    }
}

/// One switch's (ingress, egress) pairs whose backpressure is elided (App. B), bit `in × ports + out`; no bits
/// at all where none is, as at every switch of an up-down routed Clos, so that the packets there read nothing.
struct ElidedPairs {
    ports: usize,
    bits: Box<[u64]>,
}

impl ElidedPairs {
    fn new(ports: usize, pairs: &[(u16, u16)]) -> ElidedPairs {
        if pairs.is_empty() {
            return ElidedPairs {
                ports,
                bits: Box::default(),
            };
        }
        let mut bits = vec![0u64; (ports * ports).div_ceil(64)];
        for &(i, e) in pairs {
            let bit = i as usize * ports + e as usize;
            bits[bit / 64] |= 1 << (bit % 64);
        }
        ElidedPairs {
            ports,
            bits: bits.into_boxed_slice(),
        }
    }

    #[inline]
    fn has(&self, ingress: u16, egress: u16) -> bool {
        let bit = ingress as usize * self.ports + egress as usize;
        !self.bits.is_empty() && self.bits[bit / 64] >> (bit % 64) & 1 == 1
    }
}

fn me(sh: &mut Shard) -> &mut Bfc {
    match &mut sh.scheme {
        Scheme::Bfc(b) => b,
        _ => unreachable!("BFC runs"),
    }
}

/// A refresh frame (§3.3.2) reached the device owning `port`: every queue of its transmitter takes the state
/// bitmap stored at `map` asks (paused when its bit is set). Only the queues whose state differs are handed to
/// the engine, in queue order, found a word of 64 queues at a time: a refresh lists every queue and few change,
/// and a call per queue that did nothing was 4% of a BFC run's instructions.
fn refresh(sh: &mut Shard, port: PortId, map: u32) {
    match sh.wires[port.idx()].owner {
        Owner::Switch(sp) => {
            let queues = &sh.sw_ports[sp as usize].queues;
            let changed = changed_queues(sh.hop.map(map), sh.data_base..queues.count(), |w| {
                queues.paused_word(w)
            });
            sh.hop.release_map(map);
            sh.set_port_paused(port, sp, changed);
        }
        Owner::Host(h) => {
            if !me(sh).cfg.nic_obeys_pause {
                sh.hop.release_map(map);
                return;
            }
            let nic = &sh.hosts[h as usize].nic;
            let changed =
                changed_queues(sh.hop.map(map), 0..nic.users.len(), |w| nic.paused_word(w));
            sh.hop.release_map(map);
            sh.set_nic_paused(h, changed.into_iter().map(|(q, p)| (q as u32, p)));
        }
    }
}

/// The queues in `range` whose paused bit (word `w` of them from `paused(w)`) differs from bitmap `want`'s
/// (absent words are zero), each with `want`'s state, in queue order.
fn changed_queues(
    want: &[u64],
    range: std::ops::Range<usize>,
    paused: impl Fn(usize) -> u64,
) -> Vec<(usize, bool)> {
    let mut changed = Vec::new();
    if range.is_empty() {
        return changed;
    }
    for w in range.start / 64..range.end.div_ceil(64) {
        let mut mask = u64::MAX;
        if w == range.start / 64 {
            mask &= u64::MAX << (range.start % 64);
        }
        if (w + 1) * 64 > range.end {
            mask &= (1 << (range.end - w * 64)) - 1;
        }
        let asked = want.get(w).copied().unwrap_or(0);
        let mut diff = (asked ^ paused(w)) & mask;
        while diff != 0 {
            let b = diff.trailing_zeros() as usize;
            changed.push((w * 64 + b, asked >> b & 1 == 1));
            diff &= diff - 1;
        }
    }
    changed
}

fn me_ref(sh: &Shard) -> &Bfc {
    match &sh.scheme {
        Scheme::Bfc(b) => b,
        _ => unreachable!("BFC runs"),
    }
}

impl SchemeSide for Bfc {
    /// Creates each switch's BFC state: the 1-hop RTT is the largest round trip of a link's delays over the
    /// switch's ports (§3.3.2), and App. B's table comes from the routes.
    fn init(sh: &mut Shard) -> Result<Bfc, String> {
        let FlowControl::Bfc(cfg) = &sh.params.flow_control else {
            unreachable!("configured")
        };
        let cfg = cfg.clone();
        sh.hop.enabled = true;
        let elided = if cfg.deadlock_prevention {
            elided_pairs(&sh.topo, &sh.routes)
        } else {
            vec![Vec::new(); sh.topo.nodes.len()]
        };
        let mut switches = Vec::with_capacity(sh.switches.len());
        let mut elide_all = Vec::with_capacity(sh.switches.len());
        for key in &sh.switch_keys {
            let node = key.node;
            let ports = &sh.topo.nodes[node.idx()].ports;
            let hrtt = ports
                .iter()
                .map(|&p| {
                    sh.wires[p.idx()].delay + sh.wires[sh.topo.ports[p.idx()].peer.idx()].delay
                })
                .max()
                .unwrap_or(Time::ZERO);
            let n = ports.len();
            let rng = rng::stream(sh.params.seed, Stream::Other(0xBFC0_0000 | node.0));
            switches.push(BfcSwitch::new(
                &cfg,
                n,
                sh.queues_per_class as usize,
                hrtt,
                rng,
            ));
            elide_all.push(ElidedPairs::new(n, &elided[node.idx()]));
        }
        let loss_rngs = if cfg.lose_frames > 0.0 {
            (0..sh.topo.ports.len() as u32)
                .map(|p| rng::stream(sh.params.seed, Stream::Other(0x4f50_0000 | p)))
                .collect()
        } else {
            Vec::new()
        };
        sh.start_watchdog(cfg.watchdog);
        Ok(Bfc {
            cfg,
            switches,
            elide: elide_all,
            loss_rngs,
        })
    }

    /// §3.3.1–§3.3.2 "On Enqueue": the flow's queue from the flow table, the pause counter, and a PAUSE upstream
    /// when the counter leaves zero; a packet the buffer refuses is undone as if it had left at once.
    #[inline]
    fn enqueue(sh: &mut Shard, e: &Entry) -> Result<(), DropReason> {
        let en = sh.bfc_enqueue(e);
        let queue = en.queue as usize;
        let out_local = e.out_local as usize;
        if let Err(reason) = sh.admit(e.s, out_local, queue, e.pkt, e.p.size) {
            sh.bfc_undo(e, &en);
            return Err(reason);
        }
        sh.push_hop(e, queue, flags(&en));
        if let Some(signal) = en.signal {
            sh.send_signal(e.s, signal);
        }
        Ok(())
    }

    /// §3.3.1–§3.3.2 "On Dequeue" for a data packet; the queue it left becomes its `upstreamQ`.
    #[inline]
    fn dequeued(sh: &mut Shard, sp: u32, pkt: PacketId, queue: usize, data: bool) {
        if data {
            sh.bfc_dequeue(sp, pkt, queue);
        }
        sh.pause_changed(sp);
    }

    /// A PAUSE, RESUME or refresh reached the device owning `port`: pause, resume, or take the refreshed set of
    /// paused queues (a NIC only when `nic_obeys_pause`). With `lose_frames`, PAUSEs and RESUMEs are lost on
    /// purpose to show that refreshes repair the state.
    fn frame(sh: &mut Shard, port: PortId, pkt: PacketId) {
        let kind = sh.packets.get(pkt).kind;
        let b = me(sh);
        let lose = b.cfg.lose_frames;
        if kind != PacketKind::Refresh
            && lose > 0.0
            && b.loss_rngs[port.idx()].random::<f64>() < lose
        {
            sh.hop.stats.frames_lost += 1;
            sh.drop_packet(pkt, DropReason::InjectedLoss);
            return;
        }
        let p = sh.take_frame(pkt);
        if p.kind == PacketKind::Refresh {
            return refresh(sh, port, p.seq as u32);
        }
        let (q, paused) = (p.seq as u32, p.kind == PacketKind::Pause);
        match sh.wires[port.idx()].owner {
            Owner::Switch(sp) => sh.set_port_paused(port, sp, [(q as usize, paused)]),
            Owner::Host(h) => {
                if me(sh).cfg.nic_obeys_pause {
                    sh.set_nic_paused(h, [(q, paused)]);
                }
            }
        }
    }

    /// §3.3.2's periodic refresh of switch `port`'s ingress: the bitmap of upstream queues it wants paused. While
    /// any is paused the refresh repeats; the last one, with none paused, clears any pause whose RESUME was lost.
    fn timer(sh: &mut Shard, port: PortId) {
        let Owner::Switch(sp) = sh.wires[port.idx()].owner else {
            unreachable!("refreshes are scheduled for switch ports")
        };
        let sp_ref = &sh.sw_ports[sp as usize];
        let (s, local) = (sp_ref.switch as usize, sp_ref.local);
        // A borrow of the scheme field alone (not `me_ref`, which borrows the shard), so that the bitmap can be
        // copied into `sh.hop` straight from the pause counter.
        let Scheme::Bfc(b) = &sh.scheme else {
            unreachable!("BFC runs")
        };
        let bitmap = b.switches[s].paused_bitmap(local);
        let still = b.switches[s].paused_at(local) > 0;
        let size = b.cfg.frame_size + (bitmap.len() * 8) as u32;
        let index = sh.hop.store_map(bitmap);
        sh.hop.stats.refresh_frames += 1;
        sh.send_frame(port, PacketKind::Refresh, index as u64, size);
        if still {
            sh.arm_refresh(port);
        }
    }

    /// §6.2.1: a NIC queue per flow (flows share queues by hash past `nic_queues`).
    #[inline]
    fn flow_started(sh: &mut Shard, h: u32, id: FlowId, _slot: usize) -> u32 {
        let limit = me(sh).cfg.nic_queues;
        let hash = sh.flows[id.idx()].hash;
        sh.hosts[h as usize].nic.alloc(limit, hash)
    }

    #[inline]
    fn flow_finished(sh: &mut Shard, h: u32, nic_q: u32) {
        sh.hosts[h as usize].nic.release(nic_q);
    }

    /// A flow whose NIC queue is paused waits, parked, for its RESUME.
    #[inline]
    fn may_send(sh: &mut Shard, h: u32, id: FlowId, slot: usize) -> bool {
        !sh.park_if_paused(h, id, slot)
    }

    fn add_stats(sh: &Shard, stats: &mut HopStats) {
        for b in &me_ref(sh).switches {
            stats.bfc = stats.bfc + b.stats();
        }
    }
}

impl Shard {
    /// BFC's enqueue operations for data packet `e`.
    #[inline(always)]
    fn bfc_enqueue(&mut self, e: &Entry) -> Enqueued {
        let p = &e.p;
        let queues = self.class_queues(p.class);
        let out = &self.sw_ports[e.out_sp as usize];
        let (in_local, out_local) = (e.in_local, e.out_local);
        let level = self.class_level(p.class);
        let Scheme::Bfc(b) = &mut self.scheme else {
            unreachable!("BFC runs")
        };
        let arrival = Arrival {
            now: self.now,
            in_port: in_local,
            out_port: out_local,
            hash: p.hash,
            flow: p.flow.0,
            upstream_q: p.upstream_q,
            size: p.size,
            incast: p.incast,
            queues: queues.clone(),
            rate: self.wires[e.egress.idx()].rate,
            elide: b.elide[e.s].has(in_local, out_local),
        };
        let view = Egress {
            queues: &out.queues,
            level,
        };
        b.switches[e.s].handle_enqueue(&arrival, &view)
    }

    /// Undoes [`Shard::bfc_enqueue`] for a packet the buffer then dropped: as if it had left at once. A PAUSE
    /// it caused is cancelled by the RESUME of its leaving, so neither is sent.
    fn bfc_undo(&mut self, e: &Entry, en: &Enqueued) {
        let d = Departure {
            now: self.now,
            in_port: e.in_local,
            out_port: e.out_local,
            hash: e.p.hash,
            flow: e.p.flow.0,
            upstream_q: e.p.upstream_q,
            tracked: en.tracked,
            counted: en.counted,
        };
        let resume = me(self).switches[e.s].handle_drop(&d);
        if resume.is_some() && en.signal.is_none() {
            unreachable!("a counter above one cannot reach zero on one departure");
        }
    }

    /// BFC's dequeue operations for data packet `pkt` leaving switch port `sp` from `queue`; stamps the queue
    /// as the packet's `upstreamQ` for the next hop.
    #[inline(always)]
    fn bfc_dequeue(&mut self, sp: u32, pkt: PacketId, queue: usize) {
        let port = &self.sw_ports[sp as usize];
        let s = port.switch as usize;
        let p = self.packets.get_mut(pkt);
        let d = Departure {
            now: self.now,
            in_port: p.in_port,
            out_port: port.local,
            hash: p.hash,
            flow: p.flow.0,
            upstream_q: p.upstream_q,
            tracked: p.hop_flags & TRACKED != 0,
            counted: p.hop_flags & COUNTED != 0,
        };
        p.upstream_q = queue as u32;
        p.hop_flags = 0;
        let signal = me(self).switches[s].handle_dequeue(&d);
        if let Some(signal) = signal {
            self.send_signal(s, signal);
        }
    }

    /// Sends a BFC PAUSE or RESUME from switch `s` out of the ingress port it concerns; a PAUSE arms the port's
    /// refresh.
    fn send_signal(&mut self, s: usize, signal: Signal) {
        let (local, queue, kind) = match signal {
            Signal::Pause { port, queue } => (port, queue, PacketKind::Pause),
            Signal::Resume { port, queue } => (port, queue, PacketKind::Resume),
        };
        let size = me(self).cfg.frame_size;
        let port = self.switch_port(s, local as usize);
        self.count_frame(kind);
        if kind == PacketKind::Pause {
            self.arm_refresh(port);
        }
        self.send_frame(port, kind, queue as u64, size);
    }

    /// Schedules `port`'s next refresh on the interval's grid (the artifact's refresh ticks every interval
    /// for every port), unless one is pending or refreshes are off.
    fn arm_refresh(&mut self, port: PortId) {
        let interval = me(self).cfg.refresh_interval;
        if interval == Time::ZERO || !matches!(self.wires[port.idx()].owner, Owner::Switch(_)) {
            return;
        }
        let at = Time((self.now.0 / interval.0 + 1) * interval.0);
        self.arm_batched_timer(port, at);
    }

    /// The BFC state of switch `s`, when BFC runs.
    pub fn switch_bfc(&self, s: usize) -> Option<&BfcSwitch> {
        match &self.scheme {
            Scheme::Bfc(b) => Some(&b.switches[s]),
            _ => None,
        }
    }
}
