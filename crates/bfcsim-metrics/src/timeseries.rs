//! Time series of a run (`trace.parquet`, `trace.csv`): values sampled on a regular grid of simulated time, in
//! long format, one row per (time, series, entity, value): `queue.bytes` of `port:12`, `flow.throughput` of
//! `flow:3`. Long format keeps every kind of series in one table that pandas, polars or DuckDB pivot as they
//! need, and lets a run record a handful of ports or thousands of queues alike.
//!
//! The size is bounded: a [`TimeSeries`] holds at most `budget` rows. When a sample would take it past that, it
//! keeps every other sample taken so far and samples half as often from then on (the grid's interval doubles),
//! so the whole trace stays evenly spaced; [`TimeSeries::thinned`] says how often that happened, and the run
//! reports it. The samples kept depend only on the grid, never on when the budget filled, so the same run
//! gives the same trace.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

use crate::output::write_atomic;

/// One series of one entity, as [`TimeSeries::key`] registered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    series: u32,
    entity: u32,
}

/// Time series sampled on a regular grid, in long format, within a row budget (see the module documentation).
#[derive(Clone, Debug)]
pub struct TimeSeries {
    start: Time,
    interval: Time,
    budget: usize,
    thinned: u32,
    names: Vec<String>,
    entities: Vec<String>,
    index: BTreeMap<(String, String), Key>,
    /// The time of each sample kept, and the first row of it.
    samples: Vec<(Time, usize)>,
    rows: Vec<(Key, f64)>,
}

impl TimeSeries {
    /// An empty trace sampled every `interval` from `start`, holding at most `budget` rows.
    ///
    /// # Panics
    /// If `interval` is zero.
    pub fn new(start: Time, interval: Time, budget: usize) -> TimeSeries {
        assert!(interval > Time::ZERO, "a trace's interval must be positive");
        TimeSeries {
            start,
            interval,
            budget,
            thinned: 0,
            names: Vec::new(),
            entities: Vec::new(),
            index: BTreeMap::new(),
            samples: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// The key of series `series` (`queue.bytes`) of entity `entity` (`port:12`), registered on first use.
    pub fn key(&mut self, series: &str, entity: &str) -> Key {
        if let Some(&k) = self.index.get(&(series.to_string(), entity.to_string())) {
            return k;
        }
        let position =
            |list: &mut Vec<String>, name: &str| match list.iter().position(|n| n == name) {
                Some(i) => i as u32,
                None => {
                    list.push(name.to_string());
                    (list.len() - 1) as u32
                }
            };
        let key = Key {
            series: position(&mut self.names, series),
            entity: position(&mut self.entities, entity),
        };
        self.index
            .insert((series.to_string(), entity.to_string()), key);
        key
    }

    /// The next time on the grid strictly after `t`.
    pub fn next_after(&self, t: Time) -> Time {
        if t < self.start {
            return self.start;
        }
        let k = (t - self.start).ps() / self.interval.ps() + 1;
        self.start + Time::from_ps(k * self.interval.ps())
    }

    /// Whether `t` is on the grid (the sampler calls [`TimeSeries::sample`] only there).
    pub fn on_grid(&self, t: Time) -> bool {
        t >= self.start && (t - self.start).ps().is_multiple_of(self.interval.ps())
    }

    /// Records the sample at grid time `t` (later than the last), `values` its rows; thins the trace first when
    /// they would take it past the budget (a sample of more rows than the whole budget is kept alone).
    ///
    /// # Panics
    /// If `t` is not on the grid or not after the last sample.
    pub fn sample(&mut self, t: Time, values: impl IntoIterator<Item = (Key, f64)>) {
        assert!(self.on_grid(t), "sample at {t} off the trace's grid");
        assert!(
            self.samples.last().is_none_or(|&(last, _)| last < t),
            "samples must come in time order"
        );
        let first = self.rows.len();
        self.rows.extend(values);
        self.samples.push((t, first));
        while self.rows.len() > self.budget && self.samples.len() > 1 {
            self.thin();
        }
        // The newest sample may have fallen off the coarser grid.
        if self
            .samples
            .last()
            .is_some_and(|&(at, _)| !self.on_grid(at))
        {
            let (_, from) = self.samples.pop().expect("checked");
            self.rows.truncate(from);
        }
    }

    /// Keeps the samples on a grid of twice the interval.
    fn thin(&mut self) {
        self.interval = Time::from_ps(self.interval.ps() * 2);
        self.thinned += 1;
        let (mut samples, mut rows) = (Vec::new(), Vec::new());
        for (i, &(t, from)) in self.samples.iter().enumerate() {
            if !self.on_grid(t) {
                continue;
            }
            let to = self.samples.get(i + 1).map_or(self.rows.len(), |s| s.1);
            samples.push((t, rows.len()));
            rows.extend_from_slice(&self.rows[from..to]);
        }
        self.samples = samples;
        self.rows = rows;
    }

    /// The grid's interval now (the configured one, doubled once per thinning).
    pub fn interval(&self) -> Time {
        self.interval
    }

    /// How many times the budget halved the sampling rate.
    pub fn thinned(&self) -> u32 {
        self.thinned
    }

    /// Rows kept.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was kept.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Samples kept.
    pub fn sample_count(&self) -> usize {
        self.samples.len()
    }

    /// The series' names, in order of registration.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Every row in time order (within a sample, in the order the sampler gave them): time, series, entity,
    /// value.
    pub fn rows(&self) -> impl Iterator<Item = (Time, &str, &str, f64)> {
        self.samples
            .iter()
            .enumerate()
            .flat_map(move |(i, &(t, from))| {
                let to = self.samples.get(i + 1).map_or(self.rows.len(), |s| s.1);
                self.rows[from..to].iter().map(move |&(k, v)| {
                    (
                        t,
                        self.names[k.series as usize].as_str(),
                        self.entities[k.entity as usize].as_str(),
                        v,
                    )
                })
            })
    }

    /// Each (series, entity)'s points, at most `points` of each (every n-th sample when there are more): what a
    /// figure plots, small enough for a run's digest.
    pub fn lines(&self, points: usize) -> Vec<TraceLine> {
        let stride = self.samples.len().div_ceil(points.max(1)).max(1);
        let mut lines: BTreeMap<Key, TraceLine> = BTreeMap::new();
        for (i, &(t, from)) in self.samples.iter().enumerate().step_by(stride) {
            let to = self.samples.get(i + 1).map_or(self.rows.len(), |s| s.1);
            for &(k, v) in &self.rows[from..to] {
                let line = lines.entry(k).or_insert_with(|| TraceLine {
                    series: self.names[k.series as usize].clone(),
                    entity: self.entities[k.entity as usize].clone(),
                    points: Vec::new(),
                });
                line.points.push((t.ps() as f64 / 1e3, v));
            }
        }
        lines.into_values().collect()
    }

    /// Writes the trace as CSV (`time_ns,series,entity,value`), atomically.
    pub fn write_csv(&self, path: impl AsRef<Path>) -> io::Result<()> {
        write_atomic(path, |w| {
            writeln!(w, "{TRACE_CSV_HEADER}")?;
            let mut line = String::with_capacity(64);
            for (t, series, entity, value) in self.rows() {
                line.clear();
                let _ = writeln!(line, "{},{series},{entity},{value}", t.ps() as f64 / 1e3);
                w.write_all(line.as_bytes())?;
            }
            Ok(())
        })
    }
}

/// The header of `trace.csv`.
pub const TRACE_CSV_HEADER: &str = "time_ns,series,entity,value";

/// One series of one entity, as a figure plots it: `(time in ns, value)` points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceLine {
    /// The series (`queue.bytes`).
    pub series: String,
    /// The entity (`port:12`).
    pub entity: String,
    /// `(time_ns, value)`, in time order.
    pub points: Vec<(f64, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Time {
        Time::from_us(n)
    }

    #[test]
    fn rows_come_back_in_time_order_with_their_names() {
        let mut ts = TimeSeries::new(us(0), us(1), 100);
        let a = ts.key("queue.bytes", "port:1");
        let b = ts.key("queue.bytes", "port:2");
        assert_eq!(ts.key("queue.bytes", "port:1"), a);
        ts.sample(us(0), [(a, 1.0), (b, 2.0)]);
        ts.sample(us(1), [(a, 3.0)]);
        let rows: Vec<_> = ts.rows().collect();
        assert_eq!(
            rows,
            vec![
                (us(0), "queue.bytes", "port:1", 1.0),
                (us(0), "queue.bytes", "port:2", 2.0),
                (us(1), "queue.bytes", "port:1", 3.0),
            ]
        );
        assert_eq!(ts.next_after(us(1)), us(2));
        assert_eq!(ts.next_after(Time::from_ps(1_500_000)), us(2));
    }

    #[test]
    fn the_budget_halves_the_rate_and_keeps_the_grid_even() {
        // Two rows a sample, six rows of budget: samples 0..=2 fit, the fourth thins to 0 and 2 (2 us), and
        // the fifth (4 us) fits again; 3 us and 5 us fall off the coarser grid.
        let mut ts = TimeSeries::new(us(0), us(1), 6);
        let (a, b) = (ts.key("x", "e1"), ts.key("x", "e2"));
        for i in 0..6 {
            if ts.on_grid(us(i)) {
                ts.sample(us(i), [(a, i as f64), (b, i as f64)]);
            }
        }
        assert_eq!(ts.thinned(), 1);
        assert_eq!(ts.interval(), us(2));
        let times: Vec<Time> = ts.rows().map(|r| r.0).collect();
        assert_eq!(times, vec![us(0), us(0), us(2), us(2), us(4), us(4)]);
        assert!(ts.len() <= 6);
    }

    #[test]
    fn lines_take_every_nth_sample() {
        let mut ts = TimeSeries::new(us(0), us(1), 1000);
        let a = ts.key("x", "e");
        for i in 0..10 {
            ts.sample(us(i), [(a, i as f64)]);
        }
        let lines = ts.lines(5);
        assert_eq!(lines.len(), 1);
        let xs: Vec<f64> = lines[0].points.iter().map(|p| p.1).collect();
        assert_eq!(xs, vec![0.0, 2.0, 4.0, 6.0, 8.0]);
    }
}
