//! The native half of `Engine.snapshot()`: the term dictionary, the stream table, the
//! events still held and every query's runtime state (`query::QueryState`), in a
//! versioned binary format (a magic string, a format version, then postcard: serde's
//! compact encoding with a stable wire format).
//!
//! Restoring is three steps, so that a query's plan is compiled against the same term ids:
//! the dictionary and streams go into a fresh engine first (`EngineState::terms`,
//! `streams`), the queries are registered again in the same order, then each runtime loads
//! its state over the restored events.
//!
//! Terms are written by their parts (`TermState`), not as N-Triples: restoring builds them
//! without parsing or validating again (a state-only snapshot is restored once per key and
//! micro-batch by the Spark streaming execution, so its cost is per restore). The parts
//! were valid terms when written; a forged snapshot can give odd terms, never run code.

use crate::{EventData, EventRef, QueryState, Streams};
use oxrdf::vocab::xsd;
use oxrdf::{BlankNode, Literal, NamedNode, Term};
use serde::{Deserialize, Serialize};
use spaseq_io::dictionary::{Dictionary, TermId};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::str::FromStr;

/// Bumped whenever the encoding of any state changes; older snapshots are refused with a
/// message rather than misread. 3: terms by their parts (`TermState`), not N-Triples.
/// 4: the engine's clocks (`ClockState`) and each query's flushed instant.
/// 5: results numbered and composition's buffers in the core (`ComposedState`).
/// 6: a looping run's count of Kleene iterations (`RunState::iterations`, for `X{m,n}`).
/// 7: head negation's kept events and runs (`QueryState::head_events`, `RunState::head`).
/// 8: the latest time seen on each stream (`ComposedState::seen`, LATENESS watermarks).
/// 9: the selection and consumption policies' state (`QueryState::consumed`, `latest`).
/// 10: each query's count of the late events it dropped (`EngineState::late`).
/// 11: events that last and relative timers (`EventState::start`, `QueryState::recent`,
/// `QueryState::timers`, `RunState::collected`; docs/decisions.md 71).
pub const SNAPSHOT_VERSION: u32 = 11;
/// The format's magic (named after the crate that first wrote it: kept, snapshots' bytes
/// do not change with the crates' names).
const MAGIC: &[u8; 12] = b"spaseq-core\n";

/// The engine's clocks (ns; `i128::MIN` before any time): the latest time an event or a
/// heartbeat brought, the heartbeat's promise (no event earlier than it comes), the events
/// dropped whole as late (late for every query reading their stream) and those of streams no
/// query reads dropped so far.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClockState {
    pub clock: i128,
    pub heartbeat: i128,
    pub dropped_late: u64,
    pub dropped_unread: u64,
}

impl Default for ClockState {
    fn default() -> Self {
        ClockState {
            clock: i128::MIN,
            heartbeat: i128::MIN,
            dropped_late: 0,
            dropped_unread: 0,
        }
    }
}

/// The engine's results and composition (`spaseq-engine`'s `composition`), as a snapshot
/// writes them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ComposedState {
    /// Per query, in the snapshot's order: its results so far and DISTINCT's rows seen.
    pub results: Vec<ResultsState>,
    /// The queries reading other queries' output: what they hold back.
    pub gates: Vec<GateState>,
    /// The last arrival number composition gave an event it held back.
    pub seq: u64,
    /// The latest time seen on each input stream (stream id, ns): LATENESS watermarks.
    pub seen: Vec<(u32, i128)>,
    /// The processing time each input stream last sent at (stream id, ns): idleness.
    pub arrived: Vec<(u32, i128)>,
}

/// A query's results so far: how many (the last one's number) and, under DISTINCT, the rows
/// seen (terms by their parts: a row outlives the dictionary's ids).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ResultsState {
    pub count: u64,
    pub seen: Vec<Vec<Option<TermState>>>,
}

/// A query reading other queries' output (`query`: its place in the snapshot's order): how far
/// it has been run (`limit`, ns) and the events it holds back, as (time, arrival, event uid).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GateState {
    pub query: usize,
    pub limit: i128,
    pub buffer: Vec<(i128, u64, u64)>,
}

/// An event as a snapshot writes it (its graph name and terms in N-Triples / by id).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EventState {
    pub uid: u64,
    pub stream: u32,
    pub dated: bool,
    pub time: i128,
    /// When the event began (a point event: `time`).
    pub start: i128,
    pub seq: u64,
    pub graph: Option<TermState>,
    pub triples: Vec<[TermId; 3]>,
}

/// A term as a snapshot writes it: its parts, rebuilt without parsing. Terms the common
/// forms do not cover (a directional language string, a triple term) go as N-Triples.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum TermState {
    Iri(String),
    Blank(String),
    /// A literal of datatype xsd:string.
    Simple(String),
    /// A literal with a language tag (value, tag).
    Lang(String, String),
    /// A literal of another datatype (value, datatype IRI).
    Typed(String, String),
    NTriples(String),
}

impl TermState {
    pub fn of(term: &Term) -> Self {
        match term {
            Term::NamedNode(n) => TermState::Iri(n.as_str().to_owned()),
            Term::BlankNode(b) => TermState::Blank(b.as_str().to_owned()),
            Term::Literal(l) => match (l.language(), l.direction()) {
                (None, _) if l.datatype() == xsd::STRING => TermState::Simple(l.value().to_owned()),
                (None, _) => {
                    TermState::Typed(l.value().to_owned(), l.datatype().as_str().to_owned())
                }
                (Some(tag), None) => TermState::Lang(l.value().to_owned(), tag.to_owned()),
                (Some(_), Some(_)) => TermState::NTriples(term.to_string()),
            },
            other => TermState::NTriples(other.to_string()),
        }
    }

    pub fn term(&self) -> Result<Term, SnapshotError> {
        Ok(match self {
            TermState::Iri(iri) => NamedNode::new_unchecked(iri.as_str()).into(),
            TermState::Blank(id) => BlankNode::new_unchecked(id.as_str()).into(),
            TermState::Simple(value) => Literal::new_simple_literal(value.as_str()).into(),
            TermState::Lang(value, tag) => {
                Literal::new_language_tagged_literal_unchecked(value.as_str(), tag.as_str()).into()
            }
            TermState::Typed(value, datatype) => Literal::new_typed_literal(
                value.as_str(),
                NamedNode::new_unchecked(datatype.as_str()),
            )
            .into(),
            TermState::NTriples(text) => term(text)?,
        })
    }
}

impl EventState {
    pub fn of(e: &EventData) -> Self {
        EventState {
            uid: e.uid,
            stream: e.stream,
            dated: e.dated,
            time: e.time,
            start: e.start,
            seq: e.seq,
            graph: e.graph.as_ref().map(TermState::of),
            triples: e.triples.clone(),
        }
    }

    pub fn event(&self) -> Result<EventRef, SnapshotError> {
        let graph = self.graph.as_ref().map(TermState::term).transpose()?;
        Ok(Rc::new(EventData {
            uid: self.uid,
            stream: self.stream,
            dated: self.dated,
            time: self.time,
            start: self.start,
            seq: self.seq,
            graph,
            triples: self.triples.clone(),
            used: Default::default(),
        }))
    }
}

/// One engine's native state; term ids are the snapshot's own (dense, over `terms`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EngineState {
    /// The engine's clocks and the promises made about time.
    pub clocks: ClockState,
    /// The terms the state refers to, by id.
    pub terms: Vec<TermState>,
    /// Stream IRIs by id.
    pub streams: Vec<String>,
    /// The last event uid given out.
    pub last_uid: u64,
    /// The events some query's state refers to, by uid.
    pub events: Vec<EventState>,
    /// Per registered runtime (in registration order) its state.
    pub queries: Vec<QueryState>,
    /// Results numbered and composition's buffers.
    pub composed: ComposedState,
    /// Per query (the snapshot's order), the late events it dropped (set by the engine,
    /// `new` leaves it empty).
    pub late: Vec<u64>,
}

fn term(ntriples: &str) -> Result<Term, SnapshotError> {
    Term::from_str(ntriples).map_err(|e| SnapshotError::BadTerm {
        ntriples: ntriples.to_owned(),
        why: e.to_string(),
    })
}

impl EngineState {
    /// The dictionary, streams and queries of an engine, with the events the queries hold.
    pub fn new(
        dict: &Dictionary,
        streams: &Streams,
        last_uid: u64,
        clocks: ClockState,
        queries: Vec<QueryState>,
        composed: ComposedState,
        event: &dyn Fn(u64) -> Option<EventRef>,
    ) -> Result<Self, SnapshotError> {
        let mut uids: Vec<u64> = queries.iter().flat_map(QueryState::events).collect();
        uids.extend(
            composed
                .gates
                .iter()
                .flat_map(|g| g.buffer.iter().map(|b| b.2)),
        );
        uids.sort_unstable();
        uids.dedup();
        let events = uids
            .into_iter()
            .map(|uid| {
                event(uid)
                    .map(|e| EventState::of(&e))
                    .ok_or(SnapshotError::NotHeld(uid))
            })
            .collect::<Result<_, SnapshotError>>()?;
        let mut state = EngineState {
            clocks,
            terms: Vec::new(),
            streams: (0..streams.len())
                .map(|i| streams.iri(i as u32).to_owned())
                .collect(),
            last_uid,
            events,
            queries,
            composed,
            late: Vec::new(),
        };
        // only the terms the state refers to, renumbered densely in their order: a snapshot
        // is as large as what the open windows hold, not as the stream read so far
        let mut used = vec![false; dict.len()];
        state.terms_mut(&mut |id| used[*id as usize] = true);
        let mut number = vec![TermId::MAX; dict.len()];
        for (old, _) in used.iter().enumerate().filter(|(_, u)| **u) {
            number[old] = state.terms.len() as TermId;
            state.terms.push(TermState::of(dict.get(old as TermId)));
        }
        state.terms_mut(&mut |id| *id = number[*id as usize]);
        Ok(state)
    }

    /// Visit every term id of the events and query states.
    fn terms_mut(&mut self, f: &mut dyn FnMut(&mut TermId)) {
        for e in &mut self.events {
            e.triples.iter_mut().flatten().for_each(&mut *f);
        }
        for q in &mut self.queries {
            q.terms_mut(f);
        }
    }

    pub fn encode(&self) -> Result<Vec<u8>, SnapshotError> {
        let mut out = MAGIC.to_vec();
        out.extend(SNAPSHOT_VERSION.to_le_bytes());
        postcard::to_extend(self, out).map_err(|e| SnapshotError::Encode(e.to_string()))
    }

    pub fn decode(data: &[u8]) -> Result<Self, SnapshotError> {
        let body = data
            .strip_prefix(MAGIC.as_slice())
            .ok_or(SnapshotError::NotASnapshot)?;
        let (version, body) = body
            .split_first_chunk::<4>()
            .ok_or(SnapshotError::Truncated)?;
        let version = u32::from_le_bytes(*version);
        if version != SNAPSHOT_VERSION {
            return Err(SnapshotError::Version { found: version });
        }
        postcard::from_bytes(body).map_err(|e| SnapshotError::Corrupt(e.to_string()))
    }

    /// Fill a fresh dictionary and stream table (ids as they were).
    pub fn restore_tables(
        &self,
        dict: &Dictionary,
        streams: &mut Streams,
    ) -> Result<(), SnapshotError> {
        if !dict.is_empty() || !streams.is_empty() {
            return Err(SnapshotError::NotFresh("engine"));
        }
        for (i, t) in self.terms.iter().enumerate() {
            let id = dict.intern(t.term()?);
            if id as usize != i {
                return Err(SnapshotError::TermTwice(dict.get(id).to_string()));
            }
        }
        for (i, s) in self.streams.iter().enumerate() {
            if streams.id(s) as usize != i {
                return Err(SnapshotError::StreamTwice(s.clone()));
            }
        }
        Ok(())
    }

    /// The snapshot's events, by uid.
    pub fn restore_events(&self) -> Result<HashMap<u64, EventRef>, SnapshotError> {
        self.events
            .iter()
            .map(|e| Ok((e.uid, e.event()?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_term_is_written_by_its_parts_and_read_back_equal() {
        let terms = [
            "<http://ex.org/a>",
            "_:b0",
            "\"plain\"",
            "\"chat\"@fr",
            "\"01\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            "\"x\"@ar--rtl",
            "<<( <http://ex.org/s> <http://ex.org/p> \"o\" )>>",
        ];
        for text in terms {
            let t = term(text).unwrap();
            let state = TermState::of(&t);
            let parts = !matches!(state, TermState::NTriples(_));
            assert_eq!(
                parts,
                !text.contains("--") && !text.starts_with("<<"),
                "{text}"
            );
            assert_eq!(state.term().unwrap(), t, "{text}");
        }
    }
}

/// Why a snapshot cannot be taken or restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotError {
    /// Bytes that do not start with the format's magic.
    NotASnapshot,
    /// Bytes that end before the format version.
    Truncated,
    /// A snapshot of another format version.
    Version {
        found: u32,
    },
    /// postcard could not decode the body (its message).
    Corrupt(String),
    /// postcard could not encode the state (its message).
    Encode(String),
    /// A term written as N-Triples that does not parse (the text, the parser's message).
    BadTerm {
        ntriples: String,
        why: String,
    },
    /// The same term twice in the snapshot's dictionary (in N-Triples).
    TermTwice(String),
    /// The same stream twice in the snapshot's stream table (its IRI).
    StreamTwice(String),
    /// Restoring into an engine (`"engine"`) or a runtime (`"runtime"`) that is not fresh.
    NotFresh(&'static str),
    /// A query state refers to an event the engine no longer holds (its uid).
    NotHeld(u64),
    /// A query's released matches were not taken before the snapshot.
    MatchesNotTaken,
    /// A query state refers to an event the snapshot lacks (its uid).
    MissingEvent(u64),
    /// A query state refers to a node or run it lacks (its index).
    NoNode(usize),
    NoRun(usize),
    /// A node written before its parent (the parent's index).
    NodeOrder(usize),
    /// A run at a step the plan does not have.
    Step {
        step: usize,
        steps: usize,
    },
    /// A strategy code of no strategy.
    Strategy(u8),
    /// A lazy chain's state that is not the plan's.
    LazyChain,
    /// `resume` without a snapshot being restored.
    NotRestoring,
    /// A snapshot's query (its place) held back events for other queries' output, but its
    /// query here reads none.
    NotGated(usize),
    /// A snapshot of another number of queries than were registered.
    Queries {
        held: usize,
        registered: usize,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::NotASnapshot => f.write_str("not a snapshot of spaseq's native engine"),
            SnapshotError::Truncated => f.write_str("a truncated snapshot"),
            SnapshotError::Version { found } => write!(
                f,
                "snapshot format {found}, but this spaseq reads format {SNAPSHOT_VERSION}"
            ),
            SnapshotError::Corrupt(e) => write!(f, "a corrupt snapshot: {e}"),
            SnapshotError::Encode(e) => write!(f, "cannot encode the snapshot: {e}"),
            SnapshotError::BadTerm { ntriples, why } => {
                write!(f, "bad term {ntriples:?} in a snapshot: {why}")
            }
            SnapshotError::TermTwice(t) => write!(f, "term {t} appears twice in the snapshot"),
            SnapshotError::StreamTwice(s) => {
                write!(f, "stream <{s}> appears twice in the snapshot")
            }
            SnapshotError::NotFresh(what) => {
                write!(f, "a snapshot is restored into a fresh {what} only")
            }
            SnapshotError::NotHeld(uid) => {
                write!(f, "event {uid} is referred to but no longer held")
            }
            SnapshotError::MatchesNotTaken => {
                f.write_str("matches released but not taken: take them before a snapshot")
            }
            SnapshotError::MissingEvent(uid) => write!(f, "the snapshot lacks event {uid}"),
            SnapshotError::NoNode(i) => write!(f, "no node {i}"),
            SnapshotError::NoRun(i) => write!(f, "no run {i}"),
            SnapshotError::NodeOrder(p) => write!(f, "node parent {p} comes after its child"),
            SnapshotError::Step { step, steps } => {
                write!(f, "run at step {step} of a {steps}-step plan")
            }
            SnapshotError::Strategy(code) => write!(f, "unknown strategy code {code}"),
            SnapshotError::LazyChain => {
                f.write_str("the snapshot's lazy chain does not match the plan's")
            }
            SnapshotError::NotRestoring => f.write_str("no snapshot is being restored"),
            SnapshotError::NotGated(q) => write!(
                f,
                "the snapshot's query {} reads other queries' output, this engine's does not",
                q + 1
            ),
            SnapshotError::Queries { held, registered } => write!(
                f,
                "the snapshot holds {held} queries, {registered} were registered"
            ),
        }
    }
}

impl std::error::Error for SnapshotError {}
