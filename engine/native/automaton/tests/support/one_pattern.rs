//! A test evaluator for the automaton's own tests (the unit tests in src/query/tests.rs
//! and tests/runtime.rs include this one file): each GPM is one pattern `?s <p> ?o`, so
//! that a test is about the automaton alone. Written against the crate's public API.

use oxrdf::NamedNode;
use spaseq_automaton::{GpmEval, QueryRuntime, RunView, Streams};
use spaseq_gpm::vars::{Row, Slot, VarTable};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::algebra::{PatternTerm, Term as PlanTerm};
use spaseq_plan::Plan;

/// Each GPM: one pattern (subject slot, predicate id, object slot), and its local slots.
pub struct OnePattern(Vec<(Slot, TermId, Slot)>, Vec<Vec<Slot>>);

impl GpmEval for OnePattern {
    type Index = Vec<[TermId; 3]>;

    fn results(
        &self,
        gpm: usize,
        index: &Self::Index,
        mu: &[Option<TermId>],
        _: RunView<'_>,
        _: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        let (s, p, o) = self.0[gpm];
        for t in index.iter().filter(|t| t[1] == p) {
            if mu[s].is_some_and(|v| v != t[0]) || mu[o].is_some_and(|v| v != t[2]) {
                continue;
            }
            let mut row = mu.to_vec();
            row[s] = Some(t[0]);
            row[o] = Some(t[2]);
            out.push(row);
        }
    }

    fn base(&self, gpm: usize, index: &Self::Index, dict: &Dictionary, out: &mut Vec<Row>) {
        let width = self.1.iter().flatten().max().map_or(0, |m| m + 1);
        let empty = vec![None; width];
        self.results(gpm, index, &empty, RunView::default(), dict, out);
    }

    fn local_slots(&self, gpm: usize) -> &[Slot] {
        &self.1[gpm]
    }
}

/// `plan`'s runtime over `OnePattern` GPMs (each GPM's first triple pattern).
pub fn runtime(
    plan: &Plan,
    dict: &mut Dictionary,
    streams: &mut Streams,
) -> QueryRuntime<OnePattern> {
    let mut vars = VarTable::new();
    let mut patterns = Vec::new();
    let mut locals = Vec::new();
    for gpm in &plan.gpms {
        let tp = &gpm.join_order[0];
        let var = |t: &PatternTerm, vars: &mut VarTable| match t {
            PatternTerm::Var(name) => vars.slot(name),
            _ => panic!("a variable"),
        };
        let PatternTerm::Term(PlanTerm::Iri(p)) = &tp.predicate else {
            panic!("an IRI")
        };
        let p = dict.intern(NamedNode::new(p.clone()).unwrap().into());
        patterns.push((var(&tp.subject, &mut vars), p, var(&tp.object, &mut vars)));
        locals.push(gpm.local_vars.iter().map(|v| vars.slot(v)).collect());
    }
    QueryRuntime::new(plan, OnePattern(patterns, locals), vars, streams).expect("supported")
}
