//! A PayDebt receiver host's debts and tokens (§4.1.1, §4.1.3, Fig. 6), sans-IO.
//!
//! Call [`Receiver::on_data`] for each data packet that arrives, [`Receiver::on_probe`] for the missing ranges
//! and lost tokens a probe reveals, and [`Receiver::emit`] whenever the host's rate limiter lets one debt or
//! token go: it returns what goes, debts first (and the acknowledgements probes of complete flows draw), then
//! resend tokens and tokens, taking the flows in turn (or by SRPT) among those whose [`TokenWindow`] has room.
//!
//! - A data packet carrying `token_request` generates one token (§4.1.1: data-driven tokens).
//! - An unscheduled packet carrying `debt_request` generates one debt (§4.4), sent by [`DebtTiming`]: under
//!   PayDebt at once if the packet arrived marked, else held until a scheduled packet of the flow arrives marked
//!   (one held debt each: "debt is sent as long as the queue length exceeds the given threshold") or the flow's
//!   data is all in.
//! - A scheduled packet answers one token in flight and runs Algorithm 1.

use std::collections::{BTreeMap, VecDeque};

use bfcsim_core::Time;

use super::window::TokenWindow;
use super::{DebtTiming, PayDebtConfig, TokenScheduling};

/// What the receiver learns from one data packet.
#[derive(Clone, Copy, Debug, Default)]
pub struct Arrival {
    /// It was sent without a token.
    pub unscheduled: bool,
    /// It carries `debt_request`.
    pub debt_request: bool,
    /// It carries `token_request`.
    pub token_request: bool,
    /// A switch marked it above `K_d`.
    pub marked: bool,
    /// It answers a token a switch marked above `K_t`.
    pub token_echo: bool,
    /// The flow's data is all in with it.
    pub complete: bool,
    /// Bytes of the flow still to receive (SRPT's rank).
    pub remaining: u64,
}

/// One debt or token to send now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// A debt of flow `.0`.
    Debt(u32),
    /// An acknowledgement of flow `.0`, complete here, whose sender probed: it goes as a token.
    Ack(u32),
    /// Token number `.1` of flow `.0` (its tokens are numbered from 1, so that a probe can say which it heard).
    Token(u32, u32),
    /// A token of flow `.0` that asks for the `.2` bytes from byte `.1` again.
    Resend(u32, u64, u32),
}

/// A flow the receiver is taking data from.
#[derive(Clone, Debug)]
struct Incoming {
    /// Tokens generated and not yet sent.
    tokens: u32,
    /// Ranges to ask for again, one packet each.
    resends: VecDeque<(u64, u32)>,
    /// Debts generated and held back.
    held_debts: u32,
    /// Tokens sent and not yet answered by a scheduled packet.
    in_flight: u32,
    /// Tokens sent in all (resend tokens aside): the last one's number.
    sent: u32,
    window: TokenWindow,
    remaining: u64,
    /// In the round of flows with tokens due.
    listed: bool,
}

/// What a new flow's [`TokenWindow`] starts from.
#[derive(Clone, Copy, Debug)]
struct NewWindow {
    /// `w_init`, `w_min`, `w_max`.
    w: (f64, f64, f64),
    /// One BDP, in tokens.
    bdp_tokens: f64,
    period: Time,
}

impl NewWindow {
    fn start(self, now: Time) -> TokenWindow {
        let (w_init, w_min, w_max) = self.w;
        TokenWindow::new(w_init, w_min, w_max, self.bdp_tokens, self.period, now)
    }
}

impl Incoming {
    fn new(window: TokenWindow) -> Incoming {
        Incoming {
            tokens: 0,
            resends: VecDeque::new(),
            held_debts: 0,
            in_flight: 0,
            sent: 0,
            window,
            remaining: u64::MAX,
            listed: false,
        }
    }

    fn due(&self) -> bool {
        self.tokens > 0 || !self.resends.is_empty()
    }
}

/// A receiver host's debts and tokens.
#[derive(Clone, Debug)]
pub struct Receiver {
    debt: DebtTiming,
    scheduling: TokenScheduling,
    window: NewWindow,
    flows: BTreeMap<u32, Incoming>,
    /// Debts (and probes' acknowledgements) ready to go, oldest first.
    ready: VecDeque<Emit>,
    /// The flows with tokens due, in turn.
    round: VecDeque<u32>,
}

impl Receiver {
    /// A receiver under `cfg`, whose windows start at `bdp_tokens` and update each `period`.
    pub fn new(cfg: &PayDebtConfig, bdp_tokens: f64, period: Time) -> Receiver {
        Receiver {
            debt: cfg.debt,
            scheduling: cfg.scheduling,
            window: NewWindow {
                w: (cfg.w_init, cfg.w_min, cfg.w_max),
                bdp_tokens,
                period,
            },
            flows: BTreeMap::new(),
            ready: VecDeque::new(),
            round: VecDeque::new(),
        }
    }

    /// Data packet `a` of flow `id` arrived at `now`.
    pub fn on_data(&mut self, id: u32, a: Arrival, now: Time) {
        let debt = self.debt;
        let window = self.window;
        let f = self
            .flows
            .entry(id)
            .or_insert_with(|| Incoming::new(window.start(now)));
        f.remaining = a.remaining;
        if !a.unscheduled {
            f.in_flight = f.in_flight.saturating_sub(1);
            f.window.on_scheduled(now, a.token_echo);
        }
        if a.token_request {
            f.tokens += 1;
        }
        let mut release = 0;
        if a.unscheduled && a.debt_request {
            match debt {
                DebtTiming::Early => release += 1,
                DebtTiming::Ecn if a.marked => release += 1,
                DebtTiming::Ecn | DebtTiming::Late => f.held_debts += 1,
                DebtTiming::None => {}
            }
        }
        if !a.unscheduled && a.marked && debt == DebtTiming::Ecn && f.held_debts > 0 {
            f.held_debts -= 1;
            release += 1;
        }
        let list = !a.complete && f.due() && !f.listed;
        f.listed |= list;
        if a.complete {
            release += f.held_debts;
            self.flows.remove(&id);
        }
        if list {
            self.round.push_back(id);
        }
        self.ready.extend((0..release).map(|_| Emit::Debt(id)));
    }

    /// A probe of flow `id` reached the receiver at `now`, behind every packet the sender sent before it:
    /// `gaps` are the ranges it revealed missing, split into packets of at most `mss` bytes and each asked for
    /// by a resend token; their tokens are no longer in flight (a lost packet never answers its token). On a
    /// probe sent on a timeout, `tokens_heard` is the number of the last token the sender received: those sent
    /// after it were lost on the way, and are generated again. `complete`: the receiver has every byte (the
    /// sender missed the acknowledgement).
    pub fn on_probe(
        &mut self,
        id: u32,
        gaps: &[(u64, u64)],
        mss: u32,
        tokens_heard: Option<u32>,
        complete: bool,
        now: Time,
    ) {
        if complete {
            self.ready.push_back(Emit::Ack(id));
            return;
        }
        let window = self.window;
        let f = self
            .flows
            .entry(id)
            .or_insert_with(|| Incoming::new(window.start(now)));
        for &(from, to) in gaps {
            let mut seq = from;
            while seq < to {
                let len = (to - seq).min(mss as u64) as u32;
                f.resends.push_back((seq, len));
                f.in_flight = f.in_flight.saturating_sub(1);
                seq += len as u64;
            }
        }
        if let Some(heard) = tokens_heard {
            let lost = f.sent.saturating_sub(heard);
            f.tokens += lost;
            f.in_flight = f.in_flight.saturating_sub(lost);
            f.sent -= lost;
        }
        if f.due() && !f.listed {
            f.listed = true;
            self.round.push_back(id);
        }
    }

    /// Whether a debt or token waits (one may still be held back by its flow's window).
    pub fn pending(&self) -> bool {
        !self.ready.is_empty() || !self.round.is_empty()
    }

    /// The debt or token to send now, if any may go: debts first (§4.1.1: "when debts and tokens both exist,
    /// send debts first"), then a flow's resend token before its new tokens.
    pub fn emit(&mut self) -> Option<Emit> {
        if let Some(e) = self.ready.pop_front() {
            return Some(e);
        }
        let pick = match self.scheduling {
            TokenScheduling::RoundRobin => self.next_in_turn(),
            TokenScheduling::Srpt => self.shortest(),
        }?;
        let f = self
            .flows
            .get_mut(&pick)
            .expect("listed flows are incoming");
        f.in_flight += 1;
        let emit = match f.resends.pop_front() {
            Some((seq, len)) => Emit::Resend(pick, seq, len),
            None => {
                f.tokens -= 1;
                f.sent += 1;
                Emit::Token(pick, f.sent)
            }
        };
        if !f.due() {
            f.listed = false;
            self.round.retain(|&id| id != pick);
        }
        Some(emit)
    }

    /// Round-robin: the first flow of the round whose window has room, moved to the back; flows with nothing
    /// due leave the round.
    fn next_in_turn(&mut self) -> Option<u32> {
        for _ in 0..self.round.len() {
            let id = self.round.pop_front()?;
            let Some(f) = self.flows.get_mut(&id) else {
                continue;
            };
            if !f.due() {
                f.listed = false;
                continue;
            }
            self.round.push_back(id);
            if f.window.allows(f.in_flight) {
                return Some(id);
            }
        }
        None
    }

    /// SRPT: the flow with the fewest bytes left among those with room, the lowest id among equals.
    fn shortest(&mut self) -> Option<u32> {
        let flows = &self.flows;
        self.round
            .retain(|id| flows.get(id).is_some_and(Incoming::due));
        self.round
            .iter()
            .filter(|id| {
                let f = &flows[*id];
                f.window.allows(f.in_flight)
            })
            .min_by_key(|&&id| (flows[&id].remaining, id))
            .copied()
    }

    /// Flow `id`'s rank among the flows this receiver sends tokens to (those with tokens sent or due), by bytes
    /// left to receive, the lowest id among equals, and how many there are: `(rank, n)`. For the level of the
    /// packets its tokens call for (the eight-queue variant).
    pub fn rank(&self, id: u32) -> (u32, u32) {
        let Some(me) = self.flows.get(&id) else {
            return (0, 1);
        };
        let key = (me.remaining, id);
        let (mut rank, mut n) = (0, 0);
        for (&other, f) in &self.flows {
            if f.sent == 0 && !f.due() {
                continue;
            }
            n += 1;
            rank += u32::from((f.remaining, other) < key);
        }
        (rank, n.max(rank + 1))
    }

    /// Flow `id`'s window, while it is incoming.
    pub fn window(&self, id: u32) -> Option<&TokenWindow> {
        self.flows.get(&id).map(|f| &f.window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Time = Time::from_us(1);

    fn receiver(debt: DebtTiming) -> Receiver {
        let cfg = PayDebtConfig {
            debt,
            ..PayDebtConfig::default()
        };
        Receiver::new(&cfg, 8.0, Time::from_us(10))
    }

    fn unscheduled(marked: bool) -> Arrival {
        Arrival {
            unscheduled: true,
            debt_request: true,
            token_request: true,
            marked,
            remaining: 10_000,
            ..Arrival::default()
        }
    }

    fn scheduled(marked: bool, token_request: bool) -> Arrival {
        Arrival {
            marked,
            token_request,
            remaining: 10_000,
            ..Arrival::default()
        }
    }

    fn drain(r: &mut Receiver) -> Vec<Emit> {
        std::iter::from_fn(|| r.emit()).collect()
    }

    #[test]
    fn each_token_request_draws_one_token_and_a_marked_unscheduled_packet_a_debt_first() {
        let mut r = receiver(DebtTiming::Ecn);
        r.on_data(1, unscheduled(false), T);
        r.on_data(1, unscheduled(true), T);
        // Fig. 6: the marked packet's debt goes before both tokens; the unmarked one's debt is held.
        assert_eq!(
            drain(&mut r),
            [Emit::Debt(1), Emit::Token(1, 1), Emit::Token(1, 2)]
        );
        // A marked scheduled packet releases one held debt (and answers a token).
        r.on_data(1, scheduled(true, false), T);
        assert_eq!(drain(&mut r), [Emit::Debt(1)]);
        r.on_data(1, scheduled(true, false), T);
        assert_eq!(drain(&mut r), [], "no debt left to release");
    }

    #[test]
    fn held_debts_go_when_the_flow_is_complete() {
        let mut r = receiver(DebtTiming::Ecn);
        r.on_data(7, unscheduled(false), T);
        r.on_data(7, unscheduled(false), T);
        assert_eq!(drain(&mut r), [Emit::Token(7, 1), Emit::Token(7, 2)]);
        let last = Arrival {
            complete: true,
            ..scheduled(false, false)
        };
        r.on_data(7, last, T);
        assert_eq!(drain(&mut r), [Emit::Debt(7), Emit::Debt(7)]);
        assert!(!r.pending());
    }

    #[test]
    fn the_variants_time_debts_early_late_or_never() {
        let flow = |r: &mut Receiver| {
            r.on_data(1, unscheduled(true), T);
            let first = drain(r);
            r.on_data(
                1,
                Arrival {
                    complete: true,
                    ..unscheduled(false)
                },
                T,
            );
            (first, drain(r))
        };
        let mut early = receiver(DebtTiming::Early);
        assert_eq!(
            flow(&mut early),
            (vec![Emit::Debt(1), Emit::Token(1, 1)], vec![Emit::Debt(1)])
        );
        let mut late = receiver(DebtTiming::Late);
        assert_eq!(
            flow(&mut late),
            (vec![Emit::Token(1, 1)], vec![Emit::Debt(1), Emit::Debt(1)]),
            "even a marked packet's debt waits for the end"
        );
        let mut none = receiver(DebtTiming::None);
        assert_eq!(flow(&mut none), (vec![Emit::Token(1, 1)], vec![]));
    }

    #[test]
    fn tiny_packets_without_debt_request_draw_no_debt() {
        let mut r = receiver(DebtTiming::Early);
        let tiny = Arrival {
            debt_request: false,
            token_request: false,
            complete: true,
            ..unscheduled(true)
        };
        r.on_data(3, tiny, T);
        assert_eq!(drain(&mut r), []);
    }

    #[test]
    fn tokens_go_round_robin_within_each_flows_window() {
        let mut r = receiver(DebtTiming::None);
        for _ in 0..10 {
            r.on_data(1, scheduled(false, true), T);
            r.on_data(2, scheduled(false, true), T);
        }
        let sent = drain(&mut r);
        // Turns alternate, and each flow stops at its window of 8 tokens in flight.
        assert_eq!(
            &sent[..4],
            [
                Emit::Token(1, 1),
                Emit::Token(2, 1),
                Emit::Token(1, 2),
                Emit::Token(2, 2)
            ]
        );
        assert_eq!(sent.len(), 16);
        assert!(r.pending(), "four tokens wait for room");
        // A scheduled packet of flow 2 answers one token: one more of flow 2 may go.
        r.on_data(2, scheduled(false, false), T);
        assert_eq!(drain(&mut r), [Emit::Token(2, 9)]);
    }

    #[test]
    fn srpt_serves_the_flow_with_the_least_left() {
        let cfg = PayDebtConfig {
            debt: DebtTiming::None,
            scheduling: TokenScheduling::Srpt,
            ..PayDebtConfig::default()
        };
        let mut r = Receiver::new(&cfg, 8.0, Time::from_us(10));
        let with_left = |remaining| Arrival {
            token_request: true,
            remaining,
            ..Arrival::default()
        };
        r.on_data(1, with_left(50_000), T);
        r.on_data(2, with_left(5_000), T);
        r.on_data(2, with_left(4_000), T);
        assert_eq!(
            drain(&mut r),
            [Emit::Token(2, 1), Emit::Token(2, 2), Emit::Token(1, 1)]
        );
    }

    #[test]
    fn a_flows_rank_counts_the_flows_with_tokens_by_bytes_left() {
        let mut r = receiver(DebtTiming::None);
        let with_left = |remaining, token_request| Arrival {
            token_request,
            remaining,
            ..Arrival::default()
        };
        r.on_data(1, with_left(50_000, true), T);
        r.on_data(2, with_left(5_000, true), T);
        r.on_data(3, with_left(20_000, true), T);
        // Flow 4 has only unscheduled packets in flight: no token for it, so it takes no rank.
        r.on_data(4, with_left(1_000, false), T);
        assert_eq!((r.rank(2), r.rank(3), r.rank(1)), ((0, 3), (1, 3), (2, 3)));
        // Once its tokens have gone, a flow keeps its rank until its data is all in.
        drain(&mut r);
        r.on_data(
            2,
            Arrival {
                complete: true,
                ..with_left(0, false)
            },
            T,
        );
        assert_eq!((r.rank(3), r.rank(1)), ((0, 2), (1, 2)));
    }

    #[test]
    fn a_probe_asks_for_each_missing_packet_and_regenerates_lost_tokens() {
        let mut r = receiver(DebtTiming::None);
        for _ in 0..3 {
            r.on_data(5, scheduled(false, true), T);
        }
        assert_eq!(drain(&mut r).len(), 3);
        // The sender heard tokens 1 and 2 of the 3; 2,500 bytes from 1,000 are missing. Tokens in flight: 3,
        // less the third (lost), less the three missing packets' (which will never answer theirs): none.
        r.on_probe(5, &[(1_000, 3_500)], 1_000, Some(2), false, T);
        assert_eq!(
            drain(&mut r),
            [
                Emit::Resend(5, 1_000, 1_000),
                Emit::Resend(5, 2_000, 1_000),
                Emit::Resend(5, 3_000, 500),
                Emit::Token(5, 3)
            ]
        );
        // Four are in flight: a window of 8 lets four more go before their answers come back.
        for _ in 0..8 {
            r.on_data(5, unscheduled(false), T);
        }
        assert_eq!(drain(&mut r).len(), 4);
        r.on_probe(9, &[], 1_000, None, true, T);
        assert_eq!(drain(&mut r), [Emit::Ack(9)]);
    }
}
