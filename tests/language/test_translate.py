"""engine/language/translate.py's ``sparql_text``: upper-case boolean literals (``TRUE`` is a
SPARQL keyword, so case-insensitive) reach spargebra and pyoxigraph, which read only ``true``,
lower-cased; a query written with them matches exactly as the lower-case query does, in the
native engine (its compiled FILTERs and spareval) and in the reference evaluator (pyoxigraph)."""

from __future__ import annotations

import pyoxigraph
import pytest

from spaseq.engine import api, reference
from spaseq.engine.compile.plan import NATIVE, SPAREVAL
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.parser import parse_tree
from spaseq.engine.language.query import parse_query
from spaseq.engine.language.translate import sparql_text
from tests.util import events, match_bag, query_text


def test_spargebra_and_pyoxigraph_read_only_lower_case_booleans():
    """Why the text is rewritten: pyoxigraph (and spargebra, its parser) reject TRUE."""
    store = pyoxigraph.Store()
    assert len(list(store.query("SELECT * WHERE { FILTER(true) }"))) == 1
    with pytest.raises(SyntaxError):
        store.query("SELECT * WHERE { FILTER(TRUE) }")


def test_sparql_text_lower_cases_booleans_only():
    text = query_text("A", "DEFINE GPM A ON U1 { ?s :p 'TRUE' FILTER(?s != :TRUE && TRUE || False) }")
    got = sparql_text(parse_tree(text), text)
    assert len(got) == len(text)
    assert got == text.replace("&& TRUE || False", "&& true || false")


def test_sparql_text_is_the_text_itself_without_booleans():
    text = query_text("A", "DEFINE GPM A ON U1 { ?s :p ?o }")
    assert sparql_text(parse_tree(text), text) is text


#: GPM A is compiled natively, B and C run on spareval (OPTIONAL, BIND); !FALSE is true only if
#: FALSE is read as false (an error would make it an error too, and the FILTER false)
DEFINES = """DEFINE GPM A ON U1 { ?s :p ?o FILTER(?o > 1 && TRUE) }
  DEFINE GPM B ON U2 { ?s :q ?x OPTIONAL { ?x :r ?y } FILTER(BOUND(?x) && TRUE || FALSE) }
  DEFINE GPM C ON U1 { ?s :t ?z BIND(TRUE AS ?b) FILTER((STRLEN(STR(?z)) > 0) = TRUE && !FALSE) }"""

EVENTS = events(
    ("u1", 1, ":a :p 2 ."),
    ("u1", 2, ":b :p 0 ."),
    ("u2", 3, ":a :q :x . :x :r :y ."),
    ("u2", 4, ":b :q :x ."),
    ("u1", 5, ':a :t "xy" .'),
    ("u1", 6, ':b :t "" .'),
)


def test_upper_case_booleans_match_as_lower_case_ones():
    upper = parse_query(query_text("A ; B ; C", DEFINES, within="10 SECONDS"))
    lower = parse_query(query_text("A ; B ; C", DEFINES.replace("TRUE", "true").replace("FALSE", "false"),
                                   within="10 SECONDS"))
    plan = plan_query(upper)
    assert {n: g.evaluator for n, g in plan.gpms.items()} == {"A": NATIVE, "B": SPAREVAL, "C": SPAREVAL}
    for evaluate in (api.evaluate, reference.evaluate):
        got = evaluate(upper, EVENTS)
        assert [(m.start, m.time) for m in got] == [(1, 5)]
        assert dict(got[0].bindings)["b"] == pyoxigraph.Literal("true", datatype=pyoxigraph.NamedNode(
            "http://www.w3.org/2001/XMLSchema#boolean"))
        assert match_bag(got) == match_bag(evaluate(lower, EVENTS))
