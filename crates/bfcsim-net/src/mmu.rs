//! The shared-buffer memory management unit of a switch (BCC §II-B), as a pure module:
//! `admit` / `release`, tested without the event loop.
//!
//! The MMU keeps the pools' and the switch's totals; each call is told how many bytes the queue holds, which
//! the switch's port queues count ([`crate::queues::PortQueues::queue_bytes`]): one count of a queue's level,
//! read in the line the enqueue and the dequeue touch anyway.
//!
//! Each egress queue owns a static reserve; bytes beyond it come from the shared pool its port belongs to. A
//! switch may have several pools (BCC's "3 MB per 8 ports", Tomahawk-style). Admission into the shared part
//! follows Dynamic Threshold (Choudhury & Hahne): with `free = B − Σ shared`, a packet is admitted to queue i
//! while `shared_i < α_i · free`, so M saturated queues settle at `α·B / (1 + M·α)` each (BCC §II-B, eq. 1).
//! [`Admission::BccNs2`] is the variant the BCC authors' ns-2 switch runs instead.

use std::sync::Arc;

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
    /// (`bfcsim_schemes::flow_control::pfc::Admission::Drop`).
    HeadroomFull,
    /// An ExpressPass credit found its port's credit queue full: how ExpressPass signals congestion (§3.1).
    CreditQueueFull,
    /// A trimmed packet's header found the queue that forwards headers full (a trimming scheme's).
    HeaderQueueFull,
    /// An unscheduled (first-RTT) packet found its port's data above Aeolus's selective-drop threshold
    /// (Aeolus; PayDebt §2.3).
    SelectiveDrop,
    /// On a link that was down while the packet was on it, or sent into it before routing knew
    /// (`[[events]]`, `bfcsim_sim::faults`).
    LinkDown,
    /// To a link's random loss or bit errors (`[[events]]` of kind `loss`).
    LinkLoss,
}

impl DropReason {
    /// Every reason.
    pub const ALL: [DropReason; 9] = [
        DropReason::PoolFull,
        DropReason::DynamicThreshold,
        DropReason::InjectedLoss,
        DropReason::HeadroomFull,
        DropReason::CreditQueueFull,
        DropReason::HeaderQueueFull,
        DropReason::SelectiveDrop,
        DropReason::LinkDown,
        DropReason::LinkLoss,
    ];

    /// Whether reports list this reason even when nothing was dropped for it: the buffer's reasons are always
    /// listed, a scheme's own (credits, headers, selective drops) and the fabric's failures only when something
    /// was dropped for them, so that runs without the scheme or the failures keep their reports.
    pub fn always_reported(self) -> bool {
        !matches!(
            self,
            DropReason::CreditQueueFull
                | DropReason::HeaderQueueFull
                | DropReason::SelectiveDrop
                | DropReason::LinkDown
                | DropReason::LinkLoss
        )
    }

    /// A short stable name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::PoolFull => "pool-full",
            DropReason::DynamicThreshold => "dynamic-threshold",
            DropReason::InjectedLoss => "injected-loss",
            DropReason::HeadroomFull => "headroom-full",
            DropReason::CreditQueueFull => "credit-queue-full",
            DropReason::HeaderQueueFull => "header-queue-full",
            DropReason::SelectiveDrop => "selective-drop",
            DropReason::LinkDown => "link-down",
            DropReason::LinkLoss => "link-loss",
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
    /// Dynamic Threshold α of each queue index (same for every port). Shared: every switch built with one
    /// table reads the same copy, which stays cached however many switches the fabric has.
    pub alpha: Arc<Vec<f64>>,
    /// How packets are admitted and charged.
    pub admission: Admission,
}

/// Occupancy and admission state of one switch's buffer.
///
/// Laid out by how often a packet touches it. The first cache line holds all that an admission and a release
/// read under Dynamic Threshold with one pool per switch (the default): the pool, the reserve, the switch's
/// total and the α table, which every switch of a run shares. A packet therefore touches one line of its
/// switch's buffer state. The queues' levels were a second, an array of their own here, read and written at
/// the enqueue and again at the dequeue: on the 1024-host fat tree, where the 320 switches' state does not fit
/// a core's cache, a tenth of BFC's event-loop samples; the caller now says the level, from its port queues.
/// The pools, the port-to-pool table and a per-switch α table were three more misses there before. Several
/// pools per switch ([`MmuLayout::pool_of_port`]), the ns-2 admission's counters and the pools' peaks, read on
/// the paths that need them, come after.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Mmu {
    /// The switch's one pool; unused when it has several (`multi_pool`), which are in `pools`.
    pool: Pool,
    /// Dynamic Threshold α by queue index (the same at every port).
    alpha: Arc<Vec<f64>>,
    reserve: u64,
    /// Total bytes held by the switch.
    total: u64,
    queues_per_port: u32,
    unlimited: bool,
    admission: Admission,
    /// The switch has several pools: `pools` and `pool_of_port` say which one a port's bytes come from.
    multi_pool: bool,
    // ---- read on the paths that need them
    /// Every pool when there are several (empty otherwise).
    pools: Vec<Pool>,
    /// The pool of each local port when there are several pools (empty otherwise).
    pool_of_port: Box<[u32]>,
    /// Highest shared use each pool reached where admission does not bound it (lossless packets, the ns-2
    /// admission); Dynamic Threshold never takes a pool past its size.
    peaks: Vec<u64>,
    /// [`Admission::BccNs2`]'s reserve counter (`reserve_buf_len_`) per (port, queue); empty otherwise.
    reserve_count: Vec<u64>,
    /// Releases of more than a queue held (a bookkeeping bug); checked by the end-of-run invariants.
    underflows: u64,
}

// The fields every packet reads fit the first line (`pool` 16, `alpha` 8, `reserve` and `total` 16, the rest 7).
const _: () = assert!(std::mem::offset_of!(Mmu, multi_pool) < 64);

#[derive(Clone, Copy, Debug)]
struct Pool {
    size: u64,
    /// Shared bytes in use.
    used: u64,
}

impl Mmu {
    /// An empty buffer with this layout.
    pub fn new(layout: MmuLayout) -> Mmu {
        assert_eq!(
            layout.alpha.len(),
            layout.queues_per_port,
            "one α per queue index"
        );
        assert!(!layout.pool_size.is_empty(), "a buffer has a pool");
        let queues = layout.pool_of_port.len() * layout.queues_per_port;
        let pools: Vec<Pool> = layout
            .pool_size
            .iter()
            .map(|&size| Pool { size, used: 0 })
            .collect();
        let multi_pool = pools.len() > 1;
        Mmu {
            pool: pools[0],
            alpha: layout.alpha,
            reserve: layout.reserve,
            total: 0,
            queues_per_port: u32::try_from(layout.queues_per_port)
                .expect("queues per port fit a u32"),
            unlimited: layout.unlimited,
            admission: layout.admission,
            multi_pool,
            peaks: vec![0; pools.len()],
            pools: if multi_pool { pools } else { Vec::new() },
            pool_of_port: if multi_pool {
                layout.pool_of_port.iter().map(|&p| p as u32).collect()
            } else {
                Box::default()
            },
            reserve_count: if layout.admission == Admission::BccNs2 {
                vec![0; queues]
            } else {
                Vec::new()
            },
            underflows: 0,
        }
    }

    #[inline]
    fn qi(&self, port: usize, queue: usize) -> usize {
        port * self.queues_per_port as usize + queue
    }

    #[inline]
    fn shared_of(&self, bytes: u64) -> u64 {
        bytes.saturating_sub(self.reserve)
    }

    /// The pool of local `port`.
    #[inline(always)]
    fn pool_mut(&mut self, port: usize) -> &mut Pool {
        if self.multi_pool {
            &mut self.pools[self.pool_of_port[port] as usize]
        } else {
            &mut self.pool
        }
    }

    /// Pool `pool`.
    #[inline]
    fn pool_at(&self, pool: usize) -> &Pool {
        if self.multi_pool {
            &self.pools[pool]
        } else {
            assert_eq!(pool, 0, "a switch with one pool has only pool 0");
            &self.pool
        }
    }

    /// Tries to take `bytes` for a packet entering `queue` of local `port`, which holds `held` bytes; says
    /// where they are counted. Always inlined: it runs for every packet entering a switch queue.
    #[inline(always)]
    pub fn admit(
        &mut self,
        port: usize,
        queue: usize,
        bytes: u64,
        held: u64,
    ) -> Result<Charge, DropReason> {
        if self.admission == Admission::BccNs2 {
            return self.admit_bcc_ns2(port, queue, bytes, held);
        }
        let (reserve, unlimited) = (self.reserve, self.unlimited);
        let extra = (held + bytes).saturating_sub(reserve) - held.saturating_sub(reserve);
        if extra > 0 && !unlimited {
            let alpha = self.alpha[queue];
            let pool = self.pool_mut(port);
            if pool.used + extra > pool.size {
                return Err(DropReason::PoolFull);
            }
            // Byte counts fit in an i64, whose conversion to f64 is one instruction where a u64's is a
            // branching sequence; the values, and so the decision, are the same.
            let free = (pool.size - pool.used) as i64 as f64;
            if held.saturating_sub(reserve) as i64 as f64 >= alpha * free {
                return Err(DropReason::DynamicThreshold);
            }
        }
        // Within the pool's size (tested above) unless the buffer is unlimited, whose pools are not checked:
        // no peak to keep.
        self.pool_mut(port).used += extra;
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
        held: u64,
    ) -> Result<Charge, DropReason> {
        let qi = self.qi(port, queue);
        let len = held + bytes;
        if len + self.reserve_count[qi] <= self.reserve {
            self.reserve_count[qi] += len;
            self.take(port, bytes, 0);
            return Ok(Charge::Reserve);
        }
        if !self.unlimited {
            let alpha = self.alpha[queue];
            let pool = self.pool_mut(port);
            if pool.used + bytes > pool.size {
                return Err(DropReason::PoolFull);
            }
            if len as i64 as f64 > alpha * (pool.size - pool.used) as i64 as f64 {
                return Err(DropReason::DynamicThreshold);
            }
        }
        self.take(port, bytes, bytes);
        Ok(Charge::Shared)
    }

    /// Takes `bytes` for a packet of a lossless (PFC) priority entering local `port`'s queue holding `held` bytes,
    /// without the pool or Dynamic Threshold test: PFC's ingress admission (`bfcsim_schemes::flow_control::pfc::PfcIngress::admit`) has
    /// already granted the bytes, and a lossless packet must not be dropped at egress. HPCC's ns-3 does the same:
    /// `SwitchMmu::CheckEgressAdmission` always returns true. The bytes are counted like [`Mmu::admit`]'s, so
    /// occupancy, ECN and [`Mmu::violations`] (a pool over its size) still see them.
    #[inline]
    pub fn admit_lossless(&mut self, port: usize, bytes: u64, held: u64) -> Charge {
        if self.admission == Admission::BccNs2 {
            self.take(port, bytes, bytes);
            return Charge::Shared;
        }
        let extra = self.shared_of(held + bytes) - self.shared_of(held);
        self.take(port, bytes, extra);
        Charge::ByLevel
    }

    /// Counts `bytes` of a packet entering a queue of local `port`, `extra` of them from the port's pool's
    /// shared part, and keeps the pool's peak (these paths may take a pool past its size).
    #[inline]
    fn take(&mut self, port: usize, bytes: u64, extra: u64) {
        let i = self.pool_of(port);
        let pool = self.pool_mut(port);
        pool.used += extra;
        let used = pool.used;
        self.peaks[i] = self.peaks[i].max(used);
        self.total += bytes;
    }

    /// Returns `bytes` of a packet leaving a queue of local `port` that held `held` bytes with it, which
    /// [`Mmu::admit`] charged [`Charge::ByLevel`].
    #[inline]
    pub fn release(&mut self, port: usize, bytes: u64, held: u64) {
        let after = self.drain(bytes, held);
        let shared = self.shared_of(held) - self.shared_of(after);
        self.pool_mut(port).used -= shared;
    }

    /// Returns `bytes` of a packet leaving `queue` of local `port`, which held `held` bytes with it, counted
    /// where its admission said.
    #[inline(never)]
    pub fn release_charged(
        &mut self,
        port: usize,
        queue: usize,
        bytes: u64,
        held: u64,
        charge: Charge,
    ) {
        match charge {
            Charge::ByLevel => self.release(port, bytes, held),
            Charge::Reserve => {
                self.drain(bytes, held);
                // ns-2 takes off the packet's size only; what its admission added for the queue stays.
                let qi = self.qi(port, queue);
                let count = &mut self.reserve_count[qi];
                *count = count.saturating_sub(bytes);
            }
            Charge::Shared => {
                let after = self.drain(bytes, held);
                self.pool_mut(port).used -= held - after;
            }
        }
    }

    /// Takes `bytes` leaving a queue that held `held` off the switch's total (counting a release of more than
    /// the queue held); returns the queue's bytes after.
    #[inline(always)]
    fn drain(&mut self, bytes: u64, held: u64) -> u64 {
        if bytes > held {
            self.underflows += 1;
        }
        let after = held.saturating_sub(bytes);
        self.total -= held - after;
        after
    }

    /// Bytes held by the whole switch.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }
    /// Shared bytes in use in `pool`.
    #[inline]
    pub fn pool_used(&self, pool: usize) -> u64 {
        self.pool_at(pool).used
    }
    /// The pool of local `port`.
    #[inline]
    pub fn pool_of(&self, port: usize) -> usize {
        if self.multi_pool {
            self.pool_of_port[port] as usize
        } else {
            0
        }
    }
    /// Size of `pool` in bytes.
    pub fn pool_size(&self, pool: usize) -> u64 {
        self.pool_at(pool).size
    }
    /// Number of pools.
    pub fn pools(&self) -> usize {
        if self.multi_pool { self.pools.len() } else { 1 }
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
            for (i, &peak) in self.peaks.iter().enumerate() {
                let size = self.pool_at(i).size;
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

/// A buffer with its queues' levels beside it, as a switch's port queues keep them: the tests' caller of
/// [`Mmu`], which is told each queue's level.
#[cfg(test)]
pub(crate) struct Levels {
    mmu: Mmu,
    held: Vec<u64>,
    queues_per_port: usize,
}

#[cfg(test)]
impl Levels {
    pub(crate) fn new(layout: MmuLayout) -> Levels {
        let (ports, queues_per_port) = (layout.pool_of_port.len(), layout.queues_per_port);
        Levels {
            mmu: Mmu::new(layout),
            held: vec![0; ports * queues_per_port],
            queues_per_port,
        }
    }

    fn held_mut(&mut self, port: usize, queue: usize) -> &mut u64 {
        &mut self.held[port * self.queues_per_port + queue]
    }

    pub(crate) fn admit(
        &mut self,
        port: usize,
        queue: usize,
        bytes: u64,
    ) -> Result<Charge, DropReason> {
        let held = self.queue_bytes(port, queue);
        let charge = self.mmu.admit(port, queue, bytes, held)?;
        *self.held_mut(port, queue) += bytes;
        Ok(charge)
    }

    pub(crate) fn admit_lossless(&mut self, port: usize, queue: usize, bytes: u64) -> Charge {
        let held = self.queue_bytes(port, queue);
        *self.held_mut(port, queue) += bytes;
        self.mmu.admit_lossless(port, bytes, held)
    }

    pub(crate) fn release(&mut self, port: usize, queue: usize, bytes: u64) {
        self.release_charged(port, queue, bytes, Charge::ByLevel);
    }

    pub(crate) fn release_charged(
        &mut self,
        port: usize,
        queue: usize,
        bytes: u64,
        charge: Charge,
    ) {
        let held = self.queue_bytes(port, queue);
        *self.held_mut(port, queue) = held.saturating_sub(bytes);
        self.mmu.release_charged(port, queue, bytes, held, charge);
    }

    pub(crate) fn queue_bytes(&self, port: usize, queue: usize) -> u64 {
        self.held[port * self.queues_per_port + queue]
    }
}

#[cfg(test)]
impl std::ops::Deref for Levels {
    type Target = Mmu;
    fn deref(&self) -> &Mmu {
        &self.mmu
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
            alpha: Arc::new(vec![alpha]),
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
            let mut mmu = Levels::new(MmuLayout {
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
        let mut mmu = Levels::new(MmuLayout {
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
        let mut mmu = Levels::new(layout(2, 10_000, 2_000, 1.0));
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
        let mut mmu = Levels::new(layout(1, 2_000, 0, 0.5));
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

    /// A switch with several pools: each port draws on its own pool, and a lossless packet taking one past its
    /// size is reported for that pool alone.
    #[test]
    fn ports_draw_on_their_own_pool() {
        let mut mmu = Levels::new(MmuLayout {
            pool_size: vec![3_000, 5_000],
            pool_of_port: vec![0, 0, 1],
            ..layout(3, 0, 0, 1.0)
        });
        assert_eq!(mmu.pools(), 2);
        assert_eq!((mmu.pool_of(1), mmu.pool_of(2)), (0, 1));
        mmu.admit(0, 0, 1_000).unwrap();
        mmu.admit(2, 0, 2_000).unwrap();
        assert_eq!((mmu.pool_used(0), mmu.pool_used(1)), (1_000, 2_000));
        // Port 1 shares pool 0: α · free = 2000 admits 1500, then pool 0 is too full for another 1500.
        mmu.admit(1, 0, 1_500).unwrap();
        assert_eq!(mmu.admit(1, 0, 1_500), Err(DropReason::PoolFull));
        assert!(mmu.violations().is_empty());
        mmu.admit_lossless(1, 0, 1_000);
        assert_eq!(mmu.violations(), ["pool 0 reached 3500 B, over its 3000 B"]);
        mmu.release(1, 0, 2_500);
        mmu.release(0, 0, 1_000);
        mmu.release(2, 0, 2_000);
        assert_eq!((mmu.total(), mmu.pool_used(0), mmu.pool_used(1)), (0, 0, 0));
    }

    #[test]
    fn pool_full_and_unlimited() {
        let mut mmu = Levels::new(layout(1, 2_000, 0, 1000.0));
        mmu.admit(0, 0, 1_500).unwrap();
        assert_eq!(mmu.admit(0, 0, 1_500), Err(DropReason::PoolFull));
        let mut l = layout(1, 2_000, 0, 1.0);
        l.unlimited = true;
        let mut mmu = Levels::new(l);
        for _ in 0..100 {
            mmu.admit(0, 0, 1_500).unwrap();
        }
        assert_eq!(mmu.total(), 150_000);
    }
}
