//! Exact parsing of decimal quantities with a unit suffix (`1.5us`, `100Gbps`, `12MB`), shared by the unit types.

use std::fmt;

/// Why a quantity could not be parsed; the message names what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The text that was given.
    pub text: String,
    /// What a valid value looks like.
    pub expected: &'static str,
    /// Why this text is not one.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not {}: {}",
            self.text, self.expected, self.reason
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses `<decimal><unit>` into an integer count of base units, where each unit is worth `scale` base units.
/// The decimal may have an exponent as scripts write them (`1e-6s`, `2.5E3B`, `1e2Gbps`). It must convert
/// exactly: `0.5ps` is an error, not a rounding.
pub fn parse_scaled(
    text: &str,
    units: &[(&str, u64)],
    expected: &'static str,
) -> Result<u64, ParseError> {
    let err = |reason: String| ParseError {
        text: text.to_string(),
        expected,
        reason,
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let number = &t[..split];
    if number.is_empty() {
        return Err(err("it does not start with a number".into()));
    }
    let (exponent, rest) = exponent(&t[split..]).map_err(err)?;
    let unit = rest.trim();
    let Some(&(_, scale)) = units.iter().find(|(name, _)| *name == unit) else {
        let names: Vec<&str> = units.iter().map(|(n, _)| *n).collect();
        return Err(err(if unit.is_empty() {
            format!("the unit is missing (one of {})", names.join(", "))
        } else {
            format!("unknown unit `{unit}` (one of {})", names.join(", "))
        }));
    };
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(err("malformed number".into()));
    }
    let overflow = || err("too large".into());
    // The number is `digits · 10^power`: every digit as one integer, the decimal point and the exponent as a
    // power of ten.
    let frac_digits = frac_part.trim_end_matches('0');
    let digits = format!("{int_part}{frac_digits}");
    let digits = digits.trim_start_matches('0');
    let power = exponent - frac_digits.len() as i64;
    let mantissa: u128 = if digits.is_empty() {
        0
    } else if digits.len() > 38 {
        return Err(overflow());
    } else {
        digits.parse().map_err(|_| overflow())?
    };
    let scaled = mantissa.checked_mul(scale as u128).ok_or_else(overflow)?;
    let ten_to = |p: i64| {
        u32::try_from(p)
            .ok()
            .and_then(|p| 10u128.checked_pow(p))
            .ok_or_else(overflow)
    };
    let value = if scaled == 0 {
        0
    } else if power >= 0 {
        scaled.checked_mul(ten_to(power)?).ok_or_else(overflow)?
    } else {
        // A divisor past 10³⁸ leaves nothing of a nonzero value: too many decimal places either way.
        let denom = ten_to(-power).map_err(|_| err(TOO_FINE.into()))?;
        if scaled % denom != 0 {
            return Err(err(TOO_FINE.into()));
        }
        scaled / denom
    };
    u64::try_from(value).map_err(|_| overflow())
}

const TOO_FINE: &str = "more decimal places than the smallest unit can hold";

/// An exponent (`e-6`, `E+3`, `e2`) at the start of `text`, and what follows it; 0 and `text` when there is none.
fn exponent(text: &str) -> Result<(i64, &str), String> {
    let Some(after) = text.strip_prefix(['e', 'E']) else {
        return Ok((0, text));
    };
    let unsigned = after.strip_prefix(['+', '-']).unwrap_or(after);
    let len = unsigned
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(unsigned.len());
    if len == 0 {
        // `E` with no digits is not an exponent: the text goes on to be read as a unit.
        return Ok((0, text));
    }
    let magnitude: i64 = unsigned[..len]
        .parse()
        .ok()
        .filter(|m| *m <= 1000)
        .ok_or_else(|| {
            format!(
                "exponent `{}` out of range",
                &text[..text.len() - unsigned.len() + len]
            )
        })?;
    let sign = if after.starts_with('-') { -1 } else { 1 };
    Ok((sign * magnitude, &unsigned[len..]))
}

#[cfg(test)]
mod tests {
    use crate::{Bytes, Rate, Time};

    #[test]
    fn numbers_with_exponents_read_exactly_as_scripts_write_them() {
        assert_eq!(Time::parse("1e-6s"), Ok(Time::from_us(1)));
        assert_eq!(Time::parse("2.5e-3s"), Ok(Time::from_us(2500)));
        assert_eq!(Time::parse("1E+3ns"), Ok(Time::from_us(1)));
        assert_eq!(Time::parse_secs("1e-6"), Ok(Time::from_us(1)));
        assert_eq!(Time::parse_secs("2.000001"), Ok(Time::from_us(2_000_001)));
        assert_eq!(Rate::parse("1e2Gbps"), Ok(Rate::gbps(100)));
        assert_eq!(Bytes::parse("1.5E3B"), Ok(Bytes(1500)));
        assert_eq!(Bytes::parse("0e5B"), Ok(Bytes(0)));
        assert_eq!(Bytes::parse("120e-1KB"), Ok(Bytes(12_000)));
    }

    #[test]
    fn exponents_that_cannot_convert_say_why() {
        let reason = |r: Result<Time, crate::parse::ParseError>| r.unwrap_err().reason;
        assert!(reason(Time::parse("1e-13s")).contains("decimal places"));
        assert!(reason(Time::parse("1e-100s")).contains("decimal places"));
        assert!(reason(Time::parse("1e40s")).contains("too large"));
        assert!(reason(Time::parse("1e99999s")).contains("out of range"));
        // An `e` that starts no exponent is read as the unit.
        assert!(reason(Time::parse("1es")).contains("unknown unit `es`"));
    }
}
