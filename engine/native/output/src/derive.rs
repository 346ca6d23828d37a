//! A query's results as events of its output stream (docs/decisions.md 15, "MATCH as RDF"):
//! the k-th result is the graph `<output#match-k>` holding the CONSTRUCT template
//! instantiated with the result's row, or for a SELECT query the match described in the
//! spaseq vocabulary. The one implementation (decision 59; its oracle is
//! `tests/output/derive_oracle.py`): TriG output (`trig.rs`) writes these graphs, and Python
//! reads them (`_native.derived_graph`) for composed queries and materialisation.

use super::spell::{time_datatype, time_value};
use oxrdf::vocab::xsd;
use oxrdf::{BlankNode, Literal, NamedNode, NamedNodeRef, NamedOrBlankNode, Term, Triple};
use std::collections::HashSet;

pub(crate) const SPASEQ_NS: &str = "https://w3id.org/spaseq#";

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

/// One event a SELECT match took, as `describe` writes it.
pub struct Taken<'a> {
    pub atom: &'a str,
    pub stream: &'a str,
    pub time: i128,
    pub dated: bool,
    pub graph: Option<&'a Term>,
}

/// How a query's results become graphs: its output stream and its CONSTRUCT template (None:
/// a SELECT query, its matches described).
#[derive(Clone)]
pub struct Derive {
    output: String,
    query: NamedNode,
    template: Option<Vec<[TemplateTerm; 3]>>,
    fresh: usize,
}

impl Derive {
    /// The results of the query whose output stream is `output`, a CONSTRUCT query with
    /// `template` or a SELECT query (None); an error for an output that is not an IRI.
    pub fn new(output: String, template: Option<Vec<[TemplateTerm; 3]>>) -> Result<Derive, String> {
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
        Ok(Derive {
            output,
            query,
            template,
            fresh,
        })
    }

    /// The graph name of the k-th result (`derived.match_name`).
    pub fn match_name(&self, k: u64) -> NamedNode {
        let o = &self.output;
        let iri = if o.ends_with('#') || o.ends_with('/') {
            format!("{o}match-{k}")
        } else {
            format!("{o}{}match-{k}", if o.contains('#') { '-' } else { '#' })
        };
        NamedNode::new_unchecked(iri)
    }

    /// The graph of the result named `name`: for a CONSTRUCT query its template under
    /// `values` (the template's variables' terms), for a SELECT one its match (times `(time,
    /// start, dated)`, the events `taken`, the bindings `(variable, term)`).
    pub fn graph(
        &self,
        name: &NamedNode,
        times: (i128, i128, bool),
        values: &[Option<&Term>],
        bindings: &[(&str, &Term)],
        taken: &[Taken<'_>],
    ) -> Vec<Triple> {
        match &self.template {
            Some(template) => self.instantiate(template, values),
            None => self.describe(name, times, bindings, taken),
        }
    }

    /// The template's triples under `values`, in template order, without repeats; a triple
    /// with an unbound variable or that is not valid RDF is skipped (SPARQL 1.1 section 16.2).
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

    /// A match in the spaseq vocabulary (docs/vocabulary.md; times `dated` or not).
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

    #[test]
    fn a_select_result_is_its_match_described_in_the_vocabulary() {
        let derive = Derive::new("http://ex.org/q".into(), None).unwrap();
        let name = derive.match_name(2);
        let graph_name: Term = NamedNode::new_unchecked("http://ex.org/g1").into();
        let taken = [Taken {
            atom: "A",
            stream: "http://ex.org/s",
            time: 5_000_000_000,
            dated: false,
            graph: Some(&graph_name),
        }];
        let value: Term = Literal::from(7).into();
        let triples = derive.graph(
            &name,
            (5_000_000_000, 4_500_000_000, false),
            &[],
            &[("x", &value)],
            &taken,
        );
        let spaseq = |local: &str| NamedNode::new_unchecked(format!("{SPASEQ_NS}{local}"));
        let object = |p: &str| -> Vec<String> {
            triples
                .iter()
                .filter(|t| t.predicate == spaseq(p))
                .map(|t| t.object.to_string())
                .collect()
        };
        assert_eq!(name.as_str(), "http://ex.org/q#match-2");
        assert_eq!(triples.len(), 4 + 7 + 3);
        assert_eq!(object("query"), ["<http://ex.org/q>"]);
        assert_eq!(
            object("start"),
            ["\"4.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>"]
        );
        assert_eq!(object("atom"), ["\"A\""]);
        assert_eq!(object("graph"), ["<http://ex.org/g1>"]);
        assert_eq!(
            object("position"),
            ["\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>"]
        );
        assert_eq!(object("variable"), ["\"x\""]);
        assert_eq!(
            object("value"),
            ["\"7\"^^<http://www.w3.org/2001/XMLSchema#integer>"]
        );
    }
}
