//! `bfcsim run EXPERIMENT --sweep KEY=V1,V2,...`: one run per point of the cartesian product of the sweeps (the
//! first sweep varies slowest), each point an ordinary run with its values as extra `--set` overrides, kept in
//! the resumable run store ([`crate::store`]: `OUT/runs/<key>/`, so a sweep started again skips the points that
//! finished), and one summary line per point: the FCT slowdown of all non-incast flows and the
//! active flows per sampled switch port (mean, p50, p90, p99, max, and the fraction of samples above 32, the
//! queues per port of Tofino2 that BFC §2.3's Fig. 4 marks). Every point is deterministic on its own, so
//! running points in parallel changes nothing but the wall time.

use std::fmt::Write;

use crate::digest::Digest;

/// One `--sweep KEY=V1,V2,...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The dotted key, as for `--set`.
    pub key: String,
    /// Its values, in order.
    pub values: Vec<String>,
}

impl Sweep {
    /// Parses `KEY=V1,V2,...` (values cannot contain commas).
    pub fn parse(text: &str) -> Result<Sweep, String> {
        let (key, values) = text
            .split_once('=')
            .ok_or_else(|| format!("--sweep `{text}`: expected KEY=V1,V2,..."))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if key.trim().is_empty() || values.iter().any(String::is_empty) {
            return Err(format!(
                "--sweep `{text}`: expected KEY=V1,V2,... with no empty key or value"
            ));
        }
        if let Some((i, v)) = values
            .iter()
            .enumerate()
            .find(|(i, v)| values[..*i].contains(v))
        {
            return Err(format!(
                "--sweep `{text}`: the value `{v}` is given twice (values {} and {})",
                values.iter().position(|x| x == v).map_or(0, |p| p + 1),
                i + 1
            ));
        }
        Ok(Sweep {
            key: key.trim().to_string(),
            values,
        })
    }
}

/// Checks that no key is swept twice (the later sweep would override the earlier one in every point).
pub fn check_keys(sweeps: &[Sweep]) -> Result<(), String> {
    for (i, s) in sweeps.iter().enumerate() {
        if sweeps[..i].iter().any(|o| o.key == s.key) {
            return Err(format!(
                "--sweep {}: the key is swept twice; give all its values in one --sweep",
                s.key
            ));
        }
    }
    Ok(())
}

/// The most points one sweep may have: each is a run, and the list of them is built before any runs.
pub const MAX_POINTS: u128 = 100_000;

/// Checks that the product of the sweeps stays within [`MAX_POINTS`].
pub fn check_size(sweeps: &[Sweep]) -> Result<(), String> {
    let points = sweeps
        .iter()
        .fold(1u128, |n, s| n.saturating_mul(s.values.len() as u128));
    if points > MAX_POINTS {
        return Err(format!(
            "--sweep: {points} points (the product of the values of every --sweep), more than {MAX_POINTS} runs"
        ));
    }
    Ok(())
}

/// Every point of the cartesian product of `sweeps`, first sweep slowest, each as its `KEY=VALUE` overrides.
pub fn points(sweeps: &[Sweep]) -> Vec<Vec<String>> {
    sweeps.iter().fold(vec![Vec::new()], |acc, s| {
        acc.iter()
            .flat_map(|point| {
                s.values.iter().map(move |v| {
                    let mut p = point.clone();
                    p.push(format!("{}={v}", s.key));
                    p
                })
            })
            .collect()
    })
}

/// Column names of [`values`] (`sweep.csv` adds the run's directory).
pub const COLUMNS: [&str; 12] = [
    "point",
    "flows",
    "unfinished",
    "slowdown_avg",
    "slowdown_p99",
    "active_mean",
    "active_p50",
    "active_p90",
    "active_p99",
    "active_max",
    "active_above_32",
    "violations",
];

/// The digest of one point as the values of [`COLUMNS`] (empty where not measured): the slowdown of the
/// non-incast flows and the active flows per sampled port.
pub fn values(point: &[String], digest: &Digest) -> Vec<String> {
    let mut v = vec![
        point.join(" "),
        digest.flows.to_string(),
        digest.unfinished.to_string(),
    ];
    match digest.set("non-incast").and_then(|s| s.all) {
        Some(s) => v.extend([format!("{:.3}", s.avg), format!("{:.3}", s.p99)]),
        None => v.extend([String::new(), String::new()]),
    }
    match &digest.active {
        Some(a) => v.extend([
            format!("{:.3}", a.mean),
            a.p50.to_string(),
            a.p90.to_string(),
            a.p99.to_string(),
            a.max.to_string(),
            format!("{:.4}", a.above_32),
        ]),
        None => v.extend(std::iter::repeat_n(String::new(), 6)),
    }
    v.push(digest.violations.to_string());
    v
}

/// The console header of the sweep's lines.
pub fn header(width: usize) -> String {
    format!(
        "{:<width$} {:>8} {:>6} {:>8} {:>8} | {:>8} {:>5} {:>5} {:>5} {:>6} {:>8}",
        "point",
        "flows",
        "unfin",
        "sd avg",
        "sd p99",
        "act mean",
        "p50",
        "p90",
        "p99",
        "max",
        "P(>32)"
    )
}

/// One console line: [`values`] laid out under [`header`].
pub fn line(values: &[String], width: usize) -> String {
    let mut out = format!(
        "{:<width$} {:>8} {:>6} {:>8} {:>8} | {:>8} {:>5} {:>5} {:>5} {:>6} {:>8}",
        values[0],
        values[1],
        values[2],
        values[3],
        values[4],
        values[5],
        values[6],
        values[7],
        values[8],
        values[9],
        values[10]
    );
    if values[11] != "0" {
        let _ = write!(out, "  INVARIANTS VIOLATED ({})", values[11]);
    }
    out
}

/// `sweep.csv`: [`COLUMNS`] and `run` (the run's directory, relative to the sweep's), one row per point.
pub fn csv(rows: &[(Vec<String>, String)]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS.iter().copied().chain(["run"]))?;
    for (values, run) in rows {
        w.write_record(values.iter().chain([run]))?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_the_product_first_sweep_slowest() {
        let sweeps = [
            Sweep::parse("scheme.name=ideal-fq,ideal-srf").unwrap(),
            Sweep::parse("workload.load=0.5, 0.9").unwrap(),
        ];
        let p = points(&sweeps);
        assert_eq!(p.len(), 4);
        assert_eq!(p[0], ["scheme.name=ideal-fq", "workload.load=0.5"]);
        assert_eq!(p[1], ["scheme.name=ideal-fq", "workload.load=0.9"]);
        assert_eq!(p[3], ["scheme.name=ideal-srf", "workload.load=0.9"]);
        assert_eq!(points(&[]), vec![Vec::<String>::new()]);
    }

    #[test]
    fn malformed_sweeps_are_rejected() {
        for bad in [
            "workload.load",
            "=1,2",
            "workload.load=1,,2",
            "workload.load=",
        ] {
            assert!(Sweep::parse(bad).is_err(), "{bad}");
        }
        let twice = Sweep::parse("workload.load=0.5,0.7,0.5").unwrap_err();
        assert!(
            twice.contains("the value `0.5` is given twice (values 1 and 3)"),
            "{twice}"
        );
        let sweeps = [
            Sweep::parse("seed=1,2").unwrap(),
            Sweep::parse("seed=3").unwrap(),
        ];
        assert!(check_keys(&sweeps).unwrap_err().contains("swept twice"));
    }

    #[test]
    fn csv_quotes_values_with_commas() {
        let mut values = vec!["a=1 b=x,y".to_string()];
        values.extend((1..COLUMNS.len()).map(|i| i.to_string()));
        let rows = vec![(values, "runs/0123".to_string())];
        let text = String::from_utf8(csv(&rows).unwrap()).unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some("\"a=1 b=x,y\",1,2,3,4,5,6,7,8,9,10,11,runs/0123")
        );
    }
}
