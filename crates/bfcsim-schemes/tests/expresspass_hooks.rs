//! ExpressPass's hooks against the scripted fabric, no event loop: a switch port's credit queue drops the credit
//! that finds it full (§3.1), is held back while its rate limiter has no tokens and let go when they are back;
//! a new flow asks for credits and sends one data packet per credit; a receiver's credits go out through its
//! NIC's rate limiter.

use bfcsim_core::{Bytes, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::PacketKind;
use bfcsim_net::queues::QueueLayout;
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Describe, FabricOps, NicOps, NicSide, SwitchOps, SwitchSide};
use bfcsim_schemes::receiver_driven::expresspass::feedback::credit_rate;
use bfcsim_schemes::receiver_driven::expresspass::{
    CREDIT, CREDIT_REQUEST, ExpressPass, ExpressPassConfig,
};

/// One switch, three hosts; ports with a control queue, a credit queue (1) and a data queue (2).
fn star() -> FakeFabric {
    let layout = QueueLayout {
        data_base: 1,
        per_class: 1,
        classes: 2,
    };
    FakeFabric::star_with(3, Rate::gbps(100), Time::from_us(1), layout)
}

#[test]
fn a_full_credit_queue_drops_the_credit_and_a_short_bucket_holds_the_queue() {
    let mut fab = star();
    let cfg = ExpressPassConfig::default();
    let mut xp = ExpressPass::new(&cfg, &mut fab).unwrap();
    let flow = fab.add_flow(2, 0, 1_000_000);
    // Credits for host 2's flow come from host 0 (its receiver) into the switch, and leave towards host 2.
    let credit_sp = fab.sp(0, 2);
    for i in 0..cfg.credit_buffer {
        let c = fab.new_control(flow, true, CREDIT, (0, i), 64);
        let p = *fab.packet(c);
        let e = fab.entry(p, 0, 0, 2);
        xp.enqueue(&mut fab, &e).unwrap();
    }
    assert_eq!(
        fab.queues(credit_sp).queue_len(1),
        cfg.credit_buffer as usize
    );
    let c = fab.new_control(flow, true, CREDIT, (0, 99), 64);
    let p = *fab.packet(c);
    let e = fab.entry(p, 0, 0, 2);
    assert_eq!(xp.enqueue(&mut fab, &e), Err(DropReason::CreditQueueFull));

    // The bucket holds two credits: the third waits for tokens, its queue held back with a timer for them.
    fab.log.clear();
    for _ in 0..2 {
        let (pkt, q) = fab.pop(credit_sp).unwrap();
        assert_eq!(q, 1);
        xp.dequeued(&mut fab, credit_sp, pkt, q, false);
    }
    assert!(
        fab.queues(credit_sp).is_paused(1),
        "held back while its tokens are short"
    );
    let timer = fab.log.iter().find_map(|c| match *c {
        Call::Timer { at, .. } => Some(at),
        _ => None,
    });
    let at = timer.expect("a timer for the tokens");
    assert!(at > Time::ZERO);
    // The credit share of 100 Gb/s for 64-byte credits and 1048-byte data packets, one credit's time later.
    let rate = credit_rate(Rate::gbps(100), Bytes(64), Bytes(1048));
    assert_eq!(at, rate.tx_time(Bytes(64)));
    fab.now = at;
    xp.switch_timer(&mut fab, credit_sp);
    assert!(
        !fab.queues(credit_sp).is_paused(1),
        "let go when the tokens are back"
    );
    assert!(fab.log.contains(&Call::Kick {
        port: fab.switch_port(0, 2)
    }));
}

#[test]
fn a_new_flow_asks_for_credits_and_sends_one_packet_per_credit() {
    let mut fab = star();
    let mut xp = ExpressPass::new(&ExpressPassConfig::default(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 3_000);
    xp.flow_started(&mut fab, 0, flow, 0);
    assert!(
        fab.log.iter().any(|c| matches!(
            c,
            Call::Control {
                kind: CREDIT_REQUEST,
                aux: 3,
                ..
            }
        )),
        "the request says how many packets the flow has"
    );
    assert!(
        !xp.may_send(&mut fab, 0, flow, 0),
        "nothing before a credit"
    );
    let credit = fab.new_control(flow, true, CREDIT, (0, 41), 64);
    let p = *fab.packet(credit);
    xp.packet_arrived(&mut fab, 0, &p);
    assert!(fab.log.contains(&Call::Ready { flow }));
    assert!(xp.may_send(&mut fab, 0, flow, 0));
    let data = fab.new_control(flow, false, PacketKind::DATA, (0, 0), 1048);
    fab.sender_mut(0).next_segment();
    xp.data_sent(&mut fab, 0, 0, data);
    assert_eq!(
        fab.packet(data).aux,
        41,
        "the data echoes the credit it answers"
    );
    assert!(!xp.may_send(&mut fab, 0, flow, 0), "one packet per credit");
}
