//! Timestamps, exactly (docs/decisions.md 34, 56): the one reader of timestamp literals. A
//! timestamp literal is signed nanoseconds since the epoch (dateTimes) or since the stream's
//! origin (numbers); the texts refused are refused with a message quoting them as Python's
//! `repr` does, because the Python engine shows these messages as its own: its
//! `values.timestamps` calls these functions through the binding (`_native.timestamp_ns`,
//! `seconds_ns`, `datetime_ns`), and `tests/values/timestamps_oracle.py`, the Python reader
//! this one was written from, is kept as the tests' oracle of it. Finer than a nanosecond, or
//! 10^18 seconds or more, is an error.

use crate::vocab::XSD;
use oxrdf::vocab::xsd;
use oxrdf::{Literal, NamedNodeRef, Term};
use regex::Regex;
use std::fmt;
use std::sync::OnceLock;

const NANOS_PER_SECOND: i128 = 1_000_000_000;
/// Times are below 10^18 seconds (values.timestamps.MAX_SECONDS).
const MAX_NANOS: i128 = 1_000_000_000_000_000_000 * NANOS_PER_SECOND;

/// `text` without the whitespace Python's `str.strip()` removes (Rust's, and the
/// information separators U+001C..U+001F).
fn py_strip(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Whether Python prints `c` as it is in a `repr` (`str.isprintable`). Unassigned code
/// points, which Python escapes, are not told apart here: shown as they are.
fn py_printable(c: char) -> bool {
    let u = c as u32;
    !(u < 0x20
        || (0x7f..=0xa0).contains(&u)
        || u == 0xad
        || (0x600..=0x605).contains(&u)
        || matches!(
            u,
            0x61c | 0x6dd | 0x70f | 0x890 | 0x891 | 0x8e2 | 0x1680 | 0x180e
        )
        || (0x2000..=0x200f).contains(&u)
        || (0x2028..=0x202f).contains(&u)
        || (0x205f..=0x206f).contains(&u)
        || u == 0x3000
        || (0xd800..=0xf8ff).contains(&u)
        || u == 0xfeff
        || (0xfff0..=0xfffb).contains(&u)
        || matches!(u, 0xfffe | 0xffff | 0x110bd | 0x110cd)
        || (0x13430..=0x1343f).contains(&u)
        || (0x1bca0..=0x1bca3).contains(&u)
        || (0x1d173..=0x1d17a).contains(&u)
        || u == 0xe0001
        || (0xe0020..=0xe007f).contains(&u)
        || u >= 0xf0000)
}

/// A text as Python's `repr` writes a `str`: in single quotes unless it holds a single quote
/// and no double one, with Python's escapes.
pub fn py_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if py_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// Why a number is not a time this engine keeps exactly.
enum Unchecked {
    TooLarge,
    Finer,
}

/// An exact decimal `±digits × 10^scale` in nanoseconds: too large (10^18 s or more) is said
/// before finer than a nanosecond.
fn exact_nanos(negative: bool, digits: &str, scale: i64) -> Result<i128, Unchecked> {
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return Ok(0);
    }
    let scale = scale
        .saturating_add((digits.len() - significant.len()) as i64)
        .saturating_add(9);
    // the value in nanoseconds has `significant.len() + scale` integral digits
    if (significant.len() as i64).saturating_add(scale) > 28 {
        return Err(Unchecked::TooLarge);
    }
    if scale < 0 {
        // not whole nanoseconds; too large first
        let whole = significant.len() as i64 + scale;
        if whole >= 28 {
            return Err(Unchecked::TooLarge);
        }
        if whole > 0 {
            let integral: i128 = significant[..whole as usize].parse().unwrap_or(i128::MAX);
            if integral >= MAX_NANOS {
                return Err(Unchecked::TooLarge);
            }
        }
        return Err(Unchecked::Finer);
    }
    let value = significant
        .parse::<i128>()
        .ok()
        .and_then(|v| v.checked_mul(10i128.checked_pow(scale as u32)?))
        .ok_or(Unchecked::TooLarge)?;
    if value >= MAX_NANOS {
        return Err(Unchecked::TooLarge);
    }
    Ok(if negative { -value } else { value })
}

/// An xsd:double lexical form (`values.lexical.parse_double`'s), as sign, digits and scale;
/// None if it is not one, or is INF or NaN.
fn double_parts(text: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let exponent = match exponent {
        None => 0,
        Some(e) => {
            let (sign, digits) = match e.as_bytes().first()? {
                b'-' => (-1, &e[1..]),
                b'+' => (1, &e[1..]),
                _ => (1, e),
            };
            if digits.is_empty() || !all_digits(digits) {
                return None;
            }
            // beyond 10^15 only the sign matters (the value is 0, too large or too fine)
            let digits = digits.trim_start_matches('0');
            let magnitude: i64 = if digits.len() > 15 {
                1_000_000_000_000_000
            } else {
                digits.parse().unwrap_or(0)
            };
            sign * magnitude
        }
    };
    let scale = exponent - fraction.len() as i64;
    Some((negative, format!("{whole}{fraction}"), scale))
}

/// A decimal or scientific number of seconds (an xsd:double lexical form other than INF and
/// NaN: `"12"`, `"-0.5"`, `"1.5e3"`, `".5"`, around whitespace) in nanoseconds, exactly;
/// Err `NotNumber`, `TooLarge` or `Finer` (`values.timestamps.number_from_lexical`). Stricter
/// than Python's `float()`: no `inf`, `nan` or `1_000`.
pub fn seconds_nanos(text: &str) -> Result<i128, TimeError> {
    let Some((negative, digits, scale)) = double_parts(py_strip(text)) else {
        return Err(TimeError::NotNumber(text.to_owned()));
    };
    exact_nanos(negative, &digits, scale).map_err(|why| why.error(text))
}

/// Whether `text` is an xsd:integer lexical form (`values.lexical.parse_integer`).
fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `text` is an xsd:decimal lexical form (`values.lexical.parse_decimal`).
fn is_decimal(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    !(whole.is_empty() && fraction.is_empty()) && all_digits(whole) && all_digits(fraction)
}

/// `values.xsd_datetime`'s lexical form of an xsd:dateTime.
fn datetime_form() -> &'static Regex {
    static FORM: OnceLock<Regex> = OnceLock::new();
    FORM.get_or_init(|| {
        Regex::new(
            r"^(-?)([0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?$",
        )
        .expect("a valid regex")
    })
}

const FORM: &str = "YYYY-MM-DDThh:mm:ss[.fff][Z|+hh:mm]";

fn leap(year_mod_400: i128) -> bool {
    year_mod_400 % 4 == 0 && (year_mod_400 % 100 != 0 || year_mod_400 == 0)
}

fn days_in_month(year_mod_400: i128, month: i128) -> i128 {
    const DAYS: [i128; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if month == 2 && leap(year_mod_400) {
        29
    } else {
        DAYS[(month - 1) as usize]
    }
}

/// An xsd:dateTime read as `values.xsd_datetime.datetime_or_reason` (the FILTER values'
/// parser) reads it: its time since the epoch (whole seconds, and the fraction's digits) and
/// whether it has a time zone; or why not.
struct DateTimeValue {
    /// None: a year of more than 20 digits (far too large a time).
    seconds: Option<i128>,
    fraction: String,
    timezone: bool,
}

fn read_datetime(text: &str) -> Result<DateTimeValue, DateTimeError> {
    let Some(m) = datetime_form().captures(text) else {
        return Err(DateTimeError::Form);
    };
    let group = |i: usize| m.get(i).map_or("", |g| g.as_str());
    let number = |i: usize| group(i).parse::<i128>().unwrap_or(0);
    let year_digits = group(2);
    if year_digits.len() > 4 && year_digits.starts_with('0') {
        return Err(DateTimeError::LongYear);
    }
    let negative = group(1) == "-";
    let huge = year_digits.len() > 20;
    let mut year: i128 = if huge {
        year_digits[year_digits.len() - 4..].parse().unwrap_or(0) // as good mod 400
    } else {
        year_digits.parse().unwrap_or(0)
    };
    if negative {
        year = -year;
    }
    let (mut month, mut day, mut hour, minute, second) =
        (number(3), number(4), number(5), number(6), number(7));
    let fraction = group(8).trim_start_matches('.').to_owned();
    let fraction_zero = fraction.bytes().all(|b| b == b'0');
    if !(1..=12).contains(&month) {
        return Err(DateTimeError::Month(month));
    }
    if !(1..=days_in_month(year.rem_euclid(400), month)).contains(&day) {
        return Err(DateTimeError::Day { day, month });
    }
    if hour > 24
        || minute > 59
        || second >= 60
        || hour == 24 && (minute != 0 || second != 0 || !fraction_zero)
    {
        return Err(DateTimeError::TimeOfDay);
    }
    let zone = group(9);
    let offset: i128 = match zone {
        "" | "Z" => 0,
        _ => {
            let (h, mi): (i128, i128) = (
                zone[1..3].parse().unwrap_or(0),
                zone[4..6].parse().unwrap_or(0),
            );
            if mi > 59 || h > 14 || h == 14 && mi != 0 {
                return Err(DateTimeError::Zone(zone.to_owned()));
            }
            (h * 60 + mi) * if zone.starts_with('-') { -1 } else { 1 }
        }
    };
    if hour == 24 {
        hour = 0;
        day += 1;
        if day > days_in_month(year.rem_euclid(400), month) {
            day = 1;
            month += 1;
            if month > 12 {
                month = 1;
                year += 1;
            }
        }
    }
    let seconds = (!huge).then(|| {
        let yr = year - 1;
        let mut days = 365 * yr + yr.div_euclid(400) - yr.div_euclid(100) + yr.div_euclid(4);
        days += (1..month)
            .map(|k| days_in_month(year.rem_euclid(400), k))
            .sum::<i128>()
            + day
            - 1;
        days * 86400 + hour * 3600 + (minute - offset) * 60 + second - 719_162 * 86400
    });
    Ok(DateTimeValue {
        seconds,
        fraction,
        timezone: !zone.is_empty(),
    })
}

/// Nanoseconds since the Unix epoch of an xsd:dateTime lexical form, around whitespace (UTC
/// when it has no time zone); `require_timezone`: an xsd:dateTimeStamp, which needs one
/// (`values.timestamps.datetime_to_seconds`).
pub fn datetime_nanos(text: &str, require_timezone: bool) -> Result<i128, TimeError> {
    let value = read_datetime(py_strip(text)).map_err(|why| TimeError::DateTime {
        text: text.to_owned(),
        why,
    })?;
    if require_timezone && !value.timezone {
        return Err(TimeError::NoZone(text.to_owned()));
    }
    let checked = match value.seconds {
        None => Err(Unchecked::TooLarge),
        Some(seconds) => {
            let negative = seconds < 0;
            let magnitude = seconds.unsigned_abs().to_string();
            let digits = format!("{magnitude}{}", value.fraction);
            let scale = -(value.fraction.len() as i64);
            if negative && value.fraction.bytes().any(|b| b != b'0') {
                // seconds + fraction, with seconds negative: -(|seconds| - fraction)
                let fraction_len = u32::try_from(value.fraction.len()).unwrap_or(u32::MAX);
                let whole = 10i128.checked_pow(fraction_len).and_then(|p| {
                    seconds
                        .unsigned_abs()
                        .checked_mul(p as u128)
                        .and_then(|w| w.checked_sub(value.fraction.parse::<u128>().ok()?))
                });
                match whole {
                    Some(w) => exact_nanos(true, &w.to_string(), scale),
                    None => long_negative(seconds, &value.fraction),
                }
            } else {
                exact_nanos(negative, &digits, scale)
            }
        }
    };
    checked.map_err(|why| why.error(text))
}

impl Unchecked {
    fn error(self, text: &str) -> TimeError {
        match self {
            Unchecked::TooLarge => TimeError::TooLarge(text.to_owned()),
            Unchecked::Finer => TimeError::Finer(text.to_owned()),
        }
    }
}

/// A negative whole number of seconds plus a fraction of more digits than fit in 128 bits:
/// below a nanosecond it is not whole nanoseconds; too large if the seconds are.
fn long_negative(seconds: i128, fraction: &str) -> Result<i128, Unchecked> {
    let significant = fraction.trim_end_matches('0');
    if significant.len() > 9 {
        // |seconds + fraction| = |seconds| - fraction > 10^18 - 1 only if |seconds| > 10^18
        return Err(if seconds.unsigned_abs() > 1_000_000_000_000_000_000 {
            Unchecked::TooLarge
        } else {
            Unchecked::Finer
        });
    }
    let nanos: i128 = format!("{significant:0<9}").parse().unwrap_or(0);
    let value = seconds
        .checked_mul(NANOS_PER_SECOND)
        .map(|s| s + nanos)
        .ok_or(Unchecked::TooLarge)?;
    if value <= -MAX_NANOS {
        return Err(Unchecked::TooLarge);
    }
    Ok(value)
}

/// The time a timestamp literal denotes, in nanoseconds; Err says why it is not one
/// (`values.timestamps.to_seconds`).
pub fn timestamp_nanos(term: &Term) -> Result<i128, TimeError> {
    match term {
        Term::Literal(literal) => literal_nanos(literal),
        Term::NamedNode(_) => Err(TimeError::Iri(term.to_string())),
        Term::BlankNode(_) => Err(TimeError::BlankNode(term.to_string())),
        #[allow(unreachable_patterns)]
        _ => Err(TimeError::NotLiteral(term.to_string())),
    }
}

/// Whether a timestamp was written as an `xsd:dateTime` (or `xsd:dateTimeStamp`): results
/// then give their times in that form (docs/decisions.md 43).
pub fn is_datetime(term: &Term) -> bool {
    matches!(term, Term::Literal(l)
        if l.datatype() == xsd::DATE_TIME || l.datatype() == xsd::DATE_TIME_STAMP)
}

fn literal_nanos(literal: &Literal) -> Result<i128, TimeError> {
    let text = literal.value();
    let datatype = literal.datatype();
    if datatype == xsd::DATE_TIME || datatype == xsd::DATE_TIME_STAMP {
        return datetime_nanos(text, datatype == xsd::DATE_TIME_STAMP);
    }
    let lexical: Option<fn(&str) -> bool> = if INTEGER_TYPES.contains(&datatype) {
        Some(is_integer)
    } else if datatype == xsd::DECIMAL {
        Some(is_decimal)
    } else {
        None
    };
    if lexical.is_some() || datatype == xsd::DOUBLE || datatype == xsd::FLOAT {
        let short = datatype.as_str().strip_prefix(XSD).unwrap_or_default();
        if lexical.is_some_and(|valid| !valid(py_strip(text))) {
            return Err(TimeError::Invalid {
                text: text.to_owned(),
                datatype: short.to_owned(),
            });
        }
        return seconds_nanos(text).map_err(|_| TimeError::NotFinite {
            text: text.to_owned(),
            datatype: short.to_owned(),
        });
    }
    if datatype == xsd::STRING {
        return seconds_nanos(text).map_err(|_| TimeError::NotSeconds(literal.to_string()));
    }
    Err(TimeError::NotTimestamp(literal.to_string()))
}

const INTEGER_TYPES: &[NamedNodeRef<'static>] = &[
    xsd::INTEGER,
    xsd::LONG,
    xsd::INT,
    xsd::SHORT,
    xsd::BYTE,
    xsd::NON_NEGATIVE_INTEGER,
    xsd::POSITIVE_INTEGER,
    xsd::NON_POSITIVE_INTEGER,
    xsd::NEGATIVE_INTEGER,
    xsd::UNSIGNED_LONG,
    xsd::UNSIGNED_INT,
    xsd::UNSIGNED_SHORT,
    xsd::UNSIGNED_BYTE,
];

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::NamedNode;

    #[test]
    fn numbers_are_exact() {
        let ok = |text: &str| seconds_nanos(text).ok();
        assert_eq!(ok("0.1"), Some(100_000_000));
        assert_eq!(ok("-2.5"), Some(-2_500_000_000));
        assert_eq!(ok("1.5e3"), Some(1_500_000_000_000));
        assert_eq!(ok("2E-1"), Some(200_000_000));
        assert_eq!(ok(".5"), Some(500_000_000));
        assert_eq!(ok(" 5. "), Some(5_000_000_000));
        assert_eq!(ok("+7"), Some(7 * NANOS_PER_SECOND));
        assert_eq!(
            ok("1.00000000000000000000000000000000000000000"),
            Some(NANOS_PER_SECOND)
        );
        assert_eq!(ok("0e-99999999999999999999"), Some(0));
        assert_eq!(ok("-0.0E9999999999999999999"), Some(0));
        assert_eq!(ok("999999999999999999.999999999"), Some(MAX_NANOS - 1));
        assert_eq!(ok("-999999999999999999.999999999"), Some(1 - MAX_NANOS));
    }

    #[test]
    fn numbers_are_refused_as_python_refuses_them() {
        let message = |text: &str| seconds_nanos(text).unwrap_err().to_string();
        for text in [
            "NaN", "INF", "-INF", "+NaN", ".", "1e", "", " ", "1_000", "inf", "1.2.3",
        ] {
            assert_eq!(
                seconds_nanos(text),
                Err(TimeError::NotNumber(text.to_owned()))
            );
        }
        assert_eq!(message("x'"), "\"x'\" is not a number");
        assert_eq!(
            message("1e18"),
            "'1e18' is too large to be a time in seconds"
        );
        assert_eq!(
            message("-1000000000000000000"),
            "'-1000000000000000000' is too large to be a time in seconds"
        );
        assert_eq!(
            message("1e400"),
            "'1e400' is too large to be a time in seconds"
        );
        assert_eq!(
            message(" 0.0000000001"),
            "' 0.0000000001' is finer than a nanosecond, the resolution of times"
        );
        assert_eq!(
            message("1e-1000000000000000000"),
            "'1e-1000000000000000000' is finer than a nanosecond, the resolution of times"
        );
        // too large is said first
        assert_eq!(
            message("1000000000000000000.5"),
            "'1000000000000000000.5' is too large to be a time in seconds"
        );
    }

    #[test]
    fn a_caller_may_name_what_it_checked() {
        let error = seconds_nanos("1E+20").unwrap_err();
        assert_eq!(
            error.message_showing("Decimal('1E+20')"),
            "Decimal('1E+20') is too large to be a time in seconds"
        );
        assert_eq!(
            error.to_string(),
            "'1E+20' is too large to be a time in seconds"
        );
        let error = TimeError::NotSeconds("\"x\"".to_owned());
        assert_eq!(error.message_showing("shown"), error.to_string());
    }

    #[test]
    fn datetimes_are_exact() {
        let ok = |text: &str| datetime_nanos(text, false).ok();
        assert_eq!(ok("1970-01-01T00:00:01.5Z"), Some(1_500_000_000));
        assert_eq!(
            ok("2024-01-01T10:00:20.1Z"),
            Some(1_704_103_220_100_000_000)
        );
        assert_eq!(
            ok("2024-01-01T11:00:20.1+01:00"),
            Some(1_704_103_220_100_000_000)
        );
        assert_eq!(ok("2024-01-01T10:00:20.1"), Some(1_704_103_220_100_000_000));
        assert_eq!(ok("1969-12-31T23:59:59.5Z"), Some(-500_000_000));
        assert_eq!(ok("2023-12-31T24:00:00Z"), ok("2024-01-01T00:00:00Z"));
        assert_eq!(ok(" 1970-01-01T00:00:01Z\n"), Some(NANOS_PER_SECOND));
        assert_eq!(
            ok("2000-01-01T00:00:00.1230000000Z"),
            Some(946_684_800_123_000_000)
        );
    }

    #[test]
    fn a_datetime_stamp_needs_a_time_zone() {
        let message = |text: &str| datetime_nanos(text, true).unwrap_err().to_string();
        assert_eq!(
            datetime_nanos("1970-01-01T00:00:01+01:00", true),
            Ok(-3599 * NANOS_PER_SECOND)
        );
        assert_eq!(
            message("2024-01-01T00:00:00"),
            "'2024-01-01T00:00:00' is not an xsd:dateTimeStamp: it needs a time zone (e.g. Z)"
        );
        // a text that is no dateTime is said to be none first
        assert_eq!(
            message("2024-02-30T00:00:00"),
            "'2024-02-30T00:00:00' is not an xsd:dateTime: day 30 is out of range for month 2"
        );
        assert_eq!(
            message("2000-01-01T00:00:00.9999999999Z"),
            "'2000-01-01T00:00:00.9999999999Z' is finer than a nanosecond, the resolution of times"
        );
    }

    fn message(text: &str, datatype: &str) -> String {
        let literal =
            Literal::new_typed_literal(text, NamedNode::new_unchecked(format!("{XSD}{datatype}")));
        timestamp_nanos(&literal.into()).unwrap_err().to_string()
    }

    #[test]
    fn messages_are_the_ones_python_shows() {
        assert_eq!(
            message("x", "string"),
            "\"x\" is neither an xsd:dateTime nor a number of seconds"
        );
        assert_eq!(message("x", "integer"), "'x' is not a valid xsd:integer");
        assert_eq!(
            message("1e3", "decimal"),
            "'1e3' is not a valid xsd:decimal"
        );
        assert_eq!(
            message("0.0000000001", "decimal"),
            "'0.0000000001' is not a finite xsd:decimal number of seconds"
        );
        assert_eq!(
            message("INF", "double"),
            "'INF' is not a finite xsd:double number of seconds"
        );
        assert_eq!(
            message("2024-13-01T00:00:00Z", "dateTime"),
            "'2024-13-01T00:00:00Z' is not an xsd:dateTime: month 13 is out of range"
        );
        assert_eq!(
            message("yesterday", "dateTime"),
            "'yesterday' is not an xsd:dateTime (expected YYYY-MM-DDThh:mm:ss[.fff][Z|+hh:mm])"
        );
        assert_eq!(
            message("2024-01-01T00:00:00", "dateTimeStamp"),
            "'2024-01-01T00:00:00' is not an xsd:dateTimeStamp: it needs a time zone (e.g. Z)"
        );
        assert_eq!(
            message("2024-01-01T00:00:00.0000000001Z", "dateTime"),
            "'2024-01-01T00:00:00.0000000001Z' is finer than a nanosecond, the resolution of times"
        );
        assert_eq!(
            message("99999999999-01-01T00:00:00Z", "dateTime"),
            "'99999999999-01-01T00:00:00Z' is too large to be a time in seconds"
        );
        assert_eq!(message("1", "boolean"), "\"1\"^^<http://www.w3.org/2001/XMLSchema#boolean> is not a timestamp: expected an xsd:dateTime or a number of seconds (xsd:integer, xsd:decimal, xsd:double or a plain numeric string)");
        let iri: Term = NamedNode::new_unchecked("http://ex.org/t").into();
        assert_eq!(
            timestamp_nanos(&iri).unwrap_err().to_string(),
            "<http://ex.org/t> is an IRI, not a timestamp literal"
        );
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(
            py_repr("a'\"\\\n\u{1}é\u{a0}"),
            "'a\\'\"\\\\\\n\\x01é\\xa0'"
        );
    }
}

/// Why a lexical form is not an xsd:dateTime (in the words of `values.xsd_datetime`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DateTimeError {
    /// Not of the form `[-]YYYY-MM-DDThh:mm:ss[.s+][zone]`.
    Form,
    /// A year of more than 4 digits written with a leading zero.
    LongYear,
    Month(i128),
    Day {
        day: i128,
        month: i128,
    },
    TimeOfDay,
    /// A time zone offset beyond 14:00 (as written).
    Zone(String),
}

impl fmt::Display for DateTimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DateTimeError::Form => write!(f, "expected {FORM}"),
            DateTimeError::LongYear => {
                f.write_str("a year of more than 4 digits has no leading zero")
            }
            DateTimeError::Month(month) => write!(f, "month {month} is out of range"),
            DateTimeError::Day { day, month } => {
                write!(f, "day {day} is out of range for month {month}")
            }
            DateTimeError::TimeOfDay => f.write_str("time of day is out of range"),
            DateTimeError::Zone(zone) => write!(f, "time zone {zone} is out of range"),
        }
    }
}

impl std::error::Error for DateTimeError {}

/// Why a text or a term is not a timestamp, in the words `values.timestamps` raises: lexical
/// forms are kept as written (the text shows them as Python's `repr`), terms and literals in
/// N-Triples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    /// An xsd:dateTime (or dateTimeStamp) whose lexical form is not one.
    DateTime {
        text: String,
        why: DateTimeError,
    },
    /// An xsd:dateTimeStamp without a time zone.
    NoZone(String),
    /// A time of 10^18 seconds or more.
    TooLarge(String),
    /// A time finer than a nanosecond.
    Finer(String),
    /// A text that is no decimal or scientific number (`seconds_nanos`).
    NotNumber(String),
    /// A number of seconds whose lexical form is not one of its datatype (short name).
    Invalid {
        text: String,
        datatype: String,
    },
    /// A number of seconds that is not finite (NaN, INF).
    NotFinite {
        text: String,
        datatype: String,
    },
    /// An xsd:string that is no number of seconds.
    NotSeconds(String),
    /// A literal of another datatype.
    NotTimestamp(String),
    /// An IRI, a blank node, or another term that is not a literal.
    Iri(String),
    BlankNode(String),
    NotLiteral(String),
}

impl TimeError {
    /// The message with `shown` written as it is where the text would be quoted: for a caller
    /// that checked a value of its own through its text (Python's `values.timestamps` checks
    /// a Decimal, an int or a float through its decimal text, and names the object as `repr`
    /// writes it). Messages quoting no text are as `Display` writes them.
    pub fn message_showing(&self, shown: &str) -> String {
        Message {
            error: self,
            shown: Some(shown),
        }
        .to_string()
    }
}

/// A `TimeError`'s message, its text quoted by `py_repr` or replaced by `shown`.
struct Message<'a> {
    error: &'a TimeError,
    shown: Option<&'a str>,
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |text: &str| self.shown.map_or_else(|| py_repr(text), str::to_owned);
        match self.error {
            TimeError::DateTime {
                text,
                why: why @ DateTimeError::Form,
            } => write!(f, "{} is not an xsd:dateTime ({why})", quoted(text)),
            TimeError::DateTime { text, why } => {
                write!(f, "{} is not an xsd:dateTime: {why}", quoted(text))
            }
            TimeError::NoZone(text) => write!(
                f,
                "{} is not an xsd:dateTimeStamp: it needs a time zone (e.g. Z)",
                quoted(text)
            ),
            TimeError::TooLarge(text) => {
                write!(f, "{} is too large to be a time in seconds", quoted(text))
            }
            TimeError::Finer(text) => write!(
                f,
                "{} is finer than a nanosecond, the resolution of times",
                quoted(text)
            ),
            TimeError::NotNumber(text) => write!(f, "{} is not a number", quoted(text)),
            TimeError::Invalid { text, datatype } => {
                write!(f, "{} is not a valid xsd:{datatype}", quoted(text))
            }
            TimeError::NotFinite { text, datatype } => write!(
                f,
                "{} is not a finite xsd:{datatype} number of seconds",
                quoted(text)
            ),
            TimeError::NotSeconds(literal) => write!(
                f,
                "{literal} is neither an xsd:dateTime nor a number of seconds"
            ),
            TimeError::NotTimestamp(literal) => write!(
                f,
                "{literal} is not a timestamp: expected an xsd:dateTime or a number of seconds \
                 (xsd:integer, xsd:decimal, xsd:double or a plain numeric string)"
            ),
            TimeError::Iri(term) => write!(f, "{term} is an IRI, not a timestamp literal"),
            TimeError::BlankNode(term) => {
                write!(f, "{term} is a blank node, not a timestamp literal")
            }
            TimeError::NotLiteral(term) => write!(f, "{term} is not an RDF literal"),
        }
    }
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Message {
            error: self,
            shown: None,
        }
        .fmt(f)
    }
}

impl std::error::Error for TimeError {}
