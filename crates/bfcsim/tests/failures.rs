//! Issue 71: the fabric under failure. A k = 8 fat tree (hosts 0-127, ToRs 128-159, aggregation 160-191, cores
//! 192-207) under web search at 50% of the host links, with a core link that fails, a link that flaps, a ToR
//! uplink at a quarter of its speed, and random loss under each family of schemes: every flow finishes, every
//! drop carries the event's reason, the events' own counts add up to the drops, and no packet joins a failed
//! link's queue once routing knows (the detection delay). Bad events are refused with the file's line.

mod common;

use common::{TempDir, bfcsim, bfcsim_ok, read_json, s};

/// An experiment on the k = 8 fat tree with `scheme`, 1.5 ms of arrivals, and `events` (TOML).
fn experiment(name: &str, scheme: &str, events: &str) -> String {
    format!(
        "name = \"{name}\"\nseed = 1\n[topology]\nkind = \"fat-tree\"\nk = 8\n[switch]\nbuffer = \"32MiB\"\n\
         [scheme]\nname = \"{scheme}\"\n[workload]\ncdf = \"websearch\"\narrivals = \"poisson\"\nload = 0.5\n\
         load_on = \"host\"\nduration = \"1.5ms\"\n{events}"
    )
}

/// Runs `text` and returns its `summary.json`.
fn run(tmp: &TempDir, name: &str, text: &str) -> serde_json::Value {
    let file = tmp.write(&format!("{name}.toml"), text);
    let out = tmp.join(name);
    bfcsim_ok(&[
        "run",
        s(&file),
        "--out",
        s(&out),
        "--outputs",
        "summary.json",
    ]);
    read_json(&out.join("summary.json"))
}

/// Every flow finished, and the drops are exactly the fabric events' (`reason`), as their reports count them.
fn check(summary: &serde_json::Value, reason: &str) -> u64 {
    assert_eq!(summary["unfinished"], 0, "{summary:#}");
    let drops = &summary["drops"];
    let ours = drops[reason].as_u64().unwrap_or(0);
    let total = summary["dropped_packets"].as_u64().unwrap();
    assert_eq!(ours, total, "every drop is {reason}: {drops}");
    let events = summary["fabric_events"].as_array().expect("fabric_events");
    let counted: u64 = events.iter().map(|e| e["drops"].as_u64().unwrap()).sum();
    assert_eq!(counted, total, "the events' drops: {events:?}");
    for e in events {
        assert_eq!(e["queued_after_detection"], 0, "{e}");
    }
    total
}

#[test]
fn a_core_link_that_fails_and_comes_back() {
    let tmp = TempDir::new("failures-down");
    let events = "[[events]]\nat = \"0.5ms\"\nkind = \"down\"\nlink = [160, 192]\nuntil = \"1ms\"\ndetect = \"10us\"\n";
    let summary = run(&tmp, "down", &experiment("down", "dctcp", events));
    let lost = check(&summary, "link-down");
    assert!(lost > 0, "the failure cost nothing: {summary:#}");
    // The same run on two threads: the same flows, the same fingerprint.
    let file = tmp.write("down2.toml", &experiment("down", "dctcp", events));
    let (one, two) = (tmp.join("one"), tmp.join("two"));
    for (out, threads) in [(&one, "1"), (&two, "2")] {
        bfcsim_ok(&[
            "run",
            s(&file),
            "--set",
            &format!("run.threads={threads}"),
            "--out",
            s(out),
            "--outputs",
            "fct.csv",
        ]);
    }
    let read = |p: &std::path::Path| std::fs::read(p.join("fct.csv")).unwrap();
    assert_eq!(
        read(&one),
        read(&two),
        "fct.csv differs between 1 and 2 threads"
    );
    let fp = |p: &std::path::Path| read_json(&p.join("run.json"))["fingerprint"].clone();
    assert_eq!(fp(&one), fp(&two));
}

#[test]
fn a_flapping_link_and_a_slow_uplink() {
    let tmp = TempDir::new("failures-flap");
    let flap = "[[events]]\nat = \"0.3ms\"\nkind = \"flap\"\nlink = [160, 192]\nperiod = \"100us\"\n\
                down_for = \"30us\"\ncount = 5\ndetect = \"5us\"\n";
    let summary = run(&tmp, "flap", &experiment("flap", "dctcp", flap));
    assert!(check(&summary, "link-down") > 0, "{summary:#}");
    // A ToR's first uplink at 25 Gb/s from the start: slower, nothing lost.
    let slow = "[[events]]\nat = \"0s\"\nkind = \"rate\"\nlink = [128, 160]\nrate = 0.25\n";
    let summary = run(&tmp, "slow", &experiment("slow", "dctcp", slow));
    assert_eq!(check(&summary, "link-down"), 0);
}

#[test]
fn every_scheme_recovers_from_random_loss() {
    let tmp = TempDir::new("failures-loss");
    // Every link of aggregation switch 160 loses 1 packet in 10,000.
    let loss = "[[events]]\nat = \"0s\"\nkind = \"loss\"\nswitch = 160\nloss = 1e-4\n";
    for scheme in ["dctcp", "dcqcn", "hpcc", "homa", "ndp", "bfc"] {
        let summary = run(&tmp, scheme, &experiment(scheme, scheme, loss));
        let lost = check(&summary, "link-loss");
        println!(
            "{scheme}: {lost} lost, {} timeouts, {} duplicates",
            summary["timeouts"], summary["duplicate_data"]
        );
    }
}

#[test]
fn bad_events_are_refused_at_their_line() {
    let tmp = TempDir::new("failures-bad");
    let cases = [
        (
            "[[events]]\nat = \"1ms\"\nkind = \"down\"\nlink = [160, 999]\n",
            "events.0.link names node 999",
        ),
        (
            "[[events]]\nat = \"1ms\"\nkind = \"loss\"\nlink = [160, 192]\nloss = 2.0\n",
            "events.0.loss = 2 is outside [0, 1]",
        ),
        (
            "[[events]]\nat = \"1ms\"\nkind = \"down\"\nlink = [160, 192]\nuntil = \"0.5ms\"\n",
            "events.0.until = 500us is not after",
        ),
    ];
    for (i, (events, want)) in cases.iter().enumerate() {
        let text = experiment("bad", "dctcp", events);
        let file = tmp.write(&format!("bad{i}.toml"), &text);
        let run = bfcsim(&["run", s(&file), "--out", s(&tmp.join("bad"))]);
        assert!(!run.success(), "{events} ran");
        let line = text
            .lines()
            .position(|l| l.starts_with("[[events]]"))
            .unwrap()
            + 1;
        assert!(
            run.stderr.contains(want) && run.stderr.contains(&format!("bad{i}.toml:")),
            "{events}: {}",
            run.stderr
        );
        assert!(
            (line..line + 6).any(|l| run.stderr.contains(&format!("bad{i}.toml:{l}"))),
            "{events}: not at the event's lines: {}",
            run.stderr
        );
    }
    // No link between two hosts; a time after the run ends: found once the fabric is built.
    for (i, (events, want)) in [
        (
            "[[events]]\nat = \"1ms\"\nkind = \"down\"\nlink = [0, 1]\n",
            "events.0.link = [0, 1]: no link joins nodes 0 and 1",
        ),
        (
            "[[events]]\nat = \"5s\"\nkind = \"down\"\nlink = [160, 192]\n",
            "events.0.at = 5s is after the run ends",
        ),
    ]
    .iter()
    .enumerate()
    {
        let file = tmp.write(
            &format!("late{i}.toml"),
            &experiment("bad", "dctcp", events),
        );
        let run = bfcsim(&["run", s(&file), "--out", s(&tmp.join("late"))]);
        assert!(
            !run.success() && run.stderr.contains(want),
            "{events}: {}",
            run.stderr
        );
    }
}

/// HPCC's `topology.txt` with an error rate on every link (its last column, which bfcsim refused before): each
/// link loses that share of the packets crossing it, as HPCC's ns-3's receive error model does, and every flow
/// still finishes.
#[test]
fn hpcc_topology_error_rates_lose_packets() {
    let tmp = TempDir::new("failures-hpcc");
    let reference = common::workspace_root().join("data/reference/ns3-perf-k8");
    let text = std::fs::read_to_string(reference.join("topology.txt")).unwrap();
    let lossy: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i < 2 {
                format!("{l}\n")
            } else {
                let f: Vec<&str> = l.split_whitespace().collect();
                format!("{} {} {} {} 0.0001\n", f[0], f[1], f[2], f[3])
            }
        })
        .collect();
    let topology = tmp.write("topology.txt", &lossy);
    let out = tmp.join("out");
    bfcsim_ok(&[
        "replay",
        "--topology",
        s(&topology),
        "--flows",
        s(&reference.join("flow.txt")),
        "--scheme",
        "hpcc",
        "--outputs",
        "summary.json",
        "--out",
        s(&out),
    ]);
    let summary = read_json(&out.join("summary.json"));
    let lost = check(&summary, "link-loss");
    assert_eq!(summary["fabric_events"].as_array().unwrap().len(), 384);
    // 1 in 10,000 of the packets that cross a link, data and ACKs.
    let hops = summary["packet_hops"].as_f64().unwrap();
    let expected = hops * 1e-4;
    assert!(
        (lost as f64 - expected).abs() < 5.0 * expected.sqrt(),
        "{lost} lost of {hops} packet-hops"
    );
}
