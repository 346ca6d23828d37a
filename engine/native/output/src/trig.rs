//! TriG output (`TrigWriter` of `tests/output/writers_oracle.py`, the oracle): each result a
//! named graph event of the query's output stream, `<output#match-k>` (`derive.rs`), stamped
//! in the default graph with `prov:generatedAtTime`. Each result is spelled by a fresh oxttl serializer,
//! the one pyoxigraph's `serialize` uses, with its `@prefix` lines dropped (they are written
//! once, by `start`).

use super::derive::Derive;
pub use super::derive::{Taken, TemplateTerm};
use super::spell::{time_datatype, time_value};
use oxrdf::{GraphNameRef, Literal, NamedNodeRef, QuadRef, Term};
use oxttl::TriGSerializer;

const PROV_GENERATED_AT_TIME: &str = "http://www.w3.org/ns/prov#generatedAtTime";
const PROV_STARTED_AT_TIME: &str = "http://www.w3.org/ns/prov#startedAtTime";
const PROV_ENDED_AT_TIME: &str = "http://www.w3.org/ns/prov#endedAtTime";

/// Times below this (in nanoseconds: 1e8 seconds) are stamped as `xsd:decimal` seconds,
/// others as `xsd:dateTime`s (`match_rdf.stamp_literal`).
const EPOCH_LIKE: i128 = 100_000_000 * 1_000_000_000;

/// What a TriG writer needs besides the rows: its prefixes, the output stream and the
/// CONSTRUCT template (None: a SELECT query, its matches described).
#[derive(Clone)]
pub struct Trig {
    /// (prefix, namespace) in the order the Python writer declares them.
    pub prefixes: Vec<(String, String)>,
    serializer: TriGSerializer,
    derive: Derive,
}

impl Trig {
    /// A TriG writer with `prefixes`, for the output stream `output`, of a CONSTRUCT query
    /// with `template` or of a SELECT query (None); an error for a namespace that is not an
    /// IRI, or an output that is not one.
    pub fn new(
        prefixes: Vec<(String, String)>,
        output: String,
        template: Option<Vec<[TemplateTerm; 3]>>,
    ) -> Result<Trig, String> {
        let mut serializer = TriGSerializer::new();
        for (prefix, ns) in &prefixes {
            serializer = serializer
                .with_prefix(prefix, ns)
                .map_err(|e| format!("prefix {prefix}: <{ns}>: {e}"))?;
        }
        Ok(Trig {
            prefixes,
            serializer,
            derive: Derive::new(output, template)?,
        })
    }

    /// The prefix declarations (`TrigWriter.start`).
    pub fn start(&self, out: &mut String) {
        for (prefix, ns) in &self.prefixes {
            out.push_str(&format!("@prefix {prefix}: <{ns}> .\n"));
        }
    }

    /// The `k`-th result, of time `time`, appended to `out`: for a CONSTRUCT query its
    /// template under `values` (the template's variables' terms), for a SELECT one its match
    /// (times `dated` or not, the events `taken`, the bindings `(variable, term)`).
    pub fn result(
        &self,
        k: u64,
        times: (i128, i128, bool),
        values: &[Option<&Term>],
        bindings: &[(&str, &Term)],
        taken: &[Taken<'_>],
        out: &mut String,
    ) {
        let name = self.derive.match_name(k);
        let triples = self.derive.graph(&name, times, values, bindings, taken);
        let (time, start, _) = times;
        let dated = time.abs() >= EPOCH_LIKE;
        let stamp = |ns: i128| {
            let mut value = String::new();
            time_value(ns, dated, &mut value);
            Literal::new_typed_literal(value, NamedNodeRef::new_unchecked(time_datatype(dated)))
        };
        // the time, and for a result that lasts its interval (docs/decisions.md 71)
        let mut stamps = vec![(PROV_GENERATED_AT_TIME, stamp(time))];
        if start != time {
            stamps.push((PROV_STARTED_AT_TIME, stamp(start)));
            stamps.push((PROV_ENDED_AT_TIME, stamp(time)));
        }
        let mut serializer = self.serializer.clone().low_level();
        let mut text = Vec::new();
        let written = stamps
            .iter()
            .try_for_each(|(predicate, value)| {
                let predicate = NamedNodeRef::new_unchecked(predicate);
                serializer.serialize_quad(
                    QuadRef::new(&name, predicate, value, GraphNameRef::DefaultGraph),
                    &mut text,
                )
            })
            .and_then(|()| {
                for t in &triples {
                    serializer.serialize_quad(t.as_ref().in_graph(&name), &mut text)?;
                }
                serializer.finish(&mut text)
            });
        written.expect("writing to a Vec does not fail");
        let text = String::from_utf8(text).expect("oxttl writes UTF-8");
        let mut rest = text.as_str();
        while rest.starts_with("@prefix ") {
            // declared once, by `start`
            rest = rest.split_once('\n').map_or("", |(_, r)| r);
        }
        out.push_str(rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::vocab::xsd;
    use oxrdf::NamedNode;

    fn prefixes() -> Vec<(String, String)> {
        [
            ("prov", "http://www.w3.org/ns/prov#"),
            ("xsd", "http://www.w3.org/2001/XMLSchema#"),
            ("spaseq", crate::derive::SPASEQ_NS),
            ("ex", "http://ex.org/"),
        ]
        .map(|(p, ns)| (p.to_owned(), ns.to_owned()))
        .to_vec()
    }

    /// What the oracle's `TrigWriter` writes for the same results (from Python).
    #[test]
    fn results_are_spelled_as_the_python_writer_spells_them() {
        let ex = |l: &str| Term::from(NamedNode::new_unchecked(format!("http://ex.org/{l}")));
        let template = vec![
            [
                ex("a"),
                ex("p"),
                Term::Literal(Literal::new_simple_literal("x")),
            ]
            .map(TemplateTerm::Term),
            [
                TemplateTerm::Term(ex("a")),
                TemplateTerm::Term(ex("p")),
                TemplateTerm::Var(0),
            ],
            // a repeat, and a literal subject: skipped
            [
                TemplateTerm::Term(ex("a")),
                TemplateTerm::Term(ex("p")),
                TemplateTerm::Term(Literal::new_simple_literal("x").into()),
            ],
            [
                TemplateTerm::Var(0),
                TemplateTerm::Term(ex("p")),
                TemplateTerm::Var(0),
            ],
        ];
        let trig = Trig::new(prefixes(), "http://ex.org/out".into(), Some(template)).unwrap();
        let mut out = String::new();
        trig.start(&mut out);
        let one: Term = Literal::new_typed_literal("1.0", xsd::DECIMAL).into();
        trig.result(
            1,
            (2_500_000_000, 2_500_000_000, false),
            &[Some(&one)],
            &[],
            &[],
            &mut out,
        );
        trig.result(
            2,
            (1_704_103_220_100_000_000, 1_704_103_219_000_000_000, true),
            &[None],
            &[],
            &[],
            &mut out,
        );
        assert_eq!(
            out,
            "@prefix prov: <http://www.w3.org/ns/prov#> .\n\
             @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
             @prefix spaseq: <https://w3id.org/spaseq#> .\n\
             @prefix ex: <http://ex.org/> .\n\
             ex:out\\#match-1 prov:generatedAtTime 2.5 .\n\
             ex:out\\#match-1 {\n\tex:a ex:p \"x\" , 1.0 .\n}\n\
             ex:out\\#match-2 prov:generatedAtTime \"2024-01-01T10:00:20.1Z\"^^xsd:dateTime ;\n\
             \tprov:startedAtTime \"2024-01-01T10:00:19Z\"^^xsd:dateTime ;\n\
             \tprov:endedAtTime \"2024-01-01T10:00:20.1Z\"^^xsd:dateTime .\n\
             ex:out\\#match-2 {\n\tex:a ex:p \"x\" .\n}\n"
        );
    }

    #[test]
    fn graph_names_follow_the_output_iri() {
        let name = |o: &str| Derive::new(o.into(), None).unwrap().match_name(3);
        assert_eq!(name("http://ex.org/q").as_str(), "http://ex.org/q#match-3");
        assert_eq!(name("http://ex.org/q#").as_str(), "http://ex.org/q#match-3");
        assert_eq!(name("http://ex.org/").as_str(), "http://ex.org/match-3");
        assert_eq!(
            name("http://ex.org/q#out").as_str(),
            "http://ex.org/q#out-match-3"
        );
    }
}
