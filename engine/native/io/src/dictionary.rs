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
use std::hash::BuildHasher;

pub type TermId = u32;

/// Odd constants that set a kind's hashes apart from an IRI's of the same text.
const BLANK: u64 = 0x9e37_79b9_7f4a_7c15;
const TAGGED: u64 = 0xc2b2_ae3d_27d4_eb4f;
const TYPED: u64 = 0x1656_67b1_9e37_79f9;

/// The last eight bytes of `text` (all of them if fewer) as an integer.
fn tail(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let from = bytes.len().saturating_sub(8);
    bytes[from..]
        .iter()
        .fold(bytes.len() as u64, |acc, &b| (acc << 8) | u64::from(b))
}

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

    /// A term's hash in the table: its text hashed in one go, its kind, datatype or language
    /// folded in after (the derived `Hash` feeds every field and length to the hasher
    /// separately: twice the instructions, and interning is on the engine thread).
    fn hash(&self, term: &Term) -> u64 {
        let h = &self.hasher;
        match term {
            Term::NamedNode(n) => h.hash_one(n.as_str()),
            Term::BlankNode(b) => h.hash_one(b.as_str()) ^ BLANK,
            Term::Literal(l) => {
                let text = h.hash_one(l.value());
                match l.language() {
                    // a tag is short: all of it folded in, and its direction
                    Some(tag) => {
                        let direction = l.direction().map_or(0, |d| d as u64 + 1);
                        text ^ tail(tag).wrapping_add(direction).wrapping_mul(TAGGED)
                    }
                    // datatypes differ in their last bytes (`#integer`, `#decimal`, ...)
                    None => text ^ tail(l.datatype().as_str()).wrapping_mul(TYPED),
                }
            }
            #[allow(unreachable_patterns)]
            other => h.hash_one(other),
        }
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
    /// literals) get distinct ids, each found again, as oxrdf's equality says.
    #[test]
    fn a_text_in_every_kind_is_a_term_of_its_own() {
        use oxrdf::vocab::xsd;
        use oxrdf::{BaseDirection, BlankNode, Literal};
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
        let ids: Vec<TermId> = terms.iter().map(|t| dict.intern(t.clone())).collect();
        for (i, t) in terms.iter().enumerate() {
            let same = terms.iter().position(|u| u == t).unwrap();
            assert_eq!(ids[i], ids[same], "{t}");
            assert_eq!(dict.lookup(t), Some(ids[i]), "{t}");
            assert_eq!(dict.get(ids[i]), t);
        }
        let distinct: std::collections::HashSet<&Term> = terms.iter().collect();
        assert_eq!(dict.len(), distinct.len());
    }
}
