//! Terms as integers: every RDF term the engine holds is interned once and referred to by a
//! `TermId`, so events, runs and indexes compare and hash integers.
//!
//! Interning takes `&self` (the table only grows, and a term, once given an id, stays where
//! it is: `elsa::FrozenVec`), so terms met while evaluating (a knowledge base's answers, a
//! SPARQL engine's solutions) are interned while FILTERs read others. A dictionary never
//! drops a term: on endless streams the engine replaces it by a compacted one, rebuilt from
//! a snapshot of the state (which writes only the terms it refers to; `snapshot`,
//! docs/decisions.md 38).

use elsa::FrozenVec;
use hashbrown::HashTable;
use oxrdf::Term;
use std::cell::RefCell;
use std::hash::{BuildHasher, Hasher};

pub type TermId = u32;

/// Bytes no UTF-8 text holds, written between the parts of a term's hash: a blank node's
/// label starts after `BLANK`, a literal's value ends at `END`.
const BLANK: u8 = 0xfe;
const END: u8 = 0xff;

/// Terms are hashed with foldhash: SipHash was a fifth of the engine's time on some
/// workloads, and foldhash keeps a per-process random seed (terms may come from clients).
/// Each term is stored once, in `terms`; `ids` holds only ids, found by the term's hash
/// and compared through `terms` (a map keyed by terms had cloned every new one).
#[derive(Default)]
pub struct Dictionary {
    ids: RefCell<HashTable<TermId>>,
    hasher: foldhash::fast::RandomState,
    terms: FrozenVec<Box<Term>>,
}

impl std::fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dictionary({} terms)", self.len())
    }
}

impl Dictionary {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, interning it on first sight.
    pub fn intern(&self, term: Term) -> TermId {
        self.intern_returning(term).0
    }

    /// As `intern`, handing `term` back when it was known already, for the caller to drop
    /// where it likes (a term a reader thread allocated is cheaper to free on another
    /// thread than on the engine's).
    pub fn intern_returning(&self, term: Term) -> (TermId, Option<Term>) {
        let hash = self.hash(&term);
        if let Some(id) = self.find(hash, &term) {
            return (id, Some(term));
        }
        let id = TermId::try_from(self.terms.len()).expect("fewer than 2^32 distinct terms");
        self.terms.push(Box::new(term));
        let terms = &self.terms;
        self.ids
            .borrow_mut()
            .insert_unique(hash, id, |&i| self.hash(&terms[i as usize]));
        (id, None)
    }

    /// The id of `term` if it was interned.
    pub fn lookup(&self, term: &Term) -> Option<TermId> {
        self.find(self.hash(term), term)
    }

    /// A term's hash in the table: its texts' bytes written to the seeded hasher as they are
    /// (the derived `Hash` also writes every enum discriminant and length, one call each:
    /// twice the instructions, and interning is on the engine thread). Every part goes
    /// through the seed, so no one can choose terms that collide.
    fn hash(&self, term: &Term) -> u64 {
        let mut h = self.hasher.build_hasher();
        match term {
            Term::NamedNode(n) => h.write(n.as_str().as_bytes()),
            Term::BlankNode(b) => {
                h.write_u8(BLANK);
                h.write(b.as_str().as_bytes());
            }
            Term::Literal(l) => {
                h.write(l.value().as_bytes());
                h.write_u8(END); // no UTF-8 text has this byte: the value ends here
                match l.language() {
                    Some(tag) => {
                        h.write(tag.as_bytes());
                        h.write_u8(l.direction().map_or(END, |d| d as u8));
                    }
                    None => h.write(l.datatype().as_str().as_bytes()),
                }
            }
            #[allow(unreachable_patterns)]
            other => return self.hasher.hash_one(other),
        }
        h.finish()
    }

    fn find(&self, hash: u64, term: &Term) -> Option<TermId> {
        let terms = &self.terms;
        self.ids
            .borrow()
            .find(hash, |&i| terms[i as usize] == *term)
            .copied()
    }

    pub fn get(&self, id: TermId) -> &Term {
        &self.terms[id as usize]
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::NamedNode;

    #[test]
    fn terms_keep_their_ids_and_references_while_the_table_grows() {
        let dict = Dictionary::new();
        let a = dict.intern(NamedNode::new_unchecked("http://ex.org/a").into());
        let first = dict.get(a);
        for i in 0..10_000 {
            dict.intern(NamedNode::new_unchecked(format!("http://ex.org/{i}")).into());
        }
        assert_eq!(
            first,
            &Term::from(NamedNode::new_unchecked("http://ex.org/a"))
        );
        assert_eq!(dict.intern(first.clone()), a);
        assert_eq!(dict.len(), 10_001);
    }

    /// Terms of one text in every kind (IRI, blank node, simple, typed, tagged and directed
    /// literals, triple terms) get distinct ids and distinct hashes, each found again; a
    /// term equal to one of them built another way gets its id.
    #[test]
    fn a_text_in_every_kind_is_a_term_of_its_own() {
        use oxrdf::vocab::xsd;
        use oxrdf::{BaseDirection, BlankNode, Literal, Triple};
        let dict = Dictionary::new();
        let mut terms: Vec<Term> = Vec::new();
        for text in ["a", "1", "http://ex.org/a", "", "x#integer"] {
            if let Ok(n) = NamedNode::new(text) {
                terms.push(n.into());
            }
            if let Ok(b) = BlankNode::new(text) {
                terms.push(b.into());
            }
            terms.push(Literal::new_simple_literal(text).into());
            for datatype in [xsd::INTEGER, xsd::DECIMAL, xsd::DOUBLE, xsd::DATE_TIME] {
                terms.push(Literal::new_typed_literal(text, datatype).into());
            }
            for tag in ["en", "en-gb", "fr"] {
                let tagged = Literal::new_language_tagged_literal(text, tag).unwrap();
                terms.push(tagged.into());
                for d in [BaseDirection::Ltr, BaseDirection::Rtl] {
                    let directed = Literal::new_directional_language_tagged_literal(text, tag, d);
                    terms.push(directed.unwrap().into());
                }
            }
        }
        let a = NamedNode::new_unchecked("http://ex.org/a");
        let triple = |o: Term| Term::from(Triple::new(a.clone(), a.clone(), o));
        terms.push(triple(a.clone().into()));
        terms.push(triple(
            Literal::new_simple_literal("http://ex.org/a").into(),
        ));
        let ids: Vec<TermId> = terms.iter().map(|t| dict.intern(t.clone())).collect();
        let distinct: std::collections::HashSet<&Term> = terms.iter().collect();
        assert_eq!(
            distinct.len(),
            terms.len(),
            "the test's terms are all different"
        );
        assert_eq!(dict.len(), terms.len());
        let hashes: std::collections::HashSet<u64> = terms.iter().map(|t| dict.hash(t)).collect();
        assert_eq!(
            hashes.len(),
            terms.len(),
            "a kind, datatype or tag left out of the hash"
        );
        for (t, &id) in terms.iter().zip(&ids) {
            assert_eq!(dict.lookup(t), Some(id), "{t}");
            assert_eq!(dict.get(id), t);
        }
        // an xsd:string literal is the simple literal of its text
        let simple = dict.intern(Literal::new_simple_literal("a").into());
        let typed = dict.intern(Literal::new_typed_literal("a", xsd::STRING).into());
        assert_eq!(simple, typed);
        assert_eq!(dict.len(), terms.len());
    }
}
