//! Helpers shared by the integration tests: a self-cleaning temporary directory, the workspace root and a way
//! to run the real `bfcsim` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh directory under the system temporary directory, removed (with its contents) when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `<temp>/bfcsim-test-<tag>-<pid>-<n>-<nanos>`.
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "bfcsim-test-{tag}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create the temporary directory");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `name` inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes `contents` to `name` inside the directory and returns its path.
    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, contents).expect("write a test input file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The workspace root (`crates/bfcsim/../..`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What a run of the binary produced.
pub struct Run {
    /// Exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Run {
    /// Whether the process exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs the `bfcsim` binary with `args` from the workspace root, and fails the test (with its stderr) unless it
/// exits with status 0.
pub fn bfcsim_ok(args: &[&str]) -> Run {
    let run = bfcsim(args);
    assert!(
        run.success(),
        "exit {:?}\nstderr:\n{}",
        run.code,
        run.stderr
    );
    run
}

/// Runs the `bfcsim` binary with `args`, working directory `cwd`.
pub fn bfcsim_in(cwd: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_bfcsim"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn the bfcsim binary");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the `bfcsim` binary with `args` from the workspace root.
pub fn bfcsim(args: &[&str]) -> Run {
    bfcsim_in(&workspace_root(), args)
}

/// File `path`, parsed as JSON (a run's `summary.json` or `run.json`).
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A path as a `&str` for a command line.
pub fn s(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// Simulates the bundled experiment `name` with the `--set` overrides `set`, explaining the flows `explain`
/// (none: a plain run), and checks that the run kept its invariants.
pub fn run_experiment(
    name: &str,
    set: &[&str],
    explain: &[bfcsim_core::FlowId],
) -> bfcsim::runner::Outcome {
    let file = workspace_root().join("experiments").join(name);
    let text = std::fs::read_to_string(&file).unwrap();
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let config = bfcsim::experiment::parse_experiment(&file, &text, &set).unwrap();
    let prepared = bfcsim::runner::prepare(&config, file.parent().unwrap()).unwrap();
    let outcome =
        bfcsim::runner::simulate_explaining(&config, prepared, explain, |_| {}, &mut ()).unwrap();
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    outcome
}

/// The text of a gzip-compressed file (the committed reference outputs).
pub fn gunzip(path: &Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .read_to_string(&mut text)
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}

/// How a replay must agree with a peer's outputs ([`cross_validate`]).
pub struct Agreement<'a> {
    /// The bucket schemes the per-bucket conditions hold in.
    pub buckets: &'a [bfcsim_metrics::BucketScheme],
    /// Flow by flow, the geometric mean of our FCT over the peer's is within this of 1.
    pub flow_band: f64,
    /// The p99 within 25% of the peer's in at least half of the buckets (off where a test checks the tail
    /// otherwise, and says why).
    pub p99s: bool,
}

/// Replays `profile` (in `data/reference/DIR`) with `--set` overrides `set`, compares its `fct.txt` with the
/// peer's `reference` there and checks, in each bucket scheme of `agree`: every reference flow matched with
/// the same standalone FCT, the median slowdown within 25% of the peer's in at least 80% of the buckets, the
/// p99 in at least half (`agree.p99s`), and the flow-by-flow geometric mean within `agree.flow_band`. Returns the peer's and
/// our flows.
pub fn cross_validate(
    dir: &str,
    profile: &str,
    set: &[&str],
    reference: &str,
    agree: &Agreement,
) -> (
    Vec<bfcsim_metrics::compare::FctLine>,
    Vec<bfcsim_metrics::compare::FctLine>,
) {
    use bfcsim_metrics::compare::{compare, parse_hpcc_fct};
    let dir = workspace_root().join("data/reference").join(dir);
    let tag: String = set.iter().map(|o| format!("-{o}")).collect();
    let tmp = TempDir::new(
        &format!("xval-{}{tag}", reference.replace('/', "-")).replace(['=', '/'], "_"),
    );
    let out = tmp.join("out");
    let profile = dir.join(profile);
    let mut args = vec!["run", s(&profile), "--out", s(&out)];
    for o in set {
        args.extend(["--set", o]);
    }
    let run = bfcsim(&args);
    assert!(run.success(), "{reference}: {:?}\n{}", run.code, run.stderr);
    let read = |path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        parse_hpcc_fct(path, &text).unwrap()
    };
    let peer = read(&dir.join(reference));
    let ours = read(&out.join("fct.txt"));
    for buckets in agree.buckets {
        let c = compare(&peer, &ours, buckets, 0.25, 1).expect("flows match");
        println!(
            "{reference} {set:?}, {buckets:?}:\n{}",
            c.render("peer", "bfcsim")
        );
        assert_eq!(
            c.only_reference, 0,
            "{reference}: unmatched reference flows"
        );
        assert_eq!(c.standalone_differs.0, 0, "{reference}: standalone FCTs");
        let (p50, p99, m) = c.within();
        assert!(
            5 * p50 >= 4 * m,
            "{reference}, {buckets:?}: {p50} of {m} medians within 25%"
        );
        assert!(
            !agree.p99s || 2 * p99 >= m,
            "{reference}, {buckets:?}: {p99} of {m} p99s within 25%"
        );
        let (geo, _, _) = c.flow_ratio;
        assert!(
            (geo - 1.0).abs() <= agree.flow_band,
            "{reference}: flow by flow, our FCTs are {geo:.3} of the peer's"
        );
    }
    (peer, ours)
}
