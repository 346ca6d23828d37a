//! TriG output (`engine/output/trig.py`, the oracle): each result a named graph event of the
//! query's output stream, `<output#match-k>`, stamped in the default graph with
//! `prov:generatedAtTime`, holding the CONSTRUCT template instantiated with the result's
//! bindings (`output/construct.py`), or for a SELECT query the match in the spaseq vocabulary
//! (`output/match_rdf.py` `describe`). Each result is spelled by a fresh oxttl serializer,
//! the one pyoxigraph's `serialize` uses, with its `@prefix` lines dropped (they are written
//! once, by `start`).

use super::spell::{time_datatype, time_value};
use oxrdf::vocab::xsd;
use oxrdf::{
    BlankNode, GraphNameRef, Literal, NamedNode, NamedNodeRef, NamedOrBlankNode, QuadRef, Term,
    Triple,
};
use oxttl::TriGSerializer;
use std::collections::HashSet;

const PROV_GENERATED_AT_TIME: &str = "http://www.w3.org/ns/prov#generatedAtTime";
const SPASEQ_NS: &str = "https://w3id.org/spaseq#";

/// Times below this (in nanoseconds: 1e8 seconds) are stamped as `xsd:decimal` seconds,
/// others as `xsd:dateTime`s (`match_rdf.stamp_literal`).
const EPOCH_LIKE: i128 = 100_000_000 * 1_000_000_000;

/// A term of a CONSTRUCT template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateTerm {
    /// A variable, by its number among the row's values.
    Var(usize),
    /// A blank node of the template: a fresh one per result, by its number in the template.
    Fresh(usize),
    /// A constant term.
    Term(Term),
}

/// What a TriG writer needs besides the rows: its prefixes, the output stream and the
/// CONSTRUCT template (None: a SELECT query, its matches described).
#[derive(Clone)]
pub struct Trig {
    /// (prefix, namespace) in the order the Python writer declares them.
    pub prefixes: Vec<(String, String)>,
    serializer: TriGSerializer,
    output: String,
    query: NamedNode,
    template: Option<Vec<[TemplateTerm; 3]>>,
    fresh: usize,
}

/// One event a SELECT match took, as `describe` writes it.
pub struct Taken<'a> {
    pub atom: &'a str,
    pub stream: &'a str,
    pub time: i128,
    pub dated: bool,
    pub graph: Option<&'a Term>,
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
        let query = NamedNode::new(&output).map_err(|e| format!("output <{output}>: {e}"))?;
        let fresh = template
            .iter()
            .flatten()
            .flatten()
            .filter_map(|t| match t {
                TemplateTerm::Fresh(i) => Some(i + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        Ok(Trig {
            prefixes,
            serializer,
            output,
            query,
            template,
            fresh,
        })
    }

    /// The prefix declarations (`TrigWriter.start`).
    pub fn start(&self, out: &mut String) {
        for (prefix, ns) in &self.prefixes {
            out.push_str(&format!("@prefix {prefix}: <{ns}> .\n"));
        }
    }

    /// The graph name of the k-th result (`derived.match_name`).
    fn match_name(&self, k: u64) -> NamedNode {
        let o = &self.output;
        let iri = if o.ends_with('#') || o.ends_with('/') {
            format!("{o}match-{k}")
        } else {
            format!("{o}{}match-{k}", if o.contains('#') { '-' } else { '#' })
        };
        NamedNode::new_unchecked(iri)
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
        let name = self.match_name(k);
        let triples = match &self.template {
            Some(template) => self.instantiate(template, values),
            None => self.describe(&name, times, bindings, taken),
        };
        let (time, _, _) = times;
        let mut stamp = String::new();
        let dated = time.abs() >= EPOCH_LIKE;
        time_value(time, dated, &mut stamp);
        let stamp =
            Literal::new_typed_literal(stamp, NamedNodeRef::new_unchecked(time_datatype(dated)));
        let mut serializer = self.serializer.clone().low_level();
        let mut text = Vec::new();
        let generated = NamedNodeRef::new_unchecked(PROV_GENERATED_AT_TIME);
        let written = serializer
            .serialize_quad(
                QuadRef::new(&name, generated, &stamp, GraphNameRef::DefaultGraph),
                &mut text,
            )
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

    /// The template's triples under `values`, in template order, without repeats; a triple
    /// with an unbound variable or that is not valid RDF is skipped (`construct.instantiate`).
    fn instantiate(&self, template: &[[TemplateTerm; 3]], values: &[Option<&Term>]) -> Vec<Triple> {
        let fresh: Vec<BlankNode> = (0..self.fresh).map(|_| BlankNode::default()).collect();
        let term = |t: &TemplateTerm| -> Option<Term> {
            match t {
                TemplateTerm::Var(i) => values.get(*i).copied().flatten().cloned(),
                TemplateTerm::Fresh(i) => Some(fresh[*i].clone().into()),
                TemplateTerm::Term(t) => Some(t.clone()),
            }
        };
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for [s, p, o] in template {
            let (Some(s), Some(p), Some(o)) = (term(s), term(p), term(o)) else {
                continue;
            };
            let s: NamedOrBlankNode = match s {
                Term::NamedNode(n) => n.into(),
                Term::BlankNode(b) => b.into(),
                _ => continue,
            };
            let Term::NamedNode(p) = p else { continue };
            let triple = Triple::new(s, p, o);
            if seen.insert(triple.clone()) {
                out.push(triple);
            }
        }
        out
    }

    /// A match in the spaseq vocabulary (`match_rdf.describe`, times in the input's form).
    fn describe(
        &self,
        name: &NamedNode,
        (time, start, dated): (i128, i128, bool),
        bindings: &[(&str, &Term)],
        taken: &[Taken<'_>],
    ) -> Vec<Triple> {
        let spaseq = |local: &str| NamedNode::new_unchecked(format!("{SPASEQ_NS}{local}"));
        let time_literal = |ns: i128, dated: bool| -> Term {
            let mut s = String::new();
            time_value(ns, dated, &mut s);
            Literal::new_typed_literal(s, NamedNodeRef::new_unchecked(time_datatype(dated))).into()
        };
        let integer =
            |n: usize| -> Term { Literal::new_typed_literal(n.to_string(), xsd::INTEGER).into() };
        let m: NamedOrBlankNode = name.clone().into();
        let mut out = vec![
            Triple::new(m.clone(), oxrdf::vocab::rdf::TYPE, spaseq("Match")),
            Triple::new(m.clone(), spaseq("query"), self.query.clone()),
            Triple::new(m.clone(), spaseq("time"), time_literal(time, dated)),
            Triple::new(m.clone(), spaseq("start"), time_literal(start, dated)),
        ];
        let mut iterations: Vec<(&str, usize)> = Vec::new();
        for (position, t) in taken.iter().enumerate() {
            let iteration = match iterations.iter_mut().find(|(a, _)| *a == t.atom) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    iterations.push((t.atom, 1));
                    1
                }
            };
            let node: NamedOrBlankNode = BlankNode::default().into();
            out.push(Triple::new(m.clone(), spaseq("event"), node.clone()));
            out.push(Triple::new(
                node.clone(),
                spaseq("atom"),
                Literal::new_simple_literal(t.atom),
            ));
            out.push(Triple::new(
                node.clone(),
                spaseq("stream"),
                NamedNode::new_unchecked(t.stream),
            ));
            out.push(Triple::new(
                node.clone(),
                spaseq("eventTime"),
                time_literal(t.time, t.dated),
            ));
            out.push(Triple::new(
                node.clone(),
                spaseq("position"),
                integer(position + 1),
            ));
            out.push(Triple::new(
                node.clone(),
                spaseq("iteration"),
                integer(iteration),
            ));
            if let Some(graph) = t.graph {
                out.push(Triple::new(node, spaseq("graph"), graph.clone()));
            }
        }
        for (var, term) in bindings {
            let node: NamedOrBlankNode = BlankNode::default().into();
            out.push(Triple::new(m.clone(), spaseq("binding"), node.clone()));
            out.push(Triple::new(
                node.clone(),
                spaseq("variable"),
                Literal::new_simple_literal(*var),
            ));
            out.push(Triple::new(node, spaseq("value"), (*term).clone()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixes() -> Vec<(String, String)> {
        [
            ("prov", "http://www.w3.org/ns/prov#"),
            ("xsd", "http://www.w3.org/2001/XMLSchema#"),
            ("spaseq", SPASEQ_NS),
            ("ex", "http://ex.org/"),
        ]
        .map(|(p, ns)| (p.to_owned(), ns.to_owned()))
        .to_vec()
    }

    /// What `trig.TrigWriter` writes for the same results (from Python).
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
            (2_500_000_000, 0, false),
            &[Some(&one)],
            &[],
            &[],
            &mut out,
        );
        trig.result(
            2,
            (1_704_103_220_100_000_000, 0, true),
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
             ex:out\\#match-2 prov:generatedAtTime \"2024-01-01T10:00:20.1Z\"^^xsd:dateTime .\n\
             ex:out\\#match-2 {\n\tex:a ex:p \"x\" .\n}\n"
        );
    }

    #[test]
    fn graph_names_follow_the_output_iri() {
        let name = |o: &str| Trig::new(vec![], o.into(), None).unwrap().match_name(3);
        assert_eq!(name("http://ex.org/q").as_str(), "http://ex.org/q#match-3");
        assert_eq!(name("http://ex.org/q#").as_str(), "http://ex.org/q#match-3");
        assert_eq!(name("http://ex.org/").as_str(), "http://ex.org/match-3");
        assert_eq!(
            name("http://ex.org/q#out").as_str(),
            "http://ex.org/q#out-match-3"
        );
    }
}
