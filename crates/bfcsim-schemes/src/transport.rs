//! Reliable delivery, sans-IO: the sender's go-back-N state and the receiver's cumulative ACKs (GUIDE §3.2).
//!
//! Sequence numbers are byte offsets into the flow. The receiver accepts only in-order data (go-back-N, as in
//! BFC §6.2.1 and HPCC's RDMA NICs), acknowledges cumulatively every `ack_every` packets and always on the
//! flow's last byte, and on a gap sends one NACK naming the byte it expects. The sender goes back to that byte.
//! A retransmission timer (RFC 6298 estimator, floored at `rto_min`, doubled on each consecutive expiry)
//! recovers the losses a NACK cannot reveal: a lost last packet, a lost NACK or a lost retransmission.

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

/// Reliable-delivery parameters of the NICs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// Acknowledge every this many in-order packets (1 = every packet).
    pub ack_every: u32,
    /// Floor of the retransmission timeout.
    pub rto_min: Time,
    /// Ceiling of the backed-off retransmission timeout.
    pub rto_max: Time,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            ack_every: 1,
            rto_min: Time::from_ms(1),
            rto_max: Time::from_ms(64),
        }
    }
}

impl TransportConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if self.ack_every == 0 {
            return Err("nic.ack_every must be at least 1".into());
        }
        if self.rto_min == Time::ZERO || self.rto_max < self.rto_min {
            return Err(format!(
                "need 0 < nic.rto_min ({}) <= nic.rto_max ({})",
                self.rto_min, self.rto_max
            ));
        }
        Ok(())
    }
}

/// The sending half of a flow.
#[derive(Clone, Debug)]
pub struct Sender {
    size: u64,
    mss: u64,
    /// Lowest unacknowledged byte.
    snd_una: u64,
    /// Next byte to send.
    snd_nxt: u64,
    /// One past the highest byte ever sent: segments below it are retransmissions.
    high_water: u64,
    rto: RtoEstimator,
    /// The last go-back on a switch's drop notice: when, and from which byte.
    rewind: Option<(Time, u64)>,
}

/// What an ACK did to the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckOutcome {
    /// Payload bytes newly acknowledged.
    pub newly_acked: u64,
    /// Every byte is acknowledged: the flow is complete.
    pub complete: bool,
}

impl Sender {
    /// A sender for `size` payload bytes in segments of `mss`.
    pub fn new(size: u64, mss: u32, cfg: &TransportConfig) -> Sender {
        Sender {
            size,
            mss: mss as u64,
            snd_una: 0,
            snd_nxt: 0,
            high_water: 0,
            rto: RtoEstimator::new(cfg),
            rewind: None,
        }
    }

    /// Lowest unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next byte to send.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Payload bytes from the next one to send to the end of the flow: the remaining size SRF ranks a flow by
    /// (BFC App. A.2), larger again after a go-back.
    pub fn remaining(&self) -> u64 {
        self.size - self.snd_nxt
    }
    /// Bytes sent and not yet acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    /// True while some payload has never been sent (or must be sent again).
    pub fn has_unsent(&self) -> bool {
        self.snd_nxt < self.size
    }
    /// True while some payload is unacknowledged.
    pub fn outstanding(&self) -> bool {
        self.snd_una < self.size
    }

    /// Whether the next segment fits in `window` bytes of payload in flight. A window smaller than one segment
    /// still lets one segment out when nothing is in flight, so a flow can always make progress.
    #[inline]
    pub fn can_send(&self, window: u64) -> bool {
        if !self.has_unsent() {
            return false;
        }
        let seg = self.mss.min(self.size - self.snd_nxt);
        self.in_flight() == 0 || self.in_flight() + seg <= window
    }

    /// Takes the next segment: `(seq, payload bytes, whether it was sent before)`.
    #[inline]
    pub fn next_segment(&mut self) -> (u64, u32, bool) {
        let seq = self.snd_nxt;
        let len = self.mss.min(self.size - seq);
        self.snd_nxt += len;
        let resent = seq < self.high_water;
        self.high_water = self.high_water.max(self.snd_nxt);
        (seq, len as u32, resent)
    }

    /// A cumulative ACK for everything below `ack_seq`; `rtt` is the sample from the echoed send time.
    pub fn handle_ack(&mut self, ack_seq: u64, rtt: Option<Time>) -> AckOutcome {
        let ack_seq = ack_seq.min(self.size);
        if let Some(rtt) = rtt {
            self.rto.sample(rtt);
        }
        if ack_seq <= self.snd_una {
            return AckOutcome {
                newly_acked: 0,
                complete: self.snd_una >= self.size,
            };
        }
        let newly = ack_seq - self.snd_una;
        self.snd_una = ack_seq;
        self.snd_nxt = self.snd_nxt.max(ack_seq);
        self.rto.reset_backoff();
        AckOutcome {
            newly_acked: newly,
            complete: self.snd_una >= self.size,
        }
    }

    /// A NACK: the receiver holds everything below `seq` and wants `seq` next. Returns whether the sender went
    /// back (false for a stale NACK).
    pub fn handle_nack(&mut self, seq: u64) -> bool {
        let seq = seq.min(self.size);
        if seq > self.snd_una {
            self.snd_una = seq;
        }
        if seq < self.snd_nxt && seq >= self.snd_una {
            self.snd_nxt = seq;
            return true;
        }
        false
    }

    /// A switch dropped the data packet starting at `seq`, which the sender emitted at `sent_at`, and says so
    /// at once (BFC §6.2.1's "HPCC-PFC": "the switch informs the sender directly, which then retransmits the
    /// dropped packet"). With go-back-N receivers, retransmitting the packet means going back to it. Nothing
    /// happens if `seq` is acknowledged, not yet (re)sent, or already covered by a go-back made after
    /// `sent_at` ([`Sender::covered`]). Returns whether the sender went back.
    pub fn handle_drop_notice(&mut self, seq: u64, sent_at: Time, now: Time) -> bool {
        if seq < self.snd_una || seq >= self.snd_nxt || self.covered(seq, sent_at) {
            return false;
        }
        self.snd_nxt = seq;
        self.rewind = Some((now, seq));
        true
    }

    /// Whether a go-back on a drop notice, made after `sent_at`, resends byte `seq` anyway: a gap revealed by
    /// a packet sent at `sent_at` (a NACK echoes that time) then needs no second go-back.
    pub fn covered(&self, seq: u64, sent_at: Time) -> bool {
        self.rewind
            .is_some_and(|(at, from)| sent_at < at && from <= seq)
    }

    /// The retransmission timer fired with data outstanding: resend from the first unacknowledged byte.
    pub fn handle_timeout(&mut self) {
        self.snd_nxt = self.snd_una;
        self.rto.back_off();
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Time {
        self.rto.rto()
    }
}

/// RFC 6298's estimator: `RTO = max(rto_min, SRTT + 4·RTTVAR)`, doubled per consecutive expiry up to
/// `rto_max`. Integer picoseconds throughout.
#[derive(Clone, Copy, Debug)]
struct RtoEstimator {
    srtt: u64,
    rttvar: u64,
    backoff: u32,
    min: u64,
    max: u64,
}

impl RtoEstimator {
    fn new(cfg: &TransportConfig) -> Self {
        RtoEstimator {
            srtt: 0,
            rttvar: 0,
            backoff: 0,
            min: cfg.rto_min.0,
            max: cfg.rto_max.0,
        }
    }

    fn sample(&mut self, rtt: Time) {
        let r = rtt.0;
        if self.srtt == 0 {
            self.srtt = r.max(1);
            self.rttvar = r / 2;
        } else {
            self.rttvar = (3 * self.rttvar + self.srtt.abs_diff(r)) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
    }

    fn rto(&self) -> Time {
        let base = (self.srtt + 4 * self.rttvar).max(self.min);
        Time(
            base.saturating_mul(1 << self.backoff.min(20))
                .min(self.max.max(self.min)),
        )
    }

    fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    fn reset_backoff(&mut self) {
        self.backoff = 0;
    }
}

/// The receiving half of a flow.
#[derive(Clone, Debug)]
pub struct Receiver {
    size: u64,
    /// Next byte expected.
    rcv_nxt: u64,
    ack_every: u32,
    unacked_pkts: u32,
    ce_bytes: u32,
    /// The `rcv_nxt` a NACK was last sent for, so that one gap draws one NACK.
    nacked: Option<u64>,
}

/// What the receiver sends back for a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Nothing yet (delayed ACK).
    Nothing,
    /// A cumulative ACK of everything below `seq`, echoing `ce_bytes` marked bytes.
    Ack {
        /// Next byte expected.
        seq: u64,
        /// CE-marked payload bytes received since the previous ACK.
        ce_bytes: u32,
    },
    /// A NACK: the receiver expects `seq`.
    Nack {
        /// Next byte expected.
        seq: u64,
    },
}

impl Receiver {
    /// A receiver for a flow of `size` bytes.
    pub fn new(size: u64, cfg: &TransportConfig) -> Receiver {
        Receiver {
            size,
            rcv_nxt: 0,
            ack_every: cfg.ack_every,
            unacked_pkts: 0,
            ce_bytes: 0,
            nacked: None,
        }
    }

    /// Next byte expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Handles a data packet carrying `[seq, seq + len)`, CE-marked or not.
    pub fn handle_data(&mut self, seq: u64, len: u32, ce: bool) -> Reply {
        if seq == self.rcv_nxt {
            self.rcv_nxt += len as u64;
            self.unacked_pkts += 1;
            if ce {
                self.ce_bytes += len;
            }
            if self.unacked_pkts >= self.ack_every || self.rcv_nxt >= self.size {
                return self.ack();
            }
            Reply::Nothing
        } else if seq < self.rcv_nxt {
            // A duplicate: the sender went back further than needed or our ACK was lost; say where we are.
            self.ack()
        } else if self.nacked != Some(self.rcv_nxt) {
            self.nacked = Some(self.rcv_nxt);
            Reply::Nack { seq: self.rcv_nxt }
        } else {
            Reply::Nothing
        }
    }

    fn ack(&mut self) -> Reply {
        let reply = Reply::Ack {
            seq: self.rcv_nxt,
            ce_bytes: self.ce_bytes,
        };
        self.unacked_pkts = 0;
        self.ce_bytes = 0;
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(ack_every: u32) -> TransportConfig {
        TransportConfig {
            ack_every,
            ..TransportConfig::default()
        }
    }

    #[test]
    fn in_order_delivery_acks_every_n_and_last() {
        let mut r = Receiver::new(3500, &cfg(2));
        assert_eq!(r.handle_data(0, 1000, false), Reply::Nothing);
        assert_eq!(
            r.handle_data(1000, 1000, true),
            Reply::Ack {
                seq: 2000,
                ce_bytes: 1000
            }
        );
        assert_eq!(r.handle_data(2000, 1000, false), Reply::Nothing);
        assert_eq!(
            r.handle_data(3000, 500, false),
            Reply::Ack {
                seq: 3500,
                ce_bytes: 0
            }
        );
    }

    #[test]
    fn gap_draws_one_nack_then_go_back_n_recovers() {
        let c = cfg(1);
        let mut s = Sender::new(5000, 1000, &c);
        let mut r = Receiver::new(5000, &c);
        let segs: Vec<_> = (0..5).map(|_| s.next_segment()).collect();
        assert_eq!(segs[4], (4000, 1000, false));
        // Segment 1 is lost.
        assert_eq!(
            r.handle_data(0, 1000, false),
            Reply::Ack {
                seq: 1000,
                ce_bytes: 0
            }
        );
        assert_eq!(r.handle_data(2000, 1000, false), Reply::Nack { seq: 1000 });
        assert_eq!(r.handle_data(3000, 1000, false), Reply::Nothing);
        assert_eq!(s.handle_ack(1000, None).newly_acked, 1000);
        assert!(s.handle_nack(1000));
        assert_eq!(s.snd_nxt(), 1000);
        assert!(!s.handle_nack(1000), "a stale NACK does not go back again");
        for _ in 0..4 {
            let (seq, len, resent) = s.next_segment();
            assert!(resent);
            if let Reply::Ack { seq: a, .. } = r.handle_data(seq, len, false) {
                let out = s.handle_ack(a, None);
                if a == 5000 {
                    assert!(out.complete);
                }
            }
        }
        assert!(!s.outstanding());
    }

    /// Drop notices go back once per loss: a later notice or NACK for a packet sent before that go-back, at or
    /// after its byte, changes nothing; a loss of a packet sent after it goes back again.
    #[test]
    fn drop_notice_goes_back_once() {
        let c = cfg(1);
        let us = Time::from_us;
        let mut s = Sender::new(10_000, 1000, &c);
        for _ in 0..6 {
            s.next_segment();
        }
        assert!(!s.handle_drop_notice(6000, us(0), us(1)), "not sent yet");
        assert!(s.handle_drop_notice(2000, us(0), us(1)));
        assert_eq!(s.snd_nxt(), 2000);
        s.next_segment();
        s.next_segment();
        // Segment 3 of the first round is dropped too, and the receiver NACKs 2000 for a packet of that round.
        assert!(!s.handle_drop_notice(3000, us(0), us(2)));
        assert!(s.covered(2000, us(0)));
        assert!(!s.covered(1000, us(0)), "before the go-back's byte");
        assert!(!s.covered(2000, us(1)), "sent at the go-back");
        // A retransmission (sent at 1 µs) is lost: go back again.
        assert!(s.handle_drop_notice(2000, us(1), us(3)));
        assert_eq!(s.snd_nxt(), 2000);
        s.handle_ack(2000, None);
        assert!(!s.handle_drop_notice(1000, us(2), us(4)), "acknowledged");
    }

    #[test]
    fn window_gate_and_timeout() {
        let c = cfg(1);
        let mut s = Sender::new(10_000, 1000, &c);
        assert!(s.can_send(500), "an empty pipe always lets one segment out");
        s.next_segment();
        assert!(!s.can_send(1500));
        assert!(s.can_send(2000));
        s.next_segment();
        s.handle_timeout();
        assert_eq!(s.snd_nxt(), 0);
        assert_eq!(s.rto(), Time::from_ms(2), "backed off once");
        s.handle_ack(1000, Some(Time::from_us(10)));
        assert_eq!(s.rto(), Time::from_ms(1));
    }
}
