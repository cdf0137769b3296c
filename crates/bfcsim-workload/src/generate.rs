//! Generating the flow list of a [`WorkloadSpec`]: a background stream, zero or more incast generators and zero
//! or more named groups.
//!
//! * Background (RNG stream `Workload(0)`): arrivals from [`Arrivals`] at the rate that offers the background's
//!   share of the load (see [`load`](crate::load)), sizes from the [`SizeCdf`], endpoints from [`Endpoints`]. Per
//!   flow the draws are: gap, then (source, destination), then size.
//! * Incast `i` (RNG stream `Workload(1 + i)`, so adding an incast never changes the background flows): at each
//!   event, a destination uniform over the hosts and `degree` distinct sources uniform over the other hosts
//!   (Floyd's sampling), all starting at the event time with `incast: true`; the event's `aggregate` bytes are
//!   split evenly among the senders. Periodic events start at a uniformly random offset in [0, period).
//! * Group `i` (RNG stream `Workload(GROUP_STREAMS + i)`, so adding incasts or groups never changes another's
//!   flows): `count` flows from a shuffled list of the eligible senders, cycled, all starting at `start`; or
//!   Poisson arrivals at `load · C / (8 · size)` per second, C the destination's host link rate, each from a
//!   uniform eligible sender (per flow the draws are: gap, then sender).
//!
//! `load` is the total load including incasts, as in BFC's `nsdifinal.cc`, where the background rate is computed
//! from `utilization_factor - 0.05` when incast is on: the background offers `load - sum(incast loads)`, where an
//! incast's load is its `share`, or `8 * aggregate * incast_crossings / (period * capacity)` for a fixed period.
//!
//! The result is sorted by start time; ties keep generation order (background first, then incast 0, 1, ..., then
//! group 0, 1, ...; within a stream, the order drawn).

use std::collections::BTreeSet;

use bfcsim_core::rng::{Stream, stream};
use bfcsim_core::{Bytes, FlowSpec, NodeId, Time};
use rand::RngExt;

use crate::arrivals::{Arrivals, secs_to_time};
use crate::cdf::SizeCdf;
use crate::endpoints::Endpoints;
use crate::error::WorkloadError;
use crate::load::{Framing, LoadTarget};
use crate::spec::{GroupSpec, IncastArrival, IncastSpec, LoadCounts, Senders, WorkloadSpec};

/// The first RNG stream of the groups: `Workload(GROUP_STREAMS + i)` is group `i`'s, far above the incasts'.
pub const GROUP_STREAMS: u32 = 1 << 16;
/// The RNG stream of the background's classes (`classes > 1`): their own stream, so that spreading flows over
/// classes changes nothing else about them.
const CLASS_STREAM: u32 = GROUP_STREAMS - 1;

/// The hosts a workload is generated over.
#[derive(Clone, Copy, Debug)]
pub struct HostSet<'a> {
    /// The hosts, in the topology's order (a group's `to` indexes this list).
    pub ids: &'a [NodeId],
    /// `racks[i]` is the rack of `ids[i]`; may be empty unless `locality` is set or a group picks its senders
    /// by rack.
    pub racks: &'a [u32],
    /// `link_bps[i]` is the rate of `ids[i]`'s link in bits per second; may be empty unless a group has a
    /// `load`.
    pub link_bps: &'a [f64],
}

/// What the caller resolved the spec's `load_on` link set into.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadBasis {
    /// Sum of the capacities of the directed links in the set, in bits per second.
    pub capacity_bps: f64,
    /// Expected number of links of the set a background flow crosses (for its endpoint pattern, with ECMP).
    pub background_crossings: f64,
    /// Expected number of links of the set an incast flow crosses (uniform destination, uniform other source).
    pub incast_crossings: f64,
    /// How the NICs frame flows, for a load counted on the wire ([`LoadCounts::Wire`]).
    pub framing: Framing,
}

/// The rates a spec works out to, for logging and checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The background's load target (its load is the total minus the incasts'); `None` when nothing loads
    /// the `load_on` set.
    pub background: Option<LoadTarget>,
    /// Background flows per second (0 when the incasts take the whole load).
    pub background_rate: f64,
    /// Each incast's period (mean period for Poisson events).
    pub incast_periods: Vec<Time>,
    /// Each incast's load on the link set.
    pub incast_loads: Vec<f64>,
}

/// Works out the background rate and the incast periods of `spec` with the background's sizes from `cdf`
/// (needed when the background carries load) and the `load_on` set resolved into `basis` (needed when
/// [`WorkloadSpec::needs_load_basis`]).
pub fn plan(
    spec: &WorkloadSpec,
    cdf: Option<&SizeCdf>,
    basis: Option<&LoadBasis>,
) -> Result<Plan, WorkloadError> {
    let invalid = WorkloadError::Invalid;
    let basis = match basis {
        Some(b) => b,
        None if !spec.needs_load_basis() => {
            return Ok(Plan {
                background: None,
                background_rate: 0.0,
                incast_periods: Vec::new(),
                incast_loads: Vec::new(),
            });
        }
        None => {
            return Err(invalid(format!(
                "the load {} and the incasts need the `load_on` link set resolved",
                spec.load
            )));
        }
    };
    let total = LoadTarget {
        load: spec.load,
        capacity_bps: basis.capacity_bps,
        mean_crossings: basis.background_crossings,
    };
    total.validate().map_err(invalid)?;
    let mut incast_periods = Vec::with_capacity(spec.incast.len());
    let mut incast_loads = Vec::with_capacity(spec.incast.len());
    for (i, inc) in spec.incast.iter().enumerate() {
        let name = format!("incast {i}");
        if inc.degree == 0 {
            return Err(invalid(format!("{name}: degree must be at least 1")));
        }
        if inc.aggregate.0 < inc.degree as u64 {
            return Err(invalid(format!(
                "{name}: aggregate {} gives less than one byte to each of {} senders",
                inc.aggregate, inc.degree
            )));
        }
        let target = |share: f64| LoadTarget {
            load: share,
            capacity_bps: basis.capacity_bps,
            mean_crossings: basis.incast_crossings,
        };
        // Bytes an event puts on each link it crosses: its aggregate, split evenly over its senders and framed
        // when the load counts wire bytes.
        let per_event = match spec.load_counts {
            LoadCounts::Payload => inc.aggregate.0 as f64,
            LoadCounts::Wire => {
                let degree = inc.degree as f64;
                degree * basis.framing.wire(inc.aggregate.0 as f64 / degree)
            }
        };
        let (period, load) = match (inc.period, inc.share) {
            (Some(period), None) => {
                if period == Time::ZERO {
                    return Err(invalid(format!("{name}: the period must be positive")));
                }
                let t = target(1.0);
                t.validate().map_err(|e| invalid(format!("{name}: {e}")))?;
                (period, t.period_secs(per_event) / period.secs_f64())
            }
            (None, Some(share)) => {
                let t = target(share);
                t.validate().map_err(|e| invalid(format!("{name}: {e}")))?;
                if share <= 0.0 {
                    return Err(invalid(format!(
                        "{name}: the share {share} must be positive"
                    )));
                }
                let period = secs_to_time(t.period_secs(per_event));
                if period == Time::ZERO {
                    return Err(invalid(format!(
                        "{name}: share {share} needs a period under a picosecond"
                    )));
                }
                (period, share)
            }
            _ => {
                return Err(invalid(format!(
                    "{name}: give exactly one of `period` and `share`"
                )));
            }
        };
        incast_periods.push(period);
        incast_loads.push(load);
    }
    let incast_total: f64 = incast_loads.iter().sum();
    if incast_total > spec.load * (1.0 + 1e-9) {
        return Err(invalid(format!(
            "the incasts offer load {incast_total:.4}, more than the total load {} (which includes them)",
            spec.load
        )));
    }
    let background = LoadTarget {
        load: (spec.load - incast_total).max(0.0),
        ..total
    };
    let background_rate = match cdf {
        _ if background.load == 0.0 => 0.0,
        Some(cdf) => background.flow_rate(match spec.load_counts {
            LoadCounts::Payload => cdf.mean(),
            LoadCounts::Wire => {
                let f = basis.framing;
                cdf.mean() + f.header as f64 * cdf.mean_packets(f.payload)
            }
        }),
        None => {
            return Err(invalid(format!(
                "the background's load {:.4} needs a flow-size distribution: give `cdf`",
                background.load
            )));
        }
    };
    if !background_rate.is_finite() {
        return Err(invalid(format!(
            "the background rate {background_rate} flows/s is not finite"
        )));
    }
    Ok(Plan {
        background: Some(background),
        background_rate,
        incast_periods,
        incast_loads,
    })
}

/// Generates the flows of `spec` over [0, spec.duration): `cdf` is the spec's background size distribution (see
/// [`WorkloadSpec::size_cdf`]), `basis` its `load_on` set (see [`plan`]).
pub fn generate(
    spec: &WorkloadSpec,
    cdf: Option<&SizeCdf>,
    hosts: &HostSet,
    basis: Option<&LoadBasis>,
    master_seed: u64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    generate_at_most(spec, cdf, hosts, basis, master_seed, u64::MAX)
}

/// [`generate`], refusing with [`WorkloadError::TooManyFlows`] a workload expected to exceed `max_flows`
/// flows, and stopping with [`WorkloadError::Runaway`] when the flows drawn exceed ten times those expected
/// (an arrival process whose mean says little about one run, such as a lognormal with a large σ).
pub fn generate_at_most(
    spec: &WorkloadSpec,
    cdf: Option<&SizeCdf>,
    hosts: &HostSet,
    basis: Option<&LoadBasis>,
    master_seed: u64,
    max_flows: u64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    let invalid = WorkloadError::Invalid;
    let plan = plan(spec, cdf, basis)?;
    let endpoints = endpoints(spec, hosts.ids, hosts.racks)?;
    let groups = spec
        .group
        .iter()
        .enumerate()
        .map(|(i, g)| group_plan(spec, i, g, hosts))
        .collect::<Result<Vec<_>, _>>()?;
    let hosts = hosts.ids;
    if !spec.incast.is_empty() && hosts.len() < 2 {
        return Err(invalid("an incast needs at least two hosts".into()));
    }
    let expected = expected_flows(spec, &plan, &groups);
    if expected > max_flows as f64 {
        return Err(WorkloadError::TooManyFlows {
            expected,
            max: max_flows,
        });
    }
    // Far more flows than expected mean an arrival process degenerate at this scale (gaps that round to zero
    // picoseconds): stopped before it fills the memory.
    let runaway = (10.0 * expected)
        .max(expected + 10_000.0)
        .min(max_flows as f64) as usize;
    let room = |flows: &Vec<FlowSpec>| {
        if flows.len() > runaway {
            Err(WorkloadError::Runaway {
                expected,
                drawn: flows.len(),
            })
        } else {
            Ok(())
        }
    };

    let mut flows = Vec::new();
    if let (true, Some(cdf)) = (plan.background_rate > 0.0, cdf) {
        let gaps = spec
            .arrival_process()?
            .sampler(plan.background_rate)
            .map_err(invalid)?;
        let expected = (plan.background_rate * spec.duration.secs_f64())
            .min(spec.flows.unwrap_or(u64::MAX) as f64);
        flows.reserve((expected * 1.05).min(1e9) as usize);
        let mut rng = stream(master_seed, Stream::Workload(0));
        let mut class_rng = stream(master_seed, Stream::Workload(CLASS_STREAM));
        let classes = spec.classes.max(1);
        let mut t = Time::ZERO;
        let count = spec.flows.unwrap_or(u64::MAX) as usize;
        while flows.len() < count {
            t = t.saturating_add(gaps.next_gap(&mut rng));
            if t >= spec.duration {
                break;
            }
            let (src, dst) = endpoints.pick(&mut rng);
            let size = cdf.sample(&mut rng);
            flows.push(FlowSpec {
                src,
                dst,
                size,
                start: t,
                class: match classes {
                    1 => spec.class,
                    n => spec.class + class_rng.random_range(0..n),
                },
                incast: false,
                group: None,
            });
            room(&flows)?;
        }
    }
    if let Some(n) = spec.flows.filter(|&n| flows.len() < n as usize) {
        return Err(invalid(format!(
            "workload.flows = {n}, but only {} background flows arrive within workload.duration = {}: \
             lengthen the duration (it only bounds the arrivals)",
            flows.len(),
            spec.duration
        )));
    }
    for (i, (inc, &period)) in spec.incast.iter().zip(&plan.incast_periods).enumerate() {
        let mut rng = stream(master_seed, Stream::Workload(1 + i as u32));
        let class = inc.class.unwrap_or(spec.class);
        let gaps = Arrivals::Poisson
            .sampler(1.0 / period.secs_f64())
            .map_err(invalid)?;
        let mut t = match inc.arrival {
            IncastArrival::Periodic => Time(rng.random_range(0..period.0)),
            IncastArrival::Poisson => gaps.next_gap(&mut rng),
        };
        while t < spec.duration {
            incast_event(&mut flows, &mut rng, hosts, inc, t, class);
            room(&flows)?;
            t = t.saturating_add(match inc.arrival {
                IncastArrival::Periodic => period,
                IncastArrival::Poisson => gaps.next_gap(&mut rng),
            });
        }
    }
    for (i, g) in groups.iter().enumerate() {
        let mut rng = stream(master_seed, Stream::Workload(GROUP_STREAMS + i as u32));
        g.generate(&mut flows, &mut rng, spec, i as u16, &room)?;
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// A checked group: its destination, eligible senders and arrival rate.
struct GroupPlan<'a> {
    spec: &'a GroupSpec,
    dst: NodeId,
    senders: Vec<NodeId>,
    /// Flows per second of a `load` group.
    rate: Option<f64>,
}

/// Checks group `i` against the hosts and works out its senders and rate.
fn group_plan<'a>(
    spec: &WorkloadSpec,
    i: usize,
    g: &'a GroupSpec,
    hosts: &HostSet,
) -> Result<GroupPlan<'a>, WorkloadError> {
    let invalid = |m: String| WorkloadError::Invalid(format!("group {i} (`{}`): {m}", g.name));
    if g.name.is_empty() {
        return Err(invalid("give the group a `name`".into()));
    }
    if spec.group[..i].iter().any(|o| o.name == g.name) {
        return Err(invalid("another group has this name".into()));
    }
    if i >= u16::MAX as usize {
        return Err(invalid(format!("at most {} groups", u16::MAX)));
    }
    if g.size.0 == 0 {
        return Err(invalid("the flow size must be at least 1 byte".into()));
    }
    let to = g.to as usize;
    if to >= hosts.ids.len() {
        return Err(invalid(format!(
            "`to = {to}` is not a host index: there are {} hosts (0..{})",
            hosts.ids.len(),
            hosts.ids.len()
        )));
    }
    if g.from != Senders::Any && hosts.racks.len() != hosts.ids.len() {
        return Err(invalid(format!(
            "`from = \"{}\"` needs the rack of every host, but {} rack indices for {} hosts were given",
            g.from,
            hosts.racks.len(),
            hosts.ids.len()
        )));
    }
    let senders: Vec<NodeId> = if g.senders.is_empty() {
        (0..hosts.ids.len())
            .filter(|&h| {
                h != to
                    && match g.from {
                        Senders::Any => true,
                        Senders::OtherRacks => hosts.racks[h] != hosts.racks[to],
                        Senders::SameRack => hosts.racks[h] == hosts.racks[to],
                    }
            })
            .map(|h| hosts.ids[h])
            .collect()
    } else {
        listed_senders(g, hosts.ids).map_err(invalid)?
    };
    if senders.is_empty() {
        return Err(invalid(format!(
            "no host is eligible to send with `from = \"{}\"`",
            g.from
        )));
    }
    let rate = match (g.count, g.load) {
        (Some(0), None) => return Err(invalid("`count` must be at least 1".into())),
        (Some(_), None) => None,
        (None, Some(load)) => {
            if !(load.is_finite() && load > 0.0) {
                return Err(invalid(format!("the load {load} must be positive")));
            }
            let Some(&bps) = hosts.link_bps.get(to) else {
                return Err(invalid(
                    "a `load` needs the destination's link rate, which was not given".into(),
                ));
            };
            if g.start >= spec.duration {
                return Err(invalid(format!(
                    "arrivals from `start = {}` would end at once: the workload's duration is {}",
                    g.start, spec.duration
                )));
            }
            let rate = load * bps / (8.0 * g.size.0 as f64);
            if !(rate.is_finite() && rate > 0.0) {
                return Err(invalid(format!(
                    "load {load} of a {bps} b/s link gives {rate} flows/s"
                )));
            }
            Some(rate)
        }
        _ => return Err(invalid("give exactly one of `count` and `load`".into())),
    };
    if g.start_spread > Time::ZERO && g.count.is_none() {
        return Err(invalid(
            "`start_spread` spreads the starts of `count` flows; Poisson arrivals (`load`) are spread already"
                .into(),
        ));
    }
    Ok(GroupPlan {
        spec: g,
        dst: hosts.ids[to],
        senders,
        rate,
    })
}

/// A group's `senders`: host indices, each a host other than the destination, listed once, and no `from`.
fn listed_senders(g: &GroupSpec, ids: &[NodeId]) -> Result<Vec<NodeId>, String> {
    if g.from != Senders::Any {
        return Err(format!(
            "give `from = \"{}\"` or `senders`, not both",
            g.from
        ));
    }
    let mut seen = vec![false; ids.len()];
    g.senders
        .iter()
        .map(|&h| {
            let h = h as usize;
            if h >= ids.len() {
                return Err(format!(
                    "`senders` lists {h}, which is not a host index: there are {} hosts (0..{})",
                    ids.len(),
                    ids.len()
                ));
            }
            if h == g.to as usize {
                return Err(format!("`senders` lists {h}, the destination itself"));
            }
            if std::mem::replace(&mut seen[h], true) {
                return Err(format!("`senders` lists {h} twice"));
            }
            Ok(ids[h])
        })
        .collect()
}

impl GroupPlan<'_> {
    /// Appends the group's flows, tagged `index`, while `room` allows.
    fn generate<R: rand::Rng + ?Sized>(
        &self,
        flows: &mut Vec<FlowSpec>,
        rng: &mut R,
        spec: &WorkloadSpec,
        index: u16,
        room: &dyn Fn(&Vec<FlowSpec>) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        let g = self.spec;
        let flow = |src, start| FlowSpec {
            src,
            dst: self.dst,
            size: g.size,
            start,
            class: g.class.unwrap_or(spec.class),
            incast: false,
            group: Some(index),
        };
        match (g.count, self.rate) {
            (Some(count), _) => {
                // Fisher-Yates: distinct senders while there are enough, then the same order again.
                let mut order = self.senders.clone();
                for k in (1..order.len()).rev() {
                    order.swap(k, rng.random_range(0..=k));
                }
                flows.extend((0..count as usize).map(|k| {
                    let late = match g.start_spread.0 {
                        0 => 0,
                        spread => rng.random_range(0..spread),
                    };
                    flow(order[k % order.len()], g.start + Time(late))
                }));
            }
            (None, Some(rate)) => {
                let gaps = Arrivals::Poisson
                    .sampler(rate)
                    .expect("checked: a positive, finite rate");
                let mut t = g.start;
                loop {
                    t = t.saturating_add(gaps.next_gap(rng));
                    if t >= spec.duration {
                        break;
                    }
                    let src = self.senders[rng.random_range(0..self.senders.len())];
                    flows.push(flow(src, t));
                    room(flows)?;
                }
            }
            (None, None) => unreachable!("checked: a count or a load"),
        }
        Ok(())
    }
}

/// The flows `spec` is expected to generate: the background's and the load groups' rates over their windows,
/// each incast's events times its degree, each counted group's count.
fn expected_flows(spec: &WorkloadSpec, plan: &Plan, groups: &[GroupPlan]) -> f64 {
    let secs = spec.duration.secs_f64();
    let background =
        (plan.background_rate * secs).min(spec.flows.map_or(f64::INFINITY, |n| n as f64));
    let incasts: f64 = spec
        .incast
        .iter()
        .zip(&plan.incast_periods)
        .map(|(inc, period)| (secs / period.secs_f64() + 1.0) * f64::from(inc.degree))
        .sum();
    let grouped: f64 = groups
        .iter()
        .map(|g| match (g.spec.count, g.rate) {
            (Some(count), _) => f64::from(count),
            (None, Some(rate)) => rate * spec.duration.saturating_sub(g.spec.start).secs_f64(),
            (None, None) => 0.0,
        })
        .sum();
    background + incasts + grouped + spec.long_lived.len() as f64
}

/// The background's endpoint chooser: `sources`/`destinations` subsets, rack locality, blocks of hosts, or
/// uniform.
fn endpoints(
    spec: &WorkloadSpec,
    hosts: &[NodeId],
    racks: &[u32],
) -> Result<Endpoints, WorkloadError> {
    if let Some(n) = spec.partition {
        if spec.locality.is_some() || spec.sources.is_some() || spec.destinations.is_some() {
            return Err(WorkloadError::Invalid(
                "give `partition` without `locality`, `sources` or `destinations`".into(),
            ));
        }
        if n < 2 || !hosts.len().is_multiple_of(n as usize) {
            return Err(WorkloadError::Invalid(format!(
                "partition = {n} must be at least 2 and divide the {} hosts",
                hosts.len()
            )));
        }
        // A block is a rack whose every flow stays local.
        let blocks: Vec<u32> = (0..hosts.len() as u32).map(|i| i / n).collect();
        return Endpoints::local(hosts, &blocks, 1.0).map_err(WorkloadError::Invalid);
    }
    match (spec.locality, spec.subsets(hosts.len())?) {
        (Some(_), Some(_)) => {
            Err("give either `locality` or `sources`/`destinations`, not both".into())
        }
        (Some(p), None) => Endpoints::local(hosts, racks, p),
        (None, Some((sources, destinations))) => Endpoints::between(hosts, &sources, &destinations),
        (None, None) => Endpoints::uniform(hosts),
    }
    .map_err(WorkloadError::Invalid)
}

/// The long-lived flows of `spec` (`[[workload.long_lived]]`), in the order given; host indices refer to
/// `hosts`.
pub fn long_lived(spec: &WorkloadSpec, hosts: &[NodeId]) -> Result<Vec<FlowSpec>, WorkloadError> {
    spec.long_lived
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let host = |h: u32| {
                hosts.get(h as usize).copied().ok_or_else(|| {
                    WorkloadError::Invalid(format!(
                        "long_lived {i}: host index {h} is not below the {} hosts",
                        hosts.len()
                    ))
                })
            };
            let (src, dst) = (host(l.src)?, host(l.dst)?);
            if src == dst || l.size.0 == 0 {
                return Err(WorkloadError::Invalid(format!(
                    "long_lived {i}: needs two different hosts and a positive size"
                )));
            }
            Ok(FlowSpec {
                src,
                dst,
                size: l.size,
                start: l.start,
                class: l.class.unwrap_or(spec.class),
                incast: false,
                group: None,
            })
        })
        .collect()
}

/// One incast event at `t`: a uniform destination and `degree` distinct uniform sources among the other hosts.
/// A degree above the other hosts' number (BFC §6.3's Fig. 13 goes to 2000 on 128 hosts) gives every other host
/// ⌊degree/others⌋ flows and the remainder one more, drawn as a smaller incast.
fn incast_event<R: rand::Rng + ?Sized>(
    flows: &mut Vec<FlowSpec>,
    rng: &mut R,
    hosts: &[NodeId],
    inc: &IncastSpec,
    t: Time,
    class: u8,
) {
    let n = hosts.len();
    let dst = rng.random_range(0..n);
    // Floyd's algorithm: `degree` distinct indices of 0..n-1, then skip over the destination.
    let (m, degree) = (n - 1, inc.degree as usize);
    let (full, d) = (degree / m, degree % m);
    let mut order: Vec<usize> = (0..full).flat_map(|_| 0..m).collect();
    let mut chosen = BTreeSet::new();
    for j in m - d..m {
        let k = rng.random_range(0..=j);
        // j is larger than every index chosen so far, so it is always new.
        let pick = if chosen.contains(&k) { j } else { k };
        chosen.insert(pick);
        order.push(pick);
    }
    let degree = inc.degree as u64;
    let (base, extra) = (inc.aggregate.0 / degree, inc.aggregate.0 % degree);
    for (s, &k) in order.iter().enumerate() {
        let src = if k >= dst { k + 1 } else { k };
        flows.push(FlowSpec {
            src: hosts[src],
            dst: hosts[dst],
            size: Bytes(base + u64::from((s as u64) < extra)),
            start: t,
            class,
            incast: true,
            group: None,
        });
    }
}

#[cfg(test)]
mod tests;
