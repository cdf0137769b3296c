//! The NIC and switch side of congestion control (`bfcsim_schemes::cc::nic`) driven on the fake fabric with
//! scripted inputs and no event loop: HPCC's INT stamped at a switch egress, echoed in the ACK and read by
//! the sender's controller; DCQCN's CNPs made at the receiver and obeyed at the sender; the pacing of a flow by
//! its controller's rate; and the drop notices of `hpcc-ideal-retx`.

use bfcsim_core::{Bytes, FlowId, PacketId, Rate, Time};
use bfcsim_net::int::IntHop;
use bfcsim_net::packet::{Packet, PacketKind};
use bfcsim_schemes::cc::dcqcn::DcqcnConfig;
use bfcsim_schemes::cc::hpcc::HpccConfig;
use bfcsim_schemes::cc::nic::{CcNic, next_send};
use bfcsim_schemes::cc::{CcConfig, CongestionControl, Notifier};
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{FabricOps, NicOps, Plain, SwitchOps, SwitchSide};

fn us(n: u64) -> Time {
    Time::from_us(n)
}

/// A star of three hosts with a 100 KB flow from host 0 to host 2 under `cc`, and the NIC side it makes.
fn star(cc: CcConfig, drop_notices: bool) -> (FakeFabric, FlowId, CcNic) {
    let mut fab = FakeFabric::star(3, Rate::gbps(100), us(1));
    fab.cc = cc;
    let flow = fab.add_flow(0, 2, 100_000);
    let nic = CcNic::new(fab.cc.needs(), drop_notices, false);
    (fab, flow, nic)
}

fn hpcc() -> CcConfig {
    CcConfig::Hpcc(HpccConfig::default())
}

fn dcqcn() -> CcConfig {
    CcConfig::Dcqcn(DcqcnConfig::default())
}

/// Flow `flow`'s data packet at byte `seq`, built and sent by its NIC at `now`: its id.
fn send(fab: &mut FakeFabric, nic: &CcNic, flow: FlowId, seq: u64) -> PacketId {
    let mut p = fab.data_packet(flow, seq);
    p.size += nic.data_overhead();
    let pkt = fab.alloc(p);
    let slot = fab.flow_slot(flow).unwrap();
    nic.data_sent(fab, slot, (pkt, p.size), 0);
    pkt
}

/// The receiver's ACK for data packet `data`, acknowledging up to `seq`: its fields and id, echo made.
fn ack(fab: &mut FakeFabric, nic: &CcNic, data: PacketId, seq: u64) -> (Packet, PacketId) {
    let p = Packet {
        seq,
        flow: fab.packet(data).flow,
        ..Packet::blank(PacketKind::ACK)
    };
    let pkt = fab.alloc(p);
    nic.reply_built(fab, PacketKind::ACK, data, pkt);
    (p, pkt)
}

#[test]
fn only_hpcc_has_switches_stamp_and_adds_its_header() {
    let (_, _, nic) = star(hpcc(), false);
    assert!(nic.stamps() && nic.paced());
    assert_eq!(
        nic.data_overhead(),
        HpccConfig::default().int_overhead.0 as u32
    );
    for cc in [CcConfig::Dctcp(Default::default()), dcqcn()] {
        let (mut fab, flow, nic) = star(cc, false);
        assert!(!nic.stamps() && nic.data_overhead() == 0);
        let pkt = send(&mut fab, &nic, flow, 0);
        let egress = fab.sp(0, 2);
        let port = fab.sw_port_id(egress);
        nic.switch_stamps()
            .egress(&mut fab, (port, egress), pkt, true);
        assert!(fab.int_stacks().get(pkt).is_empty());
    }
}

/// A hop records, as the packet leaves, when it left, the bytes the port sent before it, the bytes still
/// queued behind it and the link's rate (HPCC §3.2, ns-3 `SwitchNotifyDequeue`).
#[test]
fn hpcc_switches_stamp_what_the_port_sent_and_still_holds() {
    let (mut fab, flow, nic) = star(hpcc(), false);
    let pkt = send(&mut fab, &nic, flow, 0);
    assert_eq!(fab.log, [Call::ControllerChanged { slot: 0 }]);
    let egress = fab.sp(0, 2);
    let port = fab.sw_port_id(egress);
    // One packet of another flow stays queued at the port.
    let other = fab.add_flow(1, 2, 10_000);
    let e = fab.data_entry(other, 1, 2, 0);
    Plain.enqueue(&mut fab, &e).unwrap();
    fab.set_tx_bytes(port, 5_000);
    fab.now = us(3);
    nic.switch_stamps()
        .egress(&mut fab, (port, egress), pkt, true);
    let expected = IntHop {
        ts: us(3),
        tx_bytes: 5_000,
        qlen: fab.queues(egress).bytes(),
        rate: Rate::gbps(100),
    };
    assert_eq!(expected.qlen, 1048);
    assert_eq!(fab.int_stacks().get(pkt).hops(), [expected]);

    // A packet slot used again starts with an empty stack.
    nic.data_sent(&mut fab, 0, (pkt, 1048), 0);
    assert!(fab.int_stacks().get(pkt).is_empty());
}

/// The receiver's ACK carries the data packet's stack back (a NACK does not), and the sender's controller
/// reads it: against the first ACK's reference, a second whose hop shows the port busy at line rate and a
/// standing queue of about five BDPs brings HPCC's rate far down (HPCC §3.3: U is the smaller of the two
/// queues over a BDP plus the link's use).
#[test]
fn hpcc_acks_echo_the_stack_and_the_sender_reacts_to_it() {
    let (mut fab, flow, nic) = star(hpcc(), false);
    let egress = fab.sp(0, 2);
    let port = fab.sw_port_id(egress);
    let line = Rate::gbps(100);
    assert_eq!(fab.controller_of(flow).rate(), Some(line));
    for seq in 0..480 {
        let other = fab.add_flow(1, 2, 1000);
        let e = fab.data_entry(other, 1, 2, seq);
        Plain.enqueue(&mut fab, &e).unwrap();
    }

    let first = send(&mut fab, &nic, flow, 0);
    fab.now = us(10);
    nic.switch_stamps()
        .egress(&mut fab, (port, egress), first, true);
    let (a1, a1_id) = ack(&mut fab, &nic, first, 1000);
    assert_eq!(fab.int_stacks().get(a1_id), fab.int_stacks().get(first));
    let nack = fab.alloc(Packet::blank(PacketKind::NACK));
    nic.reply_built(&mut fab, PacketKind::NACK, first, nack);
    assert!(fab.int_stacks().get(nack).is_empty());
    nic.ack_arrived(&mut fab, 0, (&a1, a1_id), 1000, us(10));
    assert_eq!(
        fab.controller_of(flow).rate(),
        Some(line),
        "the first ACK sets the reference"
    );

    // 10 µs later the port has sent 10 µs of line rate and still holds the queue.
    let second = send(&mut fab, &nic, flow, 1000);
    fab.set_tx_bytes(port, 125_000);
    fab.now = us(20);
    nic.switch_stamps()
        .egress(&mut fab, (port, egress), second, true);
    let (a2, a2_id) = ack(&mut fab, &nic, second, 2000);
    fab.log.clear();
    nic.ack_arrived(&mut fab, 0, (&a2, a2_id), 1000, us(10));
    let rate = fab.controller_of(flow).rate().unwrap();
    assert!(rate < Rate::gbps(25), "{rate:?}");
    assert_eq!(fab.log, [Call::ControllerChanged { slot: 0 }]);
}

/// DCQCN's notification point (§3) answers CE-marked data with at most one CNP per interval; other
/// controllers' receivers send nothing but ACKs.
#[test]
fn dcqcn_receivers_notify_at_most_once_per_interval() {
    let cfg = CcConfig::Dcqcn(DcqcnConfig {
        cnp_interval: us(50),
        ..DcqcnConfig::default()
    });
    let mut n = CcNic::new(cfg.needs(), false, false).notifier();
    assert!(matches!(n, Notifier::Cnp(_)));
    assert!(!n.on_data(us(1), false), "unmarked data");
    assert!(n.on_data(us(1), true));
    assert!(!n.on_data(us(20), true), "within the interval");
    assert!(n.on_data(us(51), true));
    for cc in [CcConfig::Dctcp(Default::default()), hpcc()] {
        let mut silent = CcNic::new(cc.needs(), false, false).notifier();
        assert!(!silent.on_data(us(1), true));
    }
}

/// DCQCN's reaction point (HPCC ns-3's `cnp_received_mlx`): a CNP starts the controller's timers and the
/// NIC re-reads them; the rate is cut when the decrease timer fires, and the flow's next packet then waits
/// its transmission time at the new rate ([`next_send`]).
#[test]
fn dcqcn_senders_cut_their_rate_after_a_cnp_and_pace_by_it() {
    let (mut fab, flow, nic) = star(dcqcn(), false);
    let line = Rate::gbps(100);
    assert_eq!(fab.controller_of(flow).rate(), Some(line));
    let pkt = send(&mut fab, &nic, flow, 0);
    let size = fab.packet(pkt).size;
    assert_eq!(
        next_send(fab.controller_of(flow), Time::ZERO, size),
        line.tx_time(Bytes(size as u64))
    );

    fab.log.clear();
    fab.now = us(5);
    assert_eq!(fab.controller_of(flow).next_timer(), None);
    nic.notification_arrived(&mut fab, 0);
    assert_eq!(fab.log, [Call::ControllerChanged { slot: 0 }]);
    let due = fab
        .controller_of(flow)
        .next_timer()
        .expect("the decrease timer");
    fab.now = due;
    fab.controller(0).0.on_timer(due);
    let cut = fab.controller_of(flow).rate().unwrap();
    assert!(cut < line, "{cut:?}");
    assert_eq!(
        next_send(fab.controller_of(flow), due, size),
        due + cut.tx_time(Bytes(size as u64))
    );
    // A flow that has sent nothing, or a controller that does not pace, may send at once.
    assert_eq!(next_send(fab.controller_of(flow), due, 0), Time::ZERO);
    let (fab2, flow2, _) = star(CcConfig::Dctcp(Default::default()), false);
    assert_eq!(next_send(fab2.controller_of(flow2), due, size), Time::ZERO);
}

/// With drop notices (BFC §6.2.1's HPCC-PFC), a switch's drop of a data packet sends its sender back to it
/// once: the controller hears of the loss, the timer restarts and the flow is readied. Without them, or for
/// a packet that is not data, nothing happens; a second notice already covered by the go-back is ignored.
#[test]
fn drop_notices_send_the_sender_back_once() {
    let (mut fab, flow, nic) = star(hpcc(), true);
    for _ in 0..3 {
        fab.sender_mut(0).next_segment();
    }
    assert_eq!(fab.sender(0).snd_nxt(), 3000);
    let lost = fab.data_packet(flow, 1000);
    fab.now = us(2);
    nic.switch_dropped(&mut fab, &mut Plain, &lost);
    assert_eq!(fab.sender(0).snd_nxt(), 1000);
    assert_eq!(
        fab.log,
        [
            Call::RestartRto { slot: 0 },
            Call::ControllerChanged { slot: 0 },
            Call::Ready { flow }
        ]
    );

    fab.log.clear();
    let mut later = fab.data_packet(flow, 2000);
    later.sent_at = us(1);
    nic.switch_dropped(&mut fab, &mut Plain, &later);
    assert!(fab.log.is_empty(), "the go-back already resends it");
    let ack = Packet {
        flow,
        ..Packet::blank(PacketKind::ACK)
    };
    nic.switch_dropped(&mut fab, &mut Plain, &ack);
    assert!(fab.log.is_empty());

    let (mut fab, flow, nic) = star(hpcc(), false);
    fab.sender_mut(0).next_segment();
    let lost = fab.data_packet(flow, 0);
    nic.switch_dropped(&mut fab, &mut Plain, &lost);
    assert!(fab.log.is_empty() && fab.sender(0).snd_nxt() == 1000);
}
