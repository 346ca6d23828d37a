//! Timestamps as the Python engine reads and spells them (`values.timestamps`): the core's
//! reader (spaseq-io `time.rs`) and its spelling of a time as an `xsd:dateTime` (spaseq-output
//! `spell.rs`), as pure functions on texts and integer nanoseconds. Every refusal is a
//! ValueError whose text is the core's message.

use oxrdf::vocab::xsd;
use oxrdf::{BaseDirection, Literal, NamedNode, Term};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_io::time::{datetime_nanos, seconds_nanos, timestamp_nanos, TimeError};
use spaseq_output::spell::datetime_seconds;

fn value_error(error: &TimeError) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// The time a timestamp literal denotes, in nanoseconds (since the epoch for a dateTime, since
/// the stream's origin for a number): the literal's lexical form `value`, its `datatype` IRI,
/// and its `language` and `direction` (`"ltr"`, `"rtl"`) when it has them (only the message
/// refusing it shows them). ValueError says why it is no timestamp.
#[pyfunction]
#[pyo3(signature = (value, datatype, language = None, direction = None))]
fn timestamp_ns(
    value: &str,
    datatype: &str,
    language: Option<&str>,
    direction: Option<&str>,
) -> PyResult<i128> {
    let literal = match (language, direction) {
        (Some(language), None) => Literal::new_language_tagged_literal_unchecked(value, language),
        (Some(language), Some(direction)) => {
            let direction = match direction {
                "ltr" => BaseDirection::Ltr,
                "rtl" => BaseDirection::Rtl,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "{direction:?} is not a base direction (ltr or rtl)"
                    )))
                }
            };
            Literal::new_directional_language_tagged_literal_unchecked(value, language, direction)
        }
        (None, Some(_)) => {
            return Err(PyValueError::new_err(
                "a literal with a direction has a language",
            ))
        }
        (None, None) if datatype == xsd::STRING.as_str() => Literal::new_simple_literal(value),
        // the datatype is only compared and shown: taken as given (a pyoxigraph term's)
        (None, None) => Literal::new_typed_literal(value, NamedNode::new_unchecked(datatype)),
    };
    timestamp_nanos(&Term::Literal(literal)).map_err(|err| value_error(&err))
}

/// A decimal or scientific number of seconds written as text (around whitespace), exactly, in
/// nanoseconds. ValueError: it is no number (INF and NaN are none), 10^18 seconds or more, or
/// finer than a nanosecond; the message quotes `text` as Python's `repr` does, or names
/// `shown` as its `repr` writes it (a caller's number checked through its decimal text).
#[pyfunction]
#[pyo3(signature = (text, shown = None))]
fn seconds_ns(text: &str, shown: Option<&Bound<'_, PyAny>>) -> PyResult<i128> {
    seconds_nanos(text).map_err(|err| match shown {
        None => value_error(&err),
        Some(shown) => match shown.repr() {
            Ok(repr) => PyValueError::new_err(err.message_showing(&repr.to_string_lossy())),
            Err(repr_failed) => repr_failed,
        },
    })
}

/// Nanoseconds since the Unix epoch of an xsd:dateTime lexical form, around whitespace (UTC
/// when it has no time zone); `require_timezone`: an xsd:dateTimeStamp, which needs one.
/// ValueError says why it is not one, or not a time.
#[pyfunction]
#[pyo3(signature = (text, require_timezone = false))]
fn datetime_ns(text: &str, require_timezone: bool) -> PyResult<i128> {
    datetime_nanos(text, require_timezone).map_err(|err| value_error(&err))
}

/// A time since the Unix epoch (`ns` nanoseconds) as an `xsd:dateTime` in UTC:
/// `YYYY-MM-DDThh:mm:ss`, the fraction only when nonzero (exact, trailing zeros trimmed), `Z`;
/// the proleptic Gregorian calendar, years of at least four digits, negative ones with `-`.
#[pyfunction]
fn datetime_text(ns: i128) -> String {
    let mut out = String::with_capacity(30);
    datetime_seconds(ns, &mut out);
    out
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(timestamp_ns, m)?)?;
    m.add_function(wrap_pyfunction!(seconds_ns, m)?)?;
    m.add_function(wrap_pyfunction!(datetime_ns, m)?)?;
    m.add_function(wrap_pyfunction!(datetime_text, m)?)
}
