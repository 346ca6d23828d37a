//! Replay files read natively: TriG or N-Quads, gzip or not, one named graph per event, its
//! timestamp the triple `g <time-predicate> "literal"` in the default graph, exactly as the
//! Python reader (`engine/io/replay.py`) reads them: other default-graph triples ignored, a
//! graph's triples in file order without duplicates, events sorted by time with ties in order
//! of first appearance. Terms are interned into the dictionary as they are parsed.

use crate::dictionary::{Dictionary, TermId};
use crate::time::timestamp_nanos;
use flate2::read::MultiGzDecoder;
use oxrdf::{GraphName, NamedNode, Term};
use oxttl::{NQuadsParser, TriGParser};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};

pub const GENERATED_AT_TIME: &str = "http://www.w3.org/ns/prov#generatedAtTime";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    TriG,
    NQuads,
}

impl Format {
    /// From the file name (`.trig`, `.nq`, `.nquads`, each optionally `.gz`).
    pub fn of_path(path: &str) -> Option<Self> {
        let name = path.strip_suffix(".gz").unwrap_or(path);
        if name.ends_with(".trig") {
            Some(Format::TriG)
        } else if name.ends_with(".nq") || name.ends_with(".nquads") {
            Some(Format::NQuads)
        } else {
            None
        }
    }
}

/// One event: its graph's name and triples (as term ids) and its time in nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub time_ns: i128,
    pub graph: TermId,
    pub triples: Vec<[TermId; 3]>,
}

/// A graph's triples in file order, and the set of them (a graph is a set: no duplicates).
type GraphTriples = (Vec<[TermId; 3]>, HashSet<[TermId; 3]>);

/// Why a file could not be read, and where (1-based line and column when known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    pub line: Option<u64>,
    pub column: Option<u64>,
    pub message: String,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{l}:{c}: {}", self.message),
            (Some(l), None) => write!(f, "{l}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

fn error(message: impl Into<String>) -> ReplayError {
    ReplayError {
        line: None,
        column: None,
        message: message.into(),
    }
}

/// Open a replay file, transparently gunzipped (gzip content is recognised by its magic).
pub fn open(path: &str) -> Result<Box<dyn Read>, ReplayError> {
    let file = File::open(path).map_err(|e| error(format!("cannot open {path}: {e}")))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let gzipped = reader
        .fill_buf()
        .map(|b| b.starts_with(&[0x1f, 0x8b]))
        .unwrap_or(false);
    Ok(if gzipped {
        Box::new(BufReader::new(MultiGzDecoder::new(reader)))
    } else {
        Box::new(reader)
    })
}

/// Every event of a replay file, sorted by time (ties in order of first appearance).
pub fn read_events(
    reader: impl Read,
    format: Format,
    time_predicate: &str,
    dictionary: &mut Dictionary,
) -> Result<Vec<Event>, ReplayError> {
    let predicate =
        NamedNode::new(time_predicate).map_err(|e| error(format!("bad time predicate: {e}")))?;
    let mut order: Vec<TermId> = Vec::new(); // graphs in order of first appearance
    let mut triples: HashMap<TermId, GraphTriples> = HashMap::new();
    let mut stamps: HashMap<Term, Term> = HashMap::new();
    let mut add = |quad: oxrdf::Quad, dictionary: &mut Dictionary| -> Result<(), ReplayError> {
        match quad.graph_name {
            GraphName::DefaultGraph => {
                if quad.predicate == predicate {
                    let subject: Term = quad.subject.into();
                    if let Some(previous) = stamps.get(&subject) {
                        if *previous != quad.object {
                            return Err(error(format!(
                                "{subject} has two timestamps, {previous} and {}",
                                quad.object
                            )));
                        }
                    }
                    stamps.insert(subject, quad.object);
                }
            }
            graph => {
                let name: Term = match graph {
                    GraphName::NamedNode(n) => n.into(),
                    GraphName::BlankNode(b) => b.into(),
                    GraphName::DefaultGraph => unreachable!(),
                };
                let g = dictionary.intern(name);
                let t = [
                    dictionary.intern(quad.subject.into()),
                    dictionary.intern(quad.predicate.into()),
                    dictionary.intern(quad.object),
                ];
                let entry = triples.entry(g).or_insert_with(|| {
                    order.push(g);
                    (Vec::new(), HashSet::new())
                });
                if entry.1.insert(t) {
                    entry.0.push(t);
                }
            }
        }
        Ok(())
    };
    let located = |e: oxttl::TurtleParseError| match e {
        oxttl::TurtleParseError::Syntax(s) => {
            let at = s.location().start;
            ReplayError {
                line: Some(at.line + 1),
                column: Some(at.column + 1),
                message: s.message().to_owned(),
            }
        }
        oxttl::TurtleParseError::Io(io) => error(format!("cannot read: {io}")),
    };
    match format {
        Format::TriG => {
            for quad in TriGParser::new().for_reader(reader) {
                add(quad.map_err(located)?, dictionary)?;
            }
        }
        Format::NQuads => {
            for quad in NQuadsParser::new().for_reader(reader) {
                add(quad.map_err(located)?, dictionary)?;
            }
        }
    }
    let mut events = Vec::with_capacity(order.len());
    for g in order {
        let name = dictionary.get(g).clone();
        let Some(stamp) = stamps.get(&name) else {
            return Err(error(format!(
                "event {name} has no timestamp ({time_predicate})"
            )));
        };
        let time_ns =
            timestamp_nanos(stamp).map_err(|m| error(format!("the timestamp of {name}: {m}")))?;
        let (list, _) = triples.remove(&g).unwrap_or_default();
        events.push(Event {
            time_ns,
            graph: g,
            triples: list,
        });
    }
    events.sort_by_key(|e| e.time_ns); // stable: ties keep their order of first appearance
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIG: &str = r#"@prefix : <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:g2 { :b :v 2 . :b :v 2 . }
:g2 prov:generatedAtTime "2024-01-01T10:00:20.3Z"^^xsd:dateTime .
:g1 prov:generatedAtTime "2024-01-01T10:00:20.1Z"^^xsd:dateTime .
:g1 { :a :v 1 . :a :w "x" . }
:other :p :q .
"#;

    #[test]
    fn events_are_sorted_exact_and_deduplicated() {
        let mut dict = Dictionary::new();
        let events =
            read_events(TRIG.as_bytes(), Format::TriG, GENERATED_AT_TIME, &mut dict).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(dict.get(events[0].graph).to_string(), "<http://ex.org/g1>");
        assert_eq!(events[0].time_ns, 1_704_103_220_100_000_000);
        assert_eq!(events[1].time_ns - events[0].time_ns, 200_000_000);
        assert_eq!(events[0].triples.len(), 2);
        assert_eq!(events[1].triples.len(), 1);
    }

    #[test]
    fn errors_say_where() {
        let mut dict = Dictionary::new();
        let bad = "<http://ex.org/g> { <http://ex.org/a> <http://ex.org/b> . }";
        let err =
            read_events(bad.as_bytes(), Format::TriG, GENERATED_AT_TIME, &mut dict).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
        let missing = "<http://ex.org/g> { <http://ex.org/a> <http://ex.org/b> 1 . }";
        let err = read_events(
            missing.as_bytes(),
            Format::TriG,
            GENERATED_AT_TIME,
            &mut dict,
        )
        .unwrap_err();
        assert!(err.message.contains("has no timestamp"), "{err}");
    }
}
