//! The late-event output (`spaseq run --late-output FILE`, `Engine(late_output=...)`,
//! decision 64): every event a query dropped as late, written as TriG so that nothing is
//! lost. Each event is a named graph holding its triples (its own graph name, or a fresh
//! blank node), described in the default graph (docs/vocabulary.md):
//!
//! ```turtle
//! <g> prov:generatedAtTime "2024-01-01T00:00:05Z"^^xsd:dateTime ;  # its time, as the input wrote it
//!     spaseq:stream <http://ex.org/s> ;
//!     spaseq:lateFor <file:///q.rq> .   # each query it was late for (its output stream)
//! <g> { ... }
//! ```
//!
//! so that the file is itself a replay file of those events. Each event is spelled by a fresh
//! oxttl serializer (as `trig.rs` spells a result), with its `@prefix` lines dropped (written
//! once, by `new`): the file is complete TriG after every event.

use super::derive::SPASEQ_NS;
use super::spell::{time_datatype, time_value};
use oxrdf::{
    BlankNode, GraphName, Literal, NamedNode, NamedNodeRef, NamedOrBlankNode, NamedOrBlankNodeRef,
    QuadRef, Term, TripleRef,
};
use oxttl::TriGSerializer;
use std::io::{self, Write};

const PROV: &str = "http://www.w3.org/ns/prov#";
const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// One late event as the writer takes it.
pub struct LateEvent<'a, T: IntoIterator<Item = TripleRef<'a>>> {
    /// Its stream's IRI.
    pub stream: &'a str,
    /// Its time (ns), written as an `xsd:dateTime` when `dated` (as its input wrote it),
    /// else as `xsd:decimal` seconds.
    pub time: i128,
    pub dated: bool,
    /// Its graph name (an IRI or a blank node); None, or another term: a fresh blank node.
    pub graph: Option<&'a Term>,
    pub triples: T,
    /// The queries it was late for: each one's output stream IRI, or a label naming it.
    pub late_for: &'a [String],
}

/// A TriG file (or any writer) of late events.
pub struct LateWriter<W: Write> {
    out: W,
    serializer: TriGSerializer,
    written: u64,
}

impl<W: Write> LateWriter<W> {
    /// A writer of late events to `out`, its prefixes written now.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut serializer = TriGSerializer::new();
        for (prefix, ns) in [("prov", PROV), ("xsd", XSD), ("spaseq", SPASEQ_NS)] {
            serializer = serializer
                .with_prefix(prefix, ns)
                .expect("the namespaces are IRIs");
            writeln!(out, "@prefix {prefix}: <{ns}> .")?;
        }
        Ok(LateWriter {
            out,
            serializer,
            written: 0,
        })
    }

    /// Write `event`: its description in the default graph, then its graph.
    pub fn write<'a, T: IntoIterator<Item = TripleRef<'a>>>(
        &mut self,
        event: LateEvent<'a, T>,
    ) -> io::Result<()> {
        let name: NamedOrBlankNode = match event.graph {
            Some(Term::NamedNode(n)) => n.clone().into(),
            Some(Term::BlankNode(b)) => b.clone().into(),
            _ => BlankNode::default().into(),
        };
        let mut stamp = String::new();
        time_value(event.time, event.dated, &mut stamp);
        let stamp = Literal::new_typed_literal(
            stamp,
            NamedNodeRef::new_unchecked(time_datatype(event.dated)),
        );
        let prov = NamedNode::new_unchecked(format!("{PROV}generatedAtTime"));
        let spaseq = |local: &str| NamedNode::new_unchecked(format!("{SPASEQ_NS}{local}"));
        let (stream, late_for) = (spaseq("stream"), spaseq("lateFor"));
        let mut described: Vec<(NamedNode, Term)> =
            vec![(prov, stamp.into()), (stream, iri_or_label(event.stream))];
        described.extend(
            event
                .late_for
                .iter()
                .map(|q| (late_for.clone(), iri_or_label(q))),
        );
        let graph = GraphName::from(name.clone());
        let mut serializer = self.serializer.clone().low_level();
        let mut text = Vec::new();
        for (p, o) in &described {
            serializer.serialize_quad(
                QuadRef::new(&name, p, o, GraphName::DefaultGraph.as_ref()),
                &mut text,
            )?;
        }
        for t in event.triples {
            serializer.serialize_quad(t.in_graph(graph.as_ref()), &mut text)?;
        }
        serializer.finish(&mut text)?;
        let text = String::from_utf8(text).expect("oxttl writes UTF-8");
        let mut rest = text.as_str();
        while rest.starts_with("@prefix ") {
            // declared once, by `new`
            rest = rest.split_once('\n').map_or("", |(_, r)| r);
        }
        self.out.write_all(rest.as_bytes())?;
        self.written += 1;
        Ok(())
    }

    /// The events written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Everything written so far to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A triple of an event's terms, None if its subject is not an IRI or a blank node or its
/// predicate not an IRI (an event's triples always are: the readers make them so).
pub fn triple_ref<'a>(s: &'a Term, p: &'a Term, o: &'a Term) -> Option<TripleRef<'a>> {
    let subject: NamedOrBlankNodeRef<'a> = match s {
        Term::NamedNode(n) => n.as_ref().into(),
        Term::BlankNode(b) => b.as_ref().into(),
        _ => return None,
    };
    let Term::NamedNode(predicate) = p else {
        return None;
    };
    Some(TripleRef::new(subject, predicate.as_ref(), o.as_ref()))
}

/// `text` as an IRI when it is one, else as a string literal (a label).
fn iri_or_label(text: &str) -> Term {
    NamedNode::new(text).map_or_else(|_| Literal::new_simple_literal(text).into(), Term::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Quad, Triple};

    fn ex(local: &str) -> NamedNode {
        NamedNode::new_unchecked(format!("http://ex.org/{local}"))
    }

    #[test]
    fn each_event_is_a_named_graph_described_in_the_default_graph() {
        let mut out = LateWriter::new(Vec::new()).unwrap();
        let g: Term = ex("g1").into();
        let triple = Triple::new(ex("a"), ex("p"), Literal::from(3));
        out.write(LateEvent {
            stream: "http://ex.org/s",
            time: 1_704_067_205_000_000_000,
            dated: true,
            graph: Some(&g),
            triples: [triple.as_ref()],
            late_for: &["file:///q.rq".to_owned(), "query 2".to_owned()],
        })
        .unwrap();
        out.write(LateEvent {
            stream: "http://ex.org/s",
            time: 2_500_000_000,
            dated: false,
            graph: None,
            triples: [triple.as_ref()],
            late_for: &["file:///q.rq".to_owned()],
        })
        .unwrap();
        assert_eq!(out.written(), 2);
        let text = String::from_utf8(out.out).unwrap();
        assert!(text.starts_with(
            "@prefix prov: <http://www.w3.org/ns/prov#> .\n\
             @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
             @prefix spaseq: <https://w3id.org/spaseq#> .\n\
             <http://ex.org/g1> prov:generatedAtTime \"2024-01-01T00:00:05Z\"^^xsd:dateTime ;\n\
             \tspaseq:stream <http://ex.org/s> ;\n\
             \tspaseq:lateFor <file:///q.rq> , \"query 2\" .\n\
             <http://ex.org/g1> {\n\t<http://ex.org/a> <http://ex.org/p> 3 .\n}\n"
        ));
        // read back: two events, the second under a fresh blank node stamped in seconds
        let quads: Vec<Quad> = oxttl::TriGParser::new()
            .for_slice(text.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        let stamps: Vec<&Quad> = quads
            .iter()
            .filter(|q| q.predicate.as_str().ends_with("generatedAtTime"))
            .collect();
        assert_eq!(stamps.len(), 2);
        let Term::Literal(second) = &stamps[1].object else {
            panic!("a stamp is a literal")
        };
        assert_eq!(
            (second.value(), second.datatype()),
            ("2.5", oxrdf::vocab::xsd::DECIMAL)
        );
        let fresh = GraphName::from(stamps[1].subject.clone());
        assert!(matches!(fresh, GraphName::BlankNode(_)));
        assert_eq!(quads.iter().filter(|q| q.graph_name == fresh).count(), 1);
    }
}
