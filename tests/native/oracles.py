"""Both sides of the native GPM differential tests: an expression's value and effective
boolean value, and a body's solutions on an event in a context, from the native core
(``_native._testing.eval_expr``/``eval_filter``/``gpm_results``) and from pyoxigraph's SPARQL engine.

Terms travel as N-Triples; every blank node in an expression's value reads ``_:b`` (a store
renames them). A context goes into pyoxigraph as data in its own graph, joined in first:
pyoxigraph's substitutions, which ``VALUES`` would need for blank nodes, do not reach
``BOUND`` or ``BIND``."""

from __future__ import annotations

import json

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Store

from spaseq.engine._native import _testing
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.plan_json import encode, plan_to_json
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.query import parse_query
from tests.native.strategies import EX, XSD, expression_of

_CANON: dict = {}


def canon(term):
    """pyoxigraph's canonical form of a term (what a Store gives back)."""
    if not isinstance(term, Literal):
        return term
    if term not in _CANON:
        store = Store()
        probe = NamedNode("urn:probe")
        store.add(Quad(probe, probe, term, DefaultGraph()))
        _CANON[term] = next(iter(store.quads_for_pattern(None, None, None))).object
    return _CANON[term]


def _nt(term) -> str:
    """N-Triples, every blank node alike."""
    return "_:b" if isinstance(term, BlankNode) else str(term)


def pyoxigraph_value(text: str, mu: dict) -> tuple[str | None, int | None]:
    """The value (N-Triples) and EBV (1/0) of an expression in pyoxigraph, None for errors."""
    store = Store()
    holder = NamedNode("urn:mu")
    store.extend(Quad(holder, NamedNode(f"urn:var:{k}"), t, DefaultGraph()) for k, t in mu.items())
    bindings = " ".join(f"<urn:mu> <urn:var:{k}> ?{k} ." for k in mu)
    (row,) = store.query(
        f"PREFIX xsd: <{XSD}>\nSELECT ?r ?ebv WHERE {{ {bindings} "
        f"BIND(({text}) AS ?r) BIND(IF(({text}), 1, 0) AS ?ebv) }}"
    )
    value = None if row["r"] is None else _nt(row["r"])
    ebv = None if row["ebv"] is None else int(row["ebv"].value)
    return value, ebv


def native_value(text: str, mu: dict) -> tuple[str | None, int | None]:
    """The value (N-Triples) and EBV (1/0) of an expression natively, None for errors."""
    expr = json.dumps(encode(expression_of(text)))
    bindings = {k: str(t) for k, t in mu.items()}
    value = _testing.eval_expr(expr, bindings)
    if value is not None and value.startswith("_:"):
        value = "_:b"
    ebv = _testing.eval_filter(expr, bindings)
    return value, None if ebv is None else int(ebv)


def plan_json(body: str) -> str:
    """The plan (JSON) of a query whose one GPM ``G`` has ``body``."""
    query = parse_query(
        f"PREFIX xsd: <{XSD}>\n"
        f"SELECT * FROM STREAM S <{EX}s> WHERE {{ SEQ(G) DEFINE GPM G ON S {body} }}"
    )
    return plan_to_json(plan_query(query, EngineOptions()), indent=None)


def pyoxigraph_answer(triples, body: str, mu, variables) -> set:
    """pyoxigraph's ``SELECT ... WHERE { mu . body }`` on a store holding the event, as a
    set of solutions (frozensets of (name, canonical term))."""
    store = Store()
    store.extend(Quad(s, p, o, DefaultGraph()) for s, p, o in triples)
    holder = NamedNode("urn:mu")
    store.extend(Quad(holder, NamedNode(f"urn:var:{k}"), t, holder) for k, t in mu.items())
    bindings = " ".join(f"<urn:mu> <urn:var:{k}> ?{k} ." for k in mu)
    context = f"GRAPH <urn:mu> {{ {bindings} }}\n" if mu else ""
    projection = " ".join(f"?{v}" for v in sorted(set(mu) | set(variables))) or "*"
    text = f"PREFIX xsd: <{XSD}>\nSELECT {projection} WHERE {{ {context}{body[1:-1]} }}"
    result = store.query(text)
    names = [v.value for v in result.variables]
    return {
        frozenset((n, canon(row[n])) for n in names if row[n] is not None) for row in result
    }


def native_answer(body: str, triples, mu) -> tuple[set, int]:
    """The native solutions of ``body`` (the compiled path) on an event, as
    ``pyoxigraph_answer`` gives them, and how many rows came (each solution should come once)."""
    plan = plan_json(body)
    assert json.loads(plan)["gpms"]["G"]["path"] == "compiled", body
    terms = {str(t): t for t in [*(x for tr in triples for x in tr), *mu.values()]}
    rows = _testing.gpm_results(plan, "G", [tuple(str(x) for x in tr) for tr in triples],
                               {k: str(v) for k, v in mu.items()})
    return {frozenset((k, canon(terms[v])) for k, v in row.items()) for row in rows}, len(rows)


def plan_variables(body: str) -> list[str]:
    """The variables the plan gives the body's compiled path."""
    return json.loads(plan_json(body))["gpms"]["G"]["variables"]
