//! `bfcsim replay` on HPCC ns-3's reference inputs (`data/reference/ns3-perf-k8`): every flow completes and is
//! reported in HPCC's `fct.txt` format, the flows are exactly those of `flow.txt`, all outputs are written
//! atomically, and the standalone FCT column matches HPCC's own output.

mod common;

use common::{TempDir, bfcsim, s, workspace_root};

/// One line of HPCC's `fct.txt`: `%08x %08x %u %u %lu %lu %lu %lu`.
#[derive(Debug)]
struct FctLine {
    src: u32,
    dst: u32,
    sport: u32,
    dport: u32,
    size: u64,
    start_ns: u64,
    fct_ns: u64,
    standalone_ns: u64,
}

/// Parses one `fct.txt` line strictly (8 fields, 8-digit lowercase hex IPs of HPCC's `0x0b000001 + id << 8`
/// form, decimal integers otherwise); `what` names the line in failures.
fn parse_fct_line(line: &str, what: &str) -> FctLine {
    let f: Vec<&str> = line.split(' ').collect();
    assert_eq!(
        f.len(),
        8,
        "{what}: expected 8 space-separated fields: {line:?}"
    );
    let ip = |field: &str| -> u32 {
        assert!(
            field.len() == 8
                && field
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
            "{what}: `{field}` is not %08x: {line:?}"
        );
        let ip = u32::from_str_radix(field, 16).unwrap();
        assert_eq!(
            ip & 0xff00_00ff,
            0x0b00_0001,
            "{what}: `{field}` is not an HPCC node IP"
        );
        (ip >> 8) & 0xffff
    };
    let int = |field: &str| -> u64 {
        assert!(
            !field.is_empty() && field.chars().all(|c| c.is_ascii_digit()),
            "{what}: `{field}` is not an unsigned decimal: {line:?}"
        );
        field.parse().unwrap()
    };
    FctLine {
        src: ip(f[0]),
        dst: ip(f[1]),
        sport: u32::try_from(int(f[2])).unwrap(),
        dport: u32::try_from(int(f[3])).unwrap(),
        size: int(f[4]),
        start_ns: int(f[5]),
        fct_ns: int(f[6]),
        standalone_ns: int(f[7]),
    }
}

/// The (src, dst, size) of every flow in an HPCC `flow.txt` (6 columns), sorted.
fn flow_txt_triples(text: &str) -> Vec<(u32, u32, u64)> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let count: usize = lines.next().unwrap().trim().parse().unwrap();
    let mut triples: Vec<(u32, u32, u64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 6, "flow.txt line {l:?}");
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(triples.len(), count, "flow.txt's count line");
    triples.sort_unstable();
    triples
}

#[test]
fn replay_of_hpcc_reference_reports_every_flow_in_hpcc_format() {
    let root = workspace_root();
    let reference = root.join("data/reference/ns3-perf-k8");
    let tmp = TempDir::new("replay-reference");
    let out = tmp.join("out");
    let run = bfcsim(&[
        "replay",
        "--topology",
        s(&reference.join("topology.txt")),
        "--flows",
        s(&reference.join("flow.txt")),
        "--scheme",
        "dctcp",
        "--outputs",
        "fct.txt,fct.csv,summary.json",
        "--out",
        s(&out),
    ]);
    assert!(
        run.success(),
        "replay exited with {:?}\nstderr:\n{}",
        run.code,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);

    // All four outputs, and no leftover temporary file.
    for name in ["fct.txt", "fct.csv", "summary.json", "run.json"] {
        assert!(
            out.join(name).is_file(),
            "{name} is missing from {}",
            out.display()
        );
    }
    let leftovers: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );

    // fct.txt: one line per flow, each in HPCC's format.
    let fct = std::fs::read_to_string(out.join("fct.txt")).unwrap();
    assert!(fct.ends_with('\n'), "fct.txt does not end with a newline");
    let lines: Vec<FctLine> = fct
        .lines()
        .enumerate()
        .map(|(i, l)| parse_fct_line(l, &format!("fct.txt:{}", i + 1)))
        .collect();
    assert_eq!(
        lines.len(),
        2692,
        "fct.txt must list every one of the 2692 flows"
    );
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.sport >= 10000,
            "fct.txt:{}: sport {} < 10000",
            i + 1,
            l.sport
        );
        assert_eq!(l.dport, 100, "fct.txt:{}: dport", i + 1);
        assert!(
            l.src < 128 && l.dst < 128,
            "fct.txt:{}: not host to host: {l:?}",
            i + 1
        );
        assert!(
            l.fct_ns > 0 && l.standalone_ns > 0,
            "fct.txt:{}: {l:?}",
            i + 1
        );
        assert!(
            l.start_ns >= 2_000_000_000,
            "fct.txt:{}: start {l:?}",
            i + 1
        );
    }

    // The same flows as flow.txt.
    let mut ours: Vec<(u32, u32, u64)> = lines.iter().map(|l| (l.src, l.dst, l.size)).collect();
    ours.sort_unstable();
    let flows = std::fs::read_to_string(reference.join("flow.txt")).unwrap();
    assert_eq!(
        ours,
        flow_txt_triples(&flows),
        "fct.txt's (src, dst, size) differ from flow.txt's"
    );

    // HPCC's standalone FCT of the first flow (38884 B, 13 -> 47), as HPCC's own output has it.
    let hpcc = std::fs::read_to_string(reference.join("hpcc.fct.txt")).unwrap();
    let theirs = parse_fct_line(hpcc.lines().next().unwrap(), "hpcc.fct.txt:1");
    assert_eq!((theirs.src, theirs.dst, theirs.size), (13, 47, 38884));
    assert_eq!(theirs.standalone_ns, 15740);
    let matching: Vec<&FctLine> = lines
        .iter()
        .filter(|l| (l.src, l.dst, l.size) == (13, 47, 38884))
        .collect();
    assert_eq!(matching.len(), 1, "flow 13 -> 47 of 38884 B: {matching:?}");
    assert_eq!(
        matching[0].standalone_ns, theirs.standalone_ns,
        "standalone FCT of 13 -> 47, 38884 B: ours {:?}, HPCC's {:?}",
        matching[0], theirs
    );
}
