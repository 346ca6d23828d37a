//! A query's results, and queries reading other queries' output (SEMANTICS.md "Composition",
//! docs/decisions.md 15 and 60).
//!
//! Every released match of every query is numbered here, once, in release order
//! (`MatchRecord::number`): SELECT's DISTINCT drops the later matches of a projected row (of
//! a mapping, for a CONSTRUCT query), the others are the query's 1st, 2nd, ... result, and
//! the k-th is the graph `<output#match-k>` of the query's output stream (`derive.rs`).
//!
//! A query reading another query's output stream is *gated*: the events it reads, input and
//! derived alike, wait in a buffer ordered by (time, arrival) and are released to it only up
//! to the watermark of every query it reads, the earliest time a result still to come from
//! that query can carry. A query with a LATENESS is gated too (decision 63): its input
//! events wait until its watermark, the latest time seen on each stream it reads minus the
//! lateness (the least over its streams), passes them, so that input out of order by up to
//! the lateness is evaluated in time order. A derived event lasts over its match's hull (a reader
//! is planned for events that last) and ends at its match's time, which for a deferred match
//! (trailing negation, lazy conjunction, a timer) is earlier than the clock; holding
//! the reader back makes it see its events in time order anyway, so a derived event is never
//! late and nothing is dropped. Gated queries run in dependency order, producers first, ties
//! in registration order.

use crate::{Engine, EngineError, Host, HostFailed, Names, PreparedEvent, Programs};
use oxrdf::Term;
use spaseq_automaton::event::StreamId;
use spaseq_automaton::snapshot::{ComposedState, GateState, ResultsState, TermState};
use spaseq_automaton::{EventRef, MatchRecord, QueryRuntime, SnapshotError};
use spaseq_gpm::vars::{Slot, VarTable};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_output::derive::{Derive, Taken, TemplateTerm};
use spaseq_output::{row_slots, TimeFormat};
use spaseq_plan::algebra::PatternTerm;
use spaseq_plan::Plan;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::rc::Rc;

/// A limit past every time: a gate released to it has no more events to wait for.
const INF: i128 = i128::MAX;

/// What a query's results are made of, from its plan: the projection, DISTINCT and, for a
/// CONSTRUCT query, its template.
struct Shape {
    /// SELECT's variables, without repeats (None: `*` and CONSTRUCT, every bound variable).
    select: Option<Vec<String>>,
    /// DISTINCT compares the projected row (`Some(false)`), the whole mapping (a CONSTRUCT
    /// query, `Some(true)`), or nothing (None).
    distinct: Option<bool>,
    /// A CONSTRUCT query's template (its variables in order of first mention, the triples).
    template: Option<(Vec<String>, Vec<[TemplateTerm; 3]>)>,
    /// LATENESS (ns; 0: none).
    lateness: i128,
}

impl Shape {
    fn of(plan: &Plan) -> Result<Shape, EngineError> {
        let info = &plan.query;
        let construct = info.form == "construct";
        let select = match (&info.variables, construct) {
            (Some(vars), false) => {
                let mut unique: Vec<String> = Vec::new();
                for v in vars {
                    if !unique.contains(v) {
                        unique.push(v.clone());
                    }
                }
                Some(unique)
            }
            _ => None,
        };
        let template = construct.then(|| template(&info.template)).transpose()?;
        Ok(Shape {
            select,
            distinct: info.distinct.then_some(construct),
            template,
            lateness: i128::try_from(info.lateness).unwrap_or(i128::MAX),
        })
    }
}

/// A CONSTRUCT template as `Derive` takes it: its variables numbered in order of first
/// mention, a blank node of the template (a variable named `_:label`) fresh per result.
fn template(
    patterns: &[spaseq_plan::algebra::TriplePattern],
) -> Result<(Vec<String>, Vec<[TemplateTerm; 3]>), EngineError> {
    let mut vars: Vec<String> = Vec::new();
    let mut fresh: Vec<String> = Vec::new();
    let mut term = |t: &PatternTerm| -> Result<TemplateTerm, EngineError> {
        Ok(match t {
            PatternTerm::Var(name) if name.starts_with("_:") => {
                TemplateTerm::Fresh(position_or_push(&mut fresh, name))
            }
            PatternTerm::Var(name) => TemplateTerm::Var(position_or_push(&mut vars, name)),
            PatternTerm::Term(t) => TemplateTerm::Term(
                spaseq_gpm::to_oxrdf(t)
                    .map_err(|e| EngineError::Event(format!("the CONSTRUCT template: {e}")))?,
            ),
            PatternTerm::Path(_) => {
                return Err(EngineError::Event(
                    "the CONSTRUCT template holds a property path".to_owned(),
                ))
            }
        })
    };
    let triples = patterns
        .iter()
        .map(|p| Ok([term(&p.subject)?, term(&p.predicate)?, term(&p.object)?]))
        .collect::<Result<Vec<_>, EngineError>>()?;
    Ok((vars, triples))
}

fn position_or_push(names: &mut Vec<String>, name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or_else(|| {
        names.push(name.to_owned());
        names.len() - 1
    })
}

/// A query's results so far: their count and DISTINCT's rows seen.
#[derive(Default)]
struct Results {
    count: u64,
    /// The rows DISTINCT kept, as terms (ids do not outlive a dictionary compaction).
    seen: HashSet<Vec<Option<Term>>>,
    /// The slots DISTINCT compares, resolved on the first match.
    key: Option<Vec<Option<Slot>>>,
    /// The query's released matches numbered so far (of those not yet taken).
    numbered: usize,
}

/// A query's output stream: its id and how its results become graphs.
struct Output {
    iri: String,
    stream: StreamId,
    derive: Derive,
}

/// An event a gated query holds back, ordered by (time, arrival).
struct Held {
    time: i128,
    seq: u64,
    event: PreparedEvent,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.time, self.seq).cmp(&(other.time, other.seq))
    }
}

/// A query reading other queries' output: what it reads and what it holds back.
struct Gate {
    query: usize,
    /// The queries whose output it reads.
    upstream: Vec<usize>,
    /// The input streams it reads (not outputs).
    raw: Vec<StreamId>,
    /// Its LATENESS (ns; 0: its input is released to the engine clock).
    lateness: i128,
    buffer: BinaryHeap<Reverse<Held>>,
    /// Its runtime has been run to here (`i128::MIN` before, `INF` once closed).
    limit: i128,
}

/// Every query's results and output stream, and the gated queries in dependency order.
#[derive(Default)]
pub(crate) struct Composition {
    shapes: Vec<Shape>,
    results: Vec<Results>,
    outputs: Vec<Option<Output>>,
    /// The gated queries, producers before their readers.
    gates: Vec<Gate>,
    /// Per query, its gate's index.
    gate_of: Vec<Option<usize>>,
    /// Per query, the gates reading its output.
    readers: Vec<Vec<usize>>,
    /// The queries an event of a stream is fed to (by stream id), in order: made on first
    /// use, forgotten when queries change.
    fan: HashMap<StreamId, Rc<[usize]>>,
    /// The last arrival number given to an event held back.
    seq: u64,
    /// The latest time seen on each input stream (what a LATENESS watermark is measured from).
    seen: HashMap<StreamId, i128>,
    /// The processing time each input stream last sent an event at (idleness).
    arrived: HashMap<StreamId, i128>,
}

impl Composition {
    /// Whether query `query` is gated.
    pub(crate) fn gated(&self, query: usize) -> bool {
        self.gate_of.get(query).copied().flatten().is_some()
    }

    /// Whether any query is gated.
    pub(crate) fn any_gate(&self) -> bool {
        !self.gates.is_empty()
    }

    /// Query `query`'s released matches were taken (all numbered): none left to number.
    pub(crate) fn results_taken(&mut self, query: usize) {
        self.results[query].numbered = 0;
    }
}

impl<H: Host> Engine<H> {
    /// Note a newly registered query's results (its plan's projection, DISTINCT, template).
    pub(crate) fn add_results(&self, plan: &Plan) -> Result<(), EngineError> {
        let shape = Shape::of(plan)?;
        let mut c = self.composition.borrow_mut();
        c.shapes.push(shape);
        c.results.push(Results::default());
        c.outputs.push(None);
        c.gate_of.push(None);
        c.readers.push(Vec::new());
        c.fan.clear();
        Ok(())
    }

    /// `iri` is query `query`'s output stream, `label` (its file and IRI) naming it in
    /// messages: an event pushed on it is refused (`Refused::Output`), and a query reading
    /// it is gated from now on. Err for an IRI that is not one, or queries that would read
    /// each other's output in a cycle (nothing changed then).
    pub fn set_output(&self, query: usize, iri: &str, label: &str) -> Result<(), EngineError> {
        self.check_queries(&[query])?;
        let template = self.composition.borrow().shapes[query].template.clone();
        let derive =
            Derive::new(iri.to_owned(), template.map(|(_, t)| t)).map_err(EngineError::Event)?;
        let stream = self.streams.borrow_mut().id(iri);
        let previous = self.composition.borrow_mut().outputs[query].replace(Output {
            iri: iri.to_owned(),
            stream,
            derive,
        });
        if let Err(e) = self.recompose() {
            self.composition.borrow_mut().outputs[query] = previous;
            return Err(e);
        }
        let mut outputs = self.outputs.borrow_mut();
        if let Some(old) = previous.filter(|o| o.iri != iri) {
            outputs.remove(&old.iri); // the query's output stream changed: the old one is free
        }
        outputs.insert(iri.to_owned(), label.to_owned());
        Ok(())
    }

    /// Query `query`'s output stream IRI, None when the host has not said it.
    pub fn output_iri(&self, query: usize) -> Option<String> {
        let c = self.composition.borrow();
        c.outputs.get(query)?.as_ref().map(|o| o.iri.clone())
    }

    /// How messages name query `query`: the label its output was set with (its file and
    /// output IRI), else its number.
    pub fn query_label(&self, query: usize) -> String {
        self.output_iri(query)
            .and_then(|iri| self.outputs.borrow().get(&iri).cloned())
            .unwrap_or_else(|| query.to_string())
    }

    /// The registered queries in the order their results are released to the host: those
    /// composition does not feed, in registration order, then the gated ones in dependency
    /// order (a producer's results before those of the queries reading them).
    pub fn release_order(&self) -> Vec<usize> {
        let mut order = self.ungated();
        order.extend(self.composition.borrow().gates.iter().map(|g| g.query));
        order
    }

    /// `iri` is no query's output stream any more.
    pub fn unregister_output(&self, iri: &str) {
        self.outputs.borrow_mut().remove(iri);
        {
            let mut c = self.composition.borrow_mut();
            for out in c.outputs.iter_mut() {
                if out.as_ref().is_some_and(|o| o.iri == iri) {
                    *out = None;
                }
            }
        }
        self.recompose()
            .expect("a composition without an output has no new cycle");
    }

    /// Which registered queries are gated, in which order, reading whom: from the output
    /// streams and what each query reads. A query gated before keeps what it holds.
    pub(crate) fn recompose(&self) -> Result<(), EngineError> {
        let runtimes = self.queries.borrow();
        let retired = self.retired.borrow();
        let streams = self.streams.borrow().len() as StreamId;
        let mut c = self.composition.borrow_mut();
        let n = runtimes.len();
        let active = |q: usize| !retired[q];
        let producer: HashMap<StreamId, usize> = c
            .outputs
            .iter()
            .enumerate()
            .filter(|(q, _)| active(*q))
            .filter_map(|(q, o)| o.as_ref().map(|o| (o.stream, q)))
            .collect();
        let mut upstream: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut raw: Vec<Vec<StreamId>> = vec![Vec::new(); n];
        for q in (0..n).filter(|&q| active(q)) {
            for s in (0..streams).filter(|&s| runtimes[q].reads(s)) {
                match producer.get(&s) {
                    Some(&p) => upstream[q].push(p),
                    None => raw[q].push(s),
                }
            }
        }
        // a reader of results takes events that last (told once no cycle is the first error)
        let points = (0..n).find_map(|q| {
            let p = *upstream[q].first()?;
            let refused = EngineError::ReadsResults {
                query: q,
                producer: p,
            };
            (!runtimes[q].takes_lasting()).then_some(refused)
        });
        // dependency order, level by level (registration order within a level)
        let mut done = vec![false; n];
        let mut order: Vec<usize> = Vec::new();
        let mut left: Vec<usize> = (0..n).filter(|&q| active(q)).collect();
        while !left.is_empty() {
            let ready: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&q| upstream[q].iter().all(|&p| done[p]))
                .collect();
            if ready.is_empty() {
                return Err(EngineError::Cycle(left));
            }
            for &q in &ready {
                done[q] = true;
            }
            left.retain(|q| !done[*q]);
            order.extend(ready);
        }
        if let Some(refused) = points {
            return Err(refused);
        }
        let mut old: HashMap<usize, Gate> = c.gates.drain(..).map(|g| (g.query, g)).collect();
        let mut gates = Vec::new();
        for q in order {
            let lateness = c.shapes[q].lateness;
            if upstream[q].is_empty() && lateness == 0 {
                continue;
            }
            let mut gate = old.remove(&q).unwrap_or(Gate {
                query: q,
                upstream: Vec::new(),
                raw: Vec::new(),
                lateness,
                buffer: BinaryHeap::new(),
                limit: i128::MIN,
            });
            gate.upstream = std::mem::take(&mut upstream[q]);
            gate.raw = std::mem::take(&mut raw[q]);
            gates.push(gate);
        }
        c.gate_of = vec![None; n];
        c.readers = vec![Vec::new(); n];
        for (i, gate) in gates.iter().enumerate() {
            c.gate_of[gate.query] = Some(i);
            for &p in &gate.upstream {
                c.readers[p].push(i);
            }
        }
        c.gates = gates;
        c.fan.clear();
        Ok(())
    }

    /// The queries an event of stream `stream` is fed to, in order (gated queries are fed
    /// by composition): those reading it first, then the others, registration order within
    /// each.
    pub(crate) fn fan(&self, stream: StreamId) -> Rc<[usize]> {
        if let Some(fan) = self.composition.borrow().fan.get(&stream) {
            return fan.clone();
        }
        let runtimes = self.queries.borrow();
        let (mut order, others): (Vec<usize>, Vec<usize>) = self
            .ungated()
            .into_iter()
            .partition(|&q| runtimes[q].reads(stream));
        order.extend(others);
        let fan: Rc<[usize]> = order.into();
        self.composition
            .borrow_mut()
            .fan
            .insert(stream, fan.clone());
        fan
    }

    /// The queries composition does not feed (registered, not gated), in registration order.
    pub(crate) fn ungated(&self) -> Vec<usize> {
        let retired = self.retired.borrow();
        let c = self.composition.borrow();
        (0..retired.len())
            .filter(|&q| !retired[q] && !c.gated(q))
            .collect()
    }

    /// Number query `query`'s released matches not numbered yet and, when gated queries read
    /// its output, hold each result back for them as an event of its output stream.
    pub(crate) fn settle(
        &self,
        rt: &mut QueryRuntime<Programs<H>>,
        query: usize,
        c: &mut Composition,
    ) {
        if !c.readers[query].is_empty() {
            rt.finish_moment(&self.dict); // its readers take each result as an event now
        }
        let from = c.results[query].numbered;
        if from == rt.out.len() {
            return;
        }
        let names = rt.gpms().names.clone();
        let shape = &c.shapes[query];
        let results = &mut c.results[query];
        for m in &mut rt.out[from..] {
            number(m, shape, results, &names.vars, &self.dict);
        }
        results.numbered = rt.out.len();
        if c.readers[query].is_empty() {
            return;
        }
        for i in from..rt.out.len() {
            let m = &rt.out[i];
            if m.number == 0 {
                continue;
            }
            c.seq += 1;
            let event = self.derived_event(c, query, &names, m, c.seq);
            for g in c.readers[query].clone() {
                c.gates[g].buffer.push(Reverse(Held {
                    time: m.time,
                    seq: event.event.seq,
                    event: event.clone(),
                }));
            }
        }
    }

    /// The result `m` of query `query` as an event of its output stream (arrival `seq`): its
    /// graph, named `<output#match-k>`, over the match's hull (`start`, `time`), dated when
    /// every event it took was (as the input wrote them).
    fn derived_event(
        &self,
        c: &Composition,
        query: usize,
        names: &Names,
        m: &MatchRecord,
        seq: u64,
    ) -> PreparedEvent {
        let out = c.outputs[query]
            .as_ref()
            .expect("a query read by others has an output");
        let shape = &c.shapes[query];
        let dict = &self.dict;
        let vars = &names.vars;
        let bound = |slot: Option<Slot>| slot.and_then(|s| m.mu.get(s).copied().flatten());
        let values: Vec<Option<&Term>> = match &shape.template {
            Some((template_vars, _)) => template_vars
                .iter()
                .map(|v| bound(vars.get(v)).map(|id| dict.get(id)))
                .collect(),
            None => Vec::new(),
        };
        let row: Vec<(&str, &Term)> = row_slots(shape.select.as_deref(), vars)
            .into_iter()
            .filter_map(|(v, slot)| bound(slot).map(|id| (v, dict.get(id))))
            .collect();
        let streams = self.streams.borrow();
        let chain = spaseq_automaton::Node::chain(&m.node);
        let taken: Vec<Taken<'_>> = chain
            .iter()
            .map(|t| Taken {
                atom: &names.gpms[t.gpm],
                stream: streams.iri(t.event.stream),
                time: t.event.time,
                dated: t.event.dated,
                graph: t.event.graph.as_ref(),
            })
            .collect();
        let dated = TimeFormat::Input.dated(m);
        let name = out.derive.match_name(m.number);
        let triples = out
            .derive
            .graph(&name, (m.time, m.start, dated), &values, &row, &taken);
        drop(taken);
        drop(streams);
        let ids: Vec<[TermId; 3]> = triples
            .into_iter()
            .map(|t| {
                [
                    dict.intern(t.subject.into()),
                    dict.intern(t.predicate.into()),
                    dict.intern(t.object),
                ]
            })
            .collect();
        // the match's hull: its readers are planned for events that last (`recompose`)
        self.prepare(
            &out.iri,
            (m.start, m.time, dated),
            seq,
            Some(name.into()),
            ids,
        )
    }

    /// An input event for the gated queries reading its stream but those it is late for
    /// (`late_for`): held back (and its time noted as its stream's latest, for LATENESS
    /// watermarks). Called only when some query is gated (`Engine::compose`).
    pub(crate) fn hold_input(&self, event: &PreparedEvent, late_for: &[usize]) {
        let mut c = self.composition.borrow_mut();
        let stream = event.event.stream;
        let seen = c.seen.entry(stream).or_insert(i128::MIN);
        *seen = (*seen).max(event.event.time);
        c.arrived.insert(stream, self.now.get());
        let mut seq = c.seq;
        for gate in c
            .gates
            .iter_mut()
            .filter(|g| g.raw.contains(&stream) && !late_for.contains(&g.query))
        {
            seq += 1;
            gate.buffer.push(Reverse(Held {
                time: event.event.time,
                seq,
                event: event.clone(),
            }));
        }
        c.seq = seq;
    }

    /// Release to each gated query, in dependency order, its events up to the watermark of
    /// what it reads (`frontier`: the engine clock, before which no input event comes); with
    /// `flush`, a gated query released to the frontier is flushed too.
    pub(crate) fn pump(&self, frontier: i128, flush: bool) -> Result<(), HostFailed> {
        let mut runtimes = self.queries.borrow_mut();
        let mut c = self.composition.borrow_mut();
        let heartbeat = self.clocks.get().heartbeat;
        let (now, idle) = (self.now.get(), self.settings.get().idle_timeout);
        for g in 0..c.gates.len() {
            let gate = &c.gates[g];
            let mut limit = match (gate.raw.is_empty(), gate.lateness) {
                (true, _) => INF,
                (false, 0) => frontier,
                (false, lateness) => {
                    let silent = |s: &StreamId| {
                        now != i128::MIN
                            && c.arrived
                                .get(s)
                                .is_some_and(|a| now - a >= idle.unwrap_or(lateness))
                    };
                    late_watermark(&gate.raw, lateness, &c.seen, silent).max(heartbeat)
                }
            };
            for &p in &gate.upstream {
                limit = limit.min(watermark(&runtimes, &c, p, frontier));
            }
            self.release(&mut runtimes, &mut c, g, limit)?;
            if flush && limit >= frontier {
                let q = c.gates[g].query;
                runtimes[q].flush(&self.dict);
                self.settled(&mut runtimes[q], q, &mut c)?;
            }
        }
        Ok(())
    }

    /// End of input for the gated queries: each, in dependency order, is given every event
    /// it holds back and closed.
    pub(crate) fn close_gates(&self) -> Result<(), HostFailed> {
        let mut runtimes = self.queries.borrow_mut();
        let mut c = self.composition.borrow_mut();
        for g in 0..c.gates.len() {
            self.release(&mut runtimes, &mut c, g, INF)?;
            let q = c.gates[g].query;
            runtimes[q].close(&self.dict);
            self.settled(&mut runtimes[q], q, &mut c)?;
        }
        Ok(())
    }

    /// Gate `g`'s events up to `limit`, in (time, arrival) order, then its clock to `limit`.
    fn release(
        &self,
        runtimes: &mut [QueryRuntime<Programs<H>>],
        c: &mut Composition,
        g: usize,
        limit: i128,
    ) -> Result<(), HostFailed> {
        let q = c.gates[g].query;
        loop {
            let gate = &mut c.gates[g];
            if gate.buffer.peek().is_none_or(|Reverse(h)| h.time > limit) {
                break;
            }
            let Some(Reverse(held)) = gate.buffer.pop() else {
                break;
            };
            let rt = &mut runtimes[q];
            rt.on_event(&held.event.event, &held.event.prepared, &self.dict);
            self.settled(rt, q, c)?;
        }
        if limit > c.gates[g].limit {
            c.gates[g].limit = limit;
            if limit < INF {
                let rt = &mut runtimes[q];
                rt.advance_time(limit, None, &self.dict);
                self.settled(rt, q, c)?;
            }
        }
        Ok(())
    }

    /// `settle` after a step of query `query`; Err when its host failed during the step.
    pub(crate) fn settled(
        &self,
        rt: &mut QueryRuntime<Programs<H>>,
        query: usize,
        c: &mut Composition,
    ) -> Result<(), HostFailed> {
        self.settle(rt, query, c);
        if rt.gpms().host.failed() {
            return Err(HostFailed { query });
        }
        Ok(())
    }

    /// The processing time is `now` (ns, the host's monotonic clock): what idleness is
    /// measured by. A stream seen before the host first said (a restored snapshot's) counts
    /// as having sent its last event now.
    pub fn set_now(&self, now: i128) {
        self.now.set(now);
        let mut c = self.composition.borrow_mut();
        if c.arrived.len() != c.seen.len() {
            let seen: Vec<StreamId> = c.seen.keys().copied().collect();
            for s in seen {
                c.arrived.entry(s).or_insert(now);
            }
        }
    }

    /// Forget when each stream last sent (a snapshot restored in another process, whose
    /// processing times are on another clock): they count as sending at the next `set_now`.
    pub fn forget_arrivals(&self) {
        self.composition.borrow_mut().arrived.clear();
    }

    /// Processing time passed with no event (the host calls it while input is quiet): the
    /// queries with a LATENESS are run as far as their watermarks now allow, streams idle for
    /// the idle timeout no longer holding them back.
    pub fn idle_tick(&self) -> Result<(), HostFailed> {
        if !self.composition.borrow().any_gate() {
            return Ok(());
        }
        self.pump(self.clocks.get().clock, false)
    }

    /// The earliest time of an event a gated query still holds back (None when none holds
    /// any): what an earlier event is still needed for is done.
    pub fn gates_floor(&self) -> Option<i128> {
        let c = self.composition.borrow();
        c.gates
            .iter()
            .filter_map(|g| g.buffer.peek().map(|Reverse(h)| h.time))
            .min()
    }

    /// The gated queries reading input stream `stream` for which an event at `time` is late
    /// (each has been run past it, or flushed at or after it), in dependency order: each
    /// query's number, the time it was run or flushed to, and whether it reads other
    /// queries' output (else it is held by its LATENESS).
    pub(crate) fn composed_late(&self, stream: StreamId, time: i128) -> Vec<(usize, i128, bool)> {
        let c = self.composition.borrow();
        if c.gates.is_empty() {
            return Vec::new();
        }
        let runtimes = self.queries.borrow();
        c.gates
            .iter()
            .filter(|g| g.raw.contains(&stream))
            .filter_map(|g| {
                let rt = &runtimes[g.query];
                let clock = g.limit.max(rt.clock);
                (time < clock || (rt.flushed != i128::MIN && time <= rt.flushed))
                    .then(|| (g.query, clock.max(rt.flushed), !g.upstream.is_empty()))
            })
            .collect()
    }

    /// The results and gates of the queries `queries` (a snapshot's, in its order).
    pub(crate) fn composed_state(&self, queries: &[usize]) -> ComposedState {
        let c = self.composition.borrow();
        let place: HashMap<usize, usize> =
            queries.iter().enumerate().map(|(i, &q)| (q, i)).collect();
        ComposedState {
            results: queries
                .iter()
                .map(|&q| {
                    let r = &c.results[q];
                    ResultsState {
                        count: r.count,
                        seen: r
                            .seen
                            .iter()
                            .map(|row| row.iter().map(|t| t.as_ref().map(TermState::of)).collect())
                            .collect(),
                    }
                })
                .collect(),
            gates: c
                .gates
                .iter()
                .filter_map(|g| {
                    Some(GateState {
                        query: *place.get(&g.query)?,
                        limit: g.limit,
                        buffer: g
                            .buffer
                            .iter()
                            .map(|Reverse(h)| (h.time, h.seq, h.event.event.uid))
                            .collect(),
                    })
                })
                .collect(),
            seq: c.seq,
            seen: c.seen.iter().map(|(s, t)| (*s, *t)).collect(),
            arrived: c.arrived.iter().map(|(s, t)| (*s, *t)).collect(),
        }
    }

    /// Load a snapshot's results and gates into the queries `queries` (its order), over its
    /// events (`index` prepares one for joins).
    pub(crate) fn resume_composed(
        &self,
        state: ComposedState,
        queries: &[usize],
        events: &HashMap<u64, EventRef>,
        index: &dyn Fn(&EventRef) -> Rc<crate::Prepared>,
    ) -> Result<(), SnapshotError> {
        let mut c = self.composition.borrow_mut();
        for (r, &q) in state.results.into_iter().zip(queries) {
            let results = &mut c.results[q];
            results.count = r.count;
            results.seen = r
                .seen
                .into_iter()
                .map(|row| {
                    row.iter()
                        .map(|t| t.as_ref().map(TermState::term).transpose())
                        .collect()
                })
                .collect::<Result<_, SnapshotError>>()?;
        }
        for g in state.gates {
            let q = *queries
                .get(g.query)
                .ok_or(SnapshotError::NotGated(g.query))?;
            let i = c.gate_of[q].ok_or(SnapshotError::NotGated(g.query))?;
            let gate = &mut c.gates[i];
            gate.limit = g.limit;
            gate.buffer = g
                .buffer
                .into_iter()
                .map(|(time, seq, uid)| {
                    let event = events.get(&uid).ok_or(SnapshotError::MissingEvent(uid))?;
                    Ok(Reverse(Held {
                        time,
                        seq,
                        event: PreparedEvent {
                            event: event.clone(),
                            prepared: index(event),
                        },
                    }))
                })
                .collect::<Result<_, SnapshotError>>()?;
        }
        c.seq = state.seq;
        c.seen = state.seen.into_iter().collect();
        c.arrived = state.arrived.into_iter().collect();
        Ok(())
    }
}

/// Number one released match: the next result, or 0 when DISTINCT drops it.
fn number(
    m: &mut MatchRecord,
    shape: &Shape,
    results: &mut Results,
    vars: &VarTable,
    dict: &Dictionary,
) {
    if let Some(mapping) = shape.distinct {
        let key = results.key.get_or_insert_with(|| {
            if mapping {
                (0..vars.len()).map(Some).collect()
            } else {
                row_slots(shape.select.as_deref(), vars)
                    .into_iter()
                    .map(|(_, s)| s)
                    .collect()
            }
        });
        let row: Vec<Option<Term>> = key
            .iter()
            .map(|slot| {
                slot.and_then(|s| m.mu.get(s).copied().flatten())
                    .map(|id| dict.get(id).clone())
            })
            .collect();
        if !results.seen.insert(row) {
            m.number = 0;
            return;
        }
    }
    results.count += 1;
    m.number = results.count;
}

/// A LATENESS watermark: the least, over the input streams `raw`, of the latest time seen on
/// each minus `lateness`. A stream that has sent nothing yet holds nothing back, nor does one
/// `silent` for the idle timeout; when every stream that spoke is silent, the watermark is
/// the latest time any of them reached.
fn late_watermark(
    raw: &[StreamId],
    lateness: i128,
    seen: &HashMap<StreamId, i128>,
    silent: impl Fn(&StreamId) -> bool,
) -> i128 {
    let mut latest = i128::MIN;
    let mut mark: Option<i128> = None;
    for s in raw {
        let Some(&t) = seen.get(s) else { continue };
        latest = latest.max(t);
        if !silent(s) {
            let held = t.saturating_sub(lateness);
            mark = Some(mark.map_or(held, |m| m.min(held)));
        }
    }
    mark.unwrap_or(latest)
}

/// The earliest time a result still to come from query `p` can carry (`frontier`: the
/// engine clock, for a query fed input directly).
fn watermark<H: Host>(
    runtimes: &[QueryRuntime<Programs<H>>],
    c: &Composition,
    p: usize,
    frontier: i128,
) -> i128 {
    let mark = runtimes[p].horizon().unwrap_or(INF);
    match c.gate_of[p] {
        None => mark.min(frontier),
        Some(g) => {
            let gate = &c.gates[g];
            let first = gate.buffer.peek().map_or(INF, |Reverse(h)| h.time);
            mark.min(first).min(gate.limit)
        }
    }
}
