//! Importing HPCC's `flow.txt` (the flow list its ns-3 `third.cc` reads and `traffic_gen.py` writes).
//!
//! Line 1 is the flow count N; then N lines of `src dst pg dport size_bytes start_seconds`, or the same with a
//! leading flow-id column (7 columns, as Parsimon writes). `pg` becomes the flow's class; dport 200 marks an
//! incast flow (100 is the normal data port). Start times are parsed exactly ([`Time::parse_secs`]) and must be
//! ascending, as HPCC's reader requires. Blank lines are skipped; line numbers in errors count every line.

use std::path::Path;

use bfcsim_core::{Bytes, FlowSpec, InputError, NodeId, Time};

/// HPCC's destination port for incast flows.
pub const INCAST_DPORT: u16 = 200;

/// The largest priority group a flow may name: the last class of a switch with the most classes (63,
/// `switch.classes`); a group past a run's last class is served as that class.
pub const MAX_CLASS: u8 = 62;

/// The flows of a flow file, with the destination port each one named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowFile {
    /// The flows, in file order.
    pub flows: Vec<FlowSpec>,
    /// `dports[i]` is the dport of `flows[i]`.
    pub dports: Vec<u16>,
}

/// Parses flow-file `text` (`file` names it in errors). `is_host[n]` says whether node `n` is a host; nodes past
/// its end do not exist.
pub fn parse_flow_file(
    text: &str,
    file: impl AsRef<Path>,
    is_host: &[bool],
) -> Result<FlowFile, InputError> {
    let file = file.as_ref();
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>()))
        .filter(|(_, f)| !f.is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Err(InputError::file(
            file,
            "the flow file is empty (expected the flow count on line 1)",
        ));
    };
    if header.len() != 1 {
        return Err(InputError::at(
            file,
            header_line,
            format!(
                "expected the flow count alone on the first line, found {} columns",
                header.len()
            ),
        ));
    }
    let count: usize = header[0].parse().map_err(|_| {
        InputError::at(
            file,
            header_line,
            format!("the flow count `{}` is not a whole number", header[0]),
        )
    })?;

    let mut flows = Vec::with_capacity(count.min(1 << 24));
    let mut dports = Vec::with_capacity(count.min(1 << 24));
    let mut columns = None;
    let mut last_start = Time::ZERO;
    for (line, fields) in lines {
        let at = |msg: String| InputError::at(file, line, msg);
        if flows.len() == count {
            return Err(at(format!(
                "more flows than the {count} the first line announces"
            )));
        }
        let n = fields.len();
        if n != 6 && n != 7 {
            return Err(at(format!(
                "expected 6 columns (`src dst pg dport size start_s`) or 7 with a leading flow id, found {n}"
            )));
        }
        if *columns.get_or_insert(n) != n {
            return Err(at(format!(
                "{n} columns, but earlier flows have {}",
                columns.unwrap_or(n)
            )));
        }
        let f = &fields[n - 6..];
        if n == 7 {
            int::<u64>(fields[0], "flow id", line, file)?;
        }
        let src = NodeId(int(f[0], "source node", line, file)?);
        let dst = NodeId(int(f[1], "destination node", line, file)?);
        let pg: u8 = int(f[2], "priority group (0..=62)", line, file)?;
        if pg > MAX_CLASS {
            return Err(at(format!(
                "priority group {pg} is beyond the last class a switch can have ({MAX_CLASS}: switch.classes is at most 63)"
            )));
        }
        let dport: u16 = int(f[3], "destination port (0..=65535)", line, file)?;
        // Scripts print large sizes with an exponent (awk's `1e+06`): exact ones are whole numbers too.
        let size: u64 = match int(f[4], "size in bytes", line, file) {
            Ok(size) => size,
            Err(e) => Bytes::parse(&format!("{}B", f[4])).map_err(|_| e)?.0,
        };
        let start = Time::parse_secs(f[5]).map_err(|e| {
            at(format!(
                "start time `{}` is not a number of seconds: {}",
                f[5], e.reason
            ))
        })?;
        for node in [src, dst] {
            match is_host.get(node.idx()) {
                Some(true) => {}
                Some(false) => return Err(at(format!("node {node} is a switch, not a host"))),
                None => {
                    return Err(at(format!(
                        "node {node} does not exist (the topology has {} nodes)",
                        is_host.len()
                    )));
                }
            }
        }
        if src == dst {
            return Err(at(format!(
                "source and destination are the same node {src}"
            )));
        }
        if size == 0 {
            return Err(at("size 0: a flow must carry at least 1 byte".into()));
        }
        if start < last_start {
            return Err(at(format!(
                "start time {start} is earlier than the previous flow's {last_start}; flows must be in ascending start order"
            )));
        }
        last_start = start;
        flows.push(FlowSpec {
            src,
            dst,
            size: Bytes(size),
            start,
            class: pg,
            incast: dport == INCAST_DPORT,
            group: None,
        });
        dports.push(dport);
    }
    if flows.len() < count {
        return Err(InputError::at(
            file,
            header_line,
            format!(
                "the first line announces {count} flows but the file has {}",
                flows.len()
            ),
        ));
    }
    Ok(FlowFile { flows, dports })
}

/// Reads and parses the flow file at `path` (see [`parse_flow_file`]).
pub fn load_flow_file(path: impl AsRef<Path>, is_host: &[bool]) -> Result<FlowFile, InputError> {
    let path = path.as_ref();
    let text = bfcsim_core::input::read_to_string(path)?;
    parse_flow_file(&text, path, is_host)
}

/// Parses a non-negative integer field.
fn int<T: std::str::FromStr>(
    field: &str,
    what: &str,
    line: usize,
    file: &Path,
) -> Result<T, InputError> {
    field.parse().map_err(|_| {
        InputError::at(
            file,
            line,
            format!("{what} `{field}` is not a valid whole number"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// 4 hosts (0..4) then 2 switches (4, 5).
    const NODES: [bool; 6] = [true, true, true, true, false, false];

    fn parse(text: &str) -> Result<FlowFile, InputError> {
        parse_flow_file(text, "flow.txt", &NODES)
    }

    fn err(text: &str) -> InputError {
        parse(text).expect_err("should be rejected")
    }

    #[test]
    fn parses_six_and_seven_columns() {
        let six =
            "3\n0 1 3 100 1000 2.000000000\n2 3 3 200 20000 2.000002612\n1 0 0 100 1 2.000002612\n";
        let f = parse(six).unwrap();
        assert_eq!(f.flows.len(), 3);
        assert_eq!(f.dports, vec![100, 200, 100]);
        assert_eq!(
            f.flows[1],
            FlowSpec {
                src: NodeId(2),
                dst: NodeId(3),
                size: Bytes(20000),
                start: Time::from_ns(2_000_002_612),
                class: 3,
                incast: true,
                group: None,
            }
        );
        assert!(!f.flows[0].incast);
        let seven = "3\n0 0 1 3 100 1000 2.000000000\n\n1 2 3 3 200 20000 2.000002612\n2 1 0 0 100 1 2.000002612";
        assert_eq!(parse(seven).unwrap(), f);
        assert_eq!(parse("0\n").unwrap().flows, vec![]);
    }

    // ---- malformed input: each error names the line and the problem ----

    #[test]
    fn rejects_too_few_flows() {
        let e = err("3\n0 1 3 100 1000 2.0\n");
        assert_eq!(e.line, Some(1));
        assert!(
            e.message.contains("announces 3 flows but the file has 1"),
            "{e}"
        );
    }

    #[test]
    fn rejects_too_many_flows() {
        let e = err("1\n0 1 3 100 1000 2.0\n1 2 3 100 1000 2.0\n");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("more flows than the 1"), "{e}");
    }

    #[test]
    fn numbers_with_exponents_are_read_as_scripts_write_them() {
        // Issue 72: ns-3 flow files made by scripts write `1e-06` seconds and `1e+06` bytes.
        let f = parse("2\n0 1 3 100 1e+06 1e-06\n1 0 3 100 1000 2.5e-3\n").unwrap();
        assert_eq!(f.flows[0].size, Bytes(1_000_000));
        assert_eq!(f.flows[0].start, Time::from_us(1));
        assert_eq!(f.flows[1].start, Time::from_us(2500));
    }

    #[test]
    fn rejects_non_numeric_fields() {
        let e = err("1\n0 1 3 100 lots 2.0\n");
        assert_eq!(e.line, Some(2));
        assert!(
            e.message
                .contains("size in bytes `lots` is not a valid whole number"),
            "{e}"
        );
        let e = err("1\n0 1 3 100 10 2.0x\n");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("start time `2.0x`"), "{e}");
        let e = err("1\n0 1 3 100 1.5e0 2.0\n");
        assert!(e.message.contains("size in bytes `1.5e0`"), "{e}");
        let e = err("x\n");
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("flow count `x`"), "{e}");
        let e = err("1\n0 1 300 100 10 2.0\n");
        assert!(e.message.contains("priority group (0..=62) `300`"), "{e}");
        assert_eq!(
            e.to_string(),
            "flow.txt:2: priority group (0..=62) `300` is not a valid whole number"
        );
        // Issue 72: accepted silently, and served as the last class.
        let e = err("1\n0 1 99 100 10 2.0\n");
        assert_eq!(
            e.to_string(),
            "flow.txt:2: priority group 99 is beyond the last class a switch can have (62: switch.classes is at most 63)"
        );
    }

    #[test]
    fn rejects_wrong_column_count() {
        let e = err("1\n0 1 3 100 1000\n");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("found 5"), "{e}");
        let e = err("2\n0 1 3 100 1000 2.0\n9 0 1 3 100 1000 2.0\n");
        assert_eq!(e.line, Some(3));
        assert!(
            e.message.contains("7 columns, but earlier flows have 6"),
            "{e}"
        );
    }

    #[test]
    fn rejects_same_source_and_destination() {
        let e = err("1\n2 2 3 100 1000 2.0\n");
        assert_eq!(e.line, Some(2));
        assert!(
            e.message
                .contains("source and destination are the same node 2"),
            "{e}"
        );
    }

    #[test]
    fn rejects_zero_size() {
        let e = err("1\n0 1 3 100 0 2.0\n");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("size 0"), "{e}");
    }

    #[test]
    fn rejects_descending_start_times() {
        let e = err("3\n0 1 3 100 10 2.0\n1 2 3 100 10 2.000001\n2 3 3 100 10 2.0000005\n");
        assert_eq!(e.line, Some(4));
        assert!(
            e.message.contains("earlier than the previous flow's"),
            "{e}"
        );
    }

    #[test]
    fn rejects_switches_and_missing_nodes() {
        let e = err("1\n0 5 3 100 10 2.0\n");
        assert_eq!(e.line, Some(2));
        assert_eq!(e.message, "node 5 is a switch, not a host");
        let e = err("1\n130 1 3 100 10 2.0\n");
        assert!(
            e.message
                .contains("node 130 does not exist (the topology has 6 nodes)"),
            "{e}"
        );
    }

    #[test]
    fn rejects_empty_file() {
        let e = err("\n\n");
        assert_eq!(e.line, None);
        assert!(e.message.contains("empty"), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn never_panics_on_random_lines(
            count in prop_oneof![Just("2".to_string()), "[0-9x]{0,3}"],
            lines in prop::collection::vec(
                prop::collection::vec(
                    prop_oneof![
                        Just("0".to_string()), Just("1".to_string()), Just("5".to_string()), Just("200".to_string()),
                        Just("2.000001".to_string()), Just("-1".to_string()), Just("99999999999999999999".to_string()),
                        "[0-9.]{0,5}",
                    ],
                    5..8,
                ),
                0..6,
            ),
        ) {
            let text: String = std::iter::once(count).chain(lines.iter().map(|l| l.join(" "))).map(|l| l + "\n").collect();
            if let Ok(f) = parse(&text) {
                prop_assert_eq!(f.flows.len(), f.dports.len());
                prop_assert!(f.flows.iter().all(|x| x.src != x.dst && x.size.0 > 0));
                prop_assert!(f.flows.windows(2).all(|w| w[0].start <= w[1].start));
            }
        }
    }
}
