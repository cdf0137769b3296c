//! BFC's hooks against the scripted fabric, no event loop: a queue over its pause threshold pauses the queue the
//! packets came from upstream (§3.3.2), the pause is refreshed on the grid while it holds, and the upstream queue
//! is resumed once the packets that paused it have left; at a NIC a PAUSE stops the flows of its queue.

use bfcsim_core::{FlowId, Rate, Time};
use bfcsim_net::packet::PacketKind;
use bfcsim_net::queues::QueueLayout;
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Describe, FabricOps, NicOps, NicSide, SwitchOps, SwitchSide};
use bfcsim_schemes::flow_control::bfc::{Bfc, BfcConfig, REFRESH};

/// One switch, three hosts on 100 Gb/s links of 1 µs (a 2 µs hop RTT); ports with a control queue and four data
/// queues.
fn star() -> FakeFabric {
    let layout = QueueLayout {
        data_base: 1,
        per_class: 4,
        classes: 1,
    };
    FakeFabric::star_with(3, Rate::gbps(100), Time::from_us(1), layout)
}

/// Sends packets of `flow` from host 0's port into the switch, for host 2, until a frame is sent; returns how
/// many the switch took and the bytes its egress queue held before the last one.
fn fill_until_frame(
    fab: &mut FakeFabric,
    bfc: &mut Bfc,
    flow: FlowId,
    upstream_q: u32,
) -> (u32, u64) {
    let egress = fab.sp(0, 2);
    for i in 0..100 {
        let before = fab.queues(egress).bytes();
        let mut p = fab.data_packet(flow, i as u64 * 1000);
        p.upstream_q = upstream_q;
        let e = fab.entry(p, 0, 0, 2);
        bfc.enqueue(fab, &e).unwrap();
        if !fab.frames().is_empty() {
            return (i + 1, before);
        }
    }
    panic!("no frame after 100 packets");
}

#[test]
fn a_queue_over_its_threshold_pauses_the_upstream_queue_which_resumes_once_drained() {
    let mut fab = star();
    let mut bfc = Bfc::new(&BfcConfig::default(), &mut fab).unwrap();
    assert!(fab.pausing, "BFC turns pausing on at the NICs");
    // Th = HRTT · μ / N_active: 2 µs at 100 Gb/s, one active queue.
    let th = bfc.switch(0).threshold(Rate::gbps(100), 1);
    assert_eq!(th, 25_000);
    let flow = fab.add_flow(0, 2, 1_000_000);
    let (taken, before) = fill_until_frame(&mut fab, &mut bfc, flow, 7);
    // §3.3.2: a packet that finds more than Th queued ahead of it pauses; the one before it found no more.
    assert!(
        before > th && before - 1048 <= th,
        "the first packet to find more than Th queued pauses: {before} B held before it"
    );
    let upstream = fab.switch_port(0, 0);
    assert_eq!(fab.frames(), vec![(upstream, PacketKind::PAUSE, 7)]);
    let refresh = Call::Timer {
        port: upstream,
        at: Time::from_us(1),
        batched: true,
    };
    assert!(
        fab.log.contains(&refresh),
        "the pause arms the port's refresh on the 1 µs grid"
    );

    // Every packet leaves; the upstream queue resumes once the ones counted against it are gone.
    let egress = fab.sp(0, 2);
    let mut left = 0;
    while let Some((pkt, queue)) = fab.pop(egress) {
        bfc.dequeued(&mut fab, egress, pkt, queue, true);
        left += 1;
        let p = fab.packet(pkt);
        assert_eq!(
            p.upstream_q, queue as u32,
            "the queue it left is its upstreamQ at the next hop"
        );
        assert_eq!(p.hop_flags, 0);
    }
    assert_eq!(left, taken);
    assert_eq!(
        fab.frames(),
        vec![
            (upstream, PacketKind::PAUSE, 7),
            (upstream, PacketKind::RESUME, 7)
        ]
    );
}

#[test]
fn the_refresh_carries_the_paused_queues_and_stops_once_none_is() {
    let mut fab = star();
    let mut bfc = Bfc::new(&BfcConfig::default(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 1_000_000);
    fill_until_frame(&mut fab, &mut bfc, flow, 70);
    let ingress = fab.sp(0, 0);
    fab.log.clear();
    fab.now = Time::from_us(1);
    bfc.switch_timer(&mut fab, ingress);
    let frames = fab.frames();
    assert_eq!(frames.len(), 1);
    let (port, kind, index) = frames[0];
    assert_eq!((port, kind), (fab.switch_port(0, 0), REFRESH));
    assert_eq!(fab.frame_words(index as u32)[1], 1 << 6, "queue 70's bit");
    assert!(
        fab.log
            .iter()
            .any(|c| matches!(c, Call::Timer { at, batched: true, .. } if *at == Time::from_us(2))),
        "another refresh while the queue stays paused"
    );
}

#[test]
fn at_a_nic_a_pause_stops_the_flows_of_its_queue_and_a_resume_lets_them_go() {
    let mut fab = star();
    let mut bfc = Bfc::new(&BfcConfig::default(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 1_000_000);
    let q = bfc.flow_started(&mut fab, 0, flow, 0);
    assert_eq!(q, 0, "the first flow takes NIC queue 0");
    assert!(bfc.may_send(&mut fab, 0, flow, 0));
    let pause = fab.new_control(flow, false, PacketKind::PAUSE, (q as u64, 0), 64);
    bfc.nic_frame(&mut fab, 0, pause);
    assert!(fab.nic_paused(0, q));
    assert!(
        !bfc.may_send(&mut fab, 0, flow, 0),
        "its queue is paused: it waits"
    );
    let resume = fab.new_control(flow, false, PacketKind::RESUME, (q as u64, 0), 64);
    bfc.nic_frame(&mut fab, 0, resume);
    assert!(!fab.nic_paused(0, q));
    assert!(bfc.may_send(&mut fab, 0, flow, 0));
}
