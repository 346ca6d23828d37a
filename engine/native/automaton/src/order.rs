//! Complete matches, and the order they are released in (docs/decisions.md 4, Python's
//! `matches.match_order`): by the event completing each first (unless a window closing
//! completed them), then start time, then the positions of their events, then the N-Triples
//! spelling of their bindings and of each taken event's bindings.

use super::buffer::Node;
use smallvec::SmallVec;
use spaseq_gpm::vars::{Row, Slot, VarTable};
use spaseq_io::dictionary::{Dictionary, TermId};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A complete match: the mapping, the taken events (through the shared buffer), start and
/// end time in nanoseconds, and its number among the query's results (`number`: k for the
/// k-th result; 0 until the engine numbers it, and for a match DISTINCT drops).
#[derive(Debug, Clone)]
pub struct MatchRecord {
    pub mu: Rc<Row>,
    pub node: Option<Rc<Node>>,
    pub start: i128,
    pub time: i128,
    pub number: u64,
}

type Spelling = (Vec<(String, String)>, Vec<Vec<(String, String)>>);

/// What the N-Triples tie-break compares (Python's `matches.spelling`): the bindings sorted
/// by variable name, then each taken event's bindings in its GPM's local order.
fn spelling(
    m: &MatchRecord,
    vars: &VarTable,
    locals: &dyn Fn(usize) -> Vec<Slot>,
    dict: &Dictionary,
) -> Spelling {
    let nt = |id: TermId| dict.get(id).to_string();
    let mut bindings: Vec<(String, String)> =
        m.mu.iter()
            .enumerate()
            .filter_map(|(slot, v)| v.map(|id| (vars.name(slot).to_owned(), nt(id))))
            .collect();
    bindings.sort();
    let taken = Node::chain(&m.node)
        .iter()
        .map(|t| {
            locals(t.gpm)
                .iter()
                .zip(t.bindings.iter())
                .filter_map(|(&slot, v)| v.map(|id| (vars.name(slot).to_owned(), nt(id))))
                .collect()
        })
        .collect();
    (bindings, taken)
}

/// An event's place in the order: (time, arrival).
type Order = (i128, u64);

/// Average events per match above which a moment's event lists are ranked in a trie rather
/// than copied out per match (a Kleene+ moment can complete n matches of 1..n iterations: n²
/// events to copy, against the n nodes of the shared buffer they are made of).
const LISTED_PER_MATCH: usize = 16;

/// Sort one moment's batch into the match order; `ordered` counts the events' order keys
/// the sort held (what bounds its memory: tests check it).
pub fn sort_batch(
    batch: Vec<MatchRecord>,
    by_completion: bool,
    vars: &VarTable,
    locals: &dyn Fn(usize) -> Vec<Slot>,
    dict: &Dictionary,
    ordered: &mut u64,
) -> Vec<MatchRecord> {
    if batch.len() < 2 {
        return batch;
    }
    if let Some(keys) = packed_keys(&batch, by_completion, ordered) {
        return arrange(batch, &keys, vars, locals, dict);
    }
    let budget = LISTED_PER_MATCH * batch.len();
    let few = batch
        .iter()
        .try_fold(0usize, |n, m| {
            let n = n + Node::depth_up_to(&m.node, budget - n);
            (n < budget).then_some(n)
        })
        .is_some();
    let keys = order_keys(&batch, by_completion, few, ordered);
    arrange(batch, &keys, vars, locals, dict)
}

/// `batch` in the order of `keys` (one per match, stable), matches of equal keys by the
/// N-Triples spelling of their bindings.
fn arrange<K: Ord>(
    batch: Vec<MatchRecord>,
    keys: &[K],
    vars: &VarTable,
    locals: &dyn Fn(usize) -> Vec<Slot>,
    dict: &Dictionary,
) -> Vec<MatchRecord> {
    let mut order: Vec<usize> = (0..batch.len()).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b])); // stable, and linear on ordered input
    let mut records: Vec<Option<MatchRecord>> = batch.into_iter().map(Some).collect();
    let mut take = |i: usize| records[i].take().expect("each match is released once");
    let mut out = Vec::with_capacity(order.len());
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && keys[order[j]] == keys[order[i]] {
            j += 1;
        }
        if j - i > 1 {
            let mut spelled: Vec<(Spelling, MatchRecord)> = order[i..j]
                .iter()
                .map(|&k| {
                    let m = take(k);
                    (spelling(&m, vars, locals, dict), m)
                })
                .collect();
            spelled.sort_by(|a, b| a.0.cmp(&b.0));
            out.extend(spelled.into_iter().map(|(_, m)| m));
        } else {
            out.push(take(order[i]));
        }
        i = j;
    }
    out
}

/// A match's place in the order but for the spelling tie-break: its last event's (unless a
/// window closing completed it), its start, its events'.
type Key = (Option<Order>, i128, Events);

/// Where the match a run would complete by taking one more event, the moment's latest
/// (`last`: so the event completing it, as `sort_batch` keys a batch an event completed),
/// stands in the match order but for the spelling tie-break (`start`: the match's, `node`:
/// the events the run took), packed as `sort_batch` packs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CompletionKey(Packed);

impl CompletionKey {
    /// None when the key does not fit (`Packed`: more events, or times beyond 64 bits).
    pub fn of(start: i128, node: &Option<Rc<Node>>, last: Order) -> Option<Self> {
        let (events, _) = packed_events(node, Some(last))?;
        Some(CompletionKey(Packed {
            last: pack(last)?,
            start: biased(i64::try_from(start).ok()?),
            events,
        }))
    }

    /// Where `m`, completed by an event, stands in the match order but for the spelling
    /// tie-break: the key `sort_batch` packs for it (None when it does not fit).
    pub fn of_match(m: &MatchRecord) -> Option<Self> {
        Some(CompletionKey(Packed::of_match(m, true)?.0))
    }
}

/// Events a match may have taken for its key to be packed (`Packed`).
const PACKED_EVENTS: usize = 4;

/// A `Key` packed into unsigned integers that compare as it does, for a match of at most
/// `PACKED_EVENTS` events whose times and start fit in 64 bits (all but a few batches):
/// comparing it takes a few instructions where a `Key` compares i128 pairs through an enum
/// and a list, and a moment of many matches of few events (skip-till-any) spends most of its
/// ordering in those comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Packed {
    /// The last event's packed order (`pack`); 0 for None (below every packed order).
    last: u128,
    /// The start, biased into an unsigned integer.
    start: u64,
    /// The events' packed orders, first to last, then 0s: a list before its extensions.
    events: [u128; PACKED_EVENTS],
}

impl Packed {
    /// The key of `m` (its last event's order first when `by_completion`), and how many
    /// events it took; None when it does not fit.
    fn of_match(m: &MatchRecord, by_completion: bool) -> Option<(Packed, usize)> {
        let (events, n) = packed_events(&m.node, None)?;
        let last = match by_completion {
            true => events[..n].iter().max().copied().unwrap_or(0),
            false => 0,
        };
        let start = biased(i64::try_from(m.start).ok()?);
        Some((
            Packed {
                last,
                start,
                events,
            },
            n,
        ))
    }
}

/// An i64 as a u64 of the same order.
fn biased(value: i64) -> u64 {
    (value as u64) ^ (1 << 63)
}

/// An event's order key as one integer of the same order, above 0: its time (biased) above
/// its arrival plus one; None when the time does not fit in 64 bits or the arrival is the
/// largest u64.
fn pack((time, seq): Order) -> Option<u128> {
    let time = biased(i64::try_from(time).ok()?);
    let seq = seq.checked_add(1)?;
    Some((u128::from(time) << 64) | u128::from(seq))
}

/// The packed orders of the events of the list ending at `node`, first to last, then of
/// `then`, then 0s, and how many there are; None when one does not fit (`pack`) or there are
/// more than `PACKED_EVENTS`.
fn packed_events(
    node: &Option<Rc<Node>>,
    then: Option<Order>,
) -> Option<([u128; PACKED_EVENTS], usize)> {
    let mut events = [0u128; PACKED_EVENTS];
    let mut n = 0;
    let mut at = node.as_deref();
    while let Some(node) = at {
        *events.get_mut(n)? = pack(node.taken.event.order())?;
        n += 1;
        at = node.parent.as_deref();
    }
    events[..n].reverse(); // the chain lists them last to first
    if let Some(order) = then {
        *events.get_mut(n)? = pack(order)?;
        n += 1;
    }
    Some((events, n))
}

/// Each match's key packed (`Packed`), None when one of them cannot be (`ordered` then
/// untouched, and the batch is keyed by `order_keys`).
fn packed_keys(
    batch: &[MatchRecord],
    by_completion: bool,
    ordered: &mut u64,
) -> Option<Vec<Packed>> {
    let mut keys = Vec::with_capacity(batch.len());
    let mut listed = 0;
    for m in batch {
        let (key, n) = Packed::of_match(m, by_completion)?;
        listed += n as u64;
        keys.push(key);
    }
    *ordered += listed;
    Some(keys)
}

/// Each match's key; its events by their order keys when `listed` (a match takes a few
/// events: inline, no allocation each), else by the rank of their list among the batch's.
fn order_keys(
    batch: &[MatchRecord],
    by_completion: bool,
    listed: bool,
    ordered: &mut u64,
) -> Vec<Key> {
    if listed {
        return batch
            .iter()
            .map(|m| {
                let events = Node::orders(&m.node);
                *ordered += events.len() as u64;
                let last = if by_completion {
                    events.iter().max().copied()
                } else {
                    None
                };
                (last, m.start, Events::Listed(events))
            })
            .collect();
    }
    let mut trie = Trie::default();
    let at: Vec<u32> = batch.iter().map(|m| trie.locate(&m.node)).collect();
    *ordered += trie.len() as u64;
    let ranks = trie.ranks();
    batch
        .iter()
        .zip(at)
        .map(|(m, t)| {
            let last = if by_completion { trie.max(t) } else { None };
            (last, m.start, Events::Ranked(ranks[t as usize]))
        })
        .collect()
}

/// A match's events in the order's terms: their order keys, or their list's rank among the
/// moment's lists (one kind per batch).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Events {
    Listed(SmallVec<[Order; 4]>),
    Ranked(u32),
}

/// The moment's event lists as a trie of order keys: a list is a path from the root, the
/// shared buffer's nodes mapped onto it once each (a node's list is its parent's and one
/// event more).
#[derive(Default)]
struct Trie {
    /// Per trie node, its children by order key; node 0 is the empty list.
    children: Vec<BTreeMap<Order, u32>>,
    /// Per trie node, the largest order key on its path.
    max: Vec<Option<Order>>,
    /// The trie node of each buffer node met (alive while the batch is).
    at: HashMap<*const Node, u32>,
}

impl Trie {
    fn len(&self) -> usize {
        self.children.len()
    }

    /// The trie node of the list ending at `node`.
    fn locate(&mut self, node: &Option<Rc<Node>>) -> u32 {
        if self.children.is_empty() {
            self.children.push(BTreeMap::new());
            self.max.push(None);
        }
        let mut missing = Vec::new();
        let mut at = node.as_deref();
        let mut t = 0;
        while let Some(n) = at {
            if let Some(&found) = self.at.get(&(n as *const Node)) {
                t = found;
                break;
            }
            missing.push(n);
            at = n.parent.as_deref();
        }
        for n in missing.into_iter().rev() {
            let key = n.taken.event.order();
            let next = self.children.len() as u32;
            let child = *self.children[t as usize].entry(key).or_insert(next);
            if child == next {
                self.children.push(BTreeMap::new());
                self.max.push(self.max[t as usize].max(Some(key)));
            }
            self.at.insert(n as *const Node, child);
            t = child;
        }
        t
    }

    fn max(&self, t: u32) -> Option<Order> {
        self.max[t as usize]
    }

    /// Each trie node's rank in the lists' order: a list before its extensions, and lists
    /// parting at an event in that event's order (a preorder walk, children by key).
    fn ranks(&self) -> Vec<u32> {
        let mut rank = vec![0; self.children.len()];
        let mut next = 0;
        let mut stack = vec![0u32];
        while let Some(t) = stack.pop() {
            rank[t as usize] = next;
            next += 1;
            stack.extend(self.children[t as usize].values().rev().copied());
        }
        rank
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Taken;
    use crate::event::EventData;

    fn event(uid: u64, time: i128, seq: u64) -> Rc<EventData> {
        Rc::new(EventData {
            uid,
            stream: 0,
            dated: false,
            time,
            start: time,
            seq,
            graph: None,
            triples: Vec::new(),
            used: Default::default(),
        })
    }

    fn push(parent: &Option<Rc<Node>>, e: &Rc<EventData>) -> Option<Rc<Node>> {
        let taken = Taken {
            gpm: 0,
            event: e.clone(),
            bindings: Rc::from(Vec::new()),
        };
        Some(Node::push(parent.clone(), taken))
    }

    /// Match records of the lists `nodes`, the i-th starting at `start(i)`.
    fn records(nodes: &[Option<Rc<Node>>], start: impl Fn(usize) -> i128) -> Vec<MatchRecord> {
        nodes
            .iter()
            .enumerate()
            .map(|(i, node)| MatchRecord {
                mu: Rc::new(Vec::new()),
                node: node.clone(),
                start: start(i),
                time: 9,
                number: 0,
            })
            .collect()
    }

    /// Two sets of keys of one batch order its records alike.
    fn assert_same_order<A: Ord, B: Ord>(a: &[A], b: &[B]) {
        for i in 0..a.len() {
            for j in 0..a.len() {
                assert_eq!(a[i].cmp(&a[j]), b[i].cmp(&b[j]), "{i} {j}");
            }
        }
    }

    #[test]
    fn packed_keys_order_as_listed_ones() {
        // negative and positive times, events of one time told apart by arrival, prefixes,
        // the empty list, starts of either sign
        let e: Vec<_> = (0..6)
            .map(|i| event(i, (i as i128 / 2) * 1_000_000_007 - 2_000_000_000, 5 - i))
            .collect();
        let a = push(&None, &e[0]);
        let ab = push(&a, &e[1]);
        let abc = push(&ab, &e[2]);
        let abd = push(&ab, &e[3]);
        let ae = push(&a, &e[4]);
        let f = push(&None, &e[5]);
        let fa = push(&f, &e[0]);
        let nodes = [abd, abc.clone(), None, ab, ae, fa, abc, f, a];
        let batch = records(
            &nodes,
            |i| {
                if i % 3 == 0 {
                    -(i as i128)
                } else {
                    i as i128
                }
            },
        );
        for by_completion in [false, true] {
            let (mut listed, mut packed) = (0, 0);
            let a = order_keys(&batch, by_completion, true, &mut listed);
            let b = packed_keys(&batch, by_completion, &mut packed).expect("packable");
            assert_same_order(&a, &b);
            assert_eq!(listed, packed);
        }
    }

    #[test]
    fn completion_keys_order_as_the_batch_they_complete() {
        // runs of lists of different lengths, sharing prefixes, of events at one time told
        // apart by arrival, starts of either sign; the last event completes each
        let e: Vec<_> = (0..6).map(|i| event(i, (i / 2) as i128, 5 - i)).collect();
        let last = event(9, 7, 9);
        let a = push(&None, &e[0]);
        let ab = push(&a, &e[1]);
        let abc = push(&ab, &e[2]);
        let ad = push(&a, &e[3]);
        let f = push(&None, &e[5]);
        let fe = push(&f, &e[4]);
        let runs = [abc, ad.clone(), a, ab, fe, f, ad];
        let completed: Vec<_> = runs.iter().map(|node| push(node, &last)).collect();
        // one start (the lists alone order them: a list before its extensions, once the
        // last event is on each) and starts of either sign
        for start in [
            |_: usize| 0,
            |i: usize| if i.is_multiple_of(2) { -(i as i128) } else { 1 },
        ] {
            let batch = records(&completed, start);
            let keys: Vec<_> = runs
                .iter()
                .enumerate()
                .map(|(i, node)| CompletionKey::of(start(i), node, last.order()))
                .collect::<Option<_>>()
                .expect("packable");
            for by_list in [true, false] {
                let batch_keys = order_keys(&batch, true, by_list, &mut 0);
                assert_same_order(&keys, &batch_keys);
            }
            let batch_packed = packed_keys(&batch, true, &mut 0).expect("packable");
            assert_same_order(&keys, &batch_packed);
            // a run of four events completes a match of five: no packed key
            let four = push(&runs[0], &e[3]);
            assert!(CompletionKey::of(0, &four, last.order()).is_none());
        }
    }

    #[test]
    fn keys_that_do_not_fit_are_not_packed() {
        let far = event(0, i128::from(i64::MAX) + 1, 0);
        let last_arrival = event(1, 0, u64::MAX);
        let near = event(2, 0, 0);
        let five = (0..5).fold(None, |node, _| push(&node, &near));
        let record = |node: Option<Rc<Node>>, start: i128| MatchRecord {
            mu: Rc::new(Vec::new()),
            node,
            start,
            time: 0,
            number: 0,
        };
        for m in [
            record(push(&None, &far), 0),
            record(push(&None, &last_arrival), 0),
            record(five, 0),
            record(push(&None, &near), i128::MIN),
        ] {
            let mut ordered = 0;
            let batch = [record(push(&None, &near), 0), m];
            assert!(packed_keys(&batch, true, &mut ordered).is_none());
            assert_eq!(ordered, 0);
        }
    }

    #[test]
    fn ranked_lists_order_as_listed_ones() {
        // lists sharing nodes, lists of equal events in nodes of their own, prefixes of
        // others, events of one time told apart by arrival, the empty list
        let e: Vec<_> = (0..6).map(|i| event(i, (i / 2) as i128, i)).collect();
        let a = push(&None, &e[0]);
        let ab = push(&a, &e[1]);
        let abc = push(&ab, &e[2]);
        let abd = push(&ab, &e[3]);
        let a2 = push(&None, &e[0]);
        let a2d = push(&a2, &e[3]);
        let ae = push(&a, &e[4]);
        let f = push(&None, &e[5]);
        let fa = push(&f, &e[0]);
        let nodes = [abd, abc.clone(), None, a2d, ab, ae, fa, abc, f, a];
        let batch = records(&nodes, |i| (i % 2) as i128);
        for by_completion in [false, true] {
            let (mut listed, mut ranked) = (0, 0);
            let a = order_keys(&batch, by_completion, true, &mut listed);
            let b = order_keys(&batch, by_completion, false, &mut ranked);
            assert_same_order(&a, &b);
            // the trie holds a node per distinct list (the empty one included: 9), the lists
            // every event of every match (19)
            assert_eq!((listed, ranked), (19, 9));
        }
    }
}
