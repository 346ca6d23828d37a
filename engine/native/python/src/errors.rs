//! `LateEvent`: an event that breaks a promise about time (`spaseq_engine::Late`), a
//! ValueError with the core's message and its parts as attributes; `UnreadStream` and
//! `OutputStream`, the other events refused as input (`spaseq_engine::Refused`).
//!
//! `LocatedError`: a stream's error as Python sees it, a ValueError whose `path`, `line` and
//! `column` (None when unknown) and `message` are the core's `StreamError`, read by Python
//! from those attributes (never parsed from the text); its text is the core's
//! `PATH:LINE:COLUMN: message`.

use pyo3::exceptions::PyBaseException;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_engine::{Late, Promise, Refused};
use spaseq_io::stream::StreamError;

pyo3::create_exception!(
    spaseq.engine._native,
    LocatedError,
    PyValueError,
    "A located error of input (a stream's file, a batch): its text `PATH:LINE:COLUMN: \
     message`; `path`, `line` and `column` (1-based) None when unknown, `message` without them."
);

pyo3::create_exception!(
    spaseq.engine._native,
    LateEvent,
    PyValueError,
    "An event that comes after a promise it breaks (a query processed a later time, a \
     heartbeat, a flush): `stream`, `time` and `at` (the promise's time, ns), `promise` \
     (`processed`, `heartbeat`, `flushed`)."
);

pyo3::create_exception!(
    spaseq.engine._native,
    UnreadStream,
    PyValueError,
    "An event on a stream no registered query reads (the core's message names the streams read)."
);

pyo3::create_exception!(
    spaseq.engine._native,
    LastingEvent,
    PyValueError,
    "An event that lasts pushed to a stream a query planned for point events reads \
     (`EngineOptions.intervals` off, docs/decisions.md 71)."
);

pyo3::create_exception!(
    spaseq.engine._native,
    OutputStream,
    PyValueError,
    "An event pushed on a registered query's output stream, whose events come from that query."
);

/// An event refused as input, as its exception.
pub fn refused(refused: &Refused) -> PyErr {
    match refused {
        Refused::Late(late) => late_event(late),
        Refused::Unread { .. } => PyErr::new::<UnreadStream, _>(refused.to_string()),
        Refused::Output { .. } => PyErr::new::<OutputStream, _>(refused.to_string()),
    }
}

/// The exception for a late event, its attributes set.
pub fn late_exception<'py>(py: Python<'py>, late: &Late) -> PyResult<Bound<'py, PyBaseException>> {
    let exc = PyErr::new::<LateEvent, _>(late.to_string()).into_value(py);
    let exc = exc.into_bound(py);
    exc.setattr("stream", late.stream.as_str())?;
    exc.setattr("time", late.time)?;
    exc.setattr("at", late.at)?;
    let promise = match late.promise {
        Promise::Processed => "processed",
        Promise::Heartbeat => "heartbeat",
        Promise::Flushed => "flushed",
        Promise::Composed => "composed",
        Promise::Watermark => "watermark",
    };
    exc.setattr("promise", promise)?;
    Ok(exc)
}

/// `late` raised as a `LateEvent`.
pub fn late_event(late: &Late) -> PyErr {
    Python::attach(|py| match late_exception(py, late) {
        Ok(exc) => PyErr::from_value(exc.into_any()),
        Err(err) => err,
    })
}

/// The exception for `error`, its attributes set.
pub fn located_exception<'py>(
    py: Python<'py>,
    error: &StreamError,
) -> PyResult<Bound<'py, PyBaseException>> {
    let exc = PyErr::new::<LocatedError, _>(error.to_string()).into_value(py);
    let exc = exc.into_bound(py);
    let line = error.error.line;
    exc.setattr("path", error.path.as_deref())?;
    exc.setattr("line", line)?;
    exc.setattr("column", line.and(error.error.column))?;
    exc.setattr("message", error.error.message.as_str())?;
    Ok(exc)
}

/// `error` raised as a `LocatedError`.
pub fn located(error: &StreamError) -> PyErr {
    Python::attach(|py| match located_exception(py, error) {
        Ok(exc) => PyErr::from_value(exc.into_any()),
        Err(err) => err,
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("LocatedError", m.py().get_type::<LocatedError>())?;
    m.add("LateEvent", m.py().get_type::<LateEvent>())?;
    m.add("UnreadStream", m.py().get_type::<UnreadStream>())?;
    m.add("LastingEvent", m.py().get_type::<LastingEvent>())?;
    m.add("OutputStream", m.py().get_type::<OutputStream>())
}
