//! One query's runtime: its runs waiting at steps of NFA_scep, indexed by stream or by the
//! values of the variables the next GPM joins on, its clocks, and the matches completed at
//! the current moment. A port of the Python `runtime.query_runtime` (SEMANTICS.md):
//!
//! - `,` a run ended at t may only take events at next(t), the first later timestamp of the
//!   query's streamset; when the clock moves past it, the run dies;
//! - `;` a run takes every result at the first timestamp where it has one, then dies when
//!   the clock moves past that timestamp ("commits");
//! - `:` a run waits until its window ends.
//!
//! Each step's strategy is compiled once into the transitions of the runs waiting there
//! (`Transitions`): running them never branches on the strategy.
//!
//! Absences (negated and untaken optional atoms) are pending on a run: an event matching
//! one at t limits the run to extensions at t or earlier. A sequence starting with negated
//! atoms (head negation, decision 62) keeps their streams' recent events and drops a
//! completed match when one of them, before its first event and inside its window, matches
//! in the match's context.

use super::buffer::{Node, Taken};
use super::event::{EventRef, StreamId, Streams};
use super::gpms::{GpmEval, RunView};
use super::lazy_chain::PrefixBuffer;
use super::operand::Op;
use super::order::{sort_batch, CompletionKey, MatchRecord};
use super::range_index::{KeyCache, Line, Partition, Partitions, Request};
use super::window::Span;
use slotmap::SlotMap;
use smallvec::{smallvec, SmallVec};
use spaseq_gpm::aggregate::{self, SelectExpressions};
use spaseq_gpm::vars::{Row, Slot, VarTable};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::plan::{Evaluator, Modifier, Plan, Strategy};
use std::collections::{vec_deque, BTreeMap, VecDeque};
use std::rc::{Rc, Weak};

mod conj;
mod dues;
mod moment;
mod policy;
mod snapshot;
#[cfg(test)]
mod tests;
use conj::{join_keys, ConjBuffer, Pool};
use dues::Dues;
pub use moment::MOMENT_CHUNK;
use moment::{Final, Moment};
use policy::{Policy, Proposal};
pub use snapshot::QueryState;
use spaseq_plan::plan::Selection;

/// The runtime's maps are keyed by ids, steps and term ids: hashed by the engine's fast
/// hasher (`spaseq_io::hash`), not SipHash (a tenth of the engine's instructions went to
/// SipHash).
type HashMap<K, V> = std::collections::HashMap<K, V, spaseq_io::hash::Fast>;

const INF: i128 = i128::MAX;
const NEG_INF: i128 = i128::MIN;

/// A plan this runtime cannot run yet, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

/// An absence to watch for: no result of `gpm` in context `mu` after `after`.
#[derive(Debug, Clone)]
struct Pending {
    gpm: usize,
    mu: Rc<Row>,
    after: i128,
    /// The run's events and start when the absence began (for run functions in its body).
    node: Option<Rc<Node>>,
    start: Option<i128>,
}

/// Where a waiting run is registered (to remove it when it dies).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Home {
    Stream(Option<StreamId>),
    /// The slot of its partition in `partitioned` (`Partitions`).
    Partition(u32),
    Watch(Option<StreamId>),
}

/// A partition: the step, whether its runs loop, and their join-key values (a few: inline).
type PartitionKey = (usize, bool, KeyValues);
type KeyValues = SmallVec<[TermId; 2]>;

/// The events a result took: one, except for a conjunction's (kept inline, not allocated).
type Takens = SmallVec<[Taken; 1]>;

/// A result of an operand on an event: the extended mapping and the events it took.
type Result1 = (Row, Takens);

/// The results of offering an event to a run: mostly none or one.
type Results = SmallVec<[Result1; 1]>;

/// A step an event of some stream may extend runs of, and the GPMs it must have a
/// context-free solution of to do so (None: every event visits them).
type Visit = (usize, Option<Vec<usize>>);

/// What an event's solutions ask of the runs of one partition (its key values).
type PartitionRequests = (KeyValues, SmallVec<[Request; 1]>);

/// A partial match waiting at `step` (a Kleene loop run waits for another iteration).
#[derive(Debug)]
struct Run {
    id: u64,
    step: usize,
    /// Shared with the runs cloned from this one and their absences (never changed).
    mu: Rc<Row>,
    ctx: Option<Rc<Row>>,
    node: Option<Rc<Node>>,
    start: Option<i128>,
    end: Option<i128>,
    first_pos: Option<i64>,
    pending: Vec<Pending>,
    limit: i128,
    commit: Option<i128>,
    looping: bool,
    /// A looping run's iterations taken so far (0 for a run waiting for its first): what a
    /// bounded Kleene atom `X{m,n}` counts against its bounds.
    iterations: u32,
    /// Mostly one (a stream or a partition): kept inline.
    homes: SmallVec<[Home; 1]>,
    conj: HashMap<usize, ConjBuffer>,
    select: Transitions,
    last: bool,
    /// Under head negation or a timer: held by every run started at the same time (and
    /// their descendants), so that the events a match may be checked against are kept.
    head: Option<Rc<()>>,
    /// The results COLLECT timers gathered so far (each row the mapping it was found in).
    collected: Option<Rc<Vec<Row>>>,
}

slotmap::new_key_type! {
    /// A run in the runtime's `runs`: plain records in one arena, no reference count or
    /// heap object each. A dead run's key finds nothing (its slot's version moved on), so
    /// the queues that still list it skip it.
    struct RunKey;
}

/// An event offered to a lazy conjunction run, kept until its timestamp is complete: the
/// event, its prepared index, its position.
type Offered<G> = (EventRef, Rc<<G as GpmEval>::Index>, i64);

impl Run {
    #[allow(clippy::too_many_arguments)]
    fn new(
        step: usize,
        mu: Rc<Row>,
        node: Option<Rc<Node>>,
        start: Option<i128>,
        end: Option<i128>,
        first_pos: Option<i64>,
        pending: Vec<Pending>,
        ctx: Option<Rc<Row>>,
        looping: bool,
    ) -> Self {
        Run {
            id: 0,
            step,
            mu,
            ctx,
            node,
            start,
            end,
            first_pos,
            pending,
            limit: INF,
            commit: None,
            looping,
            iterations: 0,
            homes: SmallVec::new(),
            conj: HashMap::default(),
            select: Transitions::NONE,
            last: false,
            head: None,
            collected: None,
        }
    }

    /// What the next GPM is evaluated against: the mapping, or (in a Kleene loop) the
    /// context before the Kleene atom.
    fn context(&self) -> &Rc<Row> {
        if self.looping {
            self.ctx.as_ref().unwrap_or(&self.mu)
        } else {
            &self.mu
        }
    }
}

/// A heap entry: a deadline and the run it ends, earliest (then oldest) first.
struct Due(i128, u64, RunKey);

impl Due {
    /// The run it ends, if alive: found by key, and by the id it was queued with (a slot's
    /// version is 32 bits and wraps round: a key that waited long could meet another run).
    fn run<'a>(&self, runs: &'a SlotMap<RunKey, Run>) -> Option<&'a Run> {
        runs.get(self.2).filter(|r| r.id == self.1)
    }
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.0, self.1) == (other.0, other.1)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(other.0, other.1))
    }
}

/// A step as the runtime uses it.
#[derive(Debug, Clone)]
struct StepInfo {
    /// Shared: a run offered an event holds it while the runtime changes.
    op: Rc<Op>,
    modifier: Modifier,
    /// A run waiting at the step, and (a Kleene atom) one waiting for another iteration.
    wait: Transitions,
    loop_wait: Transitions,
    streams: Vec<StreamId>,
    partition: Option<Vec<Slot>>,
    range: Option<RangeInfo>,
    /// A relative timer's step: no run waits for an event there (docs/decisions.md 71).
    timer: Option<TimerStep>,
}

/// A relative timer as the runtime uses it: its GPM, its anchor's GPM, which side of the
/// anchor it lies on, its duration (ns) and whether it gathers results (or forbids them).
#[derive(Debug, Clone, Copy)]
struct TimerStep {
    gpm: usize,
    anchor: usize,
    after: bool,
    duration: i128,
    collect: bool,
}

impl TimerStep {
    /// The timer's interval for an anchor over `[start, end]`.
    fn interval(&self, start: i128, end: i128) -> (i128, i128) {
        if self.after {
            (end, end + self.duration)
        } else {
            (start - self.duration, start)
        }
    }
}

/// How runs waiting at a step are sorted within a partition: by `run_var`, which GPMs of
/// the step compare with a variable of their own (`by_gpm`: GPM -> its slot and the line).
#[derive(Debug, Clone)]
struct RangeInfo {
    run_var: Slot,
    by_gpm: HashMap<usize, (Slot, Line)>,
}

/// Event selection (`,` `;` `:`) compiled into a waiting run's transitions, as FlinkCEP's
/// NFACompiler compiles it into take / ignore / proceed edges: the run carries them, so the
/// runtime never asks which strategy its atom had. Every waiting run takes (its step's
/// operand) and proceeds on a result; the strategy is its ignore edge:
///
/// - `,` none (`strict`): only an event at next(t) may extend the run, which dies once the
///   clock moves past next(t);
/// - `;` until the first take (`commit`): the run takes every result at that timestamp, then
///   dies when the clock moves past it;
/// - `:` and no strategy (the first atom; a lazy chain's runs): always, until the window ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Transitions {
    strict: bool,
    commit: bool,
    /// The strategy compiled (what a snapshot records of the run).
    strategy: Option<Strategy>,
}

impl Transitions {
    /// No strategy: the start run, and runs that never wait.
    const NONE: Self = Self::compile(None);
    /// `:`, for a lazy chain's runs.
    const ANY: Self = Self::compile(Some(Strategy::SkipTillAny));

    const fn compile(strategy: Option<Strategy>) -> Self {
        Transitions {
            strict: matches!(strategy, Some(Strategy::Strict)),
            commit: matches!(strategy, Some(Strategy::SkipTillNext)),
            strategy,
        }
    }

    /// A Kleene atom's next iterations: `;` after the first atom's first one, `,` after any
    /// other's.
    const fn looping(strategy: Option<Strategy>) -> Self {
        Self::compile(Some(match strategy {
            None => Strategy::SkipTillNext,
            Some(_) => Strategy::Strict,
        }))
    }
}

/// Per stream, the partitioned steps an event of it may extend, and by which GPMs.
#[derive(Debug, Clone)]
struct Probe {
    step: usize,
    ranged: bool,
    loops: Vec<bool>,
    gpms: Vec<usize>,
}

/// The engine switches the runtime reads (EngineOptions).
#[derive(Debug, Clone, Copy)]
struct Switches {
    push_windows: bool,
    index_streams: bool,
    lazy_conjunction: bool,
    cost_ordered_disjunction: bool,
    /// Events may last (docs/decisions.md 71): runs wait until their window ends, and what
    /// `,` `;` and absences allow is judged on each result's begin.
    intervals: bool,
}

pub struct QueryRuntime<G: GpmEval> {
    gpms: G,
    gpm_streams: Vec<StreamId>,
    gpm_costs: Vec<usize>,
    gpm_names: Vec<String>,
    vars: VarTable,
    steps: Vec<StepInfo>,
    probes: HashMap<StreamId, Vec<Probe>>,
    switches: Switches,
    streams: Vec<StreamId>,
    span: Span,
    t0: Option<i128>,
    /// Largest timestamp of the query's streamset, and the one before it.
    pub clock: i128,
    prev_clock: i128,
    /// The clock when `flush` last said no more events come at it (`i128::MIN`: never): an
    /// event at or before it is late.
    pub flushed: i128,
    /// The engine's clock (events of any stream, heartbeats).
    time: i128,
    position: i64,
    next_id: u64,
    /// Runs not partitioned, by stream (None: `index_streams` off) and step.
    by_stream: HashMap<(Option<StreamId>, usize), BTreeMap<u64, RunKey>>,
    /// Per stream, the steps reading it, each with the GPMs (on that stream) an event must
    /// have a context-free solution of to extend its runs; None: visited by every event
    /// (a GPM is not join-shaped: its base solutions need not cover its results).
    visits: HashMap<StreamId, Vec<Visit>>,
    /// Every run alive (the start run, those waiting, closing or timed), each a plain record.
    runs: SlotMap<RunKey, Run>,
    partitioned: Partitions<PartitionKey, RunKey>,
    watchers: HashMap<Option<StreamId>, BTreeMap<u64, RunKey>>,
    strict_new: Vec<RunKey>,
    death: BTreeMap<i128, Vec<RunKey>>,
    expiry: Dues,
    closing: Dues,
    lazy: Vec<(RunKey, Offered<G>)>,
    lazy_ids: std::collections::HashSet<u64, spaseq_io::hash::Fast>,
    doomed: Vec<RunKey>,
    start_run: RunKey,
    /// Positions of the events at the current timestamp, by `uid`.
    positions: HashMap<u64, i64>,
    batch: Vec<MatchRecord>,
    /// Matches released, in order, for the caller to take.
    pub out: Vec<MatchRecord>,
    pub runs_created: u64,
    /// The lazy chain: steps before `lazy_trigger` buffered, evaluated when its events come.
    prefix: Option<PrefixBuffer<G::Index>>,
    lazy_trigger: usize,
    /// Range keys of terms (range_index), parsed once.
    keys: KeyCache,
    /// A GPM's rows for one offer (a buffer kept between offers, not state).
    rows: Vec<Row>,
    /// The runs an event is offered to (a buffer kept between events, not state).
    candidates: Vec<RunKey>,
    /// Per conjunction, per operand, the slots its results are joined on (`conj`).
    conj_keys: HashMap<usize, Vec<Vec<Slot>>>,
    /// What the runtime did so far (counts of work, not state).
    pub work: Work,
    /// Head negation: the negated GPMs the sequence starts with (empty without).
    head: Vec<usize>,
    /// Their streams' events, oldest first, back one window before the oldest live run.
    head_events: VecDeque<(EventRef, Rc<G::Index>)>,
    /// Whether `head_events` are in time order (each kept at or after the one before): then
    /// a timer looks up the events in its interval by binary search (`head_range`).
    head_sorted: bool,
    /// The start of each set of runs that may still complete, oldest first.
    head_starts: VecDeque<(i128, Weak<()>)>,
    /// SELECTION and CONSUMPTION (docs/decisions.md 65).
    policy: Policy,
    /// Events that last: the (end, start) of the streamset's recent events, in arrival (end)
    /// order, back one window: what `,` asks of the gap before a result.
    recent: VecDeque<(i128, i128)>,
    /// Runs waiting for the clock to pass their timer's end, earliest first.
    timers: Dues,
    /// How far before a match's start a BEFORE timer may reach (ns; 0 without one).
    reach: i128,
    /// Whether the query has a timer (its runs then hold a start token, as under head
    /// negation, so that the events its timers look at are kept).
    timed: bool,
    /// The streams whose events are kept to look back at (head negation's, timers').
    kept_streams: Vec<StreamId>,
    /// The SELECT expressions over what COLLECT timers gathered, the slots they read (the
    /// rows' columns) and bind, and the last COLLECT timer's step (where they are evaluated).
    expressions: Option<Expressions>,
    /// CONSUMPTION MATCHED's early cut (`cut`): the last step's GPM, when the plan allows it.
    cut: Option<usize>,
    /// The runs the cut orders, and their order (buffers kept between events, not state).
    finals: Vec<(CompletionKey, RunKey)>,
    final_order: Vec<u32>,
    /// Whether a moment of many matches may be streamed (`moment`): the plan releases a
    /// moment's batch as `sort_batch` orders it, and only the last step's runs complete.
    streams_moments: bool,
    /// About how many matches a streamed moment releases per chunk (`MOMENT_CHUNK`; the
    /// engine's setting, at least 1).
    pub moment_chunk: usize,
    /// The moment being streamed, if one is.
    moment: Option<Moment<G::Index>>,
    /// The keyed runs of the last streamed moment (a buffer kept while small, not state).
    spare_finals: Vec<Final>,
}

/// SELECT expressions as the runtime evaluates them (`spaseq_gpm::aggregate`).
struct Expressions {
    select: SelectExpressions,
    columns: Vec<Slot>,
    outputs: Vec<Slot>,
    at: usize,
}

/// Counts of the runtime's work that grows with its input: what tests check the cost of a
/// shape by, without timing it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Work {
    /// Pairs of conjunction operand results compared (merged or found incompatible).
    pub conjunction_pairs: u64,
    /// Waiting runs offered an event (and lazy chains built for one).
    pub run_offers: u64,
    /// Events' order keys held to sort the matches of a moment (`order::sort_batch`).
    pub order_keys: u64,
    /// Runs CONSUMPTION MATCHED's early cut did not offer an event (`QueryRuntime::cut`).
    pub runs_cut: u64,
    /// Events whose moment was streamed: past a chunk of matches, the rest made a chunk at a
    /// time as they were taken, in the match order (`moment`).
    pub moments_streamed: u64,
}

impl Work {
    /// The counts by name (what `NativeEngine.work` hands to Python).
    pub fn counts(&self) -> BTreeMap<&'static str, u64> {
        BTreeMap::from([
            ("conjunction_pairs", self.conjunction_pairs),
            ("run_offers", self.run_offers),
            ("order_keys", self.order_keys),
            ("runs_cut", self.runs_cut),
            ("moments_streamed", self.moments_streamed),
        ])
    }
}

impl<G: GpmEval> QueryRuntime<G> {
    /// The runtime of `plan` with `gpms` evaluating its GPMs (indexed as `plan.gpms`) and
    /// `vars` the slots they use.
    pub fn new(
        plan: &Plan,
        gpms: G,
        vars: VarTable,
        streams: &mut Streams,
    ) -> Result<Self, Unsupported> {
        let gpm_index = |name: &str| plan.gpms.iter().position(|g| g.name == name);
        let mut conj_ids = 0;
        let mut steps = Vec::new();
        for (i, step) in plan.steps.iter().enumerate() {
            let op = Op::compile(&step.operand, &gpm_index, &mut conj_ids)?;
            let partition = match &plan.run_indexes[i].partition_keys {
                Some(keys) => Some(
                    keys.iter()
                        .map(|k| {
                            vars.get(k).ok_or_else(|| {
                                Unsupported(format!("partition key ?{k} is no variable"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                None => None,
            };
            let slot = |name: &str| {
                vars.get(name)
                    .ok_or_else(|| Unsupported(format!("range variable ?{name} is no variable")))
            };
            let range = match &plan.run_indexes[i].range {
                Some(r) => {
                    let mut by_gpm = HashMap::default();
                    for (g, key) in &r.by_gpm {
                        let g = gpm_index(g).ok_or_else(|| Unsupported(format!("no GPM {g}")))?;
                        let line = Line {
                            below: key.below,
                            scale: key.scale,
                            offset: key.offset,
                        };
                        by_gpm.insert(g, (slot(&key.event_var)?, line));
                    }
                    Some(RangeInfo {
                        run_var: slot(&r.run_var)?,
                        by_gpm,
                    })
                }
                None => None,
            };
            steps.push(StepInfo {
                op: Rc::new(op),
                modifier: step.modifier,
                wait: Transitions::compile(step.strategy),
                loop_wait: Transitions::looping(step.strategy),
                streams: step.streams.iter().map(|s| streams.id(s)).collect(),
                partition,
                range,
                timer: None,
            });
        }
        let mut probes = HashMap::default();
        for (stream, list) in &plan.probes {
            let list = list
                .iter()
                .map(|p| {
                    Ok(Probe {
                        step: p.step,
                        ranged: p.ranged,
                        loops: p.loops.clone(),
                        gpms: p
                            .gpms
                            .iter()
                            .map(|g| gpm_index(g).ok_or_else(|| Unsupported(format!("no GPM {g}"))))
                            .collect::<Result<_, _>>()?,
                    })
                })
                .collect::<Result<Vec<_>, Unsupported>>()?;
            probes.insert(streams.id(stream), list);
        }
        let gpm_streams: Vec<StreamId> = plan.gpms.iter().map(|g| streams.id(&g.stream)).collect();
        let mut reach = 0;
        let mut last_collect = None;
        for (i, info) in steps.iter_mut().enumerate() {
            let Op::Gpm(g) = *info.op else { continue };
            let Some(timer) = plan.query.timers.get(&plan.gpms[g].name) else {
                continue;
            };
            let anchor = gpm_index(&timer.anchor)
                .ok_or_else(|| Unsupported(format!("no GPM {}", timer.anchor)))?;
            let duration = timer.duration as i128;
            if !timer.after {
                reach = reach.max(duration);
            }
            if timer.collect {
                last_collect = Some(i);
            }
            info.timer = Some(TimerStep {
                gpm: g,
                anchor,
                after: timer.after,
                duration,
                collect: timer.collect,
            });
        }
        let timed = steps.iter().any(|s| s.timer.is_some());
        if timed && !plan.options.enabled("intervals") {
            return Err(Unsupported("a timer planned for point events".into()));
        }
        let expressions = match (last_collect, plan.query.expressions.is_empty()) {
            (Some(at), false) => {
                let outputs: Vec<&str> = plan
                    .query
                    .expressions
                    .iter()
                    .map(|(v, _)| v.as_str())
                    .collect();
                let columns: Vec<Slot> = (0..vars.len())
                    .filter(|&s| !outputs.contains(&vars.name(s)))
                    .collect();
                let names: Vec<String> = columns.iter().map(|&s| vars.name(s).to_owned()).collect();
                let select = SelectExpressions::new(
                    plan.query.base.as_deref(),
                    &plan.query.prefixes,
                    &plan.query.expressions,
                    &names,
                )
                .map_err(|e| Unsupported(e.to_string()))?;
                let outputs = outputs
                    .iter()
                    .map(|v| {
                        vars.get(v)
                            .ok_or_else(|| Unsupported(format!("?{v} is no variable")))
                    })
                    .collect::<Result<_, _>>()?;
                Some(Expressions {
                    select,
                    columns,
                    outputs,
                    at,
                })
            }
            (None, false) => {
                return Err(Unsupported(
                    "SELECT expressions without a COLLECT timer".into(),
                ))
            }
            _ => None,
        };
        let span = Span {
            window: plan.query.window,
        };
        let prefix = if plan.lazy_chain > 0 {
            let atoms = steps[..plan.lazy_chain]
                .iter()
                .map(|s| match *s.op {
                    Op::Gpm(g) => Ok((g, gpm_streams[g])),
                    _ => Err(Unsupported("a lazy prefix of operators".into())),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(PrefixBuffer::new(atoms, span.sliding_time()))
        } else {
            None
        };
        let gpm_keys = |g: usize| -> std::collections::BTreeSet<Slot> {
            plan.gpms[g]
                .key_vars
                .iter()
                .filter_map(|v| vars.get(v))
                .collect()
        };
        let mut visits: HashMap<StreamId, Vec<Visit>> = HashMap::default();
        for (i, info) in steps.iter().enumerate() {
            let mut gpms = Vec::new();
            info.op.gpms(&mut gpms);
            for &stream in &info.streams {
                let on: Vec<usize> = gpms
                    .iter()
                    .copied()
                    .filter(|&g| gpm_streams[g] == stream)
                    .collect();
                let shaped = on.iter().all(|&g| plan.gpms[g].join_shaped);
                visits
                    .entry(stream)
                    .or_default()
                    .push((i, shaped.then_some(on)));
            }
        }
        let mut conj_keys = HashMap::default();
        for (step, info) in plan.steps.iter().zip(&steps) {
            let before = step
                .bound_before
                .iter()
                .filter_map(|v| vars.get(v))
                .collect();
            join_keys(&info.op, &gpm_keys, &before, &mut conj_keys);
        }
        let options = &plan.options;
        // head negation: the negated atoms the sequence starts with, states no run waits at
        let head_steps = steps
            .iter()
            .take_while(|s| s.modifier == Modifier::Negation)
            .count();
        let head = steps[..head_steps]
            .iter()
            .map(|s| match *s.op {
                Op::Gpm(g) => Ok(g),
                _ => Err(Unsupported("a head negation of an operator".into())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !head.is_empty() {
            if !matches!(
                span.window.span,
                spaseq_plan::algebra::WindowSpan::Nanoseconds(_)
            ) {
                return Err(Unsupported("a head negation without a time window".into()));
            }
            if prefix.is_some() {
                return Err(Unsupported("a lazy chain after a head negation".into()));
            }
        }
        let mut kept_streams: Vec<StreamId> = head.iter().map(|&g| gpm_streams[g]).collect();
        kept_streams.extend(
            steps
                .iter()
                .filter_map(|s| s.timer.map(|t| gpm_streams[t.gpm])),
        );
        let mut runs = SlotMap::with_key();
        let mut start = Run::new(
            head_steps,
            Rc::new(vars.empty_row()),
            None,
            None,
            None,
            None,
            Vec::new(),
            None,
            false,
        );
        start.id = 1;
        let start_run = runs.insert(start);
        let policy = Policy::of(plan)?;
        if options.enabled("intervals") && (prefix.is_some() || options.enabled("lazy_conjunction"))
        {
            return Err(Unsupported(
                "a lazy chain or lazy conjunction over events that last".into(),
            ));
        }
        if policy.selection != Selection::Unrestricted || policy.consumes() {
            if prefix.is_some() {
                return Err(Unsupported(
                    "a lazy chain under a SELECTION or CONSUMPTION".into(),
                ));
            }
            if options.enabled("lazy_conjunction") {
                return Err(Unsupported(
                    "a lazy conjunction under a SELECTION or CONSUMPTION".into(),
                ));
            }
        }
        // the early cut needs every match to complete by one event through one GPM whose
        // results are its context-free solutions joined in (join-shaped), released as the
        // moment's batch in the match order, nothing but used-up triples holding one back
        let cut = match steps.last() {
            Some(last)
                if policy.consumes()
                    && policy.selection == Selection::Unrestricted
                    && head.is_empty()
                    && !timed
                    && expressions.is_none()
                    && !options.enabled("intervals")
                    && last.modifier == Modifier::Plain
                    && last.timer.is_none() =>
            {
                match *last.op {
                    Op::Gpm(g) if plan.gpms[g].join_shaped => Some(g),
                    _ => None,
                }
            }
            _ => None,
        };
        // a moment is streamed when its matches are the last step's `:` runs' completions,
        // released as the batch orders them: nothing filters, selects or holds them back; and
        // its chunks, made as they are taken, call no host (whose failure a take could not
        // report: a callback GPM, or GRAPH blocks' KB rows)
        let streams_moments = match steps.last() {
            Some(last) => {
                let calls_host = match *last.op {
                    Op::Gpm(g) => {
                        plan.gpms[g].evaluator == Some(Evaluator::Callback)
                            || !plan.gpms[g].graph_elements.is_empty()
                    }
                    _ => true,
                };
                !policy.consumes()
                    && policy.selection == Selection::Unrestricted
                    && head.is_empty()
                    && !timed
                    && expressions.is_none()
                    && prefix.is_none()
                    && !options.enabled("intervals")
                    && last.modifier == Modifier::Plain
                    && last.timer.is_none()
                    && !calls_host
            }
            None => false,
        };
        Ok(QueryRuntime {
            gpm_streams,
            gpm_costs: plan.gpms.iter().map(|g| g.cost).collect(),
            gpm_names: plan.gpms.iter().map(|g| g.name.clone()).collect(),
            gpms,
            vars,
            steps,
            probes,
            switches: Switches {
                push_windows: options.enabled("push_windows"),
                index_streams: options.enabled("index_streams"),
                lazy_conjunction: options.enabled("lazy_conjunction"),
                cost_ordered_disjunction: options.enabled("cost_ordered_disjunction"),
                intervals: options.enabled("intervals"),
            },
            streams: plan
                .query
                .streams
                .iter()
                .map(|(_, s)| streams.id(s))
                .collect(),
            span,
            t0: None,
            clock: NEG_INF,
            prev_clock: NEG_INF,
            flushed: NEG_INF,
            time: NEG_INF,
            position: -1,
            next_id: 2,
            by_stream: HashMap::default(),
            visits,
            runs,
            partitioned: Partitions::default(),
            watchers: HashMap::default(),
            strict_new: Vec::new(),
            death: BTreeMap::new(),
            expiry: Dues::default(),
            closing: Dues::default(),
            lazy: Vec::new(),
            lazy_ids: Default::default(),
            doomed: Vec::new(),
            start_run,
            positions: HashMap::default(),
            batch: Vec::new(),
            out: Vec::new(),
            runs_created: 0,
            prefix,
            lazy_trigger: plan.lazy_chain,
            keys: KeyCache::default(),
            rows: Vec::new(),
            candidates: Vec::new(),
            conj_keys,
            work: Work::default(),
            head,
            head_events: VecDeque::new(),
            head_sorted: true,
            head_starts: VecDeque::new(),
            policy,
            recent: VecDeque::new(),
            timers: Dues::default(),
            reach,
            timed,
            kept_streams,
            expressions,
            cut,
            finals: Vec::new(),
            final_order: Vec::new(),
            streams_moments,
            moment_chunk: MOMENT_CHUNK,
            moment: None,
            spare_finals: Vec::new(),
        })
    }

    pub fn vars(&self) -> &VarTable {
        &self.vars
    }

    pub fn gpm_names(&self) -> &[String] {
        &self.gpm_names
    }

    pub fn gpms(&self) -> &G {
        &self.gpms
    }

    /// The GPM evaluator, to change what it holds (the binding lets go of its callbacks).
    pub fn gpms_mut(&mut self) -> &mut G {
        &mut self.gpms
    }

    /// Does the query read this stream?
    /// Whether the query holds an instant's events until it completes (lazy conjunction):
    /// they must be evaluated on the knowledge base version they arrived under.
    pub fn defers_instants(&self) -> bool {
        self.switches.lazy_conjunction
    }

    /// Whether the query keeps recent events to look back at (head negation, timers).
    fn looks_back(&self) -> bool {
        self.timed || !self.head.is_empty()
    }

    /// Whether the query was planned for events that last (`EngineOptions.intervals`).
    pub fn takes_lasting(&self) -> bool {
        self.switches.intervals
    }

    pub fn reads(&self, stream: StreamId) -> bool {
        self.streams.contains(&stream)
    }

    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn stream_key(&self, stream: StreamId) -> Option<StreamId> {
        self.switches.index_streams.then_some(stream)
    }

    // ------------------------------------------------------------------ indexing

    fn wait(&mut self, run: RunKey, dict: &Dictionary) {
        let (step, looping) = {
            let r = &self.runs[run];
            (r.step, r.looping)
        };
        if let Some(keys) = &self.steps[step].partition {
            let (values, range_key) = {
                let r = &self.runs[run];
                let context = r.context();
                let values: Option<KeyValues> = keys.iter().map(|&k| context[k]).collect();
                let range_key = self.steps[step]
                    .range
                    .as_ref()
                    .and_then(|rng| context[rng.run_var])
                    .and_then(|id| self.keys.key(id, dict));
                (values, range_key)
            };
            if let Some(values) = values {
                let key = (step, looping, values);
                let id = self.runs[run].id;
                let slot = self.partitioned.insert(&key, id, run, range_key);
                self.runs[run].homes.push(Home::Partition(slot));
                if !self.runs[run].pending.is_empty() {
                    self.watch(run);
                }
                return;
            }
        }
        let streams: Vec<Option<StreamId>> = if self.switches.index_streams {
            self.steps[step].streams.iter().map(|&s| Some(s)).collect()
        } else {
            vec![None]
        };
        let id = self.runs[run].id;
        for s in streams {
            self.by_stream.entry((s, step)).or_default().insert(id, run);
            self.runs[run].homes.push(Home::Stream(s));
        }
        self.watch(run);
    }

    fn watch(&mut self, run: RunKey) {
        let keys: Vec<Option<StreamId>> = self.runs[run]
            .pending
            .iter()
            .map(|p| self.stream_key(self.gpm_streams[p.gpm]))
            .collect();
        let id = self.runs[run].id;
        for s in keys {
            self.watchers.entry(s).or_default().insert(id, run);
            self.runs[run].homes.push(Home::Watch(s));
        }
    }

    /// Run `run` dies: out of the arena and of the places it waits in (the queues that list
    /// it find it dead).
    fn kill(&mut self, run: RunKey) {
        let Some(r) = self.runs.remove(run) else {
            return;
        };
        let (id, step) = (r.id, r.step);
        for home in r.homes {
            match home {
                Home::Stream(s) => remove(&mut self.by_stream, &(s, step), id),
                Home::Watch(s) => remove(&mut self.watchers, &s, id),
                Home::Partition(slot) => self.partitioned.remove(slot, id),
            }
        }
    }

    // ------------------------------------------------------------------ windows

    fn fits(&self, start: i128, first_pos: i64, tau: i128, pos: i64) -> bool {
        self.span
            .fits(self.t0.unwrap_or(0), start, first_pos, tau, pos)
    }

    fn deadline(&self, run: &Run) -> Option<i128> {
        let start = run.start?;
        self.span
            .deadline(self.t0.unwrap_or(0), start, run.first_pos.unwrap_or(0))
    }

    fn expired(&self, deadline: i128, tau: i128, pos: i64) -> bool {
        self.span.expired(deadline, tau, pos)
    }

    // ------------------------------------------------------------------ events that last

    /// Whether a result beginning at `begin` may extend `r` (docs/decisions.md 71): no
    /// absence lies whole between the prefix and it (`limit`: the earliest end of one), and
    /// nothing `r`'s strategy forbids does either: an event of the streamset (`,`) or an
    /// earlier result (`;`, `commit`: the first result's end).
    fn admits(&self, r: &Run, begin: i128) -> bool {
        let end = r.end.unwrap_or(NEG_INF);
        begin <= r.limit
            && r.commit.is_none_or(|c| begin <= c)
            && (!r.select.strict || self.gap_clear(end, begin))
    }

    /// Whether no event of the streamset lies whole in the gap `(end, begin)`.
    fn gap_clear(&self, end: i128, begin: i128) -> bool {
        let from = self.recent.partition_point(|&(e, _)| e <= end);
        let to = self.recent.partition_point(|&(e, _)| e < begin);
        (from..to.max(from)).all(|i| self.recent[i].1 <= end)
    }

    /// Remember an event of the streamset for `gap_clear`, after forgetting those no run's
    /// gap can hold any more: ended a window before the clock (a live run began after).
    fn note_recent(&mut self, event: &EventRef) {
        match self.span.window.span {
            spaseq_plan::algebra::WindowSpan::Nanoseconds(ns) => {
                let horizon = event.time - ns as i128;
                while self.recent.front().is_some_and(|&(e, _)| e < horizon) {
                    self.recent.pop_front();
                }
            }
            spaseq_plan::algebra::WindowSpan::Events(n) => {
                while self.recent.len() >= n as usize {
                    self.recent.pop_front();
                }
            }
            spaseq_plan::algebra::WindowSpan::Unbounded => {}
        }
        self.recent.push_back((event.time, event.start));
    }

    // ------------------------------------------------------------------ clock

    /// Move the engine clock (an event of any stream, or a heartbeat) to `tau`.
    pub fn advance_time(&mut self, tau: i128, pos: Option<i64>, dict: &Dictionary) {
        self.finish_moment(dict);
        if tau <= self.time && pos.is_none() {
            return;
        }
        if tau > self.time {
            self.flush_lazy(tau, dict);
            self.time = tau;
            // the runs due to die before tau, earliest first (split_off built a new tree
            // each time the clock moved)
            while let Some(entry) = self.death.first_entry() {
                if *entry.key() >= tau {
                    break;
                }
                for run in entry.remove() {
                    self.kill(run);
                }
            }
            self.fire_timers(tau, dict);
        }
        self.expire(tau, pos.unwrap_or(self.position), dict);
    }

    /// Drop the runs whose window time `tau` or position `p` has passed, and complete the
    /// trailing negations whose window has, releasing their matches.
    fn expire(&mut self, tau: i128, p: i64, dict: &Dictionary) {
        while let Some(Due(deadline, _, _)) = self.expiry.peek() {
            if !self.expired(*deadline, tau, p) {
                break;
            }
            let due = self.expiry.pop().expect("peeked");
            let Some(id) = due.run(&self.runs).map(|r| r.id) else {
                continue; // dead already
            };
            let run = due.2;
            if self.lazy_ids.contains(&id) {
                self.doomed.push(run);
            } else {
                self.kill(run);
            }
        }
        while let Some(Due(deadline, _, _)) = self.closing.peek() {
            if !self.expired(*deadline, tau, p) {
                break;
            }
            let due = self.closing.pop().expect("peeked");
            if due.run(&self.runs).is_some() {
                self.complete(due.2);
                self.kill(due.2);
            }
        }
        if !self.batch.is_empty() {
            self.release(false, dict);
        }
    }

    /// Evaluate work deferred to the end of the current timestamp (lazy conjunction). The
    /// runs it extends may be past their window already (an event-count window that later
    /// events of the same timestamp closed while the work waited): they expire or complete
    /// now, as they would have at those events.
    pub fn flush(&mut self, dict: &Dictionary) {
        self.finish_moment(dict);
        self.flushed = self.flushed.max(self.clock);
        self.flush_lazy(INF, dict);
        self.expire(self.time, self.position, dict);
    }

    /// End of input: every window closes; trailing-negation matches are emitted.
    pub fn close(&mut self, dict: &Dictionary) {
        self.finish_moment(dict);
        self.flush_lazy(INF, dict);
        self.fire_timers(INF, dict);
        for due in self.closing.drain_sorted() {
            if due.run(&self.runs).is_some() {
                self.complete(due.2);
                self.kill(due.2);
            }
        }
        self.release(false, dict);
        let waiting: Vec<RunKey> = self
            .by_stream
            .values()
            .chain(self.watchers.values())
            .flat_map(|b| b.values().cloned())
            .chain(self.partitioned.values().flat_map(|p| p.runs().cloned()))
            .collect();
        for run in waiting {
            self.kill(run);
        }
        if let Some(prefix) = self.prefix.as_mut() {
            prefix.entries.clear();
        }
        self.expiry.clear();
        self.death.clear();
    }

    /// The earliest time a match emitted from now on without a new event can carry
    /// (composition holds a consumer's input back to it); None if none.
    pub fn horizon(&self) -> Option<i128> {
        let closing = self
            .closing
            .iter()
            .filter_map(|d| d.run(&self.runs)?.end)
            .min();
        let lazy = self.lazy.iter().map(|(_, (e, _, _))| e.time).min();
        // a run waiting for its timer's end: judged, it ends no earlier than that
        let timed = self
            .timers
            .iter()
            .filter_map(|d| Some(d.run(&self.runs)?.end.map_or(d.0, |e| e.max(d.0))))
            .min();
        [closing, lazy, timed, self.moment_time()]
            .into_iter()
            .flatten()
            .min()
    }

    /// How much state the query holds (bounded memory, SEMANTICS.md section 8).
    pub fn footprint(&self) -> BTreeMap<&'static str, usize> {
        let mut waiting = std::collections::HashSet::new();
        for b in self.by_stream.values() {
            waiting.extend(b.keys().copied());
        }
        for p in self.partitioned.values() {
            waiting.extend(p.ids());
        }
        BTreeMap::from([
            // every run alive but the start run (those waiting, closing or timed)
            ("runs", self.runs.len() - 1),
            ("waiting_runs", waiting.len()),
            (
                "watching_runs",
                self.watchers.values().map(|b| b.len()).sum(),
            ),
            ("expiry_entries", self.expiry.len()),
            ("closing_runs", self.closing.len()),
            ("death_entries", self.death.values().map(|v| v.len()).sum()),
            (
                "range_keys",
                self.partitioned.values().map(Partition::keyed).sum(),
            ),
            ("deferred", self.lazy.len() + self.doomed.len()),
            (
                "buffered_events",
                self.prefix.as_ref().map_or(0, |p| p.entries.len()),
            ),
            ("kept_events", self.head_events.len()),
            ("moment_runs", self.moment_runs()),
        ])
    }

    // ------------------------------------------------------------------ events

    /// Process one event of the query's streamset (in time order).
    pub fn on_event(&mut self, event: &EventRef, index: &Rc<G::Index>, dict: &Dictionary) {
        self.finish_moment(dict);
        let tau = event.time;
        if self.t0.is_none() {
            self.t0 = Some(event.start); // tumbling windows start at the first event's start
        }
        if tau > self.clock {
            self.flush_lazy(tau, dict);
            self.positions.clear();
            self.prev_clock = self.clock;
            self.clock = tau;
            for run in std::mem::take(&mut self.strict_new) {
                if self.runs.contains_key(run) {
                    self.death.entry(tau).or_default().push(run);
                }
            }
        }
        if self.switches.intervals {
            self.note_recent(event);
        }
        self.position += 1;
        let pos = self.position;
        self.positions.insert(event.uid, pos);
        if self.looks_back() {
            self.keep_head_event(event, index);
        }
        self.advance_time(tau, Some(pos), dict);
        if self.policy.selection == Selection::Latest {
            self.note_latest(event, index, dict);
        }
        self.absences(event, index, pos, dict);
        // the candidates' and rows' buffers are kept between events
        let mut runs = std::mem::take(&mut self.candidates);
        let mut rows = std::mem::take(&mut self.rows);
        self.candidates(event, index, dict, &mut runs, &mut rows);
        rows.clear();
        self.rows = rows;
        let mut finals = self.cut(event, index, dict, &mut runs);
        let offered = (runs.len() + finals.len()) as u64;
        // once the event has completed a chunk of matches, the rest of its last step's runs
        // are offered it a chunk at a time, in the match order (`moment`)
        let mut streamed = Vec::new();
        let mut switched = !self.streams_moments;
        let mut at = 0;
        while at < runs.len() {
            let run = runs[at];
            at += 1;
            if self.runs.contains_key(run) {
                self.try_run(run, event, index, pos, dict);
            }
            if !switched && self.batch.len() >= self.moment_chunk && at < runs.len() {
                switched = true;
                let mut rest = runs.split_off(at);
                streamed = self.moment_finals(event, &mut rest);
                runs.append(&mut rest); // the others (all of them, if not streamed)
            }
        }
        runs.clear();
        self.candidates = runs;
        // in the match order, up to the first that completes a match (and its ties); the
        // order sorted by index, not by moving the keys about
        let mut order = std::mem::take(&mut self.final_order);
        order.clear();
        order.extend(0..finals.len() as u32);
        order.sort_unstable_by(|&a, &b| finals[a as usize].0.cmp(&finals[b as usize].0));
        let mut first: Option<usize> = None;
        let mut skipped = 0;
        for (n, &i) in order.iter().enumerate() {
            let i = i as usize;
            if first.is_some_and(|f| finals[f].0 != finals[i].0) {
                skipped = (order.len() - n) as u64;
                break;
            }
            let run = finals[i].1;
            let before = self.batch.len();
            if self.runs.contains_key(run) {
                self.try_run(run, event, index, pos, dict);
            }
            if first.is_none() && self.batch.len() > before {
                first = Some(i);
            }
        }
        finals.clear();
        self.finals = finals;
        self.final_order = order;
        self.work.run_offers += offered - skipped;
        self.work.runs_cut += skipped;
        if self.prefix.is_none() {
            let start = self.start_run;
            self.try_run(start, event, index, pos, dict);
        } else {
            self.lazy_chain(event, index, pos, dict);
        }
        if !self.policy.proposals.is_empty() {
            self.choose(event, dict);
        }
        if !streamed.is_empty() {
            self.stream_moment(event, index, pos, dict, streamed);
        }
        if !self.batch.is_empty() {
            self.release(true, dict);
        }
    }

    /// CONSUMPTION MATCHED's early cut: when every match the event completes uses one same
    /// triple of it (`Policy::one_triple_for_all` on the last GPM's context-free solutions),
    /// only the first the batch releases is released, and every match after it in the match
    /// order would be held back. The runs of `runs` that can only complete such a match (at
    /// the last step, `:`, no absence pending) are taken out and returned with the keys of
    /// their completions in the match order, for the caller to offer the event in that order
    /// up to the first that completes one (and those tied with it): the runs after it would
    /// complete only matches held back, and a `:` run offered an event it does not take, or
    /// takes into a complete match, is unchanged. Those holding a used-up triple can complete
    /// no match: they die here. Empty when the cut does not hold, or when a run's match would
    /// take more events than a packed key holds (keying each run's list would cost the lists'
    /// total length, which `sort_batch` avoids by ranking them in a trie).
    fn cut(
        &mut self,
        event: &EventRef,
        index: &G::Index,
        dict: &Dictionary,
        runs: &mut Vec<RunKey>,
    ) -> Vec<(CompletionKey, RunKey)> {
        let mut finals = std::mem::take(&mut self.finals); // empty between events
        let Some(g) = self.cut else {
            return finals;
        };
        if event.stream != self.gpm_streams[g]
            || runs
                .iter()
                .filter(|run| self.completes_at_once(&self.runs[**run]))
                .nth(1)
                .is_none()
        {
            return finals; // fewer than two runs to order
        }
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        self.gpms.base(g, index, dict, &mut rows);
        let locals = self.gpms.local_slots(g);
        let solutions = rows.iter().map(|row| {
            locals
                .iter()
                .map(|&s| row[s])
                .collect::<SmallVec<[Option<TermId>; 8]>>()
        });
        let shared = self.policy.one_triple_for_all(g, event, solutions, dict);
        self.rows = rows;
        if !shared {
            return finals;
        }
        let mut used_up = Vec::new();
        for &run in runs.iter() {
            let r = &self.runs[run];
            let (true, Some(start)) = (self.completes_at_once(r), r.start) else {
                continue;
            };
            if self.policy.chain_consumed(&r.node, dict) {
                used_up.push(run);
                continue;
            }
            let Some(key) = Self::completion_key(r, start, event) else {
                finals.clear();
                return finals;
            };
            finals.push((key, run));
        }
        runs.retain(|run| !self.completes_at_once(&self.runs[*run]));
        self.work.run_offers += used_up.len() as u64;
        for run in used_up {
            self.kill(run);
        }
        finals
    }

    /// The key of the match `r` (started at `start`) completes with `event`: the match starts
    /// at the earlier of the run's start and the event's (an interval event may start first).
    fn completion_key(r: &Run, start: i128, event: &EventRef) -> Option<CompletionKey> {
        CompletionKey::of(start.min(event.start), &r.node, event.order())
    }

    /// Whether `r` can only complete a match with an event it is offered, and is unchanged
    /// by the offer: at the last step, `:`, not looping, no absence pending, started.
    fn completes_at_once(&self, r: &Run) -> bool {
        r.step == self.steps.len() - 1
            && !r.looping
            && r.pending.is_empty()
            && r.select == Transitions::ANY
            && r.start.is_some()
    }

    /// CHRONOLOGICAL / RECENT: of the extensions the event offered (every run having been
    /// offered it), those the selection keeps are made (`policy::select`).
    fn choose(&mut self, event: &EventRef, dict: &Dictionary) {
        let proposals = std::mem::take(&mut self.policy.proposals);
        let admitted: Vec<policy::Admitted> = proposals
            .into_iter()
            .filter_map(|p| {
                let r = self.runs.get(p.run)?;
                self.extension_span(r, event, p.pos, &p.taken)?;
                let iterations = if r.looping { r.iterations } else { 0 };
                let (step, node) = (r.step, r.node.clone());
                Some((p, step, iterations.saturating_add(1), node))
            })
            .collect();
        let first = self.policy.selection == Selection::Chronological;
        for p in policy::select(admitted, first) {
            self.advance(p.run, event, p.pos, p.mu, p.taken, dict);
        }
    }

    /// Offer the event to the lazy prefix's partial matches (built from the buffer as the
    /// eager runs waiting at the trigger step would be), then buffer it.
    fn lazy_chain(&mut self, event: &EventRef, index: &Rc<G::Index>, pos: i64, dict: &Dictionary) {
        let t = self.lazy_trigger;
        let tau = event.time;
        let Some(prefix) = self.prefix.as_mut() else {
            return;
        };
        prefix.expire(tau);
        let mut chains = Vec::new();
        if let Op::Gpm(trigger) = *self.steps[t].op {
            if event.stream == self.gpm_streams[trigger] {
                let mut anchors = Vec::new();
                self.gpms.base(trigger, index, dict, &mut anchors);
                let empty = self.vars.empty_row();
                if let Some(prefix) = self.prefix.as_ref() {
                    chains = prefix.chains(&self.gpms, tau, &anchors, &empty, dict);
                }
            }
        }
        self.work.run_offers += chains.len() as u64;
        for chain in chains {
            let mut node = None;
            for taken in chain.taken {
                node = Some(Node::push(node, taken));
            }
            let mut run = Run::new(
                t,
                Rc::new(chain.mu),
                node,
                Some(chain.start),
                Some(chain.end),
                Some(chain.first),
                Vec::new(),
                None,
                false,
            );
            run.select = Transitions::ANY;
            // offered the event once, never kept (a lazy chain has no policy, and its trigger
            // is a GPM: nothing holds the run on)
            let run = self.runs.insert(run);
            self.try_run(run, event, index, pos, dict);
            self.kill(run);
        }
        if let Some(mut prefix) = self.prefix.take() {
            prefix.add(&self.gpms, (event.clone(), index.clone(), pos), dict);
            self.prefix = Some(prefix);
        }
    }

    /// Runs the event may extend, into `out`: by stream, and by join-key values where
    /// partitioned (`rows`: a buffer for the event's solutions).
    fn candidates(
        &self,
        event: &EventRef,
        index: &G::Index,
        dict: &Dictionary,
        out: &mut Vec<RunKey>,
        rows: &mut Vec<Row>,
    ) {
        let key = self.stream_key(event.stream);
        for (step, gpms) in self
            .visits
            .get(&event.stream)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let Some(bucket) = self.by_stream.get(&(key, *step)) else {
                continue;
            };
            // an event without a context-free solution of the step's GPMs extends none of
            // its runs (`GpmEval::base` is a superset of every context's results)
            if let (true, Some(gpms)) = (self.switches.index_streams, gpms) {
                let solves = |g: &usize| {
                    rows.clear();
                    self.gpms.base(*g, index, dict, rows);
                    !rows.is_empty()
                };
                if !gpms.iter().any(solves) {
                    continue;
                }
            }
            out.extend(bucket.values().cloned());
        }
        if self.partitioned.is_empty() {
            return;
        }
        for probe in self
            .probes
            .get(&event.stream)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let info = &self.steps[probe.step];
            let keys = info
                .partition
                .as_ref()
                .expect("a probed step is partitioned");
            // per partition, what the event's solutions ask of its runs (range_index)
            let mut requests: SmallVec<[PartitionRequests; 1]> = SmallVec::new();
            for &g in &probe.gpms {
                rows.clear();
                self.gpms.base(g, index, dict, rows);
                let range = info.range.as_ref().and_then(|r| r.by_gpm.get(&g));
                for row in rows.iter() {
                    let Some(values) = keys.iter().map(|&k| row[k]).collect::<Option<KeyValues>>()
                    else {
                        continue;
                    };
                    let request = match range {
                        Some(&(slot, line)) => (
                            row[slot]
                                .and_then(|id| self.keys.key(id, dict))
                                .and_then(|v| line.bound(v)),
                            line.below,
                        ),
                        None => (None, true),
                    };
                    match requests.iter_mut().find(|(v, _)| *v == values) {
                        Some((_, list)) => list.push(request),
                        None => requests.push((values, smallvec![request])),
                    }
                }
            }
            for (values, list) in requests {
                let mut key = (probe.step, false, values); // the key built once, not cloned
                for &looping in &probe.loops {
                    key.1 = looping;
                    if let Some(p) = self.partitioned.get(&key) {
                        if probe.ranged {
                            p.select(&list, out);
                        } else {
                            out.extend(p.runs().cloned());
                        }
                    }
                }
            }
        }
    }

    /// Pending absences matched by this event limit or kill their runs.
    fn absences(&mut self, event: &EventRef, index: &G::Index, pos: i64, dict: &Dictionary) {
        let Some(bucket) = self.watchers.get(&self.stream_key(event.stream)) else {
            return;
        };
        let tau = event.time;
        let runs: Vec<RunKey> = bucket.values().cloned().collect();
        let mut rows = Vec::new();
        for run in runs {
            if !self.runs.contains_key(run) {
                continue;
            }
            let pending = self.runs[run].pending.clone();
            for p in pending {
                // an absence lies whole after the prefix that began it
                if event.stream != self.gpm_streams[p.gpm] || event.start <= p.after {
                    continue;
                }
                let (last, start, first_pos) = {
                    let r = &self.runs[run];
                    (r.last, r.start, r.first_pos)
                };
                if last && !self.fits(start.unwrap_or(tau), first_pos.unwrap_or(pos), tau, pos) {
                    continue;
                }
                rows.clear();
                let view = RunView {
                    start: p.start,
                    node: p.node.as_ref(),
                };
                self.gpms
                    .results(p.gpm, index, &p.mu, view, dict, &mut rows);
                if !rows.is_empty() {
                    if last {
                        self.kill(run); // a trailing absence was violated
                    } else if tau < self.runs[run].limit {
                        self.runs[run].limit = tau;
                        if !self.switches.intervals {
                            self.death.entry(tau).or_default().push(run);
                        }
                    }
                    break;
                }
            }
        }
    }

    // ------------------------------------------------------------------ extending runs

    /// Offer the event to one waiting run (SEMANTICS sections 4-7).
    fn try_run(
        &mut self,
        run: RunKey,
        event: &EventRef,
        index: &Rc<G::Index>,
        pos: i64,
        dict: &Dictionary,
    ) {
        let tau = event.time;
        let intervals = self.switches.intervals;
        let (step, commit) = {
            let r = &self.runs[run];
            if let Some(end) = r.end {
                // after the prefix: begun after its end (point events: at a later time)
                if event.start <= end {
                    return;
                }
                if !intervals {
                    if tau > r.limit {
                        return;
                    }
                    if r.select.strict && !(end == self.prev_clock && tau == self.clock) {
                        return;
                    }
                    if r.commit.is_some_and(|c| c != tau) {
                        return;
                    }
                } else if !matches!(*self.steps[r.step].op, Op::And { .. })
                    && !self.admits(r, event.start)
                {
                    // a conjunction's result begins with its earliest event: judged below
                    return;
                }
                if !self.switches.push_windows
                    && !self.fits(r.start.unwrap_or(tau), r.first_pos.unwrap_or(pos), tau, pos)
                {
                    return;
                }
            }
            (r.step, r.select.commit)
        };
        if !self.steps[step].streams.contains(&event.stream) {
            return;
        }
        if self.policy.consumes() && self.policy.chain_consumed(&self.runs[run].node, dict) {
            self.kill(run); // it holds a used-up triple: it can complete no match
            return;
        }
        let op = self.steps[step].op.clone();
        let context = self.runs[run].context().clone();
        let results = match &*op {
            Op::And { .. } if self.switches.lazy_conjunction => {
                let id = self.runs[run].id;
                self.lazy.push((run, (event.clone(), index.clone(), pos)));
                self.lazy_ids.insert(id);
                return;
            }
            Op::And { .. } => self.conj_new(run, &op, event, index, &context, dict),
            _ => self.operand_results(&op, event, index, &context, run, dict),
        };
        let mut results = results;
        if self.policy.consumes() {
            // a used-up triple is no longer input: a result taking one is no result (so `;`
            // does not commit to it either)
            results.retain(|(_, taken)| !taken.iter().any(|t| self.policy.is_consumed(t, dict)));
        }
        if results.is_empty() {
            return;
        }
        if commit && self.runs[run].commit.is_none() {
            self.runs[run].commit = Some(tau);
            if !intervals {
                self.death.entry(tau).or_default().push(run);
            }
        }
        if intervals && self.runs[run].end.is_some() {
            let r = &self.runs[run];
            results.retain(|(_, taken)| self.admits(r, begin(taken)));
        }
        for (mu, taken) in results {
            if self.policy.selects() {
                let proposal = Proposal {
                    run,
                    pos,
                    mu,
                    taken,
                };
                self.policy.proposals.push(proposal);
                continue;
            }
            self.advance(run, event, pos, mu, taken, dict);
        }
    }

    /// New results of an operand completed by one event, for the run being extended.
    fn operand_results(
        &mut self,
        op: &Op,
        event: &EventRef,
        index: &G::Index,
        mu: &Row,
        run: RunKey,
        dict: &Dictionary,
    ) -> Results {
        match op {
            Op::Gpm(g) => {
                if event.stream != self.gpm_streams[*g] {
                    return Results::new();
                }
                // the rows' buffer is kept between offers (taken: a disjunction nests)
                let mut rows = std::mem::take(&mut self.rows);
                rows.clear();
                {
                    let r = &self.runs[run];
                    let view = RunView {
                        start: r.start,
                        node: r.node.as_ref(),
                    };
                    self.gpms.results(*g, index, mu, view, dict, &mut rows);
                }
                let locals = self.gpms.local_slots(*g);
                let out = rows
                    .drain(..)
                    .map(|row| {
                        let bindings: Rc<[Option<TermId>]> =
                            locals.iter().map(|&s| row[s]).collect();
                        let taken = Taken {
                            gpm: *g,
                            event: event.clone(),
                            bindings,
                        };
                        (row, smallvec![taken])
                    })
                    .collect();
                self.rows = rows;
                out
            }
            Op::Or(operands) => {
                let mut ordered: Vec<&Op> = operands.iter().collect();
                if self.switches.cost_ordered_disjunction {
                    ordered.sort_by_key(|o| self.cost(o));
                }
                let mut out = Results::new();
                for o in ordered {
                    out.extend(self.operand_results(o, event, index, mu, run, dict));
                }
                out
            }
            Op::And { .. } => self.conj_new(run, op, event, index, mu, dict),
        }
    }

    fn cost(&self, op: &Op) -> usize {
        let mut gpms = Vec::new();
        op.gpms(&mut gpms);
        gpms.iter().map(|&g| self.gpm_costs[g]).sum()
    }

    /// New full combinations at this timestamp completed by this event: each operand's
    /// results so far at the same time are buffered on the run; every combination is
    /// produced exactly once, by the event that supplies its last component.
    fn conj_new(
        &mut self,
        run: RunKey,
        op: &Op,
        event: &EventRef,
        index: &G::Index,
        mu: &Row,
        dict: &Dictionary,
    ) -> Results {
        let Op::And { id, operands } = op else {
            unreachable!("conj_new on a conjunction")
        };
        let tau = event.time;
        let new_per_operand: Vec<Vec<Result1>> = operands
            .iter()
            .map(|o| {
                self.operand_results(o, event, index, mu, run, dict)
                    .into_vec()
            })
            .collect();
        let keys = &self.conj_keys[id];
        let pairs = &mut self.work.conjunction_pairs;
        let r = &mut self.runs[run];
        let fresh = || ConjBuffer {
            tau,
            pools: vec![Pool::default(); operands.len()],
        };
        let state = r.conj.entry(*id).or_insert_with(fresh);
        if state.tau != tau {
            *state = fresh();
        }
        let pools = &mut state.pools;
        let mut out: Vec<Result1> = Vec::new();
        for (i, new) in new_per_operand.into_iter().enumerate() {
            if new.is_empty() {
                continue;
            }
            if (0..pools.len()).all(|j| j == i || !pools[j].is_empty()) {
                // the new results first, the others probed by their join keys
                out.extend(conj::combine(mu, i, &new, pools, keys, pairs));
            }
            pools[i].extend(new);
        }
        let mut order = Vec::new();
        op.gpms(&mut order);
        out.into_iter()
            .map(|(m, mut t)| {
                t.sort_by_key(|x| order.iter().position(|&g| g == x.gpm).unwrap_or(0));
                (m, t)
            })
            .collect()
    }

    /// Lazy conjunction (Section 7.3): evaluate buffered conjunction runs once every event
    /// at their timestamp is known, cheapest operand first, stopping at the first operand
    /// without results.
    fn flush_lazy(&mut self, tau: i128, dict: &Dictionary) {
        if self.lazy.is_empty() || self.lazy[0].1 .0.time >= tau {
            return;
        }
        let mut groups: Vec<(RunKey, Vec<Offered<G>>)> = Vec::new();
        let mut at: HashMap<u64, usize> = HashMap::default();
        for (run, offered) in std::mem::take(&mut self.lazy) {
            let Some(id) = self.runs.get(run).map(|r| r.id) else {
                continue; // dead (never so far: a lazy run is doomed, not killed, until here)
            };
            let i = *at.entry(id).or_insert_with(|| {
                groups.push((run, Vec::new()));
                groups.len() - 1
            });
            groups[i].1.push(offered);
        }
        self.lazy_ids.clear();
        self.evaluate_lazy(groups, dict);
        for run in std::mem::take(&mut self.doomed) {
            self.kill(run);
        }
        self.release(true, dict);
    }

    fn evaluate_lazy(&mut self, groups: Vec<(RunKey, Vec<Offered<G>>)>, dict: &Dictionary) {
        for (run, offered) in groups {
            let Some((step, context)) = self.runs.get(run).map(|r| (r.step, r.context().clone()))
            else {
                continue; // dead
            };
            let op = self.steps[step].op.clone();
            let Op::And { id, operands } = &*op else {
                continue;
            };
            let mut order: Vec<usize> = (0..operands.len()).collect();
            order.sort_by_key(|&i| self.cost(&operands[i]));
            let mut per: Vec<Vec<Result1>> = vec![Vec::new(); operands.len()];
            let mut complete = true;
            for i in order {
                let mut rs = Vec::new();
                for (event, index, _) in &offered {
                    rs.extend(self.operand_results(
                        &operands[i],
                        event,
                        index,
                        &context,
                        run,
                        dict,
                    ));
                }
                if rs.is_empty() {
                    complete = false;
                    break;
                }
                per[i] = rs;
            }
            if !complete {
                continue;
            }
            // the operand with the fewest results first, the others probed by their keys
            let first = (0..per.len()).min_by_key(|&i| per[i].len()).unwrap_or(0);
            let rows = std::mem::take(&mut per[first]);
            let mut pools: Vec<Pool> = per.into_iter().map(Pool::of).collect();
            let keys = &self.conj_keys[id];
            let pairs = &mut self.work.conjunction_pairs;
            let joined = conj::combine(&context, first, &rows, &mut pools, keys, pairs);
            if joined.is_empty() {
                continue;
            }
            let tau0 = offered[0].0.time;
            let (commits, commit) = {
                let r = &self.runs[run];
                (r.select.commit, r.commit)
            };
            if commits && commit.is_none() {
                self.runs[run].commit = Some(tau0);
                self.death.entry(tau0).or_default().push(run);
            }
            let (last, _, pos) = offered
                .iter()
                .max_by_key(|(_, _, pos)| *pos)
                .expect("a lazy run was offered an event");
            for (mu, taken) in joined {
                self.advance(run, last, *pos, mu, taken, dict);
            }
        }
    }

    // ------------------------------------------------------------------ state changes

    /// The start and first position of `r` extended by `taken` (the event at `pos`), None when
    /// the extension would leave the window.
    fn extension_span(
        &self,
        r: &Run,
        event: &EventRef,
        pos: i64,
        taken: &Takens,
    ) -> Option<(i128, i64)> {
        let tau = event.time;
        let (first_pos, last_pos) = if taken.len() == 1 && Rc::ptr_eq(&taken[0].event, event) {
            (r.first_pos.unwrap_or(pos), pos)
        } else {
            let positions: Vec<i64> = taken
                .iter()
                .map(|t| *self.positions.get(&t.event.uid).unwrap_or(&pos))
                .collect();
            (
                r.first_pos
                    .unwrap_or_else(|| *positions.iter().min().unwrap_or(&pos)),
                *positions.iter().max().unwrap_or(&pos),
            )
        };
        // the hull: its earliest begin (a point event's is its time)
        let first = begin(taken);
        let start = r.start.map_or(first, |s| s.min(first));
        let fits = match self.span.sliding_time() {
            Some(omega) => tau - start <= omega,
            None => self.fits(start, first_pos, tau, last_pos),
        };
        fits.then_some((start, first_pos))
    }

    /// A result at the event's time extends `run`: clone it one step further.
    fn advance(
        &mut self,
        run: RunKey,
        event: &EventRef,
        pos: i64,
        mu: Row,
        taken: Takens,
        dict: &Dictionary,
    ) {
        let tau = event.time;
        let collected = self.runs[run].collected.clone();
        let (step, run_start, run_node, run_context, iterations) = {
            let r = &self.runs[run];
            let ctx = if r.looping {
                r.ctx.clone()
            } else {
                Some(r.mu.clone())
            };
            // saturating: an unbounded loop (`X+` without a window) may outlast any count,
            // and past its lower bound the count no longer matters
            let taken = if r.looping { r.iterations } else { 0 };
            let iterations = taken.saturating_add(1);
            (r.step, r.start, r.node.clone(), ctx, iterations)
        };
        let Some((start, first_pos)) = self.extension_span(&self.runs[run], event, pos, &taken)
        else {
            return;
        };
        let mut node = run_node;
        for t in taken {
            node = Some(Node::push(node, t));
        }
        let mu = Rc::new(mu);
        let head = match run_start {
            _ if !self.looks_back() => None,
            None => Some(self.head_token(start)), // the start run: a match starts here
            Some(_) => self.runs[run].head.clone(),
        };
        let info = &self.steps[step];
        if let Modifier::Kleene { min, max } = info.modifier {
            // `iterations` events taken now: another may follow below the upper bound, and
            // the run goes on only from the lower bound (docs/decisions.md 61)
            if max.is_none_or(|max| iterations < max) {
                let wait = info.loop_wait;
                let mut looped = Run::new(
                    step,
                    mu.clone(),
                    node.clone(),
                    Some(start),
                    Some(tau),
                    Some(first_pos),
                    Vec::new(),
                    run_context,
                    true,
                );
                looped.iterations = iterations;
                looped.head = head.clone();
                looped.collected = collected.clone();
                self.enter_wait(looped, wait, dict);
            }
            if iterations < min {
                return;
            }
        } else if step + 1 == self.steps.len() && self.runs[run].pending.is_empty() {
            self.emit(mu, node, start, tau); // a complete match: no run to build
            return;
        }
        let mut next = Run::new(
            step + 1,
            mu,
            node,
            Some(start),
            Some(tau),
            Some(first_pos),
            Vec::new(),
            None,
            false,
        );
        next.head = head;
        next.collected = collected;
        self.enter(step + 1, next, dict);
    }

    /// A run arrives at state `index`: optional and negated atoms fork or add absences, and so
    /// does a Kleene atom that may take no event (`X*`, `X{0,n}`: zero iterations are an
    /// untaken optional atom, docs/decisions.md 61).
    fn enter(&mut self, index: usize, mut run: Run, dict: &Dictionary) {
        if index == self.steps.len() {
            if !run.pending.is_empty() {
                let id = self.new_id();
                run.last = true;
                run.id = id;
                let deadline = self.deadline(&run).unwrap_or(INF);
                let run = self.runs.insert(run);
                self.watch(run);
                self.closing.push(Due(deadline, id, run));
                return;
            }
            let end = run.end.unwrap_or(NEG_INF);
            self.emit(run.mu, run.node, run.start.unwrap_or(NEG_INF), end);
            return;
        }
        run.step = index;
        if let Some(timer) = self.steps[index].timer {
            self.start_timer(timer, run, dict);
            return;
        }
        // what the step says, not the step: cloning it copied its streams, partition and
        // range tables for every run entering it
        let (op, modifier, wait) = {
            let info = &self.steps[index];
            (info.op.clone(), info.modifier, info.wait)
        };
        // the absence of the atom: of its GPM, or of each GPM of a disjunction (a group that
        // may take no iteration holds no conjunction: the front end refuses one)
        let absence = |r: &Run| -> Vec<Pending> {
            let mut gpms = Vec::new();
            op.gpms(&mut gpms);
            gpms.into_iter()
                .map(|g| Pending {
                    gpm: g,
                    mu: r.mu.clone(),
                    after: r.end.unwrap_or(NEG_INF),
                    node: r.node.clone(),
                    start: r.start,
                })
                .collect()
        };
        match modifier {
            Modifier::Negation => {
                let p = absence(&run);
                run.pending.extend(p);
                self.enter(index + 1, run, dict);
            }
            Modifier::Optional | Modifier::Kleene { min: 0, .. } => {
                let skip = {
                    let r = &run;
                    let mut pending = r.pending.clone();
                    pending.extend(absence(r));
                    let mut skip = Run::new(
                        index,
                        r.mu.clone(),
                        r.node.clone(),
                        r.start,
                        r.end,
                        r.first_pos,
                        pending,
                        None,
                        false,
                    );
                    skip.head = r.head.clone();
                    skip.collected = r.collected.clone();
                    skip
                };
                self.enter_wait(run, wait, dict);
                self.enter(index + 1, skip, dict);
            }
            _ => self.enter_wait(run, wait, dict),
        }
    }

    /// A new run waits at its step: given its id, put in the arena and where events find it,
    /// and queued to expire.
    fn enter_wait(&mut self, mut run: Run, wait: Transitions, dict: &Dictionary) {
        let id = self.new_id();
        run.id = id;
        run.select = wait;
        self.runs_created += 1;
        let deadline = match (
            self.switches.push_windows,
            self.span.sliding_time(),
            run.start,
        ) {
            (false, _, _) => None,
            (true, Some(omega), Some(start)) => Some(start + omega),
            (true, _, _) => self.deadline(&run),
        };
        let run = self.runs.insert(run);
        self.wait(run, dict);
        if wait.strict && !self.switches.intervals {
            self.strict_new.push(run);
        }
        if let Some(deadline) = deadline {
            self.expiry.push(Due(deadline, id, run));
        }
    }

    fn complete(&mut self, run: RunKey) {
        let (mu, node, start, end) = {
            let r = &self.runs[run];
            (r.mu.clone(), r.node.clone(), r.start, r.end)
        };
        self.emit(mu, node, start.unwrap_or(NEG_INF), end.unwrap_or(NEG_INF));
    }

    fn emit(&mut self, mu: Rc<Row>, node: Option<Rc<Node>>, start: i128, time: i128) {
        self.batch.push(MatchRecord {
            mu,
            node,
            start,
            time,
            number: 0,
        });
    }

    /// Release the matches completed at one moment in the match order.
    fn release(&mut self, by_completion: bool, dict: &Dictionary) {
        let mut batch = std::mem::take(&mut self.batch);
        if !self.head.is_empty() {
            batch.retain(|m| !self.head_violated(m, dict));
        }
        if self.policy.selection == Selection::Latest {
            batch.retain(|m| self.is_latest(m));
        }
        let gpms = &self.gpms;
        let locals = |g: usize| gpms.local_slots(g).to_vec();
        let keys = &mut self.work.order_keys;
        let sorted = sort_batch(batch, by_completion, &self.vars, &locals, dict, keys);
        let sorted = self.policy.release(sorted, dict);
        self.out.extend(sorted);
    }
}

impl<G: GpmEval> QueryRuntime<G> {
    // ------------------------------------------------------------------ head negation

    /// The token of the runs starting at `start` (a match may start there): shared by the
    /// runs started at one time, registered so that their head events are kept.
    fn head_token(&mut self, start: i128) -> Rc<()> {
        if let Some((at, weak)) = self.head_starts.back() {
            if *at == start {
                if let Some(token) = weak.upgrade() {
                    return token;
                }
            }
        }
        let token = Rc::new(());
        self.head_starts.push_back((start, Rc::downgrade(&token)));
        token
    }

    /// Keep an event of a head-negated GPM's stream, after dropping the events no match
    /// can be checked against any more: those a window before the oldest run still alive
    /// (or before this event, when none is; under intervals, before the earliest start of
    /// a match still to come, as an event that lasts may begin long before it ends).
    fn keep_head_event(&mut self, event: &EventRef, index: &Rc<G::Index>) {
        while self
            .head_starts
            .front()
            .is_some_and(|(_, w)| w.strong_count() == 0)
        {
            self.head_starts.pop_front();
        }
        let oldest = if self.switches.intervals {
            // events that last start matches out of order: the earliest start still live,
            // or of a match holding an event still to come (any, without a time window);
            // AFTER timers alone look at events after their anchor's end, which no event
            // still to come has before the clock
            let coming = if self.reach == 0 && self.head.is_empty() {
                event.start
            } else {
                self.span
                    .earliest_start(self.t0.unwrap_or(0), event.time)
                    .unwrap_or(i128::MIN)
            };
            self.head_starts
                .iter()
                .filter(|(_, w)| w.strong_count() > 0)
                .map(|(s, _)| *s)
                .fold(coming, i128::min)
        } else {
            self.head_starts.front().map_or(event.start, |(s, _)| *s)
        };
        let heads = !self.head.is_empty();
        while let Some((e, _)) = self.head_events.front() {
            // a head negation looks a window back from a match's end, a timer `reach`
            // before its start (an AFTER timer from its anchor's end, after the start)
            let for_head = heads && (e.time >= oldest || self.fits(e.start, 0, oldest, 0));
            if for_head || (self.timed && e.time >= oldest.saturating_sub(self.reach)) {
                break;
            }
            self.head_events.pop_front();
        }
        if self.kept_streams.contains(&event.stream) {
            self.push_head_event(event.clone(), index.clone());
        }
    }

    /// Keep `event` after the others, noting whether they stay in time order.
    fn push_head_event(&mut self, event: EventRef, index: Rc<G::Index>) {
        match self.head_events.back() {
            None => self.head_sorted = true,
            Some((last, _)) if last.time > event.time => self.head_sorted = false,
            Some(_) => {}
        }
        self.head_events.push_back((event, index));
    }

    /// The kept events that may lie in `[lo, hi]`: those ending in it when they are in
    /// time order (an event lying in it ends in it), else all of them.
    fn head_range(&self, lo: i128, hi: i128) -> vec_deque::Iter<'_, (EventRef, Rc<G::Index>)> {
        if !self.head_sorted {
            return self.head_events.iter();
        }
        let from = self.head_events.partition_point(|(e, _)| e.time < lo);
        let to = self.head_events.partition_point(|(e, _)| e.time <= hi);
        self.head_events.range(from..to.max(from))
    }

    /// Whether a head negation removes match `m`: an event of a negated GPM before `m`'s
    /// first event, inside its window, with a result in `m`'s context.
    fn head_violated(&self, m: &MatchRecord, dict: &Dictionary) -> bool {
        let mut rows = Vec::new();
        let probes: Vec<_> = self
            .head
            .iter()
            .map(|&g| self.gpms.probe(g, &m.mu))
            .collect();
        for (e, index) in &self.head_events {
            if e.time >= m.start {
                break;
            }
            // it lies whole in [time - window, start)
            if !self.fits(e.start, 0, m.time, 0) {
                continue;
            }
            for (&g, probe) in self.head.iter().zip(&probes) {
                if self.gpm_streams[g] != e.stream || !self.gpms.admits(probe, index) {
                    continue;
                }
                rows.clear();
                self.gpms
                    .results(g, index, &m.mu, RunView::default(), dict, &mut rows);
                if !rows.is_empty() {
                    return true;
                }
            }
        }
        false
    }
}

impl<G: GpmEval> QueryRuntime<G> {
    // ------------------------------------------------------------------ relative timers

    /// A run arrives at a timer's step (docs/decisions.md 71): judged once the clock has
    /// passed the timer's end (every event lying in it has come), now if it has.
    fn start_timer(&mut self, timer: TimerStep, mut run: Run, dict: &Dictionary) {
        let Some(hi) = self.timer_interval(timer, &run).map(|(_, hi)| hi) else {
            return; // the anchor always precedes the timer (language.checks)
        };
        if hi < self.time {
            self.judge_timer(timer, run, dict);
            return;
        }
        let id = self.new_id();
        run.id = id;
        let run = self.runs.insert(run);
        self.timers.push(Due(hi, id, run));
    }

    /// The interval of `timer` for run `r`: from its anchor's event.
    fn timer_interval(&self, timer: TimerStep, r: &Run) -> Option<(i128, i128)> {
        let mut at = r.node.as_deref();
        while let Some(n) = at {
            if n.taken.gpm == timer.anchor {
                return Some(timer.interval(n.taken.event.start, n.taken.event.time));
            }
            at = n.parent.as_deref();
        }
        None
    }

    /// Judge the runs whose timers end before `tau`, earliest first.
    fn fire_timers(&mut self, tau: i128, dict: &Dictionary) {
        while let Some(Due(hi, _, _)) = self.timers.peek() {
            if *hi >= tau {
                break;
            }
            let due = self.timers.pop().expect("peeked");
            // judged, the run is gone whether it goes on (a new run) or not; a dead one is
            // not judged
            if due.run(&self.runs).is_none() {
                continue;
            }
            let Some(run) = self.runs.remove(due.2) else {
                continue;
            };
            if let Some(timer) = self.steps[run.step].timer {
                self.judge_timer(timer, run, dict);
            }
        }
    }

    /// A timer whose end the clock passed: NOT holds when no event of its stream lying in
    /// it has a result in the run's mapping, COLLECT when one does (gathering them all).
    /// The run goes on with its hull grown by the timer, if that fits its window.
    fn judge_timer(&mut self, timer: TimerStep, run: Run, dict: &Dictionary) {
        let r = &run;
        let Some((lo, hi)) = self.timer_interval(timer, r) else {
            return;
        };
        let stream = self.gpm_streams[timer.gpm];
        let view = RunView {
            start: r.start,
            node: r.node.as_ref(),
        };
        let mut found = Vec::new();
        let mut rows = Vec::new();
        let probe = self.gpms.probe(timer.gpm, &r.mu);
        for (e, index) in self.head_range(lo, hi) {
            if e.stream != stream || e.start < lo || e.time > hi || !self.gpms.admits(&probe, index)
            {
                continue;
            }
            rows.clear();
            self.gpms
                .results(timer.gpm, index, &r.mu, view, dict, &mut rows);
            found.append(&mut rows);
            if !timer.collect && !found.is_empty() {
                break;
            }
        }
        if timer.collect == found.is_empty() {
            return;
        }
        let start = r.start.map_or(lo, |s| s.min(lo));
        let end = r.end.map_or(hi, |e| e.max(hi));
        let first_pos = r.first_pos.unwrap_or(self.position);
        if !self.fits(start, first_pos, end, first_pos) {
            return;
        }
        let mut collected = r.collected.clone();
        let mut mu = r.mu.clone();
        if timer.collect {
            let mut all = collected.as_deref().cloned().unwrap_or_default();
            all.extend(found);
            if let Some(x) = self.expressions.as_ref().filter(|x| x.at == r.step) {
                mu = Rc::new(x.bind(&mu, &all, dict));
            }
            collected = Some(Rc::new(all));
        }
        let step = r.step;
        let mut next = Run::new(
            step + 1,
            mu,
            r.node.clone(),
            Some(start),
            Some(end),
            Some(first_pos),
            r.pending.clone(),
            None,
            false,
        );
        next.head = r.head.clone();
        next.collected = collected;
        self.enter(step + 1, next, dict);
    }
}

impl Expressions {
    /// `mu` with the expressions' values over `rows` bound (an expression that errs leaves
    /// its variable unbound, as SPARQL does).
    fn bind(&self, mu: &Row, rows: &[Row], dict: &Dictionary) -> Row {
        let mut out = mu.clone();
        let cell = |r: usize, c: usize| {
            rows[r][self.columns[c]].and_then(|id| aggregate::cell_value(id, dict))
        };
        if let Some(values) = self.select.fold(rows.len(), cell) {
            for (&slot, value) in self.outputs.iter().zip(values) {
                out[slot] = value.map(|v| dict.intern(v.to_term(dict)));
            }
            return out;
        }
        let table: Vec<Vec<Option<oxrdf::Term>>> = rows
            .iter()
            .map(|row| {
                self.columns
                    .iter()
                    .map(|&c| row[c].map(|id| dict.get(id).clone()))
                    .collect()
            })
            .collect();
        if let Ok(values) = self.select.evaluate(&table) {
            for (&slot, value) in self.outputs.iter().zip(values) {
                out[slot] = value.map(|t| dict.intern(t));
            }
        }
        out
    }
}

fn remove<K: std::hash::Hash + Eq>(
    table: &mut HashMap<K, BTreeMap<u64, RunKey>>,
    key: &K,
    id: u64,
) {
    if let Some(bucket) = table.get_mut(key) {
        bucket.remove(&id);
        if bucket.is_empty() {
            table.remove(key);
        }
    }
}

/// When a result's events began: the earliest start among them.
fn begin(taken: &Takens) -> i128 {
    taken.iter().map(|t| t.event.start).min().unwrap_or(NEG_INF)
}

/// The union of two compatible mappings, or None when they disagree on a variable.
pub fn merge(a: &[Option<TermId>], b: &[Option<TermId>]) -> Option<Row> {
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b.iter()) {
        out.push(match (x, y) {
            (Some(x), Some(y)) if x != y => return None,
            (Some(x), _) => Some(*x),
            (None, y) => *y,
        });
    }
    Some(out)
}
