//! Issue 16's failure classes, each through the real binary: every value out of its domain, every request for
//! more than the machine has, and every file the simulator cannot use ends in a non-zero exit with a message
//! that names the file and the key (or line) and says what to do, never in a panic, a hang or a silent run;
//! and none leaves an output directory. The messages themselves are kept in a snapshot
//! (`snapshots/input_domains__error_messages.snap`), which the review of user-visible text also reads
//! (`user_visible_text.rs`).

mod common;

use std::fmt::Write as _;

use common::{Run, TempDir, bfcsim_in};

/// A small valid experiment: four hosts on one switch, Google sizes at half load for 20 µs.
const SMALL: &str = "name = \"small\"\n[topology]\nkind = \"star\"\nhosts = 4\n[workload]\ncdf = \"google\"\n\
                     load = 0.5\nload_on = \"host\"\nduration = \"20us\"\n";

/// Hosts 0 and 1 on switch 2 over 1 b/s links.
const SLOW_TOPOLOGY: &str = "3 1 2\n2\n0 2 1bps 1us 0\n1 2 1bps 1us 0\n";

/// Hosts 0 and 1 on two switches that are not linked.
const SPLIT_TOPOLOGY: &str = "4 2 2\n2 3\n0 2 100Gbps 1us 0\n1 3 100Gbps 1us 0\n";

/// `bfcsim replay` of the case's `topology.txt` and `flow.txt`.
const REPLAY: &[&str] = &[
    "replay",
    "--topology",
    "topology.txt",
    "--flows",
    "flow.txt",
    "--out",
    "out",
];

/// One case: its name, the files it writes into its directory (paths relative to it), and the arguments of
/// the binary, run in that directory.
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    args: Vec<&'static str>,
}

fn case(
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    args: &[&'static str],
) -> Case {
    Case {
        name,
        files,
        args: args.to_vec(),
    }
}

fn cases() -> Vec<Case> {
    let small: &'static [(&str, &str)] = &[("small.toml", SMALL)];
    // `bfcsim run small.toml EXTRA --out out`.
    let set = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = vec!["run", "small.toml"];
        v.extend_from_slice(extra);
        v.extend_from_slice(&["--out", "out"]);
        v
    };
    vec![
        case(
            "a node count near 2^64 in topology.txt",
            &[
                (
                    "topology.txt",
                    "18446744073709551615 1 1\n2\n0 2 100Gbps 1us 0\n",
                ),
                ("flow.txt", "1\n0 1 3 100 1000 0.000001\n"),
            ],
            REPLAY,
        ),
        case(
            "a link so slow that the ideal FCT overflows",
            &[
                ("topology.txt", SLOW_TOPOLOGY),
                ("flow.txt", "1\n0 1 3 100 100000000 0.000001\n"),
            ],
            REPLAY,
        ),
        case(
            "a negative load",
            small,
            &set(&["--set", "workload.load=-0.5"]),
        ),
        case("a NaN load", small, &set(&["--set", "workload.load=nan"])),
        case(
            "a zero sampling interval",
            small,
            &set(&["--set", "run.sample_interval=0ps"]),
        ),
        case(
            "a load a thousand times too high for a second",
            small,
            &set(&[
                "--set",
                "workload.load=600",
                "--set",
                "workload.duration=1s",
                "--set",
                "limits.memory=8GB",
            ]),
        ),
        case(
            "four billion hosts",
            small,
            &set(&[
                "--set",
                "topology.hosts=4000000000",
                "--set",
                "limits.memory=8GB",
            ]),
        ),
        case(
            "a duration whose samples would take days",
            small,
            &set(&[
                "--set",
                "run.sample_interval=1ps",
                "--set",
                "workload.duration=10ms",
            ]),
        ),
        case(
            "a lognormal sigma out of its domain",
            small,
            &set(&[
                "--set",
                "workload.arrivals=lognormal",
                "--set",
                "workload.sigma=1000",
            ]),
        ),
        case(
            "a lognormal whose gaps round to zero",
            small,
            &set(&[
                "--set",
                "workload.arrivals=lognormal",
                "--set",
                "workload.sigma=10",
            ]),
        ),
        case(
            "a value of the wrong type after --set",
            small,
            &set(&["--set", "scheme.name=0"]),
        ),
        case(
            "a value out of its domain in the file",
            &[(
                "small.toml",
                "name = \"small\"\n[topology]\nkind = \"star\"\nhosts = 4\n[run]\nthreads = 0\n[workload]\n\
                 cdf = \"google\"\nload = 0.5\nload_on = \"host\"\nduration = \"20us\"\n",
            )],
            &["run", "small.toml", "--out", "out"],
        ),
        case(
            "hosts that cannot reach each other",
            &[
                ("topology.txt", SPLIT_TOPOLOGY),
                ("flow.txt", "1\n1 0 3 100 1000 0.000001\n"),
            ],
            REPLAY,
        ),
        case(
            "a name that escapes the output directory",
            small,
            &["run", "small.toml", "--set", "name=\"../../escape\""],
        ),
        case(
            "an output directory of other files",
            &[("small.toml", SMALL), ("out/thesis.tex", "years of work")],
            &["run", "small.toml", "--out", "out"],
        ),
        case("--jobs 0", small, &["run", "small.toml", "--jobs", "0"]),
        case("bench --threads 0", &[], &["bench", "--threads", "1,0"]),
        case(
            "bench --scenario unknown",
            &[],
            &["bench", "--scenario", "clos"],
        ),
        case(
            "bench --scheme unknown",
            &[],
            &["bench", "--scheme", "dctcp,bfcc"],
        ),
        case(
            "a sweep value given twice",
            small,
            &["run", "small.toml", "--sweep", "workload.load=0.5,0.5"],
        ),
        case(
            "sweep values that are the same run",
            small,
            &[
                "run",
                "small.toml",
                "--sweep",
                "workload.load=0.5,0.50",
                "--out",
                "out",
            ],
        ),
        case(
            "an output file that does not exist",
            small,
            &set(&["--outputs", "fct.xlsx"]),
        ),
    ]
}

/// Runs a case in a fresh directory; returns the run and the directory's `out` before the case created it.
fn run_case(c: &Case) -> (Run, bool, TempDir) {
    let dir = TempDir::new("domain");
    for (name, text) in c.files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let out_before = dir.join("out").exists();
    let run = bfcsim_in(dir.path(), &c.args);
    (run, out_before, dir)
}

#[test]
fn error_messages() {
    let mut snapshot = String::new();
    for c in cases() {
        let (run, out_before, dir) = run_case(&c);
        let err = &run.stderr;
        assert!(
            run.code.is_some_and(|c| c != 0),
            "{}: exit {:?}\n{err}",
            c.name,
            run.code
        );
        assert!(!err.contains("panicked"), "{}: panicked\n{err}", c.name);
        assert!(err.contains("error"), "{}: no error message\n{err}", c.name);
        assert_eq!(
            dir.join("out").exists(),
            out_before,
            "{}: an output directory was created or removed",
            c.name
        );
        assert!(
            !dir.path().parent().unwrap().join("escape").exists(),
            "{}: wrote outside its directory",
            c.name
        );
        let message: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("error"))
            .map(str::trim)
            .collect();
        let _ = writeln!(snapshot, "{}:\n  {}", c.name, message.join("\n  "));
    }
    // The list of every preset (the unknown-scheme message) stands as one placeholder, so that adding a scheme
    // does not change the snapshot; the list itself must be whole and in order.
    let every = bfcsim::presets::names().join(", ");
    assert!(
        snapshot.contains(&every),
        "no message lists every preset in order"
    );
    let snapshot = snapshot.replace(&every, "<every preset, in the registries' order>");
    insta::assert_snapshot!(snapshot);
}

#[test]
fn an_output_directory_never_mixes_two_runs() {
    let dir = TempDir::new("reuse");
    dir.write("small.toml", SMALL);
    let run = |scheme: &str| {
        bfcsim_in(
            dir.path(),
            &[
                "run",
                "small.toml",
                "--set",
                &format!("scheme.name={scheme}"),
                "--outputs",
                "all",
                "--out",
                "out",
            ],
        )
    };
    let pfc = run("dctcp-pfc");
    assert!(pfc.success(), "{}", pfc.stderr);
    assert!(dir.join("out/pfc.txt").exists());
    let plain = run("dctcp");
    assert!(plain.success(), "{}", plain.stderr);
    assert!(
        !dir.join("out/pfc.txt").exists(),
        "the PFC run's pfc.txt survived a run without PFC"
    );
    let hidden: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "staging directories left: {hidden:?}");
    let files: Vec<String> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !files.iter().any(|f| f.ends_with(".tmp")),
        "temporary files left: {files:?}"
    );
}
