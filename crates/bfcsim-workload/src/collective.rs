//! Collectives of distributed training (`[[workload.collective]]`) expanded into flows that wait for each other
//! ([`bfcsim_core::deps`]), each labelled by collective, iteration, step, channel and chunk.
//!
//! ```toml
//! [[workload.collective]]
//! name = "grads"            # reported under this name
//! kind = "all-reduce"       # all-reduce | all-gather | reduce-scatter | broadcast | all-to-all
//! algorithm = "ring"        # all-reduce: ring | tree | halving-doubling; all-to-all: direct | pairwise;
//!                           # all-gather, reduce-scatter, broadcast: ring (the default of every kind's first)
//! size = "16MB"             # the buffer per rank, as NCCL counts it (all-gather: its output)
//! ranks = 64                # the communicator: this many hosts placed by `placement` ...
//! placement = "contiguous"  # contiguous (from `first`) | spread (round robin over racks) | random
//! # hosts = [0, 5, 9]       # ... or exactly these host indices, in rank order
//! chunks = 1                # each step's data in this many pipelined chunks
//! channels = 1              # this many parallel rings/trees, each carrying 1/channels of the data
//! start = "0us"
//! iterations = 1            # repeated; each rank starts iteration k+1 once it has finished k ...
//! compute = "0us"           # ... this much later (the compute between collectives)
//! step_delay = "0us"        # between a rank receiving a step's data and sending the next (the reduction)
//! after = "other"           # optional: each rank starts once it has finished the named collective
//! ```
//!
//! The algorithms follow NCCL's and MPI's (n ranks, S bytes a rank, every transfer one flow):
//!
//! * ring all-reduce: reduce-scatter then all-gather, 2(n-1) steps; at step s rank r sends S/n bytes to rank
//!   r+1 once it has received step s-1's from rank r-1 (`Done::Received`, at the same host).
//! * ring all-gather and reduce-scatter: the same n-1 steps once.
//! * broadcast (ring): the root's data pipelined down the ring, each chunk forwarded once received.
//! * tree all-reduce: NCCL's double binary tree: two trees (the second the first's mirror, `n-1-r`), each
//!   carrying half the data; each chunk reduced up a tree (a rank sends it to its parent once it has it from each
//!   child) and broadcast down (the root once reduced, every rank once it has it from its parent).
//! * halving-doubling all-reduce (Rabenseifner; n a power of two): log2 n exchange steps of recursive halving
//!   (S/2, S/4, ... S/n to the partner `r xor n/2^(k+1)`), then recursive doubling back up (S/n, ... S/2).
//! * all-to-all direct: every rank sends S/n to each other rank at once; pairwise: n-1 steps, at step k rank r
//!   sends to r+k once its step k-1 send is acknowledged (`Done::Acked`, htsim's `gen_serial_alltoall`).
//!
//! A chunk of a step waits only for the same chunk of the step before: the chunks of a step that are ready
//! together share their NIC as its scheduler shares flows. A rank has finished an iteration when the flows of
//! it that nothing else of that iteration waits for are received (those into the rank) and acknowledged
//! (those from it); its first flows of the next iteration (or of the collective named by a later `after`)
//! wait for those, `compute` later.

use bfcsim_core::rng::{Stream, stream};
use bfcsim_core::{Bytes, Done, Edge, FlowId, FlowSpec, NodeId, Time, Wait};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;

/// What a collective computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollectiveKind {
    /// Every rank ends with the sum of every rank's buffer.
    AllReduce,
    /// Every rank ends with every rank's part.
    AllGather,
    /// Every rank ends with its part of the sum.
    ReduceScatter,
    /// Every rank ends with the root's buffer.
    Broadcast,
    /// Every rank sends a distinct part to each other rank.
    AllToAll,
}

/// How a collective moves its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// A ring of the ranks in order.
    Ring,
    /// NCCL's double binary tree (all-reduce).
    Tree,
    /// Recursive halving then doubling (all-reduce, n a power of two).
    HalvingDoubling,
    /// Every transfer at once (all-to-all).
    Direct,
    /// One peer per step (all-to-all).
    Pairwise,
}

/// How a communicator's ranks are placed on the hosts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Consecutive host indices from `first` (whole racks, in order).
    #[default]
    Contiguous,
    /// Round robin over the racks: consecutive ranks in different racks.
    Spread,
    /// A seeded random choice of hosts.
    Random,
}

/// A collective (`[[workload.collective]]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSpec {
    /// Its name in the reports.
    pub name: String,
    /// What it computes.
    pub kind: CollectiveKind,
    /// How it moves data (default: ring, or direct for all-to-all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<Algorithm>,
    /// Bytes per rank.
    pub size: Bytes,
    /// The communicator's size, placed by `placement`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// How `ranks` are placed.
    #[serde(default)]
    pub placement: Placement,
    /// The first host index of a contiguous placement.
    #[serde(default)]
    pub first: u32,
    /// Exactly these host indices, in rank order (instead of `ranks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<u32>>,
    /// The broadcast's root rank.
    #[serde(default)]
    pub root: u32,
    /// Pipelined chunks per step.
    #[serde(default = "one")]
    pub chunks: u32,
    /// Parallel channels.
    #[serde(default = "one")]
    pub channels: u32,
    /// When its first iteration starts.
    #[serde(default)]
    pub start: Time,
    /// Iterations.
    #[serde(default = "one")]
    pub iterations: u32,
    /// Compute time before each iteration after the first (and after `after`).
    #[serde(default)]
    pub compute: Time,
    /// Time between receiving a step's data and sending the next step's.
    #[serde(default)]
    pub step_delay: Time,
    /// A collective each rank finishes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Traffic class of its flows.
    #[serde(default)]
    pub class: u8,
}

fn one() -> u32 {
    1
}

/// Where a collective's flow belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FlowLabel {
    /// The collective, by its position in the experiment.
    pub collective: u16,
    /// The iteration.
    pub iteration: u32,
    /// The step within the iteration (tree: the hop counted from the leaves up, then down).
    pub step: u16,
    /// The channel.
    pub channel: u16,
    /// The chunk.
    pub chunk: u16,
}

/// The flows of every collective of a workload, over ids from 0 in generation order.
#[derive(Clone, Debug, Default)]
pub struct CollectiveFlows {
    /// The flows (a waiting flow's start is its collective's start: a lower bound).
    pub flows: Vec<FlowSpec>,
    /// Each flow's label.
    pub labels: Vec<FlowLabel>,
    /// How the waiting flows start.
    pub waits: Vec<(FlowId, Wait)>,
    /// What they wait for.
    pub edges: Vec<Edge>,
    /// Each collective's communicator, as host indices in rank order.
    pub communicators: Vec<Vec<u32>>,
}

impl CollectiveSpec {
    /// The default algorithm of its kind, or the one set; refused where the kind has no such algorithm.
    pub fn algorithm(&self) -> Result<Algorithm, String> {
        use Algorithm::*;
        use CollectiveKind::*;
        let a = self.algorithm.unwrap_or(match self.kind {
            AllToAll => Direct,
            _ => Ring,
        });
        let ok = match self.kind {
            AllReduce => matches!(a, Ring | Tree | HalvingDoubling),
            AllGather | ReduceScatter | Broadcast => a == Ring,
            AllToAll => matches!(a, Direct | Pairwise),
        };
        if ok {
            Ok(a)
        } else {
            Err(format!(
                "collective `{}`: {} has no algorithm {}",
                self.name,
                self.kind.as_str(),
                a.as_str()
            ))
        }
    }

    /// NCCL's bus-bandwidth factor: busbw = algbw × this (nccl-tests' PERFORMANCE.md).
    pub fn bus_factor(&self, n: usize) -> f64 {
        let n = n as f64;
        match self.kind {
            CollectiveKind::AllReduce => 2.0 * (n - 1.0) / n,
            CollectiveKind::AllGather
            | CollectiveKind::ReduceScatter
            | CollectiveKind::AllToAll => (n - 1.0) / n,
            CollectiveKind::Broadcast => 1.0,
        }
    }

    /// The host indices of its ranks, in rank order.
    fn communicator(
        &self,
        hosts: usize,
        racks: &[u32],
        seed: u64,
        index: u32,
    ) -> Result<Vec<u32>, String> {
        let name = &self.name;
        let list = match (&self.hosts, self.ranks) {
            (Some(_), Some(_)) => {
                return Err(format!("collective `{name}`: set hosts or ranks, not both"));
            }
            (None, None) => {
                return Err(format!(
                    "collective `{name}`: set ranks (a count) or hosts (a list)"
                ));
            }
            (Some(list), None) => list.clone(),
            (None, Some(n)) => {
                if n as usize > hosts {
                    return Err(format!(
                        "collective `{name}`: ranks = {n}, but the topology has {hosts} hosts"
                    ));
                }
                match self.placement {
                    Placement::Contiguous => {
                        if self.first as usize + n as usize > hosts {
                            return Err(format!(
                                "collective `{name}`: hosts {} to {} do not exist (the topology has {hosts})",
                                self.first,
                                self.first + n - 1
                            ));
                        }
                        (self.first..self.first + n).collect()
                    }
                    Placement::Spread => {
                        // Each rack's hosts in order, then rack after rack, round robin.
                        let mut by_rack: std::collections::BTreeMap<u32, Vec<u32>> =
                            Default::default();
                        for (h, &r) in racks.iter().enumerate() {
                            by_rack.entry(r).or_default().push(h as u32);
                        }
                        let columns: Vec<Vec<u32>> = by_rack.into_values().collect();
                        let depth = columns.iter().map(Vec::len).max().unwrap_or(0);
                        (0..depth)
                            .flat_map(|i| columns.iter().filter_map(move |c| c.get(i).copied()))
                            .take(n as usize)
                            .collect()
                    }
                    Placement::Random => {
                        let mut all: Vec<u32> = (0..hosts as u32).collect();
                        let mut rng = stream(seed, Stream::Workload(COLLECTIVE_STREAMS + index));
                        all.shuffle(&mut rng);
                        all.truncate(n as usize);
                        all
                    }
                }
            }
        };
        if list.len() < 2 {
            return Err(format!(
                "collective `{name}`: a communicator needs at least 2 ranks"
            ));
        }
        let mut seen = vec![false; hosts];
        for &h in &list {
            if h as usize >= hosts {
                return Err(format!(
                    "collective `{name}`: host {h} does not exist (the topology has {hosts} hosts, 0 to {})",
                    hosts - 1
                ));
            }
            if std::mem::replace(&mut seen[h as usize], true) {
                return Err(format!(
                    "collective `{name}`: host {h} is in the communicator twice"
                ));
            }
        }
        Ok(list)
    }
}

/// The first RNG stream of the collectives' random placements, beside the groups'.
pub const COLLECTIVE_STREAMS: u32 = 1 << 20;

impl CollectiveKind {
    /// Its name in experiment files.
    pub fn as_str(&self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::AllToAll => "all-to-all",
        }
    }
}

impl Algorithm {
    /// Its name in experiment files.
    pub fn as_str(&self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Direct => "direct",
            Algorithm::Pairwise => "pairwise",
        }
    }
}

/// One transfer as an algorithm states it: ranks, bytes, step, and what it waits for (flows of this
/// iteration, by their position in the iteration's list).
struct Transfer {
    from: usize,
    to: usize,
    bytes: u64,
    step: u16,
    channel: u16,
    chunk: u16,
    after: Vec<(usize, Done)>,
}

impl Transfer {
    /// A transfer at (step, channel, chunk) that waits for at most one other.
    fn new(
        (from, to, bytes): (usize, usize, u64),
        (step, channel, chunk): (usize, usize, usize),
        after: Option<(usize, Done)>,
    ) -> Transfer {
        Transfer {
            from,
            to,
            bytes,
            step: step as u16,
            channel: channel as u16,
            chunk: chunk as u16,
            after: after.into_iter().collect(),
        }
    }
}

/// The transfers of one iteration of `spec` over `n` ranks.
fn transfers(spec: &CollectiveSpec, n: usize) -> Result<Vec<Transfer>, String> {
    let (chunks, channels) = (spec.chunks as usize, spec.channels as usize);
    if chunks == 0 || channels == 0 {
        return Err(format!(
            "collective `{}`: chunks and channels must be at least 1",
            spec.name
        ));
    }
    let mut out: Vec<Transfer> = Vec::new();
    let s = spec.size.0;
    let parts = |total: u64, k: usize, i: usize| {
        total / k as u64 + u64::from((i as u64) < total % k as u64)
    };
    // Bytes of (channel, chunk) of a piece of `piece` bytes.
    let split = |piece: u64, ch: usize, c: usize| parts(parts(piece, channels, ch), chunks, c);
    // The ring's and halving-doubling's transfers in step-major order: (step, channel, chunk, rank) is at
    // ((step * channels + ch) * chunks + c) * n + r.
    let idx =
        |step: usize, ch: usize, c: usize, r: usize| ((step * channels + ch) * chunks + c) * n + r;
    match spec.algorithm()? {
        Algorithm::Ring if spec.kind == CollectiveKind::Broadcast => {
            let root = spec.root as usize;
            if root >= n {
                return Err(format!(
                    "collective `{}`: root {root} is not a rank (0 to {})",
                    spec.name,
                    n - 1
                ));
            }
            // index of (channel, chunk, hop) = ((ch * chunks) + c) * (n - 1) + hop
            for ch in 0..channels {
                for c in 0..chunks {
                    for hop in 0..n - 1 {
                        let before = (hop > 0).then(|| (out.len() - 1, Done::Received));
                        let ends = ((root + hop) % n, (root + hop + 1) % n, split(s, ch, c));
                        out.push(Transfer::new(ends, (hop, ch, c), before));
                    }
                }
            }
        }
        Algorithm::Ring => {
            let steps = match spec.kind {
                CollectiveKind::AllReduce => 2 * (n - 1),
                _ => n - 1,
            };
            for step in 0..steps {
                for ch in 0..channels {
                    for c in 0..chunks {
                        for r in 0..n {
                            // The piece rank r sends at this step: one n-th of the buffer.
                            let piece = parts(s, n, (r + n - step % (n - 1)) % n);
                            let left = (r + n - 1) % n;
                            let before =
                                (step > 0).then(|| (idx(step - 1, ch, c, left), Done::Received));
                            let ends = (r, (r + 1) % n, split(piece, ch, c));
                            out.push(Transfer::new(ends, (step, ch, c), before));
                        }
                    }
                }
            }
        }
        Algorithm::HalvingDoubling => {
            if !n.is_power_of_two() {
                return Err(format!(
                    "collective `{}`: halving-doubling needs a power-of-two communicator, not {n} ranks",
                    spec.name
                ));
            }
            let k = n.trailing_zeros() as usize;
            // Steps 0..k halve (partner r ^ n/2^(s+1), S/2^(s+1) bytes); steps k..2k double back.
            for step in 0..2 * k {
                let level = if step < k { step } else { 2 * k - 1 - step };
                let dist = n >> (level + 1);
                let bytes = s >> (level + 1);
                if bytes == 0 {
                    return Err(format!(
                        "collective `{}`: {s} B is too small to halve {k} times",
                        spec.name
                    ));
                }
                for ch in 0..channels {
                    for c in 0..chunks {
                        for r in 0..n {
                            // What r sends at this step it has combined from what it received at the
                            // step before, from that step's partner.
                            let before = (step > 0).then(|| {
                                let prev = if step - 1 < k {
                                    n >> step
                                } else {
                                    n >> (2 * k - step + 1)
                                };
                                (idx(step - 1, ch, c, r ^ prev), Done::Received)
                            });
                            let ends = (r, r ^ dist, split(bytes, ch, c));
                            out.push(Transfer::new(ends, (step, ch, c), before));
                        }
                    }
                }
            }
        }
        Algorithm::Tree => tree_transfers(spec, n, &mut out, &split),
        a @ (Algorithm::Direct | Algorithm::Pairwise) => {
            // Pairwise: the index of (rank, step k in 1..n, channel, chunk) is
            // ((r * (n-1) + k-1) * channels + ch) * chunks + c, and step k waits for step k-1's send.
            let pairwise = a == Algorithm::Pairwise;
            let by_rank = |r: usize, k: usize, ch: usize, c: usize| {
                ((r * (n - 1) + k - 1) * channels + ch) * chunks + c
            };
            for r in 0..n {
                for k in 1..n {
                    let to = (r + k) % n;
                    for ch in 0..channels {
                        for c in 0..chunks {
                            let before = (pairwise && k > 1)
                                .then(|| (by_rank(r, k - 1, ch, c), Done::Acked));
                            let step = if pairwise { k - 1 } else { 0 };
                            let ends = (r, to, split(parts(s, n, to), ch, c));
                            out.push(Transfer::new(ends, (step, ch, c), before));
                        }
                    }
                }
            }
        }
    }
    if let Some(t) = out.iter().find(|t| t.bytes == 0) {
        return Err(format!(
            "collective `{}`: {s} B split over {n} ranks, {channels} channels and {chunks} chunks leaves a \
             transfer of rank {} empty; use a larger size or fewer chunks",
            spec.name, t.from
        ));
    }
    Ok(out)
}

/// NCCL's double binary tree: tree 0 an in-order binary tree of the ranks, tree 1 its mirror; each carries half
/// of every channel's data, reduced up and broadcast down, chunk by chunk.
fn tree_transfers(
    spec: &CollectiveSpec,
    n: usize,
    out: &mut Vec<Transfer>,
    split: &dyn Fn(u64, usize, usize) -> u64,
) {
    let (chunks, channels) = (spec.chunks as usize, spec.channels as usize);
    for tree in 0..2 {
        let rank = |v: usize| if tree == 0 { v } else { n - 1 - v };
        let parent = in_order_parents(n);
        let depth = depths(&parent);
        let height = depth.iter().copied().max().unwrap_or(0);
        let root = parent.iter().position(Option::is_none).expect("a root");
        let half = if tree == 0 {
            spec.size.0.div_ceil(2)
        } else {
            spec.size.0 / 2
        };
        for ch in 0..channels {
            for c in 0..chunks {
                let bytes = split(half, ch, c);
                // Up: node v sends to its parent once it has the chunk from each child.
                let mut up = vec![usize::MAX; n];
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by_key(|&v| std::cmp::Reverse(depth[v]));
                for &v in &order {
                    let Some(p) = parent[v] else { continue };
                    let after = (0..n)
                        .filter(|&u| parent[u] == Some(v))
                        .map(|u| (up[u], Done::Received))
                        .collect();
                    up[v] = out.len();
                    out.push(Transfer {
                        from: rank(v),
                        to: rank(p),
                        bytes,
                        step: (height - depth[v]) as u16,
                        channel: (tree * channels + ch) as u16,
                        chunk: c as u16,
                        after,
                    });
                }
                // Down: the root once reduced (it has the chunk from its children), every other node once it
                // has it from its parent.
                let mut down = vec![usize::MAX; n];
                order.reverse();
                for &v in &order {
                    let Some(p) = parent[v] else { continue };
                    let after = if p == root {
                        (0..n)
                            .filter(|&u| parent[u] == Some(root))
                            .map(|u| (up[u], Done::Received))
                            .collect()
                    } else {
                        vec![(down[p], Done::Received)]
                    };
                    down[v] = out.len();
                    out.push(Transfer {
                        from: rank(p),
                        to: rank(v),
                        bytes,
                        step: (height + depth[v] - 1) as u16,
                        channel: (tree * channels + ch) as u16,
                        chunk: c as u16,
                        after,
                    });
                }
            }
        }
    }
}

/// The parent of each node of the balanced in-order binary tree over 0..n (the middle as the root).
fn in_order_parents(n: usize) -> Vec<Option<usize>> {
    fn build(lo: usize, hi: usize, parent: Option<usize>, out: &mut [Option<usize>]) {
        if lo >= hi {
            return;
        }
        let mid = (lo + hi) / 2;
        out[mid] = parent;
        build(lo, mid, Some(mid), out);
        build(mid + 1, hi, Some(mid), out);
    }
    let mut out = vec![None; n];
    build(0, n, None, &mut out);
    out
}

fn depths(parent: &[Option<usize>]) -> Vec<usize> {
    (0..parent.len())
        .map(|mut v| {
            let mut d = 0;
            while let Some(p) = parent[v] {
                v = p;
                d += 1;
            }
            d
        })
        .collect()
}

/// The flows of `specs` on the topology's `hosts` (node ids by host index) and `racks` (each host's rack).
pub fn collectives(
    specs: &[CollectiveSpec],
    hosts: &[NodeId],
    racks: &[u32],
    seed: u64,
) -> Result<CollectiveFlows, WorkloadError> {
    let mut out = CollectiveFlows::default();
    let err = WorkloadError::Invalid;
    // Each collective's last iteration's ending flows by rank (host index), for a later `after`.
    let mut ends: Vec<Vec<Vec<(u32, Done)>>> = Vec::new();
    for (ci, spec) in specs.iter().enumerate() {
        if specs[..ci].iter().any(|s| s.name == spec.name) {
            return Err(err(format!("two collectives are named `{}`", spec.name)));
        }
        if spec.iterations == 0 {
            return Err(err(format!(
                "collective `{}`: iterations must be at least 1",
                spec.name
            )));
        }
        let comm = spec
            .communicator(hosts.len(), racks, seed, ci as u32)
            .map_err(err)?;
        let n = comm.len();
        let plan = transfers(spec, n).map_err(err)?;
        let before = match &spec.after {
            None => None,
            Some(name) => match specs[..ci].iter().position(|s| &s.name == name) {
                Some(j) => Some(j),
                None => {
                    return Err(err(format!(
                        "collective `{}`: after = \"{name}\" names no collective before it",
                        spec.name
                    )));
                }
            },
        };
        // Which flows of an iteration nothing in it waits for, by kind, and which wait for nothing.
        let mut waited = vec![false; plan.len()];
        for t in &plan {
            for &(p, _) in &t.after {
                waited[p] = true;
            }
        }
        let mut prev_ends: Vec<Vec<(u32, Done)>> = match before {
            Some(j) => {
                let mut by_host = vec![Vec::new(); n];
                for (r, &h) in comm.iter().enumerate() {
                    if let Some(pos) = specs_comm_rank(&out.communicators[j], h) {
                        by_host[r] = ends[j][pos].clone();
                    }
                }
                by_host
            }
            None => vec![Vec::new(); n],
        };
        for it in 0..spec.iterations {
            let base = out.flows.len() as u32;
            let mut this_ends: Vec<Vec<(u32, Done)>> = vec![Vec::new(); n];
            for (i, t) in plan.iter().enumerate() {
                let id = base + i as u32;
                let mut f = FlowSpec::new(
                    hosts[comm[t.from] as usize].0,
                    hosts[comm[t.to] as usize].0,
                    t.bytes,
                    spec.start,
                );
                f.class = spec.class;
                out.flows.push(f);
                out.labels.push(FlowLabel {
                    collective: ci as u16,
                    iteration: it,
                    step: t.step,
                    channel: t.channel,
                    chunk: t.chunk,
                });
                let mut needed = 0;
                for &(p, on) in &t.after {
                    out.edges.push(Edge {
                        after: FlowId(base + p as u32),
                        on,
                        flow: FlowId(id),
                    });
                    needed += 1;
                }
                let mut delay = spec.step_delay;
                if t.after.is_empty() {
                    // An entry flow: it waits for its rank's end of the iteration (or collective) before.
                    for &(p, on) in &prev_ends[t.from] {
                        out.edges.push(Edge {
                            after: FlowId(p),
                            on,
                            flow: FlowId(id),
                        });
                        needed += 1;
                    }
                    delay = spec.compute;
                }
                if needed > 0 {
                    out.waits.push((FlowId(id), Wait { needed, delay }));
                }
                if !waited[i] {
                    this_ends[t.to].push((id, Done::Received));
                    this_ends[t.from].push((id, Done::Acked));
                }
            }
            prev_ends = this_ends;
        }
        ends.push(prev_ends);
        out.communicators.push(comm);
    }
    Ok(out)
}

fn specs_comm_rank(comm: &[u32], host: u32) -> Option<usize> {
    comm.iter().position(|&h| h == host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::Dependencies;

    fn spec(
        kind: CollectiveKind,
        algorithm: Option<Algorithm>,
        n: u32,
        size: u64,
    ) -> CollectiveSpec {
        CollectiveSpec {
            name: "c".into(),
            kind,
            algorithm,
            size: Bytes(size),
            ranks: Some(n),
            placement: Placement::Contiguous,
            first: 0,
            hosts: None,
            root: 0,
            chunks: 1,
            channels: 1,
            start: Time::ZERO,
            iterations: 1,
            compute: Time::ZERO,
            step_delay: Time::ZERO,
            after: None,
            class: 0,
        }
    }

    fn build(specs: &[CollectiveSpec], hosts: u32) -> CollectiveFlows {
        let ids: Vec<NodeId> = (0..hosts).map(NodeId).collect();
        let racks: Vec<u32> = (0..hosts).map(|h| h / 4).collect();
        let c = collectives(specs, &ids, &racks, 1).unwrap();
        Dependencies::new(c.flows.len(), c.waits.clone(), &c.edges).expect("a valid graph");
        c
    }

    #[test]
    fn ring_all_reduce_has_2_n_minus_1_steps_of_s_over_n() {
        let c = build(&[spec(CollectiveKind::AllReduce, None, 8, 8_000)], 8);
        assert_eq!(c.flows.len(), 2 * 7 * 8);
        assert!(c.flows.iter().all(|f| f.size.0 == 1000));
        let steps: std::collections::BTreeSet<u16> = c.labels.iter().map(|l| l.step).collect();
        assert_eq!(steps.len(), 14);
        // Each flow after the first step waits for one: the left neighbour's, received.
        assert_eq!(c.waits.len(), 13 * 8);
        assert!(c.edges.iter().all(|e| e.on == Done::Received));
        for e in &c.edges {
            let (a, b) = (&c.flows[e.after.idx()], &c.flows[e.flow.idx()]);
            assert_eq!(a.dst, b.src, "the rank that received sends next");
        }
    }

    #[test]
    fn halving_doubling_steps_and_bytes_are_exact() {
        let c = build(
            &[spec(
                CollectiveKind::AllReduce,
                Some(Algorithm::HalvingDoubling),
                16,
                1 << 20,
            )],
            16,
        );
        // 2 log2 16 = 8 steps, 16 flows each, bytes S/2, S/4, S/8, S/16, then back up.
        assert_eq!(c.flows.len(), 8 * 16);
        for step in 0..8u16 {
            let sizes: Vec<u64> = c
                .flows
                .iter()
                .zip(&c.labels)
                .filter(|(_, l)| l.step == step)
                .map(|(f, _)| f.size.0)
                .collect();
            let level = if step < 4 { step } else { 7 - step };
            assert_eq!(sizes, vec![(1u64 << 20) >> (level + 1); 16], "step {step}");
        }
        // Each rank exchanges with one partner per step, both ways.
        for step in 0..8u16 {
            for (f, _) in c
                .flows
                .iter()
                .zip(&c.labels)
                .filter(|(_, l)| l.step == step)
            {
                assert!(
                    c.flows
                        .iter()
                        .zip(&c.labels)
                        .any(|(g, l)| l.step == step && g.src == f.dst && g.dst == f.src)
                );
            }
        }
        let odd = spec(
            CollectiveKind::AllReduce,
            Some(Algorithm::HalvingDoubling),
            12,
            1 << 20,
        );
        let ids: Vec<NodeId> = (0..16).map(NodeId).collect();
        let e = collectives(&[odd], &ids, &[0; 16], 1).unwrap_err();
        assert!(e.to_string().contains("power-of-two"), "{e}");
    }

    #[test]
    fn tree_all_reduce_moves_each_half_up_and_down_every_edge() {
        let n = 7;
        let c = build(
            &[spec(
                CollectiveKind::AllReduce,
                Some(Algorithm::Tree),
                n,
                14_000,
            )],
            n,
        );
        // Two trees of n-1 edges, each edge once up and once down.
        assert_eq!(c.flows.len(), 2 * 2 * (n as usize - 1));
        assert_eq!(
            c.flows.iter().map(|f| f.size.0).sum::<u64>(),
            2 * (n as u64 - 1) * 14_000
        );
    }

    #[test]
    fn all_to_all_direct_and_pairwise() {
        let direct = build(&[spec(CollectiveKind::AllToAll, None, 5, 5_000)], 5);
        assert_eq!(direct.flows.len(), 20);
        assert!(direct.waits.is_empty());
        let pairwise = build(
            &[spec(
                CollectiveKind::AllToAll,
                Some(Algorithm::Pairwise),
                5,
                5_000,
            )],
            5,
        );
        assert_eq!(pairwise.flows.len(), 20);
        assert_eq!(pairwise.waits.len(), 5 * 3);
        assert!(pairwise.edges.iter().all(|e| e.on == Done::Acked));
    }

    #[test]
    fn iterations_and_after_chain_at_each_rank() {
        let mut a = spec(CollectiveKind::AllReduce, None, 4, 4_000);
        a.iterations = 2;
        a.compute = Time::from_us(10);
        let mut b = spec(CollectiveKind::AllGather, None, 4, 4_000);
        b.name = "b".into();
        b.after = Some("c".into());
        let c = build(&[a, b], 4);
        // Iteration 1's first flows wait 10 us after their rank's end of iteration 0.
        let entry: Vec<_> = c
            .waits
            .iter()
            .filter(|(f, _)| c.labels[f.idx()].iteration == 1 && c.labels[f.idx()].step == 0)
            .collect();
        assert_eq!(entry.len(), 4);
        assert!(
            entry
                .iter()
                .all(|(_, w)| w.delay == Time::from_us(10) && w.needed == 2)
        );
        let unknown = CollectiveSpec {
            after: Some("nope".into()),
            ..spec(CollectiveKind::AllGather, None, 4, 4_000)
        };
        let ids: Vec<NodeId> = (0..4).map(NodeId).collect();
        assert!(collectives(&[unknown], &ids, &[0; 4], 1).is_err());
    }

    #[test]
    fn communicators_are_checked() {
        let ids: Vec<NodeId> = (0..4).map(NodeId).collect();
        let mut s = spec(CollectiveKind::AllReduce, None, 8, 8_000);
        assert!(
            collectives(&[s.clone()], &ids, &[0; 4], 1)
                .unwrap_err()
                .to_string()
                .contains("4 hosts")
        );
        s.ranks = None;
        s.hosts = Some(vec![0, 1, 1]);
        assert!(
            collectives(&[s.clone()], &ids, &[0; 4], 1)
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        s.hosts = Some(vec![0, 9]);
        assert!(
            collectives(&[s], &ids, &[0; 4], 1)
                .unwrap_err()
                .to_string()
                .contains("host 9")
        );
    }
}
