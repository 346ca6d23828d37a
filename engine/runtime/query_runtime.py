"""The NFA_scep runtime: runs (partial matches) advancing, cloning and dying as events
arrive, one query at a time (the engine in ``api`` feeds every registered query).

A run waits at a step of the automaton (``nfa.Step``). Cloned runs share the events they
took through a shared buffer of parent-linked nodes (FlinkCEP's model), so cloning is O(1)
and a match's events are materialised only when it is emitted.

Time, per SEMANTICS.md:
- ``,`` a run ended at t may only take events at next(t), the first later timestamp of the
  query's streamset; when the clock moves past it, the run dies;
- ``;`` a run takes every result at the first timestamp where it has one, then dies when
  the clock moves past that timestamp ("commits");
- ``:`` a run waits until its window ends.
Absences (negated and untaken optional atoms) are "pending" on a run: an event matching
them at t limits the run to extensions at t or earlier. Runs wait in indexes by stream and,
where the next GPM joins on variables the run has bound, by the values of those variables.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.plan import Plan
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.gpm_eval.matcher import EventContext, GpmMatcher, Solution
from spaseq.engine.gpm_eval.sparql_store import compatible
from spaseq.engine.matches import Match, Taken, spelling
from spaseq.engine.runtime.lazy_chain import PrefixBuffer, may_match
from spaseq.engine.runtime.range_index import RangeBucket, order_key
from spaseq.engine.values.timestamps import INFINITY

INF = INFINITY  # times are Decimal seconds (values.timestamps): "never", compared exactly


class Node:
    """A shared-buffer entry: one event taken, linked to the run's earlier entries."""

    __slots__ = ("parent", "taken")

    def __init__(self, parent: Node | None, taken: Taken) -> None:
        self.parent = parent
        self.taken = taken

    def chain(self) -> tuple[Taken, ...]:
        out = []
        node: Node | None = self
        while node is not None:
            out.append(node.taken)
            node = node.parent
        return tuple(reversed(out))


@dataclass(frozen=True)
class Pending:
    """An absence to watch for: no result of ``gpm`` in context ``mu`` after ``after``."""

    gpm: str
    mu: dict
    after: Decimal
    node: Node | None = None    # the run's events and start, for run functions in the
    start: Decimal | None = None  # absent GPM's body (extension_functions)


class Run:
    """A partial match waiting at ``step`` (a Kleene loop run waits for another iteration)."""

    __slots__ = (
        "id", "step", "mu", "ctx", "node", "start", "end", "first_pos", "last_pos", "pending",
        "limit", "commit", "loop", "dead", "homes", "conj", "strategy", "final",
    )

    def __init__(self, step: int, mu: dict, node: Node | None, start: Decimal | None,
                 end: Decimal | None, first_pos: int | None, last_pos: int | None,
                 pending: tuple[Pending, ...] = (), ctx: dict | None = None,
                 loop: bool = False) -> None:
        self.id = 0
        self.step = step
        self.mu = mu
        self.ctx = ctx
        self.node = node
        self.start = start
        self.end = end
        self.first_pos = first_pos
        self.last_pos = last_pos
        self.pending = pending
        self.limit = INF
        self.commit: Decimal | None = None
        self.loop = loop
        self.dead = False
        self.homes: list[tuple[dict, object]] = []
        self.conj: dict = {}
        self.strategy: str | None = None
        self.final = False


class QueryRuntime:
    """Evaluates one compiled query incrementally; matches go to ``emit``."""

    def __init__(self, plan: Plan, matchers: dict[str, GpmMatcher],
                 emit: Callable[[Match], None]) -> None:
        """The runtime of ``plan`` (``compile.planner``); ``matchers``: one per ``plan.gpms``."""
        query = plan.query
        self.plan = plan
        self.query = query
        self.auto = plan.automaton
        self.steps = plan.automaton.steps
        self.matchers = matchers
        self.emit = emit
        self.opt = plan.options
        self.streams = frozenset(query.streams.values())
        w = query.window
        self.kind, self.omega, self.tumbling = w.kind, w.amount, w.tumbling
        self.count = int(w.amount) if w.kind == "events" else 0
        self._sliding_time = w.kind == "time" and not w.tumbling  # _fits inlined on the hot path
        self.t0: Decimal | None = None
        self.clock = -INF           # largest timestamp of the query's streamset
        self.prev_clock = -INF      # the timestamp before it
        self.time = -INF            # the engine's clock (events of any stream, heartbeats)
        self.position = -1
        self._ids = itertools.count(1)
        # waiting runs: by stream (or one bucket), or by (step, loop, key values)
        self.by_stream: dict[str | None, dict[int, Run]] = {}
        self.partitioned: dict[tuple, dict[int, Run]] = {}
        self.watchers: dict[str | None, dict[int, Run]] = {}
        self.strict_new: list[Run] = []
        self.death: dict[Decimal, list[Run]] = {}
        self.expiry: list[tuple[Decimal, int, Run]] = []
        self.closing: list[tuple[Decimal, int, Run]] = []
        self.lazy: list[tuple[Run, EventContext]] = []
        self._lazy_ids: set[int] = set()   # runs with deferred (lazy) work
        self._doomed: list[Run] = []        # expired runs kept until that work is done
        self.ranges = [ix.range for ix in plan.run_indexes]
        self.keys = [ix.partition_keys for ix in plan.run_indexes]
        self._kleene = [s.is_kleene for s in self.steps]
        # GPMs the plan evaluates by their generated solver directly, and per step when the
        # step is one of them (its join already returns nothing for an event lacking a
        # constant predicate, so no pre-filter is needed)
        self._solvers = {name: (name, m.solve, m.local_order, m.stream) for name, m in matchers.items()
                         if plan.gpms[name].direct_solver}
        self._direct = [self._solvers.get(s.operand.name) if isinstance(s.operand, A.GpmRef) else None
                        for s in self.steps]
        self._probes = {
            stream: [(p.step, p.ranged, p.loops,
                      [(matchers[g], rng.by_gpm.get(g) if (rng := self.ranges[p.step]) is not None else None,
                        plan.run_indexes[p.step].row_slots.get(g), self.keys[p.step]) for g in p.gpms])
                     for p in probes]
            for stream, probes in plan.probes.items()
        }
        self.start_run = Run(0, {}, None, None, None, None, None)
        self.start_run.id = next(self._ids)
        self.start_run.strategy = None
        self.stats = {"runs": 0, "matches": 0}
        self.kleene = plan.kleene_gpms  # whose takes run functions aggregate over
        self._pos: dict[int, int] = {}  # positions of the events at the current timestamp
        # matches completed at this moment, not yet emitted, with their shared-buffer node
        self._batch: list[tuple[Match, Node | None]] = []
        # lazy chain (runtime.lazy_chain): steps 0..t-1 buffered, evaluated when step t's events come
        t = plan.lazy_chain
        self.lazy_trigger = t
        self.prefix = (PrefixBuffer(self.steps, matchers, t, self.omega if w.kind == "time" else None)
                       if t else None)

    # ------------------------------------------------------------------ indexing

    def _wait(self, run: Run) -> None:
        """Register a run as waiting at its step (or in its Kleene loop)."""
        keys = self.keys[run.step]
        if keys is not None:
            context = run.ctx if run.loop else run.mu
            rng = self.ranges[run.step]
            try:
                values = tuple([context[k] for k in keys])
                bound = rng is None or rng.run_var in context
            except KeyError:
                bound = False
            if bound:
                bucket_key = (run.step, run.loop, values)
                if rng is None:
                    self.partitioned.setdefault(bucket_key, {})[run.id] = run
                else:
                    bucket = self.partitioned.get(bucket_key)
                    if bucket is None:
                        bucket = self.partitioned[bucket_key] = RangeBucket()
                    bucket.add(run.id, run, order_key(context[rng.run_var]))
                run.homes.append((self.partitioned, bucket_key))
                if run.pending:
                    self._watch(run)
                return
        streams = self.steps[run.step].streams if self.opt.index_streams else (None,)
        for s in streams:
            bucket = self.by_stream.setdefault(s, {})
            bucket[run.id] = run
            run.homes.append((self.by_stream, s))
        self._watch(run)

    def _watch(self, run: Run) -> None:
        for p in run.pending:
            s = self.matchers[p.gpm].stream if self.opt.index_streams else None
            self.watchers.setdefault(s, {})[run.id] = run
            run.homes.append((self.watchers, s))

    def _kill(self, run: Run) -> None:
        if run.dead:
            return
        run.dead = True
        for table, key in run.homes:
            bucket = table.get(key)
            if bucket is not None:
                bucket.pop(run.id, None)
                if not bucket:
                    del table[key]
        run.homes = []
        run.conj = {}

    # ------------------------------------------------------------------ windows

    def _window_index(self, tau: Decimal, pos: int) -> int:
        if self.kind == "time":
            return int((tau - self.t0) // self.omega)  # exact: times are Decimal, tau >= t0
        return pos // self.count

    def _fits(self, start: Decimal, first_pos: int, tau: Decimal, pos: int) -> bool:
        """Can an event at (tau, pos) belong to a match starting at (start, first_pos)?"""
        if self.kind is None:
            return True
        if self.tumbling:
            return self._window_index(start, first_pos) == self._window_index(tau, pos)
        if self.kind == "time":
            return tau - start <= self.omega
        return pos - first_pos + 1 <= self.count

    def _deadline(self, run: Run) -> Decimal | None:
        """When the run's window is over, on the engine clock (time) or positions (events)."""
        if self.kind is None or run.start is None:
            return None
        if self.kind == "time":
            if self.tumbling:
                return self.t0 + (self._window_index(run.start, 0) + 1) * self.omega
            return run.start + self.omega
        if self.tumbling:
            return (run.first_pos // self.count + 1) * self.count
        return run.first_pos + self.count - 1

    def _expired(self, deadline: Decimal, tau: Decimal, pos: int) -> bool:
        if self.kind == "time":
            return tau >= deadline if self.tumbling else tau > deadline
        return pos >= deadline if self.tumbling else pos > deadline

    # ------------------------------------------------------------------ clock

    def advance_time(self, tau: Decimal, pos: int | None = None) -> None:
        """Move the engine clock (an event of any stream, or a heartbeat) to ``tau``."""
        if tau <= self.time and pos is None:
            return
        if tau > self.time:
            self._flush_lazy(tau)
            self.time = tau
            for key in [k for k in self.death if k < tau]:
                for run in self.death.pop(key):
                    self._kill(run)
        p = self.position if pos is None else pos
        check_pos = self.kind == "events"
        heap = self.expiry
        # _expired(deadline, ...) is ``deadline < tau`` for sliding time windows: inlined there
        sliding = self._sliding_time
        while heap and (heap[0][0] < tau if sliding else self._expired(heap[0][0], tau, p if check_pos else 0)):
            run = heapq.heappop(heap)[2]
            if run.dead:
                continue
            if run.id in self._lazy_ids:
                self._doomed.append(run)
            else:
                self._kill(run)
        heap = self.closing
        while heap and self._expired(heap[0][0], tau, p if check_pos else 0):
            _, _, run = heapq.heappop(heap)
            if not run.dead:
                self._complete(run)
                self._kill(run)
        if self._batch:
            self._release(by_completion=False)

    def flush(self) -> None:
        """Evaluate work deferred to the end of the current timestamp (lazy conjunction),
        for callers that know no more events will come at it."""
        self._flush_lazy(INF)

    def footprint(self) -> dict[str, int]:
        """How much state the query holds: what bounded memory means (SEMANTICS.md section 8:
        runs that can no longer finish are dropped), for tests and monitoring."""
        waiting = {id(r) for table in (self.by_stream, self.partitioned) for b in table.values()
                   for r in b.values()}
        return {
            "waiting_runs": len(waiting),
            "watching_runs": sum(len(b) for b in self.watchers.values()),
            "expiry_entries": len(self.expiry),
            "closing_runs": len(self.closing),
            "death_entries": sum(len(v) for v in self.death.values()),
            "range_keys": sum(len(b.keys) for b in self.partitioned.values() if isinstance(b, RangeBucket)),
            "deferred": len(self.lazy) + len(self._doomed),
            "buffered_events": len(self.prefix.entries) if self.prefix is not None else 0,
        }

    def horizon(self) -> Decimal:
        """The earliest ``time`` a match emitted from now on without a new event can carry
        (trailing negations waiting for their window, lazy conjunctions); INF if none.
        Composition holds a consuming query's input back to it (``composition``)."""
        mark = min((run.end for _, _, run in self.closing if not run.dead), default=INF)
        if self.lazy:
            mark = min(mark, min(ctx.event.time for _, ctx in self.lazy))
        return mark

    def close(self) -> None:
        """End of input: every window closes; trailing-negation matches are emitted."""
        self._flush_lazy(INF)
        for _, _, run in sorted(self.closing, key=lambda e: (e[0], e[1])):
            if not run.dead:
                self._complete(run)
                self._kill(run)
        self.closing = []
        self._release(by_completion=False)
        for run in list(self._all_waiting()):
            self._kill(run)
        if self.prefix is not None:
            self.prefix.entries.clear()
        self.expiry = []
        self.death = {}

    def _all_waiting(self):
        for table in (self.by_stream, self.partitioned, self.watchers):
            for bucket in table.values():
                yield from bucket.values()

    # ------------------------------------------------------------------ events

    def on_event(self, ctx: EventContext) -> None:
        """Process one event of the query's streamset (in time order)."""
        e = ctx.event
        tau = e.time
        if self.t0 is None:
            self.t0 = tau
        if tau > self.clock:
            self._flush_lazy(tau)
            self._pos = {}
            self.prev_clock, self.clock = self.clock, tau
            for run in self.strict_new:
                if not run.dead:
                    self.death.setdefault(tau, []).append(run)
            self.strict_new = []
        self.position += 1
        ctx.position = self.position
        self._pos[id(e)] = self.position
        self.advance_time(tau, self.position)
        self._absences(ctx)
        for run in self._candidates(ctx):
            if not run.dead:
                self._try(run, ctx)
        if self.prefix is None:
            self._try(self.start_run, ctx)
        else:
            self._lazy_chain(ctx)
        if self._batch:
            self._release()

    def _lazy_chain(self, ctx: EventContext) -> None:
        """Offer the event to the lazy prefix's partial matches (built from the buffer as the
        eager runs waiting at the trigger step would be), then buffer it."""
        prefix, t = self.prefix, self.lazy_trigger
        tau = ctx.event.time
        prefix.expire(tau)
        trigger = self.matchers[self.steps[t].operand.name]
        if may_match(trigger, ctx):
            for takens, mu, start, first, end, last in prefix.chains(tau, trigger.base(ctx)):
                node = None
                for taken in takens:
                    node = Node(node, taken)
                run = Run(t, mu, node, start, end, first, last)
                run.strategy = A.SKIP_TILL_ANY
                self._try(run, ctx)
        prefix.add(ctx, ctx.position)

    def _candidates(self, ctx: EventContext) -> list[Run]:
        """Runs the event may extend: by stream, and by join-key values where partitioned."""
        e = ctx.event
        out: list[Run] = []
        key = e.stream if self.opt.index_streams else None
        bucket = self.by_stream.get(key)
        if bucket:
            out.extend(bucket.values())
        if not self.partitioned:
            return out
        partitioned = self.partitioned
        for i, ranged, loops, probes in self._probes.get(e.stream, ()):
            # per partition, what the event's solutions ask of its runs (range_index)
            requests: dict[tuple, list] = {}
            for m, rk, slots, keys in probes:
                if slots is not None:  # the compiled join's rows: no dicts needed
                    key_at, range_at = slots
                    for row in m.compiled.rows(ctx.index):
                        req = requests.setdefault(tuple([row[j] for j in key_at]), [])
                        req.append((None, True) if rk is None else (order_key(row[range_at]), rk.below))
                    continue
                for nu in m.base(ctx):
                    req = requests.setdefault(tuple([nu.get(k) for k in keys]), [])
                    req.append((None, True) if rk is None else (order_key(nu.get(rk.event_var)), rk.below))
            for values, req in requests.items():
                for loop in loops:
                    b = partitioned.get((i, loop, values))
                    if b:
                        out.extend(b.select(req) if ranged else b.values())
        return out

    def _absences(self, ctx: EventContext) -> None:
        """Pending absences matched by this event limit or kill their runs."""
        key = ctx.event.stream if self.opt.index_streams else None
        bucket = self.watchers.get(key)
        if not bucket:
            return
        tau = ctx.event.time
        for run in list(bucket.values()):
            if run.dead:
                continue
            for p in run.pending:
                m = self.matchers[p.gpm]
                if ctx.event.stream != m.stream or tau <= p.after:
                    continue
                if run.final and not self._in_rest_of_window(run, tau, ctx.position):
                    continue
                if m.results(ctx, p.mu, self._run_context(m, ctx, p) if m.run_aware else None):
                    if run.final:
                        self._kill(run)  # a trailing absence was violated
                    elif tau < run.limit:
                        run.limit = tau
                        self.death.setdefault(tau, []).append(run)
                    break

    def _in_rest_of_window(self, run: Run, tau: Decimal, pos: int) -> bool:
        return self._fits(run.start, run.first_pos, tau, pos)

    # ------------------------------------------------------------------ extending runs

    def _try(self, run: Run, ctx: EventContext) -> None:
        """Offer the event to one waiting run (SEMANTICS sections 4-7)."""
        e = ctx.event
        tau = e.time
        if run.end is not None:
            if tau <= run.end or tau > run.limit:
                return
            if run.strategy == A.STRICT and not (run.end == self.prev_clock and tau == self.clock):
                return
            if run.commit is not None and run.commit != tau:
                return
            if not self.opt.push_windows and not self._fits(run.start, run.first_pos, tau, ctx.position):
                return
        direct = self._direct[run.step]
        if direct is not None:  # _solved, inlined: no result tuples on the hottest path
            name, solve, order, stream = direct
            if e.stream != stream:
                return
            sols = solve(ctx.index, run.ctx if run.loop else run.mu)
            if not sols:
                return
            if run.strategy == A.SKIP_TILL_NEXT and run.commit is None:
                run.commit = tau
                self.death.setdefault(tau, []).append(run)
            for sol in sols:
                self._advance(run, ctx, sol, (Taken(name, e, tuple([(v, sol[v]) for v in order])),))
            return
        step = self.steps[run.step]
        if e.stream not in step.streams:
            return
        context = run.ctx if run.loop else run.mu
        if isinstance(step.operand, A.Conjunction):
            if self.opt.lazy_conjunction:
                self.lazy.append((run, ctx))
                self._lazy_ids.add(run.id)
                return
            results = self._conj_new(run, step.operand, ctx, context)
        else:
            results = self._operand_results(step.operand, ctx, context, run)
        if not results:
            return
        if run.strategy == A.SKIP_TILL_NEXT and run.commit is None:
            run.commit = tau
            self.death.setdefault(tau, []).append(run)
        for mu, taken in results:
            self._advance(run, ctx, mu, taken)

    def _operand_results(self, op: A.Operand, ctx: EventContext, mu: dict,
                         run: Run) -> list[tuple[Solution, tuple[Taken, ...]]]:
        """New results of an operand completed by one event, for the run being extended (a
        conjunction, at any depth, buffers its operands' results at one timestamp on the run;
        bodies calling run functions read the run)."""
        if isinstance(op, A.GpmRef):
            direct = self._solvers.get(op.name)
            if direct is not None:
                return _solved(direct, ctx, mu)
            m = self.matchers[op.name]
            if ctx.event.stream != m.stream:
                return []
            order = m.local_order
            name, event = op.name, ctx.event
            sols = m.results(ctx, mu, self._run_context(m, ctx, run)) if m.run_aware else m.results(ctx, mu)
            return [(sol, (Taken(name, event, tuple([(v, sol[v]) for v in order if v in sol])),))
                    for sol in sols]
        if isinstance(op, A.Disjunction):
            operands = op.operands
            if self.opt.cost_ordered_disjunction:
                operands = sorted(operands, key=self._cost)
            return [r for o in operands for r in self._operand_results(o, ctx, mu, run)]
        return self._conj_new(run, op, ctx, mu)  # nested in a disjunction or a conjunction

    def _run_context(self, m: GpmMatcher, ctx: EventContext, run: Run | Pending | None) -> RunContext:
        """What run functions in m's body see on this event: the run's events so far."""
        node = run.node if run is not None else None
        start = run.start if run is not None else None
        return RunContext.of(ctx.event, start, node.chain() if node is not None else (), self.kleene)

    def _cost(self, op: A.Operand) -> int:
        return sum(self.matchers[g].cost for g in A.operand_gpms(op))

    def _conj_new(self, run: Run, op: A.Conjunction, ctx: EventContext, mu: dict):
        """New full combinations at this timestamp completed by this event: each operand's
        results so far at the same time are buffered on the run; every combination is
        produced exactly once, by the event that supplies its last component."""
        tau = ctx.event.time
        state = run.conj.get(id(op))
        if state is None or state[0] != tau:
            state = (tau, [[] for _ in op.operands])
            run.conj[id(op)] = state
        buffers = state[1]
        new_per_operand = [self._operand_results(o, ctx, mu, run) for o in op.operands]
        out = []
        for i, new in enumerate(new_per_operand):
            if not new:
                continue
            if all(buffers[j] for j in range(len(buffers)) if j != i):  # else nothing completes
                partial = [(dict(mu), ())]
                for j in range(len(op.operands)):
                    pool = new if j == i else buffers[j]
                    partial = [({**m1, **m2}, t1 + t2) for m1, t1 in partial for m2, t2 in pool
                               if compatible(m1, m2)]
                    if not partial:
                        break
                out.extend(partial)
            buffers[i].extend(new)
        # put taken events back in written operand order
        return [(m, _ordered(t, op)) for m, t in out]

    def _flush_lazy(self, tau: Decimal) -> None:
        """Lazy conjunction (Section 7.3): evaluate buffered conjunction runs once every
        event at their timestamp is known, cheapest operand first, stopping at the first
        operand without results."""
        if not self.lazy or self.lazy[0][1].event.time >= tau:
            return
        groups: dict[int, tuple[Run, list[EventContext]]] = {}
        for run, ctx in self.lazy:
            groups.setdefault(run.id, (run, []))[1].append(ctx)
        self.lazy = []
        self._lazy_ids = set()
        try:
            self._evaluate_lazy(groups)
        finally:
            for run in self._doomed:
                self._kill(run)
            self._doomed = []
        self._release()

    def _evaluate_lazy(self, groups: dict[int, tuple[Run, list[EventContext]]]) -> None:
        for run, ctxs in groups.values():
            if run.dead:
                continue
            step = self.steps[run.step]
            op = step.operand
            context = run.ctx if run.loop else run.mu
            order = sorted(range(len(op.operands)), key=lambda i: self._cost(op.operands[i]))
            per: dict[int, list] = {}
            for i in order:
                rs = [r for c in ctxs for r in self._operand_results(op.operands[i], c, context, run)]
                if not rs:
                    per = {}
                    break
                per[i] = rs
            if not per:
                continue
            joined = [(dict(context), ())]
            for i in range(len(op.operands)):
                joined = [({**m1, **m2}, t1 + t2) for m1, t1 in joined for m2, t2 in per[i]
                          if compatible(m1, m2)]
            if not joined:
                continue
            tau0 = ctxs[0].event.time
            if run.strategy == A.SKIP_TILL_NEXT and run.commit is None:
                run.commit = tau0
                self.death.setdefault(tau0, []).append(run)
            for mu, taken in joined:
                last = max(ctxs, key=lambda c: c.position)
                self._advance(run, last, mu, taken)

    # ------------------------------------------------------------------ state changes

    def _advance(self, run: Run, ctx: EventContext, mu: dict, taken: tuple[Taken, ...]) -> None:
        """A result at ctx's time extends ``run``: clone it one step further."""
        tau = ctx.event.time
        if len(taken) == 1 and taken[0].event is ctx.event:  # the common case: this event
            last_pos = ctx.position
            first_pos = run.first_pos if run.first_pos is not None else last_pos
        else:
            positions = [self._pos.get(id(t.event), ctx.position) for t in taken]
            first_pos = run.first_pos if run.first_pos is not None else min(positions)
            last_pos = max(positions)
        start = run.start if run.start is not None else tau
        if self._sliding_time:
            if tau - start > self.omega:
                return
        elif not self._fits(start, first_pos, tau, last_pos):
            return
        node = run.node
        for t in taken:
            node = Node(node, t)
        if self._kleene[run.step]:
            step = self.steps[run.step]
            ctx_mu = run.ctx if run.loop else run.mu
            loop = Run(run.step, mu, node, start, tau, first_pos, last_pos, (), ctx_mu, True)
            self._enter_wait(loop, step.loop_strategy)
        elif run.step + 1 == len(self.steps) and not run.pending:
            self._emit(mu, node, start, tau)  # a complete match: no run to build
            return
        self._enter(run.step + 1, Run(run.step + 1, mu, node, start, tau, first_pos, last_pos))

    def _enter(self, index: int, run: Run) -> None:
        """A run arrives at state ``index``: optional and negated atoms fork or add absences."""
        if index == len(self.steps):
            if run.pending:
                run.final = True
                run.id = next(self._ids)
                self._watch(run)
                deadline = self._deadline(run)
                if deadline is not None:
                    heapq.heappush(self.closing, (deadline, run.id, run))
                else:
                    self.closing.append((INF, run.id, run))
                return
            self._complete(run)
            return
        step = self.steps[index]
        run.step = index
        if step.modifier == A.NEGATION:
            run.pending = run.pending + (Pending(step.operand.name, run.mu, run.end, run.node, run.start),)
            self._enter(index + 1, run)
            return
        if step.modifier == A.OPTIONAL:
            skip = Run(index, run.mu, run.node, run.start, run.end, run.first_pos, run.last_pos,
                       run.pending + (Pending(step.operand.name, run.mu, run.end, run.node, run.start),))
            self._enter_wait(run, step.strategy)
            self._enter(index + 1, skip)
            return
        self._enter_wait(run, step.strategy)

    def _enter_wait(self, run: Run, strategy: str | None) -> None:
        run.id = next(self._ids)
        run.strategy = strategy
        self.stats["runs"] += 1
        self._wait(run)
        if strategy == A.STRICT:
            self.strict_new.append(run)
        if self.opt.push_windows:
            deadline = run.start + self.omega if self._sliding_time and run.start is not None \
                else self._deadline(run)
            if deadline is not None:
                heapq.heappush(self.expiry, (deadline, run.id, run))

    def _complete(self, run: Run) -> None:
        self._emit(run.mu, run.node, run.start, run.end)

    def _emit(self, mu: dict, node: Node | None, start: Decimal, time: Decimal) -> None:
        self.stats["matches"] += 1
        self._batch.append((Match.deferred(mu, node.chain if node is not None else tuple, start, time), node))

    def _release(self, by_completion: bool = True) -> None:
        """Emit the matches completed at one moment in ``matches.match_order`` (the reference
        evaluator's order): by the event completing each first (a lazy conjunction's batch
        spans a timestamp) unless they all completed by a window closing."""
        batch = self._batch
        self._batch = []
        emit = self.emit
        if len(batch) == 1:
            emit(batch[0][0])
            return
        for m in _in_match_order(batch, by_completion):
            emit(m)


def _solved(direct: tuple[str, Callable, tuple[str, ...], str], ctx: EventContext,
            mu: dict) -> list[tuple[Solution, tuple[Taken, ...]]]:
    """eval(GPM, event, mu) through the GPM's generated solver (an entry of ``_solvers``):
    each solution with the event it took; the BGP binds every local variable."""
    name, solve, order, stream = direct
    e = ctx.event
    if e.stream != stream:
        return []
    return [(sol, (Taken(name, e, tuple([(v, sol[v]) for v in order])),)) for sol in solve(ctx.index, mu)]


def _in_match_order(batch: list[tuple[Match, Node | None]], by_completion: bool) -> list[Match]:
    """``batch`` sorted as ``matches.match_order`` says (preceded, ``by_completion``, by each
    match's last event). The positions are read off the shared buffer, so a match's
    ``taken`` stays unbuilt (deferred) for consumers that never read it; the N-Triples
    tie-break is computed only among matches equal on the rest."""
    keyed = []
    for i, (m, node) in enumerate(batch):
        events = []
        append = events.append
        while node is not None:
            append(node.taken[1].order)  # Taken.event by position, its sort_key() as built
            node = node.parent
        events.reverse()
        keyed.append(((max(events, default=()) if by_completion else (), m.start, events), i, m))
    keyed.sort()  # the index i is unique: matches themselves are never compared
    out: list[Match] = []
    i = 0
    while i < len(keyed):
        j = i + 1
        while j < len(keyed) and keyed[j][0] == keyed[i][0]:
            j += 1
        group = [m for _, _, m in keyed[i:j]]
        out.extend(sorted(group, key=spelling) if j - i > 1 else group)
        i = j
    return out


def _ordered(taken: tuple[Taken, ...], op: A.Conjunction) -> tuple[Taken, ...]:
    order = {g: i for i, g in enumerate(A.operand_gpms(op))}
    return tuple(sorted(taken, key=lambda t: order.get(t.atom, 0)))
