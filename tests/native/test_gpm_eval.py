"""Native GPM evaluation (engine/native/core/src/gpm/) against pyoxigraph, the reference of
the "oxigraph" expression dialect (docs/decisions.md 23):

1. FILTER expressions: on random expressions over literals of every kind (numbers of each
   xsd numeric type and derived integer types, NaN/INF, booleans, strings with and without
   language tags, dateTimes, dates, times, durations, IRIs, blank nodes, unbound variables,
   ill-typed literals), the native value (``_native.eval_expr``) and effective boolean value
   (``_native.eval_filter``, None for an error) must equal pyoxigraph's
   ``BIND((e) AS ?r) BIND(IF((e), 1, 0) AS ?ebv)``.
   Unlike the Python compiled path, the native one reads literals by value as pyoxigraph
   does ("01"^^xsd:integer is 1 for STR and sameTerm, "1200"^^xsd:byte an integer, dateTimes
   subtract into durations), so no example is canonicalised or kept out for those.
2. ``_native.gpm_results`` (join, compatibility with mu, FILTERs) on random events, bodies and
   contexts, against pyoxigraph's ``SELECT ... WHERE { mu . body }`` (the generators of
   tests/compile/test_gpm_codegen.py). The native join, like the Python one, matches terms
   by identity where pyoxigraph's store matches canonical forms ("01" and "1" as
   xsd:integer): examples where two literals share a canonical form run on canonical ones.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Store

from spaseq.engine import _native
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.plan_json import encode, plan_to_json
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.query import parse_query
from tests.compile.test_gpm_codegen import (
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
    canon,
    example_literals,
    examples,
    expression_examples,
    expression_of,
    lang,
    pyoxigraph_answer,
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
    """Expression trees in test_gpm_codegen's form (rendered by its ``render``), over the
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


def _nt(term) -> str:
    """N-Triples, every blank node alike (the store renames them)."""
    return "_:b" if isinstance(term, BlankNode) else str(term)


def pyoxigraph_value(text: str, mu: dict) -> tuple[str | None, int | None]:
    """The value (N-Triples) and EBV (1/0) of an expression in pyoxigraph, None for errors."""
    store = Store()  # the context goes in as data (pyoxigraph's substitutions do not reach BIND)
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
    expr = json.dumps(encode(expression_of(text)))
    bindings = {k: str(t) for k, t in mu.items()}
    value = _native.eval_expr(expr, bindings)
    if value is not None and value.startswith("_:"):
        value = "_:b"
    ebv = _native.eval_filter(expr, bindings)
    return value, None if ebv is None else int(ebv)


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
            _native.eval_filter(json.dumps(encode(expression_of(text))), {})


# ---------------------------------------------------------------- whole GPMs


def plan_json(body: str) -> str:
    query = parse_query(
        f"PREFIX xsd: <{XSD}>\n"
        f"SELECT * FROM STREAM S <{EX}s> WHERE {{ SEQ(G) DEFINE GPM G ON S {body} }}"
    )
    return plan_to_json(plan_query(query, EngineOptions()), indent=None)


def _render_body(body_patterns, filters, lit) -> str:
    def term(t):
        return t if isinstance(t, str) else str(lit(t[1]))

    lines = [" ".join(term(x) for x in tp) + " ." for tp in body_patterns]
    lines += [f"FILTER({render(f, lit)})" for f in filters]
    return "{ " + "\n".join(lines) + " }"


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
    body = _render_body(body_patterns, filters, lit)

    plan = plan_json(body)
    assert json.loads(plan)["gpms"]["G"]["path"] == "compiled", body
    variables = json.loads(plan)["gpms"]["G"]["variables"]
    expected = pyoxigraph_answer(triples, body, mu, variables)
    terms = {str(t): t for t in [*(x for tr in triples for x in tr), *mu.values()]}
    rows = _native.gpm_results(plan, "G", [tuple(str(x) for x in tr) for tr in triples],
                               {k: str(v) for k, v in mu.items()})
    got = {frozenset((k, canon(terms[v])) for k, v in row.items()) for row in rows}
    assert got == expected, (body, mu, triples)
    assert len(rows) == len(got)  # each solution once


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
    assert _native.gpm_results(plan, "G", triples, {"w": _int(3)}) == [
        {"s": a, "v": _int(5), "w": _int(3)}]
    assert _native.gpm_results(plan, "G", triples, {"s": b, "w": _int(1)}) == [
        {"s": b, "v": half, "w": _int(1)}]
    with pytest.raises(ValueError, match="SPARQL"):
        _native.gpm_results(plan_json("{ ?s <http://ex.org/p>+ ?o }"), "G", [], {})
