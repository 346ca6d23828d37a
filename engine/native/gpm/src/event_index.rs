//! An event's triples indexed for the joins of compiled GPMs: built once per event and
//! shared by every GPM and run that tries it. Triples are grouped by predicate; lookups by
//! (predicate, subject) and (predicate, object) are built on first use; the values of its
//! literals are parsed once, on first use by a FILTER.

use super::value::{Number, Value};
use oxrdf::Term;
use smallvec::SmallVec;
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_io::hash::FastHasher;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::rc::Rc;
use std::sync::OnceLock;

/// The index's maps are keyed by term ids: hashed fast (`spaseq_io::hash::FastHasher`), not
/// by SipHash.
type Map<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Pairs `(subject, object)` of one predicate.
pub type Pairs = Vec<(TermId, TermId)>;

/// A predicate's list longer than this is probed through a hash lookup when one side of
/// the pattern is bound (shorter lists are scanned).
const LOOKUP_THRESHOLD: usize = 8;

/// Values of terms that FILTERs read from a run's bindings rather than from the event (the
/// `?p1` of `?p2 < ?p1 * 0.975`): parsed once each (a decimal's lexical form costs hundreds
/// of instructions), not once per run and event; it forgets everything past `VALUES_KEPT`
/// terms. One per term dictionary: ids mean nothing in another.
#[derive(Debug, Default)]
pub struct ValueCache(RefCell<Map<TermId, Value>>);

const VALUES_KEPT: usize = 1 << 16;

impl ValueCache {
    fn value(&self, id: TermId, literal: &oxrdf::Literal) -> Value {
        if let Some(value) = self.0.borrow().get(&id) {
            return value.clone();
        }
        let value = Value::of_literal(literal);
        let mut values = self.0.borrow_mut();
        if values.len() >= VALUES_KEPT {
            values.clear();
        }
        values.insert(id, value.clone());
        value
    }

    /// The number the literal `id` is, if it is one: read in place, not cloned.
    fn number(&self, id: TermId, literal: &oxrdf::Literal) -> Option<Number> {
        if let Some(value) = self.0.borrow().get(&id) {
            return Number::of(value);
        }
        Number::of(&self.value(id, literal))
    }
}

#[derive(Debug, Default)]
pub struct EventIndex {
    /// Every distinct triple's (subject, object), sorted by (predicate, subject, object):
    /// an event has a handful of triples, so two flat vectors index them (hash maps had
    /// cost four allocations per event)
    pairs: Vec<(TermId, TermId)>,
    /// each predicate, ascending, with the range of its pairs in `pairs`
    preds: SmallVec<[(TermId, u32, u32); 4]>,
    /// (predicate, subject) -> the pairs with that subject
    by_subject: OnceLock<Map<(TermId, TermId), Pairs>>,
    /// (predicate, object) -> the pairs with that object
    by_object: OnceLock<Map<(TermId, TermId), Pairs>>,
    /// every object's value, parsed on first use (ascending by term id)
    values: Vec<(TermId, OnceLock<Value>)>,
    /// values of other terms (None: parsed on every use)
    others: Option<Rc<ValueCache>>,
}

impl EventIndex {
    /// Index an event's triples (a graph is a set: repeated triples count once), with the
    /// values of other terms taken from `others` (the engine's, for its dictionary).
    pub fn with_values(triples: &[[TermId; 3]], others: Rc<ValueCache>) -> Self {
        EventIndex {
            others: Some(others),
            ..Self::new(triples)
        }
    }

    /// Index an event's triples (a graph is a set: repeated triples count once).
    pub fn new(triples: &[[TermId; 3]]) -> Self {
        let mut sorted: Vec<(TermId, TermId, TermId)> =
            triples.iter().map(|&[s, p, o]| (p, s, o)).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut preds: SmallVec<[(TermId, u32, u32); 4]> = SmallVec::new();
        for (i, &(p, _, _)) in sorted.iter().enumerate() {
            let i = u32::try_from(i).expect("fewer than 2^32 triples in an event");
            match preds.last_mut() {
                Some((last, _, end)) if *last == p => *end = i + 1,
                _ => preds.push((p, i, i + 1)),
            }
        }
        let mut values: Vec<(TermId, OnceLock<Value>)> = sorted
            .iter()
            .map(|&(_, _, o)| (o, OnceLock::new()))
            .collect();
        values.sort_unstable_by_key(|&(o, _)| o);
        values.dedup_by_key(|&mut (o, _)| o);
        EventIndex {
            pairs: sorted.into_iter().map(|(_, s, o)| (s, o)).collect(),
            preds,
            by_subject: OnceLock::new(),
            by_object: OnceLock::new(),
            values,
            others: None,
        }
    }

    /// The pairs of `p` (empty if the event has none).
    fn of(&self, p: TermId) -> &[(TermId, TermId)] {
        match self.preds.binary_search_by_key(&p, |&(q, _, _)| q) {
            Ok(i) => {
                let (_, start, end) = self.preds[i];
                &self.pairs[start as usize..end as usize]
            }
            Err(_) => &[],
        }
    }

    /// The distinct triples (subject, predicate, object), grouped by predicate.
    pub fn triples(&self) -> impl Iterator<Item = (TermId, TermId, TermId)> + '_ {
        self.predicates()
            .flat_map(|(p, pairs)| pairs.iter().map(move |&(s, o)| (s, p, o)))
    }

    /// The number of distinct triples.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub fn has_predicate(&self, p: TermId) -> bool {
        self.preds.binary_search_by_key(&p, |&(q, _, _)| q).is_ok()
    }

    /// Whether the event has every one of `predicates` (the GPMs' pre-filter).
    pub fn has_predicates(&self, predicates: &[TermId]) -> bool {
        predicates.iter().all(|p| self.has_predicate(*p))
    }

    /// Every predicate with its pairs.
    pub fn predicates(&self) -> impl Iterator<Item = (TermId, &[(TermId, TermId)])> {
        self.preds
            .iter()
            .map(|&(p, start, end)| (p, &self.pairs[start as usize..end as usize]))
    }

    /// The pairs of `p` with the given subject and/or object if known: a superset (the
    /// caller still checks both sides), exact when a lookup was used.
    pub fn candidates(
        &self,
        p: TermId,
        subject: Option<TermId>,
        object: Option<TermId>,
    ) -> &[(TermId, TermId)] {
        let all = self.of(p);
        if all.len() <= LOOKUP_THRESHOLD {
            return all;
        }
        let (map, key) = match (subject, object) {
            (Some(s), _) => (&self.by_subject, (p, s)),
            (None, Some(o)) => (&self.by_object, (p, o)),
            (None, None) => return all,
        };
        let by_subject = subject.is_some();
        let map = map.get_or_init(|| {
            let mut out: Map<(TermId, TermId), Pairs> = Map::default();
            for (p, pairs) in self.predicates() {
                for &(s, o) in pairs {
                    let side = if by_subject { s } else { o };
                    out.entry((p, side)).or_default().push((s, o));
                }
            }
            out
        });
        map.get(&key).map_or(&[], Vec::as_slice)
    }

    /// The value of a term for expressions: cached for the event's objects.
    pub fn value(&self, id: TermId, dict: &Dictionary) -> Value {
        match dict.get(id) {
            Term::Literal(lit) => match self.values.binary_search_by_key(&id, |(o, _)| *o) {
                Ok(i) => self.values[i]
                    .1
                    .get_or_init(|| Value::of_literal(lit))
                    .clone(),
                Err(_) => match &self.others {
                    Some(cache) => cache.value(id, lit),
                    None => Value::of_literal(lit),
                },
            },
            _ => Value::Node(id),
        }
    }

    /// The number a term is, if it is one (the numeric comparisons' `value`, read from the
    /// same caches without cloning a `Value`).
    pub fn number(&self, id: TermId, dict: &Dictionary) -> Option<Number> {
        if let Ok(i) = self.values.binary_search_by_key(&id, |(o, _)| *o) {
            return Number::of(self.values[i].1.get_or_init(|| Value::of_term(id, dict)));
        }
        match dict.get(id) {
            Term::Literal(lit) => match &self.others {
                Some(cache) => cache.number(id, lit),
                None => Number::of(&Value::of_literal(lit)),
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, NamedNode};

    #[test]
    fn a_run_s_values_are_parsed_once_and_read_alike_from_every_event() {
        let dict = Dictionary::new();
        let decimal = NamedNode::new_unchecked("http://www.w3.org/2001/XMLSchema#decimal");
        let price = dict.intern(Literal::new_typed_literal("124.92", decimal).into());
        let word = dict.intern(Literal::new_simple_literal("x").into());
        let cache = Rc::new(ValueCache::default());
        for _ in 0..3 {
            let event = EventIndex::with_values(&[], cache.clone());
            let value = format!("{:?}", event.value(price, &dict));
            assert_eq!(
                value,
                format!("{:?}", EventIndex::new(&[]).value(price, &dict))
            );
            assert!(value.contains("12492"), "{value}");
            assert!(matches!(event.value(word, &dict), Value::Str(s) if &*s == "x"));
        }
        assert_eq!(cache.0.borrow().len(), 2);
    }
}
