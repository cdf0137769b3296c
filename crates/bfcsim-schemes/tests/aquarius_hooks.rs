//! Aquarius's hooks against the scripted fabric, no event loop: a congested flow (its queue over Q_high, §3.2)
//! pauses itself upstream with a PAUSE naming its upstream queue and its FID, and resumes once its packets have
//! left (Algorithms 1 and 2); at a NIC the PAUSE stops the flow's own queue.

use bfcsim_core::{Rate, Time};
use bfcsim_net::packet::PacketKind;
use bfcsim_net::queues::QueueLayout;
use bfcsim_schemes::fabric::fake::FakeFabric;
use bfcsim_schemes::fabric::{Describe, NicOps, NicSide, SwitchOps, SwitchSide};
use bfcsim_schemes::flow_control::aquarius::{Aquarius, AquariusConfig};

fn star() -> FakeFabric {
    let layout = QueueLayout {
        data_base: 1,
        per_class: 4,
        classes: 1,
    };
    FakeFabric::star_with(3, Rate::gbps(100), Time::from_us(1), layout)
}

#[test]
fn a_congested_flow_is_paused_upstream_by_its_fid_and_resumed_once_its_packets_left() {
    let mut fab = star();
    let mut aq = Aquarius::new(&AquariusConfig::default(), &mut fab).unwrap();
    assert!(fab.pausing);
    let flow = fab.add_flow(0, 2, 1_000_000);
    let egress = fab.sp(0, 2);
    let mut before = 0;
    for i in 0..100u64 {
        before = fab.queues(egress).bytes();
        let mut p = fab.data_packet(flow, i * 1000);
        p.upstream_q = 5;
        let e = fab.entry(p, 0, 0, 2);
        aq.enqueue(&mut fab, &e).unwrap();
        if !fab.frames().is_empty() {
            break;
        }
    }
    // Over Q_high a flow is congested whatever else holds (§3.2): 3 hop BDPs for one active queue.
    let (_, q_high) = aq.switch(0).thresholds(Rate::gbps(100), 1);
    assert_eq!(q_high, 3 * 25_000);
    assert!(
        before <= q_high,
        "paused by {before} B held, no later than Q_high"
    );
    let upstream = fab.switch_port(0, 0);
    let seq = 5 << 32 | flow.0 as u64;
    assert_eq!(fab.frames(), vec![(upstream, PacketKind::PAUSE, seq)]);

    while let Some((pkt, queue)) = fab.pop(egress) {
        aq.dequeued(&mut fab, egress, pkt, queue, true);
    }
    assert_eq!(
        fab.frames(),
        vec![
            (upstream, PacketKind::PAUSE, seq),
            (upstream, PacketKind::RESUME, seq)
        ]
    );
}

#[test]
fn at_a_nic_a_pause_stops_the_flow_s_own_queue() {
    let mut fab = star();
    let mut aq = Aquarius::new(&AquariusConfig::default(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 1_000_000);
    let q = aq.flow_started(&mut fab, 0, flow, 0);
    let pause = fab.new_control(flow, false, PacketKind::PAUSE, ((q as u64) << 32, 0), 64);
    aq.nic_frame(&mut fab, 0, pause);
    assert!(fab.nic_paused(0, q));
    assert!(!aq.may_send(&mut fab, 0, flow, 0));
}
