//! One switch's Aquarius state, sans-IO: the flow table keyed by (egress port, hash of the FID) with entries
//! {mappedQ, size, pauseNum} (§3.1), the enqueue and dequeue operations of Algorithms 1 and 2, and the QueueTable
//! of each egress port that handles the PAUSEs and RESUMEs the switch receives from downstream (§3.3).
//!
//! Call order, per data packet: [`AquariusSwitch::handle_enqueue`] when it is put in an egress queue (it names
//! the queue); [`AquariusSwitch::handle_dequeue`] when the scheduler takes it out, with the [`Enqueued::congested`]
//! flag it carried through the switch, or [`AquariusSwitch::handle_drop`] if the buffer refused it after the
//! enqueue operations ran. Per frame: [`AquariusSwitch::handle_pause`] or [`AquariusSwitch::handle_resume`]
//! when a PAUSE or RESUME reaches an egress port. Each answers with the frame to send upstream ([`Signal`]) and
//! the queue of the port to pause or resume ([`QueueAction`]), which the engine carries out.

use std::ops::Range;

use bfcsim_core::{Bytes, Rate, Time};

use super::queue_table::{QueueAction, QueueTable};
use super::{ActiveQueues, AquariusConfig, Mapping, RsvQueue};
use crate::flow_control::hop_pause::flow_table::{FlowTable, Slot};
use crate::flow_control::hop_pause::{self, Arrival, Decision, EgressView};

/// What Aquarius needs to see of an egress port's queues, beyond what BFC sees.
pub trait View: EgressView {
    /// Packets waiting in queue `q` (L of Occu_fair, §3.2).
    fn queue_packets(&self, q: usize) -> u64;
    /// Queue `q` is paused by the device downstream.
    fn is_paused(&self, q: usize) -> bool;
}

/// Where a PAUSE went, so that the RESUME goes to the same place (Algorithm 1 line 16, Algorithm 2 line 7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Target {
    in_port: u16,
    upstream_q: u32,
    flow: u32,
}

/// A flow-table entry (§3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FlowEntry {
    /// `mappedQ`.
    queue: u16,
    /// `size`: packets of the entry's flows at the egress.
    size: u32,
    /// `pauseNum`: those of them that were marked congested.
    pause_num: u32,
    /// The upstream entity the PAUSE named, while `pause_num > 0`.
    target: Target,
    /// The flow of the entry's latest packet (to count index collisions).
    owner: u32,
}

impl Slot for FlowEntry {
    fn idle(&self) -> bool {
        self.size == 0 && self.pause_num == 0
    }
}

/// What a PAUSE or RESUME names upstream (§3.2: "PAUSE carries (upstream queue, FID)").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFlow {
    /// The `upstreamQ` the packet carried.
    pub queue: u32,
    /// The flow (FID).
    pub flow: u32,
}

/// The frame names the queue in `seq`'s high 32 bits and the flow in its low ones.
impl hop_pause::Target for QueueFlow {
    fn seq(self) -> u64 {
        (self.queue as u64) << 32 | self.flow as u64
    }
}

/// A PAUSE or RESUME to send upstream, out of ingress `port`.
pub type Signal = hop_pause::Signal<QueueFlow>;

/// The outcome of an enqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// The queue the packet joins.
    pub queue: u16,
    /// Algorithm 1's `packet.congested`: the packet incremented its entry's `pauseNum`.
    pub congested: bool,
    /// The packet found its queue above Q_high (Algorithm 1 line 7).
    pub high: bool,
    /// A PAUSE to send upstream (`pauseNum` went 0 → 1).
    pub signal: Option<Signal>,
    /// Queue changes at this port, in order: a PAUSE for the flow came while it had no packet here and nothing
    /// to re-assign it to, and this packet mapped it to a queue, now paused for it ([`QueueTable::mapped`]); or
    /// the packet's new flow joined a queue held for lone paused flows, which moved to the rsvQ
    /// ([`QueueTable::joined`], `reassign_on_join`).
    pub actions: [Option<QueueAction>; 2],
}

impl Decision for Enqueued {
    type Kept = bool;
    type Target = QueueFlow;
    fn queue(&self) -> u16 {
        self.queue
    }
    /// [`Enqueued::congested`].
    fn kept(&self) -> bool {
        self.congested
    }
    fn signal(&self) -> Option<Signal> {
        self.signal
    }
}

/// A data packet leaving an egress queue (or refused by the buffer after its enqueue), with
/// [`Enqueued::congested`].
pub type Departure = hop_pause::Departure<bool>;

/// Counts for the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AquariusStats {
    /// New active flows mapped to a queue (Algorithm 1 line 4).
    pub assignments: u64,
    /// Of those, the ones that found no empty queue and took the shortest.
    pub queue_collisions: u64,
    /// PAUSEs sent.
    pub pauses: u64,
    /// PAUSEs sent because the queue was above Q_high (every arriving flow paused).
    pub high_pauses: u64,
    /// RESUMEs sent.
    pub resumes: u64,
    /// PAUSEs received that paused the flow's own queue.
    pub queue_pauses: u64,
    /// PAUSEs received that re-assigned the flow to the rsvQ (§3.3).
    pub reassigns: u64,
    /// rsvQs allocated.
    pub rsv_allocations: u64,
    /// PAUSEs that needed an rsvQ but found no empty queue: the flow's shared queue was paused instead.
    pub rsv_unavailable: u64,
    /// Paused flows moved to the rsvQ because a new flow joined the queue held for them (`reassign_on_join`).
    pub join_reassigns: u64,
    /// Packets that found their flow-table entry holding another flow's packets (the table has no collision
    /// resolution, §5).
    pub index_collisions: u64,
    /// Congested packets of a flow other than the one the entry's PAUSE named: a flow colliding in the entry
    /// with a paused one, whose own upstream is never paused (Algorithm 1 sends one PAUSE per entry, line 15).
    pub unpaused_congested: u64,
}

bfcsim_core::add_fields!(AquariusStats {
    assignments,
    queue_collisions,
    pauses,
    high_pauses,
    resumes,
    queue_pauses,
    reassigns,
    rsv_allocations,
    rsv_unavailable,
    join_reassigns,
    index_collisions,
    unpaused_congested,
});

impl hop_pause::Assignments for AquariusStats {
    fn assignments(&self) -> (u64, u64, u64) {
        (
            self.assignments,
            self.queue_collisions,
            self.index_collisions,
        )
    }
}

/// Per egress port: the QueueTable and each queue's arrival statistics (T and T_avg, Algorithm 1 line 14).
#[derive(Clone, Debug)]
struct Port {
    table: QueueTable,
    /// Last arrival at each queue.
    last: Vec<Option<Time>>,
    /// T_avg of each queue, ps (`None` until two packets arrived).
    t_avg: Vec<Option<f64>>,
}

/// The Aquarius state of one switch.
#[derive(Clone, Debug)]
pub struct AquariusSwitch {
    mapping: Mapping,
    active_queues: ActiveQueues,
    alpha: f64,
    q_low: f64,
    q_high: f64,
    hrtt: Time,
    mtu: u32,
    reassign: bool,
    reassign_on_join: bool,
    table: FlowTable<FlowEntry>,
    ports: Vec<Port>,
    stats: AquariusStats,
}

/// An empty queue of `queues` that is not paused: where a dynamic rsvQ is taken from (§3.3).
fn free_queue(queues: &Range<u16>, view: &impl View) -> Option<u16> {
    queues
        .clone()
        .find(|&q| view.queue_packets(q as usize) == 0 && !view.is_paused(q as usize))
}

impl AquariusSwitch {
    /// The state of a switch with `ports` ports of `queues` queues each (control queues included), of which
    /// `data_queues` per port are data queues sized for the flow table; `hrtt` is its largest ingress 1-hop RTT
    /// and `mtu` a full data packet's wire bytes (each overridden by the configuration's).
    pub fn new(
        cfg: &AquariusConfig,
        ports: usize,
        queues: usize,
        data_queues: usize,
        hrtt: Time,
        mtu: u32,
    ) -> AquariusSwitch {
        let table = if cfg.exact_flow_table {
            FlowTable::exact()
        } else {
            FlowTable::hashed(
                ports,
                cfg.flow_table_per_queue as u64 * data_queues as u64,
                Time::ZERO,
            )
        };
        AquariusSwitch {
            mapping: cfg.mapping,
            active_queues: cfg.active_queues,
            alpha: cfg.alpha,
            q_low: cfg.q_low,
            q_high: cfg.q_high,
            hrtt: cfg.hrtt.unwrap_or(hrtt),
            mtu: cfg.mtu.unwrap_or(mtu),
            reassign: cfg.reassign,
            reassign_on_join: cfg.reassign_on_join,
            table,
            ports: (0..ports)
                .map(|_| Port {
                    table: match cfg.rsv {
                        RsvQueue::Dynamic => QueueTable::new(queues),
                        RsvQueue::Static => QueueTable::with_static_rsv(queues, queues as u16 - 1),
                    },
                    last: vec![None; queues],
                    t_avg: vec![None; queues],
                })
                .collect(),
            stats: AquariusStats::default(),
        }
    }

    /// NQ_active for a packet joining queue `q` of `range` (§3.2).
    fn nq_active(&self, view: &impl View, q: usize, range: Range<u16>) -> u64 {
        let n = match self.active_queues {
            ActiveQueues::Ready => view.active_with(q),
            ActiveQueues::Unpaused => range.filter(|&i| !view.is_paused(i as usize)).count(),
        };
        n.max(1) as u64
    }

    /// (Q_low, Q_high) in bytes: `q_low` and `q_high` times HRTT · μ / NQ_active (§3.2).
    pub fn thresholds(&self, rate: Rate, nq_active: u64) -> (u64, u64) {
        let share = rate.bytes_in(self.hrtt).0 as f64 / nq_active.max(1) as f64;
        ((share * self.q_low) as u64, (share * self.q_high) as u64)
    }

    /// T_min = MTU · NQ_active / μ (§3.2): the time the queue's share of the port takes to send one MTU.
    pub fn t_min(&self, rate: Rate, nq_active: u64) -> Time {
        rate.tx_time(Bytes(self.mtu as u64)) * nq_active.max(1)
    }

    /// Occu_fair = ⌈L >> ⌈log₂ N⌉⌉ (§3.2, Eq. 1): `queued` packets shared by `flows` flows, rounded up.
    pub fn occu_fair(queued: u64, flows: u32) -> u64 {
        let shift = flows.max(1).next_power_of_two().trailing_zeros();
        queued.div_ceil(1 << shift)
    }

    /// Algorithm 1: map the packet to its flow's queue (a new active flow to an empty queue, else the
    /// shortest, §3.1), count it in its entry, and decide whether it pauses its flow upstream (§3.2).
    pub fn handle_enqueue(&mut self, a: &Arrival, view: &impl View) -> Enqueued {
        let key = self.table.key(a.out_port, a.hash, a.flow);
        let mut entry = self.table.get(key);
        let forced = self.ports[a.out_port as usize].table.forced(key);
        let mut actions = [None; 2];
        if entry.size > 0 && entry.owner != a.flow {
            self.stats.index_collisions += 1;
        }
        entry.owner = a.flow;
        if entry.size == 0 {
            let table = match forced {
                Some(q) => {
                    entry.queue = q;
                    &mut self.ports[a.out_port as usize].table
                }
                None => {
                    entry.queue = self.pick_queue(a, view);
                    let table = &mut self.ports[a.out_port as usize].table;
                    actions[0] = table.mapped(key, entry.queue);
                    table
                }
            };
            table.flow_active(entry.queue);
            if forced.is_none() && actions[0].is_none() && self.reassign && self.reassign_on_join {
                actions = self.rehome_held(a.out_port, entry.queue, &a.queues, view);
            }
        }
        entry.size += 1;
        let q = entry.queue as usize;
        let nq = self.nq_active(view, q, a.queues.clone());
        let (q_low, q_high) = self.thresholds(a.rate, nq);
        let bytes = view.queue_bytes(q);
        let t_min = self.t_min(a.rate, nq);
        let port = &mut self.ports[a.out_port as usize];
        let likely = port.t_avg[q].is_some_and(|t| t < t_min.0 as f64);
        let high = bytes > q_high;
        let congested = high
            || (bytes > q_low
                && likely
                && entry.size as u64
                    > Self::occu_fair(view.queue_packets(q), port.table.flows_in(entry.queue)));
        // Line 14: T_avg ← α·T + (1 − α)·T_avg, T the gap since the queue's previous arrival.
        if let Some(last) = port.last[q] {
            let t = a.now.saturating_sub(last).0 as f64;
            port.t_avg[q] = Some(match port.t_avg[q] {
                Some(avg) => self.alpha * t + (1.0 - self.alpha) * avg,
                None => t,
            });
        }
        port.last[q] = Some(a.now);
        let mut out = Enqueued {
            queue: entry.queue,
            congested,
            high,
            signal: None,
            actions,
        };
        if congested {
            self.stats.unpaused_congested +=
                u64::from(entry.pause_num > 0 && entry.target.flow != a.flow);
            entry.pause_num += 1;
            // Lines 15-16: the PAUSE goes when pauseNum becomes 1, to the entity this packet came from.
            if entry.pause_num == 1 {
                entry.target = Target {
                    in_port: a.in_port,
                    upstream_q: a.upstream_q,
                    flow: a.flow,
                };
                out.signal = Some(Signal::Pause {
                    port: a.in_port,
                    target: QueueFlow {
                        queue: a.upstream_q,
                        flow: a.flow,
                    },
                });
                self.stats.pauses += 1;
                self.stats.high_pauses += u64::from(high);
            }
        }
        self.table.set(key, entry);
        out
    }

    /// `reassign_on_join`: a new flow joined queue `q` of egress `port`; the lone paused flows it was held for
    /// move to the rsvQ ([`QueueTable::joined`]), their flow-table entries with them.
    fn rehome_held(
        &mut self,
        port: u16,
        q: u16,
        queues: &Range<u16>,
        view: &impl View,
    ) -> [Option<QueueAction>; 2] {
        let flows = &self.table;
        let j = self.ports[port as usize].table.joined(
            q,
            |key| flows.get(key).size,
            || free_queue(queues, view),
        );
        if let Some(rsv) = j.rsv {
            for &key in &j.moved {
                let mut entry = self.table.get(key);
                entry.queue = rsv;
                self.table.set(key, entry);
            }
            self.stats.join_reassigns += j.moved.len() as u64;
            self.stats.rsv_allocations += u64::from(j.allocated);
        }
        j.actions
    }

    /// Algorithm 1 line 4 (or the hash mapping): a queue for a new active flow, never the rsvQ and, while
    /// another is left, never a paused one.
    fn pick_queue(&mut self, a: &Arrival, view: &impl View) -> u16 {
        let rsv = self.ports[a.out_port as usize].table.rsv();
        let usable = |q: u16| Some(q) != rsv && !view.is_paused(q as usize);
        if self.mapping == Mapping::Hash {
            let n = a.queues.len() as u64;
            let home = ((a.hash as u64 * n) >> 32) as u16;
            return (0..n as u16)
                .map(|i| a.queues.start + (home + i) % n as u16)
                .find(|&q| Some(q) != rsv)
                .unwrap_or(a.queues.start);
        }
        self.stats.assignments += 1;
        let shortest = a
            .queues
            .clone()
            .filter(|&q| usable(q))
            .min_by_key(|&q| view.queue_bytes(q as usize));
        match shortest {
            Some(q) if view.queue_packets(q as usize) == 0 => q,
            Some(q) => {
                self.stats.queue_collisions += 1;
                q
            }
            // Every queue paused or reserved: the shortest of all but the rsvQ (or the rsvQ if it is the only
            // data queue).
            None => {
                self.stats.queue_collisions += 1;
                a.queues
                    .clone()
                    .filter(|&q| Some(q) != rsv)
                    .min_by_key(|&q| view.queue_bytes(q as usize))
                    .unwrap_or(a.queues.start)
            }
        }
    }

    /// Algorithm 2: the packet left; its entry's size and, if it was congested, pauseNum go down, and a RESUME
    /// goes upstream when pauseNum reaches 0. Also the QueueTable's part (§3.3): the packet may be the last
    /// earlier packet of a re-assigned flow (the rsvQ may resume), or the last of the rsvQ (released).
    pub fn handle_dequeue(
        &mut self,
        d: &Departure,
        view: &impl View,
    ) -> (Option<Signal>, Option<QueueAction>) {
        let (key, signal) = self.release(d);
        let table = &mut self.ports[d.out_port as usize].table;
        let rsv_empty = table
            .rsv()
            .is_none_or(|r| view.queue_packets(r as usize) == 0);
        (signal, table.departed(key, d.queue, rsv_empty))
    }

    /// Undoes [`AquariusSwitch::handle_enqueue`] for a packet the buffer refused: Algorithm 2 without a
    /// departure. A PAUSE the packet caused is then cancelled by the RESUME returned, so neither is sent, and
    /// neither is counted; `high` is the packet's [`Enqueued::high`].
    pub fn handle_drop(&mut self, d: &Departure, high: bool) -> Option<Signal> {
        let signal = self.release(d).1;
        if signal.is_some() {
            self.stats.pauses -= 1;
            self.stats.high_pauses -= u64::from(high);
            self.stats.resumes -= 1;
        }
        signal
    }

    fn release(&mut self, d: &Departure) -> (u64, Option<Signal>) {
        let key = self.table.key(d.out_port, d.hash, d.flow);
        let mut entry = self.table.get(key);
        debug_assert!(entry.size > 0, "departure of a packet not counted");
        entry.size -= 1;
        if entry.size == 0 {
            self.ports[d.out_port as usize].table.flow_idle(entry.queue);
        }
        let mut signal = None;
        // `memo`: the packet was congested (Algorithm 2 line 4).
        if d.memo {
            entry.pause_num -= 1;
            if entry.pause_num == 0 {
                let t = entry.target;
                signal = Some(Signal::Resume {
                    port: t.in_port,
                    target: QueueFlow {
                        queue: t.upstream_q,
                        flow: t.flow,
                    },
                });
                self.stats.resumes += 1;
            }
        }
        self.table.set(key, entry);
        (key, signal)
    }

    /// §3.3: a PAUSE for flow `flow` (FID hash `hash`) reached egress `out_port`: pause the flow's queue if no
    /// uncongested flow shares it, else re-assign the flow to the (paused) rsvQ among `queues`.
    pub fn handle_pause(
        &mut self,
        out_port: u16,
        hash: u32,
        flow: u32,
        queues: Range<u16>,
        view: &impl View,
    ) -> Option<QueueAction> {
        let key = self.table.key(out_port, hash, flow);
        let entry = self.table.get(key);
        let current = (entry.size > 0).then_some(entry.queue);
        let table = &mut self.ports[out_port as usize].table;
        let p = table.handle_pause(key, current, entry.size, self.reassign, || {
            free_queue(&queues, view)
        });
        if let Some(r) = p.moved_to {
            let mut entry = entry;
            entry.queue = r;
            self.table.set(key, entry);
            self.stats.reassigns += 1;
        }
        self.stats.queue_pauses += u64::from(p.sole);
        self.stats.rsv_allocations += u64::from(p.allocated);
        self.stats.rsv_unavailable += u64::from(p.unavailable);
        p.action
    }

    /// §3.3: a RESUME for flow `flow` reached egress `out_port`.
    pub fn handle_resume(
        &mut self,
        out_port: u16,
        hash: u32,
        flow: u32,
        view: &impl View,
    ) -> Option<QueueAction> {
        let key = self.table.key(out_port, hash, flow);
        let table = &mut self.ports[out_port as usize].table;
        let rsv_empty = table
            .rsv()
            .is_none_or(|r| view.queue_packets(r as usize) == 0);
        table.handle_resume(key, rsv_empty)
    }

    /// The 1-hop RTT in use.
    pub fn hrtt(&self) -> Time {
        self.hrtt
    }

    /// Counts so far.
    pub fn stats(&self) -> AquariusStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: Rate = Rate(100_000_000_000);

    /// A scripted egress of 8 data queues (0..8): bytes and packets per queue, paused flags.
    #[derive(Clone)]
    struct Egress {
        bytes: Vec<u64>,
        pkts: Vec<u64>,
        paused: Vec<bool>,
    }

    impl Egress {
        fn new() -> Egress {
            Egress {
                bytes: vec![0; 8],
                pkts: vec![0; 8],
                paused: vec![false; 8],
            }
        }
        fn push(&mut self, q: u16, n: u64) {
            self.bytes[q as usize] += n * 1000;
            self.pkts[q as usize] += n;
        }
    }

    impl EgressView for Egress {
        fn first_empty(&self, range: Range<usize>, _start: usize) -> Option<usize> {
            range.into_iter().find(|&q| self.pkts[q] == 0)
        }
        fn queue_bytes(&self, q: usize) -> u64 {
            self.bytes[q]
        }
        fn active_with(&self, q: usize) -> usize {
            (0..8)
                .filter(|&i| (i == q || self.pkts[i] > 0) && !self.paused[i])
                .count()
        }
    }

    impl View for Egress {
        fn queue_packets(&self, q: usize) -> u64 {
            self.pkts[q]
        }
        fn is_paused(&self, q: usize) -> bool {
            self.paused[q]
        }
    }

    fn switch(cfg: &AquariusConfig) -> AquariusSwitch {
        AquariusSwitch::new(cfg, 2, 8, 8, Time::from_us(2), 1000)
    }

    fn arrival(now: Time, flow: u32) -> Arrival {
        Arrival {
            now,
            in_port: 0,
            out_port: 1,
            hash: flow << 28,
            flow,
            upstream_q: 3,
            size: 1000,
            incast: false,
            queues: 0..8,
            rate: G100,
            level: 0,
            elide: false,
        }
    }

    fn departure(a: &Arrival, e: &Enqueued) -> Departure {
        Departure::refused(a, e.queue, e.congested)
    }

    #[test]
    fn thresholds_and_fair_occupation() {
        let s = switch(&AquariusConfig::default());
        // HRTT · μ = 2 µs at 100 Gb/s = 25 000 B.
        assert_eq!(s.thresholds(G100, 1), (25_000, 75_000));
        assert_eq!(s.thresholds(G100, 4), (6_250, 18_750));
        // 1000 B at 100 Gb/s is 80 ns; 4 active queues: 320 ns.
        assert_eq!(s.t_min(G100, 4), Time::from_ns(320));
        // Eq. 1: 12 packets, 3 flows → ⌈12 >> 2⌉ = 3; 13 → 4; 1 flow → 12.
        assert_eq!(AquariusSwitch::occu_fair(12, 3), 3);
        assert_eq!(AquariusSwitch::occu_fair(13, 3), 4);
        assert_eq!(AquariusSwitch::occu_fair(12, 1), 12);
        assert_eq!(AquariusSwitch::occu_fair(12, 4), 3);
        assert_eq!(AquariusSwitch::occu_fair(12, 5), 2);
    }

    #[test]
    fn new_flows_take_an_empty_queue_else_the_shortest() {
        let mut s = switch(&AquariusConfig::default());
        let mut eg = Egress::new();
        for q in 0..8 {
            eg.push(q, 8 - q as u64);
        }
        eg.bytes[5] = 0;
        eg.pkts[5] = 0;
        assert_eq!(s.handle_enqueue(&arrival(Time(0), 1), &eg).queue, 5);
        eg.push(5, 3);
        // No empty queue: the shortest is 7 (one packet); a paused one is skipped.
        eg.paused[7] = true;
        assert_eq!(s.handle_enqueue(&arrival(Time(0), 2), &eg).queue, 6);
        // Flow 1 has a packet in: it stays in queue 5 (in-order delivery, Algorithm 1 line 5).
        assert_eq!(s.handle_enqueue(&arrival(Time(0), 1), &eg).queue, 5);
        assert_eq!(s.stats().assignments, 2);
        assert_eq!(s.stats().queue_collisions, 1);
    }

    /// Packets of `flow` arriving `gap` apart at the queue, each finding the egress as it is: the queue grows by
    /// each packet, nothing leaves.
    fn burst(
        s: &mut AquariusSwitch,
        eg: &mut Egress,
        flow: u32,
        n: usize,
        t0: Time,
        gap: Time,
    ) -> Vec<Enqueued> {
        (0..n)
            .map(|i| {
                let e = s.handle_enqueue(&arrival(t0 + gap * i as u64, flow), eg);
                eg.push(e.queue, 1);
                e
            })
            .collect()
    }

    #[test]
    fn above_q_high_every_arriving_flow_is_paused() {
        let mut s = switch(&AquariusConfig::default());
        let mut eg = Egress::new();
        // Slow arrivals (T_avg ≫ T_min) never pause below Q_high: one queue active, Q_high = 75 KB.
        let out = burst(&mut s, &mut eg, 1, 80, Time(0), Time::from_us(1));
        let first = out.iter().position(|e| e.congested).unwrap();
        assert_eq!(first, 76, "the first packet to find more than 75 000 B");
        assert_eq!(
            out[first].signal,
            Some(Signal::Pause {
                port: 0,
                target: QueueFlow { queue: 3, flow: 1 }
            })
        );
        assert!(
            out[first + 1..]
                .iter()
                .all(|e| e.congested && e.signal.is_none())
        );
        // A new flow joining that queue is paused at once, whatever its size.
        let q = out[0].queue;
        for i in 0..8 {
            if i != q {
                eg.push(i, 1);
            }
        }
        let e = s.handle_enqueue(&arrival(Time::from_us(100), 2), &eg);
        assert_eq!(
            e.queue,
            (0..8).find(|&i| i != q).unwrap(),
            "it found queue with 1 packet"
        );
        assert!(!e.congested);
        assert_eq!(s.stats().high_pauses, 1);
    }

    #[test]
    fn between_thresholds_only_flows_above_their_fair_share_are_paused() {
        // Hash mapping puts flows 1 (hash 1) and 2 (hash 2^28) in queue 0; every other queue holds a packet.
        let mut s = switch(&AquariusConfig {
            mapping: Mapping::Hash,
            ..AquariusConfig::default()
        });
        let mut eg = Egress::new();
        for q in 1..8 {
            eg.push(q, 1);
        }
        let send = |s: &mut AquariusSwitch, eg: &mut Egress, hash: u32, flow: u32, ns: u64| {
            let a = Arrival {
                hash,
                ..arrival(Time::from_ns(ns), flow)
            };
            let e = s.handle_enqueue(&a, eg);
            eg.push(e.queue, 1);
            e
        };
        // 8 active queues: Q_low = 3 125 B, Q_high = 9 375 B, T_min = 640 ns. Flow 1 sends 6 packets 10 ns
        // apart (T_avg ≪ T_min): the 5th finds 4 000 B > Q_low, and flow 1, alone, holds more than its share.
        let f1: Vec<bool> = (0..6)
            .map(|i| send(&mut s, &mut eg, 1, 1, 10 * i).congested)
            .collect();
        assert_eq!(f1, [false, false, false, false, true, true]);
        assert_eq!(s.stats().pauses, 1);
        // Flow 2 joins (2 flows): its packets find 6, 7, 8 packets, its size 1, 2, 3 within ⌈L >> 1⌉.
        for i in 0..3 {
            let e = send(&mut s, &mut eg, 1 << 28, 2, 60 + 10 * i);
            assert!(e.queue == 0 && !e.congested, "packet {i} of flow 2");
        }
        // Flow 1 again: 7 packets > ⌈9 >> 1⌉ = 5, congested (its PAUSE already went).
        let e = send(&mut s, &mut eg, 1, 1, 90);
        assert!(e.congested && e.signal.is_none());
        // Past Q_high (10 000 B > 9 375 B) flow 2 is paused too, its share notwithstanding.
        let e = send(&mut s, &mut eg, 1 << 28, 2, 100);
        assert!(matches!(
            e.signal,
            Some(Signal::Pause {
                target: QueueFlow { flow: 2, .. },
                ..
            })
        ));
        assert_eq!((s.stats().pauses, s.stats().high_pauses), (2, 1));
    }

    #[test]
    fn sparse_arrivals_above_q_low_are_not_paused() {
        let mut s = switch(&AquariusConfig::default());
        let mut eg = Egress::new();
        for q in 1..8 {
            eg.push(q, 1);
        }
        // 1 µs apart: T_avg = 1 µs > T_min = 640 ns. Below Q_high (9 375 B) nothing is paused.
        let out = burst(&mut s, &mut eg, 1, 9, Time(0), Time::from_us(1));
        assert!(out.iter().all(|e| !e.congested));
        let out = burst(&mut s, &mut eg, 1, 2, Time::from_us(9), Time::from_us(1));
        assert!(out[1].congested, "10 packets found: 10 000 B > Q_high");
    }

    #[test]
    fn resume_when_the_last_congested_packet_leaves() {
        let mut s = switch(&AquariusConfig::default());
        let mut eg = Egress::new();
        for q in 1..8 {
            eg.push(q, 1);
        }
        let a = arrival(Time(0), 1);
        let out = burst(&mut s, &mut eg, 1, 7, Time(0), Time::from_ns(10));
        let congested: Vec<_> = out.iter().filter(|e| e.congested).collect();
        assert_eq!(congested.len(), 3);
        assert_eq!(s.stats().pauses, 1);
        let mut resumes = Vec::new();
        for e in &out {
            eg.pkts[0] -= 1;
            eg.bytes[0] -= 1000;
            let (signal, action) = s.handle_dequeue(&departure(&a, e), &eg);
            assert_eq!(action, None);
            resumes.extend(signal);
        }
        assert_eq!(
            resumes,
            [Signal::Resume {
                port: 0,
                target: QueueFlow { queue: 3, flow: 1 }
            }]
        );
        assert_eq!(s.stats().resumes, 1);
        // The entry is empty again: the flow's next packet is a new active flow, mapped to the empty queue.
        eg.push(0, 1);
        eg.pkts[4] = 0;
        eg.bytes[4] = 0;
        assert_eq!(s.handle_enqueue(&a, &eg).queue, 4);
    }

    #[test]
    fn a_refused_packet_cancels_its_pause() {
        let mut s = switch(&AquariusConfig::default());
        let mut eg = Egress::new();
        for q in 0..8 {
            eg.push(q, 100);
        }
        let a = arrival(Time(0), 1);
        let e = s.handle_enqueue(&a, &eg);
        assert!(e.congested && e.signal.is_some());
        assert!(matches!(
            s.handle_drop(&departure(&a, &e), e.high),
            Some(Signal::Resume { .. })
        ));
        let st = s.stats();
        assert_eq!(
            (st.pauses, st.high_pauses, st.resumes),
            (0, 0, 0),
            "no frame is sent"
        );
    }

    /// §3.3 through the switch: the flow-table entry follows a re-assigned flow to the rsvQ, whose packets then
    /// go there, and the rsvQ resumes only after the flow's RESUME and its earlier packets.
    #[test]
    fn pause_reassigns_a_sharing_flow_and_its_packets_follow() {
        let mut s = switch(&AquariusConfig {
            mapping: Mapping::Hash,
            ..AquariusConfig::default()
        });
        let mut eg = Egress::new();
        // Flows 1 and 2 hash to queue 0 (hash < 2^29).
        let (f1, f2) = (arrival(Time(0), 1), arrival(Time(0), 2));
        // Hashes 1 and 2^28 fall in queue 0 (hash · 8 < 2^32) but in different flow-table entries.
        let (f1, f2) = (
            Arrival { hash: 1, ..f1 },
            Arrival {
                hash: 1 << 28,
                ..f2
            },
        );
        let e1 = s.handle_enqueue(&f1, &eg);
        eg.push(e1.queue, 1);
        let e2 = s.handle_enqueue(&f2, &eg);
        eg.push(e2.queue, 1);
        assert_eq!((e1.queue, e2.queue), (0, 0));
        let act = s.handle_pause(1, 1, 1, 0..8, &eg);
        assert_eq!(
            act,
            Some(QueueAction::Pause(1)),
            "queue 1 is the first empty one"
        );
        eg.paused[1] = true;
        assert_eq!(s.stats().reassigns, 1);
        let later = s.handle_enqueue(&f1, &eg);
        assert_eq!(later.queue, 1, "later packets go to the rsvQ");
        eg.push(1, 1);
        assert_eq!(s.handle_enqueue(&f2, &eg).queue, 0, "the victim stays");
        eg.push(0, 1);
        // A new flow avoids the paused rsvQ.
        let f3 = Arrival {
            hash: 3 << 29,
            flow: 3,
            ..f1.clone()
        };
        assert_eq!(s.handle_enqueue(&f3, &eg).queue, 3);
        // RESUME before flow 1's earlier packet left queue 0: the rsvQ stays paused.
        assert_eq!(s.handle_resume(1, 1, 1, &eg), None);
        eg.pkts[0] -= 1;
        let (_, act) = s.handle_dequeue(&departure(&f1, &e1), &eg);
        assert_eq!(act, Some(QueueAction::Resume(1)));
        eg.paused[1] = false;
        eg.pkts[1] -= 1;
        let (_, act) = s.handle_dequeue(&departure(&f1, &later), &eg);
        assert_eq!(act, None);
        // The rsvQ was released: flow 1's next packet is mapped afresh (its hash queue, 0).
        assert_eq!(s.handle_enqueue(&f1, &eg).queue, 0);
    }

    /// Two flows in one flow-table entry (equal hashes): one PAUSE, naming the flow whose packet made pauseNum
    /// 1 (Algorithm 1 line 15); the other flow's congested packets are counted as unpaused.
    #[test]
    fn a_colliding_flow_is_counted_and_not_paused() {
        let mut s = switch(&AquariusConfig::default());
        let mut eg = Egress::new();
        for q in 0..8 {
            eg.push(q, 100);
        }
        let (a, b) = (
            arrival(Time(0), 1),
            Arrival {
                flow: 2,
                ..arrival(Time(0), 1)
            },
        );
        let ea = s.handle_enqueue(&a, &eg);
        assert!(matches!(
            ea.signal,
            Some(Signal::Pause {
                target: QueueFlow { flow: 1, .. },
                ..
            })
        ));
        let eb = s.handle_enqueue(&b, &eg);
        assert!(eb.congested && eb.signal.is_none(), "{eb:?}");
        let st = s.stats();
        assert_eq!((st.index_collisions, st.unpaused_congested), (1, 1));
        assert_eq!(st.pauses, 1);
    }

    #[test]
    fn pause_of_a_lone_flow_pauses_its_queue() {
        let mut s = switch(&AquariusConfig::default());
        let mut eg = Egress::new();
        let a = arrival(Time(0), 1);
        let e = s.handle_enqueue(&a, &eg);
        eg.push(e.queue, 1);
        assert_eq!(
            s.handle_pause(1, a.hash, 1, 0..8, &eg),
            Some(QueueAction::Pause(e.queue))
        );
        assert_eq!(
            s.handle_resume(1, a.hash, 1, &eg),
            Some(QueueAction::Resume(e.queue))
        );
        assert_eq!(s.stats().queue_pauses, 1);
    }
}
