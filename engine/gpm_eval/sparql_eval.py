"""Evaluating one GPM on one event in a context, with pyoxigraph's SPARQL engine
(SEMANTICS.md section 2): the reference evaluator's GPM evaluation.

The store, the event graphs, the literal spellings and the queries are ``sparql_store``'s
(shared with the engine's fallback); this module adds what the reference needs: all of the
KB (independently of ``compile.kb_relevance``: it is an oracle), every event kept for the
whole evaluation, and per-event caches.

Join-shaped bodies (``compile.gpm_texts``) are evaluated once per event without their
FILTERs, then per context by compatibility and the FILTERs alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyoxigraph import NamedNode, Store

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.gpm_texts import GpmTexts
from spaseq.engine.events import Event
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.gpm_eval.sparql_store import Node, Solution, SparqlStore, compatible


@dataclass
class GpmEvaluator:
    """Evaluates the GPMs of one query on events held in a shared pyoxigraph store."""

    query: A.Query
    kb: Store | None = None
    sparql: SparqlStore = field(default_factory=SparqlStore)
    _graphs: dict[int, NamedNode] = field(default_factory=dict)
    _compiled: dict[str, GpmTexts] = field(default_factory=dict)
    _base_cache: dict[tuple[str, int], list[Solution]] = field(default_factory=dict)
    _cache: dict[tuple, list[Solution]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kb is not None:  # all of it, independently of kb_relevance (an oracle)
            from spaseq.engine.gpm_eval.kb_source import kb_source

            self.sparql.load_kb(kb_source(self.kb).store)
        self._compiled = {name: GpmTexts.of(ev) for name, ev in self.query.events.items()}

    @property
    def store(self) -> Store:
        return self.sparql.store

    def add_events(self, events: Iterable[Event]) -> None:
        events = list(events)
        for e, g in zip(events, self.sparql.add_events(events), strict=True):
            self._graphs[id(e)] = g

    def compiled(self, gpm: str) -> GpmTexts:
        return self._compiled[gpm]

    def base_solutions(self, gpm: str, event: Event) -> list[Solution]:
        """Solutions of a join-shaped body without its FILTERs and without context."""
        key = (gpm, id(event))
        if key not in self._base_cache:
            self._base_cache[key] = self.sparql.filterless(self._compiled[gpm], self._graphs[id(event)],
                                                           self.query)
        return self._base_cache[key]

    def solutions(self, gpm: str, event: Event, mu: Mapping[str, Node],
                  run: RunContext | None = None) -> list[Solution]:
        """eval(gpm, event, mu): every mu ∪ nu, nu a solution of VALUES(mu) . body. ``run``:
        the run being extended, for bodies calling run functions (``c.run_aware``)."""
        c = self._compiled[gpm]
        relevant = {v: t for v, t in mu.items() if v in c.mentioned}
        key: tuple[object, ...] = (gpm, id(event), tuple(sorted(relevant.items(), key=lambda kv: kv[0])))
        if c.run_aware:
            key += (run,)
        local = self._cache.get(key)
        if local is None:
            local = self._solve(c, event, relevant, run if c.run_aware else None)
            self._cache[key] = local
        # mu's own spelling of its values (pyoxigraph answers a VALUES term canonically:
        # "1e0"^^xsd:double comes back as "1"; decision 7 keeps the event's spelling)
        return [{**nu, **mu} for nu in local]

    def _solve(self, c: GpmTexts, event: Event, relevant: dict[str, Node],
               run: RunContext | None = None) -> list[Solution]:
        graph = self._graphs[id(event)]
        if not c.join_shaped:
            return self.sparql.body(c, graph, self.query, relevant, run)
        out: list[Solution] = []
        for nu in self.base_solutions(c.event.name, event):
            if not compatible(nu, relevant):
                continue
            merged = {**relevant, **nu}
            if not c.filters or self.sparql.filters_hold(c, graph, self.query, merged, run):
                out.append(self.sparql.spelled(c, graph, merged, relevant))
        return out
