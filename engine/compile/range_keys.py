"""Range keys: which FILTER comparison between a run's variable and the event's lets runs
waiting at a step be kept sorted (the plan's part of the range index; the sorted buckets
themselves are the native runtime's, engine/native/core/src/runtime/range_index.rs)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spaseq.engine.algebra import operators as A

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
