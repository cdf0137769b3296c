//! The engine's side of fabric events ([`crate::faults`]): a wire that ever changes takes
//! [`Fabric::transmit`]'s way out of line, where the plan decides whether the packet is lost; a `FabricChange`
//! event applies rate changes and routing's changes when they are due. A run without events has no plan, and
//! its wires and loop are as they were.

use super::*;
use crate::faults::{FaultPlan, Faults};

impl Fabric {
    /// Installs `plan` before the run starts: its changing wires leave through [`Fabric::leave`], and the
    /// first change is scheduled.
    pub(crate) fn install_faults(&mut self, plan: Arc<FaultPlan>) {
        for &p in plan.ports() {
            let w = &mut self.wires[p.idx()];
            if w.exit == LOCAL {
                w.exit = OBSERVED;
            }
        }
        let faults = Faults::new(plan, self.params.seed);
        if let Some(at) = faults.next_change() {
            self.events.push(at.max(self.now), Event::FabricChange);
        }
        self.faults = Some(Box::new(faults));
    }

    /// Whether packet `pkt`, starting on `port` now and due at the far end at `arrive`, is lost to a fabric
    /// event; if so it is dropped with the event's reason.
    pub(super) fn lost_on_wire(&mut self, port: PortId, arrive: Time, pkt: PacketId) -> bool {
        let Some(f) = self.faults.as_deref_mut() else {
            return false;
        };
        let p = self.packets.get(pkt);
        // A switch port's packet was stamped as it joined the queue: whether routing sent it there knowing.
        let queued = matches!(self.wires[port.idx()].owner, Device::Switch(_)).then_some(p.stamp);
        let Some(reason) = f.loses(port, queued, self.now, arrive, p.size) else {
            return false;
        };
        self.drop_packet(pkt, reason);
        true
    }

    /// The rate and routing changes due now. Every shard applies each change, so the event is not counted
    /// (the count of events stays the same whatever the threads).
    pub(super) fn fabric_change(&mut self) {
        self.counters.events -= 1;
        let Some(f) = self.faults.as_deref_mut() else {
            return;
        };
        let plan = f.plan.clone();
        while let Some(&(at, port, rate)) = plan.rates().get(f.next_rate)
            && at <= self.now
        {
            let w = &mut self.wires[port.idx()];
            w.rate = rate;
            w.ps_per_byte = rate.ps_per_byte().unwrap_or(0);
            f.next_rate += 1;
        }
        while let Some(r) = plan.route_changes().get(f.next_route)
            && r.at <= self.now
        {
            self.routes = r.routes.clone();
            f.next_route += 1;
        }
        if let Some(at) = f.next_change() {
            self.events.push(at, Event::FabricChange);
        }
    }

    /// What each fabric event cost this shard: packets lost, and packets that joined a port's queue after
    /// routing knew it was down.
    pub(crate) fn fault_counts(&self) -> Option<(&[u64], &[u64])> {
        self.faults
            .as_deref()
            .map(|f| (f.drops.as_slice(), f.queued_after_detect.as_slice()))
    }
}
