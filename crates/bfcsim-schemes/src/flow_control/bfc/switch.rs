//! One switch's BFC state and its enqueue/dequeue operations (§3.3.1 and §3.3.2 pseudocode), sans-IO: the
//! engine describes each packet entering or leaving an egress queue and sends the PAUSE/RESUME it is handed.
//!
//! Call order, per packet: [`BfcSwitch::handle_enqueue`] when the packet is put in an egress queue (it names
//! the queue); [`BfcSwitch::handle_dequeue`] when the scheduler takes it out for transmission, with the
//! [`Enqueued`] flags the packet carried through the switch, or [`BfcSwitch::handle_drop`] if the buffer refused
//! it after the enqueue operations ran.

use bfcsim_core::rng::Rng;
use bfcsim_core::{Rate, Time};
use bfcsim_net::routing::ecmp_hash;
use rand::RngExt;

use super::pause_counter::{PauseCounter, Signal};
use super::{Assignment, BfcConfig, StochasticHash, ThresholdRule};
use crate::flow_control::hop_pause::flow_table::{Entry, FlowTable, Slot};
use crate::flow_control::hop_pause::{self, Arrival, Decision, EgressView, Memo};

/// The outcome of an enqueue: the packet's queue, and what the switch must remember about it until it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// The queue the packet joins.
    pub queue: u16,
    /// The packet counts in its flow-table entry's `size` (all packets, or the sampled ones, App. A.8).
    pub tracked: bool,
    /// The packet incremented the pause counter of its (ingress, `upstreamQ`).
    pub counted: bool,
    /// A PAUSE to send upstream (the counter went 0 → 1).
    pub signal: Option<Signal>,
}

impl Decision for Enqueued {
    type Kept = Kept;
    type Target = u32;
    fn queue(&self) -> u16 {
        self.queue
    }
    /// [`Enqueued::tracked`] and [`Enqueued::counted`].
    fn kept(&self) -> Kept {
        Kept {
            tracked: self.tracked,
            counted: self.counted,
        }
    }
    fn signal(&self) -> Option<Signal> {
        self.signal
    }
}

/// [`Enqueued::tracked`] and [`Enqueued::counted`], kept with a packet while it is in the switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// [`Enqueued::tracked`].
    pub tracked: bool,
    /// [`Enqueued::counted`].
    pub counted: bool,
}

impl Memo for Kept {
    fn to_bits(self) -> u8 {
        u8::from(self.tracked) | u8::from(self.counted) << 1
    }
    fn from_bits(bits: u8) -> Kept {
        Kept {
            tracked: bits & 1 != 0,
            counted: bits & 2 != 0,
        }
    }
}

/// A packet leaving an egress queue, with what the switch kept about it.
pub type Departure = hop_pause::Departure<Kept>;

/// Counts for BFC's metrics (issue: collisions, pause frames). In `repr(C)` order, the two that packets add to
/// most first, where they share a line with the end of what an enqueue reads ([`BfcSwitch`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct BfcStats {
    /// Headers recirculated from the egress to the ingress pipeline to run the dequeue operations there (§4):
    /// one per departing packet that updated the flow table, which App. A.8's sampling makes a fraction.
    pub recirculations: u64,
    /// Queue assignments made (a flow-table entry got a queue anew).
    pub assignments: u64,
    /// Assignments that found no empty queue and took an occupied one: a new flow shares a queue (§3.3.1).
    pub queue_collisions: u64,
    /// Packets that found their flow-table entry holding another flow's packets: an index collision.
    pub index_collisions: u64,
    /// PAUSEs generated (counter 0 → 1).
    pub pauses: u64,
    /// RESUMEs generated (counter 1 → 0).
    pub resumes: u64,
}

bfcsim_core::add_fields!(BfcStats {
    recirculations,
    assignments,
    queue_collisions,
    index_collisions,
    pauses,
    resumes,
});

impl hop_pause::Assignments for BfcStats {
    fn assignments(&self) -> (u64, u64, u64) {
        (
            self.assignments,
            self.queue_collisions,
            self.index_collisions,
        )
    }
}

/// A flow-table entry as the switch keeps it: §3.3.1's fields and, for counting index collisions (simulation
/// bookkeeping only), the flow whose packet used it last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tracked {
    entry: Entry,
    owner: u32,
}

impl Default for Tracked {
    fn default() -> Self {
        Tracked {
            entry: Entry::default(),
            owner: u32::MAX,
        }
    }
}

impl Slot for Tracked {
    /// An entry with no packets in the switch is fresh again once its sticky time has passed (`idle` in
    /// [`BfcSwitch::handle_enqueue`]); the collision count looks at `owner` only while `size > 0`.
    fn idle(&self) -> bool {
        self.entry.idle()
    }

    fn stamp(&self) -> Time {
        self.entry.touched
    }
}

/// The BFC state of one switch.
///
/// Laid out by use, in `repr(C)` order from a line's start: what every enqueue reads (the configuration it
/// checks, the flow table's header, the threshold table and the upstream spans) fills the first two lines and
/// the start of the third, where the counts every dequeue and assignment add to follow; the rest is read on
/// the paths that need it. Left to the compiler, the 328 bytes put what one packet reads on five or six
/// lines, each a miss on the 1024-host tree, whose 320 switches' state does not stay in a core's cache.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct BfcSwitch {
    // ---- every enqueue
    sticky: Time,
    sampling: f64,
    /// [`BfcConfig::pause_min_packets`], resolved.
    pause_min_packets: u32,
    /// [`BfcConfig::threshold_counts_arrival`], resolved.
    counts_arrival: bool,
    backpressure: bool,
    incast_label: bool,
    assignment: Assignment,
    table: FlowTable<Tracked>,
    /// The last egress rate seen on enqueue and its threshold for each N_active up to the queues of a port
    /// (index 0 as 1): a switch's ports share one or two rates, and HRTT · μ's 128-bit division and the
    /// share's floating-point one were 40 instructions at every packet.
    thresholds: Option<(Rate, Vec<u64>)>,
    /// Per ingress port, one more than the largest `upstreamQ` seen: the pause-counter entries that ingress
    /// needs (§3.3.2), for the hardware budget.
    upstream_span: Vec<u32>,
    // ---- every dequeue and queue assignment
    stats: BfcStats,
    // ---- the paths that need them
    counter: PauseCounter,
    rng: Rng,
    /// The switch's hash seed for stochastic assignment ([`StochasticHash::Seeded`]).
    salt: Option<u64>,
    factor: f64,
    hrtt: Time,
    /// Data queues per port: the largest N_active.
    queues_per_port: usize,
}

// What every enqueue reads ends in the third line, where the counts start.
const _: () = assert!(std::mem::offset_of!(BfcSwitch, stats) <= 160);

impl BfcSwitch {
    /// The state of a switch with `ports` ports of `queues_per_port` data queues each, whose largest ingress
    /// 1-hop RTT is `hrtt` (overridden by the configuration's `hrtt`).
    pub fn new(
        cfg: &BfcConfig,
        ports: usize,
        queues_per_port: usize,
        hrtt: Time,
        rng: Rng,
    ) -> BfcSwitch {
        let (hrtt, factor) = match cfg.threshold {
            ThresholdRule::Paper => (cfg.hrtt.unwrap_or(hrtt), cfg.threshold_factor),
            ThresholdRule::Artifact => (
                cfg.hrtt.unwrap_or(Time::from_us(2)),
                cfg.threshold_factor * 1.5,
            ),
        };
        let sticky = cfg.sticky.unwrap_or(hrtt * 2);
        let table = if cfg.exact_flow_table {
            FlowTable::exact()
        } else {
            FlowTable::hashed(
                ports,
                cfg.flow_table_per_queue as u64 * queues_per_port as u64,
                sticky,
            )
        };
        // Drawn only when used, so that every other configuration's random stream stays as it was.
        let mut rng = rng;
        let salt = match (cfg.assignment, cfg.stochastic_hash) {
            (Assignment::Stochastic, StochasticHash::Seeded) => Some(rng.random()),
            _ => None,
        };
        BfcSwitch {
            assignment: cfg.assignment,
            pause_min_packets: cfg.pause_min_packets.unwrap_or(match cfg.threshold {
                ThresholdRule::Paper => 1,
                ThresholdRule::Artifact => 2,
            }),
            counts_arrival: cfg
                .threshold_counts_arrival
                .unwrap_or(cfg.threshold == ThresholdRule::Artifact),
            factor,
            backpressure: cfg.backpressure,
            incast_label: cfg.incast_label,
            sampling: cfg.sampling,
            hrtt,
            thresholds: None,
            queues_per_port,
            sticky,
            table,
            counter: PauseCounter::new(ports),
            upstream_span: vec![0; ports],
            rng,
            salt,
            stats: BfcStats::default(),
        }
    }

    /// The pause threshold Th = HRTT · μ / N_active in bytes (§3.3.2), times the configured factor.
    pub fn threshold(&self, rate: Rate, n_active: usize) -> u64 {
        Self::share(self.hop_bdp_of(rate), n_active)
    }

    /// HRTT · μ at `rate`, times the configured factor.
    fn hop_bdp_of(&self, rate: Rate) -> f64 {
        rate.bytes_in(self.hrtt).0 as f64 * self.factor
    }

    /// A hop BDP split among `n_active` queues (at least one), in bytes.
    fn share(hop_bdp: f64, n_active: usize) -> u64 {
        (hop_bdp / n_active.max(1) as f64) as u64
    }

    /// [`BfcSwitch::threshold`] through the one-rate table `thresholds`.
    #[inline]
    fn threshold_cached(&mut self, rate: Rate, n_active: usize) -> u64 {
        match &self.thresholds {
            Some((r, table)) if *r == rate && n_active < table.len() => table[n_active],
            _ => self.threshold_miss(rate, n_active),
        }
    }

    /// [`BfcSwitch::threshold_cached`] for a new rate (the table is rebuilt for it) or an N_active beyond
    /// the queues of a port (computed).
    #[cold]
    fn threshold_miss(&mut self, rate: Rate, n_active: usize) -> u64 {
        if self.thresholds.as_ref().is_none_or(|(r, _)| *r != rate) {
            let hop_bdp = self.hop_bdp_of(rate);
            let table = (0..=self.queues_per_port)
                .map(|n| Self::share(hop_bdp, n))
                .collect();
            self.thresholds = Some((rate, table));
        }
        self.threshold(rate, n_active)
    }

    /// §3.3.1 and §3.3.2 "On Enqueue": find (or keep) the flow's queue, update its flow-table entry, and
    /// increment the pause counter if the queue is above the threshold.
    pub fn handle_enqueue(&mut self, a: &Arrival, egress: &impl EgressView) -> Enqueued {
        let span = &mut self.upstream_span[a.in_port as usize];
        *span = (*span).max(a.upstream_q + 1);
        let key = self.table.key(a.out_port, a.hash, a.flow);
        let (spot, Tracked { mut entry, owner }) = self.table.lookup(key);
        if entry.size > 0 && owner != a.flow {
            self.stats.index_collisions += 1;
        }
        let tracked = self.sampling >= 1.0 || self.rng.random::<f64>() < self.sampling;
        let idle = entry.size == 0 && a.now.saturating_sub(entry.touched) >= self.sticky;
        let fresh = entry == Entry::default();
        if idle || fresh {
            entry.queue = self.pick_queue(a, egress);
        }
        if tracked {
            entry.size += 1;
        }
        entry.touched = a.now;
        self.table.store(
            spot,
            key,
            Tracked {
                entry,
                owner: a.flow,
            },
        );

        let queue = entry.queue;
        let mut out = Enqueued {
            queue,
            tracked,
            counted: false,
            signal: None,
        };
        if !self.backpressure || a.elide || !tracked {
            return out;
        }
        let th = self.threshold_cached(a.rate, egress.active_with(queue as usize));
        let check = entry.size >= self.pause_min_packets;
        let qlen = egress.queue_bytes(queue as usize)
            + if self.counts_arrival {
                a.size as u64
            } else {
                0
            };
        if check && qlen > th {
            out.counted = true;
            out.signal = self.counter.increment(a.in_port, a.upstream_q);
            if out.signal.is_some() {
                self.stats.pauses += 1;
            }
        }
        out
    }

    /// §3.3.1 and §3.3.2 "On Dequeue": the packet leaves; returns the RESUME to send if it was the last
    /// counted packet of its upstream queue. On Tofino2 these operations run on the packet's header
    /// recirculated to the ingress pipeline (§4), counted in [`BfcStats::recirculations`].
    #[inline]
    pub fn handle_dequeue(&mut self, d: &Departure) -> Option<Signal> {
        if d.memo.tracked {
            self.stats.recirculations += 1;
        }
        self.release(d)
    }

    /// Undoes [`BfcSwitch::handle_enqueue`] for a packet the buffer then dropped: the dequeue operations
    /// without a departure (nothing leaves, so nothing is recirculated).
    pub fn handle_drop(&mut self, d: &Departure) -> Option<Signal> {
        self.release(d)
    }

    #[inline]
    fn release(&mut self, d: &Departure) -> Option<Signal> {
        // App. A.8: "The dequeue operations ... are only executed on the recirculated packets." A packet that
        // was not sampled touches nothing on its way out (`counted` implies `tracked`).
        if !d.memo.tracked {
            return None;
        }
        let key = self.table.key(d.out_port, d.hash, d.flow);
        let (spot, mut tracked) = self.table.lookup(key);
        tracked.entry.size = tracked.entry.size.saturating_sub(1);
        tracked.entry.touched = d.now;
        self.table.store(spot, key, tracked);
        if !d.memo.counted {
            return None;
        }
        let signal = self.counter.decrement(d.in_port, d.upstream_q);
        if signal.is_some() {
            self.stats.resumes += 1;
        }
        signal
    }

    fn pick_queue(&mut self, a: &Arrival, egress: &impl EgressView) -> u16 {
        let (start, end) = (a.queues.start, a.queues.end);
        // App. A.7: the last queue of the class holds every incast flow and no other.
        let (shared, end) = if self.incast_label && end - start > 1 {
            (end - 1, end - 1)
        } else {
            (end, end)
        };
        if a.incast && shared < a.queues.end {
            return shared;
        }
        let n = (end - start) as u64;
        match self.assignment {
            Assignment::Single => start,
            Assignment::Stochastic => {
                let hash = match self.salt {
                    None => a.hash as u64,
                    // With its own seed, as for ECMP.
                    Some(salt) => ecmp_hash(a.hash as u64, salt) >> 32,
                };
                start + ((hash * n) >> 32) as u16
            }
            Assignment::Dynamic => {
                self.stats.assignments += 1;
                // A random starting point spreads new flows over the empty queues, as Tofino2's rotating
                // start (§4) and the artifact's random scan do.
                let from = start as usize + self.rng.random_range(0..n) as usize;
                match egress.first_empty(start as usize..end as usize, from) {
                    Some(q) => q as u16,
                    None => {
                        self.stats.queue_collisions += 1;
                        start + self.rng.random_range(0..n) as u16
                    }
                }
            }
        }
    }

    /// Bitmap of the upstream queues of ingress `port` that should be paused (the periodic refresh, §3.3.2).
    pub fn paused_bitmap(&self, port: u16) -> &[u64] {
        self.counter.bitmap(port)
    }

    /// Upstream queues of ingress `port` paused now.
    pub fn paused_at(&self, port: u16) -> u32 {
        self.counter.paused_at(port)
    }

    /// The 1-hop RTT in use.
    pub fn hrtt(&self) -> Time {
        self.hrtt
    }

    /// Counts so far.
    pub fn stats(&self) -> BfcStats {
        self.stats
    }

    /// Entries of the flow table (§3.3.1: 100 × the queues of each egress port); 0 for the exact table of
    /// the ideal baselines, which has no fixed size.
    pub fn flow_table_entries(&self) -> usize {
        self.table.capacity()
    }

    /// One more than the largest `upstreamQ` a data packet arriving on ingress `port` carried: the
    /// pause-counter entries the ingress needed in this run (§3.3.2).
    pub fn upstream_span(&self, port: u16) -> u32 {
        self.upstream_span[port as usize]
    }

    /// Whether the switch pauses upstream queues at all (the pause counter is needed).
    pub fn backpressure(&self) -> bool {
        self.backpressure
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Range;

    use super::*;
    use bfcsim_core::rng::{Stream, stream};

    impl BfcSwitch {
        /// Packets in the switch counted in `a`'s flow-table entry.
        fn packets_in(&self, a: &Arrival) -> u32 {
            let key = self.table.key(a.out_port, a.hash, a.flow);
            self.table.get(key).entry.size
        }
    }

    /// A scripted egress: queue lengths, paused flags, and levels all 0.
    #[derive(Clone)]
    struct Egress {
        bytes: Vec<u64>,
        paused: Vec<bool>,
    }

    impl Egress {
        fn new(n: usize) -> Egress {
            Egress {
                bytes: vec![0; n],
                paused: vec![false; n],
            }
        }
    }

    impl EgressView for Egress {
        fn first_empty(&self, range: Range<usize>, start: usize) -> Option<usize> {
            let (a, b) = (range.start, range.end);
            (start..b)
                .chain(a..start)
                .find(|&q| self.bytes[q] == 0 && !self.paused[q])
        }
        fn queue_bytes(&self, q: usize) -> u64 {
            self.bytes[q]
        }
        fn active_with(&self, q: usize) -> usize {
            let others = (0..self.bytes.len())
                .filter(|&i| i != q && self.bytes[i] > 0 && !self.paused[i])
                .count();
            others + usize::from(!self.paused[q])
        }
    }

    const G100: Rate = Rate(100_000_000_000);

    fn switch(cfg: &BfcConfig) -> BfcSwitch {
        BfcSwitch::new(cfg, 4, 4, Time::from_us(2), stream(1, Stream::Other(0)))
    }

    fn arrival(now: Time, hash: u32, flow: u32) -> Arrival {
        Arrival {
            now,
            in_port: 0,
            out_port: 1,
            hash,
            flow,
            upstream_q: 5,
            size: 1000,
            incast: false,
            queues: 0..4,
            rate: G100,
            level: 0,
            elide: false,
        }
    }

    fn departure(now: Time, a: &Arrival, e: &Enqueued) -> Departure {
        Departure {
            now,
            ..Departure::refused(a, e.queue, e.kept())
        }
    }

    #[test]
    fn threshold_is_one_hop_bdp_shared_by_active_queues() {
        let s = switch(&BfcConfig::default());
        // 2 µs at 100 Gb/s is 25 000 B; split among 4 active queues, 6 250 B.
        assert_eq!(s.threshold(G100, 1), 25_000);
        assert_eq!(s.threshold(G100, 4), 6_250);
        assert_eq!(s.threshold(G100, 0), 25_000, "N_active is at least 1");
        let art = switch(&BfcConfig {
            threshold: ThresholdRule::Artifact,
            ..BfcConfig::default()
        });
        assert_eq!(art.threshold(G100, 2), 18_750, "1.5 × 25 000 / 2");
    }

    #[test]
    fn new_flows_take_empty_queues_then_random_ones() {
        let mut s = switch(&BfcConfig::default());
        let mut eg = Egress::new(4);
        let mut queues = Vec::new();
        for f in 0..4u32 {
            let e = s.handle_enqueue(&arrival(Time(0), f << 28, f), &eg);
            eg.bytes[e.queue as usize] += 1000;
            queues.push(e.queue);
        }
        queues.sort();
        assert_eq!(
            queues,
            vec![0, 1, 2, 3],
            "each new flow found an empty queue"
        );
        assert_eq!(s.stats().queue_collisions, 0);
        // A fifth flow finds no empty queue: a random one, counted as a collision.
        let e = s.handle_enqueue(&arrival(Time(0), 0xF << 28, 4), &eg);
        assert!(e.queue < 4);
        assert_eq!(s.stats().queue_collisions, 1);
        assert_eq!(s.stats().assignments, 5);
        // An empty queue paused by the downstream is not available.
        let mut s = switch(&BfcConfig::default());
        let mut eg = Egress::new(4);
        eg.bytes = vec![1, 0, 1, 1];
        eg.paused[1] = true;
        s.handle_enqueue(&arrival(Time(0), 0, 0), &eg);
        assert_eq!(s.stats().queue_collisions, 1);
    }

    #[test]
    fn assignment_is_sticky_while_packets_remain_and_for_the_sticky_window() {
        let mut s = switch(&BfcConfig::default()); // sticky = 2 × 2 µs
        let mut eg = Egress::new(4);
        eg.bytes = vec![1, 1, 0, 1]; // only queue 2 is empty
        let a = arrival(Time(0), 7, 1);
        let e1 = s.handle_enqueue(&a, &eg);
        assert_eq!(e1.queue, 2);
        eg.bytes = vec![0, 1, 1000, 1];
        // The flow has a packet in queue 2: it stays even though queue 0 is empty.
        let e2 = s.handle_enqueue(&arrival(Time::from_us(1), 7, 1), &eg);
        assert_eq!(e2.queue, 2);
        s.handle_dequeue(&departure(Time::from_us(2), &a, &e1));
        s.handle_dequeue(&departure(Time::from_us(3), &a, &e2));
        // No packets left, but within 4 µs of the last dequeue the entry keeps queue 2.
        let e3 = s.handle_enqueue(&arrival(Time::from_us(6), 7, 1), &eg);
        assert_eq!(e3.queue, 2, "sticky");
        s.handle_dequeue(&departure(Time::from_us(6), &a, &e3));
        // After the window the entry is reassigned, to the only empty queue.
        let e4 = s.handle_enqueue(&arrival(Time::from_us(11), 7, 1), &eg);
        assert_eq!(e4.queue, 0);
    }

    #[test]
    fn pause_counter_follows_packets_above_threshold() {
        let mut s = switch(&BfcConfig::default());
        let mut eg = Egress::new(4);
        eg.bytes = vec![0, 1, 1, 1];
        let a = arrival(Time(0), 1, 1);
        // Queue 0 below Th: no pause.
        let e = s.handle_enqueue(&a, &eg);
        assert_eq!((e.queue, e.counted, e.signal), (0, false, None));
        eg.bytes[0] = 6_251; // 4 active queues: Th = 6 250
        let p1 = s.handle_enqueue(&a, &eg);
        assert!(p1.counted);
        assert_eq!(p1.signal, Some(Signal::Pause { port: 0, target: 5 }));
        let p2 = s.handle_enqueue(&a, &eg);
        assert!(p2.counted && p2.signal.is_none(), "pause sent once");
        // The uncounted packet leaves: nothing. The counted ones: resume on the last.
        assert_eq!(s.handle_dequeue(&departure(Time(1), &a, &e)), None);
        assert_eq!(s.handle_dequeue(&departure(Time(2), &a, &p1)), None);
        assert_eq!(
            s.handle_dequeue(&departure(Time(3), &a, &p2)),
            Some(Signal::Resume { port: 0, target: 5 })
        );
        assert_eq!(s.stats().pauses, 1);
        assert_eq!(s.stats().resumes, 1);
        assert_eq!(s.packets_in(&a), 0, "every packet left");
        assert_eq!(s.stats().recirculations, 3, "every departure recirculates");
        assert_eq!(s.upstream_span(0), 6, "upstreamQ 5 needs counters 0..=5");
        assert_eq!(s.upstream_span(1), 0);
    }

    #[test]
    fn dropped_packets_are_undone_without_recirculating() {
        let mut s = switch(&BfcConfig::default());
        let mut eg = Egress::new(4);
        eg.bytes = vec![100_000; 4];
        let a = arrival(Time(0), 1, 1);
        let e = s.handle_enqueue(&a, &eg);
        assert!(e.counted && e.signal.is_some());
        assert_eq!(
            s.handle_drop(&departure(Time(0), &a, &e)),
            Some(Signal::Resume { port: 0, target: 5 })
        );
        assert_eq!((s.packets_in(&a), s.stats().recirculations), (0, 0));
        assert_eq!(s.flow_table_entries(), 4 * 4 * 100);
    }

    #[test]
    fn entries_count_their_packets() {
        let mut s = switch(&BfcConfig::default());
        let eg = Egress::new(4);
        let a = arrival(Time(0), 1, 1);
        let b = arrival(Time(0), 0x8000_0000, 2);
        let ea = s.handle_enqueue(&a, &eg);
        let ea2 = s.handle_enqueue(&a, &eg);
        let eb = s.handle_enqueue(&b, &eg);
        assert_eq!((s.packets_in(&a), s.packets_in(&b)), (2, 1));
        s.handle_dequeue(&departure(Time(1), &a, &ea));
        assert_eq!(s.packets_in(&a), 1, "flow a still has a packet in");
        s.handle_dequeue(&departure(Time(1), &a, &ea2));
        s.handle_dequeue(&departure(Time(1), &b, &eb));
        assert_eq!((s.packets_in(&a), s.packets_in(&b)), (0, 0));
    }

    #[test]
    fn more_active_queues_lower_the_threshold() {
        let mut s = switch(&BfcConfig::default());
        let mut eg = Egress::new(4);
        eg.bytes = vec![0, 100, 100, 100];
        let a = arrival(Time(0), 1, 1);
        assert_eq!(s.handle_enqueue(&a, &eg).queue, 0);
        eg.bytes[0] = 7_000; // 4 active queues: Th = 6 250 < 7 000
        assert!(s.handle_enqueue(&a, &eg).counted);
        eg.paused = vec![false, true, true, true]; // only queue 0 active: Th = 25 000
        assert!(!s.handle_enqueue(&a, &eg).counted);
    }

    #[test]
    fn elided_pairs_and_disabled_backpressure_never_pause() {
        let mut eg = Egress::new(4);
        eg.bytes[0] = 1_000_000;
        let mut a = arrival(Time(0), 1, 1);
        a.elide = true;
        let mut s = switch(&BfcConfig::default());
        assert!(!s.handle_enqueue(&a, &eg).counted);
        let mut ideal = switch(&BfcConfig {
            backpressure: false,
            ..BfcConfig::default()
        });
        a.elide = false;
        assert!(!ideal.handle_enqueue(&a, &eg).counted);
    }

    #[test]
    fn artifact_checks_only_flows_with_a_packet_already_in() {
        let mut s = switch(&BfcConfig {
            threshold: ThresholdRule::Artifact,
            ..BfcConfig::default()
        });
        let mut eg = Egress::new(4);
        eg.bytes[0] = 100_000;
        eg.bytes[1] = 100_000;
        eg.bytes[2] = 100_000;
        let a = arrival(Time(0), 1, 1);
        let e = s.handle_enqueue(&a, &eg);
        assert_eq!(e.queue, 3);
        assert!(!e.counted, "first packet of the entry is never counted");
        eg.bytes[3] = 40_000; // > 1.5 × 25 000 / 4
        assert!(s.handle_enqueue(&a, &eg).counted);
    }

    /// The artifact's two departures from the paper's check, each on its own over the paper's threshold.
    #[test]
    fn pause_min_packets_and_counting_the_arrival_apart() {
        // Th = 25 000 / 4 active queues = 6 250. The flow's first packet finds queue 0 empty and takes it.
        let mut empty0 = Egress::new(4);
        empty0.bytes = vec![0, 1, 1, 1];
        let mut busy0 = Egress::new(4);
        busy0.bytes = vec![6_000, 1, 1, 1];
        let a = arrival(Time(0), 1, 1);
        // Sends the flow's first packet into the empty queue, then a second one that finds `q0` bytes ahead.
        let second = |cfg: BfcConfig, q0: u64| {
            let mut s = switch(&cfg);
            assert_eq!(s.handle_enqueue(&a, &empty0).queue, 0);
            let mut eg = busy0.clone();
            eg.bytes[0] = q0;
            s.handle_enqueue(&a, &eg).counted
        };
        assert!(!second(BfcConfig::default(), 6_000), "6 000 ≤ 6 250");
        let arrival_counted = BfcConfig {
            threshold_counts_arrival: Some(true),
            ..BfcConfig::default()
        };
        assert!(second(arrival_counted, 6_000), "6 000 + 1 000 > 6 250");
        let guarded = BfcConfig {
            pause_min_packets: Some(2),
            ..BfcConfig::default()
        };
        assert!(
            second(guarded.clone(), 7_000),
            "a second packet above Th pauses"
        );
        // Every queue above Th: the paper counts a flow's first packet, the guard does not.
        let mut full = Egress::new(4);
        full.bytes = vec![7_000; 4];
        assert!(
            switch(&BfcConfig::default())
                .handle_enqueue(&a, &full)
                .counted
        );
        assert!(!switch(&guarded).handle_enqueue(&a, &full).counted);
    }

    #[test]
    fn stochastic_single_and_incast_label_assignments() {
        let eg = Egress::new(4);
        let mut st = switch(&BfcConfig {
            assignment: Assignment::Stochastic,
            ..BfcConfig::default()
        });
        assert_eq!(
            st.handle_enqueue(&arrival(Time(0), 3 << 30, 1), &eg).queue,
            3
        );
        assert_eq!(
            st.handle_enqueue(&arrival(Time(0), 1 << 30, 2), &eg).queue,
            1
        );
        let mut single = switch(&BfcConfig {
            assignment: Assignment::Single,
            ..BfcConfig::default()
        });
        assert_eq!(
            single
                .handle_enqueue(&arrival(Time(0), 3 << 30, 1), &eg)
                .queue,
            0
        );
        let mut label = switch(&BfcConfig {
            incast_label: true,
            ..BfcConfig::default()
        });
        let mut inc = arrival(Time(0), 9, 9);
        inc.incast = true;
        assert_eq!(label.handle_enqueue(&inc, &eg).queue, 3);
        let mut full = Egress::new(4);
        full.bytes = vec![1, 1, 1, 0];
        // Queue 3 is empty but reserved for incast: the new flow shares one of 0..3.
        let other = arrival(Time(0), 0x8000_0000, 5); // another flow-table entry than the incast flow's
        assert!(label.handle_enqueue(&other, &full).queue < 3);
    }

    #[test]
    fn a_seeded_stochastic_hash_differs_between_switches() {
        let eg = Egress::new(4);
        let cfg = BfcConfig {
            assignment: Assignment::Stochastic,
            stochastic_hash: StochasticHash::Seeded,
            ..BfcConfig::default()
        };
        let at = |seed: u64| -> Vec<u16> {
            let mut s =
                BfcSwitch::new(&cfg, 4, 4, Time::from_us(2), stream(seed, Stream::Other(0)));
            (0..32u32)
                .map(|f| {
                    let hash = f.wrapping_mul(0x9e37_79b9);
                    // A flow keeps its queue while it stays: ask twice.
                    let q = s.handle_enqueue(&arrival(Time(0), hash, f), &eg).queue;
                    assert_eq!(s.handle_enqueue(&arrival(Time(0), hash, f), &eg).queue, q);
                    q
                })
                .collect()
        };
        let (a, b) = (at(1), at(2));
        assert_eq!(a, at(1), "the same seed hashes alike");
        assert_ne!(a, b, "another seed hashes the same flows to other queues");
        assert!(a.iter().all(|&q| q < 4));
        // Seeded without stochastic assignment is refused; unset, the hash is not written (stored runs keep their
        // keys).
        let mut dynamic = cfg.clone();
        dynamic.assignment = Assignment::Dynamic;
        assert!(
            dynamic
                .validate()
                .unwrap_err()
                .contains("needs flow_control.assignment")
        );
        let text = toml::to_string(&BfcConfig::default()).unwrap();
        assert!(!text.contains("stochastic_hash"), "{text}");
        assert!(
            toml::to_string(&cfg)
                .unwrap()
                .contains("stochastic_hash = \"seeded\"")
        );
        // Unseeded, the queue is the flow's hash alone, whatever the seed.
        let flow = |seed: u64| {
            let cfg = BfcConfig {
                stochastic_hash: StochasticHash::Flow,
                ..cfg.clone()
            };
            let mut s =
                BfcSwitch::new(&cfg, 4, 4, Time::from_us(2), stream(seed, Stream::Other(0)));
            s.handle_enqueue(&arrival(Time(0), 3 << 30, 1), &eg).queue
        };
        assert_eq!((flow(1), flow(2)), (3, 3));
    }

    #[test]
    fn index_collisions_are_counted_and_share_the_queue() {
        let mut s = switch(&BfcConfig {
            flow_table_per_queue: 1, // 4 entries per port: hashes 0 and 1 collide
            ..BfcConfig::default()
        });
        let eg = Egress::new(4);
        let e1 = s.handle_enqueue(&arrival(Time(0), 0, 1), &eg);
        let e2 = s.handle_enqueue(&arrival(Time(0), 1, 2), &eg);
        assert_eq!(e1.queue, e2.queue);
        assert_eq!(s.stats().index_collisions, 1);
    }

    #[test]
    fn sampled_out_packets_skip_the_table_and_the_counter() {
        let mut s = switch(&BfcConfig {
            sampling: 0.5,
            ..BfcConfig::default()
        });
        let mut eg = Egress::new(4);
        eg.bytes = vec![1_000_000; 4];
        let outcomes: Vec<Enqueued> = (0..200)
            .map(|i| s.handle_enqueue(&arrival(Time(i), 1, 1), &eg))
            .collect();
        let tracked = outcomes.iter().filter(|e| e.tracked).count();
        assert!((70..130).contains(&tracked), "{tracked}");
        assert!(outcomes.iter().all(|e| e.counted == e.tracked));
        // App. A.8: only the sampled packets are recirculated and run the dequeue operations, so the entry
        // was last touched by the last sampled departure.
        let a = arrival(Time(0), 1, 1);
        for (i, e) in outcomes.iter().enumerate() {
            s.handle_dequeue(&departure(Time(300 + i as u64), &a, e));
        }
        assert_eq!(s.stats().recirculations, tracked as u64);
        let last = outcomes.iter().rposition(|e| e.tracked).unwrap() as u64;
        let entry = s.table.get(s.table.key(1, 1, 1)).entry;
        assert_eq!((entry.size, entry.touched), (0, Time(300 + last)));
    }
}
