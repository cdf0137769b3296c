//! Homa on the fabric. The Homa paper is not in `papers/`: its sections are cited by title.
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
//!   (what the sender stamped), so the switch side is the fabric's default enqueue. Grants and RESENDs ride
//!   the control queue. Scheduled packets' queuing delays at ports into and out of the core are recorded for
//!   BFC App. A.2's Table 2.
//! - **Aeolus** (`[flow_control.aeolus]`, PayDebt's Homa(A), [`super::super::aeolus`]): a message's first sends
//!   of its unscheduled bytes are marked and switches drop them above the threshold; a [`PROBE`] follows the
//!   last of them, and its receiver sends a RESEND for every range still missing (PayDebt §5.2: "Homa(A)
//!   transmits tokens triggering retransmission of lost packets"), resent as scheduled packets: at the level
//!   of the message's last grant, or before any grant at the lowest scheduled level (Homa's rule for a single
//!   granted message).

use std::collections::BTreeMap;

use bfcsim_core::hist::DelayReport;
use bfcsim_core::{FlowId, NodeId, PacketId, Time};
use bfcsim_net::packet::Packet;

use super::{GRANT, Grant, GrantScheduler, HomaConfig, HomaStats, PROBE, Priorities, RESEND};
use crate::fabric::{
    Describe, Entry, NicOps, NicSide, Preset, Receiving, Scheme, SchemeReport, Setup, SwitchFacts,
    SwitchOps, SwitchSide,
};
use crate::receiver_driven::aeolus::{self, AeolusStats, FirstRtt, UNSCHEDULED};
use crate::transport::Recovery;
use bfcsim_net::mmu::DropReason;

/// Homa's state in one shard of a run.
pub struct Homa {
    cfg: HomaConfig,
    prio: Priorities,
    overcommitment: u32,
    /// Bytes of a grant or RESEND.
    control_size: u32,
    /// Each running message's sender side, by its slot (reset when a message takes the slot).
    senders: Vec<SenderSide>,
    /// Each host's receiver side, by host index.
    receivers: Vec<ReceiverSide>,
    /// Each switch port's place for Table 2, by switch-port index.
    core: Vec<Core>,
    stats: HomaStats,
    /// Scratch for the grants of one poll.
    grants: Vec<Grant>,
    /// Scratch for the missing ranges a probe reveals.
    gaps: Vec<(u64, u64)>,
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
    /// Under Aeolus: its unscheduled bytes' first sends and its probe.
    first: FirstRtt,
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

impl Homa {
    /// Receiver `h`'s grant scheduler sends the grants due now.
    fn send_grants(&mut self, fab: &mut impl NicOps, h: u32) {
        let mut grants = std::mem::take(&mut self.grants);
        let (rtt, k) = (self.cfg.rtt_bytes.0, self.overcommitment);
        self.receivers[h as usize]
            .sched
            .poll_grants(&self.prio, k, rtt, &mut grants);
        self.stats.grants += grants.len() as u64;
        for g in grants.drain(..) {
            let grant = (g.offset, g.priority as u32);
            let pkt = fab.new_control(FlowId(g.id), true, GRANT, grant, self.control_size);
            fab.send_control(self, h, pkt);
        }
        self.grants = grants;
    }

    /// Aeolus: a message's probe reached receiver `h`, behind every unscheduled packet of it that was not
    /// dropped. Each range of its first `p.seq` bytes still missing draws a RESEND now; a message heard of only
    /// through its probe joins the grant scheduler, and the RESEND timer watches it from here.
    fn probe_arrived(&mut self, fab: &mut impl NicOps, h: u32, p: &Packet) {
        let id = p.flow;
        let held = match fab.receiver(id) {
            Receiving::Complete => return,
            Receiving::NotStarted => 0,
            Receiving::Partly(r) => r.received(),
        };
        self.stats.aeolus.probes_heard += 1;
        let mut gaps = std::mem::take(&mut self.gaps);
        gaps.clear();
        aeolus::missing(fab.receiver(id), p.seq, &mut gaps);
        self.stats.aeolus.lost(&gaps);
        let now = fab.now();
        let size = fab.flow(id).spec.size.0;
        let r = &mut self.receivers[h as usize];
        r.sched.on_data(id.0, size, held, self.cfg.rtt_bytes.0);
        r.heard.insert(id.0, (now, 0));
        for &(from, to) in &gaps {
            self.stats.resends += 1;
            let len = u32::try_from(to - from).unwrap_or(u32::MAX);
            let pkt = fab.new_control(id, true, RESEND, (from, len), self.control_size);
            fab.send_control(self, h, pkt);
        }
        self.gaps = gaps;
        self.send_grants(fab, h);
        let port = fab.host_port(h);
        fab.arm_timer(port, now + self.cfg.resend_timeout);
    }

    /// Aeolus's level and mark of a packet leaving sender `h`: a first send of an unscheduled byte goes marked
    /// at the message's unscheduled level, anything else (a resend of one included) at its scheduled level; the
    /// probe goes right behind the last unscheduled packet, at its level (so in its queue).
    fn aeolus_sent(&mut self, fab: &mut impl NicOps, h: u32, slot: usize, pkt: PacketId) {
        let lowest = self.prio.scheduled_level(0, 1);
        let s = &mut self.senders[slot];
        let p = fab.packet_mut(pkt);
        let id = p.flow;
        if s.first.send(p.seq, p.payload) {
            p.mark |= UNSCHEDULED;
            p.class = s.unscheduled;
            self.stats.aeolus.unscheduled += 1;
        } else {
            p.class = if s.scheduled == u8::MAX {
                lowest
            } else {
                s.scheduled
            };
        }
        let Some(covered) = s.first.take_probe() else {
            return;
        };
        let level = s.unscheduled;
        self.stats.aeolus.probes += 1;
        let probe = fab.new_control(id, false, PROBE, (covered, 0), self.control_size);
        fab.packet_mut(probe).class = level;
        fab.queue_control(h, probe);
    }

    /// Receiver `h`'s RESEND check (§3 "Lost packets"): every incoming message with granted bytes missing and
    /// nothing heard for `resend_timeout` is asked for its first missing range, after a copy of its current grant
    /// (the grant may be what was lost: a sender that never saw it has nothing to resend); each further RESEND
    /// without word of the message waits twice as long (up to 64 timeouts), so that packets that are only queued
    /// behind an incast are not asked for again and again. The check comes back for the next deadline.
    fn resend_check(&mut self, fab: &mut impl NicOps, h: u32) {
        let now = fab.now();
        let timeout = self.cfg.resend_timeout;
        let mut due = Vec::new();
        let mut next = Time::MAX;
        let r = &self.receivers[h as usize];
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
        let size = self.control_size;
        for (g, tries) in due {
            let id = FlowId(g.id);
            let (from, to) = match fab.receiver(id) {
                // Complete: the scheduler forgets it with its last packet.
                Receiving::NotStarted | Receiving::Complete => continue,
                Receiving::Partly(r) => (r.rcv_nxt(), r.first_held().unwrap_or(g.offset)),
            };
            self.stats.resends += 1;
            self.receivers[h as usize].heard.insert(g.id, (now, tries));
            if g.priority != u8::MAX {
                self.stats.grants += 1;
                let grant = (g.offset, g.priority as u32);
                let pkt = fab.new_control(id, true, GRANT, grant, size);
                fab.send_control(self, h, pkt);
            }
            let len = u32::try_from(to - from).unwrap_or(u32::MAX);
            let pkt = fab.new_control(id, true, RESEND, (from, len), size);
            fab.send_control(self, h, pkt);
        }
        if next != Time::MAX {
            let port = fab.host_port(h);
            fab.arm_timer(port, next);
        }
    }
}

impl SwitchSide for Homa {
    /// A data packet joins its level's queue; under Aeolus, an unscheduled one is dropped above the threshold.
    #[inline]
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let queue = fab.layout().data_queue_for(e.p.class, e.p.hash);
        if let Some(a) = &self.cfg.aeolus {
            return aeolus::selective_enqueue(fab, e, queue, a);
        }
        fab.admit(e, queue)?;
        fab.push(e, queue);
        Ok(())
    }

    /// Table 2: how long scheduled packets waited at ports into and out of the core.
    #[inline]
    fn dequeued<F: SwitchOps>(
        &mut self,
        fab: &mut F,
        sp: u32,
        pkt: PacketId,
        _queue: usize,
        data: bool,
    ) {
        if !data {
            return;
        }
        let p = fab.packet(pkt);
        let (class, delay) = (p.class, (fab.now() - p.stamp).0);
        if (class as u32) < self.prio.unscheduled() {
            return;
        }
        match self.core[sp as usize] {
            Core::Up => self.stats.core_up.record(delay),
            Core::Down => self.stats.core_down.record(delay),
            Core::Other => {}
        }
    }
}

impl NicSide for Homa {
    /// A new message may send its unscheduled bytes at once.
    fn flow_started<F: NicOps>(&mut self, fab: &mut F, _h: u32, id: FlowId, slot: usize) -> u32 {
        let size = fab.flow(id).spec.size.0;
        if self.senders.len() <= slot {
            self.senders.resize(slot + 1, SenderSide::default());
        }
        let unscheduled = self.cfg.rtt_bytes.0.min(size);
        self.senders[slot] = SenderSide {
            granted: unscheduled,
            unscheduled: self.prio.unscheduled_level(size),
            scheduled: u8::MAX,
            first: FirstRtt::new(if self.cfg.aeolus.is_some() {
                unscheduled
            } else {
                0
            }),
        };
        0
    }

    /// Granted bytes, or a packet to resend.
    #[inline]
    fn may_send<F: NicOps>(&mut self, fab: &mut F, _h: u32, _id: FlowId, slot: usize) -> bool {
        let s = fab.sender(slot);
        s.resending() || s.snd_nxt() < self.senders[slot].granted
    }

    /// The packet's level: unscheduled by the message's size, else the last grant's. Under Aeolus only a first
    /// send of an unscheduled byte is unscheduled (and marked), and the probe follows the last one.
    #[inline]
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, h: u32, slot: usize, pkt: PacketId) {
        if self.cfg.aeolus.is_some() {
            self.aeolus_sent(fab, h, slot, pkt);
            return;
        }
        let (rtt, s) = (self.cfg.rtt_bytes.0, self.senders[slot]);
        let p = fab.packet_mut(pkt);
        p.class = if p.seq < rtt {
            s.unscheduled
        } else {
            s.scheduled
        };
    }

    /// The receiver's grant scheduler takes the packet and sends the grants due.
    fn data_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet, held: u64) {
        let now = fab.now();
        let size = fab.flow(p.flow).spec.size.0;
        let id = p.flow.0;
        let rtt = self.cfg.rtt_bytes.0;
        let r = &mut self.receivers[h as usize];
        if held >= size {
            r.sched.remove(id);
            r.heard.remove(&id);
        } else {
            r.sched.on_data(id, size, held, rtt);
            r.heard.insert(id, (now, 0));
        }
        self.send_grants(fab, h);
        if held < size {
            let at = now + self.cfg.resend_timeout;
            let port = fab.host_port(h);
            fab.arm_timer(port, at);
        }
    }

    /// A grant or RESEND also restarts the sender's retransmission timer: only whole messages are acknowledged,
    /// so the timer is there for a message the receiver never heard of, and a word from the receiver says it has.
    fn packet_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        if p.kind == PROBE {
            self.probe_arrived(fab, h, p);
            return;
        }
        let Some(slot) = fab.flow_slot(p.flow) else {
            return; // the message completed: a late grant or RESEND
        };
        match p.kind {
            GRANT => {
                let s = &mut self.senders[slot];
                s.granted = s.granted.max(p.seq);
                s.scheduled = p.aux as u8;
            }
            // Under Aeolus a RESEND may name any missing range, not only the first: it acknowledges nothing.
            RESEND if self.cfg.aeolus.is_some() => {
                fab.sender_mut(slot)
                    .handle_missing(p.seq, p.seq + p.aux as u64);
            }
            RESEND => {
                fab.sender_mut(slot)
                    .handle_resend(p.seq, p.seq + p.aux as u64);
            }
            _ => unreachable!("not a Homa packet"),
        }
        fab.restart_rto(h, slot);
        fab.make_ready(self, p.flow);
    }

    /// The receiver's RESEND check.
    fn nic_timer<F: NicOps>(&mut self, fab: &mut F, h: u32) {
        self.resend_check(fab, h);
    }
}

impl Scheme for Homa {}

/// A Homa preset's configuration: `$levels` priority levels (switch classes and queues), `$lb` load balancing,
/// no congestion control, unlimited buffers (BFC App. A.2: "The Homa simulator assumes unbounded buffers"), SRPT
/// at the NIC, and whole-message ACKs with RESEND-driven selective repeat.
macro_rules! preset {
    ($levels:literal, $lb:literal) => {
        concat!(
            "[cc]\nname = \"none\"\n[flow_control]\nkind = \"homa\"\npriorities = ", $levels,
            "\n[switch]\nclasses = ", $levels, "\nqueues_per_port = ", $levels,
            "\nunlimited_buffer = true\nload_balancing = \"", $lb,
            "\"\n[nic]\nscheduler = \"srf\"\nack_every = 0\nrecovery = \"selective\"\nnack = false\n"
        )
    };
}

impl Describe for Homa {
    const KIND: &'static str = "homa";
    const SUMMARY: &'static str = "Homa's priorities and grants (Montazeri et al. 2018)";
    type Config = HomaConfig;
    type Stats = HomaStats;

    /// A strict-priority queue per level.
    fn validate(cfg: &HomaConfig, switch: &SwitchFacts) -> Result<(), String> {
        if switch.classes != cfg.priorities || switch.queues_per_port != cfg.priorities {
            return Err(format!(
                "flow_control.kind = \"homa\" gives each of its {} priority levels a strict-priority queue: \
                 set switch.classes and switch.queues_per_port to {} (not {} and {})",
                cfg.priorities, cfg.priorities, switch.classes, switch.queues_per_port
            ));
        }
        cfg.validate()
    }

    /// Homa's priority cutoffs from the run's message sizes, and each switch port's place for Table 2.
    fn new(cfg: &HomaConfig, fab: &mut impl Setup) -> Result<Homa, String> {
        let cfg = cfg.clone();
        let t = fab.transport();
        if t.recovery != Recovery::Selective || t.nack || t.ack_every != 0 {
            return Err(
                "flow_control.kind = \"homa\" recovers losses with RESENDs over selective repeat and acknowledges \
                 only whole messages: set nic.recovery = \"selective\", nic.nack = false, nic.ack_every = 0"
                    .into(),
            );
        }
        let sizes: Vec<u64> = fab.flows().iter().map(|f| f.spec.size.0).collect();
        let prio = Priorities::from_sizes(
            cfg.priorities,
            cfg.unscheduled_priorities,
            cfg.rtt_bytes.0,
            &sizes,
        );
        let overcommitment = match cfg.overcommitment {
            0 => prio.scheduled(),
            n => n,
        };
        let topo = fab.topology();
        let is_switch = |node: NodeId| fab.switch_of_node(node).is_some();
        let has_hosts = |node: NodeId| {
            topo.nodes[node.idx()]
                .ports
                .iter()
                .any(|&p| !is_switch(topo.peer_node(p)))
        };
        let core = (0..fab.sw_port_count() as u32)
            .map(|sp| {
                let port = fab.sw_port_id(sp);
                let node = topo.ports[port.idx()].node;
                let peer = topo.peer_node(port);
                if !is_switch(peer) {
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
            receivers: (0..fab.host_count())
                .map(|_| ReceiverSide::default())
                .collect(),
            cfg,
            prio,
            overcommitment,
            control_size: fab.ack_size(),
            senders: Vec::new(),
            core,
            stats: HomaStats::default(),
            grants: Vec::new(),
            gaps: Vec::new(),
        })
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "homa",
                summary: "Homa (Montazeri et al. 2018): unscheduled RTTbytes at levels cut from the workload, receiver grants (SRPT, \
                          overcommitment = scheduled levels), SRPT at the sender, RESEND; 32 levels, packet spraying, unlimited \
                          buffers (BFC App. A.2)",
                config: preset!(32, "spray"),
            },
            Preset {
                name: "homa-ecmp",
                summary: "homa with flow-level ECMP instead of packet spraying (BFC App. A.2's Homa ECMP)",
                config: preset!(32, "ecmp"),
            },
            Preset {
                name: "homa-8",
                summary: "homa with the 8 priority levels of the Homa paper",
                config: preset!(8, "spray"),
            },
            Preset {
                name: "homa-aeolus",
                summary: "Homa(A) (PayDebt §2.3, §5): homa-8 with Aeolus: unscheduled packets dropped above 8 KB in their queue, a \
                          probe behind them, losses resent as scheduled on RESENDs; flow-level ECMP so the probe follows them",
                config: concat!(
                    preset!(8, "ecmp"),
                    "[flow_control.aeolus]\nthreshold = \"8KB\"\n"
                ),
            },
        ]
    }

    fn optional_params() -> Vec<(String, String)> {
        aeolus::listed_params()
    }

    fn stats(&self) -> HomaStats {
        self.stats.clone()
    }

    fn report(h: &HomaStats) -> Option<SchemeReport> {
        let report = HomaReport {
            grants: h.grants,
            resends: h.resends,
            core_up: DelayReport::from_ps(&h.core_up),
            core_down: DelayReport::from_ps(&h.core_down),
            aeolus: (h.aeolus != AeolusStats::default()).then_some(h.aeolus),
        };
        Some(SchemeReport::new("homa", "homa", false, report))
    }
}

/// What Homa did over a run (Montazeri et al., SIGCOMM 2018), with BFC App. A.2's Table 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct HomaReport {
    /// Grants receivers sent.
    pub grants: u64,
    /// RESENDs receivers sent.
    pub resends: u64,
    /// Queuing delay of scheduled data packets at switch ports from a ToR into the core (Table 2's ToR-Agg).
    pub core_up: DelayReport,
    /// The same at switch ports from the core to a ToR (Table 2's Agg-ToR).
    pub core_down: DelayReport,
    /// Aeolus's counts, under Aeolus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeolus: Option<AeolusStats>,
}

impl std::fmt::Display for HomaReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} grants, {} resends; scheduled packets' queuing delay ToR->core p50 {:.1} us p99 {:.1} us, \
             core->ToR p50 {:.1} us p99 {:.1} us",
            self.grants,
            self.resends,
            self.core_up.p50_ns / 1e3,
            self.core_up.p99_ns / 1e3,
            self.core_down.p50_ns / 1e3,
            self.core_down.p99_ns / 1e3,
        )?;
        if let Some(a) = &self.aeolus {
            write!(f, "; {a}")?;
        }
        Ok(())
    }
}
