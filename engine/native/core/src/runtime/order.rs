//! Complete matches, and the order they are released in (docs/decisions.md 4, Python's
//! `matches.match_order`): by the event completing each first (unless a window closing
//! completed them), then start time, then the positions of their events, then the N-Triples
//! spelling of their bindings and of each taken event's bindings.

use super::buffer::Node;
use crate::dictionary::{Dictionary, TermId};
use crate::vars::{Row, Slot, VarTable};
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A complete match: the mapping, the taken events (through the shared buffer), start and
/// end time in nanoseconds.
#[derive(Debug, Clone)]
pub struct MatchRecord {
    pub mu: Rc<Row>,
    pub node: Option<Rc<Node>>,
    pub start: i128,
    pub time: i128,
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
    // the events' order keys inline (a match takes a few events: no allocation each), and
    // the positions sorted rather than the records and keys (a few bytes moved, not ~250);
    // many events per match: each match's list by its rank among the moment's lists
    type Key = (Option<Order>, i128, Events);
    let budget = LISTED_PER_MATCH * batch.len();
    let few = batch
        .iter()
        .try_fold(0usize, |n, m| {
            let n = n + Node::depth_up_to(&m.node, budget - n);
            (n < budget).then_some(n)
        })
        .is_some();
    let keys: Vec<Key> = if few {
        batch
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
            .collect()
    } else {
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
    };
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
