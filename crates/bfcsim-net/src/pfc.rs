//! Priority Flow Control (IEEE 802.1Qbb) on the shared-buffer switch, as a pure module: ingress
//! accounting with `admit` / `release` / `should_pause` / `should_resume`, and the upstream's pause state, tested
//! without the event loop.
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
//! - a headroom per (ingress port, lossless priority), sized from the ingress link ([`HeadroomRule`]);
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
//! input port occupies more than 11% of the free buffer" of BFC §6.2.1 and the HPCC paper. [`PfcConfig`] takes
//! the α directly as `pause_fraction` (default 0.125 = 2⁻³, exactly ns-3's shift); the settled share of a lone
//! port is `pause_fraction / (1 + pause_fraction)` of the free buffer. `third.cc` also doubles the fraction for
//! each factor of two a port's rate exceeds the NIC rate (shift 2 at 200 Gb/s over 100 Gb/s NICs), up to 1
//! (shift 0): [`PfcConfig::scale_with_rate`].
//!
//! ## Interaction with the egress MMU ([`crate::mmu`])
//!
//! Two ledgers count the same packets, as in ns-3 (`ingress_bytes` / `egress_bytes`): [`PfcIngress`] by
//! (ingress port, priority), the egress [`crate::mmu::Mmu`] by (egress port, queue). Shared use for PFC is
//! counted on ingress (ns-3's `shared_used_bytes`), and [`PfcIngress`] is the admission authority for lossless
//! priorities: ns-3's `CheckEgressAdmission` always admits, so lossless packets enter the egress MMU through
//! [`crate::mmu::Mmu::admit_lossless`] (counted, never dropped there). Lossy priorities (not in
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
//! [`PortPause::handle_pause`] / [`PortPause::handle_resume`] with the arrival time, write a [`PfcRecord`],
//! and let the scheduler skip queues whose priority [`PortPause::is_paused`]; a packet already being
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

use std::fmt;

use bfcsim_core::{Bytes, NodeId, Rate, Time};
use serde::{Deserialize, Serialize};

/// Most priorities a port can pause: [`PortPause`] keeps them in a `u64` bitmask.
pub const MAX_PRIORITIES: usize = 64;

/// How a port's headroom is sized from its link when no explicit `headroom` is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeadroomRule {
    /// HPCC ns-3 `scratch/third.cc`: `3 × ⌊rate × delay / 8⌋` bytes, three one-way bandwidth-delay products
    /// of the link (37.5 KB at 100 Gb/s and 1 µs).
    Hpcc,
    /// The classic IEEE 802.1Qbb worst case: `2 × rate × delay / 8 + 2 × MTU`, the bytes on the wire both ways
    /// while the PAUSE travels, plus one packet being sent at each end.
    Classic,
}

impl HeadroomRule {
    /// Headroom for an ingress link of `rate` and one-way propagation `delay` carrying packets of up to `mtu`
    /// bytes (on the wire).
    pub fn headroom(self, rate: Rate, delay: Time, mtu: Bytes) -> Bytes {
        let bdp = rate.bytes_in(delay).0;
        match self {
            HeadroomRule::Hpcc => Bytes(3 * bdp),
            HeadroomRule::Classic => Bytes(2 * bdp + 2 * mtu.0),
        }
    }
}

/// PFC parameters (the `flow_control` table), with HPCC's ns-3 defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// Lossless priorities (data classes). Unset: every data class (HPCC runs all data losslessly); empty: none.
    pub priorities: Option<Vec<u8>>,
    /// Dynamic pause threshold as the fraction α of the current free shared buffer: a (port, priority) pauses
    /// when its shared bytes reach `⌊α · free⌋`. Default 0.125: ns-3's `pfc_a_shift = 3` (`third.cc`,
    /// `SwitchMmu::GetPfcThreshold`), i.e. BFC §6.2.1's "11% of the free buffer" (see the module doc).
    pub pause_fraction: f64,
    /// Double the fraction for each factor of two a port's rate exceeds the NIC rate, up to 1 (`third.cc`:
    /// `pfc_a_shift` decremented while `rate > nic_rate`).
    pub scale_with_rate: bool,
    /// Static pause threshold on a (port, priority)'s shared bytes, replacing the dynamic one.
    pub static_threshold: Option<Bytes>,
    /// Resume hysteresis: resume once shared bytes are at least this far below the threshold (or zero) and no
    /// headroom is in use. ns-3 `SwitchMmu::resume_offset` = 3 KiB, `CheckShouldResume`.
    pub resume_offset: Bytes,
    /// Bytes each (port, lossless priority) holds before touching the shared buffer. ns-3
    /// `SwitchMmu::reserve` = 4 KiB.
    pub reserve: Bytes,
    /// Headroom sizing from the ingress link when `headroom` is unset.
    pub headroom_rule: HeadroomRule,
    /// Headroom of every (port, lossless priority), overriding `headroom_rule`.
    pub headroom: Option<Bytes>,
    /// Size of a PAUSE or RESUME frame on the wire (64 B, the minimum Ethernet frame).
    pub pause_frame: Bytes,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            priorities: None,
            pause_fraction: 0.125,
            scale_with_rate: true,
            static_threshold: None,
            resume_offset: Bytes(3 * 1024),
            reserve: Bytes(4 * 1024),
            headroom_rule: HeadroomRule::Hpcc,
            headroom: None,
            pause_frame: Bytes(64),
        }
    }
}

impl PfcConfig {
    /// Checks the parameters; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.pause_fraction > 0.0 && self.pause_fraction <= 1.0) {
            return Err(format!(
                "flow_control.pause_fraction = {} must be in (0, 1]",
                self.pause_fraction
            ));
        }
        if self.static_threshold == Some(Bytes::ZERO) {
            return Err("flow_control.static_threshold must be positive".into());
        }
        if self.pause_frame == Bytes::ZERO {
            return Err("flow_control.pause_frame must be positive".into());
        }
        if let Some(p) = &self.priorities {
            let mut seen = 0u64;
            for &x in p {
                if x as usize >= MAX_PRIORITIES {
                    return Err(format!(
                        "flow_control.priorities: {x} is not below {MAX_PRIORITIES}"
                    ));
                }
                if seen & (1 << x) != 0 {
                    return Err(format!("flow_control.priorities: {x} is listed twice"));
                }
                seen |= 1 << x;
            }
        }
        Ok(())
    }

    /// The pause threshold of a port of `rate` on a fabric whose NICs run at `nic_rate`.
    pub fn threshold_for(&self, rate: Rate, nic_rate: Rate) -> PauseThreshold {
        if let Some(b) = self.static_threshold {
            return PauseThreshold::Static { bytes: b.0 };
        }
        let mut fraction = self.pause_fraction;
        let mut r = rate.bps();
        while self.scale_with_rate && r > nic_rate.bps() && fraction < 1.0 {
            fraction = (fraction * 2.0).min(1.0);
            r /= 2;
        }
        PauseThreshold::Dynamic { fraction }
    }

    /// Resolves the parameters for one switch with `buffer` bytes, `classes` data priorities, and one ingress
    /// link `(rate, one-way propagation delay)` per local port, on a fabric of `nic_rate` NICs and packets of
    /// up to `mtu` bytes on the wire (ns-3 `third.cc`'s per-switch loop).
    pub fn layout(
        &self,
        buffer: Bytes,
        classes: usize,
        ports: &[(Rate, Time)],
        nic_rate: Rate,
        mtu: Bytes,
    ) -> Result<PfcLayout, String> {
        self.validate()?;
        if classes == 0 || classes > MAX_PRIORITIES {
            return Err(format!(
                "flow_control: {classes} data classes, must be in 1..={MAX_PRIORITIES}"
            ));
        }
        let lossless: Vec<bool> = match &self.priorities {
            None => vec![true; classes],
            Some(p) => {
                if let Some(&x) = p.iter().find(|&&x| x as usize >= classes) {
                    return Err(format!(
                        "flow_control.priorities: {x} is not a data class (there are {classes})"
                    ));
                }
                (0..classes).map(|c| p.contains(&(c as u8))).collect()
            }
        };
        let layout = PfcLayout {
            buffer: buffer.0,
            lossless,
            headroom: ports
                .iter()
                .map(|&(rate, delay)| {
                    self.headroom
                        .unwrap_or_else(|| self.headroom_rule.headroom(rate, delay, mtu))
                        .0
                })
                .collect(),
            threshold: ports
                .iter()
                .map(|&(rate, _)| self.threshold_for(rate, nic_rate))
                .collect(),
            reserve: self.reserve.0,
            resume_offset: self.resume_offset.0,
        };
        let carved = layout.carved();
        if carved > layout.buffer {
            return Err(format!(
                "flow_control: headroom and reserve need {} but the switch buffer is {buffer}",
                Bytes(carved)
            ));
        }
        Ok(layout)
    }
}

/// When a (port, priority) pauses, as a function of the free shared buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PauseThreshold {
    /// `⌊fraction · free⌋` (HPCC ns-3 `SwitchMmu::GetPfcThreshold`: `free >> pfc_a_shift`).
    Dynamic {
        /// The α of Dynamic Threshold.
        fraction: f64,
    },
    /// A fixed byte count.
    Static {
        /// The threshold.
        bytes: u64,
    },
}

impl PauseThreshold {
    /// The threshold on a (port, priority)'s shared bytes when `free` shared bytes remain. Exact for
    /// power-of-two fractions (`free >> shift`) while `free < 2⁵³`. Byte counts fit in an `i64`, whose
    /// conversions to and from `f64` are one instruction each where a `u64`'s are branching sequences; the
    /// values are the same (a fraction's product with a buffer size is far below 2⁶³, and never negative).
    #[inline]
    pub fn bytes(self, free: u64) -> u64 {
        match self {
            PauseThreshold::Dynamic { fraction } => (fraction * free as i64 as f64) as i64 as u64,
            PauseThreshold::Static { bytes } => bytes,
        }
    }
}

/// The PFC layout of one switch, resolved from [`PfcConfig::layout`].
#[derive(Clone, Debug, PartialEq)]
pub struct PfcLayout {
    /// The switch buffer `B` in bytes.
    pub buffer: u64,
    /// Whether each data priority is lossless (PFC-enabled); its length is the number of priorities counted.
    pub lossless: Vec<bool>,
    /// Headroom of each local port, per lossless priority.
    pub headroom: Vec<u64>,
    /// Pause threshold of each local port.
    pub threshold: Vec<PauseThreshold>,
    /// Reserve of each (port, lossless priority).
    pub reserve: u64,
    /// Resume hysteresis in bytes.
    pub resume_offset: u64,
}

impl PfcLayout {
    /// Bytes taken out of the shared buffer: every (port, lossless priority)'s headroom and reserve.
    pub fn carved(&self) -> u64 {
        let n = self.lossless.iter().filter(|&&l| l).count() as u64;
        n * (self.headroom.iter().sum::<u64>() + self.headroom.len() as u64 * self.reserve)
    }
}

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

/// One line of HPCC's `pfc.txt` (ns-3 `third.cc` `get_pfc`, hooked to `QbbNetDevice`'s `QbbPfc` trace): a PFC
/// frame received by a port, `time_ns node_id node_type if_index type` with type 1 pause, 0 resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcRecord {
    /// When the frame arrived (written in whole nanoseconds, rounded down).
    pub time: Time,
    /// The node whose port received it: the upstream that is paused or resumed.
    pub node: NodeId,
    /// 0 for a host, 1 for a switch (ns-3 `Node::GetNodeType`).
    pub node_type: u8,
    /// The receiving port in ns-3 numbering: device 0 is the loopback, so a node's first link is 1 (our local
    /// port index + 1).
    pub if_index: u32,
    /// PAUSE (true) or RESUME (false).
    pub pause: bool,
}

impl fmt::Display for PfcRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {}",
            self.time.ns(),
            self.node.0,
            self.node_type,
            self.if_index,
            u8::from(self.pause)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PKT: u64 = 1_000;

    /// Two ports, one lossless priority: headroom 5 000 B, reserve 1 000 B each, so 12 000 B are carved out of
    /// a 92 000 B buffer and 80 000 B start free; α = 1/8, resume offset 3 KiB.
    fn small(prios: Vec<bool>) -> PfcIngress {
        PfcIngress::new(PfcLayout {
            buffer: 92_000,
            lossless: prios,
            headroom: vec![5_000, 5_000],
            threshold: vec![PauseThreshold::Dynamic { fraction: 0.125 }; 2],
            reserve: 1_000,
            resume_offset: 3_072,
        })
    }

    #[test]
    fn threshold_at_free_levels() {
        let dynamic = PauseThreshold::Dynamic { fraction: 0.125 };
        for (free, expect) in [
            (0, 0),
            (7, 0),
            (8, 1),
            (80_000, 10_000),
            (12 * 1024 * 1024, 1_572_864),
        ] {
            assert_eq!(dynamic.bytes(free), expect, "free {free}");
            assert_eq!(dynamic.bytes(free), free >> 3);
        }
        assert_eq!(PauseThreshold::Static { bytes: 30_000 }.bytes(0), 30_000);

        // In the switch the threshold follows the free buffer other ports leave.
        let mut pfc = small(vec![true]);
        assert_eq!((pfc.shared_free(), pfc.threshold(0)), (80_000, 10_000));
        assert_eq!(pfc.admit(1, 0, PKT), Admission::Reserve);
        assert_eq!(pfc.threshold(0), 10_000);
        for _ in 0..8 {
            assert_eq!(pfc.admit(1, 0, PKT), Admission::Shared);
        }
        assert_eq!((pfc.shared_free(), pfc.threshold(0)), (72_000, 9_000));
        assert_eq!(pfc.admit(1, 0, PKT), Admission::Shared);
        assert_eq!((pfc.shared_free(), pfc.threshold(0)), (71_000, 8_875));
    }

    /// ns-3's `third.cc`: 3 one-way BDPs of headroom, α halved per factor-2 rate over the NICs; the carve-out
    /// counts headroom and reserve per (port, lossless priority).
    #[test]
    fn layout_follows_third_cc() {
        let cfg = PfcConfig::default();
        let us = Time::from_us(1);
        let ports = [
            (Rate::gbps(100), us),
            (Rate::gbps(400), us),
            (Rate::gbps(25), Time::from_ns(500)),
        ];
        let l = cfg
            .layout(Bytes(12 << 20), 2, &ports, Rate::gbps(100), Bytes(1_048))
            .unwrap();
        assert_eq!(l.headroom, vec![37_500, 150_000, 4_686]);
        assert_eq!(
            l.threshold,
            vec![
                PauseThreshold::Dynamic { fraction: 0.125 },
                PauseThreshold::Dynamic { fraction: 0.5 },
                PauseThreshold::Dynamic { fraction: 0.125 },
            ]
        );
        assert_eq!(l.carved(), 2 * (37_500 + 150_000 + 4_686 + 3 * 4_096));
        assert_eq!(
            HeadroomRule::Classic.headroom(Rate::gbps(100), us, Bytes(1_048)),
            Bytes(2 * 12_500 + 2 * 1_048)
        );
        let one = PfcConfig {
            priorities: Some(vec![1]),
            headroom: Some(Bytes(10_000)),
            scale_with_rate: false,
            ..cfg.clone()
        };
        let l = one
            .layout(Bytes(1 << 20), 2, &ports, Rate::gbps(100), Bytes(1_048))
            .unwrap();
        assert_eq!(l.lossless, vec![false, true]);
        assert_eq!(l.headroom, vec![10_000; 3]);
        assert_eq!(l.threshold[1], PauseThreshold::Dynamic { fraction: 0.125 });
        let stat = PfcConfig {
            static_threshold: Some(Bytes(50_000)),
            ..cfg.clone()
        };
        assert_eq!(
            stat.threshold_for(Rate::gbps(400), Rate::gbps(100)),
            PauseThreshold::Static { bytes: 50_000 }
        );
        let err = cfg
            .layout(Bytes(100_000), 1, &ports, Rate::gbps(100), Bytes(1_048))
            .unwrap_err();
        assert!(err.starts_with("flow_control:"), "{err}");
        let err = one
            .layout(Bytes(1 << 20), 1, &ports, Rate::gbps(100), Bytes(1_048))
            .unwrap_err();
        assert!(err.contains("flow_control.priorities"), "{err}");
    }

    #[test]
    fn validate_names_the_field() {
        assert!(PfcConfig::default().validate().is_ok());
        for (cfg, field) in [
            (
                PfcConfig {
                    pause_fraction: 0.0,
                    ..Default::default()
                },
                "flow_control.pause_fraction",
            ),
            (
                PfcConfig {
                    pause_fraction: 1.5,
                    ..Default::default()
                },
                "flow_control.pause_fraction",
            ),
            (
                PfcConfig {
                    pause_fraction: f64::NAN,
                    ..Default::default()
                },
                "flow_control.pause_fraction",
            ),
            (
                PfcConfig {
                    static_threshold: Some(Bytes(0)),
                    ..Default::default()
                },
                "flow_control.static_threshold",
            ),
            (
                PfcConfig {
                    pause_frame: Bytes(0),
                    ..Default::default()
                },
                "flow_control.pause_frame",
            ),
            (
                PfcConfig {
                    priorities: Some(vec![3, 3]),
                    ..Default::default()
                },
                "flow_control.priorities",
            ),
            (
                PfcConfig {
                    priorities: Some(vec![64]),
                    ..Default::default()
                },
                "flow_control.priorities",
            ),
        ] {
            let e = cfg.validate().unwrap_err();
            assert!(e.starts_with(field), "{e}");
        }
    }

    /// A lone port fills 1 000 B reserve and then shared bytes `s` while `s ≤ (80 000 − s)/8`: 9 shared
    /// packets (s = 9 000 ≥ ⌊71 000/8⌋ = 8 875) trigger the one PAUSE; it resumes once `s + 3 072 ≤ ⌊free/8⌋`,
    /// first at s = 6 000 (6 000 + 3 072 ≤ ⌊74 000/8⌋ = 9 250; 7 000 + 3 072 > 9 125).
    #[test]
    fn pause_once_on_crossing_resume_once_after_hysteresis() {
        let mut pfc = small(vec![true]);
        let mut actions = Vec::new();
        for k in 0..10 {
            let a = pfc.admit(0, 0, PKT);
            assert_eq!(
                a,
                if k == 0 {
                    Admission::Reserve
                } else {
                    Admission::Shared
                }
            );
            actions.extend(pfc.poll_pause(0, 0).map(|a| (k, a)));
        }
        assert_eq!(actions, vec![(9, PfcAction::Pause { port: 0, prio: 0 })]);
        assert_eq!((pfc.shared_of(0, 0), pfc.threshold(0)), (9_000, 8_875));
        assert!(pfc.is_paused(0, 0) && !pfc.should_pause(0, 0));

        let mut resumes = Vec::new();
        for k in 0..10 {
            pfc.release(0, 0, PKT);
            resumes.extend(pfc.poll_resume(0, 0).map(|a| (k, pfc.shared_of(0, 0), a)));
        }
        assert_eq!(
            resumes,
            vec![(2, 6_000, PfcAction::Resume { port: 0, prio: 0 })]
        );
        assert_eq!(
            (pfc.total(), pfc.shared_used(), pfc.frames()),
            (0, 0, (1, 1))
        );
        assert!(pfc.violations().is_empty());
    }

    /// After the PAUSE, in-flight packets go to headroom (5 000 B: five packets); only the sixth is a drop. The
    /// pause holds while headroom is in use, and releases drain headroom first.
    #[test]
    fn headroom_absorbs_in_flight_then_drops() {
        let mut pfc = small(vec![true]);
        for _ in 0..10 {
            pfc.admit(0, 0, PKT);
        }
        assert!(pfc.poll_pause(0, 0).is_some());
        for _ in 0..5 {
            assert_eq!(pfc.admit(0, 0, PKT), Admission::Headroom);
            assert_eq!(pfc.poll_pause(0, 0), None);
        }
        assert_eq!(pfc.headroom_bytes(0, 0), 5_000);
        assert_eq!(pfc.lossless_drops(), (0, 0));
        assert_eq!(pfc.admit(0, 0, PKT), Admission::Drop);
        assert_eq!(pfc.lossless_drops(), (1, PKT));
        assert_eq!(
            (pfc.ingress_bytes(0, 0), pfc.headroom_bytes(0, 0)),
            (10_000, 5_000)
        );
        // Even a minimum-size packet: the port is over its threshold and headroom is full.
        assert_eq!(pfc.admit(0, 0, 64), Admission::Drop);

        // Releases empty headroom first; no resume while any is left, even with shared low enough.
        for _ in 0..5 {
            pfc.release(0, 0, PKT);
            assert_eq!(pfc.poll_resume(0, 0), None);
        }
        assert_eq!(
            (pfc.ingress_bytes(0, 0), pfc.headroom_bytes(0, 0)),
            (10_000, 0)
        );
        assert_eq!(pfc.shared_used(), 9_000);
    }

    /// Two ingress ports at the same priority: separate counters and pause states, one shared free buffer.
    #[test]
    fn ingress_ports_are_accounted_separately() {
        let mut pfc = small(vec![true]);
        for _ in 0..10 {
            pfc.admit(0, 0, PKT);
        }
        assert!(pfc.poll_pause(0, 0).is_some());
        assert_eq!(pfc.admit(1, 0, PKT), Admission::Reserve);
        assert_eq!(pfc.poll_pause(1, 0), None);
        assert_eq!(pfc.admit(1, 0, PKT), Admission::Shared);
        assert_eq!(pfc.poll_pause(1, 0), None);
        assert_eq!((pfc.shared_free(), pfc.threshold(1)), (70_000, 8_750));
        assert_eq!(
            (pfc.ingress_bytes(0, 0), pfc.ingress_bytes(1, 0)),
            (10_000, 2_000)
        );
        assert!(pfc.is_paused(0, 0) && !pfc.is_paused(1, 0));
        pfc.release(1, 0, PKT);
        pfc.release(1, 0, PKT);
        assert_eq!(pfc.poll_resume(1, 0), None);
        assert!(pfc.is_paused(0, 0));
        assert_eq!(
            (pfc.ingress_bytes(0, 0), pfc.ingress_bytes(1, 0)),
            (10_000, 0)
        );
        assert_eq!(pfc.shared_used(), 9_000);
    }

    /// A lossy priority is counted as shared use (so it shrinks the lossless threshold) but never reserves,
    /// pauses or drops.
    #[test]
    fn lossy_priority_is_counted_not_paused() {
        let mut pfc = small(vec![true, false]);
        // Carve-out counts only the lossless priority: 80 000 B free as before.
        assert_eq!(pfc.shared_free(), 80_000);
        for _ in 0..100 {
            assert_eq!(pfc.admit(0, 1, PKT), Admission::Shared);
            assert_eq!(pfc.poll_pause(0, 1), None);
        }
        assert_eq!(
            (pfc.shared_used(), pfc.shared_free(), pfc.threshold(1)),
            (100_000, 0, 0)
        );
        // The lossless priority on the other port now pauses on its first packet, in its reserve.
        assert_eq!(pfc.admit(1, 0, PKT), Admission::Reserve);
        assert!(pfc.poll_pause(1, 0).is_some());
        assert_eq!(pfc.admit(1, 0, PKT), Admission::Headroom);
        pfc.release(0, 1, PKT);
        assert_eq!(pfc.poll_resume(1, 0), None, "not (1, 0)'s release");
        assert!(pfc.is_paused(1, 0));
        for _ in 1..100 {
            pfc.release(0, 1, PKT);
        }
        // Headroom drains first; with none left and no shared bytes, (1, 0) resumes.
        pfc.release(1, 0, PKT);
        assert!(pfc.poll_resume(1, 0).is_some());
        pfc.release(1, 0, PKT);
        assert_eq!(pfc.poll_resume(1, 0), None);
        assert_eq!((pfc.total(), pfc.shared_used()), (0, 0));
    }

    /// A static threshold still never lets shared use exceed the free buffer.
    #[test]
    fn static_threshold_is_bounded_by_free_buffer() {
        let mut pfc = PfcIngress::new(PfcLayout {
            buffer: 5_000,
            lossless: vec![true],
            headroom: vec![1_000],
            threshold: vec![PauseThreshold::Static { bytes: 100_000 }],
            reserve: 0,
            resume_offset: 0,
        });
        for _ in 0..4 {
            assert_eq!(pfc.admit(0, 0, PKT), Admission::Shared);
        }
        assert_eq!(pfc.shared_free(), 0);
        assert_eq!(pfc.admit(0, 0, PKT), Admission::Headroom);
        assert_eq!(pfc.admit(0, 0, PKT), Admission::Drop);
        assert!(pfc.poll_pause(0, 0).is_some());
    }

    #[test]
    fn port_pause_accounts_paused_time() {
        let us = Time::from_us;
        let mut pp = PortPause::new(8);
        assert!(pp.handle_pause(3, us(10)));
        assert!(
            !pp.handle_pause(3, us(20)),
            "a repeated PAUSE changes nothing"
        );
        assert!(pp.is_paused(3) && !pp.is_paused(2));
        assert!(pp.handle_pause(5, us(20)));
        assert_eq!(pp.paused_mask(), 0b10_1000);
        assert!(pp.handle_resume(3, us(30)));
        assert!(
            !pp.handle_resume(3, us(35)),
            "a stray RESUME changes nothing"
        );
        assert!(pp.handle_resume(5, us(40)));
        assert!(pp.handle_pause(3, us(50)));
        assert_eq!(pp.paused_time(3, us(60)), us(30));
        assert_eq!(pp.paused_time(5, us(60)), us(20));
        assert_eq!(pp.paused_time_any(us(60)), us(40));
        assert_eq!(pp.paused_fraction(3, us(60)), 0.5);
        assert_eq!(pp.paused_fraction_any(Time::ZERO), 0.0);
        assert_eq!(pp.pauses(), 3);
    }

    #[test]
    fn pfc_record_matches_hpcc_format() {
        let r = PfcRecord {
            time: Time::from_ps(2_000_001_234_567),
            node: NodeId(130),
            node_type: 1,
            if_index: 3,
            pause: true,
        };
        assert_eq!(r.to_string(), "2000001234 130 1 3 1");
        let r = PfcRecord {
            pause: false,
            node_type: 0,
            ..r
        };
        assert_eq!(r.to_string(), "2000001234 130 0 3 0");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Arrive { port: usize, prio: u8, size: u64 },
        Leave(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..3usize, 0..2u8, 64..=1_500u64)
                .prop_map(|(port, prio, size)| Op::Arrive { port, prio, size }),
            2 => any::<usize>().prop_map(Op::Leave),
        ]
    }

    /// Drives `pfc` as the engine would: poll for a PAUSE after an admission (not after a drop, as ns-3
    /// returns before `CheckAndSendPfc`), for a RESUME after a release. Checks that actions alternate per
    /// (port, priority), starting with PAUSE.
    struct Harness {
        pfc: PfcIngress,
        held: Vec<(usize, u8, u64)>,
        last: Vec<Option<bool>>,
    }

    impl Harness {
        fn record(&mut self, a: Option<PfcAction>) -> Result<(), TestCaseError> {
            let Some(a) = a else { return Ok(()) };
            let (port, prio, pause) = match a {
                PfcAction::Pause { port, prio } => (port, prio, true),
                PfcAction::Resume { port, prio } => (port, prio, false),
            };
            let slot = &mut self.last[port * self.pfc.prios + prio as usize];
            prop_assert_eq!(
                slot.unwrap_or(false),
                !pause,
                "{:?} repeats the previous action",
                a
            );
            *slot = Some(pause);
            Ok(())
        }

        fn run(&mut self, op: Op) -> Result<(), TestCaseError> {
            match op {
                Op::Arrive { port, prio, size } => {
                    if self.pfc.admit(port, prio, size) != Admission::Drop {
                        self.held.push((port, prio, size));
                        let a = self.pfc.poll_pause(port, prio);
                        self.record(a)?;
                    }
                }
                Op::Leave(i) if !self.held.is_empty() => {
                    let (port, prio, size) = self.held.swap_remove(i % self.held.len());
                    self.pfc.release(port, prio, size);
                    let a = self.pfc.poll_resume(port, prio);
                    self.record(a)?;
                }
                Op::Leave(_) => {}
            }
            self.invariants()
        }

        fn invariants(&self) -> Result<(), TestCaseError> {
            let pfc = &self.pfc;
            let mut shared = 0;
            for port in 0..pfc.layout.headroom.len() {
                for prio in 0..pfc.prios as u8 {
                    let bytes: u64 = self
                        .held
                        .iter()
                        .filter(|h| h.0 == port && h.1 == prio)
                        .map(|h| h.2)
                        .sum();
                    prop_assert_eq!(
                        pfc.ingress_bytes(port, prio) + pfc.headroom_bytes(port, prio),
                        bytes
                    );
                    prop_assert!(pfc.headroom_bytes(port, prio) <= pfc.layout.headroom[port]);
                    shared += pfc.shared_of(port, prio);
                }
            }
            prop_assert_eq!(pfc.shared_used(), shared);
            prop_assert!(pfc.violations().is_empty());
            Ok(())
        }
    }

    proptest! {
        /// Any admit/release sequence: the counters match the packets held, headroom stays within its size,
        /// PAUSE and RESUME alternate strictly per (port, priority) starting with PAUSE, and releasing
        /// everything leaves every counter at zero and nothing paused.
        #[test]
        fn accounting_balances_and_actions_alternate(
            ops in proptest::collection::vec(op(), 1..400),
            lossy1 in any::<bool>(),
            hdrm in 0..6_000u64,
            buffer in 20_000..200_000u64,
        ) {
            let pfc = PfcIngress::new(PfcLayout {
                buffer,
                lossless: vec![true, !lossy1],
                headroom: vec![hdrm; 3],
                threshold: vec![
                    PauseThreshold::Dynamic { fraction: 0.125 },
                    PauseThreshold::Dynamic { fraction: 0.5 },
                    PauseThreshold::Static { bytes: 4_000 },
                ],
                reserve: 1_000,
                resume_offset: 3_072,
            });
            let mut h = Harness { pfc, held: Vec::new(), last: vec![None; 6] };
            for o in ops {
                h.run(o)?;
            }
            while !h.held.is_empty() {
                h.run(Op::Leave(0))?;
            }
            prop_assert_eq!((h.pfc.total(), h.pfc.shared_used()), (0, 0));
            for port in 0..3 {
                for prio in 0..2u8 {
                    prop_assert!(!h.pfc.is_paused(port, prio));
                }
            }
            let (p, r) = h.pfc.frames();
            prop_assert_eq!(p, r);
        }
    }
}
