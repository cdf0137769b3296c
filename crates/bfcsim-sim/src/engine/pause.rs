//! Pausing, the machinery per-hop flow control schemes share ([`super::scheme`]'s BFC and PFC): pausable switch
//! queues and NIC queues with clocks of how long each was paused, flows parked at a NIC until their queue is
//! resumed, per-hop frames (PAUSE, RESUME, refresh) in a switch port's strict-priority control queue, and a
//! watchdog that makes queues paused too long (App. B's deadlocks) visible.
//!
//! A scheme decides what to pause and when; this module keeps the state consistent and the clocks running. Under
//! BFC a NIC queue is one flow's (or a few flows'), under PFC a priority, which parks every flow of that class.

use std::collections::BTreeSet;

use super::*;

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
    /// How many queues are paused: zero, the common case, answers [`NicQueues::any_paused`] without the bits.
    paused_count: u32,
    pub(super) users: Vec<u32>,
    /// The queues no flow uses, lowest first: a heap, whose push and pop move numbers within one vector, where a
    /// `BTreeSet` would allocate and free nodes as flows start and end.
    free: BinaryHeap<Reverse<u32>>,
    parked: Vec<FlowId>,
    clock: Option<PauseClock>,
}

impl NicQueues {
    /// A queue for a new flow: the lowest unused one, or with `limit` queues all in use, one chosen by the
    /// flow's hash (flows then share it).
    pub(super) fn alloc(&mut self, limit: Option<u32>, hash: u64) -> u32 {
        let q = match self.free.pop() {
            Some(Reverse(q)) => q,
            None if limit.is_none_or(|n| (self.users.len() as u32) < n) => {
                self.users.push(0);
                self.users.len() as u32 - 1
            }
            None => (hash % self.users.len() as u64) as u32,
        };
        self.users[q as usize] += 1;
        q
    }

    pub(super) fn release(&mut self, q: u32) {
        let u = &mut self.users[q as usize];
        *u -= 1;
        if *u == 0 {
            self.free.push(Reverse(q));
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
    pub(super) fn is_paused(&self, q: u32) -> bool {
        self.paused
            .get(q as usize / 64)
            .is_some_and(|w| w >> (q % 64) & 1 == 1)
    }

    /// Whether any queue is paused.
    #[inline]
    pub(super) fn any_paused(&self) -> bool {
        self.paused_count != 0
    }

    /// The paused bits of queues `64 w` to `64 w + 63`.
    #[inline]
    pub(super) fn paused_word(&self, w: usize) -> u64 {
        self.paused.get(w).copied().unwrap_or(0)
    }

    /// Returns whether the state changed.
    pub(super) fn set_paused(&mut self, q: u32, paused: bool, now: Time) -> bool {
        if self.is_paused(q) == paused {
            return false;
        }
        let w = q as usize / 64;
        if w >= self.paused.len() {
            self.paused.resize(w + 1, 0);
        }
        self.paused[w] ^= 1 << (q % 64);
        if paused {
            self.paused_count += 1;
        } else {
            self.paused_count -= 1;
        }
        self.clock
            .get_or_insert_with(|| PauseClock::new(0))
            .set(q as usize, paused, now);
        true
    }
}

/// Run-wide state of pausing: frame payloads in flight, the watchdog and its alarms.
pub(super) struct HopState {
    /// Bitmaps of refresh frames in flight, by the index in the frame's `seq`.
    maps: Slots<Vec<u64>>,
    /// The watchdog's alarms (the other counts are the scheme's).
    stats: HopStats,
    /// When the first alarm was raised and its position in the watchdog's scan (switch ports, then hosts), to
    /// pick the same first alarm among shards as one engine would.
    first_alarm_at: Option<(Time, usize)>,
    /// A watchdog event is pending.
    watchdog_pending: bool,
    /// The watchdog reports queues paused longer than this.
    watchdog: Time,
    /// The scheme pauses queues (per-hop flow control): the NICs check their queues' pause state.
    pub(super) enabled: bool,
}

impl HopState {
    pub(super) fn new() -> HopState {
        HopState {
            maps: Slots::default(),
            stats: HopStats::default(),
            first_alarm_at: None,
            watchdog_pending: false,
            watchdog: Time::MAX,
            enabled: false,
        }
    }

    /// Keeps a copy of a frame's bitmap (BFC's refresh) until the frame arrives; returns the index the frame
    /// carries. The copy goes into the buffer a delivered frame's bitmap left behind: a refresh every
    /// microsecond at every port with paused queues made an allocation and a free per frame.
    pub(super) fn store_map(&mut self, map: &[u64]) -> u32 {
        self.maps.insert_with(|kept| {
            kept.clear();
            kept.extend_from_slice(map);
        })
    }

    /// The bitmap stored at `index`.
    pub(super) fn map(&self, index: u32) -> &[u64] {
        &self.maps[index as usize]
    }

    /// Frees the bitmap stored at `index` (its buffer is kept for the next).
    pub(super) fn release_map(&mut self, index: u32) {
        self.maps.release(index);
    }

    /// The watchdog's alarms so far.
    pub(super) fn watchdog_stats(&self) -> HopStats {
        self.stats.clone()
    }
}

impl Fabric {
    /// Puts a hop-by-hop frame in switch `port`'s control queue, with `seq` as its kind defines it, or with
    /// `words` held aside for it (their index in its `seq`).
    pub(super) fn send_frame<S: Scheme>(
        &mut self,
        side: &mut S,
        (port, kind): (PortId, PacketKind),
        (seq, words): (u64, Option<&[u64]>),
        size: u32,
    ) {
        let Device::Switch(sp) = self.wires[port.idx()].owner else {
            unreachable!("only switches send per-hop frames")
        };
        let (seq, flags) = match words {
            Some(words) => (self.hop.store_map(words) as u64, Flags::WORDS),
            None => (seq, Flags::NONE),
        };
        let pkt = self.packets.alloc(Packet {
            seq,
            sent_at: self.now,
            size,
            flags,
            stamp: self.now,
            ..Packet::blank(kind)
        });
        self.counters.injected_pkts += 1;
        self.counters.injected_bytes += size as u64;
        let out = &self.sw_ports[sp as usize];
        let (s, local) = (out.switch as usize, out.local as usize);
        if let Err(reason) = self.admit(s, local, 0, pkt, size) {
            if flags.has(Flags::WORDS) {
                self.hop.release_map(seq as u32);
            }
            self.port_drops[port.idx()] += 1;
            self.drop_packet(pkt, reason);
            return;
        }
        self.sw_ports[sp as usize].queues.push(0, pkt, size);
        self.kick(side, port);
    }

    /// Consumes a per-hop frame at the device it reached: counts it delivered and frees it; returns its fields.
    pub(super) fn take_frame(&mut self, pkt: PacketId) -> Packet {
        let p = *self.packets.get(pkt);
        self.counters.delivered_pkts += 1;
        self.counters.delivered_bytes += p.size as u64;
        self.packets.free(pkt);
        p
    }

    /// Pauses or resumes queues of switch port `sp`, keeping their clocks; serves the port again if any queue
    /// was resumed.
    pub(super) fn set_port_paused<S: Scheme>(
        &mut self,
        side: &mut S,
        sp: u32,
        queues: impl IntoIterator<Item = (usize, bool)>,
    ) {
        if self.set_queues_paused(sp, queues) {
            let port = self.sw_port_id(&self.sw_ports[sp as usize]);
            self.kick(side, port);
        }
    }

    /// [`Fabric::set_port_paused`] without serving the port: for a change made while the port is sending (a
    /// scheme's `dequeued`), where kicking it would put a second packet on the wire before the first one's
    /// transmission is accounted; the sender looks for a ready queue after `dequeued` and wakes for it. Returns
    /// whether a queue was resumed.
    pub(super) fn set_queues_paused(
        &mut self,
        sp: u32,
        queues: impl IntoIterator<Item = (usize, bool)>,
    ) -> bool {
        let mut resumed = false;
        for (q, paused) in queues {
            let out = &mut self.sw_ports[sp as usize];
            if q < out.queues.count() && out.queues.set_paused(q, paused) {
                out.pause.set(q, paused, self.now);
                resumed |= !paused;
                if self.log.is_some() {
                    let port = self.sw_port_id(&self.sw_ports[sp as usize]);
                    self.log_pause(port, q as u32, paused);
                }
            }
        }
        self.pause_changed(sp);
        resumed
    }

    /// Keeps a pause or resume of queue `q` of the device transmitting on `port` in the log.
    #[cold]
    #[inline(never)]
    fn log_pause(&mut self, port: PortId, queue: u32, paused: bool) {
        let at = self.now;
        if let Some(log) = &mut self.log {
            log.push(Logged::Pause {
                at,
                port,
                queue,
                paused,
            });
        }
    }

    /// Pauses or resumes NIC queues of host `h`; flows parked on a resumed queue may send again.
    ///
    /// On a resume the NIC is woken first for the flows still in its ready list, then the parked flows rejoin
    /// the list behind them. Flows stay in the list while the scheme holds the whole NIC
    /// ([`NicSide::nic_blocked`]), so a pause of every queue leaves their order as it was. A NIC whose
    /// list holds flows is otherwise already sending or due to wake, and the wake-up changes nothing.
    pub(super) fn set_nic_paused<S: Scheme>(
        &mut self,
        side: &mut S,
        h: u32,
        queues: impl IntoIterator<Item = (u32, bool)>,
    ) {
        let mut resumed = false;
        for (q, paused) in queues {
            let changed = self.hosts[h as usize].nic.set_paused(q, paused, self.now);
            resumed |= changed && !paused;
            if changed && self.log.is_some() {
                self.log_pause(self.hosts[h as usize].port, q, paused);
            }
        }
        if resumed {
            let host = &self.hosts[h as usize];
            if !host.ready.is_empty() {
                let port = host.port;
                self.kick(side, port);
            }
            self.unpark(side, h);
        }
    }

    /// Re-readies the parked flows of host `h` whose NIC queue is no longer paused.
    fn unpark<S: Scheme>(&mut self, side: &mut S, h: u32) {
        let parked = std::mem::take(&mut self.hosts[h as usize].nic.parked);
        let mut still = Vec::new();
        for id in parked {
            let slot = self.flow_state[id.idx()].slot;
            if slot == NO_SLOT {
                continue;
            }
            let a = &mut self.active[slot as usize];
            if self.hosts[h as usize].nic.is_paused(a.nic_q) {
                still.push(id);
            } else {
                a.parked = false;
                self.make_ready(side, id);
            }
        }
        self.hosts[h as usize].nic.parked.extend(still);
    }

    /// Whether flow `id` (of host `h`, in slot `slot`) must wait for its NIC queue; parks it if so.
    #[inline]
    pub(super) fn park_if_paused(&mut self, h: u32, id: FlowId, slot: usize) -> bool {
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

    /// Queues data packet `e`, admitted into the buffer, in `queue` of its egress under a scheme that pauses:
    /// the packet keeps its ingress (an edge of [`Fabric::wait_edges`]) and the scheme's `hop_flags` until it
    /// leaves, and the port's "link paused" clock sees the new packet.
    pub(super) fn push_hop(&mut self, e: &Entry, queue: usize, hop_flags: u8) {
        self.push_admitted(e, queue);
        let pm = self.packets.get_mut(e.pkt);
        pm.in_port = e.in_local;
        pm.hop_flags = hop_flags;
        self.pause_changed(e.out_sp);
    }

    /// Keeps switch port `sp`'s "link paused" clock: packets waiting but none sendable.
    #[inline]
    pub(super) fn pause_changed(&mut self, sp: u32) {
        let out = &mut self.sw_ports[sp as usize];
        let blocked = !out.queues.is_empty() && !out.queues.has_ready();
        if blocked != out.blocked {
            out.blocked = blocked;
            out.pause.set_blocked(blocked, self.now);
        }
    }

    /// Starts the watchdog, which reports every queue paused longer than `bound` (once per pause): its first
    /// look is `bound / 2` from now.
    pub(super) fn start_watchdog(&mut self, bound: Time) {
        self.hop.watchdog = bound;
        let at = self.now + bound / 2;
        self.events.push(at, Event::Watchdog);
        self.hop.watchdog_pending = true;
    }

    /// No event is pending but the watchdog's.
    pub(crate) fn idle(&self) -> bool {
        self.events.len() == usize::from(self.hop.watchdog_pending)
    }

    /// Reports every queue (switch or NIC) paused for longer than the bound, once per pause.
    pub(super) fn watchdog(&mut self) {
        let bound = self.hop.watchdog;
        let now = self.now;
        // (position in the scan, description)
        let mut alarms = Vec::new();
        for (i, sp) in self.sw_ports.iter_mut().enumerate() {
            for (q, d) in sp.pause.overdue(now, bound) {
                let node = self.switch_keys[sp.switch as usize].node;
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

    /// How long switch port `sp` had packets but none it could send, up to now.
    pub(super) fn port_blocked_time(&self, sp: u32) -> Time {
        self.sw_ports[sp as usize].pause.blocked_time(self.now)
    }

    /// For switch port `port`: how long its link was paused (packets waiting, none sendable) and how long each
    /// of its queues was paused, up to now.
    pub fn port_pause_times(&self, port: PortId) -> Option<(Time, Vec<Time>)> {
        let Device::Switch(sp) = self.wires[port.idx()].owner else {
            return None;
        };
        let c = &self.sw_ports[sp as usize].pause;
        let per_queue = (0..self.sw_ports[sp as usize].queues.count())
            .map(|q| c.paused_time(q, self.now))
            .collect();
        Some((c.blocked_time(self.now), per_queue))
    }
}

impl Fabric {
    /// The port id of switch port `sp`.
    pub(super) fn sw_port_id(&self, sp: &SwitchPort) -> PortId {
        self.switch_port(sp.switch as usize, sp.local as usize)
    }

    /// The port id of local port `local` of switch `s`.
    pub(super) fn switch_port(&self, s: usize, local: usize) -> PortId {
        self.topo.nodes[self.switch_keys[s].node.idx()].ports[local]
    }

    /// This shard's part of the graph of who waits for whom among its switch ports, in which a deadlock is a
    /// cycle (BFC App. B's cyclic buffer dependency, whatever the scheme that pauses): an edge from each switch
    /// port holding packets in a paused queue to the port at the far end of its link, whose device paused it;
    /// and from each port of a switch to the ports of that switch holding, in a paused queue, packets that came
    /// in through it (`Packet::in_port`, which the pausing schemes keep), whose backlog keeps that ingress
    /// over its threshold. [`crate::sim::Sim::stall_diagnosis`] joins the shards' edges.
    pub(crate) fn wait_edges(&self, edges: &mut Vec<(PortId, PortId)>) {
        for sp in &self.sw_ports {
            let port = self.sw_port_id(sp);
            let mut from_ingress = BTreeSet::new();
            for q in (0..sp.queues.count()).filter(|&q| sp.queues.is_paused(q)) {
                for id in sp.queues.iter_queue(q) {
                    let p = self.packets.get(id);
                    if !p.kind.is_hop_local() {
                        from_ingress.insert(p.in_port);
                    }
                }
            }
            if from_ingress.is_empty() {
                continue;
            }
            edges.push((port, self.wires[port.idx()].peer));
            let ports = &self.topo.nodes[self.switch_keys[sp.switch as usize].node.idx()].ports;
            edges.extend(
                from_ingress
                    .into_iter()
                    .filter_map(|i| ports.get(usize::from(i)))
                    .map(|&ingress| (ingress, port)),
            );
        }
    }

    /// How switch port `port` is named to a user: its switch, its index there and the device it sends to.
    pub(crate) fn describe_port(&self, port: PortId) -> String {
        let topo = &self.topo;
        let p = &topo.ports[port.idx()];
        let peer = topo.peer_node(port);
        let kind = |n: NodeId| match topo.nodes[n.idx()].kind {
            NodeKind::Switch => "switch",
            NodeKind::Host => "host",
        };
        let local = topo.nodes[p.node.idx()]
            .ports
            .iter()
            .position(|&q| q == port)
            .unwrap_or(0);
        format!(
            "{} {} port {local} (to {} {peer})",
            kind(p.node),
            p.node,
            kind(peer)
        )
    }
}

/// A cycle in the directed graph `edges` (in the order of its first port found from the lowest port id), or
/// `None`. Sorts and deduplicates `edges`.
pub(crate) fn find_cycle(edges: &mut Vec<(PortId, PortId)>) -> Option<Vec<PortId>> {
    edges.sort_unstable_by_key(|&(a, b)| (a.0, b.0));
    edges.dedup();
    let out = |n: PortId| {
        let start = edges.partition_point(|&(a, _)| a.0 < n.0);
        edges[start..].iter().take_while(move |&&(a, _)| a == n)
    };
    // 0: unseen, 1: on the current path, 2: done.
    let mut state = std::collections::BTreeMap::<u32, u8>::new();
    for &(root, _) in edges.iter() {
        if state.contains_key(&root.0) {
            continue;
        }
        // The path from `root`, each port with the index of its next edge to follow.
        let mut path: Vec<(PortId, usize)> = vec![(root, 0)];
        state.insert(root.0, 1);
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            match out(node).nth(*next) {
                Some(&(_, to)) => {
                    *next += 1;
                    match state.get(&to.0) {
                        Some(1) => {
                            let at = path
                                .iter()
                                .position(|&(n, _)| n == to)
                                .expect("on the path");
                            return Some(path[at..].iter().map(|&(n, _)| n).collect());
                        }
                        Some(_) => {}
                        None => {
                            state.insert(to.0, 1);
                            path.push((to, 0));
                        }
                    }
                }
                None => {
                    state.insert(node.0, 2);
                    path.pop();
                }
            }
        }
    }
    None
}
