"""Range indexes over waiting runs: the partitioning idea of the paper's Section 7.2 carried
from equality joins to order comparisons between a run's variable and the event's.

A GPM such as ``B { ?c :price ?p2 . FILTER(?p2 > ?p1) }`` can only extend runs whose ``?p1`` is
below the event's ``?p2``. Runs waiting at such a step are kept sorted by the numeric value of
their ``?p1``; an event then visits the runs on the right side of its own value and no others.
The index is a conservative pre-filter: every run it returns is still checked by the GPM's
FILTERs, and it never leaves out a run the FILTER could accept (see ``order_key``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable
from dataclasses import dataclass

from spaseq.engine.algebra import operators as A
from spaseq.engine.values import sparql as V

_CACHE = V._CACHE  # literal -> (kind, value), filled by info_slow (cleared in place, never replaced)

_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}


@dataclass(frozen=True)
class RangeKey:
    """Runs waiting at a step are sorted by ``run_var``; an event whose ``event_var`` has the
    value v visits the runs with key <= v (``below``) or key >= v (otherwise)."""

    run_var: str
    event_var: str
    below: bool


@dataclass(frozen=True)
class StepRange:
    """How runs waiting at one step are sorted: by ``run_var``, which each GPM of
    ``by_gpm`` compares with a variable of its own (the step's other GPMs visit every run)."""

    run_var: str
    by_gpm: dict[str, RangeKey]


def step_range(candidates: dict[str, RangeKey | None]) -> StepRange | None:
    """The run variable most of a step's GPMs compare against (a conjunction's operands may
    each compare a different event variable with the same run variable)."""
    found = [(g, rk) for g, rk in candidates.items() if rk is not None]
    if not found:
        return None
    counts: dict[str, int] = {}
    for _, rk in found:
        counts[rk.run_var] = counts.get(rk.run_var, 0) + 1
    run_var = max(counts, key=lambda v: (counts[v], v))
    return StepRange(run_var, {g: rk for g, rk in found if rk.run_var == run_var})


def find_range_key(filters: Iterable[A.Expr], bound_before: frozenset[str],
                   event_vars: frozenset[str]) -> RangeKey | None:
    """The first top-level FILTER conjunct ``?e op ?r`` (op one of < > <= >=) comparing a
    variable bound by the GPM's triples with one certainly bound before the step."""
    for expr in filters:
        if not (isinstance(expr, A.ECall) and expr.op in _FLIP and len(expr.args) == 2):
            continue
        left, right = expr.args
        if not (isinstance(left, A.EVar) and isinstance(right, A.EVar)):
            continue
        op = expr.op
        if left.name in bound_before and right.name in event_vars - bound_before:
            left, right, op = right, left, _FLIP[op]
        if left.name in event_vars - bound_before and right.name in bound_before:
            # ?e > ?r or ?e >= ?r: runs with r <= e; ?e < ?r or ?e <= ?r: runs with r >= e
            return RangeKey(right.name, left.name, op in (">", ">="))
    return None


def order_key(term: object) -> object | None:
    """The exact numeric value of a numeric literal (int, Decimal or float, which Python
    compares exactly with each other), or None for anything else and NaN.

    Why conservative: SPARQL compares mixed numerics after promotion to the wider type, and
    promotion rounds monotonically, so ``promoted(a) < promoted(b)`` implies ``a <= b`` on
    the exact values. Selecting runs by the non-strict exact comparison keeps every run
    the FILTER could accept.
    """
    info = _CACHE.get(term)
    if info is None:
        try:
            info = V.info_slow(term)
        except Exception:  # not an RDF value: leave it to the FILTER
            return None
    kind, value = info
    if kind <= V.K_DBL and value == value:
        return value
    return None


class RangeBucket:
    """Runs of one partition (step, loop, equality-key values), sorted by their range key.

    Looks like the dict ``{run id: run}`` the runtime keeps elsewhere (``pop``, ``values``,
    ``len``), so killing a run works the same way; the sorted list is cleaned lazily.
    """

    __slots__ = ("runs", "keys", "misc")

    def __init__(self) -> None:
        self.runs: dict[int, object] = {}
        self.keys: list[tuple[object, int]] = []   # (value, run id), sorted
        self.misc: dict[int, object] = {}           # runs whose key is not an ordered number

    def add(self, run_id: int, run: object, value: object | None) -> None:
        self.runs[run_id] = run
        if value is None:
            self.misc[run_id] = run
        else:
            insort(self.keys, (value, run_id))

    def pop(self, run_id: int, default: object = None) -> object:
        run = self.runs.pop(run_id, default)
        self.misc.pop(run_id, None)
        if len(self.keys) > 2 * len(self.runs) + 16:
            runs = self.runs
            self.keys = [k for k in self.keys if k[1] in runs]
        return run

    def values(self):
        return self.runs.values()

    def __len__(self) -> int:
        return len(self.runs)

    def select(self, requests: list[tuple[object | None, bool]]) -> list:
        """The runs an event may extend, in creation order: the union over ``requests``
        ``(value, below)`` of the runs with key <= value (below) or >= value; a None value
        (the event's side is not an ordered number, or its GPM has no range) asks for all."""
        runs = self.runs
        if len(requests) == 1 and not self.misc:  # the usual case: one solution, one bound
            value, below = requests[0]
            if value is None:
                return list(runs.values())
            keys = self.keys
            part = (keys[:bisect_right(keys, (value, float("inf")))] if below
                    else keys[bisect_left(keys, (value, -1)):])
            return [runs[i] for i in sorted([i for _, i in part if i in runs])]
        hi = lo = None
        for value, below in requests:
            if value is None:
                return list(runs.values())
            if below:
                hi = value if hi is None or value > hi else hi
            else:
                lo = value if lo is None or value < lo else lo
        keys = self.keys
        ids = set(self.misc)
        if hi is not None:
            ids.update(i for _, i in keys[:bisect_right(keys, (hi, float("inf")))] if i in runs)
        if lo is not None:
            ids.update(i for _, i in keys[bisect_left(keys, (lo, -1)):] if i in runs)
        return [runs[i] for i in sorted(ids)]
