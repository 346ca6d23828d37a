//! The binding of the engine (`spaseq_engine`): `NativeEngine` wraps an `Engine` whose
//! `Host` is `PyHost`, calling back into Python for the GPMs the plan gives to `callback`
//! and for the knowledge base's rows; events, matches and terms are converted here, and
//! nothing else is decided here.

use crate::errors::{late_event, late_exception, located_exception, refused, LastingEvent};
use crate::late::LateOutput;
use crate::live::PyLiveStream;
use crate::stream::{PyEventRows, PyReplayStream};
use pyo3::exceptions::PyBaseException;
use pyo3::exceptions::PyValueError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::PyTraverseError;
use spaseq_automaton::{MatchRecord, Streams, MOMENT_CHUNK};
use spaseq_engine::{
    Dropped, Engine, EngineError, Fed, Host, HostFailed, LatePolicy, Names, Pairs, PreparedEvent,
    Pushed, Settings, Stop, TakenPairs, Verdict, COMPACT_MIN_TERMS,
};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_io::stream::StreamError;
use std::cell::RefCell;
use std::rc::Rc;
use std::str::FromStr;
use std::time::Duration;

/// A query's host: the Python callables the engine calls back, and the first error one
/// raised while an event was processed (raised once the engine returns).
#[derive(Default)]
pub struct PyHost {
    /// `callback(name, event uid, mu pairs, base, run start ns or None, taken [(GPM, uid,
    /// pairs)])` -> solutions as pairs: the GPMs the plan gives to `callback`.
    callback: Option<Py<PyAny>>,
    /// `kb(name, element, bound pairs)` -> rows as pairs: a GRAPH block's KB rows.
    kb: Option<Py<PyAny>>,
    error: RefCell<Option<PyErr>>,
}

impl PyHost {
    /// Call `f` back into Python; its error is kept for after the event (the automaton
    /// goes on without the rows, and the engine raises the error once the event is done).
    fn call_back<T: Default>(&self, f: impl FnOnce(Python<'_>) -> PyResult<T>) -> T {
        if self.error.borrow().is_some() {
            return T::default();
        }
        Python::attach(f).unwrap_or_else(|err| {
            self.error.borrow_mut().get_or_insert(err);
            T::default()
        })
    }

    /// The kept error, taken.
    fn take_error(&self) -> Option<PyErr> {
        self.error.borrow_mut().take()
    }

    /// Let go of the Python objects held (the callbacks, a kept error), for the caller to
    /// drop once it holds no borrow: dropping one may run Python code that calls the engine.
    fn release(&mut self) -> (Option<Py<PyAny>>, Option<Py<PyAny>>, Option<PyErr>) {
        (
            self.callback.take(),
            self.kb.take(),
            self.error.get_mut().take(),
        )
    }
}

impl Host for PyHost {
    fn evaluates(&self) -> bool {
        self.callback.is_some()
    }

    fn evaluate(
        &self,
        gpm: &str,
        uid: u64,
        mu: Option<Pairs>,
        start: Option<i128>,
        taken: Vec<TakenPairs>,
    ) -> Vec<Pairs> {
        let Some(callback) = &self.callback else {
            return Vec::new();
        };
        let base = mu.is_none();
        let args = (gpm, uid, mu.unwrap_or_default(), base, start, taken);
        self.call_back(|py| callback.call1(py, args)?.extract(py))
    }

    fn kb_rows(&self, gpm: &str, element: usize, bound: Pairs) -> Vec<Pairs> {
        let Some(kb) = &self.kb else {
            return Vec::new();
        };
        self.call_back(|py| kb.call1(py, (gpm, element, bound))?.extract(py))
    }

    fn fail(&self, message: String) {
        self.error
            .borrow_mut()
            .get_or_insert_with(|| PyValueError::new_err(message));
    }

    fn failed(&self) -> bool {
        self.error.borrow().is_some()
    }
}

/// An engine error as Python sees it.
fn value_error(err: EngineError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// An event prepared once for every query: shared with the runtimes that hold it.
#[pyclass(unsendable, module = "spaseq.engine._native")]
struct NativeEvent(PreparedEvent);

#[pymethods]
impl NativeEvent {
    /// The event's number in its engine (what taken events and callbacks name).
    #[getter]
    fn uid(&self) -> u64 {
        self.0.event.uid
    }
}

/// A released match, handed to Python as it is: its bindings and taken events are turned
/// into ids only when Python asks (most consumers count matches or read a few variables).
#[pyclass(unsendable, module = "spaseq.engine._native")]
struct NativeMatch {
    record: MatchRecord,
    names: Rc<Names>,
}

#[pymethods]
impl NativeMatch {
    /// Start of the match (ns): the time of its first event.
    #[getter]
    fn start(&self) -> i128 {
        self.record.start
    }

    /// End of the match (ns): the time of its last event.
    #[getter]
    fn time(&self) -> i128 {
        self.record.time
    }

    /// (start, time) in ns, in one call.
    #[getter]
    fn span(&self) -> (i128, i128) {
        (self.record.start, self.record.time)
    }

    /// The mapping as (variable, term id) pairs.
    fn bindings(&self) -> Pairs {
        self.names.pairs(self.record.mu.iter().copied().enumerate())
    }

    /// The events taken, first to last: (GPM, event uid, its local bindings).
    fn taken(&self) -> Vec<TakenPairs> {
        self.names.taken(self.record.node.clone())
    }

    /// Its number among the query's results (k: the graph `<output#match-k>` of its output
    /// stream), None when DISTINCT drops it.
    #[getter]
    fn number(&self) -> Option<u64> {
        (self.record.number != 0).then_some(self.record.number)
    }
}

/// The engine, for Python. Its queries' callbacks are bound methods of Python objects that
/// hold the engine: the garbage collector is shown them (`__traverse__`, `__clear__`) so
/// that such a cycle is freed.
#[pyclass(unsendable, weakref, module = "spaseq.engine._native")]
pub(crate) struct NativeEngine {
    core: Engine<PyHost>,
}

impl NativeEngine {
    /// What a query's host raised while the engine ran it.
    fn raised(&self, failed: HostFailed) -> PyErr {
        self.core
            .with_host(failed.query, PyHost::take_error)
            .ok()
            .flatten()
            .unwrap_or_else(|| PyValueError::new_err("a callback failed"))
    }

    /// Let go of every query's callbacks; false (nothing done) while a query runs.
    fn release_callbacks(&self) -> bool {
        let Some(taken) = self.core.try_hosts_mut(PyHost::release) else {
            return false;
        };
        drop(taken); // with no borrow held: a finalizer may call the engine
        true
    }

    /// `f` on the matches query `query` released since the last take, with what names
    /// them (the native writers, `output.rs`).
    pub(crate) fn with_released<T>(
        &self,
        query: usize,
        f: impl FnOnce(Vec<MatchRecord>, &Names, &Dictionary, &Streams) -> T,
    ) -> PyResult<T> {
        let (records, names) = self.core.take_matches(query).map_err(value_error)?;
        Ok(f(records, &names, self.core.dict(), &self.core.streams()))
    }

    /// What a feed call did, as Python reads it.
    fn fed(&self, fed: Result<Fed, HostFailed>) -> PyResult<Fed> {
        fed.map_err(|failed| self.raised(failed))
    }
}

/// A term as (kind, value, datatype, language), what Python builds its terms from.
type TermParts = (&'static str, String, Option<String>, Option<String>);
/// An event's parts (`NativeEngine.event_parts`).
/// An event's parts, as Python reads them: (stream, time ns, dated, seq, graph name, triples
/// as ids, start ns).
type EventParts = (
    String,
    i128,
    bool,
    u64,
    Option<TermParts>,
    Vec<TermId>,
    i128,
);
/// What `push` did: (fed to some query, a new instant, the queries it was late for).
type PushedParts = (bool, bool, Vec<usize>);
/// A live feed's result, as Python reads it.
type LiveFed<'py> = (
    usize,
    Option<i128>,
    bool,
    Option<Bound<'py, PyBaseException>>,
    usize,
    Option<Bound<'py, PyBaseException>>,
);

/// What `feed` reads: a replay stream's events or rows given as columns.
#[derive(FromPyObject)]
enum Source<'py> {
    Replay(Bound<'py, PyReplayStream>),
    Rows(Bound<'py, PyEventRows>),
}

/// What `feed` returns: (events fed, the last one's time, whether the stream ended, its
/// error).
type ReplayFed<'py> = (
    usize,
    Option<i128>,
    bool,
    Option<Bound<'py, PyBaseException>>,
);

/// A stream's error as the `LocatedError` returned (not raised) with what was fed.
fn located_or_none(
    py: Python<'_>,
    error: Option<StreamError>,
) -> PyResult<Option<Bound<'_, PyBaseException>>> {
    error.map(|e| located_exception(py, &e)).transpose()
}

#[pymethods]
impl NativeEngine {
    #[new]
    fn new() -> Self {
        NativeEngine {
            core: Engine::new(),
        }
    }

    /// The native half of a snapshot (`spaseq_automaton::snapshot`, versioned binary): the
    /// dictionary, streams, held events and the states of the runtimes `queries` (native
    /// numbers, in the order `resume` will be given them). Every released match must have
    /// been taken.
    fn snapshot<'py>(&self, py: Python<'py>, queries: Vec<usize>) -> PyResult<Bound<'py, PyBytes>> {
        let state = self.core.snapshot(&queries).map_err(value_error)?;
        Ok(PyBytes::new(py, &state))
    }

    /// A fresh engine holding a snapshot's dictionary, streams and events: register the
    /// same plans again, in the same order, then `resume` with their numbers. ValueError
    /// for data that is not a snapshot of this format.
    #[staticmethod]
    fn from_snapshot(data: &[u8]) -> PyResult<Self> {
        Ok(NativeEngine {
            core: Engine::from_snapshot(data).map_err(value_error)?,
        })
    }

    /// The Python objects the engine holds, for the garbage collector: each query's
    /// callbacks. While a query runs (a callback is under way) nothing is visited, so
    /// nothing the engine holds is collected then.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Some(visited) = self.core.try_hosts(|host| {
            visit.call(&host.callback)?;
            visit.call(&host.kb)
        }) else {
            return Ok(());
        };
        visited.into_iter().collect()
    }

    /// Break a cycle the collector found: let go of the callbacks (an engine in a cycle
    /// nothing else reaches is not running a query).
    fn __clear__(&self) {
        self.release_callbacks();
    }

    /// Let go of every query's callbacks (and a kept error): the engine is replaced (a
    /// compaction) and will only be read from (terms of the matches it released). Python
    /// GPMs and KB rows are not evaluated after this. ValueError from within a callback.
    fn release(&self) -> PyResult<()> {
        if self.release_callbacks() {
            Ok(())
        } else {
            Err(PyValueError::new_err(
                "the engine is evaluating an event: its callbacks cannot be released now",
            ))
        }
    }

    /// The number of terms in the dictionary (what compaction bounds).
    fn terms(&self) -> usize {
        self.core.dict().len()
    }

    /// The uids of the events something native still holds, oldest first.
    fn held(&self) -> Vec<u64> {
        self.core.held()
    }

    /// The number of query states the snapshot being restored holds.
    fn restoring(&self) -> usize {
        self.core.restoring()
    }

    /// Load the restored snapshot's query states into the runtimes `queries` (native
    /// numbers, in the snapshot's order): they continue where the snapshot was taken.
    fn resume(&self, queries: Vec<usize>) -> PyResult<()> {
        self.core.resume(&queries).map_err(value_error)
    }

    /// Add a query from its plan (`spaseq explain --plan` JSON); its number. Each GPM runs
    /// on the evaluator the plan records; `callback` evaluates the plan's "callback" GPMs.
    /// GRAPH blocks (their variables: the plan's `graph_vars`) have their rows asked of
    /// `kb(name, block, bound pairs)` once per distinct binding, cached until `kb_changed`.
    /// ValueError when the plan is malformed or this core cannot follow it.
    #[pyo3(signature = (plan_json, callback = None, kb = None))]
    fn register(
        &self,
        plan_json: &str,
        callback: Option<Py<PyAny>>,
        kb: Option<Py<PyAny>>,
    ) -> PyResult<usize> {
        let host = PyHost {
            callback,
            kb,
            error: RefCell::new(None),
        };
        self.core.register(plan_json, host).map_err(value_error)
    }

    /// The knowledge base changed (a new store version): forget every cached KB row.
    fn kb_changed(&self) {
        self.core.kb_changed();
    }

    /// The names of query `query`'s GPMs evaluated by the callback.
    fn python_gpms(&self, query: usize) -> PyResult<Vec<String>> {
        self.core.callback_gpms(query).map_err(value_error)
    }

    /// The id of a term given in N-Triples (interned on first sight).
    fn intern(&self, ntriples: &str) -> PyResult<TermId> {
        Ok(self.core.dict().intern(parse_term(ntriples)?))
    }

    /// A term's parts, to build it in Python: ("iri", iri, None, None), ("bnode", id, None,
    /// None) or ("literal", value, datatype, language).
    fn term_parts(&self, id: TermId) -> TermParts {
        term_parts(self.core.dict().get(id))
    }

    /// The N-Triples spelling of a term id.
    fn term(&self, id: TermId) -> String {
        self.core.dict().get(id).to_string()
    }

    /// Prepare an event: its stream IRI, time (ns), seq (order among events of one time),
    /// graph name in N-Triples, triples as a flat list of ids (s, p, o, s, p, o, ...) and
    /// whether its timestamp was written as an xsd:dateTime (`Event.dated`); `start`: when
    /// an event that lasts began (None: a point event).
    #[pyo3(signature = (stream, time, seq, graph, triples, dated = false, start = None))]
    #[allow(clippy::too_many_arguments)]
    fn event(
        &self,
        stream: &str,
        time: i128,
        seq: u64,
        graph: Option<&str>,
        triples: Vec<TermId>,
        dated: bool,
        start: Option<i128>,
    ) -> PyResult<NativeEvent> {
        if !triples.len().is_multiple_of(3) {
            return Err(PyValueError::new_err("triples: a multiple of 3 ids"));
        }
        let triples: Vec<[TermId; 3]> = triples
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]])
            .collect();
        let graph = graph.map(parse_term).transpose()?;
        Ok(NativeEvent(self.core.prepare(
            stream,
            (start.unwrap_or(time), time, dated),
            seq,
            graph,
            triples,
        )))
    }

    /// Feed up to `max` events of a replay stream (or `EventRows`) straight to the queries (no Python object
    /// per event): each query reading the event's stream processes it, the others move
    /// their clock. Returns (events fed, the last one's time in ns, whether the stream
    /// ended, its error if it ended with one: a `LocatedError` `PATH:LINE:COLUMN: message`).
    /// Matches wait in the queries for `take_matches`; fewer events are fed once enough
    /// matches wait.
    fn feed<'py>(&self, stream: Source<'py>, max: usize) -> PyResult<ReplayFed<'py>> {
        let (fed, py) = match &stream {
            Source::Replay(s) => {
                let source = s.borrow();
                let mut fed = self.core.feed(|| source.next_event(), max);
                if let Ok(Fed {
                    error: Some(error),
                    source: Some(index),
                    ..
                }) = &mut fed
                {
                    error.path = Some(source.path(*index).to_owned()); // an event refused
                }
                (fed, s.py())
            }
            Source::Rows(s) => {
                let source = s.borrow();
                (self.core.feed(|| source.next_event(), max), s.py())
            }
        };
        let fed = self.fed(fed)?;
        let error = located_or_none(py, fed.error)?;
        Ok((fed.fed, fed.last, fed.ended, error))
    }

    /// Feed the events of a live stream to the queries as they arrive (as `feed` does):
    /// waits up to `wait` seconds (the GIL released, Ctrl-C looked at) for the first, then
    /// takes only those already arrived, at most `max`: an event never waits for others.
    /// Each is judged per query (`configure`'s `late`): under "drop" the queries it is late
    /// for skip it and count it (and it is written to `late_output`, when given); under
    /// "error" feeding stops before a late one. Returns (events fed to some query, the last
    /// one's time in ns, whether the stream ended, its first error (a `LocatedError`
    /// `FILE:LINE:COLUMN: message`) if it ended with one, late events fed to no query, the
    /// late event that stopped it as a `LateEvent` (its `path` and `line` the source's
    /// label and the line its graph started on) if one did).
    #[pyo3(signature = (stream, max, wait, late_output = None))]
    fn feed_live<'py>(
        &self,
        py: Python<'py>,
        stream: &Bound<'py, PyLiveStream>,
        max: usize,
        wait: f64,
        late_output: Option<PyRef<'py, LateOutput>>,
    ) -> PyResult<LiveFed<'py>> {
        let source = stream.borrow();
        let first = source.wait(py, Some(Duration::from_secs_f64(wait.max(0.0))))?;
        // each late event written as it is dropped; the first failure to write is raised
        // once the feed returns (a query's failure, which stops the feed, before it)
        let mut unwritten: Option<PyErr> = None;
        let on_late = |d: Dropped<'_>| {
            if let (Some(output), None) = (late_output.as_deref(), &unwritten) {
                unwritten = output
                    .write_live(&self.core, d.stream, d.event, d.late_for)
                    .err();
            }
        };
        let fed = self.core.feed_live(
            first,
            || source.next(Some(Duration::ZERO)),
            |index| source.iri(index),
            max,
            on_late,
        );
        let mut fed = self.fed(fed)?;
        if let Some(err) = unwritten {
            return Err(err);
        }
        if let (Some(error), Some(index)) = (&mut fed.error, fed.source) {
            error.path = Some(source.label(index)); // an event refused, where it was read
        }
        let refused = match &fed.refused {
            Some((late, index, line)) => {
                let exc = late_exception(py, late)?;
                exc.setattr("path", source.label(*index))?;
                exc.setattr("line", *line)?;
                Some(exc)
            }
            None => None,
        };
        let error = located_or_none(py, fed.error)?;
        Ok((fed.fed, fed.last, fed.ended, error, fed.dropped, refused))
    }

    /// An event the engine holds, to build it in Python: (stream IRI, time ns, dated, seq,
    /// graph name's parts as `term_parts` gives them, triples as a flat list of ids); None
    /// once nothing native holds it.
    fn event_parts(&self, uid: u64) -> Option<EventParts> {
        let e = self.core.held_event(uid)?;
        Some((
            self.core.streams().iri(e.stream).to_owned(),
            e.time,
            e.dated,
            e.seq,
            e.graph.as_ref().map(term_parts),
            e.triples.iter().flatten().copied().collect(),
            e.start,
        ))
    }

    /// The uids of the oldest events nothing refers to any more (no run, match or index):
    /// the caller may forget them. Stops at the first event still held.
    fn forget(&self) -> Vec<u64> {
        self.core.forget()
    }

    /// How the engine treats time and memory: each query's clock moves with its own
    /// streams only (`own_clocks`, decision 40); what is done with a late event (`late`:
    /// "drop", each query it is late for skips it and counts it, or "error", it is refused
    /// whole; decision 64); the fewest terms at which the dictionary is compacted
    /// (`compact_min_terms`, default the core's).
    /// An event on a stream no registered query reads is dropped and counted
    /// (`drop_unread`) rather than refused. A stream silent for `idle_timeout` ns of
    /// processing time stops holding LATENESS watermarks back (None: each query's lateness).
    /// Once one event has completed `moment_chunk` matches, the rest of its moment is
    /// streamed, about that many per take (default the core's). ValueError for another
    /// `late`, or a `moment_chunk` of 0.
    #[pyo3(signature = (own_clocks, late, compact_min_terms = None, drop_unread = false, idle_timeout = None, moment_chunk = None))]
    fn configure(
        &self,
        own_clocks: bool,
        late: &str,
        compact_min_terms: Option<usize>,
        drop_unread: bool,
        idle_timeout: Option<i128>,
        moment_chunk: Option<usize>,
    ) -> PyResult<()> {
        if moment_chunk == Some(0) {
            return Err(PyValueError::new_err("moment_chunk must be at least 1"));
        }
        let late = match late {
            "drop" => LatePolicy::Drop,
            "error" => LatePolicy::Error,
            other => {
                return Err(PyValueError::new_err(format!(
                    "late {other:?}: expected \"drop\" or \"error\""
                )))
            }
        };
        self.core.configure(Settings {
            own_clocks,
            late,
            drop_unread,
            compact_min_terms: compact_min_terms.unwrap_or(COMPACT_MIN_TERMS),
            idle_timeout,
            moment_chunk: moment_chunk.unwrap_or(MOMENT_CHUNK),
        });
        Ok(())
    }

    /// The processing time is `now` ns (the host's monotonic clock): what stream idleness is
    /// measured by.
    fn set_now(&self, now: i128) {
        self.core.set_now(now);
    }

    /// Processing time passed with no event: queries with a LATENESS run as far as their
    /// watermarks now allow (streams idle for the idle timeout no longer holding them back).
    fn idle_tick(&self) -> PyResult<()> {
        self.core.idle_tick().map_err(|f| self.raised(f))
    }

    /// Whether a registered query reads the stream `stream`.
    fn reads(&self, stream: &str) -> bool {
        self.core.reads(stream)
    }

    /// The streams registered queries read, sorted.
    fn read_streams(&self) -> Vec<String> {
        self.core.read_streams()
    }

    /// `iri` is query `query`'s output stream (`label` names the query): no input, and a
    /// query reading it is fed its results. ValueError for queries reading each other's
    /// output in a cycle.
    fn set_output(&self, query: usize, iri: &str, label: &str) -> PyResult<()> {
        self.core.set_output(query, iri, label).map_err(value_error)
    }

    /// The earliest time (ns) of an event a held query (reading other queries' output, or
    /// with a LATENESS) still holds back; None when none holds any.
    fn gates_floor(&self) -> Option<i128> {
        self.core.gates_floor()
    }

    /// Forget when each stream last sent (a snapshot from another process).
    fn forget_arrivals(&self) {
        self.core.forget_arrivals();
    }

    /// `iri` is no query's output stream any more.
    fn unregister_output(&self, iri: &str) {
        self.core.unregister_output(iri);
    }

    /// The events on streams no query reads dropped so far (under `drop_unread`).
    fn dropped_unread(&self) -> u64 {
        self.core.clocks().dropped_unread
    }

    /// Whether the dictionary should be compacted now (`Engine::compaction_due`).
    fn compaction_due(&self) -> bool {
        self.core.compaction_due()
    }

    /// An event pushed to the queries, as a stream's events are fed: judged per query
    /// first: under "error" (`configure`) a late one raises `LateEvent`; under "drop" the
    /// queries it is late for skip it and count it (and it is written to `late_output`, when
    /// given). At a new instant `on_instant(time ns)` is called first (when given); then
    /// those reading its stream process it, the others move their clocks to its time unless
    /// `own_clocks`, and the queries reading other queries' output are run as far as that
    /// allows. Returns (whether some query took it, whether it started a new instant, the
    /// queries it was late for). What the first query whose callback raised raised is
    /// raised.
    #[pyo3(signature = (event, on_instant = None, late_output = None))]
    fn push(
        &self,
        py: Python<'_>,
        event: &NativeEvent,
        on_instant: Option<Py<PyAny>>,
        late_output: Option<PyRef<'_, LateOutput>>,
    ) -> PyResult<PushedParts> {
        let hook = |time: i128| match &on_instant {
            Some(f) => f.call1(py, (time,)).map(drop),
            None => Ok(()),
        };
        let (fed, new_instant, late_for) = match self.core.push(&event.0, hook) {
            Ok(Pushed::Fed {
                new_instant,
                late_for,
            }) => (true, new_instant, late_for),
            Ok(Pushed::Dropped { late_for }) => (false, false, late_for),
            Err(Stop::Late(late)) => return Err(late_event(&late)),
            Err(Stop::Refused(why)) => return Err(PyErr::new::<LastingEvent, _>(why.to_string())),
            Err(Stop::Host(failed)) => return Err(self.raised(failed)),
            Err(Stop::Instant(err)) => return Err(err),
        };
        if let Some(output) = late_output.filter(|_| !late_for.is_empty()) {
            output.write_pushed(&self.core, &event.0.event, &late_for)?;
        }
        Ok((fed, new_instant, late_for))
    }

    /// Before an event at `time` (ns) on `stream` is prepared: None to push it, or the
    /// queries it was late for when it was dropped and counted (late for every query reading
    /// its stream under "drop"; none: on a stream no query reads, under `drop_unread`).
    /// With `keep_late` (a late-event output is written) a late event is left to `push`,
    /// which drops it once prepared. Raises `LateEvent`, `UnreadStream` or `OutputStream`
    /// when it is refused.
    #[pyo3(signature = (stream, time, dated, keep_late = false))]
    fn judge(
        &self,
        stream: &str,
        time: i128,
        dated: bool,
        keep_late: bool,
    ) -> PyResult<Option<Vec<usize>>> {
        match self.core.judge(stream, time, dated, keep_late) {
            Ok(Verdict::Feed) => Ok(None),
            Ok(Verdict::Unread) => Ok(Some(Vec::new())),
            Ok(Verdict::Late(late_for)) => Ok(Some(late_for)),
            Err(why) => Err(refused(&why)),
        }
    }

    /// The late events query `query` dropped (late for it, under "drop").
    fn late_count(&self, query: usize) -> PyResult<u64> {
        self.core.late_count(query).map_err(value_error)
    }

    /// Query `query` is unregistered: it takes no more events and makes none late.
    fn unregister(&self, query: usize) -> PyResult<()> {
        self.core.unregister(query).map_err(value_error)
    }

    /// Why an event at `time` (ns) on `stream` would be late, as `LateEvent`'s message, or
    /// None; raises `OutputStream` for a query's output stream, and `LastingEvent` for one
    /// lasting from `start` (ns) that a query reading the stream takes only as a point.
    #[pyo3(signature = (stream, time, dated, start=None))]
    fn late(
        &self,
        stream: &str,
        time: i128,
        dated: bool,
        start: Option<i128>,
    ) -> PyResult<Option<String>> {
        if let Some(why) = self.core.output_refusal(stream) {
            return Err(refused(&why));
        }
        let when = (start.unwrap_or(time), time, dated);
        if let Some(why) = self.core.lasting_refusal(stream, String::new, when) {
            return Err(PyErr::new::<LastingEvent, _>(why.to_string()));
        }
        Ok(self.core.late(stream, time, dated).map(|l| l.to_string()))
    }

    /// Refuse `stream` as input (raises `OutputStream`) when it is a query's output stream.
    fn check_input(&self, stream: &str) -> PyResult<()> {
        match self.core.output_refusal(stream) {
            Some(why) => Err(refused(&why)),
            None => Ok(()),
        }
    }

    /// The registered queries (numbers) in the order their results are released: those read
    /// directly, registration order, then those reading other queries' output, producers
    /// first.
    fn release_order(&self) -> Vec<usize> {
        self.core.release_order()
    }

    /// A heartbeat: no event earlier than `time` (ns) will come; every query moves its
    /// clock to it. Whether it started a new instant.
    fn heartbeat(&self, time: i128) -> PyResult<bool> {
        self.core.heartbeat(time).map_err(|f| self.raised(f))
    }

    /// No more events will come at the current timestamp: every query runs its deferred
    /// work now.
    fn flush(&self) -> PyResult<()> {
        self.core.flush().map_err(|f| self.raised(f))
    }

    /// End of input: every query's windows close.
    fn close(&self) -> PyResult<()> {
        self.core.close().map_err(|f| self.raised(f))
    }

    /// The engine clock (ns), None before any event or heartbeat.
    fn engine_clock(&self) -> Option<i128> {
        self.core.engine_clock()
    }

    /// The late events fed to no query so far (late for every query reading their stream,
    /// under "drop").
    fn dropped_late(&self) -> u64 {
        self.core.clocks().dropped_late
    }

    /// Query `query`'s flushed instant (ns): no event comes at or before it; None if never
    /// flushed.
    fn flushed(&self, query: usize) -> PyResult<Option<i128>> {
        self.core.flushed(query).map_err(value_error)
    }

    /// The largest timestamp (ns) of the query's streams so far, None before any.
    fn clock(&self, query: usize) -> PyResult<Option<i128>> {
        self.core.clock(query).map_err(value_error)
    }

    /// Whether query `query` streams a moment: `take_matches` gives its matches a chunk at a
    /// time until this is false.
    fn moment_pending(&self, query: usize) -> PyResult<bool> {
        self.core.moment_pending(query).map_err(value_error)
    }

    fn footprint(&self, query: usize) -> PyResult<Vec<(&'static str, usize)>> {
        Ok(self
            .core
            .footprint(query)
            .map_err(value_error)?
            .into_iter()
            .collect())
    }

    /// Counts of the work query `query` did so far (`spaseq_automaton::query::Work`).
    fn work(&self, query: usize) -> PyResult<Vec<(&'static str, u64)>> {
        self.core
            .query(query, |rt| rt.work.counts().into_iter().collect())
            .map_err(value_error)
    }

    fn runs_created(&self, query: usize) -> PyResult<u64> {
        self.core
            .query(query, |rt| rt.runs_created)
            .map_err(value_error)
    }

    /// The matches query `query` released since the last call, in order.
    fn take_matches(&self, query: usize) -> PyResult<Vec<NativeMatch>> {
        let (records, names) = self.core.take_matches(query).map_err(value_error)?;
        Ok(records
            .into_iter()
            .map(|record| NativeMatch {
                record,
                names: names.clone(),
            })
            .collect())
    }
}

fn term_parts(term: &oxrdf::Term) -> TermParts {
    match term {
        oxrdf::Term::NamedNode(n) => ("iri", n.as_str().to_owned(), None, None),
        oxrdf::Term::BlankNode(b) => ("bnode", b.as_str().to_owned(), None, None),
        oxrdf::Term::Literal(l) => (
            "literal",
            l.value().to_owned(),
            Some(l.datatype().as_str().to_owned()),
            l.language().map(str::to_owned),
        ),
        // an RDF 1.2 triple term (an event's object may be one), in N-Triples `<<( s p o )>>`
        #[allow(unreachable_patterns)]
        other => ("triple", other.to_string(), None, None),
    }
}

/// A term from its N-Triples; ValueError when it is not one.
pub(crate) fn parse_term(ntriples: &str) -> PyResult<oxrdf::Term> {
    oxrdf::Term::from_str(ntriples)
        .map_err(|e| PyValueError::new_err(format!("not an RDF term {ntriples:?}: {e}")))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEngine>()?;
    m.add_class::<NativeEvent>()?;
    m.add_class::<NativeMatch>()?;
    Ok(())
}
