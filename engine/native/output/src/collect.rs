//! The runtime's half of writing results: each released match turned into an owned row of
//! term ids (SELECT's projection and DISTINCT done here, where the dictionary is), with the
//! terms, events and streams the `Formatter` has not been sent yet. A `Batch` holds no
//! reference into the runtime, so it can be spelled on another thread (`background.rs`).

use super::{EventList, Format, Scope, TimeFormat};
use oxrdf::Term;
use spaseq_automaton::event::StreamId;
use spaseq_automaton::MatchRecord;
use spaseq_gpm::vars::Slot;
use spaseq_io::dictionary::TermId;
use std::collections::HashSet;

/// Events a collector remembers sending before it starts again (a match's events recur in
/// many matches; the formatter keeps each one spelled while it is remembered here).
const EVENTS_KEPT: usize = 1 << 16;

/// Taken events (jsonl's `events` lists) a batch holds at most, past its first match: a batch
/// of matches of many events each (Kleene+) is cut so that its text stays around megabytes.
pub const TAKEN_PER_BATCH: usize = 1 << 14;

/// The names a query's rows are written with, resolved to its slots on the first match (the
/// writer is made before the query's variable table exists).
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The projected row's variables in order: (slot, `"name": ` as JSON).
    pub row: Vec<(Option<Slot>, String)>,
    /// Per column (CSV, TSV, JSON head), its slot if the projection keeps it.
    pub columns: Vec<Option<Slot>>,
    /// Per GPM, `{"atom": "NAME", "stream": ` (jsonl events).
    pub atoms: Vec<String>,
    /// The projected row's variables' names, in order (TriG).
    pub names: Vec<String>,
    /// Per GPM, its name (TriG).
    pub gpms: Vec<String>,
}

/// One match as the formatter writes it; its values and taken events are the batch's
/// `values[values_at..]` (as many as the format's cells) and `taken[..taken_end]` after the
/// previous row's.
#[derive(Debug, Clone, Copy)]
pub struct RowHead {
    pub time: i128,
    pub start: i128,
    /// Its times written as `xsd:dateTime`s (`TimeFormat::dated`).
    pub dated: bool,
    pub taken_end: u32,
}

/// An event a row names, as the jsonl `events` list writes it.
#[derive(Debug, Clone)]
pub struct EventInfo {
    pub uid: u64,
    pub stream: StreamId,
    pub time: i128,
    /// Stamped with an `xsd:dateTime` (TriG).
    pub dated: bool,
    pub graph: Option<Term>,
}

/// Rows and what the formatter needs to spell them that it was not sent before, applied in
/// this order: the two forgets, `resolved`, `streams`, `terms`, `events`, then the rows.
#[derive(Debug, Default)]
pub struct Batch {
    /// Forget every term sent before (the engine's dictionary was compacted: ids now name
    /// other terms) and every event.
    pub forget_terms: bool,
    /// Forget every event sent before (the collector starts remembering afresh).
    pub forget_events: bool,
    pub resolved: Option<Resolved>,
    /// Stream IRIs by id, from the first id not sent before.
    pub streams: Vec<(StreamId, String)>,
    pub terms: Vec<(TermId, Term)>,
    pub events: Vec<EventInfo>,
    pub rows: Vec<RowHead>,
    /// The rows' cells: per row, a value per projected variable (jsonl, JSON) or per column
    /// (CSV, TSV).
    pub values: Vec<Option<TermId>>,
    /// The rows' taken events (jsonl, TriG): (GPM number, event uid), in the match's order.
    pub taken: Vec<(u32, u64)>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Empty the batch for the next rows, with the forgets the formatter must do first.
    pub fn reset(&mut self, forget_terms: bool, forget_events: bool) {
        self.forget_terms = forget_terms;
        self.forget_events = forget_events;
        self.resolved = None;
        self.streams.clear();
        self.terms.clear();
        self.events.clear();
        self.rows.clear();
        self.values.clear();
        self.taken.clear();
    }
}

/// Turns released matches into a `Batch`: the projection of the engine's results (a match
/// DISTINCT dropped has no number and is skipped), and what was sent.
pub struct Collector {
    format: Format,
    /// The row's variables (None: every bound variable, in name order).
    select: Option<Vec<String>>,
    /// The variables of the header (CSV, TSV, JSON), without `_time`/`_start`.
    columns: Vec<String>,
    time_format: TimeFormat,
    resolved: Option<Resolved>,
    /// Per term id, whether the formatter was sent its term.
    sent_terms: Vec<bool>,
    sent_events: HashSet<u64, foldhash::fast::RandomState>,
    /// Streams sent: ids below this.
    sent_streams: usize,
    /// The next batch tells the formatter to forget its terms.
    forget_pending: bool,
    rows: u64,
    /// Whether jsonl rows list their events (`EventList::None`: none collected).
    events: bool,
}

impl Collector {
    /// A collector of rows of `select` (None: every bound variable by name), for `format`,
    /// whose header has the variables `columns`.
    pub fn new(
        format: Format,
        select: Option<Vec<String>>,
        columns: Vec<String>,
        time_format: TimeFormat,
    ) -> Collector {
        Collector {
            format,
            select,
            columns,
            time_format: time_format.of(format),
            resolved: None,
            sent_terms: Vec::new(),
            sent_events: HashSet::default(),
            sent_streams: 0,
            forget_pending: false,
            rows: 0,
            events: true,
        }
    }

    /// The collector of a formatter writing jsonl events as `event_list` says: none are
    /// collected for `EventList::None`.
    pub fn with_events(mut self, event_list: EventList) -> Collector {
        self.events = event_list != EventList::None;
        self
    }

    /// Forget what was sent by term id (the engine's dictionary was compacted).
    pub fn forget_terms(&mut self) {
        self.sent_terms.clear();
        self.sent_events.clear();
        self.forget_pending = true;
    }

    /// Rows collected so far (after DISTINCT).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// `batch` emptied, then filled with the rows of the first matches of `matches` (in
    /// order; DISTINCT drops some) and what the formatter was not sent yet, up to
    /// `TAKEN_PER_BATCH` taken events (one match at least): how many matches it took.
    pub fn fill(&mut self, matches: &[MatchRecord], scope: &Scope<'_>, batch: &mut Batch) -> usize {
        self.open(batch);
        for (i, m) in matches.iter().enumerate() {
            self.collect(m, scope, batch);
            if batch.taken.len() >= TAKEN_PER_BATCH || batch.rows.len() >= TAKEN_PER_BATCH {
                return i + 1; // its text stays around megabytes, events listed or not
            }
        }
        matches.len()
    }

    /// Empty `batch` for the next matches, with the forgets the formatter must do first.
    fn open(&mut self, batch: &mut Batch) {
        let forget_events = self.sent_events.len() >= EVENTS_KEPT;
        if forget_events {
            self.sent_events.clear();
        }
        batch.reset(std::mem::take(&mut self.forget_pending), forget_events);
    }

    fn resolve(&mut self, scope: &Scope<'_>) -> &Resolved {
        self.resolved.get_or_insert_with(|| {
            let vars = scope.vars;
            let slots = super::row_slots(self.select.as_deref(), vars);
            let key = |slot: Option<Slot>, name: &str| {
                let mut s = String::new();
                super::spell::json_string(name, &mut s);
                s.push_str(": ");
                (slot, s)
            };
            let names: Vec<String> = slots.iter().map(|(v, _)| (*v).to_owned()).collect();
            let row: Vec<(Option<Slot>, String)> =
                slots.into_iter().map(|(v, s)| key(s, v)).collect();
            let kept: HashSet<Slot> = row.iter().filter_map(|(s, _)| *s).collect();
            let columns = self
                .columns
                .iter()
                .map(|v| vars.get(v).filter(|s| kept.contains(s)))
                .collect();
            let atoms = scope
                .gpms
                .iter()
                .map(|g| {
                    let mut s = String::from("{\"atom\": ");
                    super::spell::json_string(g, &mut s);
                    s.push_str(", \"stream\": ");
                    s
                })
                .collect();
            Resolved {
                row,
                columns,
                atoms,
                names,
                gpms: scope.gpms.to_vec(),
            }
        })
    }

    /// Add one released match's row to `batch` (nothing when DISTINCT dropped it).
    fn collect(&mut self, m: &MatchRecord, scope: &Scope<'_>, batch: &mut Batch) {
        if m.number == 0 {
            return;
        }
        self.resolve(scope);
        if self.rows == 0 {
            // the first row (DISTINCT keeps every first one): the names go with it
            batch.resolved = self.resolved.clone();
        }
        let resolved = self.resolved.as_ref().expect("resolved above");
        let value = |slot: Option<Slot>| slot.and_then(|s| m.mu.get(s).copied().flatten());
        self.rows += 1;
        let cells: &mut dyn Iterator<Item = Option<Slot>> = if self.format.by_columns() {
            &mut resolved.columns.iter().copied()
        } else {
            &mut resolved.row.iter().map(|(s, _)| *s)
        };
        for slot in cells {
            let id = value(slot);
            if let Some(id) = id {
                let i = id as usize;
                if self.sent_terms.len() <= i {
                    self.sent_terms.resize(i + 1, false);
                }
                if !std::mem::replace(&mut self.sent_terms[i], true) {
                    batch.terms.push((id, scope.dict.get(id).clone()));
                }
            }
            batch.values.push(id);
        }
        if self.format.lists_events() && (self.format == Format::Trig || self.events) {
            let first = batch.taken.len();
            let mut at = m.node.as_deref();
            while let Some(n) = at {
                let e = &n.taken.event;
                batch.taken.push((n.taken.gpm as u32, e.uid));
                if self.sent_events.insert(e.uid) {
                    let stream = e.stream as usize;
                    if stream >= self.sent_streams {
                        for id in self.sent_streams..=stream {
                            let id = id as StreamId;
                            batch.streams.push((id, scope.streams.iri(id).to_owned()));
                        }
                        self.sent_streams = stream + 1;
                    }
                    batch.events.push(EventInfo {
                        uid: e.uid,
                        stream: e.stream,
                        time: e.time,
                        dated: e.dated,
                        graph: e.graph.clone(),
                    });
                }
                at = n.parent.as_deref();
            }
            batch.taken[first..].reverse();
        }
        batch.rows.push(RowHead {
            time: m.time,
            start: m.start,
            dated: self.time_format.dated(m),
            taken_end: batch.taken.len() as u32,
        });
    }
}
