//! A query's GPMs as the plan gives them to evaluators (`Gpm`: the core's compiled program,
//! its SPARQL engine, or the host's callback), and what evaluating them shares: the event
//! prepared once for every query (`Prepared`, with base rows shared between many runs), the
//! knowledge base's rows cached per binding, and the Kleene+ iterations run functions read.

use crate::host::{Host, Pairs, TakenPairs};
use crate::EngineError;
use spaseq_automaton::{GpmEval, Node, RunView};
use spaseq_gpm::join::Probe;
use spaseq_gpm::vars::{Row, Slot, VarTable};
use spaseq_gpm::{CompileError, EventIndex, GpmProgram, KbLookup, RunEnv, SparqlGpm};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::plan::{Evaluator, GpmPlan, Plan};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// How one GPM is evaluated.
pub enum Gpm {
    /// The compiled path: the native join and FILTER programs.
    Native(GpmProgram),
    /// The SPARQL path on spareval.
    Sparql(Box<SparqlGpm>),
    /// By the host's evaluator.
    Callback,
}

/// GPM `gpm` of `plan` made ready for `evaluator` (the plan's choice): its compiled program
/// (GRAPH blocks reading the variables `blocks`), its body on spareval, or the callback;
/// Err says why this core cannot evaluate it so.
pub fn compile_as(
    plan: &Plan,
    gpm: &GpmPlan,
    evaluator: Evaluator,
    blocks: &[Vec<String>],
    vars: &mut VarTable,
    dict: &Dictionary,
) -> Result<Gpm, CompileError> {
    let base = plan.query.base.as_deref();
    match evaluator {
        Evaluator::Native => {
            let mut trial = vars.clone();
            let program = GpmProgram::compile_with_graphs(gpm, blocks, &mut trial, dict, base)?;
            *vars = trial;
            Ok(Gpm::Native(program))
        }
        Evaluator::Spareval => {
            let body = plan
                .query
                .bodies
                .get(&gpm.name)
                .ok_or(CompileError::NoBody)?;
            SparqlGpm::compile(gpm, body, &plan.query.prefixes, base, vars, dict)
                .map(|body| Gpm::Sparql(Box::new(body)))
        }
        Evaluator::Callback => {
            for v in gpm.variables.iter().chain(gpm.local_vars.iter()) {
                vars.slot(v);
            }
            Ok(Gpm::Callback)
        }
    }
}

/// Which evaluator this core gives GPM `gpm` of `plan`, and why not a better one: its
/// compiled program, else its body on spareval, else the host's callback. The planner's
/// question (`_native.gpm_evaluators`), asked once when a query is planned.
pub fn choose_evaluator(
    plan: &Plan,
    gpm: &GpmPlan,
    vars: &mut VarTable,
    dict: &Dictionary,
) -> (Evaluator, Option<String>) {
    let blocks = &gpm.graph_vars;
    let native = match compile_as(plan, gpm, Evaluator::Native, blocks, vars, dict) {
        Ok(_) => return (Evaluator::Native, None),
        Err(why) => why,
    };
    match compile_as(plan, gpm, Evaluator::Spareval, blocks, vars, dict) {
        Ok(_) => (Evaluator::Spareval, Some(native.to_string())),
        Err(sparql) => {
            // the callback's slots, as the runtime will give them (this cannot fail)
            let _ = compile_as(plan, gpm, Evaluator::Callback, blocks, vars, dict);
            (Evaluator::Callback, Some(format!("{native}; {sparql}")))
        }
    }
}

/// What a query's matches need to name their variables and GPMs.
pub struct Names {
    pub vars: VarTable,
    pub gpms: Vec<String>,
    pub locals: Vec<Vec<Slot>>,
}

impl Names {
    pub fn pairs(&self, slots: impl Iterator<Item = (Slot, Option<TermId>)>) -> Pairs {
        slots
            .filter_map(|(slot, v)| v.map(|id| (self.vars.name(slot).to_owned(), id)))
            .collect()
    }

    /// The events a run or match took, first to last: (GPM, event uid, its local bindings).
    pub fn taken(&self, node: Option<Rc<Node>>) -> Vec<TakenPairs> {
        Node::chain(&node)
            .iter()
            .map(|t| {
                let locals = self.locals[t.gpm].iter().copied();
                let bindings = self.pairs(locals.zip(t.bindings.iter().copied()));
                (self.gpms[t.gpm].clone(), t.event.uid, bindings)
            })
            .collect()
    }
}

/// An event prepared for every query: its index for joins and its uid for callbacks.
pub struct Prepared {
    pub index: EventIndex,
    pub uid: u64,
    time: i128,
    /// Per (query, GPM) asked on this event, how often and its base rows once they are
    /// shared (`Programs::shared_base_rows`).
    base: RefCell<Vec<SharedBase>>,
    /// The first (query, GPM) asked on this event and how often, kept here until a second
    /// one is (most events are asked for one GPM by one or two runs: no allocation then).
    first_asked: Cell<Option<(u64, usize, u32)>>,
}

impl Prepared {
    pub fn new(index: EventIndex, uid: u64, time: i128) -> Self {
        Prepared {
            index,
            uid,
            time,
            base: RefCell::new(Vec::new()),
            first_asked: Cell::new(None),
        }
    }
}

/// A GPM's results asked on one event by the runs of one query (`Programs::id`).
struct SharedBase {
    programs: u64,
    gpm: usize,
    /// Runs that asked so far.
    asked: u32,
    /// The GPM's base rows on the event, once `SHARED_FROM` runs asked.
    rows: Option<Rc<Vec<Row>>>,
}

/// From the how-manieth run offered an event a GPM's results come from the event's base
/// rows merged into each run (`Bgp::solve_from_base`) rather than a join per run: one run
/// alone is answered faster by the join, many runs (skip-till-any) by the rows computed once.
const SHARED_FROM: u32 = 3;

/// Numbers for `Programs::id`.
static PROGRAMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A cached GRAPH block answer: (GPM, block, the values of the block's bound variables).
type KbKey = (usize, usize, Vec<Option<TermId>>);

/// A query's GPMs, and what the host's ones need.
pub struct Programs<H> {
    /// Per GPM how it is evaluated, as the plan says.
    pub gpms: Vec<Gpm>,
    /// The query's variables, GPM names and local slots (shared with its matches).
    pub names: Rc<Names>,
    pub host: H,
    /// The KB rows per (GPM, block, bound values), until the KB changes version.
    kb_cache: RefCell<HashMap<KbKey, Rc<Vec<Row>>>>,
    /// Per GPM: its stream's IRI (what `spaseq:eventStream()` returns) and whether it is a
    /// Kleene+ atom's (whose iterations the run-function aggregates read).
    streams: Vec<TermId>,
    kleene: Vec<bool>,
    /// This query's number among every query's programs (what an event's cached base rows
    /// are kept under: an event is prepared once for every query).
    id: u64,
    /// Per native GPM whose BGP another one has under other names (a V-shape's A, B and C):
    /// the first of them, whose base rows are searched once an event, and the renaming of
    /// its slots into this GPM's (`GpmProgram::base_renaming_from`).
    twins: Vec<Option<Twin>>,
    /// The last base rows searched for a twin group: (event uid, first GPM), rows.
    twin_rows: RefCell<TwinRows>,
}

/// Why a plan's GPM cannot run here (`EngineError::Plan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The plan does not record the GPM's evaluator.
    NoEvaluator,
    /// The plan gives the GPM to the callback evaluator, and the host evaluates nothing.
    NoCallback,
    /// The GPM's stream is not an IRI (`error`: the IRI parser's message).
    Stream { stream: String, error: String },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NoEvaluator => f.write_str("the plan does not say which evaluator runs it"),
            Refusal::NoCallback => f.write_str("it is evaluated by a callback, and none is given"),
            Refusal::Stream { stream, error } => write!(f, "stream <{stream}>: {error}"),
        }
    }
}

impl std::error::Error for Refusal {}

impl<H: Host> Programs<H> {
    /// The GPMs of `plan` compiled for the evaluators it records, and the query's variable
    /// table; `EngineError::Plan` when this core cannot follow the plan.
    pub fn new(plan: &Plan, host: H, dict: &Dictionary) -> Result<(Self, VarTable), EngineError> {
        let mut vars = VarTable::new();
        let mut gpms = Vec::new();
        for gpm in &plan.gpms {
            let refuse = |why: Refusal| EngineError::Plan {
                gpm: gpm.name.clone(),
                why,
            };
            let evaluator = gpm.evaluator.ok_or_else(|| refuse(Refusal::NoEvaluator))?;
            if evaluator == Evaluator::Callback && !host.evaluates() {
                return Err(refuse(Refusal::NoCallback));
            }
            let program = compile_as(plan, gpm, evaluator, &gpm.graph_vars, &mut vars, dict)
                .map_err(|error| EngineError::Evaluator {
                    gpm: gpm.name.clone(),
                    evaluator: evaluator.name(),
                    error,
                })?;
            gpms.push(program);
        }
        for v in plan.query.variables.iter().flatten() {
            vars.slot(v);
        }
        let names = Rc::new(Names {
            vars: vars.clone(),
            gpms: plan.gpms.iter().map(|g| g.name.clone()).collect(),
            locals: plan
                .gpms
                .iter()
                .zip(&gpms)
                .map(|(plan, gpm)| match gpm {
                    Gpm::Native(p) => p.local_slots().to_vec(),
                    Gpm::Sparql(p) => p.local_slots().to_vec(),
                    Gpm::Callback => plan.local_vars.iter().filter_map(|v| vars.get(v)).collect(),
                })
                .collect(),
        });
        let streams = plan
            .gpms
            .iter()
            .map(|g| {
                let iri =
                    oxrdf::NamedNode::new(g.stream.clone()).map_err(|e| EngineError::Plan {
                        gpm: g.name.clone(),
                        why: Refusal::Stream {
                            stream: g.stream.clone(),
                            error: e.to_string(),
                        },
                    })?;
                Ok(dict.intern(iri.into()))
            })
            .collect::<Result<_, EngineError>>()?;
        let programs = Programs {
            twins: twins(&gpms),
            gpms,
            names,
            host,
            kb_cache: RefCell::new(HashMap::new()),
            streams,
            kleene: plan
                .gpms
                .iter()
                .map(|g| plan.kleene_gpms.contains(&g.name))
                .collect(),
            id: PROGRAMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            twin_rows: RefCell::new((None, Vec::new())),
        };
        Ok((programs, vars))
    }

    /// Forget the cached KB rows (a new KB version).
    pub fn kb_changed(&self) {
        self.kb_cache.borrow_mut().clear();
    }

    /// The names of the GPMs the host evaluates.
    pub fn callback_gpms(&self) -> Vec<String> {
        self.gpms
            .iter()
            .zip(&self.names.gpms)
            .filter(|(g, _)| matches!(g, Gpm::Callback))
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// A solution given as pairs, as a row of this query's slots (None, the error kept by
    /// the host, when it binds a variable the query does not have).
    fn row_of(&self, gpm: &str, solution: Pairs) -> Option<Row> {
        let vars = &self.names.vars;
        let mut row = vars.empty_row();
        for (var, id) in solution {
            let Some(slot) = vars.get(&var) else {
                self.host
                    .fail(format!("GPM {gpm} bound ?{var}, not in its plan"));
                return None;
            };
            row[slot] = Some(id);
        }
        Some(row)
    }

    /// The host's rows as rows of this query, stopping at the first it got wrong.
    fn rows_of(&self, gpm: &str, solutions: Vec<Pairs>, out: &mut Vec<Row>) {
        if self.host.failed() {
            return;
        }
        for solution in solutions {
            match self.row_of(gpm, solution) {
                Some(row) => out.push(row),
                None => return,
            }
        }
    }

    /// A GRAPH block's KB rows from the host.
    fn call_kb(&self, gpm: usize, element: usize, bound: &[Option<TermId>]) -> Vec<Row> {
        let Gpm::Native(program) = &self.gpms[gpm] else {
            return Vec::new();
        };
        if self.host.failed() {
            return Vec::new();
        }
        let slots = program.graph_slots(element).iter().copied();
        let pairs = self.names.pairs(slots.zip(bound.iter().copied()));
        let name = self.names.gpms[gpm].as_str();
        let mut out = Vec::new();
        self.rows_of(name, self.host.kb_rows(name, element, pairs), &mut out);
        out
    }

    /// GPM `gpm` evaluated by the host (`mu` None: its context-free solutions).
    fn call_host(
        &self,
        gpm: usize,
        event: &Prepared,
        mu: Option<&[Option<TermId>]>,
        run: RunView<'_>,
        out: &mut Vec<Row>,
    ) {
        if self.host.failed() {
            return;
        }
        let name = self.names.gpms[gpm].as_str();
        let solutions = self.host.evaluate(
            name,
            event.uid,
            mu.map(|m| self.names.pairs(m.iter().copied().enumerate())),
            run.start,
            self.names.taken(run.node.cloned()),
        );
        self.rows_of(name, solutions, out);
    }

    /// The values `slot` took in the Kleene+ iterations of the run that took `node`, first
    /// to last (one per iteration that bound it): what the run-function aggregates read. The
    /// events of one iteration of a group `(A & B)+` share its time, and iterations follow
    /// at later times: consecutive Kleene events at one time are one iteration, whose value is
    /// its first event's that bound the slot (the iteration's events agree: they are joined).
    fn iterations(&self, node: Option<&Rc<Node>>, slot: Slot) -> Vec<TermId> {
        let mut out = Vec::new();
        // the iteration being read backwards: its time and the value of its earliest event
        let mut iteration: Option<(i128, Option<TermId>)> = None;
        let mut at = node.map(|n| &**n);
        while let Some(n) = at {
            let t = &n.taken;
            let value = if self.kleene[t.gpm] {
                let locals = &self.names.locals[t.gpm];
                Some(
                    locals
                        .iter()
                        .position(|&s| s == slot)
                        .and_then(|i| t.bindings[i]),
                )
            } else {
                None
            };
            match (value, &mut iteration) {
                (Some(v), Some((time, found))) if *time == t.event.time => {
                    *found = v.or(*found);
                }
                (value, _) => {
                    out.extend(iteration.take().and_then(|(_, found)| found));
                    iteration = value.map(|v| (t.event.time, v));
                }
            }
            at = n.parent.as_deref();
        }
        out.extend(iteration.and_then(|(_, found)| found));
        out.reverse();
        out
    }

    /// The base rows of a twin GPM (`twins`): those of `first`, searched once per event,
    /// renamed into its slots.
    fn twin_base(
        &self,
        first: usize,
        renaming: &[(Slot, Slot)],
        event: &Prepared,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        let width = self.names.vars.len();
        let mut memo = self.twin_rows.borrow_mut();
        let (searched, rows) = &mut *memo;
        if *searched != Some((event.uid, first)) {
            rows.clear();
            if let Gpm::Native(program) = &self.gpms[first] {
                program.base(&event.index, width, dict, rows);
            }
            *searched = Some((event.uid, first));
        }
        out.extend(rows.iter().map(|row| {
            let mut renamed = vec![None; width];
            for &(from, to) in renaming {
                renamed[to] = row[from];
            }
            renamed
        }));
    }

    /// The base rows of native GPM `gpm` (`program`) on `event` for the runs it is offered
    /// to from the `SHARED_FROM`th on (computed then, once); None before.
    fn shared_base_rows(
        &self,
        gpm: usize,
        program: &GpmProgram,
        event: &Prepared,
        dict: &Dictionary,
    ) -> Option<Rc<Vec<Row>>> {
        let key = (self.id, gpm);
        match event.first_asked.get() {
            None => {
                event.first_asked.set(Some((key.0, key.1, 1)));
                return None;
            }
            Some((programs, g, asked)) if (programs, g) == key && asked + 1 < SHARED_FROM => {
                event.first_asked.set(Some((programs, g, asked + 1)));
                return None;
            }
            _ => {}
        }
        let mut cached = event.base.borrow_mut();
        let at = match cached.iter().position(|e| (e.programs, e.gpm) == key) {
            Some(at) => at,
            None => {
                // the first one asked comes over from `first_asked` with its count
                let asked = match event.first_asked.get() {
                    Some((programs, g, asked)) if (programs, g) == key => asked,
                    _ => 0,
                };
                cached.push(SharedBase {
                    programs: self.id,
                    gpm,
                    asked,
                    rows: None,
                });
                cached.len() - 1
            }
        };
        let entry = &mut cached[at];
        if let Some(rows) = &entry.rows {
            return Some(rows.clone());
        }
        entry.asked += 1;
        if entry.asked < SHARED_FROM {
            return None;
        }
        let mut rows = Vec::new();
        program.base(&event.index, self.names.vars.len(), dict, &mut rows);
        let rows = Rc::new(rows);
        entry.rows = Some(rows.clone());
        Some(rows)
    }
}

/// A twin GPM's group's first GPM and the renaming of its slots into the twin's.
type Twin = (usize, Vec<(Slot, Slot)>);

/// The base rows last searched for a twin group: for (event uid, first GPM), the rows.
type TwinRows = (Option<(u64, usize)>, Vec<Row>);

/// Per GPM, the first native GPM with the same BGP under other names and the renaming of
/// its slots into this one's (the first renamed into itself), for GPMs that have a twin.
fn twins(gpms: &[Gpm]) -> Vec<Option<Twin>> {
    let native = |g: usize| match &gpms[g] {
        Gpm::Native(program) => Some(program),
        _ => None,
    };
    let mut out: Vec<Option<Twin>> = vec![None; gpms.len()];
    for g in 0..gpms.len() {
        let Some(program) = native(g) else { continue };
        let first = (0..g).find_map(|h| {
            let renaming = program.base_renaming_from(native(h)?)?;
            Some((h, renaming))
        });
        // the first found is the group's first (being one BGP under two namings is an
        // equivalence): it searches for itself, renamed into itself
        if let Some((h, renaming)) = first {
            if out[h].is_none() {
                out[h] = native(h)
                    .and_then(|p| p.base_renaming_from(p))
                    .map(|r| (h, r));
            }
            out[g] = Some((h, renaming));
        }
    }
    out
}

impl<H: Host> KbLookup for Programs<H> {
    fn rows(&self, gpm: usize, element: usize, bound: &[Option<TermId>]) -> Rc<Vec<Row>> {
        let key = (gpm, element, bound.to_vec());
        if let Some(rows) = self.kb_cache.borrow().get(&key) {
            return rows.clone();
        }
        let rows = Rc::new(self.call_kb(gpm, element, bound));
        self.kb_cache.borrow_mut().insert(key, rows.clone());
        rows
    }
}

impl<H: Host> GpmEval for Programs<H> {
    type Index = Prepared;

    fn results(
        &self,
        gpm: usize,
        event: &Prepared,
        mu: &[Option<TermId>],
        run: RunView<'_>,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    ) {
        match &self.gpms[gpm] {
            Gpm::Sparql(body) => {
                if body.may_match(&event.index) {
                    body.results(&event.index, mu, dict, out);
                }
            }
            Gpm::Native(program) => {
                if !program.may_match(&event.index) {
                } else if let Some(base) = program
                    .answers_from_base()
                    .then(|| self.shared_base_rows(gpm, program, event, dict))
                    .flatten()
                {
                    program.results_from_base(&base, &event.index, mu, dict, out);
                } else if program.reads_run() {
                    let iterations = |slot: Slot| self.iterations(run.node, slot);
                    let env = RunEnv {
                        time: event.time,
                        start: run.start.unwrap_or(event.time),
                        stream: self.streams[gpm],
                        iterations: &iterations,
                    };
                    program.results_in_run(gpm, self, &event.index, mu, Some(&env), dict, out);
                } else {
                    program.results_with_kb(gpm, self, &event.index, mu, dict, out);
                }
            }
            Gpm::Callback => self.call_host(gpm, event, Some(mu), run, out),
        }
    }

    fn base(&self, gpm: usize, event: &Prepared, dict: &Dictionary, out: &mut Vec<Row>) {
        match &self.gpms[gpm] {
            Gpm::Native(program) if program.may_match(&event.index) => match &self.twins[gpm] {
                Some((first, renaming)) => self.twin_base(*first, renaming, event, dict, out),
                None => program.base(&event.index, self.names.vars.len(), dict, out),
            },
            Gpm::Native(_) => {}
            Gpm::Sparql(body) => {
                if body.may_match(&event.index) {
                    body.base(&event.index, self.names.vars.len(), dict, out);
                }
            }
            Gpm::Callback => self.call_host(gpm, event, None, RunView::default(), out),
        }
    }

    fn local_slots(&self, gpm: usize) -> &[Slot] {
        &self.names.locals[gpm]
    }

    fn probe(&self, gpm: usize, mu: &[Option<TermId>]) -> Probe {
        match &self.gpms[gpm] {
            Gpm::Native(program) => program.probe(mu),
            Gpm::Sparql(_) | Gpm::Callback => Probe::default(),
        }
    }

    fn admits(&self, probe: &Probe, event: &Prepared) -> bool {
        probe.admits(&event.index)
    }
}
