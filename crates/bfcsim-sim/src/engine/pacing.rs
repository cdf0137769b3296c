//! The NIC's rate limiter and the congestion controllers' timers, for the controllers that pace
//! ([`CcNic::paced`]: DCQCN, HPCC, rate-based DCTCP). What they are asked to do is the controller's
//! ([`bfcsim_schemes::cc::nic`]); how the NIC does it is here.
//!
//! - **Pacing** (the contract of [`CongestionControl::rate`]): a flow may start its next data packet at
//!   [`next_send`]. The NIC serves the flows that may send now round robin; a flow not yet allowed waits in
//!   its host's heap, and the host keeps one pending [`Event::NicWake`] at the earliest wait (ns-3's one
//!   `DequeueAndTransmit` rescheduled at the earliest `m_nextAvail`). Entries are cancelled lazily: an entry
//!   is live only while it is the flow's `wait_until`.
//! - **Timers**: one pending entry per flow at `next_timer()` in a [`TimerQueue`] with one pending
//!   [`Event::CcTimer`]; re-read after every input to the controller ([`NicOps::controller_changed`]), stale
//!   entries ignored.
//!
//! Window-only schemes (DCTCP, none, RTT-target) pay one predictable branch per packet for all of it.

use bfcsim_schemes::cc::nic::next_send;

use super::*;

/// The controllers' pending timers.
#[derive(Default)]
pub(super) struct Pacing {
    timers: TimerQueue,
    timer_event_at: Option<Time>,
}

impl Fabric {
    /// When flow `slot`'s next data packet may start.
    #[inline]
    fn next_avail(&self, slot: usize) -> Time {
        let a = &self.active[slot];
        next_send(&a.cc, a.last_send, a.last_size)
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

    /// After any input to flow `slot`'s controller: keep one timer entry at its `next_timer()`, and if the flow
    /// waits for its pacing, move its wake-up earlier when its rate went up.
    #[inline]
    pub(super) fn cc_changed(&mut self, slot: usize) {
        if self.cc_nic.paced() {
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
            self.pacing.timers.push(t, id);
            if self.pacing.timer_event_at.is_none_or(|e| t < e) {
                self.pacing.timer_event_at = Some(t);
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
        let firing = self.pacing.timer_event_at == Some(self.now);
        while let Some(id) = self.pacing.timers.pop_due(self.now) {
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
            self.pacing.timer_event_at = None;
        }
        if let Some(next) = self.pacing.timers.next_deadline()
            && self.pacing.timer_event_at.is_none_or(|t| next < t)
        {
            self.pacing.timer_event_at = Some(next);
            self.events.push(next, Event::CcTimer);
        }
    }
}
