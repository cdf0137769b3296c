//! PayDebt §5.3, Fig. 11: eight flows to eight receivers through one bottleneck, joining one by one and leaving
//! in the same order (`experiments/paydebt-fig11-fairness.toml`). PayDebt shares the bottleneck fairly in every
//! interval between two joins or leaves, ExpressPass less so, and PayDebt's token queue at the bottleneck stays
//! near K_t (one BDP of the data the tokens call for) once three flows share it; PayDebt drops no token.

mod common;

use bfcsim::runner::Outcome;
use bfcsim_core::Time;
use common::run_experiment;

/// The bottleneck's reverse port (the right switch towards the left one) and its debt/token queue.
const TOKEN_QUEUE: &str = "port:33/q1";
/// How long after a join or a leave the shares are left to settle (about 35 base RTTs).
const SETTLE: Time = Time::from_us(300);

fn run(scheme: &str) -> Outcome {
    run_experiment(
        "paydebt-fig11-fairness.toml",
        &[
            &format!("scheme.name={scheme}"),
            "trace.interval=10us",
            "trace.flows=[\"0-7\"]",
            "trace.ports=[\"fabric\"]",
            "trace.queues=true",
        ],
        &[],
    )
}

/// Per interval between two consecutive joins or leaves with at least two flows (from `SETTLE` after its start):
/// the active flows, Jain's index of their mean throughputs, and the token queue's mean bytes; each interval is
/// printed with the sum of the throughputs (`-- --nocapture` shows the numbers in docs/FIDELITY.md).
fn intervals(out: &Outcome) -> Vec<(Vec<usize>, f64, f64)> {
    let trace = &out.trace.as_ref().expect("traced").series;
    let mut events: Vec<Time> = out
        .records
        .iter()
        .flat_map(|r| [r.start, r.finish.expect("every flow finishes")])
        .collect();
    events.sort();
    events
        .windows(2)
        .filter_map(|w| {
            let (lo, hi) = (w[0] + SETTLE, w[1]);
            let active: Vec<usize> = (0..out.records.len())
                .filter(|&i| out.records[i].start <= w[0] && out.records[i].finish.unwrap() >= hi)
                .collect();
            if lo >= hi || active.len() < 2 {
                return None;
            }
            let mut sum = vec![(0.0, 0usize); out.records.len()];
            let (mut tokens, mut samples) = (0.0, 0usize);
            for (t, series, entity, v) in trace.rows() {
                if t < lo || t >= hi {
                    continue;
                }
                if series == "flow.throughput" {
                    let i: usize = entity["flow:".len()..].parse().unwrap();
                    sum[i].0 += v;
                    sum[i].1 += 1;
                } else if series == "queue.bytes" && entity == TOKEN_QUEUE {
                    tokens += v;
                    samples += 1;
                }
            }
            let x: Vec<f64> = active.iter().map(|&i| sum[i].0 / sum[i].1 as f64).collect();
            let (s, s2): (f64, f64) = (x.iter().sum(), x.iter().map(|v| v * v).sum());
            let jain = s * s / (x.len() as f64 * s2);
            let queue = tokens / samples as f64;
            eprintln!(
                "flows {active:?}: Jain {jain:.3}, {s:.2} Gb/s in all, {TOKEN_QUEUE} {queue:.0} B"
            );
            Some((active, jain, queue))
        })
        .collect()
}

#[test]
fn paydebt_shares_one_bottleneck_fairly_and_keeps_its_token_queue_near_k_t() {
    let paydebt = run("paydebt");
    let fcts: Vec<String> = paydebt
        .records
        .iter()
        .map(|r| format!("{:.2}", (r.finish.unwrap() - r.start).0 as f64 / 1e9))
        .collect();
    eprintln!("PayDebt: completion times (ms) {}", fcts.join(", "));
    let spans = intervals(&paydebt);
    assert!(spans.len() >= 12, "{} intervals", spans.len());
    // "Good fairness" (the paper gives no number) read as Jain's index of at least 0.95 in every interval.
    for (active, jain, _) in &spans {
        assert!(
            *jain >= 0.95,
            "PayDebt: Jain's index {jain:.3} with flows {active:?}"
        );
    }
    // K_t: one BDP of data in tokens (one per 1000 B payload), each token a 64 B frame.
    let k_t = paydebt.bdp as f64 / 1000.0 * 64.0;
    for (active, _, queue) in spans.iter().filter(|s| s.0.len() >= 3) {
        assert!(
            (0.5 * k_t..=2.0 * k_t).contains(queue),
            "token queue {queue:.0} B with flows {active:?}, K_t = {k_t:.0} B"
        );
    }
    assert_eq!(paydebt.counters.dropped_pkts, 0, "PayDebt dropped packets");

    // ExpressPass's credits, dropped at the bottleneck's rate limiter, share it less evenly.
    let expresspass = run("expresspass");
    let worst = |s: &[(Vec<usize>, f64, f64)]| s.iter().map(|x| x.1).fold(1.0, f64::min);
    let ep = intervals(&expresspass);
    assert!(
        worst(&ep) < worst(&spans) - 0.05,
        "ExpressPass's worst Jain's index {:.3}, PayDebt's {:.3}",
        worst(&ep),
        worst(&spans)
    );
}
