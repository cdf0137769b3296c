//! The shared-buffer memory management unit of a switch (BCC §II-B), as a pure module:
//! `admit` / `release`, tested without the event loop.
//!
//! Each egress queue owns a static reserve; bytes beyond it come from the shared pool its port belongs to. A
//! switch may have several pools (BCC's "3 MB per 8 ports", Tomahawk-style). Admission into the shared part
//! follows Dynamic Threshold (Choudhury & Hahne): with `free = B − Σ shared`, a packet is admitted to queue i
//! while `shared_i < α_i · free`, so M saturated queues settle at `α·B / (1 + M·α)` each (BCC §II-B, eq. 1).

use serde::Serialize;

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
}

/// Occupancy and admission state of one switch's buffer.
///
/// The state a packet's admission touches sits together (one entry per queue with its bytes, α and pool; one
/// entry per pool with its size, use and peak), so that admitting a packet reads two cache lines, not six.
#[derive(Clone, Debug)]
pub struct Mmu {
    /// Per (port, queue), port-major.
    queues: Vec<QueueState>,
    pools: Vec<Pool>,
    queues_per_port: usize,
    reserve: u64,
    unlimited: bool,
    /// Total bytes held by the switch.
    total: u64,
    /// Releases of more than a queue held (a bookkeeping bug); checked by the end-of-run invariants.
    underflows: u64,
}

#[derive(Clone, Copy, Debug)]
struct QueueState {
    /// Bytes held, reserve and shared together.
    bytes: u64,
    /// Dynamic Threshold α.
    alpha: f64,
    /// The pool of the queue's port.
    pool: u32,
}

#[derive(Clone, Copy, Debug)]
struct Pool {
    size: u64,
    /// Shared bytes in use.
    used: u64,
    /// Highest shared use reached.
    peak: u64,
}

impl Mmu {
    /// An empty buffer with this layout.
    pub fn new(layout: MmuLayout) -> Mmu {
        assert_eq!(
            layout.alpha.len(),
            layout.queues_per_port,
            "one α per queue index"
        );
        let queues = layout
            .pool_of_port
            .iter()
            .flat_map(|&pool| {
                layout.alpha.iter().map(move |&alpha| QueueState {
                    bytes: 0,
                    alpha,
                    pool: pool as u32,
                })
            })
            .collect();
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
            queues,
            pools,
            queues_per_port: layout.queues_per_port,
            reserve: layout.reserve,
            unlimited: layout.unlimited,
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

    /// Tries to take `bytes` for a packet entering `queue` of local `port`. Always inlined: it runs for every
    /// packet entering a switch queue.
    #[inline(always)]
    pub fn admit(&mut self, port: usize, queue: usize, bytes: u64) -> Result<(), DropReason> {
        let qi = self.qi(port, queue);
        let q = self.queues[qi];
        let extra = self.shared_of(q.bytes + bytes) - self.shared_of(q.bytes);
        if extra > 0 && !self.unlimited {
            let pool = &self.pools[q.pool as usize];
            if pool.used + extra > pool.size {
                return Err(DropReason::PoolFull);
            }
            // Byte counts fit in an i64, whose conversion to f64 is one instruction where a u64's is a
            // branching sequence; the values, and so the decision, are the same.
            let free = (pool.size - pool.used) as i64 as f64;
            if self.shared_of(q.bytes) as i64 as f64 >= q.alpha * free {
                return Err(DropReason::DynamicThreshold);
            }
        }
        self.take(qi, bytes, extra);
        Ok(())
    }

    /// Takes `bytes` for a packet of a lossless (PFC) priority entering `queue` of local `port`, without the
    /// pool or Dynamic Threshold test: PFC's ingress admission ([`crate::pfc::PfcIngress::admit`]) has already
    /// granted the bytes, and a lossless packet must not be dropped at egress. HPCC's ns-3 does the same:
    /// `SwitchMmu::CheckEgressAdmission` always returns true. The bytes are counted like [`Mmu::admit`]'s, so
    /// occupancy, ECN and [`Mmu::violations`] (a pool over its size) still see them.
    #[inline]
    pub fn admit_lossless(&mut self, port: usize, queue: usize, bytes: u64) {
        let qi = self.qi(port, queue);
        let held = self.queues[qi].bytes;
        let extra = self.shared_of(held + bytes) - self.shared_of(held);
        self.take(qi, bytes, extra);
    }

    /// Counts `bytes` into queue `qi`, `extra` of them from its pool's shared part.
    #[inline]
    fn take(&mut self, qi: usize, bytes: u64, extra: u64) {
        let q = &mut self.queues[qi];
        q.bytes += bytes;
        let pool = &mut self.pools[q.pool as usize];
        pool.used += extra;
        pool.peak = pool.peak.max(pool.used);
        self.total += bytes;
    }

    /// Returns `bytes` of a packet leaving `queue` of local `port`.
    #[inline]
    pub fn release(&mut self, port: usize, queue: usize, bytes: u64) {
        let qi = self.qi(port, queue);
        let held = self.queues[qi].bytes;
        if bytes > held {
            self.underflows += 1;
        }
        let after = held.saturating_sub(bytes);
        let shared = self.shared_of(held) - self.shared_of(after);
        let q = &mut self.queues[qi];
        q.bytes = after;
        self.pools[q.pool as usize].used -= shared;
        self.total -= held - after;
    }

    /// Bytes held by the whole switch.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }
    /// Bytes held by one queue.
    pub fn queue_bytes(&self, port: usize, queue: usize) -> u64 {
        self.queues[self.qi(port, queue)].bytes
    }
    /// Bytes held by all queues of one port.
    pub fn port_bytes(&self, port: usize) -> u64 {
        let q = self.queues_per_port;
        self.queues[port * q..(port + 1) * q]
            .iter()
            .map(|q| q.bytes)
            .sum()
    }
    /// Shared bytes in use in `pool`.
    #[inline]
    pub fn pool_used(&self, pool: usize) -> u64 {
        self.pools[pool].used
    }
    /// The pool of local `port`.
    #[inline]
    pub fn pool_of(&self, port: usize) -> usize {
        self.queues[self.qi(port, 0)].pool as usize
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
        self.queues[queue].alpha
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
        }
    }

    /// Fill M queues round-robin until none admits more: each settles within one packet of α·B/(1+M·α).
    #[test]
    fn dynamic_threshold_steady_state() {
        let (b, pkt) = (3_000_000u64, 1_048u64);
        for (m, alpha) in [(1usize, 1.0), (2, 1.0), (4, 4.0), (8, 0.5), (3, 2.0)] {
            let mut mmu = Mmu::new(layout(m, b, 0, alpha));
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
                    "M={m} α={alpha}: {got} vs {target}"
                );
            }
        }
    }

    #[test]
    fn reserve_is_used_first_and_release_balances() {
        let mut mmu = Mmu::new(layout(2, 10_000, 2_000, 1.0));
        mmu.admit(0, 0, 1_500).unwrap();
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
