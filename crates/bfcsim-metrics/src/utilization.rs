//! Link utilization: bytes a link sent over a measurement window relative to its capacity, aggregated per named
//! set of links (e.g. "host-tor", "tor-agg").

use std::collections::BTreeMap;

use bfcsim_core::{Bytes, Rate, Time};
use serde::Serialize;

/// What one link (one transmit direction) did during a measurement window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkUsage {
    /// Bytes sent on the wire during the window.
    pub bytes: Bytes,
    /// The link's rate.
    pub rate: Rate,
    /// Length of the window.
    pub duration: Time,
}

impl LinkUsage {
    /// Fraction of the capacity used, `bytes·8 / (rate·duration)`; 0 for an empty window.
    pub fn utilization(&self) -> f64 {
        let capacity_bits_ps = self.rate.bps() as u128 * self.duration.ps() as u128;
        if capacity_bits_ps == 0 {
            return 0.0;
        }
        (self.bytes.0 as u128 * 8 * 1_000_000_000_000) as f64 / capacity_bits_ps as f64
    }
}

/// Utilization of one set of links.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSetStats {
    /// The set's name.
    pub name: String,
    /// Number of links in it.
    pub links: usize,
    /// Mean utilization of its links.
    pub mean: f64,
    /// Highest utilization of its links.
    pub max: f64,
}

/// Per-link utilizations grouped into named sets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkUtilization {
    sets: BTreeMap<String, Vec<f64>>,
}

impl LinkUtilization {
    /// No links yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one link's usage to `set`.
    pub fn add(&mut self, set: &str, usage: LinkUsage) {
        let u = usage.utilization();
        match self.sets.get_mut(set) {
            Some(v) => v.push(u),
            None => {
                self.sets.insert(set.to_string(), vec![u]);
            }
        }
    }

    /// Mean and max per set, sets by name. The mean sums sorted values, so it does not depend on the order links
    /// were added.
    pub fn report(&self) -> Vec<LinkSetStats> {
        (self.sets.iter())
            .map(|(name, utils)| {
                let mut sorted = utils.clone();
                sorted.sort_unstable_by(f64::total_cmp);
                LinkSetStats {
                    name: name.clone(),
                    links: sorted.len(),
                    mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
                    max: sorted.last().copied().unwrap_or(0.0),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilization_per_set() {
        let half = LinkUsage {
            bytes: Bytes(6_250),
            rate: Rate::gbps(100),
            duration: Time::from_ns(1000),
        };
        assert_eq!(half.utilization(), 0.5);
        assert_eq!(
            LinkUsage {
                duration: Time::ZERO,
                ..half
            }
            .utilization(),
            0.0
        );
        let mut u = LinkUtilization::new();
        u.add("tor-agg", half);
        u.add(
            "host-tor",
            LinkUsage {
                bytes: Bytes(12_500),
                ..half
            },
        );
        u.add(
            "host-tor",
            LinkUsage {
                bytes: Bytes(0),
                ..half
            },
        );
        let r = u.report();
        assert_eq!(
            r[0],
            LinkSetStats {
                name: "host-tor".into(),
                links: 2,
                mean: 0.5,
                max: 1.0
            }
        );
        assert_eq!(r[1].name, "tor-agg");
    }
}
