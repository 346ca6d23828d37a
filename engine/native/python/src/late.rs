//! The binding of the late-event output (`spaseq_output::late`): `LateOutput`, a TriG file of
//! the events queries dropped as late (decision 64), written by `NativeEngine.push` and
//! `feed_live` as they drop them and flushed after each, so that a run stopped by any error
//! has written every event it dropped.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_engine::{Engine, Host};
use spaseq_io::dictionary::TermId;
use spaseq_output::late::{triple_ref, LateEvent, LateWriter};
use std::cell::RefCell;
use std::fs::File;
use std::io::BufWriter;

/// A TriG file of late events, open until `close`.
#[pyclass(unsendable, module = "spaseq.engine._native")]
pub struct LateOutput {
    path: String,
    writer: RefCell<Option<LateWriter<BufWriter<File>>>>,
    written: std::cell::Cell<u64>,
}

impl LateOutput {
    /// Write one late event (`event` given its parts) and flush; ValueError once closed,
    /// OSError when the file cannot be written.
    fn write<'a, T: IntoIterator<Item = oxrdf::TripleRef<'a>>>(
        &self,
        event: LateEvent<'a, T>,
    ) -> PyResult<()> {
        let mut writer = self.writer.borrow_mut();
        let writer = writer.as_mut().ok_or_else(|| {
            PyValueError::new_err(format!("the late-event output {} is closed", self.path))
        })?;
        writer.write(event)?;
        writer.flush()?;
        self.written.set(writer.written());
        Ok(())
    }

    /// A pushed event (as the engine holds it: terms by id) late for the queries `late_for`.
    pub(crate) fn write_pushed<H: Host>(
        &self,
        core: &Engine<H>,
        event: &spaseq_automaton::EventData,
        late_for: &[usize],
    ) -> PyResult<()> {
        let dict = core.dict();
        let term = |id: &TermId| dict.get(*id);
        let triples = event
            .triples
            .iter()
            .filter_map(|[s, p, o]| triple_ref(term(s), term(p), term(o)));
        let stream = core.streams().iri(event.stream).to_owned();
        self.write(LateEvent {
            stream: &stream,
            time: event.time,
            dated: event.dated,
            graph: event.graph.as_ref(),
            triples,
            late_for: &labels(core, late_for),
        })
    }

    /// A live event (as read) on `stream` late for the queries `late_for`.
    pub(crate) fn write_live<H: Host>(
        &self,
        core: &Engine<H>,
        stream: &str,
        event: &spaseq_io::stream::StreamEvent,
        late_for: &[usize],
    ) -> PyResult<()> {
        self.write(LateEvent {
            stream,
            time: event.time_ns,
            dated: event.dated,
            graph: Some(&event.graph),
            triples: event.triples.iter().map(oxrdf::Triple::as_ref),
            late_for: &labels(core, late_for),
        })
    }
}

/// How the late output names queries: each one's output stream IRI, or `query N` (its
/// number, 1-based) when the host has not said it.
fn labels<H: Host>(core: &Engine<H>, queries: &[usize]) -> Vec<String> {
    queries
        .iter()
        .map(|&q| {
            core.output_iri(q)
                .unwrap_or_else(|| format!("query {}", q + 1))
        })
        .collect()
}

#[pymethods]
impl LateOutput {
    /// Create (or truncate) the TriG file `path`, its prefixes written; OSError when it
    /// cannot be.
    #[new]
    fn new(path: String) -> PyResult<Self> {
        let file = File::create(&path)?;
        let mut writer = LateWriter::new(BufWriter::new(file))?;
        writer.flush()?;
        Ok(LateOutput {
            path,
            writer: RefCell::new(Some(writer)),
            written: std::cell::Cell::new(0),
        })
    }

    /// The file's path.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// The late events written so far.
    #[getter]
    fn written(&self) -> u64 {
        self.written.get()
    }

    /// Flush and close the file (every event was flushed as it was written); a second call
    /// does nothing.
    fn close(&self) -> PyResult<()> {
        if let Some(mut writer) = self.writer.borrow_mut().take() {
            writer.flush()?;
        }
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LateOutput>()
}
