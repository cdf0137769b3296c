//! Aquarius's switch and NIC sides on the seam (Li et al., APNet 2023): each switch's flow table and QueueTables
//! ([`AquariusSwitch`], sans-IO) are told of every data packet's enqueue and dequeue (Algorithms 1 and 2) and of
//! every PAUSE and RESUME that reaches one of its egress ports (§3.3); the frames they answer with go upstream
//! in the strict-priority control queue, carrying (upstream queue, FID) in their `seq` (queue in the high 32
//! bits, flow in the low). NICs are BFC's (§6.2.1 of BFC, which Aquarius's evaluation shares): a queue per flow,
//! so at a NIC every PAUSE finds its flow alone in its queue and pauses that queue (§3.3's first case).

use super::bfc::Egress;
use super::*;
use bfcsim_schemes::aquarius::{
    AquariusConfig, AquariusSwitch, Arrival, Departure, Enqueued, QueueAction, Signal, View,
};

/// [`Enqueued::congested`] kept with a packet while it is in a switch.
const CONGESTED: u8 = 1;

/// Aquarius's state in one shard.
pub(in crate::engine) struct Aquarius {
    cfg: AquariusConfig,
    /// Each switch's state, by switch index.
    switches: Vec<AquariusSwitch>,
}

impl View for Egress<'_> {
    fn queue_packets(&self, q: usize) -> u64 {
        self.queues.queue_len(q) as u64
    }
    fn is_paused(&self, q: usize) -> bool {
        self.queues.is_paused(q)
    }
}

fn me(sh: &mut Shard) -> &mut Aquarius {
    match &mut sh.scheme {
        Scheme::Aquarius(a) => a,
        _ => unreachable!("Aquarius runs"),
    }
}

fn me_ref(sh: &Shard) -> &Aquarius {
    match &sh.scheme {
        Scheme::Aquarius(a) => a,
        _ => unreachable!("Aquarius runs"),
    }
}

/// A frame's `seq`: (upstream queue, FID).
fn frame_seq(queue: u32, flow: u32) -> u64 {
    (queue as u64) << 32 | flow as u64
}

impl SchemeSide for Aquarius {
    /// Creates each switch's state: the 1-hop RTT is the largest round trip of a link's delays over the
    /// switch's ports, as for BFC; the MTU a full data packet.
    fn init(sh: &mut Shard) -> Result<Aquarius, String> {
        let FlowControl::Aquarius(cfg) = &sh.params.flow_control else {
            unreachable!("configured")
        };
        let cfg = cfg.clone();
        sh.hop.enabled = true;
        let mtu = sh.params.nic.payload + sh.params.nic.header + sh.rate.int_overhead;
        let queues = sh.params.switch.total_queues();
        let switches = sh
            .switch_keys
            .iter()
            .map(|key| {
                let ports = &sh.topo.nodes[key.node.idx()].ports;
                let hrtt = ports
                    .iter()
                    .map(|&p| {
                        sh.wires[p.idx()].delay + sh.wires[sh.topo.ports[p.idx()].peer.idx()].delay
                    })
                    .max()
                    .unwrap_or(Time::ZERO);
                AquariusSwitch::new(
                    &cfg,
                    ports.len(),
                    queues,
                    sh.queues_per_class as usize,
                    hrtt,
                    mtu,
                )
            })
            .collect();
        sh.start_watchdog(cfg.watchdog);
        Ok(Aquarius { cfg, switches })
    }

    /// Algorithm 1: the flow's queue, the pausing decision, and a PAUSE upstream when pauseNum leaves zero; a
    /// packet the buffer refuses is undone as if it had left at once (its PAUSE, if any, cancelled).
    #[inline]
    fn enqueue(sh: &mut Shard, e: &Entry) -> Result<(), DropReason> {
        let (arrival, level) = sh.aquarius_arrival(e);
        let out = &sh.sw_ports[e.out_sp as usize];
        let view = Egress {
            queues: &out.queues,
            level,
        };
        let Scheme::Aquarius(a) = &mut sh.scheme else {
            unreachable!("Aquarius runs")
        };
        let en = a.switches[e.s].handle_enqueue(&arrival, &view);
        // A PAUSE pending for the flow holds the queue it was just mapped to, or the lone flows the queue was held
        // for moved to the rsvQ (whether or not the buffer takes the packet: the QueueTable's state has changed).
        if en.actions.iter().any(Option::is_some) {
            let changes = en.actions.into_iter().filter_map(queue_change);
            sh.set_port_paused(e.egress, e.out_sp, changes);
        }
        let queue = en.queue as usize;
        let out_local = arrival.out_port as usize;
        if let Err(reason) = sh.admit(e.s, out_local, queue, e.pkt, e.p.size) {
            let d = departure(&arrival, &en);
            let resume = me(sh).switches[e.s].handle_drop(&d, en.high);
            debug_assert_eq!(
                resume.is_some(),
                en.signal.is_some(),
                "a refused packet's RESUME cancels exactly its own PAUSE"
            );
            return Err(reason);
        }
        sh.push_hop(e, queue, if en.congested { CONGESTED } else { 0 });
        if let Some(signal) = en.signal {
            sh.aquarius_signal(e.s, signal);
        }
        Ok(())
    }

    /// Algorithm 2 for a data packet, and the QueueTable's bookkeeping of the queue it left (§3.3); the queue
    /// becomes the packet's `upstreamQ`.
    #[inline]
    fn dequeued(sh: &mut Shard, sp: u32, pkt: PacketId, queue: usize, data: bool) {
        if data {
            sh.aquarius_dequeue(sp, pkt, queue);
        }
        sh.pause_changed(sp);
    }

    /// A PAUSE or RESUME reached the device owning `port`: at a switch the QueueTable of that egress decides
    /// (§3.3); at a NIC the flow's own queue is paused or resumed.
    fn frame(sh: &mut Shard, port: PortId, pkt: PacketId) {
        let p = sh.take_frame(pkt);
        let pause = p.kind == PacketKind::Pause;
        let (queue, flow) = ((p.seq >> 32) as u32, p.seq as u32);
        match sh.wires[port.idx()].owner {
            Owner::Switch(sp) => {
                let hash = sh.flows[flow as usize].hash as u32;
                let class = sh.flows[flow as usize].spec.class;
                let queues = sh.class_queues(class);
                let out = &sh.sw_ports[sp as usize];
                let (s, local) = (out.switch as usize, out.local);
                // The frame handlers read queue lengths and pause states only, never N_active's level.
                let view = Egress {
                    queues: &out.queues,
                    level: 0,
                };
                let Scheme::Aquarius(a) = &mut sh.scheme else {
                    unreachable!("Aquarius runs")
                };
                let sw = &mut a.switches[s];
                let action = if pause {
                    sw.handle_pause(local, hash, flow, queues, &view)
                } else {
                    sw.handle_resume(local, hash, flow, &view)
                };
                if let Some(change) = queue_change(action) {
                    sh.set_port_paused(port, sp, [change]);
                }
            }
            Owner::Host(h) => sh.set_nic_paused(h, [(queue, pause)]),
        }
    }

    /// A NIC queue per flow (BFC §6.2.1).
    #[inline]
    fn flow_started(sh: &mut Shard, h: u32, id: FlowId, _slot: usize) -> u32 {
        let hash = sh.flows[id.idx()].hash;
        sh.hosts[h as usize].nic.alloc(None, hash)
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
        for a in &me_ref(sh).switches {
            stats.aquarius = stats.aquarius + a.stats();
        }
    }
}

/// A QueueTable's decision as (queue, paused).
fn queue_change(action: Option<QueueAction>) -> Option<(usize, bool)> {
    match action? {
        QueueAction::Pause(q) => Some((q as usize, true)),
        QueueAction::Resume(q) => Some((q as usize, false)),
    }
}

/// The departure of a packet described by `a` that the switch answered with `en`.
fn departure(a: &Arrival, en: &Enqueued) -> Departure {
    Departure {
        out_port: a.out_port,
        hash: a.hash,
        flow: a.flow,
        queue: en.queue,
        congested: en.congested,
    }
}

impl Shard {
    /// Data packet `e` as Aquarius's enqueue sees it, and the priority level of its class.
    fn aquarius_arrival(&self, e: &Entry) -> (Arrival, usize) {
        let queues = self.class_queues(e.p.class);
        let level = self.class_level(e.p.class);
        let arrival = Arrival {
            now: self.now,
            in_port: e.in_local,
            out_port: e.out_local,
            hash: e.p.hash,
            flow: e.p.flow.0,
            upstream_q: e.p.upstream_q,
            queues,
            rate: self.wires[e.egress.idx()].rate,
        };
        (arrival, level)
    }

    /// Algorithm 2 for data packet `pkt` leaving switch port `sp` from `queue`; stamps the queue as the packet's
    /// `upstreamQ` for the next hop.
    fn aquarius_dequeue(&mut self, sp: u32, pkt: PacketId, queue: usize) {
        let port = &self.sw_ports[sp as usize];
        let (s, local) = (port.switch as usize, port.local);
        let p = self.packets.get_mut(pkt);
        let d = Departure {
            out_port: local,
            hash: p.hash,
            flow: p.flow.0,
            queue: queue as u16,
            congested: p.hop_flags & CONGESTED != 0,
        };
        p.upstream_q = queue as u32;
        p.hop_flags = 0;
        // Algorithm 2 reads queue lengths only, never N_active's level.
        let view = Egress {
            queues: &self.sw_ports[sp as usize].queues,
            level: 0,
        };
        let Scheme::Aquarius(a) = &mut self.scheme else {
            unreachable!("Aquarius runs")
        };
        let (signal, action) = a.switches[s].handle_dequeue(&d, &view);
        if let Some(signal) = signal {
            self.aquarius_signal(s, signal);
        }
        // The port is sending the packet that left: a resumed rsvQ is served after it (switch_send looks for a
        // ready queue once `dequeued` returns), never kicked into a second transmission now.
        if let Some(change) = queue_change(action) {
            self.set_queues_paused(sp, [change]);
        }
    }

    /// Sends a PAUSE or RESUME from switch `s` out of the ingress port it concerns.
    fn aquarius_signal(&mut self, s: usize, signal: Signal) {
        let (local, seq, kind) = match signal {
            Signal::Pause { port, queue, flow } => {
                (port, frame_seq(queue, flow), PacketKind::Pause)
            }
            Signal::Resume { port, queue, flow } => {
                (port, frame_seq(queue, flow), PacketKind::Resume)
            }
        };
        let size = me(self).cfg.frame_size;
        let port = self.switch_port(s, local as usize);
        self.count_frame(kind);
        self.send_frame(port, kind, seq, size);
    }
}
