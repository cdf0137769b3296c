//! PayDebt (Liu et al., IEEE TPDS, `papers/004`): a proactive transport whose new flows send their first BDP
//! unscheduled and make it pay its bandwidth back with debts, so that the scheduled packets their tokens call
//! for do not pile up behind it.
//!
//! Sans-IO parts, each unit-tested alone:
//!
//! - [`window`]: a receiver's per-flow bound on tokens in flight, Algorithm 1's token congestion control
//!   (§4.1.3).
//! - [`receiver`]: a receiver host's debts and tokens: which data packets generate them (§4.1.1's data-driven
//!   tokens and debts, §4.4's `debt_request`), when a debt may go (§4.1.1 "Send Debt/Token at the Right Time",
//!   §5.5's variants), and the order they leave in: debts first, then tokens round-robin (or SRPT) among the
//!   flows whose window allows one (Fig. 6).
//! - [`sender`]: a sender host's rules: which packets ask for a token (`token_request` while more than a
//!   BDP remains) and a debt (§4.4's `debt_to_receive`), and the bound on unscheduled bytes in flight per
//!   sender-receiver pair (§4.4 "Handling Incast"), which sends on tokens what it denies.
//!
//! [`PayDebt`] is the scheme on the fabric ([`crate::fabric`]): the senders, receivers, switch queues and rate
//! limiters. Where the paper leaves a value or a reading open, `docs/FIDELITY.md` ("PayDebt") says which was
//! taken.

pub mod receiver;
mod scheme;
pub mod sender;
pub mod window;

use bfcsim_core::{Bytes, Time, add_fields};
use bfcsim_net::packet::PacketKind;
use serde::{Deserialize, Serialize};

use crate::cc::WindowSpec;

pub use scheme::{PayDebt, PayDebtReport};

/// A token (§4.1.1): the receiver lets the sender send one scheduled packet. `seq` is the receiver's next
/// expected byte (a cumulative acknowledgement), `aux` the token's number (§4.4: tokens have sequence numbers). Queued, rate-limited and
/// marked by the switches' debt/token queue.
pub const TOKEN: PacketKind = PacketKind::scheduled(0);
/// A debt (§3.1, §4.1.1): pays back the bandwidth an unscheduled packet took without a token; the sender does
/// nothing with it (§4.2), but it takes a token's place in every rate limiter on its way. `seq` as a token's.
pub const DEBT: PacketKind = PacketKind::scheduled(1);
/// A token that names what to send (§4.4 "Handling (Rare) Packet Loss": the receiver "generate\[s\] the
/// tokens with corresponding PSN"): the `aux` bytes from byte `seq` are lost; the sender resends them on it.
pub const RESEND_TOKEN: PacketKind = PacketKind::scheduled(2);
/// A probe (§4.4), at the data packets' priority and on their path: `seq` is the highest byte the sender has
/// sent (§4.4: "the PSN of the last data packet"), `aux` the number of the last token it received. It follows a flow's last new packet, and goes again each
/// `probe_timeout` without word from the receiver.
pub const PROBE: PacketKind = PacketKind::scheduled(3);

/// Bits of a data packet's [`Packet::mark`](bfcsim_net::packet::Packet).
pub mod bits {
    /// Sent without a token: the first BDP of a flow (§4.2).
    pub const UNSCHEDULED: u8 = 1;
    /// §4.4's `debt_request`: the receiver generates a debt for this unscheduled packet.
    pub const DEBT_REQUEST: u8 = 2;
    /// §4.1.1's `token_request`: the receiver generates a token for this packet.
    pub const TOKEN_REQUEST: u8 = 4;
    /// A switch's data queue held more than `K_d` when the packet joined it (§4.1.1).
    pub const DATA_CE: u8 = 8;
    /// The token this scheduled packet answers was marked (§4.1.3: "a dedicated bit" carries the token queue's
    /// congestion notification back to the receiver).
    pub const TOKEN_ECHO: u8 = 16;
    /// On a token: a switch's debt/token queue held more than `K_t` tokens when it joined (§4.1.3).
    pub const TOKEN_CE: u8 = 1;
    /// On a probe: sent on a timeout, not behind the flow's last packet.
    pub const TIMED_OUT: u8 = 1;
}

/// When a receiver sends the debt an unscheduled packet generated (§4.1.1, §5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DebtTiming {
    /// PayDebt: at once if the unscheduled packet arrived marked (its queue above `K_d`); else held until a
    /// later scheduled packet of the flow arrives marked (one debt each) or the flow's data is all in.
    Ecn,
    /// §5.5's "w/ early-debt" (§3.1's naive debt): at once, always.
    Early,
    /// §5.5's "w/ late-debt": after the flow's data is all received.
    Late,
    /// §5.5's "no debt": none generated.
    None,
}

/// How a receiver shares its tokens among its flows (§5: round-robin by default, SRPT as a variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenScheduling {
    /// In turn among the flows with a token due and room in their window.
    RoundRobin,
    /// The flow with the fewest bytes left to receive first.
    Srpt,
}

/// PayDebt's parameters (`[flow_control] kind = "paydebt"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PayDebtConfig {
    /// When debts go (§4.1.1; §5.5's variants).
    pub debt: DebtTiming,
    /// `K_d` (§4.1.1, §5.6), in BDPs: a data packet that joins a switch data queue holding more bytes than
    /// this is marked. §5.2: 1.
    pub k_d: f64,
    /// `K_t` (§4.1.3, §5.6), in BDPs of the data the queued tokens call for: a token that joins a debt/token
    /// queue holding more than `k_t · BDP / payload` tokens is marked. §5.2: 1.
    pub k_t: f64,
    /// What a new flow sends unscheduled (§4.2: one BDP).
    pub unscheduled: WindowSpec,
    /// Unscheduled bytes a sender host may have in flight to one receiver host (§4.4 "Handling Incast"; the
    /// paper gives no value); unset: no bound.
    pub pair_limit: Option<WindowSpec>,
    /// Bytes of a token or a debt on the wire (the paper's 84 B, as ExpressPass's credits, is a 64 B frame with
    /// its preamble and gap, which this model does not count).
    pub token_size: Bytes,
    /// The share of each port's link that debts and tokens get together; unset: what lets the packets they
    /// call for fill the link in the other direction, `token_size / (token_size + full data packet)`, the
    /// paper's "5%" (84/(84 + 1538)).
    pub token_share: Option<f64>,
    /// Debts and tokens a port may send back to back after an idle spell (the rate limiter's depth; §4.1.1
    /// says "paces" and gives no depth). 2, as ExpressPass's ns-2 credit limiter (`XPassDropTail`), whose
    /// 84 B credits §4.1.1 names for PayDebt's tokens: paced at exactly the rate that fills the data link, a
    /// limiter one token deep loses every idle gap in its queue for good, and large flows run slower than
    /// the link (FIDELITY "Large flows").
    pub token_burst: u32,
    /// Algorithm 1's initial weight `w_init` (0.5).
    pub w_init: f64,
    /// Algorithm 1's `w_min` (0.1).
    pub w_min: f64,
    /// Algorithm 1's `w_max` (0.5).
    pub w_max: f64,
    /// How often Algorithm 1 updates a flow's window (its `t`: "RTT"); unset: the fabric's base RTT.
    pub update_period: Option<Time>,
    /// How a receiver shares its tokens among its flows.
    pub scheduling: TokenScheduling,
    /// A sender without word from its receiver for this long sends a probe (§5.4: 4 ms).
    pub probe_timeout: Time,
    /// A probe follows each flow's last new packet (§4.4: "at the end of a flow"); off, only timeouts send
    /// probes, and a flow whose last packets are lost waits `probe_timeout`. Under Memcached the probes add a
    /// quarter to the data's bytes.
    pub probe_at_end: bool,
    /// Data priority levels of every switch port (`switch.classes` is one more, for debts and tokens). 1: one
    /// data queue (§4.3, §5's default). More: §5.2's variant "SRPT strategy and eight priority queues", whose
    /// description (the paper's \[53\]) is not at hand; levels as Homa's ([`crate::receiver_driven::priorities`]):
    /// unscheduled packets by their flow's size, scheduled ones at the level their token carries, set by the
    /// receiver from the flow's rank by bytes left among the flows it sends tokens to.
    pub priorities: u32,
    /// Levels of `priorities` for unscheduled packets; 0 derives them from the workload (Homa's rule: the
    /// share of the bytes sent unscheduled, at least one level and at most all but one).
    pub unscheduled_priorities: u32,
}

impl Default for PayDebtConfig {
    fn default() -> Self {
        PayDebtConfig {
            debt: DebtTiming::Ecn,
            k_d: 1.0,
            k_t: 1.0,
            unscheduled: WindowSpec::Bdp(1),
            pair_limit: Some(WindowSpec::Bdp(1)),
            token_size: Bytes(64),
            token_share: None,
            token_burst: 2,
            w_init: 0.5,
            w_min: 0.1,
            w_max: 0.5,
            update_period: None,
            scheduling: TokenScheduling::RoundRobin,
            probe_timeout: Time::from_ms(4),
            probe_at_end: true,
            priorities: 1,
            unscheduled_priorities: 0,
        }
    }
}

impl PayDebtConfig {
    /// Checks ranges; messages name the field.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [("k_d", self.k_d), ("k_t", self.k_t)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "flow_control.{name} = {v} must be a number of BDPs, 0 or more"
                ));
            }
        }
        for (name, v) in [
            ("w_init", self.w_init),
            ("w_min", self.w_min),
            ("w_max", self.w_max),
        ] {
            if !(v > 0.0 && v <= 0.5) {
                return Err(format!(
                    "flow_control.{name} = {v} must be in (0, 0.5] (Algorithm 1: 0 < w <= 0.5)"
                ));
            }
        }
        if !(self.w_min <= self.w_init && self.w_init <= self.w_max) {
            return Err(format!(
                "need flow_control.w_min ({}) <= w_init ({}) <= w_max ({})",
                self.w_min, self.w_init, self.w_max
            ));
        }
        if let Some(s) = self.token_share
            && !(s > 0.0 && s < 1.0)
        {
            return Err(format!(
                "flow_control.token_share = {s} must be a fraction of the link in (0, 1)"
            ));
        }
        if self.token_size.0 == 0 || self.token_burst == 0 {
            return Err(
                "flow_control.token_size and token_burst must be at least 1 (byte, token)".into(),
            );
        }
        if !(1..=63).contains(&self.priorities) {
            return Err(format!(
                "flow_control.priorities = {} must be in 1..=63",
                self.priorities
            ));
        }
        if self.unscheduled_priorities > 0 && self.unscheduled_priorities >= self.priorities {
            return Err(format!(
                "flow_control.unscheduled_priorities = {} must leave a scheduled level below priorities = {}",
                self.unscheduled_priorities, self.priorities
            ));
        }
        if self.probe_timeout == Time::ZERO || self.update_period == Some(Time::ZERO) {
            return Err("flow_control.probe_timeout and update_period must be positive".into());
        }
        Ok(())
    }
}

/// PayDebt's counts over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PayDebtStats {
    /// Data packets sent without a token.
    pub unscheduled: u64,
    /// Unscheduled packets that carried `debt_request`.
    pub debt_requests: u64,
    /// Debts receivers sent.
    pub debts: u64,
    /// Tokens receivers sent (resend tokens included).
    pub tokens: u64,
    /// Resend tokens among them.
    pub resend_tokens: u64,
    /// Tokens that switches marked above `K_t`.
    pub tokens_marked: u64,
    /// Data packets that switches marked above `K_d`.
    pub data_marked: u64,
    /// Tokens that reached a sender with nothing to send.
    pub tokens_wasted: u64,
    /// Times a flow found its host pair's bound full and waited to open (again after each acknowledgement
    /// that did not make room).
    pub pair_waits: u64,
    /// Probes senders sent (behind a flow's last packet, or on a timeout).
    pub probes: u64,
    /// Probes on a timeout among them.
    pub probe_timeouts: u64,
}

add_fields!(PayDebtStats {
    unscheduled,
    debt_requests,
    debts,
    tokens,
    resend_tokens,
    tokens_marked,
    data_marked,
    tokens_wasted,
    pair_waits,
    probes,
    probe_timeouts,
});
