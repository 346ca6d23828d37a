//! RSEP-QL's selection and consumption policies (docs/decisions.md 65, SEMANTICS.md section
//! 16), on top of the runtime's unrestricted extensions:
//!
//! - CHRONOLOGICAL / RECENT: the extensions one event offers are held (`Proposal`) until every
//!   run has been offered it, then grouped by what they complete (the step, the iteration
//!   count, the events taken with their own bindings); each group keeps the extensions of the
//!   runs that come first (last) by the times of their events, last event first. Ties all stay.
//! - LATEST (C-SPARQL's naive SEQ): a match is released only if each of its events is at the
//!   latest time its GPM had a solution in the empty context.
//! - CONSUMPTION MATCHED: a released match uses up the event triples it took (its GPMs'
//!   patterns reading the event, instantiated by each taken solution); a run holding a used-up
//!   triple dies, and a match holding one is not released.

use super::{HashMap, QueryRuntime, RunKey, Takens};
use crate::buffer::{Node, Taken};
use crate::event::{EventData, EventRef};
use crate::gpms::{GpmEval, RunView};
use crate::order::MatchRecord;
use smallvec::SmallVec;
use spaseq_gpm::vars::Row;
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::algebra::PatternTerm;
use spaseq_plan::plan::{Plan, Selection};
use std::cell::Cell;
use std::rc::{Rc, Weak};

/// A position of a pattern reading the event: a constant (its id, remembered once the
/// dictionary has it: ids never change in a dictionary's life, and a runtime reads one
/// dictionary), or a GPM variable (its index among the GPM's local variables, as
/// `Taken::bindings` holds them; None: a blank node, never bound).
#[derive(Debug, Clone)]
enum Part {
    Term(oxrdf::Term, Cell<Option<TermId>>),
    Local(Option<usize>),
}

impl Part {
    /// The term at this position for a solution, its local variables' values `bindings`
    /// (None: not in the dictionary, unbound).
    #[inline]
    fn id(&self, bindings: &[Option<TermId>], dict: &Dictionary) -> Option<TermId> {
        match self {
            Part::Term(term, known) => known.get().or_else(|| {
                let id = dict.lookup(term); // None until the term first appears
                known.set(id);
                id
            }),
            Part::Local(i) => i.and_then(|i| bindings.get(i).copied().flatten()),
        }
    }
}

/// An extension offered by the event being processed, held until every run was offered it.
pub(super) struct Proposal {
    pub run: RunKey,
    pub pos: i64,
    pub mu: Row,
    pub taken: Takens,
}

/// The event triples one taken solution uses (a few: inline).
type Used = SmallVec<[[TermId; 3]; 2]>;

/// What the policies keep between events.
pub(super) struct Policy {
    pub selection: Selection,
    /// CHRONOLOGICAL / RECENT: the current event's extensions (not state between events).
    pub proposals: Vec<Proposal>,
    /// CONSUMPTION MATCHED: per GPM, its patterns reading the event (None: nothing consumed).
    patterns: Option<Vec<Vec<[Part; 3]>>>,
    /// The event triples used up, by event uid, with the event (forgotten once nothing holds it).
    consumed: HashMap<u64, (Weak<EventData>, Used)>,
    /// `consumed`'s size at which it is next pruned of events nothing holds.
    prune_at: usize,
    /// LATEST: per GPM, the latest time it had a solution in the empty context.
    pub latest: Vec<Option<i128>>,
}

impl Policy {
    pub fn of(plan: &Plan) -> Result<Policy, super::Unsupported> {
        let patterns = if plan.query.consume_matched {
            let mut all = Vec::with_capacity(plan.gpms.len());
            for g in &plan.gpms {
                let mut list = Vec::with_capacity(g.consumes.len());
                for tp in &g.consumes {
                    let part = |t: &PatternTerm| -> Result<Part, super::Unsupported> {
                        Ok(match t {
                            PatternTerm::Var(v) => {
                                Part::Local(g.local_vars.iter().position(|l| l == v))
                            }
                            PatternTerm::Term(t) => Part::Term(
                                spaseq_gpm::to_oxrdf(t)
                                    .map_err(|e| super::Unsupported(e.to_string()))?,
                                Cell::new(None),
                            ),
                            PatternTerm::Path(_) => {
                                return Err(super::Unsupported(
                                    "a consumed pattern with a path".into(),
                                ))
                            }
                        })
                    };
                    list.push([part(&tp.subject)?, part(&tp.predicate)?, part(&tp.object)?]);
                }
                all.push(list);
            }
            Some(all)
        } else {
            None
        };
        Ok(Policy {
            selection: plan.query.selection,
            proposals: Vec::new(),
            patterns,
            consumed: HashMap::default(),
            prune_at: 64,
            latest: vec![None; plan.gpms.len()],
        })
    }

    /// Whether extensions wait for every run to be offered the event (CHRONOLOGICAL, RECENT).
    pub fn selects(&self) -> bool {
        matches!(self.selection, Selection::Chronological | Selection::Recent)
    }

    pub fn consumes(&self) -> bool {
        self.patterns.is_some()
    }

    /// The event triples `t` uses: its GPM's patterns instantiated by its bindings that are
    /// triples of its event.
    fn used(&self, t: &Taken, dict: &Dictionary) -> Used {
        self.used_by(t.gpm, &t.event, &t.bindings, dict)
    }

    /// The triples of `event` a solution of GPM `gpm` (its local variables' values,
    /// `bindings`) uses.
    fn used_by(
        &self,
        gpm: usize,
        event: &EventData,
        bindings: &[Option<TermId>],
        dict: &Dictionary,
    ) -> Used {
        let mut out = Used::new();
        let Some(patterns) = &self.patterns else {
            return out;
        };
        for pattern in &patterns[gpm] {
            let id = |p: &Part| p.id(bindings, dict);
            let (Some(s), Some(p), Some(o)) = (id(&pattern[0]), id(&pattern[1]), id(&pattern[2]))
            else {
                continue;
            };
            let triple = [s, p, o];
            if event.triples.contains(&triple) && !out.contains(&triple) {
                out.push(triple);
            }
        }
        out
    }

    /// Whether every solution of GPM `gpm` on `event` in `solutions` (each its local
    /// variables' values) uses one same triple of the event: then a moment's matches taking
    /// the event through `gpm` all use it, and of them only the first in the match order can
    /// be released (`QueryRuntime::cut`).
    pub fn one_triple_for_all<B: AsRef<[Option<TermId>]>>(
        &self,
        gpm: usize,
        event: &EventData,
        mut solutions: impl Iterator<Item = B>,
        dict: &Dictionary,
    ) -> bool {
        let Some(first) = solutions.next() else {
            return false;
        };
        let mut common = self.used_by(gpm, event, first.as_ref(), dict);
        for bindings in solutions {
            if common.is_empty() {
                break;
            }
            let used = self.used_by(gpm, event, bindings.as_ref(), dict);
            common.retain(|triple| used.contains(triple));
        }
        !common.is_empty()
    }

    /// Whether `t` takes a triple already used up.
    pub fn is_consumed(&self, t: &Taken, dict: &Dictionary) -> bool {
        if !t.event.used.get() {
            return false; // nothing of it is used up, by this query or another
        }
        let Some((_, used)) = self.consumed.get(&t.event.uid) else {
            return false;
        };
        self.used(t, dict)
            .iter()
            .any(|triple| used.contains(triple))
    }

    /// Whether any event the chain `node` took uses a triple already used up.
    pub fn chain_consumed(&self, node: &Option<Rc<Node>>, dict: &Dictionary) -> bool {
        if self.consumed.is_empty() {
            return false;
        }
        let mut at = node.as_deref();
        while let Some(n) = at {
            if self.is_consumed(&n.taken, dict) {
                return true;
            }
            at = n.parent.as_deref();
        }
        false
    }

    /// Use up the triples match `m` took.
    fn consume(&mut self, m: &MatchRecord, dict: &Dictionary) {
        let mut at = m.node.as_deref();
        while let Some(n) = at {
            let used = self.used(&n.taken, dict);
            if !used.is_empty() {
                let event = &n.taken.event;
                event.used.set();
                let entry = self
                    .consumed
                    .entry(event.uid)
                    .or_insert_with(|| (Rc::downgrade(event), Used::new()));
                for triple in used {
                    if !entry.1.contains(&triple) {
                        entry.1.push(triple);
                    }
                }
            }
            at = n.parent.as_deref();
        }
        if self.consumed.len() >= self.prune_at {
            // an event nothing holds any more can be taken by no run: what it used is moot
            self.consumed
                .retain(|_, (event, _)| event.strong_count() > 0);
            self.prune_at = (2 * self.consumed.len()).max(64);
        }
    }

    /// The matches of `sorted` (released in this order) that use up nothing already used up,
    /// each using up its own triples before the next is judged.
    pub fn release(&mut self, sorted: Vec<MatchRecord>, dict: &Dictionary) -> Vec<MatchRecord> {
        if !self.consumes() {
            return sorted;
        }
        let mut out = Vec::with_capacity(sorted.len());
        for m in sorted {
            if self.chain_consumed(&m.node, dict) {
                continue;
            }
            self.consume(&m, dict);
            out.push(m);
        }
        out
    }

    /// The used-up triples of the events in `held` (a snapshot keeps those of the events its
    /// state refers to), by uid.
    pub fn consumed_state(&self, held: &[u64]) -> Vec<(u64, Vec<[TermId; 3]>)> {
        let mut out: Vec<(u64, Vec<[TermId; 3]>)> = self
            .consumed
            .iter()
            .filter(|(uid, _)| held.binary_search(uid).is_ok())
            .map(|(uid, (_, used))| (*uid, used.to_vec()))
            .collect();
        out.sort_unstable_by_key(|(uid, _)| *uid);
        out
    }

    /// Restore the used-up triples of a snapshot (`event`: the restored event of a uid).
    pub fn load_consumed(
        &mut self,
        consumed: &[(u64, Vec<[TermId; 3]>)],
        event: impl Fn(u64) -> Option<EventRef>,
    ) {
        for (uid, used) in consumed {
            if let Some(e) = event(*uid) {
                e.used.set();
                self.consumed
                    .insert(*uid, (Rc::downgrade(&e), used.iter().copied().collect()));
            }
        }
    }

    /// Visit the term ids of the used-up triples (to renumber them).
    pub fn terms_mut(consumed: &mut [(u64, Vec<[TermId; 3]>)], f: &mut dyn FnMut(&mut TermId)) {
        for (_, used) in consumed {
            used.iter_mut().flatten().for_each(&mut *f);
        }
    }
}

/// Of the proposals, those a CHRONOLOGICAL (`first`) or RECENT selection keeps: grouped by the
/// step and iteration they complete and the events they took with their own bindings, the
/// runs that come first (last) by their events' times, last event first; a run whose times
/// all equal another's as far as it goes, but that took fewer events, comes after it (it
/// started later). Order kept.
/// A proposal the event's extension admits, with the step and iteration it completes and
/// its run's events.
pub(super) type Admitted = (Proposal, usize, u32, Option<Rc<Node>>);

pub(super) fn select(proposals: Vec<Admitted>, first: bool) -> Vec<Proposal> {
    type Key = (usize, u32, Vec<(usize, u64, Rc<[Option<TermId>]>)>);
    let keys: Vec<(Key, Vec<i128>)> = proposals
        .iter()
        .map(|(p, step, iterations, node)| {
            let took = p
                .taken
                .iter()
                .map(|t| (t.gpm, t.event.uid, t.bindings.clone()))
                .collect();
            let mut times = Vec::new();
            let mut at = node.clone();
            while let Some(n) = at {
                times.push(n.taken.event.time);
                at = n.parent.clone();
            }
            times.push(i128::MAX); // no earlier event: after any time (started later)
            ((*step, *iterations, took), times)
        })
        .collect();
    let mut best: HashMap<&Key, &Vec<i128>> = HashMap::default();
    for (key, times) in &keys {
        best.entry(key)
            .and_modify(|b| {
                if (first && times < *b) || (!first && times > *b) {
                    *b = times;
                }
            })
            .or_insert(times);
    }
    let keep: Vec<bool> = keys.iter().map(|(key, times)| best[key] == times).collect();
    proposals
        .into_iter()
        .zip(keep)
        .filter_map(|((p, ..), keep)| keep.then_some(p))
        .collect()
}

impl<G: GpmEval> QueryRuntime<G> {
    /// LATEST: note the GPMs of the event's stream that have a solution on it in the empty
    /// context (their latest time is now the event's).
    pub(super) fn note_latest(&mut self, event: &EventRef, index: &G::Index, dict: &Dictionary) {
        let empty = self.vars.empty_row();
        let mut rows = Vec::new();
        for g in 0..self.policy.latest.len() {
            if self.gpm_streams[g] != event.stream {
                continue;
            }
            rows.clear();
            self.gpms
                .results(g, index, &empty, RunView::default(), dict, &mut rows);
            if !rows.is_empty() {
                self.policy.latest[g] = Some(event.time);
            }
        }
    }

    /// LATEST: whether every event of `m` is at the latest time its GPM had a solution.
    pub(super) fn is_latest(&self, m: &MatchRecord) -> bool {
        let mut at = m.node.as_deref();
        while let Some(n) = at {
            if self.policy.latest[n.taken.gpm] != Some(n.taken.event.time) {
                return false;
            }
            at = n.parent.as_deref();
        }
        true
    }
}
