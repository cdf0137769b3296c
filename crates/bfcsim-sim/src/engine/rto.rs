//! Retransmission timeouts: one pending timer per flow in a [`TimerQueue`], held while the flow's NIC queue is
//! paused when `nic.rto_holds_while_paused`.

use super::*;

impl Fabric {
    /// Keeps a timeout of flow `id` in the log (kept only for a timeline view).
    #[cold]
    #[inline(never)]
    fn log_timeout(&mut self, id: FlowId) {
        let at = self.now;
        if let Some(log) = &mut self.log {
            log.push(Logged::Timeout { at, flow: id });
        }
    }

    pub(super) fn arm_timer(&mut self, at: Time, id: FlowId) {
        self.timers.push(at, id);
        if self.timer_event_at.is_none_or(|t| at < t) {
            self.timer_event_at = Some(at);
            self.events.push(at, Event::Timer);
        }
    }

    pub(super) fn fire_timers<S: Scheme>(&mut self, side: &mut S) {
        if self.timer_event_at == Some(self.now) {
            self.timer_event_at = None;
        }
        while let Some(id) = self.timers.pop_due(self.now) {
            let slot = self.flow_state[id.idx()].slot;
            if slot == NO_SLOT {
                continue;
            }
            let a = &mut self.active[slot as usize];
            debug_assert_eq!(a.id, id);
            if self.now < a.rto_deadline {
                let at = a.rto_deadline;
                self.timers.push(at, id);
                continue;
            }
            if a.sender.in_flight() == 0 {
                a.timer_armed = false;
                continue;
            }
            let h = self.flows[id.idx()].src_host;
            let held =
                self.nic_paused_time(h, slot as usize) - self.active[slot as usize].rto_paused_base;
            let a = &mut self.active[slot as usize];
            if held > Time::ZERO {
                // The queue was paused for `held` since the timer started: that time does not count.
                a.rto_deadline += held;
                a.rto_paused_base += held;
                let at = a.rto_deadline;
                self.timers.push(at, id);
                continue;
            }
            self.counters.timeouts += 1;
            side.timed_out(self, h, id, slot as usize);
            let a = &mut self.active[slot as usize];
            a.sender.handle_timeout();
            a.cc.on_timeout(self.now);
            a.paths.timeout(self.now);
            self.restart_rto(h, slot as usize);
            let at = self.active[slot as usize].rto_deadline;
            self.timers.push(at, id);
            self.cc_changed(slot as usize);
            self.make_ready(side, id);
            if self.log.is_some() {
                self.log_timeout(id);
            }
        }
        if let Some(next) = self.timers.next_deadline()
            && self.timer_event_at.is_none_or(|t| next < t)
        {
            self.timer_event_at = Some(next);
            self.events.push(next, Event::Timer);
        }
    }

    /// Starts flow `slot`'s retransmission timer afresh: one RTO from now, of time its NIC queue (at host `h`)
    /// is not paused.
    #[inline]
    pub(super) fn restart_rto(&mut self, h: u32, slot: usize) {
        let base = self.nic_paused_time(h, slot);
        let a = &mut self.active[slot];
        a.rto_deadline = self.now + a.sender.rto();
        a.rto_paused_base = base;
    }

    /// How long flow `slot`'s NIC queue (at host `h`) has been paused in all up to now; zero when timers do not
    /// hold during pauses or nothing pauses NIC queues.
    #[inline]
    pub(super) fn nic_paused_time(&self, h: u32, slot: usize) -> Time {
        if !self.hop.enabled || !self.params.nic.transport.rto_holds_while_paused {
            return Time::ZERO;
        }
        self.hosts[h as usize]
            .nic
            .paused_time(self.active[slot].nic_q, self.now)
    }
}
