"""Lazy evaluation of a skip-till-any prefix (the lazy chain automaton of Kolchinsky et al.,
seed paper "lazy chain automata"), for streams where the prefix's last atom is rare.

The eager automaton keeps a run for every partial match of ``SEQ(X1 : X2 : ... : Xt ...)``:
on a stream where every event matches X1 but few match Xt, it builds and expires a run per
event for nothing. The lazy chain instead buffers the events X1..X(t-1) can use (those
with a context-free solution) and, when an event arrives on Xt's stream, enumerates the
prefix's partial matches from the buffer, oldest first, each GPM evaluated in the context
of the atoms before it, exactly as the eager runs would have been built. The runtime then
offers the event to those partial matches as it would to waiting runs; everything from Xt
on is evaluated eagerly as before. Under skip-till-any the eager runs waiting at Xt are
exactly these chains (every combination in time order within the window), so the matches
are the same; only the work moves from every event to the rare trigger events.

Where it applies (a prefix of at least two plain GPM atoms joined by ``:`` whose bodies take
the compiled path without GRAPH clauses or run functions, under a sliding time window or
none) is the plan's decision: ``compile.planner.lazy_prefix_length``, ``Plan.lazy_chain``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from decimal import Decimal

from spaseq.engine.compile.nfa import Step
from spaseq.engine.gpm_eval.matcher import EventContext, GpmMatcher, Solution
from spaseq.engine.gpm_eval.sparql_store import compatible
from spaseq.engine.matches import Taken
from spaseq.engine.values.timestamps import INFINITY, ZERO


def may_match(m: GpmMatcher, ctx: EventContext) -> bool:
    """Whether GPM ``m`` can match the event in some context: its stream, its constant
    predicates, a solution of its BGP passing the FILTERs on the BGP's own variables."""
    return (ctx.event.stream == m.stream and m.can_match(ctx)
            and bool(m.compiled.filtered_rows(ctx.index)))


class PrefixBuffer:
    """The events the lazy prefix's atoms (all but its trigger) may take, within the window."""

    def __init__(self, steps: Sequence[Step], matchers: dict[str, GpmMatcher], length: int,
                 omega: Decimal | None) -> None:
        self.atoms = [(s.operand.name, matchers[s.operand.name]) for s in steps[:length]]
        self.streams = frozenset(m.stream for _, m in self.atoms)
        self.omega = omega
        self.entries: deque[tuple[EventContext, int]] = deque()  # (event, position), time order

    def add(self, ctx: EventContext, position: int) -> None:
        """Keep the event if some buffered atom may match it in some context."""
        if ctx.event.stream in self.streams and any(may_match(m, ctx) for _, m in self.atoms):
            self.entries.append((ctx, position))

    def expire(self, now: float) -> None:
        """Drop events no match ending at ``now`` or later can start with."""
        if self.omega is None:
            return
        entries = self.entries
        horizon = now - self.omega
        while entries and entries[0][0].event.time < horizon:
            entries.popleft()

    def chains(self, before: float, anchors: list[Solution]
               ) -> Iterator[tuple[list[Taken], Solution, float, int, float, int]]:
        """Every partial match of the buffered atoms over events earlier than ``before``:
        (takens, mu, start, first position, end, last position), each atom's GPM evaluated
        in the context of the atoms before it, strictly increasing times. ``anchors`` are
        the trigger's context-free solutions: a chain whose bindings agree with none of them
        cannot be extended by the trigger (its mu only grows), so it is pruned as it is built."""
        if not anchors:
            return
        window = [e for e in self.entries if e[0].event.time < before]
        if self.omega is not None:
            window = [e for e in window if before - e[0].event.time <= self.omega]
        partial: list[tuple[list[Taken], Solution, float, int, float, int, int]] = [
            ([], {}, ZERO, -1, -INFINITY, -1, -1)]
        for name, m in self.atoms:
            stream, order = m.stream, m.local_order
            nxt = []
            for takens, mu, start, first, end, _last, j in partial:
                for k in range(j + 1, len(window)):
                    ctx, pos = window[k]
                    e = ctx.event
                    if e.time <= end or e.stream != stream:
                        continue
                    for sol in m.results(ctx, mu):
                        if not any(compatible(a, sol) for a in anchors):
                            continue
                        taken = Taken(name, e, tuple([(v, sol[v]) for v in order if v in sol]))
                        nxt.append(([*takens, taken], sol, start if takens else e.time,
                                    first if takens else pos, e.time, pos, k))
            partial = nxt
            if not partial:
                return
        for takens, mu, start, first, end, last, _ in partial:
            yield takens, mu, start, first, end, last
