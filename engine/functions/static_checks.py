"""Compile-time checks of the spaseq function calls in a query's GPM bodies: unknown names,
wrong argument counts, and aggregates that do not name a Kleene+ variable by a string, each
reported where the body is (a mistake there would otherwise only make a FILTER false)."""

from __future__ import annotations

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import QueryError
from spaseq.engine.functions.registry import FUNCTIONS
from spaseq.engine.functions.run_functions import AGGREGATES, kleene_gpms, literal_name, pattern_calls
from spaseq.engine.vocab import SPASEQ_NS

#: local name -> (least, most) arguments; most None: any number
ARITY: dict[str, tuple[int, int | None]] = {
    "timestamp": (1, 1), "ordered": (2, None), "within": (3, None),
    "eventTime": (0, 0), "eventStream": (0, 0), "runStart": (0, 0),
    **{name: (1, 1) for name in AGGREGATES},
}


def check_calls(query: A.Query) -> None:
    """Raise QueryError for the first bad spaseq function call in a GPM body."""
    kleene = kleene_gpms(query)
    kleene_vars = set().union(*(query.events[g].variables for g in kleene if g in query.events))
    for ev in query.events.values():
        for call in pattern_calls(ev.pattern):
            _check_call(ev, call, kleene_vars)


def _check_call(ev: A.EventPattern, call: A.ECall, kleene_vars: set[str]) -> None:
    name = call.op[1 + len(SPASEQ_NS):-1]
    where = ev.pattern.location or ev.location
    if name not in FUNCTIONS:
        known = ", ".join(f"spaseq:{n}" for n in FUNCTIONS)
        raise QueryError(f"GPM {ev.name}: spaseq:{name} is not a spaseq function (known: {known})", where)
    low, high = ARITY[name]
    if len(call.args) < low or (high is not None and len(call.args) > high):
        expected = str(low) if low == high else f"at least {low}"
        raise QueryError(
            f"GPM {ev.name}: spaseq:{name} takes {expected} argument{'s' * (expected != '1')}, "
            f"got {len(call.args)}",
            where,
        )
    if name not in AGGREGATES:
        return
    arg = call.args[0]
    var = literal_name(arg.term) if isinstance(arg, A.ETerm) else None
    if var is None:
        hint = f'"{arg.name}"' if isinstance(arg, A.EVar) else '"amount"'
        raise QueryError(
            f"GPM {ev.name}: spaseq:{name} takes the name of a Kleene+ variable as a string, "
            f"e.g. spaseq:{name}({hint})",
            where,
        )
    if var not in kleene_vars:
        raise QueryError(
            f"GPM {ev.name}: spaseq:{name}(\"{var}\"): no Kleene+ atom's GPM binds ?{var}, so the "
            "group would always be empty",
            where,
        )
