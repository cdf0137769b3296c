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
    assert_eq!(
        r.handle_data(2000, 1000, false),
        Reply::Nack {
            seq: 1000,
            sacked: 2000
        }
    );
    assert_eq!(r.handle_data(3000, 1000, false), Reply::Nothing);
    assert_eq!(s.handle_ack(1000, None).newly_acked, 1000);
    assert!(s.handle_nack(1000, None));
    assert_eq!(s.snd_nxt(), 1000);
    assert!(
        !s.handle_nack(1000, None),
        "a stale NACK does not go back again"
    );
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

fn selective(ack_every: u32) -> TransportConfig {
    TransportConfig {
        recovery: Recovery::Selective,
        ..cfg(ack_every)
    }
}

/// TCP's fast retransmit with `sack` recovery: every out-of-order packet draws a NACK (a duplicate ACK), the
/// third for a hole resends it; the ACK that fills it but stays below the highest byte sent names the next
/// hole, which is resent at once (NewReno's partial ACK).
#[test]
fn three_duplicate_acks_then_partial_acks() {
    let cfg = TransportConfig {
        recovery: Recovery::Sack,
        dupack_threshold: 3,
        ..cfg(1)
    };
    let mut snd = Sender::new(10_000, 1000, &cfg);
    let mut rcv = Receiver::new(10_000, &cfg);
    for _ in 0..10 {
        snd.next_segment();
    }
    // Segments 1000 and 3000 are lost.
    let mut replies = Vec::new();
    for seq in [0u64, 2000, 4000, 5000, 6000] {
        replies.push(rcv.handle_data(seq, 1000, false));
    }
    assert_eq!(
        replies[0],
        Reply::Ack {
            seq: 1000,
            ce_bytes: 0
        }
    );
    assert!(
        replies[1..]
            .iter()
            .all(|r| matches!(r, Reply::Nack { seq: 1000, .. }))
    );
    snd.handle_ack(1000, None);
    assert!(!snd.handle_nack(1000, None) && !snd.handle_nack(1000, None));
    assert!(snd.handle_nack(1000, None), "the third duplicate resends");
    assert!(!snd.handle_nack(1000, None), "the fourth does not again");
    assert_eq!(snd.next_segment(), (1000, 1000, true));
    // The resent segment fills the first hole: the ACK up to 3000 is partial and resends 3000.
    assert_eq!(
        rcv.handle_data(1000, 1000, false),
        Reply::Ack {
            seq: 3000,
            ce_bytes: 0
        }
    );
    snd.handle_ack(3000, None);
    assert_eq!(snd.next_segment(), (3000, 1000, true));
    assert_eq!(
        rcv.handle_data(3000, 1000, false),
        Reply::Ack {
            seq: 7000,
            ce_bytes: 0
        }
    );
}

/// Feeds the receiver's reply to the sender as the engine does; returns the reply.
fn deliver(snd: &mut Sender, rcv: &mut Receiver, seq: u64) -> Reply {
    let reply = rcv.handle_data(seq, 1000, false);
    match reply {
        Reply::Ack { seq, .. } => {
            snd.handle_ack(seq, None);
        }
        Reply::Nack { seq, sacked } => {
            snd.handle_ack(seq, None);
            snd.handle_nack(seq, Some(sacked));
        }
        Reply::Sack { seq, .. } => {
            snd.handle_sack(seq, None);
        }
        Reply::Nothing => {}
    }
    reply
}

fn full_tcp_sack() -> TransportConfig {
    TransportConfig {
        recovery: Recovery::FullTcpSack,
        dupack_threshold: 3,
        ..cfg(1)
    }
}

/// ns-2's `FullTcp/Sack` on an 11-packet flow that loses packets 5, 7, 9 and 11 (the helper's scripted run
/// of ns-2.35): the third duplicate ACK resends 5, 7 and 9 at once; the partial ACKs that follow resend
/// nothing, and 11, with nothing held above it, waits for the timer.
#[test]
fn full_tcp_sack_leaves_a_lost_tail_to_the_timer() {
    let cfg = full_tcp_sack();
    let mut snd = Sender::new(11_000, 1000, &cfg);
    let mut rcv = Receiver::new(11_000, &cfg);
    for _ in 0..11 {
        snd.next_segment();
    }
    for seq in [0, 1000, 2000, 3000, 5000, 7000] {
        deliver(&mut snd, &mut rcv, seq);
    }
    assert!(!snd.resending(), "two duplicate ACKs start nothing");
    assert_eq!(
        rcv.handle_data(9000, 1000, false),
        Reply::Nack {
            seq: 4000,
            sacked: 9000
        }
    );
    assert!(
        snd.handle_nack(4000, Some(9000)),
        "the third starts a recovery"
    );
    let resent: Vec<_> = std::iter::from_fn(|| snd.resending().then(|| snd.next_segment()))
        .map(|(seq, _, resent)| (seq, resent))
        .collect();
    assert_eq!(resent, [(4000, true), (6000, true), (8000, true)]);
    assert!(!snd.has_unsent());
    for seq in [4000, 6000, 8000] {
        deliver(&mut snd, &mut rcv, seq);
        assert!(!snd.has_unsent(), "a partial ACK resends nothing");
    }
    assert_eq!(snd.snd_una(), 10_000);
    snd.handle_timeout();
    assert_eq!(snd.next_segment(), (10_000, 1000, true));
    deliver(&mut snd, &mut rcv, 10_000);
    assert!(!snd.outstanding());
}

/// A hole is resent once per recovery: a lost retransmission waits for the timer, however many duplicate
/// ACKs follow; holes that later SACK blocks reveal are resent as they appear, without a new loss episode.
#[test]
fn full_tcp_sack_resends_each_hole_once() {
    let cfg = full_tcp_sack();
    let mut snd = Sender::new(20_000, 1000, &cfg);
    let mut rcv = Receiver::new(20_000, &cfg);
    for _ in 0..20 {
        snd.next_segment();
    }
    // Segment 2000 is lost, then 9000.
    for seq in [0, 1000, 3000, 4000] {
        deliver(&mut snd, &mut rcv, seq);
    }
    assert!(matches!(
        rcv.handle_data(5000, 1000, false),
        Reply::Nack { seq: 2000, .. }
    ));
    assert!(snd.handle_nack(2000, Some(5000)));
    assert_eq!(snd.next_segment(), (2000, 1000, true));
    assert!(!snd.resending());
    // The retransmission is lost too; the window's later packets reveal the hole at 9000 only.
    for seq in [6000, 7000, 8000, 10_000, 11_000] {
        deliver(&mut snd, &mut rcv, seq);
    }
    assert_eq!(snd.next_segment(), (9000, 1000, true), "a new hole");
    assert!(!snd.resending(), "2000 is not resent again");
    for seq in (12_000..20_000).step_by(1000) {
        deliver(&mut snd, &mut rcv, seq);
    }
    deliver(&mut snd, &mut rcv, 9000);
    assert!(!snd.resending() && !snd.has_unsent());
    assert_eq!(snd.snd_una(), 2000);
    snd.handle_timeout();
    assert_eq!(snd.next_segment(), (2000, 1000, true));
    assert!(matches!(
        deliver(&mut snd, &mut rcv, 2000),
        Reply::Ack { seq: 20_000, .. }
    ));
    assert!(!snd.outstanding());
}

/// Selective repeat: the receiver keeps what follows a gap, the sender resends only the notified segments,
/// and the filled gaps acknowledge everything held.
#[test]
fn selective_repeat_resends_only_lost_segments() {
    let c = selective(1);
    let us = Time::from_us;
    let mut s = Sender::new(6000, 1000, &c);
    let mut r = Receiver::new(6000, &c);
    for _ in 0..6 {
        s.next_segment();
    }
    // Segments 1000 and 3000 are dropped; the switch says so.
    assert!(s.handle_drop_notice(1000, us(0), us(1)));
    assert!(s.handle_drop_notice(3000, us(0), us(1)));
    assert!(!s.handle_drop_notice(3000, us(0), us(1)), "already marked");
    assert!(!s.handle_drop_notice(7000, us(0), us(1)), "never sent");
    assert_eq!(s.in_flight(), 6000);
    assert!(s.covered(1000, us(0)), "every drop was notified");
    let ack = |seq| Reply::Ack { seq, ce_bytes: 0 };
    assert_eq!(r.handle_data(0, 1000, false), ack(1000));
    assert_eq!(
        r.handle_data(2000, 1000, false),
        Reply::Nack {
            seq: 1000,
            sacked: 2000
        }
    );
    assert_eq!(r.handle_data(4000, 1000, true), Reply::Nothing);
    assert_eq!(r.handle_data(5000, 1000, false), Reply::Nothing);
    assert_eq!(
        r.handle_data(4000, 1000, false),
        Reply::Ack {
            seq: 1000,
            ce_bytes: 1000
        },
        "a held duplicate is acknowledged, with the marks held since the last ACK"
    );
    // The lost segments go first, in order, and nothing else is resent.
    assert!(s.can_send(1000), "a lost segment goes whatever the window");
    assert_eq!(s.next_segment(), (1000, 1000, true));
    assert_eq!(s.next_segment(), (3000, 1000, true));
    assert!(!s.has_unsent());
    assert_eq!(r.handle_data(1000, 1000, false), ack(3000));
    assert_eq!(r.handle_data(3000, 1000, false), ack(6000));
    assert!(s.handle_ack(3000, None).newly_acked == 3000);
    assert!(s.handle_ack(6000, None).complete);
}

/// Without drop notices, a NACK marks the segment it names; a timeout falls back to going back.
#[test]
fn selective_repeat_on_nack_and_timeout() {
    let c = selective(1);
    let mut s = Sender::new(5000, 1000, &c);
    for _ in 0..5 {
        s.next_segment();
    }
    assert!(
        s.handle_nack(2000, None),
        "the receiver holds 0..2000 and wants 2000"
    );
    assert_eq!(s.snd_una(), 2000);
    assert!(!s.handle_nack(2000, None), "one resend per NACK");
    assert_eq!(s.next_segment(), (2000, 1000, true));
    assert_eq!(s.snd_nxt(), 5000, "selective repeat does not go back");
    s.handle_timeout();
    assert_eq!(s.snd_nxt(), 2000);
    assert_eq!(s.next_segment(), (2000, 1000, true));
}

/// A RESEND of a range marks each segment of it that was sent; the receiver names the range by its first
/// held byte beyond the gap.
#[test]
fn resend_of_a_range() {
    let c = TransportConfig {
        nack: false,
        ..selective(0)
    };
    let mut s = Sender::new(6000, 1000, &c);
    let mut r = Receiver::new(6000, &c);
    for _ in 0..4 {
        s.next_segment();
    }
    r.handle_data(0, 1000, false);
    assert_eq!(r.handle_data(3000, 1000, false), Reply::Nothing, "no NACK");
    assert_eq!((r.rcv_nxt(), r.first_held()), (1000, Some(3000)));
    assert!(s.handle_resend(1000, 3000));
    assert_eq!(s.snd_una(), 1000);
    assert_eq!(s.next_segment(), (1000, 1000, true));
    assert_eq!(s.next_segment(), (2000, 1000, true));
    assert_eq!(s.next_segment(), (4000, 1000, false), "then new data");
    // A range beyond what was sent marks only what was.
    assert!(s.handle_resend(4000, 6000));
    assert_eq!(s.next_segment(), (4000, 1000, true));
    assert!(!s.resending());
    assert!(
        !s.handle_resend(5000, 6000),
        "never sent: nothing to resend"
    );
}

/// Every gap below a bound, for Aeolus's probe answer; go-back-N holds nothing beyond `rcv_nxt`.
#[test]
fn missing_ranges_below_a_bound() {
    let c = TransportConfig {
        nack: false,
        ..selective(0)
    };
    let mut r = Receiver::new(10_000, &c);
    assert_eq!(r.missing_below(3000).collect::<Vec<_>>(), vec![(0, 3000)]);
    for seq in [0, 2000, 3000, 6000] {
        r.handle_data(seq, 1000, false);
    }
    // Held: 0..1000 (rcv_nxt), 2000..4000, 6000..7000.
    let gaps = |r: &Receiver, end| r.missing_below(end).collect::<Vec<_>>();
    assert_eq!(
        gaps(&r, 8000),
        vec![(1000, 2000), (4000, 6000), (7000, 8000)]
    );
    assert_eq!(gaps(&r, 5000), vec![(1000, 2000), (4000, 5000)]);
    assert_eq!(gaps(&r, 4000), vec![(1000, 2000)], "no empty range");
    assert_eq!(gaps(&r, 1000), vec![]);
    let mut g = Receiver::new(10_000, &cfg(0));
    g.handle_data(0, 1000, false);
    g.handle_data(2000, 1000, false);
    assert_eq!(gaps(&g, 4000), vec![(1000, 4000)], "go-back-N kept nothing");
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
    assert_eq!(
        s.rto(),
        Time::from_ms(10),
        "no RTT sample yet: the initial RTO"
    );
    s.handle_timeout();
    assert_eq!(s.snd_nxt(), 0);
    assert_eq!(s.rto(), Time::from_ms(20), "backed off once");
    s.handle_ack(1000, Some(Time::from_us(10)));
    assert_eq!(s.rto(), Time::from_ms(1), "a 10 µs sample: the floor");
    s.handle_ack(2000, Some(Time::from_ms(3)));
    assert!(
        s.rto() > Time::from_ms(3),
        "SRTT + 4 RTTVAR above the floor"
    );
}

/// A NACK (or Homa's RESEND) from a receiver that holds more than the sender has sent since it went back (after a
/// timeout, say) moves both edges: nothing below it is sent again, and nothing is in flight.
#[test]
fn a_nack_beyond_what_was_sent_since_going_back_moves_both_edges() {
    let c = cfg(1);
    let mut s = Sender::new(5000, 1000, &c);
    for _ in 0..4 {
        s.next_segment();
    }
    s.handle_timeout();
    assert_eq!(s.in_flight(), 0);
    assert_eq!(s.next_segment(), (0, 1000, true));
    // The first four segments arrived after all: the receiver wants byte 4000.
    s.handle_nack(4000, None);
    assert_eq!(s.in_flight(), 0);
    assert_eq!(s.next_segment(), (4000, 1000, false));
}

fn uet(ack_every: u32) -> TransportConfig {
    TransportConfig {
        recovery: Recovery::Uet,
        ..cfg(ack_every)
    }
}

#[test]
fn uet_receivers_sack_each_packet_beyond_a_gap_and_ack_a_marked_one_at_once() {
    let mut r = Receiver::new(6000, &uet(4));
    assert_eq!(r.handle_data(0, 1000, false), Reply::Nothing);
    // A CE mark is acknowledged at once, whatever ack_every says.
    assert_eq!(
        r.handle_data(1000, 1000, true),
        Reply::Ack {
            seq: 2000,
            ce_bytes: 1000
        }
    );
    // 2000 is late: each packet beyond it draws a SACK of its own, with its own mark.
    assert_eq!(
        r.handle_data(3000, 1000, false),
        Reply::Sack {
            seq: 3000,
            ce_bytes: 0
        }
    );
    assert_eq!(
        r.handle_data(4000, 1000, true),
        Reply::Sack {
            seq: 4000,
            ce_bytes: 1000
        }
    );
    // The late packet fills the gap: one ACK of everything held.
    assert_eq!(
        r.handle_data(2000, 1000, false),
        Reply::Ack {
            seq: 5000,
            ce_bytes: 0
        }
    );
}

#[test]
fn uet_senders_count_sacked_and_lost_bytes_out_of_flight_and_resend_within_the_window() {
    let c = uet(1);
    let mut s = Sender::new(6000, 1000, &c);
    for _ in 0..5 {
        s.next_segment();
    }
    assert_eq!(s.in_flight(), 5000);
    // 1000 is late; 2000 and 3000 are reported held: 2000 bytes newly received, out of flight.
    assert_eq!(s.handle_sack(2000, None), 1000);
    assert_eq!(s.handle_sack(3000, None), 1000);
    assert_eq!(s.handle_sack(3000, None), 0, "reported once");
    assert_eq!(s.in_flight(), 3000);
    // The ACK that moves past them acknowledges only the bytes not SACKed already.
    let out = s.handle_ack(1000, None);
    assert_eq!(out.newly_acked, 1000);
    assert_eq!(s.handle_ack(4000, None).newly_acked, 1000);
    assert_eq!(s.in_flight(), 1000);
    // A trimmed packet's NACK: its segment leaves the flight and waits for the window like a new one.
    assert!(s.handle_drop_notice(4000, Time::ZERO, Time::ZERO));
    assert_eq!(s.in_flight(), 0);
    assert!(s.can_send(1000));
    assert_eq!(s.next_segment(), (4000, 1000, true));
    assert!(
        !s.can_send(1000),
        "one segment in flight fills a one-segment window"
    );
    assert!(s.can_send(2000));
}

#[test]
fn a_uet_timeout_resends_what_the_receiver_does_not_hold_within_the_window() {
    let c = uet(1);
    let mut s = Sender::new(4000, 1000, &c);
    for _ in 0..4 {
        s.next_segment();
    }
    s.handle_sack(1000, None);
    s.handle_sack(3000, None);
    // The window is full of packets whose NACKs never came (their headers were lost too): the timeout takes
    // them out of flight, so they can be resent.
    assert!(!s.can_send(2000));
    s.handle_timeout();
    assert_eq!(s.in_flight(), 0);
    assert!(s.can_send(1000));
    assert_eq!(s.next_segment(), (0, 1000, true));
    assert!(!s.can_send(1000), "the second waits for the window");
    assert!(s.can_send(2000));
    assert_eq!(s.next_segment(), (2000, 1000, true));
    assert!(!s.resending(), "the held segments are not resent");
}
