//! Partitions of waiting runs, optionally sorted by a range key: the partitioning of the
//! paper's Section 7.2 carried from equality joins to order comparisons (the Python
//! `runtime.range_index` it replaces). A GPM such as `B { ?c :price ?p2 FILTER(?p2 > ?p1) }`
//! can only extend runs whose `?p1` is below the event's `?p2`: runs are kept sorted by
//! their `?p1`, and an event visits the runs on the right side of its own value only.
//!
//! The index is a conservative pre-filter: every run it returns is still checked by the
//! GPM's FILTERs, and it never leaves out a run the FILTER could accept. Keys are the
//! numeric values as f64: rounding to the nearest double is monotone, so exact `a <= b`
//! implies `key(a) <= key(b)`, and selecting by the non-strict comparison of keys keeps every
//! run whose exact value is on the right side (SPARQL compares mixed numerics after a
//! promotion that rounds monotonically too). Non-numeric values and NaN have no key: such
//! runs are always visited.

use oxrdf::vocab::xsd;
use oxrdf::Term;
use oxsdatatypes::Double;
use smallvec::SmallVec;
use spaseq_gpm::Value;
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_io::hash::FastHasher;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::hash::BuildHasherDefault;

/// A numeric value, totally ordered (never NaN).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key(f64);

impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl Key {
    /// The key of a number (NaN has none); what a snapshot writes.
    pub fn new(value: f64) -> Self {
        Key(value)
    }

    pub fn value(self) -> f64 {
        self.0
    }
}

/// The order key of a term: its numeric value, None for anything else and NaN.
pub fn order_key(id: TermId, dict: &Dictionary) -> Option<Key> {
    let plain_decimal = match dict.get(id) {
        Term::Literal(lit) if lit.datatype() == xsd::DECIMAL => decimal_key(lit.value()),
        _ => None,
    };
    let f = match plain_decimal {
        Some(f) => f,
        None => f64::from(match Value::of_term(id, dict) {
            Value::Integer(v) => Double::from(v),
            Value::Decimal(v) => Double::from(v),
            Value::Float(v) => Double::from(v),
            Value::Double(v) => v,
            _ => return None,
        }),
    };
    (!f.is_nan()).then_some(Key(if f == 0.0 { 0.0 } else { f }))
}

/// The key of an `xsd:decimal` lexical form without building its `Decimal` (whose parse
/// and conversion cost over a thousand instructions, most of them 128-bit divisions): the
/// same f64 as `Double::from(Decimal)`, the promotion SPARQL compares decimals with (the
/// digits less the fraction's trailing zeros, over the power of ten left). None unless the
/// form is `[+-]digits[.digits]` with at most 19 integer and 18 fraction digits (leading
/// zeros aside): the full parse decides the rest.
fn decimal_key(lexical: &str) -> Option<f64> {
    let bytes = lexical.as_bytes();
    let (negative, body) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        b'+' => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let (int, frac) = match body.iter().position(|&b| b == b'.') {
        Some(dot) => (&body[..dot], &body[dot + 1..]),
        None => (body, &body[..0]),
    };
    if int.is_empty() && frac.is_empty()
        || !int.iter().chain(frac).all(u8::is_ascii_digit)
        || frac.len() > 18
    {
        return None;
    }
    let int = &int[int.iter().position(|&b| b != b'0').unwrap_or(int.len())..];
    if int.len() > 19 {
        return None;
    }
    // Double::from(Decimal) strips the fraction's trailing zeros, then divides
    let kept = frac.len() - frac.iter().rev().take_while(|&&b| b == b'0').count();
    let mut value: i128 = 0;
    for &digit in int.iter().chain(&frac[..kept]) {
        value = value * 10 + i128::from(digit - b'0');
    }
    if value == 0 {
        return Some(0.0);
    }
    let shift = 10_i128.pow(kept as u32);
    let f = (value as f64) / (shift as f64);
    Some(if negative { -f } else { f })
}

/// Terms' order keys, each computed once (from the lexical form: a decimal's costs thousands
/// of instructions) while the cache holds it; it forgets everything when it grows past
/// `KEYS_KEPT` terms, so it stays small whatever the stream.
#[derive(Debug, Default)]
pub struct KeyCache(RefCell<HashMap<TermId, Option<Key>, BuildHasherDefault<FastHasher>>>);

const KEYS_KEPT: usize = 1 << 16;

impl KeyCache {
    /// `order_key(id, dict)`, remembered.
    pub fn key(&self, id: TermId, dict: &Dictionary) -> Option<Key> {
        if let Some(&key) = self.0.borrow().get(&id) {
            return key;
        }
        let key = order_key(id, dict);
        let mut keys = self.0.borrow_mut();
        if keys.len() >= KEYS_KEPT {
            keys.clear();
        }
        keys.insert(id, key);
        key
    }
}

/// How a GPM's FILTER compares its event's variable with a run's key: with `scale * key +
/// offset`, visiting the runs on the `below` side of the event value taken back through it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub below: bool,
    pub scale: f64,
    pub offset: f64,
}

/// Relative slack of a bound computed through a line: far above the few roundings of the
/// f64 arithmetic (and of xsd:float's, 6e-8 each) between it and the exact bound.
const SLACK: f64 = 1e-6;

impl Line {
    /// The key bound for an event value `v`: `(v - offset) / scale`, widened by `SLACK` on
    /// the side that visits more runs, so that no run the exact comparison accepts is left
    /// out; None (visit every run) when it is not a finite number.
    pub fn bound(self, v: Key) -> Option<Key> {
        if self.scale == 1.0 && self.offset == 0.0 {
            return Some(v);
        }
        let v = v.value();
        let exact = (v - self.offset) / self.scale;
        let slack = SLACK * (exact.abs() + (v.abs() + self.offset.abs()) / self.scale.abs());
        let bound = if self.below {
            exact + slack
        } else {
            exact - slack
        };
        bound
            .is_finite()
            .then_some(Key(if bound == 0.0 { 0.0 } else { bound }))
    }
}

/// What one solution of an event asks of a partition: the runs with key <= value
/// (`below`) or >= value; a None value (not a number, or the GPM has no range) asks for all.
pub type Request = (Option<Key>, bool);

/// A run's place in its partition's creation order: its id, and the run with its key until
/// it is removed.
type Slot<R> = (u64, Option<(R, Option<Key>)>);

/// A partition's keyed runs sorted by (key, id): a sorted vector while small (a partition
/// mostly holds one key's runs of a window, dozens, where a B-tree's node walks cost more
/// than moving a few hundred bytes), a B-tree once past `SMALL_SORTED`.
#[derive(Debug)]
enum ByKey<R> {
    Small(Vec<((Key, u64), R)>),
    Large(BTreeMap<(Key, u64), R>),
}

/// The most runs `ByKey` keeps in a vector.
const SMALL_SORTED: usize = 256;

impl<R> ByKey<R> {
    fn insert(&mut self, at: (Key, u64), run: R) {
        match self {
            ByKey::Small(v) => match v.binary_search_by(|(x, _)| x.cmp(&at)) {
                Ok(i) => v[i].1 = run,
                Err(i) if v.len() < SMALL_SORTED => v.insert(i, (at, run)),
                Err(_) => {
                    let mut tree: BTreeMap<(Key, u64), R> = std::mem::take(v).into_iter().collect();
                    tree.insert(at, run);
                    *self = ByKey::Large(tree);
                }
            },
            ByKey::Large(tree) => {
                tree.insert(at, run);
            }
        }
    }

    fn remove(&mut self, at: &(Key, u64)) {
        match self {
            ByKey::Small(v) => {
                if let Ok(i) = v.binary_search_by(|(x, _)| x.cmp(at)) {
                    v.remove(i);
                }
            }
            ByKey::Large(tree) => {
                tree.remove(at);
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            ByKey::Small(v) => v.len(),
            ByKey::Large(tree) => tree.len(),
        }
    }

    /// The runs keyed at most `h`, with their ids, into `out`.
    fn up_to<'a>(&'a self, h: Key, out: &mut SmallVec<[(u64, &'a R); 8]>) {
        let bound = (h, u64::MAX);
        match self {
            ByKey::Small(v) => {
                let end = v.partition_point(|(x, _)| *x <= bound);
                out.extend(v[..end].iter().map(|((_, id), r)| (*id, r)));
            }
            ByKey::Large(tree) => out.extend(tree.range(..=bound).map(|((_, id), r)| (*id, r))),
        }
    }

    /// The runs keyed at least `l`, with their ids, into `out`.
    fn from<'a>(&'a self, l: Key, out: &mut SmallVec<[(u64, &'a R); 8]>) {
        let bound = (l, 0);
        match self {
            ByKey::Small(v) => {
                let start = v.partition_point(|(x, _)| *x < bound);
                out.extend(v[start..].iter().map(|((_, id), r)| (*id, r)));
            }
            ByKey::Large(tree) => out.extend(tree.range(bound..).map(|((_, id), r)| (*id, r))),
        }
    }
}

/// The runs of one partition (step, loop, equality-key values), in creation order, with
/// those that have a key also sorted by it, and those without one listed apart (a lookup
/// by key visits only the runs it returns, not the whole partition).
///
/// Creation order is an array of slots by increasing id (runs are created, and mostly die,
/// in that order: an insertion is a push at the back, a removal empties its slot, found by
/// binary search, and the empty slots at either end are popped); the empty slots left
/// inside are dropped once they outnumber the runs.
#[derive(Debug)]
pub struct Partition<R> {
    runs: VecDeque<Slot<R>>,
    live: usize,
    sorted: ByKey<R>,
    unkeyed: BTreeSet<u64>,
}

impl<R> Default for Partition<R> {
    fn default() -> Self {
        Partition {
            runs: VecDeque::new(),
            live: 0,
            sorted: ByKey::Small(Vec::new()),
            unkeyed: BTreeSet::new(),
        }
    }
}

impl<R: Clone> Partition<R> {
    pub fn insert(&mut self, id: u64, run: R, key: Option<Key>) {
        if self.runs.back().is_some_and(|&(last, _)| last >= id) {
            // given again (a snapshot listing a run twice): its former key goes
            self.remove(id);
        }
        match key {
            Some(k) => {
                self.sorted.insert((k, id), run.clone());
            }
            None => {
                self.unkeyed.insert(id);
            }
        }
        let slot = (id, Some((run, key)));
        match self.runs.back() {
            Some(&(last, _)) if last >= id => match self.slot(id) {
                // a run restored out of order, or given again: kept in id order
                Ok(i) => {
                    if self.runs[i].1.is_none() {
                        self.live += 1;
                    }
                    self.runs[i] = slot;
                }
                Err(i) => {
                    self.runs.insert(i, slot);
                    self.live += 1;
                }
            },
            _ => {
                self.runs.push_back(slot);
                self.live += 1;
            }
        }
    }

    /// Where run `id`'s slot is (Err: where it would go).
    fn slot(&self, id: u64) -> Result<usize, usize> {
        self.runs.binary_search_by_key(&id, |&(i, _)| i)
    }

    pub fn remove(&mut self, id: u64) {
        let Ok(i) = self.slot(id) else {
            return;
        };
        match self.runs[i].1.take() {
            Some((_, Some(k))) => {
                self.sorted.remove(&(k, id));
            }
            Some((_, None)) => {
                self.unkeyed.remove(&id);
            }
            None => return,
        }
        self.live -= 1;
        while self.runs.front().is_some_and(|(_, s)| s.is_none()) {
            self.runs.pop_front();
        }
        while self.runs.back().is_some_and(|(_, s)| s.is_none()) {
            self.runs.pop_back();
        }
        if self.runs.len() > 2 * self.live + 16 {
            self.runs.retain(|(_, s)| s.is_some());
        }
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    pub fn len(&self) -> usize {
        self.live
    }

    /// The runs with their keys, in creation order.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &R, Option<Key>)> + '_ {
        self.runs
            .iter()
            .filter_map(|(id, s)| s.as_ref().map(|(r, k)| (*id, r, *k)))
    }

    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries().map(|(id, _, _)| id)
    }

    pub fn runs(&self) -> impl Iterator<Item = &R> + '_ {
        self.entries().map(|(_, r, _)| r)
    }

    /// The number of runs kept sorted by a key.
    pub fn keyed(&self) -> usize {
        self.sorted.len()
    }

    /// The runs an event may extend, in creation order: the union over `requests`.
    pub fn select(&self, requests: &[Request], out: &mut Vec<R>) {
        let mut hi: Option<Key> = None;
        let mut lo: Option<Key> = None;
        for &(value, below) in requests {
            let Some(v) = value else {
                out.extend(self.runs().cloned());
                return;
            };
            if below {
                hi = Some(hi.map_or(v, |h| h.max(v)));
            } else {
                lo = Some(lo.map_or(v, |l| l.min(v)));
            }
        }
        let mut found: SmallVec<[(u64, &R); 8]> = self
            .unkeyed
            .iter()
            .filter_map(|&id| {
                let i = self.slot(id).ok()?;
                Some((id, &self.runs[i].1.as_ref()?.0))
            })
            .collect();
        if let Some(h) = hi {
            self.sorted.up_to(h, &mut found);
        }
        if let Some(l) = lo {
            self.sorted.from(l, &mut found);
        }
        found.sort_unstable_by_key(|&(id, _)| id);
        found.dedup_by_key(|&mut (id, _)| id);
        out.extend(found.into_iter().map(|(_, r)| r.clone()));
    }
}

/// A query's partitions, each in a numbered slot that its runs' homes name: a run's death
/// goes straight to its partition (hashing the key, a few term ids, cost a kill about a
/// sixth of its instructions), and only a new run looks its partition up by key. An emptied
/// partition is dropped and its slot given to the next new one.
#[derive(Debug)]
pub struct Partitions<K, R> {
    parts: Vec<Option<(K, Partition<R>)>>,
    free: Vec<u32>,
    slots: HashMap<K, u32, BuildHasherDefault<FastHasher>>,
}

impl<K, R> Default for Partitions<K, R> {
    fn default() -> Self {
        Partitions {
            parts: Vec::new(),
            free: Vec::new(),
            slots: HashMap::default(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Clone, R: Clone> Partitions<K, R> {
    /// The slot of the partition `key`, made (empty) if there is none; the key is cloned
    /// only then.
    pub fn slot_for(&mut self, key: &K) -> u32 {
        if let Some(&slot) = self.slots.get(key) {
            return slot;
        }
        let entry = Some((key.clone(), Partition::default()));
        let slot = match self.free.pop() {
            Some(slot) => {
                self.parts[slot as usize] = entry;
                slot
            }
            None => {
                self.parts.push(entry);
                u32::try_from(self.parts.len() - 1).expect("fewer than 2^32 partitions")
            }
        };
        self.slots.insert(key.clone(), slot);
        slot
    }

    /// Add run `id` to partition `key` (`Partition::insert`): its slot, for the run's home.
    pub fn insert(&mut self, key: &K, id: u64, run: R, range_key: Option<Key>) -> u32 {
        let slot = self.slot_for(key);
        self.part_mut(slot).insert(id, run, range_key);
        slot
    }

    /// Remove run `id` from the partition in `slot`, dropping the partition if that empties
    /// it.
    pub fn remove(&mut self, slot: u32, id: u64) {
        let Some((key, part)) = self.parts.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        part.remove(id);
        if part.is_empty() {
            self.slots.remove(key);
            self.parts[slot as usize] = None;
            self.free.push(slot);
        }
    }

    fn part_mut(&mut self, slot: u32) -> &mut Partition<R> {
        &mut self.parts[slot as usize]
            .as_mut()
            .expect("a slot given out holds its partition")
            .1
    }

    /// The partition `key`, if it has runs.
    pub fn get(&self, key: &K) -> Option<&Partition<R>> {
        let slot = *self.slots.get(key)?;
        self.parts[slot as usize].as_ref().map(|(_, p)| p)
    }

    /// The key of the partition in `slot` (a run's home, as a snapshot writes it).
    pub fn key(&self, slot: u32) -> Option<&K> {
        self.parts.get(slot as usize)?.as_ref().map(|(k, _)| k)
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every partition with its key, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &Partition<R>)> + '_ {
        self.parts.iter().flatten().map(|(k, p)| (k, p))
    }

    pub fn values(&self) -> impl Iterator<Item = &Partition<R>> + '_ {
        self.iter().map(|(_, p)| p)
    }

    /// Drop the partitions left empty (a snapshot's homes may name one that lists no run).
    pub fn drop_empty(&mut self) {
        for slot in 0..self.parts.len() {
            if let Some((key, part)) = &self.parts[slot] {
                if part.is_empty() {
                    self.slots.remove(key);
                    self.parts[slot] = None;
                    self.free.push(slot as u32);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, NamedNode, Term};

    /// The key the full parse gives a decimal lexical form (None: not a decimal).
    fn parsed_key(lexical: &str) -> Option<f64> {
        let decimal: oxsdatatypes::Decimal = lexical.parse().ok()?;
        Some(f64::from(Double::from(decimal)))
    }

    /// `decimal_key` is the full parse's key wherever it answers, on forms around every
    /// boundary it has (signs, leading and trailing zeros, empty parts, 18 fraction and 19
    /// integer digits, rounding past 2^53) and on pseudo-random digit strings; it answers
    /// for the plain forms.
    #[test]
    fn the_decimal_shortcut_is_the_full_parse() {
        let mut forms: Vec<String> = [
            "0",
            "-0",
            "+0",
            "0.0",
            "-0.000",
            "00012.3400",
            "5.",
            ".5",
            "-.5",
            "+5.",
            ".",
            "",
            "-",
            "+",
            "1e5",
            "1.2.3",
            " 1",
            "１",
            "175.30",
            "-175.31",
            "0.1",
            "0.3",
            "9007199254740993",
            "9007199254740993.5",
            "123456789012345678.9",
            "1234567890123456789",
            "12345678901234567890",
            "0.123456789012345678",
            "0.1234567890123456789",
            "9999999999999999999.999999999999999999",
            "-9999999999999999999.999999999999999999",
            "100000000000000000000",
            "1000000000000000000.000000000000000000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..20_000 {
            let mut s = String::new();
            match next(4) {
                0 => s.push('-'),
                1 => s.push('+'),
                _ => {}
            }
            for _ in 0..next(22) {
                s.push(char::from(
                    b'0' + if next(3) == 0 { 0 } else { next(10) as u8 },
                ));
            }
            if next(5) != 0 {
                s.push('.');
                for _ in 0..next(21) {
                    s.push(char::from(
                        b'0' + if next(3) == 0 { 0 } else { next(10) as u8 },
                    ));
                }
            }
            forms.push(s);
        }
        let mut answered = 0;
        for form in &forms {
            if let Some(f) = decimal_key(form) {
                answered += 1;
                assert_eq!(
                    Some(f.to_bits()),
                    parsed_key(form).map(f64::to_bits),
                    "{form:?}"
                );
            }
        }
        assert!(answered > 10_000, "{answered}");
        assert_eq!(decimal_key("175.30"), Some(175.3));
        assert_eq!(decimal_key("1e5"), None);
        assert_eq!(decimal_key(""), None);
    }

    #[test]
    fn keys_are_numeric_values_and_selection_is_inclusive() {
        let dict = Dictionary::new();
        let num = |v: &str, dt: &str| {
            dict.intern(Term::from(Literal::new_typed_literal(
                v,
                NamedNode::new_unchecked(format!("http://www.w3.org/2001/XMLSchema#{dt}")),
            )))
        };
        let one = order_key(num("1", "integer"), &dict);
        assert_eq!(one, order_key(num("1.0", "decimal"), &dict));
        assert_eq!(order_key(num("NaN", "double"), &dict), None);
        let cache = KeyCache::default();
        for _ in 0..2 {
            assert_eq!(cache.key(num("1.0", "decimal"), &dict), one);
            assert_eq!(cache.key(num("NaN", "double"), &dict), None);
        }
        assert_eq!(
            order_key(
                dict.intern(NamedNode::new_unchecked("http://x").into()),
                &dict
            ),
            None
        );
        let mut p = Partition::default();
        for (id, v) in [(1, "1"), (2, "5"), (3, "3")] {
            p.insert(id, id, order_key(num(v, "integer"), &dict));
        }
        p.insert(4, 4, None);
        let mut out = Vec::new();
        p.select(&[(order_key(num("3", "integer"), &dict), true)], &mut out);
        assert_eq!(out, vec![1, 3, 4]);
        out.clear();
        p.select(&[(order_key(num("3", "integer"), &dict), false)], &mut out);
        assert_eq!(out, vec![2, 3, 4]);
        out.clear();
        // both sides at once: the union, each run once, in creation order
        p.select(
            &[
                (order_key(num("3", "integer"), &dict), true),
                (order_key(num("1", "integer"), &dict), false),
            ],
            &mut out,
        );
        assert_eq!(out, vec![1, 2, 3, 4]);
        p.remove(3);
        p.remove(4);
        out.clear();
        p.select(&[(order_key(num("4", "integer"), &dict), true)], &mut out);
        assert_eq!(out, vec![1]);
        out.clear();
        p.select(&[(None, true)], &mut out);
        assert_eq!(out, vec![1, 2]);
    }

    /// `ByKey` against the B-tree it stands for: random insertions and removals (past the
    /// vector's size), each followed by both range lookups.
    #[test]
    fn sorted_runs_answer_as_a_btree_does() {
        let mut seed: u64 = 42;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let mut ours: ByKey<u64> = ByKey::Small(Vec::new());
        let mut tree: BTreeMap<(Key, u64), u64> = BTreeMap::new();
        for round in 0..4000u64 {
            let at = (Key::new(next(50) as f64 / 4.0), next(700));
            if round % 1000 < 600 {
                ours.insert(at, round);
                tree.insert(at, round);
            } else {
                ours.remove(&at);
                tree.remove(&at);
            }
            assert_eq!(ours.len(), tree.len());
            let v = Key::new(next(60) as f64 / 4.0 - 1.0);
            let (mut below, mut above) = (SmallVec::new(), SmallVec::new());
            ours.up_to(v, &mut below);
            ours.from(v, &mut above);
            let want_below: Vec<(u64, &u64)> = tree
                .range(..=(v, u64::MAX))
                .map(|((_, id), r)| (*id, r))
                .collect();
            let want_above: Vec<(u64, &u64)> =
                tree.range((v, 0)..).map(|((_, id), r)| (*id, r)).collect();
            assert_eq!(below.to_vec(), want_below, "round {round}");
            assert_eq!(above.to_vec(), want_above, "round {round}");
        }
        assert!(
            matches!(ours, ByKey::Large(_)),
            "the test grew it past the vector"
        );
    }

    #[test]
    fn a_run_given_again_is_kept_once_under_its_new_key() {
        let mut p: Partition<u64> = Partition::default();
        p.insert(1, 10, Some(Key::new(1.0)));
        p.insert(2, 20, Some(Key::new(5.0)));
        p.insert(1, 11, Some(Key::new(9.0)));
        assert_eq!(p.len(), 2);
        let mut out = Vec::new();
        p.select(&[(Some(Key::new(2.0)), true)], &mut out);
        assert_eq!(out, Vec::<u64>::new(), "no run is keyed at most 2 any more");
        p.select(&[(Some(Key::new(9.0)), true)], &mut out);
        assert_eq!(out, vec![11, 20]);
        p.insert(2, 21, None);
        assert_eq!((p.len(), p.keyed()), (2, 1));
    }

    #[test]
    fn a_partition_emptied_frees_its_slot_for_the_next() {
        let mut parts: Partitions<(usize, u32), u64> = Partitions::default();
        let a = parts.insert(&(1, 7), 1, 10, None);
        let b = parts.insert(&(1, 8), 2, 20, Some(Key::new(2.5)));
        assert_eq!(
            parts.insert(&(1, 7), 3, 30, None),
            a,
            "one partition per key"
        );
        assert_ne!(a, b);
        parts.remove(a, 1);
        assert_eq!(
            parts.get(&(1, 7)).map(|p| p.ids().collect::<Vec<_>>()),
            Some(vec![3])
        );
        parts.remove(a, 3);
        assert!(parts.get(&(1, 7)).is_none() && parts.key(a).is_none());
        let c = parts.insert(&(2, 9), 4, 40, None);
        assert_eq!(c, a, "the freed slot is given again");
        assert_eq!(parts.key(c), Some(&(2, 9)));
        parts.remove(b, 2);
        parts.remove(c, 4);
        assert!(parts.is_empty() && parts.values().next().is_none());
        let d = parts.slot_for(&(3, 1));
        parts.drop_empty();
        assert!(parts.key(d).is_none() && parts.is_empty());
    }

    /// Runs removed in any order, inserted out of order (a restore) or again: the partition
    /// lists the live ones in id order, counts them, and keeps few empty slots.
    #[test]
    fn creation_order_survives_removals_in_any_order() {
        let mut p: Partition<u64> = Partition::default();
        let mut live: std::collections::BTreeSet<u64> = Default::default();
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        for id in 1..=2000u64 {
            let key = (id % 3 != 0).then(|| Key::new((id % 17) as f64));
            p.insert(id, id, key);
            live.insert(id);
            // expire from the front mostly, sometimes anywhere
            if next() % 2 == 0 {
                if let Some(&first) = live.iter().next() {
                    p.remove(first);
                    live.remove(&first);
                }
            }
            if next() % 5 == 0 {
                let victim = live
                    .iter()
                    .nth((next() as usize) % live.len().max(1))
                    .copied();
                if let Some(v) = victim {
                    p.remove(v);
                    live.remove(&v);
                }
            }
            p.remove(id + 1_000_000); // not there: nothing happens
            assert_eq!(p.len(), live.len());
            assert!(p.runs.len() <= 2 * p.live + 16);
        }
        // out of order: below the last id, then one given again
        p.insert(3, 3, None);
        live.insert(3);
        p.insert(3, 3, None);
        assert_eq!(
            p.ids().collect::<Vec<_>>(),
            live.iter().copied().collect::<Vec<_>>()
        );
        let mut out = Vec::new();
        p.select(&[(None, true)], &mut out);
        assert_eq!(out, live.iter().copied().collect::<Vec<_>>());
        out.clear();
        p.select(&[(Some(Key::new(100.0)), true)], &mut out);
        assert_eq!(
            out,
            live.iter().copied().collect::<Vec<_>>(),
            "every key is below 100"
        );
        for id in live.clone() {
            p.remove(id);
        }
        assert!(p.is_empty() && p.runs.is_empty() && p.keyed() == 0);
    }
}
