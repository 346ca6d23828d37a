//! Complete matches, and the order they are released in (docs/decisions.md 4, Python's
//! `matches.match_order`): by the event completing each first (unless a window closing
//! completed them), then start time, then the positions of their events, then the N-Triples
//! spelling of their bindings and of each taken event's bindings.

use super::buffer::Node;
use crate::dictionary::{Dictionary, TermId};
use crate::vars::{Row, Slot, VarTable};
use smallvec::SmallVec;
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

/// Sort one moment's batch into the match order.
pub fn sort_batch(
    batch: Vec<MatchRecord>,
    by_completion: bool,
    vars: &VarTable,
    locals: &dyn Fn(usize) -> Vec<Slot>,
    dict: &Dictionary,
) -> Vec<MatchRecord> {
    if batch.len() < 2 {
        return batch;
    }
    // the events' order keys inline (a match takes a few events: no allocation each), and
    // the positions sorted rather than the records and keys (a few bytes moved, not ~250)
    type Key = (Option<(i128, u64)>, i128, SmallVec<[(i128, u64); 4]>);
    let keys: Vec<Key> = batch
        .iter()
        .map(|m| {
            let events = Node::orders(&m.node);
            let last = if by_completion {
                events.iter().max().copied()
            } else {
                None
            };
            (last, m.start, events)
        })
        .collect();
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
