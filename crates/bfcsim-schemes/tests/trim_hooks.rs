//! The fabric's verbs for trimming, echoes and token timers, driven by a small scheme written here against the
//! public seam only, as a scheme of another crate would be: switches trim a data packet to its header once its
//! queue holds `limit` packets and forward the header in the control queue (NDP's trimming), the receiver
//! answers a header with a NACK so that the sender resends it, and every data packet carries a bit its ACK
//! echoes back.

use bfcsim_core::{FlowId, PacketId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::packet::{Packet, PacketKind};
use bfcsim_schemes::fabric::fake::{Call, FakeFabric};
use bfcsim_schemes::fabric::{Entry, FabricOps, NicOps, NicSide, Scheme, SwitchOps, SwitchSide};

/// Trims at `limit` queued packets; counts the echoes its senders see.
struct Trimming {
    limit: usize,
    echoes: u64,
}

const HEADER: u32 = 64;
const MARKED: u8 = 1;

impl SwitchSide for Trimming {
    fn enqueue<F: SwitchOps>(&mut self, fab: &mut F, e: &Entry) -> Result<(), DropReason> {
        let queue = fab.layout().data_queue_for(e.p.class, e.p.hash);
        if e.p.kind == PacketKind::DATA && fab.queues(e.out_sp).queue_len(queue) >= self.limit {
            let header = fab.trim(e, HEADER);
            fab.admit(&header, 0)?;
            fab.push(&header, 0);
            return Ok(());
        }
        fab.admit(e, queue)?;
        fab.push(e, queue);
        Ok(())
    }
}

impl NicSide for Trimming {
    fn data_sent<F: NicOps>(&mut self, fab: &mut F, _h: u32, _slot: usize, pkt: PacketId) {
        fab.packet_mut(pkt).mark = MARKED;
    }

    fn echo(&self, data: &Packet, reply: &mut Packet) {
        reply.mark = data.mark;
    }

    fn reply_arrived<F: NicOps>(&mut self, _fab: &mut F, _h: u32, _slot: usize, p: &Packet) {
        self.echoes += u64::from(p.mark == MARKED);
    }

    /// The payload is lost: the sender is asked for the packet again.
    fn header_arrived<F: NicOps>(&mut self, fab: &mut F, h: u32, p: &Packet) {
        fab.reply(self, h, p, PacketKind::NACK, (p.seq, 0));
    }
}

impl Scheme for Trimming {
    fn token_timer<F: SwitchOps + NicOps>(&mut self, fab: &mut F, token: u64) {
        fab.arm_token_timer(fab.now() + Time::from_us(1), token + 1);
    }
}

fn star() -> (FakeFabric, FlowId) {
    let mut fab = FakeFabric::star(3, Rate::gbps(100), Time::from_us(1));
    let flow = fab.add_flow(0, 2, 100_000);
    (fab, flow)
}

#[test]
fn a_full_queue_trims_the_packet_to_its_header_in_the_control_queue() {
    let (mut fab, flow) = star();
    let mut s = Trimming {
        limit: 3,
        echoes: 0,
    };
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
}

#[test]
fn a_scheme_s_bit_travels_out_in_data_and_back_in_the_reply() {
    let (mut fab, flow) = star();
    let mut s = Trimming {
        limit: 3,
        echoes: 0,
    };
    let e = fab.data_entry(flow, 0, 2, 0);
    s.data_sent(&mut fab, 0, 0, e.pkt);
    let data = *fab.packet(e.pkt);
    let mut ack = Packet {
        flow,
        ..Packet::blank(PacketKind::ACK)
    };
    s.echo(&data, &mut ack);
    s.reply_arrived(&mut fab, 0, 0, &ack);
    assert_eq!(s.echoes, 1);
}

#[test]
fn a_token_timer_can_arm_the_next() {
    let (mut fab, _) = star();
    let mut s = Trimming {
        limit: 3,
        echoes: 0,
    };
    fab.now = Time::from_us(5);
    s.token_timer(&mut fab, 7);
    assert_eq!(
        fab.log,
        vec![Call::TokenTimer {
            at: Time::from_us(6),
            token: 8
        }]
    );
}
