//! Network priority levels for receiver-driven transports (Homa §3 "Packet priorities"; PayDebt's variant with
//! eight priority queues): the split of the switches' levels between unscheduled and scheduled traffic in
//! proportion to the bytes each carries in the workload, the unscheduled cutoffs, cut from the workload's message
//! sizes so that each unscheduled level carries about the same unscheduled bytes (smaller messages on higher
//! levels), and the scheduled level of a message by its rank among those its receiver schedules.
//!
//! Level 0 is the highest (the switch model serves its strict-priority classes from 0).

/// The priority levels of a run: which go to unscheduled packets and the message sizes that choose among them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Priorities {
    /// Unscheduled level `i` (0 highest) carries messages of at most `cutoffs[i]` bytes; the last is `u64::MAX`.
    cutoffs: Vec<u64>,
    /// Scheduled levels: `unscheduled()..total`.
    total: u32,
}

impl Priorities {
    /// `levels` levels for a workload whose messages have `sizes` bytes (any order; the run's own messages stand
    /// for the size distribution) and send their first `rtt` bytes unscheduled; `unscheduled` of them for
    /// unscheduled packets, or 0 to derive that count from the workload.
    pub fn from_sizes(levels: u32, unscheduled: u32, rtt: u64, sizes: &[u64]) -> Priorities {
        let total = levels;
        let mut sizes = sizes.to_vec();
        sizes.sort_unstable();
        let unsched_bytes: u128 = sizes.iter().map(|&s| s.min(rtt) as u128).sum();
        let total_bytes: u128 = sizes.iter().map(|&s| s as u128).sum();
        let levels = if unscheduled > 0 {
            unscheduled
        } else if total_bytes == 0 {
            1
        } else {
            let share = unsched_bytes as f64 / total_bytes as f64;
            ((share * total as f64).round() as u32).clamp(1, total - 1)
        };
        // Cut where the cumulative unscheduled bytes pass each 1/levels of their total (smallest first).
        let mut cutoffs = Vec::with_capacity(levels as usize);
        let mut acc = 0u128;
        let mut next = 1;
        for &s in &sizes {
            acc += s.min(rtt) as u128;
            while next < levels && acc * levels as u128 >= unsched_bytes * next as u128 {
                if cutoffs.last() != Some(&s) {
                    cutoffs.push(s);
                }
                next += 1;
            }
        }
        cutoffs.truncate(levels as usize - 1);
        cutoffs.push(u64::MAX);
        Priorities { cutoffs, total }
    }

    /// All levels, unscheduled and scheduled.
    pub fn levels(&self) -> u32 {
        self.total
    }

    /// Levels given to unscheduled packets: `0..unscheduled()`.
    pub fn unscheduled(&self) -> u32 {
        self.cutoffs.len() as u32
    }

    /// The level of the unscheduled packets of a message of `size` bytes (§3 "Packet priorities": set by the
    /// sender from the message's size).
    pub fn unscheduled_level(&self, size: u64) -> u8 {
        self.cutoffs.partition_point(|&c| c < size) as u8
    }

    /// Scheduled levels (`total - unscheduled()`).
    pub fn scheduled(&self) -> u32 {
        self.total - self.unscheduled()
    }

    /// The scheduled level of the message ranked `rank` (0: fewest bytes left) among `n` granted ones: the
    /// highest scheduled level for rank 0 when every level is used, the lowest `n` levels otherwise (§3 "Packet
    /// priorities": leaving the higher ones free for shorter messages that come later).
    pub fn scheduled_level(&self, rank: u32, n: u32) -> u8 {
        let s = self.scheduled();
        let n = n.min(s);
        (self.unscheduled() + (s - n) + rank.min(n - 1)) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_split_by_bytes_and_cutoffs_by_equal_unscheduled_bytes() {
        // 90 messages of 1 KB and 10 of 1 MB: unscheduled bytes 90 KB + 100 KB of 10.09 MB in all, 1.9%:
        // one unscheduled level of 8.
        let mut sizes = vec![1_000; 90];
        sizes.extend([1_000_000; 10]);
        let p = Priorities::from_sizes(8, 0, 10_000, &sizes);
        assert_eq!((p.unscheduled(), p.scheduled()), (1, 7));
        assert_eq!(p.unscheduled_level(1), 0);
        assert_eq!(p.unscheduled_level(u64::MAX), 0);
        // All short messages: every byte unscheduled, so all levels but one; cutoffs at equal byte shares.
        let sizes: Vec<u64> = (1..=100).map(|i| i * 100).collect();
        let p = Priorities::from_sizes(4, 0, 10_000, &sizes);
        assert_eq!(p.unscheduled(), 3);
        // Unscheduled bytes 100·5050 = 505,000: a third is passed at 5,800 (171,100 ≥ 168,333) and two
        // thirds at 8,200 (340,300 ≥ 336,667).
        assert_eq!(p.cutoffs, vec![5_800, 8_200, u64::MAX]);
        assert_eq!(p.unscheduled_level(5_800), 0);
        assert_eq!(p.unscheduled_level(5_801), 1);
        assert_eq!(p.unscheduled_level(1_000_000), 2);
        assert_eq!(
            Priorities::from_sizes(4, 2, 10_000, &sizes).unscheduled(),
            2
        );
    }

    #[test]
    fn fewer_granted_messages_than_levels_use_the_lowest() {
        let p = Priorities {
            cutoffs: vec![u64::MAX],
            total: 8,
        };
        // Seven scheduled levels, 1..=7; two messages take 6 and 7, the shorter 6.
        assert_eq!(p.scheduled_level(0, 2), 6);
        assert_eq!(p.scheduled_level(1, 2), 7);
        assert_eq!(p.scheduled_level(0, 7), 1);
        assert_eq!(p.scheduled_level(6, 9), 7);
    }
}
