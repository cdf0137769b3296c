//! The sender's choice of path for each data packet, by the entropy value (EV) it writes in the packet and the
//! switches' ECMP hashes: the Ultra Ethernet transport's load balancing (UET 1.0 §3.5.10), which any sender can
//! run whatever its congestion control (`[nic] paths`):
//!
//! - `flow`: one entropy per flow, its 5-tuple hash (plain ECMP; the default).
//! - `oblivious`: a fresh entropy per packet, cycling through `entropies` values in an order re-shuffled after
//!   each cycle (uet-htsim's `UecMpOblivious`): per-packet spraying chosen by the sender.
//! - `reps`: recycled entropy packet spraying (Bonato et al., "REPS: Recycled Entropy Packet Spraying for
//!   Adaptive Load Balancing and Failure Mitigation", 2025; uet-htsim's `UecMpReps` and its
//!   `CircularBufferREPS`): an entropy whose packet came back acknowledged without an ECN mark is kept in a small
//!   ring and reused for a later packet, each once; marked (or trimmed) packets' entropies are dropped; with no
//!   fresh entropy kept, a random one is explored. After a retransmission timeout the ring freezes: its
//!   entropies are reused round and round, not consumed (the paths known good, while a failed one is
//!   avoided), until `exit_freeze_after` has passed and the next feedback clears the ring and explores 16
//!   random entropies first.
//!
//! A switch under `switch.load_balancing = "ecmp"` hashes the entropy with the flow's hash, so that different
//! entropies of one flow take independent paths. The ACK echoes its data packet's entropy (the packet stamps,
//! [`bfcsim_net::telemetry::PacketStamps::entropy`]), which is how REPS learns which ones were good.
//!
//! Sans-IO: [`Paths::next`] and [`Paths::feedback`] are what the NIC calls; the tests script them.

use bfcsim_core::Time;
use bfcsim_core::rng::mix64;
use serde::{Deserialize, Serialize};

/// How a sender chooses each data packet's entropy (`[nic] paths`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathChoice {
    /// The flow's own hash on every packet (ECMP).
    #[default]
    Flow,
    /// A fresh entropy per packet, cycling through all of them.
    Oblivious,
    /// Recycled entropy packet spraying.
    Reps,
}

/// The entropy-selection parameters (`[nic.entropy]`); the defaults are uet-htsim's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EntropyConfig {
    /// How many entropy values a flow draws from (uet-htsim's `-paths`, 64); a power of two.
    pub entropies: u16,
    /// REPS: entropies its ring keeps (`repsBufferSize`, 8).
    pub reps_buffer: u16,
    /// REPS: freeze the ring after a retransmission timeout (`repsUseFreezing`).
    pub reps_freeze: bool,
    /// REPS: how long a frozen ring stays frozen (`exit_freeze_after`, 10 ms).
    pub reps_exit_freeze_after: Time,
    /// REPS: random entropies explored after leaving a freeze (16 in uet-htsim).
    pub reps_explore: u16,
}

impl Default for EntropyConfig {
    fn default() -> Self {
        EntropyConfig {
            entropies: 64,
            reps_buffer: 8,
            reps_freeze: true,
            reps_exit_freeze_after: Time::from_ms(10),
            reps_explore: 16,
        }
    }
}

impl EntropyConfig {
    /// Checks ranges; messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        if !self.entropies.is_power_of_two() {
            return Err(format!(
                "nic.entropy.entropies = {} must be a power of two (1, 2, 4, ... 32768)",
                self.entropies
            ));
        }
        if self.reps_buffer == 0 || self.reps_buffer > 1024 {
            return Err(format!(
                "nic.entropy.reps_buffer = {} must be between 1 and 1024",
                self.reps_buffer
            ));
        }
        Ok(())
    }
}

/// What an entropy's packet told the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// Acknowledged without an ECN mark.
    Good,
    /// Acknowledged with an ECN mark. (A trimmed packet's NACK tells REPS nothing: uet-htsim's `PATH_NACK`
    /// leaves the ring as it is, so the engine does not report it.)
    Marked,
}

/// One flow's path selection.
#[derive(Clone, Debug)]
pub enum Paths {
    /// The flow's hash.
    Flow,
    /// Oblivious spraying.
    Oblivious(Box<Oblivious>),
    /// REPS.
    Reps(Box<Reps>),
}

impl Paths {
    /// A flow's selection under `choice`, its random draws from `seed()` (the run's seed and the flow), which
    /// is asked only by a choice that draws (a flow's own hash needs no stream: most runs start every flow so).
    #[inline]
    pub fn new(choice: PathChoice, cfg: &EntropyConfig, seed: impl FnOnce() -> u64) -> Paths {
        match choice {
            PathChoice::Flow => Paths::Flow,
            PathChoice::Oblivious => {
                Paths::Oblivious(Box::new(Oblivious::new(cfg.entropies, seed())))
            }
            PathChoice::Reps => Paths::Reps(Box::new(Reps::new(cfg, seed()))),
        }
    }

    /// The entropy of the next data packet (`None`: the flow's own hash).
    #[inline]
    pub fn next(&mut self, now: Time) -> Option<u16> {
        match self {
            Paths::Flow => None,
            Paths::Oblivious(o) => Some(o.next()),
            Paths::Reps(r) => Some(r.next(now)),
        }
    }

    /// The packet sent with `entropy` came back with `feedback`.
    #[inline]
    pub fn feedback(&mut self, now: Time, entropy: u16, feedback: Feedback) {
        if let Paths::Reps(r) = self {
            r.feedback(now, entropy, feedback);
        }
    }

    /// The flow's retransmission timer fired.
    #[inline]
    pub fn timeout(&mut self, now: Time) {
        if let Paths::Reps(r) = self {
            r.timeout(now);
        }
    }

    /// Acknowledgements echo entropies back to the sender: REPS learns from them.
    pub fn learns(choice: PathChoice) -> bool {
        choice == PathChoice::Reps
    }
}

/// The route hash of a packet of a flow whose hash is `flow_hash`, sent with `entropy`: a different entropy
/// makes the switches' ECMP choose independently.
#[inline]
pub fn route_hash(flow_hash: u32, entropy: u16) -> u32 {
    flow_hash ^ (mix64(entropy as u64) as u32)
}

/// A counter-based random source (SplitMix64 over a per-flow seed), uet-htsim's `rand()`.
#[derive(Clone, Debug)]
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(1);
        mix64(self.0)
    }
}

/// Oblivious spraying's state (uet-htsim's `UecMpOblivious`).
#[derive(Clone, Debug)]
pub struct Oblivious {
    mask: u16,
    index: u16,
    xor: u16,
    draws: Draws,
}

impl Oblivious {
    fn new(entropies: u16, seed: u64) -> Oblivious {
        let mut draws = Draws(seed);
        let mask = entropies - 1;
        let xor = draws.next() as u16 & mask;
        Oblivious {
            mask,
            index: 0,
            xor,
            draws,
        }
    }

    /// Every entropy once per cycle, in an order the cycle's XOR shuffles.
    fn next(&mut self) -> u16 {
        let entropy = (self.index ^ self.xor) & self.mask;
        self.index += 1;
        if self.index > self.mask {
            self.index = 0;
            self.xor = self.draws.next() as u16 & self.mask;
        }
        entropy
    }
}

/// REPS's state: the ring of recycled entropies (uet-htsim's `CircularBufferREPS`, lifetime 1).
#[derive(Clone, Debug)]
pub struct Reps {
    mask: u16,
    /// The ring's entries and whether each is still fresh (not yet reused).
    ring: Vec<(u16, bool)>,
    /// Where the next good entropy is written.
    head: usize,
    /// Entries written (at most the ring's size).
    count: usize,
    fresh: usize,
    /// Frozen mode: the read position, and when it may end.
    frozen: Option<(usize, Time)>,
    freeze: bool,
    exit_after: Time,
    explore_after_freeze: u16,
    explore: u16,
    draws: Draws,
}

impl Reps {
    fn new(cfg: &EntropyConfig, seed: u64) -> Reps {
        Reps {
            mask: cfg.entropies - 1,
            ring: vec![(0, false); cfg.reps_buffer as usize],
            head: 0,
            count: 0,
            fresh: 0,
            frozen: None,
            freeze: cfg.reps_freeze,
            exit_after: cfg.reps_exit_freeze_after,
            explore_after_freeze: cfg.reps_explore,
            explore: 0,
            draws: Draws(seed),
        }
    }

    /// Fresh entropies kept for reuse.
    pub fn fresh(&self) -> usize {
        self.fresh
    }

    /// Whether the ring is frozen (after a timeout).
    pub fn frozen(&self) -> bool {
        self.frozen.is_some()
    }

    fn random(&mut self) -> u16 {
        self.draws.next() as u16 & self.mask
    }

    /// uet-htsim's `nextEntropy`: explore while told to; frozen, go round the ring; else the earliest fresh
    /// entropy, or a random one when none is fresh.
    fn next(&mut self, _now: Time) -> u16 {
        if self.explore > 0 {
            self.explore -= 1;
            return self.random();
        }
        let n = self.ring.len();
        if let Some((at, until)) = self.frozen {
            if self.count == 0 {
                return self.random();
            }
            let (entropy, fresh) = self.ring[at];
            if fresh {
                self.fresh -= 1;
                self.ring[at].1 = false;
            }
            self.frozen = Some(((at + 1) % self.count, until));
            return entropy;
        }
        if self.fresh == 0 {
            return self.random();
        }
        let at = (self.head + n - self.fresh) % n;
        self.ring[at].1 = false;
        self.fresh -= 1;
        self.ring[at].0
    }

    /// uet-htsim's `processEv`: a frozen ring past its time thaws (cleared, then exploring); an unmarked
    /// acknowledgement's entropy joins the ring.
    fn feedback(&mut self, now: Time, entropy: u16, feedback: Feedback) {
        self.thaw(now);
        if feedback == Feedback::Good {
            let n = self.ring.len();
            if !self.ring[self.head].1 {
                self.fresh = (self.fresh + 1).min(n);
            }
            self.ring[self.head] = (entropy, true);
            self.head = (self.head + 1) % n;
            self.count = (self.count + 1).min(n);
        }
    }

    /// A timeout freezes the ring unless it is frozen or exploring already.
    fn timeout(&mut self, now: Time) {
        if self.freeze && self.frozen.is_none() && self.explore == 0 {
            self.frozen = Some((0, now + self.exit_after));
        }
        self.thaw(now);
    }

    fn thaw(&mut self, now: Time) {
        if let Some((_, until)) = self.frozen
            && now > until
        {
            self.frozen = None;
            self.ring.iter_mut().for_each(|e| *e = (0, false));
            (self.head, self.count, self.fresh) = (0, 0, 0);
            self.explore = self.explore_after_freeze;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps() -> Reps {
        Reps::new(&EntropyConfig::default(), 7)
    }

    #[test]
    fn reps_reuses_an_unmarked_entropy_once_and_drops_a_marked_one() {
        let mut r = reps();
        let t = Time::ZERO;
        r.feedback(t, 5, Feedback::Good);
        r.feedback(t, 9, Feedback::Marked);
        assert_eq!(r.fresh(), 1);
        assert_eq!(r.next(t), 5, "the unmarked entropy is reused");
        assert_eq!(r.fresh(), 0, "once");
        // Nothing fresh: a random entropy among the 64.
        let explored: Vec<u16> = (0..32).map(|_| r.next(t)).collect();
        assert!(explored.iter().all(|&e| e < 64));
        assert!(explored.iter().any(|&e| e != explored[0]), "{explored:?}");
    }

    #[test]
    fn reps_reuses_in_the_order_entropies_came_back_and_keeps_the_latest_eight() {
        let mut r = reps();
        let t = Time::ZERO;
        for e in 0..10 {
            r.feedback(t, e, Feedback::Good);
        }
        assert_eq!(r.fresh(), 8);
        let reused: Vec<u16> = (0..8).map(|_| r.next(t)).collect();
        assert_eq!(reused, vec![2, 3, 4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn a_timeout_freezes_the_ring_which_is_then_reused_round_and_round_until_it_thaws() {
        let mut r = reps();
        let t = Time::from_us(1);
        for e in [3, 4] {
            r.feedback(t, e, Feedback::Good);
        }
        r.timeout(t);
        assert!(r.frozen());
        let round: Vec<u16> = (0..5).map(|_| r.next(t)).collect();
        assert_eq!(round, vec![3, 4, 3, 4, 3]);
        // 10 ms later the next feedback thaws it: the ring is cleared and 16 random entropies explored.
        r.feedback(t + Time::from_ms(11), 60, Feedback::Marked);
        assert!(!r.frozen());
        assert_eq!(r.fresh(), 0);
        assert_eq!(r.explore, 16);
    }

    #[test]
    fn oblivious_spraying_uses_every_entropy_once_per_cycle() {
        let mut p = Paths::new(PathChoice::Oblivious, &EntropyConfig::default(), || 3);
        for _ in 0..3 {
            let mut cycle: Vec<u16> = (0..64).map(|_| p.next(Time::ZERO).unwrap()).collect();
            cycle.sort_unstable();
            assert_eq!(cycle, (0..64).collect::<Vec<u16>>());
        }
        assert_eq!(
            Paths::new(PathChoice::Flow, &EntropyConfig::default(), || 3).next(Time::ZERO),
            None
        );
    }

    #[test]
    fn entropies_spread_the_route_hash_and_bad_counts_are_refused() {
        let hashes: std::collections::BTreeSet<u32> =
            (0..64).map(|e| route_hash(0xdead_beef, e)).collect();
        assert_eq!(hashes.len(), 64);
        let bad = EntropyConfig {
            entropies: 48,
            ..EntropyConfig::default()
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .contains("nic.entropy.entropies")
        );
    }
}
