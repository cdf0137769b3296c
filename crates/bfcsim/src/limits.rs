//! `[limits]`: what a run may ask of the machine. Before anything large is allocated, the runner estimates the
//! memory a run needs (from its node, host and flow counts) and the buffer samples it takes, and refuses a run
//! above these bounds with the estimate, instead of aborting or swapping half-way. The workload generator also
//! stops at the flow count the memory bound allows, for arrival processes whose mean says little about one run
//! (a lognormal with a large σ).
//!
//! The per-item costs are measured (`bfcsim run` of the main job: 940,000 flows in 238 MB on one thread, 321 MB
//! on two; fat trees of k = 16 to 48 with one flow: 9 to 20 B per (switch, host) pair of routing and port
//! state, 15 MB to 746 MB in all; the tests hold the estimate within 2x of each). They are estimates: a bound is
//! a guard against mistakes (a load of 600 for 0.6, a duration in seconds for microseconds), not an accounting.

use bfcsim_core::Bytes;
use serde::{Deserialize, Serialize};

/// Memory per flow on one thread: its specification, the engine's sender and receiver state, its record.
const FLOW_BYTES: f64 = 260.0;
/// Memory per flow for each further thread (each shard keeps the flows' specifications and paths).
const FLOW_BYTES_PER_SHARD: f64 = 100.0;
/// Routing and port state per (switch, host) pair, in every shard.
const ROUTE_BYTES: f64 = 12.0;
/// Everything else: the binary, the smallest fabric's ports and queues, buffers of output files (a 3-host
/// star's run peaks at 8.7 MB).
const BASE_BYTES: f64 = 10e6;

/// `[limits]`: bounds a run's estimated demands must stay within. Neither changes a result, so neither is
/// part of a run's identity in the run store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Memory a run may need by the estimate. Default: this machine's physical memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<Bytes>,
    /// Samples of switch buffers a run may take (every `run.sample_interval` over the arrival window, per
    /// switch): each costs time, however short the run.
    pub samples: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            memory: None,
            samples: 100_000_000,
        }
    }
}

/// What a run will need, as far as it is known before it is built.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Demand {
    /// Flows (expected, for a synthetic workload).
    pub flows: f64,
    /// Nodes of the fabric.
    pub nodes: u64,
    /// Hosts of the fabric.
    pub hosts: u64,
    /// Threads the run is split over.
    pub threads: u64,
    /// Buffer samples.
    pub samples: f64,
}

impl Demand {
    /// Estimated peak memory in bytes.
    pub fn memory(&self) -> f64 {
        let shards = self.threads.max(1) as f64;
        BASE_BYTES
            + self.flows * (FLOW_BYTES + FLOW_BYTES_PER_SHARD * (shards - 1.0))
            + self.nodes.saturating_sub(self.hosts) as f64
                * self.hosts as f64
                * ROUTE_BYTES
                * shards
    }
}

impl LimitsConfig {
    /// The memory bound: `memory`, or this machine's physical memory.
    pub fn memory_bound(&self) -> (u64, &'static str) {
        match self.memory {
            Some(b) => (b.0, "limits.memory"),
            None => (physical_memory(), "this machine's memory (limits.memory)"),
        }
    }

    /// Checks `demand` against the bounds; the error gives the estimate and what to change.
    pub fn check(&self, demand: &Demand) -> Result<(), String> {
        let (bound, what) = self.memory_bound();
        let need = demand.memory();
        if need > bound as f64 {
            return Err(format!(
                "the run would need about {} of memory ({} flows, {} switch{} x {} hosts of routing state, {} \
                 thread{}), more than the {} of {what}: shorten workload.duration, lower workload.load or the \
                 fabric's size, or raise limits.memory",
                human_bytes(need),
                count(demand.flows),
                demand.nodes.saturating_sub(demand.hosts),
                if demand.nodes.saturating_sub(demand.hosts) == 1 {
                    ""
                } else {
                    "es"
                },
                demand.hosts,
                demand.threads.max(1),
                if demand.threads > 1 { "s" } else { "" },
                human_bytes(bound as f64),
            ));
        }
        if demand.samples > self.samples as f64 {
            return Err(format!(
                "the run would take about {} buffer samples (run.sample_interval over the arrival window, per \
                 switch), more than limits.samples = {}: lengthen run.sample_interval or raise limits.samples",
                count(demand.samples),
                self.samples
            ));
        }
        Ok(())
    }

    /// The most flows a workload may generate: as many as the memory bound leaves room for beside `fixed`
    /// (the same demand without flows).
    pub fn max_flows(&self, fixed: &Demand) -> u64 {
        let (bound, _) = self.memory_bound();
        let with = |flows| Demand { flows, ..*fixed }.memory();
        let per_flow = with(1.0) - with(0.0);
        ((bound as f64 - with(0.0)).max(0.0) / per_flow) as u64
    }
}

/// A count as a person reads it: whole below ten million, else `1.23e9`.
fn count(n: f64) -> String {
    if n < 1e7 {
        format!("{n:.0}")
    } else {
        format!("{n:.2e}")
    }
}

/// Bytes in the unit a person reads (`1.2 GB`).
fn human_bytes(b: f64) -> String {
    match b {
        b if b >= 1e15 => format!("{b:.1e} B"),
        b if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b => format!("{:.0} MB", b / 1e6),
    }
}

/// Watches the process's resident memory while a run simulates, a few times a second: past this machine's
/// memory the run is stopped with an error. `limits.memory` bounds the estimate before a run starts; raising
/// it past an estimate that is too cautious does not switch this off. (The whole process is watched, every
/// run a sweep holds at once, so the machine's memory is its bound, not one run's `limits.memory`.)
pub struct MemoryGuard {
    bound: u64,
    what: &'static str,
    next: std::time::Instant,
}

/// How often [`MemoryGuard::check`] reads the resident memory.
const GUARD_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

impl MemoryGuard {
    /// The guard of a run on this machine.
    pub fn for_this_machine() -> MemoryGuard {
        MemoryGuard::with_bound(physical_memory(), "this machine's memory")
    }

    fn with_bound(bound: u64, what: &'static str) -> MemoryGuard {
        MemoryGuard {
            bound,
            what,
            next: std::time::Instant::now(),
        }
    }

    /// An error once the process holds more than the bound (read at most four times a second).
    pub fn check(&mut self) -> Result<(), String> {
        let now = std::time::Instant::now();
        if now < self.next {
            return Ok(());
        }
        self.next = now + GUARD_EVERY;
        match resident_memory() {
            Some(rss) if rss > self.bound => Err(format!(
                "the run was stopped holding {} of memory, more than the {} of {}: shorten \
                 workload.duration, lower workload.load or the fabric's size",
                human_bytes(rss as f64),
                human_bytes(self.bound as f64),
                self.what
            )),
            _ => Ok(()),
        }
    }
}

/// The process's resident memory from `/proc/self/status` (Linux, in kB there whatever the page size); `None`
/// where it cannot be read.
fn resident_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Physical memory from `/proc/meminfo` (Linux); 16 GB where it cannot be read.
fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(16_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_job_fits_and_a_thousandfold_load_does_not() {
        let limits = LimitsConfig {
            memory: Some(Bytes(8_000_000_000)),
            ..LimitsConfig::default()
        };
        let main = Demand {
            flows: 940_000.0,
            nodes: 144,
            hosts: 128,
            threads: 1,
            samples: 8_000.0,
        };
        assert!(limits.check(&main).is_ok());
        let e = limits
            .check(&Demand {
                flows: 940_000_000.0,
                ..main
            })
            .unwrap_err();
        assert!(
            e.contains("about 244.4 GB") && e.contains("8.0 GB of limits.memory"),
            "{e}"
        );
        let e = limits
            .check(&Demand {
                samples: 1e12,
                ..main
            })
            .unwrap_err();
        assert!(e.contains("limits.samples"), "{e}");
        let most = limits.max_flows(&main);
        assert!((30_000_000..31_000_000).contains(&most), "{most}");
    }

    #[test]
    fn the_guard_stops_a_run_past_the_machine_s_memory() {
        if resident_memory().is_none() {
            return;
        }
        let e = MemoryGuard::with_bound(1_000_000, "this machine's memory")
            .check()
            .unwrap_err();
        assert!(
            e.contains("more than the 1 MB of this machine's memory"),
            "{e}"
        );
        let mut guard = MemoryGuard::for_this_machine();
        assert_eq!(guard.bound, physical_memory());
        assert!(guard.check().is_ok());
    }

    /// Issue 72: a k = 48 fat tree was refused at an estimate of 33.8 GB and ran in 746 MB. Peaks measured
    /// with `/usr/bin/time -f %M bfcsim run experiments/bench-ft128-websearch.toml --set topology.k=K --set
    /// workload.duration=2us --set limits.memory=200GB` (one to 119 flows), the bench scenarios with
    /// `--set workload.duration=1ms --set run.threads=1`, and the main job as its README shows it.
    #[test]
    fn estimates_are_within_twice_the_measured_peaks() {
        let fat_tree = |k: u64, flows: f64| Demand {
            flows,
            nodes: k * k * k / 4 + 5 * k * k / 4,
            hosts: k * k * k / 4,
            threads: 1,
            samples: 0.0,
        };
        let clos128 = |flows: f64, threads: u64| Demand {
            flows,
            nodes: 144,
            hosts: 128,
            threads,
            samples: 0.0,
        };
        let measured: [(&str, Demand, f64); 8] = [
            ("fat tree k = 16", fat_tree(16, 1.0), 15.2e6),
            ("fat tree k = 24", fat_tree(24, 17.0), 43.8e6),
            ("fat tree k = 32", fat_tree(32, 35.0), 128.8e6),
            ("fat tree k = 48", fat_tree(48, 119.0), 746.5e6),
            ("bench clos128, 1 ms", clos128(175_263.0, 1), 60.0e6),
            ("bench ft1024, 1 ms", fat_tree(16, 2_209.0), 21.1e6),
            ("main job, one thread", clos128(940_234.0, 1), 238e6),
            ("main job, two threads", clos128(940_234.0, 2), 321e6),
        ];
        for (what, demand, peak) in measured {
            let ratio = demand.memory() / peak;
            assert!(
                (0.5..=2.0).contains(&ratio),
                "{what}: estimated {:.0} MB against {:.0} MB measured",
                demand.memory() / 1e6,
                peak / 1e6
            );
        }
    }
}
