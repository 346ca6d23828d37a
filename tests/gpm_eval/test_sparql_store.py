"""The pyoxigraph fallback shared by the reference evaluator (``sparql_eval.GpmEvaluator``)
and the engine (``matcher.EventGraphs``/``GpmMatcher``): ``sparql_store``. The store keeps
literals in canonical form; solutions must show the event's own terms."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Triple

from spaseq.engine.api import evaluate as engine_evaluate
from spaseq.engine.compile.gpm_texts import GpmTexts
from spaseq.engine.compile.plan import SPARQL, EngineOptions
from spaseq.engine.compile.planner import plan_gpm
from spaseq.engine.events import Event
from spaseq.engine.gpm_eval.matcher import EventContext, EventGraphs, GpmMatcher
from spaseq.engine.gpm_eval.sparql_eval import GpmEvaluator
from spaseq.engine.gpm_eval.sparql_store import SparqlStore, spellings
from spaseq.engine.language.query import parse_query
from spaseq.engine.reference.evaluator import evaluate as reference_evaluate
from tests.util import EX, ev, query_text

XSD = "http://www.w3.org/2001/XMLSchema#"
V14 = Literal("14.0", datatype=NamedNode(XSD + "double"))
N01 = Literal("01", datatype=NamedNode(XSD + "integer"))
S = NamedNode(EX + "s")
EVENT_TTL = ':s :v "14.0"^^xsd:double ; :n "01"^^xsd:integer .'
EXPECTED = [{"s": S, "v": V14, "n": N01}]

BODIES = {
    "join-shaped": "{ ?s :v ?v ; :n ?n }",
    "join-shaped with FILTER": "{ ?s :v ?v ; :n ?n FILTER(?v > 10 && ?n = 1) }",
    "not join-shaped": "{ ?s :v ?v OPTIONAL { ?s :n ?n } }",
}


def _query(body: str):
    return parse_query(query_text("A", f"DEFINE GPM A ON U1 {body}", streams=("u1",)))


def test_spellings_give_a_value_the_canonical_spelling_if_held_else_the_least() -> None:
    p, q = NamedNode(EX + "p"), NamedNode(EX + "q")
    other = Literal("1.4E1", datatype=NamedNode(XSD + "double"))
    canonical = Literal("14", datatype=NamedNode(XSD + "double"))
    one = Literal("1", datatype=NamedNode(XSD + "integer"))
    plus_one = Literal("+1", datatype=NamedNode(XSD + "integer"))
    e1 = Event(EX + "u1", 1.0, (Triple(S, p, V14), Triple(S, q, other), Triple(S, p, N01)), 0)
    e2 = Event(EX + "u1", 2.0, (Triple(S, p, other), Triple(S, q, Triple(S, p, V14))), 1)
    plain = Event(EX + "u1", 3.0, (Triple(S, p, S), Triple(S, q, canonical)), 2)
    both = Event(EX + "u1", 4.0, (Triple(S, p, plus_one), Triple(S, q, one), Triple(S, q, N01)), 3)
    back1, back2, back3, back4 = spellings([e1, e2, plain, both])
    # whatever the triples' order: "1.4E1" < "14.0" in code point order
    assert back1 == {canonical: other, one: N01}
    assert back2 == {canonical: other, Triple(S, p, canonical): Triple(S, p, V14)}
    assert back3 == {}  # already canonical: nothing to restore
    assert back4 == {}  # the event holds the canonical spelling: computed values keep it


def test_store_canonicalises_and_the_body_shows_the_event_spelling() -> None:
    query = _query(BODIES["join-shaped"])
    store = SparqlStore()
    (graph,) = store.add_events([ev("u1", 1, EVENT_TTL)])
    text = "SELECT ?s ?v ?n WHERE { ?s :v ?v ; :n ?n }"
    raw = store.store.query(text, default_graph=graph, prefixes=query.prefixes)
    assert [(r["v"].value, r["n"].value) for r in raw] == [("14", "1")]  # why spellings exist
    assert [store.spelled(GpmTexts.of(query.events["A"]), graph, s, {}) for s in store.select(text, graph, query)
            ] == EXPECTED  # how a body only pyoxigraph answers (SERVICE) is spelled
    assert store.body(GpmTexts.of(query.events["A"]), graph, query, {}) == EXPECTED
    store.remove_event(graph)
    assert store.select(text, graph, query) == []
    assert not store._events


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_reference_gpm_evaluator_shows_event_spellings(body: str) -> None:
    e = ev("u1", 1, EVENT_TTL)
    evaluator = GpmEvaluator(_query(body))
    evaluator.add_events([e])
    assert evaluator.solutions("A", e, {}) == EXPECTED
    assert evaluator.solutions("A", e, {"v": V14}) == EXPECTED
    if evaluator.compiled("A").join_shaped:
        assert evaluator.base_solutions("A", e) == EXPECTED


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_engine_fallback_matcher_shows_event_spellings(body: str) -> None:
    query = _query(body)
    options = EngineOptions(compiled_gpm=False)
    plan = plan_gpm(query.events["A"], query, options)
    assert plan.path == SPARQL
    graphs = EventGraphs(None)
    matcher = GpmMatcher(plan, query, graphs, options)
    assert matcher.join_shaped == GpmTexts.of(query.events["A"]).join_shaped
    ctx = EventContext(ev("u1", 1, EVENT_TTL))
    assert matcher.results(ctx, {}) == EXPECTED
    assert matcher.results(ctx, {"v": V14}) == EXPECTED
    graphs.release(float("inf"))
    assert list(graphs.store) == [] and not graphs._events


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_engine_and_reference_results_show_event_spellings(body: str) -> None:
    query = _query(body)
    evs = [ev("u1", 1, EVENT_TTL)]
    want = [tuple(sorted(EXPECTED[0].items()))]
    assert [m.bindings for m in reference_evaluate(query, evs)] == want
    for compiled in (False, True):
        got = engine_evaluate(query, evs, options=EngineOptions(compiled_gpm=compiled))
        assert [m.bindings for m in got] == want


def test_rows_holding_blank_nodes_reach_filters_binds_and_graph_blocks() -> None:
    """VALUES cannot write a blank node: such rows are asked one by one, by substitution."""
    evs = [ev("u1", 1, '_:b :v "+1"^^xsd:integer ; :w "01"^^xsd:integer . :c :v 5 .')]
    body = ("{ ?s :v ?v OPTIONAL { ?s :w ?w } BIND(?v + 1 AS ?x) OPTIONAL { GRAPH :kb { ?s :o ?o } } "
            "FILTER(?v < 3 && ?w = ?v) }")
    query = _query(body)
    integer = NamedNode(XSD + "integer")
    for got in (reference_evaluate(query, evs), engine_evaluate(query, evs)):
        (m,) = got
        b = dict(m.bindings)
        assert sorted(b) == ["s", "v", "w", "x"] and b["s"].__class__.__name__ == "BlankNode"
        assert (b["v"], b["w"], b["x"]) == (Literal("+1", datatype=integer), N01, Literal("2", datatype=integer))


TRIPLE_TERM_BODIES = {
    "FILTER": ("{ ?s :v ?v FILTER(isTRIPLE(?v)) }", {}),
    "BIND": ("{ ?s :v ?v BIND(isTRIPLE(?v) AS ?t) }",
             {"t": Literal("true", datatype=NamedNode(XSD + "boolean"))}),
}


# with blank nodes, which a VALUES row cannot hold (the row goes by substitution)
TRIPLE_TERM_EVENTS = [':s :v <<( :a :b "01"^^xsd:integer )>> .', '_:s :v <<( :a :b "01"^^xsd:integer )>> .',
                      ':s :v <<( _:a :b "01"^^xsd:integer )>> .']


@pytest.mark.parametrize("turtle", TRIPLE_TERM_EVENTS, ids=["plain", "blank subject", "blank inside"])
@pytest.mark.parametrize(("body", "more"), TRIPLE_TERM_BODIES.values(), ids=TRIPLE_TERM_BODIES.keys())
def test_a_triple_term_binding_reaches_filters_and_binds(turtle: str, body: str, more: dict) -> None:
    """A triple term (an event's object may be one) goes into a VALUES row as SPARQL writes it,
    ``<<( s p o )>>`` (``str`` of a pyoxigraph Triple has no brackets), or by substitution when
    it holds a blank node, and comes back as the event spells it."""
    e = ev("u1", 1, turtle)
    want = [{"s": e.triples[0].subject, "v": e.triples[0].object, **more}]
    query = _query(body)
    evaluator = GpmEvaluator(query)
    evaluator.add_events([e])
    assert evaluator.solutions("A", e, {}) == want
    matcher = GpmMatcher(plan_gpm(query.events["A"], query, EngineOptions(compiled_gpm=False)), query,
                         EventGraphs(None), EngineOptions(compiled_gpm=False))
    assert matcher.results(EventContext(e), {}) == want
    assert [dict(m.bindings) for m in reference_evaluate(query, [e])] == want
