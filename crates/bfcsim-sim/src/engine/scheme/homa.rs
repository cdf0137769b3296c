//! Homa's switch and NIC sides (Montazeri et al., SIGCOMM 2018) on the seam. The Homa paper is not in
//! `papers/`: its sections are cited by title.
//!
//! - **Sender** (§3 "Flow control"): a message's first `rtt_bytes` go at once, unscheduled, at the level its
//!   size picks from the workload's cutoffs ([`Priorities`], §3 "Packet priorities"); the rest waits for
//!   grants, each letting the sender go up to an offset at the level the grant names. The NIC serves its
//!   messages shortest remaining first (`nic.scheduler = "srf"`, §3's SRPT at the sender).
//! - **Receiver** (§3 "Flow control", "Packet priorities", "Overcommitment"): after every data packet its
//!   [`GrantScheduler`] grants the `overcommitment` messages with the fewest bytes left up to `rtt_bytes`
//!   beyond what arrived, at scheduled levels by rank. A message with granted bytes outstanding and nothing
//!   heard for `resend_timeout` draws a RESEND for its first missing range (§3 "Lost packets"); the sender's
//!   selective repeat resends the packets of the range it had sent.
//! - **Switches**: strict priority among `priorities` levels; a data packet's level is its traffic class
//!   (what the sender stamped), so the switch side is the engine's default enqueue. Grants and RESENDs ride
//!   the control queue. Scheduled packets' queuing delays at ports into and out of the core are recorded for
//!   BFC App. A.2's Table 2.

use bfcsim_schemes::homa::{Grant, GrantScheduler, HomaConfig, HomaStats, Priorities};
use bfcsim_schemes::transport::Recovery;

use super::*;

/// Homa's state in one shard.
pub(in crate::engine) struct Homa {
    cfg: HomaConfig,
    prio: Priorities,
    overcommitment: u32,
    /// Each running message's sender side, by its slot (reset when a message takes the slot).
    senders: Vec<SenderSide>,
    /// Each host's receiver side, by host index.
    receivers: Vec<ReceiverSide>,
    /// Each switch port's place for Table 2, by switch-port index.
    core: Vec<Core>,
    stats: HomaStats,
    /// Scratch for the grants of one poll.
    grants: Vec<Grant>,
}

/// A running message's sender side.
#[derive(Clone, Copy, Default)]
struct SenderSide {
    /// Bytes the sender may have sent: its unscheduled bytes, then the last grant's offset.
    granted: u64,
    /// The level of its unscheduled packets.
    unscheduled: u8,
    /// The level the last grant named for its scheduled packets.
    scheduled: u8,
}

/// A host's receiver side.
#[derive(Default)]
struct ReceiverSide {
    sched: GrantScheduler,
    /// When each incoming message was last heard from (or last asked to resend), and the RESENDs sent since it
    /// was last heard from, by flow id.
    heard: BTreeMap<u32, (Time, u32)>,
}

/// Where a switch port sits for Table 2.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Core {
    /// From a ToR up into the core (ToR-Agg).
    Up,
    /// From the core down to a ToR (Agg-ToR).
    Down,
    /// Anything else (host-facing, or between core tiers).
    Other,
}

fn me(sh: &mut Shard) -> &mut Homa {
    match &mut sh.scheme {
        Scheme::Homa(x) => x,
        _ => unreachable!("Homa runs"),
    }
}

impl SchemeSide for Homa {
    fn init(sh: &mut Shard) -> Result<Homa, String> {
        let FlowControl::Homa(cfg) = &sh.params.flow_control else {
            unreachable!("configured")
        };
        let cfg = cfg.clone();
        let t = &sh.params.nic.transport;
        if t.recovery != Recovery::Selective || t.nack || t.ack_every != 0 {
            return Err(
                "flow_control.kind = \"homa\" recovers losses with RESENDs over selective repeat and acknowledges \
                 only whole messages: set nic.recovery = \"selective\", nic.nack = false, nic.ack_every = 0"
                    .into(),
            );
        }
        let sizes: Vec<u64> = sh.flows.iter().map(|f| f.spec.size.0).collect();
        let prio = Priorities::from_sizes(&cfg, &sizes);
        let overcommitment = match cfg.overcommitment {
            0 => prio.scheduled(),
            n => n,
        };
        let has_hosts = |node: NodeId| {
            sh.topo.nodes[node.idx()]
                .ports
                .iter()
                .any(|&p| sh.switch_of_node[sh.topo.peer_node(p).idx()] == u32::MAX)
        };
        let core = sh
            .sw_ports
            .iter()
            .map(|sp| {
                let node = sh.switch_keys[sp.switch as usize].node;
                let port = sh.topo.nodes[node.idx()].ports[sp.local as usize];
                let peer = sh.topo.peer_node(port);
                if sh.switch_of_node[peer.idx()] == u32::MAX {
                    Core::Other
                } else if has_hosts(node) {
                    Core::Up
                } else if has_hosts(peer) {
                    Core::Down
                } else {
                    Core::Other
                }
            })
            .collect();
        Ok(Homa {
            receivers: (0..sh.hosts.len())
                .map(|_| ReceiverSide::default())
                .collect(),
            cfg,
            prio,
            overcommitment,
            senders: Vec::new(),
            core,
            stats: HomaStats::default(),
            grants: Vec::new(),
        })
    }

    /// Table 2: how long scheduled packets waited at ports into and out of the core.
    #[inline]
    fn dequeued(sh: &mut Shard, sp: u32, pkt: PacketId, _queue: usize, data: bool) {
        if !data {
            return;
        }
        let p = sh.packets.get(pkt);
        let (class, delay) = (p.class, (sh.now - p.stamp).0);
        let x = me(sh);
        if (class as u32) < x.prio.unscheduled() {
            return;
        }
        match x.core[sp as usize] {
            Core::Up => x.stats.core_up.record(delay),
            Core::Down => x.stats.core_down.record(delay),
            Core::Other => {}
        }
    }

    /// The receiver's RESEND check.
    fn timer(sh: &mut Shard, port: PortId) {
        let Owner::Host(h) = sh.wires[port.idx()].owner else {
            unreachable!("Homa arms timers at hosts only")
        };
        sh.homa_resend_check(h, port);
    }

    /// A new message may send its unscheduled bytes at once.
    fn flow_started(sh: &mut Shard, _h: u32, id: FlowId, slot: usize) -> u32 {
        let size = sh.flows[id.idx()].spec.size.0;
        let x = me(sh);
        if x.senders.len() <= slot {
            x.senders.resize(slot + 1, SenderSide::default());
        }
        x.senders[slot] = SenderSide {
            granted: x.cfg.rtt_bytes.0.min(size),
            unscheduled: x.prio.unscheduled_level(size),
            scheduled: u8::MAX,
        };
        0
    }

    /// Granted bytes, or a packet to resend.
    #[inline]
    fn may_send(sh: &mut Shard, _h: u32, _id: FlowId, slot: usize) -> bool {
        let s = &sh.active[slot].sender;
        let (resending, next) = (s.resending(), s.snd_nxt());
        resending || next < me(sh).senders[slot].granted
    }

    /// The packet's level: unscheduled by the message's size, else the last grant's.
    #[inline]
    fn data_sent(sh: &mut Shard, _h: u32, slot: usize, pkt: PacketId) {
        let x = me(sh);
        let (rtt, s) = (x.cfg.rtt_bytes.0, x.senders[slot]);
        let p = sh.packets.get_mut(pkt);
        p.class = if p.seq < rtt {
            s.unscheduled
        } else {
            s.scheduled
        };
    }

    /// The receiver's grant scheduler takes the packet and sends the grants due.
    fn data_arrived(sh: &mut Shard, h: u32, p: &Packet, held: u64) {
        let now = sh.now;
        let size = sh.flows[p.flow.idx()].spec.size.0;
        let id = p.flow.0;
        let x = me(sh);
        let (rtt, k) = (x.cfg.rtt_bytes.0, x.overcommitment);
        let r = &mut x.receivers[h as usize];
        if held >= size {
            r.sched.remove(id);
            r.heard.remove(&id);
        } else {
            r.sched.on_data(id, size, held, rtt);
            r.heard.insert(id, (now, 0));
        }
        let mut grants = std::mem::take(&mut x.grants);
        x.receivers[h as usize]
            .sched
            .poll_grants(&x.prio, k, rtt, &mut grants);
        x.stats.grants += grants.len() as u64;
        let grant_size = sh.params.nic.ack_size;
        for g in grants.drain(..) {
            let pkt = sh.new_control(
                FlowId(g.id),
                true,
                PacketKind::Grant,
                (g.offset, g.priority as u32),
                grant_size,
            );
            sh.send_control(h, pkt);
        }
        me(sh).grants = grants;
        if held < size {
            let at = now + me(sh).cfg.resend_timeout;
            let port = sh.hosts[h as usize].port;
            sh.arm_scheme_timer(port, at);
        }
    }

    /// A grant or RESEND also restarts the sender's retransmission timer: only whole messages are acknowledged,
    /// so the timer is there for a message the receiver never heard of, and a word from the receiver says it has.
    fn packet_arrived(sh: &mut Shard, h: u32, p: &Packet) {
        let slot = sh.flow_state[p.flow.idx()].slot;
        if slot == NO_SLOT {
            return; // the message completed: a late grant or RESEND
        }
        let slot = slot as usize;
        match p.kind {
            PacketKind::Grant => {
                let s = &mut me(sh).senders[slot];
                s.granted = s.granted.max(p.seq);
                s.scheduled = p.aux as u8;
            }
            PacketKind::Resend => {
                sh.active[slot]
                    .sender
                    .handle_resend(p.seq, p.seq + p.aux as u64);
            }
            _ => unreachable!("not a Homa packet"),
        }
        sh.restart_rto(h, slot);
        sh.make_ready(p.flow);
    }

    fn add_stats(sh: &Shard, stats: &mut HopStats) {
        if let Scheme::Homa(x) = &sh.scheme {
            stats.homa = std::mem::take(&mut stats.homa) + x.stats.clone();
        }
    }
}

impl Shard {
    /// Receiver `h`'s RESEND check (§3 "Lost packets"): every incoming message with granted bytes missing and
    /// nothing heard for `resend_timeout` is asked for its first missing range, after a copy of its current grant
    /// (the grant may be what was lost: a sender that never saw it has nothing to resend); each further RESEND
    /// without word of the message waits twice as long (up to 64 timeouts), so that packets that are only queued
    /// behind an incast are not asked for again and again. The check comes back for the next deadline.
    fn homa_resend_check(&mut self, h: u32, port: PortId) {
        let now = self.now;
        let timeout = me(self).cfg.resend_timeout;
        let mut due = Vec::new();
        let mut next = Time::MAX;
        let r = &me(self).receivers[h as usize];
        for (&id, &(at, tries)) in &r.heard {
            let deadline = at + timeout * (1u64 << tries.min(6));
            if deadline > now {
                next = next.min(deadline);
                continue;
            }
            let (grant, held) = r.sched.progress(id).expect("heard messages are scheduled");
            if grant.offset > held {
                due.push((grant, tries + 1));
            }
            next = next.min(now + timeout * (1u64 << (tries + 1).min(6)));
        }
        let size = self.params.nic.ack_size;
        for (g, tries) in due {
            let id = FlowId(g.id);
            let (from, to) = match self.flow_state[id.idx()].recv_slot {
                NO_SLOT | RECEIVED => continue, // complete: the scheduler forgets it with its last packet
                s => {
                    let r = &self.inbound[s as usize].receiver;
                    (r.rcv_nxt(), r.first_held().unwrap_or(g.offset))
                }
            };
            let x = me(self);
            x.stats.resends += 1;
            x.receivers[h as usize].heard.insert(g.id, (now, tries));
            if g.priority != u8::MAX {
                x.stats.grants += 1;
                let grant = (g.offset, g.priority as u32);
                let pkt = self.new_control(id, true, PacketKind::Grant, grant, size);
                self.send_control(h, pkt);
            }
            let len = u32::try_from(to - from).unwrap_or(u32::MAX);
            let pkt = self.new_control(id, true, PacketKind::Resend, (from, len), size);
            self.send_control(h, pkt);
        }
        if next != Time::MAX {
            self.arm_scheme_timer(port, next);
        }
    }
}
