//! One query's runtime state as plain data (`QueryState`), for `Engine.snapshot`: every
//! run (dead ones too: heaps drop them lazily, and deferred work still counts them), the
//! shared buffer's nodes, the indexes runs are registered in, the heaps, the clocks and the
//! deferred and buffered events, so that a restored runtime continues exactly.
//!
//! Runs and nodes are written once each and referred to by their place in the state's
//! tables (runs are told apart by identity, not by `id`: a run keeps its object when it
//! moves on to a later step); events by their `uid`, the engine writing each event once.
//! Shared mappings (`Rc<Row>`) are written by value: sharing them saves memory, nothing
//! else.

use super::dues::Dues;
use super::{
    ConjBuffer, Due, EventRef, Home, Node, PartitionKey, Pending, Pool, QueryRuntime, Result1, Run,
    RunKey, Strategy, Taken, Takens, Transitions,
};
use crate::gpms::GpmEval;
use crate::range_index::{Key, Partitions};
use crate::snapshot::SnapshotError;
use serde::{Deserialize, Serialize};
use slotmap::SlotMap;
use spaseq_gpm::vars::Row;
use spaseq_io::dictionary::TermId;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A taken event: its GPM, the event's uid, the GPM's local bindings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TakenState {
    gpm: usize,
    event: u64,
    bindings: Vec<Option<TermId>>,
}

/// A node of the shared buffer; `parent` is an earlier node of the table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeState {
    parent: Option<usize>,
    taken: TakenState,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PendingState {
    gpm: usize,
    mu: Row,
    after: i128,
    node: Option<usize>,
    start: Option<i128>,
}

/// Where a run is registered; partitions by (step, looping, key values).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum HomeState {
    Stream(Option<u32>),
    Partition(usize, bool, Vec<TermId>),
    Watch(Option<u32>),
}

/// A conjunction's operand results buffered by a run: (conjunction, timestamp, per
/// operand its results as (mapping, taken events)).
type ConjState = (usize, i128, Vec<Vec<(Row, Vec<TakenState>)>>);

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RunState {
    id: u64,
    step: usize,
    mu: Row,
    ctx: Option<Row>,
    node: Option<usize>,
    start: Option<i128>,
    end: Option<i128>,
    first_pos: Option<i64>,
    pending: Vec<PendingState>,
    limit: i128,
    commit: Option<i128>,
    looping: bool,
    iterations: u32,
    dead: bool,
    homes: Vec<HomeState>,
    conj: Vec<ConjState>,
    /// 0 none, 1 `,`, 2 `;`, 3 `:`.
    strategy: u8,
    last: bool,
    /// Under head negation: the run holds its start's token (decision 62).
    head: bool,
    /// The results COLLECT timers gathered so far (decision 71).
    collected: Option<Vec<Row>>,
}

/// A heap entry: deadline, the id it was pushed with, the run (its place in the table).
type DueState = (i128, u64, usize);

/// A partition of waiting runs: its key, and per run (place, range key as f64).
type PartitionState = ((usize, bool, Vec<TermId>), Vec<(usize, Option<f64>)>);

/// Everything one query's runtime holds between two events.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QueryState {
    t0: Option<i128>,
    clock: i128,
    prev_clock: i128,
    flushed: i128,
    time: i128,
    position: i64,
    next_id: u64,
    runs_created: u64,
    nodes: Vec<NodeState>,
    runs: Vec<RunState>,
    start_run: usize,
    by_stream: Vec<(Option<u32>, Vec<usize>)>,
    partitioned: Vec<PartitionState>,
    watchers: Vec<(Option<u32>, Vec<usize>)>,
    strict_new: Vec<usize>,
    death: Vec<(i128, Vec<usize>)>,
    expiry: Vec<DueState>,
    closing: Vec<DueState>,
    /// Deferred conjunction offers: (run, event uid, position).
    lazy: Vec<(usize, u64, i64)>,
    lazy_ids: Vec<u64>,
    doomed: Vec<usize>,
    positions: Vec<(u64, i64)>,
    /// The lazy chain's buffered events: (uid, position).
    prefix: Option<Vec<(u64, i64)>>,
    /// Head negation: its streams' kept events, oldest first (uids).
    head_events: Vec<u64>,
    /// CONSUMPTION MATCHED: the used-up triples of the events the state refers to, by uid.
    consumed: Vec<(u64, Vec<[TermId; 3]>)>,
    /// SELECTION LATEST: per GPM, the latest time it had a solution in the empty context.
    latest: Vec<Option<i128>>,
    /// Events that last: the streamset's recent (end, start) pairs (`,` gaps).
    recent: Vec<(i128, i128)>,
    /// Runs waiting for the clock to pass their timer's end.
    timers: Vec<DueState>,
}

impl QueryState {
    /// Visit every term id the state holds (to renumber them).
    pub fn terms_mut(&mut self, f: &mut dyn FnMut(&mut TermId)) {
        let row = |r: &mut Row, f: &mut dyn FnMut(&mut TermId)| {
            r.iter_mut().flatten().for_each(&mut *f);
        };
        for n in &mut self.nodes {
            row(&mut n.taken.bindings, f);
        }
        for run in &mut self.runs {
            row(&mut run.mu, f);
            if let Some(ctx) = &mut run.ctx {
                row(ctx, f);
            }
            for r in run.collected.iter_mut().flatten() {
                row(r, f);
            }
            for p in &mut run.pending {
                row(&mut p.mu, f);
            }
            for home in &mut run.homes {
                if let HomeState::Partition(_, _, key) = home {
                    key.iter_mut().for_each(&mut *f);
                }
            }
            for (_, _, operands) in &mut run.conj {
                for (r, taken) in operands.iter_mut().flatten() {
                    row(r, f);
                    for t in taken {
                        row(&mut t.bindings, f);
                    }
                }
            }
        }
        for ((_, _, key), _) in &mut self.partitioned {
            key.iter_mut().for_each(&mut *f);
        }
        super::policy::Policy::terms_mut(&mut self.consumed, f);
    }

    /// The uids of the events the state refers to (the engine writes them once).
    pub fn events(&self) -> Vec<u64> {
        let mut uids: Vec<u64> = self.nodes.iter().map(|n| n.taken.event).collect();
        for run in &self.runs {
            for (_, _, operands) in &run.conj {
                for (_, taken) in operands.iter().flatten() {
                    uids.extend(taken.iter().map(|t| t.event));
                }
            }
        }
        uids.extend(self.lazy.iter().map(|&(_, uid, _)| uid));
        uids.extend(self.prefix.iter().flatten().map(|&(uid, _)| uid));
        uids.extend(self.head_events.iter().copied());
        uids.sort_unstable();
        uids.dedup();
        uids
    }
}

fn strategy_code(s: Option<Strategy>) -> u8 {
    match s {
        None => 0,
        Some(Strategy::Strict) => 1,
        Some(Strategy::SkipTillNext) => 2,
        Some(Strategy::SkipTillAny) => 3,
    }
}

fn strategy_of(code: u8) -> Result<Option<Strategy>, SnapshotError> {
    Ok(match code {
        0 => None,
        1 => Some(Strategy::Strict),
        2 => Some(Strategy::SkipTillNext),
        3 => Some(Strategy::SkipTillAny),
        other => return Err(SnapshotError::Strategy(other)),
    })
}

/// Writes runs and nodes once each, numbered by identity (a run by its key in `arena`; a
/// dead one the queues still list as a dead run, nothing else of it kept).
struct Writer<'r> {
    arena: &'r SlotMap<RunKey, Run>,
    nodes: Vec<NodeState>,
    node_at: HashMap<*const Node, usize>,
    runs: Vec<RunState>,
    run_at: HashMap<RunKey, usize>,
    /// The partitions, whose slots the runs' homes name: a home is written as its key.
    partitions: &'r Partitions<PartitionKey, RunKey>,
}

impl Writer<'_> {
    fn taken(t: &Taken) -> TakenState {
        TakenState {
            gpm: t.gpm,
            event: t.event.uid,
            bindings: t.bindings.to_vec(),
        }
    }

    fn node(&mut self, node: &Option<Rc<Node>>) -> Option<usize> {
        let node = node.as_ref()?;
        if let Some(&i) = self.node_at.get(&Rc::as_ptr(node)) {
            return Some(i);
        }
        // parents first, without recursion (Kleene chains can be long)
        let mut chain = vec![node.clone()];
        while let Some(parent) = &chain.last().expect("non-empty").parent {
            if self.node_at.contains_key(&Rc::as_ptr(parent)) {
                break;
            }
            chain.push(parent.clone());
        }
        for n in chain.into_iter().rev() {
            let parent = n.parent.as_ref().map(|p| self.node_at[&Rc::as_ptr(p)]);
            self.nodes.push(NodeState {
                parent,
                taken: Self::taken(&n.taken),
            });
            self.node_at.insert(Rc::as_ptr(&n), self.nodes.len() - 1);
        }
        Some(self.node_at[&Rc::as_ptr(node)])
    }

    fn results(&mut self, results: &[Result1]) -> Vec<(Row, Vec<TakenState>)> {
        results
            .iter()
            .map(|(row, taken)| (row.clone(), taken.iter().map(Self::taken).collect()))
            .collect()
    }

    /// The number of run `run` in the table.
    fn run(&mut self, run: RunKey) -> usize {
        if let Some(&i) = self.run_at.get(&run) {
            return i;
        }
        let Some(r) = self.arena.get(run) else {
            self.runs.push(RunState {
                dead: true,
                ..RunState::default()
            });
            self.run_at.insert(run, self.runs.len() - 1);
            return self.runs.len() - 1;
        };
        let node = self.node(&r.node);
        let pending = r
            .pending
            .iter()
            .map(|p| PendingState {
                gpm: p.gpm,
                mu: (*p.mu).clone(),
                after: p.after,
                node: self.node(&p.node),
                start: p.start,
            })
            .collect();
        let mut conj: Vec<ConjState> = r
            .conj
            .iter()
            .map(|(&id, buffer)| {
                let operands = buffer
                    .pools
                    .iter()
                    .map(|p| self.results(&p.results))
                    .collect();
                (id, buffer.tau, operands)
            })
            .collect();
        conj.sort_by_key(|c| c.0);
        let homes = r
            .homes
            .iter()
            .map(|h| match h {
                Home::Stream(s) => HomeState::Stream(*s),
                Home::Watch(s) => HomeState::Watch(*s),
                Home::Partition(slot) => {
                    let (step, looping, key) = self
                        .partitions
                        .key(*slot)
                        .expect("a waiting run's partition is there");
                    HomeState::Partition(*step, *looping, key.to_vec())
                }
            })
            .collect();
        self.runs.push(RunState {
            id: r.id,
            step: r.step,
            mu: (*r.mu).clone(),
            ctx: r.ctx.as_ref().map(|c| (**c).clone()),
            node,
            start: r.start,
            end: r.end,
            first_pos: r.first_pos,
            pending,
            limit: r.limit,
            commit: r.commit,
            looping: r.looping,
            iterations: r.iterations,
            dead: false,
            homes,
            conj,
            strategy: strategy_code(r.select.strategy),
            head: r.head.is_some(),
            last: r.last,
            collected: r.collected.as_ref().map(|c| (**c).clone()),
        });
        let i = self.runs.len() - 1;
        self.run_at.insert(run, i);
        i
    }

    fn runs<'a>(&mut self, runs: impl Iterator<Item = &'a RunKey>) -> Vec<usize> {
        runs.map(|&r| self.run(r)).collect()
    }

    fn dues(&mut self, queue: &Dues) -> Vec<DueState> {
        let mut dues: Vec<&Due> = queue.iter().collect();
        dues.sort();
        dues.into_iter()
            .map(|Due(deadline, id, run)| (*deadline, *id, self.run(*run)))
            .collect()
    }
}

/// Rebuilds runs and nodes from their tables.
struct Reader<'a> {
    events: &'a HashMap<u64, EventRef>,
    nodes: Vec<Rc<Node>>,
    runs: Vec<RunKey>,
}

impl Reader<'_> {
    fn event(&self, uid: u64) -> Result<EventRef, SnapshotError> {
        self.events
            .get(&uid)
            .cloned()
            .ok_or(SnapshotError::MissingEvent(uid))
    }

    fn taken(&self, t: &TakenState) -> Result<Taken, SnapshotError> {
        Ok(Taken {
            gpm: t.gpm,
            event: self.event(t.event)?,
            bindings: t.bindings.clone().into(),
        })
    }

    fn node(&self, i: Option<usize>) -> Result<Option<Rc<Node>>, SnapshotError> {
        i.map(|i| self.nodes.get(i).cloned().ok_or(SnapshotError::NoNode(i)))
            .transpose()
    }

    fn run(&self, i: usize) -> Result<RunKey, SnapshotError> {
        self.runs.get(i).cloned().ok_or(SnapshotError::NoRun(i))
    }

    fn run_list(&self, list: &[usize]) -> Result<Vec<RunKey>, SnapshotError> {
        list.iter().map(|&i| self.run(i)).collect()
    }
}

impl<G: GpmEval> QueryRuntime<G> {
    /// The runtime's state between two events (its released matches must have been taken).
    pub fn save(&self) -> Result<QueryState, SnapshotError> {
        if !self.out.is_empty() || !self.batch.is_empty() || self.moment_pending() {
            return Err(SnapshotError::MatchesNotTaken);
        }
        let mut w = Writer {
            arena: &self.runs,
            nodes: Vec::new(),
            node_at: HashMap::new(),
            runs: Vec::new(),
            run_at: HashMap::new(),
            partitions: &self.partitioned,
        };
        let start_run = w.run(self.start_run);
        // by stream as before steps were told apart (a restored run is put back by its step)
        let mut keys: Vec<(Option<u32>, usize)> = self.by_stream.keys().copied().collect();
        keys.sort();
        let by_stream: Vec<(Option<u32>, Vec<usize>)> = keys
            .iter()
            .map(|k| (k.0, w.runs(self.by_stream[k].values())))
            .collect();
        let mut watchers: Vec<(Option<u32>, Vec<usize>)> = self
            .watchers
            .iter()
            .map(|(s, runs)| (*s, w.runs(runs.values())))
            .collect();
        watchers.sort_by_key(|(s, _)| *s);
        let mut partitioned: Vec<PartitionState> = self
            .partitioned
            .iter()
            .map(|(key, p)| {
                let runs = p
                    .entries()
                    .map(|(_, &run, k)| (w.run(run), k.map(Key::value)))
                    .collect();
                ((key.0, key.1, key.2.to_vec()), runs)
            })
            .collect();
        partitioned.sort_by(|a, b| a.0.cmp(&b.0));
        let strict_new = w.runs(self.strict_new.iter());
        let death = self
            .death
            .iter()
            .map(|(t, runs)| (*t, w.runs(runs.iter())))
            .collect();
        let expiry = w.dues(&self.expiry);
        let closing = w.dues(&self.closing);
        let timers = w.dues(&self.timers);
        let lazy = self
            .lazy
            .iter()
            .map(|(run, (event, _, pos))| (w.run(*run), event.uid, *pos))
            .collect();
        let mut lazy_ids: Vec<u64> = self.lazy_ids.iter().copied().collect();
        lazy_ids.sort_unstable();
        let doomed = w.runs(self.doomed.iter());
        let mut positions: Vec<(u64, i64)> = self.positions.iter().map(|(&u, &p)| (u, p)).collect();
        positions.sort_unstable();
        let prefix = self.prefix.as_ref().map(|p| {
            p.entries
                .iter()
                .map(|(event, _, pos)| (event.uid, *pos))
                .collect()
        });
        let mut state = QueryState {
            t0: self.t0,
            clock: self.clock,
            prev_clock: self.prev_clock,
            flushed: self.flushed,
            time: self.time,
            position: self.position,
            next_id: self.next_id,
            runs_created: self.runs_created,
            nodes: w.nodes,
            runs: w.runs,
            start_run,
            by_stream,
            partitioned,
            watchers,
            strict_new,
            death,
            expiry,
            closing,
            lazy,
            lazy_ids,
            doomed,
            positions,
            prefix,
            head_events: self.head_events.iter().map(|(e, _)| e.uid).collect(),
            consumed: Vec::new(),
            latest: self.policy.latest.clone(),
            recent: self.recent.iter().copied().collect(),
            timers,
        };
        state.consumed = self.policy.consumed_state(&state.events());
        Ok(state)
    }

    /// Continue from `state` (saved by a runtime of the same plan): this runtime must be
    /// fresh. `events` are the engine's restored events by uid, `index` prepares one for
    /// GPM evaluation.
    pub fn load(
        &mut self,
        state: QueryState,
        events: &HashMap<u64, EventRef>,
        index: &dyn Fn(&EventRef) -> Rc<G::Index>,
    ) -> Result<(), SnapshotError> {
        if self.position != -1 || self.t0.is_some() || self.time != super::NEG_INF {
            return Err(SnapshotError::NotFresh("runtime"));
        }
        let mut r = Reader {
            events,
            nodes: Vec::with_capacity(state.nodes.len()),
            runs: Vec::with_capacity(state.runs.len()),
        };
        for n in &state.nodes {
            let parent = match n.parent {
                Some(p) if p < r.nodes.len() => Some(r.nodes[p].clone()),
                Some(p) => return Err(SnapshotError::NodeOrder(p)),
                None => None,
            };
            let taken = r.taken(&n.taken)?;
            r.nodes.push(Node::push(parent, taken));
        }
        let steps = self.steps.len();
        let mut arena: SlotMap<RunKey, Run> = SlotMap::with_key();
        // made before the runs, whose homes name their partitions' slots
        let mut partitioned = Partitions::default();
        let mut tokens: BTreeMap<i128, Rc<()>> = BTreeMap::new();
        for s in &state.runs {
            if s.step > steps {
                return Err(SnapshotError::Step {
                    step: s.step,
                    steps,
                });
            }
            let pending = s
                .pending
                .iter()
                .map(|p| {
                    Ok(Pending {
                        gpm: p.gpm,
                        mu: Rc::new(p.mu.clone()),
                        after: p.after,
                        node: r.node(p.node)?,
                        start: p.start,
                    })
                })
                .collect::<Result<Vec<_>, SnapshotError>>()?;
            let mut conj = super::HashMap::default();
            for (id, tau, operands) in &s.conj {
                let operands = operands
                    .iter()
                    .map(|results| {
                        results
                            .iter()
                            .map(|(row, taken)| {
                                let taken = taken.iter().map(|t| r.taken(t)).collect::<Result<
                                    Takens,
                                    SnapshotError,
                                >>(
                                )?;
                                Ok((row.clone(), taken))
                            })
                            .collect::<Result<Vec<Result1>, SnapshotError>>()
                    })
                    .collect::<Result<Vec<_>, SnapshotError>>()?;
                let pools = operands.into_iter().map(Pool::of).collect();
                conj.insert(*id, ConjBuffer { tau: *tau, pools });
            }
            let homes = s
                .homes
                .iter()
                .map(|h| match h {
                    HomeState::Stream(x) => Home::Stream(*x),
                    HomeState::Watch(x) => Home::Watch(*x),
                    HomeState::Partition(step, looping, key) => Home::Partition(
                        partitioned.slot_for(&(*step, *looping, key.as_slice().into())),
                    ),
                })
                .collect();
            let mut run = Run::new(
                s.step,
                Rc::new(s.mu.clone()),
                r.node(s.node)?,
                s.start,
                s.end,
                s.first_pos,
                pending,
                s.ctx.clone().map(Rc::new),
                s.looping,
            );
            run.id = s.id;
            run.limit = s.limit;
            run.commit = s.commit;
            run.iterations = s.iterations;
            run.homes = homes;
            run.conj = conj;
            run.select = Transitions::compile(strategy_of(s.strategy)?);
            run.last = s.last;
            run.collected = s.collected.clone().map(Rc::new);
            if s.head {
                // the runs started at one time share a token again, registered by start
                let start = s.start.unwrap_or(super::NEG_INF);
                let token = tokens.entry(start).or_insert_with(|| Rc::new(())).clone();
                run.head = Some(token);
            }
            let key = arena.insert(run);
            if s.dead {
                arena.remove(key); // listed by a queue: its key finds nothing
            }
            r.runs.push(key);
        }
        let keyed = |list: &[usize]| -> Result<BTreeMap<u64, RunKey>, SnapshotError> {
            r.run_list(list).map(|runs| {
                runs.into_iter()
                    .filter_map(|run| Some((arena.get(run)?.id, run)))
                    .collect()
            })
        };
        let mut by_stream: super::HashMap<_, BTreeMap<u64, RunKey>> = super::HashMap::default();
        for (s, list) in &state.by_stream {
            for (id, run) in keyed(list)? {
                let step = arena[run].step;
                by_stream.entry((*s, step)).or_default().insert(id, run);
            }
        }
        let mut watchers = super::HashMap::default();
        for (s, list) in &state.watchers {
            watchers.insert(*s, keyed(list)?);
        }
        for (key, runs) in &state.partitioned {
            let key = (key.0, key.1, key.2.as_slice().into());
            for &(i, k) in runs {
                let run = r.run(i)?;
                let Some(id) = arena.get(run).map(|r| r.id) else {
                    continue; // a dead run waits nowhere
                };
                partitioned.insert(&key, id, run, k.map(Key::new));
            }
        }
        partitioned.drop_empty();
        let mut death = BTreeMap::new();
        for (t, list) in &state.death {
            death.insert(*t, r.run_list(list)?);
        }
        let dues = |list: &[DueState]| -> Result<Dues, SnapshotError> {
            list.iter()
                .map(|&(deadline, id, i)| Ok(Due(deadline, id, r.run(i)?)))
                .collect()
        };
        let expiry = dues(&state.expiry)?;
        let closing = dues(&state.closing)?;
        let timers = dues(&state.timers)?;
        let lazy = state
            .lazy
            .iter()
            .map(|&(i, uid, pos)| {
                let event = r.event(uid)?;
                let prepared = index(&event);
                Ok((r.run(i)?, (event, prepared, pos)))
            })
            .collect::<Result<Vec<_>, SnapshotError>>()?;
        match (&mut self.prefix, &state.prefix) {
            (Some(prefix), Some(entries)) => {
                for &(uid, pos) in entries {
                    let event = r.event(uid)?;
                    let prepared = index(&event);
                    prefix.entries.push_back((event, prepared, pos));
                }
            }
            (None, None) => {}
            _ => return Err(SnapshotError::LazyChain),
        }
        for &uid in &state.head_events {
            let event = r.event(uid)?;
            let prepared = index(&event);
            self.push_head_event(event, prepared);
        }
        if state.latest.len() != self.policy.latest.len() {
            return Err(SnapshotError::Corrupt(
                "the latest times of another number of GPMs".into(),
            ));
        }
        self.policy.latest = state.latest.clone();
        self.policy
            .load_consumed(&state.consumed, |uid| events.get(&uid).cloned());
        self.head_starts = tokens
            .iter()
            .map(|(start, token)| (*start, Rc::downgrade(token)))
            .collect();
        self.start_run = r.run(state.start_run)?;
        self.strict_new = r.run_list(&state.strict_new)?;
        self.doomed = r.run_list(&state.doomed)?;
        self.by_stream = by_stream;
        self.watchers = watchers;
        self.runs = arena;
        self.partitioned = partitioned;
        self.death = death;
        self.expiry = expiry;
        self.closing = closing;
        self.timers = timers;
        self.recent = state.recent.iter().copied().collect();
        self.lazy = lazy;
        self.lazy_ids = state.lazy_ids.into_iter().collect();
        self.positions = state.positions.into_iter().collect();
        self.t0 = state.t0;
        self.clock = state.clock;
        self.prev_clock = state.prev_clock;
        self.flushed = state.flushed;
        self.time = state.time;
        self.position = state.position;
        self.next_id = state.next_id;
        self.runs_created = state.runs_created;
        Ok(())
    }
}
