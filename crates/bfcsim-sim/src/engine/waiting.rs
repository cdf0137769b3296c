//! Flows that wait for other flows ([`bfcsim_core::deps`]): a completion sends a notice to each flow waiting
//! for it, and a flow starts once it has the notices it needs, its compute delay later.
//!
//! A notice is due at the waiting flow's source host when the completion happened plus the time a message
//! takes between the two hosts ([`Notify`]): zero on one host (a rank forwarding what it just received, the
//! steps of a collective), otherwise the propagation delay of the path between them, since something must tell
//! the other host. That delay is at least one link's, so a notice to another shard is never due inside the
//! window it was sent in and travels with the parcels ([`Mail`]); `Notify::Instant` (htsim's triggers, which
//! start flows anywhere at once) runs on one shard. Notices and starts wait in one heap ordered by (time, what,
//! flow), which one `Released` event drains, so which shard heard of a notice first, and in what order, does not
//! change when anything happens.

use super::*;
use bfcsim_core::{Dependencies, Done};

/// How long a completion takes to reach a waiting flow's host on another host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Notify {
    /// The propagation delay of the path between the two hosts (the default).
    #[default]
    Path,
    /// At once, wherever the waiting flow is (htsim's triggers); the run takes one thread.
    Instant,
}

/// A workload's dependency graph and how its notices travel.
#[derive(Clone, Debug)]
pub struct FlowDeps {
    /// The graph, over the flow list's ids.
    pub graph: Arc<Dependencies>,
    /// How notices travel between hosts.
    pub notify: Notify,
}

/// What a heap entry does: a notice is counted before a start due at the same time.
const NOTICE: u8 = 0;
const START: u8 = 1;

/// A shard's side of the dependencies: the flows waiting at its hosts.
pub(super) struct Waiting {
    deps: FlowDeps,
    node_shard: Arc<[u8]>,
    me: u8,
    /// Notices each flow still needs, by flow (kept for the flows whose source this shard owns).
    left: Vec<u32>,
    /// When each waiting flow started (`Time::MAX`: not yet), by flow.
    started: Vec<Time>,
    /// Notices and starts due, earliest first.
    due: BinaryHeap<Reverse<(Time, u8, u32)>>,
    /// When the pending `Released` event is due (`Time::MAX`: none).
    event_at: Time,
}

impl Waiting {
    pub(super) fn new(deps: FlowDeps, own: &Ownership) -> Waiting {
        let n = deps.graph.len();
        let left = (0..n)
            .map(|i| deps.graph.wait(FlowId::from_idx(i)).map_or(0, |w| w.needed))
            .collect();
        Waiting {
            deps,
            node_shard: own.node_shard.clone(),
            me: own.me,
            left,
            started: vec![Time::MAX; n],
            due: BinaryHeap::new(),
            event_at: Time::MAX,
        }
    }

    /// Whether flow `id` waits for others (and so is not in the start-sorted arrivals).
    pub(super) fn waits(&self, id: u32) -> bool {
        self.deps.graph.wait(FlowId(id)).is_some()
    }

    /// When waiting flow `id` started; `None` before it has.
    pub(super) fn started(&self, id: FlowId) -> Option<Time> {
        Some(self.started[id.idx()]).filter(|&t| t != Time::MAX)
    }
}

/// A notice for another shard: when it is due and for which flow.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Notice {
    pub(super) at: Time,
    pub(super) flow: u32,
}

impl Fabric {
    /// Flow `id` completed (`on`) at host `h` now: sends a notice to every flow waiting for that. Inlined to
    /// its test, so that a run of independent flows pays one predicted branch a completion.
    #[inline(always)]
    pub(super) fn completed(&mut self, id: FlowId, on: Done, h: u32) {
        if self.waiting.is_some() {
            self.notify_dependants(id, on, h);
        }
    }

    #[cold]
    #[inline(never)]
    fn notify_dependants(&mut self, id: FlowId, on: Done, h: u32) {
        let Some(w) = self.waiting.as_deref() else {
            return;
        };
        let (graph, node_shard, me, notify) = (
            w.deps.graph.clone(),
            w.node_shard.clone(),
            w.me,
            w.deps.notify,
        );
        let mut path = Vec::new();
        for &t in graph.dependants(id, on) {
            let f = &self.flows[t as usize];
            let (src_host, shard) = (f.src_host, node_shard[f.spec.src.idx()]);
            let at = if src_host == h || notify == Notify::Instant {
                self.now
            } else {
                self.path_by_hash(h, src_host, 0, &mut path);
                path.iter()
                    .fold(self.now, |t, p| t + self.wires[p.idx()].delay)
            };
            if shard == me {
                self.push_due(at, NOTICE, t);
            } else {
                self.outbox[shard as usize]
                    .notices
                    .push(Notice { at, flow: t });
            }
        }
    }

    /// Puts the notices from other shards in the heap.
    pub(super) fn accept_notices(&mut self, notices: &mut Vec<Notice>) {
        for n in notices.drain(..) {
            self.push_due(n.at, NOTICE, n.flow);
        }
    }

    fn push_due(&mut self, at: Time, what: u8, flow: u32) {
        let w = self.waiting.as_mut().expect("a run with dependencies");
        w.due.push(Reverse((at, what, flow)));
        if at < w.event_at {
            w.event_at = at;
            self.events.push(at, Event::Released);
        }
    }

    /// The `Released` event: counts the notices due now and starts the flows due now.
    pub(super) fn release<S: Scheme>(&mut self, side: &mut S) {
        let w = self.waiting.as_mut().expect("a run with dependencies");
        if w.event_at != self.now {
            return; // a stale event: an earlier entry moved the pending one ahead
        }
        w.event_at = Time::MAX;
        loop {
            let w = self.waiting.as_mut().expect("waiting");
            let Some(&Reverse((at, what, flow))) = w.due.peek() else {
                break;
            };
            if at > self.now {
                w.event_at = at;
                self.events.push(at, Event::Released);
                break;
            }
            w.due.pop();
            if what == START {
                w.started[flow as usize] = self.now;
                self.start_flow(side, FlowId(flow));
                continue;
            }
            let left = &mut w.left[flow as usize];
            if *left == 0 {
                continue; // a one-shot wait that already fired
            }
            *left -= 1;
            if *left == 0 {
                let wait = w
                    .deps
                    .graph
                    .wait(FlowId(flow))
                    .expect("a notice for a waiting flow");
                let at = (self.now + wait.delay).max(self.flows[flow as usize].spec.start);
                self.push_due(at, START, flow);
            }
        }
    }
}
