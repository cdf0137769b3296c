//! A PayDebt sender's rules (§4.1.1, §4.2, §4.4), sans-IO.
//!
//! - [`Tokens`]: what one flow may send. A flow starts with one BDP of unscheduled packets (§4.2), as many of
//!   them as the bound on its host pair allows when it opens ([`Tokens::open`]), and sends a scheduled packet
//!   per token; a token is spent first (the packet it calls for goes now), an unscheduled packet only when no
//!   token waits. [`Tokens::requests_token`] says which packets carry `token_request`: those sent while more
//!   than the flow's unscheduled packets remain after them, so that the flow draws exactly one token for each
//!   packet beyond its unscheduled ones (§4.1.1: "if the remaining data is larger than one BDP").
//! - [`DebtCounter`]: §4.4's `debt_to_receive`, one per sender host: each unscheduled packet adds its payload;
//!   a packet that takes it to one MTU carries `debt_request`, and the counter drops by an MTU.
//! - [`PairBound`]: §4.4 "Handling Incast": the unscheduled bytes a sender host has in flight to each receiver
//!   host. A flow takes its share when it opens and gives it back as its unscheduled packets are
//!   acknowledged; what the bound denies a flow it sends on tokens instead. (A flow that stopped halfway
//!   through its unscheduled packets would wait for acknowledgements that only its own completion brings: the
//!   receiver acknowledges data in its debts and tokens, and a flow of at most a BDP draws no token.)

use std::collections::{HashMap, VecDeque};

/// One flow's tokens and unscheduled allowance.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    /// Tokens received and not yet spent, each with whether a switch marked it.
    waiting: VecDeque<bool>,
    /// The flow's packets.
    packets: u64,
    /// The unscheduled packets it would send unbounded.
    allowance: u64,
    /// Unscheduled packets the flow may still send (once open).
    unscheduled: u64,
    /// Packets of the flow that carry `token_request`: its packets beyond its unscheduled ones (once open).
    requesting: u64,
    open: bool,
}

/// How a packet leaves: on a token (whether that token was marked), or unscheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// On a token; `true` if a switch marked the token.
    Token(bool),
    /// Without a token.
    Unscheduled,
}

impl Tokens {
    /// A flow of `size` bytes in packets of `mss`, `unscheduled` bytes of which it would send without tokens.
    pub fn new(size: u64, mss: u32, unscheduled: u64) -> Tokens {
        Tokens {
            packets: size.div_ceil(mss as u64).max(1),
            allowance: unscheduled.min(size).div_ceil(mss as u64).max(1),
            ..Tokens::default()
        }
    }

    /// Whether the flow has opened.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Opens the flow with room for `room` unscheduled packets (at least 1): it sends that many of its
    /// allowance unscheduled, and the rest of its packets on tokens. Returns its unscheduled packets.
    pub fn open(&mut self, room: u64) -> u64 {
        debug_assert!(room > 0 && !self.open);
        self.unscheduled = self.allowance.min(room);
        self.requesting = self.packets - self.unscheduled;
        self.open = true;
        self.unscheduled
    }

    /// A token arrived (`marked` by a switch's `K_t`).
    pub fn add(&mut self, marked: bool) {
        self.waiting.push_back(marked);
    }

    /// Whether a packet may go: a token waits, or (for new data, not a resend) an unscheduled packet is left.
    pub fn may_send(&self, resend: bool) -> bool {
        !self.waiting.is_empty() || (!resend && self.unscheduled > 0)
    }

    /// A packet goes (after [`Tokens::may_send`]): on the oldest token, else unscheduled.
    pub fn spend(&mut self) -> Sent {
        match self.waiting.pop_front() {
            Some(marked) => Sent::Token(marked),
            None => {
                debug_assert!(self.unscheduled > 0, "may_send let a packet go");
                self.unscheduled -= 1;
                Sent::Unscheduled
            }
        }
    }

    /// Whether the packet starting at byte `seq` (a first send or a resend of it) carries `token_request`: the
    /// flow's first `requesting` packets do.
    pub fn requests_token(&self, seq: u64, mss: u32) -> bool {
        seq / (mss as u64) < self.requesting
    }
}

/// §4.4's `debt_to_receive` of one sender host.
#[derive(Clone, Copy, Debug, Default)]
pub struct DebtCounter(u64);

impl DebtCounter {
    /// An unscheduled packet of `payload` bytes goes: whether it carries `debt_request` (the counter reached
    /// one `mtu`).
    pub fn unscheduled(&mut self, payload: u32, mtu: u32) -> bool {
        self.0 += payload as u64;
        if self.0 < mtu as u64 {
            return false;
        }
        self.0 -= mtu as u64;
        true
    }
}

/// The unscheduled bytes one sender host has in flight to each receiver host.
#[derive(Clone, Debug, Default)]
pub struct PairBound {
    in_flight: HashMap<u32, u64>,
}

impl PairBound {
    /// Full packets of `mss` bytes that may go unscheduled to host `dst` under `limit` (`None`: no bound):
    /// what fits, and at least one when nothing is in flight to `dst` (a flow can always make progress).
    pub fn room(&self, dst: u32, mss: u32, limit: Option<u64>) -> u64 {
        let Some(limit) = limit else {
            return u64::MAX;
        };
        match self.in_flight.get(&dst).copied().unwrap_or(0) {
            0 => (limit / mss as u64).max(1),
            used => limit.saturating_sub(used) / mss as u64,
        }
    }

    /// `bytes` of unscheduled data to `dst` are taken.
    pub fn take(&mut self, dst: u32, bytes: u64) {
        *self.in_flight.entry(dst).or_insert(0) += bytes;
    }

    /// `bytes` of unscheduled data to `dst` are given back.
    pub fn give_back(&mut self, dst: u32, bytes: u64) {
        if let Some(used) = self.in_flight.get_mut(&dst) {
            *used -= bytes.min(*used);
            if *used == 0 {
                self.in_flight.remove(&dst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_requests_one_token_per_packet_beyond_its_unscheduled_ones() {
        // 10 packets of 1,000 B, 2.5 packets unscheduled: 3 unscheduled, 7 scheduled, so its first 7 packets
        // carry token_request and its last three do not.
        let mut t = Tokens::new(10_000, 1_000, 2_500);
        assert_eq!(t.open(u64::MAX), 3);
        let requests: Vec<bool> = (0..10)
            .map(|k| t.requests_token(k * 1_000, 1_000))
            .collect();
        assert_eq!(requests.iter().filter(|&&r| r).count(), 7);
        assert!(requests[..7].iter().all(|&r| r) && !requests[7..].iter().any(|&r| r));
        // A flow no larger than its unscheduled bytes requests none; a one-packet flow sends it unscheduled.
        let mut small = Tokens::new(2_000, 1_000, 12_500);
        small.open(u64::MAX);
        assert!(!small.requests_token(0, 1_000) && !small.requests_token(1_000, 1_000));
        let mut tiny = Tokens::new(100, 1_000, 12_500);
        tiny.open(1);
        assert!(tiny.may_send(false));
        assert_eq!(tiny.spend(), Sent::Unscheduled);
        assert!(!tiny.may_send(false));
    }

    #[test]
    fn what_the_pair_bound_denies_goes_on_tokens() {
        let mut t = Tokens::new(10_000, 1_000, 5_000);
        assert!(!t.is_open() && !t.may_send(false));
        // Room for 2 of its 5 unscheduled packets: the other 8 ask for tokens.
        assert_eq!(t.open(2), 2);
        assert_eq!(
            (0..10)
                .filter(|&k| t.requests_token(k * 1_000, 1_000))
                .count(),
            8
        );
    }

    #[test]
    fn tokens_are_spent_before_unscheduled_packets_and_resends_need_one() {
        let mut t = Tokens::new(10_000, 1_000, 2_000);
        t.open(u64::MAX);
        assert!(!t.may_send(true), "a resend waits for a token");
        t.add(true);
        assert!(t.may_send(true));
        assert_eq!(t.spend(), Sent::Token(true));
        assert_eq!(t.spend(), Sent::Unscheduled);
        assert_eq!(t.spend(), Sent::Unscheduled);
        assert!(!t.may_send(false), "two unscheduled packets in all");
    }

    #[test]
    fn debt_request_once_per_mtu_of_unscheduled_bytes() {
        let mut d = DebtCounter::default();
        // Full packets: each one.
        assert!(d.unscheduled(1_000, 1_000));
        assert!(d.unscheduled(1_000, 1_000));
        // Memcached-sized packets: every fourth of 300 B (at 1,200 B, then 300 B over).
        let tiny: Vec<bool> = (0..8).map(|_| d.unscheduled(300, 1_000)).collect();
        assert_eq!(tiny, [false, false, false, true, false, false, true, false]);
    }

    #[test]
    fn the_pair_bound_counts_unscheduled_bytes_per_receiver() {
        let mut b = PairBound::default();
        let limit = Some(2_500);
        assert_eq!(b.room(4, 1_000, limit), 2);
        b.take(4, 2_000);
        assert_eq!(b.room(4, 1_000, limit), 0, "500 B left: not a packet");
        assert_eq!(
            b.room(5, 1_000, limit),
            2,
            "another receiver is another pair"
        );
        assert_eq!(b.room(4, 1_000, None), u64::MAX);
        b.give_back(4, 1_000);
        assert_eq!(b.room(4, 1_000, limit), 1);
        b.give_back(4, 5_000);
        assert_eq!(
            b.room(4, 1_000, Some(500)),
            1,
            "nothing in flight: one may always go"
        );
    }
}
