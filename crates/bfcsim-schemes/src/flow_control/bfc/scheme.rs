//! BFC on the fabric (§3.3): each switch's flow table and pause counter ([`BfcSwitch`], sans-IO) are told of
//! every data packet's enqueue and dequeue; the PAUSE or RESUME they answer with goes upstream as a per-hop
//! frame in the strict-priority control queue; each ingress with paused upstream queues re-sends its bitmap
//! periodically (the scheme timer of its port, armed in a batch with the other ports due at the same tick of the
//! refresh grid); a NIC gives each flow a queue of its own and parks the flows of a paused queue. App. B's table
//! of (ingress, egress) pairs whose backpressure is elided comes from the routes.

use bfcsim_core::rng::{self, Rng, Stream};
use bfcsim_core::{PacketId, PortId, Time};
use bfcsim_net::backpressure::elided_pairs;
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::PacketKind;
use rand::RngExt;

use super::{BfcConfig, BfcStats, BfcSwitch, Departure, Enqueued, REFRESH, Signal};
use crate::fabric::{
    Describe, Device, Entry, FabricOps, HopStats, NicOps, Preset, Scheme, Setup, SwitchFacts,
    SwitchHardware, SwitchOps,
};
use crate::flow_control::hop_pause::{
    Arrival, Egress, Frame, PerHopPausing, Upstream, check_ack_priority, hop_rtt, send,
};

/// BFC's state in one shard of a run.
pub struct Bfc {
    cfg: BfcConfig,
    /// Each switch's flow table and pause counter, by switch index.
    switches: Vec<BfcSwitch>,
    /// App. B: per switch, the (ingress, egress) pairs whose backpressure is elided.
    elide: Vec<ElidedPairs>,
    /// Per switch, per ingress port: the device upstream is a host (its pause counters are the NIC's queues).
    host_upstream: Vec<Vec<bool>>,
    /// Data queues of a switch port (the pause counters of an ingress from a switch).
    port_queues: u32,
    /// The draws of `lose_frames`, one stream per receiving port (empty unless frames are lost on purpose), so
    /// that a frame's fate depends only on its port's history.
    loss_rngs: Vec<Rng>,
    upstream: Upstream,
    refresh_frames: u64,
    frames_lost: u64,
    /// The bitmap of the refresh being sent.
    words: Vec<u64>,
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

/// The queues in `range` whose paused bit (word `w` of them from `paused(w)`) differs from bitmap `want`'s
/// (absent words are zero), each with `want`'s state, in queue order. Found a word of 64 queues at a time: a
/// refresh lists every queue and few change, so that a call per queue would mostly do nothing.
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

impl Bfc {
    /// The BFC state of switch `s`.
    pub fn switch(&self, s: usize) -> &BfcSwitch {
        &self.switches[s]
    }

    /// Schedules `port`'s next refresh on the interval's grid (the artifact's refresh ticks every interval
    /// for every port), unless one is pending or refreshes are off.
    fn arm_refresh(&self, fab: &mut impl SwitchOps, port: PortId) {
        let interval = self.cfg.refresh_interval;
        if interval == Time::ZERO || !matches!(fab.device(port), Device::Switch(_)) {
            return;
        }
        let at = Time((fab.now().0 / interval.0 + 1) * interval.0);
        fab.arm_batched_timer(port, at);
    }

    /// With `lose_frames`, loses PAUSE and RESUME frame `pkt` reaching `port` on purpose (to show that refreshes
    /// repair the state); returns whether it was lost.
    fn lost(&mut self, fab: &mut impl FabricOps, port: PortId, pkt: PacketId) -> bool {
        let lose = self.cfg.lose_frames;
        let lost = fab.packet(pkt).kind != REFRESH
            && lose > 0.0
            && self.loss_rngs[port.idx()].random::<f64>() < lose;
        if lost {
            self.frames_lost += 1;
            fab.drop_packet(pkt, DropReason::InjectedLoss);
        }
        lost
    }
}

impl PerHopPausing for Bfc {
    type Decision = Enqueued;

    fn elided(&self, e: &Entry) -> bool {
        self.elide[e.s].has(e.in_local, e.out_local)
    }

    /// §3.3.1–§3.3.2 "On Enqueue": the flow's queue from the flow table, and the pause counter.
    #[inline]
    fn decide<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry, a: &Arrival) -> Enqueued {
        let view = Egress {
            queues: fab.queues(e.out_sp),
            level: a.level,
        };
        self.switches[e.s].handle_enqueue(a, &view)
    }

    fn refused(&mut self, s: usize, d: &Departure, _: &Enqueued) -> Option<Signal> {
        self.switches[s].handle_drop(d)
    }

    /// §3.3.1–§3.3.2 "On Dequeue".
    #[inline(always)]
    fn departed<F: SwitchOps>(&mut self, fab: &mut F, s: usize, _sp: u32, d: &Departure) {
        if let Some(signal) = self.switches[s].handle_dequeue(d) {
            send(self, fab, s, signal);
        }
    }

    fn upstream(&mut self) -> &mut Upstream {
        &mut self.upstream
    }

    /// A PAUSE arms the port's refresh.
    fn sending<F: SwitchOps>(&mut self, fab: &mut F, frame: &Frame) {
        if frame.kind == PacketKind::PAUSE {
            self.arm_refresh(fab, frame.port);
        }
    }

    /// A PAUSE, RESUME or refresh reached switch port `sp`: pause or resume one of its queues, or take the
    /// refreshed set of paused queues (§3.3.2).
    fn switch_frame<F: SwitchOps>(&mut self, fab: &mut F, sp: u32, pkt: PacketId) {
        let port = fab.sw_port_id(sp);
        if self.lost(fab, port, pkt) {
            return;
        }
        let p = fab.take_frame(pkt);
        if p.kind == REFRESH {
            let map = p.seq as u32;
            let queues = fab.queues(sp);
            let changed = changed_queues(
                fab.frame_words(map),
                fab.layout().data_base..queues.count(),
                |w| queues.paused_word(w),
            );
            fab.release_frame_words(map);
            return fab.set_port_paused(self, sp, changed);
        }
        let change = (p.seq as u32 as usize, p.kind == PacketKind::PAUSE);
        fab.set_port_paused(self, sp, [change]);
    }

    /// §3.3.2's periodic refresh of switch port `sp`'s ingress: the bitmap of upstream queues it wants paused.
    /// While any is paused the refresh repeats; the last one, with none paused, clears any pause whose RESUME was
    /// lost.
    fn switch_timer<F: SwitchOps>(&mut self, fab: &mut F, sp: u32) {
        let (s, local) = fab.sw_port(sp);
        // Copied into a buffer kept from one refresh to the next: the scheme goes to the fabric with the frame.
        let mut words = std::mem::take(&mut self.words);
        words.clear();
        words.extend_from_slice(self.switches[s].paused_bitmap(local));
        let still = self.switches[s].paused_at(local) > 0;
        let size = self.cfg.frame_size + (words.len() * 8) as u32;
        self.refresh_frames += 1;
        let port = fab.sw_port_id(sp);
        fab.send_frame_words(self, port, REFRESH, &words, size);
        self.words = words;
        if still {
            self.arm_refresh(fab, port);
        }
    }

    /// §6.2.1: a NIC queue per flow (flows share queues by hash past `nic_queues`).
    fn nic_queues(&self) -> Option<u32> {
        self.cfg.nic_queues
    }

    /// A PAUSE, RESUME or refresh reached host `h`'s NIC: pause or resume one of its queues, or take the
    /// refreshed set (only when `nic_obeys_pause`).
    fn nic_frame<F: NicOps>(&mut self, fab: &mut F, h: u32, pkt: PacketId) {
        let port = fab.host_port(h);
        if self.lost(fab, port, pkt) {
            return;
        }
        let p = fab.take_frame(pkt);
        if p.kind == REFRESH {
            let map = p.seq as u32;
            if !self.cfg.nic_obeys_pause {
                fab.release_frame_words(map);
                return;
            }
            let changed = changed_queues(fab.frame_words(map), 0..fab.nic_queue_count(h), |w| {
                fab.nic_paused_word(h, w)
            });
            fab.release_frame_words(map);
            let changed = changed.into_iter().map(|(q, paused)| (q as u32, paused));
            return fab.set_nic_paused(self, h, changed);
        }
        if self.cfg.nic_obeys_pause {
            let change = (p.seq as u32, p.kind == PacketKind::PAUSE);
            fab.set_nic_paused(self, h, [change]);
        }
    }
}

impl Scheme for Bfc {
    fn add_stats(&self, stats: &mut HopStats) {
        self.upstream.add_to(stats, &Describe::stats(self));
        stats.refresh_frames += self.refresh_frames;
        stats.frames_lost += self.frames_lost;
    }
}

/// BFC's named configurations: the paper's, its variants (§6.1, App. A) and the ideal baselines of §6.2.1, which
/// run BFC's dynamic queue assignment without backpressure over exact flow tables.
const PRESETS: &[Preset] = &[
    Preset {
        name: "bfc",
        summary: "Backpressure Flow Control (Goyal et al. 2022, §3.3): 32 data queues, paper defaults, no end-to-end CC",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\n[switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-single",
        summary: "BFC's backpressure with every flow in one queue, like PFC (BFC §6.1 'BFC + single')",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nassignment = \"single\"\n\
                 [switch]\nqueues_per_port = 1\n",
    },
    Preset {
        name: "bfc-stochastic",
        summary: "BFC with flows hashed to fixed queues, as SFQ (BFC App. A.10)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nassignment = \"stochastic\"\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-cc",
        summary: "BFC plus the simple delay-based window of App. A.1 (RTT target 2.5 × base RTT)",
        config: "[cc]\nname = \"rtt-target\"\n[flow_control]\nkind = \"bfc\"\n[switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-incastlabel",
        summary: "BFC with labelled incast flows sharing one queue per egress (BFC App. A.7)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nincast_label = true\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-nic-unaware",
        summary: "BFC in the switches only: NICs ignore pauses and cap in-flight data at 1 BDP (BFC App. A.8)",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[flow_control]\nkind = \"bfc\"\nnic_obeys_pause = false\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-sampling",
        summary: "BFC recirculating half the packets for its bookkeeping (BFC App. A.8)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nsampling = 0.5\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-artifact",
        summary: "BFC as the authors' public ns-3 code runs it (docs/FIDELITY.md)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nthreshold = \"artifact\"\n\
                 sticky = \"6us\"\nflow_table_per_queue = 200\nframe_size = 156\n\
                 [switch]\nqueues_per_port = 31\nscheduler = \"round-robin\"\nunlimited_buffer = true\n\
                 [nic]\nheader = 20\nack_size = 30\nack_every = 256\n",
    },
    Preset {
        name: "bfc-srf",
        summary: "BFC with shortest-remaining-first scheduling at switches and NICs by the remaining size in each packet (BFC App. A.2)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\n\
                 [switch]\nqueues_per_port = 32\nscheduler = \"srf\"\n[nic]\nscheduler = \"srf\"\n",
    },
    Preset {
        name: "ideal-fq",
        summary: "ideal fair queuing: a queue per flow at every switch, unlimited buffers, 1-BDP NIC cap (BFC §6.2.1)",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[flow_control]\nkind = \"bfc\"\nbackpressure = false\n\
                 exact_flow_table = true\nsticky = \"0ns\"\n\
                 [switch]\nqueues_per_port = 1024\nunlimited_buffer = true\n",
    },
    Preset {
        name: "ideal-srf",
        summary: "ideal shortest remaining first: ideal-fq with SRF at switches and NICs (BFC App. A.2 'IdealSRF')",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[flow_control]\nkind = \"bfc\"\nbackpressure = false\n\
                 exact_flow_table = true\nsticky = \"0ns\"\n\
                 [switch]\nqueues_per_port = 1024\nunlimited_buffer = true\nscheduler = \"srf\"\n\
                 [nic]\nscheduler = \"srf\"\n",
    },
];

impl Describe for Bfc {
    const KIND: &'static str = "bfc";
    const QUEUE_LEFT: crate::fabric::QueueLeft = crate::fabric::QueueLeft::Stamped;
    const SUMMARY: &'static str = "Backpressure Flow Control (BFC §3.3)";
    type Config = BfcConfig;
    type Stats = BfcStats;

    /// BFC assigns queues to data packets only: ACKs ride the control queue.
    fn validate(cfg: &BfcConfig, switch: &SwitchFacts) -> Result<(), String> {
        check_ack_priority(Self::KIND, switch)?;
        cfg.validate()
    }

    /// Creates each switch's BFC state: the 1-hop RTT is the largest round trip of a link's delays over the
    /// switch's ports (§3.3.2), and App. B's table comes from the routes.
    fn new(cfg: &BfcConfig, fab: &mut impl Setup) -> Result<Bfc, String> {
        let cfg = cfg.clone();
        let upstream = Upstream::new(cfg.frame_size);
        fab.enable_pausing();
        let topo = fab.topology();
        let elided = if cfg.deadlock_prevention {
            elided_pairs(topo, fab.routes())
        } else {
            vec![Vec::new(); topo.nodes.len()]
        };
        let layout = fab.layout();
        let (per_class, port_queues) =
            (layout.per_class, (layout.per_class * layout.classes) as u32);
        let mut switches = Vec::with_capacity(fab.switch_count());
        let mut elide = Vec::with_capacity(fab.switch_count());
        let mut host_upstream = Vec::with_capacity(fab.switch_count());
        for s in 0..fab.switch_count() {
            let node = fab.switch_node(s);
            let ports = &topo.nodes[node.idx()].ports;
            let n = ports.len();
            let rng = rng::stream(fab.seed(), Stream::Other(0xBFC0_0000 | node.0));
            switches.push(BfcSwitch::new(&cfg, n, per_class, hop_rtt(fab, s), rng));
            elide.push(ElidedPairs::new(n, &elided[node.idx()]));
            host_upstream.push(
                ports
                    .iter()
                    .map(|&p| topo.is_host(topo.peer_node(p)))
                    .collect(),
            );
        }
        let loss_rngs = if cfg.lose_frames > 0.0 {
            (0..topo.ports.len() as u32)
                .map(|p| rng::stream(fab.seed(), Stream::Other(0x4f50_0000 | p)))
                .collect()
        } else {
            Vec::new()
        };
        fab.start_watchdog(cfg.watchdog);
        Ok(Bfc {
            cfg,
            switches,
            elide,
            host_upstream,
            port_queues,
            loss_rngs,
            upstream,
            refresh_frames: 0,
            frames_lost: 0,
            words: Vec::new(),
        })
    }

    fn presets() -> &'static [Preset] {
        PRESETS
    }

    /// The switches' counts together.
    fn stats(&self) -> BfcStats {
        self.switches
            .iter()
            .fold(BfcStats::default(), |a, b| a + b.stats())
    }

    /// BFC's own metric: the active flows per port (§2.3).
    const SAMPLES_ACTIVE_FLOWS: bool = true;

    /// §4: a header per departing packet that updated the flow table.
    fn recirculations(&self, s: usize) -> Option<u64> {
        Some(self.switches[s].stats().recirculations)
    }

    /// `bfc.paused_upstream`: the upstream queues each ingress port holds paused now (§3.3.2's pause
    /// counter), the backpressure a time plot of BFC shows beside its queues.
    fn trace(&self, s: usize, out: &mut dyn FnMut(&'static str, Option<u32>, f64)) {
        let sw = &self.switches[s];
        for local in 0..self.host_upstream[s].len() {
            out(
                "bfc.paused_upstream",
                Some(local as u32),
                f64::from(sw.paused_at(local as u16)),
            );
        }
    }

    /// The flow table (§3.3.1) and the pause counter (§3.3.2): for each ingress, the queues of the device
    /// upstream (a switch port's data queues, a NIC's `nic_queues`, or with one NIC queue per flow the most the
    /// host used at once). `None` for the ideal baselines' exact tables, which have no hardware counterpart.
    fn hardware(&self, s: usize) -> Option<SwitchHardware> {
        let sw = &self.switches[s];
        if sw.flow_table_entries() == 0 {
            return None;
        }
        let pause_counter_entries = if sw.backpressure() {
            let ingress = self.host_upstream[s].iter().enumerate();
            ingress
                .map(|(local, &host)| {
                    let nic = || {
                        self.cfg
                            .nic_queues
                            .unwrap_or(sw.upstream_span(local as u16))
                    };
                    u64::from(if host { nic() } else { self.port_queues })
                })
                .sum()
        } else {
            0
        };
        Some(SwitchHardware {
            flow_table_entries: sw.flow_table_entries() as u64,
            pause_counter_entries,
        })
    }
}
