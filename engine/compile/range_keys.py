"""Range keys: which FILTER comparison between a run's variable and the event's lets runs
waiting at a step be kept sorted (the plan's part of the range index; the sorted buckets
themselves are the native runtime's, engine/native/automaton/src/range_index.rs)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import Literal

from spaseq.engine.algebra import operators as A
from spaseq.engine.vocab import XSD_NS

_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
_NUMERIC = frozenset(XSD_NS + t for t in ("integer", "decimal", "float", "double"))


@dataclass(frozen=True)
class RangeKey:
    """Runs waiting at a step are sorted by ``run_var``; an event whose ``event_var`` has the
    value v visits the runs with key <= (v - offset) / scale (``below``) or key >= it
    (otherwise): the FILTER compares ``?event_var`` with ``scale * ?run_var + offset``
    (``?p2 < ?p1 * 0.975``: scale 0.975), a line of positive or negative slope whose
    direction ``below`` already accounts for."""

    run_var: str
    event_var: str
    below: bool
    scale: float = 1.0
    offset: float = 0.0


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
    """The first top-level FILTER conjunct ``?e op f(?r)`` (op one of < > <= >=, either side)
    comparing a variable bound by the GPM's triples with an affine function of one bound
    before the step (``?r``, ``?r * 0.975``, ``?r + 5``, ``(2 - ?r) / 4``...)."""
    fresh = event_vars - bound_before
    for expr in filters:
        if not (isinstance(expr, A.ECall) and expr.op in _FLIP and len(expr.args) == 2):
            continue
        left, right = expr.args
        op = expr.op
        if not (isinstance(left, A.EVar) and left.name in fresh):
            left, right, op = right, left, _FLIP[op]
        if not (isinstance(left, A.EVar) and left.name in fresh):
            continue
        line = _affine(right, bound_before)
        if line is None:
            continue
        run_var, scale, offset = line
        # ?e > scale*?r + offset, scale > 0: runs with r <= (e - offset)/scale; a negative
        # slope turns the side over; ?e < ... the other side
        below = (op in (">", ">=")) == (scale > 0)
        return RangeKey(run_var, left.name, below, scale, offset)
    return None


def _affine(expr: A.Expr, bound_before: frozenset[str]) -> tuple[str, float, float] | None:
    """``expr`` as ``scale * ?r + offset`` with ``?r`` bound before the step and ``scale``
    a finite nonzero number; None if it is not of that form."""
    if isinstance(expr, A.EVar):
        return (expr.name, 1.0, 0.0) if expr.name in bound_before else None
    if not isinstance(expr, A.ECall):
        return None
    if expr.op in ("neg", "pos") and len(expr.args) == 1:
        inner = _affine(expr.args[0], bound_before)
        if inner is None or expr.op == "pos":
            return inner
        return inner[0], -inner[1], -inner[2]
    if expr.op not in ("+", "-", "*", "/") or len(expr.args) != 2:
        return None
    left, right = expr.args
    lc, rc = _number(left), _number(right)
    if lc is not None and rc is None:
        line, c, const_first = _affine(right, bound_before), lc, True
    elif rc is not None and lc is None:
        line, c, const_first = _affine(left, bound_before), rc, False
    else:
        return None
    if line is None:
        return None
    var, a, b = line
    if expr.op == "+":
        out = (a, b + c)
    elif expr.op == "-":
        out = (-a, c - b) if const_first else (a, b - c)
    elif expr.op == "*":
        out = (a * c, b * c)
    elif const_first or c == 0:  # c / ?r is not a line
        return None
    else:
        out = (a / c, b / c)
    scale, offset = out
    if not (math.isfinite(scale) and math.isfinite(offset)) or scale == 0:
        return None
    return var, scale, offset


def _number(expr: A.Expr) -> float | None:
    """The value of a numeric literal constant (integer, decimal, float, double), finite."""
    if not (isinstance(expr, A.ETerm) and isinstance(expr.term, Literal)):
        return None
    if expr.term.datatype.value not in _NUMERIC:
        return None
    try:
        value = float(expr.term.value)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
