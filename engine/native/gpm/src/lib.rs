//! GPM evaluation on one event, natively (issue 12): the plan's compiled path (top-level
//! triple patterns and FILTERs, docs/plan.md) as a join over an `EventIndex` and FILTER
//! programs over variable slots, with SPARQL expression semantics as pyoxigraph implements
//! them (the "oxigraph" dialect, docs/decisions.md 23). SEMANTICS.md section 2: eval(A, e,
//! mu) is every mu ∪ nu, nu a solution of the BGP on the event compatible with mu, for
//! which every FILTER is true (errors are false).
//!
//! A crate of its own above `spaseq-plan` and `spaseq-io` (the GPMs' plans, the events'
//! terms); `vars` (variables as slots, rows) lives here, the lowest crate that needs it.

pub mod aggregate;
pub mod algebra_parts;
pub mod compare;
pub mod error;
pub mod event_index;
pub mod expr;
pub mod functions;
pub mod join;
pub mod routing;
pub mod run_functions;
pub mod sparql;
pub mod sparql_select;
pub mod value;
pub mod vars;

pub use error::CompileError;
pub use event_index::{EventIndex, ValueCache};
pub use expr::{Compiled, Env};
pub use run_functions::RunEnv;
pub use sparql::SparqlGpm;
pub use value::Value;

use crate::vars::{Row, Slot, VarTable};
use join::{Bgp, Pattern, Pos};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::algebra::{PatternTerm, Term};
use spaseq_plan::plan::{GpmPath, GpmPlan};

/// The knowledge base as a GPM's GRAPH blocks see it: the rows of block `element` of GPM
/// `gpm` that agree with `bound` (the values of the block's variables bound so far, in the
/// order `GpmProgram::compile` was given them), each a row of slots. Answered once per KB
/// version and distinct binding by the engine, which caches them.
pub trait KbLookup {
    fn rows(&self, gpm: usize, element: usize, bound: &[Option<TermId>]) -> std::rc::Rc<Vec<Row>>;
}

/// One GPM compiled for native evaluation.
#[derive(Debug, Clone)]
pub struct GpmProgram {
    bgp: Bgp,
    /// Top-level GRAPH blocks joined with the KB after the BGP (the slots of each block's
    /// variables), and the FILTERs then run on the joined rows.
    graph: Vec<Vec<Slot>>,
    late_filters: Vec<Compiled>,
    local_slots: Vec<Slot>,
    required: Vec<TermId>,
    /// the VarTable's size once this GPM was compiled: rows are at least this wide
    width: usize,
}

impl GpmProgram {
    /// Compile the compiled-path GPM of a plan; Err(reason) when it is outside the native
    /// subset (path "sparql", run functions, GRAPH blocks, property paths, EXISTS, a function
    /// or a constant the native evaluator does not have).
    pub fn compile(
        plan: &GpmPlan,
        vars: &mut VarTable,
        dict: &Dictionary,
        base_iri: Option<&str>,
    ) -> Result<Self, CompileError> {
        Self::compile_with_graphs(plan, &[], vars, dict, base_iri)
    }

    /// As `compile`, for a GPM whose top-level GRAPH blocks (`plan.graph_elements`) read
    /// the variables `graph_vars[i]`: their rows come from a `KbLookup` (`results_with_kb`).
    pub fn compile_with_graphs(
        plan: &GpmPlan,
        graph_vars: &[Vec<String>],
        vars: &mut VarTable,
        dict: &Dictionary,
        base_iri: Option<&str>,
    ) -> Result<Self, CompileError> {
        if plan.path != GpmPath::Compiled {
            return Err(CompileError::Unsupported(format!(
                "GPM {} is evaluated by a SPARQL engine",
                plan.name
            )));
        }
        if !plan.graph_elements.is_empty() && graph_vars.len() != plan.graph_elements.len() {
            return Err(CompileError::Unsupported(format!(
                "GPM {} has GRAPH blocks",
                plan.name
            )));
        }
        let mut blanks: Vec<String> = Vec::new();
        let mut patterns = Vec::with_capacity(plan.join_order.len());
        for tp in &plan.join_order {
            let mut pos = |t: &PatternTerm| -> Result<Pos, CompileError> {
                Ok(match t {
                    PatternTerm::Var(name) if name.starts_with("_:") => {
                        let i = blanks.iter().position(|b| b == name).unwrap_or_else(|| {
                            blanks.push(name.clone());
                            blanks.len() - 1
                        });
                        Pos::Blank(i)
                    }
                    PatternTerm::Var(name) => Pos::Var(vars.slot(name)),
                    PatternTerm::Term(term) => Pos::Const(dict.intern(to_oxrdf(term)?)),
                    PatternTerm::Path(_) => {
                        return Err(CompileError::Unsupported("a property path".to_owned()))
                    }
                })
            };
            patterns.push(Pattern {
                s: pos(&tp.subject)?,
                p: pos(&tp.predicate)?,
                o: pos(&tp.object)?,
            });
        }
        let filters = plan
            .filters
            .iter()
            .map(|f| Compiled::new(f, vars, dict, base_iri))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|reason| reason.in_gpm(&plan.name))?;
        let required = plan
            .required
            .iter()
            .map(|iri| dict.intern(oxrdf::NamedNode::new_unchecked(iri.clone()).into()))
            .collect();
        let local_slots = plan.local_vars.iter().map(|v| vars.slot(v)).collect();
        let graph: Vec<Vec<Slot>> = graph_vars
            .iter()
            .map(|names| names.iter().map(|v| vars.slot(v)).collect())
            .collect();
        // with GRAPH blocks, FILTERs may read what the KB binds: they run after the KB join
        let (filters, late_filters) = if graph.is_empty() {
            (filters, Vec::new())
        } else {
            (Vec::new(), filters)
        };
        Ok(GpmProgram {
            graph,
            late_filters,
            bgp: Bgp::new(patterns, blanks.len(), filters),
            local_slots,
            required,
            width: vars.len(),
        })
    }

    /// eval(GPM, event, mu): push onto `out` every row mu ∪ nu, nu a solution of the BGP on
    /// the event compatible with mu, for which every FILTER is true (EBV; errors are false).
    pub fn results(
        &self,
        index: &EventIndex,
        mu: &[Option<TermId>],
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        self.bgp.solve(index, mu, self.width, dict, out);
    }

    /// The slots of GRAPH block `element`'s variables (the order `KbLookup::rows` gets them).
    pub fn graph_slots(&self, element: usize) -> &[Slot] {
        &self.graph[element]
    }

    /// Whether the GPM joins GRAPH blocks with the KB (evaluate it with `results_with_kb`).
    pub fn reads_kb(&self) -> bool {
        !self.graph.is_empty()
    }

    /// eval(GPM, event, mu) for a GPM with GRAPH blocks: the BGP's rows joined with each
    /// block's KB rows (`kb`, for GPM number `gpm`), then the FILTERs on every joined row.
    pub fn results_with_kb(
        &self,
        gpm: usize,
        kb: &dyn KbLookup,
        index: &EventIndex,
        mu: &[Option<TermId>],
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        self.results_in_run(gpm, kb, index, mu, None, dict, out)
    }

    /// Whether a FILTER calls a `spaseq:` run function (give `results_in_run` the run).
    pub fn reads_run(&self) -> bool {
        self.bgp.reads_run() || self.late_filters.iter().any(|f| f.reads_run)
    }

    /// As `results_with_kb`, for a run whose FILTERs may call run functions (`run`).
    #[allow(clippy::too_many_arguments)]
    pub fn results_in_run(
        &self,
        gpm: usize,
        kb: &dyn KbLookup,
        index: &EventIndex,
        mu: &[Option<TermId>],
        run: Option<&RunEnv<'_>>,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        if self.graph.is_empty() {
            return self.bgp.solve_in_run(index, mu, self.width, run, dict, out);
        }
        let mut rows = Vec::new();
        self.bgp
            .solve_in_run(index, mu, self.width, run, dict, &mut rows);
        for (element, slots) in self.graph.iter().enumerate() {
            let mut joined = Vec::new();
            for row in &rows {
                let bound: Vec<Option<TermId>> = slots.iter().map(|&s| row[s]).collect();
                for kb_row in kb.rows(gpm, element, &bound).iter() {
                    if let Some(merged) = merge(row, kb_row) {
                        joined.push(merged);
                    }
                }
            }
            rows = joined;
        }
        for row in rows {
            let env = Env {
                row: &row,
                dict,
                index,
                run,
            };
            if self.late_filters.iter().all(|f| f.holds(&env)) {
                out.push(row);
            }
        }
    }

    /// Whether `results_from_base` may stand for `results_with_kb`: no GRAPH block and no
    /// run function.
    pub fn answers_from_base(&self) -> bool {
        self.graph.is_empty() && !self.reads_run()
    }

    /// `results_with_kb` from the event's `base` rows (computed once per event), for a GPM
    /// that `answers_from_base`: the same rows, without a join per run.
    pub fn results_from_base(
        &self,
        base: &[Row],
        index: &EventIndex,
        mu: &[Option<TermId>],
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        debug_assert!(self.answers_from_base());
        self.bgp
            .solve_from_base(base, index, mu, self.width, dict, out);
    }

    /// The solutions that hold whatever the context (`Bgp::base`), rows `width` wide: what
    /// partitioned runs are looked up by, and whether the lazy chain buffers the event.
    pub fn base(&self, index: &EventIndex, width: usize, dict: &Dictionary, out: &mut Vec<Row>) {
        self.bgp.base(index, width.max(self.width), dict, out);
    }

    /// The renaming of slots that turns `other`'s base rows into this GPM's
    /// (`Bgp::base_renaming_from`), when the two BGPs are one under two namings.
    pub fn base_renaming_from(&self, other: &GpmProgram) -> Option<Vec<(Slot, Slot)>> {
        self.bgp.base_renaming_from(&other.bgp)
    }

    /// Slots of the GPM's local variables in plan order (`local_vars`), for what a match
    /// records as the event's bindings.
    pub fn local_slots(&self) -> &[Slot] {
        &self.local_slots
    }

    /// Constant predicates every solution needs (the pre-filter): false if the event lacks one.
    pub fn may_match(&self, index: &EventIndex) -> bool {
        index.has_predicates(&self.required)
    }

    /// A quick test of events under mu (`join::Probe`): the event triples the BGP needs
    /// with mu's bindings (the GRAPH blocks' rows come after the BGP's).
    pub fn probe(&self, mu: &[Option<TermId>]) -> join::Probe {
        self.bgp.probe(mu)
    }
}

/// The union of two rows that agree where both bind (a KB row may be narrower).
fn merge(row: &[Option<TermId>], other: &[Option<TermId>]) -> Option<Row> {
    let mut out = row.to_vec();
    for (slot, value) in other.iter().enumerate() {
        if let Some(v) = value {
            match out.get(slot).copied().flatten() {
                Some(existing) if existing != *v => return None,
                Some(_) => {}
                None => {
                    if slot >= out.len() {
                        out.resize(slot + 1, None);
                    }
                    out[slot] = Some(*v);
                }
            }
        }
    }
    Some(out)
}

/// A term written in N-Triples (`<iri>`, `_:b`, `"v"^^<dt>`, `"v"@en`).
pub fn parse_term(text: &str) -> Result<oxrdf::Term, CompileError> {
    text.parse()
        .map_err(|e| CompileError::Term(format!("{text}: {e}")))
}

/// A plan term as an oxrdf term (language tags lower-cased, as oxrdf and pyoxigraph do).
pub fn to_oxrdf(term: &Term) -> Result<oxrdf::Term, CompileError> {
    Ok(match term {
        Term::Iri(iri) => oxrdf::NamedNode::new(iri.clone())
            .map_err(|e| CompileError::Term(format!("bad IRI <{iri}>: {e}")))?
            .into(),
        Term::BlankNode(id) => oxrdf::BlankNode::new(id.clone())
            .map_err(|e| CompileError::Term(format!("bad blank node _:{id}: {e}")))?
            .into(),
        Term::Literal {
            value,
            language: Some(lang),
            ..
        } => oxrdf::Literal::new_language_tagged_literal(value.clone(), lang.clone())
            .map_err(|e| CompileError::Term(format!("bad language tag {lang}: {e}")))?
            .into(),
        Term::Literal {
            value, datatype, ..
        } => oxrdf::Literal::new_typed_literal(
            value.clone(),
            oxrdf::NamedNode::new(datatype.clone())
                .map_err(|e| CompileError::Term(format!("bad datatype <{datatype}>: {e}")))?,
        )
        .into(),
    })
}
