//! The binding of the native writers (`spaseq_output`), the only writers of results:
//! `NativeWriter` takes a query's released matches straight from the native runtime and
//! writes their rows to a Python file (`out.write`, in chunks), with no Python object per
//! match; or, asked to and given a binary file with a descriptor, spells and writes them on a
//! thread of its own (`Background`) to a duplicate of that descriptor while the runtime goes
//! on. Rows found in Python come as values (`write_row`); `jsonl_line`, `json_time`,
//! `json_seconds` and `table_time` spell one row or one time for the server, the rdflib
//! plugin and `spaseq run`'s summary.

use crate::runtime::{parse_term, NativeEngine};
use oxrdf::Term;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use spaseq_output::columns::{Bits, Coded, Columns, EventColumns, RecordBatch};
use spaseq_output::derive::Derive;
use spaseq_output::trig::{Taken, TemplateTerm, Trig};
use spaseq_output::{
    Background, Batch, Collector, EventList, Format, Formatter, PlainRow, PlainTaken, RowCollector,
    Scope, TimeFormat,
};
use std::convert::Infallible;

/// Text kept before it is handed to `out.write` (a batch of matches can be large).
const CHUNK: usize = 1 << 20;

/// Matches collected into one batch before it is spelled (a batch of events can complete
/// very many; the text of one batch stays around a megabyte; `Collector::fill` also cuts
/// a batch at `TAKEN_PER_BATCH` events taken).
const ROWS_PER_BATCH: usize = 1024;

/// Where the rows are spelled and written.
#[allow(clippy::large_enum_variant)] // one per writer
enum Sink {
    /// Here, handed to the Python file `out` (UTF-8 bytes to a binary one when `binary`).
    Here {
        formatter: Formatter,
        out: Py<PyAny>,
        binary: bool,
        buf: String,
        batch: Batch,
    },
    /// On a thread of its own, to a duplicate of a binary file's descriptor.
    Thread(Background),
    /// Arrow columns, each full record batch handed to `out.write_batch` (a Python sink
    /// writing it with pyarrow, `spaseq.engine.output.arrow`).
    Columns {
        columns: Columns,
        out: Py<PyAny>,
        batch: Batch,
    },
}

impl Sink {
    /// A batch filled by `fill`, then written: here (spelled into the buffer, handed to `out`
    /// once `CHUNK` bytes wait, or at once and flushed with `flush`) or on the writing
    /// thread. Nothing is written when `fill` fails. (what `fill` gave, the writing's error)
    fn send<T, E>(
        &mut self,
        py: Python<'_>,
        flush: bool,
        fill: impl FnOnce(&mut Batch) -> Result<T, E>,
    ) -> (Result<T, E>, PyResult<()>) {
        match self {
            Sink::Here {
                formatter,
                out,
                binary,
                buf,
                batch,
            } => {
                let filled = fill(batch);
                if filled.is_err() {
                    return (filled, Ok(()));
                }
                formatter.write(batch, buf);
                let written = if flush && !buf.is_empty() || !flush && buf.len() >= CHUNK {
                    NativeWriter::emit(py, out, *binary, buf, flush)
                } else {
                    Ok(())
                };
                (filled, written)
            }
            Sink::Thread(background) => {
                let mut batch = background.batch();
                let filled = fill(&mut batch);
                if filled.is_err() || batch.is_empty() {
                    return (filled, Ok(()));
                }
                (filled, background.write(batch).map_err(os_error))
            }
            // record batches are cut by size, not by flushes: a flush per row would make
            // one-row batches of a columnar file
            Sink::Columns {
                columns,
                out,
                batch,
            } => {
                let filled = fill(batch);
                if filled.is_err() {
                    return (filled, Ok(()));
                }
                columns.write(batch);
                let written = if columns.full() {
                    hand_over(py, columns, out)
                } else {
                    Ok(())
                };
                (filled, written)
            }
        }
    }
}

/// Hand the record batch built so far (if it has rows) to the Python sink `out`.
fn hand_over(py: Python<'_>, columns: &mut Columns, out: &Py<PyAny>) -> PyResult<()> {
    match columns.take() {
        Some(built) => {
            let built = record_batch(py, built)?;
            out.call_method1(py, "write_batch", (built,)).map(drop)
        }
        None => Ok(()),
    }
}

fn bits<'py>(py: Python<'py>, b: &Bits) -> PyResult<Bound<'py, PyTuple>> {
    (PyBytes::new(py, &b.bytes), b.unset).into_pyobject(py)
}

fn coded<'py, K>(py: Python<'py>, c: &Coded<K>) -> PyResult<Bound<'py, PyTuple>> {
    let (validity, nulls) = (PyBytes::new(py, &c.validity.bytes), c.nulls());
    let indices = PyBytes::new(py, &c.indices);
    let d = &c.dictionary;
    let (offsets, data) = (PyBytes::new(py, &d.offsets), PyBytes::new(py, &d.data));
    (validity, nulls, indices, d.len, offsets, data).into_pyobject(py)
}

/// A record batch's buffers as Python bytes, as `spaseq.engine.output.arrow` reads them:
/// `(rows, number, start, time, dated, events, values)`, a bitmap as `(bytes, unset bits)`,
/// a dictionary-encoded string column as `(validity, nulls, indices, dictionary length,
/// dictionary offsets, dictionary data)`, `events` None or `(len, offsets, atom, stream,
/// time, dated, graph)` and `values` a list of dictionary-encoded columns.
fn record_batch(py: Python<'_>, b: RecordBatch) -> PyResult<Bound<'_, PyTuple>> {
    let events = match &b.events {
        None => None,
        Some(EventColumns {
            offsets,
            atom,
            stream,
            time,
            dated,
            graph,
            len,
        }) => Some(
            (
                *len,
                PyBytes::new(py, offsets),
                coded(py, atom)?,
                coded(py, stream)?,
                PyBytes::new(py, time),
                bits(py, dated)?,
                coded(py, graph)?,
            )
                .into_pyobject(py)?,
        ),
    };
    let values = b
        .values
        .iter()
        .map(|v| coded(py, v))
        .collect::<PyResult<Vec<_>>>()?;
    (
        b.rows,
        PyBytes::new(py, &b.number),
        PyBytes::new(py, &b.start),
        PyBytes::new(py, &b.time),
        bits(py, &b.dated)?,
        events,
        values,
    )
        .into_pyobject(py)
}

/// One query's results written natively in one format (`jsonl`, `json`, `csv`, `tsv`,
/// `table`, `trig`), or built as Arrow record batches (`arrow`: `out` is then a sink taking
/// them, `write_batch(buffers)` and `finish()`; `thread` does not apply).
#[pyclass(unsendable, module = "spaseq.engine._native")]
struct NativeWriter {
    collector: Collector,
    /// The rows given as values (`write_row`).
    plain: RowCollector,
    sink: Sink,
}

/// A taken event as `write_row` takes it: (atom, stream IRI, time in ns, dated, graph name
/// in N-Triples or None).
type TakenValues = (String, String, i128, bool, Option<String>);

/// A row from its Python values (`write_row`).
fn plain_row(
    time: i128,
    start: i128,
    bindings: Vec<(String, String)>,
    taken: Vec<TakenValues>,
) -> PlainRow {
    let taken = taken
        .into_iter()
        .map(|(atom, stream, time, dated, graph)| PlainTaken {
            atom,
            stream,
            time,
            dated,
            graph,
        })
        .collect();
    PlainRow {
        time,
        start,
        bindings,
        taken,
    }
}

/// The writing thread's error as Python's `OSError(errno, strerror)` (which is the subclass
/// for the errno: `BrokenPipeError` for EPIPE), as a write through a Python file raises it.
fn os_error(err: std::io::Error) -> PyErr {
    match err.raw_os_error() {
        Some(code) => {
            let text = err.to_string();
            let suffix = format!(" (os error {code})");
            let strerror = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
            PyOSError::new_err((code, strerror))
        }
        None => PyOSError::new_err(err.to_string()),
    }
}

impl NativeWriter {
    /// Hand the buffered text to `out` (and flush it when `flush`).
    fn emit(
        py: Python<'_>,
        out: &Py<PyAny>,
        binary: bool,
        buf: &mut String,
        flush: bool,
    ) -> PyResult<()> {
        if !buf.is_empty() {
            let chunk = if binary {
                pyo3::types::PyBytes::new(py, buf.as_bytes()).into_any()
            } else {
                pyo3::types::PyString::new(py, buf).into_any()
            };
            buf.clear(); // its capacity is kept for the next chunk
            out.call_method1(py, "write", (chunk,))?;
        }
        if flush {
            out.call_method0(py, "flush")?;
        }
        Ok(())
    }

    /// What precedes the rows (`finish` false) or follows them (`stopped`: those of a run
    /// an error stopped, `Formatter::stopped`), then flushed at the end (the writing thread
    /// is waited for there).
    fn frame(&mut self, py: Python<'_>, finish: bool, stopped: bool) -> PyResult<()> {
        match &mut self.sink {
            Sink::Here {
                formatter,
                out,
                binary,
                buf,
                ..
            } => {
                if finish && stopped {
                    formatter.stopped(buf);
                } else if finish {
                    formatter.finish(buf);
                } else {
                    formatter.start(buf);
                }
                Self::emit(py, out, *binary, buf, finish)
            }
            Sink::Thread(background) if finish && stopped => background.stopped().map_err(os_error),
            Sink::Thread(background) if finish => background.finish().map_err(os_error),
            Sink::Thread(background) => background.start().map_err(os_error),
            Sink::Columns { columns, out, .. } if finish => {
                hand_over(py, columns, out)?;
                out.call_method0(py, "finish").map(drop)
            }
            Sink::Columns { .. } => Ok(()),
        }
    }

    fn here(formatter: Formatter, out: Py<PyAny>, binary: bool) -> Sink {
        Sink::Here {
            formatter,
            out,
            binary,
            buf: String::new(),
            batch: Batch::default(),
        }
    }

    /// `formatter` writing on a thread of its own to a duplicate of `out`'s descriptor
    /// (`formatter` back when `out` has none).
    #[cfg(unix)]
    fn thread(
        py: Python<'_>,
        out: &Py<PyAny>,
        formatter: Formatter,
    ) -> PyResult<Result<Background, Formatter>> {
        use std::os::fd::{BorrowedFd, RawFd};
        let Ok(fd) = out
            .call_method0(py, "fileno")
            .and_then(|fd| fd.extract::<RawFd>(py))
        else {
            return Ok(Err(formatter));
        };
        out.call_method0(py, "flush")?; // what was written before comes first
                                        // SAFETY: `fd` is `out`'s open descriptor, borrowed only to duplicate it
        let owned = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned()?;
        Ok(Ok(Background::spawn(
            formatter,
            std::fs::File::from(owned),
        )?))
    }

    #[cfg(not(unix))]
    fn thread(
        _py: Python<'_>,
        _out: &Py<PyAny>,
        formatter: Formatter,
    ) -> PyResult<Result<Background, Formatter>> {
        Ok(Err(formatter))
    }
}

#[pymethods]
impl NativeWriter {
    /// A writer to the text file `out` (a binary one taking UTF-8 when `binary`): rows of
    /// `select` (None: every bound variable, in name order; DISTINCT as the engine numbered
    /// the matches, `MatchRecord::number`), `columns` the
    /// header's variables, `with_time` adding `_time` and `_start` (JSON, CSV, TSV),
    /// times as `time_format` (`input`, `dateTime`, `epoch`) says; with `thread` and a
    /// binary `out` that has a descriptor, the rows are spelled and written on a thread of
    /// their own (`out` is not written through while it runs: `close` or `finish` waits for
    /// it); `prefixes` (prefix, namespace) shorten the table's IRIs, and are TriG's
    /// declarations. TriG also takes the query's `output` stream IRI and, for a CONSTRUCT
    /// query, its `template`: triples of terms `("var", name)` (a variable of `select`),
    /// `("fresh", label)` (a blank node, fresh per result) or `("term", N-Triples)`.
    /// `solutions`: the table holds SPARQL solutions (no times, counted in rows). ValueError
    /// for another format or time format, or a TriG writer without its output.
    #[new]
    #[pyo3(signature = (format, out, select, columns, with_time, binary = false, time_format = "input", thread = false, prefixes = None, output = None, template = None, events = "full", solutions = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        format: &str,
        out: Py<PyAny>,
        select: Option<Vec<String>>,
        columns: Vec<String>,
        with_time: bool,
        binary: bool,
        time_format: &str,
        thread: bool,
        prefixes: Option<Vec<(String, String)>>,
        output: Option<String>,
        template: Option<Vec<[(String, String); 3]>>,
        events: &str,
        solutions: bool,
    ) -> PyResult<Self> {
        let format = Format::parse(format)
            .ok_or_else(|| PyValueError::new_err(format!("no native writer for {format:?}")))?;
        let times = TimeFormat::parse(time_format)
            .ok_or_else(|| PyValueError::new_err(format!("no time format {time_format:?}")))?;
        let event_list = EventList::parse(events)
            .ok_or_else(|| PyValueError::new_err(format!("no event list {events:?}")))?;
        let prefixes = prefixes.unwrap_or_default();
        let plain = RowCollector::new(format, select.clone(), columns.clone(), times);
        let collector =
            Collector::new(format, select.clone(), columns.clone(), times).with_events(event_list);
        if format == Format::Arrow {
            let sink = Sink::Columns {
                columns: Columns::new(columns.len(), event_list),
                out,
                batch: Batch::default(),
            };
            return Ok(NativeWriter {
                collector,
                plain,
                sink,
            });
        }
        let mut formatter = Formatter::new(format, columns, with_time).with_events(event_list);
        if format == Format::Trig {
            let output = output
                .ok_or_else(|| PyValueError::new_err("a TriG writer needs its output stream"))?;
            let template = template
                .map(|t| trig_template(&t, select.as_deref().unwrap_or_default()))
                .transpose()?;
            let trig = Trig::new(prefixes, output, template).map_err(PyValueError::new_err)?;
            formatter = formatter.with_trig(trig);
        } else {
            formatter = formatter.with_prefixes(prefixes);
        }
        if solutions {
            formatter = formatter.as_solutions();
        }
        let sink = if thread && binary {
            match Self::thread(py, &out, formatter)? {
                Ok(background) => Sink::Thread(background),
                Err(formatter) => Self::here(formatter, out, binary),
            }
        } else {
            Self::here(formatter, out, binary)
        };
        Ok(NativeWriter {
            collector,
            plain,
            sink,
        })
    }

    /// Whether the rows are written on a thread of their own.
    #[getter]
    fn threaded(&self) -> bool {
        matches!(self.sink, Sink::Thread(_))
    }

    /// Forget what is cached by term id: the engine's dictionary was compacted.
    fn forget_terms(&mut self) {
        self.collector.forget_terms();
    }

    /// Write what precedes the rows.
    fn start(&mut self, py: Python<'_>) -> PyResult<()> {
        self.frame(py, false, false)
    }

    /// Take the matches query `query` of `engine` released since the last call, write
    /// their rows in release order and flush `out` if any was written (or hand them to the
    /// writing thread); the number of matches taken (before DISTINCT).
    fn write_matches(
        &mut self,
        py: Python<'_>,
        engine: PyRef<'_, NativeEngine>,
        query: usize,
    ) -> PyResult<usize> {
        if self.plain.rows() > 0 {
            return Err(PyValueError::new_err(
                "a writer takes the runtime's matches or rows given as values, not both",
            ));
        }
        let before = self.collector.rows();
        let collector = &mut self.collector;
        let sink = &mut self.sink;
        let mut pending: Option<PyErr> = None;
        let taken = engine.with_released(query, |records, names, dict, streams| {
            let scope = Scope {
                dict,
                vars: &names.vars,
                gpms: &names.gpms,
                streams,
            };
            let mut rest = records.as_slice();
            while !rest.is_empty() {
                if pending.is_some() {
                    break; // matches found are dropped only once the output failed
                }
                let chunk = &rest[..rest.len().min(ROWS_PER_BATCH)];
                let (used, written) = sink.send(py, false, |batch| {
                    Ok::<usize, Infallible>(collector.fill(chunk, &scope, batch))
                });
                pending = written.err();
                let Ok(used) = used;
                rest = &rest[used..];
            }
            records.len()
        })?;
        if let Some(err) = pending {
            return Err(err);
        }
        if let Sink::Here {
            out, binary, buf, ..
        } = &mut self.sink
        {
            if self.collector.rows() != before {
                Self::emit(py, out, *binary, buf, true)?;
            }
        }
        Ok(taken)
    }

    /// Write one row given as values (a result found in Python, already projected and past
    /// DISTINCT) and flush `out` if anything was written (or hand it to the writing thread):
    /// its match's `time` and `start` (nanoseconds), its `bindings` (variable, term in
    /// N-Triples) and the events it took, first to last (atom, stream IRI, time in ns,
    /// stamped with an xsd:dateTime, graph name in N-Triples or None). ValueError for a term
    /// that is not N-Triples; OSError when the writing failed.
    fn write_row(
        &mut self,
        py: Python<'_>,
        time: i128,
        start: i128,
        bindings: Vec<(String, String)>,
        taken: Vec<TakenValues>,
    ) -> PyResult<()> {
        if self.collector.rows() > 0 {
            return Err(PyValueError::new_err(
                "a writer takes the runtime's matches or rows given as values, not both",
            ));
        }
        let row = plain_row(time, start, bindings, taken);
        let plain = &mut self.plain;
        let (filled, written) = self.sink.send(py, true, |batch| plain.fill(&row, batch));
        filled.map_err(PyValueError::new_err)?;
        written
    }

    /// Write what follows the rows and flush (waiting for the writing thread to write
    /// everything); `stopped`: the run was stopped by an error, whose message follows (the
    /// table is then written only when it has rows, counted as found before the error).
    #[pyo3(signature = (stopped = false))]
    fn finish(&mut self, py: Python<'_>, stopped: bool) -> PyResult<()> {
        self.frame(py, true, stopped)
    }

    /// Wait until the rows handed to the writing thread are written, and stop it (nothing
    /// follows them: for a run that ended without `finish`); its writing error, if any. An
    /// Arrow writer hands over the rows it holds and finishes its file (the sink's
    /// `finish`), which is readable only then.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        match &mut self.sink {
            Sink::Thread(background) => background.close().map_err(os_error),
            // a columnar file is readable only once finished: the rows so far are
            Sink::Columns { .. } => self.frame(py, true, false),
            Sink::Here { .. } => Ok(()),
        }
    }

    /// Rows written so far (after DISTINCT).
    #[getter]
    fn rows(&self) -> u64 {
        self.collector.rows() + self.plain.rows()
    }
}

/// The jsonl object of one row given as values (as `NativeWriter.write_row` takes them, its
/// bindings written in the order given), without its line end, times as `time_format` says:
/// one line of the server's match log, or of the rdflib plugin's jsonl. ValueError for a
/// term that is not N-Triples or another time format.
#[pyfunction]
#[pyo3(signature = (time, start, bindings, taken, time_format = "input"))]
fn jsonl_line(
    time: i128,
    start: i128,
    bindings: Vec<(String, String)>,
    taken: Vec<TakenValues>,
    time_format: &str,
) -> PyResult<String> {
    let times = TimeFormat::parse(time_format)
        .ok_or_else(|| PyValueError::new_err(format!("no time format {time_format:?}")))?;
    let select = bindings.iter().map(|(v, _)| v.clone()).collect();
    let row = plain_row(time, start, bindings, taken);
    let mut collector = RowCollector::new(Format::Jsonl, Some(select), Vec::new(), times);
    let mut batch = Batch::default();
    collector
        .fill(&row, &mut batch)
        .map_err(PyValueError::new_err)?;
    let mut line = String::new();
    Formatter::new(Format::Jsonl, Vec::new(), false).write(&batch, &mut line);
    line.pop(); // its line end
    Ok(line)
}

/// A time (`ns` nanoseconds) as the SPARQL 1.1 JSON results term the writers give `_time`
/// and `_start`: an `xsd:dateTime` literal when `dated`, else `xsd:decimal` seconds.
#[pyfunction]
fn json_time(ns: i128, dated: bool) -> String {
    let mut s = String::new();
    spaseq_output::spell::json_time_literal(ns, dated, &mut s);
    s
}

/// A time (`ns` nanoseconds) as the JSON number jsonl writes it (exact seconds).
#[pyfunction]
fn json_seconds(ns: i128) -> String {
    let mut s = String::new();
    spaseq_output::spell::json_seconds(ns, &mut s);
    s
}

/// A time (`ns` nanoseconds) as the table writes it: seconds to the millisecond for small
/// (relative) times, ISO 8601 UTC for wall-clock ones.
#[pyfunction]
fn table_time(ns: i128) -> String {
    let mut s = String::new();
    spaseq_output::spell::table_time(ns, &mut s);
    s
}

/// The `k`-th result of the query whose output stream is `output`, as the event of that
/// stream it is (`spaseq_output::derive`): its graph name and its graph in N-Triples, one
/// triple per line. For a CONSTRUCT query (`template`, as `NativeWriter` takes it) the
/// template instantiated with `bindings` (fresh blank nodes); for a SELECT query the match
/// described: its times (`dated`: written as `xsd:dateTime`s), the events it took (as
/// `write_row` takes them) and `bindings`, in the order given. ValueError for a term that is
/// not N-Triples or an output that is not an IRI.
#[pyfunction]
#[pyo3(signature = (output, k, time, start, dated, bindings, taken, template = None))]
#[allow(clippy::too_many_arguments)]
fn derived_graph(
    output: String,
    k: u64,
    time: i128,
    start: i128,
    dated: bool,
    bindings: Vec<(String, String)>,
    taken: Vec<TakenValues>,
    template: Option<Vec<[(String, String); 3]>>,
) -> PyResult<(String, String)> {
    let bound = bindings
        .iter()
        .map(|(v, t)| Ok((v.as_str(), parse_term(t)?)))
        .collect::<PyResult<Vec<_>>>()?;
    // a template's variables numbered in order of first mention, each with its value
    let mut vars: Vec<String> = Vec::new();
    for (kind, text) in template.iter().flatten().flatten() {
        if kind == "var" && !vars.contains(text) {
            vars.push(text.clone());
        }
    }
    let template = template.map(|t| trig_template(&t, &vars)).transpose()?;
    let values: Vec<Option<&Term>> = vars
        .iter()
        .map(|v| bound.iter().find(|(name, _)| name == v).map(|(_, t)| t))
        .collect();
    let graphs = taken
        .iter()
        .map(|t| t.4.as_deref().map(parse_term).transpose())
        .collect::<PyResult<Vec<_>>>()?;
    let taken: Vec<Taken<'_>> = taken
        .iter()
        .zip(&graphs)
        .map(|((atom, stream, time, dated, _), graph)| Taken {
            atom,
            stream,
            time: *time,
            dated: *dated,
            graph: graph.as_ref(),
        })
        .collect();
    let derive = Derive::new(output, template).map_err(PyValueError::new_err)?;
    let name = derive.match_name(k);
    let described: Vec<(&str, &Term)> = bound.iter().map(|(v, t)| (*v, t)).collect();
    let triples = derive.graph(&name, (time, start, dated), &values, &described, &taken);
    let mut text = String::new();
    for t in &triples {
        text.push_str(&t.to_string());
        text.push_str(" .\n");
    }
    Ok((name.into_string(), text))
}

/// The graph name of the `k`-th result of the query whose output stream is `output`
/// (`<output#match-k>`, `spaseq_output::derive`).
#[pyfunction]
fn result_name(output: String, k: u64) -> PyResult<String> {
    let derive = Derive::new(output, None).map_err(PyValueError::new_err)?;
    Ok(derive.match_name(k).into_string())
}

/// A CONSTRUCT template from its Python spelling (`NativeWriter`'s `template`), its
/// variables numbered as in `select`.
fn trig_template(
    template: &[[(String, String); 3]],
    select: &[String],
) -> PyResult<Vec<[TemplateTerm; 3]>> {
    let mut fresh: Vec<String> = Vec::new();
    let mut term = |(kind, text): &(String, String)| -> PyResult<TemplateTerm> {
        Ok(match kind.as_str() {
            "var" => TemplateTerm::Var(select.iter().position(|v| v == text).ok_or_else(|| {
                PyValueError::new_err(format!("template variable {text} not selected"))
            })?),
            "fresh" => TemplateTerm::Fresh(match fresh.iter().position(|l| l == text) {
                Some(i) => i,
                None => {
                    fresh.push(text.clone());
                    fresh.len() - 1
                }
            }),
            "term" => TemplateTerm::Term(
                text.parse()
                    .map_err(|e| PyValueError::new_err(format!("template term {text}: {e}")))?,
            ),
            _ => return Err(PyValueError::new_err(format!("template term kind {kind}"))),
        })
    };
    template
        .iter()
        .map(|[s, p, o]| Ok([term(s)?, term(p)?, term(o)?]))
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeWriter>()?;
    m.add_function(wrap_pyfunction!(jsonl_line, m)?)?;
    m.add_function(wrap_pyfunction!(derived_graph, m)?)?;
    m.add_function(wrap_pyfunction!(result_name, m)?)?;
    m.add_function(wrap_pyfunction!(json_time, m)?)?;
    m.add_function(wrap_pyfunction!(json_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(table_time, m)?)?;
    Ok(())
}
