//! Malformed inputs through the real binary: every bad experiment file, `--set`, topology, flow list or CDF
//! must end in a non-zero exit with an `error:` message on stderr that names the file (and `file:LINE:` when
//! the problem is on a line) and says what is wrong, never in a panic, and must not produce outputs.

mod common;

use std::path::Path;

use common::{Run, TempDir, bfcsim_in, s};

/// A workload that is valid on the default CLOS-128 fabric and cheap to generate.
const WORKLOAD: &str =
    "[workload]\ncdf = \"google\"\nload = 0.5\nload_on = \"core\"\nduration = \"10us\"\n";

/// A valid HPCC topology: hosts 0 and 1 on switch 2.
const TOPOLOGY_OK: &str = "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n";

/// A valid flow list for [`TOPOLOGY_OK`].
const FLOWS_OK: &str = "2\n0 1 3 100 1000 2.0\n1 0 3 100 1000 2.000001\n";

/// Checks that `run` failed cleanly because of `file`: non-zero exit, `error:` on stderr, the file named
/// (as `file:LINE:` when `line` is given), `phrase` present, no panic, and no output directory `out`.
#[track_caller]
fn assert_rejected(run: &Run, out: &Path, file: &Path, line: Option<usize>, phrase: &str) {
    let err = &run.stderr;
    assert!(
        !run.success() && run.code.is_some(),
        "expected a non-zero exit, got {:?}\nstderr:\n{err}",
        run.code
    );
    assert!(err.contains("error:"), "no `error:` on stderr:\n{err}");
    assert!(!err.contains("panicked"), "the binary panicked:\n{err}");
    let name = match line {
        Some(l) => format!("{}:{l}: ", file.display()),
        None => file.display().to_string(),
    };
    assert!(err.contains(&name), "stderr does not name `{name}`:\n{err}");
    assert!(
        err.contains(phrase),
        "stderr does not say `{phrase}`:\n{err}"
    );
    assert!(
        !out.exists(),
        "a rejected input still produced outputs in {}",
        out.display()
    );
}

/// `bfcsim run FILE --out OUT` on an experiment file written with `text`.
fn run_experiment(
    dir: &TempDir,
    name: &str,
    text: &str,
    extra: &[&str],
) -> (Run, std::path::PathBuf) {
    let file = dir.write(name, text);
    let out = dir.join("out");
    let mut args = vec!["run", s(&file), "--out", s(&out)];
    args.extend_from_slice(extra);
    (bfcsim_in(dir.path(), &args), file)
}

/// `bfcsim replay` on a topology and a flow list written into `dir`.
fn replay(
    dir: &TempDir,
    topology: &str,
    flows: &str,
) -> (Run, std::path::PathBuf, std::path::PathBuf) {
    let t = dir.write("topology.txt", topology);
    let f = dir.write("flow.txt", flows);
    let out = dir.join("out");
    let run = bfcsim_in(
        dir.path(),
        &[
            "replay",
            "--topology",
            s(&t),
            "--flows",
            s(&f),
            "--scheme",
            "dctcp",
            "--out",
            s(&out),
        ],
    );
    (run, t, f)
}

// ---- experiment TOML and --set ----

/// A malformed experiment: the file's text, extra arguments, the line the error must name (None: the file
/// only), and a phrase of the problem.
struct Case {
    name: &'static str,
    text: String,
    extra: &'static [&'static str],
    line: Option<usize>,
    phrase: &'static str,
}

fn experiment_cases() -> Vec<Case> {
    let case = |name, text: String, extra, line, phrase| Case {
        name,
        text,
        extra,
        line,
        phrase,
    };
    vec![
        case(
            "syntax",
            format!("name = \"x\"\nseed = 1\n[switch\nbuffer = \"12MB\"\n{WORKLOAD}"),
            &[],
            Some(3),
            "unclosed table",
        ),
        case(
            "unknown-field",
            format!("[switch]\nbufer = \"12MB\"\n{WORKLOAD}"),
            &[],
            Some(2),
            "unknown field `bufer`",
        ),
        case(
            "unknown-scheme",
            format!("name = \"x\"\n[scheme]\nname = \"tcp-reno\"\n{WORKLOAD}"),
            &[],
            Some(3),
            "unknown scheme `tcp-reno`",
        ),
        case(
            "bad-unit",
            format!("[switch]\nbuffer = \"12 parsecs\"\n{WORKLOAD}"),
            &[],
            Some(2),
            "unknown unit `parsecs`",
        ),
        case(
            "negative-count",
            format!("[topology]\nkind = \"leaf-spine\"\ntors = -1\n{WORKLOAD}"),
            &[],
            Some(3),
            "invalid value: integer `-1`",
        ),
        case(
            "zero-count",
            format!("[topology]\nkind = \"leaf-spine\"\ntors = 0\n{WORKLOAD}"),
            &[],
            None,
            "tors must be at least 1",
        ),
        case(
            "bad-scheme-parameter",
            format!("[cc]\nname = \"dctcp\"\ng = \"fast\"\n{WORKLOAD}"),
            &[],
            Some(3),
            "invalid type",
        ),
        case(
            "set-without-equals",
            WORKLOAD.to_string(),
            &["--set", "novalue"],
            None,
            "--set novalue: expected KEY=VALUE",
        ),
        case(
            "set-bad-unit",
            WORKLOAD.to_string(),
            &["--set", "switch.buffer=12parsecs"],
            None,
            "unknown unit `parsecs`",
        ),
        case(
            "set-out-of-range",
            WORKLOAD.to_string(),
            &["--set", "switch.alpha=-1"],
            None,
            "switch.alpha = -1 must be positive",
        ),
    ]
}

#[test]
fn malformed_experiments_and_overrides_are_rejected_with_file_line_and_problem() {
    for c in experiment_cases() {
        let dir = TempDir::new(c.name);
        let (run, file) = run_experiment(&dir, &format!("{}.toml", c.name), &c.text, c.extra);
        eprintln!("case {}", c.name);
        assert_rejected(&run, &dir.join("out"), &file, c.line, c.phrase);
    }
}

#[test]
fn nonexistent_experiment_file_is_named() {
    let dir = TempDir::new("missing-toml");
    let file = dir.join("does-not-exist.toml");
    let out = dir.join("out");
    let run = bfcsim_in(dir.path(), &["run", s(&file), "--out", s(&out)]);
    assert_rejected(&run, &out, &file, None, "cannot read");
}

/// Which input of a `replay` case is malformed.
#[derive(Clone, Copy)]
enum Culprit {
    Topology,
    Flows,
}

/// (name, topology.txt, flow.txt, the malformed one, the line the error names, a phrase of the problem).
type ReplayCase = (
    &'static str,
    &'static str,
    &'static str,
    Culprit,
    Option<usize>,
    &'static str,
);

#[test]
fn malformed_hpcc_inputs_to_replay_are_rejected_with_file_line_and_problem() {
    let cases: &[ReplayCase] = &[
        (
            "topo-range",
            "3 1 2\n2\n0 2 100Gbps 1us 0\n1 9 100Gbps 1us 0\n",
            FLOWS_OK,
            Culprit::Topology,
            Some(4),
            "node id 9 is out of range",
        ),
        (
            "topo-rate",
            "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gpbs 1us 0\n",
            FLOWS_OK,
            Culprit::Topology,
            Some(4),
            "`100Gpbs` is not a rate",
        ),
        (
            "flow-count",
            TOPOLOGY_OK,
            "3\n0 1 3 100 1000 2.0\n1 0 3 100 1000 2.0\n",
            Culprit::Flows,
            Some(1),
            "announces 3 flows but the file has 2",
        ),
        (
            "flow-size",
            TOPOLOGY_OK,
            "2\n0 1 3 100 1000 2.0\n1 0 3 100 lots 2.0\n",
            Culprit::Flows,
            Some(3),
            "size in bytes `lots` is not a valid whole number",
        ),
        (
            "flow-switch",
            TOPOLOGY_OK,
            "2\n0 1 3 100 1000 2.0\n2 0 3 100 1000 2.0\n",
            Culprit::Flows,
            Some(3),
            "node 2 is a switch, not a host",
        ),
        (
            "flow-order",
            TOPOLOGY_OK,
            "2\n0 1 3 100 1000 2.000001\n1 0 3 100 1000 2.0\n",
            Culprit::Flows,
            Some(3),
            "earlier than the previous flow's",
        ),
    ];
    for &(name, topology, flows, culprit, line, phrase) in cases {
        let dir = TempDir::new(name);
        let (run, topo_file, flow_file) = replay(&dir, topology, flows);
        let file = match culprit {
            Culprit::Topology => topo_file,
            Culprit::Flows => flow_file,
        };
        eprintln!("case {name}");
        assert_rejected(&run, &dir.join("out"), &file, line, phrase);
    }
}

/// `bfcsim run` on an experiment reading HPCC files `topology.txt` (or `topology`, when it names a missing
/// file) and `flow.txt`, written with the given texts when present.
fn run_hpcc_experiment(
    dir: &TempDir,
    topology: &str,
    topology_text: Option<&str>,
    flows_text: &str,
) -> Run {
    if let Some(text) = topology_text {
        dir.write(topology, text);
    }
    dir.write("flow.txt", flows_text);
    let toml = format!(
        "[topology]\nkind = \"hpcc\"\nfile = \"{topology}\"\n[flows]\nfile = \"flow.txt\"\n"
    );
    run_experiment(dir, "hpcc.toml", &toml, &[]).0
}

// ---- HPCC topology.txt ----

#[test]
fn hpcc_topology_with_wrong_link_count_via_toml() {
    let dir = TempDir::new("topo-links");
    let run = run_hpcc_experiment(
        &dir,
        "topology.txt",
        Some("3 1 2\n2\n0 2 100Gbps 1us 0\n"),
        "1\n0 1 3 100 1000 2.0\n",
    );
    let topo = dir.join("topology.txt");
    assert_rejected(
        &run,
        &dir.join("out"),
        &topo,
        None,
        "the header says 2 links but the file has 1",
    );
}

#[test]
fn nonexistent_topology_file_via_toml_is_named() {
    let dir = TempDir::new("missing-topo");
    let run = run_hpcc_experiment(&dir, "no-such-topology.txt", None, FLOWS_OK);
    assert_rejected(
        &run,
        &dir.join("out"),
        &dir.join("no-such-topology.txt"),
        None,
        "cannot read",
    );
}

// ---- HPCC flow.txt ----

#[test]
fn flow_file_error_via_toml_names_the_flow_file() {
    let dir = TempDir::new("flow-toml");
    let run = run_hpcc_experiment(
        &dir,
        "topology.txt",
        Some(TOPOLOGY_OK),
        "1\n0 1 3 100 1000 2.0\n1 0 3 100 1000 2.0\n",
    );
    let flows = dir.join("flow.txt");
    assert_rejected(
        &run,
        &dir.join("out"),
        &flows,
        Some(3),
        "more flows than the 1 the first line announces",
    );
}

#[test]
fn nonexistent_flow_file_is_named() {
    let dir = TempDir::new("missing-flows");
    let topo = dir.write("topology.txt", TOPOLOGY_OK);
    let flows = dir.join("no-such-flow.txt");
    let out = dir.join("out");
    let run = bfcsim_in(
        dir.path(),
        &[
            "replay",
            "--topology",
            s(&topo),
            "--flows",
            s(&flows),
            "--out",
            s(&out),
        ],
    );
    assert_rejected(&run, &out, &flows, None, "cannot read");
}

// ---- CDF files referenced from an experiment ----

/// An experiment whose workload draws sizes from `cdf.txt` written with `cdf`.
fn run_with_cdf(dir: &TempDir, cdf: &str) -> (Run, std::path::PathBuf) {
    let path = dir.write("cdf.txt", cdf);
    let (run, _) = run_experiment(
        dir,
        "cdf.toml",
        "[workload]\ncdf = \"cdf.txt\"\nload = 0.5\nload_on = \"core\"\nduration = \"10us\"\n",
        &[],
    );
    (run, path)
}

#[test]
fn malformed_cdf_files_are_rejected_with_file_line_and_problem() {
    let cases: &[(&str, &str, Option<usize>, &str)] = &[
        (
            "cdf-decreasing",
            "0 0\n100 60\n200 40\n300 100\n",
            Some(3),
            "the CDF decreases from 60 to 40",
        ),
        (
            "cdf-nan",
            "0 0\n100 abc\n300 100\n",
            Some(2),
            "`abc` is not a number",
        ),
        ("cdf-empty", "", None, "the CDF file is empty"),
    ];
    for &(name, text, line, phrase) in cases {
        let dir = TempDir::new(name);
        let (run, cdf) = run_with_cdf(&dir, text);
        eprintln!("case {name}");
        assert_rejected(&run, &dir.join("out"), &cdf, line, phrase);
    }
}

#[test]
fn nonexistent_cdf_path_is_named() {
    let dir = TempDir::new("cdf-missing");
    let (run, _) = run_experiment(
        &dir,
        "cdf.toml",
        "[workload]\ncdf = \"no-such-cdf.txt\"\nload = 0.5\nload_on = \"core\"\nduration = \"10us\"\n",
        &[],
    );
    assert_rejected(
        &run,
        &dir.join("out"),
        &dir.join("no-such-cdf.txt"),
        None,
        "is neither a built-in distribution nor a readable file",
    );
}
