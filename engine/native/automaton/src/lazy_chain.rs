//! Lazy evaluation of a skip-till-any prefix (the lazy chain automaton of Kolchinsky et al.;
//! the Python `runtime.lazy_chain` it replaces): the events the prefix's atoms may take are
//! buffered, and the prefix's partial matches are enumerated from the buffer only when an
//! event arrives that the trigger atom may take. Under skip-till-any these chains are exactly
//! the eager runs that would wait at the trigger, so the matches are the same.

use super::buffer::Taken;
use super::event::{EventRef, StreamId};
use super::gpms::{GpmEval, RunView};
use spaseq_gpm::vars::Row;
use spaseq_io::dictionary::{Dictionary, TermId};
use std::collections::VecDeque;
use std::rc::Rc;

/// A buffered event: the event, its prepared index, its position in the query's streamset.
pub type Entry<I> = (EventRef, Rc<I>, i64);

/// A partial match of the prefix: its taken events, mapping, start time and position, end
/// time and position.
pub struct Chain {
    pub taken: Vec<Taken>,
    pub mu: Row,
    pub start: i128,
    pub first: i64,
    pub end: i128,
    pub last: i64,
}

/// The events the prefix's atoms (all but its trigger) may take, within the window.
pub struct PrefixBuffer<I> {
    /// The prefix's GPMs in order, with their streams.
    atoms: Vec<(usize, StreamId)>,
    omega: Option<i128>,
    pub entries: VecDeque<Entry<I>>,
}

/// Do two mappings agree where both bind?
pub fn compatible(a: &[Option<TermId>], b: &[Option<TermId>]) -> bool {
    a.iter()
        .zip(b.iter())
        .all(|(x, y)| x.is_none() || y.is_none() || x == y)
}

impl<I> PrefixBuffer<I> {
    pub fn new(atoms: Vec<(usize, StreamId)>, omega: Option<i128>) -> Self {
        PrefixBuffer {
            atoms,
            omega,
            entries: VecDeque::new(),
        }
    }

    /// Keep the event if some buffered atom may match it in some context.
    pub fn add<G: GpmEval<Index = I>>(&mut self, gpms: &G, entry: Entry<I>, dict: &Dictionary) {
        let (event, index, _) = &entry;
        let mut rows = Vec::new();
        let useful = self.atoms.iter().any(|&(g, stream)| {
            event.stream == stream && {
                rows.clear();
                gpms.base(g, index, dict, &mut rows);
                !rows.is_empty()
            }
        });
        if useful {
            self.entries.push_back(entry);
        }
    }

    /// Drop events no match ending at `now` or later can start with.
    pub fn expire(&mut self, now: i128) {
        let Some(omega) = self.omega else { return };
        while self
            .entries
            .front()
            .is_some_and(|(e, _, _)| e.time < now - omega)
        {
            self.entries.pop_front();
        }
    }

    /// Every partial match of the buffered atoms over events earlier than `before`, each
    /// atom's GPM evaluated in the context of the atoms before it, strictly increasing
    /// times. `anchors` are the trigger's context-free solutions: a chain agreeing with none
    /// of them cannot be extended by the trigger (its mapping only grows), so it is pruned.
    pub fn chains<G: GpmEval<Index = I>>(
        &self,
        gpms: &G,
        before: i128,
        anchors: &[Row],
        empty: &Row,
        dict: &Dictionary,
    ) -> Vec<Chain> {
        if anchors.is_empty() {
            return Vec::new();
        }
        let window: Vec<&Entry<I>> = self
            .entries
            .iter()
            .filter(|(e, _, _)| e.time < before && self.omega.is_none_or(|w| before - e.time <= w))
            .collect();
        // (chain, index in `window` of its last event)
        let mut partial: Vec<(Chain, Option<usize>)> = vec![(
            Chain {
                taken: Vec::new(),
                mu: empty.clone(),
                start: 0,
                first: -1,
                end: i128::MIN,
                last: -1,
            },
            None,
        )];
        let mut rows = Vec::new();
        for &(g, stream) in &self.atoms {
            let locals = gpms.local_slots(g);
            let mut next = Vec::new();
            for (chain, j) in &partial {
                let from = j.map_or(0, |j| j + 1);
                for (k, (event, index, pos)) in window.iter().enumerate().skip(from) {
                    if event.time <= chain.end || event.stream != stream {
                        continue;
                    }
                    rows.clear();
                    gpms.results(g, index, &chain.mu, RunView::default(), dict, &mut rows);
                    for sol in rows.drain(..) {
                        if !anchors.iter().any(|a| compatible(a, &sol)) {
                            continue;
                        }
                        let mut taken = chain.taken.clone();
                        let first = taken.is_empty();
                        taken.push(Taken {
                            gpm: g,
                            event: event.clone(),
                            bindings: locals.iter().map(|&s| sol[s]).collect(),
                        });
                        next.push((
                            Chain {
                                taken,
                                mu: sol,
                                start: if first { event.time } else { chain.start },
                                first: if first { *pos } else { chain.first },
                                end: event.time,
                                last: *pos,
                            },
                            Some(k),
                        ));
                    }
                }
            }
            partial = next;
            if partial.is_empty() {
                return Vec::new();
            }
        }
        partial.into_iter().map(|(c, _)| c).collect()
    }
}
