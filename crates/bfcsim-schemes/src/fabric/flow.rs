//! A flow's fixed facts, as every shard of a run and every scheme reads them.

use std::sync::Arc;

use bfcsim_core::{FlowId, FlowSpec, Time};
use bfcsim_net::packet::{Flags, Packet, PacketKind};
use bfcsim_net::routing::five_tuple_hash;
use bfcsim_net::topology::Topology;
use rustc_hash::FxHashMap;

/// A flow as the run sees it, fixed from its start: one table that the shards of a split run share, so that
/// threads do not each hold a copy of every flow (on the CLOS-128 bench, 1.7 M flows of 88 bytes in every
/// shard, the second thread's 160 MB). One cache line a flow: the table's records, 60 bytes, each straddled two
/// lines unaligned.
#[repr(align(64))]
#[derive(Clone, Debug)]
pub struct Flow {
    /// What the workload asked for.
    pub spec: FlowSpec,
    /// The source's host index.
    pub src_host: u32,
    /// The destination's host index.
    pub dst_host: u32,
    /// The 5-tuple's source port (HPCC's ns-3 numbering).
    pub sport: u16,
    /// The 5-tuple's destination port (100, or 200 for an incast flow).
    pub dport: u16,
    /// The 5-tuple's hash, for ECMP and hashed queues.
    pub hash: u64,
    /// The reverse 5-tuple's hash: what the flow's ACKs and other replies are routed by.
    pub rev_hash: u64,
}

const _: () = assert!(std::mem::size_of::<Flow>() == 64);

impl Flow {
    /// A control packet of this flow (`id`) of `kind` and `size` bytes, sent at `now` from its receiver to its
    /// sender when `to_sender` (routed by the reverse 5-tuple), else from its sender to its receiver: `seq` and
    /// `aux` as the kind defines them; it carries the flow's incast label.
    #[inline]
    pub fn control_packet(
        &self,
        id: FlowId,
        to_sender: bool,
        kind: PacketKind,
        (seq, aux): (u64, u32),
        size: u32,
        now: Time,
    ) -> Packet {
        let (dst_host, hash) = if to_sender {
            (self.src_host, self.rev_hash)
        } else {
            (self.dst_host, self.hash)
        };
        Packet {
            seq,
            sent_at: now,
            flow: id,
            size,
            dst_host,
            hash: hash as u32,
            aux,
            flags: Flags::NONE.with_if(Flags::INCAST, self.spec.incast),
            ..Packet::blank(kind)
        }
    }

    /// The table of `flows` (sorted by start time) on `topo`; fails on a flow that is not between two distinct
    /// hosts or has no bytes, naming it.
    pub fn table(topo: &Topology, flows: &[FlowSpec]) -> Result<Arc<[Flow]>, String> {
        let mut infos = Vec::with_capacity(flows.len());
        // Keys are host numbers, not chosen by an adversary: Fx's multiplicative hash, not SipHash, which took
        // most of the table's time.
        let mut pair_ports: FxHashMap<(u32, u32), u16> = FxHashMap::default();
        let mut last_start = Time::ZERO;
        for (i, f) in flows.iter().enumerate() {
            let (Some(src_host), Some(dst_host)) = (topo.host_index(f.src), topo.host_index(f.dst))
            else {
                return Err(format!(
                    "flow {i}: {} -> {} is not between two hosts",
                    f.src, f.dst
                ));
            };
            if f.src == f.dst || f.size.0 == 0 {
                return Err(format!(
                    "flow {i}: needs distinct hosts and at least one byte"
                ));
            }
            if f.start < last_start {
                return Err(format!("flow {i}: flows must be sorted by start time"));
            }
            last_start = f.start;
            // Source ports count up per host pair from 10000, as HPCC's ns-3 assigns them.
            let next = pair_ports.entry((f.src.0, f.dst.0)).or_insert(10000);
            let sport = *next;
            *next = next.wrapping_add(1);
            let dport = if f.incast { 200 } else { 100 };
            infos.push(Flow {
                spec: *f,
                src_host,
                dst_host,
                sport,
                dport,
                hash: five_tuple_hash(f.src, f.dst, sport, dport),
                rev_hash: five_tuple_hash(f.dst, f.src, dport, sport),
            });
        }
        Ok(infos.into())
    }
}
