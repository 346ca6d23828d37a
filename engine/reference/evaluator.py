"""The reference evaluator: SEMANTICS.md implemented directly, for trust rather than speed.

It extends prefix matches atom by atom, left to right (section 3): for each prefix it looks
at the later timestamps of the streamset in order and evaluates the next atom there in the
prefix's context, keeping what the selection strategy allows (section 4). Conjunction,
disjunction (5), Kleene+ (6), optional and negation (7) and the windows (8) are each a few
lines below. Negated and untaken optional atoms leave a *pending* constraint on the prefix
("no X strictly between here and the next atom taken"), checked when the next positive atom
is taken, or, at the end of the sequence, over the rest of the window. A sequence starting
with negated atoms (head negation) keeps a match only if no event of theirs lies before its
first event and inside its window, compatible with it.

The policies of RSEP-QL (section 16, docs/decisions.md 65) are applied on top: a selection
(CHRONOLOGICAL, RECENT) keeps, of every step's extensions that took the same events with the
same own bindings, those of the prefixes that come first (last); LATEST keeps the matches whose
events are each their GPM's latest; CONSUMPTION MATCHED is defined by release order: the
matches are found again each time one is released, with the triples it took used up from its
release on, so that each match is judged against exactly the matches released before it.

The only concession to speed is in ``GpmEvaluator`` (per-event caching of join-shaped GPM
bodies) and an index of the timestamps at which a GPM can match a given join key; neither
changes which results exist.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import cast

from pyoxigraph import Store, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.events import Event
from spaseq.engine.functions.run_functions import RunContext, kleene_gpms
from spaseq.engine.gpm_eval.aggregates import select_expressions
from spaseq.engine.gpm_eval.sparql_eval import GpmEvaluator
from spaseq.engine.gpm_eval.sparql_store import Node, Solution
from spaseq.engine.matches import Match, Taken, Term, match_order


@dataclass(frozen=True)
class Pending:
    """An absence still to be checked: no event matching GPM ``gpm`` in context ``mu``
    strictly after time ``after`` (up to the next atom taken, or the window's close)."""

    gpm: str
    mu: Solution
    after: Decimal
    taken: tuple[Taken, ...] = ()  # the prefix's events and start: the run that run
    start: Decimal | None = None     # functions in the absent GPM's body see


@dataclass(frozen=True)
class Span:
    """Where a prefix match lies: the time and position of its first event and of its last."""

    start: Decimal
    end: Decimal
    first_pos: int
    last_pos: int


@dataclass(frozen=True)
class Partial:
    """A prefix match: its mapping, the events taken, its span (None for the empty prefix,
    which has taken none) and pending absences."""

    mu: Solution
    taken: tuple[Taken, ...] = ()
    span: Span | None = None
    pending: tuple[Pending, ...] = ()
    #: the results COLLECT timers gathered (each with the mapping it was evaluated in)
    collected: tuple[Solution, ...] = ()
    #: the latest end of a timer: the match is released once the clock passes it
    waits: Decimal | None = None

    @property
    def start(self) -> Decimal | None:
        return self.span.start if self.span is not None else None


def _span(p: Partial) -> Span:
    """The span of a prefix past the first atom, which has taken an event."""
    return cast(Span, p.span)  # the first atom is positive (language.checks): it takes one


Result = tuple[Solution, tuple[Taken, ...]]

#: A triple an event gave a match: (the event's identity, the triple).
Used = tuple[int, Triple]
#: When a triple was used up: the release key of the match that used it.
Consumed = dict[Used, tuple]
#: A step of a sequence: the prefix extended and the prefix it became.
Step = tuple["Partial", "Partial"]


@dataclass
class ReferenceEvaluator:
    """Evaluates one query over a finite, time-ordered list of events."""

    query: A.Query
    events: Sequence[Event]
    kb: Store | None = None
    end_of_input: bool = True
    gpms: GpmEvaluator = field(init=False)

    def __post_init__(self) -> None:
        streams = set(self.query.streams.values())
        self.events = sorted(
            (e for e in self.events if e.stream in streams), key=Event.sort_key
        )
        self.gpms = GpmEvaluator(self.query, self.kb)
        self.gpms.add_events(self.events)
        self._pos = {id(e): i for i, e in enumerate(self.events)}
        self._by_time: dict[Decimal, list[Event]] = defaultdict(list)
        for e in self.events:
            self._by_time[e.time].append(e)
        self._times = sorted(self._by_time)
        self._first_pos_at = {t: self._pos[id(evs[0])] for t, evs in self._by_time.items()}
        self._index: dict[tuple, dict[tuple, list[Decimal]]] = {}
        self._kleene_gpms = kleene_gpms(self.query)
        w = self.query.window
        # tumbling windows start at the first event's start (docs/decisions.md 71)
        self._t0 = self.events[0].start if self.events else Decimal(0)
        # whether some event lasts: the interval rules then apply (for point events they
        # give the same answers as the shorter point rules, which stay the path taken)
        self._intervals = any(e.start != e.time for e in self.events)
        self._omega = w.amount
        self._kind = w.kind
        self._tumbling = w.tumbling
        self._consumed: Consumed = {}
        self._patterns = {name: _consumable(ev.pattern) for name, ev in self.query.events.items()}

    # ------------------------------------------------------------------ windows

    def _win(self, tau: Decimal, pos: int) -> int:
        if self._kind == "time":
            offset = tau - self._t0  # exact: times are Decimal; below t0 for an early start
            k = offset // self._omega  # Decimal's // truncates toward zero: floored here
            return int(k) - (1 if offset < 0 and offset % self._omega else 0)
        return pos // int(self._omega)

    def _valid(self, s: Span) -> bool:
        """SEMANTICS section 8: the match's events lie in its window."""
        if self._kind is None:
            return True
        if self._tumbling:
            return self._win(s.start, s.first_pos) == self._win(s.end, s.last_pos)
        if self._kind == "time":
            return s.end - s.start <= self._omega
        return s.last_pos - s.first_pos + 1 <= self._omega

    def _beyond(self, p: Partial, tau: Decimal) -> bool:
        """True when no event at ``tau`` or later can join ``p`` inside its window."""
        s = p.span
        if self._kind is None or s is None:
            return False
        pos = self._first_pos_at[tau]
        if self._tumbling:
            return self._win(tau, pos) > self._win(s.start, s.first_pos)
        if self._kind == "time":
            return tau - s.start > self._omega
        return pos - s.first_pos + 1 > self._omega

    def _in_rest_of_window(self, s: Span, e: Event) -> bool:
        """For trailing absences: does ``e`` lie after the span's end and inside its window
        (its whole interval: docs/decisions.md 71)?"""
        pos = self._pos[id(e)]
        if e.start <= s.end:
            return False
        if self._kind is None:
            return True
        if self._tumbling:
            return self._win(e.time, pos) == self._win(s.start, s.first_pos)
        if self._kind == "time":
            return e.time <= s.start + self._omega
        return pos <= s.first_pos + self._omega - 1

    def _past_window(self, s: Span, e: Event) -> bool:
        """Is ``e`` beyond the span's window (so its arrival closes the window)?"""
        pos = self._pos[id(e)]
        if self._kind is None:
            return False
        if self._tumbling:
            return self._win(e.time, pos) > self._win(s.start, s.first_pos)
        if self._kind == "time":
            return e.time > s.start + self._omega
        return pos > s.first_pos + self._omega - 1

    def _close_position(self, s: Span) -> int | None:
        """Position of the first event past the span's window (the clock passing its close), or
        len(events) at end of input; None if input stopped before the window closed."""
        for i in range(s.last_pos + 1, len(self.events)):
            if self._past_window(s, self.events[i]):
                return i
        return len(self.events) if self.end_of_input else None

    # ------------------------------------------------------------------ atoms at one time

    def _run_context(self, gpm: str, e: Event, taken: tuple[Taken, ...],
                     start: Decimal | None) -> RunContext | None:
        """What run functions in ``gpm``'s body see on ``e`` (None: the body calls none)."""
        if not self.gpms.compiled(gpm).run_aware:
            return None
        return RunContext.of(e, start, taken, self._kleene_gpms)

    def _results_at(self, op: A.Operand, tau: Decimal, mu: Solution,
                    p: Partial | None = None) -> list[Result]:
        """Section 5: the results of an operand at timestamp tau (events ending then) in
        context mu, extending the prefix ``p``, which run functions see, on events that begin
        after its end (all of them at tau for point events)."""
        after = p.span.end if p is not None and p.span is not None else None
        if isinstance(op, A.GpmRef):
            ev = self.query.events[op.name]
            local_vars = ev.variables
            out: list[Result] = []
            for e in self._by_time.get(tau, ()):
                if e.stream != ev.stream or (after is not None and e.start <= after):
                    continue
                run = self._run_context(op.name, e, p.taken, p.start) if p is not None else None
                for sol in self.gpms.solutions(op.name, e, mu, run):
                    local = _bindings(sorted((v, t) for v, t in sol.items() if v in local_vars))
                    out.append((sol, (Taken(op.name, e, local),)))
            return out
        if isinstance(op, A.Disjunction):
            return [r for o in op.operands for r in self._results_at(o, tau, mu, p)]
        joined: list[Result] = [(dict(mu), ())]
        for o in op.operands:
            results = self._results_at(o, tau, mu, p)
            joined = [
                ({**m1, **m2}, t1 + t2)
                for m1, t1 in joined
                for m2, t2 in results
                if all(m1.get(k, v) == v for k, v in m2.items())
            ]
            if not joined:
                break
        return joined

    def _candidate_times(self, op: A.Operand, mu: Solution) -> list[Decimal]:
        """Timestamps at which ``op`` may have a result in context mu (a superset)."""
        if isinstance(op, A.GpmRef):
            return self._gpm_times(op.name, mu)
        sets = [set(self._candidate_times(o, mu)) for o in op.operands]
        merged = set.intersection(*sets) if isinstance(op, A.Conjunction) else set.union(*sets)
        return sorted(merged)

    def _gpm_times(self, gpm: str, mu: Solution) -> list[Decimal]:
        c = self.gpms.compiled(gpm)
        stream = self.query.events[gpm].stream
        keys = tuple(sorted(v for v in c.always_bound if v in mu)) if c.join_shaped else ()
        index = self._index.get((gpm, keys))
        if index is None:
            index = defaultdict(list)
            on_stream = [e for e in self.events if e.stream == stream]
            for e in on_stream:
                sols = self.gpms.base_solutions(gpm, e) if c.join_shaped else [{}]
                for key in {tuple(s.get(k) for k in keys) for s in sols}:
                    lst = index[key]
                    if not lst or lst[-1] != e.time:
                        lst.append(e.time)
            self._index[(gpm, keys)] = index
        return index.get(tuple(mu[k] for k in keys), [])

    def _next_time(self, tau: Decimal) -> Decimal | None:
        i = bisect.bisect_right(self._times, tau)
        return self._times[i] if i < len(self._times) else None

    # ------------------------------------------------------------------ extension

    def _extend(self, p: Partial, tau: Decimal, result: Result) -> Partial | None:
        """p extended by one result at tau, if its pending absences and window allow."""
        mu, taken = result
        begin = _begin(result)
        for pend in p.pending:
            if self._exists_between(pend, begin):
                return None
        positions = [self._pos[id(t.event)] for t in taken]
        span = Span(
            start=begin if p.span is None else min(p.span.start, begin),
            end=tau,
            first_pos=min(positions) if p.span is None else p.span.first_pos,
            last_pos=max(positions),
        )
        return (Partial(mu=mu, taken=p.taken + taken, span=span, collected=p.collected, waits=p.waits)
                if self._valid(span) else None)

    def _exists_between(self, pend: Pending, before: Decimal) -> bool:
        """Does some event lying strictly between pend.after and ``before`` (its whole
        interval) match pend.gpm?"""
        stream = self.query.events[pend.gpm].stream
        lo = bisect.bisect_right(self._times, pend.after)
        hi = bisect.bisect_left(self._times, before)
        for tau in self._times[lo:hi]:
            for e in self._by_time[tau]:
                if e.start <= pend.after:
                    continue
                run = self._run_context(pend.gpm, e, pend.taken, pend.start)
                if e.stream == stream and self.gpms.solutions(pend.gpm, e, pend.mu, run):
                    return True
        return False

    def _step(self, p: Partial, op: A.Operand, strategy: str | None, mu: Solution) -> list[Partial]:
        """Section 4: extend p by one result of op attached with ``strategy`` (none that takes
        a triple used up before the step, section 16)."""
        return [q for q in self._raw_step(p, op, strategy, mu) if not self._uses_consumed(q)]

    def _uses_consumed(self, q: Partial) -> bool:
        """Whether the prefix ``q`` took a triple used up before its last step."""
        if not self._consumed:
            return False
        step = (_span(q).last_pos, 1)
        return any(self._consumed.get(u, step) < step for t in q.taken for u in self._used(t))

    def _used(self, t: Taken) -> list[Used]:
        """The event triples ``t`` took (section 16): its GPM's patterns reading the event,
        instantiated by its bindings, that are triples of its event."""
        if self.query.consumption != A.CONSUME_MATCHED:
            return []
        bound = dict(t.bindings)
        triples = set(t.event.triples)
        out: list[Used] = []
        for tp in self._patterns[t.atom]:
            s_, p_, o_ = (bound.get(x.name) if isinstance(x, A.Var) else x
                          for x in (tp.subject, tp.predicate, tp.object))
            if s_ is None or p_ is None or o_ is None:
                continue
            triple = Triple(s_, p_, o_)  # type: ignore[arg-type]  # a term in each place: not a triple of the event otherwise
            if triple in triples and (id(t.event), triple) not in out:
                out.append((id(t.event), triple))
        return out

    def _raw_step(self, p: Partial, op: A.Operand, strategy: str | None, mu: Solution) -> list[Partial]:
        if self._intervals and p.span is not None and strategy in (A.STRICT, A.SKIP_TILL_NEXT):
            return self._interval_step(p, op, strategy, mu)
        out: list[Partial] = []
        if strategy == A.STRICT:  # never the first atom's
            tau = self._next_time(_span(p).end)
            if tau is None:
                return out
            for r in self._results_at(op, tau, mu, p):
                q = self._extend(p, tau, r)
                if q is not None:
                    out.append(q)
            return out
        times = self._candidate_times(op, mu)
        lo = 0 if p.span is None else bisect.bisect_right(times, p.span.end)
        for tau in times[lo:]:
            if self._beyond(p, tau):
                break
            # a result taking a used-up triple is no result: ';' looks further (section 16)
            results = [r for r in self._results_at(op, tau, mu, p) if not self._result_consumed(r)]
            if not results:
                continue
            for r in results:
                q = self._extend(p, tau, r)
                if q is not None:
                    out.append(q)
            if strategy == A.SKIP_TILL_NEXT:
                break
        return out

    def _interval_step(self, p: Partial, op: A.Operand, strategy: str, mu: Solution) -> list[Partial]:
        """``,`` and ``;`` over events that last (docs/decisions.md 71): the results on events
        beginning after the prefix's end ``τ'`` with, in the gap between ``τ'`` and their
        begin, no event of the streamset (``,``) or no other result of the atom (``;``)
        lying whole. That gap is empty exactly when the result begins no later than the
        first end of such an event or result: ``first`` below."""
        end = _span(p).end
        first: Decimal | None = None
        if strategy == A.STRICT:
            later = [e.time for e in self.events[_span(p).last_pos + 1:] if e.start > end]
            first = min(later, default=None)
            if first is None:
                return []
        found: list[tuple[Decimal, Result]] = []
        for tau in self._candidate_times(op, mu):
            if tau <= end:
                continue
            if self._beyond(p, tau):
                break
            results = [r for r in self._results_at(op, tau, mu, p) if not self._result_consumed(r)]
            if results and first is None:  # ';': the first result's end
                first = tau
            found += [(tau, r) for r in results]
        out: list[Partial] = []
        for tau, r in found:
            if first is not None and _begin(r) <= first:
                q = self._extend(p, tau, r)
                if q is not None:
                    out.append(q)
        return out

    def _result_consumed(self, r: Result) -> bool:
        """Whether the result ``r`` takes a triple used up before its step."""
        if not self._consumed:
            return False
        step = (max(self._pos[id(t.event)] for t in r[1]), 1)
        return any(self._consumed.get(u, step) < step for t in r[1] for u in self._used(t))

    def _kleene(self, partials: list[Partial], atom: A.Atom, i: int) -> list[Partial]:
        """Section 6: one match per number of iterations k, atom.low <= k <= atom.high
        (decision 61); later iterations attach by ',' (by ';' when X+ starts the sequence);
        each iteration sees the prefix's context. Zero iterations (low 0) are an untaken
        optional atom (section 7): the prefix with a pending absence of X. Each iteration
        count is a step of its own for a selection (section 16)."""
        later = A.SKIP_TILL_NEXT if atom.strategy is None else A.STRICT
        out = [_with_pending(p, atom) for p in partials] if atom.low == 0 else []
        # (the prefix before the atom, whose mapping every iteration sees; the step)
        frontier = self._select_all((i, 1), [
            (p, (p, q)) for p in partials for q in self._step(p, atom.operand, atom.strategy, p.mu)
        ])
        k = 1  # the iterations each partial of the frontier took
        while frontier:
            if k >= atom.low:
                out.extend(q for _, (_, q) in frontier)
            if k == atom.high:
                break
            k += 1
            frontier = self._select_all((i, k), [
                (p, (q, q2))
                for p, (_, q) in frontier
                for q2 in self._step(q, atom.operand, later, p.mu)
            ])
        return out

    def _atom(self, partials: list[Partial], atom: A.Atom, i: int) -> list[Partial]:
        """The prefixes after atom ``i`` (the steps it takes chosen by the selection)."""
        if isinstance(atom.operand, A.GpmRef) and self.query.events[atom.operand.name].timer is not None:
            return [q for p in partials if (q := self._timed(p, atom.operand.name)) is not None]
        if atom.modifier == A.KLEENE:
            return self._kleene(partials, atom, i)
        if atom.modifier == A.NEGATION:
            return [_with_pending(p, atom) for p in partials]
        steps = [(p, q) for p in partials for q in self._step(p, atom.operand, atom.strategy, p.mu)]
        out = [q for _, q in self._select((i, 1), steps)]
        if atom.modifier == A.OPTIONAL:
            out += [_with_pending(p, atom) for p in partials]
        return out

    def _timed(self, p: Partial, gpm: str) -> Partial | None:
        """A timer atom (docs/decisions.md 71): ``p`` if no event of the GPM's stream with a
        result in ``p``'s mapping lies in the timer (NOT), or with the results of those that
        do, at least one (COLLECT); its span grown to the timer's interval."""
        ev = self.query.events[gpm]
        timer = cast(A.Timer, ev.timer)
        anchor = next(t.event for t in p.taken if t.atom == timer.anchor)  # language.checks: one
        lo, hi = timer.interval(anchor.start, anchor.time)
        found: list[Solution] = []
        for e in self.events:
            if e.stream == ev.stream and lo <= e.start and e.time <= hi:
                found += self.gpms.solutions(gpm, e, p.mu, self._run_context(gpm, e, p.taken, p.start))
        if (timer.mode == A.ABSENT) == bool(found):
            return None
        s = _span(p)
        span = Span(min(s.start, lo), max(s.end, hi), s.first_pos, s.last_pos)
        if not self._valid(span):
            return None
        # judged once the clock passes the timer's end: every event lying in it has come
        waits = hi if p.waits is None else max(p.waits, hi)
        return Partial(p.mu, p.taken, span, p.pending, p.collected + tuple(found), waits)

    def _select_all(self, level: tuple[int, int], frontier: list[tuple[Partial, Step]]) -> list[tuple[Partial, Step]]:
        """``_select`` over steps carried with the prefix before their atom."""
        kept = {id(step) for step in self._select(level, [step for _, step in frontier])}
        return [(p, step) for p, step in frontier if id(step) in kept]

    def _select(self, level: tuple[int, int], steps: list[Step]) -> list[Step]:
        """Section 16: of the steps at ``level`` (the atom, the iteration count) that took
        the same events with the same own bindings, CHRONOLOGICAL keeps those from the
        prefixes that come first by their events' times, last event first, RECENT those that
        come last; ties all stay. Otherwise every step."""
        selection = self.query.selection
        if selection not in (A.CHRONOLOGICAL, A.RECENT):
            return steps
        pick = min if selection == A.CHRONOLOGICAL else max

        def took(step: Step) -> tuple:
            before, after = step
            new = after.taken[len(before.taken):]
            return (level, tuple((t.atom, id(t.event), t.bindings) for t in new))

        def times(p: Partial) -> tuple[Decimal, ...]:
            # a prefix that runs out of events, its times equal so far, started later
            return (*(t.event.time for t in reversed(p.taken)), Decimal("Infinity"))

        best: dict[tuple, tuple[Decimal, ...]] = {}
        for step in steps:
            key, t = took(step), times(step[0])
            best[key] = pick(best[key], t) if key in best else t
        return [step for step in steps if times(step[0]) == best[took(step)]]

    # ------------------------------------------------------------------ whole query

    def matches(self) -> list[Match]:
        """Every match, in completion order (section 9). Under CONSUMPTION MATCHED (section
        16) a match is released only if it took no triple an earlier released match took; the
        matches are found again with the triples of each released match used up from then on."""
        if self.query.consumption != A.CONSUME_MATCHED:
            return [m for _, m in self._completed()]
        self._consumed = {}
        out: list[Match] = []
        last: tuple | None = None
        completed = self._completed()
        while True:
            for key, match in completed:
                if last is not None and key <= last:
                    continue
                last = key
                used = [u for t in match.taken for u in self._used(t)]
                if any(u in self._consumed for u in used):
                    continue
                out.append(match)
                if used:
                    for u in used:
                        self._consumed[u] = key
                    completed = self._completed()  # what follows sees them used up
                    break
            else:
                return out

    def _completed(self) -> list[tuple[tuple, Match]]:
        """Every match with its release key (completion position, 0 for one completed by the
        clock before the event there, 1 for one its event completed; then section 9's order),
        sorted."""
        partials = [Partial(mu={})]
        for i, atom in enumerate(self.query.seq.positive):
            partials = self._atom(partials, atom, i)
        completed: list[tuple[tuple, Match]] = []
        for p in partials:
            span = _span(p)
            if any(self._exists_before(atom, p) for atom in self.query.seq.head):
                continue
            order = 1
            completion = span.last_pos
            if p.waits is not None and self.events[span.last_pos].time <= p.waits:
                # a timer the clock has not passed at the last event: released when it does
                after = next((i for i in range(span.last_pos + 1, len(self.events))
                              if self.events[i].time > p.waits), None)
                if after is None and not self.end_of_input:
                    continue
                completion, order = (len(self.events) if after is None else after), 0
            if p.pending:
                if any(self._exists_after(pend, span) for pend in p.pending):
                    continue
                close = self._close_position(span)
                if close is None:
                    continue
                completion, order = close, 0
            mu = p.mu
            if self.query.match.expressions:
                mu = {**mu, **select_expressions(self.query, p.collected)}
            match = Match(
                bindings=_bindings(sorted(mu.items(), key=lambda kv: kv[0])),
                taken=p.taken,
                start=span.start,
                time=span.end,
            )
            if self.query.selection == A.LATEST and not self._all_latest(match, completion):
                continue
            key = (completion, order, match_order(match))
            completed.append((key, match))
        completed.sort(key=lambda km: km[0])
        return completed

    def _all_latest(self, match: Match, completion: int) -> bool:
        """SELECTION LATEST (section 16): is each event of the match at the latest time, among
        the events up to its completion, at which its GPM has a solution on its own?"""
        for t in match.taken:
            stream = self.query.events[t.atom].stream
            latest = None
            for e in self.events[: completion + 1]:
                if e.stream == stream and self.gpms.solutions(t.atom, e, {}, self._run_context(t.atom, e, (), None)):
                    latest = e.time
            if latest != t.event.time:
                return False
        return True

    def _exists_before(self, atom: A.Atom, p: Partial) -> bool:
        """Head negation (docs/decisions.md 62): does an event before the match's first one,
        inside its window (a time window: language.checks), match the negated GPM in the
        whole match's context?"""
        gpm = cast(A.GpmRef, atom.operand).name
        stream = self.query.events[gpm].stream
        s = _span(p)
        for e in self.events[: s.first_pos]:
            if e.stream != stream or e.time >= s.start:
                continue
            if self._tumbling:
                if self._win(e.start, self._pos[id(e)]) != self._win(s.start, s.first_pos):
                    continue
            elif s.end - e.start > self._omega:  # it lies whole in [end - ω, start)
                continue
            if self.gpms.solutions(gpm, e, p.mu, self._run_context(gpm, e, (), None)):
                return True
        return False

    def _exists_after(self, pend: Pending, s: Span) -> bool:
        """Trailing absence: does an event in the rest of the span's window match pend.gpm?"""
        stream = self.query.events[pend.gpm].stream
        for e in self.events[s.last_pos + 1 :]:
            if self._past_window(s, e):
                break
            if e.start <= pend.after or e.stream != stream or not self._in_rest_of_window(s, e):
                continue
            run = self._run_context(pend.gpm, e, pend.taken, pend.start)
            if self.gpms.solutions(pend.gpm, e, pend.mu, run):
                return True
        return False


def _consumable(group: A.GroupPattern) -> list[A.TriplePattern]:
    """The triple patterns of a GPM body that read the event (section 16): its triples and
    those of its OPTIONAL, UNION and nested groups whose predicate is an IRI, a variable or a
    one-IRI path; not GRAPH (the knowledge base), MINUS, EXISTS or sub-select patterns."""
    out: list[A.TriplePattern] = []
    for el in group.elements:
        if isinstance(el, A.BGP):
            for tp in el.triples:
                pred = tp.predicate
                if isinstance(pred, A.Path):
                    if pred.kind != "link":
                        continue
                    pred = pred.args[0]
                out.append(A.TriplePattern(tp.subject, pred, tp.object))
        elif isinstance(el, A.OptionalPattern):
            out += _consumable(el.pattern)
        elif isinstance(el, A.UnionPattern):
            for alt in el.alternatives:
                out += _consumable(alt)
    return out


def _begin(result: Result) -> Decimal:
    """When a result's events begin: the earliest start among them."""
    return min(t.event.start for t in result[1])


def _with_pending(p: Partial, atom: A.Atom) -> Partial:
    """``p`` with the absence of ``atom`` pending: of its GPM, or of each GPM of a disjunction
    (a group that may take no iteration holds no conjunction: language.translate)."""
    span = _span(p)  # an optional, negated or X* atom is never the first (language.checks)
    pends = tuple(Pending(g, p.mu, span.end, p.taken, span.start) for g in A.operand_gpms(atom.operand))
    return Partial(p.mu, p.taken, span, p.pending + pends, p.collected, p.waits)


def _bindings(pairs: Iterable[tuple[str, Node]]) -> tuple[tuple[str, Term], ...]:
    """A solution's (variable, term) pairs as a match's bindings. ``matches.Term`` leaves out
    the triple terms a solution may bind (an event's object may be one): they are handed on
    as bound, which the type does not say."""
    return cast("tuple[tuple[str, Term], ...]", tuple(pairs))


def evaluate(
    query: A.Query, events: Sequence[Event], kb: Store | None = None, end_of_input: bool = True
) -> list[Match]:
    """All matches of ``query`` over ``events`` (any order; restricted to its streams)."""
    return ReferenceEvaluator(query, events, kb, end_of_input).matches()
