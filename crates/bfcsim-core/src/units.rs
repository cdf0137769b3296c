//! Unit newtypes: [`Bytes`] and link [`Rate`]s, with the one conversion that matters, [`Rate::tx_time`].

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::parse::{ParseError, parse_scaled};
use crate::time::Time;

/// A number of bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);

    /// Parses `1000B`, `100KB` (10³), `12MB` (10⁶), `1GB` (10⁹), `4KiB` (2¹⁰) or `32MiB` (2²⁰), exactly.
    pub fn parse(text: &str) -> Result<Bytes, ParseError> {
        const UNITS: &[(&str, u64)] = &[
            ("B", 1),
            ("KB", 1_000),
            ("MB", 1_000_000),
            ("GB", 1_000_000_000),
            ("KiB", 1 << 10),
            ("MiB", 1 << 20),
            ("GiB", 1 << 30),
        ];
        parse_scaled(text, UNITS, "a size such as 1000B, 100KB or 12MB").map(Bytes)
    }
}

impl Add for Bytes {
    type Output = Bytes;
    #[inline]
    fn add(self, rhs: Bytes) -> Bytes {
        Bytes(self.0 + rhs.0)
    }
}
impl AddAssign for Bytes {
    #[inline]
    fn add_assign(&mut self, rhs: Bytes) {
        self.0 += rhs.0;
    }
}
impl Sub for Bytes {
    type Output = Bytes;
    #[inline]
    fn sub(self, rhs: Bytes) -> Bytes {
        Bytes(self.0 - rhs.0)
    }
}
impl SubAssign for Bytes {
    #[inline]
    fn sub_assign(&mut self, rhs: Bytes) {
        self.0 -= rhs.0;
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, scale) in [("GB", 1_000_000_000u64), ("MB", 1_000_000), ("KB", 1_000)] {
            if b >= scale && b.is_multiple_of(scale) {
                return write!(f, "{}{unit}", b / scale);
            }
        }
        write!(f, "{b}B")
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Bytes::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    /// `n` gigabits per second.
    pub const fn gbps(n: u64) -> Rate {
        Rate(n * 1_000_000_000)
    }
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }

    /// Time to serialize `bytes` at this rate, rounded up to a whole picosecond. Exact for every rate that
    /// divides 8·10¹² (1, 10, 25, 40, 50, 100, 200, 400 Gb/s ...).
    #[inline]
    pub fn tx_time(self, bytes: Bytes) -> Time {
        let bits_ps = bytes.0 as u128 * 8 * 1_000_000_000_000;
        Time(bits_ps.div_ceil(self.0 as u128) as u64)
    }

    /// Serialization time of one byte, when it is a whole number of picoseconds (true of every rate that
    /// divides 8·10¹² b/s); [`Rate::tx_time`] is then a multiplication.
    pub fn ps_per_byte(self) -> Option<u64> {
        (8_000_000_000_000 % self.0 == 0).then(|| 8_000_000_000_000 / self.0)
    }

    /// Bytes this rate carries in `t` (rounded down), for bandwidth-delay products.
    pub fn bytes_in(self, t: Time) -> Bytes {
        Bytes((self.0 as u128 * t.0 as u128 / 8 / 1_000_000_000_000) as u64)
    }

    /// Parses `100Gbps`, `100Gb/s`, `40G`, `25Gbps`, `100Mbps` or `1000000bps`, as ns-3 and our TOML write rates.
    pub fn parse(text: &str) -> Result<Rate, ParseError> {
        const UNITS: &[(&str, u64)] = &[
            ("bps", 1),
            ("Kbps", 1_000),
            ("Mbps", 1_000_000),
            ("Gbps", 1_000_000_000),
            ("Tbps", 1_000_000_000_000),
            ("Kb/s", 1_000),
            ("Mb/s", 1_000_000),
            ("Gb/s", 1_000_000_000),
            ("Tb/s", 1_000_000_000_000),
            ("K", 1_000),
            ("M", 1_000_000),
            ("G", 1_000_000_000),
            ("T", 1_000_000_000_000),
        ];
        let r = parse_scaled(text, UNITS, "a rate such as 100Gbps")?;
        if r == 0 {
            return Err(ParseError {
                text: text.to_string(),
                expected: "a rate such as 100Gbps",
                reason: "a link rate must be positive".into(),
            });
        }
        Ok(Rate(r))
    }
}

impl fmt::Debug for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        for (unit, scale) in [
            ("Tbps", 1_000_000_000_000u64),
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("Kbps", 1_000),
        ] {
            if r >= scale && r.is_multiple_of(scale) {
                return write!(f, "{}{unit}", r / scale);
            }
        }
        write!(f, "{r}bps")
    }
}
impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Rate::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact() {
        assert_eq!(Rate::gbps(100).tx_time(Bytes(1)), Time(80));
        assert_eq!(Rate::gbps(400).tx_time(Bytes(1)), Time(20));
        assert_eq!(Rate::gbps(100).tx_time(Bytes(1048)), Time(83_840));
        assert_eq!(Rate::gbps(40).tx_time(Bytes(1048)), Time(209_600));
        assert_eq!(Rate::gbps(100).bytes_in(Time::from_us(8)), Bytes(100_000));
        assert_eq!(Rate::gbps(100).ps_per_byte(), Some(80));
        assert_eq!(Rate(3_000_000_000).ps_per_byte(), None);
    }

    #[test]
    fn parses_units() {
        assert_eq!(Rate::parse("100Gbps").unwrap(), Rate::gbps(100));
        assert_eq!(Rate::parse("50Mb/s").unwrap(), Rate(50_000_000));
        assert_eq!(Rate::parse("2.5G").unwrap(), Rate(2_500_000_000));
        assert!(Rate::parse("0Gbps").is_err());
        assert!(Rate::parse("fast").is_err());
        assert_eq!(Bytes::parse("12MB").unwrap(), Bytes(12_000_000));
        assert_eq!(Bytes::parse("32MiB").unwrap(), Bytes(32 << 20));
        assert_eq!(Bytes::parse("1.5KB").unwrap(), Bytes(1500));
        assert!(Bytes::parse("1.5B").is_err());
    }
}
