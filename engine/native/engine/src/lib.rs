//! The engine: the term dictionary, the stream table and one runtime per registered query,
//! fed events one at a time (`feed_event`) by every way in (a replay stream, a live one, an
//! event pushed from Python), with the events' lifetimes, lateness, the knowledge base's row
//! cache and snapshots. The binding only converts: its `NativeEngine` wraps an `Engine`
//! whose `Host` calls back into Python.
//!
//! - `clocks`: the engine's clocks, the promises made about time, late events;
//! - `composition`: every query's results numbered, and queries reading other queries'
//!   output fed their events in time order;
//! - `host`: what the engine asks of its host (callback GPMs, KB rows);
//! - `programs`: a query's GPMs as the plan gives them to evaluators;
//! - `feed`: the loops that feed a replay or live stream to the queries.

pub mod clocks;
pub mod composition;
pub mod feed;
pub mod host;
pub mod programs;

pub use clocks::{
    Judged, Late, LatePolicy, Promise, Refused, Settings, Verdict, COMPACT_MIN_TERMS,
};
pub use feed::{Dropped, Fed, FeedError};
pub use host::{Host, Pairs, TakenPairs};
pub use programs::{choose_evaluator, Gpm, Names, Prepared, Programs, Refusal};

use composition::Composition;
use spaseq_automaton::snapshot::{ClockState, ComposedState, EngineState, SnapshotError};
use spaseq_automaton::Unsupported;
use spaseq_automaton::{EventData, EventRef, MatchRecord, QueryRuntime, QueryState, Streams};
use spaseq_gpm::CompileError;
use spaseq_gpm::{EventIndex, ValueCache};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_io::disposal::Disposal;
use spaseq_io::stream::StreamEvent;
use spaseq_plan::json::PlanError;
use spaseq_plan::Plan;
use std::cell::{Cell, Ref, RefCell};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::rc::{Rc, Weak};

/// Released matches the queries may hold, not yet taken, before the feed loops return
/// early so that they are written (or emitted) and dropped: a query matching many times
/// per event (skip-till-any over a wide window) would otherwise hold a whole batch's
/// matches at once, hundreds of MB, the peak growing with the worst batch of the stream.
pub const PENDING_MATCHES: usize = 1 << 14;

/// What the engine refuses, typed (the binding turns each into a Python exception).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// A plan that is not JSON of the plan format, or names something the core lacks.
    PlanFormat(PlanError),
    /// A plan this core cannot follow: a GPM's evaluator (or its stream).
    Plan { gpm: String, why: Refusal },
    /// A GPM the plan gives an evaluator that cannot compile it here (`evaluator`, the
    /// plan's name for it: `native`, `spareval`).
    Evaluator {
        gpm: String,
        evaluator: &'static str,
        error: CompileError,
    },
    /// A plan the runtime cannot run (an operator shape it lacks).
    Unsupported(Unsupported),
    /// No query of that number.
    NoQuery(usize),
    /// An event given wrongly (its triples, its graph name).
    Event(String),
    /// A snapshot that is not one, or does not fit the registered queries.
    Snapshot(SnapshotError),
    /// Queries that would read each other's output in a cycle (their numbers).
    Cycle(Vec<usize>),
    /// A query reading another query's results (`producer`'s), which span their events'
    /// hull, planned for point events only (`EngineOptions.intervals` off).
    ReadsResults { query: usize, producer: usize },
    /// An event that lasts for a query planned for point events only (boxed: errors travel
    /// in every feed's `Result`).
    Lasting(Box<LastingEvent>),
}

/// An event that lasts (its start before its end, docs/decisions.md 71) for a query planned
/// for point events only (`EngineOptions.intervals` off), which fed one would answer wrongly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastingEvent {
    pub query: usize,
    /// how messages name the query (its file and output IRI, `set_output`'s label)
    pub label: String,
    pub stream: String,
    pub graph: String,
    pub start_ns: i128,
    pub time_ns: i128,
    /// its times were written as xsd:dateTime values (the message spells them so)
    pub dated: bool,
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::PlanFormat(e) => e.fmt(f),
            EngineError::Unsupported(e) => e.fmt(f),
            EngineError::Plan { gpm, why } => write!(
                f,
                "the plan cannot run here: GPM {gpm}: {why} (plan the query again with this spaseq)"
            ),
            EngineError::Evaluator {
                gpm,
                evaluator,
                error,
            } => write!(
                f,
                "the plan cannot run here: GPM {gpm}: the plan says {evaluator}, but {error} \
                 (plan the query again with this spaseq)"
            ),
            EngineError::NoQuery(q) => write!(f, "no query {q}"),
            EngineError::Event(why) => f.write_str(why),
            EngineError::Snapshot(e) => e.fmt(f),
            EngineError::Cycle(queries) => {
                write!(f, "queries {queries:?} read each other's output in a cycle")
            }
            EngineError::ReadsResults { query, producer } => write!(
                f,
                "query {query} reads the results of query {producer}, which last (a result spans \
                 its events), and was planned for point events: plan it with intervals on \
                 (EngineOptions(intervals=True); docs/decisions.md 71)"
            ),
            EngineError::Lasting(lasting) => lasting.fmt(f),
        }
    }
}

impl std::fmt::Display for LastingEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let spell = |ns: i128| {
            let mut out = String::new();
            spaseq_output::spell::time_value(ns, self.dated, &mut out);
            out
        };
        let event = if self.graph.is_empty() {
            "an event".to_owned() // asked of before it is pushed (`Engine::late`)
        } else {
            format!("event {}", self.graph)
        };
        write!(
            f,
            "{event} of stream <{}> lasts from {} to {}, and query {} was planned for point \
             events: register it with intervals on (--intervals, EngineOptions(intervals=True); \
             docs/decisions.md 71)",
            self.stream,
            spell(self.start_ns),
            spell(self.time_ns),
            self.label
        )
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EngineError::PlanFormat(e) => Some(e),
            EngineError::Evaluator { error, .. } => Some(error),
            EngineError::Plan { why, .. } => Some(why),
            EngineError::Unsupported(e) => Some(e),
            EngineError::Snapshot(e) => Some(e),
            _ => None,
        }
    }
}

/// A query's host raised an error while it processed an event: the host keeps it, the
/// engine stopped after that query's step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostFailed {
    pub query: usize,
}

/// What `push` did with an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Fed to the queries on time for it; `new_instant`: its time was later than any before;
    /// `late_for`: the queries reading its stream it was late for, which skipped it and
    /// counted it (`LatePolicy::Drop`; by number, ascending).
    Fed {
        new_instant: bool,
        late_for: Vec<usize>,
    },
    /// Late for every query reading its stream: fed to none, counted by each of them
    /// (`late_for`) and by the engine (`ClockState::dropped_late`).
    Dropped { late_for: Vec<usize> },
}

/// Why `push` stopped: a late event (not fed), a query's host that failed while it fed the
/// event, or the host's instant hook (`E`, what it returned).
#[derive(Debug)]
pub enum Stop<E> {
    Late(Late),
    /// An event the engine does not take (one that lasts, for a query of point events).
    Refused(EngineError),
    Host(HostFailed),
    Instant(E),
}

/// An event prepared once for every query: shared with the runtimes that hold it.
#[derive(Clone)]
pub struct PreparedEvent {
    pub event: EventRef,
    pub prepared: Rc<Prepared>,
}

/// A snapshot's query states, results and composition, its events by uid and each query's
/// late count, until they are loaded.
type Restoring = (
    Vec<QueryState>,
    ComposedState,
    HashMap<u64, EventRef>,
    Vec<u64>,
);

/// Term dictionary, streams and the registered queries' runtimes.
pub struct Engine<H: Host> {
    dict: Dictionary,
    /// values of the dictionary's terms read by FILTERs from runs' bindings
    values: Rc<ValueCache>,
    streams: RefCell<Streams>,
    queries: RefCell<Vec<QueryRuntime<Programs<H>>>>,
    events: Cell<u64>,
    /// Events handed out, oldest first, until nothing refers to them any more.
    handed: RefCell<VecDeque<(u64, Weak<EventData>)>>,
    /// A snapshot being restored: its query states and events, until `resume`.
    restoring: RefCell<Option<Restoring>>,
    /// Fed terms known already, dropped on a thread of their own.
    disposal: RefCell<Disposal<oxrdf::Term>>,
    /// The engine clock, the heartbeat's promise, late events dropped (`clocks`).
    clocks: Cell<ClockState>,
    /// Per query, the late events it dropped (`clocks`, decision 64).
    late: RefCell<Vec<u64>>,
    settings: Cell<Settings>,
    /// The dictionary size at which it is compacted next (`compaction_due`).
    compact_at: Cell<usize>,
    /// Per query, whether it was unregistered: it takes no more events and makes none late.
    retired: RefCell<Vec<bool>>,
    /// The registered queries' output streams (IRI -> the query's label): never input.
    outputs: RefCell<HashMap<String, String>>,
    /// Every query's results, and the queries reading other queries' output.
    composition: RefCell<Composition>,
    /// Processing time (ns, the host's monotonic clock; `i128::MIN` before the host says):
    /// when streams went idle.
    now: Cell<i128>,
}

impl<H: Host> Default for Engine<H> {
    fn default() -> Self {
        Engine {
            dict: Dictionary::new(),
            values: Rc::default(),
            streams: RefCell::new(Streams::new()),
            queries: RefCell::new(Vec::new()),
            events: Cell::new(0),
            handed: RefCell::new(VecDeque::new()),
            restoring: RefCell::new(None),
            disposal: RefCell::default(),
            clocks: Cell::default(),
            late: RefCell::default(),
            settings: Cell::default(),
            compact_at: Cell::new(0),
            retired: RefCell::default(),
            outputs: RefCell::default(),
            composition: RefCell::default(),
            now: Cell::new(i128::MIN),
        }
    }
}

impl<H: Host> Engine<H> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn dict(&self) -> &Dictionary {
        &self.dict
    }

    pub fn streams(&self) -> Ref<'_, Streams> {
        self.streams.borrow()
    }

    /// Add a query from its plan (`spaseq explain --plan` JSON), its GPMs evaluated as the
    /// plan says (`host` evaluating the `callback` ones and answering GRAPH blocks); its
    /// number.
    pub fn register(&self, plan_json: &str, host: H) -> Result<usize, EngineError> {
        let plan = Plan::from_json(plan_json).map_err(EngineError::PlanFormat)?;
        let (programs, vars) = Programs::new(&plan, host, &self.dict)?;
        let mut runtime = QueryRuntime::new(&plan, programs, vars, &mut self.streams.borrow_mut())
            .map_err(EngineError::Unsupported)?;
        runtime.moment_chunk = self.settings.get().moment_chunk;
        self.add_results(&plan)?;
        let number = {
            let mut queries = self.queries.borrow_mut();
            queries.push(runtime);
            queries.len() - 1
        };
        self.retired.borrow_mut().push(false);
        self.late.borrow_mut().push(0);
        // it may read registered queries' output: gated then; refused (a reader of results
        // planned for points), it stays retired, so nothing is half-registered
        if let Err(refused) = self.recompose() {
            self.retired.borrow_mut()[number] = true;
            self.recompose()
                .expect("the composition was whole before this query");
            return Err(refused);
        }
        Ok(number)
    }

    /// Query `query` is unregistered: it takes no more events (a stream's feed skips it)
    /// and no longer makes an event late. Its runtime stays, numbered, until the engine is
    /// rebuilt from a snapshot that leaves it out.
    pub fn unregister(&self, query: usize) -> Result<(), EngineError> {
        *self
            .retired
            .borrow_mut()
            .get_mut(query)
            .ok_or(EngineError::NoQuery(query))? = true;
        if let Ok(mut queries) = self.queries.try_borrow_mut() {
            queries[query].drop_moment(); // its matches are no longer taken
        }
        self.recompose()
    }

    /// The knowledge base changed (a new store version): forget every cached KB row.
    pub fn kb_changed(&self) {
        for rt in self.queries.borrow().iter() {
            rt.gpms().kb_changed();
        }
    }

    /// `f` on each query's host, unless a query is running (None then: nothing done).
    pub fn try_hosts<T>(&self, mut f: impl FnMut(&H) -> T) -> Option<Vec<T>> {
        let queries = self.queries.try_borrow().ok()?;
        Some(queries.iter().map(|rt| f(&rt.gpms().host)).collect())
    }

    /// `f` on each query's host, mutably, unless a query is running (None then).
    pub fn try_hosts_mut<T>(&self, mut f: impl FnMut(&mut H) -> T) -> Option<Vec<T>> {
        let mut queries = self.queries.try_borrow_mut().ok()?;
        Some(
            queries
                .iter_mut()
                .map(|rt| f(&mut rt.gpms_mut().host))
                .collect(),
        )
    }

    /// `f` on query `query`'s host.
    pub fn with_host<T>(&self, query: usize, f: impl FnOnce(&H) -> T) -> Result<T, EngineError> {
        let queries = self.queries.borrow();
        let rt = queries.get(query).ok_or(EngineError::NoQuery(query))?;
        Ok(f(&rt.gpms().host))
    }

    /// The names of query `query`'s GPMs its host evaluates.
    pub fn callback_gpms(&self, query: usize) -> Result<Vec<String>, EngineError> {
        let queries = self.queries.borrow();
        let rt = queries.get(query).ok_or(EngineError::NoQuery(query))?;
        Ok(rt.gpms().callback_gpms())
    }

    /// An event made for the engine: numbered, indexed for joins, and remembered (weakly)
    /// so that its host side can be forgotten once nothing refers to it. It lasts over
    /// `[start, time]` (a point event: `start == time`).
    pub fn prepare(
        &self,
        stream: &str,
        (start, time, dated): (i128, i128, bool),
        seq: u64,
        graph: Option<oxrdf::Term>,
        triples: Vec<[TermId; 3]>,
    ) -> PreparedEvent {
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
            start,
            seq,
            graph,
            triples,
            used: Default::default(),
        });
        self.handed
            .borrow_mut()
            .push_back((uid, Rc::downgrade(&event)));
        PreparedEvent { event, prepared }
    }

    /// A handed-out event still held by something.
    pub fn held_event(&self, uid: u64) -> Option<EventRef> {
        let handed = self.handed.borrow();
        let front = handed.front()?.0;
        handed
            .get(usize::try_from(uid.checked_sub(front)?).ok()?)?
            .1
            .upgrade()
    }

    /// The uids of the events something still holds, oldest first.
    pub fn held(&self) -> Vec<u64> {
        self.handed
            .borrow()
            .iter()
            .filter(|(_, weak)| weak.strong_count() > 0)
            .map(|(uid, _)| *uid)
            .collect()
    }

    /// The uids of the oldest events nothing refers to any more (no run, match or index):
    /// the host may forget them. Stops at the first event still held.
    pub fn forget(&self) -> Vec<u64> {
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

    /// One event of a stream fed to every query: processed by those reading its stream,
    /// the others' clocks moved. Stops at the first query whose host failed; an event that
    /// lasts is refused whole (`EngineError::Lasting`), fed to none.
    pub fn feed_event(&self, iri: &str, e: StreamEvent) -> Result<(), FeedError> {
        self.feed_event_but(iri, e, &[])
    }

    /// `feed_event`, skipped by the queries `late_for` (it is late for them).
    pub(crate) fn feed_event_but(
        &self,
        iri: &str,
        e: StreamEvent,
        late_for: &[usize],
    ) -> Result<(), FeedError> {
        if let Some(why) = self.lasting(iri, &e) {
            return Err(FeedError::Refused(why));
        }
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
        let prepared = self.prepare(
            iri,
            (e.start_ns, e.time_ns, e.dated),
            e.seq,
            Some(e.graph),
            triples,
        );
        self.tick(e.time_ns);
        let fan = self.fan(prepared.event.stream);
        self.fan_out(&prepared, &fan, false, late_for)?;
        Ok(self.compose(&prepared, late_for)?)
    }

    /// After an input event was fed to the queries composition does not feed: the gated
    /// queries reading its stream hold it back (but those it is late for, `late_for`), and
    /// each is run as far as what it reads allows.
    fn compose(&self, event: &PreparedEvent, late_for: &[usize]) -> Result<(), HostFailed> {
        if !self.composition.borrow().any_gate() {
            return Ok(());
        }
        self.hold_input(event, late_for);
        self.pump(self.clocks.get().clock, false)
    }

    /// Event `event` pushed to the queries. It is judged first (`clocks`): under
    /// `LatePolicy::Error` an event late for any query reading its stream stops here, whole;
    /// under `LatePolicy::Drop` the queries it is late for skip it and count it, and one late
    /// for all of them is fed to none (`Pushed::Dropped`). At a new instant `on_instant` is
    /// called first (`new_instant`). Then those reading its stream process it, the others
    /// move their clocks to its time unless `own_clocks` (decision 40), and the queries
    /// reading other queries' output are run as far as it allows (`composition`). Stops at
    /// the first query whose host failed.
    pub fn push<E>(
        &self,
        event: &PreparedEvent,
        on_instant: impl FnOnce(i128) -> Result<(), E>,
    ) -> Result<Pushed, Stop<E>> {
        let e = &event.event;
        if e.lasts() {
            let graph = || {
                e.graph
                    .as_ref()
                    .map_or("(unnamed)".into(), ToString::to_string)
            };
            if let Some(why) = self.lasting_at(e.stream, graph, (e.start, e.time, e.dated)) {
                return Err(Stop::Refused(why));
            }
        }
        let queries = self.fan(e.stream);
        let queries = &queries[..];
        let mut late_for = Vec::new();
        // only an event at or before the engine clock can be late
        if e.time <= self.clocks.get().clock {
            let judged = self.judged(e.stream, e.time, e.dated);
            if let Some(late) = judged.first.clone() {
                if self.settings.get().late == LatePolicy::Error {
                    return Err(Stop::Late(late));
                }
                self.count_late(&judged);
                if judged.all {
                    return Ok(Pushed::Dropped {
                        late_for: judged.late_for,
                    });
                }
                late_for = judged.late_for;
            }
        }
        let new_instant = e.time > self.clocks.get().clock;
        if new_instant {
            self.new_instant(e.stream, e.time, queries, on_instant)?;
            self.tick(e.time);
        }
        let own_clocks = self.settings.get().own_clocks;
        self.fan_out(event, queries, own_clocks, &late_for)
            .and_then(|()| self.compose(event, &late_for))
            .map_err(Stop::Host)?;
        Ok(Pushed::Fed {
            new_instant,
            late_for,
        })
    }

    /// Err(NoQuery) for a number that is no registered query's.
    pub(crate) fn check_queries(&self, queries: &[usize]) -> Result<(), EngineError> {
        let all = self.queries.borrow().len();
        match queries.iter().find(|&&q| q >= all) {
            Some(&q) => Err(EngineError::NoQuery(q)),
            None => Ok(()),
        }
    }

    /// The one fan-out every way in goes through (`fan`: the queries, in order): each
    /// query reading the event's stream processes it unless it is late for it (`late_for`:
    /// it skips it), the others move their clocks to its time unless `own_clocks`; each
    /// query's released matches are numbered then.
    fn fan_out(
        &self,
        event: &PreparedEvent,
        queries: &[usize],
        own_clocks: bool,
        late_for: &[usize],
    ) -> Result<(), HostFailed> {
        let mut runtimes = self.queries.borrow_mut();
        let mut c = self.composition.borrow_mut();
        for &query in queries {
            let rt = &mut runtimes[query];
            if rt.reads(event.event.stream) {
                if late_for.contains(&query) {
                    continue;
                }
                rt.on_event(&event.event, &event.prepared, &self.dict);
            } else if !own_clocks {
                rt.advance_time(event.event.time, None, &self.dict);
            }
            self.settled(rt, query, &mut c)?;
        }
        Ok(())
    }

    /// Every query's step (`step` on the runtime) after a promise about time (a heartbeat,
    /// a flush, the end of input), the queries composition does not feed in registration
    /// order, then the gated ones as that allows.
    pub(crate) fn every_query(
        &self,
        mut step: impl FnMut(&mut QueryRuntime<Programs<H>>, &Dictionary),
    ) -> Result<(), HostFailed> {
        let ungated = self.ungated();
        let mut runtimes = self.queries.borrow_mut();
        let mut c = self.composition.borrow_mut();
        for query in ungated {
            let rt = &mut runtimes[query];
            step(rt, &self.dict);
            self.settled(rt, query, &mut c)?;
        }
        Ok(())
    }

    /// No more events will come at the current timestamp (`flush()`): every query runs its
    /// deferred work now (an event at or before it is late from then on).
    pub fn flush(&self) -> Result<(), HostFailed> {
        self.every_query(|rt, dict| rt.flush(dict))?;
        self.pump(self.clocks.get().clock, true)
    }

    /// End of input: every window closes (trailing negations complete), the gated queries
    /// after every event they held back.
    pub fn close(&self) -> Result<(), HostFailed> {
        self.every_query(|rt, dict| rt.close(dict))?;
        self.close_gates()
    }

    /// Whether the queries hold `PENDING_MATCHES` released matches not yet taken, or a
    /// moment whose matches are made as they are taken (`take_matches`).
    pub fn matches_pending(&self) -> bool {
        let queries = self.queries.borrow();
        let retired = self.retired.borrow();
        let live = || queries.iter().zip(retired.iter()).filter(|(_, r)| !**r);
        live().any(|(rt, _)| rt.moment_pending())
            || live().map(|(rt, _)| rt.out.len()).sum::<usize>() >= PENDING_MATCHES
    }

    /// Whether query `query` streams a moment: its matches are released as they are taken,
    /// a chunk per `take_matches`, until this is false.
    pub fn moment_pending(&self, query: usize) -> Result<bool, EngineError> {
        self.query(query, QueryRuntime::moment_pending)
    }

    /// Query `query`'s state, read.
    pub fn query<T>(
        &self,
        query: usize,
        f: impl FnOnce(&QueryRuntime<Programs<H>>) -> T,
    ) -> Result<T, EngineError> {
        let queries = self.queries.borrow();
        Ok(f(queries.get(query).ok_or(EngineError::NoQuery(query))?))
    }

    /// The matches query `query` released since the last take, with what names them.
    pub fn take_matches(&self, query: usize) -> Result<(Vec<MatchRecord>, Rc<Names>), EngineError> {
        let mut queries = self.queries.borrow_mut();
        let runtime = queries.get_mut(query).ok_or(EngineError::NoQuery(query))?;
        if runtime.out.is_empty() {
            runtime.more(&self.dict); // a streamed moment's next chunk
        }
        let mut c = self.composition.borrow_mut();
        self.settle(runtime, query, &mut c);
        c.results_taken(query);
        Ok((
            std::mem::take(&mut runtime.out),
            runtime.gpms().names.clone(),
        ))
    }

    /// The clock (ns) of query `query`, None before any event.
    pub fn clock(&self, query: usize) -> Result<Option<i128>, EngineError> {
        self.query(query, |rt| (rt.clock != i128::MIN).then_some(rt.clock))
    }

    /// The sizes of what query `query` holds.
    pub fn footprint(&self, query: usize) -> Result<BTreeMap<&'static str, usize>, EngineError> {
        self.query(query, |rt| rt.footprint())
    }

    /// The native half of a snapshot (`snapshot`, versioned binary): the dictionary,
    /// streams, held events and the states of the runtimes `queries` (in the order
    /// `resume` will be given them). Every released match must have been taken.
    pub fn snapshot(&self, queries: &[usize]) -> Result<Vec<u8>, EngineError> {
        let runtimes = self.queries.borrow();
        let states = queries
            .iter()
            .map(|&q| {
                runtimes
                    .get(q)
                    .ok_or(EngineError::NoQuery(q))
                    .and_then(|rt| rt.save().map_err(EngineError::Snapshot))
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        drop(runtimes);
        let held = |uid: u64| self.held_event(uid);
        let mut state = EngineState::new(
            &self.dict,
            &self.streams.borrow(),
            self.events.get(),
            self.clocks.get(),
            states,
            self.composed_state(queries),
            &held,
        )
        .map_err(EngineError::Snapshot)?;
        state.late = queries.iter().map(|&q| self.late.borrow()[q]).collect();
        state.encode().map_err(EngineError::Snapshot)
    }

    /// A fresh engine holding a snapshot's dictionary, streams and events: register the
    /// same plans again, in the same order, then `resume` with their numbers.
    pub fn from_snapshot(data: &[u8]) -> Result<Self, EngineError> {
        let state = EngineState::decode(data).map_err(EngineError::Snapshot)?;
        let engine = Engine::new();
        state
            .restore_tables(&engine.dict, &mut engine.streams.borrow_mut())
            .map_err(EngineError::Snapshot)?;
        let events = state.restore_events().map_err(EngineError::Snapshot)?;
        engine.events.set(state.last_uid);
        engine.clocks.set(state.clocks);
        engine.compact_at.set(2 * engine.dict.len());
        *engine.restoring.borrow_mut() = Some((state.queries, state.composed, events, state.late));
        Ok(engine)
    }

    /// The number of query states the snapshot being restored holds.
    pub fn restoring(&self) -> usize {
        self.restoring
            .borrow()
            .as_ref()
            .map_or(0, |(q, _, _, _)| q.len())
    }

    /// Load the restored snapshot's query states into the runtimes `queries` (in the
    /// snapshot's order): they continue where the snapshot was taken.
    pub fn resume(&self, queries: &[usize]) -> Result<(), EngineError> {
        let (states, composed, events, late) = self
            .restoring
            .borrow_mut()
            .take()
            .ok_or(EngineError::Snapshot(SnapshotError::NotRestoring))?;
        if states.len() != queries.len() || late.len() != queries.len() {
            return Err(EngineError::Snapshot(SnapshotError::Queries {
                held: states.len(),
                registered: queries.len(),
            }));
        }
        let index = |e: &EventRef| {
            Rc::new(Prepared::new(
                EventIndex::with_values(&e.triples, self.values.clone()),
                e.uid,
                e.time,
            ))
        };
        let mut runtimes = self.queries.borrow_mut();
        for (state, &q) in states.into_iter().zip(queries) {
            let runtime = runtimes.get_mut(q).ok_or(EngineError::NoQuery(q))?;
            runtime
                .load(state, &events, &index)
                .map_err(EngineError::Snapshot)?;
        }
        drop(runtimes);
        let mut counts = self.late.borrow_mut();
        for (count, &q) in late.into_iter().zip(queries) {
            counts[q] = count;
        }
        drop(counts);
        self.resume_composed(composed, queries, &events, &index)
            .map_err(EngineError::Snapshot)?;
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
}
