"""A query's output as a stream of graph events (docs/decisions.md, "MATCH as RDF").

Every result of a query (a match after SELECT's projection and DISTINCT) becomes one event on
the query's *output stream* (an IRI): timestamped with the match's ``time``, named
``<output>#match-<k>`` (k = 1, 2, ... in completion order), holding the CONSTRUCT template
instantiated with the match's mapping, or, for a SELECT query, the match described in the
spaseq vocabulary (``match_rdf``). TriG output, materialisation and composed queries all
consume these events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import pyoxigraph
from pyoxigraph import NamedNode, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.events import Event
from spaseq.engine.matches import Match, MatchTimes, Projector, Row
from spaseq.engine.native_core import _native
from spaseq.engine.output.native import row_values, template_terms
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, dated, input_dated


def match_name(output: str, k: int) -> NamedNode:
    """The graph name of the k-th result of the query whose output stream is ``output``
    (the core's ``<output#match-k>``)."""
    return NamedNode(_native.result_name(output, k))


def result_graph(output: str, k: int, row: Row, template: Sequence[A.TriplePattern] | None,
                 time_format: str = DEFAULT_TIME_FORMAT) -> tuple[Triple, ...]:
    """The graph of the k-th result (``row``) of the query whose output stream is ``output``,
    made by the core (``spaseq_output::derive``): ``template`` instantiated with the row's
    bindings (a CONSTRUCT query; fresh blank nodes), or with None the match described in the
    spaseq vocabulary, its times written as ``time_format`` says (docs/vocabulary.md)."""
    time, start, bindings, taken = row_values(row)
    if time_format != "input":  # every event's time written as the format says (times.event_dated)
        taken = [(atom, stream, ns, time_format == "dateTime", graph) for atom, stream, ns, _, graph in taken]
    _, text = _native.derived_graph(output, k, time, start, dated(row.match, time_format), bindings, taken,
                                    None if template is None else template_terms(template))
    return tuple(q.triple for q in pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.N_TRIPLES))


@dataclass
class Derived(MatchTimes):
    """One result of a query as a graph event of its output stream."""

    row: Row
    name: NamedNode
    stream: str
    query: A.Query = field(repr=False)
    number: int = 0  # k: the query's k-th result (its name is <output#match-k>)

    @property
    def match(self) -> Match:
        """The match this result came from (its ``time`` and ``start`` are the event's)."""
        return self.row.match

    @cached_property
    def triples(self) -> tuple[Triple, ...]:
        """The event's graph: the instantiated template, or the match in the vocabulary."""
        template = self.query.match.template if self.query.match.is_construct else None
        return result_graph(self.stream, self.number, self.row, template)

    def event(self, seq: int = 0) -> Event:
        """The derived event, for queries that consume this output stream (dated as its
        match's times are in the input's form)."""
        return Event(self.stream, self.time, self.triples, seq, self.name, f"<{self.stream}>",
                     input_dated(self.match))


class QueryOutput:
    """Turns a query's matches into its output events (projection, DISTINCT, numbering) and
    hands each to the listeners (writers, materialisation, consuming queries)."""

    def __init__(self, query: A.Query, iri: str) -> None:
        self.query = query
        self.iri = iri
        self._projector = Projector(query.match.variables, query.match.distinct)
        self._count = 0
        self.listeners: list[Callable[[Derived], None]] = []

    def derive(self, match: Match) -> Derived | None:
        """The output event of ``match``, or None when DISTINCT drops its row."""
        row = self._projector(match)
        if row is None:
            return None
        self._count += 1
        return Derived(row, match_name(self.iri, self._count), self.iri, self.query, self._count)

    def __call__(self, match: Match) -> None:
        if not self.listeners:  # nobody consumes the output stream: skip projection and naming
            return
        derived = self.derive(match)
        if derived is not None:
            for listener in self.listeners:
                listener(derived)
