//! Issue 72: a link with a long delay (a WAN) or a slow one, where one round trip or one packet's transmission
//! takes longer than `run.stall_after`'s 100 ms, simply runs; a stall is a run in which nothing can make progress,
//! and a bound set too short for the fabric is named with the key to raise.

mod common;

use common::{TempDir, bfcsim, s};

/// A star of two hosts with `rate` and `delay` links and one flow of `size` bytes from host 1 to host 0; runs
/// it with `set` and returns the run.
fn run_star(name: &str, (rate, delay): (&str, &str), size: u64, set: &[&str]) -> common::Run {
    let dir = TempDir::new(name);
    let flows = dir.join("flow.txt");
    std::fs::write(&flows, format!("1\n1 0 3 100 {size} 0.000001\n")).unwrap();
    let experiment = dir.join("star.toml");
    std::fs::write(
        &experiment,
        format!(
            "name = \"{name}\"\n[topology]\nkind = \"star\"\nhosts = 2\nrate = \"{rate}\"\ndelay = \"{delay}\"\n\
             [scheme]\nname = \"dctcp\"\n[flows]\nfile = {:?}\n[run]\nmax_time = \"10s\"\n",
            s(&flows)
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let mut args = vec!["run", s(&experiment), "--out", s(&out)];
    for o in set {
        args.extend(["--set", o]);
    }
    bfcsim(&args)
}

/// The run succeeded with its one flow finished.
fn assert_finished(run: &common::Run) {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let all = run.stdout.lines().find(|l| l.starts_with("all non-incast"));
    let counts: Vec<&str> = all.into_iter().flat_map(|l| l.split_whitespace()).collect();
    assert_eq!(counts.get(2..4), Some(&["1", "0"][..]), "{}", run.stdout);
}

#[test]
fn a_wan_link_runs_to_the_end_and_its_short_timeout_is_named() {
    // 150 ms links: a 600 ms round trip, six times the stall bound's 100 ms.
    let run = run_star("wan", ("100Gbps", "150ms"), 100_000, &[]);
    assert_finished(&run);
    assert!(
        run.stderr
            .contains("warning: nic.rto_max (64ms) is shorter than the fabric's largest base RTT"),
        "{}",
        run.stderr
    );
    // Timeouts above the round trip: no warning, no timeout.
    let run = run_star(
        "wan-rto",
        ("100Gbps", "150ms"),
        100_000,
        &["nic.rto_max=4s", "nic.rto_initial=2s"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    assert!(
        !run.stdout.contains("retransmission timeouts"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_one_bit_per_second_link_runs_to_the_end() {
    // One 548 B packet takes 4,384 s on the wire.
    let run = run_star(
        "slow",
        ("1bps", "1us"),
        500,
        &[
            "nic.rto_max=100000s",
            "nic.rto_initial=50000s",
            "run.sample_interval=10s",
            "run.max_time=100000s",
        ],
    );
    assert_finished(&run);
}

#[test]
fn a_stall_bound_set_too_short_for_the_fabric_is_named() {
    let run = run_star(
        "wan-bound",
        ("100Gbps", "150ms"),
        100_000,
        &["run.stall_after=200ms"],
    );
    assert_eq!(run.code, Some(5), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("(run.stall_after = 200ms, as set; raise it if flows here may wait longer)"),
        "{}",
        run.stderr
    );
}
