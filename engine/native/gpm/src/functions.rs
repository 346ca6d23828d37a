//! The SPARQL operators and built-in functions of the native subset, on values (each
//! returns None for an expression error), with pyoxigraph's semantics (spareval 0.2.9).

use super::value::{Operands, Value};
use oxsdatatypes::{Decimal, Double, Float, Integer};
use regex::{Regex, RegexBuilder};
use spaseq_io::dictionary::Dictionary;
use spaseq_io::vocab::XSD;
use std::sync::Arc;

/// `+ - * /`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

pub fn arithmetic(op: Arith, a: &Value, b: &Value) -> Option<Value> {
    use Operands as O;
    use Value as V;
    let operands = Operands::of(a, b)?;
    Some(match op {
        Arith::Add => match operands {
            O::Integer(x, y) => V::Integer(x.checked_add(y)?),
            O::Decimal(x, y) => V::Decimal(x.checked_add(y)?),
            O::Float(x, y) => V::Float(x + y),
            O::Double(x, y) => V::Double(x + y),
            O::Duration(x, y) => V::Duration(x.checked_add(y)?),
            O::YearMonthDuration(x, y) => V::YearMonthDuration(x.checked_add(y)?),
            O::DayTimeDuration(x, y) => V::DayTimeDuration(x.checked_add(y)?),
            O::DateTimeDuration(x, y) => V::DateTime(x.checked_add_duration(y)?),
            O::DateTimeYearMonthDuration(x, y) => {
                V::DateTime(x.checked_add_year_month_duration(y)?)
            }
            O::DateTimeDayTimeDuration(x, y) => V::DateTime(x.checked_add_day_time_duration(y)?),
            O::DateDuration(x, y) => V::Date(x.checked_add_duration(y)?),
            O::DateYearMonthDuration(x, y) => V::Date(x.checked_add_year_month_duration(y)?),
            O::DateDayTimeDuration(x, y) => V::Date(x.checked_add_day_time_duration(y)?),
            O::TimeDuration(x, y) => V::Time(x.checked_add_duration(y)?),
            O::TimeDayTimeDuration(x, y) => V::Time(x.checked_add_day_time_duration(y)?),
            O::DateTime(..) | O::Date(..) | O::Time(..) => return None,
        },
        Arith::Sub => match operands {
            O::Integer(x, y) => V::Integer(x.checked_sub(y)?),
            O::Decimal(x, y) => V::Decimal(x.checked_sub(y)?),
            O::Float(x, y) => V::Float(x - y),
            O::Double(x, y) => V::Double(x - y),
            O::Duration(x, y) => V::Duration(x.checked_sub(y)?),
            O::YearMonthDuration(x, y) => V::YearMonthDuration(x.checked_sub(y)?),
            O::DayTimeDuration(x, y) => V::DayTimeDuration(x.checked_sub(y)?),
            O::DateTime(x, y) => V::DayTimeDuration(x.checked_sub(y)?),
            O::Date(x, y) => V::DayTimeDuration(x.checked_sub(y)?),
            O::Time(x, y) => V::DayTimeDuration(x.checked_sub(y)?),
            O::DateTimeDuration(x, y) => V::DateTime(x.checked_sub_duration(y)?),
            O::DateTimeYearMonthDuration(x, y) => {
                V::DateTime(x.checked_sub_year_month_duration(y)?)
            }
            O::DateTimeDayTimeDuration(x, y) => V::DateTime(x.checked_sub_day_time_duration(y)?),
            O::DateDuration(x, y) => V::Date(x.checked_sub_duration(y)?),
            O::DateYearMonthDuration(x, y) => V::Date(x.checked_sub_year_month_duration(y)?),
            O::DateDayTimeDuration(x, y) => V::Date(x.checked_sub_day_time_duration(y)?),
            O::TimeDuration(x, y) => V::Time(x.checked_sub_duration(y)?),
            O::TimeDayTimeDuration(x, y) => V::Time(x.checked_sub_day_time_duration(y)?),
        },
        Arith::Mul => match operands {
            O::Integer(x, y) => V::Integer(x.checked_mul(y)?),
            O::Decimal(x, y) => V::Decimal(x.checked_mul(y)?),
            O::Float(x, y) => V::Float(x * y),
            O::Double(x, y) => V::Double(x * y),
            _ => return None,
        },
        Arith::Div => match operands {
            O::Integer(x, y) => V::Decimal(Decimal::from(x).checked_div(y)?),
            O::Decimal(x, y) => V::Decimal(x.checked_div(y)?),
            O::Float(x, y) => V::Float(x / y),
            O::Double(x, y) => V::Double(x / y),
            _ => return None,
        },
    })
}

/// Unary `-` (`negate`) and `+`: numbers and durations only.
pub fn sign(negate: bool, v: &Value) -> Option<Value> {
    use Value as V;
    Some(match v {
        V::Integer(x) if negate => V::Integer(x.checked_neg()?),
        V::Decimal(x) if negate => V::Decimal(x.checked_neg()?),
        V::Float(x) if negate => V::Float(-*x),
        V::Double(x) if negate => V::Double(-*x),
        V::Duration(x) if negate => V::Duration(x.checked_neg()?),
        V::YearMonthDuration(x) if negate => V::YearMonthDuration(x.checked_neg()?),
        V::DayTimeDuration(x) if negate => V::DayTimeDuration(x.checked_neg()?),
        V::Integer(_)
        | V::Decimal(_)
        | V::Float(_)
        | V::Double(_)
        | V::Duration(_)
        | V::YearMonthDuration(_)
        | V::DayTimeDuration(_) => v.clone(),
        _ => return None,
    })
}

/// ABS, CEIL, FLOOR, ROUND.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    Abs,
    Ceil,
    Floor,
    Round,
}

pub fn rounding(f: Rounding, v: &Value) -> Option<Value> {
    use Value as V;
    Some(match (f, v) {
        (Rounding::Abs, V::Integer(x)) => V::Integer(x.checked_abs()?),
        (_, V::Integer(x)) => V::Integer(*x),
        (Rounding::Abs, V::Decimal(x)) => V::Decimal(x.checked_abs()?),
        (Rounding::Ceil, V::Decimal(x)) => V::Decimal(x.checked_ceil()?),
        (Rounding::Floor, V::Decimal(x)) => V::Decimal(x.checked_floor()?),
        (Rounding::Round, V::Decimal(x)) => V::Decimal(x.checked_round()?),
        (Rounding::Abs, V::Float(x)) => V::Float(x.abs()),
        (Rounding::Ceil, V::Float(x)) => V::Float(x.ceil()),
        (Rounding::Floor, V::Float(x)) => V::Float(x.floor()),
        (Rounding::Round, V::Float(x)) => V::Float(x.round()),
        (Rounding::Abs, V::Double(x)) => V::Double(x.abs()),
        (Rounding::Ceil, V::Double(x)) => V::Double(x.ceil()),
        (Rounding::Floor, V::Double(x)) => V::Double(x.floor()),
        (Rounding::Round, V::Double(x)) => V::Double(x.round()),
        _ => return None,
    })
}

/// STR (and the xsd:string cast): the lexical form; an error for a blank node.
pub fn str(v: &Value, dict: &Dictionary) -> Option<Value> {
    v.lexical(dict).map(Value::Str)
}

/// LANG: the language tag, "" for other literals, an error for IRIs and blank nodes.
pub fn lang(v: &Value) -> Option<Value> {
    match v {
        Value::Lang(_, l) => Some(Value::Str(l.clone())),
        Value::Node(_) | Value::Iri(_) => None,
        _ => Some(Value::Str("".into())),
    }
}

/// DATATYPE of a literal (derived integer types read as xsd:integer).
pub fn datatype(v: &Value) -> Option<Value> {
    v.datatype().map(|d| Value::Iri(d.into()))
}

/// IRI()/URI() without a base IRI: an IRI stays, an absolute IRI string becomes one.
pub fn iri(v: &Value, dict: &Dictionary) -> Option<Value> {
    match v {
        Value::Iri(_) => Some(v.clone()),
        Value::Node(id) => matches!(dict.get(*id), oxrdf::Term::NamedNode(_)).then(|| v.clone()),
        Value::Str(s) => oxrdf::NamedNode::new(s.to_string())
            .ok()
            .map(|_| Value::Iri(s.clone())),
        _ => None,
    }
}

/// A string or language-tagged string: its text and tag.
pub fn string_and_lang(v: &Value) -> Option<(&Arc<str>, Option<&Arc<str>>)> {
    match v {
        Value::Str(s) => Some((s, None)),
        Value::Lang(s, l) => Some((s, Some(l))),
        _ => None,
    }
}

fn plain(text: String, lang: Option<&Arc<str>>) -> Value {
    match lang {
        Some(l) => Value::Lang(text.into(), l.clone()),
        None => Value::Str(text.into()),
    }
}

/// STRLEN: characters of a string.
pub fn strlen(v: &Value) -> Option<Value> {
    let (s, _) = string_and_lang(v)?;
    Some(Value::Integer(Integer::from(
        i64::try_from(s.chars().count()).ok()?,
    )))
}

/// UCASE (`upper`) and LCASE, keeping the language tag.
pub fn change_case(upper: bool, v: &Value) -> Option<Value> {
    let (s, l) = string_and_lang(v)?;
    Some(plain(
        if upper {
            s.to_uppercase()
        } else {
            s.to_lowercase()
        },
        l,
    ))
}

/// CONTAINS, STRSTARTS, STRENDS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrTest {
    Contains,
    Starts,
    Ends,
}

/// Argument-compatible strings (the second without a tag or with the first's tag).
pub fn string_test(test: StrTest, a: &Value, b: &Value) -> Option<Value> {
    let (x, lx) = string_and_lang(a)?;
    let (y, ly) = string_and_lang(b)?;
    if ly.is_some() && lx != ly {
        return None;
    }
    Some(Value::Boolean(match test {
        StrTest::Contains => x.contains(&**y),
        StrTest::Starts => x.starts_with(&**y),
        StrTest::Ends => x.ends_with(&**y),
    }))
}

/// CONCAT: the common tag if every argument has the same one.
pub fn concat(args: &[Value]) -> Option<Value> {
    let mut text = String::new();
    let mut lang: Option<Option<&Arc<str>>> = None;
    for a in args {
        let (s, l) = string_and_lang(a)?;
        text.push_str(s);
        lang = match lang {
            None => Some(l),
            Some(prev) if prev == l => Some(prev),
            Some(_) => Some(None),
        };
    }
    Some(plain(text, lang.flatten()))
}

/// SUBSTR with xsd:integer positions (1-based, in characters).
pub fn substr(source: &Value, start: &Value, length: Option<&Value>) -> Option<Value> {
    let (s, l) = string_and_lang(source)?;
    let Value::Integer(start) = start else {
        return None;
    };
    let length = match length {
        Some(Value::Integer(n)) => Some(i64::from(*n)),
        Some(_) => return None,
        None => None,
    };
    let start = i64::from(*start).checked_sub(1)?;
    let end = match length {
        Some(n) => Some(start.checked_add(n)?),
        None => None,
    };
    let text: String = s
        .chars()
        .enumerate()
        .filter(|(i, _)| {
            let i = *i as i64;
            start <= i && end.is_none_or(|e| i < e)
        })
        .map(|(_, c)| c)
        .collect();
    Some(plain(text, l))
}

/// LANGMATCHES(tag, range): basic filtering (RFC 4647), both simple literals.
pub fn langmatches(tag: &Value, range: &Value) -> Option<Value> {
    let (Value::Str(tag), Value::Str(range)) = (tag, range) else {
        return None;
    };
    let tag = tag.to_ascii_lowercase();
    let range = range.to_ascii_lowercase();
    Some(Value::Boolean(if range == "*" {
        !tag.is_empty()
    } else {
        let mut tags = tag.split('-');
        range.split('-').all(|r| tags.next() == Some(r))
    }))
}

/// A REGEX's pattern and flags compiled as pyoxigraph does (the Rust regex crate; flags
/// s, m, i, x, q); None when they are invalid (every call is then an error).
pub fn compile_regex(pattern: &str, flags: &str) -> Option<Regex> {
    let pattern = if flags.contains('q') {
        regex::escape(pattern)
    } else {
        pattern.to_owned()
    };
    let mut builder = RegexBuilder::new(&pattern);
    builder.size_limit(1_000_000);
    for flag in flags.chars() {
        match flag {
            's' => builder.dot_matches_new_line(true),
            'm' => builder.multi_line(true),
            'i' => builder.case_insensitive(true),
            'x' => builder.ignore_whitespace(true),
            'q' => &mut builder,
            _ => return None,
        };
    }
    builder.build().ok()
}

pub fn regex_match(regex: &Regex, text: &Value) -> Option<Value> {
    let (s, _) = string_and_lang(text)?;
    Some(Value::Boolean(regex.is_match(s)))
}

/// The xsd: casts of the native subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cast {
    String,
    Boolean,
    Integer,
    Decimal,
    Float,
    Double,
}

impl Cast {
    pub fn of_iri(iri: &str) -> Option<Self> {
        Some(match iri.strip_prefix(XSD)? {
            "string" => Cast::String,
            "boolean" => Cast::Boolean,
            "integer" => Cast::Integer,
            "decimal" => Cast::Decimal,
            "float" => Cast::Float,
            "double" => Cast::Double,
            _ => return None,
        })
    }
}

pub fn cast(to: Cast, v: &Value, dict: &Dictionary) -> Option<Value> {
    use Value as V;
    let text = |v: &Value| match v {
        V::Str(s) => Some(s.clone()),
        _ => None,
    };
    Some(match to {
        Cast::String => return str(v, dict),
        Cast::Boolean => V::Boolean(match v {
            V::Boolean(b) => *b,
            V::Str(s) => bool::from(s.parse::<oxsdatatypes::Boolean>().ok()?),
            other if other.is_numeric() => other.ebv()?,
            _ => return None,
        }),
        Cast::Double => V::Double(match v {
            V::Float(x) => (*x).into(),
            V::Double(x) => *x,
            V::Integer(x) => (*x).into(),
            V::Decimal(x) => (*x).into(),
            V::Boolean(b) => Double::from(oxsdatatypes::Boolean::from(*b)),
            _ => text(v)?.parse().ok()?,
        }),
        Cast::Float => V::Float(match v {
            V::Float(x) => *x,
            V::Double(x) => (*x).into(),
            V::Integer(x) => (*x).into(),
            V::Decimal(x) => (*x).into(),
            V::Boolean(b) => Float::from(oxsdatatypes::Boolean::from(*b)),
            _ => text(v)?.parse().ok()?,
        }),
        Cast::Integer => V::Integer(match v {
            V::Float(x) => (*x).try_into().ok()?,
            V::Double(x) => (*x).try_into().ok()?,
            V::Integer(x) => *x,
            V::Decimal(x) => (*x).try_into().ok()?,
            V::Boolean(b) => Integer::from(*b),
            _ => text(v)?.parse().ok()?,
        }),
        Cast::Decimal => V::Decimal(match v {
            V::Float(x) => (*x).try_into().ok()?,
            V::Double(x) => (*x).try_into().ok()?,
            V::Integer(x) => (*x).into(),
            V::Decimal(x) => *x,
            V::Boolean(b) => Decimal::from(oxsdatatypes::Boolean::from(*b)),
            _ => text(v)?.parse().ok()?,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Value {
        Value::Integer(i.into())
    }

    #[test]
    fn integer_division_is_decimal_and_by_zero_an_error() {
        let q = arithmetic(Arith::Div, &int(1), &int(4)).unwrap();
        assert!(matches!(q, Value::Decimal(d) if d.to_string() == "0.25"));
        assert!(arithmetic(Arith::Div, &int(1), &int(0)).is_none());
        assert!(arithmetic(Arith::Add, &int(1), &Value::Str("1".into())).is_none());
        assert!(arithmetic(Arith::Add, &int(i64::MAX), &int(1)).is_none());
    }

    #[test]
    fn strings_keep_their_language() {
        let en = Value::Lang("abc".into(), "en".into());
        assert!(
            matches!(change_case(true, &en), Some(Value::Lang(s, l)) if &*s == "ABC" && &*l == "en")
        );
        assert!(string_test(StrTest::Contains, &Value::Str("a".into()), &en).is_none());
        assert!(matches!(
            substr(&en, &int(2), Some(&int(1))),
            Some(Value::Lang(s, _)) if &*s == "b"
        ));
        assert!(matches!(
            langmatches(&Value::Str("en-US".into()), &Value::Str("en".into())),
            Some(Value::Boolean(true))
        ));
        assert!(matches!(
            langmatches(&Value::Str("en".into()), &Value::Str("en-us".into())),
            Some(Value::Boolean(false))
        ));
    }

    #[test]
    fn casts_follow_pyoxigraph() {
        let d = Dictionary::new();
        assert!(matches!(
            cast(Cast::Integer, &Value::Str("12".into()), &d),
            Some(Value::Integer(_))
        ));
        assert!(cast(Cast::Integer, &Value::Str(" 12 ".into()), &d).is_none());
        assert!(matches!(
            cast(Cast::Boolean, &int(2), &d),
            Some(Value::Boolean(true))
        ));
        assert!(cast(Cast::Integer, &Value::Double(f64::NAN.into()), &d).is_none());
    }
}
