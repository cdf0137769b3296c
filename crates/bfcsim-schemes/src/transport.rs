//! Reliable delivery, sans-IO: the sender's retransmission state and the receiver's cumulative ACKs.
//!
//! Sequence numbers are byte offsets into the flow. The receiver acknowledges cumulatively every `ack_every`
//! in-order packets and always on the flow's last byte, and on a gap sends one NACK naming the byte it
//! expects. Two ways to recover ([`Recovery`]):
//!
//! - **Go-back-N** (BFC §6.2.1, HPCC's RDMA NICs): the receiver drops out-of-order data and the sender goes
//!   back to the byte a NACK names.
//! - **Selective repeat**: the receiver keeps out-of-order data and the sender resends only the segments known
//!   lost, the one a NACK names or the one a switch's drop notice names. This is BFC §6.2.1's "HPCC-PFC":
//!   "on a packet drop, the switch informs the sender directly, which then retransmits the dropped packet",
//!   a bound "on the performance that can be achieved using any retransmission scheme".
//!
//! Two TCP-like refinements of selective repeat wait for duplicate ACKs and go on from there: RFC 6582's
//! partial ACKs ([`Recovery::Sack`]) and ns-2's `FullTcp/Sack` scoreboard ([`Recovery::FullTcpSack`]).
//!
//! A retransmission timer (RFC 6298 estimator: `rto_initial` before the first RTT sample, then floored at
//! `rto_min`, doubled on each consecutive expiry)
//! recovers the losses a NACK cannot reveal: a lost last packet, a lost NACK or a lost retransmission. On
//! expiry both modes resend everything from the first unacknowledged byte.

use std::collections::BTreeSet;

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

/// How a sender repairs a loss it learns of from a NACK or a switch's drop notice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Recovery {
    /// Go back to the lost byte and resend everything from it; the receiver drops out-of-order data (BFC
    /// §6.2.1; HPCC's and BFC's ns-3 NICs).
    #[default]
    GoBackN,
    /// Resend only the lost segment; the receiver keeps out-of-order data.
    Selective,
    /// Selective repeat that also resends the segment a partial ACK points to while recovering from a loss
    /// (RFC 6582's NewReno partial ACK: the cumulative ACK that fills one hole but stays below the highest byte
    /// sent when the loss was seen names the next hole). It stands in for the SACK scoreboard of ns-2's
    /// `FullTcp/Sack`, which the BCC authors ran (BCC §V-B): a window with several losses is repaired one hole
    /// per round trip instead of waiting for a retransmission timeout after the first.
    Sack,
    /// ns-2.35's `SackFullTcpAgent` (`tcp-full.cc`), the hosts of BCC's simulations (BCC §V-B), as it repairs
    /// a window. Every out-of-order packet draws a duplicate ACK naming it (the SACK block), and the sender keeps
    /// a scoreboard of what the receiver holds. The third duplicate ACK starts a recovery (`dupack_action`,
    /// `fast_retransmit`) that resends the first hole and every hole below the highest byte held; SACK news
    /// during the recovery resends the holes it reveals (`nxt_tseq`). Three rules of ns-2 set it apart from
    /// [`Recovery::Sack`], and each ends in a timeout: a hole with nothing held above it (a window's lost
    /// tail) is never resent before the timer, since `nxt_tseq` resends only holes a SACK block follows; a
    /// partial ACK resends nothing (`pack_action`); and a hole is resent once per recovery, since ns-2's
    /// retransmission pointer `h_seqno_` only moves up, so a lost retransmission waits for the timer. The
    /// timer clears the scoreboard (`clear_on_timeout_`).
    FullTcpSack,
    /// Selective repeat with every packet accounted for, as the Ultra Ethernet transport's packet delivery
    /// runs it (UET 1.0 §3.5.11; uet-htsim's `UecSink::processData` and `UecSrc::processAck`): the receiver
    /// answers each packet that arrives beyond a gap at once with a SACK naming it, and a CE-marked packet at
    /// once (besides an ACK every `ack_every` in-order packets); the sender counts only the bytes the receiver
    /// does not hold as in flight, so that packets sprayed over paths of different delays do not stall its
    /// window; a trimmed packet's NACK resends that packet, and the retransmission timer resends the segments
    /// not known received, not the ones the receiver holds.
    Uet,
}

impl Recovery {
    /// Whether the receiver keeps out-of-order data and the sender resends single segments.
    pub fn selective(self) -> bool {
        self != Recovery::GoBackN
    }

    /// Whether the receiver answers every out-of-order packet with a NACK (a duplicate ACK), not just the
    /// first beyond a gap.
    fn nacks_every_gap_packet(self, dupack_threshold: u32) -> bool {
        dupack_threshold > 1 || self == Recovery::FullTcpSack
    }

    /// Whether the receiver answers each out-of-order packet with a SACK ([`Recovery::Uet`]).
    pub fn sacks_each_packet(self) -> bool {
        self == Recovery::Uet
    }
}

/// Reliable-delivery parameters of the NICs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// Acknowledge every this many in-order packets (1 = every packet); 0 acknowledges only the whole flow (a
    /// scheme whose other packets carry the acknowledgements, or that needs none before the end: ExpressPass's
    /// credits, Homa's grants).
    pub ack_every: u32,
    /// The retransmission timeout before the flow's first RTT sample (RFC 6298 §2.1; it is the only one a
    /// one-packet flow ever has). RFC 6298 says 1 s; the default, 10 ms, is above the longest wait a packet
    /// meets in the lossless fabrics of BFC's evaluation (about 4 ms), so no flow's first packets are resent
    /// for delay alone (`docs/FIDELITY.md`, "Figs. 9–11 under incast").
    pub rto_initial: Time,
    /// Floor of the retransmission timeout once the flow has RTT samples.
    pub rto_min: Time,
    /// Ceiling of the backed-off retransmission timeout.
    pub rto_max: Time,
    /// Go-back-N or selective repeat.
    pub recovery: Recovery,
    /// The sender resends a hole on the N-th NACK naming it. With more than 1, the receiver answers every
    /// out-of-order packet with a NACK, TCP's duplicate ACK, and the sender waits for N of them as TCP's fast
    /// retransmit does (RFC 5681 §3.2: 3; ns-2's `numdupacks_`, 3 in BCC's scripts): a window with fewer than N
    /// packets after a loss then waits for the timeout. 1 (the default): the first NACK resends.
    pub dupack_threshold: u32,
    /// The retransmission timer stands still while per-hop flow control (BFC, PFC) pauses the flow's NIC
    /// queue: the pause says the network holds the flow's packets, not that it lost them.
    pub rto_holds_while_paused: bool,
    /// The receiver answers the first packet beyond a gap with a NACK. Off, a gap waits for the scheme's own
    /// recovery (Homa's RESEND): with packet spraying, packets arrive out of order all the time.
    pub nack: bool,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            ack_every: 1,
            rto_initial: Time::from_ms(10),
            rto_min: Time::from_ms(1),
            rto_max: Time::from_ms(64),
            recovery: Recovery::GoBackN,
            dupack_threshold: 1,
            rto_holds_while_paused: true,
            nack: true,
        }
    }
}

impl TransportConfig {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), String> {
        if self.dupack_threshold == 0 {
            return Err("nic.dupack_threshold must be at least 1".into());
        }
        if self.rto_min == Time::ZERO || self.rto_max < self.rto_min {
            return Err(format!(
                "need 0 < nic.rto_min ({}) <= nic.rto_max ({})",
                self.rto_min, self.rto_max
            ));
        }
        if self.rto_initial == Time::ZERO || self.rto_max < self.rto_initial {
            return Err(format!(
                "need 0 < nic.rto_initial ({}) <= nic.rto_max ({})",
                self.rto_initial, self.rto_max
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
    /// The last go-back on a switch's drop notice: when, and from which byte (go-back-N only).
    rewind: Option<(Time, u64)>,
    /// Selective repeat: the first byte of each segment known lost and not yet resent, and their bytes.
    lost: Option<BTreeSet<u64>>,
    lost_bytes: u64,
    /// `Recovery::Sack`: resend what partial ACKs point to.
    partial_acks: bool,
    /// `Recovery::FullTcpSack`: what the receiver is known to hold above `snd_una`.
    scoreboard: Option<Box<Scoreboard>>,
    /// [`Recovery::Uet`]: the segments the receiver holds beyond `snd_una`, from its SACKs.
    held: Option<Box<Held>>,
    /// While recovering from a loss: one past the highest byte sent when it was seen (RFC 6582's `recover`).
    recover: Option<u64>,
    /// NACKs needed to resend a hole, and those seen so far for the hole at `dup_seq`.
    dupack_threshold: u32,
    dupacks: u32,
    dup_seq: u64,
}

/// [`Recovery::Uet`]'s record of the segments the receiver holds beyond `snd_una`.
#[derive(Clone, Debug, Default)]
struct Held {
    /// Their first bytes.
    segments: BTreeSet<u64>,
    /// Their payload bytes.
    bytes: u64,
}

/// ns-2 `FullTcp/Sack`'s sender-side record of the receiver's SACK blocks ([`Recovery::FullTcpSack`]).
#[derive(Clone, Debug, Default)]
struct Scoreboard {
    /// First bytes of the segments the receiver holds beyond `snd_una`.
    sacked: BTreeSet<u64>,
    /// Holes below this byte were resent in the current recovery, or found held: ns-2's `h_seqno_`.
    next_hole: u64,
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
    #[inline]
    pub fn new(size: u64, mss: u32, cfg: &TransportConfig) -> Sender {
        Sender {
            size,
            mss: mss as u64,
            snd_una: 0,
            snd_nxt: 0,
            high_water: 0,
            rto: RtoEstimator::new(cfg),
            rewind: None,
            lost: cfg.recovery.selective().then(BTreeSet::new),
            lost_bytes: 0,
            partial_acks: cfg.recovery == Recovery::Sack,
            scoreboard: (cfg.recovery == Recovery::FullTcpSack).then(Box::default),
            held: cfg.recovery.sacks_each_packet().then(Box::default),
            recover: None,
            dupack_threshold: cfg.dupack_threshold,
            dupacks: 0,
            dup_seq: 0,
        }
    }

    /// Payload bytes of the segment starting at byte `seq`.
    fn seg_len(&self, seq: u64) -> u64 {
        self.mss.min(self.size - seq)
    }

    /// Selective repeat: forgets lost segments below the first unacknowledged byte.
    fn prune_lost(&mut self) {
        let Some(lost) = &mut self.lost else { return };
        while let Some(&seq) = lost.first()
            && seq < self.snd_una
        {
            lost.pop_first();
            self.lost_bytes -= self.mss.min(self.size - seq);
        }
        if let Some(board) = &mut self.scoreboard {
            while board.sacked.first().is_some_and(|&seq| seq < self.snd_una) {
                board.sacked.pop_first();
            }
        }
    }

    /// [`Recovery::Uet`]: forgets the held segments below the first unacknowledged byte; returns their bytes,
    /// which an ACK moving over them does not acknowledge anew.
    #[inline(always)]
    fn prune_held(&mut self) -> u64 {
        if self.held.is_none() {
            return 0;
        }
        self.prune_held_segments()
    }

    /// [`Sender::prune_held`]'s work, out of line: only `Recovery::Uet` holds segments.
    #[cold]
    #[inline(never)]
    fn prune_held_segments(&mut self) -> u64 {
        let Some(held) = &mut self.held else { return 0 };
        let mut bytes = 0;
        while let Some(&seq) = held.segments.first()
            && seq < self.snd_una
        {
            held.segments.pop_first();
            bytes += self.mss.min(self.size - seq);
        }
        held.bytes -= bytes;
        bytes
    }

    /// Selective repeat: marks the segment at `seq` lost (it will be resent next). Returns false if it is
    /// acknowledged, never sent, or already marked.
    fn mark_lost(&mut self, seq: u64) -> bool {
        if seq < self.snd_una || seq >= self.snd_nxt {
            return false;
        }
        if self
            .held
            .as_ref()
            .is_some_and(|h| h.segments.contains(&seq))
        {
            return false;
        }
        let len = self.seg_len(seq);
        let lost = self.lost.as_mut().expect("selective repeat");
        if !lost.insert(seq) {
            return false;
        }
        self.lost_bytes += len;
        true
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
    /// Payload bytes still to go: never sent, or known lost and waiting to be resent (selective repeat).
    pub fn to_send(&self) -> u64 {
        self.remaining() + self.lost_bytes
    }
    /// Bytes sent and not yet acknowledged (under [`Recovery::Uet`], nor held by the receiver nor known lost:
    /// uet-htsim's `_in_flight`, which a NACK or a timeout lowers by the packet they name).
    #[inline]
    pub fn in_flight(&self) -> u64 {
        match &self.held {
            None => self.snd_nxt - self.snd_una,
            Some(held) => self.snd_nxt - self.snd_una - held.bytes - self.lost_bytes,
        }
    }
    /// True while some payload has never been sent (or must be sent again).
    pub fn has_unsent(&self) -> bool {
        self.snd_nxt < self.size || self.lost_bytes > 0
    }
    /// Selective repeat: true while a segment known lost waits to be resent.
    pub fn resending(&self) -> bool {
        self.lost_bytes > 0
    }
    /// True while some payload is unacknowledged.
    pub fn outstanding(&self) -> bool {
        self.snd_una < self.size
    }

    /// Whether the next segment fits in `window` bytes of payload in flight. A window smaller than one segment
    /// still lets one segment out when nothing is in flight, so a flow can always make progress.
    /// A segment known lost (selective repeat) goes at once, whatever the window: it takes the place of the
    /// copy the network dropped, so the bytes in flight do not grow. (The window cannot tell: without SACK
    /// the bytes the receiver holds beyond a hole still count as in flight.) Under [`Recovery::Uet`], whose
    /// count of bytes in flight leaves out the lost ones, a resent segment waits for the window as a new one
    /// does (uet-htsim's `can_send_NSCC`).
    #[inline]
    pub fn can_send(&self, window: u64) -> bool {
        let seg = if self.lost_bytes > 0 {
            if self.held.is_none() {
                return true;
            }
            self.mss
        } else if self.has_unsent() {
            self.seg_len(self.snd_nxt)
        } else {
            return false;
        };
        self.in_flight() == 0 || self.in_flight() + seg <= window
    }

    /// Takes the next segment: `(seq, payload bytes, whether it was sent before)`.
    #[inline(always)]
    pub fn next_segment(&mut self) -> (u64, u32, bool) {
        if self.lost_bytes > 0 {
            let lost = self.lost.as_mut().expect("selective repeat");
            let seq = lost.pop_first().expect("lost bytes are in lost segments");
            let len = self.mss.min(self.size - seq);
            self.lost_bytes -= len;
            return (seq, len as u32, true);
        }
        let seq = self.snd_nxt;
        let len = self.seg_len(seq);
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
        let advanced = ack_seq - self.snd_una;
        self.snd_una = ack_seq;
        self.snd_nxt = self.snd_nxt.max(ack_seq);
        self.prune_lost();
        let newly = advanced - self.prune_held();
        if let Some(recover) = self.recover {
            if ack_seq >= recover {
                self.recover = None;
            } else if self.partial_acks {
                self.mark_lost(ack_seq);
            }
        }
        self.rto.reset_backoff();
        AckOutcome {
            newly_acked: newly,
            complete: self.snd_una >= self.size,
        }
    }

    /// A NACK: the receiver holds everything below `seq` and wants `seq` next; `sacked`, when known, is the
    /// first byte of the out-of-order segment that drew it. Returns whether a loss episode begins, so the
    /// sender will resend and its congestion control should react (false for a stale NACK): go-back-N goes back
    /// to `seq`, selective repeat resends its segment. Under [`Recovery::FullTcpSack`] only the NACK that starts
    /// a recovery says so; the holes later NACKs reveal are resent without one.
    pub fn handle_nack(&mut self, seq: u64, sacked: Option<u64>) -> bool {
        let seq = seq.min(self.size);
        if seq > self.snd_una {
            self.snd_una = seq;
            // As an ACK does: the receiver holds what lies below `seq`, so none of it is sent again (a sender that
            // went back below it would otherwise count its bytes in flight from below zero).
            self.snd_nxt = self.snd_nxt.max(seq);
            self.prune_lost();
            self.prune_held();
        }
        if self.scoreboard.is_some() {
            return self.sack_nack(seq, sacked);
        }
        if self.dupack_threshold > 1 && !self.count_dupack(seq) {
            return false;
        }
        if self.lost.is_some() {
            if self.partial_acks && self.recover.is_none() {
                self.recover = Some(self.high_water);
            }
            return self.mark_lost(seq);
        }
        if seq < self.snd_nxt && seq >= self.snd_una {
            self.snd_nxt = seq;
            return true;
        }
        false
    }

    /// Counts a duplicate ACK for the hole at `seq`: true for the threshold-th, the one that resends it.
    fn count_dupack(&mut self, seq: u64) -> bool {
        if seq == self.dup_seq {
            self.dupacks += 1;
        } else {
            (self.dup_seq, self.dupacks) = (seq, 1);
        }
        self.dupacks == self.dupack_threshold
    }

    /// [`Recovery::FullTcpSack`]'s duplicate ACK: records the segment it reports held; the threshold-th for a
    /// hole outside a recovery starts one (ns-2's `dupack_action`: `fast_retransmit` of the first hole); in a
    /// recovery, resends the holes below the highest byte held that were not resent yet.
    fn sack_nack(&mut self, seq: u64, sacked: Option<u64>) -> bool {
        let (snd_una, snd_nxt) = (self.snd_una, self.snd_nxt);
        let board = self.scoreboard.as_mut().expect("FullTcpSack");
        if let Some(s) = sacked.filter(|s| (snd_una..snd_nxt).contains(s)) {
            board.sacked.insert(s);
        }
        let starts = self.recover.is_none() && self.count_dupack(seq);
        if starts {
            self.recover = Some(self.high_water);
            self.mark_lost(self.snd_una);
        }
        if self.recover.is_some() {
            self.resend_sacked_holes();
        }
        starts
    }

    /// Marks lost every segment from the retransmission pointer to the highest held one that the receiver does
    /// not hold, and moves the pointer past them (ns-2's `nxt_tseq` walking `ReassemblyQueue::nexthole`).
    fn resend_sacked_holes(&mut self) {
        let mut board = self.scoreboard.take().expect("FullTcpSack");
        if let Some(&high) = board.sacked.last() {
            let mut seq = board.next_hole.max(self.snd_una);
            while seq < high {
                if !board.sacked.contains(&seq) {
                    self.mark_lost(seq);
                }
                seq += self.seg_len(seq);
            }
            board.next_hole = seq;
        }
        self.scoreboard = Some(board);
    }

    /// Selective repeat: the receiver holds everything below `from` and nothing of `[from, to)` (Homa's RESEND,
    /// §3 "Lost packets", of a byte range): every segment of the range sent so far goes again. Returns whether
    /// any will.
    pub fn handle_resend(&mut self, from: u64, to: u64) -> bool {
        let nacked = self.handle_nack(from, None);
        self.handle_missing(from, to) | nacked
    }

    /// Selective repeat: the receiver lacks `[from, to)`, and says nothing of what lies below `from` (Aeolus's
    /// probe answer names every missing range, not only the first): every segment of the range sent so far
    /// goes again. Returns whether any will.
    pub fn handle_missing(&mut self, from: u64, to: u64) -> bool {
        let mut any = false;
        let mut seq = from;
        while seq < to.min(self.snd_nxt) {
            any |= self.mark_lost(seq);
            seq += self.seg_len(seq);
        }
        any
    }

    /// A switch dropped the data packet starting at `seq`, which the sender emitted at `sent_at`, and says so
    /// at once (BFC §6.2.1's "HPCC-PFC": "the switch informs the sender directly, which then retransmits the
    /// dropped packet"). Selective repeat resends that segment. With go-back-N receivers, retransmitting the
    /// packet means going back to it; nothing happens if `seq` is acknowledged, not yet (re)sent, or already
    /// covered by a go-back made after `sent_at` ([`Sender::covered`]). Returns whether the sender will resend.
    pub fn handle_drop_notice(&mut self, seq: u64, sent_at: Time, now: Time) -> bool {
        if self.lost.is_some() {
            return self.mark_lost(seq);
        }
        if seq < self.snd_una || seq >= self.snd_nxt || self.covered(seq, sent_at) {
            return false;
        }
        self.snd_nxt = seq;
        self.rewind = Some((now, seq));
        true
    }

    /// Whether drop notices already repair the gap at byte `seq` that a packet sent at `sent_at` revealed (a
    /// NACK echoes that time), so the NACK needs no action: under selective repeat every dropped packet was
    /// notified and queued for resending; under go-back-N, a go-back on a notice made after `sent_at` from a
    /// byte at or below `seq` resends it anyway. Only meaningful when switches send drop notices.
    pub fn covered(&self, seq: u64, sent_at: Time) -> bool {
        self.lost.is_some()
            || self
                .rewind
                .is_some_and(|(at, from)| sent_at < at && from <= seq)
    }

    /// [`Recovery::Uet`]'s SACK: the receiver holds the segment starting at `seq` beyond a gap; `rtt` is the
    /// sample from the echoed send time. Returns the payload bytes it newly reports received (0 for a segment
    /// acknowledged or reported already, or not sent).
    pub fn handle_sack(&mut self, seq: u64, rtt: Option<Time>) -> u64 {
        if let Some(rtt) = rtt {
            self.rto.sample(rtt);
        }
        if seq < self.snd_una || seq >= self.snd_nxt.max(self.high_water) {
            return 0;
        }
        let len = self.seg_len(seq);
        let held = self.held.as_mut().expect("SACKs come under Recovery::Uet");
        if !held.segments.insert(seq) {
            return 0;
        }
        held.bytes += len;
        if let Some(lost) = &mut self.lost
            && lost.remove(&seq)
        {
            self.lost_bytes -= len;
        }
        self.rto.reset_backoff();
        len
    }

    /// The retransmission timer fired with data outstanding: resend from the first unacknowledged byte (under
    /// [`Recovery::Uet`], every segment sent and not known received: uet-htsim times each packet from its own
    /// send, and once the oldest has waited a timeout with nothing acknowledged the others follow one after
    /// another, each leaving the bytes in flight).
    pub fn handle_timeout(&mut self) {
        if self.held.is_some() {
            let mut seq = self.snd_una;
            while seq < self.snd_nxt {
                self.mark_lost(seq);
                seq += self.seg_len(seq);
            }
            self.rto.back_off();
            return;
        }
        self.snd_nxt = self.snd_una;
        self.recover = None;
        if let Some(board) = &mut self.scoreboard {
            **board = Scoreboard::default();
        }
        if let Some(lost) = &mut self.lost {
            lost.clear();
            self.lost_bytes = 0;
        }
        self.rto.back_off();
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Time {
        self.rto.rto()
    }

    /// What a persistent connection keeps of this flow for its next: the RTT estimate.
    pub fn rtt_estimate(&self) -> RttEstimate {
        RttEstimate(self.rto)
    }

    /// The sender of a flow on a connection that has carried others: it starts from their RTT estimate (its
    /// back-off cleared: the previous flow ended on an acknowledgement) instead of `rto_initial`.
    pub fn with_rtt_estimate(mut self, estimate: RttEstimate) -> Sender {
        self.rto = estimate.0;
        self.rto.reset_backoff();
        self
    }
}

/// A persistent connection's RTT estimate, handed from one flow to the next ([`Sender::rtt_estimate`]).
#[derive(Clone, Copy, Debug)]
pub struct RttEstimate(RtoEstimator);

impl RttEstimate {
    /// The retransmission timeout it gives.
    pub fn rto(&self) -> Time {
        self.0.rto()
    }
}

/// RFC 6298's estimator: `RTO = max(rto_min, SRTT + 4·RTTVAR)`, `rto_initial` until the first sample (§2.1),
/// doubled per consecutive expiry up to `rto_max`. Integer picoseconds throughout.
#[derive(Clone, Copy, Debug)]
struct RtoEstimator {
    srtt: u64,
    rttvar: u64,
    backoff: u32,
    initial: u64,
    min: u64,
    max: u64,
}

impl RtoEstimator {
    fn new(cfg: &TransportConfig) -> Self {
        RtoEstimator {
            srtt: 0,
            rttvar: 0,
            backoff: 0,
            initial: cfg.rto_initial.0,
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
        let base = if self.srtt == 0 {
            self.initial
        } else {
            (self.srtt + 4 * self.rttvar).max(self.min)
        };
        Time(base.saturating_mul(1 << self.backoff.min(20)).min(self.max))
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
    /// NACK gaps at all ([`TransportConfig::nack`]).
    nack: bool,
    /// Every out-of-order packet draws a NACK (a duplicate ACK), for a sender that waits for several.
    dupacks: bool,
    /// [`Recovery::Uet`]: each out-of-order packet draws a SACK, and a CE-marked packet an ACK, at once.
    sack_each: bool,
    /// Selective repeat: the byte ranges held above `rcv_nxt`, sorted and disjoint (`None`: go-back-N, which
    /// drops out-of-order data).
    held: Option<Vec<(u64, u64)>>,
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
    /// [`Recovery::Uet`]'s SACK: the receiver holds the out-of-order segment starting at `seq`.
    Sack {
        /// First byte of the segment.
        seq: u64,
        /// Its payload bytes if it carried the CE mark, else 0.
        ce_bytes: u32,
    },
    /// A NACK: the receiver expects `seq`.
    Nack {
        /// Next byte expected.
        seq: u64,
        /// First byte of the out-of-order segment that drew it (SACK's newest block).
        sacked: u64,
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
            nack: cfg.nack,
            dupacks: cfg.recovery.nacks_every_gap_packet(cfg.dupack_threshold),
            sack_each: cfg.recovery.sacks_each_packet(),
            held: cfg.recovery.selective().then(Vec::new),
        }
    }

    /// Next byte expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Selective repeat: the first byte held beyond the gap at `rcv_nxt`, if any (the end of the first missing
    /// range).
    pub fn first_held(&self) -> Option<u64> {
        self.held.as_ref()?.first().map(|&(s, _)| s)
    }

    /// The byte ranges below `end` that have not arrived, in order: under selective repeat the gaps between
    /// the held ranges, under go-back-N everything from `rcv_nxt` (Aeolus's probe answer names them all).
    pub fn missing_below(&self, end: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let held = self.held.as_deref().unwrap_or(&[]);
        let starts = std::iter::once(self.rcv_nxt).chain(held.iter().map(|&(_, e)| e));
        let ends = held
            .iter()
            .map(|&(s, _)| s)
            .chain(std::iter::once(u64::MAX));
        starts
            .zip(ends)
            .map(move |(s, e)| (s, e.min(end)))
            .take_while(move |&(s, _)| s < end)
            .filter(|&(s, e)| s < e)
    }

    /// Payload bytes held: everything below `rcv_nxt`, and under selective repeat the ranges beyond a gap.
    pub fn received(&self) -> u64 {
        let beyond: u64 = self.held.iter().flatten().map(|&(s, e)| e - s).sum();
        self.rcv_nxt + beyond
    }

    /// Handles a data packet carrying `[seq, seq + len)`, CE-marked or not.
    pub fn handle_data(&mut self, seq: u64, len: u32, ce: bool) -> Reply {
        if seq == self.rcv_nxt {
            self.rcv_nxt += len as u64;
            self.unacked_pkts += 1;
            if ce {
                self.ce_bytes += len;
            }
            // A filled gap acknowledges the held data behind it at once, unless only the whole flow is.
            let filled = self.take_held() && self.ack_every != 0;
            let due = self.ack_every != 0 && self.unacked_pkts >= self.ack_every;
            if filled || due || self.rcv_nxt >= self.size || (ce && self.sack_each) {
                return self.ack();
            }
            Reply::Nothing
        } else if seq < self.rcv_nxt {
            // A duplicate: the sender went back further than needed or our ACK was lost; say where we are.
            self.ack()
        } else if self.sack_each {
            if !self.hold(seq, seq + len as u64, None) {
                return self.ack();
            }
            Reply::Sack {
                seq,
                ce_bytes: if ce { len } else { 0 },
            }
        } else if !self.hold(seq, seq + len as u64, ce.then_some(len)) {
            // Already held: a duplicate of out-of-order data.
            self.ack()
        } else if self.nack && (self.dupacks || self.nacked != Some(self.rcv_nxt)) {
            self.nacked = Some(self.rcv_nxt);
            Reply::Nack {
                seq: self.rcv_nxt,
                sacked: seq,
            }
        } else {
            Reply::Nothing
        }
    }

    /// Selective repeat: keeps the out-of-order range `[start, end)` (counting `ce` marked bytes). Returns
    /// false if it was held already; true under go-back-N, which drops it.
    fn hold(&mut self, start: u64, end: u64, ce: Option<u32>) -> bool {
        let Some(held) = &mut self.held else {
            return true;
        };
        let at = held.partition_point(|&(_, e)| e <= start);
        if held.get(at).is_some_and(|&(s, _)| s <= start) {
            return false;
        }
        held.insert(at, (start, end));
        // Segments are whole packets of a fixed size, so ranges never overlap; merge neighbours.
        if at + 1 < held.len() && held[at + 1].0 == end {
            held[at].1 = held.remove(at + 1).1;
        }
        if at > 0 && held[at - 1].1 == start {
            held[at - 1].1 = held.remove(at).1;
        }
        self.ce_bytes += ce.unwrap_or(0);
        true
    }

    /// Moves `rcv_nxt` over held data that now follows it; returns whether it moved.
    fn take_held(&mut self) -> bool {
        let Some(held) = &mut self.held else {
            return false;
        };
        match held.first() {
            Some(&(s, e)) if s <= self.rcv_nxt => {
                self.rcv_nxt = self.rcv_nxt.max(e);
                held.remove(0);
                true
            }
            _ => false,
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
mod tests;
