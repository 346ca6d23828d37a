"""spaseq functions for plain SPARQL over recorded streams (what C-SPARQL users write with
timestamp functions): an event graph's timestamp, "strictly ordered in time" and "within a
duration".

A *time argument* is either an event graph's name (an IRI or blank node, looked up by the
recording convention: ``<graph> prov:generatedAtTime "..."`` in the default graph, as in
replay files) or a timestamp literal itself (``xsd:dateTime``, or a number of seconds).
Times are returned as ``xsd:decimal`` seconds since the Unix epoch (SEMANTICS.md section 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Store, Triple

from spaseq.engine.functions.arguments import (
    FunctionError,
    Term,
    arity,
    duration_seconds,
    literal_seconds,
)
from spaseq.engine.values.timestamps import exact_seconds, seconds_literal, to_seconds
from spaseq.engine.vocab import GENERATED_AT_TIME, XSD_BOOLEAN

#: An event graph's name (a time argument that is not a literal).
GraphName = NamedNode | BlankNode

#: Finds the timestamp (seconds) of an event graph, or None when it has none.
TimeLookup = Callable[[GraphName], "Decimal | None"]


def time_of(term: Term, lookup: TimeLookup | None) -> Decimal:
    """A time argument in seconds: a timestamp literal, or an event graph's timestamp."""
    if isinstance(term, Literal):
        return literal_seconds(term)
    seconds = lookup(term) if lookup is not None else None
    if seconds is None:
        raise FunctionError(f"{term} is not an event graph with a timestamp")
    return seconds


def one_time(values: Iterable[Term | Triple], graph: Term) -> Decimal | None:
    """The time the timestamp triples of one graph agree on (an error if they disagree; a
    quoted triple, which an RDF-star store may hold, is not a time)."""
    times = set()
    for v in values:
        try:
            times.add(to_seconds(v))
        except ValueError as err:
            raise FunctionError(f"the timestamp of {graph}: {err}") from None
    if len(times) > 1:
        raise FunctionError(f"{graph} has several different timestamps")
    return times.pop() if times else None


def store_lookup(store: Store, predicate: NamedNode = GENERATED_AT_TIME) -> TimeLookup:
    """Timestamps from a pyoxigraph store's default graph."""

    def lookup(graph: GraphName) -> Decimal | None:
        objects = [q.object for q in store.quads_for_pattern(graph, predicate, None, DefaultGraph())]
        return one_time(objects, graph)

    return lookup


# ---------------------------------------------------------------- the functions


def timestamp(args: tuple[Term, ...], lookup: TimeLookup | None) -> Term:
    """``spaseq:timestamp(?g)``: the event graph's timestamp, xsd:decimal seconds."""
    arity(args, 1, 1, "timestamp")
    return seconds_literal(time_of(args[0], lookup))


def ordered(args: tuple[Term, ...], lookup: TimeLookup | None) -> Term:
    """``spaseq:ordered(?a, ?b, ...)``: true iff the times strictly increase left to right."""
    arity(args, 2, None, "ordered")
    times = [exact_seconds(time_of(a, lookup)) for a in args]
    return _boolean(all(x < y for x, y in zip(times, times[1:], strict=False)))


def within(args: tuple[Term, ...], lookup: TimeLookup | None) -> Term:
    """``spaseq:within(?a, ?b, ..., duration)``: true iff the latest and the earliest of the
    times are at most ``duration`` (an xsd:dayTimeDuration) apart, in either order."""
    arity(args, 3, None, "within")
    limit = duration_seconds(args[-1])
    times = [exact_seconds(time_of(a, lookup)) for a in args[:-1]]
    return _boolean(max(times) - min(times) <= limit)


def _boolean(value: bool) -> Literal:
    return Literal("true" if value else "false", datatype=XSD_BOOLEAN)
