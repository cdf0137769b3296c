//! Priority Flow Control's ingress accounting on the shared-buffer switch, as a pure module: `admit` /
//! `release` / `should_pause` / `should_resume` ([`PfcIngress`]), tested without the event loop; its
//! configuration is [`super::config`], the upstream's pause state [`super::pause`].
//!
//! The reference is HPCC's ns-3 (alibaba-edu/High-Precision-Congestion-Control), the simulator the BFC authors
//! ran every PFC scheme on (BFC §6.2.1): `src/point-to-point/model/switch-mmu.cc` (`SwitchMmu`),
//! `switch-node.cc` (`SwitchNode::SendToDev`, `SwitchNotifyDequeue`, `CheckAndSendPfc`, `CheckAndSendResume`),
//! `qbb-net-device.cc` (`QbbNetDevice::Receive`, `SendPfc`) and `scratch/third.cc` (per-port configuration).
//!
//! # Buffer model
//!
//! A switch buffer of `B` bytes is split, as in `SwitchMmu::GetPfcThreshold` and `ConfigNPort`, into
//!
//! - a headroom per (ingress port, lossless priority), sized from the ingress link ([`HeadroomRule`](super::HeadroomRule));
//! - a reserve per (ingress port, lossless priority) (`SwitchMmu::reserve`, 4 KiB);
//! - the shared part: `free = B − Σ headroom − Σ reserve − shared_used`, where `shared_used` counts every
//!   (port, priority)'s bytes beyond its reserve.
//!
//! A packet is counted against the ingress port it arrived on and its priority until it leaves the switch. It
//! goes into the reserve while that has room, then into the shared part while the (port, priority)'s shared
//! bytes stay within the pause threshold, then into headroom; with headroom exhausted it is dropped, a lossless
//! violation ([`Admission::Drop`]). The (port, priority) is paused once it has headroom bytes or its shared
//! bytes reach the threshold, and resumed once it has no headroom bytes and its shared bytes are zero or at
//! least `resume_offset` below the threshold.
//!
//! ## The pause threshold, and BFC's "11%"
//!
//! HPCC's dynamic threshold is `free >> pfc_a_shift` (`SwitchMmu::GetPfcThreshold`) with `pfc_a_shift = 3` in
//! `third.cc`: one eighth of the *current* free buffer, which shrinks as the port fills it. It is Dynamic
//! Threshold (Choudhury & Hahne) with α = 1/8: a lone ingress port taking shared bytes `s` out of `F` free
//! stops at `s = (F − s)/8`, i.e. `s = F/9` = 11.1% of the free buffer it found. That is the "traffic from an
//! input port occupies more than 11% of the free buffer" of BFC §6.2.1 and the HPCC paper. [`PfcConfig`](super::PfcConfig) takes
//! the α directly as `pause_fraction` (default 0.125 = 2⁻³, exactly ns-3's shift); the settled share of a lone
//! port is `pause_fraction / (1 + pause_fraction)` of the free buffer. `third.cc` also doubles the fraction for
//! each factor of two a port's rate exceeds the NIC rate (shift 2 at 200 Gb/s over 100 Gb/s NICs), up to 1
//! (shift 0): [`PfcConfig::scale_with_rate`](super::PfcConfig::scale_with_rate).
//!
//! ## Interaction with the egress MMU (`bfcsim_net::mmu`)
//!
//! Two ledgers count the same packets, as in ns-3 (`ingress_bytes` / `egress_bytes`): [`PfcIngress`] by
//! (ingress port, priority), the egress `bfcsim_net::mmu::Mmu` by (egress port, queue). Shared use for PFC is
//! counted on ingress (ns-3's `shared_used_bytes`), and [`PfcIngress`] is the admission authority for lossless
//! priorities: ns-3's `CheckEgressAdmission` always admits, so lossless packets enter the egress MMU through
//! `bfcsim_net::mmu::Mmu::admit_lossless` (counted, never dropped there). Lossy priorities (not in
//! `priorities`) keep the egress Dynamic Threshold: the egress MMU decides, and [`PfcIngress`] only counts their
//! bytes as shared use, so the free buffer the PFC threshold sees includes them. The egress pool should be the
//! whole switch buffer `B`, so that the ingress carve-out bounds it.
//!
//! # Call order for the engine
//!
//! On a data packet of priority `prio` arriving at a switch on ingress port `in` (ns-3 `SwitchNode::SendToDev`;
//! packets in the strict-priority control queue, ns-3's qIndex 0, bypass PFC entirely):
//!
//! 1. route it to egress port `out`, queue `q`;
//! 2. lossy priority ([`PfcIngress::is_lossless`] false): `mmu.admit(out, q, size, held)`, dropping on error;
//! 3. `pfc.admit(in, prio, size)`; on [`Admission::Drop`] drop the packet (a lossless violation; the ingress
//!    and egress ledgers are unchanged);
//! 4. lossless priority: `mmu.admit_lossless(out, size, held)` (`held`: the bytes queue `q` holds);
//! 5. enqueue; remember `(in, prio)` with the packet (ns-3's `FlowIdTag`);
//! 6. `pfc.poll_pause(in, prio)`: on `Some(Pause)` send one PAUSE frame for `prio` out of port `in`, at strict
//!    priority ahead of data and outside the MMU (ns-3 `SendPfc` enqueues it in qIndex 0).
//!
//! When the packet leaves the switch (dequeued for transmission, ns-3 `SwitchNotifyDequeue`):
//! `mmu.release(out, size, held)`, `pfc.release(in, prio, size)`, then `pfc.poll_resume(in, prio)`: on
//! `Some(Resume)` send one RESUME frame (a PAUSE with zero quanta) out of port `in`. ns-3 checks pause only on
//! enqueue and resume only on dequeue of the same (port, priority); so do we.
//!
//! At the upstream port receiving the frame (a NIC or a switch port, ns-3 `QbbNetDevice::Receive`):
//! [`PortPause::handle_pause`](super::PortPause::handle_pause) / [`PortPause::handle_resume`](super::PortPause::handle_resume) with the arrival time, write a [`PauseRecord`](crate::fabric::PauseRecord),
//! and let the scheduler skip queues whose priority [`PortPause::is_paused`](super::PortPause::is_paused); a packet already being
//! serialized finishes. After a resume, kick the port.
//!
//! # Departures from ns-3
//!
//! - Headroom and reserve are carved per (port, lossless priority); ns-3 carves one headroom and one reserve per
//!   port (`ConfigNPort`) but lets every priority use them. Identical with one lossless priority, as in every
//!   HPCC and BFC experiment.
//! - Lossy priorities exist (ns-3 has none): never paused, no reserve or headroom, bytes counted as shared.
//! - ns-3's drop test (`CheckIngressAdmission`) compares `psize + shared_used` with the threshold while the
//!   placement (`UpdateIngressAdmission`) compares `bytes + psize − reserve`; they differ only for a (port,
//!   priority) still inside its reserve. We use the placement rule for both, so a packet that fits reserve or
//!   shared is never dropped.
//! - A packet enters the shared part only if it also fits the free buffer. Implied by the dynamic threshold
//!   (fraction ≤ 1); it bounds the static threshold, which ns-3's `SwitchMmu` lacks.
//! - PAUSE frames are 64 B (IEEE 802.3 minimum frame, Annex 31B MAC Control); ns-3's are 31 B (9 B
//!   `PauseHeader` + IPv4 + PPP headers).
//! - No pause quanta: as in ns-3, a PAUSE holds until the RESUME (`QbbNetDevice::Receive` pauses on any
//!   non-zero time and never expires it; the 5 µs `PauseTime` is carried but unused). IEEE 802.1Qbb pauses
//!   for a quanta count (512 bit times each, refreshed by the switch before expiry); the XOFF/XON model is
//!   what the compared results were produced with, and it needs no refresh timers.

use super::config::{MAX_PRIORITIES, PfcLayout};

/// Where an arriving packet was put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Entirely within the (port, priority)'s reserve.
    Reserve,
    /// Into the shared buffer (possibly partly from the reserve).
    Shared,
    /// Into headroom: the (port, priority) was over its pause threshold.
    Headroom,
    /// Headroom exhausted: the packet must be dropped, a lossless violation. Nothing was counted.
    Drop,
}

/// A PFC frame to send out of an ingress port, to the upstream on that link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcAction {
    /// Stop sending `prio` (XOFF).
    Pause {
        /// Local port the frame leaves by.
        port: usize,
        /// The paused priority.
        prio: u8,
    },
    /// Start sending `prio` again (XON, a PAUSE with zero quanta).
    Resume {
        /// Local port the frame leaves by.
        port: usize,
        /// The resumed priority.
        prio: u8,
    },
}

/// Ingress accounting and pause state of one switch (ns-3 `SwitchMmu`'s PFC half).
#[derive(Clone, Debug)]
pub struct PfcIngress {
    layout: PfcLayout,
    prios: usize,
    /// Bytes of each (port, priority) in reserve and shared (ns-3 `ingress_bytes`).
    ingress: Vec<u64>,
    /// Headroom bytes of each (port, priority) (ns-3 `hdrm_bytes`).
    hdrm: Vec<u64>,
    /// Whether each (port, priority) has been paused (ns-3 `paused`).
    paused: Vec<bool>,
    /// Shared bytes in use over all (port, priority) (ns-3 `shared_used_bytes`).
    shared_used: u64,
    carved: u64,
    drops: u64,
    drop_bytes: u64,
    pauses: u64,
    resumes: u64,
    underflows: u64,
}

impl PfcIngress {
    /// Empty accounting for a switch with this layout.
    pub fn new(layout: PfcLayout) -> PfcIngress {
        assert_eq!(
            layout.headroom.len(),
            layout.threshold.len(),
            "one headroom and one threshold per port"
        );
        let prios = layout.lossless.len();
        assert!((1..=MAX_PRIORITIES).contains(&prios), "1..=64 priorities");
        let n = layout.headroom.len() * prios;
        PfcIngress {
            carved: layout.carved(),
            layout,
            prios,
            ingress: vec![0; n],
            hdrm: vec![0; n],
            paused: vec![false; n],
            shared_used: 0,
            drops: 0,
            drop_bytes: 0,
            pauses: 0,
            resumes: 0,
            underflows: 0,
        }
    }

    #[inline]
    fn ix(&self, port: usize, prio: u8) -> usize {
        debug_assert!((prio as usize) < self.prios);
        port * self.prios + prio as usize
    }

    #[inline]
    fn reserve_of(&self, prio: u8) -> u64 {
        if self.layout.lossless[prio as usize] {
            self.layout.reserve
        } else {
            0
        }
    }

    /// Whether `prio` is lossless (PFC-enabled).
    #[inline]
    pub fn is_lossless(&self, prio: u8) -> bool {
        self.layout.lossless[prio as usize]
    }

    /// Free shared buffer: `B − Σ headroom − Σ reserve − shared_used` (ns-3 `GetPfcThreshold`'s operand), zero
    /// when lossy traffic has used it all.
    #[inline]
    pub fn shared_free(&self) -> u64 {
        self.layout
            .buffer
            .saturating_sub(self.carved + self.shared_used)
    }

    /// The pause threshold of `port` now (ns-3 `SwitchMmu::GetPfcThreshold`).
    #[inline]
    pub fn threshold(&self, port: usize) -> u64 {
        self.layout.threshold[port].bytes(self.shared_free())
    }

    /// Shared bytes of a (port, priority): its bytes beyond the reserve (ns-3 `SwitchMmu::GetSharedUsed`).
    #[inline]
    pub fn shared_of(&self, port: usize, prio: u8) -> u64 {
        self.ingress[self.ix(port, prio)].saturating_sub(self.reserve_of(prio))
    }

    /// Admits a packet of `size` bytes that arrived on `port` with priority `prio` (ns-3
    /// `CheckIngressAdmission` + `UpdateIngressAdmission`): into the reserve, then the shared buffer while the
    /// (port, priority) stays within its pause threshold and the free buffer, then headroom; [`Admission::Drop`]
    /// when headroom cannot take it (counted in [`PfcIngress::lossless_drops`]). Lossy priorities always go to
    /// the shared buffer: their admission is the egress MMU's.
    #[inline(always)]
    pub fn admit(&mut self, port: usize, prio: u8, size: u64) -> Admission {
        let i = self.ix(port, prio);
        let held = self.ingress[i];
        if !self.is_lossless(prio) {
            self.ingress[i] = held + size;
            self.shared_used += size;
            return Admission::Shared;
        }
        let reserve = self.layout.reserve;
        let new = held + size;
        if new <= reserve {
            self.ingress[i] = new;
            return Admission::Reserve;
        }
        let extra = size.min(new - reserve);
        let free = self.shared_free();
        if new - reserve <= self.layout.threshold[port].bytes(free) && extra <= free {
            self.ingress[i] = new;
            self.shared_used += extra;
            return Admission::Shared;
        }
        if self.hdrm[i] + size <= self.layout.headroom[port] {
            self.hdrm[i] += size;
            return Admission::Headroom;
        }
        self.drops += 1;
        self.drop_bytes += size;
        Admission::Drop
    }

    /// Returns the bytes of a packet that arrived on `port` with `prio` and has left the switch (ns-3
    /// `RemoveFromIngressAdmission`): from headroom first, then the shared part, then the reserve.
    #[inline]
    pub fn release(&mut self, port: usize, prio: u8, size: u64) {
        let i = self.ix(port, prio);
        let from_hdrm = self.hdrm[i].min(size);
        let rest = size - from_hdrm;
        let held = self.ingress[i];
        if rest > held {
            self.underflows += 1;
        }
        let rest = rest.min(held);
        let from_shared = rest.min(held.saturating_sub(self.reserve_of(prio)));
        self.hdrm[i] -= from_hdrm;
        self.ingress[i] = held - rest;
        self.shared_used -= from_shared;
    }

    /// Whether a PAUSE is due (ns-3 `CheckShouldPause`): lossless, not yet paused, and using headroom or with
    /// shared bytes at or over the threshold.
    #[inline]
    pub fn should_pause(&self, port: usize, prio: u8) -> bool {
        let i = self.ix(port, prio);
        self.is_lossless(prio)
            && !self.paused[i]
            && (self.hdrm[i] > 0 || self.shared_of(port, prio) >= self.threshold(port))
    }

    /// Whether a RESUME is due (ns-3 `CheckShouldResume`): paused, no headroom in use, and shared bytes zero or
    /// at least `resume_offset` below the threshold.
    #[inline]
    pub fn should_resume(&self, port: usize, prio: u8) -> bool {
        let i = self.ix(port, prio);
        if !self.paused[i] || self.hdrm[i] > 0 {
            return false;
        }
        let s = self.shared_of(port, prio);
        s == 0 || s + self.layout.resume_offset <= self.threshold(port)
    }

    /// Call after an admission from (`port`, `prio`): the PAUSE to send on the not-paused → paused edge, once
    /// (ns-3 `SwitchNode::CheckAndSendPfc`: `CheckShouldPause`, `SendPfc`, `SetPause`).
    #[inline]
    pub fn poll_pause(&mut self, port: usize, prio: u8) -> Option<PfcAction> {
        if !self.should_pause(port, prio) {
            return None;
        }
        let i = self.ix(port, prio);
        self.paused[i] = true;
        self.pauses += 1;
        Some(PfcAction::Pause { port, prio })
    }

    /// Call after a release from (`port`, `prio`): the RESUME to send on the paused → not-paused edge, once
    /// (ns-3 `SwitchNode::CheckAndSendResume`).
    #[inline]
    pub fn poll_resume(&mut self, port: usize, prio: u8) -> Option<PfcAction> {
        if !self.should_resume(port, prio) {
            return None;
        }
        let i = self.ix(port, prio);
        self.paused[i] = false;
        self.resumes += 1;
        Some(PfcAction::Resume { port, prio })
    }

    /// Whether (`port`, `prio`) is paused.
    pub fn is_paused(&self, port: usize, prio: u8) -> bool {
        self.paused[self.ix(port, prio)]
    }
    /// Bytes of (`port`, `prio`) in reserve and shared.
    pub fn ingress_bytes(&self, port: usize, prio: u8) -> u64 {
        self.ingress[self.ix(port, prio)]
    }
    /// Headroom bytes of (`port`, `prio`).
    pub fn headroom_bytes(&self, port: usize, prio: u8) -> u64 {
        self.hdrm[self.ix(port, prio)]
    }
    /// Shared bytes in use over the switch.
    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }
    /// Bytes counted over the switch: reserve, shared and headroom.
    pub fn total(&self) -> u64 {
        self.ingress.iter().sum::<u64>() + self.hdrm.iter().sum::<u64>()
    }
    /// Lossless packets dropped with headroom exhausted, and their bytes.
    pub fn lossless_drops(&self) -> (u64, u64) {
        (self.drops, self.drop_bytes)
    }
    /// PAUSE and RESUME frames requested so far.
    pub fn frames(&self) -> (u64, u64) {
        (self.pauses, self.resumes)
    }
    /// The layout.
    pub fn layout(&self) -> &PfcLayout {
        &self.layout
    }
    /// Bookkeeping violations: releases of bytes a (port, priority) did not hold.
    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.underflows > 0 {
            v.push(format!(
                "{} PFC releases of bytes an ingress (port, priority) did not hold",
                self.underflows
            ));
        }
        v
    }
}

// The tests of all three pure modules, here to see the ledgers' fields.
#[cfg(test)]
#[path = "tests.rs"]
mod tests;
