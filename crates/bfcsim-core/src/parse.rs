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
/// The decimal must convert exactly: `0.5ps` is an error, not a rounding.
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
    let (number, unit) = (&t[..split], t[split..].trim());
    if number.is_empty() {
        return Err(err("it does not start with a number".into()));
    }
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
    let int: u128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| overflow())?
    };
    let mut value = int.checked_mul(scale as u128).ok_or_else(overflow)?;
    let frac_digits = frac_part.trim_end_matches('0');
    if !frac_digits.is_empty() {
        let denom = 10u128
            .checked_pow(frac_digits.len() as u32)
            .ok_or_else(overflow)?;
        let frac: u128 = frac_digits.parse().map_err(|_| overflow())?;
        let scaled = frac.checked_mul(scale as u128).ok_or_else(overflow)?;
        if scaled % denom != 0 {
            return Err(err(
                "more decimal places than the smallest unit can hold".into()
            ));
        }
        value += scaled / denom;
    }
    u64::try_from(value).map_err(|_| overflow())
}
