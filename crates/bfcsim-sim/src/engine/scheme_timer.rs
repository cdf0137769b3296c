//! Timers a scheme arms on ports: one event kind for all schemes, `SchemeTimer(port)`, at most one pending per
//! port in effect (a switch port or a host's NIC port), behind which the scheme keeps its own deadlines; and
//! timers on a grid, many ports at an instant, armed in batches that share one event (`SchemeTick`) per instant
//! and fire as their own events would.

use super::*;

impl Fabric {
    /// The time the scheme timer of `port` is due (`Time::MAX`: none pending).
    fn scheme_timer_at(&mut self, port: PortId) -> &mut Time {
        match self.wires[port.idx()].owner {
            Device::Switch(sp) => &mut self.sw_ports[sp as usize].timer_at,
            Device::Host(h) => &mut self.hosts[h as usize].timer_at,
        }
    }

    /// Arms the scheme timer of `port` (a switch port or a host's NIC port) at `at`, unless it is already due
    /// no later. One `SchemeTimer` event is pending per port at most in effect: an earlier arming supersedes a
    /// later one, which then fires as a no-op.
    pub(super) fn arm_scheme_timer(&mut self, port: PortId, at: Time) {
        let due = self.scheme_timer_at(port);
        if at < *due {
            *due = at;
            self.events.push(at, Event::SchemeTimer(port));
        }
    }

    /// A `SchemeTimer` event of `port` fired: the scheme's timer hook of the port's device runs if it is the
    /// live one.
    pub(super) fn fire_scheme_timer<S: Scheme>(&mut self, side: &mut S, port: PortId) {
        let now = self.now;
        let due = self.scheme_timer_at(port);
        if *due != now {
            return;
        }
        *due = Time::MAX;
        match self.wires[port.idx()].owner {
            Device::Switch(sp) => side.switch_timer(self, sp),
            Device::Host(h) => side.nic_timer(self, h),
        }
    }

    /// [`Fabric::arm_scheme_timer`] for a scheme whose timers fall on few instants, many ports at each (BFC's
    /// refreshes, all on one grid): the ports due at one instant share one event. They fire as separate
    /// events would, in the event queue's order for the instant, but the queue holds one key per instant
    /// where it held hundreds: a bucket of more than seven keys keeps the rest in a heap, whose pushes and
    /// pops would otherwise be paid for every port at every tick. Armings must come in non-decreasing order of `at` (a grid
    /// ahead of a clock that only moves forward), and a scheme should not mix this with
    /// [`Fabric::arm_scheme_timer`] at one instant: the batch pops where its first timer would.
    pub(super) fn arm_batched_timer(&mut self, port: PortId, at: Time) {
        let due = self.scheme_timer_at(port);
        if at >= *due {
            return;
        }
        *due = at;
        if self.timer_batches.arm(port, at) {
            self.events.push(at, Event::SchemeTick);
        }
    }

    /// The batch of scheme timers due now fired: each port's, in the order their own events would pop.
    pub(super) fn fire_timer_batch<S: Scheme>(&mut self, side: &mut S) {
        let now = self.now;
        let mut ports = self.timer_batches.take(now);
        // The batch's event was counted as one; it stands for a timer per port.
        self.counters.events += ports.len() as u64 - 1;
        ports.sort_unstable_by_key(|&p| EventQueue::order_at(now, Event::SchemeTimer(p)));
        for &port in &ports {
            self.fire_scheme_timer(side, port);
        }
        self.timer_batches.recycle(ports);
    }

    /// Arms a scheme timer for `token` at `at`, beside any other: a scheme with timers of its own (a flow's, a
    /// pacer's) keys them as it likes. The scheme's `token_timer` runs then with the token; the timers due at
    /// one instant fire in the order of their tokens.
    pub(super) fn arm_token_timer(&mut self, at: Time, token: u64) {
        if self.token_timers.arm(at, token) {
            self.events.push(at, Event::TokenTimer);
        }
    }

    /// The token timers due now fire, each counted as an event of its own.
    pub(super) fn fire_token_timers<S: Scheme>(&mut self, side: &mut S) {
        let now = self.now;
        self.counters.events -= 1;
        while let Some(token) = self.token_timers.pop_due(now) {
            self.counters.events += 1;
            side.token_timer(self, token);
        }
        if let Some(next) = self.token_timers.rearm() {
            self.events.push(next, Event::TokenTimer);
        }
    }
}

/// The timers of [`Fabric::arm_token_timer`]: every entry in one heap, and when the one pending event is due.
#[derive(Default)]
pub(super) struct TokenTimers {
    heap: std::collections::BinaryHeap<Reverse<(Time, u64)>>,
    /// When the pending event is due (`None`: no event pending).
    event_at: Option<Time>,
}

impl TokenTimers {
    /// Adds an entry; returns whether it needs an event of its own (none pending is as early).
    fn arm(&mut self, at: Time, token: u64) -> bool {
        self.heap.push(Reverse((at, token)));
        if self.event_at.is_some_and(|t| t <= at) {
            return false;
        }
        self.event_at = Some(at);
        true
    }

    /// Removes and returns the token of an entry due at or before `now`, the smallest first.
    fn pop_due(&mut self, now: Time) -> Option<u64> {
        if self.event_at.is_some_and(|t| t <= now) {
            self.event_at = None;
        }
        let &Reverse((at, token)) = self.heap.peek()?;
        (at <= now).then(|| {
            self.heap.pop();
            token
        })
    }

    /// When the next event is needed, if it is not pending yet.
    fn rearm(&mut self) -> Option<Time> {
        let &Reverse((at, _)) = self.heap.peek()?;
        if self.event_at.is_some_and(|t| t <= at) {
            return None;
        }
        self.event_at = Some(at);
        Some(at)
    }
}

/// The pending batches of [`Fabric::arm_batched_timer`], by instant.
#[derive(Default)]
pub(super) struct TimerBatches {
    /// Each instant with ports due, in time order, and the ports.
    due: std::collections::VecDeque<(Time, Vec<PortId>)>,
    /// Emptied port lists, kept for their capacity.
    spare: Vec<Vec<PortId>>,
}

impl TimerBatches {
    /// Adds `port` to the batch at `at`, no earlier than any pending; returns whether the batch is new (its
    /// event is to be scheduled).
    fn arm(&mut self, port: PortId, at: Time) -> bool {
        if let Some((t, ports)) = self.due.back_mut() {
            assert!(*t <= at, "batched timers are armed in time order");
            if *t == at {
                ports.push(port);
                return false;
            }
        }
        let mut ports = self.spare.pop().unwrap_or_default();
        ports.push(port);
        self.due.push_back((at, ports));
        true
    }

    /// The ports of the batch due at `now`, the earliest.
    fn take(&mut self, now: Time) -> Vec<PortId> {
        let (t, ports) = self.due.pop_front().expect("a batch is pending");
        assert_eq!(t, now, "batches fire in time order");
        ports
    }

    fn recycle(&mut self, mut ports: Vec<PortId>) {
        ports.clear();
        self.spare.push(ports);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_and_the_token_timers_are_events_of_their_own_beside_every_port_s_timer() {
        let tick = Event::SchemeTick.to_bits();
        assert!(matches!(Event::from_bits(tick), Event::SchemeTick));
        assert_eq!(
            tick >> PORT_BITS,
            Event::SchemeTimer(PortId(0)).to_bits() >> PORT_BITS
        );
        let token = Event::TokenTimer.to_bits();
        assert!(matches!(Event::from_bits(token), Event::TokenTimer));
        assert_eq!(tick >> PORT_BITS, token >> PORT_BITS);
        let last = PortId(TOKEN_PORT - 1);
        assert!(
            matches!(Event::from_bits(Event::SchemeTimer(last).to_bits()), Event::SchemeTimer(p) if p == last)
        );
    }

    #[test]
    fn batches_gather_the_ports_of_one_instant_in_time_order() {
        let mut b = TimerBatches::default();
        assert!(b.arm(PortId(7), Time(10)), "a new instant needs its event");
        assert!(!b.arm(PortId(3), Time(10)));
        assert!(b.arm(PortId(5), Time(20)));
        assert_eq!(b.take(Time(10)), vec![PortId(7), PortId(3)]);
        let ports = b.take(Time(20));
        assert_eq!(ports, vec![PortId(5)]);
        b.recycle(ports);
        assert!(b.arm(PortId(1), Time(30)));
        assert_eq!(b.take(Time(30)), vec![PortId(1)]);
    }

    #[test]
    #[should_panic(expected = "in time order")]
    fn a_batch_armed_before_a_pending_one_is_refused() {
        let mut b = TimerBatches::default();
        b.arm(PortId(1), Time(20));
        b.arm(PortId(2), Time(10));
    }

    #[test]
    fn token_timers_fire_by_time_then_token_behind_one_pending_event() {
        let mut t = TokenTimers::default();
        assert!(t.arm(Time(20), 5), "the first needs an event");
        assert!(
            !t.arm(Time(30), 1),
            "a later one waits behind the pending event"
        );
        assert!(!t.arm(Time(20), 2), "so does one at the same instant");
        assert!(t.arm(Time(10), 9), "an earlier one needs its own");
        assert_eq!(t.pop_due(Time(10)), Some(9));
        assert_eq!(t.pop_due(Time(10)), None);
        assert_eq!(t.rearm(), Some(Time(20)));
        assert_eq!(t.pop_due(Time(20)), Some(2));
        assert_eq!(t.pop_due(Time(20)), Some(5));
        assert_eq!(t.pop_due(Time(20)), None);
        assert_eq!(t.rearm(), Some(Time(30)));
        assert_eq!(t.pop_due(Time(30)), Some(1));
        assert_eq!(t.rearm(), None);
    }
}
