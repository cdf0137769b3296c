//! Trim-tail's hooks driven on the fake fabric with scripted inputs and no event loop: the fabric's verbs for
//! trimming (a full queue cuts a packet to its header, which rides the control queue), for a scheme's reply to a
//! header (a NACK), for a scheme's own bit in data and its echo in the reply, and for timers by token.

use bfcsim_core::{FlowId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Flags, Packet, PacketKind};
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Describe, FabricOps, NicOps, NicSide, Scheme, SwitchOps, SwitchSide};
use bfcsim_trim_tail::{ECHO, TrimTail, TrimTailConfig};

const HEADER: u32 = 64;

/// A star of three hosts with a flow from host 0 to host 2, and trim-tail cutting at `queue_packets` packets
/// with room for `header_packets` headers.
fn star(queue_packets: u32, header_packets: u32) -> (FakeFabric, FlowId, TrimTail) {
    let mut fab = FakeFabric::star(3, Rate::gbps(100), Time::from_us(1));
    let flow = fab.add_flow(0, 2, 100_000);
    let cfg = TrimTailConfig {
        queue_packets,
        header: HEADER,
        header_packets,
    };
    let s = TrimTail::new(&cfg, &mut fab).unwrap();
    (fab, flow, s)
}

#[test]
fn a_full_queue_trims_the_packet_to_its_header_in_the_control_queue() {
    let (mut fab, flow, mut s) = star(3, 8);
    let egress = fab.sp(0, 2);
    for i in 0..4u64 {
        let e = fab.data_entry(flow, 0, 2, i * 1000);
        s.enqueue(&mut fab, &e).unwrap();
    }
    let queues = fab.queues(egress);
    assert_eq!((queues.queue_len(1), queues.queue_len(0)), (3, 1));
    assert_eq!(queues.queue_bytes(0), u64::from(HEADER));
    let (pkt, queue) = fab.pop(egress).unwrap();
    assert_eq!(queue, 0, "the header goes first, in the control queue");
    let p = *fab.packet(pkt);
    assert!(p.trimmed() && p.payload == 0 && p.seq == 3000);

    // At the receiver the header draws a NACK for its bytes.
    s.header_arrived(&mut fab, 2, &p);
    assert!(fab.log.contains(&Call::Reply {
        h: 2,
        kind: PacketKind::NACK,
        seq: 3000,
        aux: 0
    }));
    assert_eq!(s.stats().header_nacks, 1);
}

/// A header cut at an earlier hop is not cut again: it joins the control queue whatever the data queue holds.
#[test]
fn a_header_from_an_earlier_hop_rides_the_control_queue() {
    let (mut fab, flow, mut s) = star(1, 8);
    let egress = fab.sp(0, 2);
    let first = fab.data_entry(flow, 0, 2, 0);
    s.enqueue(&mut fab, &first).unwrap();
    let mut header = fab.data_packet(flow, 1000);
    header.size = HEADER;
    header.payload = 0;
    header.flags = header.flags.with_if(Flags::TRIMMED, true);
    let e = fab.entry(header, 0, 0, 2);
    s.enqueue(&mut fab, &e).unwrap();
    let queues = fab.queues(egress);
    assert_eq!((queues.queue_len(1), queues.queue_len(0)), (1, 1));
    assert!(
        !fab.log.iter().any(|c| matches!(c, Call::Trim { .. })),
        "{:?}",
        fab.log
    );
}

/// A data packet no larger than a header has nothing to cut: it joins its data queue whatever that holds.
#[test]
fn a_packet_no_larger_than_a_header_is_not_cut() {
    let (mut fab, flow, mut s) = star(1, 8);
    let egress = fab.sp(0, 2);
    for i in 0..2u64 {
        let mut p = fab.data_packet(flow, i * 10);
        (p.size, p.payload) = (HEADER, 10);
        let e = fab.entry(p, 0, 0, 2);
        s.enqueue(&mut fab, &e).unwrap();
    }
    let queues = fab.queues(egress);
    assert_eq!((queues.queue_len(1), queues.queue_len(0)), (2, 0));
    assert!(!fab.log.iter().any(|c| matches!(c, Call::Trim { .. })));
}

#[test]
fn a_full_header_queue_drops_the_packet_with_its_reason() {
    let (mut fab, flow, mut s) = star(1, 1);
    let mut results = Vec::new();
    for i in 0..3u64 {
        let e = fab.data_entry(flow, 0, 2, i * 1000);
        results.push(s.enqueue(&mut fab, &e));
    }
    assert_eq!(
        results,
        vec![Ok(()), Ok(()), Err(DropReason::HeaderQueueFull)]
    );
    assert_eq!(s.stats().header_drops, 1);
}

#[test]
fn the_scheme_s_bit_travels_out_in_data_and_back_in_the_reply() {
    let (mut fab, flow, mut s) = star(3, 8);
    let e = fab.data_entry(flow, 0, 2, 0);
    s.data_sent(&mut fab, 0, 0, e.pkt);
    let data = *fab.packet(e.pkt);
    assert_eq!(data.mark, ECHO);
    let mut ack = Packet {
        flow,
        ..Packet::blank(PacketKind::ACK)
    };
    s.echo(&data, &mut ack);
    s.reply_arrived(&mut fab, 0, 0, &ack);
    assert_eq!(s.stats().echoes, 1);
}

/// Timers by token, from a scheme that re-arms its own (trim-tail needs none).
#[test]
fn a_token_timer_can_arm_the_next() {
    struct Ticking;
    impl SwitchSide for Ticking {}
    impl NicSide for Ticking {}
    impl Scheme for Ticking {
        fn token_timer<F: SwitchOps + NicOps>(&mut self, fab: &mut F, token: u64) {
            fab.arm_token_timer(fab.now() + Time::from_us(1), token + 1);
        }
    }
    let mut fab = FakeFabric::star(3, Rate::gbps(100), Time::from_us(1));
    fab.now = Time::from_us(5);
    Ticking.token_timer(&mut fab, 7);
    assert_eq!(
        fab.log,
        vec![Call::TokenTimer {
            at: Time::from_us(6),
            token: 8
        }]
    );
}
