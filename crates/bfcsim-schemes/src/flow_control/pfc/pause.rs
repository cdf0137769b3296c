//! The upstream side of PFC: which priorities a transmitting port was told to stop and for how long
//! ([`PortPause`]).

use bfcsim_core::Time;

use super::config::MAX_PRIORITIES;

/// Which priorities an upstream transmitting port has been told to stop (ns-3 `QbbNetDevice::m_paused`), and
/// for how long: BFC §6.2.2 reports "the fraction of time links were paused due to PFC".
#[derive(Clone, Debug)]
pub struct PortPause {
    mask: u64,
    since: Vec<Time>,
    total: Vec<Time>,
    any_since: Time,
    any_total: Time,
    pauses: u64,
}

impl PortPause {
    /// No priority paused; `priorities` ≤ [`MAX_PRIORITIES`].
    pub fn new(priorities: usize) -> PortPause {
        assert!(priorities <= MAX_PRIORITIES, "at most 64 priorities");
        PortPause {
            mask: 0,
            since: vec![Time::ZERO; priorities],
            total: vec![Time::ZERO; priorities],
            any_since: Time::ZERO,
            any_total: Time::ZERO,
            pauses: 0,
        }
    }

    /// A PAUSE for `prio` arrived at `now`. Returns whether it paused the priority (a PAUSE for a paused
    /// priority changes nothing: no quanta, see the module doc).
    pub fn handle_pause(&mut self, prio: u8, now: Time) -> bool {
        let bit = 1u64 << prio;
        if self.mask & bit != 0 {
            return false;
        }
        if self.mask == 0 {
            self.any_since = now;
        }
        self.mask |= bit;
        self.since[prio as usize] = now;
        self.pauses += 1;
        true
    }

    /// A RESUME for `prio` arrived at `now`. Returns whether it resumed the priority (ns-3 asserts it was
    /// paused; we ignore a stray RESUME).
    pub fn handle_resume(&mut self, prio: u8, now: Time) -> bool {
        let bit = 1u64 << prio;
        if self.mask & bit == 0 {
            return false;
        }
        self.mask &= !bit;
        let p = prio as usize;
        self.total[p] += now.saturating_sub(self.since[p]);
        if self.mask == 0 {
            self.any_total += now.saturating_sub(self.any_since);
        }
        true
    }

    /// Whether `prio` may not be sent.
    #[inline]
    pub fn is_paused(&self, prio: u8) -> bool {
        self.mask & (1 << prio) != 0
    }
    /// The paused priorities as a bitmask (bit `p` for priority `p`).
    #[inline]
    pub fn paused_mask(&self) -> u64 {
        self.mask
    }
    /// PAUSE frames that paused a priority.
    pub fn pauses(&self) -> u64 {
        self.pauses
    }

    /// Time `prio` has spent paused up to `now`, counting an ongoing pause.
    pub fn paused_time(&self, prio: u8, now: Time) -> Time {
        let p = prio as usize;
        let ongoing = if self.is_paused(prio) {
            now.saturating_sub(self.since[p])
        } else {
            Time::ZERO
        };
        self.total[p] + ongoing
    }
    /// Time with at least one priority paused, up to `now`: the link's paused time.
    pub fn paused_time_any(&self, now: Time) -> Time {
        let ongoing = if self.mask != 0 {
            now.saturating_sub(self.any_since)
        } else {
            Time::ZERO
        };
        self.any_total + ongoing
    }
    /// Fraction of `[0, now]` that `prio` spent paused (0 at time zero). For reports only.
    pub fn paused_fraction(&self, prio: u8, now: Time) -> f64 {
        fraction(self.paused_time(prio, now), now)
    }
    /// Fraction of `[0, now]` with at least one priority paused. For reports only.
    pub fn paused_fraction_any(&self, now: Time) -> f64 {
        fraction(self.paused_time_any(now), now)
    }
}

fn fraction(part: Time, whole: Time) -> f64 {
    if whole == Time::ZERO {
        0.0
    } else {
        part.ps() as f64 / whole.ps() as f64
    }
}
