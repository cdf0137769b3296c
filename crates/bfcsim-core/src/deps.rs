//! Flows that wait for other flows: the dependency graph of a workload whose flows are not independent (the
//! steps of a collective, htsim's connection-matrix triggers).
//!
//! A flow either starts at its [`FlowSpec::start`](crate::FlowSpec::start) or waits: it starts once `needed`
//! of the completions it listens to have happened, plus its own `delay` (a compute phase), and never before its
//! `start`, which for a waiting flow is only a lower bound. A completion is a predecessor's [`Done`] event: its
//! sender has every byte acknowledged ([`Done::Acked`], what an FCT ends with; htsim's `send_done_trigger`) or
//! its receiver has every byte ([`Done::Received`]; htsim's `recv_done_trigger`, and what the next step of a
//! collective waits for at the rank that received the data). `needed` may be below the number of edges into a
//! flow: htsim's one-shot trigger fires at the first of its activations.
//!
//! The graph is stored as two compressed adjacency lists, one per kind of completion, so that a completing
//! flow finds its dependants in one slice; [`Dependencies::new`] checks it (every reference in range, every
//! waiting flow able to start, no cycle) and names the first offending flow.

use crate::ids::FlowId;
use crate::time::Time;

/// Which completion of a flow its dependants wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Done {
    /// The sender has every byte acknowledged (the flow's finish, as its FCT counts it).
    Acked,
    /// The receiver has every byte.
    Received,
}

impl Done {
    /// Both kinds, in the order [`Dependencies`] stores their lists.
    pub const ALL: [Done; 2] = [Done::Acked, Done::Received];
}

/// One edge of the graph as a builder states it: `flow` listens to `after`'s completion of kind `on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The predecessor.
    pub after: FlowId,
    /// Which of its completions counts.
    pub on: Done,
    /// The waiting flow.
    pub flow: FlowId,
}

/// How a waiting flow starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// Completions it needs (at least 1, at most the edges into it).
    pub needed: u32,
    /// Time from the last needed completion to its start (a compute phase).
    pub delay: Time,
}

/// The dependency graph of a flow list (indices are the flows' ids, in the list's start order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// How each flow starts: `None` at its start time.
    waits: Vec<Option<Wait>>,
    /// Per kind of completion, each flow's dependants: `targets[k][offsets[k][f]..offsets[k][f + 1]]`.
    offsets: [Vec<u32>; 2],
    targets: [Vec<u32>; 2],
}

/// Why a dependency graph was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DepsError {
    /// An edge names a flow beyond the list.
    OutOfRange {
        /// The flow named.
        flow: u64,
        /// The number of flows.
        flows: usize,
    },
    /// A flow waits for more completions than it listens to: it could never start.
    Unreachable {
        /// The flow.
        flow: FlowId,
        /// Completions it needs.
        needed: u32,
        /// Edges into it.
        edges: u32,
    },
    /// A waiting flow with no edges into it, or edges into a flow that does not wait.
    Unwaited(FlowId),
    /// A cycle: every flow in it waits for the one before it.
    Cycle(Vec<FlowId>),
}

impl std::fmt::Display for DepsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DepsError::OutOfRange { flow, flows } => {
                write!(
                    f,
                    "flow {flow} does not exist (the workload has {flows} flows)"
                )
            }
            DepsError::Unreachable {
                flow,
                needed,
                edges,
            } => write!(
                f,
                "flow {} waits for {needed} completions but only {edges} are wired to it, so it would never start",
                flow.0
            ),
            DepsError::Unwaited(flow) => write!(
                f,
                "flow {} is wired to other flows' completions but has no rule saying when it starts",
                flow.0
            ),
            DepsError::Cycle(flows) => {
                let names: Vec<String> = flows.iter().map(|f| f.0.to_string()).collect();
                write!(
                    f,
                    "the dependencies form a cycle: flow {} waits for itself through {}",
                    names[0],
                    names.join(" -> ")
                )
            }
        }
    }
}

impl std::error::Error for DepsError {}

impl Dependencies {
    /// The graph of `flows` flows with `waits` (flow id and how it starts) and `edges`, checked.
    pub fn new(
        flows: usize,
        waits: impl IntoIterator<Item = (FlowId, Wait)>,
        edges: &[Edge],
    ) -> Result<Dependencies, DepsError> {
        let range = |id: FlowId| {
            if id.idx() < flows {
                Ok(())
            } else {
                Err(DepsError::OutOfRange {
                    flow: id.0 as u64,
                    flows,
                })
            }
        };
        let mut w = vec![None; flows];
        for (id, wait) in waits {
            range(id)?;
            w[id.idx()] = Some(wait);
        }
        let mut indegree = vec![0u32; flows];
        let mut counts = [vec![0u32; flows + 1], vec![0u32; flows + 1]];
        for e in edges {
            range(e.after)?;
            range(e.flow)?;
            indegree[e.flow.idx()] += 1;
            counts[kind(e.on)][e.after.idx() + 1] += 1;
        }
        for (i, wait) in w.iter().enumerate() {
            let id = FlowId::from_idx(i);
            match wait {
                None if indegree[i] > 0 => return Err(DepsError::Unwaited(id)),
                None => {}
                Some(_) if indegree[i] == 0 => return Err(DepsError::Unwaited(id)),
                Some(wait) if wait.needed == 0 || wait.needed > indegree[i] => {
                    return Err(DepsError::Unreachable {
                        flow: id,
                        needed: wait.needed,
                        edges: indegree[i],
                    });
                }
                Some(_) => {}
            }
        }
        let offsets = counts.map(|mut c| {
            for i in 1..c.len() {
                c[i] += c[i - 1];
            }
            c
        });
        let mut fill = offsets.clone();
        let mut targets = [
            vec![0u32; edges_of(edges, 0)],
            vec![0u32; edges_of(edges, 1)],
        ];
        for e in edges {
            let k = kind(e.on);
            let at = &mut fill[k][e.after.idx()];
            targets[k][*at as usize] = e.flow.0;
            *at += 1;
        }
        let deps = Dependencies {
            waits: w,
            offsets,
            targets,
        };
        deps.check_acyclic()?;
        Ok(deps)
    }

    /// The number of flows the graph covers.
    pub fn len(&self) -> usize {
        self.waits.len()
    }

    /// Whether it covers no flow.
    pub fn is_empty(&self) -> bool {
        self.waits.is_empty()
    }

    /// How flow `id` starts: `None` at its start time.
    #[inline]
    pub fn wait(&self, id: FlowId) -> Option<Wait> {
        self.waits[id.idx()]
    }

    /// The flows waiting for `id`'s completion of kind `on`.
    #[inline]
    pub fn dependants(&self, id: FlowId, on: Done) -> &[u32] {
        let k = kind(on);
        let o = &self.offsets[k];
        &self.targets[k][o[id.idx()] as usize..o[id.idx() + 1] as usize]
    }

    /// Whether any flow waits for a completion of kind `on`.
    pub fn listens(&self, on: Done) -> bool {
        !self.targets[kind(on)].is_empty()
    }

    /// The number of flows that wait.
    pub fn waiting(&self) -> usize {
        self.waits.iter().filter(|w| w.is_some()).count()
    }

    /// The same graph over the flows renumbered by `new_of_old` (`new_of_old[old] = new`), as after sorting the
    /// flow list by start time.
    pub fn renumbered(&self, new_of_old: &[u32]) -> Dependencies {
        let n = self.len();
        debug_assert_eq!(new_of_old.len(), n);
        let mut waits = vec![None; n];
        for (old, w) in self.waits.iter().enumerate() {
            waits[new_of_old[old] as usize] = *w;
        }
        let mut edges = Vec::new();
        for on in Done::ALL {
            for old in 0..n {
                for &t in self.dependants(FlowId::from_idx(old), on) {
                    edges.push(Edge {
                        after: FlowId(new_of_old[old]),
                        on,
                        flow: FlowId(new_of_old[t as usize]),
                    });
                }
            }
        }
        let waits = waits
            .into_iter()
            .enumerate()
            .filter_map(|(i, w)| w.map(|w| (FlowId::from_idx(i), w)));
        Dependencies::new(n, waits, &edges).expect("a renumbering keeps a valid graph valid")
    }

    /// Refuses a cycle: Kahn's algorithm over every edge (a flow counts as ready once all its edges are
    /// resolved, whatever its `needed`, so that a cycle is found even where a one-shot wait could break it in
    /// one run and not in another).
    fn check_acyclic(&self) -> Result<(), DepsError> {
        let n = self.len();
        let mut indegree = vec![0u32; n];
        for t in self.targets.iter().flatten() {
            indegree[*t as usize] += 1;
        }
        let mut ready: Vec<u32> = (0..n as u32)
            .filter(|&i| indegree[i as usize] == 0)
            .collect();
        let mut seen = 0;
        while let Some(f) = ready.pop() {
            seen += 1;
            for on in Done::ALL {
                for &t in self.dependants(FlowId(f), on) {
                    indegree[t as usize] -= 1;
                    if indegree[t as usize] == 0 {
                        ready.push(t);
                    }
                }
            }
        }
        if seen == n {
            return Ok(());
        }
        // Walk back from a flow left over along edges between leftovers until a flow repeats.
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        for on in Done::ALL {
            for f in 0..n {
                for &t in self.dependants(FlowId::from_idx(f), on) {
                    if indegree[t as usize] > 0 && indegree[f] > 0 {
                        preds[t as usize].push(f as u32);
                    }
                }
            }
        }
        let start = (0..n).find(|&i| indegree[i] > 0).expect("a flow is left");
        let mut path = vec![start as u32];
        let mut at = vec![usize::MAX; n];
        at[start] = 0;
        loop {
            let last = *path.last().expect("non-empty");
            let p = preds[last as usize][0];
            if at[p as usize] != usize::MAX {
                let mut cycle: Vec<FlowId> = path[at[p as usize]..]
                    .iter()
                    .rev()
                    .map(|&f| FlowId(f))
                    .collect();
                cycle.push(cycle[0]);
                return Err(DepsError::Cycle(cycle));
            }
            at[p as usize] = path.len();
            path.push(p);
        }
    }
}

fn kind(on: Done) -> usize {
    match on {
        Done::Acked => 0,
        Done::Received => 1,
    }
}

fn edges_of(edges: &[Edge], k: usize) -> usize {
    edges.iter().filter(|e| kind(e.on) == k).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(after: u32, on: Done, flow: u32) -> Edge {
        Edge {
            after: FlowId(after),
            on,
            flow: FlowId(flow),
        }
    }

    fn all(n: u32) -> Wait {
        Wait {
            needed: n,
            delay: Time::ZERO,
        }
    }

    #[test]
    fn dependants_by_kind() {
        let edges = [
            edge(0, Done::Received, 2),
            edge(1, Done::Received, 2),
            edge(0, Done::Acked, 3),
        ];
        let d = Dependencies::new(4, [(FlowId(2), all(2)), (FlowId(3), all(1))], &edges).unwrap();
        assert_eq!(d.dependants(FlowId(0), Done::Received), &[2]);
        assert_eq!(d.dependants(FlowId(0), Done::Acked), &[3]);
        assert_eq!(d.dependants(FlowId(1), Done::Received), &[2]);
        assert!(d.dependants(FlowId(2), Done::Received).is_empty());
        assert_eq!(d.wait(FlowId(2)).unwrap().needed, 2);
        assert_eq!(d.wait(FlowId(0)), None);
        assert_eq!(d.waiting(), 2);
    }

    #[test]
    fn a_cycle_is_named() {
        let edges = [
            edge(0, Done::Received, 1),
            edge(1, Done::Acked, 2),
            edge(2, Done::Received, 1),
        ];
        let err =
            Dependencies::new(3, [(FlowId(1), all(1)), (FlowId(2), all(1))], &edges).unwrap_err();
        let DepsError::Cycle(c) = &err else {
            panic!("{err}")
        };
        assert_eq!(c.first(), c.last());
        assert_eq!(c.len(), 3, "{err}");
        assert!(err.to_string().contains("cycle"), "{err}");
    }

    #[test]
    fn unreachable_and_unwaited_are_refused() {
        let edges = [edge(0, Done::Received, 1)];
        assert!(matches!(
            Dependencies::new(2, [(FlowId(1), all(2))], &edges),
            Err(DepsError::Unreachable {
                needed: 2,
                edges: 1,
                ..
            })
        ));
        assert_eq!(
            Dependencies::new(2, [], &edges),
            Err(DepsError::Unwaited(FlowId(1)))
        );
        assert_eq!(
            Dependencies::new(2, [(FlowId(0), all(1))], &[]),
            Err(DepsError::Unwaited(FlowId(0)))
        );
        assert!(matches!(
            Dependencies::new(2, [(FlowId(1), all(1))], &[edge(5, Done::Acked, 1)]),
            Err(DepsError::OutOfRange { flow: 5, flows: 2 })
        ));
    }

    #[test]
    fn renumbering_moves_every_edge() {
        let edges = [edge(0, Done::Received, 1), edge(1, Done::Acked, 2)];
        let d = Dependencies::new(3, [(FlowId(1), all(1)), (FlowId(2), all(1))], &edges).unwrap();
        // Reverse the list: old 0 -> new 2, old 2 -> new 0.
        let r = d.renumbered(&[2, 1, 0]);
        assert_eq!(r.dependants(FlowId(2), Done::Received), &[1]);
        assert_eq!(r.dependants(FlowId(1), Done::Acked), &[0]);
        assert_eq!(r.wait(FlowId(2)), None);
        assert!(r.wait(FlowId(0)).is_some());
    }
}
