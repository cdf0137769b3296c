//! PFC's hooks against the scripted fabric, no event loop: a lossless priority whose ingress bytes pass the pause
//! threshold sends a PAUSE for the priority out of its ingress port, and a RESUME once they drain below it; a
//! PAUSE reaching a switch port stops every data queue of its priority, and one reaching a NIC every flow of it.

use bfcsim_core::{Bytes, Rate, Time};
use bfcsim_net::packet::PacketKind;
use bfcsim_net::queues::QueueLayout;
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Describe, NicOps, NicSide, SwitchOps, SwitchSide};
use bfcsim_schemes::flow_control::pfc::Pfc;
use bfcsim_schemes::flow_control::pfc::PfcConfig;

/// One switch, three hosts; ports with a control queue and two priorities of two data queues each.
fn star() -> FakeFabric {
    let layout = QueueLayout {
        data_base: 1,
        per_class: 2,
        classes: 2,
    };
    FakeFabric::star_with(3, Rate::gbps(100), Time::from_us(1), layout)
}

fn config() -> PfcConfig {
    PfcConfig {
        static_threshold: Some(Bytes(10_000)),
        ..PfcConfig::default()
    }
}

#[test]
fn an_ingress_over_its_threshold_pauses_its_priority_upstream_and_resumes_it_once_drained() {
    let mut fab = star();
    let mut pfc = Pfc::new(&config(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 1_000_000);
    let upstream = fab.switch_port(0, 0);
    let mut taken = 0u64;
    while fab.frames().is_empty() {
        let e = fab.data_entry(flow, 0, 2, taken * 1000);
        pfc.enqueue(&mut fab, &e).unwrap();
        taken += 1;
        assert!(taken < 50, "no PAUSE after 50 packets");
    }
    assert!(
        fab.log
            .iter()
            .any(|c| matches!(c, Call::Admit { lossless: true, .. })),
        "a lossless packet enters the buffer without a test"
    );
    // The reserve (4 KiB) and the static threshold (10 KB) of shared bytes, in 1048-byte packets.
    assert_eq!(taken, (4096 + 10_000u64).div_ceil(1048));
    assert!(pfc.ingress(0).is_paused(0, 0));
    assert_eq!(fab.frames(), vec![(upstream, PacketKind::PAUSE, 0)]);

    let egress = fab.sp(0, 2);
    while let Some((pkt, queue)) = fab.pop(egress) {
        pfc.dequeued(&mut fab, egress, pkt, queue, true);
    }
    assert_eq!(
        fab.frames(),
        vec![
            (upstream, PacketKind::PAUSE, 0),
            (upstream, PacketKind::RESUME, 0)
        ]
    );
    assert_eq!(pfc.ingress(0).total(), 0, "every byte released at ingress");
}

#[test]
fn a_pause_stops_every_data_queue_of_its_priority_at_a_switch_and_every_flow_of_it_at_a_nic() {
    let mut fab = star();
    let mut pfc = Pfc::new(&config(), &mut fab).unwrap();
    let flow = fab.add_flow(0, 2, 1_000_000);
    // Priority 1's queues are 3 and 4 (after the control queue and priority 0's two).
    let sp = fab.sp(0, 1);
    let pause = fab.new_control(flow, false, PacketKind::PAUSE, (1, 0), 64);
    pfc.switch_frame(&mut fab, sp, pause);
    assert!(fab.queues(sp).is_paused(3) && fab.queues(sp).is_paused(4));
    assert!(!fab.queues(sp).is_paused(1) && !fab.queues(sp).is_paused(2));
    assert_eq!(
        pfc.records().len(),
        1,
        "every frame received is recorded for pfc.txt"
    );

    let q = pfc.flow_started(&mut fab, 0, flow, 0);
    assert_eq!(q, 0, "a flow's NIC queue is its priority");
    let pause = fab.new_control(flow, false, PacketKind::PAUSE, (0, 0), 64);
    pfc.nic_frame(&mut fab, 0, pause);
    assert!(fab.nic_paused(0, 0));
    assert!(!pfc.may_send(&mut fab, 0, flow, 0));
    assert!(
        !pfc.nic_blocked(&fab, 0),
        "priority 1 still goes: the NIC is not blocked whole"
    );
}
