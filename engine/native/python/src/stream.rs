//! The binding of streaming replay (`spaseq_io::stream`): `ReplayStream`, a Python iterator of
//! batches of merged events, terms in N-Triples; a file's error as `LocatedError` (a
//! ValueError, `PATH:LINE:COLUMN: message`) after its usable events. The GIL is released
//! while reading; after the first pass (at construction), the stream is read ahead on a
//! thread of its own (`stream::prefetch`). `ReplayReading` starts the first pass on a thread of its own ahead
//! of time (the CLI starts it before it loads the engine and compiles the query), and a
//! `ReplayStream` built with it takes over what it read. `read_batch`: a batch of events
//! held in memory (a request body), read whole by the same reader.

use crate::arrow::{Built, StrColumn, Strings};
use crate::errors::located;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use spaseq_io::dictionary::Dictionary;
use spaseq_io::replay::{self, Format, ReplayError, GENERATED_AT_TIME};
use spaseq_io::stream::file::{self, Mode};
use spaseq_io::stream::prefetch::{Prefetched, BATCH, DEPTH};
use spaseq_io::stream::{Options, ReplayStream, StreamError, StreamEvent, MEMORY_EVENTS};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// An event as Python sees it: (stream IRI, seq, time in ns, graph, [(s, p, o)], dated,
/// start in ns: the time for a point event, decision 71).
type PyEvent = (
    String,
    u64,
    i128,
    String,
    Vec<(String, String, String)>,
    bool,
    i128,
);

#[pyclass(module = "spaseq.engine._native", name = "ReplayStream")]
pub struct PyReplayStream {
    inner: Mutex<(Prefetched, Option<StreamError>)>,
    iris: Vec<String>,
    /// The files, as errors name them.
    paths: Vec<String>,
    batch: usize,
    notes: Vec<String>,
    modes: Vec<Mode>,
    spilled_runs: usize,
    /// A speculative reading's verdict (`file::PENDING`, `CONFIRMED`, `REFUSED`).
    verdict: Option<Arc<AtomicU8>>,
}

fn value_error(e: StreamError) -> PyErr {
    located(&e)
}

fn nt(stream: &[String], e: StreamEvent) -> PyEvent {
    (
        stream[e.stream].clone(),
        e.seq,
        e.time_ns,
        e.graph.to_string(),
        e.triples
            .iter()
            .map(|t| {
                (
                    t.subject.to_string(),
                    t.predicate.to_string(),
                    t.object.to_string(),
                )
            })
            .collect(),
        e.dated,
        e.start_ns,
    )
}

/// `"trig"` or `"nquads"` (None: None), or ValueError.
fn format_named(format: Option<&str>) -> PyResult<Option<Format>> {
    match format {
        None => Ok(None),
        Some("trig") => Ok(Some(Format::TriG)),
        Some("nquads") => Ok(Some(Format::NQuads)),
        Some(other) => Err(PyValueError::new_err(format!(
            "unknown replay format {other:?}: expected trig or nquads"
        ))),
    }
}

fn options(
    time_predicate: &str,
    spill_dir: Option<PathBuf>,
    memory_events: usize,
    format: Option<&str>,
) -> PyResult<Options> {
    let format = format_named(format)?;
    Ok(Options {
        time_predicate: time_predicate.to_owned(),
        spill_dir,
        memory_events,
        format,
    })
}

/// What a reading started ahead has under way.
enum Started {
    /// The first pass, on a thread of its own.
    Opening(JoinHandle<Result<ReplayStream, StreamError>>),
    /// One file read once, its first pass handing its events over as it judges them
    /// (`ReplayStream::speculative`), and its verdict.
    Speculating(Box<ReplayStream>, Arc<AtomicU8>),
}

/// The first pass over replay files, started on a thread of its own: what the constructor
/// of `ReplayStream` would do, done while the caller does something else.
#[pyclass(module = "spaseq.engine._native", name = "ReplayReading")]
pub struct PyReplayReading {
    paths: Vec<String>,
    options: Options,
    started: Mutex<Option<Started>>,
}

#[pymethods]
impl PyReplayReading {
    /// `paths` in the command line's order; the other arguments as `ReplayStream`'s.
    /// `speculate` (one file only): read it once, its first pass handing events over as it
    /// judges them; the stream made with this reading then says at its end whether the file
    /// was read as it is written (`ReplayStream.speculation`, decision 47).
    #[new]
    #[pyo3(signature = (paths, time_predicate = GENERATED_AT_TIME, spill_dir = None, memory_events = MEMORY_EVENTS, format = None, speculate = false))]
    fn new(
        paths: Vec<String>,
        time_predicate: &str,
        spill_dir: Option<PathBuf>,
        memory_events: usize,
        format: Option<&str>,
        speculate: bool,
    ) -> PyResult<Self> {
        let options = options(time_predicate, spill_dir, memory_events, format)?;
        let started = if speculate && paths.len() == 1 {
            let (stream, verdict) =
                ReplayStream::speculative(&paths[0], &options).map_err(value_error)?;
            Started::Speculating(Box::new(stream), verdict)
        } else {
            let (p, o) = (paths.clone(), options.clone());
            let opening = std::thread::Builder::new()
                .name("spaseq-replay-open".into())
                .spawn(move || ReplayStream::open(&p, &o))
                .map_err(|e| PyValueError::new_err(format!("cannot start reading: {e}")))?;
            Started::Opening(opening)
        };
        Ok(PyReplayReading {
            paths,
            options,
            started: Mutex::new(Some(started)),
        })
    }

    /// Whether this reading reads its one file speculatively (and has not been taken yet).
    #[getter]
    fn speculative(&self) -> bool {
        matches!(
            *self.started.lock().unwrap_or_else(|e| e.into_inner()),
            Some(Started::Speculating(..))
        )
    }
}

impl PyReplayReading {
    /// What it started, if this reading is of `paths` with `options` and not taken yet.
    fn take(&self, paths: &[String], options: &Options) -> Option<Started> {
        if self.paths != paths || self.options != *options {
            return None;
        }
        self.started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

#[pymethods]
impl PyReplayStream {
    /// `files`: (stream IRI, path) in the command line's order; the first pass over every
    /// file runs here, or was started by `reading` (a `ReplayReading` of the same paths and
    /// options: otherwise it is not used). `format` ("trig" or "nquads") is every file's
    /// format, whatever its name says (None: each name's).
    #[new]
    #[pyo3(signature = (files, time_predicate = GENERATED_AT_TIME, spill_dir = None, memory_events = MEMORY_EVENTS, batch = 1024, format = None, reading = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        files: Vec<(String, String)>,
        time_predicate: &str,
        spill_dir: Option<PathBuf>,
        memory_events: usize,
        batch: usize,
        format: Option<&str>,
        reading: Option<PyRef<'_, PyReplayReading>>,
    ) -> PyResult<Self> {
        let (iris, paths): (Vec<String>, Vec<String>) = files.into_iter().unzip();
        let options = options(time_predicate, spill_dir, memory_events, format)?;
        let started = reading.and_then(|r| r.take(&paths, &options));
        let (stream, verdict) = py
            .detach(|| match started {
                Some(Started::Opening(opening)) => opening
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    .map(|stream| (stream, None)),
                Some(Started::Speculating(stream, verdict)) => Ok((*stream, Some(verdict))),
                None => ReplayStream::open(&paths, &options).map(|stream| (stream, None)),
            })
            .map_err(value_error)?;
        let notes = stream.notes.clone();
        let modes = stream.modes.clone();
        let spilled_runs = stream.spilled_runs;
        Ok(PyReplayStream {
            inner: Mutex::new((Prefetched::spawn(stream, BATCH, DEPTH), None)),
            iris,
            paths,
            batch: batch.max(1),
            notes,
            modes,
            spilled_runs,
            verdict,
        })
    }

    /// "off" (the files were judged before their first event), or for a speculative reading
    /// (`ReplayReading(speculate=True)`) "pending", "confirmed" or "failed": a failed stream
    /// ended early with an error, and what was made of its events is to be thrown away.
    #[getter]
    fn speculation(&self) -> &'static str {
        match self.verdict.as_ref().map(|v| v.load(Ordering::Acquire)) {
            None => "off",
            Some(file::CONFIRMED) => "confirmed",
            Some(file::REFUSED) => "failed",
            Some(_) => "pending",
        }
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next batch of events; after the last, the error if a file had one.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Vec<PyEvent>>> {
        let (events, error) = py.detach(|| {
            let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let (stream, pending) = &mut *guard;
            if let Some(e) = pending.take() {
                return (Vec::new(), Some(e));
            }
            let mut events = Vec::new();
            while events.len() < self.batch {
                match stream.next() {
                    Some(Ok(e)) => events.push(nt(&self.iris, e)),
                    Some(Err(e)) if events.is_empty() => return (events, Some(e)),
                    Some(Err(e)) => {
                        *pending = Some(e);
                        break;
                    }
                    None => break,
                }
            }
            (events, None)
        });
        match error {
            Some(e) => Err(value_error(e)),
            None if events.is_empty() => Ok(None),
            None => Ok(Some(events)),
        }
    }

    /// Notes for the user (files sorted on disk, read whole), one line each.
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// How each file is read: "memory", "stream", "sorted" or "whole".
    #[getter]
    fn modes(&self) -> Vec<&'static str> {
        self.modes
            .iter()
            .map(|m| match m {
                Mode::Memory => "memory",
                Mode::Stream => "stream",
                Mode::Sorted => "sorted",
                Mode::Whole => "whole",
            })
            .collect()
    }

    /// Runs spilled to disk to sort out-of-order files.
    #[getter]
    fn spilled_runs(&self) -> usize {
        self.spilled_runs
    }
}

impl PyReplayStream {
    /// The next event with its stream's IRI, natively (what `NativeEngine.feed` reads);
    /// a file's error after the events before it, as iteration does.
    pub fn next_event(&self) -> Option<Result<(&str, StreamEvent), StreamError>> {
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (stream, pending) = &mut *guard;
        if let Some(e) = pending.take() {
            return Some(Err(e));
        }
        match stream.next()? {
            Ok(e) => Some(Ok((self.iris[e.stream].as_str(), e))),
            Err(e) => Some(Err(e)),
        }
    }

    /// How errors name file `index`: its path.
    pub fn path(&self, index: usize) -> &str {
        &self.paths[index]
    }
}

/// An event of a batch: (graph, time in ns, [(s, p, o)], dated, start in ns), terms in
/// N-Triples.
pub(crate) type BatchEvent = (String, i128, Vec<(String, String, String)>, bool, i128);

/// The events of a replay batch held in memory (`format` "trig" or "nquads"; a request
/// body), read whole by the replay reader's rules (core `replay::read_events`): sorted by
/// time, ties in order of first appearance; for any problem, no events but `LocatedError`
/// `LABEL:LINE:COLUMN: message` (`LABEL: message` where the reader gives no place), `label`
/// naming the batch as a path names a file.
#[pyfunction]
#[pyo3(signature = (data, format, label, time_predicate = GENERATED_AT_TIME))]
fn read_batch(
    py: Python<'_>,
    data: &[u8],
    format: &str,
    label: &str,
    time_predicate: &str,
) -> PyResult<Vec<BatchEvent>> {
    let format = format_named(Some(format))?.unwrap_or(Format::TriG);
    let mut dictionary = Dictionary::new();
    let events = py
        .detach(|| replay::read_events(data, format, time_predicate, &mut dictionary))
        .map_err(|error| {
            value_error(StreamError {
                path: Some(label.to_owned()),
                error,
            })
        })?;
    Ok(batch_events(&events, &dictionary))
}

/// `read_columns`' columns: graph names (offsets, data), times (ns), triples (offsets,
/// data), dated, starts (ns).
type Columns<'py> = (
    (Bound<'py, PyBytes>, Bound<'py, PyBytes>),
    Vec<i128>,
    (Bound<'py, PyBytes>, Bound<'py, PyBytes>),
    Vec<bool>,
    Vec<i128>,
);

/// The events of a replay batch as `read_batch` reads them, as columns (what Spark's
/// readers hand to Arrow without a Python object per event): graph names and each event's
/// triples in N-Triples (one triple a line) as Arrow string buffers (`arrow::Built`), times
/// (ns), whether each was an xsd:dateTime, and starts (ns; the time for a point event).
/// Errors as `read_batch`'s.
#[pyfunction]
#[pyo3(signature = (data, format, label, time_predicate = GENERATED_AT_TIME))]
fn read_columns<'py>(
    py: Python<'py>,
    data: &[u8],
    format: &str,
    label: &str,
    time_predicate: &str,
) -> PyResult<Columns<'py>> {
    use std::io::Write;
    let format = format_named(Some(format))?.unwrap_or(Format::TriG);
    let located = |message: String| {
        value_error(StreamError {
            path: Some(label.to_owned()),
            error: ReplayError {
                line: None,
                column: None,
                message,
            },
        })
    };
    let (graphs, times, triples, dated, starts) = py.detach(|| {
        let mut dictionary = Dictionary::new();
        let events = replay::read_events(data, format, time_predicate, &mut dictionary).map_err(
            |error| {
                value_error(StreamError {
                    path: Some(label.to_owned()),
                    error,
                })
            },
        )?;
        let mut graphs = Built::with_capacity(events.len());
        let mut triples = Built::with_capacity(events.len());
        let (mut times, mut dated, mut starts) = (
            Vec::with_capacity(events.len()),
            Vec::with_capacity(events.len()),
            Vec::with_capacity(events.len()),
        );
        for e in &events {
            graphs
                .push_with(|out| {
                    let _ = write!(out, "{}", dictionary.get(e.graph));
                })
                .map_err(located)?;
            triples
                .push_with(|out| {
                    for [s, p, o] in &e.triples {
                        let _ = writeln!(
                            out,
                            "{} {} {} .",
                            dictionary.get(*s),
                            dictionary.get(*p),
                            dictionary.get(*o)
                        );
                    }
                })
                .map_err(located)?;
            times.push(e.time_ns);
            dated.push(e.dated);
            starts.push(e.start_ns);
        }
        Ok::<_, PyErr>((graphs, times, triples, dated, starts))
    })?;
    Ok((
        graphs.into_py(py),
        times,
        triples.into_py(py),
        dated,
        starts,
    ))
}

/// The triples of each row of a column of N-Triples text, one triple a line (as the
/// readers write them, from valid terms: parsed leniently), read in one parse of the
/// rows' data; an error naming the row (from 0) that is not such text.
pub(crate) fn triples_of_rows(rows: Strings<'_>) -> Result<Vec<Vec<oxrdf::Triple>>, String> {
    let mut parsed = oxttl::NTriplesParser::new()
        .lenient()
        .for_slice(rows.bytes(0, rows.len())?);
    let mut out = Vec::with_capacity(rows.len());
    for row in 0..rows.len() {
        let text = rows.bytes(row, row + 1)?;
        if !text.is_empty() && !text.ends_with(b"\n") {
            return Err(format!("row {row}: its triples do not end with a newline"));
        }
        let lines = memchr_count(text);
        let mut triples = Vec::with_capacity(lines);
        for _ in 0..lines {
            match parsed.next() {
                Some(Ok(t)) => triples.push(t),
                Some(Err(e)) => return Err(format!("row {row}: {e}")),
                None => return Err(format!("row {row}: a line that is no triple")),
            }
        }
        out.push(triples);
    }
    match parsed.next() {
        None => Ok(out),
        Some(_) => Err("rows with more triples than lines".to_owned()),
    }
}

/// The newlines in `text`.
fn memchr_count(text: &[u8]) -> usize {
    text.iter().filter(|b| **b == b'\n').count()
}

/// Events given as columns, each event's triples as N-Triples text (what Spark hands a
/// part: `spaseq.spark`), parsed once at construction and fed to the queries by
/// `NativeEngine.feed` in the order given, numbered as given.
#[pyclass(module = "spaseq.engine._native", name = "EventRows")]
pub struct PyEventRows {
    events: Mutex<std::vec::IntoIter<StreamEvent>>,
    iris: Vec<String>,
    len: usize,
}

#[pymethods]
impl PyEventRows {
    /// Columns of as many rows: stream IRIs, seqs, times (ns), whether each time was an
    /// xsd:dateTime, graph names and triples, in N-Triples; the string columns as Arrow
    /// buffers (`arrow::StrColumn`). ValueError (naming the row, counted from 0) for text
    /// that is not N-Triples or columns of unequal lengths.
    #[new]
    fn new(
        py: Python<'_>,
        streams: StrColumn<'_>,
        seqs: Vec<u64>,
        times: Vec<i128>,
        dated: Vec<bool>,
        graphs: StrColumn<'_>,
        triples: StrColumn<'_>,
    ) -> PyResult<Self> {
        let (streams, graphs, triples) = (
            Strings::of(&streams)?,
            Strings::of(&graphs)?,
            Strings::of(&triples)?,
        );
        let len = streams.len();
        if [
            seqs.len(),
            times.len(),
            dated.len(),
            graphs.len(),
            triples.len(),
        ]
        .iter()
        .any(|n| *n != len)
        {
            return Err(PyValueError::new_err(
                "EventRows: columns of unequal lengths",
            ));
        }
        py.detach(|| {
            let mut iris: Vec<String> = Vec::new();
            let mut events = Vec::with_capacity(len);
            let mut parsed = triples_of_rows(triples)?.into_iter();
            for row in 0..len {
                let stream = streams.get(row)?;
                let index = match iris.iter().position(|s| s == stream) {
                    Some(i) => i,
                    None => {
                        iris.push(stream.to_owned());
                        iris.len() - 1
                    }
                };
                let graph = graphs.get(row)?;
                let graph = graph
                    .parse::<oxrdf::Term>()
                    .map_err(|e| format!("row {row}: graph name {graph}: {e}"))?;
                let triples = parsed.next().unwrap_or_default();
                events.push(StreamEvent {
                    stream: index,
                    seq: seqs[row],
                    time_ns: times[row],
                    start_ns: times[row], // rows are point events (Spark's columns carry no start)
                    dated: dated[row],
                    graph,
                    triples,
                });
            }
            Ok(PyEventRows {
                events: Mutex::new(events.into_iter()),
                iris,
                len,
            })
        })
        .map_err(|e: String| PyValueError::new_err(e))
    }

    fn __len__(&self) -> usize {
        self.len
    }
}

impl PyEventRows {
    /// The next event with its stream's IRI (what `NativeEngine.feed` reads).
    pub fn next_event(&self) -> Option<Result<(&str, StreamEvent), StreamError>> {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        events.next().map(|e| Ok((self.iris[e.stream].as_str(), e)))
    }
}

/// Events read whole, as Python takes them: `(graph, time_ns, [(s, p, o)], dated)`, terms
/// in N-Triples.
pub(crate) fn batch_events(events: &[replay::Event], dictionary: &Dictionary) -> Vec<BatchEvent> {
    let nt = |id| dictionary.get(id).to_string();
    events
        .iter()
        .map(|e| {
            (
                nt(e.graph),
                e.time_ns,
                e.triples
                    .iter()
                    .map(|t| (nt(t[0]), nt(t[1]), nt(t[2])))
                    .collect(),
                e.dated,
                e.start_ns,
            )
        })
        .collect()
}

/// Check that `path` can be read as a replay file (`format`: "trig" or "nquads", every
/// file's whatever its name says; None: its name's) without reading it: `LocatedError`
/// `PATH: message` for what the reader would stop at before its first line (no such file,
/// a directory, a name that tells no format, a file that cannot be opened). So that `spaseq
/// run` refuses a missing input before it writes anything.
#[pyfunction]
#[pyo3(signature = (path, format = None))]
fn check_replay_file(path: &str, format: Option<&str>) -> PyResult<()> {
    match file::unreadable(path, format_named(format)?) {
        None => Ok(()),
        Some(error) => Err(value_error(StreamError {
            path: Some(path.to_owned()),
            error,
        })),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_replay_file, m)?)?;
    m.add_function(wrap_pyfunction!(read_batch, m)?)?;
    m.add_function(wrap_pyfunction!(read_columns, m)?)?;
    m.add_class::<PyEventRows>()?;
    m.add_class::<PyReplayReading>()?;
    m.add_class::<PyReplayStream>()
}
