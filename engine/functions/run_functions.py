"""spaseq functions that GPM bodies call about the run being matched: the current event's
time and stream, the run's start, and aggregates over the Kleene+ iterations taken so far.

They make a GPM body depend on the run, not only on the event and the context mapping, so
the evaluators hand a ``RunContext`` to bodies that call them (``calls_run_functions``)
and only to those; every other body keeps its context-free, shared evaluation.

"Taken so far" is the run *before* the event being evaluated: inside a Kleene+ GPM the
earlier iterations of this run (so ``FILTER(?amount > spaseq:max("amount"))`` says "larger
than every earlier withdrawal"); in a later GPM, every iteration. An aggregate names an
iteration-local variable by a string (Kleene+ variables are per iteration, SEMANTICS.md
section 6) and collects one value per event a Kleene+ atom took that bound it, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import Literal, NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.events import Event
from spaseq.engine.functions.arguments import (
    FunctionError,
    Term,
    arity,
    to_term,
    variable_name,
)
from spaseq.engine.matches import Taken
from spaseq.engine.values.arithmetic import op_add, op_div
from spaseq.engine.values.compare import compare_spec
from spaseq.engine.values.kinds import ERRORS
from spaseq.engine.values.literals import numeric_value
from spaseq.engine.values.timestamps import seconds_literal
from spaseq.engine.vocab import SPASEQ_NS


@dataclass(frozen=True)
class RunContext:
    """What a run-aware GPM body may ask about: the event being evaluated (its time and
    stream), the run's start (its first event's time; this event's when it is the first)
    and the local bindings of the Kleene+ iterations the run took before this event."""

    event_time: Decimal
    stream: str
    start: Decimal
    iterations: tuple[tuple[tuple[str, Term], ...], ...] = ()

    @classmethod
    def of(cls, event: Event, start: Decimal | None, taken: Iterable[Taken],
           kleene: frozenset[str]) -> RunContext:
        """The context of evaluating ``event`` for a run that started at ``start`` (None:
        nothing taken yet) and took ``taken``; ``kleene``: the GPMs of Kleene+ atoms."""
        return cls(event.time, event.stream, event.time if start is None else start,
                   _iterations(taken, kleene))

    def values(self, name: str) -> list[Term]:
        """The values of ?name in the iterations taken so far, in order."""
        out = []
        for bindings in self.iterations:
            for var, term in bindings:
                if var == name:
                    out.append(term)
                    break
        return out


def _iterations(taken: Iterable[Taken], kleene: frozenset[str]) -> tuple[tuple[tuple[str, Term], ...], ...]:
    """The local bindings of each Kleene iteration among ``taken``: the events of one
    iteration of a group ``(A & B)+`` share its time and iterations come at later times, so
    consecutive Kleene events at one time are one iteration (their bindings joined, the first
    event's first)."""
    out: list[tuple[tuple[str, Term], ...]] = []
    last: Taken | None = None
    for t in taken:
        if t.atom not in kleene:
            last = None
            continue
        if last is not None and last.event.time == t.event.time:
            seen = {v for v, _ in out[-1]}
            out[-1] = out[-1] + tuple((v, term) for v, term in t.bindings if v not in seen)
        else:
            out.append(t.bindings)
        last = t
    return tuple(out)


def kleene_gpms(query: A.Query) -> frozenset[str]:
    """The GPMs used under a Kleene atom, ``+`` or bounded (each GPM is used once in SEQ)."""
    return frozenset(
        g for atom in query.seq.atoms if atom.modifier == A.KLEENE for g in A.operand_gpms(atom.operand)
    )


# ---------------------------------------------------------------- the functions

RunFunction = Callable[[tuple[Term, ...], "RunContext | None"], Term]


def _run(run: RunContext | None, name: str) -> RunContext:
    if run is None:
        raise FunctionError(f"spaseq:{name}() is only defined inside a GPM body of a SPAseq query")
    return run


def event_time(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:eventTime()``: the time of the event being matched (xsd:decimal seconds)."""
    arity(args, 0, 0, "eventTime")
    return seconds_literal(_run(run, "eventTime").event_time)


def event_stream(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:eventStream()``: the IRI of the stream the event arrived on."""
    arity(args, 0, 0, "eventStream")
    return NamedNode(_run(run, "eventStream").stream)


def run_start(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:runStart()``: the time of the run's first event (xsd:decimal seconds)."""
    arity(args, 0, 0, "runStart")
    return seconds_literal(_run(run, "runStart").start)


def _group(args: tuple[Term, ...], run: RunContext | None, name: str) -> list[Term]:
    arity(args, 1, 1, name)
    var = variable_name(args[0])
    return _run(run, name).values(var)


def count(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:count("v")``: how many iterations taken so far bound ?v (xsd:integer)."""
    return to_term(len(_group(args, run, "count")))


def sum_(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:sum("v")``: the sum of ?v over the iterations (0 when none; numeric promotion
    as SPARQL's ``+``; an error if a value is not numeric)."""
    return to_term(_sum(_group(args, run, "sum")))


def _sum(values: Sequence[Term]) -> object:
    total: object = 0
    try:
        for v in values:
            numeric_value(v)
            total = op_add(total, v)
    except ERRORS as err:
        raise FunctionError(f"cannot add the values: {err}") from None
    return total


def avg(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:avg("v")``: sum / count as SPARQL's ``/`` (integers give a decimal); an error
    when no iteration bound ?v."""
    values = _group(args, run, "avg")
    if not values:
        raise FunctionError("spaseq:avg over no iterations")
    try:
        return to_term(op_div(_sum(values), len(values)))
    except ERRORS as err:
        raise FunctionError(str(err)) from None


def _extreme(args: tuple[Term, ...], run: RunContext | None, name: str, sign: int) -> Term:
    values = _group(args, run, name)
    if not values:
        raise FunctionError(f"spaseq:{name} over no iterations")
    best = values[0]
    try:
        for v in values[1:]:
            order = compare_spec(v, best)
            if order == 2:
                raise FunctionError("NaN has no order")
            if order == sign:
                best = v
    except ERRORS as err:
        raise FunctionError(f"spaseq:{name}: {err}") from None
    return best


def min_(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:min("v")``: the least ?v (SPARQL ``<`` order); an error when there is none."""
    return _extreme(args, run, "min", -1)


def max_(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:max("v")``: the greatest ?v (SPARQL ``<`` order); an error when there is none."""
    return _extreme(args, run, "max", 1)


def first(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:first("v")``: ?v of the earliest iteration taken (RSEP-QL's FIRST over the
    iterations, decision 65); an error when there is none."""
    values = _group(args, run, "first")
    if not values:
        raise FunctionError("spaseq:first over no iterations")
    return values[0]


def last(args: tuple[Term, ...], run: RunContext | None) -> Term:
    """``spaseq:last("v")``: ?v of the latest iteration taken; an error when there is none."""
    values = _group(args, run, "last")
    if not values:
        raise FunctionError("spaseq:last over no iterations")
    return values[-1]


#: local name -> implementation
RUN_FUNCTIONS: dict[str, RunFunction] = {
    "eventTime": event_time,
    "eventStream": event_stream,
    "runStart": run_start,
    "count": count,
    "sum": sum_,
    "min": min_,
    "max": max_,
    "avg": avg,
    "first": first,
    "last": last,
}
AGGREGATES = frozenset({"count", "sum", "min", "max", "avg", "first", "last"})
RUN_FUNCTION_IRIS = frozenset(SPASEQ_NS + n for n in RUN_FUNCTIONS)


# ---------------------------------------------------------------- finding calls in the algebra


def calls(expr: A.Expr) -> Iterator[A.ECall]:
    """Every call to a spaseq function in an expression (EXISTS patterns included)."""
    if isinstance(expr, A.ECall):
        if expr.op.startswith("<" + SPASEQ_NS) and expr.op.endswith(">"):
            yield expr
        for a in expr.args:
            yield from calls(a)
    elif isinstance(expr, A.EExists):
        yield from pattern_calls(expr.pattern)


def pattern_calls(group: A.GroupPattern) -> Iterator[A.ECall]:
    """Every spaseq function call in a group pattern, nested groups included."""
    for el in group.walk():
        if isinstance(el, A.Filter | A.Bind):
            yield from calls(el.expr)


def is_run_call(call: A.ECall) -> bool:
    return call.op[1:-1] in RUN_FUNCTION_IRIS


def expr_calls_run(expr: A.Expr) -> bool:
    """Does this expression call a run function (so it depends on the run)?"""
    return any(is_run_call(c) for c in calls(expr))


def calls_run_functions(group: A.GroupPattern) -> bool:
    """Does the body call a run function anywhere (it must then get a RunContext)?"""
    return any(is_run_call(c) for c in pattern_calls(group))


def run_calls_only_in_top_filters(group: A.GroupPattern) -> bool:
    """True when every run-function call sits in a top-level FILTER of the body, so that the
    rest of the body (its base solutions) stays context- and run-free."""
    top = {id(el) for el in group.elements if isinstance(el, A.Filter)}
    for el in group.walk():
        if isinstance(el, A.Filter | A.Bind) and id(el) not in top and expr_calls_run(el.expr):
            return False
        if isinstance(el, A.SubSelect) and calls_run_functions(el.pattern):
            return False
    return True


def literal_name(term: object) -> str | None:
    """The variable name a constant aggregate argument gives, or None."""
    if isinstance(term, Literal):
        try:
            return variable_name(term)
        except FunctionError:
            return None
    return None
