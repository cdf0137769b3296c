//! Issue 17: `bfcsim compare` can serve as a check in a script: it exits 0 when every bucket is within the
//! tolerance, 4 with the reason when one is not (unless `--report-only`), and 1 on unreadable input.

mod common;

use common::{bfcsim, s, workspace_root};

fn compare(reference: &str, ours: &str, extra: &[&str]) -> common::Run {
    let dir = workspace_root().join("data/reference/ns3-perf-k8");
    let (reference, ours) = (dir.join(reference), dir.join(ours));
    let mut args = vec!["compare", "--reference", s(&reference), "--ours", s(&ours)];
    args.extend_from_slice(extra);
    bfcsim(&args)
}

#[test]
fn a_comparison_outside_its_tolerance_fails_with_the_reason() {
    // ns-3's DCQCN against its HPCC: the same flows, very different tails.
    let run = compare("hpcc.fct.txt", "dcqcn.fct.txt", &[]);
    assert_eq!(run.code, Some(4), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: the comparison fails its tolerance of 25%: buckets equal_count:10:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("* marks a bucket outside"),
        "{}",
        run.stdout
    );

    let reported = compare("hpcc.fct.txt", "dcqcn.fct.txt", &["--report-only"]);
    assert_eq!(reported.code, Some(0), "{}", reported.stderr);
    assert!(
        reported.stderr.contains("--report-only"),
        "{}",
        reported.stderr
    );
}

#[test]
fn a_comparison_within_its_tolerance_succeeds() {
    let run = compare("hpcc.fct.txt", "hpcc.fct.txt", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[test]
fn unreadable_input_is_an_error_not_a_failed_comparison() {
    let run = compare("hpcc.fct.txt", "no-such-fct.txt", &[]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("no-such-fct.txt: cannot read"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_comparison_of_a_few_of_the_reference_flows_fails_and_counts_them() {
    // Issue 72: `compare` passed with 96% of the reference's flows unmatched.
    let dir = workspace_root().join("data/reference/ns3-perf-k8");
    let full = std::fs::read_to_string(dir.join("hpcc.fct.txt")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    let tmp = common::TempDir::new("compare-unmatched");
    let few = tmp.join("few.fct.txt");
    std::fs::write(&few, lines[..100].join("\n") + "\n").unwrap();
    let reference = dir.join("hpcc.fct.txt");
    let run = bfcsim(&["compare", "--reference", s(&reference), "--ours", s(&few)]);
    assert_eq!(run.code, Some(4), "{}", run.stderr);
    let said = format!(
        "{} of the reference's {} flows (96.3%) have no partner among ours, more than --max-unmatched 0.01",
        lines.len() - 100,
        lines.len()
    );
    assert!(run.stderr.contains(&said), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("no partner").count(),
        1,
        "{}",
        run.stderr
    );

    // The share is the user's to state.
    let allowed = bfcsim(&[
        "compare",
        "--reference",
        s(&reference),
        "--ours",
        s(&few),
        "--max-unmatched",
        "0.97",
        "--buckets",
        "edges:1GB",
    ]);
    assert!(!allowed.stderr.contains("no partner"), "{}", allowed.stderr);
}
