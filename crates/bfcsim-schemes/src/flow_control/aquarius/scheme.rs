//! Aquarius on the fabric (Li et al., APNet 2023): each switch's flow table and QueueTables ([`AquariusSwitch`],
//! sans-IO) are told of every data packet's enqueue and dequeue (Algorithms 1 and 2) and of every PAUSE and
//! RESUME that reaches one of its egress ports (§3.3); the frames they answer with go upstream in the
//! strict-priority control queue, carrying (upstream queue, FID) in their `seq` (queue in the high 32 bits, flow
//! in the low). NICs are BFC's (§6.2.1 of BFC, which Aquarius's evaluation shares): a queue per flow, so at a NIC
//! every PAUSE finds its flow alone in its queue and pauses that queue (§3.3's first case).

use bfcsim_core::{FlowId, PacketId};
use bfcsim_net::packet::PacketKind;

use super::{
    AquariusConfig, AquariusStats, AquariusSwitch, Departure, Enqueued, QueueAction, RsvQueue,
    Signal, View,
};
use crate::fabric::{
    Describe, Entry, HopStats, NicOps, Preset, Scheme, SchemeReport, Setup, SwitchFacts, SwitchOps,
};
use crate::flow_control::hop_pause::{
    Arrival, Egress, PerHopPausing, Upstream, check_ack_priority, hop_rtt, send,
};

/// Aquarius's state in one shard of a run.
pub struct Aquarius {
    /// Each switch's state, by switch index.
    switches: Vec<AquariusSwitch>,
    upstream: Upstream,
}

impl View for Egress<'_> {
    fn queue_packets(&self, q: usize) -> u64 {
        self.queues.queue_len(q) as u64
    }
    fn is_paused(&self, q: usize) -> bool {
        self.queues.is_paused(q)
    }
}

/// A QueueTable's decision as (queue, paused).
fn queue_change(action: Option<QueueAction>) -> Option<(usize, bool)> {
    match action? {
        QueueAction::Pause(q) => Some((q as usize, true)),
        QueueAction::Resume(q) => Some((q as usize, false)),
    }
}

impl Aquarius {
    /// The state of switch `s`.
    pub fn switch(&self, s: usize) -> &AquariusSwitch {
        &self.switches[s]
    }
}

impl PerHopPausing for Aquarius {
    type Decision = Enqueued;

    /// Algorithm 1: the flow's queue and the pausing decision. A PAUSE pending for the flow holds the queue it
    /// was just mapped to, or the lone flows the queue was held for moved to the rsvQ: the port's queues change
    /// whether or not the buffer then takes the packet, for the QueueTable's state has.
    #[inline]
    fn decide<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry, a: &Arrival) -> Enqueued {
        let view = Egress {
            queues: fab.queues(e.out_sp),
            level: a.level,
        };
        let en = self.switches[e.s].handle_enqueue(a, &view);
        if en.actions.iter().any(Option::is_some) {
            let changes = en.actions.into_iter().filter_map(queue_change);
            fab.set_port_paused(self, e.out_sp, changes);
        }
        en
    }

    fn refused(&mut self, s: usize, d: &Departure, en: &Enqueued) -> Option<Signal> {
        self.switches[s].handle_drop(d, en.high)
    }

    /// Algorithm 2, and the QueueTable's bookkeeping of the queue the packet left (§3.3).
    #[inline]
    fn departed<F: SwitchOps>(&mut self, fab: &mut F, s: usize, sp: u32, d: &Departure) {
        // Algorithm 2 reads queue lengths only, never N_active's level.
        let view = Egress {
            queues: fab.queues(sp),
            level: 0,
        };
        let (signal, action) = self.switches[s].handle_dequeue(d, &view);
        if let Some(signal) = signal {
            send(self, fab, s, signal);
        }
        // The port is sending the packet that left: a resumed rsvQ is served after it (the port looks for a ready
        // queue once `dequeued` returns), never kicked into a second transmission now.
        if let Some(change) = queue_change(action) {
            fab.set_queues_paused(sp, [change]);
        }
    }

    fn upstream(&mut self) -> &mut Upstream {
        &mut self.upstream
    }

    /// A PAUSE or RESUME reached switch port `sp`: the QueueTable of that egress decides (§3.3).
    fn switch_frame<F: SwitchOps>(&mut self, fab: &mut F, sp: u32, pkt: PacketId) {
        let p = fab.take_frame(pkt);
        let pause = p.kind == PacketKind::PAUSE;
        let flow = p.seq as u32;
        let f = fab.flow(FlowId(flow));
        let (hash, class) = (f.hash as u32, f.spec.class);
        let queues = fab.layout().class_queues(class);
        let (s, local) = fab.sw_port(sp);
        // The frame handlers read queue lengths and pause states only, never N_active's level.
        let view = Egress {
            queues: fab.queues(sp),
            level: 0,
        };
        let sw = &mut self.switches[s];
        let action = if pause {
            sw.handle_pause(local, hash, flow, queues, &view)
        } else {
            sw.handle_resume(local, hash, flow, &view)
        };
        if let Some(change) = queue_change(action) {
            fab.set_port_paused(self, sp, [change]);
        }
    }

    /// A NIC queue per flow (BFC §6.2.1).
    fn nic_queues(&self) -> Option<u32> {
        None
    }

    /// A PAUSE or RESUME reached host `h`'s NIC: the flow's own queue is paused or resumed.
    fn nic_frame<F: NicOps>(&mut self, fab: &mut F, h: u32, pkt: PacketId) {
        let p = fab.take_frame(pkt);
        let change = ((p.seq >> 32) as u32, p.kind == PacketKind::PAUSE);
        fab.set_nic_paused(self, h, [change]);
    }
}

impl Scheme for Aquarius {
    fn add_stats(&self, stats: &mut HopStats) {
        self.upstream.add_to(stats, &Describe::stats(self));
    }
}

impl Describe for Aquarius {
    const KIND: &'static str = "aquarius";
    const QUEUE_LEFT: crate::fabric::QueueLeft = crate::fabric::QueueLeft::Stamped;
    const SUMMARY: &'static str = "Aquarius (Li et al. 2023, Alg. 1-2, §3.2-3.3)";
    type Config = AquariusConfig;
    type Stats = AquariusStats;

    /// Aquarius assigns queues to data packets only (ACKs ride the control queue); a static rsvQ is a port's
    /// last data queue of one class.
    fn validate(cfg: &AquariusConfig, switch: &SwitchFacts) -> Result<(), String> {
        check_ack_priority(Self::KIND, switch)?;
        if cfg.rsv == RsvQueue::Static && (switch.classes != 1 || switch.queues_per_port < 2) {
            return Err(format!(
                "flow_control.rsv = \"static\" sets a port's last data queue aside for congested flows: \
                 it needs switch.classes = 1 and at least 2 queues per port (not {} and {})",
                switch.classes, switch.queues_per_port
            ));
        }
        cfg.validate()
    }

    /// Creates each switch's state: the 1-hop RTT is the largest round trip of a link's delays over the
    /// switch's ports, as for BFC; the MTU a full data packet.
    fn new(cfg: &AquariusConfig, fab: &mut impl Setup) -> Result<Aquarius, String> {
        let upstream = Upstream::new(cfg.frame_size);
        fab.enable_pausing();
        let mtu = fab.payload() + fab.header() + fab.int_overhead();
        let layout = *fab.layout();
        let topo = fab.topology();
        let switches = (0..fab.switch_count())
            .map(|s| {
                let ports = topo.nodes[fab.switch_node(s).idx()].ports.len();
                let hrtt = hop_rtt(fab, s);
                AquariusSwitch::new(cfg, ports, layout.total(), layout.per_class, hrtt, mtu)
            })
            .collect();
        fab.start_watchdog(cfg.watchdog);
        Ok(Aquarius { switches, upstream })
    }

    fn presets() -> &'static [Preset] {
        &[Preset {
            name: "aquarius",
            summary: "Aquarius (Li et al. 2023): contribution-aware pausing of single flows in shared queues and \
                      opportunistic re-assigning to a reserved queue (Alg. 1-2, §3.2-3.3); 8 data queues, no end-to-end CC",
            config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"aquarius\"\n[switch]\nqueues_per_port = 8\n",
        }]
    }

    /// The switches' counts together.
    fn stats(&self) -> AquariusStats {
        self.switches
            .iter()
            .fold(AquariusStats::default(), |a, b| a + b.stats())
    }

    fn report(a: &AquariusStats) -> Option<SchemeReport> {
        let report = AquariusReport {
            high_pauses: a.high_pauses,
            queue_pauses: a.queue_pauses,
            reassigns: a.reassigns,
            rsv_allocations: a.rsv_allocations,
            rsv_unavailable: a.rsv_unavailable,
            join_reassigns: a.join_reassigns,
            unpaused_congested: a.unpaused_congested,
        };
        Some(SchemeReport::new("aquarius", "aquarius", true, report))
    }
}

/// What Aquarius's switches did over a run (Li et al., APNet 2023), summed over switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct AquariusReport {
    /// PAUSEs sent because the queue was above Q_high (Algorithm 1 line 7), of all PAUSEs.
    pub high_pauses: u64,
    /// PAUSEs received that paused the flow's own queue (§3.3, the flow alone there).
    pub queue_pauses: u64,
    /// PAUSEs received that re-assigned the flow to the reserved queue (§3.3).
    pub reassigns: u64,
    /// Reserved queues allocated.
    pub rsv_allocations: u64,
    /// PAUSEs that needed a reserved queue but found no empty queue (the shared queue paused instead).
    pub rsv_unavailable: u64,
    /// Paused flows moved to the reserved queue when a new flow joined the queue held for them
    /// (`reassign_on_join`).
    pub join_reassigns: u64,
    /// Congested packets of a flow that collided in its flow-table entry with the flow the entry's PAUSE named:
    /// nothing pauses such a flow upstream.
    pub unpaused_congested: u64,
}

impl std::fmt::Display for AquariusReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} PAUSEs above Q_high; received PAUSEs: {} paused the flow's queue, {} re-assigned it \
             ({} rsvQs allocated, {} found none); {} congested packets of unpaused colliding flows",
            self.high_pauses,
            self.queue_pauses,
            self.reassigns,
            self.rsv_allocations,
            self.rsv_unavailable,
            self.unpaused_congested,
        )?;
        if self.join_reassigns > 0 {
            write!(
                f,
                "; {} paused flows re-assigned when a new flow joined their queue",
                self.join_reassigns
            )?;
        }
        Ok(())
    }
}
