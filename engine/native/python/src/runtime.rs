//! The binding of the native runtime: `NativeEngine` holds the term dictionary, the stream
//! table and one `QueryRuntime` per registered plan; Python (`engine/runtime/native.py`)
//! hands it events as term ids and takes complete matches back as ids.
//!
//! GPMs the native evaluator covers run natively; the others (SPARQL path, GRAPH blocks,
//! run functions) are evaluated by the engine's Python matcher through a callback, with
//! mappings as ids both ways. Methods take `&self` so that the callback may intern terms
//! while an event is being processed.

use crate::live::PyLiveStream;
use crate::stream::PyReplayStream;
use pyo3::exceptions::PyValueError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::PyTraverseError;
use spaseq_automaton::snapshot::EngineState;
use spaseq_automaton::{
    EventData, EventRef, GpmEval, MatchRecord, Node, QueryRuntime, QueryState, RunView, Streams,
};
use spaseq_gpm::vars::{Row, Slot, VarTable};
use spaseq_gpm::{EventIndex, GpmProgram, KbLookup, RunEnv, SparqlGpm, ValueCache};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_io::disposal::Disposal;
use spaseq_io::stream::live::Next;
use spaseq_io::stream::StreamEvent;
use spaseq_plan::plan::Evaluator;
use spaseq_plan::Plan;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use std::str::FromStr;
use std::time::Duration;

/// (variable, term id) pairs: a mapping as it crosses to Python.
type Pairs = Vec<(String, TermId)>;

/// A query's GPMs, and what the Python ones need.
struct Programs {
    /// Per GPM how it is evaluated (`Gpm::Python`: by the Python matcher of its name,
    /// `callback(name, event uid, mu pairs, base, run start ns or None, taken [(GPM, uid,
    /// pairs)])` returning solutions as pairs).
    gpms: Vec<Gpm>,
    /// The query's variables, GPM names and local slots (shared with its matches).
    names: Rc<Names>,
    callback: Option<Py<PyAny>>,
    /// The first error a callback raised while an event was processed, raised after it.
    error: RefCell<Option<PyErr>>,
    /// `kb(name, element, bound pairs)` -> rows as pairs: a GRAPH block's KB rows.
    kb: Option<Py<PyAny>>,
    /// The KB rows per (GPM, block, bound values), until the KB changes version.
    kb_cache: RefCell<HashMap<KbKey, Rc<Vec<Row>>>>,
    /// Per GPM: its stream's IRI (what `spaseq:eventStream()` returns) and whether it is a
    /// Kleene+ atom's (whose iterations the run-function aggregates read).
    streams: Vec<TermId>,
    kleene: Vec<bool>,
    /// This query's number among every query's programs (what an event's cached base rows
    /// are kept under: an event is prepared once for every query).
    id: u64,
}

/// Released matches the queries may hold, not yet taken, before `feed` and `feed_live`
/// return early so that they are written (or emitted) and dropped: a query matching many
/// times per event (skip-till-any over a wide window) would otherwise hold a whole batch's
/// matches at once, hundreds of MB, the peak growing with the worst batch of the stream.
const PENDING_MATCHES: usize = 1 << 14;

/// Numbers for `Programs::id`.
static PROGRAMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How one GPM is evaluated.
pub enum Gpm {
    /// The compiled path: the native join and FILTER programs.
    Native(GpmProgram),
    /// The SPARQL path on spareval.
    Sparql(Box<SparqlGpm>),
    /// Called back to the Python matcher.
    Python,
}

/// A cached GRAPH block answer: (GPM, block, the values of the block's bound variables).
type KbKey = (usize, usize, Vec<Option<TermId>>);

impl KbLookup for Programs {
    fn rows(&self, gpm: usize, element: usize, bound: &[Option<TermId>]) -> Rc<Vec<Row>> {
        let key = (gpm, element, bound.to_vec());
        if let Some(rows) = self.kb_cache.borrow().get(&key) {
            return rows.clone();
        }
        let rows = Rc::new(self.call_kb(gpm, element, bound));
        self.kb_cache.borrow_mut().insert(key, rows.clone());
        rows
    }
}

/// An event prepared for every query: its index for joins and its uid for callbacks.
pub struct Prepared {
    index: EventIndex,
    uid: u64,
    time: i128,
    /// Per (query, GPM) asked on this event, how often and its base rows once they are
    /// shared (`Programs::shared_base_rows`).
    base: RefCell<Vec<SharedBase>>,
    /// The first (query, GPM) asked on this event and how often, kept here until a second
    /// one is (most events are asked for one GPM by one or two runs: no allocation then).
    first_asked: Cell<Option<(u64, usize, u32)>>,
}

/// A GPM's results asked on one event by the runs of one query (`Programs::id`).
struct SharedBase {
    programs: u64,
    gpm: usize,
    /// Runs that asked so far.
    asked: u32,
    /// The GPM's base rows on the event, once `SHARED_FROM` runs asked.
    rows: Option<Rc<Vec<Row>>>,
}

/// From the how-manieth run offered an event a GPM's results come from the event's base
/// rows merged into each run (`Bgp::solve_from_base`) rather than a join per run: one run
/// alone is answered faster by the join, many runs (skip-till-any) by the rows computed once.
const SHARED_FROM: u32 = 3;

impl Prepared {
    fn new(index: EventIndex, uid: u64, time: i128) -> Self {
        Prepared {
            index,
            uid,
            time,
            base: RefCell::new(Vec::new()),
            first_asked: Cell::new(None),
        }
    }
}

impl Programs {
    /// Take the Python objects held: the callbacks and a kept error (the query can no
    /// longer evaluate its Python GPMs or ask for KB rows). The caller drops them once it
    /// holds no borrow: dropping one may run Python code that calls the engine.
    fn release(&mut self) -> (Option<Py<PyAny>>, Option<Py<PyAny>>, Option<PyErr>) {
        (
            self.callback.take(),
            self.kb.take(),
            self.error.get_mut().take(),
        )
    }

    /// The error a callback raised while the last event was processed, if any.
    fn raise_kept(&self) -> PyResult<()> {
        match self.error.borrow_mut().take() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

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

    /// A GRAPH block's KB rows from the Python side.
    fn call_kb(&self, gpm: usize, element: usize, bound: &[Option<TermId>]) -> Vec<Row> {
        let (Some(kb), Gpm::Native(program)) = (&self.kb, &self.gpms[gpm]) else {
            return Vec::new();
        };
        let slots = program.graph_slots(element).iter().copied();
        let pairs = self.names.pairs(slots.zip(bound.iter().copied()));
        let name = self.names.gpms[gpm].as_str();
        self.call_back(|py| {
            let rows: Vec<Pairs> = kb.call1(py, (name, element, pairs))?.extract(py)?;
            rows.into_iter()
                .map(|solution| self.row_of(name, solution))
                .collect()
        })
    }

    /// A solution given as pairs, as a row of this query's slots.
    fn row_of(&self, gpm: &str, solution: Pairs) -> PyResult<Row> {
        let vars = &self.names.vars;
        let mut row = vars.empty_row();
        for (var, id) in solution {
            let slot = vars.get(&var).ok_or_else(|| {
                PyValueError::new_err(format!("GPM {gpm} bound ?{var}, not in its plan"))
            })?;
            row[slot] = Some(id);
        }
        Ok(row)
    }

    /// GPM `gpm` evaluated by the Python matcher (`mu` None: its context-free solutions).
    fn call_python(
        &self,
        gpm: usize,
        event: &Prepared,
        mu: Option<&[Option<TermId>]>,
        run: RunView<'_>,
        out: &mut Vec<Row>,
    ) {
        let Some(callback) = &self.callback else {
            return;
        };
        let name = self.names.gpms[gpm].as_str();
        let args = (
            name,
            event.uid,
            mu.map(|m| self.names.pairs(m.iter().copied().enumerate()))
                .unwrap_or_default(),
            mu.is_none(),
            run.start,
            self.names.taken(run.node.cloned()),
        );
        out.extend(self.call_back(|py| {
            let solutions: Vec<Pairs> = callback.call1(py, args)?.extract(py)?;
            solutions
                .into_iter()
                .map(|solution| self.row_of(name, solution))
                .collect::<PyResult<Vec<Row>>>()
        }));
    }
}

impl Programs {
    /// The values `slot` took in the Kleene+ iterations of the run that took `node`, first
    /// to last (one per iteration that bound it): what the run-function aggregates read.
    fn iterations(&self, node: Option<&Rc<Node>>, slot: Slot) -> Vec<TermId> {
        let mut out = Vec::new();
        let mut at = node.map(|n| &**n);
        while let Some(n) = at {
            let t = &n.taken;
            if self.kleene[t.gpm] {
                let locals = &self.names.locals[t.gpm];
                if let Some(Some(v)) = locals
                    .iter()
                    .position(|&s| s == slot)
                    .map(|i| t.bindings[i])
                {
                    out.push(v);
                }
            }
            at = n.parent.as_deref();
        }
        out.reverse();
        out
    }
}

impl Programs {
    /// The base rows of native GPM `gpm` (`program`) on `event` for the runs it is offered
    /// to from the `SHARED_FROM`th on (computed then, once); None before.
    fn shared_base_rows(
        &self,
        gpm: usize,
        program: &GpmProgram,
        event: &Prepared,
        dict: &Dictionary,
    ) -> Option<Rc<Vec<Row>>> {
        let key = (self.id, gpm);
        match event.first_asked.get() {
            None => {
                event.first_asked.set(Some((key.0, key.1, 1)));
                return None;
            }
            Some((programs, g, asked)) if (programs, g) == key && asked + 1 < SHARED_FROM => {
                event.first_asked.set(Some((programs, g, asked + 1)));
                return None;
            }
            _ => {}
        }
        let mut cached = event.base.borrow_mut();
        let at = match cached.iter().position(|e| (e.programs, e.gpm) == key) {
            Some(at) => at,
            None => {
                // the first one asked comes over from `first_asked` with its count
                let asked = match event.first_asked.get() {
                    Some((programs, g, asked)) if (programs, g) == key => asked,
                    _ => 0,
                };
                cached.push(SharedBase {
                    programs: self.id,
                    gpm,
                    asked,
                    rows: None,
                });
                cached.len() - 1
            }
        };
        let entry = &mut cached[at];
        if let Some(rows) = &entry.rows {
            return Some(rows.clone());
        }
        entry.asked += 1;
        if entry.asked < SHARED_FROM {
            return None;
        }
        let mut rows = Vec::new();
        program.base(&event.index, self.names.vars.len(), dict, &mut rows);
        let rows = Rc::new(rows);
        entry.rows = Some(rows.clone());
        Some(rows)
    }
}

impl GpmEval for Programs {
    type Index = Prepared;

    fn results(
        &self,
        gpm: usize,
        event: &Prepared,
        mu: &[Option<TermId>],
        run: RunView<'_>,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        match &self.gpms[gpm] {
            Gpm::Sparql(body) => {
                if body.may_match(&event.index) {
                    body.results(&event.index, mu, dict, out);
                }
            }
            Gpm::Native(program) => {
                if !program.may_match(&event.index) {
                } else if let Some(base) = program
                    .answers_from_base()
                    .then(|| self.shared_base_rows(gpm, program, event, dict))
                    .flatten()
                {
                    program.results_from_base(&base, &event.index, mu, dict, out);
                } else if program.reads_run() {
                    let iterations = |slot: Slot| self.iterations(run.node, slot);
                    let env = RunEnv {
                        time: event.time,
                        start: run.start.unwrap_or(event.time),
                        stream: self.streams[gpm],
                        iterations: &iterations,
                    };
                    program.results_in_run(gpm, self, &event.index, mu, Some(&env), dict, out);
                } else {
                    program.results_with_kb(gpm, self, &event.index, mu, dict, out);
                }
            }
            Gpm::Python => self.call_python(gpm, event, Some(mu), run, out),
        }
    }

    fn base(&self, gpm: usize, event: &Prepared, dict: &Dictionary, out: &mut Vec<Row>) {
        match &self.gpms[gpm] {
            Gpm::Native(program) => {
                if program.may_match(&event.index) {
                    program.base(&event.index, self.names.vars.len(), dict, out);
                }
            }
            Gpm::Sparql(body) => {
                if body.may_match(&event.index) {
                    body.base(&event.index, self.names.vars.len(), dict, out);
                }
            }
            Gpm::Python => self.call_python(gpm, event, None, RunView::default(), out),
        }
    }

    fn local_slots(&self, gpm: usize) -> &[Slot] {
        &self.names.locals[gpm]
    }
}

/// An event prepared once for every query: shared with the runtimes that hold it.
#[pyclass(unsendable, module = "spaseq.engine._native")]
struct NativeEvent {
    event: EventRef,
    prepared: Rc<Prepared>,
}

#[pymethods]
impl NativeEvent {
    /// The event's number in its engine (what taken events and callbacks name).
    #[getter]
    fn uid(&self) -> u64 {
        self.event.uid
    }
}

/// A released match, handed to Python as it is: its bindings and taken events are turned
/// into ids only when Python asks (most consumers count matches or read a few variables).
#[pyclass(unsendable, module = "spaseq.engine._native")]
struct NativeMatch {
    record: MatchRecord,
    names: Rc<Names>,
}

/// What a query's matches need to name their variables and GPMs.
pub(crate) struct Names {
    pub(crate) vars: VarTable,
    pub(crate) gpms: Vec<String>,
    locals: Vec<Vec<Slot>>,
}

impl Names {
    fn pairs(&self, slots: impl Iterator<Item = (Slot, Option<TermId>)>) -> Pairs {
        slots
            .filter_map(|(slot, v)| v.map(|id| (self.vars.name(slot).to_owned(), id)))
            .collect()
    }

    /// The events a run or match took, first to last: (GPM, event uid, its local bindings).
    fn taken(&self, node: Option<Rc<Node>>) -> Vec<(String, u64, Pairs)> {
        Node::chain(&node)
            .iter()
            .map(|t| {
                let locals = self.locals[t.gpm].iter().copied();
                let bindings = self.pairs(locals.zip(t.bindings.iter().copied()));
                (self.gpms[t.gpm].clone(), t.event.uid, bindings)
            })
            .collect()
    }
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
    fn taken(&self) -> Vec<(String, u64, Pairs)> {
        self.names.taken(self.record.node.clone())
    }
}

/// A snapshot's query states and its events by uid, until they are loaded.
type Restoring = (Vec<QueryState>, HashMap<u64, EventRef>);

/// Term dictionary, streams and the registered queries' native runtimes. Its queries'
/// callbacks are bound methods of Python objects that hold the engine: the garbage collector
/// is shown them (`__traverse__`, `__clear__`) so that such a cycle is freed.
#[pyclass(unsendable, weakref, module = "spaseq.engine._native")]
pub(crate) struct NativeEngine {
    dict: Dictionary,
    /// values of the dictionary's terms read by FILTERs from runs' bindings
    values: Rc<ValueCache>,
    streams: RefCell<Streams>,
    queries: RefCell<Vec<QueryRuntime<Programs>>>,
    events: Cell<u64>,
    /// Events handed out, oldest first, until nothing native refers to them any more.
    handed: RefCell<VecDeque<(u64, Weak<EventData>)>>,
    /// A snapshot being restored: its query states and events, until `resume`.
    restoring: RefCell<Option<Restoring>>,
    /// Fed terms known already, dropped on a thread of their own.
    disposal: RefCell<Disposal<oxrdf::Term>>,
}

impl NativeEngine {
    /// An event made native: numbered, indexed for joins, and remembered (weakly) so that
    /// Python can forget its side of it once nothing native holds it.
    fn prepare(
        &self,
        stream: &str,
        (time, dated): (i128, bool),
        seq: u64,
        graph: Option<oxrdf::Term>,
        triples: Vec<[TermId; 3]>,
    ) -> NativeEvent {
        let uid = self.events.get() + 1;
        self.events.set(uid);
        let prepared = Rc::new(Prepared::new(
            EventIndex::with_values(&triples, self.values.clone()),
            uid,
            time,
        ));
        let event = Rc::new(EventData {
            uid,
            stream: self.streams.borrow_mut().id(stream),
            dated,
            time,
            seq,
            graph,
            triples,
        });
        self.handed
            .borrow_mut()
            .push_back((uid, Rc::downgrade(&event)));
        NativeEvent { event, prepared }
    }

    /// Let go of every query's callbacks; false (nothing done) while a query runs.
    fn release_callbacks(&self) -> bool {
        let taken: Vec<_> = {
            let Ok(mut queries) = self.queries.try_borrow_mut() else {
                return false;
            };
            queries
                .iter_mut()
                .map(|rt| rt.gpms_mut().release())
                .collect()
        };
        drop(taken); // with no borrow held: a finalizer may call the engine
        true
    }

    /// A handed-out event still held by something native.
    fn held_event(&self, uid: u64) -> Option<EventRef> {
        let handed = self.handed.borrow();
        let front = handed.front()?.0;
        handed
            .get(usize::try_from(uid.checked_sub(front)?).ok()?)?
            .1
            .upgrade()
    }

    /// Whether an event at `time` on `stream` is late: the clock of a query reading the
    /// stream that is past it (what `Engine._lateness` says for one query).
    fn late(&self, stream: &str, time: i128) -> Option<i128> {
        let id = self.streams.borrow_mut().id(stream);
        self.queries
            .borrow()
            .iter()
            .filter(|rt| rt.reads(id) && rt.clock != i128::MIN)
            .map(|rt| rt.clock)
            .find(|&clock| time < clock)
    }

    /// One event of a native stream fed to every query: processed by those reading its
    /// stream, the others' clocks moved.
    fn feed_event(&self, iri: &str, e: StreamEvent) -> PyResult<()> {
        let mut disposal = self.disposal.borrow_mut();
        let mut intern = |term: oxrdf::Term| {
            let (id, known) = self.dict.intern_returning(term);
            if let Some(term) = known {
                disposal.put(term);
            }
            id
        };
        let triples: Vec<[TermId; 3]> = e
            .triples
            .into_iter()
            .map(|t| {
                [
                    intern(t.subject.into()),
                    intern(t.predicate.into()),
                    intern(t.object),
                ]
            })
            .collect();
        drop(disposal);
        let prepared = self.prepare(iri, (e.time_ns, e.dated), e.seq, Some(e.graph), triples);
        let mut queries = self.queries.borrow_mut();
        for rt in queries.iter_mut() {
            if rt.reads(prepared.event.stream) {
                rt.on_event(&prepared.event, &prepared.prepared, &self.dict);
            } else {
                rt.advance_time(e.time_ns, None, &self.dict);
            }
            rt.gpms().raise_kept()?;
        }
        Ok(())
    }

    /// Whether the queries hold `PENDING_MATCHES` released matches not yet taken.
    fn matches_pending(&self) -> bool {
        self.queries
            .borrow()
            .iter()
            .map(|rt| rt.out.len())
            .sum::<usize>()
            >= PENDING_MATCHES
    }

    /// Run `f` on query `query`, then raise what a Python GPM raised meanwhile.
    fn with_query<T>(
        &self,
        query: usize,
        f: impl FnOnce(&mut QueryRuntime<Programs>, &Dictionary) -> T,
    ) -> PyResult<T> {
        let mut queries = self.queries.borrow_mut();
        let runtime = queries
            .get_mut(query)
            .ok_or_else(|| PyValueError::new_err(format!("no query {query}")))?;
        let out = f(runtime, &self.dict);
        runtime.gpms().raise_kept()?;
        Ok(out)
    }

    /// `f` on the matches query `query` released since the last take, with what names
    /// them (the native writers, `output.rs`).
    pub(crate) fn with_released<T>(
        &self,
        query: usize,
        f: impl FnOnce(Vec<MatchRecord>, &Names, &Dictionary, &Streams) -> T,
    ) -> PyResult<T> {
        let (records, names) = {
            let mut queries = self.queries.borrow_mut();
            let runtime = queries
                .get_mut(query)
                .ok_or_else(|| PyValueError::new_err(format!("no query {query}")))?;
            (
                std::mem::take(&mut runtime.out),
                runtime.gpms().names.clone(),
            )
        };
        Ok(f(records, &names, &self.dict, &self.streams.borrow()))
    }
}

#[pymethods]
impl NativeEngine {
    #[new]
    fn new() -> Self {
        NativeEngine {
            dict: Dictionary::new(),
            values: Rc::default(),
            streams: RefCell::new(Streams::new()),
            queries: RefCell::new(Vec::new()),
            events: Cell::new(0),
            handed: RefCell::new(VecDeque::new()),
            restoring: RefCell::new(None),
            disposal: RefCell::default(),
        }
    }

    /// The native half of a snapshot (`core::snapshot`, versioned binary): the dictionary,
    /// streams, held events and the states of the runtimes `queries` (native numbers, in
    /// the order `resume` will be given them). Every released match must have been taken.
    fn snapshot<'py>(&self, py: Python<'py>, queries: Vec<usize>) -> PyResult<Bound<'py, PyBytes>> {
        let runtimes = self.queries.borrow();
        let states = queries
            .iter()
            .map(|&q| {
                runtimes
                    .get(q)
                    .ok_or_else(|| format!("no query {q}"))
                    .and_then(|rt| rt.save())
            })
            .collect::<Result<Vec<_>, String>>()
            .map_err(PyValueError::new_err)?;
        let held = |uid: u64| self.held_event(uid);
        let state = EngineState::new(
            &self.dict,
            &self.streams.borrow(),
            self.events.get(),
            states,
            &held,
        )
        .and_then(|s| s.encode())
        .map_err(PyValueError::new_err)?;
        Ok(PyBytes::new(py, &state))
    }

    /// A fresh engine holding a snapshot's dictionary, streams and events: register the
    /// same plans again, in the same order, then `resume` with their numbers. ValueError
    /// for data that is not a snapshot of this format.
    #[staticmethod]
    fn from_snapshot(data: &[u8]) -> PyResult<Self> {
        let state = EngineState::decode(data).map_err(PyValueError::new_err)?;
        let engine = NativeEngine::new();
        state
            .restore_tables(&engine.dict, &mut engine.streams.borrow_mut())
            .map_err(PyValueError::new_err)?;
        let events = state.restore_events().map_err(PyValueError::new_err)?;
        engine.events.set(state.last_uid);
        *engine.restoring.borrow_mut() = Some((state.queries, events));
        Ok(engine)
    }

    /// The Python objects the engine holds, for the garbage collector: each query's
    /// callbacks. While a query runs (a callback is under way) nothing is visited, so
    /// nothing the engine holds is collected then.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Ok(queries) = self.queries.try_borrow() else {
            return Ok(());
        };
        for rt in queries.iter() {
            let programs = rt.gpms();
            visit.call(&programs.callback)?;
            visit.call(&programs.kb)?;
        }
        Ok(())
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
        self.dict.len()
    }

    /// The uids of the events something native still holds, oldest first.
    fn held(&self) -> Vec<u64> {
        self.handed
            .borrow()
            .iter()
            .filter(|(_, weak)| weak.strong_count() > 0)
            .map(|(uid, _)| *uid)
            .collect()
    }

    /// The number of query states the snapshot being restored holds.
    fn restoring(&self) -> usize {
        self.restoring.borrow().as_ref().map_or(0, |(q, _)| q.len())
    }

    /// Load the restored snapshot's query states into the runtimes `queries` (native
    /// numbers, in the snapshot's order): they continue where the snapshot was taken.
    fn resume(&self, queries: Vec<usize>) -> PyResult<()> {
        let (states, events) = self
            .restoring
            .borrow_mut()
            .take()
            .ok_or_else(|| PyValueError::new_err("no snapshot is being restored"))?;
        if states.len() != queries.len() {
            return Err(PyValueError::new_err(format!(
                "the snapshot holds {} queries, {} were registered",
                states.len(),
                queries.len()
            )));
        }
        let index = |e: &EventRef| {
            Rc::new(Prepared::new(
                EventIndex::with_values(&e.triples, self.values.clone()),
                e.uid,
                e.time,
            ))
        };
        let mut runtimes = self.queries.borrow_mut();
        for (state, q) in states.into_iter().zip(queries) {
            let runtime = runtimes
                .get_mut(q)
                .ok_or_else(|| PyValueError::new_err(format!("no query {q}")))?;
            runtime
                .load(state, &events, &index)
                .map_err(PyValueError::new_err)?;
        }
        // the restored events are handed out again (uids between them: already forgotten)
        let mut uids: Vec<&u64> = events.keys().collect();
        uids.sort_unstable();
        let mut handed = self.handed.borrow_mut();
        if let Some(&&first) = uids.first() {
            let mut next = first;
            for uid in uids {
                while next < *uid {
                    handed.push_back((next, Weak::new()));
                    next += 1;
                }
                handed.push_back((*uid, Rc::downgrade(&events[uid])));
                next = uid + 1;
            }
            while next <= self.events.get() {
                handed.push_back((next, Weak::new()));
                next += 1;
            }
        }
        Ok(())
    }

    /// Add a query from its plan (`spaseq explain --plan` JSON); its number. GPMs the
    /// native evaluator cannot run (`python`: their names) are evaluated by `callback`.
    /// ValueError when the plan is malformed or needs a callback that is not given.
    ///
    /// GRAPH blocks (their variables: the plan's `graph_vars`) have their rows asked of
    /// `kb(name, block, bound pairs)` once per distinct binding, cached until `kb_changed`.
    #[pyo3(signature = (plan_json, callback = None, kb = None))]
    fn register(
        &self,
        plan_json: &str,
        callback: Option<Py<PyAny>>,
        kb: Option<Py<PyAny>>,
    ) -> PyResult<usize> {
        let plan = Plan::from_json(plan_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut vars = VarTable::new();
        let mut gpms = Vec::new();
        for gpm in &plan.gpms {
            let blocks = &gpm.graph_vars;
            // the plan decides (the planner asked `gpm_evaluators`); one this core cannot
            // follow is refused, never second-guessed
            let refuse = |why: String| {
                PyValueError::new_err(format!(
                    "the plan cannot run here: GPM {}: {why} (plan the query again with this spaseq)",
                    gpm.name
                ))
            };
            let evaluator = gpm
                .evaluator
                .ok_or_else(|| refuse("the plan does not say which evaluator runs it".into()))?;
            if evaluator == Evaluator::Callback && callback.is_none() {
                return Err(refuse(
                    "it is evaluated by a callback, and none is given".into(),
                ));
            }
            let program = compile_as(&plan, gpm, evaluator, blocks, &mut vars, &self.dict)
                .map_err(|why| refuse(format!("the plan says {}, but {why}", evaluator.name())))?;
            gpms.push(program);
        }
        for v in plan.query.variables.iter().flatten() {
            vars.slot(v);
        }
        let names = Rc::new(Names {
            vars: vars.clone(),
            gpms: plan.gpms.iter().map(|g| g.name.clone()).collect(),
            locals: plan
                .gpms
                .iter()
                .zip(&gpms)
                .map(|(plan, gpm)| match gpm {
                    Gpm::Native(p) => p.local_slots().to_vec(),
                    Gpm::Sparql(p) => p.local_slots().to_vec(),
                    Gpm::Python => plan.local_vars.iter().filter_map(|v| vars.get(v)).collect(),
                })
                .collect(),
        });
        let programs = Programs {
            gpms,
            names,
            callback,
            error: RefCell::new(None),
            kb,
            kb_cache: RefCell::new(HashMap::new()),
            id: PROGRAMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            streams: plan
                .gpms
                .iter()
                .map(|g| {
                    let iri = oxrdf::NamedNode::new(g.stream.clone()).map_err(|e| {
                        PyValueError::new_err(format!("stream <{}>: {e}", g.stream))
                    })?;
                    Ok(self.dict.intern(iri.into()))
                })
                .collect::<PyResult<_>>()?,
            kleene: plan
                .gpms
                .iter()
                .map(|g| plan.kleene_gpms.contains(&g.name))
                .collect(),
        };
        let runtime = QueryRuntime::new(&plan, programs, vars, &mut self.streams.borrow_mut())
            .map_err(|why| PyValueError::new_err(why.0))?;
        let mut queries = self.queries.borrow_mut();
        queries.push(runtime);
        Ok(queries.len() - 1)
    }

    /// The knowledge base changed (a new store version): forget every cached KB row.
    fn kb_changed(&self) {
        for rt in self.queries.borrow().iter() {
            rt.gpms().kb_cache.borrow_mut().clear();
        }
    }

    /// The names of query `query`'s GPMs evaluated by the callback.
    fn python_gpms(&self, query: usize) -> Vec<String> {
        let queries = self.queries.borrow();
        let programs = queries[query].gpms();
        programs
            .gpms
            .iter()
            .zip(&programs.names.gpms)
            .filter(|(g, _)| matches!(g, Gpm::Python))
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// The id of a term given in N-Triples (interned on first sight).
    fn intern(&self, ntriples: &str) -> PyResult<TermId> {
        Ok(self.dict.intern(parse_term(ntriples)?))
    }

    /// A term's parts, to build it in Python: ("iri", iri, None, None), ("bnode", id, None,
    /// None) or ("literal", value, datatype, language).
    fn term_parts(&self, id: TermId) -> TermParts {
        term_parts(self.dict.get(id))
    }

    /// The N-Triples spelling of a term id.
    fn term(&self, id: TermId) -> String {
        self.dict.get(id).to_string()
    }

    /// Prepare an event: its stream IRI, time (ns), seq (order among events of one time),
    /// graph name in N-Triples, triples as a flat list of ids (s, p, o, s, p, o, ...) and
    /// whether its timestamp was written as an xsd:dateTime (`Event.dated`).
    #[pyo3(signature = (stream, time, seq, graph, triples, dated = false))]
    fn event(
        &self,
        stream: &str,
        time: i128,
        seq: u64,
        graph: Option<&str>,
        triples: Vec<TermId>,
        dated: bool,
    ) -> PyResult<NativeEvent> {
        if !triples.len().is_multiple_of(3) {
            return Err(PyValueError::new_err("triples: a multiple of 3 ids"));
        }
        let triples: Vec<[TermId; 3]> = triples
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]])
            .collect();
        let graph = graph.map(parse_term).transpose()?;
        Ok(self.prepare(stream, (time, dated), seq, graph, triples))
    }

    /// Feed up to `max` events of a replay stream straight to the queries (no Python object
    /// per event): each query reading the event's stream processes it, the others move
    /// their clock. Returns (events fed, the last one's time in ns, whether the stream
    /// ended, its error `PATH:LINE:COLUMN: message` if it ended with one). Matches wait in
    /// the queries for `take_matches`; fewer events are fed once `PENDING_MATCHES` wait.
    fn feed(
        &self,
        stream: &Bound<'_, PyReplayStream>,
        max: usize,
    ) -> PyResult<(usize, Option<i128>, bool, Option<String>)> {
        let source = stream.borrow();
        let mut fed = 0;
        let mut last = None;
        while fed < max {
            let event = match source.next_event() {
                None => return Ok((fed, last, true, None)),
                Some(Err(e)) => return Ok((fed, last, true, Some(e.to_string()))),
                Some(Ok(event)) => event,
            };
            let (iri, e) = event;
            let time = e.time_ns;
            self.feed_event(iri, e)?;
            fed += 1;
            last = Some(time);
            if self.matches_pending() {
                break;
            }
        }
        Ok((fed, last, false, None))
    }

    /// Feed the events of a live stream to the queries as they arrive (as `feed` does):
    /// waits up to `wait` seconds (the GIL released, Ctrl-C looked at) for the first, then
    /// takes only those already arrived, at most `max` (fewer once `PENDING_MATCHES`
    /// matches wait): an event never waits for others.
    /// An event earlier than the clock of a query reading its stream is late: dropped and
    /// counted when `drop_late`, else feeding stops before it. Returns (events fed, the
    /// last one's time in ns, whether the stream ended, its first error `FILE:LINE:COLUMN:
    /// message` if it ended with one, late events dropped, the late event that stopped it
    /// as (stream IRI, time ns, the query clock ns) if one did).
    #[allow(clippy::type_complexity)]
    fn feed_live(
        &self,
        py: Python<'_>,
        stream: &Bound<'_, PyLiveStream>,
        max: usize,
        wait: f64,
        drop_late: bool,
    ) -> PyResult<(
        usize,
        Option<i128>,
        bool,
        Option<String>,
        usize,
        Option<(String, i128, i128)>,
    )> {
        let source = stream.borrow();
        let (mut fed, mut dropped, mut last) = (0, 0, None);
        let mut next = source.wait(py, Some(Duration::from_secs_f64(wait.max(0.0))))?;
        loop {
            let e = match next {
                Next::Idle => break,
                Next::End(error) => {
                    return Ok((fed, last, true, error.map(|e| e.to_string()), dropped, None))
                }
                Next::Event(e, _) => e,
            };
            let iri = source.iri(e.stream);
            if let Some(clock) = self.late(iri, e.time_ns) {
                if !drop_late {
                    let late = (iri.to_owned(), e.time_ns, clock);
                    return Ok((fed, last, false, None, dropped, Some(late)));
                }
                dropped += 1;
            } else {
                let time = e.time_ns;
                self.feed_event(iri, e)?;
                fed += 1;
                last = Some(time);
            }
            if fed + dropped >= max || self.matches_pending() {
                break;
            }
            next = source.next(Some(Duration::ZERO));
        }
        Ok((fed, last, false, None, dropped, None))
    }

    /// An event the engine holds, to build it in Python: (stream IRI, time ns, dated, seq,
    /// graph name's parts as `term_parts` gives them, triples as a flat list of ids); None
    /// once nothing native holds it.
    fn event_parts(&self, uid: u64) -> Option<EventParts> {
        let e = self.held_event(uid)?;
        Some((
            self.streams.borrow().iri(e.stream).to_owned(),
            e.time,
            e.dated,
            e.seq,
            e.graph.as_ref().map(term_parts),
            e.triples.iter().flatten().copied().collect(),
        ))
    }

    /// The uids of the oldest events nothing refers to any more (no run, match or index):
    /// the caller may forget them. Stops at the first event still held.
    fn forget(&self) -> Vec<u64> {
        let mut handed = self.handed.borrow_mut();
        let mut out = Vec::new();
        while let Some((uid, weak)) = handed.front() {
            if weak.strong_count() > 0 {
                break;
            }
            out.push(*uid);
            handed.pop_front();
        }
        out
    }

    /// Query `query` processes an event of its streamset.
    fn on_event(&self, query: usize, event: &NativeEvent) -> PyResult<()> {
        self.with_query(query, |rt, dict| {
            rt.on_event(&event.event, &event.prepared, dict)
        })
    }

    /// Move query `query`'s engine clock to `time` (ns): windows may close.
    fn advance_time(&self, query: usize, time: i128) -> PyResult<()> {
        self.with_query(query, |rt, dict| rt.advance_time(time, None, dict))
    }

    fn flush(&self, query: usize) -> PyResult<()> {
        self.with_query(query, |rt, dict| rt.flush(dict))
    }

    fn close(&self, query: usize) -> PyResult<()> {
        self.with_query(query, |rt, dict| rt.close(dict))
    }

    /// The largest timestamp (ns) of the query's streams so far, None before any.
    fn clock(&self, query: usize) -> Option<i128> {
        let clock = self.queries.borrow()[query].clock;
        (clock != i128::MIN).then_some(clock)
    }

    /// The earliest time (ns) a match emitted without a new event can carry.
    fn horizon(&self, query: usize) -> Option<i128> {
        self.queries.borrow()[query].horizon()
    }

    fn footprint(&self, query: usize) -> Vec<(&'static str, usize)> {
        self.queries.borrow()[query]
            .footprint()
            .into_iter()
            .collect()
    }

    /// Counts of the work query `query` did so far (`runtime::query::Work`).
    fn work(&self, query: usize) -> Vec<(&'static str, u64)> {
        self.queries.borrow()[query]
            .work
            .counts()
            .into_iter()
            .collect()
    }

    fn runs_created(&self, query: usize) -> u64 {
        self.queries.borrow()[query].runs_created
    }

    /// The matches query `query` released since the last call, in order.
    fn take_matches(&self, query: usize) -> Vec<NativeMatch> {
        let mut queries = self.queries.borrow_mut();
        let runtime = &mut queries[query];
        let names = runtime.gpms().names.clone();
        std::mem::take(&mut runtime.out)
            .into_iter()
            .map(|record| NativeMatch {
                record,
                names: names.clone(),
            })
            .collect()
    }
}

/// GPM `gpm` of `plan` made ready for `evaluator` (the plan's choice): its compiled program
/// (GRAPH blocks reading the variables `blocks`), its body on spareval, or the callback;
/// Err says why this core cannot evaluate it so.
fn compile_as(
    plan: &Plan,
    gpm: &spaseq_core::plan::GpmPlan,
    evaluator: Evaluator,
    blocks: &[Vec<String>],
    vars: &mut VarTable,
    dict: &Dictionary,
) -> Result<Gpm, String> {
    let base = plan.query.base.as_deref();
    match evaluator {
        Evaluator::Native => {
            let mut trial = vars.clone();
            let program = GpmProgram::compile_with_graphs(gpm, blocks, &mut trial, dict, base)?;
            *vars = trial;
            Ok(Gpm::Native(program))
        }
        Evaluator::Spareval => {
            let body = plan
                .query
                .bodies
                .get(&gpm.name)
                .ok_or("the plan has no body for it")?;
            SparqlGpm::compile(gpm, body, &plan.query.prefixes, base, vars, dict)
                .map(|body| Gpm::Sparql(Box::new(body)))
        }
        Evaluator::Callback => {
            for v in gpm.variables.iter().chain(gpm.local_vars.iter()) {
                vars.slot(v);
            }
            Ok(Gpm::Python)
        }
    }
}

/// How GPM `gpm` of `plan` runs natively: its compiled program (GRAPH blocks reading the
/// variables `blocks`), else its body on spareval; Err (why neither) leaves it to Python.
/// The planner's question (`gpm_evaluators`), asked once when a query is planned.
pub fn compile_gpm(
    plan: &Plan,
    gpm: &spaseq_plan::plan::GpmPlan,
    blocks: &[Vec<String>],
    vars: &mut VarTable,
    dict: &Dictionary,
) -> Result<Gpm, String> {
    let base = plan.query.base.as_deref();
    let mut trial = vars.clone();
    let why = match GpmProgram::compile_with_graphs(gpm, blocks, &mut trial, dict, base) {
        Ok(program) => {
            *vars = trial;
            return Ok(Gpm::Native(program));
        }
        Err(why) => why,
    };
    let body = plan
        .query
        .bodies
        .get(&gpm.name)
        .ok_or_else(|| format!("{why}; the plan has no body for GPM {}", gpm.name))?;
    let prefixes = &plan.query.prefixes;
    SparqlGpm::compile(gpm, body, prefixes, base, vars, dict)
        .map(|body| Gpm::Sparql(Box::new(body)))
        .map_err(|sparql| format!("{why}; {sparql}"))
}

/// A term as (kind, value, datatype, language), what Python builds its terms from.
type TermParts = (&'static str, String, Option<String>, Option<String>);
/// An event's parts (`NativeEngine.event_parts`).
type EventParts = (String, i128, bool, u64, Option<TermParts>, Vec<TermId>);

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
        #[allow(unreachable_patterns)]
        other => ("literal", other.to_string(), None, None),
    }
}

fn parse_term(ntriples: &str) -> PyResult<oxrdf::Term> {
    oxrdf::Term::from_str(ntriples)
        .map_err(|e| PyValueError::new_err(format!("not an RDF term {ntriples:?}: {e}")))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEngine>()?;
    m.add_class::<NativeEvent>()?;
    m.add_class::<NativeMatch>()?;
    Ok(())
}
