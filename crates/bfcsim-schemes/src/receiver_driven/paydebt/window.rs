//! A receiver's bound on one flow's tokens in flight, PayDebt's token congestion control (§4.1.3, Algorithm 1),
//! sans-IO.
//!
//! `maxInflight` starts at one BDP (in tokens: the BDP's full packets) with `w = w_init`. On each scheduled
//! packet, once an update period has passed since the last update: if a scheduled packet carried the token
//! queue's congestion mark since then, `w ← max(w/2, w_min)` and `maxInflight ← (w + 0.5)·maxInflight`;
//! otherwise `w ← (w + w_max)/2` and `maxInflight ← (1 − w)·maxInflight + w·BDP`.
//!
//! Algorithm 1's line 7 tests the packet at hand; a mark that arrives between two updates would then count only
//! if it happened to ride the packet that closes the period, so this reads it as "since the last update" (as
//! DCTCP's and ExpressPass's periods count what their period saw); `docs/FIDELITY.md` says so.

use bfcsim_core::Time;

/// Algorithm 1's state for one flow.
#[derive(Clone, Copy, Debug)]
pub struct TokenWindow {
    w: f64,
    w_min: f64,
    w_max: f64,
    /// `maxInflight`, in tokens.
    max_inflight: f64,
    /// One BDP, in tokens.
    bdp: f64,
    period: Time,
    last_update: Time,
    /// A scheduled packet carried the mark since the last update.
    marked: bool,
}

impl TokenWindow {
    /// A flow heard of at `now`, whose window starts at `bdp` tokens and is updated each `period`.
    pub fn new(w_init: f64, w_min: f64, w_max: f64, bdp: f64, period: Time, now: Time) -> Self {
        TokenWindow {
            w: w_init,
            w_min,
            w_max,
            max_inflight: bdp,
            bdp,
            period,
            last_update: now,
            marked: false,
        }
    }

    /// A scheduled packet of the flow arrived at `now`, carrying the token mark when `marked` (Algorithm 1's
    /// event).
    pub fn on_scheduled(&mut self, now: Time, marked: bool) {
        self.marked |= marked;
        if now.saturating_sub(self.last_update) < self.period {
            return;
        }
        if self.marked {
            self.w = (self.w / 2.0).max(self.w_min);
            self.max_inflight *= self.w + 0.5;
        } else {
            self.w = (self.w + self.w_max) / 2.0;
            self.max_inflight = (1.0 - self.w) * self.max_inflight + self.w * self.bdp;
        }
        self.last_update = now;
        self.marked = false;
    }

    /// Whether a token may go with `in_flight` of the flow's tokens unanswered: fewer than `maxInflight`, and
    /// always the first (a window below one token would stop the flow for good).
    pub fn allows(&self, in_flight: u32) -> bool {
        in_flight == 0 || (in_flight as f64) < self.max_inflight
    }

    /// `maxInflight`, in tokens.
    pub fn max_inflight(&self) -> f64 {
        self.max_inflight
    }

    /// The weight `w`.
    pub fn w(&self) -> f64 {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: Time = Time::from_us(10);

    fn window() -> TokenWindow {
        TokenWindow::new(0.5, 0.1, 0.5, 8.0, RTT, Time::ZERO)
    }

    #[test]
    fn a_mark_shrinks_the_window_by_w_plus_a_half_and_halves_w() {
        let mut t = window();
        t.on_scheduled(Time::from_us(3), true);
        assert_eq!(t.max_inflight(), 8.0, "no update within the period");
        t.on_scheduled(RTT, false);
        // The mark seen earlier in the period counts: w 0.5 -> 0.25, max 8 -> 8 * 0.75.
        assert_eq!(t.w(), 0.25);
        assert_eq!(t.max_inflight(), 6.0);
        t.on_scheduled(RTT * 2, true);
        assert_eq!(t.w(), 0.125);
        assert_eq!(t.max_inflight(), 6.0 * 0.625);
        t.on_scheduled(RTT * 3, true);
        t.on_scheduled(RTT * 4, true);
        assert_eq!(t.w(), 0.1, "w stops at w_min");
    }

    #[test]
    fn without_marks_the_window_returns_to_one_bdp() {
        let mut t = window();
        t.on_scheduled(RTT, true);
        t.on_scheduled(RTT * 2, true);
        let low = t.max_inflight();
        // w 0.125 -> (0.125 + 0.5)/2 = 0.3125; max -> (1 - w)·max + w·8.
        t.on_scheduled(RTT * 3, false);
        assert_eq!(t.w(), 0.3125);
        assert_eq!(t.max_inflight(), 0.6875 * low + 0.3125 * 8.0);
        for k in 4..40 {
            t.on_scheduled(RTT * k, false);
        }
        assert!((t.max_inflight() - 8.0).abs() < 1e-6);
        assert!(t.max_inflight() <= 8.0, "never above one BDP");
    }

    #[test]
    fn the_window_bounds_tokens_in_flight_but_always_lets_one_go() {
        let mut t = window();
        assert!(t.allows(7));
        assert!(!t.allows(8));
        for k in 1..30 {
            t.on_scheduled(RTT * k, true);
        }
        assert!(t.max_inflight() < 1.0);
        assert!(t.allows(0));
        assert!(!t.allows(1));
    }
}
