//! Per-hop flow control in the engine: BFC's switch and NIC sides (§3.3), PAUSE/RESUME frames on the wire in
//! the strict-priority control queue, the periodic refresh of paused state, and a watchdog that makes
//! deadlocks (App. B) visible. BFC's own state lives in [`BfcSwitch`]; this module moves packets and frames.
//!
//! PFC ([`super::pfc`]) shares the frames ([`Shard::send_frame`], [`Shard::receive_hop_frame`]), the pausing of
//! switch queues and NIC queues ([`Shard::set_port_paused`], [`Shard::set_nic_paused`]) and their clocks: under
//! PFC a NIC queue is a priority, and a paused priority parks every flow of that class at the NIC.

use std::collections::BTreeSet;

use bfcsim_net::backpressure::elided_pairs;
use bfcsim_schemes::bfc::{Arrival, BfcConfig, BfcSwitch, Departure, EgressView, Enqueued, Signal};

use super::*;

/// [`Enqueued::tracked`] kept with a packet while it is in a switch.
const TRACKED: u8 = 1;
/// [`Enqueued::counted`] kept with a packet while it is in a switch.
const COUNTED: u8 = 2;

/// The per-hop flags a packet carries through a switch.
pub(super) fn flags(e: &Enqueued) -> u8 {
    (if e.tracked { TRACKED } else { 0 }) | (if e.counted { COUNTED } else { 0 })
}

/// When each queue of a port was paused, how long each has been paused in all, and how long the port had
/// packets but none it could send (the link paused).
pub(super) struct PauseClock {
    since: Vec<Time>,
    total: Vec<Time>,
    reported: Vec<bool>,
    paused: usize,
    blocked_since: Option<Time>,
    blocked: Time,
}

impl PauseClock {
    pub(super) fn new(queues: usize) -> PauseClock {
        PauseClock {
            since: vec![Time::MAX; queues],
            total: vec![Time::ZERO; queues],
            reported: vec![false; queues],
            paused: 0,
            blocked_since: None,
            blocked: Time::ZERO,
        }
    }

    fn set(&mut self, q: usize, paused: bool, now: Time) {
        if q >= self.since.len() {
            self.since.resize(q + 1, Time::MAX);
            self.total.resize(q + 1, Time::ZERO);
            self.reported.resize(q + 1, false);
        }
        if paused && self.since[q] == Time::MAX {
            self.since[q] = now;
            self.paused += 1;
        } else if !paused && self.since[q] != Time::MAX {
            self.total[q] += now - self.since[q];
            self.since[q] = Time::MAX;
            self.reported[q] = false;
            self.paused -= 1;
        }
    }

    fn set_blocked(&mut self, blocked: bool, now: Time) {
        match (self.blocked_since, blocked) {
            (None, true) => self.blocked_since = Some(now),
            (Some(t), false) => {
                self.blocked += now - t;
                self.blocked_since = None;
            }
            _ => {}
        }
    }

    /// Queues paused longer than `bound` not yet reported; marks them reported.
    fn overdue(&mut self, now: Time, bound: Time) -> Vec<(usize, Time)> {
        if self.paused == 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (q, &t) in self.since.iter().enumerate() {
            if t != Time::MAX && now - t > bound && !self.reported[q] {
                self.reported[q] = true;
                out.push((q, now - t));
            }
        }
        out
    }

    /// Total paused time of queue `q` up to `now`.
    fn paused_time(&self, q: usize, now: Time) -> Time {
        let open = match self.since.get(q) {
            Some(&t) if t != Time::MAX => now - t,
            _ => Time::ZERO,
        };
        self.total.get(q).copied().unwrap_or(Time::ZERO) + open
    }

    fn blocked_time(&self, now: Time) -> Time {
        self.blocked + self.blocked_since.map_or(Time::ZERO, |t| now - t)
    }
}

/// A NIC's queues under per-hop flow control: which are paused, how many flows use each, and the flows
/// waiting for theirs to be resumed.
#[derive(Default)]
pub(super) struct NicQueues {
    paused: Vec<u64>,
    users: Vec<u32>,
    free: BTreeSet<u32>,
    parked: Vec<FlowId>,
    clock: Option<PauseClock>,
}

impl NicQueues {
    /// A queue for a new flow: the lowest unused one, or with `limit` queues all in use, one chosen by the
    /// flow's hash (flows then share it).
    fn alloc(&mut self, limit: Option<u32>, hash: u64) -> u32 {
        let q = match self.free.pop_first() {
            Some(q) => q,
            None if limit.is_none_or(|n| (self.users.len() as u32) < n) => {
                self.users.push(0);
                self.users.len() as u32 - 1
            }
            None => (hash % self.users.len() as u64) as u32,
        };
        self.users[q as usize] += 1;
        q
    }

    fn release(&mut self, q: u32) {
        let u = &mut self.users[q as usize];
        *u -= 1;
        if *u == 0 {
            self.free.insert(q);
        }
    }

    /// How long queue `q` has been paused in all up to `now`.
    #[inline]
    pub(super) fn paused_time(&self, q: u32, now: Time) -> Time {
        self.clock
            .as_ref()
            .map_or(Time::ZERO, |c| c.paused_time(q as usize, now))
    }

    #[inline]
    fn is_paused(&self, q: u32) -> bool {
        self.paused
            .get(q as usize / 64)
            .is_some_and(|w| w >> (q % 64) & 1 == 1)
    }

    /// Returns whether the state changed.
    fn set_paused(&mut self, q: u32, paused: bool, now: Time) -> bool {
        if self.is_paused(q) == paused {
            return false;
        }
        let w = q as usize / 64;
        if w >= self.paused.len() {
            self.paused.resize(w + 1, 0);
        }
        self.paused[w] ^= 1 << (q % 64);
        self.clock
            .get_or_insert_with(|| PauseClock::new(0))
            .set(q as usize, paused, now);
        true
    }
}

/// Per-hop flow control counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HopStats {
    /// PAUSE frames sent.
    pub pause_frames: u64,
    /// RESUME frames sent.
    pub resume_frames: u64,
    /// Refresh frames sent.
    pub refresh_frames: u64,
    /// Frames lost on purpose (`lose_frames`).
    pub frames_lost: u64,
    /// Queues found paused longer than the watchdog bound (each pause episode counted once).
    pub watchdog_alarms: u64,
    /// The first alarm, described.
    pub first_alarm: Option<String>,
    /// BFC's switch counts, summed over switches.
    pub bfc: bfcsim_schemes::bfc::BfcStats,
}

impl std::ops::Add for HopStats {
    type Output = HopStats;
    /// Two shards' counts together; the first alarm is the left one's, else the right one's.
    fn add(self, o: HopStats) -> HopStats {
        HopStats {
            pause_frames: self.pause_frames + o.pause_frames,
            resume_frames: self.resume_frames + o.resume_frames,
            refresh_frames: self.refresh_frames + o.refresh_frames,
            frames_lost: self.frames_lost + o.frames_lost,
            watchdog_alarms: self.watchdog_alarms + o.watchdog_alarms,
            first_alarm: self.first_alarm.or(o.first_alarm),
            bfc: self.bfc + o.bfc,
        }
    }
}

/// Run-wide per-hop flow control state.
pub(super) struct HopState {
    /// Bitmaps of refresh frames in flight, by the index in the frame's `seq`.
    maps: Slots<Vec<u64>>,
    /// The draws of `lose_frames`, one stream per receiving port (empty unless frames are lost on purpose), so
    /// that a frame's fate depends only on its port's history.
    loss_rngs: Vec<Rng>,
    stats: HopStats,
    /// When the first alarm was raised and its position in the watchdog's scan (switch ports, then hosts), to
    /// pick the same first alarm among shards as one engine would.
    first_alarm_at: Option<(Time, usize)>,
    /// A watchdog event is pending.
    watchdog_pending: bool,
    /// Some per-hop flow control pauses queues (BFC or PFC).
    pub(super) enabled: bool,
}

impl HopState {
    pub(super) fn new() -> HopState {
        HopState {
            maps: Slots::default(),
            loss_rngs: Vec::new(),
            stats: HopStats::default(),
            first_alarm_at: None,
            watchdog_pending: false,
            enabled: false,
        }
    }

    /// Keeps a refresh frame's bitmap until the frame arrives; returns the index the frame carries.
    pub(super) fn store_map(&mut self, map: Vec<u64>) -> u32 {
        self.maps.insert(map)
    }

    /// Takes the bitmap stored at `index` back.
    pub(super) fn take_map(&mut self, index: u32) -> Vec<u64> {
        self.maps.take(index)
    }
}

/// The egress port's queues as BFC sees them.
struct Egress<'a> {
    queues: &'a PortQueues,
    level: usize,
}

impl EgressView for Egress<'_> {
    fn first_empty(&self, range: std::ops::Range<usize>, start: usize) -> Option<usize> {
        self.queues.first_empty(range, start)
    }
    fn queue_bytes(&self, q: usize) -> u64 {
        self.queues.queue_bytes(q)
    }
    fn active_with(&self, q: usize) -> usize {
        let ready = self.queues.queue_len(q) > 0 && !self.queues.is_paused(q);
        self.queues.ready_in_level(self.level) + usize::from(!ready && !self.queues.is_paused(q))
    }
}

impl Shard {
    fn bfc_config(&self) -> Option<&BfcConfig> {
        match &self.params.flow_control {
            FlowControl::Bfc(c) => Some(c),
            FlowControl::None | FlowControl::Pfc(_) => None,
        }
    }

    /// Creates each switch's BFC state: the 1-hop RTT is the largest round trip of a link's delays over the
    /// switch's ports (§3.3.2), and App. B's table comes from the routes.
    pub(super) fn init_flow_control(&mut self) {
        let Some(cfg) = self.bfc_config().cloned() else {
            return;
        };
        self.hop.enabled = true;
        let elided = if cfg.deadlock_prevention {
            elided_pairs(&self.topo, &self.routes)
        } else {
            vec![Vec::new(); self.topo.nodes.len()]
        };
        for s in 0..self.switches.len() {
            let node = self.switches[s].node;
            let ports = &self.topo.nodes[node.idx()].ports;
            let hrtt = ports
                .iter()
                .map(|&p| {
                    self.wires[p.idx()].delay
                        + self.wires[self.topo.ports[p.idx()].peer.idx()].delay
                })
                .max()
                .unwrap_or(Time::ZERO);
            let n = ports.len();
            let rng = rng::stream(self.params.seed, Stream::Other(0xBFC0_0000 | node.0));
            let bfc = BfcSwitch::new(&cfg, n, self.queues_per_class as usize, hrtt, rng);
            let mut elide = vec![0u64; (n * n).div_ceil(64)];
            for &(i, e) in &elided[node.idx()] {
                let bit = i as usize * n + e as usize;
                elide[bit / 64] |= 1 << (bit % 64);
            }
            let sw = &mut self.switches[s];
            sw.bfc = Some(bfc);
            sw.elide = elide;
        }
        if cfg.lose_frames > 0.0 {
            self.hop.loss_rngs = (0..self.topo.ports.len() as u32)
                .map(|p| rng::stream(self.params.seed, Stream::Other(0x4f50_0000 | p)))
                .collect();
        }
        let at = self.now + cfg.watchdog / 2;
        self.events.push(at, Event::Watchdog);
        self.hop.watchdog_pending = true;
    }

    /// No event is pending but the watchdog's.
    pub(crate) fn idle(&self) -> bool {
        self.events.len() == usize::from(self.hop.watchdog_pending)
    }

    /// BFC's enqueue operations for data packet `p` entering switch `s` through `in_sp`, bound for `out_sp`.
    pub(super) fn bfc_enqueue(
        &mut self,
        s: usize,
        in_sp: u32,
        out_sp: u32,
        egress: PortId,
        p: &Packet,
    ) -> Enqueued {
        let class = (p.class as u64).min(self.params.switch.classes as u64 - 1);
        let first = self.data_base as u64 + class * self.queues_per_class;
        let out = &self.sw_ports[out_sp as usize];
        let (in_local, out_local) = (self.sw_ports[in_sp as usize].local, out.local);
        let sw = &mut self.switches[s];
        let n = self.topo.nodes[sw.node.idx()].ports.len();
        let bit = in_local as usize * n + out_local as usize;
        let arrival = Arrival {
            now: self.now,
            in_port: in_local as u16,
            out_port: out_local as u16,
            hash: p.hash,
            flow: p.flow.0,
            upstream_q: p.upstream_q,
            size: p.size,
            incast: p.incast,
            queues: first as u16..(first + self.queues_per_class) as u16,
            rate: self.wires[egress.idx()].rate,
            elide: sw
                .elide
                .get(bit / 64)
                .is_some_and(|w| w >> (bit % 64) & 1 == 1),
        };
        let view = Egress {
            queues: &out.queues,
            level: self.data_base + class as usize,
        };
        sw.bfc
            .as_mut()
            .expect("called only with BFC")
            .handle_enqueue(&arrival, &view)
    }

    /// Undoes [`Shard::bfc_enqueue`] for a packet the buffer then dropped: as if it had left at once. A PAUSE
    /// it caused is cancelled by the RESUME of its leaving, so neither is sent.
    pub(super) fn bfc_undo(&mut self, s: usize, in_sp: u32, out_sp: u32, p: &Packet, e: &Enqueued) {
        let d = Departure {
            now: self.now,
            in_port: self.sw_ports[in_sp as usize].local as u16,
            out_port: self.sw_ports[out_sp as usize].local as u16,
            hash: p.hash,
            flow: p.flow.0,
            upstream_q: p.upstream_q,
            tracked: e.tracked,
            counted: e.counted,
        };
        let bfc = self.switches[s].bfc.as_mut().expect("called only with BFC");
        let resume = bfc.handle_drop(&d);
        if resume.is_some() && e.signal.is_none() {
            unreachable!("a counter above one cannot reach zero on one departure");
        }
    }

    /// BFC's dequeue operations for data packet `pkt` leaving switch port `sp` from `queue`; stamps the queue
    /// as the packet's `upstreamQ` for the next hop.
    pub(super) fn bfc_dequeue(&mut self, sp: u32, pkt: PacketId, queue: usize) {
        let port = &self.sw_ports[sp as usize];
        let s = port.switch as usize;
        let p = self.packets.get_mut(pkt);
        let d = Departure {
            now: self.now,
            in_port: p.in_port,
            out_port: port.local as u16,
            hash: p.hash,
            flow: p.flow.0,
            upstream_q: p.upstream_q,
            tracked: p.hop_flags & TRACKED != 0,
            counted: p.hop_flags & COUNTED != 0,
        };
        p.upstream_q = queue as u32;
        p.hop_flags = 0;
        let signal = self.switches[s]
            .bfc
            .as_mut()
            .expect("called only with BFC")
            .handle_dequeue(&d);
        if let Some(signal) = signal {
            self.send_signal(s, signal);
        }
    }

    /// Sends a BFC PAUSE or RESUME from switch `s` out of the ingress port it concerns.
    pub(super) fn send_signal(&mut self, s: usize, signal: Signal) {
        let (local, queue, kind) = match signal {
            Signal::Pause { port, queue } => (port, queue, PacketKind::Pause),
            Signal::Resume { port, queue } => (port, queue, PacketKind::Resume),
        };
        let size = self.bfc_config().expect("BFC runs").frame_size;
        self.send_hop_frame(s, local as usize, kind, queue as u64, size);
    }

    /// Sends a PAUSE or RESUME of `size` bytes for `seq` (BFC: a queue, and a PAUSE arms the port's refresh;
    /// PFC: a priority) out of switch `s`'s local port `local`, and counts it.
    pub(super) fn send_hop_frame(
        &mut self,
        s: usize,
        local: usize,
        kind: PacketKind,
        seq: u64,
        size: u32,
    ) {
        let port = self.topo.nodes[self.switches[s].node.idx()].ports[local];
        if kind == PacketKind::Pause {
            self.hop.stats.pause_frames += 1;
            if self.pfc.is_none() {
                self.arm_refresh(port);
            }
        } else {
            self.hop.stats.resume_frames += 1;
        }
        self.send_frame(port, kind, seq, size);
    }

    /// Puts a hop-by-hop frame in switch `port`'s control queue.
    pub(super) fn send_frame(&mut self, port: PortId, kind: PacketKind, seq: u64, size: u32) {
        let Owner::Switch(sp) = self.wires[port.idx()].owner else {
            unreachable!("only switches send per-hop frames")
        };
        let pkt = self.packets.alloc(Packet {
            seq,
            sent_at: self.now,
            flow: FlowId(u32::MAX),
            size,
            payload: 0,
            dst_host: u32::MAX,
            src: self.switches[self.sw_ports[sp as usize].switch as usize].node,
            hash: 0,
            ce_bytes: 0,
            kind,
            class: 0,
            ect: false,
            ce: false,
            incast: false,
            upstream_q: 0,
            in_port: 0,
            hop_flags: 0,
            queued_at: self.now,
        });
        self.counters.injected_pkts += 1;
        self.counters.injected_bytes += size as u64;
        let out = &mut self.sw_ports[sp as usize];
        let s = out.switch as usize;
        if let Err(reason) = self.switches[s]
            .mmu
            .admit(out.local as usize, 0, size as u64)
        {
            self.release_map(kind, seq);
            self.drop_packet(pkt, reason);
            return;
        }
        out.queues.push(0, pkt, size);
        self.kick(port);
    }

    /// Schedules `port`'s next refresh on the interval's grid (the artifact's refresh ticks every interval
    /// for every port), unless one is pending or refreshes are off.
    fn arm_refresh(&mut self, port: PortId) {
        let interval = self.bfc_config().expect("BFC runs").refresh_interval;
        let Owner::Switch(sp) = self.wires[port.idx()].owner else {
            return;
        };
        let sp = &mut self.sw_ports[sp as usize];
        if interval == Time::ZERO || sp.refresh_armed {
            return;
        }
        sp.refresh_armed = true;
        let at = Time((self.now.0 / interval.0 + 1) * interval.0);
        self.events.push(at, Event::Refresh(port));
    }

    /// Sends switch `port`'s refresh: the bitmap of upstream queues its ingress wants paused. While any is
    /// paused the refresh repeats; the last one, with none paused, clears any pause whose RESUME was lost.
    pub(super) fn refresh(&mut self, port: PortId) {
        let Owner::Switch(sp) = self.wires[port.idx()].owner else {
            unreachable!("refreshes are scheduled for switch ports")
        };
        let sp_ref = &mut self.sw_ports[sp as usize];
        sp_ref.refresh_armed = false;
        let (s, local) = (sp_ref.switch as usize, sp_ref.local as u16);
        let bfc = self.switches[s].bfc.as_ref().expect("BFC runs");
        let bitmap = bfc.paused_bitmap(local);
        let still = bfc.paused_at(local) > 0;
        let size = self.bfc_config().expect("BFC runs").frame_size + (bitmap.len() * 8) as u32;
        let index = self.hop.store_map(bitmap);
        self.hop.stats.refresh_frames += 1;
        self.send_frame(port, PacketKind::Refresh, index as u64, size);
        if still {
            self.arm_refresh(port);
        }
    }

    fn release_map(&mut self, kind: PacketKind, seq: u64) {
        if kind == PacketKind::Refresh {
            self.hop.take_map(seq as u32);
        }
    }

    /// A per-hop frame reached the device that owns `port` (the upstream of the sender): pause, resume, or
    /// take the refreshed set of paused queues.
    pub(super) fn receive_hop_frame(&mut self, port: PortId, pkt: PacketId) {
        let p = *self.packets.get(pkt);
        let lose = self.bfc_config().map_or(0.0, |c| c.lose_frames);
        if p.kind != PacketKind::Refresh
            && lose > 0.0
            && self.hop.loss_rngs[port.idx()].random::<f64>() < lose
        {
            self.hop.stats.frames_lost += 1;
            self.drop_packet(pkt, DropReason::InjectedLoss);
            return;
        }
        self.counters.delivered_pkts += 1;
        self.counters.delivered_bytes += p.size as u64;
        self.packets.free(pkt);
        if self.pfc.is_some() {
            self.pfc_receive(port, &p);
            return;
        }
        let bitmap = if p.kind == PacketKind::Refresh {
            Some(self.hop.take_map(p.seq as u32))
        } else {
            None
        };
        let want = |q: u32| match &bitmap {
            Some(b) => b
                .get(q as usize / 64)
                .is_some_and(|w| w >> (q % 64) & 1 == 1),
            None => p.kind == PacketKind::Pause,
        };
        match self.wires[port.idx()].owner {
            Owner::Switch(sp) => {
                let queues = match bitmap {
                    Some(_) => {
                        self.data_base as u32..self.sw_ports[sp as usize].queues.count() as u32
                    }
                    None => p.seq as u32..p.seq as u32 + 1,
                };
                self.set_port_paused(port, sp, queues.map(|q| (q as usize, want(q))));
            }
            Owner::Host(h) => {
                if !self.bfc_config().is_some_and(|c| c.nic_obeys_pause) {
                    return;
                }
                let queues = match bitmap {
                    Some(_) => 0..self.hosts[h as usize].nic.users.len() as u32,
                    None => p.seq as u32..p.seq as u32 + 1,
                };
                self.set_nic_paused(h, queues.map(|q| (q, want(q))));
            }
        }
    }

    /// Pauses or resumes queues of switch port `sp`, the transmitter of `port`, keeping their clocks; serves the
    /// port again if any queue was resumed.
    pub(super) fn set_port_paused(
        &mut self,
        port: PortId,
        sp: u32,
        queues: impl IntoIterator<Item = (usize, bool)>,
    ) {
        let mut resumed = false;
        for (q, paused) in queues {
            let out = &mut self.sw_ports[sp as usize];
            if q < out.queues.count() && out.queues.set_paused(q, paused) {
                out.pause.set(q, paused, self.now);
                resumed |= !paused;
            }
        }
        self.pause_changed(sp);
        if resumed {
            self.kick(port);
        }
    }

    /// Pauses or resumes NIC queues of host `h`; flows parked on a resumed queue may send again.
    pub(super) fn set_nic_paused(&mut self, h: u32, queues: impl IntoIterator<Item = (u32, bool)>) {
        let mut resumed = false;
        for (q, paused) in queues {
            resumed |= self.hosts[h as usize].nic.set_paused(q, paused, self.now) && !paused;
        }
        if resumed {
            self.unpark(h);
        }
    }

    /// Re-readies the parked flows of host `h` whose NIC queue is no longer paused.
    fn unpark(&mut self, h: u32) {
        let parked = std::mem::take(&mut self.hosts[h as usize].nic.parked);
        let mut still = Vec::new();
        for id in parked {
            let slot = self.flows[id.idx()].slot;
            if slot == NO_SLOT {
                continue;
            }
            let a = &mut self.active[slot as usize];
            if self.hosts[h as usize].nic.is_paused(a.nic_q) {
                still.push(id);
            } else {
                a.parked = false;
                self.make_ready(id);
            }
        }
        self.hosts[h as usize].nic.parked.extend(still);
    }

    /// Whether flow `id` (of host `h`, in slot `slot`) must wait for its NIC queue; parks it if so.
    #[inline]
    pub(super) fn park_if_paused(&mut self, h: u32, id: FlowId, slot: usize) -> bool {
        if !self.hop.enabled {
            return false;
        }
        let a = &mut self.active[slot];
        let nic = &mut self.hosts[h as usize].nic;
        if !nic.is_paused(a.nic_q) {
            return false;
        }
        if !a.parked {
            a.parked = true;
            nic.parked.push(id);
        }
        true
    }

    /// A NIC queue for a new flow of host `h` of traffic class `class`: under BFC one of its own (§6.2.1), under
    /// PFC its priority's.
    pub(super) fn nic_queue(&mut self, h: u32, hash: u64, class: u8) -> u32 {
        match &self.params.flow_control {
            FlowControl::Bfc(c) => self.hosts[h as usize].nic.alloc(c.nic_queues, hash),
            FlowControl::Pfc(_) => self.priority(class) as u32,
            FlowControl::None => 0,
        }
    }

    /// Flow of host `h` on NIC queue `q` finished.
    pub(super) fn release_nic_queue(&mut self, h: u32, q: u32) {
        if self.hop.enabled && self.pfc.is_none() {
            self.hosts[h as usize].nic.release(q);
        }
    }

    /// Keeps switch port `sp`'s "link paused" clock: packets waiting but none sendable.
    #[inline]
    pub(super) fn pause_changed(&mut self, sp: u32) {
        if !self.hop.enabled {
            return;
        }
        let out = &mut self.sw_ports[sp as usize];
        let blocked = !out.queues.is_empty() && !out.queues.has_ready();
        out.pause.set_blocked(blocked, self.now);
    }

    /// Reports every queue (switch or NIC) paused for longer than the bound, once per pause.
    pub(super) fn watchdog(&mut self) {
        let bound = self.bfc_config().expect("BFC runs").watchdog;
        let now = self.now;
        // (position in the scan, description)
        let mut alarms = Vec::new();
        for (i, sp) in self.sw_ports.iter_mut().enumerate() {
            for (q, d) in sp.pause.overdue(now, bound) {
                let node = self.switches[sp.switch as usize].node;
                alarms.push((
                    i,
                    format!("switch {node} port {} queue {q} paused for {d}", sp.local),
                ));
            }
        }
        let ports = self.sw_ports.len();
        for (h, host) in self.hosts.iter_mut().enumerate() {
            if let Some(clock) = &mut host.nic.clock {
                for (q, d) in clock.overdue(now, bound) {
                    alarms.push((
                        ports + h,
                        format!("host {} NIC queue {q} paused for {d}", self.topo.hosts[h]),
                    ));
                }
            }
        }
        self.hop.stats.watchdog_alarms += alarms.len() as u64;
        if self.hop.stats.first_alarm.is_none()
            && let Some((i, a)) = alarms.into_iter().next()
        {
            self.hop.stats.first_alarm = Some(format!("at {now}: {a}"));
            self.hop.first_alarm_at = Some((now, i));
        }
        // Always re-armed: the run ([`crate::sim::Sim`]) ends when nothing but watchdogs is pending.
        self.events.push(now + bound / 2, Event::Watchdog);
    }

    /// When and where in the watchdog's scan the first alarm was raised.
    pub(crate) fn first_alarm_at(&self) -> Option<(Time, usize)> {
        self.hop.first_alarm_at
    }

    /// Per-hop flow control counts so far.
    pub fn hop_stats(&self) -> HopStats {
        let mut stats = self.hop.stats.clone();
        for sw in &self.switches {
            if let Some(b) = &sw.bfc {
                stats.bfc = stats.bfc + b.stats();
            }
        }
        stats
    }

    /// How long `port`'s link was paused up to now, for the flow-control report. Under PFC: the time any priority
    /// of its transmitter (a switch port or a NIC) was paused by the device downstream, what `pfc.txt` shows.
    /// Under BFC, which pauses single queues: the time a switch port had packets but none it could send.
    /// `None` for a port that is never paused.
    pub fn link_paused_time(&self, port: PortId) -> Option<Time> {
        if let Some(pp) = self.pfc_port(port) {
            return Some(pp.paused_time_any(self.now));
        }
        match self.wires[port.idx()].owner {
            Owner::Switch(sp) => Some(self.sw_ports[sp as usize].pause.blocked_time(self.now)),
            Owner::Host(_) => None,
        }
    }

    /// For switch port `port`: how long its link was paused (packets waiting, none sendable) and how long each
    /// of its queues was paused, up to now.
    pub fn port_pause_times(&self, port: PortId) -> Option<(Time, Vec<Time>)> {
        let Owner::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let c = &self.sw_ports[sp as usize].pause;
        let per_queue = (0..self.sw_ports[sp as usize].queues.count())
            .map(|q| c.paused_time(q, self.now))
            .collect();
        Some((c.blocked_time(self.now), per_queue))
    }

    /// The BFC state of switch `s`, when BFC runs.
    pub fn switch_bfc(&self, s: usize) -> Option<&BfcSwitch> {
        self.switches[s].bfc.as_ref()
    }

    /// Time each data packet waited in each switch egress queue (ps), since the start or the last
    /// [`Shard::reset_queuing_delay`].
    pub fn queuing_delay(&self) -> &LogHistogram {
        &self.queuing_delay
    }

    /// Time the packets of one-packet flows waited in each switch egress queue (ps), as
    /// [`Shard::queuing_delay`].
    pub fn single_packet_delay(&self) -> &LogHistogram {
        &self.single_packet_delay
    }

    /// Starts both queuing-delay histograms afresh (the end of a measurement warm-up).
    pub fn reset_queuing_delay(&mut self) {
        self.queuing_delay = LogHistogram::new();
        self.single_packet_delay = LogHistogram::new();
    }
}
