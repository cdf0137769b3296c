//! Homa's hooks against the scripted fabric, no event loop: a message sends its unscheduled bytes at once and
//! the rest as granted; the receiver grants after each data packet and asks for a missing range once nothing has
//! been heard for the RESEND timeout (Homa §3 "Flow control", "Lost packets").

use bfcsim_net::packet::PacketKind;
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Describe, FabricOps, NicOps, NicSide};
use bfcsim_schemes::receiver_driven::homa::{GRANT, Homa, HomaConfig, RESEND};

#[test]
fn a_message_goes_unscheduled_up_to_rtt_bytes_then_as_granted() {
    let mut fab = FakeFabric::receiver_driven_star(8);
    let flow = fab.add_flow(0, 2, 300_000);
    let mut homa = Homa::new(&HomaConfig::default(), &mut fab).unwrap();
    homa.flow_started(&mut fab, 0, flow, 0);
    while fab.sender(0).snd_nxt() < 100_000 {
        assert!(homa.may_send(&mut fab, 0, flow, 0));
        fab.sender_mut(0).next_segment();
    }
    assert!(
        !homa.may_send(&mut fab, 0, flow, 0),
        "RTTbytes sent: the rest waits for grants"
    );
    let grant = fab.new_control(flow, true, GRANT, (150_000, 3), 64);
    let p = *fab.packet(grant);
    homa.packet_arrived(&mut fab, 0, &p);
    assert!(fab.log.contains(&Call::Ready { flow }));
    assert!(homa.may_send(&mut fab, 0, flow, 0));
    let data = fab.new_control(flow, false, PacketKind::DATA, (120_000, 0), 1048);
    homa.data_sent(&mut fab, 0, 0, data);
    assert_eq!(
        fab.packet(data).class,
        3,
        "a scheduled packet at the level its grant named"
    );
}

#[test]
fn the_receiver_grants_after_data_and_asks_again_for_what_went_missing() {
    let mut fab = FakeFabric::receiver_driven_star(8);
    let flow = fab.add_flow(0, 2, 300_000);
    let mut homa = Homa::new(&HomaConfig::default(), &mut fab).unwrap();
    let p = fab.data_packet(flow, 0);
    let held = fab.receive(flow, 0, 1000);
    homa.data_arrived(&mut fab, 2, &p, held);
    let granted = fab.log.iter().find_map(|c| match *c {
        Call::Control {
            kind: GRANT, seq, ..
        } => Some(seq),
        _ => None,
    });
    assert_eq!(granted, Some(101_000), "RTTbytes beyond what arrived");
    assert!(fab.log.iter().any(|c| matches!(
        c,
        Call::Queued {
            h: 2,
            woken: true,
            ..
        }
    )));
    let timeout = HomaConfig::default().resend_timeout;
    assert!(
        fab.log
            .iter()
            .any(|c| matches!(c, Call::Timer { at, .. } if *at == timeout))
    );

    // A later packet arrives, then nothing for the timeout: the receiver asks for the gap.
    let p = fab.data_packet(flow, 5000);
    let held = fab.receive(flow, 5000, 1000);
    homa.data_arrived(&mut fab, 2, &p, held);
    fab.log.clear();
    fab.now = timeout;
    homa.nic_timer(&mut fab, 2);
    let resend = fab.log.iter().find_map(|c| match *c {
        Call::Control {
            kind: RESEND,
            seq,
            aux,
            ..
        } => Some((seq, aux)),
        _ => None,
    });
    assert_eq!(resend, Some((1000, 4000)), "bytes 1000 to 5000 are missing");
}
