//! Import of HPCC ns-3's `topology.txt` (`docs/FORMATS.md`): `node_num switch_num link_num`, a line with the switch ids,
//! then one link per line `src dst rate delay error_rate`, with ns-3 units (`100Gbps`, `1000ns`, `0.001ms`).
//! Parallel links between one pair stay distinct links. The header of PowerTCP's ns-3 (inet-tub/ns3-datacenter,
//! `powertcp-evaluation-burst.cc`), `node_num switch_num tor_num link_num`, is read too (the ToR count is its
//! driver's own and unused here).

use std::path::Path;

use bfcsim_core::{InputError, NodeId, Rate, Time};

use crate::topology::{NodeKind, Topology};

/// Parses the text of an HPCC `topology.txt`; `file` names it in errors.
pub fn parse_hpcc_topology(file: &Path, text: &str) -> Result<Topology, InputError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty());
    let (hl, header) = lines
        .next()
        .ok_or_else(|| InputError::file(file, "the file is empty"))?;
    let mut nums: Vec<&str> = header.split_whitespace().collect();
    if nums.len() == 4 {
        nums.remove(2); // PowerTCP's ns-3: `node_num switch_num tor_num link_num`
    }
    if nums.len() != 3 {
        return Err(InputError::at(
            file,
            hl,
            format!(
                "expected `node_num switch_num link_num` (or PowerTCP ns-3's `node_num switch_num tor_num \
                 link_num`), found {} fields",
                nums.len()
            ),
        ));
    }
    let count = |i: usize, what: &str| {
        nums[i]
            .parse::<usize>()
            .map_err(|_| InputError::at(file, hl, format!("{what} `{}` is not a count", nums[i])))
    };
    let (node_num, switch_num, link_num) = (
        count(0, "node_num")?,
        count(1, "switch_num")?,
        count(2, "link_num")?,
    );
    if switch_num > node_num {
        return Err(InputError::at(
            file,
            hl,
            format!("switch_num {switch_num} exceeds node_num {node_num}"),
        ));
    }
    // Every node needs a link and every link a line: counts the file cannot hold are refused before anything
    // is allocated for them.
    let lines_left = text.lines().filter(|l| !l.trim().is_empty()).count() - 1;
    if link_num > lines_left {
        return Err(InputError::at(
            file,
            hl,
            format!(
                "link_num {link_num} is more than the {lines_left} lines that follow the header"
            ),
        ));
    }
    if node_num > lines_left.saturating_mul(2) {
        return Err(InputError::at(
            file,
            hl,
            format!(
                "node_num {node_num} is more than the {lines_left} lines that follow the header can connect \
                 (two nodes per link)"
            ),
        ));
    }
    let mut is_switch = vec![false; node_num];
    if switch_num > 0 {
        let (sl, sw_line) = lines
            .next()
            .ok_or_else(|| InputError::file(file, "the switch id line is missing"))?;
        let ids: Vec<&str> = sw_line.split_whitespace().collect();
        if ids.len() != switch_num {
            return Err(InputError::at(
                file,
                sl,
                format!(
                    "the header says {switch_num} switches but this line lists {}",
                    ids.len()
                ),
            ));
        }
        for id in ids {
            let n: usize = id.parse().map_err(|_| {
                InputError::at(file, sl, format!("switch id `{id}` is not a number"))
            })?;
            if n >= node_num {
                return Err(InputError::at(
                    file,
                    sl,
                    format!("switch id {n} is out of range (node_num is {node_num})"),
                ));
            }
            if is_switch[n] {
                return Err(InputError::at(
                    file,
                    sl,
                    format!("switch id {n} is listed twice"),
                ));
            }
            is_switch[n] = true;
        }
    }
    let mut topo = Topology::new();
    for &sw in &is_switch {
        topo.add_node(if sw { NodeKind::Switch } else { NodeKind::Host });
    }
    let mut links = 0;
    // The line of each host's link: bfcsim's NIC has one port.
    let mut host_link: Vec<Option<usize>> = vec![None; node_num];
    for (ln, line) in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 5 {
            return Err(InputError::at(
                file,
                ln,
                format!(
                    "expected `src dst rate delay error_rate`, found {} fields",
                    f.len()
                ),
            ));
        }
        let node = |s: &str| -> Result<NodeId, InputError> {
            let n: usize = s
                .parse()
                .map_err(|_| InputError::at(file, ln, format!("node id `{s}` is not a number")))?;
            if n >= node_num {
                return Err(InputError::at(
                    file,
                    ln,
                    format!("node id {n} is out of range (node_num is {node_num})"),
                ));
            }
            Ok(NodeId::from_idx(n))
        };
        let (a, b) = (node(f[0])?, node(f[1])?);
        if a == b {
            return Err(InputError::at(
                file,
                ln,
                format!("link from node {a} to itself"),
            ));
        }
        let rate = Rate::parse(f[2]).map_err(|e| InputError::at(file, ln, e.to_string()))?;
        let delay = Time::parse(f[3]).map_err(|e| InputError::at(file, ln, e.to_string()))?;
        let err: f64 = f[4].parse().map_err(|_| {
            InputError::at(file, ln, format!("error rate `{}` is not a number", f[4]))
        })?;
        if !(0.0..=1.0).contains(&err) {
            return Err(InputError::at(
                file,
                ln,
                format!("error rate {err} is outside [0, 1] (a probability of losing each packet)"),
            ));
        }
        for n in [a, b].into_iter().filter(|n| !is_switch[n.idx()]) {
            if let Some(first) = host_link[n.idx()].replace(ln) {
                return Err(InputError::at(
                    file,
                    ln,
                    format!(
                        "host {n} already has a link (line {first}); bfcsim's NIC model has exactly one port"
                    ),
                ));
            }
        }
        let link = topo.connect(a, b, rate, delay);
        // HPCC's ns-3 puts a per-packet error model of this rate on the receiving side of both ends.
        topo.links[link.idx()].error_rate = err;
        links += 1;
    }
    if links != link_num {
        return Err(InputError::file(
            file,
            format!("the header says {link_num} links but the file has {links}"),
        ));
    }
    topo.finish();
    if let Some(h) = topo
        .hosts
        .iter()
        .find(|h| topo.nodes[h.idx()].ports.is_empty())
    {
        return Err(InputError::file(file, format!("host {h} has no link")));
    }
    if let Some(n) = (0..node_num).find(|&n| topo.nodes[n].layer == u8::MAX) {
        return Err(InputError::file(
            file,
            format!("node {n} is not connected to any host"),
        ));
    }
    Ok(topo)
}

/// Reads and parses an HPCC `topology.txt`.
pub fn read_hpcc_topology(path: &Path) -> Result<Topology, InputError> {
    parse_hpcc_topology(path, &bfcsim_core::input::read_to_string(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Topology, InputError> {
        parse_hpcc_topology(Path::new("t.txt"), text)
    }

    #[test]
    fn parses_parallel_links_and_units() {
        let t = parse("4 2 4\n2 3\n0 2 100Gbps 1000ns 0\n1 3 100Gbps 0.001ms 0\n2 3 40Gbps 1us 0\n2 3 40Gbps 1us 0.000000\n").unwrap();
        assert_eq!(t.hosts.len(), 2);
        assert_eq!(t.links.len(), 4);
        assert_eq!(t.nodes[2].ports.len(), 3);
        assert_eq!(t.links[1].delay, Time::from_us(1));
        assert_eq!(t.links[2].rate, Rate::gbps(40));
    }

    #[test]
    fn reads_powertcp_ns3s_header_with_a_tor_count() {
        let t = parse("4 2 1 2\n2 3\n0 2 100Gbps 1us 0\n1 3 100Gbps 1us 0\n").unwrap();
        assert_eq!((t.hosts.len(), t.links.len()), (2, 2));
    }

    #[test]
    fn malformed_files_name_line_and_problem() {
        let cases = [
            ("", "empty"),
            ("3 1\n", "t.txt:1: expected `node_num switch_num link_num`"),
            (
                "3 1 2\n2\n0 2 100Gbps 1us 0\n",
                "header says 2 links but the file has 1",
            ),
            (
                "3 1 2\n2 1\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n",
                "t.txt:2: the header says 1 switches",
            ),
            (
                "3 1 1\n2\n0 9 100Gbps 1us 0\n",
                "t.txt:3: node id 9 is out of range",
            ),
            ("3 1 1\n2\n0 2 100Gbps 1 0\n", "t.txt:3: `1` is not a time"),
            (
                "3 1 1\n2\n0 2 fast 1us 0\n",
                "t.txt:3: `fast` is not a rate",
            ),
            ("3 1 1\n2\n0 0 100Gbps 1us 0\n", "to itself"),
            ("3 1 1\n2\n0 2 100Gbps 1us\n", "found 4 fields"),
            ("3 1 1\n2\n0 2 100Gbps 1us 0\n", "host 1 has no link"),
            (
                "3 1 3\n2\n0 2 100Gbps 1us 0\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n",
                "t.txt:4: host 0 already has a link (line 3); bfcsim's NIC model has exactly one port",
            ),
            (
                "3 1 1\n5\n0 2 100Gbps 1us 0\n",
                "switch id 5 is out of range",
            ),
            ("3 1 1\n2\n0 2 100Gbps 1us 1.5\n", "outside [0, 1]"),
            (
                "18446744073709551615 1 1\n2\n0 2 100Gbps 1us 0\n",
                "t.txt:1: node_num 18446744073709551615 is more than the 2 lines that follow",
            ),
            (
                "3 1 4000000000\n2\n0 2 100Gbps 1us 0\n",
                "t.txt:1: link_num 4000000000 is more than the 2 lines",
            ),
        ];
        for (text, want) in cases {
            let msg = parse(text).unwrap_err().to_string();
            assert!(msg.contains(want), "{text:?}: got `{msg}`, want `{want}`");
        }
    }
}
