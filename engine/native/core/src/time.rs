//! Timestamps, exactly (docs/decisions.md 34): a timestamp literal as signed nanoseconds
//! since the epoch (dateTimes) or since the stream's origin (numbers), as the Python engine's
//! `values.timestamps.to_seconds` reads it. Finer than a nanosecond is an error.

use oxrdf::{vocab::xsd, Literal, Term};
use oxsdatatypes::DateTime;
use std::str::FromStr;

const NANOS_PER_SECOND: i128 = 1_000_000_000;
/// Times are below 10^18 seconds (values.timestamps.MAX_SECONDS).
const MAX_NANOS: i128 = 1_000_000_000_000_000_000 * NANOS_PER_SECOND;

/// A decimal or scientific number of seconds (`"12"`, `"-0.5"`, `"1.5e3"`, `".5"`) in
/// nanoseconds; None if it is not such a number, too large, or finer than a nanosecond.
pub fn seconds_to_nanos(text: &str) -> Option<i128> {
    let text = text.trim();
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], unsigned[i + 1..].parse::<i32>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    let mut value: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let scale = exponent
        .checked_sub(i32::try_from(fraction.len()).ok()?)?
        .checked_add(9)?;
    if value != 0 {
        if scale >= 0 {
            value = value.checked_mul(10i128.checked_pow(u32::try_from(scale).ok()?)?)?;
        } else {
            let divisor = 10i128.checked_pow(u32::try_from(-scale).ok()?)?;
            if value % divisor != 0 {
                return None;
            }
            value /= divisor;
        }
    }
    if value >= MAX_NANOS {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// Nanoseconds since the Unix epoch of an xsd:dateTime (UTC when it has no time zone).
pub fn datetime_to_nanos(text: &str) -> Option<i128> {
    let text = text.trim();
    let value = if has_timezone(text) {
        DateTime::from_str(text).ok()?
    } else {
        DateTime::from_str(&format!("{text}Z")).ok()? // no time zone: UTC, as the Python reader
    };
    let epoch = DateTime::from_str("1970-01-01T00:00:00Z").ok()?;
    let seconds = value.checked_sub(epoch)?.as_seconds();
    seconds_to_nanos(&seconds.to_string())
}

/// The time a timestamp literal denotes, in nanoseconds; Err says why it is not one.
pub fn timestamp_nanos(term: &Term) -> Result<i128, String> {
    let Term::Literal(literal) = term else {
        return Err(format!("{term} is not a timestamp literal"));
    };
    literal_nanos(literal)
}

fn literal_nanos(literal: &Literal) -> Result<i128, String> {
    let text = literal.value();
    let datatype = literal.datatype();
    if datatype == xsd::DATE_TIME || datatype == xsd::DATE_TIME_STAMP {
        if datatype == xsd::DATE_TIME_STAMP && !has_timezone(text) {
            return Err(format!(
                "{text:?} is not an xsd:dateTimeStamp: it needs a time zone (e.g. Z)"
            ));
        }
        return datetime_to_nanos(text)
            .ok_or_else(|| format!("{text:?} is not a valid xsd:dateTime to the nanosecond"));
    }
    let numeric = datatype == xsd::DECIMAL
        || datatype == xsd::DOUBLE
        || datatype == xsd::FLOAT
        || datatype == xsd::STRING
        || INTEGER_TYPES.iter().any(|t| datatype.as_str() == *t);
    if !numeric {
        return Err(format!(
            "{literal} is not a timestamp: expected an xsd:dateTime or a number of seconds"
        ));
    }
    seconds_to_nanos(text)
        .ok_or_else(|| format!("{text:?} is not a finite number of seconds to the nanosecond"))
}

fn has_timezone(text: &str) -> bool {
    let t = text.trim();
    t.ends_with('Z') || t.len() > 6 && matches!(t.as_bytes()[t.len() - 6], b'+' | b'-')
}

const INTEGER_TYPES: &[&str] = &[
    "http://www.w3.org/2001/XMLSchema#integer",
    "http://www.w3.org/2001/XMLSchema#long",
    "http://www.w3.org/2001/XMLSchema#int",
    "http://www.w3.org/2001/XMLSchema#short",
    "http://www.w3.org/2001/XMLSchema#byte",
    "http://www.w3.org/2001/XMLSchema#nonNegativeInteger",
    "http://www.w3.org/2001/XMLSchema#positiveInteger",
    "http://www.w3.org/2001/XMLSchema#nonPositiveInteger",
    "http://www.w3.org/2001/XMLSchema#negativeInteger",
    "http://www.w3.org/2001/XMLSchema#unsignedLong",
    "http://www.w3.org/2001/XMLSchema#unsignedInt",
    "http://www.w3.org/2001/XMLSchema#unsignedShort",
    "http://www.w3.org/2001/XMLSchema#unsignedByte",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_exact() {
        assert_eq!(seconds_to_nanos("0.1"), Some(100_000_000));
        assert_eq!(seconds_to_nanos("-2.5"), Some(-2_500_000_000));
        assert_eq!(seconds_to_nanos("1.5e3"), Some(1_500_000_000_000));
        assert_eq!(seconds_to_nanos("2E-1"), Some(200_000_000));
        assert_eq!(seconds_to_nanos(".5"), Some(500_000_000));
        assert_eq!(seconds_to_nanos("0.0000000001"), None);
        assert_eq!(seconds_to_nanos("1e30"), None);
        assert_eq!(seconds_to_nanos("NaN"), None);
    }

    #[test]
    fn datetimes_are_exact() {
        assert_eq!(
            datetime_to_nanos("1970-01-01T00:00:01.5Z"),
            Some(1_500_000_000)
        );
        assert_eq!(
            datetime_to_nanos("2024-01-01T10:00:20.1Z"),
            Some(1_704_103_220_100_000_000)
        );
        assert_eq!(
            datetime_to_nanos("2024-01-01T11:00:20.1+01:00"),
            Some(1_704_103_220_100_000_000)
        );
        assert_eq!(
            datetime_to_nanos("2024-01-01T10:00:20.1"),
            Some(1_704_103_220_100_000_000)
        );
    }
}
