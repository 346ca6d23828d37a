//! Events as the runtime holds them: shared (`Rc`) by every query, run and match that took
//! them, and dropped when the last of those is gone.

use oxrdf::Term;
use spaseq_gpm::vars::Names;
use spaseq_io::dictionary::TermId;
use std::cell::Cell;
use std::rc::Rc;

pub type StreamId = u32;

/// One event: a named graph on a stream over `[start, time]` (nanoseconds; a point event's
/// `start` is its `time`, docs/decisions.md 71); `seq` orders events of one end time (the
/// Python `Event.seq`), `uid` tells events apart within one engine; `dated`:
/// its timestamp was written as an `xsd:dateTime` (the Python `Event.dated`; it fits in the
/// padding after `stream`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventData {
    pub uid: u64,
    pub stream: StreamId,
    pub dated: bool,
    pub time: i128,
    /// When the event began (its end is `time`, by which events are ordered).
    pub start: i128,
    pub seq: u64,
    /// The graph's name, kept with the event rather than interned: event names are usually
    /// unique, and the dictionary would otherwise grow with every event.
    pub graph: Option<Term>,
    pub triples: Vec<[TermId; 3]>,
    /// Set once a query's CONSUMPTION MATCHED used up a triple of this event (`query::policy`).
    pub used: UsedHint,
}

/// A hint kept with an event for the consumption policy: whether some query used up a
/// triple of it. A run is checked against the used-up triples at every event it is offered,
/// each event it took: with the hint, only the events it is set on are looked up in the
/// policy's table (the rest, most of them, cost a load). Not part of what the event is:
/// every hint equals every other.
#[derive(Debug, Clone, Default)]
pub struct UsedHint(Cell<bool>);

impl UsedHint {
    pub fn set(&self) {
        self.0.set(true);
    }

    #[inline]
    pub fn get(&self) -> bool {
        self.0.get()
    }
}

impl PartialEq for UsedHint {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for UsedHint {}

impl EventData {
    /// Whether the event lasts (began before it ended).
    pub fn lasts(&self) -> bool {
        self.start != self.time
    }

    /// Where the event stands among events (time, then arrival): `Event.sort_key`.
    pub fn order(&self) -> (i128, u64) {
        (self.time, self.seq)
    }
}

pub type EventRef = Rc<EventData>;

/// Stream IRIs as small integers, shared by the queries of one engine.
#[derive(Debug, Clone, Default)]
pub struct Streams(Names);

impl Streams {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn id(&mut self, iri: &str) -> StreamId {
        StreamId::try_from(self.0.number(iri)).expect("fewer than 2^32 streams")
    }

    pub fn get(&self, iri: &str) -> Option<StreamId> {
        self.0.get(iri).map(|n| n as StreamId)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iri(&self, id: StreamId) -> &str {
        self.0.name(id as usize)
    }
}
