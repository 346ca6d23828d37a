//! `LocatedError`: a stream's error as Python sees it, a ValueError whose `path`, `line` and
//! `column` (None when unknown) and `message` are the core's `StreamError`, read by Python
//! from those attributes (never parsed from the text); its text is the core's
//! `PATH:LINE:COLUMN: message`.

use pyo3::exceptions::PyBaseException;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_io::stream::StreamError;

pyo3::create_exception!(
    spaseq.engine._native,
    LocatedError,
    PyValueError,
    "A located error of input (a stream's file, a batch): its text `PATH:LINE:COLUMN: \
     message`; `path`, `line` and `column` (1-based) None when unknown, `message` without them."
);

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
    m.add("LocatedError", m.py().get_type::<LocatedError>())
}
