//! Terms as integers: every RDF term the engine holds is interned once and referred to by a
//! `TermId`, so events, runs and indexes compare and hash integers. (Dropping terms that no
//! live event, run or cache entry refers to, for endless streams, comes with the runtime.)

use oxrdf::Term;
use std::collections::HashMap;

pub type TermId = u32;

#[derive(Debug, Default)]
pub struct Dictionary {
    ids: HashMap<Term, TermId>,
    terms: Vec<Term>,
}

impl Dictionary {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, interning it on first sight.
    pub fn intern(&mut self, term: Term) -> TermId {
        if let Some(&id) = self.ids.get(&term) {
            return id;
        }
        let id = TermId::try_from(self.terms.len()).expect("fewer than 2^32 distinct terms");
        self.terms.push(term.clone());
        self.ids.insert(term, id);
        id
    }

    pub fn get(&self, id: TermId) -> &Term {
        &self.terms[id as usize]
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}
