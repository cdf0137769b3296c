//! The shared-buffer memory management unit of a switch (BCC §II-B), as a pure module:
//! `admit` / `release`, tested without the event loop.
//!
//! Each egress queue owns a static reserve; bytes beyond it come from the shared pool its port belongs to. A
//! switch may have several pools (BCC's "3 MB per 8 ports", Tomahawk-style). Admission into the shared part
//! follows Dynamic Threshold (Choudhury & Hahne): with `free = B − Σ shared`, a packet is admitted to queue i
//! while `shared_i < α_i · free`, so M saturated queues settle at `α·B / (1 + M·α)` each (BCC §II-B, eq. 1).
//! [`Admission::BccNs2`] is the variant the BCC authors' ns-2 switch runs instead.

use serde::{Deserialize, Serialize};

/// How the buffer admits packets and charges them to a queue's reserve or its pool (`switch.admission`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Admission {
    /// Choudhury & Hahne's Dynamic Threshold over a static reserve (BCC §II-B): a queue's first `reserve`
    /// bytes are its own, and beyond them a packet is admitted while the queue's shared bytes are below
    /// `α · free`. Which packet holds which bytes does not matter.
    #[default]
    DynamicThreshold,
    /// The BCC authors' ns-2 switch (`MyRED::buffer_overfill` and `MyRED::deque` in baiwei0427/
    /// buffer-management), which BCC's simulations (§V) ran. A packet takes the queue's reserve if the
    /// queue's bytes plus its own plus the reserve counter stay within the reserve, adding the queue's bytes
    /// plus its own to the counter; else it is admitted to the pool while the queue's bytes plus its own (all
    /// of them, reserve included) are at most `α · free`. Leaving, a reserve packet takes only its own size
    /// off the counter, so every packet that took the reserve behind others leaves their bytes counted: the
    /// reserve fills up for good and busy queues compete in the pool with nothing of their own. 8 saturated
    /// queues of a 3 MiB pool at α = 4 then hold about 381 KB each, where [`Admission::DynamicThreshold`]
    /// with a 128 KiB reserve gives 512 KB. One departure from the original: a packet that does not fit in
    /// what is left of the pool is dropped ([`DropReason::PoolFull`]), where ns-2 could overfill the pool by
    /// less than one packet.
    BccNs2,
}

/// Where a queued packet's bytes are counted, for its release: [`Mmu::admit`] says, [`Mmu::release_charged`]
/// is told ([`Mmu::release`] assumes [`Charge::ByLevel`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// By the queue's level ([`Admission::DynamicThreshold`]): its first `reserve` bytes are reserve, the
    /// rest shared, whichever packets hold them.
    ByLevel,
    /// In the queue's reserve ([`Admission::BccNs2`]; ns-2's `pri_ = 1`).
    Reserve,
    /// In the pool ([`Admission::BccNs2`]).
    Shared,
}

/// Why a packet was dropped. Every drop in a run is counted under one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropReason {
    /// The shared pool had no room for the packet.
    PoolFull,
    /// The queue was at its Dynamic Threshold limit (BCC §II-B).
    DynamicThreshold,
    /// Lost on the wire on purpose (fault injection, e.g. BFC's PAUSE/RESUME frames to test the refresh).
    InjectedLoss,
    /// A lossless (PFC) packet found its ingress headroom full: the PAUSE came too late, a lossless violation
    /// ([`crate::pfc::Admission::Drop`]).
    HeadroomFull,
    /// An ExpressPass credit found its port's credit queue full: how ExpressPass signals congestion (§3.1).
    CreditQueueFull,
}

impl DropReason {
    /// Every reason.
    pub const ALL: [DropReason; 5] = [
        DropReason::PoolFull,
        DropReason::DynamicThreshold,
        DropReason::InjectedLoss,
        DropReason::HeadroomFull,
        DropReason::CreditQueueFull,
    ];

    /// Whether reports list this reason even when nothing was dropped for it: the buffer's reasons are always
    /// listed, a scheme's own (credits) only when it dropped something, so that runs without the scheme keep
    /// their reports.
    pub fn always_reported(self) -> bool {
        self != DropReason::CreditQueueFull
    }

    /// A short stable name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::PoolFull => "pool-full",
            DropReason::DynamicThreshold => "dynamic-threshold",
            DropReason::InjectedLoss => "injected-loss",
            DropReason::HeadroomFull => "headroom-full",
            DropReason::CreditQueueFull => "credit-queue-full",
        }
    }
}

/// The buffer layout of one switch, resolved from the configuration.
#[derive(Clone, Debug)]
pub struct MmuLayout {
    /// Never drop: every packet is admitted (ideal baselines, BFC's artifact). Occupancy is still counted.
    pub unlimited: bool,
    /// Size of each shared pool in bytes.
    pub pool_size: Vec<u64>,
    /// The pool of each local port.
    pub pool_of_port: Vec<u16>,
    /// Queues per port.
    pub queues_per_port: usize,
    /// Static reserve of every queue, in bytes.
    pub reserve: u64,
    /// Dynamic Threshold α of each queue index (same for every port).
    pub alpha: Vec<f64>,
    /// How packets are admitted and charged.
    pub admission: Admission,
}

/// Occupancy and admission state of one switch's buffer.
///
/// Laid out by how often a packet touches it: the bytes each queue holds, 8 bytes per queue so that the
/// queues of a port share a few lines (under BFC a port's 32 queues take turns, and a 32-byte entry per queue
/// with its α and pool beside the bytes made admission BFC's fifth source of cache misses), and small tables
/// read by every packet and so always cached: α by queue index, the pool of each port, the pools.
#[derive(Clone, Debug)]
pub struct Mmu {
    /// Bytes held per (port, queue), port-major, reserve and shared together.
    bytes: Vec<u64>,
    /// Dynamic Threshold α by queue index (the same at every port).
    alpha: Vec<f64>,
    /// The pool of each local port.
    pool_of_port: Vec<u32>,
    /// [`Admission::BccNs2`]'s reserve counter (`reserve_buf_len_`) per (port, queue); empty otherwise.
    reserve_count: Vec<u64>,
    pools: Vec<Pool>,
    queues_per_port: usize,
    reserve: u64,
    unlimited: bool,
    admission: Admission,
    /// Total bytes held by the switch.
    total: u64,
    /// Releases of more than a queue held (a bookkeeping bug); checked by the end-of-run invariants.
    underflows: u64,
}

#[derive(Clone, Copy, Debug)]
struct Pool {
    size: u64,
    /// Shared bytes in use.
    used: u64,
    /// Highest shared use reached.
    peak: u64,
}

impl Pool {
    /// Counts `extra` shared bytes in.
    #[inline(always)]
    fn take(&mut self, extra: u64) {
        self.used += extra;
        self.peak = self.peak.max(self.used);
    }
}

impl Mmu {
    /// An empty buffer with this layout.
    pub fn new(layout: MmuLayout) -> Mmu {
        assert_eq!(
            layout.alpha.len(),
            layout.queues_per_port,
            "one α per queue index"
        );
        let queues = layout.pool_of_port.len() * layout.queues_per_port;
        let pools = layout
            .pool_size
            .iter()
            .map(|&size| Pool {
                size,
                used: 0,
                peak: 0,
            })
            .collect();
        Mmu {
            bytes: vec![0; queues],
            reserve_count: if layout.admission == Admission::BccNs2 {
                vec![0; queues]
            } else {
                Vec::new()
            },
            pool_of_port: layout.pool_of_port.iter().map(|&p| p as u32).collect(),
            alpha: layout.alpha,
            pools,
            queues_per_port: layout.queues_per_port,
            reserve: layout.reserve,
            unlimited: layout.unlimited,
            admission: layout.admission,
            total: 0,
            underflows: 0,
        }
    }

    #[inline]
    fn qi(&self, port: usize, queue: usize) -> usize {
        port * self.queues_per_port + queue
    }

    #[inline]
    fn shared_of(&self, bytes: u64) -> u64 {
        bytes.saturating_sub(self.reserve)
    }

    /// Tries to take `bytes` for a packet entering `queue` of local `port`; says where they are counted.
    /// Always inlined: it runs for every packet entering a switch queue.
    #[inline(always)]
    pub fn admit(&mut self, port: usize, queue: usize, bytes: u64) -> Result<Charge, DropReason> {
        let qi = self.qi(port, queue);
        if self.admission == Admission::BccNs2 {
            return self.admit_bcc_ns2(port, queue, bytes);
        }
        let (reserve, unlimited) = (self.reserve, self.unlimited);
        let pool = &mut self.pools[self.pool_of_port[port] as usize];
        let held = &mut self.bytes[qi];
        let extra = (*held + bytes).saturating_sub(reserve) - held.saturating_sub(reserve);
        if extra > 0 && !unlimited {
            if pool.used + extra > pool.size {
                return Err(DropReason::PoolFull);
            }
            // Byte counts fit in an i64, whose conversion to f64 is one instruction where a u64's is a
            // branching sequence; the values, and so the decision, are the same.
            let free = (pool.size - pool.used) as i64 as f64;
            if held.saturating_sub(reserve) as i64 as f64 >= self.alpha[queue] * free {
                return Err(DropReason::DynamicThreshold);
            }
        }
        *held += bytes;
        pool.take(extra);
        self.total += bytes;
        Ok(Charge::ByLevel)
    }

    /// [`Admission::BccNs2`]'s admission (`MyRED::buffer_overfill`).
    #[inline(never)]
    fn admit_bcc_ns2(
        &mut self,
        port: usize,
        queue: usize,
        bytes: u64,
    ) -> Result<Charge, DropReason> {
        let qi = self.qi(port, queue);
        let len = self.bytes[qi] + bytes;
        if len + self.reserve_count[qi] <= self.reserve {
            self.reserve_count[qi] += len;
            self.take(port, qi, bytes, 0);
            return Ok(Charge::Reserve);
        }
        if !self.unlimited {
            let pool = &self.pools[self.pool_of_port[port] as usize];
            if pool.used + bytes > pool.size {
                return Err(DropReason::PoolFull);
            }
            if len as i64 as f64 > self.alpha[queue] * (pool.size - pool.used) as i64 as f64 {
                return Err(DropReason::DynamicThreshold);
            }
        }
        self.take(port, qi, bytes, bytes);
        Ok(Charge::Shared)
    }

    /// Takes `bytes` for a packet of a lossless (PFC) priority entering `queue` of local `port`, without the
    /// pool or Dynamic Threshold test: PFC's ingress admission ([`crate::pfc::PfcIngress::admit`]) has already
    /// granted the bytes, and a lossless packet must not be dropped at egress. HPCC's ns-3 does the same:
    /// `SwitchMmu::CheckEgressAdmission` always returns true. The bytes are counted like [`Mmu::admit`]'s, so
    /// occupancy, ECN and [`Mmu::violations`] (a pool over its size) still see them.
    #[inline]
    pub fn admit_lossless(&mut self, port: usize, queue: usize, bytes: u64) -> Charge {
        let qi = self.qi(port, queue);
        if self.admission == Admission::BccNs2 {
            self.take(port, qi, bytes, bytes);
            return Charge::Shared;
        }
        let held = self.bytes[qi];
        let extra = self.shared_of(held + bytes) - self.shared_of(held);
        self.take(port, qi, bytes, extra);
        Charge::ByLevel
    }

    /// Counts `bytes` into queue `qi` of local `port`, `extra` of them from the port's pool's shared part.
    #[inline]
    fn take(&mut self, port: usize, qi: usize, bytes: u64, extra: u64) {
        self.bytes[qi] += bytes;
        self.pools[self.pool_of_port[port] as usize].take(extra);
        self.total += bytes;
    }

    /// Returns `bytes` of a packet leaving `queue` of local `port` that [`Mmu::admit`] charged
    /// [`Charge::ByLevel`].
    #[inline]
    pub fn release(&mut self, port: usize, queue: usize, bytes: u64) {
        let qi = self.qi(port, queue);
        let pool = self.pool_of_port[port] as usize;
        let (held, after) = self.drain(qi, bytes);
        let shared = self.shared_of(held) - self.shared_of(after);
        self.pools[pool].used -= shared;
    }

    /// Returns `bytes` of a packet leaving `queue` of local `port`, counted where its admission said.
    #[inline(never)]
    pub fn release_charged(&mut self, port: usize, queue: usize, bytes: u64, charge: Charge) {
        let qi = self.qi(port, queue);
        match charge {
            Charge::ByLevel => self.release(port, queue, bytes),
            Charge::Reserve => {
                self.drain(qi, bytes);
                // ns-2 takes off the packet's size only; what its admission added for the queue stays.
                let count = &mut self.reserve_count[qi];
                *count = count.saturating_sub(bytes);
            }
            Charge::Shared => {
                let (held, after) = self.drain(qi, bytes);
                let pool = self.pool_of_port[port] as usize;
                self.pools[pool].used -= held - after;
            }
        }
    }

    /// Takes `bytes` off queue `qi` and the switch's total (counting a release of more than the queue held);
    /// returns the queue's bytes before and after.
    #[inline(always)]
    fn drain(&mut self, qi: usize, bytes: u64) -> (u64, u64) {
        let held = self.bytes[qi];
        if bytes > held {
            self.underflows += 1;
        }
        let after = held.saturating_sub(bytes);
        self.bytes[qi] = after;
        self.total -= held - after;
        (held, after)
    }

    /// Bytes held by the whole switch.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }
    /// Bytes held by one queue.
    pub fn queue_bytes(&self, port: usize, queue: usize) -> u64 {
        self.bytes[self.qi(port, queue)]
    }
    /// Bytes held by all queues of one port.
    pub fn port_bytes(&self, port: usize) -> u64 {
        let q = self.queues_per_port;
        self.bytes[port * q..(port + 1) * q].iter().sum()
    }
    /// Shared bytes in use in `pool`.
    #[inline]
    pub fn pool_used(&self, pool: usize) -> u64 {
        self.pools[pool].used
    }
    /// The pool of local `port`.
    #[inline]
    pub fn pool_of(&self, port: usize) -> usize {
        self.pool_of_port[port] as usize
    }
    /// Size of `pool` in bytes.
    pub fn pool_size(&self, pool: usize) -> u64 {
        self.pools[pool].size
    }
    /// Number of pools.
    pub fn pools(&self) -> usize {
        self.pools.len()
    }
    /// Dynamic Threshold α of `queue` (the same index at every port).
    pub fn alpha(&self, queue: usize) -> f64 {
        self.alpha[queue]
    }
    /// Static reserve of every queue, in bytes.
    pub fn reserve(&self) -> u64 {
        self.reserve
    }
    /// Invariant violations seen so far: pools that went over their size, and releases of bytes not held.
    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        if !self.unlimited {
            for (i, &Pool { size, peak, .. }) in self.pools.iter().enumerate() {
                if peak > size {
                    v.push(format!("pool {i} reached {peak} B, over its {size} B"));
                }
            }
        }
        if self.underflows > 0 {
            v.push(format!(
                "{} releases of bytes a queue did not hold",
                self.underflows
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(ports: usize, pool: u64, reserve: u64, alpha: f64) -> MmuLayout {
        MmuLayout {
            unlimited: false,
            pool_size: vec![pool],
            pool_of_port: vec![0; ports],
            queues_per_port: 1,
            reserve,
            alpha: vec![alpha],
            admission: Admission::DynamicThreshold,
        }
    }

    /// Fill M queues round-robin until none admits more: each settles within one packet of α·B/(1+M·α), under
    /// both admissions (no reserve: the state the ns-2 one's reserve ends in).
    #[test]
    fn dynamic_threshold_steady_state() {
        let (b, pkt) = (3_000_000u64, 1_048u64);
        let cases = [(1usize, 1.0), (2, 1.0), (4, 4.0), (8, 0.5), (3, 2.0)];
        for ((m, alpha), admission) in cases
            .into_iter()
            .flat_map(|c| [(c, Admission::DynamicThreshold), (c, Admission::BccNs2)])
        {
            let mut mmu = Mmu::new(MmuLayout {
                admission,
                ..layout(m, b, 0, alpha)
            });
            let mut progress = true;
            while progress {
                progress = false;
                for q in 0..m {
                    progress |= mmu.admit(q, 0, pkt).is_ok();
                }
            }
            let target = alpha * b as f64 / (1.0 + m as f64 * alpha);
            for q in 0..m {
                let got = mmu.queue_bytes(q, 0) as f64;
                assert!(
                    (got - target).abs() <= pkt as f64,
                    "{admission:?} M={m} α={alpha}: {got} vs {target}"
                );
            }
        }
    }

    /// The BCC authors' ns-2 admission: the reserve counter grows by the queue's bytes plus the packet's and
    /// shrinks by the packet's alone, so it leaks; the pool admits while the whole queue plus the packet is
    /// at most α·free.
    #[test]
    fn bcc_ns2_reserve_leaks_and_the_whole_queue_is_tested() {
        let mut mmu = Mmu::new(MmuLayout {
            admission: Admission::BccNs2,
            ..layout(1, 10_000, 5_000, 1.0)
        });
        // Counter 0 + 1000, then 1000 + 2000: both fit in 5000; the third (3000 + 3000) does not.
        assert_eq!(mmu.admit(0, 0, 1_000), Ok(Charge::Reserve));
        assert_eq!(mmu.admit(0, 0, 1_000), Ok(Charge::Reserve));
        assert_eq!(mmu.admit(0, 0, 1_000), Ok(Charge::Shared));
        assert_eq!(mmu.pool_used(0), 1_000);
        for charge in [Charge::Reserve, Charge::Reserve, Charge::Shared] {
            mmu.release_charged(0, 0, 1_000, charge);
        }
        assert_eq!((mmu.total(), mmu.pool_used(0)), (0, 0));
        // 1000 of the counter stayed. Rounds of two packets in and out: each second packet that takes the
        // reserve leaves the first's 1000 behind, until the counter (3000) lets only one packet in.
        let reserved: Vec<usize> = (0..5)
            .map(|_| {
                let charges = [mmu.admit(0, 0, 1_000), mmu.admit(0, 0, 1_000)].map(Result::unwrap);
                for charge in charges {
                    mmu.release_charged(0, 0, 1_000, charge);
                }
                charges.iter().filter(|&&c| c == Charge::Reserve).count()
            })
            .collect();
        assert_eq!(reserved, [2, 2, 1, 1, 1]);
        // One packet in the reserve, then into the pool while queue + packet <= free: 2000 <= 10000, 3000 <=
        // 9000, 4000 <= 8000, 5000 <= 7000, 6000 <= 6000.
        assert_eq!(mmu.admit(0, 0, 1_000), Ok(Charge::Reserve));
        for _ in 0..5 {
            assert_eq!(mmu.admit(0, 0, 1_000), Ok(Charge::Shared));
        }
        assert_eq!(
            mmu.admit(0, 0, 1_000),
            Err(DropReason::DynamicThreshold),
            "7000 > 5000"
        );
        assert_eq!((mmu.queue_bytes(0, 0), mmu.pool_used(0)), (6_000, 5_000));
        assert!(mmu.violations().is_empty());
    }

    #[test]
    fn reserve_is_used_first_and_release_balances() {
        let mut mmu = Mmu::new(layout(2, 10_000, 2_000, 1.0));
        assert_eq!(mmu.admit(0, 0, 1_500), Ok(Charge::ByLevel));
        assert_eq!(mmu.pool_used(0), 0);
        mmu.admit(0, 0, 1_500).unwrap();
        assert_eq!(mmu.pool_used(0), 1_000);
        assert_eq!(mmu.total(), 3_000);
        mmu.release(0, 0, 1_500);
        assert_eq!(mmu.pool_used(0), 0);
        mmu.release(0, 0, 1_500);
        assert_eq!(mmu.total(), 0);
        assert!(mmu.violations().is_empty());
        mmu.release(0, 0, 1);
        assert_eq!(mmu.violations().len(), 1);
    }

    /// Lossless admission skips Dynamic Threshold and the pool limit but is counted, and a pool driven over its
    /// size shows up as a violation.
    #[test]
    fn admit_lossless_counts_without_checks() {
        let mut mmu = Mmu::new(layout(1, 2_000, 0, 0.5));
        mmu.admit(0, 0, 1_000).unwrap();
        assert_eq!(mmu.admit(0, 0, 1_000), Err(DropReason::DynamicThreshold));
        mmu.admit_lossless(0, 0, 1_000);
        assert_eq!((mmu.queue_bytes(0, 0), mmu.pool_used(0)), (2_000, 2_000));
        assert!(mmu.violations().is_empty());
        mmu.admit_lossless(0, 0, 500);
        assert_eq!(mmu.total(), 2_500);
        assert_eq!(mmu.violations().len(), 1);
        mmu.release(0, 0, 2_500);
        assert_eq!((mmu.total(), mmu.pool_used(0)), (0, 0));
    }

    #[test]
    fn pool_full_and_unlimited() {
        let mut mmu = Mmu::new(layout(1, 2_000, 0, 1000.0));
        mmu.admit(0, 0, 1_500).unwrap();
        assert_eq!(mmu.admit(0, 0, 1_500), Err(DropReason::PoolFull));
        let mut l = layout(1, 2_000, 0, 1.0);
        l.unlimited = true;
        let mut mmu = Mmu::new(l);
        for _ in 0..100 {
            mmu.admit(0, 0, 1_500).unwrap();
        }
        assert_eq!(mmu.total(), 150_000);
    }
}
