//! `[trace]`: time series of a run, sampled every `interval` on a grid of simulated time and written as
//! `trace.parquet` (or `trace.csv`) in long format (time, series, entity, value; [`bfcsim_metrics::timeseries`]).
//!
//! ```toml
//! [trace]
//! interval = "1us"
//! start = "100us"         # the window sampled (default: from the first flow's start to the end)
//! end = "200us"
//! ports = ["to-host:1"]   # switch egress ports (link sets): queue.bytes, queue.paused, queue.active
//! queues = true           # ... and each queue of them: queue.bytes, queue.paused of port:N/qK
//! buffers = true          # buffer.bytes of each switch:S
//! links = ["core"]        # link.util (and link.paused under PFC) of each port:N, over the last interval
//! flows = ["0-7"]         # flow.acked, flow.throughput, flow.window, flow.rate of each flow:N
//! scheme = true           # the scheme's own series (BFC: bfc.paused_upstream of each ingress port:N)
//! budget = 1000000        # rows at most: past it, samples are thinned and the rate halved
//! ```
//!
//! Entities are named as link sets name them (`port:N`, the port's id; `switch:S`, the switch's number; `flow:N`,
//! the flow's id). Samples are taken between slices of the simulation, where the state is the same for any
//! number of threads, so the trace is too; stopping at the grid changes nothing of the run itself (its
//! fingerprint and results are those of the run without a trace). Rates (`link.util`, `flow.throughput`) are
//! over the interval that ended at their sample when it was taken; `link.util` counts the bits serialized in it
//! (a packet partly sent counts in part), `flow.throughput` the payload acknowledged.

use std::path::Path;

use bfcsim_core::{FlowId, PortId, Time};
use bfcsim_metrics::TimeSeries;
use bfcsim_metrics::timeseries::Key;
use bfcsim_net::topology::LinkSet;
use bfcsim_plot::Unit;
use bfcsim_sim::Sim;
use serde::{Deserialize, Serialize};

/// How a trace is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// `trace.parquet` (zstd; needs the `parquet` feature, on by default).
    Parquet,
    /// `trace.csv` (`time_ns,series,entity,value`).
    Csv,
}

impl TraceFormat {
    /// The file's name.
    pub fn file(self) -> &'static str {
        match self {
            TraceFormat::Parquet => "trace.parquet",
            TraceFormat::Csv => "trace.csv",
        }
    }
}

/// `[trace]`: what to record over time (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// The sampling interval.
    pub interval: Time,
    /// No sample before this time (nor before the first flow starts).
    pub start: Time,
    /// No sample after this time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<Time>,
    /// Switch egress ports (link sets: `core`, `to-host:N`, `port:N`, ...) whose queues are recorded.
    pub ports: Vec<String>,
    /// Record each queue of those ports, not only their totals.
    pub queues: bool,
    /// Record each switch's buffer occupancy.
    pub buffers: bool,
    /// Ports (link sets) whose link utilization, and paused time under link-level pausing, are recorded.
    pub links: Vec<String>,
    /// Flows (ids, or ranges `A-B`) whose acknowledged bytes, throughput, window and rate are recorded.
    pub flows: Vec<String>,
    /// Record the scheme's own series ([`bfcsim_schemes::fabric::Describe::trace`]).
    pub scheme: bool,
    /// The most rows kept.
    pub budget: usize,
    /// The file's format.
    pub format: TraceFormat,
    /// Also write `trace.json`, the run as a timeline for ui.perfetto.dev or chrome://tracing
    /// ([`crate::trace_view`]); with nothing else selected, it shows every switch port's queues and every
    /// buffer.
    pub view: bool,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            interval: Time::from_us(10),
            start: Time::ZERO,
            end: None,
            ports: Vec::new(),
            queues: false,
            buffers: false,
            links: Vec::new(),
            flows: Vec::new(),
            scheme: false,
            budget: 1_000_000,
            view: false,
            format: if cfg!(feature = "parquet") {
                TraceFormat::Parquet
            } else {
                TraceFormat::Csv
            },
        }
    }
}

impl TraceConfig {
    /// Checks each value for its domain.
    pub fn validate(&self) -> Result<(), String> {
        if self.interval == Time::ZERO {
            return Err("trace.interval = 0ps must be positive".into());
        }
        if self.end.is_some_and(|end| end <= self.start) {
            return Err(format!(
                "trace.end = {} must be after trace.start = {}",
                self.end.expect("checked"),
                self.start
            ));
        }
        if self.budget == 0 {
            return Err("trace.budget = 0 must be positive".into());
        }
        for (key, sets) in [("ports", &self.ports), ("links", &self.links)] {
            for set in sets {
                LinkSet::parse(set).map_err(|e| format!("trace.{key}: {e}"))?;
            }
        }
        for text in &self.flows {
            flow_range(text)?;
        }
        if self.queues && self.ports.is_empty() {
            return Err(
                "trace.queues = true records the queues of trace.ports, which names none".into(),
            );
        }
        if self.nothing_selected() && !self.view {
            return Err(
                "trace: nothing to record; name ports, links or flows, or set buffers or scheme"
                    .into(),
            );
        }
        if self.format == TraceFormat::Parquet && !cfg!(feature = "parquet") {
            return Err(
                "trace.format = \"parquet\" needs bfcsim built with its `parquet` feature; use \"csv\"".into(),
            );
        }
        Ok(())
    }
}

impl TraceConfig {
    /// Whether no series is selected.
    fn nothing_selected(&self) -> bool {
        self.ports.is_empty()
            && !self.buffers
            && self.links.is_empty()
            && self.flows.is_empty()
            && !self.scheme
    }

    /// The selection, or for a timeline with nothing selected, every switch port's queues and every buffer;
    /// and whether it is that default (whose link sets may find no port: a star has no fabric links).
    fn or_view_defaults(&self) -> (TraceConfig, bool) {
        let mut cfg = self.clone();
        let default = cfg.view && cfg.nothing_selected();
        if default {
            cfg.ports = vec!["host".into(), "fabric".into()];
            cfg.buffers = true;
        }
        (cfg, default)
    }
}

/// The flows `text` names: `N` or `A-B` (both included).
fn flow_range(text: &str) -> Result<std::ops::RangeInclusive<u32>, String> {
    let bad = || format!("trace.flows: `{text}` is not a flow id or a range A-B of them");
    let number = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
    match text.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (number(a)?, number(b)?);
            if a > b {
                return Err(bad());
            }
            Ok(a..=b)
        }
        None => number(text).map(|n| n..=n),
    }
}

/// `--trace "ITEM ..."` as the `--set` overrides it stands for: items separated by spaces, each `key=value` or
/// a bare key (`buffers`: `true`); list keys (`ports`, `links`, `flows`) take comma-separated values.
pub fn trace_overrides(spec: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in spec.split_whitespace() {
        let (key, value) = item.split_once('=').unwrap_or((item, "true"));
        let value = match key {
            "ports" | "links" | "flows" => {
                let quoted: Vec<String> = value.split(',').map(|v| format!("\"{v}\"")).collect();
                format!("[{}]", quoted.join(", "))
            }
            "interval" | "start" | "end" | "budget" | "queues" | "buffers" | "scheme"
            | "format" => value.to_string(),
            _ => {
                return Err(format!(
                    "--trace: unknown item `{key}` (expected interval, start, end, ports, queues, buffers, links, flows, \
                     scheme, budget, format or view)"
                ));
            }
        };
        out.push(format!("trace.{key}={value}"));
    }
    if out.is_empty() {
        return Err("--trace: give what to record, as \"buffers ports=core interval=1us\"".into());
    }
    Ok(out)
}

/// What a traced run recorded: its time series, the format they are written in, and with `trace.view` what
/// the timeline needs besides.
pub struct Recorded {
    /// The time series.
    pub series: TimeSeries,
    /// `trace.parquet` or `trace.csv`.
    pub format: TraceFormat,
    /// For `trace.json`, when `trace.view` is on.
    pub view: Option<crate::trace_view::Timeline>,
}

/// A port whose queues are recorded: its entity, its queues', and the keys of its series.
struct QueuePort {
    port: PortId,
    bytes: Key,
    paused: Key,
    active: Key,
    /// `queue.bytes` and `queue.paused` of each queue, when `trace.queues`.
    each: Vec<(Key, Key)>,
}

/// A link whose utilization is recorded, with its counters at the last sample.
struct TracedLink {
    port: PortId,
    bits_per_s: f64,
    util: Key,
    paused: Key,
    tx_bytes: f64,
    paused_time: Option<Time>,
}

/// A flow whose progress is recorded, with its acknowledged bytes at the last sample.
struct TracedFlow {
    id: FlowId,
    keys: [Key; 4],
    acked: u64,
}

/// Drops counted per switch port between samples, for the timeline: each port's count at the last sample, the
/// run's total, and the drops seen so far as (sample time, port, count); `None` for drops at no switch buffer
/// (a scheme's own, as ExpressPass's credits).
struct DropTally {
    ports: Vec<(PortId, u64)>,
    total: u64,
    seen: Vec<(Time, Option<PortId>, u64)>,
}

impl DropTally {
    fn new(sim: &Sim) -> DropTally {
        let ports = crate::runner::every_switch_port(sim)
            .map(|p| (p, 0))
            .collect();
        DropTally {
            ports,
            total: 0,
            seen: Vec::new(),
        }
    }

    /// Counts the drops since the last call, as of `at`.
    fn sample(&mut self, sim: &Sim, at: Time) {
        let mut at_ports = 0;
        for (port, last) in &mut self.ports {
            let dropped = sim.port_arrivals(*port).map_or(0, |(_, d)| d);
            if dropped > *last {
                self.seen.push((at, Some(*port), dropped - *last));
            }
            at_ports += dropped - *last;
            *last = dropped;
        }
        let total: u64 = sim.drops().iter().map(|&(_, n)| n).sum();
        let elsewhere = (total - self.total).saturating_sub(at_ports);
        if elsewhere > 0 {
            self.seen.push((at, None, elsewhere));
        }
        self.total = total;
    }
}

/// Samples a run's time series between slices (see the module documentation).
pub struct Tracer {
    series: TimeSeries,
    next: Time,
    end: Time,
    /// The last sample's time (`None` before the first, which has no rates: nothing to measure them over).
    last: Option<Time>,
    ports: Vec<QueuePort>,
    /// Queues per switch port.
    queues: usize,
    buffers: Vec<Key>,
    links: Vec<TracedLink>,
    flows: Vec<TracedFlow>,
    scheme: bool,
    /// Keys of the scheme's series, by (name, switch, local port), found as they appear.
    scheme_keys: std::collections::BTreeMap<(&'static str, usize, Option<u32>), Key>,
    row: Vec<(Key, f64)>,
    format: TraceFormat,
    /// For the timeline (`trace.view`): the drops, counted at each sample.
    drops: Option<DropTally>,
}

impl Tracer {
    /// A tracer for `sim` under `cfg`, sampling from `start` (the first flow's start) on, or from
    /// `trace.start` if later.
    pub fn new(cfg: &TraceConfig, sim: &mut Sim, start: Time) -> Result<Tracer, String> {
        if cfg.view {
            sim.keep_log();
        }
        let sim = &*sim;
        let (cfg, default) = cfg.or_view_defaults();
        let cfg = &cfg;
        let mut series = TimeSeries::new(Time::ZERO, cfg.interval, cfg.budget);
        let topo = sim.topology();
        let switch_ports = |key: &str, sets: &[String]| -> Result<Vec<PortId>, String> {
            let mut ports = Vec::new();
            for text in sets {
                let set = LinkSet::parse(text).map_err(|e| format!("trace.{key}: {e}"))?;
                let found: Vec<PortId> = crate::runner::every_switch_port(sim)
                    .filter(|&p| topo.in_set(&set, p))
                    .collect();
                if found.is_empty() && !default {
                    return Err(format!("trace.{key}: no switch port transmits on `{set}`"));
                }
                ports.extend(found);
            }
            ports.sort_unstable();
            ports.dedup();
            Ok(ports)
        };
        let queues = sim.params().switch.total_queues();
        let ports = switch_ports("ports", &cfg.ports)?
            .into_iter()
            .map(|port| {
                let e = format!("port:{}", port.0);
                let each = if cfg.queues {
                    (0..queues)
                        .map(|q| {
                            let eq = format!("{e}/q{q}");
                            (
                                series.key("queue.bytes", &eq),
                                series.key("queue.paused", &eq),
                            )
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                QueuePort {
                    port,
                    bytes: series.key("queue.bytes", &e),
                    paused: series.key("queue.paused", &e),
                    active: series.key("queue.active", &e),
                    each,
                }
            })
            .collect();
        let buffers = if cfg.buffers {
            (0..sim.switch_count())
                .map(|s| series.key("buffer.bytes", &format!("switch:{s}")))
                .collect()
        } else {
            Vec::new()
        };
        let mut links = Vec::new();
        for text in &cfg.links {
            let set = LinkSet::parse(text).map_err(|e| format!("trace.links: {e}"))?;
            let found = topo.ports_in_set(&set);
            if found.is_empty() {
                return Err(format!("trace.links: no port transmits on `{set}`"));
            }
            links.extend(found);
        }
        links.sort_unstable();
        links.dedup();
        let links = links
            .into_iter()
            .map(|port| {
                let e = format!("port:{}", port.0);
                TracedLink {
                    port,
                    bits_per_s: sim.port_link(port).0.bps() as f64,
                    util: series.key("link.util", &e),
                    paused: series.key("link.paused", &e),
                    tx_bytes: sim.port_serialized_bytes(port),
                    paused_time: sim.link_paused_time(port),
                }
            })
            .collect();
        let mut ids = Vec::new();
        for text in &cfg.flows {
            let range = flow_range(text)?;
            if *range.end() as usize >= sim.flow_count() {
                return Err(format!(
                    "trace.flows: `{text}` names flow {} but the run has {} flows (ids 0 to {})",
                    range.end(),
                    sim.flow_count(),
                    sim.flow_count().saturating_sub(1)
                ));
            }
            ids.extend(range);
        }
        ids.sort_unstable();
        ids.dedup();
        let flows = ids
            .into_iter()
            .map(|n| {
                let e = format!("flow:{n}");
                TracedFlow {
                    id: FlowId(n),
                    keys: ["flow.acked", "flow.throughput", "flow.window", "flow.rate"]
                        .map(|name| series.key(name, &e)),
                    acked: 0,
                }
            })
            .collect();
        let start = start.max(cfg.start);
        let next = if series.on_grid(start) {
            start
        } else {
            series.next_after(start)
        };
        Ok(Tracer {
            series,
            next,
            end: cfg.end.unwrap_or(Time::MAX),
            last: None,
            ports,
            queues,
            buffers,
            links,
            flows,
            scheme: cfg.scheme,
            scheme_keys: Default::default(),
            row: Vec::new(),
            format: cfg.format,
            drops: cfg.view.then(|| DropTally::new(sim)),
        })
    }

    /// Runs `sim` to `t` ([`Sim::run_until`]), stopping at each grid time up to it to sample; returns whether
    /// anything is left to happen.
    pub fn run_until(&mut self, sim: &mut Sim, t: Time) -> bool {
        while self.next <= t && self.next <= self.end {
            let at = self.next;
            sim.run_until(at);
            self.sample(sim, at);
        }
        sim.run_until(t)
    }

    fn sample(&mut self, sim: &Sim, at: Time) {
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        let secs = self.last.map_or(0.0, |last| (at - last).secs_f64());
        for p in &self.ports {
            let (mut bytes, mut paused, mut active) = (0u64, 0u32, 0u32);
            for q in 0..self.queues {
                let (b, z) = sim.egress_queue(p.port, q);
                bytes += b;
                paused += u32::from(z);
                active += u32::from(b > 0);
            }
            row.extend([
                (p.bytes, bytes as f64),
                (p.paused, f64::from(paused)),
                (p.active, f64::from(active)),
            ]);
            for (q, &(kb, kz)) in p.each.iter().enumerate() {
                let (b, z) = sim.egress_queue(p.port, q);
                row.extend([(kb, b as f64), (kz, f64::from(u8::from(z)))]);
            }
        }
        for (s, &key) in self.buffers.iter().enumerate() {
            row.push((key, sim.switch_mmu(s).total() as f64));
        }
        for l in &mut self.links {
            let tx = sim.port_serialized_bytes(l.port);
            if secs > 0.0 {
                let bits = (tx - l.tx_bytes) * 8.0;
                row.push((l.util, bits / (l.bits_per_s * secs)));
            }
            l.tx_bytes = tx;
            let paused = sim.link_paused_time(l.port);
            if let (Some(now), Some(before), true) = (paused, l.paused_time, secs > 0.0) {
                row.push((l.paused, (now - before).secs_f64() / secs));
            }
            l.paused_time = paused;
        }
        for f in &mut self.flows {
            let acked = sim.flow_acked(f.id);
            let [k_acked, k_tput, k_window, k_rate] = f.keys;
            row.push((k_acked, acked as f64));
            if secs > 0.0 {
                row.push((
                    k_tput,
                    acked.saturating_sub(f.acked) as f64 * 8.0 / secs / 1e9,
                ));
            }
            f.acked = acked;
            if let Some((window, rate)) = sim.flow_cc(f.id) {
                row.extend(window.map(|w| (k_window, w as f64)));
                row.extend(rate.map(|r| (k_rate, r.bps() as f64 / 1e9)));
            }
        }
        if self.scheme {
            let topo = sim.topology();
            for s in 0..sim.switch_count() {
                let node = sim.switch_node(s);
                let (keys, series) = (&mut self.scheme_keys, &mut self.series);
                sim.scheme_trace(s, &mut |name, local, value| {
                    let key = *keys.entry((name, s, local)).or_insert_with(|| {
                        let entity = match local {
                            Some(l) => {
                                format!("port:{}", topo.nodes[node.idx()].ports[l as usize].0)
                            }
                            None => format!("switch:{s}"),
                        };
                        series.key(name, &entity)
                    });
                    row.push((key, value));
                });
            }
        }
        self.series.sample(at, row.drain(..));
        if let Some(drops) = &mut self.drops {
            drops.sample(sim, at);
        }
        self.row = row;
        self.last = Some(at);
        self.next = self.series.next_after(at);
    }

    /// What was recorded, at the end of the run.
    pub fn finish(mut self, sim: &Sim) -> Recorded {
        if let Some(drops) = &mut self.drops {
            drops.sample(sim, sim.now());
        }
        Recorded {
            view: self
                .drops
                .map(|d| crate::trace_view::Timeline::of(sim, d.seen)),
            series: self.series,
            format: self.format,
        }
    }
}

/// One line for the console and `run.json`: what the trace holds, and whether the budget thinned it.
pub fn describe(trace: &TimeSeries, cfg: Option<&TraceConfig>, format: TraceFormat) -> String {
    let mut line = format!(
        "trace: {} rows of {} series over {} samples, every {}, in {}",
        trace.len(),
        trace.names().len(),
        trace.sample_count(),
        trace.interval(),
        format.file()
    );
    if let (Some(cfg), true) = (cfg, trace.thinned() > 0) {
        line += &format!(
            " (trace.budget = {} rows: sampled every {} instead of {}; raise the budget or narrow the selection)",
            cfg.budget,
            trace.interval(),
            cfg.interval
        );
    }
    line
}

/// A series in words (`queue.bytes`: queue length), and the unit of its values, for charts and tables.
pub fn words(series: &str) -> (&str, Unit) {
    match series {
        "queue.bytes" => ("queue length", Unit::Bytes),
        "queue.paused" => ("paused queues", Unit::Plain),
        "queue.active" => ("queues holding packets", Unit::Plain),
        "buffer.bytes" => ("buffer occupancy", Unit::Bytes),
        "link.util" => ("link utilization", Unit::Fraction),
        "link.paused" => ("fraction of time paused", Unit::Fraction),
        "flow.acked" => ("bytes acknowledged", Unit::Bytes),
        "flow.throughput" => ("throughput (Gb/s)", Unit::Plain),
        "flow.window" => ("congestion window", Unit::Bytes),
        "flow.rate" => ("sending rate (Gb/s)", Unit::Plain),
        "bfc.paused_upstream" => ("upstream queues paused", Unit::Plain),
        other => (other, Unit::Plain),
    }
}

/// Writes what `recorded` holds into `dir`: the time series in their format, and `trace.json` with
/// `trace.view` (`records`: the run's flows).
pub fn write_trace(
    dir: &Path,
    recorded: &Recorded,
    records: &[bfcsim_metrics::FlowRecord],
) -> std::io::Result<()> {
    if let Some(view) = &recorded.view {
        crate::trace_view::write(
            &dir.join(crate::trace_view::FILE),
            view,
            &recorded.series,
            records,
        )?;
    }
    let (trace, format) = (&recorded.series, recorded.format);
    let path = dir.join(format.file());
    match format {
        #[cfg(feature = "parquet")]
        TraceFormat::Parquet => bfcsim_metrics::parquet::write_trace_parquet(path, trace),
        #[cfg(not(feature = "parquet"))]
        TraceFormat::Parquet => Err(std::io::Error::other(
            "trace.parquet needs the `parquet` feature",
        )),
        TraceFormat::Csv => trace.write_csv(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_items_become_overrides() {
        assert_eq!(
            trace_overrides("buffers ports=core,to-host:3 interval=1us").unwrap(),
            vec![
                "trace.buffers=true",
                "trace.ports=[\"core\", \"to-host:3\"]",
                "trace.interval=1us"
            ]
        );
        assert!(
            trace_overrides("bogus")
                .unwrap_err()
                .contains("unknown item `bogus`")
        );
    }

    #[test]
    fn flow_ranges_are_checked() {
        assert_eq!(flow_range("3").unwrap(), 3..=3);
        assert_eq!(flow_range("0-7").unwrap(), 0..=7);
        assert!(flow_range("7-0").is_err());
        assert!(flow_range("x").is_err());
    }
}
