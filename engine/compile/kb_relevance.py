"""Which knowledge-base quads a query's GRAPH patterns can use (the paper's Section 8,
Question 2: the background KB is materialised only for the patterns the query uses).

Every quad a solution of a GRAPH subpattern uses matches one of the triple patterns written
inside it, so keeping the quads that match some pattern (graph, predicate and constant IRIs;
variables, blank nodes and literals are wildcards) changes no query answer. Property paths
keep every IRI they name; negated property sets keep any predicate; a zero-length path
(``p*``, ``p?``) or an empty ``GRAPH g {}`` keeps the whole graph, since they match its nodes.
Quads in the default graph are never visible to GRAPH clauses and are never kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pyoxigraph import NamedNode, Quad, Store

from spaseq.engine.algebra import operators as A


@dataclass(frozen=True)
class QuadPattern:
    """IRIs a quad must have in each position; None is a wildcard."""

    graph: str | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None

    def matches(self, g: str, s: str, p: str, o: str) -> bool:
        return ((self.graph is None or self.graph == g) and (self.subject is None or self.subject == s)
                and (self.predicate is None or self.predicate == p)
                and (self.object is None or self.object == o))


@dataclass(frozen=True)
class QuadFilter:
    """The union of the quad patterns of one or more queries (picklable, for Spark executors)."""

    patterns: tuple[QuadPattern, ...]

    def keeps(self, quad: Quad) -> bool:
        """Whether a GRAPH clause of the query could use this quad."""
        g = quad.graph_name
        if not isinstance(g, NamedNode):
            return False
        gv, s, p, o = g.value, _iri(quad.subject), quad.predicate.value, _iri(quad.object)
        return any(pat.matches(gv, s, p, o) for pat in self.patterns)

    def union(self, other: QuadFilter) -> QuadFilter:
        return QuadFilter(tuple(dict.fromkeys(self.patterns + other.patterns)))

    def select(self, store: Store) -> Iterator[Quad]:
        """The quads of a store this filter keeps, each once, read by index lookups."""
        seen: set[Quad] = set()
        for pat in self.patterns:
            found = store.quads_for_pattern(
                _node(pat.subject), _node(pat.predicate), _node(pat.object), _node(pat.graph))
            for quad in found:
                if isinstance(quad.graph_name, NamedNode) and quad not in seen:
                    seen.add(quad)
                    yield quad

    def to_json(self) -> list[list[str | None]]:
        return [[p.graph, p.subject, p.predicate, p.object] for p in self.patterns]

    @classmethod
    def from_json(cls, data: Iterable[list[str | None]]) -> QuadFilter:
        return cls(tuple(QuadPattern(*row) for row in data))


def _iri(term: object) -> str:
    return term.value if isinstance(term, NamedNode) else ""


def _node(value: str | None) -> NamedNode | None:
    return None if value is None else NamedNode(value)


def query_filter(query: A.Query) -> QuadFilter:
    """The quads the GRAPH patterns of every GPM of ``query`` can use."""
    out: dict[QuadPattern, None] = {}
    for ev in query.events.values():
        for pat in _group(ev.pattern, None, inside=False):
            out.setdefault(pat, None)
    return QuadFilter(tuple(out))


def _const(term: object) -> str | None:
    return term.value if isinstance(term, NamedNode) else None


def _group(group: A.GroupPattern, graph: str | None, inside: bool) -> Iterator[QuadPattern]:
    """Patterns of a group; ``inside`` says whether it is in a GRAPH clause (``graph`` its IRI or None)."""
    for el in group.elements:
        if isinstance(el, A.GraphPattern):
            g = _const(el.graph)
            if not el.pattern.elements:
                yield QuadPattern(g)
            yield from _group(el.pattern, g, inside=True)
        elif isinstance(el, A.BGP):
            if inside:
                for tp in el.triples:
                    yield from _triple(tp, graph)
        elif isinstance(el, A.ServicePattern):
            continue  # evaluated by the remote endpoint, never against the KB
        else:
            for sub in A._subgroups(el):
                yield from _group(sub, graph, inside)


def _triple(tp: A.TriplePattern, graph: str | None) -> Iterator[QuadPattern]:
    s, o = _const(tp.subject), _const(tp.object)
    if isinstance(tp.predicate, A.Path):
        if _has_zero_length(tp.predicate):
            yield QuadPattern(graph)
            return
        for iri in _path_iris(tp.predicate):
            yield QuadPattern(graph, None, iri, None)
        return
    yield QuadPattern(graph, s, _const(tp.predicate), o)


def _has_zero_length(path: A.Path) -> bool:
    if path.kind in ("zero_or_one", "zero_or_more"):
        return True
    return any(isinstance(a, A.Path) and _has_zero_length(a) for a in path.args)


def _path_iris(path: A.Path) -> Iterator[str | None]:
    """The predicates a path can traverse (None: any predicate, for negated property sets)."""
    if path.kind == "nps":
        yield None
        return
    for a in path.args:
        if isinstance(a, A.Path):
            yield from _path_iris(a)
        elif isinstance(a, NamedNode):
            yield a.value
