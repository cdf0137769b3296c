//! Rate-based congestion control in the engine (DCQCN, HPCC, rate-based DCTCP): per-flow pacing at the NIC, the controllers'
//! timers, DCQCN's CNPs, HPCC's INT records, and the switch drop notices of BFC's "HPCC-PFC".
//!
//! Everything here is off unless the configured controller needs it, so that window-only schemes (DCTCP,
//! none, RTT-target) pay one predictable branch per packet (`RateState::active`, `RateState::int`).
//!
//! - **Pacing** (the contract of [`CongestionControl::rate`]): a flow may start its next data packet at
//!   `last_send + last_size / rate` (HPCC ns-3 `RdmaHw::UpdateNextAvail`, `m_nextAvail`), where `rate` is read
//!   when the NIC looks at the flow. Reading the current rate is exactly ns-3's `ChangeRate`, which moves
//!   `m_nextAvail` by the difference of the last packet's time at the new and the old rate. The NIC serves the
//!   flows that may send now round robin; a flow not yet allowed waits in its host's heap, and the host keeps
//!   one pending [`Event::NicWake`] at the earliest wait (ns-3's one `DequeueAndTransmit` rescheduled at the
//!   earliest `m_nextAvail`). Entries are cancelled lazily: an entry is live only while it is the flow's
//!   `wait_until`.
//! - **Timers**: one pending entry per flow at `next_timer()` in a [`TimerQueue`] with one pending
//!   [`Event::CcTimer`]; re-read after every input to the controller, stale entries ignored.
//! - **Congestion notifications** (DCQCN §3, the NP): each flow's receiver runs the [`Notifier`] its
//!   controller's configuration makes (`bfcsim_schemes::cc`), and sends each CNP it asks for as its own control
//!   packet (`ack_size` bytes, strict-priority control queue), before the ACK; HPCC's ns-3 instead flags the ACK
//!   of a CE-marked packet. With an ACK per packet and the default CNP interval of 0, the sender sees the same
//!   signal, one control packet later on the wire.
//! - **INT** (HPCC §3.2, [`bfcsim_net::int`]): each switch egress stamps an [`IntHop`] on the data packet at
//!   dequeue; stacks live in a side slab indexed by [`PacketId`] so that `Packet` does not grow for every
//!   scheme; the receiver copies the stack into its ACK; data packets carry
//!   [`bfcsim_schemes::cc::hpcc::HpccConfig::int_overhead`] more bytes (BFC §6.3's 80 B by default).
//! - **Drop notices** (`switch.drop_notification`): see [`Sender::handle_drop_notice`].

use bfcsim_net::int::IntHop;

use super::*;

/// Run-wide state of rate-based congestion control.
#[derive(Default)]
pub(super) struct RateState {
    /// The controller paces or has timers: the NIC checks pacing and the controller's timers.
    pub(super) active: bool,
    /// A fresh flow's receiver side of congestion control.
    pub(super) notifier: Notifier,
    /// Switches stamp INT records (HPCC).
    pub(super) int: bool,
    /// Bytes INT adds to each data packet.
    pub(super) int_overhead: u32,
    /// Switches notify senders of drops.
    pub(super) drop_notify: bool,
    /// INT stack of each packet slot.
    pub(super) stacks: Vec<IntStack>,
    timers: TimerQueue,
    timer_event_at: Option<Time>,
}

impl Fabric {
    /// Turns on what the configured controller needs.
    pub(super) fn init_rate(&mut self) {
        let r = &mut self.rate;
        let needs = self.params.cc.nic_needs();
        r.active = needs.paced;
        r.notifier = self.params.cc.notifier();
        r.int = needs.int_overhead.is_some();
        r.int_overhead = needs.int_overhead.unwrap_or(0);
        r.drop_notify = self.params.switch.drop_notification;
    }

    /// When flow `slot`'s next data packet may start.
    #[inline]
    fn next_avail(&self, slot: usize) -> Time {
        let a = &self.active[slot];
        match a.cc.rate() {
            Some(r) if a.last_size > 0 => a.last_send + r.tx_time(Bytes(a.last_size as u64)),
            _ => Time::ZERO,
        }
    }

    /// Flow `id` (in `slot`, of host `h`) came up in its NIC's round robin: if its pacing does not let it
    /// send now, moves it to the host's heap of waiting flows and returns true.
    #[inline(never)]
    pub(super) fn pace(&mut self, h: u32, id: FlowId, slot: usize) -> bool {
        let avail = self.next_avail(slot);
        if avail <= self.now {
            return false;
        }
        let a = &mut self.active[slot];
        a.waiting = true;
        a.wait_until = avail;
        self.hosts[h as usize].paced.push(Reverse((avail, id.0)));
        self.schedule_wake(h, avail);
        true
    }

    fn schedule_wake(&mut self, h: u32, at: Time) {
        let host = &mut self.hosts[h as usize];
        if at < host.wake_at {
            host.wake_at = at;
            let port = host.port;
            self.events.push(at, Event::NicWake(port));
        }
    }

    /// Paced flows of the NIC owning `port` whose wait is over rejoin the round robin.
    pub(super) fn nic_wake<S: Scheme>(&mut self, side: &mut S, port: PortId) {
        let Device::Host(h) = self.wires[port.idx()].owner else {
            unreachable!("only NICs pace")
        };
        let host = &mut self.hosts[h as usize];
        if host.wake_at <= self.now {
            host.wake_at = Time::MAX;
        }
        let mut woke = false;
        while let Some(&Reverse((t, f))) = self.hosts[h as usize].paced.peek() {
            if t > self.now {
                self.schedule_wake(h, t);
                break;
            }
            self.hosts[h as usize].paced.pop();
            let slot = self.flow_state[f as usize].slot;
            if slot == NO_SLOT {
                continue;
            }
            let a = &self.active[slot as usize];
            if !a.waiting || a.wait_until != t {
                continue; // superseded by an earlier entry
            }
            // The rate may have dropped since the entry was made.
            let avail = self.next_avail(slot as usize);
            let a = &mut self.active[slot as usize];
            if avail > self.now {
                a.wait_until = avail;
                self.hosts[h as usize].paced.push(Reverse((avail, f)));
                continue;
            }
            a.waiting = false;
            self.hosts[h as usize].ready.push_back(FlowId(f));
            woke = true;
        }
        if woke {
            self.kick(side, port);
        }
    }

    /// Data packet `pkt` of `size` wire bytes of flow `slot` starts at the NIC (its time and size are already
    /// the pacing reference): the controller's byte count, and a fresh INT stack.
    #[inline(never)]
    pub(super) fn data_sent(&mut self, slot: usize, pkt: PacketId, size: u32) {
        let a = &mut self.active[slot];
        a.cc.on_send(self.now, size as u64);
        if self.rate.int {
            let i = pkt.idx();
            if i >= self.rate.stacks.len() {
                self.rate.stacks.resize(i + 1, IntStack::EMPTY);
            }
            self.rate.stacks[i].clear();
        }
        self.cc_changed(slot);
    }

    /// After any input to flow `slot`'s controller: keep one timer entry at its `next_timer()`, and if the flow
    /// waits for its pacing, move its wake-up earlier when its rate went up.
    #[inline]
    pub(super) fn cc_changed(&mut self, slot: usize) {
        if self.rate.active {
            self.cc_changed_slow(slot);
        }
    }

    #[inline(never)]
    fn cc_changed_slow(&mut self, slot: usize) {
        let a = &mut self.active[slot];
        let id = a.id;
        if let Some(t) = a.cc.next_timer()
            && t < a.cc_timer_at
        {
            // A controller asking for a timer in the past is caught up at once (on_timer fires every due one).
            let t = t.max(self.now);
            a.cc_timer_at = t;
            self.rate.timers.push(t, id);
            if self.rate.timer_event_at.is_none_or(|e| t < e) {
                self.rate.timer_event_at = Some(t);
                self.events.push(t, Event::CcTimer);
            }
        }
        if self.active[slot].waiting {
            let avail = self.next_avail(slot).max(self.now);
            let a = &mut self.active[slot];
            if avail < a.wait_until {
                a.wait_until = avail;
                let h = self.flows[id.idx()].src_host;
                self.hosts[h as usize].paced.push(Reverse((avail, id.0)));
                self.schedule_wake(h, avail);
            }
        }
    }

    /// Fires every controller timer due now.
    pub(super) fn fire_cc_timers<S: Scheme>(&mut self, side: &mut S) {
        // While the due timers fire, this event stays the pending one, so that a flow re-armed in the loop
        // pushes no event of its own. Cleared first, each firing left one: an event 300 µs ahead (DCQCN's
        // rate-increase timer), superseded by the next deadline pushed below, which popped later to do nothing.
        let firing = self.rate.timer_event_at == Some(self.now);
        while let Some(id) = self.rate.timers.pop_due(self.now) {
            let slot = self.flow_state[id.idx()].slot;
            if slot == NO_SLOT {
                continue;
            }
            let a = &mut self.active[slot as usize];
            if a.cc_timer_at > self.now {
                continue; // superseded by an earlier entry that already fired
            }
            a.cc_timer_at = Time::MAX;
            if a.cc.next_timer().is_some_and(|t| t <= self.now) {
                a.cc.on_timer(self.now);
            }
            self.cc_changed(slot as usize);
            self.make_ready(side, id);
        }
        if firing {
            self.rate.timer_event_at = None;
        }
        if let Some(next) = self.rate.timers.next_deadline()
            && self.rate.timer_event_at.is_none_or(|t| next < t)
        {
            self.rate.timer_event_at = Some(next);
            self.events.push(next, Event::CcTimer);
        }
    }

    /// Stamps switch egress `port`'s INT record on data packet `pkt` as it leaves switch port `sp` (HPCC ns-3
    /// `SwitchNotifyDequeue`): the bytes the port sent before it, the bytes still queued after it.
    #[inline(never)]
    pub(super) fn int_stamp(&mut self, port: PortId, sp: u32, pkt: PacketId) {
        let w = &self.wires[port.idx()];
        let hop = IntHop {
            ts: self.now,
            tx_bytes: w.tx_bytes,
            qlen: self.sw_ports[sp as usize].queues.bytes(),
            rate: w.rate,
        };
        self.rate.stacks[pkt.idx()].push(hop);
    }

    /// The receiver copies data packet `data`'s INT stack into its ACK `ack` (HPCC ns-3 `ReceiveUdp`). The ACK
    /// may have taken the data packet's slot, freed as it was received: its stack is then already in place.
    #[inline(never)]
    pub(super) fn echo_int(&mut self, data: PacketId, ack: PacketId) {
        let stacks = &mut self.rate.stacks;
        if ack.idx() >= stacks.len() {
            stacks.resize(ack.idx() + 1, IntStack::EMPTY);
        }
        let (data, ack) = (data.idx(), ack.idx());
        if data < ack {
            let (low, high) = stacks.split_at_mut(ack);
            high[0].copy_from(&low[data]);
        } else if data > ack {
            let (low, high) = stacks.split_at_mut(data);
            low[ack].copy_from(&high[0]);
        }
    }

    /// A switch dropped data packet `p` and tells its sender at once (`switch.drop_notification`).
    #[inline(never)]
    pub(super) fn notify_drop<S: Scheme>(&mut self, side: &mut S, p: &Packet) {
        let slot = self.flow_state[p.flow.idx()].slot;
        if slot == NO_SLOT {
            return;
        }
        let a = &mut self.active[slot as usize];
        let before = a.sender.snd_nxt();
        if a.sender.handle_drop_notice(p.seq, p.sent_at, self.now) {
            a.cc.on_loss(self.now, before);
            let h = self.flows[p.flow.idx()].src_host;
            self.restart_rto(h, slot as usize);
            self.cc_changed(slot as usize);
            self.make_ready(side, p.flow);
        }
    }
}
