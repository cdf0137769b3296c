//! ExpressPass (Cho et al., SIGCOMM 2017): credit-scheduled transport. A receiver paces credits to each of its
//! senders; every switch port and NIC rate-limits credits to the share of the link that keeps the data they
//! call for at line rate in the other direction, with a small credit queue whose overflow drops credits; a
//! sender sends one data packet per credit, which therefore never meets a full queue. The receiver's credit
//! rate follows a feedback loop on the credits it loses.
//!
//! Sans-IO parts, each unit-tested alone:
//!
//! - [`feedback`]: a receiver's per-flow credit rate and its feedback loop (§3.2, Algorithm 1), fed by the credit
//!   sequence numbers the data packets echo.
//! - [`CreditShaper`] (shared with PayDebt, [`crate::receiver_driven::shaper`]): the credit rate limiter of a
//!   port (§3.1), a token bucket in integer time.
//!
//! [`ExpressPass`] is the scheme on the fabric ([`crate::fabric`]): the senders, receivers and rate limiters
//! that move credits between them.
//!
//! Defaults follow the authors' public ns-2 simulator (kaist-ina/ns2-xpass, `xpass.cc`, `xpass-drop-tail.cc` and
//! `scripts/large-scale-fattree.tcl`), the code BFC §6.2.1 ran ("for ExpressPass we use \[1\]"), with BFC's choices
//! (α = 0.5, w_init = 1/16, 16 credits of credit buffer); `docs/FIDELITY.md` lists the differences.

pub mod feedback;
mod scheme;

use bfcsim_core::{Bytes, Time};
use bfcsim_net::packet::PacketKind;
use serde::{Deserialize, Serialize};

use super::aeolus::{AeolusConfig, AeolusStats};
pub use crate::receiver_driven::shaper::CreditShaper;
pub use feedback::CreditFeedback;
pub use scheme::{CreditReport, ExpressPass};

/// The receiver's permission to send one data packet (§3.1); `aux` is its sequence number and `seq` the
/// receiver's next expected byte (a cumulative acknowledgement). The switches' credit queues schedule it, never
/// the control queue.
pub const CREDIT: PacketKind = PacketKind::scheduled(0);
/// A sender asks its receiver for credits (§3.1's credit request); `aux` is the number of packets it has to
/// send.
pub const CREDIT_REQUEST: PacketKind = PacketKind::control(0);
/// The sender has nothing left to send; the receiver stops its credits.
pub const CREDIT_STOP: PacketKind = PacketKind::control(1);
/// EP(A)'s probe: right behind a flow's last unscheduled packet, in the data queue; `seq` is the bytes the
/// unscheduled packets covered ([`super::aeolus`]).
pub const PROBE: PacketKind = PacketKind::scheduled(1);
/// The receiver's answer to a probe, one per missing range: the `aux` bytes from byte `seq` are lost.
pub const PROBE_ANSWER: PacketKind = PacketKind::control(2);

/// How the feedback loop raises its aggressiveness `w` after two increasing periods in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WIncrease {
    /// `w ← min(w + 0.05, w_max)`, the authors' ns-2 code (`credit_feedback_control`).
    Step,
    /// `w ← (w + w_max) / 2`, ExpressPass §3.2 Algorithm 1.
    Halfway,
}

/// ExpressPass's parameters (`[flow_control] kind = "expresspass"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExpressPassConfig {
    /// A new flow's credit rate as a fraction of the largest one (§3.2: `initial_rate = α · max_rate`); BFC
    /// §6.2.1 (and ExpressPass's large-scale script): 0.5.
    pub alpha: f64,
    /// A flow of fewer packets than this starts at `α · packets / small_flow_packets` of the largest rate: its
    /// credit request says how many packets it has (ns-2's `recv_credit_request`, 40), so that a one-packet flow
    /// does not draw a full round trip of credits at half the link's credit rate. 0 disables the scaling.
    pub small_flow_packets: u32,
    /// The feedback loop's initial aggressiveness (Algorithm 1's `w_init`); BFC §6.2.1: 1/16.
    pub w_init: f64,
    /// Its floor (Algorithm 1's `w_min`; ns-2: 0.01).
    pub w_min: f64,
    /// Its ceiling (Algorithm 1's `w_max`; ns-2: 0.5).
    pub w_max: f64,
    /// How `w` grows in consecutive increasing periods.
    pub w_increase: WIncrease,
    /// The target credit loss is `(1 − rate / max_rate) · target_loss_scaling` (ns-2's `target_loss_scaling_`,
    /// 0.125): the closer a flow runs to the largest rate, the less loss it accepts before slowing down.
    pub target_loss_scaling: f64,
    /// Bytes of a credit on the wire; also of a credit request and a credit stop. A minimum Ethernet frame
    /// without preamble and gap, as this model's ACKs (the paper's 84 B includes 20 B of preamble and gap).
    pub credit_size: Bytes,
    /// Credits a port's credit queue holds; more are dropped (§3.1: "a small credit buffer"; ExpressPass 8,
    /// BFC §6.2.1 16).
    pub credit_buffer: u32,
    /// Credits a port may send back to back after an idle spell: the token bucket's depth (ns-2's
    /// `max_tokens_`: 2 credits).
    pub credit_burst: u32,
    /// Each gap between a flow's credits is drawn uniformly within ± this fraction of its mean, so that
    /// receivers do not fall into lock step (ns-2's `min_jitter_`/`max_jitter_`: ±0.1).
    pub jitter: f64,
    /// A sender that got no credit this long after asking for them asks again (ns-2's `retransmit_timeout_`).
    pub request_timeout: Time,
    /// Aeolus (`[flow_control.aeolus]`; PayDebt's EP(A)): a new flow's first BDP sent unscheduled at line rate
    /// while its credits are on their way, dropped by switches above a small threshold, a probe behind it, and
    /// its losses resent one per credit. Absent: off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeolus: Option<AeolusConfig>,
}

impl Default for ExpressPassConfig {
    fn default() -> Self {
        ExpressPassConfig {
            alpha: 0.5,
            small_flow_packets: 40,
            w_init: 0.0625,
            w_min: 0.01,
            w_max: 0.5,
            w_increase: WIncrease::Step,
            target_loss_scaling: 0.125,
            credit_size: Bytes(64),
            credit_buffer: 16,
            credit_burst: 2,
            jitter: 0.1,
            request_timeout: Time::from_us(100),
            aeolus: None,
        }
    }
}

impl ExpressPassConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        let fraction = |name: &str, v: f64, lo_open: bool| {
            let ok = v <= 1.0 && if lo_open { v > 0.0 } else { v >= 0.0 };
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "flow_control.{name} = {v} must be in {}0, 1]",
                    if lo_open { "(" } else { "[" }
                ))
            }
        };
        fraction("alpha", self.alpha, true)?;
        fraction("w_init", self.w_init, true)?;
        fraction("w_min", self.w_min, true)?;
        fraction("w_max", self.w_max, true)?;
        fraction("target_loss_scaling", self.target_loss_scaling, false)?;
        fraction("jitter", self.jitter, false)?;
        if !(self.w_min <= self.w_init && self.w_init <= self.w_max) {
            return Err(format!(
                "need flow_control.w_min ({}) <= w_init ({}) <= w_max ({})",
                self.w_min, self.w_init, self.w_max
            ));
        }
        if self.credit_size.0 == 0 {
            return Err("flow_control.credit_size must be at least 1 byte".into());
        }
        if self.credit_buffer == 0 || self.credit_burst == 0 {
            return Err(
                "flow_control.credit_buffer and credit_burst must be at least 1 credit".into(),
            );
        }
        if self.request_timeout == Time::ZERO {
            return Err("flow_control.request_timeout must be positive".into());
        }
        self.aeolus.as_ref().map_or(Ok(()), AeolusConfig::validate)
    }
}

/// ExpressPass's counts over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CreditStats {
    /// Credit requests senders sent (the first of each flow, and again after a timeout or a loss).
    pub requests: u64,
    /// Credits receivers sent.
    pub sent: u64,
    /// Credits dropped at a full credit queue (a switch port's or a receiver NIC's).
    pub dropped: u64,
    /// Credits that reached a sender with nothing left to send (§6.3: a flow's last round trip of credits).
    pub wasted: u64,
    /// Credit stops senders sent.
    pub stops: u64,
    /// Aeolus's counts (zero without it).
    pub aeolus: AeolusStats,
}

bfcsim_core::add_fields!(CreditStats {
    requests,
    sent,
    dropped,
    wasted,
    stops,
    aeolus,
});
