"""Native GPM evaluation (engine/native/gpm/) against pyoxigraph, whose expression
semantics the GPM bodies follow (docs/decisions.md 23); generators in tests/native/strategies.py,
both sides in tests/native/oracles.py:

1. FILTER expressions: on random expressions over literals of every kind (numbers of each
   xsd numeric type and derived integer types, NaN/INF, booleans, strings with and without
   language tags, dateTimes, dates, times, durations, IRIs, blank nodes, unbound variables,
   ill-typed literals), the native value (``_native._testing.eval_expr``) and effective boolean value
   (``_native._testing.eval_filter``, None for an error) must equal pyoxigraph's
   ``BIND((e) AS ?r) BIND(IF((e), 1, 0) AS ?ebv)``. The native core reads literals by value
   as pyoxigraph does ("01"^^xsd:integer is 1 for STR and sameTerm, "1200"^^xsd:byte an
   integer, dateTimes subtract into durations), so no example is canonicalised or kept out.
2. ``_native._testing.gpm_results`` (join, compatibility with mu, FILTERs) on random events, bodies and
   contexts, against pyoxigraph's ``SELECT ... WHERE { mu . body }``. The native join matches
   terms by identity where pyoxigraph's store matches canonical forms ("01" and "1" as
   xsd:integer): examples where two literals share a canonical form run on canonical ones.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine._native import _testing
from spaseq.engine.compile.plan_json import encode
from tests.native.oracles import (
    canon,
    native_answer,
    native_value,
    plan_json,
    plan_variables,
    pyoxigraph_answer,
    pyoxigraph_value,
)
from tests.native.strategies import (
    BINARY,
    BNODES,
    EX,
    EXPR_VARS,
    FUNCS,
    IRIS,
    LITERALS,
    REGEX_FLAGS,
    REGEXES,
    SMALL_INTS,
    XSD,
    body_text,
    example_literals,
    examples,
    expression_examples,
    expression_of,
    iri,
    lang,
    render,
    typed,
)

# SPASEQ_DIFF_EXAMPLES: a deeper local run, as for tests/properties (README)
EXAMPLES = int(os.environ.get("SPASEQ_DIFF_EXAMPLES", "250"))

# beyond the Python path's generated pool: literals where pyoxigraph follows its own rules
EXTRA_LITERALS = [
    typed("1200", "byte"), typed("-5", "unsignedInt"), typed("99999999999999999999", "integer"),
    typed("0.1234567890123456789", "decimal"), typed("inf", "double"), typed("+INF", "float"),
    typed("2020-01-01", "date"), typed("2020-01-02Z", "date"), typed("10:00:00", "time"),
    typed("23:30:00+01:00", "time"), typed("P1D", "duration"), typed("P1Y2M", "duration"),
    typed("PT1H", "dayTimeDuration"), typed("-P1M", "yearMonthDuration"), typed("2020", "gYear"),
    typed("2020-01-01T00:00:00Z", "dateTimeStamp"), typed("PT90M", "dayTimeDuration"),
    Literal("a\rc"), lang("abc", "EN"), lang("Abc", "en-US"),
]
TERMS = LITERALS + EXTRA_LITERALS + SMALL_INTS + IRIS
UNARY = ["!", "-", "+"]
OPS = [*BINARY]


@st.composite
def native_exprs(draw, depth=3, top=True):
    """Expression trees in the form of tests/native/strategies.py (rendered by its ``render``), over the
    whole pool, + and - included next to dates and durations."""
    if depth == 0 or (not top and draw(st.integers(0, 3)) == 0):
        if draw(st.booleans()):
            return ("var", draw(st.sampled_from(EXPR_VARS)))
        return ("const", draw(st.sampled_from(TERMS)))
    sub = native_exprs(depth - 1, top=False)
    kind = draw(st.sampled_from(["bin", "bin", "bin", "unary", "fn", "fn", "fn", "in", "bound",
                                 "coalesce", "regex", "substr", "concat"]))
    if kind == "bin":
        return ("bin", draw(st.sampled_from(OPS)), draw(sub), draw(sub))
    if kind == "unary":
        return ("unary", draw(st.sampled_from(UNARY)), draw(sub))
    if kind == "fn":
        name = draw(st.sampled_from(sorted(FUNCS)))
        return ("fn", name, tuple(draw(sub) for _ in range(FUNCS[name])))
    if kind == "in":
        return ("in", draw(st.booleans()), draw(sub), tuple(draw(st.lists(sub, max_size=3))))
    if kind == "bound":
        return ("bound", draw(st.sampled_from(EXPR_VARS)))
    if kind == "coalesce":
        return ("fn", "COALESCE", tuple(draw(st.lists(sub, min_size=1, max_size=3))))
    if kind == "concat":
        return ("fn", "CONCAT", tuple(draw(st.lists(sub, max_size=3))))
    if kind == "substr":
        ints = st.sampled_from(SMALL_INTS).map(lambda t: ("const", t))
        args = [draw(sub), draw(st.one_of(ints, sub)), *draw(st.lists(ints, max_size=1))]
        return ("fn", "SUBSTR", tuple(args))
    return ("regex", draw(sub), draw(st.sampled_from(REGEXES)), draw(st.sampled_from(REGEX_FLAGS)))


@st.composite
def filter_examples(draw):
    if draw(st.booleans()):  # the Python path's examples: deep numeric and string trees too
        return draw(expression_examples())
    e = draw(native_exprs(depth=draw(st.integers(1, 4))))
    mu = {}
    for var in EXPR_VARS[:-1]:  # ?zz stays unbound
        if draw(st.integers(0, 4)):
            mu[var] = draw(st.sampled_from(TERMS + BNODES))
    return e, mu


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(filter_examples())
def test_filter_values_against_pyoxigraph(example):
    e, mu = example
    text = render(e, lambda t: t)
    got, expected = native_value(text, mu), pyoxigraph_value(text, mu)
    if _has_logical(e):
        # pyoxigraph's optimiser folds `"a" && "maybe"^^xsd:boolean` into its last operand
        # (a value, not a boolean): only the verdict is comparable there
        got, expected = got[1], expected[1]
    assert got == expected, (text, mu)


def _has_logical(e) -> bool:
    if e[0] == "bin" and e[1] in ("&&", "||"):
        return True
    return any(isinstance(a, tuple) and a and isinstance(a[0], str) and _has_logical(a)
               for a in e[1:] if isinstance(a, tuple)) or any(
        _has_logical(x) for a in e[1:] if isinstance(a, tuple) and a and isinstance(a[0], tuple)
        for x in a)


@pytest.mark.parametrize(("text", "expected"), [
    ("1 / 0", (None, None)),
    ("1 / 4", ('"0.25"^^<http://www.w3.org/2001/XMLSchema#decimal>', 1)),
    ('STR("01"^^xsd:integer)', ('"1"', 1)),
    ('DATATYPE("5"^^xsd:byte)', ("<http://www.w3.org/2001/XMLSchema#integer>", None)),
    ('"a"@en = "a"', ('"false"^^<http://www.w3.org/2001/XMLSchema#boolean>', 0)),
    ('"x"^^<http://ex.org/t> = 1', (None, None)),
    ("<http://ex.org/a> IN ()", (None, None)),
    ("1 IN ()", ('"false"^^<http://www.w3.org/2001/XMLSchema#boolean>', 0)),
    ('"NaN"^^xsd:double <= "NaN"^^xsd:double', ('"true"^^<http://www.w3.org/2001/XMLSchema#boolean>', 1)),
    ("?zz || true", ('"true"^^<http://www.w3.org/2001/XMLSchema#boolean>', 1)),
    ("?zz && true", (None, None)),
    ('REGEX("abc", "B", "i")', ('"true"^^<http://www.w3.org/2001/XMLSchema#boolean>', 1)),
    ('REGEX("abc", "(")', (None, None)),
    ('"2020-01-02"^^xsd:date - "2020-01-01"^^xsd:date',
     ('"P1D"^^<http://www.w3.org/2001/XMLSchema#dayTimeDuration>', None)),
])
def test_expression_cases(text, expected):
    assert native_value(text, {}) == expected
    assert pyoxigraph_value(text, {}) == expected


def test_outside_the_native_subset_is_refused():
    for text in ('xsd:dateTime("x")', 'REGEX("a", STR(?x))', "EXISTS { ?s ?p ?o }",
                 'SHA1("a")'):
        with pytest.raises(ValueError):
            _testing.eval_filter(json.dumps(encode(expression_of(text))), {})


# ---------------------------------------------------------------- whole GPMs


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(examples())
def test_gpm_results_against_pyoxigraph(example):
    triples, body_patterns, filters, mu = example
    literals = example_literals(example)
    collision = len({canon(t) for t in literals}) != len(literals)
    lit = canon if collision else (lambda t: t)
    triples = [tuple(lit(x) for x in tr) for tr in triples]
    mu = {k: lit(v) for k, v in mu.items()}
    body = body_text(body_patterns, filters, lit)

    got, count = native_answer(body, triples, mu)
    assert got == pyoxigraph_answer(triples, body, mu, plan_variables(body)), (body, mu, triples)
    assert count == len(got)  # each solution once


def _int(n: int) -> str:
    return f'"{n}"^^<{XSD}integer>'


def test_gpm_results_join_blank_nodes_and_context():
    plan = plan_json("{ ?s <http://ex.org/p> _:x . _:x <http://ex.org/q> ?v . FILTER(?v > ?w) }")
    a, b, c = (f"<http://ex.org/{n}>" for n in "abc")
    p, q = "<http://ex.org/p>", "<http://ex.org/q>"
    half = f'"2.5"^^<{XSD}decimal>'
    triples = [(a, p, "_:n1"), (a, p, "_:n2"), ("_:n1", q, _int(5)), ("_:n2", q, _int(5)),
               (b, p, c), (c, q, half)]
    # two blank-node paths give ?s=a, ?v=5 once; ?v=2.5 fails the FILTER
    assert _testing.gpm_results(plan, "G", triples, {"w": _int(3)}) == [
        {"s": a, "v": _int(5), "w": _int(3)}]
    assert _testing.gpm_results(plan, "G", triples, {"s": b, "w": _int(1)}) == [
        {"s": b, "v": half, "w": _int(1)}]
    with pytest.raises(ValueError, match="SPARQL"):
        _testing.gpm_results(plan_json("{ ?s <http://ex.org/p>+ ?o }"), "G", [], {})


def _solutions(body: str, triples, mu=None) -> set:
    """The native solutions (each once), which must be pyoxigraph's too."""
    mu = mu or {}
    got, count = native_answer(body, triples, mu)
    assert got == pyoxigraph_answer(triples, body, mu, plan_variables(body)), (body, mu)
    assert count == len(got), body
    return got


def _sol(**bindings) -> frozenset:
    return frozenset((k, canon(v)) for k, v in bindings.items())


def test_context_compatibility_and_blank_node_projection():
    body = f"{{ ?s <{EX}p> ?o . ?s <{EX}q> [ <{EX}r> ?x ] . FILTER(?o > ?min) }}"
    assert plan_variables(body) == ["s", "o", "x"]  # the blank node is not a variable of the result
    a, b, n1, n2 = iri("a"), iri("b"), BlankNode("n1"), BlankNode("n2")
    one, two, five = (typed(str(i), "integer") for i in (1, 2, 5))
    triples = [(a, iri("p"), five), (a, iri("q"), n1), (a, iri("q"), n2),
               (n1, iri("r"), one), (n2, iri("r"), one), (b, iri("p"), one)]
    # two blank nodes lead to the same projected solution: once
    assert _solutions(body, triples, {"min": two}) == {_sol(min=two, s=a, o=five, x=one)}
    assert _solutions(body, triples, {"min": five}) == set()
    assert _solutions(body, triples) == set()  # ?min unbound: the FILTER is an error
    assert _solutions(body, triples, {"min": two, "s": b}) == set()  # incompatible context
    other = {"min": two, "s": a, "zz": iri("z")}
    assert _solutions(body, triples, other) == {_sol(**other, o=five, x=one)}
    assert _solutions(body, triples[:1], {"min": two}) == set()  # a predicate missing


def test_empty_and_filter_only_bodies():
    mu = {"p1": typed("3", "integer")}
    assert _solutions("{ }", []) == {_sol()}
    assert _solutions("{ }", [], mu) == {_sol(**mu)}
    assert _solutions("{ FILTER(?p1 > 2) }", [], mu) == {_sol(**mu)}
    assert _solutions("{ FILTER(?p1 > 2) }", [], {"p1": typed("1", "integer")}) == set()
    assert _solutions("{ FILTER(1/0) }", []) == set()


def test_join_shapes():
    a, b, c, p, q = iri("a"), iri("b"), iri("c"), iri("p"), iri("q")
    triples = [(a, p, a), (a, p, b), (b, q, c), (b, p, b), (c, q, a)]
    assert _solutions(f"{{ ?x <{EX}p> ?x }}", triples) == {_sol(x=a), _sol(x=b)}
    assert _solutions("{ ?x ?x ?y }", triples) == set()
    assert _solutions(f"{{ <{EX}a> ?p ?o . ?o ?p ?z }}", triples) == {
        _sol(o=a, p=p, z=a), _sol(o=a, p=p, z=b), _sol(o=b, p=p, z=b)}
    assert _solutions(f"{{ ?x <{EX}p> ?y . ?y <{EX}q> ?z . ?z <{EX}q> ?w }}", triples) == {
        _sol(w=a, x=a, y=b, z=c), _sol(w=a, x=b, y=b, z=c)}
    assert _solutions(f"{{ ?x <{EX}p> <{EX}b> }}", triples) == {_sol(x=a), _sol(x=b)}
    assert _solutions(f"{{ ?x <{EX}none> ?y }}", triples) == set()
    assert _solutions("{ ?s ?p ?o }", triples[:2], {"p": iri("none")}) == set()


def test_larger_join_on_shared_objects():
    p, q = iri("p"), iri("q")
    subjects = [iri(f"s{i}") for i in range(40)]
    triples = [(s, p, typed(str(i), "integer")) for i, s in enumerate(subjects)]
    triples += [(s, q, typed(str(i % 3), "integer")) for i, s in enumerate(subjects)]
    body = f"{{ ?s <{EX}p> ?v . ?s <{EX}q> ?w . ?t <{EX}q> ?w FILTER(?v < 6) }}"
    assert len(_solutions(body, triples)) == 2 * 14 + 4 * 13  # ?w = 0 has 14 subjects, 1 and 2 have 13


@pytest.mark.parametrize("text", ["?s * 0.98", "0.98 * ?s", "?o <= ?s * 0.975", "?s * -1.5 > ?o",
                                  "?s * 0.0", "0.5 * 2.0", "?s * 2"])
@pytest.mark.parametrize(("value", "datatype"), [
    ("188.11", "decimal"), ("-3.2", "decimal"), ("0", "integer"), ("7", "integer"),
    ("0.123456789012345678", "decimal"), ("99999999999999999999.5", "decimal"), ("1e3", "double")])
def test_products_by_a_decimal_constant_are_pyoxigraph_s(text, value, datatype):
    """``x * c`` for an xsd:decimal constant runs natively as an integer product on the
    fixed point (``ScaledProduct``): the same value, or error, as pyoxigraph's, with the
    constant on either side, decimals of up to 18 fraction digits, integers and doubles."""
    mu = {"s": Literal(value, datatype=NamedNode(XSD + datatype)),
          "o": Literal("150", datatype=NamedNode(XSD + "decimal"))}
    assert native_value(text, mu) == pyoxigraph_value(text, mu), (text, value)
