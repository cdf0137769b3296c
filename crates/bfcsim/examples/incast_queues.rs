//! How incast traffic occupies a switch port's queues (docs/FIDELITY.md, "Figs. 9-11 under incast").
//!
//! Runs an experiment and, every `run.sample_interval`, looks at every switch egress port that holds a packet
//! of an incast flow: how many of its data queues hold incast packets, how many are non-empty, how many are
//! paused by the device downstream, how many packets of other flows wait there, and how many of those wait in a
//! paused queue that also holds incast packets (a short flow that shares a paused incast queue waits for the
//! incast to drain downstream). Ports are grouped by role: ToR to host, ToR to spine, spine to ToR.
//!
//! ```sh
//! cargo run --release --example incast_queues -- experiments/clos128-google-incast-bfc.toml \
//!     --set workload.duration=50ms --set run.sample_interval=10us
//! ```
//!
//! Any `--set key=value` after the experiment file overrides it, as with `bfcsim run`.

use std::path::Path;
use std::process::ExitCode;

use bfcsim::experiment::load_experiment;
use bfcsim::runner::{prepare, simulate};
use bfcsim_net::topology::NodeKind;
use bfcsim_sim::{QueueState, Sim};

/// Sums over the samples of the ports of one role.
#[derive(Default)]
struct Role {
    /// Port samples taken.
    samples: u64,
    /// Samples in which the port held an incast packet; the sums below are over those.
    holding: u64,
    incast_queues: u64,
    most_incast_queues: u64,
    nonempty_queues: u64,
    paused_queues: u64,
    other_packets: u64,
    other_packets_behind_paused_incast: u64,
    flows: u64,
}

const ROLES: [&str; 3] = ["ToR->host", "ToR->spine", "spine->ToR"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: incast_queues EXPERIMENT.toml [--set key=value ...]");
        return ExitCode::FAILURE;
    };
    let overrides: Vec<String> = args[1..]
        .iter()
        .filter(|a| a.as_str() != "--set")
        .cloned()
        .collect();
    match run(Path::new(file), &overrides) {
        Ok(roles) => {
            report(&roles);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(file: &Path, overrides: &[String]) -> Result<[Role; 3], String> {
    let cfg = load_experiment(file, overrides).map_err(|e| e.to_string())?;
    let base = file.parent().unwrap_or(Path::new("."));
    let prepared = prepare(&cfg, base)?;
    let mut roles: [Role; 3] = Default::default();
    simulate(&cfg, prepared, |sim| sample(sim, &mut roles))?;
    Ok(roles)
}

fn sample(sim: &Sim, roles: &mut [Role; 3]) {
    let topo = sim.topology();
    let is_host = |p| topo.nodes[topo.peer_node(p).idx()].kind == NodeKind::Host;
    for s in 0..sim.switch_count() {
        let ports = &topo.nodes[sim.switch_node(s).idx()].ports;
        let tor = ports.iter().any(|&p| is_host(p));
        for &p in ports {
            let role = match (is_host(p), tor) {
                (true, _) => 0,
                (false, true) => 1,
                (false, false) => 2,
            };
            let Some(queues) = sim.port_queues(p) else {
                continue;
            };
            // Queue 0 is the control queue (frames and ACKs).
            let data = &queues[1..];
            let r = &mut roles[role];
            r.samples += 1;
            let incast = data.iter().filter(|q| q.incast_packets > 0).count() as u64;
            if incast == 0 {
                continue;
            }
            r.holding += 1;
            r.incast_queues += incast;
            r.most_incast_queues = r.most_incast_queues.max(incast);
            r.nonempty_queues += data.iter().filter(|q| q.packets > 0).count() as u64;
            r.paused_queues += data.iter().filter(|q| q.paused).count() as u64;
            let other = |q: &QueueState| u64::from(q.packets - q.incast_packets);
            r.other_packets += data.iter().map(other).sum::<u64>();
            r.other_packets_behind_paused_incast += data
                .iter()
                .filter(|q| q.paused && q.incast_packets > 0)
                .map(other)
                .sum::<u64>();
            r.flows += data.iter().map(|q| u64::from(q.flows)).sum::<u64>();
        }
    }
}

fn report(roles: &[Role; 3]) {
    println!(
        "port role  | samples | holding incast | per sample holding incast: queues with incast (most), non-empty, paused | other flows' packets (behind a paused incast queue) | flows"
    );
    for (name, r) in ROLES.iter().zip(roles) {
        let h = r.holding.max(1) as f64;
        println!(
            "{name:<10} | {:>7} | {:>13.1}% | {:.1} ({}), {:.1}, {:.1} | {:.1} ({:.1}) | {:.1}",
            r.samples,
            100.0 * r.holding as f64 / r.samples.max(1) as f64,
            r.incast_queues as f64 / h,
            r.most_incast_queues,
            r.nonempty_queues as f64 / h,
            r.paused_queues as f64 / h,
            r.other_packets as f64 / h,
            r.other_packets_behind_paused_incast as f64 / h,
            r.flows as f64 / h,
        );
    }
}
