"""Whether a GPM body has the compiled path's shape, and the parts the plan gives that path:
top-level triple patterns (in join order), the conjuncts of its top-level FILTERs and its
top-level GRAPH blocks (joined with the knowledge base). The native core runs such a body
with its join and FILTER programs, or on spareval when a FILTER uses a function those lack
(docs/decisions.md 37); any other body takes the SPARQL path."""

from __future__ import annotations

from dataclasses import dataclass

from spaseq.engine.algebra import operators as A


@dataclass(frozen=True)
class Shape:
    """A body of the compiled path's shape."""

    triples: tuple[A.TriplePattern, ...]
    variables: tuple[str, ...]          # the join's row layout: its variables, first seen first
    filters: tuple[A.Expr, ...]         # top-level FILTER conjuncts
    graph_elements: tuple[A.GraphPattern, ...]


def conjuncts(e: A.Expr) -> list[A.Expr]:
    """FILTER(a && b) holds iff FILTER(a) and FILTER(b) hold."""
    if isinstance(e, A.ECall) and e.op == "&&" and len(e.args) == 2:
        return conjuncts(e.args[0]) + conjuncts(e.args[1])
    return [e]


def term_vars(tp: A.TriplePattern) -> list[str]:
    """The variables of a triple pattern, in position order, each once."""
    out = []
    for t in (tp.subject, tp.predicate, tp.object):
        if isinstance(t, A.Var) and t.name not in out:
            out.append(t.name)
    return out


def compiled_shape(pattern: A.GroupPattern) -> Shape | None:
    """The body's parts if it is only triple patterns without property paths, FILTERs
    without EXISTS and GRAPH blocks at its top level; None otherwise."""
    triples: list[A.TriplePattern] = []
    filters: list[A.Expr] = []
    graphs: list[A.GraphPattern] = []
    for el in pattern.elements:
        if isinstance(el, A.BGP):
            triples.extend(el.triples)
        elif isinstance(el, A.Filter):
            filters.extend(conjuncts(el.expr))
        elif isinstance(el, A.GraphPattern):
            graphs.append(el)
        else:
            return None
    if any(isinstance(tp.predicate, A.Path) for tp in triples):
        return None
    if any(isinstance(sub, A.EExists) for f in filters for sub in A._exprs(f)):
        return None
    variables: list[str] = []
    for tp in triples:
        for name in term_vars(tp):
            if not name.startswith("_:") and name not in variables:
                variables.append(name)
    return Shape(tuple(triples), tuple(variables), tuple(filters), tuple(graphs))


def join_order(triples: list[A.TriplePattern]) -> list[A.TriplePattern]:
    """The plan's join order of a BGP: most bound positions first (constants or variables
    bound by earlier patterns), constant predicates before variable ones, then written
    order."""
    remaining = list(enumerate(triples))
    bound: set[str] = set()
    order = []

    def score(item):
        i, tp = item
        n = 0
        for t in (tp.subject, tp.object):
            if not isinstance(t, A.Var) or t.name in bound:
                n += 1
        pred_free = isinstance(tp.predicate, A.Var) and tp.predicate.name not in bound
        return (-n, pred_free, i)

    while remaining:
        best = min(remaining, key=score)
        remaining.remove(best)
        order.append(best[1])
        bound.update(term_vars(best[1]))
    return order
