//! SPARQL expression values, as pyoxigraph (spareval 0.2.9, the engine's reference dialect
//! "oxigraph") sees them: a literal of a datatype it knows is its value (oxsdatatypes), so
//! `"01"^^xsd:integer` and `"1"^^xsd:int` are both the integer 1; anything else keeps its
//! lexical form. Comparison, equality, EBV and the numeric promotion live here.

use oxrdf::vocab::{rdf, xsd};
use oxrdf::{Literal, Term};
use oxsdatatypes::{
    Date, DateTime, DayTimeDuration, Decimal, Double, Duration, Float, GDay, GMonth, GMonthDay,
    GYear, GYearMonth, Integer, Time, YearMonthDuration,
};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_io::vocab::XSD;
use std::cmp::Ordering;
use std::sync::Arc;

/// One expression value. IRIs and blank nodes read from terms stay term ids (compared as
/// integers); computed IRIs (`DATATYPE`, `IRI()`) are strings.
#[derive(Debug, Clone)]
pub enum Value {
    /// An IRI or a blank node of the dictionary.
    Node(TermId),
    /// A computed IRI.
    Iri(Arc<str>),
    Str(Arc<str>),
    Lang(Arc<str>, Arc<str>),
    Boolean(bool),
    Integer(Integer),
    Decimal(Decimal),
    Float(Float),
    Double(Double),
    DateTime(DateTime),
    Date(Date),
    Time(Time),
    GYear(GYear),
    GYearMonth(GYearMonth),
    GMonth(GMonth),
    GMonthDay(GMonthDay),
    GDay(GDay),
    Duration(Duration),
    YearMonthDuration(YearMonthDuration),
    DayTimeDuration(DayTimeDuration),
    /// A literal of another datatype, or an ill-typed one (`"abc"^^xsd:integer`).
    Other {
        value: Arc<str>,
        datatype: Arc<str>,
    },
}

impl Value {
    /// The value of the term `id` (parsing its lexical form: callers cache it).
    pub fn of_term(id: TermId, dict: &Dictionary) -> Value {
        match dict.get(id) {
            Term::Literal(lit) => Value::of_literal(lit),
            _ => Value::Node(id),
        }
    }

    /// The value of a literal: typed by its datatype when its lexical form is valid.
    pub fn of_literal(lit: &Literal) -> Value {
        if let Some(lang) = lit.language() {
            return Value::Lang(lit.value().into(), lang.into());
        }
        let datatype = lit.datatype().as_str();
        parse_typed(lit.value(), datatype).unwrap_or_else(|| Value::Other {
            value: lit.value().into(),
            datatype: datatype.into(),
        })
    }

    /// Effective boolean value (SPARQL 17.2.2 as pyoxigraph does it); None: an error.
    pub fn ebv(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            Value::Str(s) => Some(!s.is_empty()),
            Value::Integer(v) => Some(bool::from(oxsdatatypes::Boolean::from(*v))),
            Value::Decimal(v) => Some(bool::from(oxsdatatypes::Boolean::from(*v))),
            Value::Float(v) => Some(bool::from(oxsdatatypes::Boolean::from(*v))),
            Value::Double(v) => Some(bool::from(oxsdatatypes::Boolean::from(*v))),
            _ => None,
        }
    }

    pub fn is_literal(&self) -> bool {
        !matches!(self, Value::Node(_) | Value::Iri(_))
    }

    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            Value::Integer(_) | Value::Decimal(_) | Value::Float(_) | Value::Double(_)
        )
    }

    /// The lexical form of a literal value (canonical for typed values), or an IRI's text;
    /// None for a blank node.
    pub fn lexical(&self, dict: &Dictionary) -> Option<Arc<str>> {
        Some(match self {
            Value::Node(id) => match dict.get(*id) {
                Term::NamedNode(n) => n.as_str().into(),
                _ => return None,
            },
            Value::Iri(s) | Value::Str(s) | Value::Lang(s, _) => s.clone(),
            Value::Other { value, .. } => value.clone(),
            other => other.typed_lexical()?.into(),
        })
    }

    /// The canonical spelling of a typed value.
    fn typed_lexical(&self) -> Option<String> {
        Some(match self {
            Value::Boolean(v) => v.to_string(),
            Value::Integer(v) => v.to_string(),
            Value::Decimal(v) => v.to_string(),
            Value::Float(v) => v.to_string(),
            Value::Double(v) => v.to_string(),
            Value::DateTime(v) => v.to_string(),
            Value::Date(v) => v.to_string(),
            Value::Time(v) => v.to_string(),
            Value::GYear(v) => v.to_string(),
            Value::GYearMonth(v) => v.to_string(),
            Value::GMonth(v) => v.to_string(),
            Value::GMonthDay(v) => v.to_string(),
            Value::GDay(v) => v.to_string(),
            Value::Duration(v) => v.to_string(),
            Value::YearMonthDuration(v) => v.to_string(),
            Value::DayTimeDuration(v) => v.to_string(),
            _ => return None,
        })
    }

    /// The datatype IRI of a literal value (None for IRIs and blank nodes).
    pub fn datatype(&self) -> Option<&str> {
        Some(match self {
            Value::Node(_) | Value::Iri(_) => return None,
            Value::Lang(..) => rdf::LANG_STRING.as_str(),
            Value::Other { datatype, .. } => datatype,
            Value::Str(_) => xsd::STRING.as_str(),
            Value::Boolean(_) => xsd::BOOLEAN.as_str(),
            Value::Integer(_) => xsd::INTEGER.as_str(),
            Value::Decimal(_) => xsd::DECIMAL.as_str(),
            Value::Float(_) => xsd::FLOAT.as_str(),
            Value::Double(_) => xsd::DOUBLE.as_str(),
            Value::DateTime(_) => xsd::DATE_TIME.as_str(),
            Value::Date(_) => xsd::DATE.as_str(),
            Value::Time(_) => xsd::TIME.as_str(),
            Value::GYear(_) => xsd::G_YEAR.as_str(),
            Value::GYearMonth(_) => xsd::G_YEAR_MONTH.as_str(),
            Value::GMonth(_) => xsd::G_MONTH.as_str(),
            Value::GMonthDay(_) => xsd::G_MONTH_DAY.as_str(),
            Value::GDay(_) => xsd::G_DAY.as_str(),
            Value::Duration(_) => xsd::DURATION.as_str(),
            Value::YearMonthDuration(_) => xsd::YEAR_MONTH_DURATION.as_str(),
            Value::DayTimeDuration(_) => xsd::DAY_TIME_DURATION.as_str(),
        })
    }

    /// The value as an RDF term (canonical literal), for callers outside expressions.
    pub fn to_term(&self, dict: &Dictionary) -> Term {
        match self {
            Value::Node(id) => dict.get(*id).clone(),
            Value::Iri(s) => oxrdf::NamedNode::new_unchecked(s.to_string()).into(),
            Value::Str(s) => Literal::new_simple_literal(s.to_string()).into(),
            Value::Lang(s, l) => {
                Literal::new_language_tagged_literal_unchecked(s.to_string(), l.to_string()).into()
            }
            Value::Other { value, datatype } => Literal::new_typed_literal(
                value.to_string(),
                oxrdf::NamedNode::new_unchecked(datatype.to_string()),
            )
            .into(),
            typed => Literal::new_typed_literal(
                typed.typed_lexical().unwrap_or_default(),
                oxrdf::NamedNode::new_unchecked(typed.datatype().unwrap_or_default()),
            )
            .into(),
        }
    }

    /// The text of an IRI (a term or computed).
    fn iri_text<'a>(&'a self, dict: &'a Dictionary) -> Option<&'a str> {
        match self {
            Value::Iri(s) => Some(s),
            Value::Node(id) => match dict.get(*id) {
                Term::NamedNode(n) => Some(n.as_str()),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A typed literal's value, None when the datatype is unknown or the form invalid.
fn parse_typed(value: &str, datatype: &str) -> Option<Value> {
    let local = datatype.strip_prefix(XSD)?;
    Some(match local {
        "string" => Value::Str(value.into()),
        "boolean" => Value::Boolean(bool::from(value.parse::<oxsdatatypes::Boolean>().ok()?)),
        "float" => Value::Float(value.parse().ok()?),
        "double" => Value::Double(value.parse().ok()?),
        "decimal" => Value::Decimal(value.parse().ok()?),
        // derived integer types are integers (no range check, as pyoxigraph)
        "integer" | "byte" | "short" | "int" | "long" | "unsignedByte" | "unsignedShort"
        | "unsignedInt" | "unsignedLong" | "positiveInteger" | "negativeInteger"
        | "nonPositiveInteger" | "nonNegativeInteger" => Value::Integer(value.parse().ok()?),
        "dateTime" | "dateTimeStamp" => Value::DateTime(value.parse().ok()?),
        "date" => Value::Date(value.parse().ok()?),
        "time" => Value::Time(value.parse().ok()?),
        "gYear" => Value::GYear(value.parse().ok()?),
        "gYearMonth" => Value::GYearMonth(value.parse().ok()?),
        "gMonth" => Value::GMonth(value.parse().ok()?),
        "gMonthDay" => Value::GMonthDay(value.parse().ok()?),
        "gDay" => Value::GDay(value.parse().ok()?),
        "duration" => Value::Duration(value.parse().ok()?),
        "yearMonthDuration" => Value::YearMonthDuration(value.parse().ok()?),
        "dayTimeDuration" => Value::DayTimeDuration(value.parse().ok()?),
        _ => return None,
    })
}

/// Two values of one numeric type after promotion (or of compatible date/duration types).
pub enum Operands {
    Integer(Integer, Integer),
    Decimal(Decimal, Decimal),
    Float(Float, Float),
    Double(Double, Double),
    Duration(Duration, Duration),
    YearMonthDuration(YearMonthDuration, YearMonthDuration),
    DayTimeDuration(DayTimeDuration, DayTimeDuration),
    DateTime(DateTime, DateTime),
    Date(Date, Date),
    Time(Time, Time),
    DateTimeDuration(DateTime, Duration),
    DateTimeYearMonthDuration(DateTime, YearMonthDuration),
    DateTimeDayTimeDuration(DateTime, DayTimeDuration),
    DateDuration(Date, Duration),
    DateYearMonthDuration(Date, YearMonthDuration),
    DateDayTimeDuration(Date, DayTimeDuration),
    TimeDuration(Time, Duration),
    TimeDayTimeDuration(Time, DayTimeDuration),
}

impl Operands {
    /// XPath numeric type promotion (integer < decimal < float < double), and the pairs
    /// of the date/duration arithmetic pyoxigraph implements; None: a type error.
    pub fn of(a: &Value, b: &Value) -> Option<Self> {
        use Value as V;
        if let (Some(x), Some(y)) = (Number::of(a), Number::of(b)) {
            return Some(Self::of_numbers(x, y));
        }
        Some(match (a, b) {
            (V::Duration(x), V::Duration(y)) => Self::Duration(*x, *y),
            (V::Duration(x), V::YearMonthDuration(y)) => Self::Duration(*x, (*y).into()),
            (V::Duration(x), V::DayTimeDuration(y)) => Self::Duration(*x, (*y).into()),
            (V::YearMonthDuration(x), V::Duration(y)) => Self::Duration((*x).into(), *y),
            (V::YearMonthDuration(x), V::YearMonthDuration(y)) => Self::YearMonthDuration(*x, *y),
            (V::YearMonthDuration(x), V::DayTimeDuration(y)) => {
                Self::Duration((*x).into(), (*y).into())
            }
            (V::DayTimeDuration(x), V::Duration(y)) => Self::Duration((*x).into(), *y),
            (V::DayTimeDuration(x), V::YearMonthDuration(y)) => {
                Self::Duration((*x).into(), (*y).into())
            }
            (V::DayTimeDuration(x), V::DayTimeDuration(y)) => Self::DayTimeDuration(*x, *y),
            (V::DateTime(x), V::DateTime(y)) => Self::DateTime(*x, *y),
            (V::Date(x), V::Date(y)) => Self::Date(*x, *y),
            (V::Time(x), V::Time(y)) => Self::Time(*x, *y),
            (V::DateTime(x), V::Duration(y)) => Self::DateTimeDuration(*x, *y),
            (V::DateTime(x), V::YearMonthDuration(y)) => Self::DateTimeYearMonthDuration(*x, *y),
            (V::DateTime(x), V::DayTimeDuration(y)) => Self::DateTimeDayTimeDuration(*x, *y),
            (V::Date(x), V::Duration(y)) => Self::DateDuration(*x, *y),
            (V::Date(x), V::YearMonthDuration(y)) => Self::DateYearMonthDuration(*x, *y),
            (V::Date(x), V::DayTimeDuration(y)) => Self::DateDayTimeDuration(*x, *y),
            (V::Time(x), V::Duration(y)) => Self::TimeDuration(*x, *y),
            (V::Time(x), V::DayTimeDuration(y)) => Self::TimeDayTimeDuration(*x, *y),
            _ => return None,
        })
    }

    /// The order of the pair, for the kinds `<` compares (numbers, durations); None for
    /// the others and for an unordered pair (a `NaN`).
    #[inline]
    pub fn order(self) -> Option<Ordering> {
        match self {
            Operands::Integer(x, y) => x.partial_cmp(&y),
            Operands::Decimal(x, y) => x.partial_cmp(&y),
            Operands::Float(x, y) => x.partial_cmp(&y),
            Operands::Double(x, y) => x.partial_cmp(&y),
            Operands::Duration(x, y) => x.partial_cmp(&y),
            Operands::YearMonthDuration(x, y) => x.partial_cmp(&y),
            Operands::DayTimeDuration(x, y) => x.partial_cmp(&y),
            _ => None,
        }
    }

    /// XPath numeric type promotion (integer < decimal < float < double) of two numbers,
    /// with oxsdatatypes' conversions.
    #[inline]
    pub fn of_numbers(a: Number, b: Number) -> Self {
        use Number as N;
        match (a, b) {
            (N::Integer(x), N::Integer(y)) => Self::Integer(x, y),
            (N::Integer(x), N::Decimal(y)) => Self::Decimal(x.into(), y),
            (N::Integer(x), N::Float(y)) => Self::Float(x.into(), y),
            (N::Integer(x), N::Double(y)) => Self::Double(x.into(), y),
            (N::Decimal(x), N::Integer(y)) => Self::Decimal(x, y.into()),
            (N::Decimal(x), N::Decimal(y)) => Self::Decimal(x, y),
            (N::Decimal(x), N::Float(y)) => Self::Float(x.into(), y),
            (N::Decimal(x), N::Double(y)) => Self::Double(x.into(), y),
            (N::Float(x), N::Integer(y)) => Self::Float(x, y.into()),
            (N::Float(x), N::Decimal(y)) => Self::Float(x, y.into()),
            (N::Float(x), N::Float(y)) => Self::Float(x, y),
            (N::Float(x), N::Double(y)) => Self::Double(x.into(), y),
            (N::Double(x), N::Integer(y)) => Self::Double(x, y.into()),
            (N::Double(x), N::Decimal(y)) => Self::Double(x, y.into()),
            (N::Double(x), N::Float(y)) => Self::Double(x, y.into()),
            (N::Double(x), N::Double(y)) => Self::Double(x, y),
        }
    }
}

/// A numeric value as pyoxigraph holds it (oxsdatatypes): a small copy, no allocation.
#[derive(Debug, Clone, Copy)]
pub enum Number {
    Integer(Integer),
    Decimal(Decimal),
    Float(Float),
    Double(Double),
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        match n {
            Number::Integer(x) => Value::Integer(x),
            Number::Decimal(x) => Value::Decimal(x),
            Number::Float(x) => Value::Float(x),
            Number::Double(x) => Value::Double(x),
        }
    }
}

impl Number {
    /// The number a value is, if it is one.
    #[inline]
    pub fn of(value: &Value) -> Option<Number> {
        Some(match value {
            Value::Integer(x) => Number::Integer(*x),
            Value::Decimal(x) => Number::Decimal(*x),
            Value::Float(x) => Number::Float(*x),
            Value::Double(x) => Number::Double(*x),
            _ => return None,
        })
    }

    /// The order of `<`, `>`, `<=`, `>=` on numbers, as `compare` gives it: identical values
    /// are equal (`NaN <= NaN` of one type), others are compared after promotion (None:
    /// unordered, a `NaN`).
    pub fn order(self, other: Number) -> Option<Ordering> {
        match (self, other) {
            (Number::Float(x), Number::Float(y)) if x.is_identical_with(y) => Some(Ordering::Equal),
            (Number::Double(x), Number::Double(y)) if x.is_identical_with(y) => {
                Some(Ordering::Equal)
            }
            _ => self.promoted_order(other),
        }
    }

    /// `=` on numbers, as `equals` gives it: equal after promotion (`NaN` equals nothing).
    pub fn equals(self, other: Number) -> bool {
        self.promoted_order(other) == Some(Ordering::Equal)
    }

    /// The order of the promoted pair.
    #[inline]
    fn promoted_order(self, other: Number) -> Option<Ordering> {
        Operands::of_numbers(self, other).order()
    }
}

/// Identity of two values (pyoxigraph's `ExpressionTerm` equality, which `<=`/`>=` and
/// `sameTerm` use): same kind and same value, doubles bit for bit (`NaN` is itself).
pub fn identical(a: &Value, b: &Value, dict: &Dictionary) -> bool {
    use Value as V;
    match (a, b) {
        (V::Node(x), V::Node(y)) => x == y,
        (V::Node(_) | V::Iri(_), V::Node(_) | V::Iri(_)) => {
            matches!((a.iri_text(dict), b.iri_text(dict)), (Some(x), Some(y)) if x == y)
        }
        (V::Str(x), V::Str(y)) => x == y,
        (V::Lang(x, l), V::Lang(y, m)) => x == y && l == m,
        (V::Boolean(x), V::Boolean(y)) => x == y,
        (V::Integer(x), V::Integer(y)) => x == y,
        (V::Decimal(x), V::Decimal(y)) => x == y,
        (V::Float(x), V::Float(y)) => x.is_identical_with(*y),
        (V::Double(x), V::Double(y)) => x.is_identical_with(*y),
        (V::DateTime(x), V::DateTime(y)) => x == y,
        (V::Date(x), V::Date(y)) => x == y,
        (V::Time(x), V::Time(y)) => x == y,
        (V::GYear(x), V::GYear(y)) => x == y,
        (V::GYearMonth(x), V::GYearMonth(y)) => x == y,
        (V::GMonth(x), V::GMonth(y)) => x == y,
        (V::GMonthDay(x), V::GMonthDay(y)) => x == y,
        (V::GDay(x), V::GDay(y)) => x == y,
        (V::Duration(x), V::Duration(y)) => x == y,
        (V::YearMonthDuration(x), V::YearMonthDuration(y)) => x == y,
        (V::DayTimeDuration(x), V::DayTimeDuration(y)) => x == y,
        (
            V::Other {
                value: x,
                datatype: d,
            },
            V::Other {
                value: y,
                datatype: e,
            },
        ) => x == y && d == e,
        _ => false,
    }
}

/// `=` (RDFterm-equal with value comparison of known literals, pyoxigraph's rules: two
/// literals of different known types are unequal, a literal of an unknown datatype against
/// a literal is an error unless identical). None: an error.
pub fn equals(a: &Value, b: &Value, dict: &Dictionary) -> Option<bool> {
    use Value as V;
    let other_b = matches!(b, V::Other { .. });
    match a {
        V::Node(_) | V::Iri(_) | V::Lang(..) => Some(identical(a, b, dict)),
        V::Other { .. } => {
            if identical(a, b, dict) {
                Some(true)
            } else if matches!(b, V::Node(_) | V::Iri(_) | V::Lang(..)) {
                Some(false)
            } else {
                None
            }
        }
        _ if other_b => None,
        V::Integer(_) | V::Decimal(_) | V::Float(_) | V::Double(_) => {
            Some(match (Number::of(a), Number::of(b)) {
                (Some(x), Some(y)) => x.equals(y),
                _ => false,
            })
        }
        V::Duration(x) => Some(match b {
            V::Duration(y) => x == y,
            V::YearMonthDuration(y) => x == y,
            V::DayTimeDuration(y) => x == y,
            _ => false,
        }),
        V::YearMonthDuration(x) => Some(match b {
            V::Duration(y) => x == y,
            V::YearMonthDuration(y) => x == y,
            V::DayTimeDuration(y) => x == y,
            _ => false,
        }),
        V::DayTimeDuration(x) => Some(match b {
            V::Duration(y) => x == y,
            V::YearMonthDuration(y) => x == y,
            V::DayTimeDuration(y) => x == y,
            _ => false,
        }),
        _ => Some(identical(a, b, dict)),
    }
}

/// The order of `<`, `>`, `<=`, `>=`; None: not comparable (an error). Identical values are
/// equal whatever their kind (`<a> <= <a>`, `NaN <= NaN`), as in pyoxigraph.
pub fn compare(a: &Value, b: &Value, dict: &Dictionary) -> Option<Ordering> {
    use Value as V;
    if identical(a, b, dict) {
        return Some(Ordering::Equal);
    }
    match (a, b) {
        (V::Str(x), V::Str(y)) => x.partial_cmp(y),
        (V::Lang(x, l), V::Lang(y, m)) if l == m => x.partial_cmp(y),
        (V::DateTime(x), V::DateTime(y)) => x.partial_cmp(y),
        (V::Date(x), V::Date(y)) => x.partial_cmp(y),
        (V::Time(x), V::Time(y)) => x.partial_cmp(y),
        (V::GYear(x), V::GYear(y)) => x.partial_cmp(y),
        (V::GYearMonth(x), V::GYearMonth(y)) => x.partial_cmp(y),
        (V::GMonth(x), V::GMonth(y)) => x.partial_cmp(y),
        (V::GMonthDay(x), V::GMonthDay(y)) => x.partial_cmp(y),
        (V::GDay(x), V::GDay(y)) => x.partial_cmp(y),
        _ => Operands::of(a, b)?.order(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(v: &str, dt: &str) -> Value {
        Value::of_literal(&Literal::new_typed_literal(
            v,
            oxrdf::NamedNode::new_unchecked(format!("{XSD}{dt}")),
        ))
    }

    #[test]
    fn literals_are_read_as_their_values() {
        assert!(matches!(typed("01", "integer"), Value::Integer(i) if i64::from(i) == 1));
        assert!(matches!(typed("7", "byte"), Value::Integer(_)));
        assert!(matches!(typed("abc", "integer"), Value::Other { .. }));
        assert!(matches!(typed("NaN", "double"), Value::Double(_)));
        let d = Dictionary::new();
        assert_eq!(&*typed("1.50", "decimal").lexical(&d).unwrap(), "1.5");
        assert_eq!(
            typed("5", "int").datatype(),
            Some("http://www.w3.org/2001/XMLSchema#integer")
        );
    }

    #[test]
    fn numbers_are_promoted_and_compared() {
        let d = Dictionary::new();
        let one = typed("1", "integer");
        assert_eq!(equals(&one, &typed("1.0", "decimal"), &d), Some(true));
        assert_eq!(equals(&one, &typed("1e0", "double"), &d), Some(true));
        assert_eq!(
            compare(&one, &typed("1.5", "float"), &d),
            Some(Ordering::Less)
        );
        let nan = typed("NaN", "double");
        assert_eq!(equals(&nan, &nan, &d), Some(false));
        assert_eq!(compare(&nan, &nan, &d), Some(Ordering::Equal));
        assert_eq!(compare(&nan, &one, &d), None);
        assert_eq!(equals(&one, &Value::Str("1".into()), &d), Some(false));
        assert_eq!(equals(&one, &typed("x", "integer"), &d), None);
        assert_eq!(
            compare(&Value::Boolean(false), &Value::Boolean(true), &d),
            None
        );
    }

    #[test]
    fn effective_boolean_values() {
        assert_eq!(Value::Str("".into()).ebv(), Some(false));
        assert_eq!(typed("0.0", "decimal").ebv(), Some(false));
        assert_eq!(typed("NaN", "double").ebv(), Some(false));
        assert_eq!(typed("2", "integer").ebv(), Some(true));
        assert_eq!(Value::Lang("a".into(), "en".into()).ebv(), None);
        assert_eq!(typed("abc", "integer").ebv(), None);
    }
}
