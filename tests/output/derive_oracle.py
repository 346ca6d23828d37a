"""The oracle of the core's output events (engine/native/output/src/derive.rs): a result's
graph as the Python engine made it before the core did (``Derived.triples`` and the
materialised match descriptions are the core's now, ``output.derived.result_graph``). A
CONSTRUCT template instantiated with one match's mapping, as SPARQL 1.1 section 16.2 does for
one solution (blank nodes fresh per match; a template triple with an unbound variable, or one
that would not be valid RDF, skipped), and a match described in the spaseq vocabulary
(docs/vocabulary.md), times in the input's form unless ``time_format`` says otherwise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.matches import Match, Term
from spaseq.engine.output.derived import Derived
from spaseq.engine.output.match_rdf import (
    ATOM,
    BINDING,
    EVENT,
    EVENT_TIME,
    GRAPH,
    ITERATION,
    MATCH,
    POSITION,
    QUERY,
    START,
    STREAM,
    TIME,
    VALUE,
    VARIABLE,
)
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, dated, event_dated, time_literal
from spaseq.engine.vocab import RDF_TYPE, XSD_INTEGER


def graph_of(derived: Derived) -> list[Triple]:
    """A result's graph: its query's template instantiated, or its match described."""
    query = derived.query
    if query.match.is_construct:
        return instantiate(query.match.template, derived.row.bindings)
    return describe(derived.row.match, derived.row.bindings, derived.name, NamedNode(derived.stream))


def instantiate(template: Sequence[A.TriplePattern], mapping: Mapping[str, Term]) -> list[Triple]:
    """The triples of ``template`` under ``mapping``, in template order, without repeats."""
    fresh: dict[str, BlankNode] = {}
    out: dict[Triple, None] = {}
    for tp in template:
        s = _term(tp.subject, mapping, fresh)
        p = _term(tp.predicate, mapping, fresh)  # type: ignore[arg-type]
        o = _term(tp.object, mapping, fresh)
        if s is None or o is None or not isinstance(p, NamedNode) or isinstance(s, Literal):
            continue
        out[Triple(s, p, o)] = None
    return list(out)


def _term(t: A.PatternTerm, mapping: Mapping[str, Term],
          fresh: dict[str, BlankNode]) -> Term | None:
    if not isinstance(t, A.Var):
        return t
    if t.is_blank:
        if t.name not in fresh:
            fresh[t.name] = BlankNode()
        return fresh[t.name]
    return mapping.get(t.name)


def describe(match: Match, bindings: Mapping[str, Term], subject: NamedNode | BlankNode,
             query: NamedNode, time_format: str = DEFAULT_TIME_FORMAT) -> list[Triple]:
    """One match in the spaseq vocabulary: its query, times (as ``time_format`` says),
    events taken and ``bindings``."""
    as_datetime = dated(match, time_format)
    out = [
        Triple(subject, RDF_TYPE, MATCH),
        Triple(subject, QUERY, query),
        Triple(subject, TIME, time_literal(match.time, as_datetime)),
        Triple(subject, START, time_literal(match.start, as_datetime)),
    ]
    iterations: dict[str, int] = {}
    for position, taken in enumerate(match.taken, 1):
        iterations[taken.atom] = iterations.get(taken.atom, 0) + 1
        node = BlankNode()
        e = taken.event
        out += [
            Triple(subject, EVENT, node),
            Triple(node, ATOM, Literal(taken.atom)),
            Triple(node, STREAM, NamedNode(e.stream)),
            Triple(node, EVENT_TIME, time_literal(e.time, event_dated(e, time_format))),
            Triple(node, POSITION, Literal(str(position), datatype=XSD_INTEGER)),
            Triple(node, ITERATION, Literal(str(iterations[taken.atom]), datatype=XSD_INTEGER)),
        ]
        if e.name is not None:
            out.append(Triple(node, GRAPH, e.name))
    for var, term in bindings.items():
        node = BlankNode()
        out += [
            Triple(subject, BINDING, node),
            Triple(node, VARIABLE, Literal(var)),
            Triple(node, VALUE, term),
        ]
    return out
