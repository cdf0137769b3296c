//! Importing htsim's connection matrices (`.cm`, the files csg-htsim's `connection_matrices/gen_*.py` write and
//! its `ConnectionMatrix::load` reads), triggers included.
//!
//! ```text
//! Nodes 16
//! Connections 3
//! Triggers 1
//! 0->1 id 1 start 0 size 2000000 send_done_trigger 1
//! 1->2 id 2 trigger 1 size 2000000
//! 2->3 id 3 start 1000000 size 2000000
//! trigger id 1 oneshot
//! ```
//!
//! A connection `src->dst` (htsim host indices) has a `size` in bytes and either a `start` in picoseconds or a
//! `trigger` it waits for; `send_done_trigger` and `recv_done_trigger` name the trigger its sender's last
//! acknowledgement and its receiver's last byte activate ([`Done::Acked`], [`Done::Received`]). A `oneshot`
//! trigger starts its flows at its first activation, a `barrier` after `count` of them. The header's counts must
//! match the lines, as htsim checks. Refused with the line named: `multishot` triggers (each activation starts
//! the next of its flows in turn, an order a sharded run cannot keep), `failure` lines (fabric events, not
//! flows), `prio` and `addon`.

use std::collections::BTreeMap;
use std::path::Path;

use bfcsim_core::{
    Dependencies, DepsError, Done, Edge, FlowId, FlowSpec, InputError, NodeId, Time, Wait,
};

/// The flows of a connection matrix, in file order, and what the triggered ones wait for.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectionMatrix {
    /// The flows (a triggered flow's start is 0, a lower bound).
    pub flows: Vec<FlowSpec>,
    /// What the triggered ones wait for, checked (no cycle).
    pub deps: Dependencies,
}

/// A trigger as the file defines and uses it.
#[derive(Default)]
struct Trigger {
    /// Activations it needs (`oneshot`: 1), and the line defining it.
    needed: Option<(u32, usize)>,
    /// Flows it starts, with the line naming each.
    targets: Vec<(u32, usize)>,
    /// Flows whose completion activates it.
    activators: Vec<(u32, Done)>,
}

/// Parses connection-matrix `text` (`file` names it in errors) for a topology of `hosts` hosts (`hosts[i]` the
/// node of htsim's host `i`).
pub fn parse_connection_matrix(
    text: &str,
    file: impl AsRef<Path>,
    hosts: &[NodeId],
) -> Result<ConnectionMatrix, InputError> {
    let file = file.as_ref();
    let mut flows: Vec<FlowSpec> = Vec::new();
    // The line of each flow, by flow index.
    let mut lines: Vec<usize> = Vec::new();
    let (mut waits, mut edges) = (Vec::new(), Vec::new());
    let mut triggers: BTreeMap<u64, Trigger> = BTreeMap::new();
    let (mut nodes, mut conns, mut trigs) = (None, None, None);
    let mut defined = 0usize;
    let mut ids: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let at = |m: String| InputError::at(file, line, m);
        let t: Vec<&str> = raw.split_whitespace().collect();
        let Some(&first) = t.first() else { continue };
        if first.starts_with('#') {
            continue;
        }
        let count = |what: &str| -> Result<u64, InputError> {
            match t.as_slice() {
                [_, n] => number(n, what, line, file),
                _ => Err(at(format!("expected `{what} <count>`"))),
            }
        };
        match first {
            "Nodes" => nodes = Some(count("Nodes")?),
            "Connections" => conns = Some(count("Connections")?),
            "Triggers" => trigs = Some(count("Triggers")?),
            "Failures" => {
                if count("Failures")? > 0 {
                    return Err(at(
                        "failures are fabric events, which a connection matrix import does not take: \
                         remove the Failures line and the failure lines"
                            .into(),
                    ));
                }
            }
            "failure" => {
                return Err(at(
                    "a failure line: fabric events are not part of a flow list; remove it".into(),
                ));
            }
            "trigger" => {
                let (mut id, mut needed, mut count_v) = (None, None, None);
                let mut k = 1;
                while k < t.len() {
                    match t[k] {
                        "id" => {
                            id = Some(number(value(&t, k, line, file)?, "trigger id", line, file)?);
                            k += 1;
                        }
                        "count" => {
                            count_v = Some(number(value(&t, k, line, file)?, "count", line, file)?);
                            k += 1;
                        }
                        "oneshot" => needed = Some(None),
                        "barrier" => needed = Some(Some(())),
                        "multishot" => {
                            return Err(at(
                                "multishot triggers (each activation starts the next of its \
                                 flows) are not supported; use oneshot or barrier"
                                    .into(),
                            ));
                        }
                        other => return Err(at(format!("unknown trigger attribute `{other}`"))),
                    }
                    k += 1;
                }
                let Some(id) = id.filter(|&i| i > 0) else {
                    return Err(at("a trigger needs a nonzero `id`".into()));
                };
                let needed = match (needed, count_v) {
                    (None, _) => {
                        return Err(at(format!("trigger {id} has no type (oneshot or barrier)")));
                    }
                    (Some(None), _) => 1,
                    (Some(Some(())), Some(c)) if c > 0 && c <= u32::MAX as u64 => c as u32,
                    (Some(Some(())), _) => {
                        return Err(at(format!("barrier trigger {id} needs a positive `count`")));
                    }
                };
                let tr = triggers.entry(id).or_default();
                if tr.needed.is_some() {
                    return Err(at(format!("trigger {id} is defined twice")));
                }
                tr.needed = Some((needed, line));
                defined += 1;
            }
            _ if first.contains("->") => {
                let (src, dst) = first.split_once("->").expect("contains ->");
                let host = |s: &str, what: &str| -> Result<NodeId, InputError> {
                    let h = number(s, what, line, file)?;
                    match hosts.get(h as usize) {
                        Some(&n) => Ok(n),
                        None => Err(at(format!(
                            "{what} {h} is not a host (the topology has {}, 0 to {})",
                            hosts.len(),
                            hosts.len().saturating_sub(1)
                        ))),
                    }
                };
                let (s, d) = (host(src, "source")?, host(dst, "destination")?);
                if s == d {
                    return Err(at(format!("a flow from host {src} to itself")));
                }
                let me = flows.len() as u32;
                let (mut size, mut start, mut trigger, mut id) = (None, None, None, None);
                let mut k = 1;
                while k < t.len() {
                    let v = || value(&t, k, line, file);
                    match t[k] {
                        "size" => size = Some(number(v()?, "size", line, file)?),
                        "start" => {
                            let ps = v()?;
                            let x: f64 = ps.parse().map_err(|_| {
                                at(format!("start `{ps}` is not a number of picoseconds"))
                            })?;
                            if !(x.is_finite() && x >= 0.0) {
                                return Err(at(format!(
                                    "start `{ps}` must be a time of at least 0 ps"
                                )));
                            }
                            start = Some(Time::from_ps(x.round() as u64));
                        }
                        "id" => id = Some(number(v()?, "id", line, file)?),
                        "trigger" => trigger = Some(number(v()?, "trigger", line, file)?),
                        "send_done_trigger" | "recv_done_trigger" => {
                            let on = if t[k] == "send_done_trigger" {
                                Done::Acked
                            } else {
                                Done::Received
                            };
                            let tid = number(v()?, t[k], line, file)?;
                            if tid > 0 {
                                triggers.entry(tid).or_default().activators.push((me, on));
                            }
                        }
                        "prio" | "addon" => {
                            return Err(at(format!(
                                "`{}` (htsim's per-flow priority and add-on signals) is not supported",
                                t[k]
                            )));
                        }
                        other => return Err(at(format!("unknown connection attribute `{other}`"))),
                    }
                    k += if t[k] == "addon" { 1 } else { 2 };
                }
                let Some(size) = size.filter(|&s| s > 0) else {
                    return Err(at("a connection needs a positive `size` in bytes".into()));
                };
                match (start, trigger) {
                    (Some(_), Some(_)) => {
                        return Err(at("both a start time and a trigger: give one".into()));
                    }
                    (None, None) => {
                        return Err(at("no start time and no trigger: give one".into()));
                    }
                    (None, Some(0)) => return Err(at("trigger 0 is not allowed".into())),
                    (None, Some(tid)) => triggers.entry(tid).or_default().targets.push((me, line)),
                    (Some(_), None) => {}
                }
                if let Some(id) = id
                    && let Some(prev) = ids.insert(id, line)
                {
                    return Err(at(format!("flow id {id} was used on line {prev} already")));
                }
                lines.push(line);
                flows.push(FlowSpec {
                    src: s,
                    dst: d,
                    size: bfcsim_core::Bytes(size),
                    start: start.unwrap_or(Time::ZERO),
                    class: 0,
                    incast: false,
                    group: None,
                });
            }
            other => return Err(at(format!("unknown line starting with `{other}`"))),
        }
    }
    let whole = |m: String| InputError::file(file, m);
    if let Some(n) = nodes
        && n as usize > hosts.len()
    {
        return Err(whole(format!(
            "`Nodes {n}`, but the topology has {} hosts",
            hosts.len()
        )));
    }
    match conns {
        Some(c) if c as usize == flows.len() => {}
        Some(c) => {
            return Err(whole(format!(
                "`Connections {c}`, but the file has {} connection lines",
                flows.len()
            )));
        }
        None => return Err(whole("no `Connections <count>` line".into())),
    }
    if trigs.unwrap_or(0) as usize != defined {
        return Err(whole(format!(
            "`Triggers {}`, but the file defines {defined} triggers",
            trigs.unwrap_or(0)
        )));
    }
    for (tid, tr) in triggers {
        let Some((needed, def_line)) = tr.needed else {
            let line = tr.targets.first().map_or(0, |&(_, l)| l);
            return Err(InputError::at(
                file,
                line.max(1),
                format!("trigger {tid} is used but never defined (`trigger id {tid} oneshot`)"),
            ));
        };
        if !tr.targets.is_empty() && (tr.activators.len() as u64) < needed as u64 {
            return Err(InputError::at(
                file,
                def_line,
                format!(
                    "trigger {tid} needs {needed} activations, but only {} flows activate it: its flows would \
                     never start",
                    tr.activators.len()
                ),
            ));
        }
        for &(flow, _) in &tr.targets {
            waits.push((
                FlowId(flow),
                Wait {
                    needed,
                    delay: Time::ZERO,
                },
            ));
            for &(after, on) in &tr.activators {
                edges.push(Edge {
                    after: FlowId(after),
                    on,
                    flow: FlowId(flow),
                });
            }
        }
    }
    let deps = Dependencies::new(flows.len(), waits, &edges).map_err(|e| match e {
        DepsError::Cycle(c) => {
            let on: Vec<String> = c.iter().map(|f| lines[f.idx()].to_string()).collect();
            InputError::at(
                file,
                lines[c[0].idx()],
                format!(
                    "the triggers form a cycle: the flows on lines {} each wait for the one before",
                    on.join(" -> ")
                ),
            )
        }
        other => whole(other.to_string()),
    })?;
    Ok(ConnectionMatrix { flows, deps })
}

/// Reads and parses connection-matrix file `path` ([`parse_connection_matrix`]).
pub fn load_connection_matrix(
    path: impl AsRef<Path>,
    hosts: &[NodeId],
) -> Result<ConnectionMatrix, InputError> {
    let path = path.as_ref();
    let text = bfcsim_core::input::read_to_string(path)?;
    parse_connection_matrix(&text, path, hosts)
}

fn value<'a>(t: &[&'a str], k: usize, line: usize, file: &Path) -> Result<&'a str, InputError> {
    t.get(k + 1)
        .copied()
        .ok_or_else(|| InputError::at(file, line, format!("`{}` needs a value", t[k])))
}

fn number(s: &str, what: &str, line: usize, file: &Path) -> Result<u64, InputError> {
    s.parse()
        .map_err(|_| InputError::at(file, line, format!("{what} `{s}` is not a whole number")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(n: u32) -> Vec<NodeId> {
        (100..100 + n).map(NodeId).collect()
    }

    fn parse(text: &str) -> Result<ConnectionMatrix, InputError> {
        parse_connection_matrix(text, "m.cm", &hosts(16))
    }

    #[test]
    fn a_ring_of_triggers_as_gen_allreduce_writes_it() {
        let text = "Nodes 16\nConnections 3\nTriggers 2\n\
                    0->1 id 1 start 0 size 1000 send_done_trigger 1\n\
                    1->2 id 2 trigger 1 size 1000 send_done_trigger 2\n\
                    2->3 id 3 trigger 2 size 1000\n\
                    trigger id 1 oneshot\ntrigger id 2 oneshot\n";
        let m = parse(text).unwrap();
        assert_eq!(m.flows.len(), 3);
        assert_eq!(m.flows[1].src, NodeId(101));
        assert_eq!(m.deps.waiting(), 2);
        assert_eq!(m.deps.dependants(FlowId(0), Done::Acked), &[1]);
        assert_eq!(m.deps.dependants(FlowId(1), Done::Acked), &[2]);
    }

    #[test]
    fn a_barrier_waits_for_its_count() {
        let text = "Connections 3\nTriggers 1\n0->1 start 0 size 10 recv_done_trigger 7\n\
                    2->1 start 5000000 size 10 recv_done_trigger 7\n1->3 trigger 7 size 10\n\
                    trigger id 7 barrier count 2\n";
        let m = parse(text).unwrap();
        assert_eq!(m.flows[1].start, Time::from_us(5));
        let wait = Wait {
            needed: 2,
            delay: Time::ZERO,
        };
        assert_eq!(m.deps.wait(FlowId(2)), Some(wait));
        assert_eq!(m.deps.dependants(FlowId(0), Done::Received), &[2]);
        assert_eq!(m.deps.dependants(FlowId(1), Done::Received), &[2]);
    }

    #[test]
    fn what_is_refused_names_its_line() {
        for (text, line, what) in [
            ("Connections 1\n0->1 size 10\n", Some(2), "no start time"),
            (
                "Connections 1\n0->1 start 0 trigger 1 size 10\n",
                Some(2),
                "both",
            ),
            (
                "Connections 1\n0->99 start 0 size 10\n",
                Some(2),
                "not a host",
            ),
            (
                "Connections 1\n0->1 start 0 size 10 prio 3\n",
                Some(2),
                "prio",
            ),
            (
                "Connections 1\nTriggers 1\n0->1 start 0 size 10\ntrigger id 1 multishot\n",
                Some(4),
                "multishot",
            ),
            (
                "Connections 1\n0->1 trigger 4 size 10\n",
                Some(2),
                "never defined",
            ),
            (
                "Connections 2\n0->1 start 0 size 10\n",
                None,
                "Connections 2",
            ),
            (
                "Connections 1\nfailure switch_type TOR switch_id 0 link_id 0\n",
                Some(2),
                "fabric events",
            ),
            (
                "Connections 2\nTriggers 1\n0->1 start 0 size 10 send_done_trigger 1\n1->2 trigger 1 size 10\n\
                 trigger id 1 barrier count 2\n",
                Some(5),
                "only 1 flows",
            ),
            (
                "Connections 1\n0->1 start 0 size 10 colour red\n",
                Some(2),
                "unknown connection attribute",
            ),
            (
                "Connections 3\nTriggers 2\n0->1 start 0 size 10\n1->2 trigger 1 size 10 send_done_trigger 2\n\
                 2->3 trigger 2 size 10 send_done_trigger 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n",
                Some(5),
                "cycle",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{e}");
            assert!(e.to_string().contains(what), "{e}");
        }
    }
}
