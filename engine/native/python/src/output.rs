//! The binding of the native writers (`spaseq_core::output`): `NativeWriter` takes a
//! query's released matches straight from the native runtime and writes their rows to a
//! Python text file (`out.write(str)`, in chunks), with no Python object per match.

use crate::runtime::NativeEngine;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_core::output::{Format, Scope, TimeFormat, Writer};

/// Text kept before it is handed to `out.write` (a batch of matches can be large).
const CHUNK: usize = 1 << 20;

/// One query's results written natively in one format (`jsonl`, `json`, `csv`, `tsv`).
#[pyclass(unsendable, module = "spaseq.engine._native")]
struct NativeWriter {
    writer: Writer,
    out: Py<PyAny>,
    /// `out` takes UTF-8 bytes rather than text.
    binary: bool,
    buf: String,
}

impl NativeWriter {
    /// Hand the buffered text to `out` (and flush it when `flush`).
    fn emit(&mut self, py: Python<'_>, flush: bool) -> PyResult<()> {
        if !self.buf.is_empty() {
            let chunk = if self.binary {
                pyo3::types::PyBytes::new(py, self.buf.as_bytes()).into_any()
            } else {
                pyo3::types::PyString::new(py, &self.buf).into_any()
            };
            self.buf.clear(); // its capacity is kept for the next chunk
            self.out.call_method1(py, "write", (chunk,))?;
        }
        if flush {
            self.out.call_method0(py, "flush")?;
        }
        Ok(())
    }
}

#[pymethods]
impl NativeWriter {
    /// A writer to the text file `out` (a binary one taking UTF-8 when `binary`): rows of
    /// `select` (None: every bound variable, in name order), `distinct`, `columns` the
    /// header's variables, `with_time` adding `_time` and `_start` (JSON, CSV, TSV),
    /// times as `time_format` (`input`, `dateTime`, `epoch`) says. ValueError for another
    /// format or time format.
    #[new]
    #[pyo3(signature = (format, out, select, distinct, columns, with_time, binary = false, time_format = "input"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        format: &str,
        out: Py<PyAny>,
        select: Option<Vec<String>>,
        distinct: bool,
        columns: Vec<String>,
        with_time: bool,
        binary: bool,
        time_format: &str,
    ) -> PyResult<Self> {
        let format = Format::parse(format)
            .ok_or_else(|| PyValueError::new_err(format!("no native writer for {format:?}")))?;
        let times = TimeFormat::parse(time_format)
            .ok_or_else(|| PyValueError::new_err(format!("no time format {time_format:?}")))?;
        Ok(NativeWriter {
            writer: Writer::new(format, select, distinct, columns, with_time, times),
            out,
            binary,
            buf: String::new(),
        })
    }

    /// Forget what is cached by term id: the engine's dictionary was compacted.
    fn forget_terms(&mut self) {
        self.writer.forget_terms();
    }

    /// Write what precedes the rows.
    fn start(&mut self, py: Python<'_>) -> PyResult<()> {
        self.writer.start(&mut self.buf);
        self.emit(py, false)
    }

    /// Take the matches query `query` of `engine` released since the last call, write
    /// their rows in release order and flush `out` if any was written; the number of
    /// matches taken (before DISTINCT).
    fn write_matches(
        &mut self,
        py: Python<'_>,
        engine: PyRef<'_, NativeEngine>,
        query: usize,
    ) -> PyResult<usize> {
        let before = self.writer.rows();
        let mut pending: Option<PyErr> = None;
        let taken = engine.with_released(query, |records, names, dict, streams| {
            let scope = Scope {
                dict,
                vars: &names.vars,
                gpms: &names.gpms,
                streams,
            };
            for record in &records {
                self.writer.write(record, &scope, &mut self.buf);
                if self.buf.len() >= CHUNK && pending.is_none() {
                    if let Err(err) = self.emit(py, false) {
                        pending = Some(err);
                    }
                }
            }
            records.len()
        })?;
        if let Some(err) = pending {
            return Err(err);
        }
        if self.writer.rows() != before {
            self.emit(py, true)?;
        }
        Ok(taken)
    }

    /// Write what follows the rows and flush.
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        self.writer.finish(&mut self.buf);
        self.emit(py, true)
    }

    /// Rows written so far (after DISTINCT).
    #[getter]
    fn rows(&self) -> u64 {
        self.writer.rows()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeWriter>()?;
    Ok(())
}
