"""pyoxigraph's SPARQL engine as the GPM evaluator for bodies the compiled path does not cover
(SEMANTICS.md section 2): the one home of what the reference evaluator (``sparql_eval``) and
the incremental engine's fallback (``matcher``) share.

Events and KB graphs live in one pyoxigraph store: each event is a named graph under an
internal name (``EVENT_GRAPH_PREFIX``), and a GPM body runs with that graph as the default
graph and the KB's graphs as the named graphs, so ``GRAPH <kb> {...}`` queries the KB. The
context mu is joined in as a leading ``VALUES`` block (blank nodes, which VALUES cannot hold,
go through pyoxigraph's substitutions instead). The store keeps literals in canonical form
(``"14.0"^^xsd:double`` comes back as ``"14"``), so each event's own spellings are remembered
and put back into the solutions, which are deduplicated.

Which KB quads the store holds, and for how long events stay, is the users' business: the
reference loads all of the KB (it is the oracle) and keeps every event; the engine copies
only the relevant KB quads and drops events once processed (``matcher.EventGraphs``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pyoxigraph import BlankNode, NamedNode, Quad, Store, Variable

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.gpm_texts import GpmTexts
from spaseq.engine.events import Event
from spaseq.engine.functions.registry import pyoxigraph_functions
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.matches import Term

EVENT_GRAPH_PREFIX = "urn:spaseq:event:"

Solution = dict[str, Term]
Spellings = dict[Term, Term]  # the store's canonical term -> the event's own spelling


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


_STATIC_FUNCTIONS = pyoxigraph_functions()


def query_functions(c: GpmTexts, run: RunContext | None) -> dict | None:
    """The custom_functions a query of this body needs: none for bodies without spaseq calls,
    the run functions answering for ``run`` where the body is run-aware."""
    if not c.functions:
        return None
    return pyoxigraph_functions(run=run) if run is not None else _STATIC_FUNCTIONS


def spellings(events: Sequence[Event]) -> list[Spellings]:
    """Per event, its object terms the store would canonicalise (literals, and triple terms
    holding them), from the canonical form back to the event's spelling; where an event spells
    one canonical term several ways, its first triple's spelling wins. One scratch store for
    all the events."""
    objects = list(dict.fromkeys(
        t.object for e in events for t in e.triples if not isinstance(t.object, NamedNode | BlankNode)
    ))
    if not objects:
        return [{} for _ in events]
    scratch = Store()
    probe = NamedNode("urn:spaseq:probe")
    scratch.extend(Quad(NamedNode(f"urn:spaseq:l:{i}"), probe, o) for i, o in enumerate(objects))
    canonical = {}
    for q in scratch.quads_for_pattern(None, probe, None):
        original = objects[int(q.subject.value.rsplit(":", 1)[1])]
        if q.object != original:
            canonical[original] = q.object
    out = []
    for e in events:
        back: Spellings = {}
        for t in e.triples:
            c = canonical.get(t.object)
            if c is not None:
                back.setdefault(c, t.object)
        out.append(back)
    return out


def _solution(row, names: Iterable[str], back: Spellings) -> Solution:
    return {n: back.get(row[n], row[n]) for n in names if row[n] is not None}


def _key(sol: Solution) -> tuple:
    return tuple(sorted(sol.items(), key=lambda kv: kv[0]))


class SparqlStore:
    """A pyoxigraph store of event graphs and KB graphs, queried one event graph at a time
    (the default graph) with the KB graphs as named graphs."""

    def __init__(self) -> None:
        self.store = Store()
        self.kb_graphs: list[NamedNode | BlankNode] = []
        self._spellings: dict[NamedNode, Spellings] = {}
        self._counter = 0

    def load_kb(self, kb: Store) -> None:
        """Copy all of ``kb`` into the store; its named graphs become the queries' named graphs."""
        self.store.extend(kb)
        self.kb_graphs = list(kb.named_graphs())

    # ------------------------------------------------------------------ events

    def add_events(self, events: Sequence[Event]) -> list[NamedNode]:
        """Store each event as a new named graph (remembering its literals' spellings)."""
        graphs = []
        quads = []
        for e, back in zip(events, spellings(events), strict=True):
            g = NamedNode(f"{EVENT_GRAPH_PREFIX}{self._counter}")
            self._counter += 1
            graphs.append(g)
            quads.extend(Quad(t.subject, t.predicate, t.object, g) for t in e.triples)
            if back:
                self._spellings[g] = back
        self.store.extend(quads)
        return graphs

    def remove_event(self, graph: NamedNode) -> None:
        """Drop an event graph (and its spellings)."""
        self.store.remove_graph(graph)
        self._spellings.pop(graph, None)

    # ------------------------------------------------------------------ queries

    def select(self, text: str, graph: NamedNode, query: A.Query,
               subst: dict[Variable, Term] | None = None, functions: dict | None = None) -> list[Solution]:
        """The distinct solutions of SELECT ``text`` (of ``query``'s prefixes and base) with
        event ``graph`` as the default graph, in the event's spellings."""
        result = self.store.query(
            text,
            default_graph=graph,
            named_graphs=self.kb_graphs,
            prefixes=query.prefixes,
            base_iri=query.base,
            substitutions=subst or None,
            custom_functions=functions,
        )
        names = [v.value for v in result.variables]
        back = self._spellings.get(graph, {})
        out: list[Solution] = []
        seen: set[tuple] = set()
        for row in result:
            sol = _solution(row, names, back)
            key = _key(sol)
            if key not in seen:
                seen.add(key)
                out.append(sol)
        return out

    def body(self, c: GpmTexts, graph: NamedNode, query: A.Query, mu: Mapping[str, Term],
             run: RunContext | None = None) -> list[Solution]:
        """The solutions nu of ``VALUES(mu) . body`` on the event (``run``: for run functions)."""
        values, subst = values_clause(mu)
        return self.select(f"SELECT {c.projection} WHERE {{ {values}{c.body_inner} }}", graph, query,
                           subst, query_functions(c, run))

    def filterless(self, c: GpmTexts, graph: NamedNode, query: A.Query) -> list[Solution]:
        """Solutions of a join-shaped body without its FILTERs and without context."""
        return self.select(f"SELECT {c.projection} WHERE {c.filterless}", graph, query,
                           functions=query_functions(c, None))

    def filters_hold(self, c: GpmTexts, graph: NamedNode, query: A.Query, merged: Mapping[str, Term],
                     run: RunContext | None = None) -> bool:
        """Whether the body's FILTERs all hold on ``merged`` (a context joined with a solution)."""
        values, subst = values_clause(merged)
        filters = " ".join(f"FILTER({f})" for f in c.filters)
        projection = " ".join(f"?{v}" for v in sorted(merged)) or "*"
        return bool(self.select(f"SELECT {projection} WHERE {{ {values}{filters} }}", graph, query,
                                subst, query_functions(c, run)))

    def filterless_each(self, c: GpmTexts, graphs: Sequence[NamedNode],
                        query: A.Query) -> dict[NamedNode, list[Solution]]:
        """``filterless`` for many events with one query: ``GRAPH ?g { body }`` over the event
        graphs makes each event the active graph, exactly as running the body with that event
        as default graph. Only for bodies without GRAPH clauses (inside ``GRAPH ?g`` they would
        see the event graphs as named graphs)."""
        out: dict[NamedNode, list[Solution]] = {g: [] for g in graphs}
        graph_var = "_spaseq_event_graph"
        result = self.store.query(
            f"SELECT ?{graph_var} {c.projection} WHERE {{ GRAPH ?{graph_var} {c.filterless} }}",
            default_graph=[],
            named_graphs=list(out),
            prefixes=query.prefixes,
            base_iri=query.base,
            custom_functions=query_functions(c, None),
        )
        names = [v.value for v in result.variables if v.value != graph_var]
        seen: set[tuple] = set()
        for row in result:
            g = row[graph_var]
            sol = _solution(row, names, self._spellings.get(g, {}))
            key = (g, _key(sol))
            if key not in seen:
                seen.add(key)
                out[g].append(sol)
        return out
