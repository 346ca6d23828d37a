//! Results as Arrow columns (`--format arrow|parquet`, issue 29): the bulk output of a
//! match-heavy run. A `Columns` takes the collector's `Batch`es, as a `Formatter` does, and
//! appends each row to the buffers of an Arrow record batch, laid out as Arrow's columnar
//! format has them (little-endian values, validity bitmaps, 32-bit offsets); pyarrow wraps
//! the buffers without copying and writes the Arrow IPC stream or Parquet file
//! (`spaseq.engine.output.arrow`, where the schema is written down). No term is spelled
//! twice: each is spelled in N-Triples once per term id, as the other formats keep theirs.
//!
//! The columns, in order: `_number` (int64, the result's number, from 1), `_start` and
//! `_time` (decimal128(38, 9): exact seconds, the nanoseconds as the unscaled integer),
//! `_dated` (bool: its times were `xsd:dateTime`s), `_events` (full: a list of structs
//! `atom`, `stream`, `time`, `dated`, `graph`; ids: a list of graph names; none: absent),
//! then each header variable's value in N-Triples (a string, null when unbound). A graph
//! name is in N-Triples too (`<iri>` or `_:label`), as Spark's Parquet output keeps it.

use super::collect::{Batch, EventInfo, Resolved};
use super::EventList;
use oxrdf::Term;
use spaseq_automaton::event::StreamId;
use spaseq_io::dictionary::TermId;
use std::collections::HashMap;

/// Rows of one record batch at most (a Parquet row group's worth, Arrow's usual size).
pub const ROWS_PER_RECORD_BATCH: usize = 1 << 16;

/// String bytes one record batch holds at most, so that 32-bit offsets never overflow.
const BYTES_PER_RECORD_BATCH: usize = 1 << 30;

/// A bitmap (validity or booleans), least significant bit first, as Arrow lays it out.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Bits {
    pub bytes: Vec<u8>,
    pub len: usize,
    /// How many bits are unset (a validity bitmap's null count).
    pub unset: usize,
}

impl Bits {
    fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit {
            *self.bytes.last_mut().expect("pushed above") |= 1 << (self.len % 8);
        } else {
            self.unset += 1;
        }
        self.len += 1;
    }
}

/// Strings end to end: 32-bit offsets (one more than values) and the UTF-8 data (a
/// dictionary's values: never null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strings {
    pub offsets: Vec<u8>,
    pub data: Vec<u8>,
    pub len: usize,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            offsets: 0i32.to_le_bytes().to_vec(),
            data: Vec::new(),
            len: 0,
        }
    }
}

impl Strings {
    fn push(&mut self, value: &str) {
        self.data.extend_from_slice(value.as_bytes());
        let end = i32::try_from(self.data.len()).expect("a record batch is cut below 2^31 bytes");
        self.offsets.extend_from_slice(&end.to_le_bytes());
        self.len += 1;
    }
}

/// A dictionary-encoded string column (`dictionary<int32, string>`): per row an index into
/// the record batch's dictionary, or null. A value (a term, a graph name, a stream) recurs
/// in many matches: it is written once per record batch, keyed by what names it here (a
/// term id, an event, a stream, a GPM), never hashed as text.
#[derive(Debug, Clone)]
pub struct Coded<K> {
    pub validity: Bits,
    /// int32 indices, little-endian (0 under a null).
    pub indices: Vec<u8>,
    pub dictionary: Strings,
    index: HashMap<K, i32, foldhash::fast::RandomState>,
}

impl<K> Default for Coded<K> {
    fn default() -> Self {
        Coded {
            validity: Bits::default(),
            indices: Vec::new(),
            dictionary: Strings::default(),
            index: HashMap::default(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Copy> Coded<K> {
    /// Append the value `key` names (spelled by `spell` the first time in this record
    /// batch), or a null.
    fn push<'s>(&mut self, key: Option<K>, spell: impl FnOnce(K) -> &'s str) {
        let at = key.map(|key| match self.index.get(&key) {
            Some(&at) => at,
            None => {
                let at = self.dictionary.len as i32;
                self.dictionary.push(spell(key));
                self.index.insert(key, at);
                at
            }
        });
        self.validity.push(at.is_some());
        self.indices
            .extend_from_slice(&at.unwrap_or(0).to_le_bytes());
    }
}

impl<K> Coded<K> {
    /// Forget what the keys named (they will name other values): the values written stay,
    /// later ones get entries of their own.
    fn forget(&mut self) {
        self.index.clear();
    }

    /// The rows' nulls.
    pub fn nulls(&self) -> usize {
        self.validity.unset
    }
}

/// The events a record batch's rows took: the list's offsets into the children, then the
/// children (`Full`: every field; `Ids`: the graph names only).
#[derive(Debug, Default, Clone)]
pub struct EventColumns {
    pub offsets: Vec<u8>,
    /// By GPM number.
    pub atom: Coded<u32>,
    /// By stream id.
    pub stream: Coded<StreamId>,
    /// decimal128(38, 9), little-endian.
    pub time: Vec<u8>,
    pub dated: Bits,
    /// By event uid.
    pub graph: Coded<u64>,
    pub len: usize,
}

/// One record batch's buffers.
#[derive(Debug, Default, Clone)]
pub struct RecordBatch {
    pub rows: usize,
    /// int64, little-endian.
    pub number: Vec<u8>,
    /// decimal128(38, 9), little-endian.
    pub start: Vec<u8>,
    pub time: Vec<u8>,
    pub dated: Bits,
    /// None under `EventList::None`.
    pub events: Option<EventColumns>,
    /// Per header variable, in order, by term id.
    pub values: Vec<Coded<TermId>>,
}

impl RecordBatch {
    fn new(columns: usize, event_list: EventList) -> RecordBatch {
        let events = (event_list != EventList::None).then(|| EventColumns {
            offsets: 0i32.to_le_bytes().to_vec(),
            ..EventColumns::default()
        });
        RecordBatch {
            events,
            values: vec![Coded::default(); columns],
            ..RecordBatch::default()
        }
    }

    fn bytes(&self) -> usize {
        let events = self.events.as_ref().map_or(0, |e| {
            e.atom.dictionary.data.len()
                + e.stream.dictionary.data.len()
                + e.graph.dictionary.data.len()
        });
        events
            + self
                .values
                .iter()
                .map(|v| v.dictionary.data.len())
                .sum::<usize>()
    }
}

/// An event as the columns write it.
#[derive(Debug, Clone)]
struct EventCell {
    stream: StreamId,
    time: i128,
    dated: bool,
    graph: Option<Box<str>>,
}

/// Rows of one query as Arrow record batches: `write` per collected batch, `take` for a
/// full record batch (`full`) or the last one.
pub struct Columns {
    columns: usize,
    event_list: EventList,
    resolved: Option<Resolved>,
    /// Per term id, its N-Triples spelling (as sent by the collector).
    terms: Vec<Option<Box<str>>>,
    /// Per stream id, its IRI.
    streams: Vec<Box<str>>,
    events: HashMap<u64, EventCell, foldhash::fast::RandomState>,
    rows: u64,
    built: RecordBatch,
}

impl Columns {
    /// The columns of rows whose header has `columns` variables, with their events as
    /// `event_list` says.
    pub fn new(columns: usize, event_list: EventList) -> Columns {
        Columns {
            columns,
            event_list,
            resolved: None,
            terms: Vec::new(),
            streams: Vec::new(),
            events: HashMap::default(),
            rows: 0,
            built: RecordBatch::new(columns, event_list),
        }
    }

    /// Take in what `batch` sends, then append its rows.
    pub fn write(&mut self, batch: &Batch) {
        self.take_in(batch);
        let Some(resolved) = self.resolved.take() else {
            return; // no row was ever collected
        };
        let Columns {
            columns,
            event_list,
            terms,
            streams,
            events: cells,
            rows,
            built: b,
            ..
        } = self;
        let mut taken_at = 0;
        for (i, head) in batch.rows.iter().enumerate() {
            let values = &batch.values[i * *columns..(i + 1) * *columns];
            let taken = &batch.taken[taken_at..head.taken_end as usize];
            taken_at = head.taken_end as usize;
            *rows += 1;
            b.rows += 1;
            b.number.extend_from_slice(&(*rows as i64).to_le_bytes());
            b.start.extend_from_slice(&head.start.to_le_bytes());
            b.time.extend_from_slice(&head.time.to_le_bytes());
            b.dated.push(head.dated);
            for (column, id) in b.values.iter_mut().zip(values) {
                column.push(*id, |id| {
                    terms[id as usize]
                        .as_deref()
                        .expect("the collector sends a term before a row names it")
                });
            }
            if let Some(events) = &mut b.events {
                for &(gpm, uid) in taken {
                    let e = cells
                        .get(&uid)
                        .expect("the collector sends an event before a row names it");
                    let graph = e.graph.as_ref().map(|_| uid);
                    events
                        .graph
                        .push(graph, |_| e.graph.as_deref().unwrap_or_default());
                    if *event_list == EventList::Full {
                        events.atom.push(Some(gpm), |g| &resolved.gpms[g as usize]);
                        events.stream.push(Some(e.stream), |s| &streams[s as usize]);
                        events.time.extend_from_slice(&e.time.to_le_bytes());
                        events.dated.push(e.dated);
                    }
                    events.len += 1;
                }
                let end = i32::try_from(events.len).expect("a record batch is cut below 2^31");
                events.offsets.extend_from_slice(&end.to_le_bytes());
            }
        }
        self.resolved = Some(resolved);
    }

    /// Whether the record batch being built is full (then `take` it).
    pub fn full(&self) -> bool {
        self.built.rows >= ROWS_PER_RECORD_BATCH || self.built.bytes() >= BYTES_PER_RECORD_BATCH
    }

    /// The record batch built so far (None when it has no row); the next starts empty.
    pub fn take(&mut self) -> Option<RecordBatch> {
        if self.built.rows == 0 {
            return None;
        }
        let next = RecordBatch::new(self.columns, self.event_list);
        Some(std::mem::replace(&mut self.built, next))
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    fn take_in(&mut self, batch: &Batch) {
        if batch.forget_terms {
            self.terms.clear();
            self.built.values.iter_mut().for_each(Coded::forget);
        }
        if batch.forget_terms || batch.forget_events {
            self.events.clear();
            if let Some(events) = &mut self.built.events {
                events.graph.forget(); // uids may be given again (rows given as values)
            }
        }
        if let Some(resolved) = &batch.resolved {
            self.resolved = Some(resolved.clone());
        }
        for (id, iri) in &batch.streams {
            debug_assert_eq!(*id as usize, self.streams.len(), "streams sent in order");
            self.streams.push(iri.as_str().into());
        }
        for (id, term) in &batch.terms {
            let i = *id as usize;
            if self.terms.len() <= i {
                self.terms.resize(i + 1, None);
            }
            self.terms[i] = Some(term.to_string().into_boxed_str());
        }
        for EventInfo {
            uid,
            stream,
            time,
            dated,
            graph,
        } in &batch.events
        {
            let graph = graph
                .as_ref()
                .map(|g: &Term| g.to_string().into_boxed_str());
            let cell = EventCell {
                stream: *stream,
                time: *time,
                dated: *dated,
                graph,
            };
            self.events.insert(*uid, cell);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::RowHead;
    use oxrdf::{Literal, NamedNode};
    use spaseq_io::dictionary::TermId;

    fn batch() -> Batch {
        let iri = |s: &str| Term::NamedNode(NamedNode::new_unchecked(s));
        Batch {
            resolved: Some(Resolved {
                row: vec![],
                columns: vec![None, None],
                atoms: vec![],
                names: vec!["x".into(), "y".into()],
                gpms: vec!["A".into(), "B".into()],
            }),
            streams: vec![(0, "http://s".into())],
            terms: vec![
                (0 as TermId, iri("http://a")),
                (2, Term::Literal(Literal::new_simple_literal("é\""))),
            ],
            events: vec![
                EventInfo {
                    uid: 7,
                    stream: 0,
                    time: 1_500_000_000,
                    dated: true,
                    graph: Some(iri("http://g")),
                },
                EventInfo {
                    uid: 9,
                    stream: 0,
                    time: 2_000_000_000,
                    dated: false,
                    graph: None,
                },
            ],
            rows: vec![
                RowHead {
                    time: 2_000_000_000,
                    start: 1_500_000_000,
                    dated: false,
                    taken_end: 2,
                },
                RowHead {
                    time: 1_500_000_000,
                    start: 1_500_000_000,
                    dated: true,
                    taken_end: 3,
                },
            ],
            values: vec![Some(0), Some(2), None, Some(0)],
            taken: vec![(0, 7), (1, 9), (0, 7)],
            ..Batch::default()
        }
    }

    fn i32s(bytes: &[u8]) -> Vec<i32> {
        bytes
            .chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn rows_become_arrow_buffers() {
        let mut columns = Columns::new(2, EventList::Full);
        columns.write(&batch());
        assert!(!columns.full());
        let b = columns.take().expect("two rows");
        assert_eq!(b.rows, 2);
        assert_eq!(b.number, [1i64.to_le_bytes(), 2i64.to_le_bytes()].concat());
        assert_eq!(b.start, [1_500_000_000i128.to_le_bytes(); 2].concat());
        assert_eq!(
            (b.dated.bytes.as_slice(), b.dated.unset),
            (&[0b10u8][..], 1)
        );
        let [x, y] = &b.values[..] else { panic!() };
        assert_eq!(i32s(&x.indices), [0, 0]);
        assert_eq!((x.validity.bytes.as_slice(), x.nulls()), (&[0b01u8][..], 1));
        assert_eq!(i32s(&x.dictionary.offsets), [0, 10]);
        assert_eq!(x.dictionary.data, b"<http://a>");
        assert_eq!(i32s(&y.indices), [0, 1]);
        assert_eq!(
            std::str::from_utf8(&y.dictionary.data).unwrap(),
            "\"é\\\"\"<http://a>"
        );
        let e = b.events.expect("full events");
        assert_eq!((i32s(&e.offsets), e.len), (vec![0, 2, 3], 3));
        assert_eq!(
            (i32s(&e.atom.indices), e.atom.dictionary.data.as_slice()),
            (vec![0, 1, 0], &b"AB"[..])
        );
        assert_eq!(i32s(&e.stream.indices), [0, 0, 0]);
        assert_eq!(e.stream.dictionary.data, b"http://s");
        assert_eq!(e.graph.dictionary.data, b"<http://g>");
        assert_eq!(
            (e.graph.validity.bytes.as_slice(), e.graph.nulls()),
            (&[0b101u8][..], 1)
        );
        assert_eq!(e.dated.bytes, [0b101]);
        assert!(
            columns.take().is_none(),
            "the next record batch starts empty"
        );
        columns.write(&Batch {
            resolved: None,
            streams: vec![],
            terms: vec![],
            events: vec![],
            ..batch()
        });
        assert_eq!(
            columns.take().unwrap().number,
            [3i64.to_le_bytes(), 4i64.to_le_bytes()].concat()
        );
    }

    #[test]
    fn a_record_batch_is_full_at_its_rows() {
        let mut columns = Columns::new(2, EventList::None);
        columns.write(&batch());
        let mut more = Batch {
            resolved: None,
            streams: vec![],
            terms: vec![],
            events: vec![],
            taken: vec![],
            ..batch()
        };
        more.rows.iter_mut().for_each(|r| r.taken_end = 0);
        while columns.built.rows < ROWS_PER_RECORD_BATCH {
            assert!(!columns.full());
            columns.write(&more);
        }
        assert!(columns.full());
        let b = columns.take().unwrap();
        assert_eq!(
            (b.rows, b.dated.len, b.values[1].validity.len),
            (1 << 16, 1 << 16, 1 << 16)
        );
        assert_eq!(i32s(&b.values[1].indices).len(), 1 << 16);
        assert_eq!(
            b.values[1].dictionary.len, 2,
            "each value once per record batch"
        );
        assert!(!columns.full() && columns.rows() == 1 << 16);
    }

    #[test]
    fn ids_given_again_after_a_forget_name_new_values() {
        let mut columns = Columns::new(2, EventList::Ids);
        columns.write(&batch());
        let mut again = batch();
        again.streams.clear(); // sent once
        again.forget_terms = true;
        again.terms[0].1 = Term::NamedNode(NamedNode::new_unchecked("http://b"));
        again.events[0].graph = Some(Term::NamedNode(NamedNode::new_unchecked("http://h")));
        columns.write(&again);
        let b = columns.take().unwrap();
        assert_eq!(b.values[0].dictionary.data, b"<http://a><http://b>");
        assert_eq!(i32s(&b.values[0].indices), [0, 0, 1, 0]);
        let graph = &b.events.unwrap().graph;
        assert_eq!(graph.dictionary.data, b"<http://g><http://h>");
        assert_eq!(i32s(&graph.indices), [0, 0, 0, 1, 0, 1]);
    }

    #[test]
    fn ids_list_graph_names_and_none_lists_nothing() {
        let mut ids = Columns::new(2, EventList::Ids);
        ids.write(&batch());
        let e = ids.take().unwrap().events.unwrap();
        assert_eq!(e.graph.dictionary.data, b"<http://g>");
        assert_eq!(
            (e.graph.validity.len, e.atom.validity.len, e.time.len()),
            (3, 0, 0)
        );
        let mut none = Columns::new(2, EventList::None);
        none.write(&batch());
        assert!(none.take().unwrap().events.is_none());
    }
}
