//! The rate limiter of a port's receiver-driven control packets (ExpressPass §3.1: "credit packets are
//! rate-limited at each switch port and host"; PayDebt §4.1.1: debts and tokens "rate-limited together to 5%
//! of bandwidth in each port of switches and hosts"), sans-IO: a token bucket filled at the control packets'
//! rate, `burst` packets deep (ns-2's `XPassDropTail`: `token_refresh_rate_`, `max_tokens_`), kept in integer
//! time; and [`ShapedQueue`], the switch ports' strict-priority queue it holds back.
//!
//! The bucket is full at [`CreditShaper::full_at`]; it holds `B − (full_at − now)·r` tokens, so a credit of
//! cost `c = size/r` may go once `full_at − now ≤ (B − size)/r`, and taking it moves `full_at` to
//! `max(full_at, now) + c`. Call [`CreditShaper::ready_at`] before sending a credit and
//! [`CreditShaper::take`] when it goes.

use bfcsim_core::{Bytes, Rate, Time};

use crate::fabric::SwitchOps;

/// The token bucket of one port's credits.
#[derive(Clone, Copy, Debug)]
pub struct CreditShaper {
    /// Time the rate takes to refill one credit's tokens.
    cost: Time,
    /// How far ahead of now the bucket may be full and still hold a credit: `(burst − 1)` credits' time.
    slack: Time,
    full_at: Time,
}

impl CreditShaper {
    /// Credits of `credit` bytes at most at `rate`, `burst` (at least 1) back to back after an idle spell.
    pub fn new(rate: Rate, credit: Bytes, burst: u32) -> CreditShaper {
        let cost = rate.tx_time(credit);
        CreditShaper {
            cost,
            slack: cost * (burst.max(1) as u64 - 1),
            full_at: Time::ZERO,
        }
    }

    /// When the bucket next holds a credit's tokens (in the past: it holds them now).
    #[inline]
    pub fn ready_at(&self) -> Time {
        self.full_at.saturating_sub(self.slack)
    }

    /// A credit goes at `now` (no earlier than [`CreditShaper::ready_at`]).
    #[inline]
    pub fn take(&mut self, now: Time) {
        debug_assert!(now >= self.ready_at(), "credit sent before its tokens");
        self.full_at = self.full_at.max(now) + self.cost;
    }

    /// When the bucket is full again.
    pub fn full_at(&self) -> Time {
        self.full_at
    }
}

/// The credit share of a link of rate `link`: credits of `credit` bytes, each calling for one data packet of
/// `data` bytes in the other direction, so that the data fill the link (ExpressPass §3.1: 84/(84 + 1538) of
/// it; PayDebt §4.1.1's "5%" for its debts and tokens).
pub fn credit_rate(link: Rate, credit: Bytes, data: Bytes) -> Rate {
    Rate((link.bps() as u128 * credit.0 as u128 / (credit.0 + data.0) as u128) as u64)
}

/// One queue of every switch port (ExpressPass's credit queue, PayDebt's debt/token queue) sent through the
/// port's [`CreditShaper`]: the first of the port's strict-priority queues, held back while its bucket is short
/// (the port's scheme timer lets it go), so that the port sends its other queues meanwhile.
pub struct ShapedQueue {
    /// The queue's index at every switch port.
    queue: usize,
    /// Each switch port's rate limiter, by switch-port index.
    ports: Vec<CreditShaper>,
}

impl ShapedQueue {
    /// Queue `queue` of each switch port, through `ports` (by switch-port index).
    pub fn new(queue: usize, ports: Vec<CreditShaper>) -> ShapedQueue {
        ShapedQueue { queue, ports }
    }

    /// The shaped queue's index.
    pub fn queue(&self) -> usize {
        self.queue
    }

    /// Holds switch port `sp`'s shaped queue back until its bucket refills, if it is short now (call after a
    /// packet joins the queue).
    pub fn gate(&self, fab: &mut impl SwitchOps, sp: u32) {
        let ready = self.ports[sp as usize].ready_at();
        if ready <= fab.now() {
            return;
        }
        fab.hold_queue(sp, self.queue, true);
        let port = fab.sw_port_id(sp);
        fab.arm_timer(port, ready);
    }

    /// A packet left `queue` of switch port `sp`: from the shaped queue, it spent the bucket's tokens, and the
    /// queue waits for the next packet's.
    pub fn dequeued(&mut self, fab: &mut impl SwitchOps, sp: u32, queue: usize) {
        if queue != self.queue {
            return;
        }
        self.ports[sp as usize].take(fab.now());
        if fab.queues(sp).queue_len(queue) > 0 {
            self.gate(fab, sp);
        }
    }

    /// The scheme timer of switch port `sp` is due: releases the shaped queue; true if it was held (the scheme
    /// then kicks the port).
    pub fn release(&self, fab: &mut impl SwitchOps, sp: u32) -> bool {
        fab.hold_queue(sp, self.queue, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_paces_at_the_rate() {
        // 64 B at 5.12 Gb/s: 100 ns per credit; two credits deep.
        let mut s = CreditShaper::new(Rate(5_120_000_000), Bytes(64), 2);
        let t0 = Time::from_us(1);
        assert!(s.ready_at() <= t0);
        s.take(t0);
        assert!(
            s.ready_at() <= t0,
            "the second credit of the burst goes at once"
        );
        s.take(t0);
        assert_eq!(s.ready_at(), t0 + Time::from_ns(100), "then one per 100 ns");
        s.take(t0 + Time::from_ns(100));
        assert_eq!(s.ready_at(), t0 + Time::from_ns(200));
        assert_eq!(s.full_at(), t0 + Time::from_ns(300));
        // After an idle spell the bucket is full again: a burst of two, no more.
        let t1 = Time::from_us(5);
        s.take(t1);
        s.take(t1);
        assert_eq!(s.ready_at(), t1 + Time::from_ns(100));
    }

    #[test]
    fn a_bucket_one_credit_deep_spaces_every_credit() {
        let mut s = CreditShaper::new(Rate(5_120_000_000), Bytes(64), 1);
        s.take(Time::ZERO);
        assert_eq!(s.ready_at(), Time::from_ns(100));
        s.take(Time::from_ns(150));
        assert_eq!(s.ready_at(), Time::from_ns(250));
    }
}
