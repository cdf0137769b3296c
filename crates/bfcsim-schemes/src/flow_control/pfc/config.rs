//! PFC's parameters ([`PfcConfig`], `[flow_control] kind = "pfc"`) and the per-switch layout they resolve to
//! ([`PfcLayout`]): headroom, reserve and pause threshold per (ingress port, lossless priority), as HPCC's ns-3
//! `scratch/third.cc` sets them (see [`super::ingress`] for the buffer model).

use bfcsim_core::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

/// Most priorities a port can pause: [`PortPause`](super::PortPause) keeps them in a `u64` bitmask.
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
