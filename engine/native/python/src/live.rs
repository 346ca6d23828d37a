//! The binding of live input (`spaseq_io::stream::live`): `LiveStream`, sources (stdin as `-`,
//! named pipes, any file) read on threads of their own and merged in arrival order, a Python
//! iterator of batches of the events that have arrived (the first waited for with the GIL
//! released, never more than that); and `LiveReader`, the rules fed a line at a time.
//! Events as `ReplayStream` gives them, with whether the timestamp was an `xsd:dateTime` and
//! the origin `FILE:LINE` added; an error as `LocatedError` (a ValueError,
//! `FILE:LINE:COLUMN: message`). `LiveInlet` (`spaseq_io::stream::inlet`) is a source of a
//! `LiveStream` fed whole messages from Python (MQTT).

use crate::errors::{located, located_exception};
use pyo3::exceptions::PyBaseException;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_io::replay::{self, Format, GENERATED_AT_TIME};
use spaseq_io::stream::inlet::Inlet;
use spaseq_io::stream::live::{LiveEvent, LiveInput, LiveReader, LiveStream, Next};
use spaseq_io::stream::{StreamError, StreamEvent};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// (stream IRI, seq, time in ns, graph, [(s, p, o)], dated, origin, start in ns), terms in N-Triples.
type PyLiveEvent = (
    String,
    u64,
    i128,
    String,
    Vec<(String, String, String)>,
    bool,
    String,
    i128,
);

/// How long a wait lasts before Python's signals (Ctrl-C) are looked at.
const SIGNALS: Duration = Duration::from_millis(100);

/// "trig", "nquads" or "auto" (None: told from the first line, `LiveReader::new`).
fn format_of(name: &str) -> PyResult<Option<Format>> {
    match name {
        "trig" => Ok(Some(Format::TriG)),
        "nquads" => Ok(Some(Format::NQuads)),
        "auto" => Ok(None),
        other => Err(PyValueError::new_err(format!(
            "unknown live format {other:?}: expected trig, nquads or auto"
        ))),
    }
}

fn value_error(e: StreamError) -> PyErr {
    located(&e)
}

fn triples(e: &[oxrdf::Triple]) -> Vec<(String, String, String)> {
    e.iter()
        .map(|t| {
            (
                t.subject.to_string(),
                t.predicate.to_string(),
                t.object.to_string(),
            )
        })
        .collect()
}

#[pyclass(module = "spaseq.engine._native", name = "LiveStream")]
pub struct PyLiveStream {
    /// The stream, and an error to raise once the events before it are taken.
    inner: Mutex<(LiveStream, Option<StreamError>)>,
    iris: Vec<String>,
    batch: usize,
    inlets: Vec<Py<PyLiveInlet>>,
}

impl PyLiveStream {
    /// The next event, waited for at most `wait` (None: as long as it takes) with the GIL
    /// released; Python's signal handlers run every `SIGNALS` meanwhile (Ctrl-C raises).
    pub fn wait(&self, py: Python<'_>, wait: Option<Duration>) -> PyResult<Next> {
        let deadline = wait.map(|w| Instant::now() + w);
        loop {
            let step = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()).min(SIGNALS),
                None => SIGNALS,
            };
            let next = py.detach(|| self.next(Some(step)));
            if !matches!(next, Next::Idle) {
                return Ok(next);
            }
            py.check_signals()?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(Next::Idle);
            }
        }
    }

    /// The next event within `wait` (an error kept for after earlier events first).
    pub fn next(&self, wait: Option<Duration>) -> Next {
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (stream, pending) = &mut *guard;
        match pending.take() {
            Some(e) => Next::End(Some(e)),
            None => stream.next(wait),
        }
    }

    /// The IRI of source `index`'s stream.
    pub fn iri(&self, index: usize) -> &str {
        &self.iris[index]
    }

    /// How errors name source `index`: `<stdin>` or its path.
    pub fn label(&self, index: usize) -> String {
        let guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        guard.0.label(index).to_owned()
    }

    /// An error met after events taken: kept for the next call.
    fn keep(&self, error: Option<StreamError>) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).1 = error;
    }

    fn event(&self, e: StreamEvent, line: u64) -> PyLiveEvent {
        let label = self.label(e.stream);
        (
            self.iris[e.stream].clone(),
            e.seq,
            e.time_ns,
            e.graph.to_string(),
            triples(&e.triples),
            e.dated,
            format!("{label}:{line}"),
            e.start_ns,
        )
    }
}

#[pymethods]
impl PyLiveStream {
    /// `sources`: (stream IRI, path or `-` for stdin, `trig`, `nquads` or `auto`: TriG if
    /// the first line that is not blank or a comment is shaped as only TriG's are, else
    /// N-Quads); a reader thread starts for each. `inlets`: (stream IRI, label), a source fed
    /// whole messages from Python for each (`LiveInlet`, the `inlets` property). ValueError
    /// for a bad time predicate or format.
    #[new]
    #[pyo3(signature = (sources, time_predicate = GENERATED_AT_TIME, batch = 1024, inlets = Vec::new()))]
    fn new(
        py: Python<'_>,
        sources: Vec<(String, String, String)>,
        time_predicate: &str,
        batch: usize,
        inlets: Vec<(String, String)>,
    ) -> PyResult<Self> {
        let mut iris = Vec::with_capacity(sources.len() + inlets.len());
        let mut inputs = Vec::with_capacity(sources.len());
        for (iri, path, format) in sources {
            iris.push(iri);
            inputs.push(LiveInput {
                path,
                format: format_of(&format)?,
            });
        }
        let labels: Vec<String> = inlets.iter().map(|(_, label)| label.clone()).collect();
        iris.extend(inlets.into_iter().map(|(iri, _)| iri));
        let (stream, made) =
            LiveStream::with_inlets(&inputs, &labels, time_predicate).map_err(value_error)?;
        let inlets = made
            .into_iter()
            .zip(labels)
            .map(|(inner, label)| Py::new(py, PyLiveInlet { inner, label }))
            .collect::<PyResult<_>>()?;
        Ok(PyLiveStream {
            inner: Mutex::new((stream, None)),
            iris,
            batch: batch.max(1),
            inlets,
        })
    }

    /// Sources fed whole messages from Python (`inlets` given to the constructor), in
    /// their order.
    #[getter]
    fn inlets(&self, py: Python<'_>) -> Vec<Py<PyLiveInlet>> {
        self.inlets.iter().map(|i| i.clone_ref(py)).collect()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The events that have arrived (at most `batch`), waiting for the first; after the
    /// last, the first source error if any.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Vec<PyLiveEvent>>> {
        let mut events = Vec::new();
        let mut next = self.wait(py, None)?;
        loop {
            match next {
                Next::Event(e, line) => events.push(self.event(e, line)),
                Next::Idle => break,
                Next::End(Some(e)) if events.is_empty() => return Err(value_error(e)),
                Next::End(e) => {
                    self.keep(e);
                    break;
                }
            }
            if events.len() >= self.batch {
                break;
            }
            next = self.next(Some(Duration::ZERO));
        }
        Ok((!events.is_empty()).then_some(events))
    }
}

/// What `LiveReader.read` and `finish` return: the events complete after it, and the error
/// that ended the reading (a `LocatedError`) or None.
type Outcome<'py> = (Vec<PyLiveEvent>, Option<Bound<'py, PyBaseException>>);

/// The live rules for one source fed a line at a time: `read(line)` and `finish()` each
/// return (the events complete after it, the error that ended the reading or None).
#[pyclass(module = "spaseq.engine._native", name = "LiveReader")]
pub struct PyLiveReader {
    reader: LiveReader,
    iri: String,
    label: String,
    seq: u64,
    failed: bool,
}

impl PyLiveReader {
    fn outcome<'py>(
        &mut self,
        py: Python<'py>,
        events: Vec<LiveEvent>,
        result: Result<(), replay::ReplayError>,
    ) -> PyResult<Outcome<'py>> {
        let events = events
            .into_iter()
            .map(|e| {
                self.seq += 1;
                (
                    self.iri.clone(),
                    self.seq,
                    e.time_ns,
                    e.graph.to_string(),
                    triples(&e.triples),
                    e.dated,
                    format!("{}:{}", self.label, e.line),
                    e.start_ns,
                )
            })
            .collect();
        let error = match result {
            Ok(()) => None,
            Err(error) => {
                self.failed = true;
                let error = StreamError {
                    path: Some(self.label.clone()),
                    error,
                };
                Some(located_exception(py, &error)?)
            }
        };
        Ok((events, error))
    }

    fn check(&self) -> PyResult<()> {
        if self.failed {
            return Err(PyValueError::new_err("the reading has ended"));
        }
        Ok(())
    }
}

#[pymethods]
impl PyLiveReader {
    /// A reader of stream `stream` whose errors name `label`, in `format` (`trig`, `nquads`
    /// or `auto`, as `LiveStream` takes them).
    #[new]
    #[pyo3(signature = (stream, label, format, time_predicate = GENERATED_AT_TIME))]
    fn new(stream: String, label: String, format: &str, time_predicate: &str) -> PyResult<Self> {
        let predicate = replay::time_predicate(time_predicate)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyLiveReader {
            reader: LiveReader::new(format_of(format)?, predicate),
            iri: stream,
            label,
            seq: 0,
            failed: false,
        })
    }

    /// Read one line (with its line end, except maybe the input's last line).
    fn read<'py>(&mut self, py: Python<'py>, line: &str) -> PyResult<Outcome<'py>> {
        self.check()?;
        let mut events = Vec::new();
        let result = self.reader.line(line, &mut events);
        self.outcome(py, events, result)
    }

    /// The end of input.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Outcome<'py>> {
        self.check()?;
        let mut events = Vec::new();
        let result = self.reader.finish(&mut events);
        self.failed = true; // nothing more to read
        self.outcome(py, events, result)
    }
}

/// A source of a `LiveStream` fed whole messages (`spaseq_io::stream::inlet`): each one
/// replay batch, TriG or N-Quads, its events sent to the stream in time order; a message that
/// cannot be read is refused whole and the source goes on.
#[pyclass(module = "spaseq.engine._native", name = "LiveInlet")]
pub struct PyLiveInlet {
    inner: Inlet,
    label: String,
}

#[pymethods]
impl PyLiveInlet {
    /// Read `message` (`format`: `trig` or `nquads`) and send its events, each with `line`
    /// as the line its graph started on (the message's number), waiting with the GIL
    /// released while the stream is full: how many it held. A message that cannot be read
    /// sends nothing: `LocatedError` `LABEL:LINE:COLUMN: message`, the place in the message.
    fn send(&self, py: Python<'_>, message: &[u8], format: &str, line: u64) -> PyResult<usize> {
        let Some(format) = format_of(format)? else {
            return Err(PyValueError::new_err(
                "a message's format is trig or nquads, not auto",
            ));
        };
        let sent = py.detach(|| self.inner.send(message, format, line));
        sent.map_err(|error| {
            value_error(StreamError {
                path: Some(self.label.clone()),
                error,
            })
        })
    }

    /// The end of this source (a message being sent meanwhile is cut short); a second call
    /// does nothing.
    fn close(&self) {
        self.inner.close();
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLiveStream>()?;
    m.add_class::<PyLiveInlet>()?;
    m.add_class::<PyLiveReader>()
}
