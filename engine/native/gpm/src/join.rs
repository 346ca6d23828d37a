//! The BGP join of a compiled GPM on one event: a depth-first search over the triple
//! patterns in the plan's join order, binding variable slots in one row that starts as the
//! context mu (so compatibility with mu is checked as the join goes), with each FILTER
//! checked as soon as the patterns binding its variables have matched.

use super::event_index::EventIndex;
use super::expr::{Compiled, Env};
use super::run_functions::RunEnv;
use crate::vars::{Row, Slot};
use smallvec::SmallVec;
use spaseq_io::dictionary::{Dictionary, TermId};
use std::cell::Cell;
use std::collections::HashSet;

/// A position of a triple pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pos {
    Const(TermId),
    Var(Slot),
    /// A blank node of the pattern: a variable that is not part of the solution.
    Blank(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    pub s: Pos,
    pub p: Pos,
    pub o: Pos,
}

/// Triple patterns in join order, with the FILTERs placed where they can first run.
#[derive(Debug, Clone)]
pub struct Bgp {
    patterns: Vec<Pattern>,
    blanks: usize,
    filters: Vec<Compiled>,
    /// `checks[0]`: filters to run before any pattern (they read no pattern variable);
    /// `checks[d + 1]`: after pattern d has matched
    checks: Vec<Vec<usize>>,
    /// Per filter: it reads only the patterns' variables, so it holds or not whatever mu is.
    context_free: Vec<bool>,
}

impl Bgp {
    /// `patterns` in the order the join runs them; `blanks`: the number of blank-node
    /// positions (numbered from 0).
    pub fn new(patterns: Vec<Pattern>, blanks: usize, filters: Vec<Compiled>) -> Self {
        let mut checks = vec![Vec::new(); patterns.len() + 1];
        for (i, filter) in filters.iter().enumerate() {
            let depth = filter
                .slots
                .iter()
                .filter_map(|slot| {
                    patterns
                        .iter()
                        .position(|tp| [tp.s, tp.p, tp.o].contains(&Pos::Var(*slot)))
                })
                .max()
                .map_or(0, |d| d + 1);
            checks[depth].push(i);
        }
        let bound: HashSet<Slot> = patterns
            .iter()
            .flat_map(|tp| [tp.s, tp.p, tp.o])
            .filter_map(|pos| match pos {
                Pos::Var(slot) => Some(slot),
                _ => None,
            })
            .collect();
        let context_free = filters
            .iter()
            .map(|f| !f.reads_run && f.slots.iter().all(|slot| bound.contains(slot)))
            .collect();
        Bgp {
            context_free,
            patterns,
            blanks,
            filters,
            checks,
        }
    }

    /// The patterns' known terms under `mu` (`Probe`): each pattern with a constant
    /// predicate and a subject or object that is a constant or bound in mu, those mu binds
    /// first (they tell events apart; the constants' are mostly in every event).
    pub fn probe(&self, mu: &[Option<TermId>]) -> Probe {
        let bound = |pos: Pos| match pos {
            Pos::Var(slot) => mu.get(slot).copied().flatten(),
            _ => None,
        };
        let known = |pos: Pos| match pos {
            Pos::Const(id) => Some(id),
            _ => bound(pos),
        };
        let mut needed: SmallVec<[(bool, Needed); 4]> = self
            .patterns
            .iter()
            .filter_map(|tp| {
                let Pos::Const(p) = tp.p else { return None };
                let (s, o) = (known(tp.s), known(tp.o));
                let from_mu = bound(tp.s).is_some() || bound(tp.o).is_some();
                (s.is_some() || o.is_some()).then_some((from_mu, (p, s, o)))
            })
            .collect();
        needed.sort_by_key(|&(from_mu, _)| !from_mu); // stable: join order within each
        Probe(needed.into_iter().map(|(_, n)| n).collect())
    }

    /// The renaming of this BGP's variable slots that makes it `other` for `base`: the
    /// same patterns in the same join order, variables renamed one to one (blank nodes,
    /// numbered by first appearance, alike), and no context-free FILTER in either (one
    /// search then gives both BGPs' base rows: `other`'s slot `from` is this one's `to`).
    /// None when they differ.
    pub fn base_renaming_from(&self, other: &Bgp) -> Option<Vec<(Slot, Slot)>> {
        if self.patterns.len() != other.patterns.len()
            || self.blanks != other.blanks
            || self
                .context_free
                .iter()
                .chain(&other.context_free)
                .any(|&free| free)
        {
            return None;
        }
        let mut pairs: Vec<(Slot, Slot)> = Vec::new();
        let mut same = |theirs: Pos, ours: Pos| match (theirs, ours) {
            (Pos::Var(from), Pos::Var(to)) => {
                match pairs.iter().find(|&&(f, t)| f == from || t == to) {
                    Some(&pair) => pair == (from, to),
                    None => {
                        pairs.push((from, to));
                        true
                    }
                }
            }
            (theirs, ours) => theirs == ours,
        };
        let alike = other
            .patterns
            .iter()
            .zip(&self.patterns)
            .all(|(theirs, ours)| {
                same(theirs.s, ours.s) && same(theirs.p, ours.p) && same(theirs.o, ours.o)
            });
        alike.then_some(pairs)
    }

    /// Whether a FILTER calls a run function.
    pub fn reads_run(&self) -> bool {
        self.filters.iter().any(|f| f.reads_run)
    }

    /// Push every `mu ∪ nu` (nu a solution of the patterns on the event, compatible with
    /// mu) for which every FILTER holds. Rows are at least `width` wide; with blank nodes
    /// in the patterns, each distinct row once.
    pub fn solve(
        &self,
        index: &EventIndex,
        mu: &[Option<TermId>],
        width: usize,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        self.search(index, mu, width, false, None, dict, out);
    }

    /// As `solve`, for a run whose FILTERs may call run functions (`run`).
    #[allow(clippy::too_many_arguments)]
    pub fn solve_in_run(
        &self,
        index: &EventIndex,
        mu: &[Option<TermId>],
        width: usize,
        run: Option<&RunEnv<'_>>,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        self.search(index, mu, width, false, run, dict, out);
    }

    /// As `solve`, from the event's `base` rows (this BGP's `base`, with no FILTER reading a
    /// run function): each base row compatible with mu merged into it, kept if the FILTERs
    /// that read more than the patterns' variables hold (the others held in `base`). The
    /// same rows in the same order as `solve`, without a search per mu: `solve`'s search is
    /// `base`'s with mu's bindings fixed, whose lookups give subsequences of the same
    /// candidates, so it visits the base solutions compatible with mu, in order.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_from_base(
        &self,
        base: &[Row],
        index: &EventIndex,
        mu: &[Option<TermId>],
        width: usize,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        for nu in base {
            let clash = mu
                .iter()
                .zip(nu)
                .any(|(a, b)| matches!((a, b), (Some(a), Some(b)) if a != b));
            if clash {
                continue;
            }
            let mut row = mu.to_vec();
            row.resize(row.len().max(width).max(nu.len()), None);
            for (cell, value) in row.iter_mut().zip(nu) {
                if cell.is_none() {
                    *cell = *value;
                }
            }
            let env = Env {
                row: &row,
                dict,
                index,
                run: None,
            };
            let holds = self
                .filters
                .iter()
                .zip(&self.context_free)
                .all(|(filter, &free)| free || filter.holds(&env));
            if holds {
                out.push(row);
            }
        }
    }

    /// The solutions that hold whatever the context: the patterns' solutions on the event
    /// with only the FILTERs reading nothing but their variables (a superset of `solve`'s
    /// for any mu, restricted to the patterns' variables). Rows `width` wide.
    pub fn base(&self, index: &EventIndex, width: usize, dict: &Dictionary, out: &mut Vec<Row>) {
        self.search(index, &[], width, true, None, dict, out); // an empty mu, widened to `width`
    }

    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        index: &EventIndex,
        mu: &[Option<TermId>],
        width: usize,
        context_free: bool,
        run: Option<&RunEnv<'_>>,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        let (mut row, trail) = SCRATCH.take();
        row.clear();
        row.extend_from_slice(mu);
        if row.len() < width {
            row.resize(width, None);
        }
        let mut search = Search {
            context_free,
            bgp: self,
            index,
            dict,
            run,
            row,
            blanks: vec![None; self.blanks],
            trail,
            seen: HashSet::new(),
            out,
        };
        if search.checks_hold(0) {
            search.extend(0);
        }
        let Search { row, mut trail, .. } = search;
        trail.clear();
        SCRATCH.set((row, trail));
    }
}

/// A quick test of events for a BGP in one context: the (predicate, subject, object) its
/// patterns need with what the context fixes (`Bgp::probe`). An event lacking one has no
/// solution compatible with the context, so scans over many kept events (a timer's, a head
/// negation's) skip it before searching. An empty probe admits every event.
#[derive(Debug, Clone, Default)]
pub struct Probe(SmallVec<[Needed; 4]>);

/// A triple an event must have: its predicate, and its subject and object where known.
type Needed = (TermId, Option<TermId>, Option<TermId>);

impl Probe {
    /// False only for an event on which no solution can agree with the context.
    pub fn admits(&self, index: &EventIndex) -> bool {
        self.0.iter().all(|&(p, s, o)| {
            index
                .candidates(p, s, o)
                .iter()
                .any(|&(ps, po)| s.is_none_or(|s| s == ps) && o.is_none_or(|o| o == po))
        })
    }
}

thread_local! {
    /// A search's working row and trail, kept for the next one (a search per run and event
    /// would otherwise allocate both each time). Taken, not borrowed: a FILTER's own search
    /// nested in one starts with empty ones.
    static SCRATCH: Cell<(Row, Vec<Bound>)> = const { Cell::new((Vec::new(), Vec::new())) };
}

/// A binding made by the search, undone on backtracking.
#[derive(Debug, Clone, Copy)]
enum Bound {
    Slot(Slot),
    Blank(usize),
}

struct Search<'a> {
    /// Only the context-free FILTERs (`Bgp::base`).
    context_free: bool,
    bgp: &'a Bgp,
    index: &'a EventIndex,
    dict: &'a Dictionary,
    run: Option<&'a RunEnv<'a>>,
    row: Row,
    blanks: Vec<Option<TermId>>,
    trail: Vec<Bound>,
    seen: HashSet<Row>,
    out: &'a mut Vec<Row>,
}

impl Search<'_> {
    fn current(&self, pos: Pos) -> Option<TermId> {
        match pos {
            Pos::Const(id) => Some(id),
            Pos::Var(slot) => self.row[slot],
            Pos::Blank(i) => self.blanks[i],
        }
    }

    /// Bind `pos` to `term`, or check that it already holds it.
    fn bind(&mut self, pos: Pos, term: TermId) -> bool {
        let (cell, undo) = match pos {
            Pos::Const(id) => return id == term,
            Pos::Var(slot) => (&mut self.row[slot], Bound::Slot(slot)),
            Pos::Blank(i) => (&mut self.blanks[i], Bound::Blank(i)),
        };
        match *cell {
            Some(bound) => bound == term,
            None => {
                *cell = Some(term);
                self.trail.push(undo);
                true
            }
        }
    }

    fn undo(&mut self, mark: usize) {
        for bound in self.trail.drain(mark..) {
            match bound {
                Bound::Slot(slot) => self.row[slot] = None,
                Bound::Blank(i) => self.blanks[i] = None,
            }
        }
    }

    fn checks_hold(&self, at: usize) -> bool {
        let env = Env {
            row: &self.row,
            dict: self.dict,
            index: self.index,
            run: self.run,
        };
        self.bgp.checks[at].iter().all(|&i| {
            (self.context_free && !self.bgp.context_free[i]) || self.bgp.filters[i].holds(&env)
        })
    }

    fn extend(&mut self, depth: usize) {
        let Some(&tp) = self.bgp.patterns.get(depth) else {
            self.emit();
            return;
        };
        match self.current(tp.p) {
            Some(p) => self.scan(depth, tp, p),
            None => {
                let index = self.index;
                for (p, _) in index.predicates() {
                    let mark = self.trail.len();
                    if self.bind(tp.p, p) {
                        self.scan(depth, tp, p);
                    }
                    self.undo(mark);
                }
            }
        }
    }

    fn scan(&mut self, depth: usize, tp: Pattern, p: TermId) {
        let index = self.index;
        let pairs = index.candidates(p, self.current(tp.s), self.current(tp.o));
        for &(s, o) in pairs {
            let mark = self.trail.len();
            if self.bind(tp.s, s) && self.bind(tp.o, o) && self.checks_hold(depth + 1) {
                self.extend(depth + 1);
            }
            self.undo(mark);
        }
    }

    fn emit(&mut self) {
        if self.bgp.blanks > 0 && !self.seen.insert(self.row.clone()) {
            return;
        }
        self.out.push(self.row.clone());
    }
}
