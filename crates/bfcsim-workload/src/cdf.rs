//! Flow-size distributions: one [`SizeCdf`] type loaded from every CDF file format the reference simulators use,
//! sampled by inverse transform.
//!
//! # Formats (`data/SOURCES.md` documents each shipped file)
//!
//! | [`CdfFormat`] | source | lines |
//! |---|---|---|
//! | [`Hpcc`](CdfFormat::Hpcc) | HPCC `traffic_gen` (`custom_rand.py`) | `size_bytes cdf_percent`, first `0 0`, last `... 100` |
//! | [`Homa`](CdfFormat::Homa) | HomaSimulation `MsgSizeDistributions.cc` | line 1 the mean size alone, then `size cdf(0..1)` |
//! | [`Bfc`](CdfFormat::Bfc) | BFC artifact `scratch/nsdifinal.cc` (`mix/W3.txt`, `mix/w4.txt`) | `size cdf(0..1)`, no mean line |
//! | [`Ns2`](CdfFormat::Ns2) | ns-2 `RandomVariable/Empirical` (BCC scripts) | `size 1 cdf(0..1)`; the middle column is ignored |
//!
//! [`CdfFormat::Auto`] tells them apart by the first data line (one number: Homa; three columns: ns-2) and, for
//! two columns, by whether any cdf value exceeds 1 (HPCC percentages) or not (BFC's 0..1). Fields may be separated
//! by any whitespace; blank lines and lines starting with `#` are skipped (none of the reference parsers reads
//! comments, but none of their files has a `#` either).
//!
//! Homa's DCTCP files give sizes in packets; [`SizeUnit::Packets`] multiplies sizes (and the line-1 mean) by the
//! bytes per packet, as Homa multiplies by `maxDataBytesPerPkt`.
//!
//! # BFC's `min_size` rule
//!
//! `nsdifinal.cc` forces cdf = 0 for every point whose size is <= `min_size` (100 B). Its W4 file lists `101 0.0`
//! before `56 0.00148`, so the raw sizes are not monotone. With [`CdfOptions::min_size`] set, points at or below
//! the threshold get cdf 0, the points are then (stably) sorted by size, and the leading zero-probability points
//! are dropped except the last one, so the distribution starts at the largest size with cdf 0 (101 B for both BFC
//! files) and every drawn size exceeds `min_size`.
//!
//! # Sampling
//!
//! Inverse transform of a uniform `u` in [0, 1):
//! * [`Interpolation::Linear`] (HPCC `custom_rand.py`, ns-2 Empirical): linear between the two points around `u`.
//!   BFC's `nsdifinal.cc` also interpolates, but its formula is inverted (it maps `u` just above a point to the
//!   *next* size); we use the correct inverse.
//! * [`Interpolation::Step`] (Homa): the size of the first point whose cdf is >= `u`.
//!
//! A first point with cdf > 0 is a point mass at its size under both rules. Results are rounded to whole bytes and
//! are at least 1 byte.

use std::path::Path;

use bfcsim_core::{Bytes, InputError};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// Largest size a CDF may contain (2^53 bytes, the largest integer an f64 holds exactly).
const MAX_SIZE: f64 = 9_007_199_254_740_992.0;

/// How sizes between the points of a CDF are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interpolation {
    /// Linear between points, as HPCC's `custom_rand.py` and ns-2's Empirical (`interpolation_ 2`) do.
    #[default]
    Linear,
    /// The first point whose cdf is >= u, as HomaSimulation's `MsgSizeDistributions.cc` does.
    Step,
}

/// The layout of a CDF file (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CdfFormat {
    /// Detect the format from the file's shape.
    #[default]
    Auto,
    /// HPCC `traffic_gen`: `size cdf_percent`, cdf in 0..=100.
    Hpcc,
    /// HomaSimulation: line 1 the mean, then `size cdf` with cdf in 0..=1.
    Homa,
    /// BFC artifact: `size cdf` with cdf in 0..=1, no mean line.
    Bfc,
    /// ns-2 Empirical: `size 1 cdf` with cdf in 0..=1; the middle column is ignored.
    Ns2,
}

/// The unit of the sizes in a CDF file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SizeUnit {
    /// Sizes are bytes.
    #[default]
    Bytes,
    /// Sizes are packets of `bytes_per_packet` payload bytes (HomaSimulation's DCTCP files, `maxDataBytesPerPkt`).
    Packets {
        /// Payload bytes per packet.
        bytes_per_packet: u64,
    },
}

/// A generalized Pareto tail above the last point of a CDF that stops short of 1, as HomaSimulation draws the
/// Facebook key-value sizes beyond its tabulated head (`getFacebookSizeInterarrival`: shape k = 0.348238,
/// scale sigma = 214.476, offset = the last size, capped at 2^30 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpdTail {
    /// Shape k (< 1 so the mean is finite).
    pub shape: f64,
    /// Scale sigma, in bytes.
    pub scale: f64,
    /// Cap on a drawn size, in bytes.
    pub max: f64,
}

impl GpdTail {
    /// HomaSimulation's Facebook key-value tail.
    pub const HOMA_FACEBOOK_KEY_VALUE: GpdTail = GpdTail {
        shape: 0.348238,
        scale: 214.476,
        max: 1_073_741_824.0,
    };

    /// The quantile at `v` in [0, 1) of min(offset + Y, max), Y ~ GPD(shape, scale).
    fn quantile(&self, offset: f64, v: f64) -> f64 {
        let survival = 1.0 - v;
        let y = if self.shape == 0.0 {
            -self.scale * survival.ln()
        } else {
            self.scale / self.shape * (survival.powf(-self.shape) - 1.0)
        };
        (offset + y).min(self.max)
    }

    /// `P(min(offset + Y, max) > x)`.
    fn survival(&self, offset: f64, x: f64) -> f64 {
        if x < offset {
            return 1.0;
        }
        if x >= self.max {
            return 0.0;
        }
        let z = (x - offset) / self.scale;
        if self.shape == 0.0 {
            (-z).exp()
        } else {
            (1.0 + self.shape * z).max(0.0).powf(-1.0 / self.shape)
        }
    }

    /// E[ceil(min(offset + Y, max) / m)] = the sum over j >= 0 of P(min(offset + Y, max) > j * m), to where
    /// the terms no longer count.
    fn mean_packets(&self, offset: f64, m: f64) -> f64 {
        let mut sum = (offset / m).floor() + 1.0; // the terms with j * m below or at the offset are 1
        let mut j = sum;
        loop {
            let term = self.survival(offset, j * m);
            if term < 1e-12 {
                return sum;
            }
            sum += term;
            j += 1.0;
        }
    }

    /// E[min(offset + Y, max)], from the integral of the GPD survival function up to `max - offset`.
    fn mean(&self, offset: f64) -> f64 {
        let (k, s) = (self.shape, self.scale);
        let mut c = (self.max - offset).max(0.0);
        if k < 0.0 {
            c = c.min(s / -k); // the support ends there
        }
        let integral = if k == 0.0 {
            s * (1.0 - (-c / s).exp())
        } else {
            s / (1.0 - k) * (1.0 - (1.0 + k * c / s).powf(1.0 - 1.0 / k))
        };
        offset + integral
    }
}

/// How to read a CDF file.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CdfOptions {
    /// The file layout ([`CdfFormat::Auto`] detects it).
    pub format: CdfFormat,
    /// The unit of the sizes.
    pub unit: SizeUnit,
    /// BFC's rule: points whose size (after unit conversion) is <= this get cdf 0, and points are then sorted by
    /// size. `None` requires sizes to be non-decreasing as written.
    pub min_size: Option<u64>,
    /// How sizes between points are drawn.
    pub interpolation: Interpolation,
    /// A tail above a CDF that ends below 1. Without one, the CDF must end at 1 (100 for HPCC).
    pub tail: Option<GpdTail>,
}

/// A validated flow-size distribution: points (size in bytes, cumulative probability), sizes and probabilities
/// both non-decreasing, ending at probability 1 unless a [`GpdTail`] covers the rest.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    sizes: Vec<f64>,
    cdf: Vec<f64>,
    interpolation: Interpolation,
    stated_mean: Option<f64>,
    tail: Option<GpdTail>,
    /// The smallest size [`SizeCdf::sample`] returns: 1, or `min_size + 1` under BFC's rule.
    floor: u64,
}

/// One parsed data point with the line it came from, for error messages after sorting.
struct Point {
    size: f64,
    cdf: f64,
    line: usize,
}

impl SizeCdf {
    /// Parses CDF `text`; `file` names it in errors.
    pub fn parse(
        text: &str,
        file: impl AsRef<Path>,
        options: &CdfOptions,
    ) -> Result<SizeCdf, InputError> {
        let file = file.as_ref();
        let lines: Vec<(usize, Vec<&str>)> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>()))
            .filter(|(_, f)| !f.is_empty() && !f[0].starts_with('#'))
            .collect();
        let Some((first_line, first_fields)) = lines.first() else {
            return Err(InputError::file(
                file,
                "the CDF file is empty (no size/probability lines)",
            ));
        };
        let format = match options.format {
            CdfFormat::Auto => match first_fields.len() {
                1 => CdfFormat::Homa,
                3 => CdfFormat::Ns2,
                2 => {
                    let percent = lines.iter().any(|(_, f)| {
                        f.get(1)
                            .and_then(|c| c.parse::<f64>().ok())
                            .is_some_and(|c| c > 1.0)
                    });
                    if percent {
                        CdfFormat::Hpcc
                    } else {
                        CdfFormat::Bfc
                    }
                }
                n => {
                    return Err(InputError::at(
                        file,
                        *first_line,
                        format!(
                            "expected `size cdf` (2 columns), `size 1 cdf` (3 columns, ns-2) or the mean size alone \
                             (Homa's first line); found {n} columns"
                        ),
                    ));
                }
            },
            f => f,
        };
        let (columns, cdf_column, scale, layout) = match format {
            CdfFormat::Hpcc => (2, 1, 100.0, "`size cdf_percent` (HPCC)"),
            CdfFormat::Homa => (2, 1, 1.0, "`size cdf` (Homa)"),
            CdfFormat::Bfc | CdfFormat::Auto => (2, 1, 1.0, "`size cdf`"),
            CdfFormat::Ns2 => (3, 2, 1.0, "`size 1 cdf` (ns-2 Empirical)"),
        };
        let per_unit = match options.unit {
            SizeUnit::Bytes => 1.0,
            SizeUnit::Packets { bytes_per_packet } => {
                if bytes_per_packet == 0 {
                    return Err(InputError::file(
                        file,
                        "bytes per packet must be at least 1",
                    ));
                }
                bytes_per_packet as f64
            }
        };

        let mut body = &lines[..];
        let mut stated_mean = None;
        if format == CdfFormat::Homa {
            let (line, fields) = &lines[0];
            if fields.len() != 1 {
                return Err(InputError::at(
                    file,
                    *line,
                    format!(
                        "Homa format: the first line must be the mean size alone; found {} columns",
                        fields.len()
                    ),
                ));
            }
            let mean = number(fields[0], "the mean size", file, *line)?;
            if mean <= 0.0 {
                return Err(InputError::at(
                    file,
                    *line,
                    format!("the mean size {mean} must be positive"),
                ));
            }
            stated_mean = Some(mean * per_unit);
            body = &lines[1..];
            if body.is_empty() {
                return Err(InputError::at(
                    file,
                    *line,
                    "no size/probability lines after the mean line",
                ));
            }
        }

        let mut points = Vec::with_capacity(body.len());
        for (line, fields) in body {
            let line = *line;
            if fields.len() != columns {
                return Err(InputError::at(
                    file,
                    line,
                    format!(
                        "expected {columns} columns {layout}, found {}",
                        fields.len()
                    ),
                ));
            }
            let size = number(fields[0], "a size", file, line)?;
            if size < 0.0 {
                return Err(InputError::at(
                    file,
                    line,
                    format!("negative size {}", fields[0]),
                ));
            }
            let size = size * per_unit;
            if size > MAX_SIZE {
                return Err(InputError::at(
                    file,
                    line,
                    format!("size {} is too large (at most 2^53 bytes)", fields[0]),
                ));
            }
            if columns == 3 {
                number(fields[1], "the ns-2 middle column", file, line)?;
            }
            let cdf = number(fields[cdf_column], "a cumulative probability", file, line)?;
            if !(0.0..=scale).contains(&cdf) {
                return Err(InputError::at(
                    file,
                    line,
                    format!("cdf {} is out of range 0..={scale}", fields[cdf_column]),
                ));
            }
            points.push(Point {
                size,
                cdf: cdf / scale,
                line,
            });
        }

        if let Some(min) = options.min_size {
            for p in &mut points {
                if p.size <= min as f64 {
                    p.cdf = 0.0;
                }
            }
            points.sort_by(|a, b| a.size.total_cmp(&b.size));
        } else if let Some(w) = points.windows(2).find(|w| w[1].size < w[0].size) {
            return Err(InputError::at(
                file,
                w[1].line,
                format!(
                    "sizes must not decrease: {} follows {} (BFC's files need min_size = 100)",
                    w[1].size, w[0].size
                ),
            ));
        }
        if let Some(w) = points.windows(2).find(|w| w[1].cdf < w[0].cdf) {
            return Err(InputError::at(
                file,
                w[1].line,
                format!(
                    "the CDF decreases from {} to {}",
                    w[0].cdf * scale,
                    w[1].cdf * scale
                ),
            ));
        }
        let last = points.last().expect("body is not empty");
        if last.size <= 0.0 && options.tail.is_none() {
            return Err(InputError::at(
                file,
                last.line,
                "every size is 0 bytes: the CDF must reach a size of at least 1 byte",
            ));
        }
        match options.tail {
            None => {
                if (last.cdf - 1.0).abs() > 1e-6 {
                    return Err(InputError::at(
                        file,
                        last.line,
                        format!("the CDF ends at {}, not at {scale}", last.cdf * scale),
                    ));
                }
            }
            Some(t) => {
                let ok = t.shape.is_finite()
                    && t.shape < 1.0
                    && t.scale.is_finite()
                    && t.scale > 0.0
                    && !t.max.is_nan()
                    && t.max >= last.size;
                if !ok {
                    return Err(InputError::file(
                        file,
                        format!(
                            "invalid Pareto tail (shape {}, scale {}, cap {}): the shape must be finite and < 1, the \
                             scale positive, and the cap at least the last size",
                            t.shape, t.scale, t.max
                        ),
                    ));
                }
            }
        }
        let zeros = points.iter().take_while(|p| p.cdf == 0.0).count();
        if zeros >= 2 {
            points.drain(..zeros - 1);
        }
        if let Some(min) = options.min_size
            && points[0].cdf == 0.0
        {
            // Sizes up to min_size have probability 0, so the distribution starts at min_size at the earliest.
            points[0].size = points[0].size.max(min as f64);
        }
        let mut cdf: Vec<f64> = points.iter().map(|p| p.cdf).collect();
        if options.tail.is_none() {
            *cdf.last_mut().expect("not empty") = 1.0;
        }
        Ok(SizeCdf {
            sizes: points.iter().map(|p| p.size).collect(),
            cdf,
            interpolation: options.interpolation,
            stated_mean,
            tail: options.tail,
            floor: options.min_size.map_or(1, |m| m.saturating_add(1)),
        })
    }

    /// Reads and parses the CDF file at `path`.
    pub fn load(path: impl AsRef<Path>, options: &CdfOptions) -> Result<SizeCdf, InputError> {
        let path = path.as_ref();
        let text = bfcsim_core::input::read_to_string(path)?;
        SizeCdf::parse(&text, path, options)
    }

    /// This distribution drawn with `interpolation` instead.
    pub fn with_interpolation(mut self, interpolation: Interpolation) -> SizeCdf {
        self.interpolation = interpolation;
        self
    }

    /// How sizes between points are drawn.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// The points (size in bytes, cumulative probability) after validation and BFC's rule.
    pub fn points(&self) -> impl ExactSizeIterator<Item = (f64, f64)> + '_ {
        self.sizes.iter().copied().zip(self.cdf.iter().copied())
    }

    /// The mean size stated on line 1 of a Homa file, in bytes.
    pub fn stated_mean(&self) -> Option<f64> {
        self.stated_mean
    }

    /// The size at cumulative probability `u` in [0, 1), before rounding.
    pub fn quantile(&self, u: f64) -> f64 {
        let n = self.cdf.len();
        let last = self.cdf[n - 1];
        if u > last
            && let Some(t) = self.tail
        {
            return t.quantile(self.sizes[n - 1], (u - last) / (1.0 - last));
        }
        let i = self.cdf.partition_point(|&p| p < u).min(n - 1);
        match self.interpolation {
            Interpolation::Step => self.sizes[i],
            Interpolation::Linear => {
                if i == 0 {
                    return self.sizes[0];
                }
                let (p0, p1) = (self.cdf[i - 1], self.cdf[i]);
                let (s0, s1) = (self.sizes[i - 1], self.sizes[i]);
                if p1 <= p0 {
                    return s1;
                }
                s0 + (s1 - s0) * ((u - p0) / (p1 - p0))
            }
        }
    }

    /// Draws one size by inverse transform, rounded to whole bytes; at least 1 byte, and above `min_size` when
    /// BFC's rule is on (rounding could otherwise land exactly on it).
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Bytes {
        let u: f64 = rng.random();
        Bytes((self.quantile(u).round() as u64).max(self.floor))
    }

    /// The mean number of packets of `payload` bytes a flow takes, `E[ceil(size / payload)]`, under the
    /// distribution's interpolation (sizes before rounding to whole bytes): a step's size exactly, a linear
    /// segment's as the average of `ceil` over it, the tail's as `sum over j >= 0 of P(size > j * payload)`.
    pub fn mean_packets(&self, payload: u64) -> f64 {
        let m = payload as f64;
        let packets = |s: f64| (s / m).ceil();
        // The integral of ceil(t / m) from 0 to x.
        let integral = |x: f64| {
            let k = packets(x);
            m * k * (k - 1.0) / 2.0 + k * (x - (k - 1.0) * m)
        };
        let mut mean = 0.0;
        let (mut p_prev, mut s_prev) = (0.0, self.sizes[0]);
        for (s, p) in self.points() {
            mean += (p - p_prev)
                * match self.interpolation {
                    Interpolation::Linear if s > s_prev => {
                        (integral(s) - integral(s_prev)) / (s - s_prev)
                    }
                    _ => packets(s),
                };
            (p_prev, s_prev) = (p, s);
        }
        if let Some(t) = self.tail {
            mean += (1.0 - p_prev) * t.mean_packets(s_prev, m);
        }
        mean
    }

    /// The exact mean of the distribution under its interpolation, in bytes (before rounding to whole bytes):
    /// linear `sum (p_i - p_{i-1}) (s_i + s_{i-1}) / 2`, step `sum (p_i - p_{i-1}) s_i`, with p_{-1} = 0 and
    /// s_{-1} = s_0, plus the tail's share.
    pub fn mean(&self) -> f64 {
        let mut mean = 0.0;
        let (mut p_prev, mut s_prev) = (0.0, self.sizes[0]);
        for (s, p) in self.points() {
            mean += (p - p_prev)
                * match self.interpolation {
                    Interpolation::Linear => (s + s_prev) / 2.0,
                    Interpolation::Step => s,
                };
            (p_prev, s_prev) = (p, s);
        }
        if let Some(t) = self.tail {
            mean += (1.0 - p_prev) * t.mean(s_prev);
        }
        mean
    }
}

/// Parses one numeric field; `what` says what was expected.
fn number(field: &str, what: &str, file: &Path, line: usize) -> Result<f64, InputError> {
    let v: f64 = field.parse().map_err(|_| {
        InputError::at(
            file,
            line,
            format!("`{field}` is not a number (expected {what})"),
        )
    })?;
    if v.is_nan() {
        return Err(InputError::at(
            file,
            line,
            format!("`{field}` is not a number (expected {what})"),
        ));
    }
    if v.is_infinite() {
        return Err(InputError::at(
            file,
            line,
            format!("`{field}` is out of range (expected {what})"),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::rng::{Stream, stream};
    use proptest::prelude::*;

    fn parse(text: &str, options: &CdfOptions) -> Result<SizeCdf, InputError> {
        SizeCdf::parse(text, "test.cdf", options)
    }

    fn err(text: &str, options: &CdfOptions) -> InputError {
        parse(text, options).expect_err("should be rejected")
    }

    #[test]
    fn detects_each_format() {
        let o = CdfOptions::default();
        let hpcc = parse("0 0\n100 50\n200 100\n", &o).unwrap();
        assert_eq!(
            hpcc.points().collect::<Vec<_>>(),
            vec![(0.0, 0.0), (100.0, 0.5), (200.0, 1.0)]
        );
        let homa = parse("150\n100  0.5\n200    1\n", &o).unwrap();
        assert_eq!(homa.stated_mean(), Some(150.0));
        assert_eq!(
            homa.points().collect::<Vec<_>>(),
            vec![(100.0, 0.5), (200.0, 1.0)]
        );
        let bfc = parse("0 0.0\n100 0.5\n200 1", &o).unwrap();
        assert_eq!(bfc.points().count(), 3);
        assert_eq!(bfc.stated_mean(), None);
        let ns2 = parse("0 1 0\n100 1 0.5\n200 1 1.0\n", &o).unwrap();
        assert_eq!(ns2, bfc);
        assert_eq!(hpcc, bfc);
    }

    #[test]
    fn packets_multiply_sizes_and_mean() {
        let o = CdfOptions {
            unit: SizeUnit::Packets {
                bytes_per_packet: 1000,
            },
            ..Default::default()
        };
        let c = parse("2\n1 0.5\n3 1\n", &o).unwrap();
        assert_eq!(c.stated_mean(), Some(2000.0));
        assert_eq!(
            c.points().collect::<Vec<_>>(),
            vec![(1000.0, 0.5), (3000.0, 1.0)]
        );
        assert_eq!(
            c.clone().with_interpolation(Interpolation::Step).mean(),
            2000.0
        );
    }

    #[test]
    fn linear_and_step_quantiles_and_means() {
        let lin = parse("0 0\n100 50\n300 100\n", &CdfOptions::default()).unwrap();
        assert_eq!(lin.quantile(0.25), 50.0);
        assert_eq!(lin.quantile(0.75), 200.0);
        assert_eq!(lin.mean(), 0.5 * 50.0 + 0.5 * 200.0);
        let step = lin.clone().with_interpolation(Interpolation::Step);
        assert_eq!(step.quantile(0.25), 100.0);
        assert_eq!(step.quantile(0.5), 100.0);
        assert_eq!(step.quantile(0.500001), 300.0);
        assert_eq!(step.mean(), 0.5 * 100.0 + 0.5 * 300.0);
        // A first point above 0 is a point mass.
        let head = parse("10 0.4\n20 1\n", &CdfOptions::default()).unwrap();
        assert_eq!(head.quantile(0.1), 10.0);
        assert!((head.mean() - (0.4 * 10.0 + 0.6 * 15.0)).abs() < 1e-9);
    }

    #[test]
    fn sample_means_converge() {
        let c = parse("0 0\n1000 50\n100000 100\n", &CdfOptions::default()).unwrap();
        for c in [c.clone(), c.with_interpolation(Interpolation::Step)] {
            let mut rng = stream(1, Stream::Workload(0));
            let n = 200_000;
            let total: u64 = (0..n).map(|_| c.sample(&mut rng).0).sum();
            let m = total as f64 / n as f64;
            assert!((m / c.mean() - 1.0).abs() < 0.01, "{m} vs {}", c.mean());
        }
    }

    /// `mean_packets` is the mean of `ceil(size / payload)` over samples: linear and step segments, and the
    /// generalized Pareto tail of Homa's Facebook key-value sizes.
    #[test]
    fn mean_packets_is_the_samples_mean() {
        let c = parse("0 0\n1000 50\n100000 100\n", &CdfOptions::default()).unwrap();
        let tailed = crate::builtin("fb-keyvalue-gpd")
            .unwrap()
            .load(Interpolation::Linear)
            .unwrap();
        for (c, payload) in [
            (c.clone(), 1000),
            (c.clone().with_interpolation(Interpolation::Step), 1000),
            (c, 333),
            (tailed, 1000),
        ] {
            let mut rng = stream(2, Stream::Workload(0));
            let n = 400_000;
            let total: u64 = (0..n).map(|_| c.sample(&mut rng).0.div_ceil(payload)).sum();
            let m = total as f64 / n as f64;
            let exact = c.mean_packets(payload);
            assert!((m / exact - 1.0).abs() < 0.01, "{m} vs {exact}");
        }
    }

    #[test]
    fn samples_are_at_least_one_byte() {
        let c = parse("0 0\n1 100\n", &CdfOptions::default()).unwrap();
        let mut rng = stream(3, Stream::Workload(0));
        assert!((0..1000).all(|_| c.sample(&mut rng).0 >= 1));
    }

    #[test]
    fn bfc_min_size_rule_sorts_and_zeroes() {
        let text = "0 0.0\n101 0.0\n56 0.00148\n60 0.00222\n100 0.00815\n109 0.0089\n200 1.0";
        let e = err(text, &CdfOptions::default());
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("56 follows 101"), "{e}");
        let c = parse(
            text,
            &CdfOptions {
                min_size: Some(100),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            c.points().collect::<Vec<_>>(),
            vec![(101.0, 0.0), (109.0, 0.0089), (200.0, 1.0)]
        );
        assert_eq!(c.quantile(0.0), 101.0);
        let step = c.with_interpolation(Interpolation::Step);
        assert_eq!(step.quantile(0.0), 101.0);
    }

    #[test]
    fn gpd_tail_covers_the_rest() {
        let o = CdfOptions {
            tail: Some(GpdTail::HOMA_FACEBOOK_KEY_VALUE),
            interpolation: Interpolation::Step,
            ..Default::default()
        };
        let c = parse("10\n1 0.2\n15 0.47\n", &o).unwrap();
        assert_eq!(c.quantile(0.47), 15.0);
        assert!(c.quantile(0.48) > 15.0);
        assert!(c.quantile(0.999999999) <= 1_073_741_824.0);
        let mut rng = stream(9, Stream::Workload(0));
        let n = 400_000;
        let total: u64 = (0..n).map(|_| c.sample(&mut rng).0).sum();
        let m = total as f64 / n as f64;
        assert!((m / c.mean() - 1.0).abs() < 0.03, "{m} vs {}", c.mean());
        // Without the tail this CDF is incomplete.
        let e = err("10\n1 0.2\n15 0.47\n", &CdfOptions::default());
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("ends at 0.47, not at 1"), "{e}");
    }

    // ---- malformed input: each error names the line and the problem ----

    #[test]
    fn rejects_a_cdf_of_empty_flows() {
        // Issue 72: "the background rate inf flows/s is not finite".
        let e = err("0 0\n0 100\n", &CdfOptions::default());
        assert_eq!(
            e.to_string(),
            "test.cdf:2: every size is 0 bytes: the CDF must reach a size of at least 1 byte"
        );
    }

    #[test]
    fn rejects_non_numeric_field() {
        let e = err("0 0\n100 abc\n200 100\n", &CdfOptions::default());
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("`abc` is not a number"), "{e}");
        assert_eq!(
            e.to_string(),
            "test.cdf:2: `abc` is not a number (expected a cumulative probability)"
        );
    }

    #[test]
    fn rejects_wrong_column_count() {
        let e = err("0 0\n100 50 7\n200 100\n", &CdfOptions::default());
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("expected 2 columns"), "{e}");
        assert!(e.message.contains("found 3"), "{e}");
        let e = err("1 2 3 4\n", &CdfOptions::default());
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("found 4 columns"), "{e}");
    }

    #[test]
    fn rejects_decreasing_cdf() {
        let e = err("0 0\n100 60\n\n200 40\n300 100\n", &CdfOptions::default());
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("decreases from 60 to 40"), "{e}");
    }

    #[test]
    fn rejects_cdf_not_ending_at_one() {
        let e = err("0 0\n100 50\n200 99\n", &CdfOptions::default());
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("ends at 99, not at 100"), "{e}");
    }

    #[test]
    fn rejects_out_of_range_cdf() {
        let e = err(
            "0 0\n100 0.5\n200 1.5\n",
            &CdfOptions {
                format: CdfFormat::Bfc,
                ..Default::default()
            },
        );
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("cdf 1.5 is out of range 0..=1"), "{e}");
        let e = err("0 0\n100 -5\n200 100\n", &CdfOptions::default());
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("out of range"), "{e}");
    }

    #[test]
    fn rejects_empty_file() {
        let e = err("", &CdfOptions::default());
        assert_eq!(e.line, None);
        assert!(e.message.contains("empty"), "{e}");
        let e = err("\n  \n# only a comment\n", &CdfOptions::default());
        assert!(e.message.contains("empty"), "{e}");
        let e = err("1234.5\n", &CdfOptions::default());
        assert_eq!(e.line, Some(1));
        assert!(
            e.message
                .contains("no size/probability lines after the mean"),
            "{e}"
        );
    }

    #[test]
    fn rejects_negative_size() {
        let e = err("0 0\n-100 0.5\n200 1\n", &CdfOptions::default());
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("negative size -100"), "{e}");
    }

    #[test]
    fn rejects_nan_and_infinity() {
        let e = err("0 0\nNaN 0.5\n200 1\n", &CdfOptions::default());
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("`NaN` is not a number"), "{e}");
        let e = err("0 0\n100 nan\n200 1\n", &CdfOptions::default());
        assert_eq!(e.line, Some(2));
        let e = err("0 0\ninf 0.5\n200 1\n", &CdfOptions::default());
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("out of range"), "{e}");
    }

    #[test]
    fn rejects_bad_homa_mean_line() {
        let e = err("abc\n1 0.5\n2 1\n", &CdfOptions::default());
        assert_eq!(e.line, Some(1));
        assert!(
            e.message
                .contains("`abc` is not a number (expected the mean size)"),
            "{e}"
        );
        let e = err(
            "1 0.5\n2 1\n",
            &CdfOptions {
                format: CdfFormat::Homa,
                ..Default::default()
            },
        );
        assert_eq!(e.line, Some(1));
        assert!(
            e.message.contains("first line must be the mean size alone"),
            "{e}"
        );
    }

    proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let text = String::from_utf8_lossy(&bytes);
            for format in [CdfFormat::Auto, CdfFormat::Hpcc, CdfFormat::Homa, CdfFormat::Bfc, CdfFormat::Ns2] {
                let o = CdfOptions { format, min_size: Some(100), ..Default::default() };
                let _ = parse(&text, &o);
                let _ = parse(&text, &CdfOptions { format, ..Default::default() });
            }
        }

        #[test]
        fn never_panics_on_random_lines(
            lines in prop::collection::vec(
                prop::collection::vec(
                    prop_oneof![
                        Just("0".to_string()), Just("1".to_string()), Just("100".to_string()), Just("1e308".to_string()),
                        Just("-1".to_string()), Just("nan".to_string()), Just("inf".to_string()), Just("0.5".to_string()),
                        Just("#".to_string()), (0.0f64..200.0).prop_map(|v| v.to_string()), "[a-z0-9.]{0,4}",
                    ],
                    0..4,
                ),
                0..12,
            ),
            min_size in prop::option::of(0u64..200),
            tail in any::<bool>(),
            step in any::<bool>(),
            u in 0.0f64..1.0,
        ) {
            let text: String = lines.iter().map(|l| l.join(" ") + "\n").collect();
            let o = CdfOptions {
                min_size,
                tail: tail.then_some(GpdTail::HOMA_FACEBOOK_KEY_VALUE),
                interpolation: if step { Interpolation::Step } else { Interpolation::Linear },
                ..Default::default()
            };
            if let Ok(c) = parse(&text, &o) {
                let q = c.quantile(u);
                prop_assert!(!q.is_nan());
                let pts: Vec<_> = c.points().collect();
                prop_assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
                let _ = c.mean();
                let mut rng = stream(1, Stream::Workload(0));
                for _ in 0..20 {
                    let s = c.sample(&mut rng).0;
                    prop_assert!(s >= 1);
                    if let Some(m) = min_size {
                        prop_assert!(s > m);
                        prop_assert!(c.quantile(u) >= m as f64);
                    }
                }
            }
        }
    }
}
