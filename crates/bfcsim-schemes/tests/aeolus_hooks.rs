//! Aeolus's hooks under Homa (Homa(A)) and ExpressPass (EP(A)) against the scripted fabric, no event loop:
//! switches drop unscheduled packets above the threshold and nothing else for it (PayDebt §2.3); senders mark
//! the first sends of their first RTT and send a probe behind the last; a probe's receiver names every missing
//! range at once, and the losses go again as scheduled packets.

use bfcsim_core::FlowId;
use bfcsim_core::{Bytes, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Describe, FabricOps, NicOps, NicSide, SwitchSide};
use bfcsim_schemes::receiver_driven::aeolus::{AeolusConfig, ThresholdOver, UNSCHEDULED};
use bfcsim_schemes::receiver_driven::expresspass::{
    self, CREDIT, CREDIT_REQUEST, CREDIT_STOP, ExpressPass, ExpressPassConfig, PROBE_ANSWER,
};
use bfcsim_schemes::receiver_driven::homa::{self, Homa, HomaConfig, RESEND};
use bfcsim_schemes::transport::TransportConfig;

fn homa_a(threshold: u64, over: ThresholdOver) -> HomaConfig {
    HomaConfig {
        aeolus: Some(AeolusConfig {
            threshold: Bytes(threshold),
            over,
            unscheduled: None,
        }),
        ..HomaConfig::default()
    }
}

/// A data packet of `flow` from byte `seq` at level `class`, `mark`ed, entering the switch from host 1 towards
/// host 0.
fn entry_of(
    fab: &mut FakeFabric,
    flow: FlowId,
    seq: u64,
    class: u8,
    mark: u8,
) -> bfcsim_schemes::fabric::Entry {
    let p = Packet {
        class,
        mark,
        ..fab.data_packet(flow, seq)
    };
    fab.entry(p, 0, 1, 0)
}

/// A control packet of `flow` as [`NicOps::new_control`] makes it (64 B).
fn control(
    fab: &mut FakeFabric,
    flow: FlowId,
    to_sender: bool,
    kind: PacketKind,
    (seq, aux): (u64, u32),
) -> Packet {
    let pkt = fab.new_control(flow, to_sender, kind, (seq, aux), 64);
    *fab.packet(pkt)
}

fn admitted(fab: &FakeFabric, pkt: bfcsim_core::PacketId) -> bool {
    fab.log
        .iter()
        .any(|c| matches!(*c, Call::Push { pkt: p, .. } if p == pkt))
}

/// Under Homa with `cfg`, after seven scheduled packets of 1,048 B at the lowest level (7,336 B of the port's
/// data), an unscheduled packet at the top level: what `enqueue` says, and whether it was queued.
fn unscheduled_after_seven(
    cfg: &HomaConfig,
) -> (Result<(), DropReason>, bool, FakeFabric, Homa, FlowId) {
    let mut fab = FakeFabric::receiver_driven_star(8);
    let flow = fab.add_flow(1, 0, 100_000);
    let mut homa = Homa::new(cfg, &mut fab).unwrap();
    for i in 0..7 {
        let e = entry_of(&mut fab, flow, i * 1000, 7, 0);
        homa.enqueue(&mut fab, &e).unwrap();
    }
    fab.log.clear();
    let e = entry_of(&mut fab, flow, 7000, 0, UNSCHEDULED);
    let result = homa.enqueue(&mut fab, &e);
    let queued = admitted(&fab, e.pkt);
    (result, queued, fab, homa, flow)
}

#[test]
fn unscheduled_packets_are_dropped_above_the_threshold_and_nothing_else_is() {
    // 7,336 + 1,048 > 8,000 of the port's data: dropped before the buffer is asked.
    let (result, _, mut fab, mut homa, flow) =
        unscheduled_after_seven(&homa_a(8_000, ThresholdOver::Port));
    assert_eq!(result, Err(DropReason::SelectiveDrop));
    assert!(fab.log.is_empty(), "neither admitted nor queued");
    // The same packet scheduled goes in; so does a probe.
    let e = entry_of(&mut fab, flow, 7000, 0, 0);
    homa.enqueue(&mut fab, &e).unwrap();
    assert!(admitted(&fab, e.pkt));
    let probe = Packet {
        class: 0,
        ..control(&mut fab, flow, false, homa::PROBE, (3000, 0))
    };
    let e = fab.entry(probe, 0, 1, 0);
    homa.enqueue(&mut fab, &e).unwrap();
    assert!(admitted(&fab, e.pkt));

    // Admitted: one that fits exactly; one counted over its own queue (the top level is empty); and any
    // without Aeolus, where the mark means nothing.
    for cfg in [
        homa_a(7_336 + 1_048, ThresholdOver::Port),
        homa_a(8_000, ThresholdOver::Queue),
        HomaConfig::default(),
    ] {
        let (result, queued, ..) = unscheduled_after_seven(&cfg);
        assert_eq!((result, queued), (Ok(()), true), "{:?}", cfg.aeolus);
    }

    // ExpressPass's data queue drops them alike; its credits never see the threshold.
    let mut fab = FakeFabric::receiver_driven_star(2);
    fab.refuse = None;
    let flow = fab.add_flow(1, 0, 100_000);
    let cfg = ExpressPassConfig {
        aeolus: Some(AeolusConfig::default()),
        ..ExpressPassConfig::default()
    };
    let mut xp = ExpressPass::new(&cfg, &mut fab).unwrap();
    for i in 0..7 {
        let e = entry_of(&mut fab, flow, i * 1000, 1, 0);
        xp.enqueue(&mut fab, &e).unwrap();
    }
    let e = entry_of(&mut fab, flow, 7000, 1, UNSCHEDULED);
    assert_eq!(xp.enqueue(&mut fab, &e), Err(DropReason::SelectiveDrop));
    let e = entry_of(&mut fab, flow, 7000, 1, 0);
    xp.enqueue(&mut fab, &e).unwrap();
    assert!(admitted(&fab, e.pkt));
}

/// Sends what sender `slot` of `flow` at host `h` may send now, as its NIC would: the packets' `(seq, class,
/// mark, aux)`.
fn send_all<S: NicSide>(
    fab: &mut FakeFabric,
    side: &mut S,
    h: u32,
    flow: FlowId,
    slot: usize,
) -> Vec<(u64, u8, u8, u32)> {
    let mut sent = Vec::new();
    while fab.sender(slot).has_unsent() && side.may_send(fab, h, flow, slot) {
        let (seq, len, _) = fab.sender_mut(slot).next_segment();
        let p = Packet {
            payload: len,
            size: len + 48,
            ..fab.data_packet(flow, seq)
        };
        let pkt = fab.alloc(p);
        side.data_sent(fab, h, slot, pkt);
        let p = fab.packet(pkt);
        sent.push((p.seq, p.class, p.mark, p.aux));
    }
    sent
}

/// The control packets logged of `kind`: `(seq, aux)`.
fn controls(fab: &FakeFabric, kind: PacketKind) -> Vec<(u64, u32)> {
    fab.log
        .iter()
        .filter_map(|c| match *c {
            Call::Control {
                kind: k, seq, aux, ..
            } if k == kind => Some((seq, aux)),
            _ => None,
        })
        .collect()
}

#[test]
fn homa_marks_its_unscheduled_first_sends_probes_behind_the_last_and_resends_them_scheduled() {
    let mut fab = FakeFabric::receiver_driven_star(8);
    let flow = fab.add_flow(0, 2, 3_000);
    let mut homa = Homa::new(&homa_a(8_000, ThresholdOver::Port), &mut fab).unwrap();
    homa.flow_started(&mut fab, 0, flow, 0);
    let sent = send_all(&mut fab, &mut homa, 0, flow, 0);
    // A lone 3 KB message: every byte unscheduled, at the first unscheduled level, marked.
    assert_eq!(
        sent.iter().map(|s| (s.0, s.1, s.2)).collect::<Vec<_>>(),
        vec![
            (0, 0, UNSCHEDULED),
            (1000, 0, UNSCHEDULED),
            (2000, 0, UNSCHEDULED)
        ]
    );
    assert_eq!(
        controls(&fab, homa::PROBE),
        vec![(3000, 0)],
        "one probe, covering all"
    );
    let probe = fab
        .log
        .iter()
        .position(|c| matches!(c, Call::Control { kind, .. } if *kind == homa::PROBE))
        .unwrap();
    let Call::Control { pkt, .. } = fab.log[probe] else {
        unreachable!()
    };
    assert_eq!(
        fab.packet(pkt).class,
        0,
        "in the unscheduled packets' queue"
    );
    assert!(
        matches!(fab.log[probe + 1], Call::Queued { woken: false, .. }),
        "queued behind the packet leaving now"
    );

    // RESENDs for two ranges, the later first: neither cancels the other, and both go scheduled, at the
    // lowest level before any grant.
    for (from, len) in [(2000, 1000), (0, 1000)] {
        let r = fab.new_control(flow, true, RESEND, (from, len), 64);
        let p = *fab.packet(r);
        homa.packet_arrived(&mut fab, 0, &p);
    }
    let resent = send_all(&mut fab, &mut homa, 0, flow, 0);
    assert_eq!(
        resent.iter().map(|s| (s.0, s.1, s.2)).collect::<Vec<_>>(),
        vec![(0, 7, 0), (2000, 7, 0)]
    );
    assert_eq!(controls(&fab, homa::PROBE).len(), 1, "no second probe");
}

#[test]
fn a_homa_probe_draws_a_resend_for_every_missing_range_at_once() {
    let mut fab = FakeFabric::receiver_driven_star(8);
    let flow = fab.add_flow(0, 2, 5_000);
    let mut homa = Homa::new(&homa_a(8_000, ThresholdOver::Port), &mut fab).unwrap();
    fab.now = Time::from_us(7);
    for seq in [0, 2000, 4000] {
        let p = fab.data_packet(flow, seq);
        let held = fab.receive(flow, seq, 1000);
        homa.data_arrived(&mut fab, 2, &p, held);
    }
    fab.log.clear();
    let probe = control(&mut fab, flow, false, homa::PROBE, (5000, 0));
    homa.packet_arrived(&mut fab, 2, &probe);
    assert_eq!(
        controls(&fab, RESEND),
        vec![(1000, 1000), (3000, 1000)],
        "both gaps, now, not after the RESEND timeout"
    );

    // Nothing arrived: the whole first RTT is asked for, and the receiver now knows the message.
    let lost = fab.add_flow(1, 2, 2_500);
    fab.log.clear();
    let probe = control(&mut fab, lost, false, homa::PROBE, (2500, 0));
    homa.packet_arrived(&mut fab, 2, &probe);
    assert_eq!(controls(&fab, RESEND), vec![(0, 2500)]);
    let timeout = HomaConfig::default().resend_timeout;
    assert!(
        fab.log
            .iter()
            .any(|c| matches!(c, Call::Timer { at, .. } if *at == fab.now + timeout))
    );

    // A complete message's probe asks for nothing.
    let done = fab.add_flow(1, 2, 1_000);
    fab.receive(done, 0, 1000);
    fab.log.clear();
    let probe = control(&mut fab, done, false, homa::PROBE, (1000, 0));
    homa.packet_arrived(&mut fab, 2, &probe);
    assert!(controls(&fab, RESEND).is_empty());
}

fn ep_a() -> ExpressPassConfig {
    ExpressPassConfig {
        aeolus: Some(AeolusConfig::default()),
        ..ExpressPassConfig::default()
    }
}

/// A credit for `flow` reaching its sender at host `h`: the receiver holds everything below `ack`; its
/// sequence number is `seq`.
fn credit(fab: &mut FakeFabric, xp: &mut ExpressPass, h: u32, flow: FlowId, ack: u64, seq: u32) {
    let c = fab.new_control(flow, true, CREDIT, (ack, seq), 64);
    let p = *fab.packet(c);
    xp.packet_arrived(fab, h, &p);
}

#[test]
fn ep_sends_its_burst_without_credits_then_resends_a_loss_on_a_new_credit() {
    let mut fab = FakeFabric::receiver_driven_star(2);
    let mut xp = ExpressPass::new(&ep_a(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 3_000);
    xp.flow_started(&mut fab, 0, flow, 0);
    assert_eq!(
        controls(&fab, CREDIT_REQUEST).len(),
        1,
        "credits are asked for as ever"
    );
    let sent = send_all(&mut fab, &mut xp, 0, flow, 0);
    assert_eq!(
        sent.iter().map(|s| (s.0, s.2)).collect::<Vec<_>>(),
        vec![(0, UNSCHEDULED), (1000, UNSCHEDULED), (2000, UNSCHEDULED)],
        "the whole flow in its first RTT, no credit held"
    );
    assert_eq!(controls(&fab, expresspass::PROBE), vec![(3000, 0)]);
    assert_eq!(
        controls(&fab, CREDIT_STOP).len(),
        1,
        "nothing left: credits stop"
    );

    // The receiver got packets 0 and 2000: the probe's answer names 1000..2000.
    fab.receive(flow, 0, 1000);
    fab.receive(flow, 2000, 1000);
    fab.log.clear();
    let probe = control(&mut fab, flow, false, expresspass::PROBE, (3000, 0));
    xp.packet_arrived(&mut fab, 2, &probe);
    assert_eq!(controls(&fab, PROBE_ANSWER), vec![(1000, 1000)]);

    // At the sender: the loss waits for a credit, which the stopped flow asks for again.
    let answer = control(&mut fab, flow, true, PROBE_ANSWER, (1000, 1000));
    xp.packet_arrived(&mut fab, 0, &answer);
    assert!(fab.sender(0).resending());
    assert!(
        !xp.may_send(&mut fab, 0, flow, 0),
        "a resend needs a credit"
    );
    assert!(
        fab.log
            .iter()
            .any(|c| matches!(c, Call::Timer { at, .. } if *at == fab.now)),
        "the stopped flow asks for credits again at once (from the host's timer)"
    );
    fab.log.clear();
    xp.nic_timer(&mut fab, 0);
    assert_eq!(
        controls(&fab, CREDIT_REQUEST),
        vec![(0, 1)],
        "asking for the one packet to resend (nothing new is left: a request for none would pace no credit)"
    );
    credit(&mut fab, &mut xp, 0, flow, 1000, 5);
    let resent = send_all(&mut fab, &mut xp, 0, flow, 0);
    assert_eq!(
        resent,
        vec![(1000, 0, 0, 5)],
        "scheduled, answering credit 5"
    );
}

#[test]
fn the_first_credit_ends_eps_first_rtt_and_the_probe_goes_then() {
    let mut fab = FakeFabric::receiver_driven_star(2);
    let mut xp = ExpressPass::new(&ep_a(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 1_000_000);
    xp.flow_started(&mut fab, 0, flow, 0);
    for seq in [0, 1000] {
        assert!(xp.may_send(&mut fab, 0, flow, 0));
        let (s, len, _) = fab.sender_mut(0).next_segment();
        assert_eq!(s, seq);
        let pkt = fab.alloc(Packet {
            payload: len,
            ..fab.data_packet(flow, s)
        });
        xp.data_sent(&mut fab, 0, 0, pkt);
        assert_eq!(fab.packet(pkt).mark, UNSCHEDULED);
    }
    assert!(controls(&fab, expresspass::PROBE).is_empty());
    credit(&mut fab, &mut xp, 0, flow, 0, 0);
    let sent = send_all(&mut fab, &mut xp, 0, flow, 0);
    assert_eq!(
        sent,
        vec![(2000, 0, 0, 0)],
        "one packet for the one credit, scheduled"
    );
    assert_eq!(
        controls(&fab, expresspass::PROBE),
        vec![(3000, 0)],
        "behind the last packet that went before the credit's"
    );
    assert!(
        !xp.may_send(&mut fab, 0, flow, 0),
        "credits only, from now on"
    );
}

#[test]
fn aeolus_needs_its_transport_and_homa_keeps_its_own_unscheduled_bytes() {
    let mut fab = FakeFabric::receiver_driven_star(2);
    fab.transport = TransportConfig::default();
    let err = ExpressPass::new(&ep_a(), &mut fab).err().unwrap();
    assert!(err.contains("nic.recovery = \"selective\""), "{err}");
    let mut cfg = homa_a(8_000, ThresholdOver::Port);
    cfg.aeolus.as_mut().unwrap().unscheduled = Some(bfcsim_schemes::cc::WindowSpec::Bdp(1));
    let err = cfg.validate().unwrap_err();
    assert!(err.contains("rtt_bytes"), "{err}");
    let zero = homa_a(0, ThresholdOver::Port);
    assert!(zero.validate().unwrap_err().contains("aeolus.threshold"));
}
