//! Issue 70: collectives that htsim's own generators wrote (a ring all-reduce and a serial all-to-all, with
//! triggers), run by bfcsim's `ndp` preset, against htsim's NDP on the same matrices
//! (`data/reference/htsim-collectives`, made by `scripts/htsim/ndp-xval.sh` with `CM=`): the flows' FCT
//! percentiles and the collectives' mean completion time within 10% of htsim's.

mod common;

use std::collections::BTreeMap;

use bfcsim_core::{Done, FlowId, NodeId};
use common::{TempDir, bfcsim_ok, gunzip, s, workspace_root};

/// Nearest-rank percentile of sorted `v`.
fn pct(v: &[f64], p: f64) -> f64 {
    v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

struct Outcome {
    /// Per flow in file order: (start, finish) in ns.
    spans: Vec<(f64, f64)>,
}

/// bfcsim's run of matrix `text` (file order, by the stable start sort bfcsim numbers flows in).
fn bfcsim_run(name: &str, text: &str, starts: &[u64]) -> Outcome {
    let dir = TempDir::new(name);
    dir.write("m.cm", text);
    let experiment = dir.write(
        "x.toml",
        "name = \"x\"\nseed = 1\n[topology]\nkind = \"fat-tree\"\nk = 8\n[scheme]\nname = \"ndp\"\n\
         [flows]\nfile = \"m.cm\"\n[run]\nmax_time = \"20000us\"\n",
    );
    let out = dir.join("out");
    bfcsim_ok(&[
        "run",
        s(&experiment),
        "--out",
        s(&out),
        "--outputs",
        "fct.csv,summary.json",
    ]);
    let csv = std::fs::read_to_string(out.join("fct.csv")).unwrap();
    let rows: Vec<(f64, f64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (
                c[4].parse().unwrap(),
                c[5].parse().expect("every flow finished"),
            )
        })
        .collect();
    let mut order: Vec<usize> = (0..starts.len()).collect();
    order.sort_by_key(|&i| starts[i]);
    let mut spans = vec![(0.0, 0.0); starts.len()];
    for (sorted, &file) in order.iter().enumerate() {
        spans[file] = rows[sorted];
    }
    Outcome { spans }
}

/// The flows' FCTs (sorted) and each group's completion time (flows grouped by the hosts they connect).
fn measures(flows: &[(u32, u32)], spans: &[(f64, f64)]) -> (Vec<f64>, Vec<f64>) {
    let mut fcts: Vec<f64> = spans.iter().map(|(a, b)| b - a).collect();
    fcts.sort_by(f64::total_cmp);
    let mut parent: BTreeMap<u32, u32> = BTreeMap::new();
    fn find(p: &mut BTreeMap<u32, u32>, x: u32) -> u32 {
        let mut r = x;
        while p[&r] != r {
            r = p[&r];
        }
        p.insert(x, r);
        r
    }
    for &(a, b) in flows {
        parent.entry(a).or_insert(a);
        parent.entry(b).or_insert(b);
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        parent.insert(ra, rb);
    }
    let mut groups: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    for (&(a, _), &(s0, f)) in flows.iter().zip(spans) {
        let g = find(&mut parent, a);
        let e = groups.entry(g).or_insert((f64::INFINITY, 0.0));
        *e = (e.0.min(s0), e.1.max(f));
    }
    (fcts, groups.values().map(|(s0, f)| f - s0).collect())
}

#[test]
fn htsim_generated_collectives_match_htsim() {
    let data = workspace_root().join("data/reference/htsim-collectives");
    for name in ["allreduce-ring8", "alltoall-serial16"] {
        let text = gunzip(&data.join(format!("{name}.cm.gz")));
        let hosts: Vec<NodeId> = (0..128).map(NodeId).collect();
        let m = bfcsim_workload::parse_connection_matrix(&text, "m.cm", &hosts).unwrap();
        let starts: Vec<u64> = m.flows.iter().map(|f| f.start.ps()).collect();
        let ends: Vec<(u32, u32)> = m.flows.iter().map(|f| (f.src.0, f.dst.0)).collect();
        // htsim prints each flow's finish (µs) by its `id`, which these files number 1, 2, ... in file order.
        let fin = gunzip(&data.join(format!("{name}.htsim-ndp.seed1.fin.gz")));
        let mut finish = vec![f64::NAN; m.flows.len()];
        for l in fin.lines() {
            let (id, t) = l.split_once(' ').unwrap();
            finish[id.parse::<usize>().unwrap() - 1] = t.parse::<f64>().unwrap() * 1000.0;
        }
        // A triggered flow starts in htsim when the needed-th of its activators' senders finish (all are
        // send_done one-shot triggers here).
        let mut activators: Vec<Vec<f64>> = vec![Vec::new(); m.flows.len()];
        for (a, &done) in finish.iter().enumerate() {
            for &t in m.deps.dependants(FlowId::from_idx(a), Done::Acked) {
                activators[t as usize].push(done);
            }
        }
        let htsim: Vec<(f64, f64)> = (0..m.flows.len())
            .map(|i| match m.deps.wait(FlowId::from_idx(i)) {
                None => (starts[i] as f64 / 1000.0, finish[i]),
                Some(w) => {
                    let mut a = activators[i].clone();
                    a.sort_by(f64::total_cmp);
                    (a[w.needed as usize - 1], finish[i])
                }
            })
            .collect();
        assert!(
            htsim.iter().all(|(a, b)| a.is_finite() && b.is_finite()),
            "{name}: htsim finished every flow"
        );
        let ours = bfcsim_run(name, &text, &starts);
        let (hf, hc) = measures(&ends, &htsim);
        let (bf, bc) = measures(&ends, &ours.spans);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let rows = [
            ("FCT p50", pct(&hf, 0.5), pct(&bf, 0.5)),
            ("FCT p99", pct(&hf, 0.99), pct(&bf, 0.99)),
            ("mean CCT", mean(&hc), mean(&bc)),
        ];
        for (what, h, b) in rows {
            let r = b / h;
            assert!(
                (0.9..=1.1).contains(&r),
                "{name}: {what} htsim {h:.0} ns, bfcsim {b:.0} ns ({r:.3})"
            );
        }
    }
}
