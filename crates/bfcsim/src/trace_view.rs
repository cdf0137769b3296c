//! `trace.json`: a run as a timeline in the Chrome trace-event format, which ui.perfetto.dev and
//! chrome://tracing open (`bfcsim run ... --trace-view FILE`, or `trace.view = true`).
//!
//! Each switch and each host is a process of the timeline. On a switch: a counter track per traced series of
//! its ports and queues (`queue.bytes port:12/q3`) and of its buffer (`buffer.bytes`), a slice per pause of one
//! of its queues (from the PAUSE to the RESUME; still open at the end of the run, to the end), and the packets
//! its buffer dropped, an instant per port and sample interval that had drops, at the sample (its `count`
//! says how many). On a host: a slice per flow it sends, from its start to its completion (to the end of the
//! run if unfinished), its NIC queues' pauses, its flows' series, and an instant per retransmission timeout.
//! Drops a scheme makes by its own rule (credits, trimmed payloads) are instants of the `network` process.
//! Times are microseconds, as the format has them.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use bfcsim_core::{PortId, Time};
use bfcsim_metrics::{FlowRecord, TimeSeries};
use bfcsim_sim::{Logged, PausePairs, Sim};
use serde_json::{Value, json};

/// The file's name in a run's directory.
pub const FILE: &str = "trace.json";

/// The process id of the `network` process, for events of no one switch or host.
const NETWORK: u64 = 0;

/// What the timeline needs of a finished run besides its time series and flows.
pub struct Timeline {
    /// The node each port belongs to.
    port_node: Vec<u32>,
    /// Each node's process id and name.
    nodes: Vec<(u64, String)>,
    /// Timeouts, pauses and resumes.
    log: Vec<Logged>,
    /// Drops counted at each sample of the time series: (time, switch port or none, count).
    drops: Vec<(Time, Option<PortId>, u64)>,
    /// The end of the run.
    end: Time,
}

impl Timeline {
    /// What `sim` (whose log was kept) gives the timeline at the end of its run, with the drops counted at
    /// each sample.
    pub fn of(sim: &Sim, drops: Vec<(Time, Option<PortId>, u64)>) -> Timeline {
        let topo = sim.topology();
        // Switches by the engine's number, as the time series name them (`switch:S`).
        let mut nodes: Vec<(u64, String)> = (0..topo.nodes.len())
            .map(|n| match topo.host_index(bfcsim_core::NodeId(n as u32)) {
                Some(h) => (1_000_000 + u64::from(h), format!("host {h}")),
                None => (NETWORK, String::new()),
            })
            .collect();
        for s in 0..sim.switch_count() {
            nodes[sim.switch_node(s).idx()] = (1 + s as u64, format!("switch {s}"));
        }
        Timeline {
            port_node: topo.ports.iter().map(|p| p.node.0).collect(),
            nodes,
            log: sim.log().unwrap_or_default(),
            drops,
            end: sim.now(),
        }
    }

    fn pid_of_port(&self, port: u32) -> u64 {
        self.nodes[self.port_node[port as usize] as usize].0
    }
}

/// Microseconds, as the format counts time.
fn us(t: Time) -> f64 {
    t.ps() as f64 / 1e6
}

/// Writes the timeline of a run (`series`: its time series; `records`: its flows) atomically, each event as it
/// is made ([`stream`]): the file is never held in memory.
pub fn write(
    path: &Path,
    timeline: &Timeline,
    series: &TimeSeries,
    records: &[FlowRecord],
) -> io::Result<()> {
    bfcsim_metrics::write_atomic(path, |w| {
        w.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        let mut first = true;
        stream(timeline, series, records, &mut |e| {
            if !first {
                w.write_all(b",\n")?;
            }
            first = false;
            serde_json::to_writer(&mut *w, &e).map_err(io::Error::from)
        })?;
        w.write_all(b"\n]}\n")
    })
}

/// Every event of the timeline, in [`stream`]'s order.
pub fn events(timeline: &Timeline, series: &TimeSeries, records: &[FlowRecord]) -> Vec<Value> {
    let mut all = Vec::new();
    let kept: io::Result<()> = stream(timeline, series, records, &mut |e| {
        all.push(e);
        Ok(())
    });
    kept.expect("collecting events cannot fail");
    all
}

/// Hands `emit` every event of the timeline, one at a time as it is made: the counters, pauses, timeouts,
/// drops and flows, then the names of the processes that had events and of the pause and drop tracks (the
/// format takes metadata anywhere in the list; last, it needs no second pass over the events).
pub fn stream<E>(
    timeline: &Timeline,
    series: &TimeSeries,
    records: &[FlowRecord],
    emit: &mut impl FnMut(Value) -> Result<(), E>,
) -> Result<(), E> {
    let node_pid = |node: u32| timeline.nodes[node as usize].0;
    let mut used = std::collections::BTreeSet::new();
    let mut body = |e: Value| {
        if let Some(pid) = e["pid"].as_u64() {
            used.insert(pid);
        }
        emit(e)
    };
    // Counters from the time series.
    for (t, name, entity, value) in series.rows() {
        let pid = match entity.split_once(':') {
            Some(("port", rest)) => {
                let port: u32 = rest
                    .split('/')
                    .next()
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0);
                node_pid(timeline.port_node[port as usize])
            }
            Some(("switch", s)) => 1 + s.parse::<u64>().unwrap_or(0),
            Some(("flow", f)) => {
                let id: usize = f.parse().unwrap_or(0);
                records.get(id).map_or(NETWORK, |r| node_pid(r.src.0))
            }
            _ => NETWORK,
        };
        body(json!({
            "name": format!("{name} {entity}"), "ph": "C", "ts": us(t), "pid": pid, "tid": 0,
            "args": { "value": value },
        }))?;
    }
    // Pauses: a slice from each PAUSE to its RESUME, on a track of the queue.
    let mut pauses = PausePairs::default();
    let mut threads: BTreeMap<(u64, u64), String> = BTreeMap::new();
    for e in &timeline.log {
        if let Some((port, queue, from, to)) = pauses.feed(e) {
            body(pause_slice(
                timeline,
                &mut threads,
                (port.0, queue),
                (from, to),
                true,
            ))?;
        }
        if let Logged::Timeout { at, flow } = *e {
            let pid = records
                .get(flow.idx())
                .map_or(NETWORK, |r| node_pid(r.src.0));
            body(json!({
                "name": "timeout", "cat": "timeout", "ph": "i", "s": "t", "ts": us(at), "pid": pid,
                "tid": 0, "args": { "flow": flow.0 },
            }))?;
        }
    }
    // Drops: an instant per port and sample interval that had any, at the sample that counted them.
    for &(at, port, count) in &timeline.drops {
        let (pid, tid) = match port {
            Some(PortId(p)) => (timeline.pid_of_port(p), u64::from(p) << 16 | 0xffff),
            None => (NETWORK, 0),
        };
        if let Some(PortId(p)) = port {
            threads.insert((pid, tid), format!("port:{p} drops"));
        }
        body(json!({
            "name": format!("{count} dropped"), "cat": "drop", "ph": "i", "s": "t", "ts": us(at),
            "pid": pid, "tid": tid, "args": { "count": count },
        }))?;
    }
    for (port, queue, from) in pauses.still_paused() {
        body(pause_slice(
            timeline,
            &mut threads,
            (port.0, queue),
            (from, timeline.end.max(from)),
            false,
        ))?;
    }
    // Flows: an async slice each on its sender, from its start to its completion.
    for r in records {
        let pid = node_pid(r.src.0);
        let end = r.finish.unwrap_or(timeline.end).max(r.start);
        let args = json!({ "size": r.size.0, "dst": r.dst.0, "finished": r.finish.is_some() });
        for (ph, at) in [("b", r.start), ("e", end)] {
            body(json!({
                "name": format!("flow {}", r.id.0), "cat": "flow", "ph": ph, "id": r.id.0,
                "ts": us(at), "pid": pid, "tid": 0, "args": args,
            }))?;
        }
    }
    // Names of the processes that have events: switches, hosts, the network; and of the tracks.
    let mut names: BTreeMap<u64, &str> = timeline
        .nodes
        .iter()
        .map(|(p, n)| (*p, n.as_str()))
        .collect();
    names.insert(NETWORK, "network");
    for pid in used {
        let name = names.get(&pid).copied().unwrap_or("?");
        emit(
            json!({ "name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": { "name": name } }),
        )?;
    }
    for ((pid, tid), name) in &threads {
        emit(
            json!({ "name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": { "name": name } }),
        )?;
    }
    Ok(())
}

/// The slice of one pause of queue `queue` of `port`, from `from` to `to` (`resumed`: ended by a RESUME, else
/// open at the end of the run), on the queue's own track, which it names in `threads`.
fn pause_slice(
    timeline: &Timeline,
    threads: &mut BTreeMap<(u64, u64), String>,
    (port, queue): (u32, u32),
    (from, to): (Time, Time),
    resumed: bool,
) -> Value {
    let pid = timeline.pid_of_port(port);
    let tid = (u64::from(port) << 16) | u64::from(queue);
    threads.insert((pid, tid), format!("port:{port} q{queue} pauses"));
    json!({
        "name": "paused", "cat": "pause", "ph": "X", "ts": us(from), "dur": us(to - from),
        "pid": pid, "tid": tid,
        "args": { "port": port, "queue": queue, "resumed": resumed },
    })
}
