"""Which path a GPM body takes (compile/gpm_shape.py, the planner, and the native core's
``gpm_evaluators``): top-level triple patterns, FILTERs and GRAPH blocks are the compiled path and
run natively unless a FILTER calls a function the native FILTER programs lack (then spareval);
any other body is the SPARQL path, on spareval."""

from __future__ import annotations

import json

import pytest

from spaseq.engine import _native
from spaseq.engine.compile.plan import COMPILED, SPARQL
from tests.native.oracles import plan_json


def paths(body: str) -> tuple[str, str, str | None]:
    """The plan's path for the body, and the native core's (path, why not native)."""
    plan = plan_json(body)
    ((_, native, why),) = _native.gpm_evaluators(plan)
    return json.loads(plan)["gpms"]["G"]["path"], native, why


@pytest.mark.parametrize("body", [
    "{ ?s ?p ?o OPTIONAL { ?s ?p ?x } }",
    "{ { ?s ?p ?o } UNION { ?o ?p ?s } }",
    "{ ?s ?p ?o MINUS { ?s ?p 1 } }",
    "{ ?s ?p ?o BIND(1 AS ?x) }",
    "{ ?s ?p ?o VALUES ?s { <http://a> } }",
    "{ SELECT ?s WHERE { ?s ?p ?o } }",
    "{ ?s <http://p>/<http://q> ?o }",
    "{ ?s ^<http://p> ?o }",
    "{ ?s <http://p>* ?o }",
    "{ ?s ?p ?o FILTER EXISTS { ?o ?p ?s } }",
    "{ ?s ?p ?o FILTER(NOT EXISTS { ?o ?p ?s }) }",
    "{ { ?s ?p ?o } }",
])
def test_other_shapes_take_the_sparql_path(body):
    assert paths(body)[:2] == (SPARQL, "spareval")


@pytest.mark.parametrize(("body", "why"), [
    ("{ ?s ?p ?o FILTER(xsd:date(?o) = ?o) }", "XMLSchema#date"),
    ('{ ?s ?p ?o FILTER(STRBEFORE(?o, "a") = "") }', "STRBEFORE"),
    ("{ ?s ?p ?o FILTER(xsd:dateTime(?o) > NOW()) }", "XMLSchema#dateTime"),
    ('{ ?s ?p ?o FILTER(REPLACE(?o, "a", "b") = "b") }', "REPLACE"),
    ("{ ?s ?p ?o FILTER(REGEX(?o, ?s)) }", "non-constant pattern"),
    ('{ ?s ?p ?o FILTER(REGEX(?o, "a", ?s)) }', "non-constant pattern"),
])
def test_compiled_shapes_with_functions_beyond_the_native_programs_run_on_spareval(body, why):
    plan, native, reason = paths(body)
    assert (plan, native) == (COMPILED, "spareval")
    assert reason is not None and why in reason


@pytest.mark.parametrize("body", [
    "{ }",
    "{ FILTER(?p1 > 2) }",
    "{ ?s ?p ?o . ?o ?q [ ?r ?x ] FILTER(?x > 1 && isIRI(?s)) }",
    '{ ?s ?p ?o FILTER(REGEX(?o, "\\\\w", "i")) }',
    '{ ?s ?p ?o FILTER(IRI("x") = ?s) }',
    "{ ?s <http://ex.org/p> ?o . GRAPH <http://kb> { ?o <http://ex.org/q> ?k } FILTER(?k > 1) }",
])
def test_compiled_shapes_run_natively(body):
    assert paths(body) == (COMPILED, "native", None)
