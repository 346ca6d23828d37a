"""Evaluating one GPM on one event in a context, with pyoxigraph's SPARQL engine
(SEMANTICS.md section 2).

All events and the knowledge base share one pyoxigraph store: each event is a named graph
under an internal name, and a GPM body runs with that graph as the default graph and the
KB's graphs as the named graphs, so ``GRAPH <kb> {...}`` queries the KB. The context mu is
joined in as a leading ``VALUES`` block (blank nodes, which VALUES cannot hold, go through
pyoxigraph's substitutions instead).

Bodies whose top level is only triples, GRAPH, VALUES, sub-groups, UNION and FILTER
("join-shaped") are evaluated once per event without their FILTERs, and then per context
by a compatibility check and the FILTERs alone: ``Filter(F, mu JOIN P) = Filter(F, {mu} JOIN
[[P]])``, which is exact for such bodies and avoids one full query per (run, event).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, Store, Variable

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.gpm_texts import GpmTexts
from spaseq.engine.events import Event
from spaseq.engine.functions.registry import pyoxigraph_functions
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.matches import Term

EVENT_GRAPH_PREFIX = "urn:spaseq:event:"

Solution = dict[str, Term]


def values_clause(mu: Mapping[str, Term]) -> tuple[str, dict[Variable, Term]]:
    """``VALUES (...) {(...)}`` text for the non-blank bindings of mu, and substitutions
    for the blank ones."""
    plain = {v: t for v, t in mu.items() if not isinstance(t, BlankNode)}
    subst = {Variable(v): t for v, t in mu.items() if isinstance(t, BlankNode)}
    if not plain:
        return "", subst
    names = sorted(plain)
    head = " ".join(f"?{v}" for v in names)
    row = " ".join(str(plain[v]) for v in names)
    return f"VALUES ({head}) {{ ({row}) }}\n", subst


def compatible(a: Mapping[str, Term], b: Mapping[str, Term]) -> bool:
    """SPARQL compatibility: the two mappings agree on every shared variable."""
    if len(a) > len(b):
        a, b = b, a
    for k, v in a.items():
        w = b.get(k)
        if w is not None and w != v:
            return False
    return True


@dataclass
class GpmEvaluator:
    """Evaluates the GPMs of one query on events held in a shared pyoxigraph store."""

    query: A.Query
    kb: Store | None = None
    store: Store = field(default_factory=Store)
    _graphs: dict[int, NamedNode] = field(default_factory=dict)
    _kb_graphs: list[NamedNode | BlankNode] = field(default_factory=list)
    _compiled: dict[str, GpmTexts] = field(default_factory=dict)
    _base_cache: dict[tuple[str, int], list[Solution]] = field(default_factory=dict)
    _cache: dict[tuple, list[Solution]] = field(default_factory=dict)
    _spellings: dict[int, dict[Literal, Literal]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kb is not None:  # all of it, independently of kbstore.relevance (an oracle)
            from spaseq.engine.gpm_eval.kb_source import kb_source

            kb = kb_source(self.kb).store
            self.store.extend(kb)
            self._kb_graphs = list(kb.named_graphs())
        self._compiled = {name: GpmTexts.of(ev) for name, ev in self.query.events.items()}

    def add_events(self, events: Iterable[Event]) -> None:
        events = list(events)
        quads = []
        for e in events:
            g = NamedNode(f"{EVENT_GRAPH_PREFIX}{len(self._graphs)}")
            self._graphs[id(e)] = g
            quads.extend(Quad(t.subject, t.predicate, t.object, g) for t in e.triples)
        self.store.extend(quads)
        self._remember_spellings(events)

    def _remember_spellings(self, events: list[Event]) -> None:
        """The store keeps literals in canonical form ("14.0"^^xsd:double comes back as
        "14"); solutions must show the event's own terms, so map them back per event."""
        originals = {t.object for e in events for t in e.triples if isinstance(t.object, Literal)}
        scratch = Store()
        probe = NamedNode("urn:spaseq:probe")
        ordered = list(originals)
        scratch.extend(
            Quad(NamedNode(f"urn:spaseq:l:{i}"), probe, lit) for i, lit in enumerate(ordered)
        )
        canonical = {}
        for q in scratch.quads_for_pattern(None, probe, None):
            canonical[ordered[int(q.subject.value.rsplit(":", 1)[1])]] = q.object
        for e in events:
            back = {}
            for t in e.triples:
                lit = t.object
                if isinstance(lit, Literal) and canonical.get(lit, lit) != lit:
                    back.setdefault(canonical[lit], lit)
            if back:
                self._spellings[id(e)] = back

    def _run(self, text: str, event: Event, subst: dict[Variable, Term],
             functions: dict | None = None) -> list[Solution]:
        graph = self._graphs[id(event)]
        result = self.store.query(
            text,
            default_graph=graph,
            named_graphs=self._kb_graphs,
            prefixes=self.query.prefixes,
            base_iri=self.query.base,
            substitutions=subst or None,
            custom_functions=functions,
        )
        names = [v.value for v in result.variables]
        back = self._spellings.get(id(event), {})
        out: list[Solution] = []
        seen: set[tuple] = set()
        for row in result:
            sol = {n: back.get(row[n], row[n]) for n in names if row[n] is not None}
            key = tuple(sorted(sol.items(), key=lambda kv: kv[0]))
            if key not in seen:
                seen.add(key)
                out.append(sol)
        return out

    def compiled(self, gpm: str) -> GpmTexts:
        return self._compiled[gpm]

    def base_solutions(self, gpm: str, event: Event) -> list[Solution]:
        """Solutions of a join-shaped body without its FILTERs and without context."""
        key = (gpm, id(event))
        if key not in self._base_cache:
            c = self._compiled[gpm]
            self._base_cache[key] = self._run(
                f"SELECT {c.projection} WHERE {c.filterless}", event, {}, query_functions(c, None)
            )
        return self._base_cache[key]

    def prefetch(self, gpm: str, events: list[Event]) -> None:
        """Fill the base-solution cache for many events with one query: ``GRAPH ?g { body }``
        over the event graphs makes each event the active graph, exactly as running the body
        with that event as default graph. Only for bodies without GRAPH clauses (inside
        ``GRAPH ?g`` they would see the event graphs as named graphs)."""
        c = self._compiled[gpm]
        todo = [e for e in events if (gpm, id(e)) not in self._base_cache]
        if not c.join_shaped or not todo or any(
            isinstance(el, A.GraphPattern) for el in c.event.pattern.walk()
        ):
            return
        by_graph = {self._graphs[id(e)]: e for e in todo}
        for e in todo:
            self._base_cache[(gpm, id(e))] = []
        graph_var = "_spaseq_event_graph"
        result = self.store.query(
            f"SELECT ?{graph_var} {c.projection} WHERE {{ GRAPH ?{graph_var} {c.filterless} }}",
            default_graph=[],
            named_graphs=list(by_graph),
            prefixes=self.query.prefixes,
            base_iri=self.query.base,
            custom_functions=query_functions(c, None),
        )
        names = [v.value for v in result.variables if v.value != graph_var]
        seen: set[tuple] = set()
        for row in result:
            e = by_graph[row[graph_var]]
            back = self._spellings.get(id(e), {})
            sol = {n: back.get(row[n], row[n]) for n in names if row[n] is not None}
            key = (id(e), tuple(sorted(sol.items(), key=lambda kv: kv[0])))
            if key not in seen:
                seen.add(key)
                self._base_cache[(gpm, id(e))].append(sol)

    def solutions(self, gpm: str, event: Event, mu: Mapping[str, Term],
                  run: RunContext | None = None) -> list[Solution]:
        """eval(gpm, event, mu): every mu ∪ nu, nu a solution of VALUES(mu) . body. ``run``:
        the run being extended, for bodies calling run functions (``c.run_aware``)."""
        c = self._compiled[gpm]
        relevant = {v: t for v, t in mu.items() if v in c.mentioned}
        key = (gpm, id(event), tuple(sorted(relevant.items(), key=lambda kv: kv[0])))
        if c.run_aware:
            key += (run,)
        local = self._cache.get(key)
        if local is None:
            local = self._solve(c, event, relevant, run if c.run_aware else None)
            self._cache[key] = local
        return [{**mu, **nu} for nu in local]

    def _solve(self, c: GpmTexts, event: Event, relevant: dict[str, Term],
               run: RunContext | None = None) -> list[Solution]:
        if not c.join_shaped:
            values, subst = values_clause(relevant)
            return self._run(
                f"SELECT {c.projection} WHERE {{ {values}{c.body_inner} }}", event, subst,
                query_functions(c, run),
            )
        out: list[Solution] = []
        for nu in self.base_solutions(c.event.name, event):
            if not compatible(nu, relevant):
                continue
            merged = {**relevant, **nu}
            if not c.filters or self._filters_hold(c, event, merged, run):
                out.append(merged)
        return out

    def _filters_hold(self, c: GpmTexts, event: Event, merged: Solution,
                      run: RunContext | None = None) -> bool:
        values, subst = values_clause(merged)
        filters = " ".join(f"FILTER({f})" for f in c.filters)
        projection = " ".join(f"?{v}" for v in sorted(merged)) or "*"
        rows = self._run(f"SELECT {projection} WHERE {{ {values}{filters} }}", event, subst,
                         query_functions(c, run))
        return bool(rows)


_STATIC_FUNCTIONS = pyoxigraph_functions()


def query_functions(c: GpmTexts, run: RunContext | None) -> dict | None:
    """The custom_functions a query of this body needs: none for bodies without spaseq calls,
    the run functions answering for ``run`` where the body is run-aware."""
    if not c.functions:
        return None
    return pyoxigraph_functions(run=run) if run is not None else _STATIC_FUNCTIONS
