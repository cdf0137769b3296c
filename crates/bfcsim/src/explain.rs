//! A slow flow explained (`bfcsim run --explain-flow ID`, `--explain-slowest N`): where its completion time went.
//!
//! The engine records every transmission of the chosen flows' packets and every transmission on their senders'
//! links ([`bfcsim_sim::Sim::explain`]), with the log of pauses and timeouts. From them this module follows
//! each copy of each packet from hop to hop, and splits the flow's completion time along its critical path:
//! the reply that completed the flow (the ACK of its last byte, or the scheme's equivalent), the data packet
//! that reply answers, and before that packet left its sender, what the sender's link did from the flow's
//! start. The parts tile the interval from start to completion, so they sum to the completion time exactly:
//!
//! - before the last packet left: the sender's link sending the flow's data for the first time (line rate),
//!   resending it or waiting to resend it (recovery: every gap that ends in a resend), sending other packets,
//!   idle while the flow's NIC queue was paused, or idle otherwise (held back by the flow's window, rate,
//!   credits or grants);
//! - the last packet's and the reply's journeys: at each switch, time queued and time its queue was paused; on
//!   each link, transmission and propagation;
//! - between them, the reply waiting at the receiver's link.
//!
//! This is a critical-path account: queuing that slowed earlier packets shows where it held the sender back
//! (a window that waited for ACKs), and the per-hop table ([`FILE_HOPS`]) has every packet's every hop.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use bfcsim_core::{FlowId, NodeId, PortId, Time};
use bfcsim_metrics::FlowRecord;
use bfcsim_net::packet::PacketKind;
use bfcsim_net::topology::{NodeKind, Topology};
use bfcsim_sim::{HopRecord, Logged, PausePairs};

/// The breakdown of each explained flow, one row per part.
pub const FILE: &str = "explain.csv";
/// Every hop of every packet of the explained flows.
pub const FILE_HOPS: &str = "explain-hops.csv";

/// What a part of a flow's completion time was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum What {
    /// The sender's link sending the flow's data for the first time.
    Sending,
    /// The sender's link idle, the flow held back by its window, rate, credits or grants.
    HeldBack,
    /// The sender's link idle while the flow's NIC queue was paused.
    NicPaused,
    /// The sender's link sending other packets.
    NicBusy,
    /// Resending lost data, and the wait before each resend (a timeout, a NACK, a probe).
    Recovery,
    /// The last packet, or the reply, queued at a switch port (its queue not paused).
    Queued,
    /// The last packet, or the reply, waiting at a switch port while its queue was paused.
    Paused,
    /// The reply waiting at the receiver's link.
    Reply,
    /// The last packet's and the reply's transmission and propagation, link by link.
    Transmission,
}

impl What {
    /// The name in `explain.csv`.
    pub fn name(self) -> &'static str {
        match self {
            What::Sending => "sending",
            What::HeldBack => "held_back",
            What::NicPaused => "nic_paused",
            What::NicBusy => "nic_busy",
            What::Recovery => "recovery",
            What::Queued => "queued",
            What::Paused => "paused",
            What::Reply => "reply",
            What::Transmission => "transmission",
        }
    }

    /// What a reader of the breakdown is told it is.
    fn about(self) -> &'static str {
        match self {
            What::Sending => "sending its data at the sender's line rate",
            What::HeldBack => "held back at the sender (window, rate, credits or grants)",
            What::NicPaused => "its NIC queue paused at the sender",
            What::NicBusy => "the sender's link sending other packets",
            What::Recovery => "recovery (resending lost data and waiting to)",
            What::Queued => "queued",
            What::Paused => "paused",
            What::Reply => "the reply waiting at the receiver's link",
            What::Transmission => "last packet's and reply's transmission and propagation",
        }
    }
}

/// One part of a flow's completion time: what, where (a switch egress port for queuing and pausing), how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// What the time was spent on.
    pub what: What,
    /// At which switch egress port.
    pub port: Option<PortId>,
    /// How long.
    pub time: Time,
}

/// One explained flow.
pub struct Explanation {
    /// The flow's record.
    pub record: FlowRecord,
    /// Its completion time's parts, in the order of the critical path; they sum to the completion time.
    /// `Err` says why there is no breakdown (the flow did not finish).
    pub parts: Result<Vec<Part>, String>,
    /// Data packets its sender sent, and how many of them were resends.
    pub data_sent: u64,
    /// Resends among them.
    pub resent: u64,
    /// Retransmission timeouts of the flow.
    pub timeouts: u64,
    /// Copies of its data packets that reached no host by the end (dropped, or in flight when it ended).
    pub lost_data: u64,
    /// The same for its other packets (replies, credits, grants).
    pub lost_control: u64,
    /// Its sending and receiving hosts' numbers.
    pub hosts: (u32, u32),
}

/// One hop of one copy of a packet of an explained flow, for [`FILE_HOPS`].
pub struct HopRow {
    /// The transmission.
    pub record: HopRecord,
    /// The copy is a data packet whose bytes its sender had sent before.
    pub resend: bool,
    /// The hop's number along the copy's journey (0: the link it was sent on).
    pub hop: usize,
    /// When it joined the switch egress queue it left (after the first hop).
    pub queued_at: Option<Time>,
    /// How long that queue was paused while it waited.
    pub paused: Time,
}

/// What `--explain-flow` found.
pub struct Report {
    /// Each explained flow.
    pub flows: Vec<Explanation>,
    /// Every hop of every copy of their packets, copy by copy.
    pub hops: Vec<HopRow>,
    /// The name of each port in `hops` ([`port_label`]).
    labels: HashMap<PortId, String>,
}

impl Report {
    /// Port `p`'s name for a reader.
    fn label(&self, p: PortId) -> &str {
        self.labels.get(&p).map_or("", String::as_str)
    }
}

/// One copy of one packet, from the link it was sent on to the host it reached.
struct Journey {
    /// Indices of its hops in the records, in order.
    hops: Vec<usize>,
    /// It reached a host.
    done: bool,
    /// A data packet whose bytes its sender had sent before.
    resend: bool,
}

/// Each copy of the explained flows' packets, followed from hop to hop.
struct Journeys<'a> {
    records: &'a [HopRecord],
    all: Vec<Journey>,
}

impl<'a> Journeys<'a> {
    /// Follows the copies in `records` (in time order) through `topo`: a copy is its kind, flow, sequence
    /// number and send time; a hop continues the copy of that name that reached the hop's node earliest and
    /// has not gone on (first in, first out, where a switch holds two copies of one name).
    fn follow(records: &'a [HopRecord], topo: &Topology) -> Journeys<'a> {
        type Name = (u8, FlowId, u64, Time);
        let mut open: HashMap<Name, Vec<usize>> = HashMap::new();
        let mut all: Vec<Journey> = Vec::new();
        let mut sent: HashMap<FlowId, std::collections::HashSet<u64>> = HashMap::new();
        for (i, r) in records.iter().enumerate() {
            if !r.explained {
                continue;
            }
            let name = (r.kind.code(), r.flow, r.seq, r.sent_at);
            let node = topo.ports[r.port.idx()].node;
            let waiting = open.entry(name).or_default();
            let before = waiting
                .iter()
                .enumerate()
                .filter(|&(_, &j)| {
                    let last = &records[*all[j].hops.last().expect("a journey has a hop")];
                    let reached = topo.ports[topo.ports[last.port.idx()].peer.idx()].node;
                    reached == node && last.arrive <= r.start
                })
                .min_by_key(|&(_, &j)| records[*all[j].hops.last().unwrap()].arrive)
                .map(|(k, _)| k);
            let at_host = topo.nodes[node.idx()].kind == NodeKind::Host;
            let j = match before {
                Some(k) if !at_host => waiting.remove(k),
                _ => {
                    let resend = r.kind == PacketKind::DATA
                        && !sent.entry(r.flow).or_default().insert(r.seq);
                    all.push(Journey {
                        hops: Vec::new(),
                        done: false,
                        resend,
                    });
                    all.len() - 1
                }
            };
            all[j].hops.push(i);
            if r.to_host.is_some() {
                all[j].done = true;
            } else {
                open.entry(name).or_default().push(j);
            }
        }
        Journeys { records, all }
    }

    fn hop(&self, j: &Journey, k: usize) -> &HopRecord {
        &self.records[j.hops[k]]
    }

    fn last<'j>(&'j self, j: &'j Journey) -> &'j HopRecord {
        self.hop(j, j.hops.len() - 1)
    }
}

/// The pause intervals of each queue, from the log: `(port, queue)` to `[from, to)` spans in time order.
struct Pauses(HashMap<(PortId, u32), Vec<(Time, Time)>>);

impl Pauses {
    fn of(log: &[Logged]) -> Pauses {
        let mut spans: HashMap<(PortId, u32), Vec<(Time, Time)>> = HashMap::new();
        let mut pairs = PausePairs::default();
        for (port, queue, from, to) in log.iter().filter_map(|e| pairs.feed(e)) {
            spans.entry((port, queue)).or_default().push((from, to));
        }
        for (port, queue, from) in pairs.still_paused() {
            spans
                .entry((port, queue))
                .or_default()
                .push((from, Time::MAX));
        }
        Pauses(spans)
    }

    /// How long queue `queue` of `port` was paused within `[from, to)` (nothing for an unknown queue: its
    /// scheme pauses none).
    fn within(&self, port: PortId, queue: Option<u32>, from: Time, to: Time) -> Time {
        let Some(list) = queue.and_then(|q| self.0.get(&(port, q))) else {
            return Time::ZERO;
        };
        let mut sum = Time::ZERO;
        for &(a, b) in list {
            if a >= to {
                break;
            }
            let (a, b) = (a.max(from), b.min(to));
            if b > a {
                sum += b - a;
            }
        }
        sum
    }
}

/// Adds `time` to the part `(what, port)`, appending it if new; nothing for no time.
fn add(parts: &mut Vec<Part>, what: What, port: Option<PortId>, time: Time) {
    if time == Time::ZERO {
        return;
    }
    match parts.iter_mut().find(|p| p.what == what && p.port == port) {
        Some(p) => p.time += time,
        None => parts.push(Part { what, port, time }),
    }
}

/// Explains each flow of `flows` from the run's recorded `records` (in time order) and `log`.
pub fn explain(
    flows: &[FlowRecord],
    records: &[HopRecord],
    log: &[Logged],
    topo: &Topology,
) -> Report {
    let journeys = Journeys::follow(records, topo);
    let pauses = Pauses::of(log);
    let mut hops = Vec::new();
    for j in &journeys.all {
        for k in 0..j.hops.len() {
            let h = *journeys.hop(j, k);
            let queued_at = (k > 0).then(|| journeys.hop(j, k - 1).arrive);
            hops.push(HopRow {
                record: h,
                resend: j.resend,
                hop: k,
                queued_at,
                paused: queued_at
                    .map_or(Time::ZERO, |t| pauses.within(h.port, h.queue, t, h.start)),
            });
        }
    }
    let flows = flows
        .iter()
        .map(|f| {
            let mine: Vec<&Journey> = journeys
                .all
                .iter()
                .filter(|j| journeys.hop(j, 0).flow == f.id)
                .collect();
            let data: Vec<&&Journey> = mine
                .iter()
                .filter(|j| journeys.hop(j, 0).kind == PacketKind::DATA)
                .collect();
            let timeouts = log
                .iter()
                .filter(|e| matches!(e, Logged::Timeout { flow, .. } if *flow == f.id))
                .count() as u64;
            let lost = mine.iter().filter(|j| !j.done).count() as u64;
            let lost_data = data.iter().filter(|j| !j.done).count() as u64;
            Explanation {
                record: *f,
                parts: critical_path(f, &mine, &journeys, &pauses, topo),
                data_sent: data.len() as u64,
                resent: data.iter().filter(|j| j.resend).count() as u64,
                timeouts,
                lost_data,
                lost_control: lost - lost_data,
                hosts: (
                    topo.host_index(f.src).unwrap_or(u32::MAX),
                    topo.host_index(f.dst).unwrap_or(u32::MAX),
                ),
            }
        })
        .collect();
    let labels = hops
        .iter()
        .map(|h| (h.record.port, port_label(topo, h.record.port)))
        .collect();
    Report {
        flows,
        hops,
        labels,
    }
}

/// Flow `f`'s completion time split along its critical path ([the module's account](self)).
fn critical_path(
    f: &FlowRecord,
    mine: &[&Journey],
    journeys: &Journeys,
    pauses: &Pauses,
    topo: &Topology,
) -> Result<Vec<Part>, String> {
    let finish = f
        .finish
        .ok_or_else(|| "it did not finish by the end of the run".to_string())?;
    let host_of = |n: NodeId| topo.host_index(n).expect("a flow's ends are hosts");
    let (src, dst) = (host_of(f.src), host_of(f.dst));
    // The reply that completed the flow: one of its packets reaching the sender at the completion.
    let reply = mine.iter().find(|j| {
        let last = journeys.last(j);
        j.done
            && last.kind != PacketKind::DATA
            && last.to_host == Some(src)
            && last.arrive == finish
    });
    let reply_left = reply.map_or(finish, |j| journeys.hop(j, 0).start);
    // The data packet it answers: the copy the reply echoes the send time of, or the last to arrive before.
    let arrived = |j: &&&Journey| {
        let last = journeys.last(j);
        j.done
            && journeys.hop(j, 0).kind == PacketKind::DATA
            && last.to_host == Some(dst)
            && last.arrive <= reply_left
    };
    let echoed = reply.map(|j| journeys.hop(j, 0).sent_at);
    let last_data = mine
        .iter()
        .filter(arrived)
        .find(|j| Some(journeys.hop(j, 0).sent_at) == echoed)
        .or_else(|| {
            mine.iter()
                .filter(arrived)
                .max_by_key(|j| journeys.last(j).arrive)
        })
        .ok_or_else(|| "no data packet of it reached its receiver".to_string())?;
    let left = journeys.hop(last_data, 0);
    if left.start < f.start {
        return Err(format!(
            "its last packet left at {} before the flow started",
            left.start
        ));
    }
    let mut parts = Vec::new();
    sender_side(f, left, mine, journeys, pauses, topo, &mut parts);
    journey_parts(last_data, journeys, pauses, &mut parts);
    add(
        &mut parts,
        What::Reply,
        None,
        reply_left - journeys.last(last_data).arrive,
    );
    if let Some(reply) = reply {
        journey_parts(reply, journeys, pauses, &mut parts);
    }
    let sum = parts.iter().fold(Time::ZERO, |s, p| s + p.time);
    let fct = finish - f.start;
    if sum != fct {
        return Err(format!(
            "its parts sum to {sum}, not to its completion time {fct} (a bug: please report it)"
        ));
    }
    Ok(parts)
}

/// The parts of `[f.start, left.start)`, before the flow's last packet left the sender, from what the sender's
/// link did then.
fn sender_side(
    f: &FlowRecord,
    left: &HopRecord,
    mine: &[&Journey],
    journeys: &Journeys,
    pauses: &Pauses,
    topo: &Topology,
    parts: &mut Vec<Part>,
) {
    let (from, to) = (f.start, left.start);
    let nic: Vec<PortId> = topo.nodes[f.src.idx()].ports.clone();
    // Each of the flow's own data transmissions at the sender: when it started, and whether it was a resend.
    let mut own: Vec<(Time, bool)> = mine
        .iter()
        .filter(|j| journeys.hop(j, 0).kind == PacketKind::DATA)
        .map(|j| (journeys.hop(j, 0).start, j.resend))
        .collect();
    own.sort_unstable();
    let next_is_resend = |at: Time| {
        let i = own.partition_point(|&(t, _)| t < at);
        own.get(i).is_some_and(|&(_, resend)| resend)
    };
    let idle = |a: Time, b: Time, parts: &mut Vec<Part>| {
        if b <= a {
            return;
        }
        if next_is_resend(b) {
            add(parts, What::Recovery, None, b - a);
            return;
        }
        let paused = pauses.within(left.port, left.queue, a, b);
        add(parts, What::NicPaused, None, paused);
        add(parts, What::HeldBack, None, b - a - paused);
    };
    let resends: std::collections::HashSet<(Time, PortId)> = mine
        .iter()
        .filter(|j| j.resend)
        .map(|j| (journeys.hop(j, 0).start, journeys.hop(j, 0).port))
        .collect();
    let mut at = from;
    for r in journeys.records {
        if r.start >= to {
            break;
        }
        if r.end <= from || !nic.contains(&r.port) {
            continue;
        }
        let (a, b) = (r.start.max(from), r.end.min(to));
        idle(at, a, parts);
        let what = if !(r.explained && r.flow == f.id && r.kind == PacketKind::DATA) {
            What::NicBusy
        } else if resends.contains(&(r.start, r.port)) {
            What::Recovery
        } else {
            What::Sending
        };
        add(parts, what, None, b - a);
        at = b;
    }
    idle(at, to, parts);
}

/// The parts of one copy's journey from its first hop's start to its arrival: at each switch, queued and
/// paused (from its arrival at the egress queue to its transmission); on each link, transmission and
/// propagation.
fn journey_parts(j: &Journey, journeys: &Journeys, pauses: &Pauses, parts: &mut Vec<Part>) {
    for k in 0..j.hops.len() {
        let h = journeys.hop(j, k);
        if k > 0 {
            let came = journeys.hop(j, k - 1).arrive;
            let paused = pauses.within(h.port, h.queue, came, h.start);
            add(parts, What::Paused, Some(h.port), paused);
            add(parts, What::Queued, Some(h.port), h.start - came - paused);
        }
        add(parts, What::Transmission, None, h.arrive - h.start);
    }
}

/// `port`'s name for a reader: its node, the node at its far end (a host by its number, as flow files name
/// it; a switch by its node id, as the summary does), and the port as `--trace` and the link sets name it
/// (`port:N`).
pub fn port_label(topo: &Topology, port: PortId) -> String {
    let node_label = |n: NodeId| match topo.host_index(n) {
        Some(h) => format!("host {h}"),
        None => format!("switch {}", n.0),
    };
    let p = &topo.ports[port.idx()];
    format!(
        "{} -> {} (port:{})",
        node_label(p.node),
        node_label(topo.ports[p.peer.idx()].node),
        port.0
    )
}

/// `t` in microseconds to the nanosecond.
fn us(t: Time) -> String {
    format!("{:.3} us", t.0 as f64 / 1e6)
}

/// The breakdowns as a reader sees them on the console.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for e in &report.flows {
        let f = &e.record;
        let _ = write!(
            out,
            "flow {} ({} B, host {} -> host {}, started {})",
            f.id.0, f.size.0, e.hosts.0, e.hosts.1, f.start
        );
        let parts = match &e.parts {
            Ok(parts) => parts,
            Err(why) => {
                let _ = writeln!(out, ": no breakdown, {why}");
                continue;
            }
        };
        let fct = f.fct().expect("a flow with a breakdown finished");
        let _ = writeln!(
            out,
            ": completed in {} (ideal {}, slowdown {:.2})",
            us(fct),
            us(f.ideal),
            fct.0 as f64 / f.ideal.0.max(1) as f64
        );
        let mut ordered: Vec<&Part> = parts.iter().collect();
        ordered.sort_by_key(|p| std::cmp::Reverse(p.time));
        for p in ordered {
            let mut label = p.what.about().to_string();
            if let Some(port) = p.port {
                label += &format!(" at {}", report.label(port));
            }
            let _ = writeln!(
                out,
                "  {:>14}  {:>5.1}%  {label}",
                us(p.time),
                100.0 * p.time.0 as f64 / fct.0.max(1) as f64
            );
        }
        let sum = parts.iter().fold(Time::ZERO, |s, p| s + p.time);
        let _ = writeln!(
            out,
            "  {:>14}  100.0%  in all (= the completion time)\n  {} data packets sent ({} resends, {} lost), {} timeouts, {} other packets (replies, credits, grants) lost",
            us(sum),
            e.data_sent,
            e.resent,
            e.lost_data,
            e.timeouts,
            e.lost_control,
        );
    }
    out
}

/// Writes [`FILE`] (one row per part of each flow) and [`FILE_HOPS`] (every hop of every packet of the flows)
/// into `dir`.
pub fn write(dir: &Path, report: &Report) -> Result<(), String> {
    let ns = |t: Time| (t.0 as f64 / 1e3).to_string();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut row = |fields: &[String]| w.write_record(fields).map_err(|e| e.to_string());
    let header = ["flow", "part", "port", "where", "time_ns", "share"];
    row(&header.map(String::from))?;
    for e in &report.flows {
        let (Ok(parts), Some(fct)) = (&e.parts, e.record.fct()) else {
            continue;
        };
        for p in parts {
            row(&[
                e.record.id.0.to_string(),
                p.what.name().to_string(),
                p.port.map_or(String::new(), |p| p.0.to_string()),
                p.port
                    .map_or(String::new(), |p| report.label(p).to_string()),
                ns(p.time),
                format!("{:.6}", p.time.0 as f64 / fct.0.max(1) as f64),
            ])?;
        }
    }
    let breakdown = w.into_inner().map_err(|e| e.to_string())?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut row = |fields: &[String]| w.write_record(fields).map_err(|e| e.to_string());
    let header = [
        "flow",
        "kind",
        "seq",
        "payload",
        "size",
        "sent_at_ns",
        "resend",
        "hop",
        "port",
        "where",
        "queue",
        "queued_at_ns",
        "waited_ns",
        "paused_ns",
        "start_ns",
        "end_ns",
        "arrive_ns",
    ];
    row(&header.map(String::from))?;
    for r in &report.hops {
        let h = &r.record;
        row(&[
            h.flow.0.to_string(),
            format!("{:?}", h.kind).to_lowercase(),
            h.seq.to_string(),
            h.payload.to_string(),
            h.size.to_string(),
            ns(h.sent_at),
            r.resend.to_string(),
            r.hop.to_string(),
            h.port.0.to_string(),
            report.label(h.port).to_string(),
            h.queue.map_or(String::new(), |q| q.to_string()),
            r.queued_at.map_or(String::new(), ns),
            r.queued_at.map_or(String::new(), |t| ns(h.start - t)),
            r.queued_at.map_or(String::new(), |_| ns(r.paused)),
            ns(h.start),
            ns(h.end),
            ns(h.arrive),
        ])?;
    }
    let hops = w.into_inner().map_err(|e| e.to_string())?;
    for (name, bytes) in [(FILE, breakdown), (FILE_HOPS, hops)] {
        let path = dir.join(name);
        bfcsim_metrics::write_atomic(&path, |w| w.write_all(&bytes))
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::{Bytes, Rate};

    /// Host 0, a switch, host 1; returns the topology and its ports: host 0's, the switch's towards host 0,
    /// the switch's towards host 1, host 1's.
    fn line() -> (Topology, [PortId; 4]) {
        let mut t = Topology::new();
        let (h0, sw, h1) = (
            t.add_node(NodeKind::Host),
            t.add_node(NodeKind::Switch),
            t.add_node(NodeKind::Host),
        );
        let (rate, delay) = (Rate::gbps(100), Time::from_ps(1000));
        t.connect(h0, sw, rate, delay);
        t.connect(sw, h1, rate, delay);
        t.finish();
        let ports = [
            t.nodes[h0.idx()].ports[0],
            t.nodes[sw.idx()].ports[0],
            t.nodes[sw.idx()].ports[1],
            t.nodes[h1.idx()].ports[0],
        ];
        (t, ports)
    }

    fn ns(n: u64) -> Time {
        Time::from_ps(n * 1000)
    }

    /// A record of flow 0's packet of `kind` and `seq` sent at `sent_at`, on `port` from `start` to `end`,
    /// arriving at `arrive` (at host `to_host`).
    fn hop(
        kind: PacketKind,
        seq: u64,
        sent_at: u64,
        port: PortId,
        (start, end, arrive): (u64, u64, u64),
        to_host: Option<u32>,
    ) -> HopRecord {
        HopRecord {
            port,
            queue: Some(1),
            start: ns(start),
            end: ns(end),
            arrive: ns(arrive),
            to_host,
            kind,
            flow: FlowId(0),
            seq,
            payload: 1000,
            size: 1048,
            sent_at: ns(sent_at),
            explained: true,
        }
    }

    fn flow(topo: &Topology, finish: u64) -> FlowRecord {
        FlowRecord {
            id: FlowId(0),
            src: topo.hosts[0],
            dst: topo.hosts[1],
            size: Bytes(1000),
            start: Time::ZERO,
            finish: Some(ns(finish)),
            ideal: ns(50),
            incast: false,
            class: 0,
            sport: 0,
            dport: 0,
            group: None,
        }
    }

    fn part(parts: &[Part], what: What, port: Option<PortId>) -> Time {
        parts
            .iter()
            .find(|p| p.what == what && p.port == port)
            .map_or(Time::ZERO, |p| p.time)
    }

    /// One packet and its ACK: the sender's link busy with another flow's packet and idle before it, the
    /// packet queued and paused at the switch, the reply waiting at the receiver.
    #[test]
    fn one_packet_is_split_along_its_path() {
        let (topo, [h0, sw0, sw1, h1]) = line();
        let other = HopRecord {
            flow: FlowId(7),
            explained: false,
            ..hop(PacketKind::DATA, 0, 2, h0, (2, 8, 18), None)
        };
        let records = [
            other,
            hop(PacketKind::DATA, 0, 10, h0, (10, 20, 30), None),
            hop(PacketKind::DATA, 0, 10, sw1, (50, 60, 70), Some(1)),
            hop(PacketKind::ACK, 1000, 10, h1, (75, 76, 80), None),
            hop(PacketKind::ACK, 1000, 10, sw0, (80, 81, 85), Some(0)),
        ];
        let log = [
            Logged::Pause {
                at: ns(35),
                port: sw1,
                queue: 1,
                paused: true,
            },
            Logged::Pause {
                at: ns(40),
                port: sw1,
                queue: 1,
                paused: false,
            },
        ];
        let report = explain(&[flow(&topo, 85)], &records, &log, &topo);
        let parts = report.flows[0].parts.as_ref().unwrap();
        assert_eq!(part(parts, What::NicBusy, None), ns(6));
        assert_eq!(part(parts, What::HeldBack, None), ns(4));
        assert_eq!(part(parts, What::Paused, Some(sw1)), ns(5));
        assert_eq!(part(parts, What::Queued, Some(sw1)), ns(15));
        assert_eq!(part(parts, What::Reply, None), ns(5));
        assert_eq!(part(parts, What::Transmission, None), ns(20 + 20 + 5 + 5));
        assert_eq!(part(parts, What::Queued, Some(sw0)), Time::ZERO);
        assert_eq!(parts.iter().fold(Time::ZERO, |s, p| s + p.time), ns(85));
        // The hop table: one row per hop of the flow's packets, with what the packet waited at the switch.
        assert_eq!(report.hops.len(), 4);
        let at_switch = report.hops.iter().find(|h| h.record.port == sw1).unwrap();
        assert_eq!(
            (at_switch.queued_at, at_switch.paused),
            (Some(ns(30)), ns(5))
        );
    }

    /// A packet lost at the switch and sent again: the resend, and the wait before it, are recovery; the
    /// lost copy is counted.
    #[test]
    fn a_resend_and_the_wait_for_it_are_recovery() {
        let (topo, [h0, sw0, sw1, h1]) = line();
        let records = [
            hop(PacketKind::DATA, 0, 0, h0, (0, 10, 20), None),
            hop(PacketKind::DATA, 0, 100, h0, (100, 110, 120), None),
            hop(PacketKind::DATA, 0, 100, sw1, (120, 130, 140), Some(1)),
            hop(PacketKind::ACK, 1000, 100, h1, (140, 141, 145), None),
            hop(PacketKind::ACK, 1000, 100, sw0, (145, 146, 150), Some(0)),
        ];
        let timeout = Logged::Timeout {
            at: ns(100),
            flow: FlowId(0),
        };
        let report = explain(&[flow(&topo, 150)], &records, &[timeout], &topo);
        let e = &report.flows[0];
        assert_eq!(
            (e.data_sent, e.resent, e.lost_data, e.timeouts),
            (2, 1, 1, 1)
        );
        let parts = e.parts.as_ref().unwrap();
        // The first copy's transmission was sending; the 90 ns after it, waiting to resend.
        assert_eq!(part(parts, What::Sending, None), ns(10));
        assert_eq!(part(parts, What::Recovery, None), ns(90));
        assert_eq!(parts.iter().fold(Time::ZERO, |s, p| s + p.time), ns(150));
    }
}
