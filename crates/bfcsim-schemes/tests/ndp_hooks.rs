//! NDP's hooks driven on the fake fabric with scripted inputs and no event loop (Handley et al. §3; htsim's
//! `CompositeQueue`, `NdpSink` and `NdpSrc`): trimming at the data queue's limit, the control queue's bound and
//! return to sender, the receiver's PULLs and NACKs paced across its senders, and the sender's credit.

use bfcsim_core::{Bytes, FlowId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};
use bfcsim_schemes::cc::WindowSpec;
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Describe, FabricOps, NicOps, NicSide, SwitchOps, SwitchSide};
use bfcsim_schemes::receiver_driven::ndp::{BOUNCE, Ndp, NdpConfig, PULL};
use bfcsim_schemes::transport::Recovery;

const HEADER: u32 = 64;
/// A full packet on the wire: 1,000 B of payload and 48 B of headers.
const PACKET: u32 = 1048;

/// A star of three hosts, flows from hosts 0 and 1 to host 2, and NDP with `cfg` (three packets of first
/// window).
fn star(cfg: NdpConfig) -> (FakeFabric, [FlowId; 2], Ndp) {
    let mut fab = FakeFabric::star(3, Rate::gbps(100), Time::from_us(1));
    fab.transport.recovery = Recovery::Selective;
    let flows = [fab.add_flow(0, 2, 100_000), fab.add_flow(1, 2, 100_000)];
    let cfg = NdpConfig {
        initial_window: WindowSpec::Bytes(Bytes(3000)),
        ..cfg
    };
    let ndp = Ndp::new(&cfg, &mut fab).unwrap();
    (fab, flows, ndp)
}

/// The sender of the flow in slot 0 (from host 0) sends its next segment: its `seq`.
fn send(fab: &mut FakeFabric, ndp: &mut Ndp, flow: FlowId) -> u64 {
    let (seq, _, _) = fab.sender_mut(0).next_segment();
    let pkt = fab.alloc(fab.data_packet(flow, seq));
    ndp.data_sent(fab, 0, 0, pkt);
    seq
}

fn pulls(fab: &FakeFabric) -> Vec<(FlowId, u64)> {
    fab.log
        .iter()
        .filter_map(|c| match *c {
            Call::Control {
                flow, kind, seq, ..
            } if kind == PULL => Some((flow, seq)),
            _ => None,
        })
        .collect()
}

/// The data queue holds 8 packets; the 9th is cut to its header, which waits in the control queue and leaves
/// first.
#[test]
fn the_ninth_packet_is_trimmed_to_a_header_that_leaves_first() {
    let (mut fab, [flow, _], mut ndp) = star(NdpConfig::default());
    let egress = fab.sp(0, 2);
    for i in 0..9u64 {
        let e = fab.data_entry(flow, 0, 2, i * 1000);
        ndp.enqueue(&mut fab, &e).unwrap();
    }
    let q = fab.queues(egress);
    assert_eq!((q.queue_len(1), q.queue_len(0)), (8, 1));
    assert_eq!(q.queue_bytes(0), u64::from(HEADER));
    let (pkt, queue) = fab.pop(egress).unwrap();
    let p = *fab.packet(pkt);
    assert_eq!(queue, 0);
    assert!(p.trimmed() && p.seq == 8000 && p.size == HEADER);
}

/// The control queue holds twice the data queue's bytes by default (htsim), here set to two headers: the
/// third header goes back to its sender, through the switch's port toward it, as a return; with return to
/// sender off it is dropped.
#[test]
fn a_full_control_queue_returns_the_header_to_its_sender() {
    let cfg = NdpConfig {
        queue_packets: 1,
        header_queue: Some(Bytes(2 * u64::from(HEADER))),
        ..NdpConfig::default()
    };
    assert_eq!(
        NdpConfig::default().header_queue_bytes(PACKET),
        2 * 8 * u64::from(PACKET)
    );
    let (mut fab, [flow, _], mut ndp) = star(cfg.clone());
    for i in 0..4u64 {
        let e = fab.data_entry(flow, 0, 2, i * 1000);
        ndp.enqueue(&mut fab, &e).unwrap();
    }
    let (to_dst, to_src) = (fab.sp(0, 2), fab.sp(0, 0));
    assert_eq!(fab.queues(to_dst).queue_len(0), 2, "two headers fit");
    let back = fab.queues(to_src);
    assert_eq!(
        (back.queue_len(0), back.queue_bytes(0)),
        (1, u64::from(HEADER))
    );
    let (pkt, _) = fab.pop(to_src).unwrap();
    let p = *fab.packet(pkt);
    assert_eq!((p.kind, p.dst_host, p.seq), (BOUNCE, 0, 3000));
    assert!(p.trimmed());
    let port = fab.sw_port_id(to_src);
    assert!(fab.log.contains(&Call::Reroute { pkt, egress: port }));
    assert!(fab.log.contains(&Call::Kick { port }));
    assert_eq!((ndp.stats().bounces, ndp.stats().header_drops), (1, 0));

    let (mut fab, [flow, _], mut ndp) = star(NdpConfig {
        return_to_sender: false,
        ..cfg
    });
    let results: Vec<_> = (0..4u64)
        .map(|i| {
            let e = fab.data_entry(flow, 0, 2, i * 1000);
            ndp.enqueue(&mut fab, &e)
        })
        .collect();
    assert_eq!(results[3], Err(DropReason::HeaderQueueFull));
    assert_eq!((ndp.stats().bounces, ndp.stats().header_drops), (0, 1));
}

/// The receiver answers each packet with a PULL and each header with a NACK and a PULL, one PULL per full
/// packet's time at its link, taking its senders in turn: the flow whose four packets came first does not
/// hold back the other's PULL behind all of its own.
#[test]
fn pulls_are_paced_at_the_receiver_s_link_across_its_senders() {
    let (mut fab, [a, b], mut ndp) = star(NdpConfig::default());
    let spacing = Rate::gbps(100).tx_time(Bytes(u64::from(PACKET)));
    let arrive = |fab: &mut FakeFabric, ndp: &mut Ndp, flow: FlowId, seq: u64| {
        let p = fab.data_packet(flow, seq);
        let held = fab.receive(flow, seq, p.payload);
        ndp.data_arrived(fab, 2, &p, held);
    };
    fab.now = Time::from_us(10);
    for seq in [0, 1000, 2000] {
        arrive(&mut fab, &mut ndp, a, seq);
    }
    let mut header = fab.data_packet(a, 3000);
    (header.size, header.payload) = (HEADER, 0);
    header.flags = header
        .flags
        .with_if(bfcsim_net::packet::Flags::TRIMMED, true);
    ndp.header_arrived(&mut fab, 2, &header);
    arrive(&mut fab, &mut ndp, b, 0);
    assert!(fab.log.contains(&Call::Reply {
        h: 2,
        kind: PacketKind::NACK,
        seq: 3000,
        aux: 0
    }));
    assert_eq!(pulls(&fab), [(a, 1)], "one PULL now, the rest paced");
    let port = fab.host_port(2);
    let due = Time::from_us(10) + spacing;
    assert!(fab.log.contains(&Call::Timer {
        port,
        at: due,
        batched: false
    }));
    for i in 1..5u64 {
        fab.now = Time::from_us(10) + spacing * i;
        ndp.nic_timer(&mut fab, 2);
    }
    assert_eq!(pulls(&fab), [(a, 1), (a, 2), (b, 1), (a, 3), (a, 4)]);
    assert_eq!(ndp.stats().pulls, 5);
    assert_eq!(ndp.stats().header_nacks, 1);
}

/// The sender sends its first window, then a packet per PULL.
#[test]
fn the_sender_sends_its_window_then_a_packet_per_pull() {
    let (mut fab, [flow, _], mut ndp) = star(NdpConfig::default());
    ndp.flow_started(&mut fab, 0, flow, 0);
    let mut sent = 0;
    while ndp.may_send(&mut fab, 0, flow, 0) {
        send(&mut fab, &mut ndp, flow);
        sent += 1;
    }
    assert_eq!(sent, 3, "a window of 3,000 B");
    let pull = |fab: &FakeFabric, n: u64| Packet {
        seq: n,
        ..fab.data_packet(flow, 0)
    };
    let p = Packet {
        kind: PULL,
        ..pull(&fab, 2)
    };
    ndp.packet_arrived(&mut fab, 0, &p);
    assert!(fab.log.contains(&Call::Ready { flow }));
    assert!(ndp.may_send(&mut fab, 0, flow, 0), "two PULLs: two packets");
    assert_eq!(ndp.stats().pulls_heard, 1);
}

/// A returned packet is resent: after a PULL while any can still come, at once when none can.
#[test]
fn a_returned_packet_is_resent_at_once_when_no_pull_can_come() {
    let (mut fab, [flow, _], mut ndp) = star(NdpConfig::default());
    ndp.flow_started(&mut fab, 0, flow, 0);
    for _ in 0..3 {
        send(&mut fab, &mut ndp, flow);
    }
    let ack = Packet {
        flow,
        ..Packet::blank(PacketKind::ACK)
    };
    ndp.reply_arrived(&mut fab, 0, 0, &ack);
    let bounce = |fab: &FakeFabric, seq: u64| Packet {
        kind: BOUNCE,
        seq,
        ..fab.data_packet(flow, seq)
    };
    // One packet answered (its PULL to come) and one still out: the return waits.
    let p = bounce(&fab, 1000);
    ndp.packet_arrived(&mut fab, 0, &p);
    assert!(!ndp.may_send(&mut fab, 0, flow, 0));
    assert!(
        fab.log.contains(&Call::Ready { flow }),
        "the segment is queued to resend"
    );
    // The PULL arrives and releases the resend; the last packet of the window comes back while it is out.
    let p = Packet {
        kind: PULL,
        seq: 1,
        ..fab.data_packet(flow, 0)
    };
    ndp.packet_arrived(&mut fab, 0, &p);
    assert_eq!(
        send(&mut fab, &mut ndp, flow),
        1000,
        "the returned segment first"
    );
    let p = bounce(&fab, 2000);
    ndp.packet_arrived(&mut fab, 0, &p);
    assert!(!ndp.may_send(&mut fab, 0, flow, 0), "the resend is out");
    // The resend comes back as well: nothing of the flow is out and its one PULL is here, so it goes at once.
    let p = bounce(&fab, 1000);
    ndp.packet_arrived(&mut fab, 0, &p);
    assert!(ndp.may_send(&mut fab, 0, flow, 0));
    let s = ndp.stats();
    assert_eq!((s.bounces_heard, s.bounce_resends), (3, 1));
}
