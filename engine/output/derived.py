"""A query's output as a stream of graph events (docs/decisions.md, "MATCH as RDF").

Every result of a query (a match after SELECT's projection and DISTINCT) becomes one event on
the query's *output stream* (an IRI): timestamped with the match's ``time``, named
``<output>#match-<k>`` (k = 1, 2, ... in completion order: the core numbers the results,
``Match.number``), holding the CONSTRUCT template instantiated with the match's mapping, or,
for a SELECT query, the match described in the spaseq vocabulary (``match_rdf``). The core
makes these graphs (``spaseq_output::derive``) and feeds them to the queries reading the
output stream itself; here they reach Python's listeners: ``on_output`` callbacks,
materialisation, and ``spaseq run`` writing composed or materialised results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import pyoxigraph
from pyoxigraph import NamedNode, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.matches import Match, MatchTimes, Row, project_row
from spaseq.engine.native_core import _native
from spaseq.engine.output.native import row_values, template_terms
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, dated


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


class QueryOutput:
    """Turns a query's results into its output events and hands each to the listeners
    (writers, materialisation, ``on_output``)."""

    def __init__(self, query: A.Query, iri: str) -> None:
        self.query = query
        self.iri = iri
        self.listeners: list[Callable[[Derived], None]] = []

    def __call__(self, match: Match) -> None:
        """An engine's released match: its row as the core numbered it (nothing when DISTINCT
        dropped it)."""
        if self.listeners and match.number is not None:  # else: no projection, no naming
            self._emit(project_row(match, self.query.match.variables), match.number)

    def rows(self, rows: Iterable[Row]) -> None:
        """Results found elsewhere (the reference evaluator's, projected and past DISTINCT),
        numbered in their order."""
        for k, row in enumerate(rows, 1):
            self._emit(row, k)

    def _emit(self, row: Row, k: int) -> None:
        derived = Derived(row, match_name(self.iri, k), self.iri, self.query, k)
        for listener in self.listeners:
            listener(derived)
