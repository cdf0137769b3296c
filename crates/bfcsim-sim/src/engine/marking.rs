//! ECN/RED marking at switch egress ports: each queue's own RED on its length and, when
//! `switch.ecn.shared` is on, BCC's shared-buffer ECN/RED on the occupancy of the port's buffer pool (Bai et
//! al., "One More Config Is Enough", IEEE/ACM ToN, §IV-B: "a packet gets marked if anyone decides to mark it").
//!
//! Marking is switch configuration, not a scheme's side ([`bfcsim_schemes::fabric`]): it composes with whatever
//! runs at the hosts and hops (DCTCP with or without PFC, DCQCN, BCC's DCTCP), as the shared-buffer ECN of a
//! commodity switch chip does, so it sits beside the seam rather than on it. Each pool's thresholds are derived once at setup
//! (§IV-C, [`SharedEcn::derive`]); §IV-D's multiple MMUs per chip are the pools themselves, each marking on its
//! own occupancy only. Off, the marking path is exactly the per-queue RED it was (one branch more).
//!
//! [`SharedEcn::derive`]: bfcsim_net::ecn::SharedEcn::derive

use bfcsim_net::ecn::{PoolFacts, SinceMark, Spacing};

use super::*;

impl Fabric {
    /// Marks `pkt` CE, counting the mark.
    #[inline]
    pub(super) fn mark_ce(&mut self, pkt: PacketId) {
        let p = self.packets.get_mut(pkt);
        self.counters.ce_marks += u64::from(p.set_ce());
    }

    /// Whether RED/ECN marks a packet of `size` bytes at `queue` of switch port `sp` now: the queue's own RED on
    /// its length, or BCC's shared-buffer RED on the occupancy of the port's buffer pool (a packet is marked if
    /// either marks it, BCC §IV-B).
    #[inline(always)]
    pub(super) fn ecn_marks(&mut self, sp: u32, queue: usize, size: u32) -> bool {
        let out = &mut self.sw_ports[sp as usize];
        let red = &self.params.switch.ecn.red;
        // Inlined into the per-hop path, where the per-queue test is a compare or two; the flag sits in the
        // parameters the caller just read, and the pools' part stays out of line, run only when on.
        let own = red.should_mark(out.queues.queue_bytes(queue), &mut out.red_rng);
        if self.params.switch.ecn.shared.enabled {
            self.own_or_pool_marks(sp, size, own)
        } else {
            own
        }
    }

    /// Whether a packet of `size` bytes at switch port `sp` is marked, its queue's RED having decided `own`: or
    /// else BCC's shared-buffer RED marks it. With RED's count the pool's RED sees every packet, marked by the
    /// queue's RED or not, as the authors' ns-2 queue runs both markers on each departure.
    #[inline(never)]
    fn own_or_pool_marks(&mut self, sp: u32, size: u32, own: bool) -> bool {
        match self.params.switch.ecn.shared.spacing {
            Spacing::Count => self.pool_marks(sp, size) | own,
            Spacing::Independent => own || self.pool_marks(sp, size),
        }
    }

    /// BCC's shared-buffer RED on the occupancy of the buffer pool of switch port `sp`, for a packet of `size`.
    fn pool_marks(&mut self, sp: u32, size: u32) -> bool {
        let out = &mut self.sw_ports[sp as usize];
        let sw = &mut self.switches[out.switch as usize];
        let pool = sw.mmu.pool_of(out.local as usize);
        let red = &sw.shared_red[pool].red;
        let used = sw.mmu.pool_used(pool);
        match self.params.switch.ecn.shared.spacing {
            Spacing::Count => {
                let full = self.params.nic.payload + self.params.nic.header;
                red.should_mark_counted(
                    used,
                    size,
                    full,
                    &mut sw.since_mark[out.local as usize],
                    &mut out.red_rng,
                )
            }
            Spacing::Independent => red.should_mark(used, &mut out.red_rng),
        }
    }

    /// BCC's shared-buffer ECN/RED (`switch.ecn.shared`): each pool's thresholds from its size, its queues' α
    /// and reserve, its ports' rate and count, and the base RTT (§IV-C, `SharedEcn::derive`).
    pub(super) fn init_shared_ecn(&mut self) {
        let shared = self.params.switch.ecn.shared;
        if !shared.enabled || !self.params.switch.ecn.enabled {
            return;
        }
        let rtt = shared.rtt.unwrap_or(self.flow_ctx.base_rtt);
        let data = self.layout.data_base..self.layout.total();
        for s in 0..self.switches.len() {
            let ports = &self.topo.nodes[self.switch_keys[s].node.idx()].ports;
            let mmu = &self.switches[s].mmu;
            let alpha_min = data
                .clone()
                .map(|q| mmu.alpha(q))
                .fold(f64::INFINITY, f64::min);
            let marking = (0..mmu.pools())
                .map(|pool| {
                    let members: Vec<PortId> = (0..ports.len())
                        .filter(|&l| mmu.pool_of(l) == pool)
                        .map(|l| ports[l])
                        .collect();
                    let facts = PoolFacts {
                        size: Bytes(mmu.pool_size(pool)),
                        alpha_min,
                        reserve_min: Bytes(mmu.reserve()),
                        rate: members
                            .iter()
                            .map(|&p| self.wires[p.idx()].rate)
                            .max()
                            .unwrap_or(Rate(1)),
                        ports: members.len() as u32,
                        rtt,
                    };
                    shared.derive(&facts)
                })
                .collect();
            self.switches[s].shared_red = marking;
            self.switches[s].since_mark = vec![SinceMark::default(); ports.len()];
        }
    }

    /// BCC's shared-buffer RED of each pool of switch `s` (empty unless `switch.ecn.shared` is on).
    pub fn shared_ecn(&self, s: usize) -> &[PoolMarking] {
        &self.switches[s].shared_red
    }
}
