"""The one table of spaseq SPARQL functions (IRI -> implementation) and its registration with
pyoxigraph (``Store.query(..., custom_functions=pyoxigraph_functions(store))``) and rdflib
(``rdflib_functions.register_rdflib()``, through rdflib's ``register_custom_function``).

Both stores call the same implementation on pyoxigraph terms, so they give the same results.
A bad argument is a SPARQL error in both: pyoxigraph gets None (an unbound result), rdflib a
``SPARQLError``; no Python exception reaches either store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyoxigraph import NamedNode, Store, Triple

from spaseq.engine.functions import run_functions as R
from spaseq.engine.functions import stream_functions as S
from spaseq.engine.functions.arguments import FunctionError, Term
from spaseq.engine.values.kinds import ERRORS
from spaseq.engine.values.terms import to_term
from spaseq.engine.vocab import GENERATED_AT_TIME, SPASEQ_NS


@dataclass(frozen=True)
class Environment:
    """What a call may consult: timestamps of event graphs, and the run (in GPM bodies)."""

    lookup: S.TimeLookup | None = None
    run: R.RunContext | None = None


Implementation = Callable[[tuple[Term, ...], Environment], Term]


def _stream(fn: Callable) -> Implementation:
    return lambda args, env: fn(args, env.lookup)


def _run(fn: Callable) -> Implementation:
    return lambda args, env: fn(args, env.run)


#: spaseq local name -> implementation; every function of the namespace is here.
FUNCTIONS: dict[str, Implementation] = {
    "timestamp": _stream(S.timestamp),
    "ordered": _stream(S.ordered),
    "within": _stream(S.within),
    **{name: _run(fn) for name, fn in R.RUN_FUNCTIONS.items()},
}
FUNCTION_IRIS: dict[str, Implementation] = {SPASEQ_NS + n: f for n, f in FUNCTIONS.items()}


def call(iri: str, args: tuple[Term, ...], env: Environment) -> Term:
    """Apply the function named ``iri``; FunctionError for a bad call (any Python failure in
    an implementation is turned into one, so that it stays a SPARQL error)."""
    fn = FUNCTION_IRIS.get(iri)
    if fn is None:
        raise FunctionError(f"<{iri}> is not a spaseq function")
    try:
        return fn(tuple(args), env)
    except FunctionError:
        raise
    except Exception as err:  # noqa: BLE001 - a store must never see a Python exception
        raise FunctionError(f"<{iri}>: {err}") from None


def call_values(iri: str, run: R.RunContext | None, values: tuple) -> Term:
    """``call`` for the engine's compiled FILTERs, whose arguments are expression values
    (terms or computed Python values, see ``values.kinds``)."""
    try:
        args = tuple(to_term(v) for v in values)
    except ERRORS as err:
        raise FunctionError(str(err)) from None
    return call(iri, args, Environment(None, run))


# ---------------------------------------------------------------- pyoxigraph


#: The ``custom_functions`` argument of pyoxigraph's ``Store.query``, typed as its stubs type it: a
#: dict is invariant in its values, so one whose functions are said to never return a quoted
#: triple (none does) would not be accepted there.
CustomFunctions = dict[NamedNode, Callable[..., Term | Triple | None]]


def pyoxigraph_functions(
    store: Store | None = None,
    *,
    run: R.RunContext | None = None,
    time_predicate: NamedNode = GENERATED_AT_TIME,
) -> CustomFunctions:
    """The ``custom_functions`` argument of ``Store.query``: every spaseq function, reading
    event-graph timestamps from ``store``'s default graph (``time_predicate``), and the run
    functions answering for ``run`` (without one they are errors)."""
    env = Environment(S.store_lookup(store, time_predicate) if store is not None else None, run)

    def bind(iri: str) -> Callable[..., Term | None]:
        def function(*args: Term) -> Term | None:
            try:
                return call(iri, args, env)
            except FunctionError:
                return None

        return function

    return {NamedNode(iri): bind(iri) for iri in FUNCTION_IRIS}
