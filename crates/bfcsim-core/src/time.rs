//! Simulated time as integer picoseconds.
//!
//! One type serves for instants and durations: a byte at 100 Gb/s is exactly 80 ps and at 400 Gb/s 20 ps, so
//! no timing arithmetic ever needs floating point, and runs are bit-identical on every machine.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::parse::{ParseError, parse_scaled};

/// A point in simulated time, or a duration, in picoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

impl Time {
    /// Time zero.
    pub const ZERO: Time = Time(0);
    /// The largest representable time (about 213 days), used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// `n` picoseconds.
    pub const fn from_ps(n: u64) -> Time {
        Time(n)
    }
    /// `n` nanoseconds.
    pub const fn from_ns(n: u64) -> Time {
        Time(n * 1_000)
    }
    /// `n` microseconds.
    pub const fn from_us(n: u64) -> Time {
        Time(n * 1_000_000)
    }
    /// `n` milliseconds.
    pub const fn from_ms(n: u64) -> Time {
        Time(n * 1_000_000_000)
    }
    /// `n` seconds.
    pub const fn from_secs(n: u64) -> Time {
        Time(n * 1_000_000_000_000)
    }
    /// Whether this is time zero (for `skip_serializing_if`).
    pub const fn is_zero(&self) -> bool {
        self.0 == 0
    }

    /// Picoseconds.
    pub const fn ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds, rounded down.
    pub const fn ns(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds as a float, for reports only (never for timing).
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// Microseconds as a float, for reports only.
    pub fn us_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// `self - other`, or zero when `other` is later.
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
    /// `self + other`, saturating at [`Time::MAX`].
    pub fn saturating_add(self, other: Time) -> Time {
        Time(self.0.saturating_add(other.0))
    }

    /// Parses a duration such as `1us`, `1000ns`, `0.001ms`, `2.5 s` or `80ps` exactly, without floating point.
    /// A bare number is rejected: every time in bfcsim's inputs names its unit.
    pub fn parse(text: &str) -> Result<Time, ParseError> {
        const UNITS: &[(&str, u64)] = &[
            ("ps", 1),
            ("ns", 1_000),
            ("us", 1_000_000),
            ("µs", 1_000_000),
            ("ms", 1_000_000_000),
            ("s", 1_000_000_000_000),
        ];
        parse_scaled(text, UNITS, "a time such as 1us, 1000ns or 0.5ms").map(Time)
    }

    /// Parses a plain number of seconds with a decimal point, as HPCC's `flow.txt` writes start times.
    pub fn parse_secs(text: &str) -> Result<Time, ParseError> {
        parse_scaled(
            &format!("{}s", text.trim()),
            &[("s", 1_000_000_000_000)],
            "a number of seconds",
        )
        .map(Time)
    }
}

impl Add for Time {
    type Output = Time;
    #[inline]
    fn add(self, rhs: Time) -> Time {
        Time(self.0 + rhs.0)
    }
}
impl AddAssign for Time {
    #[inline]
    fn add_assign(&mut self, rhs: Time) {
        self.0 += rhs.0;
    }
}
impl Sub for Time {
    type Output = Time;
    #[inline]
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}
impl Mul<u64> for Time {
    type Output = Time;
    #[inline]
    fn mul(self, rhs: u64) -> Time {
        Time(self.0 * rhs)
    }
}

impl Div<u64> for Time {
    type Output = Time;
    #[inline]
    fn div(self, rhs: u64) -> Time {
        Time(self.0 / rhs)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Time {
    /// In the largest unit not above the value, with as many decimals as it takes to be exact (`8us`,
    /// `83.84ns`, `6.460001453ms`), so that [`Time::parse`] reads it back unchanged.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        let (unit, scale, digits) = [
            ("s", 1_000_000_000_000u64, 12),
            ("ms", 1_000_000_000, 9),
            ("us", 1_000_000, 6),
            ("ns", 1_000, 3),
        ]
        .into_iter()
        .find(|&(_, scale, _)| ps >= scale)
        .unwrap_or(("ps", 1, 0));
        let (int, frac) = (ps / scale, ps % scale);
        if frac == 0 {
            return write!(f, "{int}{unit}");
        }
        let frac = format!("{frac:0digits$}");
        write!(f, "{int}.{}{unit}", frac.trim_end_matches('0'))
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Time::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_exactly() {
        assert_eq!(Time::parse("1us").unwrap(), Time::from_us(1));
        assert_eq!(Time::parse("1000ns").unwrap(), Time::from_us(1));
        assert_eq!(Time::parse("0.001ms").unwrap(), Time::from_us(1));
        assert_eq!(Time::parse("2.5 s").unwrap(), Time::from_ms(2500));
        assert_eq!(Time::parse("80ps").unwrap(), Time(80));
        assert_eq!(
            Time::parse_secs("2.000002612").unwrap(),
            Time::from_ns(2_000_002_612)
        );
        assert!(Time::parse("12").is_err());
        assert!(Time::parse("1.0000000000001ns").is_err());
        assert!(Time::parse("-1us").is_err());
        assert!(Time::parse("1 parsec").is_err());
    }

    #[test]
    fn displays_round_trip() {
        for t in [
            Time::from_us(8),
            Time(83_840),
            Time::from_ms(5),
            Time(7),
            Time(6_460_001_453),
        ] {
            assert_eq!(Time::parse(&t.to_string()).unwrap(), t);
        }
        assert_eq!(Time(83_840).to_string(), "83.84ns");
        assert_eq!(Time(6_460_001_453).to_string(), "6.460001453ms");
    }
}
