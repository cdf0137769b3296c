//! A receiver's credit rate for one flow and its feedback loop (ExpressPass §3.2, Algorithm 1), sans-IO.
//!
//! Call order: [`CreditFeedback::new`] when the flow's credit request arrives; before each credit,
//! [`CreditFeedback::poll_update`] (runs the loop once per update period, one RTT) and then
//! [`CreditFeedback::next_credit`] (the credit's sequence number and the gap to the next one); for each data
//! packet, [`CreditFeedback::on_data`] with the sequence number of the credit it answers and that credit's send
//! time. A credit the data does not echo (dropped on the way, or wasted at a sender with nothing to send) counts
//! as lost once a later credit is echoed, as in ns-2's `recv_data`.

use bfcsim_core::{Rate, Time};

use super::{ExpressPassConfig, WIncrease};

/// The per-flow credit rate controller of an ExpressPass receiver.
#[derive(Clone, Debug)]
pub struct CreditFeedback {
    /// The largest credit rate, bits per second: the credit share of the receiver's link.
    max_rate: f64,
    /// The current credit rate, bits per second.
    rate: f64,
    w: f64,
    /// The last period increased the rate (Algorithm 1's "previous phase was increasing").
    increasing: bool,
    /// Smoothed credit-to-data round trip (ns-2's `rtt_`: 0.8 old + 0.2 new); the update period.
    rtt: Option<Time>,
    last_update: Time,
    /// Credits accounted since the last update (echoed, or skipped by an echo) and the skipped ones.
    total: u64,
    dropped: u64,
    /// The next credit sequence number an echo should carry.
    next_echo: u64,
    /// The sequence number of the next credit.
    next_seq: u64,
    credit_bits: f64,
    cfg: ExpressPassConfig,
}

impl CreditFeedback {
    /// A flow of `packets` packets whose credits may go at most at `max_rate`, starting now at
    /// `α · max_rate`, scaled down for a flow of fewer than `small_flow_packets` packets.
    pub fn new(cfg: &ExpressPassConfig, max_rate: Rate, packets: u64, now: Time) -> CreditFeedback {
        let max_rate = max_rate.bps() as f64;
        let small = cfg.small_flow_packets as u64;
        let scale = if packets < small {
            packets as f64 / small as f64
        } else {
            1.0
        };
        CreditFeedback {
            max_rate,
            rate: cfg.alpha * scale * max_rate,
            w: cfg.w_init,
            increasing: false,
            rtt: None,
            last_update: now,
            total: 0,
            dropped: 0,
            next_echo: 0,
            next_seq: 0,
            credit_bits: (cfg.credit_size.0 * 8) as f64,
            cfg: cfg.clone(),
        }
    }

    /// The current credit rate, bits per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The smoothed credit-to-data round trip, once a data packet has echoed a credit.
    pub fn rtt(&self) -> Option<Time> {
        self.rtt
    }

    /// A data packet answering credit `echo`, which was sent at `credit_sent`, arrived at `now`: the credits
    /// between the previous echo and this one were lost.
    pub fn on_data(&mut self, echo: u64, credit_sent: Time, now: Time) {
        if echo < self.next_echo {
            return; // a copy of data that already echoed this credit
        }
        let skipped = echo - self.next_echo;
        self.total += skipped + 1;
        self.dropped += skipped;
        self.next_echo = echo + 1;
        let sample = now.saturating_sub(credit_sent);
        self.rtt = Some(match self.rtt {
            Some(r) => Time((4 * r.0 + sample.0) / 5),
            None => sample,
        });
    }

    /// Runs Algorithm 1 if an update period (the smoothed RTT) has passed since the last run and credits were
    /// accounted: with the loss above the target, the rate drops to what got through (times 1 + target) and
    /// `w` halves; otherwise the rate moves a fraction `w` of the way to the largest rate and `w` grows when
    /// the previous period also increased.
    pub fn poll_update(&mut self, now: Time) {
        let Some(rtt) = self.rtt else { return };
        let period = now.saturating_sub(self.last_update);
        if period < rtt || self.total == 0 || rtt == Time::ZERO {
            return;
        }
        let old = self.rate;
        let loss = self.dropped as f64 / self.total as f64;
        let target = (1.0 - self.rate / self.max_rate) * self.cfg.target_loss_scaling;
        let min_rate = self.credit_bits / rtt.secs_f64();
        if loss > target {
            self.rate = if loss >= 1.0 {
                min_rate
            } else {
                // ns-2: the credit rate that got through in the period, times 1 + target.
                let through = (self.total - self.dropped) as f64 * self.credit_bits;
                (through / period.secs_f64() * (1.0 + target)).min(old)
            };
            self.w = (self.w / 2.0).max(self.cfg.w_min);
            self.increasing = false;
        } else {
            if self.increasing {
                self.w = match self.cfg.w_increase {
                    WIncrease::Step => (self.w + 0.05).min(self.cfg.w_max),
                    WIncrease::Halfway => (self.w + self.cfg.w_max) / 2.0,
                };
            } else {
                self.increasing = true;
            }
            if self.rate < self.max_rate {
                self.rate = self.w * self.max_rate + (1.0 - self.w) * self.rate;
            }
        }
        self.rate = self.rate.min(self.max_rate).max(min_rate);
        self.total = 0;
        self.dropped = 0;
        self.last_update = now;
    }

    /// The next credit: its sequence number and the time until the one after it at the current rate, scaled by
    /// `1 + jitter · (2u − 1)` for a uniform draw `u` in [0, 1).
    pub fn next_credit(&mut self, u: f64) -> (u64, Time) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mean = self.credit_bits / self.rate * 1e12;
        let gap = mean * (1.0 + self.cfg.jitter * (2.0 * u - 1.0));
        (seq, Time(gap.round().max(1.0) as u64))
    }
}

pub use crate::receiver_driven::shaper::credit_rate;

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::Bytes;

    fn cfg() -> ExpressPassConfig {
        ExpressPassConfig {
            jitter: 0.0,
            ..ExpressPassConfig::default()
        }
    }

    const MAX: Rate = Rate(5_000_000_000);
    const RTT: Time = Time::from_us(10);

    /// Echoes credits `seqs` (each sent one RTT before `at`) and runs the loop at `at`.
    fn period(f: &mut CreditFeedback, seqs: impl IntoIterator<Item = u64>, at: Time) {
        for s in seqs {
            f.on_data(s, at - RTT, at);
        }
        f.poll_update(at);
    }

    #[test]
    fn starts_at_alpha_and_paces_credits_at_the_rate() {
        let mut f = CreditFeedback::new(&cfg(), MAX, 100, Time::ZERO);
        assert_eq!(f.rate(), 2.5e9);
        // 64 B = 512 bits at 2.5 Gb/s: 204.8 ns.
        assert_eq!(f.next_credit(0.3), (0, Time(204_800)));
        assert_eq!(f.next_credit(0.9).0, 1);
        let mut j = CreditFeedback::new(
            &ExpressPassConfig {
                jitter: 0.1,
                ..cfg()
            },
            MAX,
            100,
            Time::ZERO,
        );
        assert_eq!(j.next_credit(0.0).1, Time(184_320), "10% shorter");
        assert_eq!(j.next_credit(0.5).1, Time(204_800));
    }

    #[test]
    fn a_small_flow_starts_slower() {
        // Ten packets of forty: a quarter of alpha.
        let f = CreditFeedback::new(&cfg(), MAX, 10, Time::ZERO);
        assert_eq!(f.rate(), 0.5 * 0.25 * 5e9);
        let no_scaling = ExpressPassConfig {
            small_flow_packets: 0,
            ..cfg()
        };
        assert_eq!(
            CreditFeedback::new(&no_scaling, MAX, 1, Time::ZERO).rate(),
            2.5e9
        );
    }

    #[test]
    fn no_update_before_an_rtt_sample_or_within_a_period() {
        let mut f = CreditFeedback::new(&cfg(), MAX, 100, Time::ZERO);
        f.poll_update(Time::from_us(100));
        assert_eq!(f.rate(), 2.5e9, "no RTT yet");
        period(&mut f, 0..10, Time::from_us(110));
        let after = f.rate();
        assert!(after > 2.5e9);
        period(&mut f, 10..20, Time::from_us(115));
        assert_eq!(f.rate(), after, "half a period later");
    }

    #[test]
    fn lossless_periods_climb_towards_the_largest_rate_with_growing_w() {
        let mut f = CreditFeedback::new(&cfg(), MAX, 100, Time::ZERO);
        let mut seq = 0;
        let mut rates = Vec::new();
        for k in 1..=12 {
            period(&mut f, seq..seq + 10, RTT * k);
            seq += 10;
            rates.push(f.rate() / 1e9);
        }
        // w: 1/16 for the first increase, then +0.05 per period up to 0.5 (ns-2's step).
        let expect_first = 0.0625 * 5.0 + 0.9375 * 2.5;
        assert!((rates[0] - expect_first).abs() < 1e-9, "{rates:?}");
        let expect_second = 0.1125 * 5.0 + 0.8875 * expect_first;
        assert!((rates[1] - expect_second).abs() < 1e-9, "{rates:?}");
        assert!(rates.windows(2).all(|w| w[1] >= w[0]), "{rates:?}");
        assert!(rates[11] > 0.99 * 5.0, "{rates:?}");
        assert!(rates[11] <= 5.0);
    }

    #[test]
    fn halfway_increase_follows_algorithm_1() {
        let c = ExpressPassConfig {
            w_increase: WIncrease::Halfway,
            ..cfg()
        };
        let mut f = CreditFeedback::new(&c, MAX, 100, Time::ZERO);
        period(&mut f, 0..10, RTT);
        period(&mut f, 10..20, RTT * 2);
        // Second increasing period: w = (1/16 + 1/2) / 2.
        let first = 0.0625 * 5.0 + 0.9375 * 2.5;
        let w = (0.0625 + 0.5) / 2.0;
        assert!((f.rate() / 1e9 - (w * 5.0 + (1.0 - w) * first)).abs() < 1e-9);
    }

    #[test]
    fn loss_above_target_drops_to_what_got_through_and_halves_w() {
        let mut f = CreditFeedback::new(&cfg(), MAX, 100, Time::ZERO);
        // Echoes of 0, 2, 4, ... 18 in the first period: 10 of 19 credits lost.
        period(&mut f, (0..10).map(|i| 2 * i), RTT);
        // Target at 2.5 of 5 Gb/s: (1 - 0.5) * 0.125 = 6.25%; loss 9/19. The rate becomes the 10 credits that got
        // through over the 10 us period, times 1.0625: 10 * 512 bits / 10 us * 1.0625 = 544 Mb/s.
        assert!((f.rate() - 544e6).abs() < 1.0, "{}", f.rate());
        // A lossless period then increases with w halved to 1/32.
        period(&mut f, 19..30, RTT * 2);
        let expect = 0.03125 * 5e9 + 0.96875 * 544e6;
        assert!((f.rate() - expect).abs() < 1.0, "{}", f.rate());
    }

    #[test]
    fn heavy_loss_holds_the_rate_near_one_credit_per_rtt_and_w_at_its_floor() {
        let mut f = CreditFeedback::new(&cfg(), MAX, 100, Time::ZERO);
        let mut seq = 0;
        for k in 1..=10 {
            // Only every hundredth credit's data comes back: one credit per 10 us period.
            period(&mut f, [seq], RTT * k);
            seq += 100;
        }
        // What got through (512 bits per 10 us) times 1 + target, never below one credit per RTT.
        let floor = 512.0 / 10e-6;
        assert!(
            f.rate() >= floor && f.rate() <= floor * 1.0625 + 1.0,
            "{}",
            f.rate()
        );
        assert_eq!(f.w, 0.01);
    }

    #[test]
    fn a_repeated_echo_is_ignored() {
        let mut f = CreditFeedback::new(&cfg(), MAX, 100, Time::ZERO);
        f.on_data(3, Time::ZERO, RTT);
        f.on_data(3, Time::ZERO, RTT * 5);
        assert_eq!((f.total, f.dropped), (4, 3));
        assert_eq!(f.rtt(), Some(RTT));
    }

    #[test]
    fn credit_share_of_a_link() {
        // 64 B credits for 1048 B data packets at 100 Gb/s.
        let r = credit_rate(Rate::gbps(100), Bytes(64), Bytes(1048));
        assert_eq!(r.bps(), 100_000_000_000 * 64 / 1112);
    }
}
