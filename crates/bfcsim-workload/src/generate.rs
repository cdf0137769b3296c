//! Generating the flow list of a [`WorkloadSpec`]: a background stream plus zero or more incast generators.
//!
//! * Background (RNG stream `Workload(0)`): arrivals from [`Arrivals`] at the rate that offers the background's
//!   share of the load (see [`load`](crate::load)), sizes from the [`SizeCdf`], endpoints from [`Endpoints`]. Per
//!   flow the draws are: gap, then (source, destination), then size.
//! * Incast `i` (RNG stream `Workload(1 + i)`, so adding an incast never changes the background flows): at each
//!   event, a destination uniform over the hosts and `degree` distinct sources uniform over the other hosts
//!   (Floyd's sampling), all starting at the event time with `incast: true`; the event's `aggregate` bytes are
//!   split evenly among the senders. Periodic events start at a uniformly random offset in [0, period).
//!
//! `load` is the total load including incasts, as in BFC's `nsdifinal.cc`, where the background rate is computed
//! from `utilization_factor - 0.05` when incast is on: the background offers `load - sum(incast loads)`, where an
//! incast's load is its `share`, or `8 * aggregate * incast_crossings / (period * capacity)` for a fixed period.
//!
//! The result is sorted by start time; ties keep generation order (background first, then incast 0, 1, ...; within
//! a stream, the order drawn).

use std::collections::BTreeSet;

use bfcsim_core::rng::{Stream, stream};
use bfcsim_core::{Bytes, FlowSpec, NodeId, Time};
use rand::RngExt;

use crate::arrivals::{Arrivals, secs_to_time};
use crate::cdf::SizeCdf;
use crate::endpoints::Endpoints;
use crate::error::WorkloadError;
use crate::load::LoadTarget;
use crate::spec::{IncastArrival, IncastSpec, WorkloadSpec};

/// What the caller resolved the spec's `load_on` link set into.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadBasis {
    /// Sum of the capacities of the directed links in the set, in bits per second.
    pub capacity_bps: f64,
    /// Expected number of links of the set a background flow crosses (for its endpoint pattern, with ECMP).
    pub background_crossings: f64,
    /// Expected number of links of the set an incast flow crosses (uniform destination, uniform other source).
    pub incast_crossings: f64,
}

/// The rates a spec works out to, for logging and checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The background's load target (its load is the total minus the incasts').
    pub background: LoadTarget,
    /// Background flows per second (0 when the incasts take the whole load).
    pub background_rate: f64,
    /// Each incast's period (mean period for Poisson events).
    pub incast_periods: Vec<Time>,
    /// Each incast's load on the link set.
    pub incast_loads: Vec<f64>,
}

/// Works out the background rate and the incast periods of `spec` with flow sizes from `cdf`.
pub fn plan(spec: &WorkloadSpec, cdf: &SizeCdf, basis: &LoadBasis) -> Result<Plan, WorkloadError> {
    let invalid = WorkloadError::Invalid;
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
        let (period, load) = match (inc.period, inc.share) {
            (Some(period), None) => {
                if period == Time::ZERO {
                    return Err(invalid(format!("{name}: the period must be positive")));
                }
                let t = target(1.0);
                t.validate().map_err(|e| invalid(format!("{name}: {e}")))?;
                (
                    period,
                    t.period_secs(inc.aggregate.0 as f64) / period.secs_f64(),
                )
            }
            (None, Some(share)) => {
                let t = target(share);
                t.validate().map_err(|e| invalid(format!("{name}: {e}")))?;
                if share <= 0.0 {
                    return Err(invalid(format!(
                        "{name}: the share {share} must be positive"
                    )));
                }
                let period = secs_to_time(t.period_secs(inc.aggregate.0 as f64));
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
    let background_rate = background.flow_rate(cdf.mean());
    if !background_rate.is_finite() {
        return Err(invalid(format!(
            "the background rate {background_rate} flows/s is not finite"
        )));
    }
    Ok(Plan {
        background,
        background_rate,
        incast_periods,
        incast_loads,
    })
}

/// Generates the flows of `spec` over [0, spec.duration): `cdf` is the spec's size distribution (see
/// [`WorkloadSpec::size_cdf`]), `racks[i]` the rack of `hosts[i]` (may be empty unless `locality` is set).
pub fn generate(
    spec: &WorkloadSpec,
    cdf: &SizeCdf,
    hosts: &[NodeId],
    racks: &[u32],
    basis: &LoadBasis,
    master_seed: u64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    let invalid = WorkloadError::Invalid;
    let plan = plan(spec, cdf, basis)?;
    let endpoints = match (spec.locality, spec.receiver) {
        (None, None) => Endpoints::uniform(hosts),
        (Some(p), None) => Endpoints::local(hosts, racks, p),
        (None, Some(r)) => Endpoints::to_one(hosts, r as usize),
        (Some(_), Some(_)) => Err("`locality` and `receiver` exclude each other".to_string()),
    }
    .map_err(invalid)?;
    for (i, inc) in spec.incast.iter().enumerate() {
        if inc.degree as usize > hosts.len() - 1 {
            return Err(invalid(format!(
                "incast {i}: degree {} needs that many senders besides the destination, but there are only {} \
                 other hosts",
                inc.degree,
                hosts.len() - 1
            )));
        }
    }

    let mut flows = Vec::new();
    if plan.background_rate > 0.0 {
        let gaps = spec
            .arrival_process()?
            .sampler(plan.background_rate)
            .map_err(invalid)?;
        let expected = plan.background_rate * spec.duration.secs_f64();
        flows.reserve((expected * 1.05).min(1e9) as usize);
        let mut rng = stream(master_seed, Stream::Workload(0));
        let mut t = Time::ZERO;
        loop {
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
                class: spec.class,
                incast: false,
            });
        }
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
            t = t.saturating_add(match inc.arrival {
                IncastArrival::Periodic => period,
                IncastArrival::Poisson => gaps.next_gap(&mut rng),
            });
        }
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// One incast event at `t`: a uniform destination and `degree` distinct uniform sources among the other hosts.
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
    let (m, d) = (n - 1, inc.degree as usize);
    let mut chosen = BTreeSet::new();
    let mut order = Vec::with_capacity(d);
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
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::builtin;
    use crate::cdf::Interpolation;
    use crate::spec::ArrivalKind;

    fn hosts(n: u32) -> Vec<NodeId> {
        (0..n).map(NodeId).collect()
    }

    fn spec(load: f64, arrivals: ArrivalKind, duration: Time) -> WorkloadSpec {
        WorkloadSpec {
            cdf: "google".into(),
            interpolation: Interpolation::Linear,
            bytes_per_packet: None,
            min_size: None,
            arrivals,
            sigma: None,
            load,
            load_on: "core".into(),
            duration,
            locality: None,
            receiver: None,
            class: 0,
            incast: vec![],
        }
    }

    const BASIS: LoadBasis = LoadBasis {
        capacity_bps: 6.4e12,
        background_crossings: 1.75,
        incast_crossings: 2.0,
    };

    fn google() -> SizeCdf {
        builtin("google")
            .unwrap()
            .load(Interpolation::Linear)
            .unwrap()
    }

    fn achieved(flows: &[FlowSpec], spec: &WorkloadSpec) -> f64 {
        let bytes: u64 = flows.iter().map(|f| f.size.0).sum();
        let t = LoadTarget {
            load: spec.load,
            capacity_bps: BASIS.capacity_bps,
            mean_crossings: BASIS.background_crossings,
        };
        t.achieved(bytes, spec.duration)
    }

    /// Acceptance: log-normal (sigma = 2) arrivals with the Google CDF hit the target load within 2%.
    ///
    /// The Google sizes have CV^2 ~ 500 and the sigma = 2 gaps CV^2 = e^4 - 1 ~ 54, so the achieved load over n
    /// flows has a relative standard error of about sqrt(554 / n). 100 ms at 0.6 load is ~9.4 million flows,
    /// a standard error of ~0.8%, which puts 2% at about 2.6 standard errors.
    #[test]
    fn lognormal_load_is_within_two_percent() {
        let mut s = spec(0.6, ArrivalKind::LogNormal, Time::from_ms(100));
        s.sigma = Some(2.0);
        let flows = generate(&s, &google(), &hosts(128), &[], &BASIS, 1).unwrap();
        let load = achieved(&flows, &s);
        assert!(
            (load / 0.6 - 1.0).abs() < 0.02,
            "achieved load {load} over {} flows",
            flows.len()
        );
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(
            flows
                .iter()
                .all(|f| f.src != f.dst && f.src.0 < 128 && f.dst.0 < 128 && !f.incast)
        );
        // The BFC rule: "google" never draws 100 B or less.
        assert!(flows.iter().all(|f| f.size.0 > 100));
    }

    #[test]
    fn poisson_load_and_rate() {
        let s = spec(0.3, ArrivalKind::Poisson, Time::from_ms(30));
        let cdf = google();
        let flows = generate(&s, &cdf, &hosts(64), &[], &BASIS, 2).unwrap();
        let rate = plan(&s, &cdf, &BASIS).unwrap().background_rate;
        let expected = rate * 0.03;
        assert!(
            (flows.len() as f64 / expected - 1.0).abs() < 0.005,
            "{} vs {expected}",
            flows.len()
        );
        let load = achieved(&flows, &s);
        assert!((load / 0.3 - 1.0).abs() < 0.03, "{load}");
        assert!(flows.first().unwrap().start > Time::ZERO);
        assert!(flows.last().unwrap().start < s.duration);
    }

    #[test]
    fn incast_events_have_the_right_shape() {
        let mut s = spec(0.0, ArrivalKind::Poisson, Time::from_ms(5));
        s.incast.push(IncastSpec {
            degree: 100,
            aggregate: Bytes(20_000_050),
            period: Some(Time::from_us(500)),
            share: None,
            arrival: IncastArrival::Periodic,
            class: Some(2),
        });
        // load 0 but the incast offers some: rejected as over the total.
        assert!(
            generate(&s, &google(), &hosts(128), &[], &BASIS, 3)
                .unwrap_err()
                .to_string()
                .contains("more than")
        );
        s.load = 0.6;
        let flows = generate(&s, &google(), &hosts(128), &[], &BASIS, 3).unwrap();
        let incast: Vec<&FlowSpec> = flows.iter().filter(|f| f.incast).collect();
        assert_eq!(incast.len(), 10 * 100);
        let mut times: Vec<Time> = incast.iter().map(|f| f.start).collect();
        times.dedup();
        assert_eq!(times.len(), 10);
        assert!(times[0] < Time::from_us(500));
        assert!(times.windows(2).all(|w| w[1] - w[0] == Time::from_us(500)));
        for t in times {
            let event: Vec<&&FlowSpec> = incast.iter().filter(|f| f.start == t).collect();
            assert_eq!(event.len(), 100);
            let dst = event[0].dst;
            assert!(
                event
                    .iter()
                    .all(|f| f.dst == dst && f.src != dst && f.class == 2)
            );
            let srcs: BTreeSet<NodeId> = event.iter().map(|f| f.src).collect();
            assert_eq!(srcs.len(), 100);
            let total: u64 = event.iter().map(|f| f.size.0).sum();
            assert_eq!(total, 20_000_050);
            assert!(
                event
                    .iter()
                    .all(|f| f.size.0 == 200_000 || f.size.0 == 200_001)
            );
        }
        // The background load excludes the incast's: 20 MB * 8 * 2 crossings / (500 us * 6.4 Tbps) = 0.1.
        let p = plan(&s, &google(), &BASIS).unwrap();
        assert!(
            (p.incast_loads[0] - 0.1).abs() < 1e-3,
            "{:?}",
            p.incast_loads
        );
        assert!((p.background.load - 0.5).abs() < 1e-3);
    }

    #[test]
    fn incast_share_sets_the_period_and_poisson_events_work() {
        let mut s = spec(0.6, ArrivalKind::Poisson, Time::from_ms(20));
        s.incast.push(IncastSpec {
            degree: 10,
            aggregate: Bytes(1_000_000),
            period: None,
            share: Some(0.05),
            arrival: IncastArrival::Poisson,
            class: None,
        });
        let p = plan(&s, &google(), &BASIS).unwrap();
        // 1 MB * 8 * 2 / (0.05 * 6.4e12) = 50 us.
        assert_eq!(p.incast_periods, vec![Time::from_us(50)]);
        let flows = generate(&s, &google(), &hosts(16), &[], &BASIS, 4).unwrap();
        let events = flows.iter().filter(|f| f.incast).count() / 10;
        assert!((events as f64 / 400.0 - 1.0).abs() < 0.2, "{events}");
        // A degree as large as the other hosts works; larger is an error.
        s.incast[0].degree = 15;
        assert!(generate(&s, &google(), &hosts(16), &[], &BASIS, 4).is_ok());
        s.incast[0].degree = 16;
        let e = generate(&s, &google(), &hosts(16), &[], &BASIS, 4)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("degree 16") && e.contains("only 15 other hosts"),
            "{e}"
        );
        s.incast[0].period = Some(Time::from_us(1));
        assert!(
            generate(&s, &google(), &hosts(16), &[], &BASIS, 4)
                .unwrap_err()
                .to_string()
                .contains("exactly one")
        );
    }

    #[test]
    fn deterministic_and_incast_independent() {
        let mut s = spec(0.5, ArrivalKind::LogNormal, Time::from_us(200));
        let cdf = google();
        let a = generate(&s, &cdf, &hosts(32), &[], &BASIS, 7).unwrap();
        let b = generate(&s, &cdf, &hosts(32), &[], &BASIS, 7).unwrap();
        let c = generate(&s, &cdf, &hosts(32), &[], &BASIS, 8).unwrap();
        assert!(!a.is_empty());
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Adding an incast leaves the background flows unchanged (its load is taken out of the total, so keep
        // the background's load the same by raising the total).
        s.incast.push(IncastSpec {
            degree: 4,
            aggregate: Bytes(64_000),
            period: Some(Time::from_us(50)),
            share: None,
            arrival: IncastArrival::Periodic,
            class: None,
        });
        let incast_load = plan(&s, &cdf, &BASIS).unwrap().incast_loads[0];
        s.load += incast_load;
        let d = generate(&s, &cdf, &hosts(32), &[], &BASIS, 7).unwrap();
        let background: Vec<FlowSpec> = d.iter().filter(|f| !f.incast).copied().collect();
        assert_eq!(background.len(), a.len());
        assert!(
            background
                .iter()
                .zip(&a)
                .all(|(x, y)| x.src == y.src && x.dst == y.dst && x.size == y.size)
        );
        assert_eq!(d.iter().filter(|f| f.incast).count(), 4 * 4);
    }

    #[test]
    fn locality_uses_racks() {
        let mut s = spec(0.5, ArrivalKind::Poisson, Time::from_us(500));
        s.locality = Some(1.0);
        let racks: Vec<u32> = (0..32).map(|h| h / 8).collect();
        let flows = generate(&s, &google(), &hosts(32), &racks, &BASIS, 9).unwrap();
        assert!(!flows.is_empty());
        assert!(
            flows
                .iter()
                .all(|f| racks[f.src.idx()] == racks[f.dst.idx()])
        );
        let e = generate(&s, &google(), &hosts(32), &[], &BASIS, 9)
            .unwrap_err()
            .to_string();
        assert!(e.contains("rack indices"), "{e}");
    }
}
