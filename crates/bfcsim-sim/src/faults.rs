//! Fabric events on a timeline (issue 71): links, or single directions of them, that go down and come back, run
//! at a fraction of their speed, or lose packets at random, at times the experiment fixes in advance.
//!
//! A [`FaultPlan`] is the whole timeline, compiled before the run from primitive [`Change`]s (the experiment
//! file's `[[events]]` are turned into these: a flap into its downs and ups, a switch into its links), so that
//! every shard answers from the same plan what a wire does at any time, with no message between them:
//!
//! - A packet is lost on its wire (`link-down`) when the wire is down at any moment from the start of its
//!   serialization to its arrival at the far end: what was in flight when the fibre went dark never arrives,
//!   and a transmitter whose switch has not yet noticed keeps sending into it. The loss is decided, and the
//!   drop recorded, as the packet leaves.
//! - A packet that leaves a wire with a loss rate is lost with that probability (`link-loss`), drawn from the
//!   port's own stream; a bit-error rate `ber` loses a packet of `n` bytes with probability 1 − (1 − ber)^(8n).
//! - Routing learns of a change only `detect` after it (the time a switch takes to see loss of signal, or a
//!   routing protocol to converge; HPCC's ns-3 recomputes its routes at the instant of `LINK_DOWN`, which is
//!   `detect = 0`): from then on every switch's next hops are the shortest paths over the links it knows to be
//!   up ([`Routes::avoiding`]), ECMP hashing over what is left. A destination left with no path keeps its old
//!   next hops, whose packets are lost on the dead link, and the pairs that cannot reach each other are
//!   counted ([`RouteChange::unreachable`]).
//! - A rate change sets the wire's line rate from the next packet it starts.

use bfcsim_core::rng::{self, Rng, Stream};
use bfcsim_core::{PortId, Rate, Time};
use bfcsim_net::mmu::DropReason;
use bfcsim_net::routing::Routes;
use bfcsim_net::topology::Topology;
use rand::RngExt;

/// One change of one direction of a link (the transmit side of port `port`), due at `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// When.
    pub at: Time,
    /// The transmitting port of the direction that changes.
    pub port: PortId,
    /// What it becomes.
    pub set: Set,
    /// The experiment's event this change belongs to (its index), which its drops are counted under.
    pub event: u32,
    /// How long after `at` routing acts on a down or an up.
    pub detect: Time,
}

/// What a [`Change`] sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Set {
    /// The direction carries nothing.
    Down,
    /// It carries packets again.
    Up,
    /// Its line rate.
    Rate(Rate),
    /// Random loss: each packet lost with probability `per_packet`, and each bit with probability `ber`
    /// (both 0: none).
    Loss {
        /// Probability a packet is lost, whatever its size.
        per_packet: f64,
        /// Probability a bit is corrupted (a packet with one corrupted bit is lost).
        ber: f64,
    },
}

/// The next hops of every switch from `at` on.
#[derive(Clone, Debug)]
pub struct RouteChange {
    /// When routing acts.
    pub at: Time,
    /// The tables from then on.
    pub routes: Routes,
    /// Ordered host pairs that no live path joins (their packets follow the old next hops and are lost).
    pub unreachable: u64,
}

/// One port's share of the plan.
#[derive(Clone, Debug, Default)]
struct PortPlan {
    /// Down intervals `[from, to)` (`to` = `Time::MAX`: for good) and their events, in time order.
    down: Vec<(Time, Time, u32)>,
    /// The loss in force from each time on (per packet, per bit, event), in time order.
    loss: Vec<(Time, f64, f64, u32)>,
}

/// Every change of a run's fabric, compiled for the engine's queries.
#[derive(Clone, Debug)]
pub struct FaultPlan {
    /// The index into `ports` of each port id (`u32::MAX`: the port never changes).
    slot: Vec<u32>,
    ports: Vec<PortPlan>,
    /// Each port's id, by slot.
    port_ids: Vec<PortId>,
    /// Rate changes, in time order.
    rates: Vec<(Time, PortId, Rate)>,
    /// Routing's changes, in time order.
    routes: Vec<RouteChange>,
    events: usize,
}

impl FaultPlan {
    /// Compiles `changes` (any order) on `topo`, whose routes without any change are `base`. Fails, naming the
    /// event, on a port the topology does not have, an up with no down before it, a rate of zero, or a loss
    /// outside [0, 1].
    pub fn new(topo: &Topology, mut changes: Vec<Change>) -> Result<FaultPlan, String> {
        changes.sort_by_key(|c| (c.at, c.port, c.event));
        let n_ports = topo.ports.len();
        let mut slot = vec![u32::MAX; n_ports];
        let mut ports: Vec<PortPlan> = Vec::new();
        let mut port_ids = Vec::new();
        let mut rates = Vec::new();
        // Downs not yet matched by an up, per slot.
        let mut depth: Vec<u32> = Vec::new();
        let events = changes
            .iter()
            .map(|c| c.event as usize + 1)
            .max()
            .unwrap_or(0);
        for c in &changes {
            let what = |m: String| format!("event {}: {m}", c.event);
            if c.port.idx() >= n_ports {
                return Err(what(format!(
                    "port {} is not in the topology ({n_ports} ports)",
                    c.port
                )));
            }
            let i = &mut slot[c.port.idx()];
            if *i == u32::MAX {
                *i = ports.len() as u32;
                ports.push(PortPlan::default());
                port_ids.push(c.port);
                depth.push(0u32);
            }
            let slot = *i as usize;
            let p = &mut ports[slot];
            match c.set {
                // Overlapping downs (a flap inside an outage, a switch and one of its links) keep the port
                // down until each has had its up.
                Set::Down => {
                    if depth[slot] == 0 {
                        p.down.push((c.at, Time::MAX, c.event));
                    }
                    depth[slot] += 1;
                }
                Set::Up if depth[slot] > 0 => {
                    depth[slot] -= 1;
                    if depth[slot] == 0 {
                        p.down.last_mut().expect("open").1 = c.at;
                    }
                }
                Set::Up => {
                    return Err(what(format!(
                        "port {} comes up at {} but is not down then",
                        c.port, c.at
                    )));
                }
                Set::Rate(r) if r.0 == 0 => {
                    return Err(what("a rate of 0 (take the link down instead)".into()));
                }
                Set::Rate(r) => rates.push((c.at, c.port, r)),
                Set::Loss { per_packet, ber } => {
                    for (name, v) in [("loss", per_packet), ("ber", ber)] {
                        if !(0.0..=1.0).contains(&v) {
                            return Err(what(format!("{name} = {v} is outside [0, 1]")));
                        }
                    }
                    p.loss.push((c.at, per_packet, ber, c.event));
                }
            }
        }
        let routes = route_changes(topo, &changes)?;
        Ok(FaultPlan {
            slot,
            ports,
            port_ids,
            rates,
            routes,
            events,
        })
    }

    /// The ports that ever change (their wires take the engine's slower way out).
    pub fn ports(&self) -> &[PortId] {
        &self.port_ids
    }

    /// Events the plan's changes name (one more than the largest index).
    pub fn events(&self) -> usize {
        self.events
    }

    /// Rate changes in time order.
    pub fn rates(&self) -> &[(Time, PortId, Rate)] {
        &self.rates
    }

    /// Routing's changes in time order.
    pub fn route_changes(&self) -> &[RouteChange] {
        &self.routes
    }

    /// The event of the down interval of `port` that overlaps `[from, to]`, if one does.
    pub fn down_during(&self, port: PortId, from: Time, to: Time) -> Option<u32> {
        let p = self.plan_of(port)?;
        // The first interval that ends after `from`; it overlaps when it starts by `to`.
        let i = p.down.partition_point(|d| d.1 <= from);
        p.down.get(i).filter(|d| d.0 <= to).map(|d| d.2)
    }

    /// The random loss of `port` at `t`: (per packet, per bit, event); `None` when it has none.
    pub fn loss_at(&self, port: PortId, t: Time) -> Option<(f64, f64, u32)> {
        let p = self.plan_of(port)?;
        let i = p.loss.partition_point(|l| l.0 <= t);
        let &(_, per_packet, ber, event) = p.loss.get(i.checked_sub(1)?)?;
        (per_packet > 0.0 || ber > 0.0).then_some((per_packet, ber, event))
    }

    fn plan_of(&self, port: PortId) -> Option<&PortPlan> {
        let i = *self.slot.get(port.idx())?;
        self.ports.get(i as usize)
    }
}

/// Routing's view after every down and up of `changes` (sorted by time), each `detect` after it.
fn route_changes(topo: &Topology, changes: &[Change]) -> Result<Vec<RouteChange>, String> {
    let mut known: Vec<(Time, PortId, bool)> = changes
        .iter()
        .filter_map(|c| match c.set {
            Set::Down => Some((c.at.saturating_add(c.detect), c.port, true)),
            Set::Up => Some((c.at.saturating_add(c.detect), c.port, false)),
            _ => None,
        })
        .collect();
    known.sort_by_key(|k| (k.0, k.1));
    let mut down = vec![0u32; topo.ports.len()];
    let mut out: Vec<RouteChange> = Vec::new();
    let mut i = 0;
    while i < known.len() {
        let at = known[i].0;
        // Overlapping downs of one port (a flap inside an outage) count until each has its up.
        while i < known.len() && known[i].0 == at {
            let (_, port, is_down) = known[i];
            let d = &mut down[port.idx()];
            *d = if is_down { *d + 1 } else { d.saturating_sub(1) };
            i += 1;
        }
        let dead: Vec<bool> = down.iter().map(|&d| d > 0).collect();
        let (routes, unreachable) = Routes::avoiding(topo, &dead)?;
        out.push(RouteChange {
            at,
            routes,
            unreachable,
        });
    }
    Ok(out)
}

/// A shard's running state of the plan: which rate and route changes are next, the ports' loss streams, and
/// what each event cost.
#[derive(Clone, Debug)]
pub(crate) struct Faults {
    pub(crate) plan: std::sync::Arc<FaultPlan>,
    pub(crate) next_rate: usize,
    pub(crate) next_route: usize,
    /// Each changing port's loss stream, by its slot in the plan.
    rngs: Vec<Rng>,
    /// Packets each event lost.
    pub(crate) drops: Vec<u64>,
    /// Packets that joined a port's queue after routing knew the port was down, by event.
    pub(crate) queued_after_detect: Vec<u64>,
}

impl Faults {
    pub(crate) fn new(plan: std::sync::Arc<FaultPlan>, seed: u64) -> Faults {
        let rngs = plan
            .port_ids
            .iter()
            .map(|p| rng::stream(seed, Stream::Fault(p.0)))
            .collect();
        let events = plan.events;
        Faults {
            plan,
            next_rate: 0,
            next_route: 0,
            rngs,
            drops: vec![0; events],
            queued_after_detect: vec![0; events],
        }
    }

    /// When the next rate or route change is due (`None`: no more).
    pub(crate) fn next_change(&self) -> Option<Time> {
        let rate = self.plan.rates.get(self.next_rate).map(|r| r.0);
        let route = self.plan.routes.get(self.next_route).map(|r| r.at);
        match (rate, route) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether a packet of `size` bytes that starts on `port` at `sent` (queued there at `queued`, for a switch
    /// port) and reaches the far end at `arrive` is lost, and why. Counts the loss under its event.
    pub(crate) fn loses(
        &mut self,
        port: PortId,
        queued: Option<Time>,
        sent: Time,
        arrive: Time,
        size: u32,
    ) -> Option<DropReason> {
        let plan = &*self.plan;
        let slot = *plan.slot.get(port.idx())? as usize;
        if let Some(event) = plan.down_during(port, sent, arrive) {
            self.drops[event as usize] += 1;
            if queued.is_some_and(|t| plan.known_down(port, t)) {
                self.queued_after_detect[event as usize] += 1;
            }
            return Some(DropReason::LinkDown);
        }
        let (per_packet, ber, event) = plan.loss_at(port, sent)?;
        let p = if ber > 0.0 {
            1.0 - (1.0 - per_packet) * (1.0 - ber).powf(8.0 * size as f64)
        } else {
            per_packet
        };
        if self.rngs[slot].random::<f64>() < p {
            self.drops[event as usize] += 1;
            return Some(DropReason::LinkLoss);
        }
        None
    }
}

impl FaultPlan {
    /// Whether routing knew at `t` that `port` was down (a down detected by then, its up not yet).
    fn known_down(&self, port: PortId, t: Time) -> bool {
        let Some(i) = self.routes.partition_point(|r| r.at <= t).checked_sub(1) else {
            return false;
        };
        self.routes[i].routes.avoids(port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_net::build::{Build, LeafSpine};

    fn topo() -> Topology {
        LeafSpine {
            tors: 2,
            spines: 2,
            hosts_per_tor: 2,
            ..LeafSpine::default()
        }
        .build()
        .unwrap()
    }

    fn change(at_us: u64, port: u32, set: Set) -> Change {
        Change {
            at: Time::from_us(at_us),
            port: PortId(port),
            set,
            event: 0,
            detect: Time::from_us(10),
        }
    }

    /// A switch-to-switch port of `topo()`.
    fn uplink(t: &Topology) -> PortId {
        t.ports
            .iter()
            .enumerate()
            .find(|(_, p)| !t.is_host(p.node) && !t.is_host(t.ports[p.peer.idx()].node))
            .map(|(i, _)| PortId(i as u32))
            .unwrap()
    }

    #[test]
    fn a_packet_on_the_wire_while_it_is_down_is_lost() {
        let t = topo();
        let p = uplink(&t);
        let plan = FaultPlan::new(
            &t,
            vec![change(100, p.0, Set::Down), change(200, p.0, Set::Up)],
        )
        .unwrap();
        let us = Time::from_us;
        assert_eq!(plan.down_during(p, us(50), us(99)), None);
        // In flight when it failed, sent while down, sent just before it came back.
        assert_eq!(plan.down_during(p, us(99), us(101)), Some(0));
        assert_eq!(plan.down_during(p, us(150), us(151)), Some(0));
        assert_eq!(plan.down_during(p, us(199), us(201)), Some(0));
        assert_eq!(plan.down_during(p, us(200), us(201)), None);
        // Routing avoids it from 110 us to 210 us.
        let r = plan.route_changes();
        assert_eq!((r.len(), r[0].at, r[1].at), (2, us(110), us(210)));
        assert!(r[0].routes.avoids(p) && !r[1].routes.avoids(p));
        assert_eq!(r[0].unreachable, 0);
        assert!(plan.known_down(p, us(110)) && !plan.known_down(p, us(109)));
    }

    #[test]
    fn overlapping_downs_keep_the_port_down_until_the_last_up() {
        let t = topo();
        let p = uplink(&t);
        let mut inner = change(150, p.0, Set::Down);
        inner.event = 1;
        let mut inner_up = change(160, p.0, Set::Up);
        inner_up.event = 1;
        let plan = FaultPlan::new(
            &t,
            vec![
                change(100, p.0, Set::Down),
                inner,
                inner_up,
                change(200, p.0, Set::Up),
            ],
        )
        .unwrap();
        let us = Time::from_us;
        assert_eq!(plan.down_during(p, us(170), us(171)), Some(0));
        assert_eq!(plan.down_during(p, us(200), us(201)), None);
        assert!(plan.known_down(p, us(175)) && !plan.known_down(p, us(215)));
    }

    #[test]
    fn an_up_without_a_down_and_a_loss_above_one_are_refused() {
        let t = topo();
        let e = FaultPlan::new(&t, vec![change(5, 0, Set::Up)]).unwrap_err();
        assert!(e.contains("not down"), "{e}");
        let loss = Set::Loss {
            per_packet: 1.5,
            ber: 0.0,
        };
        let e = FaultPlan::new(&t, vec![change(5, 0, loss)]).unwrap_err();
        assert!(e.contains("outside [0, 1]"), "{e}");
        let e = FaultPlan::new(&t, vec![change(5, 9999, Set::Down)]).unwrap_err();
        assert!(e.contains("not in the topology"), "{e}");
    }

    #[test]
    fn random_loss_takes_about_its_share() {
        let t = topo();
        let p = uplink(&t);
        let loss = Set::Loss {
            per_packet: 0.1,
            ber: 0.0,
        };
        let plan = std::sync::Arc::new(FaultPlan::new(&t, vec![change(0, p.0, loss)]).unwrap());
        let mut f = Faults::new(plan, 1);
        let lost = (0..100_000)
            .filter(|_| {
                f.loses(p, None, Time::from_us(1), Time::from_us(2), 1000)
                    .is_some()
            })
            .count();
        assert!((9_000..11_000).contains(&lost), "{lost}");
        assert_eq!(f.drops[0], lost as u64);
        // A host's link that never changes loses nothing.
        assert_eq!(f.loses(PortId(0), None, Time::ZERO, Time::ZERO, 1000), None);
    }

    #[test]
    fn a_switch_cut_off_leaves_pairs_unreachable() {
        let t = topo();
        // Every port of the first host: it can reach no one and no one it.
        let host = t.hosts[0];
        let changes = t.nodes[host.idx()]
            .ports
            .iter()
            .flat_map(|&p| [p, t.ports[p.idx()].peer])
            .map(|p| change(100, p.0, Set::Down))
            .collect();
        let plan = FaultPlan::new(&t, changes).unwrap();
        let n = t.hosts.len() as u64;
        assert_eq!(plan.route_changes()[0].unreachable, 2 * (n - 1));
    }
}
