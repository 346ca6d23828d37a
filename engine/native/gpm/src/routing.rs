//! The keys an event gives a query split by key (docs/decisions.md 67): the solutions of a
//! GPM's routing patterns (its top-level simple triple patterns, `compile.splitting`) over
//! the event's triples, terms compared as RDF terms as SPARQL matches a BGP. What Spark's
//! router runs per event (`spaseq.spark.matching`), so that routing costs no Python object
//! per triple; `compile.splitting.event_keys` is the same rule over Python terms.

use crate::error::CompileError;
use crate::parse_term;
use oxrdf::{Term, TermRef, Triple};
use std::collections::BTreeSet;

/// A pattern's position: a variable (its slot) or a term.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Var(usize),
    Term(Term),
}

/// One GPM's routing patterns, compiled.
#[derive(Debug, Clone)]
struct Patterns {
    patterns: Vec<[Slot; 3]>,
    /// each key's slot, None when no pattern binds it (the GPM then gives no key)
    keys: Vec<Option<usize>>,
    width: usize,
}

/// The routing patterns of every GPM of a query, by the stream each reads.
#[derive(Debug, Clone, Default)]
pub struct Router {
    by_stream: Vec<(String, Vec<Patterns>)>,
}

impl Router {
    /// A router for `keys` (variable names) over `gpms`: (stream IRI, patterns), a pattern
    /// being three texts, each `?name` for a variable (a blank node of a pattern is given as
    /// a variable too) or a term in N-Triples.
    pub fn new(gpms: &[(String, Vec<[String; 3]>)], keys: &[String]) -> Result<Self, CompileError> {
        let mut router = Router::default();
        for (stream, patterns) in gpms {
            let compiled = Patterns::new(patterns, keys)?;
            match router.by_stream.iter_mut().find(|(s, _)| s == stream) {
                Some((_, all)) => all.push(compiled),
                None => router.by_stream.push((stream.clone(), vec![compiled])),
            }
        }
        Ok(router)
    }

    /// The keys an event on `stream` with `triples` goes to: each key's terms in N-Triples
    /// joined by a space, sorted; none when no GPM on its stream binds every key.
    pub fn keys(&self, stream: &str, triples: &[Triple]) -> Vec<String> {
        let mut out = BTreeSet::new();
        if let Some((_, gpms)) = self.by_stream.iter().find(|(s, _)| s == stream) {
            for gpm in gpms {
                gpm.solve(triples, &mut vec![None; gpm.width], 0, &mut out);
            }
        }
        out.into_iter().collect()
    }
}

impl Patterns {
    fn new<'p>(patterns: &'p [[String; 3]], keys: &[String]) -> Result<Self, CompileError> {
        let mut names: Vec<&str> = Vec::new();
        let mut slot = |text: &'p str| -> Result<Slot, CompileError> {
            Ok(match text.strip_prefix('?') {
                Some(name) => Slot::Var(match names.iter().position(|n| *n == name) {
                    Some(i) => i,
                    None => {
                        names.push(name);
                        names.len() - 1
                    }
                }),
                None => Slot::Term(parse_term(text)?),
            })
        };
        let mut compiled = Vec::with_capacity(patterns.len());
        for [s, p, o] in patterns {
            compiled.push([slot(s)?, slot(p)?, slot(o)?]);
        }
        let keys = keys
            .iter()
            .map(|k| names.iter().position(|n| n == k))
            .collect();
        Ok(Patterns {
            patterns: compiled,
            keys,
            width: names.len(),
        })
    }

    /// Every solution of the patterns from `at` on, given `bound`, whose keys are all bound,
    /// added to `out` as its key text.
    fn solve<'t>(
        &self,
        triples: &'t [Triple],
        bound: &mut Vec<Option<TermRef<'t>>>,
        at: usize,
        out: &mut BTreeSet<String>,
    ) {
        let Some(pattern) = self.patterns.get(at) else {
            let mut key = String::new();
            for (i, slot) in self.keys.iter().enumerate() {
                let Some(term) = slot.and_then(|s| bound[s]) else {
                    return;
                };
                if i > 0 {
                    key.push(' ');
                }
                key.push_str(&term.to_string());
            }
            out.insert(key);
            return;
        };
        for t in triples {
            let terms: [TermRef<'t>; 3] = [
                t.subject.as_ref().into(),
                t.predicate.as_ref().into(),
                t.object.as_ref(),
            ];
            let before = bound.clone();
            if pattern
                .iter()
                .zip(terms)
                .all(|(slot, term)| unify(slot, term, bound))
            {
                self.solve(triples, bound, at + 1, out);
            }
            bound.clone_from(&before);
        }
    }
}

/// Whether `term` fits `slot` given `bound` (binding a free variable to it).
fn unify<'t>(slot: &Slot, term: TermRef<'t>, bound: &mut [Option<TermRef<'t>>]) -> bool {
    match slot {
        Slot::Term(t) => t.as_ref() == term,
        Slot::Var(i) => match bound[*i] {
            Some(b) => b == term,
            None => {
                bound[*i] = Some(term);
                true
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triples(text: &str) -> Vec<Triple> {
        oxttl::NTriplesParser::new()
            .for_slice(text.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn pattern(s: &str, p: &str, o: &str) -> [String; 3] {
        [s.to_owned(), p.to_owned(), o.to_owned()]
    }

    #[test]
    fn keys_are_the_solutions_binding_every_key() {
        let gpms = vec![
            (
                "<s>".to_owned(),
                vec![
                    pattern("?x", "<http://p>", "?v"),
                    pattern("?x", "<http://q>", "?site"),
                ],
            ),
            ("<t>".to_owned(), vec![pattern("?x", "<http://p>", "?v")]),
        ];
        let router = Router::new(&gpms, &["x".to_owned(), "site".to_owned()]).unwrap();
        let event = triples(
            "<http://a> <http://p> \"1\" .\n<http://a> <http://q> <http://s1> .\n\
             <http://b> <http://p> \"2\" .\n<http://b> <http://q> <http://s2> .\n",
        );
        assert_eq!(
            router.keys("<s>", &event),
            vec![
                "<http://a> <http://s1>".to_owned(),
                "<http://b> <http://s2>".to_owned()
            ]
        );
        // a GPM that binds only some keys gives none; an unread stream none
        assert!(router.keys("<t>", &event).is_empty());
        assert!(router.keys("<u>", &event).is_empty());
    }

    #[test]
    fn terms_are_compared_as_rdf_terms() {
        let gpms = vec![(
            "<s>".to_owned(),
            vec![pattern(
                "?x",
                "<http://p>",
                "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            )],
        )];
        let router = Router::new(&gpms, &["x".to_owned()]).unwrap();
        let event = triples(
            "<http://a> <http://p> \"01\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
             <http://b> <http://p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n",
        );
        assert_eq!(router.keys("<s>", &event), vec!["<http://b>".to_owned()]);
        assert!(Router::new(
            &[("<s>".to_owned(), vec![pattern("<bad", "?p", "?o")])],
            &[]
        )
        .is_err());
    }
}
