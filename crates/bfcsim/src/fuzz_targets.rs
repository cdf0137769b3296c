//! What each fuzz target does with its bytes. Each feeds them to one input parser of bfcsim and returns
//! normally whatever the input, so that a panic anywhere below is a crash the fuzzer reports; where a parser
//! accepts its input, the value is also used the way a run would use it. `fuzz/` runs these under libFuzzer
//! (`docs/FUZZING.md`); `crates/bfcsim/tests/fuzz_corpus.rs` replays the kept corpus and every crash found,
//! on stable Rust, as an ordinary test.

use std::path::Path;

use bfcsim_metrics::BucketScheme;
use bfcsim_metrics::compare::{compare as compare_fcts, parse_hpcc_fct};
use bfcsim_workload::{CdfFormat, CdfOptions, GpdTail, Interpolation, SizeCdf, SizeUnit};

use crate::arbitrary_run::SmallRun;
use crate::experiment::parse_experiment;
use crate::sweep::Sweep;

/// A fuzz target: takes any bytes, returns normally unless it found a bug.
pub type Target = fn(&[u8]);

/// Every target, by the name of its directory under `fuzz/corpus/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("hpcc_topology", hpcc_topology),
    ("flow_file", flow_file),
    ("connection_matrix", connection_matrix),
    ("cdf", cdf),
    ("experiment", experiment),
    ("sweep", sweep),
    ("compare", compare),
    ("small_run", small_run),
];

/// HPCC's `topology.txt`.
pub fn hpcc_topology(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = bfcsim_net::import::parse_hpcc_topology(Path::new("topology.txt"), &text);
}

/// HPCC's `flow.txt`: byte 0 is the topology's node count, byte 1 how many of them (the first) are hosts;
/// the rest is the file.
pub fn flow_file(data: &[u8]) {
    let (nodes, hosts) = (
        usize::from(data.first().copied().unwrap_or(0)),
        usize::from(data.get(1).copied().unwrap_or(0)),
    );
    let is_host: Vec<bool> = (0..nodes).map(|n| n < hosts).collect();
    let text = String::from_utf8_lossy(data.get(2..).unwrap_or_default());
    let _ = bfcsim_workload::parse_flow_file(&text, "flow.txt", &is_host);
}

/// htsim's connection matrix with triggers: byte 0 is the topology's host count; the rest is the file. An
/// accepted matrix's dependency graph is renumbered into start order, as a run does.
pub fn connection_matrix(data: &[u8]) {
    let hosts: Vec<bfcsim_core::NodeId> = (0..u32::from(data.first().copied().unwrap_or(0)))
        .map(bfcsim_core::NodeId)
        .collect();
    let text = String::from_utf8_lossy(data.get(1..).unwrap_or_default());
    if let Ok(m) = bfcsim_workload::parse_connection_matrix(&text, "m.cm", &hosts) {
        let (flows, deps) = crate::collectives::triggered(m, bfcsim_sim::Notify::Instant);
        if let Some(c) = deps {
            assert_eq!(c.deps.graph.len(), flows.len());
        }
    }
}

/// A CDF file: byte 0 picks the options (bits 0-2 the format, 3 BFC's `min_size` of 100 B, 4 Homa's Pareto
/// tail, 5 step interpolation, 6 sizes in 1000 B packets); the rest is the file. An accepted CDF is sampled.
pub fn cdf(data: &[u8]) {
    let flags = data.first().copied().unwrap_or(0);
    let bit = |i: u8| flags & (1 << i) != 0;
    let options = CdfOptions {
        format: [
            CdfFormat::Auto,
            CdfFormat::Hpcc,
            CdfFormat::Homa,
            CdfFormat::Bfc,
            CdfFormat::Ns2,
        ][usize::from(flags & 7) % 5],
        min_size: bit(3).then_some(100),
        tail: bit(4).then_some(GpdTail::HOMA_FACEBOOK_KEY_VALUE),
        interpolation: if bit(5) {
            Interpolation::Step
        } else {
            Interpolation::Linear
        },
        unit: if bit(6) {
            SizeUnit::Packets {
                bytes_per_packet: 1000,
            }
        } else {
            SizeUnit::Bytes
        },
    };
    let text = String::from_utf8_lossy(data.get(1..).unwrap_or_default());
    if let Ok(c) = SizeCdf::parse(&text, "cdf.txt", &options) {
        let mean = c.mean();
        assert!(!mean.is_nan(), "the mean of an accepted CDF is NaN");
        let mut rng = bfcsim_core::rng::stream(1, bfcsim_core::rng::Stream::Workload(0));
        for _ in 0..8 {
            assert!(c.sample(&mut rng).0 >= 1, "a drawn size is 0");
        }
    }
}

/// An experiment file and its `--set` overrides: the TOML text, then each override after a NUL byte. An
/// accepted experiment is written back as its resolved configuration (as `run.json` records it) and read
/// again, which must give the same configuration.
pub fn experiment(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let toml_text = parts.next().unwrap_or_default();
    let overrides: Vec<String> = parts.map(str::to_owned).collect();
    let Ok(config) = parse_experiment(Path::new("experiment.toml"), toml_text, &overrides) else {
        return;
    };
    let resolved = toml::to_string(&config).expect("a resolved configuration serializes");
    let again = parse_experiment(Path::new("run.toml"), &resolved, &[])
        .unwrap_or_else(|e| panic!("the resolved configuration does not parse: {e}\n{resolved}"));
    let json = |c| serde_json::to_string(c).expect("configurations serialize");
    assert_eq!(json(&config), json(&again), "{resolved}");
}

/// `--sweep` values, one `KEY=V1,V2,...` per line, as the command line checks and expands them.
pub fn sweep(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(sweeps) = text
        .lines()
        .map(Sweep::parse)
        .collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    if crate::sweep::check_keys(&sweeps).is_ok() && crate::sweep::check_size(&sweeps).is_ok() {
        let points = crate::sweep::points(&sweeps);
        assert!(!points.is_empty());
    }
}

/// `bfcsim compare`'s inputs: the reference `fct.txt`, a NUL byte, ours, a NUL byte and a `--buckets` value.
pub fn compare(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let (reference, ours) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let buckets = parts.next().unwrap_or("equal_count:10");
    let (Ok(reference), Ok(ours)) = (
        parse_hpcc_fct(Path::new("reference.txt"), reference),
        parse_hpcc_fct(Path::new("ours.txt"), ours),
    ) else {
        return;
    };
    let Ok(scheme) = buckets.parse::<BucketScheme>() else {
        return;
    };
    if let Some(c) = compare_fcts(&reference, &ours, &scheme, 0.25, 1) {
        let _ = c.render("reference", "ours");
    }
}

/// A small experiment built from the bytes, run on one thread, with every property of [`crate::arbitrary_run`]
/// but the comparison with two threads checked: split runs synchronise every link delay, which on a busy
/// machine makes each input several times slower, and the property tests compare one thread and two on
/// every run they draw.
pub fn small_run(data: &[u8]) {
    let run = SmallRun::from_bytes(data);
    if let Err(e) = run.check(false) {
        panic!("{e}");
    }
}
