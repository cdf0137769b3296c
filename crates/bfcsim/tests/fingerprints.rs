//! Issue 16: behaviour fingerprints (OMNeT++'s). Every named scheme runs two small scenarios; each run's
//! fingerprint (a hash over every packet's every hop, `Sim::fingerprint`) and a few counts must equal the ones
//! recorded in `tests/fingerprints.txt`, or for a scheme added after the atlas was first made, in its own
//! `tests/fingerprints/NAME.txt` (so that adding a scheme keeps every other scheme's stored runs and reports
//! current: `bfcsim::provenance`). A few schemes run a third scenario of their own ([`extra_scenarios`]), which
//! reaches a path the two small ones do not; its lines go in the scheme's own table, so that adding it moves
//! only that scheme's fingerprint. Any change of behaviour, even one byte more in an ACK, changes a fingerprint and
//! fails this test, naming the scenario, the scheme and what changed. A deliberate change is accepted by recording
//! the tables again:
//!
//!     BFCSIM_RECORD_FINGERPRINTS=1 cargo test -p bfcsim --test fingerprints
//!
//! and saying in the commit message why the behaviour changed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bfcsim::arbitrary_run::SmallRun;
use bfcsim::presets;
use bfcsim::runner::{prepare, simulate};

/// The scenarios: a name and the `--set` overrides of the small experiment (`bfcsim::arbitrary_run`'s base).
fn scenarios(scheme: &str) -> Vec<(&'static str, Vec<String>)> {
    let lossless = presets::find(scheme)
        .and_then(|p| p.tag("flow_control"))
        .is_some_and(|f| f != "none");
    let common = |seed: u32| {
        [
            format!("scheme.name={scheme}"),
            format!("seed={seed}"),
            "workload.duration=100us".to_string(),
            "run.max_time=20ms".to_string(),
        ]
    };
    let leaf_spine = [
        "topology.kind=leaf-spine",
        "topology.tors=2",
        "topology.hosts_per_tor=3",
        "topology.spines=2",
        "topology.fabric_rate=100Gbps",
        "topology.fabric_delay=1us",
        "switch.buffer=4MB",
        "workload.cdf=google",
        "workload.load=0.8",
        "workload.incast=[{degree = 5, aggregate = \"2MB\", share = 0.3}]",
    ];
    let dumbbell = [
        "topology.kind=dumbbell",
        "topology.left=3",
        "topology.right=1",
        "topology.bottleneck_rate=25Gbps",
        "topology.bottleneck_delay=1us",
        "workload.cdf=websearch",
        "workload.load=0.9",
    ];
    let buffer = if lossless { "4MB" } else { "200KB" };
    vec![
        (
            BASE_SCENARIOS[0],
            leaf_spine
                .iter()
                .map(ToString::to_string)
                .chain(common(7))
                .collect(),
        ),
        (
            BASE_SCENARIOS[1],
            dumbbell
                .iter()
                .map(ToString::to_string)
                .chain([format!("switch.buffer={buffer}")])
                .chain(common(3))
                .collect(),
        ),
    ]
}

/// The two scenarios every scheme runs, whose lines a scheme of the main table keeps there.
const BASE_SCENARIOS: [&str; 2] = ["leaf-spine", "dumbbell"];

/// Scenarios beyond the two, for the schemes whose behaviour depends on a path those do not reach.
///
/// `homa-recovery`, for the Homa presets whose RESEND goes through `Sender::handle_resend`: 30 ms of Web search
/// at 80% of PayDebt's 8:1 core (144 hosts, 9 ToRs, 4 cores of 5 Gb/s, 8 MB buffers; flow-level ECMP and one
/// BDP of unscheduled bytes, as PayDebt's figures run Homa). Its senders time out and then hear RESENDs for
/// bytes beyond what they re-sent, which the two small scenarios never make happen: before c99fa34 and ca42975
/// (a send restarts a stopped timer from now; such a RESEND moves the next byte up) these runs took other
/// paths here (fingerprint `3f8abf33...` where it is now `7e744449...` for `homa-8`), and so did paper-scale
/// runs of PayDebt's figures, while the two small scenarios' fingerprints stayed the same. `homa-aeolus`
/// resends through `handle_missing` and simulates this scenario alike before and after, so it does not run it.
fn extra_scenarios(scheme: &str) -> Vec<(&'static str, Vec<String>)> {
    if !matches!(scheme, "homa" | "homa-8" | "homa-ecmp") {
        return Vec::new();
    }
    let overrides = [
        "topology.kind=leaf-spine",
        "topology.tors=9",
        "topology.hosts_per_tor=16",
        "topology.spines=4",
        "topology.host_rate=10Gbps",
        "topology.fabric_rate=5Gbps",
        "topology.host_delay=1us",
        "topology.fabric_delay=1us",
        "switch.buffer=8MB",
        "switch.unlimited_buffer=false",
        "switch.load_balancing=ecmp",
        "flow_control.rtt_bytes=12.5KB",
        "workload.cdf=websearch",
        "workload.load=0.8",
        "workload.load_on=core",
        "workload.load_counts=wire",
        "workload.duration=30ms",
        "run.max_time=30ms",
        "seed=1",
    ];
    let mut overrides: Vec<String> = overrides.iter().map(ToString::to_string).collect();
    overrides.insert(0, format!("scheme.name={scheme}"));
    vec![("homa-recovery", overrides)]
}

/// What one run leaves in the table: its fingerprint and the counts that say, when it changes, what changed.
const COLUMNS: [&str; 7] = [
    "fingerprint",
    "packet_hops",
    "delivered_packets",
    "delivered_bytes",
    "dropped_packets",
    "finished_flows",
    "end",
];

fn measure(overrides: Vec<String>) -> Vec<String> {
    let config = SmallRun { overrides }
        .config(1)
        .unwrap_or_else(|e| panic!("{e}"));
    let prepared = prepare(&config, Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    let out = simulate(&config, prepared, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let c = out.counters;
    vec![
        format!("{:016x}", out.fingerprint),
        c.hops.to_string(),
        c.delivered_pkts.to_string(),
        c.delivered_bytes.to_string(),
        c.dropped_pkts.to_string(),
        out.records
            .iter()
            .filter(|r| r.finish.is_some())
            .count()
            .to_string(),
        out.end.to_string(),
    ]
}

fn table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fingerprints.txt")
}

/// The directory of the tables of schemes added since the main table.
fn own_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fingerprints")
}

/// The lines of a table that are not comments, as (`scenario scheme`, values).
fn rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [scenario, scheme, values @ ..] => {
                    Some((format!("{scenario} {scheme}"), values.join(" ")))
                }
                _ => None,
            }
        })
        .collect()
}

fn write(path: &Path, text: &str) {
    let tmp = path.with_extension("txt.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn every_scheme_behaves_as_recorded() {
    // (scheme, scenario, scenario scheme, values), in table order.
    let mut now = Vec::new();
    for scheme in presets::names() {
        for (scenario, overrides) in scenarios(scheme).into_iter().chain(extra_scenarios(scheme)) {
            now.push((
                scheme,
                scenario,
                format!("{scenario} {scheme}"),
                measure(overrides),
            ));
        }
    }
    let header = format!(
        "# Fingerprints of small runs (crates/bfcsim/tests/fingerprints.rs): scenario, scheme, {}.\n\
         # Re-record only for a deliberate change of behaviour, and say why in the commit message:\n\
         #   BFCSIM_RECORD_FINGERPRINTS=1 cargo test -p bfcsim --test fingerprints\n",
        COLUMNS.join(", ")
    );
    let path = table_path();
    let recorded = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; record it (see the test's doc)", path.display()));
    let mut table: std::collections::BTreeMap<String, String> =
        rows(&recorded).into_iter().collect();
    // The schemes of the main table stay there; any other has its own.
    let main: std::collections::BTreeSet<String> = table
        .keys()
        .filter_map(|case| case.split(' ').nth(1).map(str::to_string))
        .collect();
    if std::env::var_os("BFCSIM_RECORD_FINGERPRINTS").is_some() {
        // The main table keeps its own line order (its bytes are the behaviour fingerprint: a reordering of
        // the presets must not change it); the own tables follow the presets' order.
        let order: std::collections::HashMap<String, usize> = rows(&recorded)
            .into_iter()
            .enumerate()
            .map(|(i, (case, _))| (case, i))
            .collect();
        let mut now_sorted: Vec<_> = now.iter().collect();
        now_sorted.sort_by_key(|(_, _, case, _)| order.get(case).copied().unwrap_or(usize::MAX));
        let mut texts = std::collections::BTreeMap::new();
        for (scheme, scenario, case, values) in now_sorted {
            let file = if main.contains(*scheme) && BASE_SCENARIOS.contains(scenario) {
                path.clone()
            } else {
                own_dir().join(format!("{scheme}.txt"))
            };
            let text = texts.entry(file).or_insert_with(|| header.clone());
            let _ = writeln!(text, "{case} {}", values.join(" "));
        }
        std::fs::create_dir_all(own_dir()).unwrap();
        for entry in std::fs::read_dir(own_dir()).unwrap().flatten() {
            if !texts.contains_key(&entry.path()) {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        for (file, text) in &texts {
            write(file, text);
        }
        eprintln!(
            "recorded {} fingerprints in {} tables",
            now.len(),
            texts.len()
        );
        return;
    }
    for entry in std::fs::read_dir(own_dir()).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        table.extend(rows(&text));
    }
    let mut changes = Vec::new();
    for (_, _, case, values) in &now {
        let Some(old) = table.remove(case) else {
            changes.push(format!("{case}: not recorded (a new scheme or scenario)"));
            continue;
        };
        let old: Vec<&str> = old.split(' ').collect();
        let diffs: Vec<String> = COLUMNS
            .iter()
            .zip(values)
            .zip(old.iter().chain(std::iter::repeat(&"?")))
            .filter(|((_, new), old)| new.as_str() != **old)
            .map(|((name, new), old)| format!("{name} {old} -> {new}"))
            .collect();
        if !diffs.is_empty() {
            changes.push(format!("{case}: {}", diffs.join(", ")));
        }
    }
    changes.extend(
        table
            .keys()
            .map(|case| format!("{case}: recorded but no longer run")),
    );
    assert!(
        changes.is_empty(),
        "the simulator's behaviour changed in {} of {} runs (scenario scheme: what changed):\n  {}\n\
         If the change is deliberate, record the new fingerprints with\n  \
         BFCSIM_RECORD_FINGERPRINTS=1 cargo test -p bfcsim --test fingerprints\n\
         and say in the commit message why the behaviour changed.",
        changes.len(),
        now.len(),
        changes.join("\n  ")
    );
}
