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
        let hash = self.hasher.hash_one(&term);
        if let Some(id) = self.find(hash, &term) {
            return (id, Some(term));
        }
        let id = TermId::try_from(self.terms.len()).expect("fewer than 2^32 distinct terms");
        self.terms.push(Box::new(term));
        let terms = &self.terms;
        self.ids
            .borrow_mut()
            .insert_unique(hash, id, |&i| self.hasher.hash_one(&terms[i as usize]));
        (id, None)
    }

    /// The id of `term` if it was interned.
    pub fn lookup(&self, term: &Term) -> Option<TermId> {
        self.find(self.hasher.hash_one(term), term)
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
}
