"""Decision 7 on events spelling one value several ways (issue 24 B): a binding keeps the
spelling of the triple it was matched on, terms join by identity, and a computed value takes
the event's spelling of it. Each case is stated with its right answer and checked in the
reference evaluator and in the engine on every GPM path (compiled, native SPARQL, the Python
matcher for bodies reading the KB); FILTER values are checked against pyoxigraph itself."""

from __future__ import annotations

import pyoxigraph
import pytest

from spaseq.engine import api, reference
from spaseq.engine.api import Engine
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.language.query import parse_query
from tests.util import EX, events, query_text

XSD = "http://www.w3.org/2001/XMLSchema#"
KB = pyoxigraph.Store()  # an empty KB graph: GRAPH blocks send a body to the Python matcher
ONE = pyoxigraph.Literal("1", datatype=pyoxigraph.NamedNode(XSD + "integer"))
PLUS_ONE = pyoxigraph.Literal("+1", datatype=pyoxigraph.NamedNode(XSD + "integer"))
OPTIONS = [EngineOptions(compiled_gpm=c, share_context_free=s) for c in (True, False) for s in (True, False)]

#: the issue's bodies for A, and one the Python matcher evaluates (an OPTIONAL GRAPH block)
BODIES = {
    "triple": "{ :c :p ?v }",
    "union": "{ { :c :p ?v } UNION { :zz :p ?v } }",
    "bind of a variable": "{ :c :p ?w . BIND(?w AS ?v) }",
    "optional": "{ :c :p ?v OPTIONAL { :c :zz ?x } }",
    "graph block": "{ :c :p ?v OPTIONAL { GRAPH :kb { ?v :owner ?x } } }",
}


def _matches(a_body: str, evs, options: EngineOptions | None) -> list[dict]:
    """A's then B's bindings of each match of SEQ(A ; B) WITHIN 10 SECONDS, B { :d :p ?v }
    (options None: the reference evaluator)."""
    q = parse_query(query_text("A ; B", f"DEFINE GPM A ON U1 {a_body} DEFINE GPM B ON U1 {{ :d :p ?v }}",
                               within="10 SECONDS", streams=("u1",)))
    got = (reference.evaluate(q, evs, KB) if options is None else api.evaluate(q, evs, KB, options))
    return [dict(m.bindings) for m in got]


def _everywhere(a_body: str, evs) -> list[list[dict]]:
    return [_matches(a_body, evs, o) for o in [None, *OPTIONS]]


@pytest.mark.parametrize("first", ["c", "b"])
@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_a_binding_keeps_the_spelling_of_its_own_triple(body: str, first: str) -> None:
    """The issue's reproduction, with the unrelated "+1" triple first or second: 1 match."""
    triples = {"c": ':c :p "1"^^xsd:integer .', "b": ':b :q "+1"^^xsd:integer .'}
    e1 = " ".join(triples[k] for k in (first, "c" if first == "b" else "b"))
    evs = events(("u1", 1, e1), ("u1", 2, ':d :p "1"^^xsd:integer .'))
    for got in _everywhere(body, evs):
        assert [m["v"] for m in got] == [ONE]


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_equal_values_spelled_differently_do_not_join(body: str) -> None:
    """SPARQL joins by RDF term identity: "+1" in e1 and "1" in e2 are different terms."""
    different = events(("u1", 1, ':c :p "+1"^^xsd:integer .'), ("u1", 2, ':d :p "1"^^xsd:integer .'))
    same = events(("u1", 1, ':c :p "+1"^^xsd:integer . :b :q "1"^^xsd:integer .'),
                  ("u1", 2, ':d :p "+1"^^xsd:integer .'))
    for got in _everywhere(body, different):
        assert got == []
    for got in _everywhere(body, same):
        assert [m["v"] for m in got] == [PLUS_ONE]


@pytest.mark.parametrize(("e1", "e2", "spelled"), [
    # the event holds the canonical spelling: the computed value keeps it
    (':c :p "1"^^xsd:integer . :b :q "+1"^^xsd:integer .', ':d :p "1"^^xsd:integer .', "1"),
    # it does not: the least of its spellings ("+1" < "01"), whatever the triples' order
    (':c :p "01"^^xsd:integer . :b :q "+1"^^xsd:integer .', ':d :p "+1"^^xsd:integer .', "+1"),
    (':b :q "+1"^^xsd:integer . :c :p "01"^^xsd:integer .', ':d :p "+1"^^xsd:integer .', "+1"),
])
def test_a_computed_value_takes_the_events_spelling_of_it(e1: str, e2: str, spelled: str) -> None:
    evs = events(("u1", 1, e1), ("u1", 2, e2))
    for body in ("{ :c :p ?w . BIND(?w + 0 AS ?v) }",
                 "{ :c :p ?w OPTIONAL { GRAPH :kb { ?w :owner ?x } } BIND(?w * 1 AS ?v) }"):
        for got in _everywhere(body, evs):
            assert [m["v"].value for m in got] == [spelled], body


@pytest.mark.parametrize(("body", "object_", "found"), [
    # a computed value joins as computed ("1"), and is given back spelled once joined
    ("{ :c :p ?w BIND(?w + 0 AS ?u) :b :q ?u }", '"+1"^^xsd:integer', False),
    ("{ :c :p ?w BIND(?w + 0 AS ?u) :b :q ?u }", '"1"^^xsd:integer', True),
    ("{ :c :p ?w BIND(?w + 0 AS ?u) OPTIONAL { GRAPH :kb { ?w :o ?o } } :b :q ?u }", '"+1"^^xsd:integer',
     False),
    # so does a constant of the query
    ("{ VALUES ?u { 1 } :b :q ?u }", '"+1"^^xsd:integer', False),
    ("{ VALUES ?u { 1 } :b :q ?u }", '"1"^^xsd:integer', True),
    ("{ VALUES ?u { 1 } :b :q ?u OPTIONAL { GRAPH :kb { ?u :o ?o } } }", '"+1"^^xsd:integer', False),
])
def test_computed_values_and_constants_join_as_written(body: str, object_: str, found: bool) -> None:
    evs = events(("u1", 1, f':c :p "01"^^xsd:integer . :b :q {object_} .'))
    q = parse_query(query_text("A", f"DEFINE GPM A ON U1 {body}", streams=("u1",)))
    for got in [reference.evaluate(q, evs, KB), *(api.evaluate(q, evs, KB, o) for o in OPTIONS)]:
        assert bool(got) == found
        if found:  # the event holds "1": the computed value and the constant keep it
            assert dict(got[0].bindings)["u"] == ONE


def test_the_bodies_take_the_paths_they_are_meant_to_test() -> None:
    for name, body in BODIES.items():
        q = query_text("A ; B", f"DEFINE GPM A ON U1 {body} DEFINE GPM B ON U1 {{ :d :p ?v }}",
                       within="10 SECONDS", streams=("u1",))
        called_back = list(Engine(KB).register(q).runtime.matchers)
        assert called_back == (["A"] if name == "graph block" else []), name


SPELLINGS = ['"1"^^xsd:integer', '"+1"^^xsd:integer', '"01"^^xsd:integer', '"1.0"^^xsd:decimal',
             '"20"^^xsd:decimal', '"20.0"^^xsd:decimal', '"1"^^xsd:double']
FILTERS = ["?v = 1", "?v != 1", "?v < 2", "?v >= 20", "?v = ?w", "?v > ?w", "?v IN (1, 20)",
           "sameTerm(?v, ?w)", "!sameTerm(?v, ?w)", "sameTerm(?v, 1)", 'STR(?v) = "1"', 'STR(?v) = "+1"', "STRLEN(STR(?v)) = 2", "DATATYPE(?v) = xsd:integer"]


@pytest.mark.parametrize("filter_", FILTERS)
def test_filter_values_agree_with_pyoxigraph(filter_: str) -> None:
    """A FILTER's verdict on each pair of spellings, in the reference and on every engine
    path, is pyoxigraph's own (Store.query): expressions see values, not spellings."""
    for v in SPELLINGS:
        for w in SPELLINGS:
            turtle = f":s :v {v} ; :w {w} ."
            store = pyoxigraph.Store()
            prefixes = "PREFIX : <http://ex.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
            store.load(("@prefix : <http://ex.org/> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> . "
                        + turtle).encode(), format=pyoxigraph.RdfFormat.TURTLE)
            want = bool(store.query(f"{prefixes}ASK {{ ?s :v ?v ; :w ?w FILTER({filter_}) }}"))
            evs = events(("u1", 1, turtle))
            for body in (f"{{ ?s :v ?v ; :w ?w FILTER({filter_}) }}",  # compiled, or native SPARQL
                         f"{{ ?s :v ?v OPTIONAL {{ ?s :w ?w }} FILTER({filter_}) }}",  # native SPARQL
                         f"{{ ?s :v ?v ; :w ?w OPTIONAL {{ GRAPH :kb {{ ?s :o ?o }} }} FILTER({filter_}) }}"):
                q = parse_query(query_text("A", f"DEFINE GPM A ON U1 {body}", streams=("u1",)))
                assert bool(reference.evaluate(q, evs, KB)) == want, (body, v, w)
                for o in OPTIONS:
                    assert bool(api.evaluate(q, evs, KB, o)) == want, (body, v, w, o)


def test_matched_spellings_are_the_events_own() -> None:
    """Several spellings of one value in one event: each solution shows its triple's."""
    spelled = ['"1"^^xsd:integer', '"+1"^^xsd:integer', '"01"^^xsd:integer']
    evs = events(("u1", 1, " ".join(f":s{i} :v {s} ." for i, s in enumerate(spelled))))
    for body in ("{ ?s :v ?v }", "{ ?s :v ?v OPTIONAL { ?s :zz ?x } }",
                 "{ ?s :v ?v OPTIONAL { GRAPH :kb { ?s :o ?o } } }"):
        q = parse_query(query_text("A", f"DEFINE GPM A ON U1 {body}", streams=("u1",)))
        want = sorted((f"{EX}s{i}", s.split('"')[1]) for i, s in enumerate(spelled))
        for got in [reference.evaluate(q, evs, KB), *(api.evaluate(q, evs, KB, o) for o in OPTIONS)]:
            assert sorted((dict(m.bindings)["s"].value, dict(m.bindings)["v"].value) for m in got) == want



def test_same_term_compares_canonical_forms_on_every_path() -> None:
    """As pyoxigraph's store: sameTerm("+1", "1") is true, also where spareval, over the
    event's own triples, would compare spellings (the native SPARQL path rewrites it)."""
    evs = events(("u1", 1, ':s :v "+1"^^xsd:integer ; :w "1"^^xsd:integer ; :d "1"^^xsd:decimal .'))
    for f, want in [("sameTerm(?v, ?w)", 1), ("sameTerm(?v, ?d)", 0), ("!sameTerm(?v, ?w)", 0),
                    ("sameTerm(?v, ?unbound) || true", 1), ("!sameTerm(?v, ?unbound)", 0)]:
        for body in (f"{{ ?s :v ?v OPTIONAL {{ ?s :w ?w }} OPTIONAL {{ ?s :d ?d }} FILTER({f}) }}",
                     f"{{ ?s :v ?v ; :w ?w ; :d ?d BIND(IF({f}, 1, 0) AS ?x) FILTER(?x = 1) }}",
                     f"{{ ?s :v ?v ; :w ?w ; :d ?d FILTER EXISTS {{ ?s :v ?v FILTER({f}) }} }}"):
            q = parse_query(query_text("A", f"DEFINE GPM A ON U1 {body}", streams=("u1",)))
            for got in [reference.evaluate(q, evs, KB), *(api.evaluate(q, evs, KB, o) for o in OPTIONS)]:
                assert len(got) == want, (f, body)
