//! `[[events]]`: the fabric changing during a run (issue 71), as the experiment file gives it, checked and
//! turned into the engine's timeline of primitive changes ([`bfcsim_sim::faults`]).
//!
//! ```toml
//! [[events]]            # a core link fails at 1 ms and is repaired at 3 ms
//! at = "1ms"
//! kind = "down"         # down | flap | rate | loss
//! link = [144, 160]     # the link between two nodes (both directions; `one_way = true`: first to second)
//! until = "3ms"         # optional: up again then (for rate and loss: back to normal)
//! detect = "10us"       # routing acts this long after each down and up (default 0, as HPCC's ns-3)
//!
//! [[events]]            # a switch's every link flaps: down 50 us of every 200 us, five times
//! at = "2ms"
//! kind = "flap"
//! switch = 150
//! period = "200us"
//! down_for = "50us"     # default: half the period
//! count = 5             # or `until`
//!
//! [[events]]
//! at = "0s"
//! kind = "rate"         # the link at a quarter of its speed
//! link = [130, 150]
//! rate = 0.25
//!
//! [[events]]
//! at = "0s"
//! kind = "loss"         # random loss per packet, and/or a bit-error rate
//! link = [130, 150]
//! loss = 1e-4
//! ber = 0.0
//! ```

use bfcsim_core::{NodeId, PortId, Rate, Time};
use bfcsim_net::Topology;
use bfcsim_sim::faults::{Change, Set};
use serde::{Deserialize, Serialize};

/// One `[[events]]` entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventConfig {
    /// When it starts (simulated time, as flow start times are).
    pub at: Time,
    /// What happens.
    pub kind: EventKind,
    /// The link between these two nodes (node ids of the topology).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<[u32; 2]>,
    /// Every link of this switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<u32>,
    /// Only the direction from the first node of `link` to the second.
    #[serde(default)]
    pub one_way: bool,
    /// When it ends: the link up again, its rate or its loss back to none (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Time>,
    /// A flap's period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Time>,
    /// How long each flap keeps the link down (default: half the period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_for: Option<Time>,
    /// How many times a flap goes down (or give `until`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// `rate`: the fraction of the link's line rate it runs at, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// `loss`: the probability that a packet is lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// `loss`: the probability that a bit is corrupted (the packet then lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ber: Option<f64>,
    /// How long after each down and up routing acts on it.
    #[serde(default)]
    pub detect: Time,
}

/// What an event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// The link carries nothing (until `until`).
    Down,
    /// Down for `down_for` of every `period`, `count` times or until `until`.
    Flap,
    /// The link runs at `rate` of its speed.
    Rate,
    /// The link loses packets at random.
    Loss,
}

impl EventConfig {
    /// Checks what needs no topology; messages start with `events.<i>.<key>`, for the file's line.
    pub fn validate(&self, i: usize, nodes: Option<u64>) -> Result<(), String> {
        let key = |k: &str| format!("events.{i}.{k}");
        match (self.link, self.switch) {
            (None, None) => {
                return Err(format!(
                    "{} = {:?}: give the `link = [a, b]` or the `switch` it happens to",
                    key("kind"),
                    self.kind
                ));
            }
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{} and `switch` both given: an event has one place",
                    key("link")
                ));
            }
            _ => {}
        }
        if self.one_way && self.link.is_none() {
            return Err(format!("{} = true needs a `link`", key("one_way")));
        }
        if let Some(n) = nodes {
            let ids = self.link.map_or(vec![], |l| l.to_vec());
            for id in ids.into_iter().chain(self.switch) {
                if u64::from(id) >= n {
                    let k = if self.link.is_some() {
                        "link"
                    } else {
                        "switch"
                    };
                    return Err(format!(
                        "{} names node {id}, but the topology has {n} nodes (0 to {})",
                        key(k),
                        n - 1
                    ));
                }
            }
        }
        if let Some(until) = self.until
            && until <= self.at
        {
            return Err(format!(
                "{} = {until} is not after the event's `at` ({})",
                key("until"),
                self.at
            ));
        }
        let unused = |k: &str, set: bool| -> Result<(), String> {
            if set {
                Err(format!(
                    "{} is not a key of a `{}` event",
                    key(k),
                    kind_name(self.kind)
                ))
            } else {
                Ok(())
            }
        };
        let flap = self.kind == EventKind::Flap;
        unused("period", !flap && self.period.is_some())?;
        unused("down_for", !flap && self.down_for.is_some())?;
        unused("count", !flap && self.count.is_some())?;
        unused("rate", self.kind != EventKind::Rate && self.rate.is_some())?;
        let loss = self.kind == EventKind::Loss;
        unused("loss", !loss && self.loss.is_some())?;
        unused("ber", !loss && self.ber.is_some())?;
        match self.kind {
            EventKind::Down => {}
            EventKind::Flap => {
                let Some(period) = self.period.filter(|p| *p > Time::ZERO) else {
                    return Err(format!(
                        "{} must be a positive time for a flap",
                        key("period")
                    ));
                };
                let down = self.down_for.unwrap_or(Time(period.0 / 2));
                if down == Time::ZERO || down >= period {
                    return Err(format!(
                        "{} = {down} must be positive and shorter than the period ({period})",
                        key("down_for")
                    ));
                }
                match (self.count, self.until) {
                    (None, None) => {
                        return Err(format!("{} or `until`: a flap needs an end", key("count")));
                    }
                    (Some(0), _) => return Err(format!("{} must be at least 1", key("count"))),
                    _ => {}
                }
            }
            EventKind::Rate => match self.rate {
                Some(r) if r > 0.0 && r <= 1.0 => {}
                r => {
                    return Err(format!(
                        "{} = {r:?} must be a fraction of the line rate in (0, 1] (a rate of 0 is `kind = \"down\"`)",
                        key("rate")
                    ));
                }
            },
            EventKind::Loss => {
                for (k, v) in [("loss", self.loss), ("ber", self.ber)] {
                    if let Some(v) = v
                        && !(0.0..=1.0).contains(&v)
                    {
                        return Err(format!("{} = {v} is outside [0, 1]", key(k)));
                    }
                }
                if self.loss.is_none() && self.ber.is_none() {
                    return Err(format!("{} or `ber`: a loss event needs one", key("loss")));
                }
            }
        }
        Ok(())
    }

    /// The transmitting ports the event changes on `topo`.
    fn ports(&self, i: usize, topo: &Topology) -> Result<Vec<PortId>, String> {
        if let Some([a, b]) = self.link {
            let (a, b) = (NodeId(a), NodeId(b));
            let there: Vec<PortId> = topo.nodes[a.idx()]
                .ports
                .iter()
                .copied()
                .filter(|&p| topo.peer_node(p) == b)
                .collect();
            if there.is_empty() {
                return Err(format!(
                    "events.{i}.link = [{a}, {b}]: no link joins nodes {a} and {b}"
                ));
            }
            let mut ports = there.clone();
            if !self.one_way {
                ports.extend(there.iter().map(|p| topo.ports[p.idx()].peer));
            }
            return Ok(ports);
        }
        let s = NodeId(self.switch.expect("validated: a link or a switch"));
        if topo.is_host(s) {
            return Err(format!(
                "events.{i}.switch = {s}: node {s} is a host, not a switch"
            ));
        }
        Ok(topo.nodes[s.idx()]
            .ports
            .iter()
            .flat_map(|&p| [p, topo.ports[p.idx()].peer])
            .collect())
    }

    /// The event's changes on `topo`, as event number `i`; `end` is when the run stops at the latest.
    pub fn changes(&self, i: usize, topo: &Topology, end: Time) -> Result<Vec<Change>, String> {
        if self.at > end {
            return Err(format!(
                "events.{i}.at = {} is after the run ends ({end}: the last flow's start plus a second, or \
                 run.max_time)",
                self.at
            ));
        }
        let mut out = Vec::new();
        let event = i as u32;
        for port in self.ports(i, topo)? {
            let mut push = |at: Time, set: Set| {
                out.push(Change {
                    at,
                    port,
                    set,
                    event,
                    detect: self.detect,
                })
            };
            let line = topo.links[topo.ports[port.idx()].link.idx()].rate;
            match self.kind {
                EventKind::Down => {
                    push(self.at, Set::Down);
                    if let Some(t) = self.until {
                        push(t, Set::Up);
                    }
                }
                EventKind::Flap => {
                    let period = self.period.expect("validated");
                    let down = self.down_for.unwrap_or(Time(period.0 / 2));
                    let (mut t, mut n) = (self.at, 0);
                    while self.count.is_none_or(|c| n < c)
                        && self.until.is_none_or(|u| t < u)
                        && t <= end
                    {
                        push(t, Set::Down);
                        let up = t + down;
                        push(self.until.map_or(up, |u| up.min(u)), Set::Up);
                        t += period;
                        n += 1;
                    }
                }
                EventKind::Rate => {
                    let fraction = self.rate.expect("validated");
                    let slow = Rate(((line.0 as f64 * fraction).round() as u64).max(1));
                    push(self.at, Set::Rate(slow));
                    if let Some(t) = self.until {
                        push(t, Set::Rate(line));
                    }
                }
                EventKind::Loss => {
                    let (per_packet, ber) = (self.loss.unwrap_or(0.0), self.ber.unwrap_or(0.0));
                    push(self.at, Set::Loss { per_packet, ber });
                    if let Some(t) = self.until {
                        push(
                            t,
                            Set::Loss {
                                per_packet: 0.0,
                                ber: 0.0,
                            },
                        );
                    }
                }
            }
        }
        Ok(out)
    }
}

/// A loss event for each link of `topo` with an error rate (an HPCC `topology.txt`'s last column), from the start:
/// HPCC's ns-3 loses that share of the packets each end receives.
pub fn from_error_rates(topo: &Topology) -> Vec<EventConfig> {
    topo.links
        .iter()
        .filter(|l| l.error_rate > 0.0)
        .map(|l| {
            let [a, b] = l.ends.map(|p| topo.ports[p.idx()].node.0);
            EventConfig {
                at: Time::ZERO,
                kind: EventKind::Loss,
                link: Some([a, b]),
                switch: None,
                one_way: false,
                until: None,
                period: None,
                down_for: None,
                count: None,
                rate: None,
                loss: Some(l.error_rate),
                ber: None,
                detect: Time::ZERO,
            }
        })
        .collect()
}

/// Each event's report from the engine's counts, by event index.
pub fn reports(
    events: &[EventConfig],
    drops: &[u64],
    queued: &[u64],
) -> Vec<bfcsim_metrics::FabricEventReport> {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| bfcsim_metrics::FabricEventReport {
            event: i,
            kind: kind_name(e.kind).into(),
            place: match (e.link, e.switch) {
                (Some([a, b]), _) if e.one_way => format!("link {a}->{b}"),
                (Some([a, b]), _) => format!("link {a}-{b}"),
                (None, s) => format!("switch {}", s.unwrap_or(u32::MAX)),
            },
            at_ns: e.at.0 / 1000,
            until_ns: e.until.map(|t| t.0 / 1000),
            drops: drops.get(i).copied().unwrap_or(0),
            queued_after_detection: queued.get(i).copied().unwrap_or(0),
        })
        .collect()
}

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::Down => "down",
        EventKind::Flap => "flap",
        EventKind::Rate => "rate",
        EventKind::Loss => "loss",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_net::build::{Build, FatTree};

    fn event(text: &str) -> EventConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_flap_is_its_downs_and_ups_in_both_directions() {
        let t = FatTree::k_ary(4).build().unwrap();
        // A ToR (node 16, the first switch) and its first uplink's far end.
        let tor = t.nodes[16].ports[2];
        let agg = t.peer_node(tor).0;
        let e = event(&format!(
            "at = \"1ms\"\nkind = \"flap\"\nlink = [16, {agg}]\nperiod = \"100us\"\ncount = 3"
        ));
        e.validate(0, Some(t.nodes.len() as u64)).unwrap();
        let c = e.changes(0, &t, Time::from_secs(1)).unwrap();
        assert_eq!(c.len(), 12, "3 downs and 3 ups, each direction");
        let downs: Vec<Time> = c
            .iter()
            .filter(|c| c.port == tor && c.set == Set::Down)
            .map(|c| c.at)
            .collect();
        assert_eq!(
            downs,
            [1000, 1100, 1200].map(Time::from_us).to_vec(),
            "{c:?}"
        );
        assert!(
            c.iter()
                .any(|c| c.at == Time::from_us(1050) && c.set == Set::Up)
        );
    }

    #[test]
    fn bad_events_are_refused_naming_the_key() {
        let t = FatTree::k_ary(4).build().unwrap();
        let n = Some(t.nodes.len() as u64);
        let cases = [
            (
                "at = \"1ms\"\nkind = \"down\"\nlink = [0, 999]",
                "events.0.link names node 999",
            ),
            (
                "at = \"1ms\"\nkind = \"down\"\nlink = [0, 1]\nuntil = \"0.5ms\"",
                "events.0.until = 500us is not after",
            ),
            (
                "at = \"1ms\"\nkind = \"loss\"\nlink = [0, 16]\nloss = 1.5",
                "events.0.loss = 1.5 is outside [0, 1]",
            ),
            (
                "at = \"1ms\"\nkind = \"flap\"\nswitch = 16\nperiod = \"1us\"",
                "events.0.count or `until`",
            ),
            (
                "at = \"1ms\"\nkind = \"down\"\nlink = [0, 16]\nrate = 0.5",
                "events.0.rate is not a key of a `down` event",
            ),
            ("at = \"1ms\"\nkind = \"down\"", "events.0.kind"),
        ];
        for (text, want) in cases {
            let e = event(text).validate(0, n).unwrap_err();
            assert!(e.starts_with(want), "{text}: {e}");
        }
        // Two hosts have no link between them; a host is not a switch; a time after the run.
        let end = Time::from_secs(1);
        let e = event("at = \"1ms\"\nkind = \"down\"\nlink = [0, 1]")
            .changes(0, &t, end)
            .unwrap_err();
        assert!(e.contains("no link joins nodes 0 and 1"), "{e}");
        let e = event("at = \"1ms\"\nkind = \"down\"\nswitch = 3")
            .changes(0, &t, end)
            .unwrap_err();
        assert!(e.contains("is a host"), "{e}");
        let e = event("at = \"2s\"\nkind = \"down\"\nswitch = 16")
            .changes(0, &t, end)
            .unwrap_err();
        assert!(
            e.starts_with("events.0.at = 2s is after the run ends"),
            "{e}"
        );
    }
}
