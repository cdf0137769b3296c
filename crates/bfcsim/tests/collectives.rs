//! Issue 70: collectives against their analytic completion times on an idle non-blocking fat tree.
//!
//! A ring all-reduce of S bytes over n ranks is 2(n-1) steps of S/n bytes; each rank sends a step once it has
//! received the step before from its left neighbour, so the collective ends after the slowest chain of 2(n-1)
//! consecutive ring edges, each taking the chunk's time on the wire plus the edge's one-way latency: the links'
//! propagation (1 µs each) plus the last packet's store-and-forward serialization at each switch. On the wire each
//! data packet carries 1000 B of payload in 1048 B, and the receiver acknowledges every 64th (`nic.ack_every`,
//! RoCE NICs coalesce ACKs too). With an ACK per packet the ring is no longer on an idle fabric: the 64 B ACKs of
//! one ring edge share a ToR uplink with the next edge's data, which its own NIC already sends at 1048/1112 of the
//! line, so that link runs full and queues; k = 8, n = 64 at 100 KB a step then takes 8% over this bound (and 2%
//! at 50 KB).

mod common;

use common::{TempDir, bfcsim_ok, read_json, s};

const RATE: f64 = 100e9;
const WIRE: f64 = 1048.0;
const ACK: f64 = 64.0;
const PAYLOAD: f64 = 1000.0;
const ACK_EVERY: f64 = 64.0;

/// Links between host indices `a` and `b` of a k-ary fat tree.
fn links(k: u32, a: u32, b: u32) -> u32 {
    let (tor, pod) = (k / 2, k * k / 4);
    if a / tor == b / tor {
        2
    } else if a / pod == b / pod {
        4
    } else {
        6
    }
}

/// The analytic completion time, in µs, of a ring all-reduce of `size` bytes over hosts 0..n of a k-ary fat tree.
fn ring_all_reduce_us(k: u32, n: u32, size: u64) -> f64 {
    let chunk = (size / n as u64) as f64;
    let packets = (chunk / PAYLOAD).ceil();
    let wire = packets * (WIRE + ACK / ACK_EVERY) * 8.0 / RATE * 1e6;
    let serial = WIRE * 8.0 / RATE * 1e6;
    let edge = |r: u32| {
        let l = links(k, r, (r + 1) % n) as f64;
        wire + l * 1.0 + (l - 1.0) * serial
    };
    let steps = 2 * (n - 1);
    (0..n)
        .map(|end| {
            (0..steps)
                .map(|j| edge((end + n * steps - j) % n))
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// Runs `body` (its collectives) on a k-ary fat tree under `scheme` with `tables` (TOML tables of the
/// experiment) and returns the first collective's first iteration from `summary.json`.
fn run_collective(
    name: &str,
    (k, scheme): (u32, &str),
    tables: &str,
    body: &str,
) -> serde_json::Value {
    let dir = TempDir::new(name);
    let toml = format!(
        "name = \"{name}\"\nseed = 1\n[topology]\nkind = \"fat-tree\"\nk = {k}\n{tables}\n\
         [scheme]\nname = \"{scheme}\"\n[workload]\nduration = \"1us\"\n{body}"
    );
    let experiment = dir.write("c.toml", &toml);
    let out = dir.join("out");
    bfcsim_ok(&["run", s(&experiment), "--out", s(&out)]);
    let summary = read_json(&out.join("summary.json"));
    summary["collectives"][0]["iterations"][0].clone()
}

#[test]
fn ring_all_reduce_takes_its_analytic_time() {
    for (k, n, per_rank) in [
        (8u32, 8u32, 200_000u64),
        (8, 64, 100_000),
        (16, 512, 20_000),
    ] {
        let size = n as u64 * per_rank;
        let it = run_collective(
            &format!("ring-{n}"),
            (k, "none"),
            "[switch]\nbuffer = \"32MiB\"\n[nic]\nack_every = 64\n",
            &format!(
                "[[workload.collective]]\nname = \"ar\"\nkind = \"all-reduce\"\nsize = \"{size}B\"\nranks = {n}\n"
            ),
        );
        let cct = it["cct_us"].as_f64().expect("finished");
        let want = ring_all_reduce_us(k, n, size);
        let off = cct / want - 1.0;
        assert!(
            off.abs() < 0.02,
            "n = {n}: CCT {cct:.2} us, analytic {want:.2} us ({:+.2}%)",
            off * 100.0
        );
        assert_eq!(it["steps"].as_array().unwrap().len(), 2 * (n as usize - 1));
    }
}

#[test]
fn all_to_all_runs_at_line_rate_through_one_non_blocking_switch() {
    // 64 hosts on one switch (a star: one-level full bisection, no choice of path): each sends (n-1) S/n bytes
    // and receives as much, at once, so every NIC is the bottleneck; the run takes that at line rate plus one
    // packet's two-link latency. (On a k = 8 fat tree the same all-to-all of 128 ranks takes 26% over it under
    // ECMP and 7% under random packet spraying, whose per-packet draws leave some uplinks idle while others
    // queue at full load; an adaptive or round-robin choice would close that, issues 69 and 71.)
    let (n, size) = (64u64, 64 * 20_000u64);
    let dir = TempDir::new("a2a-star");
    let toml = format!(
        "name = \"a2a\"\nseed = 1\n[topology]\nkind = \"star\"\nhosts = {n}\nrate = \"100Gbps\"\n\
         delay = \"1us\"\n[switch]\nunlimited_buffer = true\n[nic]\nack_every = 64\n[scheme]\nname = \"none\"\n\
         [workload]\nduration = \"1us\"\n[[workload.collective]]\nname = \"a2a\"\nkind = \"all-to-all\"\n\
         size = \"{size}B\"\nranks = {n}\n"
    );
    let experiment = dir.write("c.toml", &toml);
    let out = dir.join("out");
    bfcsim_ok(&["run", s(&experiment), "--out", s(&out)]);
    let it = read_json(&out.join("summary.json"))["collectives"][0]["iterations"][0].clone();
    let cct = it["cct_us"].as_f64().expect("finished");
    let per_dst = (size / n) as f64;
    let bytes = (n - 1) as f64 * (per_dst / PAYLOAD).ceil() * (WIRE + ACK / ACK_EVERY);
    let want = bytes * 8.0 / RATE * 1e6 + 2.0 + WIRE * 8.0 / RATE * 1e6;
    let off = cct / want - 1.0;
    assert!(
        off.abs() < 0.03,
        "CCT {cct:.2} us, line rate {want:.2} us ({:+.2}%)",
        off * 100.0
    );
}
