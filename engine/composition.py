"""Composed queries: a query reads another query's output stream, in the same engine pass.

``Composition`` is what registration checks: the output IRIs, which query reads which, and
no cycle (the error names the queries around it, with their files). Running composed
queries is the core's (``spaseq-engine``'s ``composition.rs``, decision 60): it feeds a query
reading other queries' output its events, input and derived alike, in time order, as far as
the watermark of every query it reads allows (SEMANTICS.md "Composition").
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import Location, QueryError


class CycleError(QueryError):
    """Queries that consume each other's output (directly or through others)."""


@dataclass
class _Node:
    iri: str
    streams: frozenset[str]
    label: str


class Composition:
    """Which registered query's output feeds which query."""

    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def check(self, query: A.Query, iri: str) -> None:
        """Raise if registering ``query`` with output ``iri`` would reuse an output IRI or
        close a cycle (the error names the queries around it); changes nothing."""
        label = query_label(query, iri)
        if iri in self.nodes:
            raise QueryError(f"output stream <{iri}> is already the output of "
                             f"{self.nodes[iri].label}; give each query its own output IRI")
        nodes = {**self.nodes, iri: _Node(iri, frozenset(query.streams.values()), label)}
        graph = {n.iri: {u for u in n.streams if u in nodes} for n in nodes.values()}
        try:
            tuple(graphlib.TopologicalSorter(graph).static_order())
        except graphlib.CycleError as exc:
            cycle = list(reversed(list(dict.fromkeys(exc.args[1]))))  # consumer first
            steps = [f"{nodes[a].label} reads the output of {nodes[b].label}"
                     for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True)]
            raise CycleError("queries read each other's output in a cycle: " + "; ".join(steps),
                             query_location(query)) from None

    def add(self, query: A.Query, iri: str) -> None:
        self.nodes[iri] = _Node(iri, frozenset(query.streams.values()), query_label(query, iri))

    def upstream(self, query: A.Query) -> list[str]:
        """The output IRIs of registered queries that ``query`` reads."""
        return [s for s in dict.fromkeys(query.streams.values()) if s in self.nodes]

    def consumers(self, iri: str) -> list[str]:
        """The registered queries (by output IRI) that read ``iri``."""
        return [n.iri for n in self.nodes.values() if iri in n.streams]


def query_label(query: A.Query, iri: str) -> str:
    """How messages name a query: its file and output IRI."""
    return f"{query.file} <{iri}>" if query.file != "<query>" else f"<{iri}>"


def query_location(query: A.Query) -> Location | None:
    return Location(query.file) if query.file != "<query>" else None
