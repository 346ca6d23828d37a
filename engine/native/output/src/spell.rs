//! How the Python writers spell things (their oracle, tests/output/writers_oracle.py),
//! reproduced byte for byte: JSON strings as `json.dumps` writes them, times as
//! `writers.seconds` and `timestamps.seconds_literal` do, CSV cells as Python's `csv` module
//! quotes them. A time as an `xsd:dateTime` is spelled here only (`datetime_seconds`):
//! Python's `timestamps.datetime_text` calls it (`_native.datetime_text`).

use oxrdf::vocab::{rdf, xsd};
use oxrdf::Term;
use std::fmt::Write;

const NS: i128 = 1_000_000_000;

/// A string as a JSON string, as `json.dumps(..., ensure_ascii=False)` writes it: `"` and
/// `\` escaped, `\b \f \n \r \t` by name, other control characters as `\u00xx` (lower-case
/// hex), everything else (non-ASCII, DEL) as it is.
pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    let mut rest = s;
    // the characters escaped are ASCII: a byte scan finds them (never inside a multi-byte one)
    while let Some(at) = rest
        .bytes()
        .position(|b| b < b' ' || b == b'"' || b == b'\\')
    {
        out.push_str(&rest[..at]);
        escape(char::from(rest.as_bytes()[at]), out);
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

/// A string as `json.dumps` writes it by default (`ensure_ascii=True`): as `json_string`,
/// and every non-ASCII character as `\uxxxx` (a surrogate pair above U+FFFF).
pub fn json_string_ascii(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        if c < ' ' || c == '"' || c == '\\' {
            escape(c, out);
        } else if c.is_ascii() && c != '\u{7f}' {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out.push('"');
}

fn escape(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        c => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
    }
}

/// Seconds (`ns` nanoseconds) in the XSD 1.1 canonical decimal spelling
/// (`lexical.canonical_decimal`): no exponent, no trailing zeros, no point when integral.
pub fn canonical_seconds(ns: i128, out: &mut String) {
    if ns < 0 {
        out.push('-');
    }
    let (whole, frac) = split(ns);
    match u64::try_from(whole) {
        Ok(whole) => push_u64(whole, out),
        Err(_) => {
            let _ = write!(out, "{whole}");
        }
    }
    push_fraction(frac, out);
}

/// `.` and the nanoseconds `frac` as nine digits without trailing zeros; nothing for 0.
fn push_fraction(frac: u64, out: &mut String) {
    if frac != 0 {
        let mut digits = [b'0'; 9];
        let mut rest = frac;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        let len = 9 - digits.iter().rev().take_while(|&&d| d == b'0').count();
        out.push('.');
        out.push_str(std::str::from_utf8(&digits[..len]).expect("ASCII digits"));
    }
}

/// Seconds since the epoch (`ns` nanoseconds) as an `xsd:dateTime` in UTC, the engine's one
/// spelling (tests/values/timestamps_oracle.py keeps the Python one it replaced):
/// `YYYY-MM-DDThh:mm:ss`, the fraction only when nonzero (exact, trailing zeros trimmed), `Z`;
/// the proleptic Gregorian calendar, years of at least four digits, negative ones with `-`
/// (XSD 1.1: year 0 is 1 BCE).
pub fn datetime_seconds(ns: i128, out: &mut String) {
    // times are below 10^18 s (time.rs), so seconds and days fit 64 bits, where division is
    // an instruction (128-bit division is a library call); seconds beyond (never a time the
    // engine keeps) are taken at the 64-bit bound
    let (seconds, frac) = match i64::try_from(ns) {
        Ok(ns) => (ns.div_euclid(NS64), ns.rem_euclid(NS64) as u64),
        Err(_) => {
            let seconds = ns.div_euclid(NS).clamp(i64::MIN.into(), i64::MAX.into());
            (seconds as i64, ns.rem_euclid(NS) as u64)
        }
    };
    let (days, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    // `-YYYY` (more digits when needed), then `-MM-DDThh:mm:ss` filled in place
    if year < 0 {
        out.push('-');
    }
    let year = year.unsigned_abs();
    if year < 10_000 {
        let mut text = *b"0000";
        fill_digits(year, &mut text);
        out.push_str(std::str::from_utf8(&text).expect("ASCII digits"));
    } else {
        push_u64(year, out);
    }
    push_month_to_second(month, day, time, out);
    push_fraction(frac, out);
    out.push('Z');
}

/// `-MM-DDThh:mm:ss` of a date's month and day and a time of day (seconds), filled in place.
fn push_month_to_second(month: u64, day: u64, time: i64, out: &mut String) {
    let mut text = *b"-MM-DDThh:mm:ss";
    fill_digits(month, &mut text[1..3]);
    fill_digits(day, &mut text[4..6]);
    fill_digits((time / 3_600) as u64, &mut text[7..9]);
    fill_digits((time / 60 % 60) as u64, &mut text[10..12]);
    fill_digits((time % 60) as u64, &mut text[13..15]);
    out.push_str(std::str::from_utf8(&text).expect("ASCII digits"));
}

const NS64: i64 = NS as i64;

/// The civil date (year, month, day) of a count of days since 1970-01-01 in the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(days: i64) -> (i64, u64, u64) {
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        yoe + era * 400 + i64::from(month <= 2),
        month as u64,
        day as u64,
    )
}

/// `n` as the decimal digits filling `digits` (zero-padded; `n` has at most that many).
fn fill_digits(mut n: u64, digits: &mut [u8]) {
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// A time's lexical form: `datetime_seconds` when `dated`, else `canonical_seconds`.
pub fn time_value(ns: i128, dated: bool, out: &mut String) {
    if dated {
        datetime_seconds(ns, out);
    } else {
        canonical_seconds(ns, out);
    }
}

/// The datatype of a time written `dated` or not (`time_value`).
pub fn time_datatype(dated: bool) -> &'static str {
    if dated {
        xsd::DATE_TIME.as_str()
    } else {
        xsd::DECIMAL.as_str()
    }
}

/// |ns| as whole seconds and the nanoseconds left (in 64 bits when they fit: 128-bit
/// division is a library call).
fn split(ns: i128) -> (u128, u64) {
    const NS64: u64 = NS as u64;
    let abs = ns.unsigned_abs();
    match u64::try_from(abs) {
        Ok(abs) => (u128::from(abs / NS64), abs % NS64),
        Err(_) => (abs / u128::from(NS64), (abs % u128::from(NS64)) as u64),
    }
}

/// A number in decimal digits (what `write!` does, without the formatting machinery).
fn push_u64(mut n: u64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[at..]).expect("ASCII digits"));
}

/// Seconds as a JSON number, as the jsonl writer writes a time (`writers.seconds` and
/// `dumps_exact`): integral ones as integers; others as the float they read as when that
/// float's `repr` is the exact value, else the exact decimal digits. With at most nine
/// fractional digits the two spellings differ only below 1e-4, where `repr` switches to an
/// exponent (`1.5e-05`): there the value has at most 5 significant digits, so its float's
/// shortest `repr` is always the exact value.
pub fn json_seconds(ns: i128, out: &mut String) {
    let (whole, frac) = split(ns);
    if frac == 0 || whole > 0 || frac >= 100_000 {
        canonical_seconds(ns, out);
    } else {
        // 0.0000abcde: digits "abcde" (trailing zeros trimmed), exponent -(leading zeros + 1)
        if ns < 0 {
            out.push('-');
        }
        let digits = format!("{:09}", ns.unsigned_abs());
        let zeros = digits.len() - digits.trim_start_matches('0').len();
        let significant = digits[zeros..].trim_end_matches('0');
        out.push_str(&significant[..1]);
        if significant.len() > 1 {
            out.push('.');
            out.push_str(&significant[1..]);
        }
        let _ = write!(out, "e-{:02}", zeros + 1);
    }
}

/// A term in the SPARQL 1.1 Query Results JSON format (`writers.json_term`).
pub fn json_term(term: &Term, out: &mut String) {
    match term {
        Term::NamedNode(n) => {
            out.push_str("{\"type\": \"uri\", \"value\": ");
            json_string(n.as_str(), out);
        }
        Term::BlankNode(b) => {
            out.push_str("{\"type\": \"bnode\", \"value\": ");
            json_string(b.as_str(), out);
        }
        Term::Literal(l) => {
            out.push_str("{\"type\": \"literal\", \"value\": ");
            json_string(l.value(), out);
            if let Some(language) = l.language() {
                out.push_str(", \"xml:lang\": ");
                json_string(language, out);
            } else if !is_plain(l.datatype().as_str()) {
                out.push_str(", \"datatype\": ");
                json_string(l.datatype().as_str(), out);
            }
        }
        #[allow(unreachable_patterns)]
        other => {
            out.push_str("{\"type\": \"literal\", \"value\": ");
            json_string(&other.to_string(), out);
        }
    }
    out.push('}');
}

fn is_plain(datatype: &str) -> bool {
    datatype == xsd::STRING.as_str() || datatype == rdf::LANG_STRING.as_str()
}

/// A time as the literal `times.time_literal` makes (`xsd:dateTime` when `dated`, else
/// `xsd:decimal`), in the JSON results format.
pub fn json_time_literal(ns: i128, dated: bool, out: &mut String) {
    out.push_str("{\"type\": \"literal\", \"value\": \"");
    time_value(ns, dated, out);
    out.push_str("\", \"datatype\": \"");
    out.push_str(time_datatype(dated));
    out.push_str("\"}");
}

/// A term's plain value for the CSV results format (`writers._csv_value`), unquoted.
pub fn csv_value(term: &Term) -> String {
    match term {
        Term::NamedNode(n) => n.as_str().to_owned(),
        Term::BlankNode(b) => format!("_:{}", b.as_str()),
        Term::Literal(l) => l.value().to_owned(),
        #[allow(unreachable_patterns)]
        other => other.to_string(),
    }
}

/// A field as Python's `csv.writer` (QUOTE_MINIMAL, `"` doubled, lines ended by CRLF)
/// writes it: quoted when it holds `,`, `"`, CR or LF.
pub fn csv_field(value: &str, out: &mut String) {
    if value.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&value.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(value);
    }
}

/// A term for the TSV results format (`writers._tsv_value`): N-Triples, tab and newline
/// escaped.
pub fn tsv_value(term: &Term, out: &mut String) {
    out.push_str(&term.to_string().replace('\t', "\\t").replace('\n', "\\n"));
}

/// Times this large (in seconds) are wall-clock times (`writers.EPOCH_LIKE`).
const EPOCH_LIKE: i128 = 100_000_000 * NS;

/// A time in the table (`writers._fmt_time`): seconds rounded to milliseconds (half to even,
/// as `f"{Decimal:.3f}"`), trailing zeros and point trimmed, for small (relative) times; for
/// wall-clock ones, the ISO 8601 UTC time of the float the seconds read as (microseconds
/// rounded half to even, as `datetime.fromtimestamp` does), to the millisecond when the
/// time has a fraction, `Z`.
pub fn table_time(ns: i128, out: &mut String) {
    if ns.abs() >= EPOCH_LIKE {
        let (seconds, micros) = seconds_and_micros(seconds_as_float(ns));
        let (days, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        if let Ok(year @ 0..10_000) = u64::try_from(year) {
            // filled in place: `write!` took most of a table row's instructions
            let mut text = *b"0000";
            fill_digits(year, &mut text);
            out.push_str(std::str::from_utf8(&text).expect("ASCII digits"));
            push_month_to_second(month, day, time, out);
        } else {
            let _ = write!(
                out,
                "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
                time / 3_600,
                time / 60 % 60,
                time % 60
            );
        }
        if ns % NS != 0 {
            let mut text = *b".000";
            fill_digits(micros / 1_000, &mut text[1..]);
            out.push_str(std::str::from_utf8(&text).expect("ASCII digits"));
        }
        out.push('Z');
    } else {
        let abs = ns.unsigned_abs();
        let (mut millis, rest) = (abs / 1_000_000, abs % 1_000_000);
        if rest > 500_000 || (rest == 500_000 && millis % 2 == 1) {
            millis += 1;
        }
        let mut text = format!(
            "{}{}.{:03}",
            if ns < 0 { "-" } else { "" },
            millis / 1_000,
            millis % 1_000
        );
        text.truncate(text.trim_end_matches('0').trim_end_matches('.').len());
        out.push_str(&text);
    }
}

/// The whole seconds and microseconds of a float number of seconds, as
/// `_PyTime_DoubleToDenominator` takes them: the fraction's microseconds rounded half to even.
fn seconds_and_micros(float: f64) -> (i64, u64) {
    let whole = float.trunc();
    let mut micros = ((float - whole) * 1e6).round_ties_even();
    let mut seconds = whole;
    if micros >= 1e6 {
        micros -= 1e6;
        seconds += 1.0;
    } else if micros < 0.0 {
        micros += 1e6;
        seconds -= 1.0;
    }
    (seconds as i64, micros as u64)
}

/// The float `ns` nanoseconds read as seconds (Python's `float(Decimal)`: the nearest double
/// to the exact decimal), parsed from digits written on the stack.
fn seconds_as_float(ns: i128) -> f64 {
    let (whole, frac) = split(ns);
    let Ok(whole) = u64::try_from(whole) else {
        let mut exact = String::new();
        canonical_seconds(ns, &mut exact);
        return exact.parse().expect("a decimal number");
    };
    // `-`, at most 20 digits, `.`, nine digits (trailing zeros read the same)
    let mut text = [0u8; 31];
    let mut at = 0;
    if ns < 0 {
        text[0] = b'-';
        at = 1;
    }
    let digits = whole.checked_ilog10().unwrap_or(0) as usize + 1;
    fill_digits(whole, &mut text[at..at + digits]);
    at += digits;
    text[at] = b'.';
    fill_digits(frac, &mut text[at + 1..at + 10]);
    std::str::from_utf8(&text[..at + 10])
        .expect("ASCII digits")
        .parse()
        .expect("a decimal number")
}

/// A term in the table (`TableWriter._short`): an IRI under one of `prefixes` (longest
/// namespace first) as a prefixed name, other IRIs in `<>`, a literal of an XSD datatype
/// other than xsd:string as its lexical form, anything else in N-Triples.
pub fn table_term(term: &Term, prefixes: &[(String, String)], out: &mut String) {
    match term {
        Term::NamedNode(n) => {
            let iri = n.as_str();
            for (prefix, ns) in prefixes {
                if iri.len() > ns.len() && iri.starts_with(ns.as_str()) {
                    let _ = write!(out, "{prefix}:{}", &iri[ns.len()..]);
                    return;
                }
            }
            let _ = write!(out, "<{iri}>");
        }
        Term::Literal(l)
            if l.language().is_none()
                && l.datatype() != xsd::STRING
                && l.datatype().as_str().starts_with(XSD_NS) =>
        {
            out.push_str(l.value());
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// The XSD namespace.
const XSD_NS: &str = "http://www.w3.org/2001/XMLSchema#";

/// Whether Python's `str.isspace` holds for `c` (what `str.rstrip()` strips): Unicode's
/// White_Space and the four information separators U+001C..U+001F.
pub fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(ns: i128) -> String {
        let mut s = String::new();
        json_seconds(ns, &mut s);
        s
    }

    fn canonical(ns: i128) -> String {
        let mut s = String::new();
        canonical_seconds(ns, &mut s);
        s
    }

    /// `writers._fmt_time`'s spellings (from Python).
    #[test]
    fn table_times_are_spelled_as_python_writes_them() {
        let cases = [
            (0, "0"),
            (2_500_000_000, "2.5"),
            (-400_000, "-0"),
            (500_000, "0"),
            (1_500_000, "0.002"),
            (99_999_999_999_500_000, "100000000"),
            (100_000_000 * NS, "1973-03-03T09:46:40Z"),
            (1_704_103_220_100_000_000, "2024-01-01T10:00:20.100Z"),
            (1_704_103_220_000_499_500, "2024-01-01T10:00:20.000Z"),
            (1_704_103_220_000_000_007, "2024-01-01T10:00:20.000Z"),
            (-100_000_000_500_000_000, "1966-10-31T14:13:19.500Z"),
            (1_767_225_743_100_000_000, "2026-01-01T00:02:23.100Z"),
            (253_402_300_800 * NS, "10000-01-01T00:00:00Z"),
        ];
        for (ns, expected) in cases {
            let mut s = String::new();
            table_time(ns, &mut s);
            assert_eq!(s, expected, "{ns}");
        }
    }

    /// `table_time`'s first spelling of wall-clock times (the decimal seconds formatted and
    /// parsed as a float, the date written by `write!`): the oracle of the one filled in
    /// place.
    fn table_time_oracle(ns: i128) -> String {
        let mut exact = String::new();
        canonical_seconds(ns, &mut exact);
        let (seconds, micros) = seconds_and_micros(exact.parse().expect("a decimal number"));
        let (days, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        let mut out = format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            time / 3_600,
            time / 60 % 60,
            time % 60
        );
        if ns % NS != 0 {
            out.push_str(&format!(".{:03}", micros / 1_000));
        }
        out.push('Z');
        out
    }

    #[test]
    fn table_times_filled_in_place_are_the_formatted_ones() {
        let mut seed: u64 = 7;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed
        };
        let mut cases: Vec<i128> = vec![
            EPOCH_LIKE,
            -EPOCH_LIKE,
            253_402_300_799_999_999_999, // rounds up into year 10000
            253_402_300_800 * NS,
            -62_135_596_800 * NS, // 0001-01-01
            -62_167_219_200 * NS, // 0000-01-01
            -62_167_219_200 * NS - 1,
            i128::from(i64::MAX),
            i128::from(i64::MIN),
            i128::from(u64::MAX) * 3,
        ];
        for _ in 0..20_000 {
            let r = next();
            // times to 2^64 ns (year 2554), some whole seconds or milliseconds, either sign
            let mut ns = i128::from(r >> 1);
            match r % 4 {
                0 => ns -= ns % NS,
                1 => ns -= ns % 1_000_000,
                _ => {}
            }
            cases.push(if r & 1 == 1 { -ns } else { ns });
        }
        for ns in cases.into_iter().filter(|ns| ns.abs() >= EPOCH_LIKE) {
            let mut s = String::new();
            table_time(ns, &mut s);
            assert_eq!(s, table_time_oracle(ns), "{ns}");
        }
    }

    #[test]
    fn times_are_spelled_as_python_writes_them() {
        assert_eq!(seconds(3 * NS), "3");
        assert_eq!(seconds(-2 * NS), "-2");
        assert_eq!(seconds(2_500_000_000), "2.5");
        assert_eq!(seconds(1_793_527_200_123_456_789), "1793527200.123456789");
        assert_eq!(seconds(100_000), "0.0001"); // repr(0.0001) is positional
        assert_eq!(seconds(10_000), "1e-05");
        assert_eq!(seconds(15_000), "1.5e-05");
        assert_eq!(seconds(1), "1e-09");
        assert_eq!(seconds(-99_999), "-9.9999e-05");
        assert_eq!(canonical(0), "0");
        assert_eq!(canonical(-500_000_000), "-0.5");
        assert_eq!(canonical(10_000), "0.00001");
    }

    fn datetime(ns: i128) -> String {
        let mut s = String::new();
        datetime_seconds(ns, &mut s);
        s
    }

    #[test]
    fn datetimes_are_spelled_in_utc_exactly() {
        assert_eq!(datetime(0), "1970-01-01T00:00:00Z");
        assert_eq!(datetime(1_704_103_200 * NS), "2024-01-01T10:00:00Z");
        assert_eq!(
            datetime(1_704_103_220 * NS + 100_000_000),
            "2024-01-01T10:00:20.1Z"
        );
        assert_eq!(
            datetime(1_709_164_800 * NS + 1),
            "2024-02-29T00:00:00.000000001Z"
        );
        assert_eq!(datetime(-500_000_000), "1969-12-31T23:59:59.5Z");
        assert_eq!(datetime(-62_135_596_800 * NS), "0001-01-01T00:00:00Z");
        assert_eq!(datetime(-62_167_219_200 * NS), "0000-01-01T00:00:00Z");
        assert_eq!(datetime(-62_198_755_200 * NS), "-0001-01-01T00:00:00Z");
        assert_eq!(datetime(253_402_300_800 * NS), "10000-01-01T00:00:00Z");
        // the ends of 64-bit nanoseconds, and times far beyond (Python's datetime_text)
        assert_eq!(
            datetime(i128::from(i64::MAX)),
            "2262-04-11T23:47:16.854775807Z"
        );
        assert_eq!(
            datetime(i128::from(i64::MIN) - 1),
            "1677-09-21T00:12:43.145224191Z"
        );
        assert_eq!(
            datetime(99_999_999_999_999_999 * NS + NS / 2),
            "3168875820-09-06T09:46:39.5Z"
        );
        assert_eq!(
            datetime(-99_999_999_999_999_999 * NS),
            "-3168871881-04-27T14:13:21Z"
        );
    }

    #[test]
    fn json_strings_escape_as_json_dumps() {
        let mut s = String::new();
        json_string("a\"b\\c\n\t\u{1}\u{7f}é😀", &mut s);
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\t\\u0001\u{7f}é😀\"");
        let mut a = String::new();
        json_string_ascii("é😀x", &mut a);
        assert_eq!(a, "\"\\u00e9\\ud83d\\ude00x\"");
    }

    #[test]
    fn csv_fields_quote_as_the_csv_module() {
        let mut s = String::new();
        csv_field("a,b \"c\"", &mut s);
        assert_eq!(s, "\"a,b \"\"c\"\"\"");
        let mut plain = String::new();
        csv_field("a b", &mut plain);
        assert_eq!(plain, "a b");
    }
}
