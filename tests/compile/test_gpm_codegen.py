"""The compiled GPM matcher (engine/compile/gpm_codegen.py) and its value semantics
(engine/values/).

1. Differential property tests against pyoxigraph:
   - random events, bodies (1-3 triple patterns + FILTERs over the supported operators and
     functions) and contexts: ``compiled.solutions(index, mu)`` must equal pyoxigraph's
     ``SELECT ... WHERE { mu . body }`` on a store holding the event as default graph (mu is
     joined in first, as data in a named graph: pyoxigraph's substitutions, which VALUES
     would need for blank nodes, do not reach BOUND or BIND);
   - random expressions: the value (or error) and the EBV from ``compile_expression`` must
     equal pyoxigraph's ``BIND((e) AS ?r) BIND(IF((e), 1, 0) AS ?ebv)``.
   Both run the ``oxigraph`` dialect: the handful of rules where pyoxigraph departs from
   the SPARQL 1.1 text (listed in engine/values/dialects.py's docstring) are switched to pyoxigraph's
   choice there, and the spec's behaviour is pinned by the unit tests below instead.
   pyoxigraph canonicalises literals ("14.0"^^xsd:double is stored and seen as "14", and
   "5"^^xsd:byte as "5"^^xsd:integer); when that could change an answer (two literals of the
   example with one canonical form, or a function that sees lexical forms or datatypes:
   STR, DATATYPE, sameTerm, string functions...) the example is run on canonical literals
   on both sides; otherwise the event's own spellings reach the compiled matcher and only
   its answers are canonicalised for the comparison.
   Kept out of the generated examples, because pyoxigraph follows implementation limits or
   extensions there (each is unit-tested below in the spec dialect): out-of-range derived
   integers ("1200"^^xsd:byte, accepted by pyoxigraph), integers beyond 64 bits and decimals
   beyond 18 fraction digits (ill-typed for pyoxigraph), "inf" in lower case (a double for
   pyoxigraph), xsd:date & co. (compared by value by pyoxigraph, by RDFterm-equal in SPARQL
   1.1), "\\r" in strings and "#" in x-mode regexes (pyoxigraph's Rust regexes differ from
   XPath's there), ``x IN ()`` (an error for an IRI in pyoxigraph, false in SPARQL 1.1) and
   binary + and - next to dateTimes (pyoxigraph subtracts them into durations).
2. Unit tests for each function and for the value semantics, in the spec dialect, with the
   oxigraph dialect's answer next to it where they differ.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Store, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.event_index import EventIndex
from spaseq.engine.compile.gpm_codegen import compile_expression, compile_pattern
from spaseq.engine.language.query import parse_query
from spaseq.engine.values.dialects import OXIGRAPH, SPEC, Dialect
from spaseq.engine.values.kinds import (
    ERRORS,
    F32,
    K_BAD,
    K_BOOL,
    K_DBL,
    K_DEC,
    K_DT,
    K_FLT,
    K_INT,
    K_LANG,
    K_STR,
    LangStr,
)
from spaseq.engine.values.lexical import format_decimal, format_double, format_float
from spaseq.engine.values.literals import info
from spaseq.engine.values.numbers import f32
from spaseq.engine.values.terms import to_term
from spaseq.engine.values.xpath_regex import UnsupportedRegex, translate_regex
from spaseq.engine.vocab import RDF_LANGSTRING, XSD_BOOLEAN, XSD_DECIMAL, XSD_FLOAT, XSD_NS, XSD_STRING

EX = "http://ex.org/"
XSD = XSD_NS


def iri(x: str) -> NamedNode:
    return NamedNode(EX + x)


def typed(v: str, dt: str) -> Literal:
    return Literal(v, datatype=NamedNode(dt if ":" in dt else XSD + dt))


def lang(v: str, tag: str) -> Literal:
    return Literal(v, language=tag)


IRIS = [iri("a"), iri("b"), iri("c")]
PREDS = [iri("p"), iri("q"), iri("r")]
BNODES = [BlankNode("b1"), BlankNode("b2")]
LITERALS = [
    # integers, including derived types (in range) and non-canonical spellings
    typed("0", "integer"), typed("1", "integer"), typed("-1", "integer"), typed("2", "integer"),
    typed("10", "integer"), typed("01", "integer"), typed("+5", "integer"), typed("3", "int"),
    typed("-7", "byte"), typed("5", "nonNegativeInteger"), typed("200", "unsignedByte"),
    typed("-2", "long"), typed("4", "positiveInteger"),
    # decimals
    typed("1.5", "decimal"), typed("2.0", "decimal"), typed("-0.5", "decimal"), typed(".5", "decimal"),
    typed("0.1", "decimal"), typed("10.25", "decimal"), typed("3", "decimal"),
    # doubles and floats
    typed("14.0", "double"), typed("1e2", "double"), typed("-0", "double"), typed("1.5E0", "double"),
    typed("NaN", "double"), typed("INF", "double"), typed("-INF", "double"), typed("0.1", "double"),
    typed("2", "double"), typed("0.1", "float"), typed("1.5", "float"), typed("NaN", "float"),
    typed("3", "float"), typed("-0", "float"),
    # strings
    Literal(""), Literal("a"), Literal("abc"), Literal("B"), Literal("Abc"), Literal("é"),
    Literal("1"), Literal("10"), Literal("true"), Literal("a b"), Literal("http://ex.org/a"),
    Literal(" 12 "), Literal("1e2"), Literal("1.5"), Literal("en"), Literal("EN"), Literal("en-US"),
    Literal("*"), Literal("INF"), Literal("a\nc"), typed("abc", "string"), typed("b", "string"),
    lang("abc", "en"), lang("a", "en-us"), lang("", "fr"), lang("abc", "fr"), lang("B", "en"),
    # booleans
    typed("true", "boolean"), typed("false", "boolean"), typed("1", "boolean"), typed("0", "boolean"),
    # dateTimes
    typed("2020-01-01T00:00:00Z", "dateTime"), typed("2020-01-01T00:00:00", "dateTime"),
    typed("2020-01-01T10:00:00+05:00", "dateTime"), typed("2020-01-01T00:00:00.5Z", "dateTime"),
    typed("2019-12-31T23:00:00-01:00", "dateTime"), typed("2020-01-01T24:00:00Z", "dateTime"),
    typed("2020-01-02T03:00:00", "dateTime"),
    # ill-typed literals of supported datatypes, and an unknown datatype
    typed("abc", "integer"), typed("1.5", "integer"), typed("x", "double"), typed("maybe", "boolean"),
    typed("2020-13-01T00:00:00Z", "dateTime"), typed(" 12", "integer"), typed("x", EX + "t"),
    typed("y", EX + "t"),
]
SMALL_INTS = [typed(str(i), "integer") for i in (-1, 0, 1, 2, 3, 5)]
REGEXES = ["a", "^a", "c$", "b.c", "[a-c]+", "A", "^$", "\\d", "a|b", "(ab)+", "x?y*", "[^a]", "é",
           "\\s", "^(?:a|B)", "[0-9]{2}", "a.c", "B$"]
REGEX_FLAGS = [None, "", "i", "s", "m", "x", "q", "iq", "ms", "z"]

CANON_SENSITIVE = {"STR", "DATATYPE", "SAMETERM", "STRLEN", "SUBSTR", "UCASE", "LCASE", "CONCAT",
                   "CONTAINS", "STRSTARTS", "STRENDS", "REGEX", "LANGMATCHES", "IRI", "URI",
                   "xsd:string"}

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


# ---------------------------------------------------------------- expression trees

BGP_VARS = ["s", "t", "o", "v", "p"]
EXPR_VARS = BGP_VARS + ["w", "zz"]  # ?w only ever comes from the context, ?zz is never bound

BINARY = ["=", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "&&", "||"]
FUNCS = {
    "STR": 1, "LANG": 1, "DATATYPE": 1, "IRI": 1, "isIRI": 1, "isBLANK": 1, "isLITERAL": 1,
    "isNUMERIC": 1, "sameTerm": 2, "IF": 3, "CONTAINS": 2, "STRSTARTS": 2, "STRENDS": 2,
    "STRLEN": 1, "UCASE": 1, "LCASE": 1, "ABS": 1, "CEIL": 1, "FLOOR": 1, "ROUND": 1,
    "LANGMATCHES": 2, "xsd:integer": 1, "xsd:decimal": 1, "xsd:double": 1, "xsd:float": 1,
    "xsd:boolean": 1, "xsd:string": 1,
}


# pyoxigraph subtracts dateTimes into xsd:dayTimeDuration (an extension beyond SPARQL 1.1,
# where it is an error): examples with dateTimes have no binary + and -.
DATETIMES = [t for t in LITERALS if t.datatype.value == XSD + "dateTime" and info(t)[0] == K_DT]
NO_DATETIMES = [t for t in LITERALS if t not in DATETIMES]


def pool(dates: bool) -> list:
    return LITERALS if dates else NO_DATETIMES


@st.composite
def exprs(draw, depth=3, dates=True, top=True):
    if depth == 0 or (not top and draw(st.integers(0, 3)) == 0):
        if draw(st.booleans()):
            return ("var", draw(st.sampled_from(EXPR_VARS)))
        return ("const", draw(st.sampled_from(pool(dates) + SMALL_INTS + IRIS)))
    kind = draw(st.sampled_from(["bin", "bin", "bin", "unary", "fn", "fn", "fn", "in", "bound",
                                 "coalesce", "regex", "substr", "concat"]))
    sub = exprs(depth - 1, dates, top=False)
    if kind == "bin":
        ops = [op for op in BINARY if op not in "+-"] if dates else BINARY
        return ("bin", draw(st.sampled_from(ops)), draw(sub), draw(sub))
    if kind == "unary":
        return ("unary", draw(st.sampled_from(["!", "-", "+"])), draw(sub))
    if kind == "fn":
        name = draw(st.sampled_from(sorted(FUNCS)))
        return ("fn", name, tuple(draw(sub) for _ in range(FUNCS[name])))
    if kind == "in":
        # not empty: pyoxigraph makes `<iri> IN ()` an error (false in SPARQL 1.1, unit-tested)
        items = tuple(draw(st.lists(sub, min_size=1, max_size=3)))
        return ("in", draw(st.booleans()), draw(sub), items)
    if kind == "bound":
        return ("bound", draw(st.sampled_from(EXPR_VARS)))
    if kind == "coalesce":
        return ("fn", "COALESCE", tuple(draw(st.lists(sub, min_size=1, max_size=3))))
    if kind == "concat":
        return ("fn", "CONCAT", tuple(draw(st.lists(sub, max_size=3))))
    if kind == "substr":
        n = draw(st.integers(2, 3))
        args = [draw(sub)] + [("const", draw(st.sampled_from(SMALL_INTS))) for _ in range(n - 1)]
        if draw(st.integers(0, 3)) == 0:
            args[1] = draw(sub)
        return ("fn", "SUBSTR", tuple(args))
    flags = draw(st.sampled_from(REGEX_FLAGS))
    return ("regex", draw(sub), draw(st.sampled_from(REGEXES)), flags)


def render(e, lit) -> str:
    tag = e[0]
    if tag == "var":
        return f"?{e[1]}"
    if tag == "const":
        return str(lit(e[1]))
    if tag == "bin":
        return f"({render(e[2], lit)} {e[1]} {render(e[3], lit)})"
    if tag == "unary":
        return f"({e[1]}({render(e[2], lit)}))"
    if tag == "fn":
        return f"{e[1]}({', '.join(render(a, lit) for a in e[2])})"
    if tag == "in":
        op = "NOT IN" if e[1] else "IN"
        return f"({render(e[2], lit)} {op} ({', '.join(render(a, lit) for a in e[3])}))"
    if tag == "bound":
        return f"BOUND(?{e[1]})"
    assert tag == "regex"
    args = [render(e[1], lit), str(Literal(e[2]))]
    if e[3] is not None:
        args.append(str(Literal(e[3])))
    return f"REGEX({', '.join(args)})"


def tree_names(e) -> set[str]:
    tag = e[0]
    if tag == "fn":
        out = {e[1].upper() if not e[1].startswith("xsd:") else e[1]}
        for a in e[2]:
            out |= tree_names(a)
        return out
    if tag in ("bin", "unary"):
        return set().union(*(tree_names(a) for a in e[2:]))
    if tag == "in":
        return tree_names(e[2]).union(*(tree_names(a) for a in e[3]))
    if tag == "regex":
        return {"REGEX"} | tree_names(e[1])
    return set()


def tree_consts(e) -> list:
    tag = e[0]
    if tag == "const":
        return [e[1]]
    if tag == "fn":
        return [c for a in e[2] for c in tree_consts(a)]
    if tag in ("bin", "unary"):
        return [c for a in e[2:] for c in tree_consts(a)]
    if tag == "in":
        return tree_consts(e[2]) + [c for a in e[3] for c in tree_consts(a)]
    if tag == "regex":
        return tree_consts(e[1])
    return []


# ---------------------------------------------------------------- bodies, events, contexts

NODES = IRIS + BNODES
OBJECTS = IRIS + BNODES + LITERALS


@st.composite
def patterns(draw):
    subj = draw(st.sampled_from(["?s", "?s", "?t", "_:x", ("c", IRIS[0]), ("c", IRIS[1])]))
    pred = draw(st.sampled_from([("c", p) for p in PREDS] * 3 + ["?p"]))
    obj = draw(st.sampled_from(["?o", "?o", "?v", "?s", "?t", "_:x"]
                               + [("c", t) for t in (IRIS[0], BNODES[0], LITERALS[1], LITERALS[13])]))
    return (subj, pred, obj)


@st.composite
def simple_tests(draw, dates):
    var = ("var", draw(st.sampled_from(BGP_VARS)))
    if draw(st.booleans()):
        const = ("const", draw(st.sampled_from(pool(dates) + SMALL_INTS + IRIS)))
        return ("bin", draw(st.sampled_from(["=", "!=", "<", ">", "<=", ">="])), var, const)
    return ("fn", draw(st.sampled_from(["isLITERAL", "isIRI", "isBLANK", "isNUMERIC"])), (var,))


@st.composite
def filter_exprs(draw, dates):
    """Filters that often hold: plain comparisons and type tests, their combinations, or any
    expression."""
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return draw(simple_tests(dates))
    if choice == 1:
        return ("bin", draw(st.sampled_from(["&&", "||"])), draw(simple_tests(dates)),
                draw(simple_tests(dates)))
    return draw(exprs(dates=dates))


VAR_DOMAINS = {"?s": NODES, "?t": NODES, "_:x": NODES, "?p": PREDS, "?o": OBJECTS, "?v": OBJECTS}


@st.composite
def examples(draw):
    dates = draw(st.booleans())
    objects = IRIS + BNODES + pool(dates)
    body_patterns = draw(st.lists(patterns(), min_size=1, max_size=3))
    filters = draw(st.lists(filter_exprs(dates), max_size=2))
    # events mostly made of instances of the body's patterns, so that joins succeed
    triples = []
    for _ in range(draw(st.integers(0, 3))):
        assignment = {v: draw(st.sampled_from(objects if dom is OBJECTS else dom))
                      for v, dom in VAR_DOMAINS.items()}
        for tp in body_patterns:
            if draw(st.integers(0, 4)):
                triples.append(tuple(assignment[x] if isinstance(x, str) else x[1] for x in tp))
    triples += draw(st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(PREDS),
                                       st.sampled_from(objects)), max_size=4))
    triples = draw(st.permutations(triples))
    event_terms = [t for tr in triples for t in tr] or objects
    mu = {}
    for var in EXPR_VARS[:-1]:
        if draw(st.integers(0, 3)) == 0:
            mu[var] = draw(st.sampled_from(event_terms + LITERALS[:10] + [iri("zz")]))
    return triples, body_patterns, filters, mu


def render_term(t, lit):
    if isinstance(t, str):
        return t
    return str(lit(t[1]))


def body_text(body_patterns, filters, lit) -> str:
    lines = [" ".join(render_term(x, lit) for x in tp) + " ." for tp in body_patterns]
    lines += [f"FILTER({render(f, lit)})" for f in filters]
    return "{ " + "\n".join(lines) + " }"


def group_of(body: str) -> A.GroupPattern:
    q = parse_query(
        "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
        f"SELECT * FROM STREAM S <{EX}s> WHERE {{ SEQ(G) DEFINE GPM G ON S {body} }}"
    )
    return q.events["G"].pattern


def pyoxigraph_answer(triples, body: str, mu, variables) -> set:
    """pyoxigraph's ``SELECT ... WHERE { mu . body }`` on a store holding the event."""
    # The context is joined in first, as data in a named graph (pyoxigraph's substitutions,
    # needed for blank nodes in VALUES, do not reach BOUND or BIND).
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


def compiled_answer(compiled, triples, mu) -> set:
    index = EventIndex.of(Triple(s, p, o) for s, p, o in triples)
    out = compiled.solutions(index, mu)
    # a second call is served from the memoised rows and must agree
    assert out == compiled.solutions(index, mu)
    return {frozenset((k, canon(v)) for k, v in sol.items()) for sol in out}


def _examples_count() -> int:
    base = settings.default.max_examples
    return 300 if base <= 40 else 10 * base


def example_literals(example) -> set[Literal]:
    """Every literal an example uses: in its triples, mu, patterns and FILTER constants."""
    triples, body_patterns, filters, mu = example
    used = [t for tr in triples for t in tr] + list(mu.values())
    used += [t[1] for tp in body_patterns for t in tp if isinstance(t, tuple)]
    used += [c for f in filters for c in tree_consts(f)]
    return {t for t in used if isinstance(t, Literal)}


@settings(max_examples=_examples_count(), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(examples())
def test_differential_against_pyoxigraph(example):
    triples, body_patterns, filters, mu = example
    literals = example_literals(example)
    sensitive = any(tree_names(f) & CANON_SENSITIVE for f in filters)
    collision = len({canon(t) for t in literals}) != len(literals)
    non_canonical = any(canon(t) != t for t in literals)
    lit = canon if collision or (sensitive and non_canonical) else (lambda t: t)
    triples = [tuple(lit(x) for x in tr) for tr in triples]
    mu = {k: lit(v) for k, v in mu.items()}
    body = body_text(body_patterns, filters, lit)

    compiled = compile_pattern(group_of(body), dialect=OXIGRAPH.name)
    assert compiled is not None, body
    expected = pyoxigraph_answer(triples, body, mu, compiled.variables)
    got = compiled_answer(compiled, triples, mu)
    assert got == expected, (body, mu, triples, compiled.source)


# ---------------------------------------------------------------- expression values


NUMERIC_LITERALS = [t for t in LITERALS if info(t)[0] <= K_DBL or info(t)[0] == K_BAD] + SMALL_INTS
STRING_LITERALS = [t for t in LITERALS if info(t)[0] in (K_STR, K_LANG)]


@st.composite
def typed_exprs(draw, pool, unary, binary, depth=3, top=True):
    """Expressions over one family of values (numbers or strings), to reach deep arithmetic
    and string results more often than fully random trees do."""
    if depth == 0 or (not top and draw(st.integers(0, 3)) == 0):
        if draw(st.integers(0, 2)) == 0:
            return ("var", draw(st.sampled_from(EXPR_VARS)))
        return ("const", draw(st.sampled_from(pool)))
    sub = typed_exprs(pool, unary, binary, depth - 1, top=False)
    if draw(st.booleans()):
        name = draw(st.sampled_from(unary))
        if name in ("-", "+"):
            return ("unary", name, draw(sub))
        return ("fn", name, (draw(sub),))
    name = draw(st.sampled_from(binary))
    if name == "SUBSTR":
        ints = st.sampled_from(SMALL_INTS).map(lambda t: ("const", t))
        return ("fn", name, (draw(sub), draw(ints), *draw(st.lists(ints, max_size=1))))
    if name in ("CONCAT", "STRSTARTS", "STRENDS", "CONTAINS", "LANGMATCHES"):
        return ("fn", name, (draw(sub), draw(sub)))
    return ("bin", name, draw(sub), draw(sub))


@st.composite
def single_calls(draw, terms):
    """One operator or function applied to leaves: every function meets every kind of value."""
    constants = [t for t in terms if not isinstance(t, BlankNode)]  # blank nodes only via ?vars
    leaf = st.one_of(st.sampled_from(EXPR_VARS).map(lambda v: ("var", v)),
                     st.sampled_from(constants).map(lambda t: ("const", t)))
    kind = draw(st.sampled_from(["bin", "unary", "fn", "fn", "fn", "substr", "regex", "in", "concat"]))
    if kind == "bin":
        ops = [op for op in BINARY if op not in "+-"] if set(terms) & set(DATETIMES) else BINARY
        return ("bin", draw(st.sampled_from(ops)), draw(leaf), draw(leaf))
    if kind == "unary":
        return ("unary", draw(st.sampled_from(["!", "-", "+"])), draw(leaf))
    if kind == "fn":
        name = draw(st.sampled_from(sorted(FUNCS)))
        return ("fn", name, tuple(draw(leaf) for _ in range(FUNCS[name])))
    if kind == "substr":
        ints = st.sampled_from(SMALL_INTS).map(lambda t: ("const", t))
        return ("fn", "SUBSTR", (draw(leaf), draw(st.one_of(ints, leaf)), *draw(st.lists(ints, max_size=1))))
    if kind == "in":
        return ("in", draw(st.booleans()), draw(leaf), tuple(draw(st.lists(leaf, min_size=1, max_size=3))))
    if kind == "concat":
        return ("fn", "CONCAT", tuple(draw(st.lists(leaf, max_size=3))))
    return ("regex", draw(leaf), draw(st.sampled_from(REGEXES)), draw(st.sampled_from(REGEX_FLAGS)))


@st.composite
def expression_examples(draw):
    kind = draw(st.integers(0, 4))
    if kind == 4:
        dates = draw(st.booleans())
        terms = pool(dates) + SMALL_INTS + IRIS + BNODES
        e = draw(single_calls(terms))
    elif kind == 0:
        e = draw(typed_exprs(NUMERIC_LITERALS, ["-", "+", "ABS", "CEIL", "FLOOR", "ROUND", "xsd:integer",
                                                "xsd:decimal", "xsd:double", "xsd:float", "xsd:string"],
                             ["+", "-", "*", "/", "<", "=", ">=", "!="]))
        terms = NUMERIC_LITERALS
    elif kind == 1:
        e = draw(typed_exprs(STRING_LITERALS, ["UCASE", "LCASE", "STR", "LANG", "STRLEN", "xsd:integer",
                                               "xsd:double", "xsd:decimal", "xsd:boolean", "DATATYPE"],
                             ["CONCAT", "STRSTARTS", "STRENDS", "CONTAINS", "LANGMATCHES", "<", "=", "SUBSTR"]))
        terms = STRING_LITERALS + SMALL_INTS
    else:
        dates = draw(st.booleans())
        e = draw(exprs(depth=draw(st.integers(1, 4)), dates=dates))
        terms = pool(dates) + SMALL_INTS + IRIS + BNODES
    mu = {}
    for var in EXPR_VARS[:-1]:
        if draw(st.integers(0, 4)):
            mu[var] = draw(st.sampled_from(terms))
    return e, mu


def expression_of(text: str) -> A.Expr:
    group = group_of(f"{{ FILTER({text}) }}")
    (flt,) = group.elements
    return flt.expr



@settings(max_examples=_examples_count(), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(expression_examples())
def test_expression_values_against_pyoxigraph(example):
    """The value (or error) and the effective boolean value of random expressions, against
    pyoxigraph's ``BIND((e) AS ?r) BIND(IF((e), 1, 0) AS ?ebv)``."""
    e, mu = example
    literals = {t for t in [*tree_consts(e), *mu.values()] if isinstance(t, Literal)}
    if tree_names(e) & CANON_SENSITIVE and any(canon(t) != t for t in literals):
        mu = {k: canon(v) for k, v in mu.items()}
        text = render(e, canon)
    else:
        text = render(e, lambda t: t)
    fn = compile_expression(expression_of(text), dialect=OXIGRAPH.name)
    assert fn is not None, text
    try:
        value = fn(mu)
    except ERRORS:
        value = got = got_ebv = None
    else:
        got = canon(to_term(value))
        try:
            got_ebv = 1 if OXIGRAPH.ebv(value) else 0
        except ERRORS:
            got_ebv = None

    # the context goes in as data (pyoxigraph's substitutions do not reach BIND)
    store = Store()
    holder = NamedNode("urn:mu")
    store.extend(Quad(holder, NamedNode(f"urn:var:{k}"), t, DefaultGraph()) for k, t in mu.items())
    bindings = " ".join(f"<urn:mu> <urn:var:{k}> ?{k} ." for k in mu)
    result = list(store.query(
        f"PREFIX xsd: <{XSD}>\nSELECT ?r ?ebv WHERE {{ {bindings} "
        f"BIND(({text}) AS ?r) BIND(IF(({text}), 1, 0) AS ?ebv) }}"
    ))
    (row,) = result
    expected = None if row["r"] is None else canon(row["r"])
    expected_ebv = None if row["ebv"] is None else int(row["ebv"].value)
    assert (got, got_ebv) == (expected, expected_ebv), (text, mu, value, fn.source)


# ================================================================ unit tests

XSD_INT = NamedNode(XSD + "integer")
ERR = "ERR"


def value_of(text: str, dialect: Dialect = SPEC, **bindings):
    """The value of a SPARQL expression (ERR for an error) with ?vars bound to terms."""
    fn = compile_expression(expression_of(text), dialect=dialect.name)
    assert fn is not None, text
    try:
        return fn(bindings)
    except ERRORS:
        return ERR


def holds(text: str, dialect: Dialect = SPEC, **bindings):
    """FILTER(text): True, False, or ERR (distinguished from false, unlike a FILTER)."""
    v = value_of(text, dialect, **bindings)
    if v == ERR and not isinstance(v, bool):
        return ERR
    try:
        return dialect.ebv(v)
    except ERRORS:
        return ERR


def same(got, expected) -> bool:
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(got, float) and math.isnan(got) and type(got) is type(expected)
    return type(got) is type(expected) and got == expected


P = "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize("text, expected", [
    ("1 + 2", 3),
    ("1 + 1.5", Decimal("2.5")),
    ("1.5 + 1e0", 2.5),
    ('"1.5"^^xsd:float + 1', F32(2.5)),
    ('"1.5"^^xsd:float + 1.0', F32(2.5)),
    ('"1.5"^^xsd:float + 1e0', 2.5),
    ('"0.1"^^xsd:float + 0e0', 0.10000000149011612),  # float widened exactly to double
    ("7 / 2", Decimal("3.5")),
    ("1 / 3", Decimal("0.333333333333333333")),  # 18 fraction digits, truncated
    ("-2 / 3", Decimal("-0.666666666666666666")),
    ("1 / 0", ERR),
    ("1.0 / 0", ERR),
    ("1e0 / 0", math.inf),
    ("-1e0 / 0", -math.inf),
    ("1e0 / -0e0", -math.inf),
    ("0e0 / 0", math.nan),
    ('"0"^^xsd:float / 0', F32(math.nan)),
    ('"12"^^xsd:byte + 1', 13),  # derived types compute as xsd:integer
    ('-"-0"^^xsd:integer', 0),
    ('-(1.5)', Decimal("-1.5")),
    ('+"1"^^xsd:short', 1),
    ('-"a"', ERR),
    ('1 + "1"', ERR),
    ('1 + true', ERR),
    ('"abc"^^xsd:integer + 1', ERR),
    ("1.5 * 1.5", Decimal("2.25")),
    ("2e0 * 1.5", 3.0),
    ('"16777217"^^xsd:float', F32(16777216.0)),  # rounded to single precision
])
def test_arithmetic_and_promotion(text, expected):
    got = value_of(text)
    if isinstance(got, Literal):  # a bare constant stays the term it is
        got = info(got)[1]
    assert same(got, expected), (text, got)


@pytest.mark.parametrize("text, expected", [
    ("0.1 = 0.1e0", True),  # decimal promoted to double
    ('"0.1"^^xsd:float = 0.1e0', False),  # float is single precision
    ('16777217 = "16777216"^^xsd:float', True),  # integer promoted to float
    ("9007199254740993 = 9007199254740992e0", True),  # integer promoted to double
    ("9007199254740993 = 9007199254740992", False),
    ("1 = 1.0", True),
    ('"01"^^xsd:integer = 1', True),
    ('"-0"^^xsd:double = 0', True),
    ('"-0"^^xsd:double < 0', False),
    ('"NaN"^^xsd:double = "NaN"^^xsd:double', False),
    ('"NaN"^^xsd:double != "NaN"^^xsd:double', True),
    ('"INF"^^xsd:double = "INF"^^xsd:float', True),
    ("2 < 10", True),
    ("2.5 >= 2", True),
    ('"10"^^xsd:unsignedByte > "9"^^xsd:long', True),
])
def test_numeric_comparison(text, expected):
    assert holds(text) is expected


def test_nan_ordering_spec_false_oxigraph_error():
    assert holds('"NaN"^^xsd:double < 1') is False
    assert holds('"NaN"^^xsd:double >= 1') is False
    assert holds('!("NaN"^^xsd:double < 1)') is True
    assert holds('"NaN"^^xsd:double < 1', OXIGRAPH) == ERR
    assert holds('"NaN"^^xsd:double <= "NaN"^^xsd:double', OXIGRAPH) is True  # same term


def test_derived_integer_types_are_range_checked():
    assert info(typed("127", "byte")) == (K_INT, 127)
    assert info(typed("1200", "byte"))[0] == K_BAD
    assert info(typed("-1", "nonNegativeInteger"))[0] == K_BAD
    assert info(typed("-0", "nonNegativeInteger")) == (K_INT, 0)
    assert info(typed("0", "positiveInteger"))[0] == K_BAD
    assert info(typed("18446744073709551615", "unsignedLong")) == (K_INT, 2**64 - 1)
    assert holds('isNUMERIC("1200"^^xsd:byte)') is False  # the spec's own example
    assert holds('isNUMERIC("12"^^xsd:byte)') is True
    assert value_of('DATATYPE("12"^^xsd:byte)') == NamedNode(XSD + "byte")
    assert value_of('DATATYPE("12"^^xsd:byte + 0)') == XSD_INT


@pytest.mark.parametrize("lexical, dt, kind", [
    ("12", "integer", K_INT), ("+12", "integer", K_INT), ("1_0", "integer", K_BAD),
    (" 12", "integer", K_BAD), ("١٢", "integer", K_BAD), ("1e2", "integer", K_BAD),
    ("1.", "decimal", K_DEC), (".5", "decimal", K_DEC), ("1e2", "decimal", K_BAD),
    (".", "decimal", K_BAD), ("1.5.1", "decimal", K_BAD), ("", "decimal", K_BAD),
    ("1e2", "double", K_DBL), ("1.E-2", "double", K_DBL), ("+INF", "double", K_DBL),
    ("inf", "double", K_BAD), ("nan", "double", K_BAD), ("Infinity", "double", K_BAD),
    (".e1", "double", K_BAD), ("1e400", "double", K_DBL), ("1e39", "float", K_FLT),
    ("true", "boolean", K_BOOL), ("0", "boolean", K_BOOL), ("TRUE", "boolean", K_BAD),
])
def test_lexical_forms(lexical, dt, kind):
    assert info(typed(lexical, dt))[0] == kind


def test_decimal_arbitrary_precision_and_large_integers():
    assert info(typed("0.1234567890123456789", "decimal"))[1] == Decimal("0.1234567890123456789")
    assert holds("99999999999999999999 + 1 = 100000000000000000000") is True
    assert info(typed("1e39", "float"))[1] == math.inf


# ---------------------------------------------------------------- equality (RDFterm-equal)


@pytest.mark.parametrize("text, spec, oxigraph", [
    ('"a" = 1', ERR, False),  # literals of different types: unknown equality in SPARQL 1.1
    ('"a" != 1', ERR, True),
    ('1 = true', ERR, False),
    ('"a"@en = "b"@en', ERR, False),
    ('"a"@en != "b"@en', ERR, True),
    ('"a"@en = "a"', ERR, False),
    ('"a"@en = "a"@EN', True, True),  # language tags are case-insensitive
    ('"a"@en = "a"@fr', ERR, False),
    ('"a" = "a"^^xsd:string', True, True),
    ('"a" = "b"', False, False),
    ('"abc"^^xsd:integer = "abc"^^xsd:integer', True, True),
    ('"abc"^^xsd:integer = 1', ERR, ERR),
    ('"abc"^^xsd:integer != 1', ERR, ERR),
    ('"x"^^<http://t> = "x"^^<http://t>', True, True),
    ('"x"^^<http://t> = "y"^^<http://t>', ERR, ERR),
    ('"x"^^<http://t> = "a"@en', ERR, False),
    ('<http://a> = "a"', False, False),
    ('<http://a> = <http://a>', True, True),
    ('<http://a> != <http://b>', True, True),
    ("true = \"1\"^^xsd:boolean", True, True),
    ('"2020-01-01T00:00:00Z"^^xsd:dateTime = "2020-01-01"', ERR, False),
])
def test_equality(text, spec, oxigraph):
    assert holds(text) == spec
    assert holds(text, OXIGRAPH) == oxigraph


def test_equality_of_blank_nodes():
    b1, b2 = BlankNode("b1"), BlankNode("b2")
    assert holds("?x = ?y", x=b1, y=b1) is True
    assert holds("?x = ?y", x=b1, y=b2) is False
    assert holds("?x = 1", x=b1) is False
    assert holds("sameTerm(?x, ?y)", x=b1, y=b1) is True


# ---------------------------------------------------------------- ordering


@pytest.mark.parametrize("text, spec, oxigraph", [
    ('"a" < "b"', True, True),
    ('"a" < "B"', False, False),  # code point order
    ('"é" > "z"', True, True),
    ('"a"@en < "b"@en', ERR, True),  # lang strings have no order in SPARQL 1.1
    ('"a"@en < "b"@fr', ERR, ERR),
    ("false < true", True, ERR),  # op:boolean-less-than
    ("true <= true", True, True),
    ('1 < "a"', ERR, ERR),
    ('<http://a> <= <http://a>', ERR, True),  # pyoxigraph: identical terms are equal
    ('"x"^^<http://t> <= "x"^^<http://t>', ERR, True),
])
def test_ordering(text, spec, oxigraph):
    assert holds(text) == spec
    assert holds(text, OXIGRAPH) == oxigraph


# ---------------------------------------------------------------- dateTime

DT = "^^xsd:dateTime"


@pytest.mark.parametrize("a, op, b, expected", [
    ("2020-01-01T00:00:00Z", "<", "2020-01-02T00:00:00Z", True),
    ("2020-01-01T00:00:00+01:00", "=", "2019-12-31T23:00:00Z", True),
    ("2020-01-01T00:00:00-00:00", "=", "2020-01-01T00:00:00Z", True),
    ("2020-01-01T24:00:00", "=", "2020-01-02T00:00:00", True),
    ("2020-12-31T24:00:00Z", "=", "2021-01-01T00:00:00Z", True),
    ("2020-01-01T00:00:00.5Z", ">", "2020-01-01T00:00:00Z", True),
    ("2020-01-01T00:00:00.123456789Z", ">", "2020-01-01T00:00:00.12345678Z", True),
    ("-0001-01-01T00:00:00Z", "<", "0000-01-01T00:00:00Z", True),
    ("0000-03-01T00:00:00Z", ">", "0000-02-29T00:00:00Z", True),  # year 0 is a leap year
    ("12020-01-01T00:00:00Z", ">", "2021-01-01T00:00:00Z", True),
    # one side without timezone: the XSD 1.1 partial order (+-14:00)
    ("2020-01-01T00:00:00Z", "<", "2020-01-01T14:00:01", True),
    ("2020-01-01T00:00:00Z", "<", "2020-01-01T14:00:00", ERR),
    ("2020-01-01T00:00:00Z", ">", "2019-12-31T09:59:59", True),
    ("2020-01-01T00:00:00Z", ">", "2019-12-31T10:00:00", ERR),
    ("2020-01-01T00:00:00", "<", "2020-01-01T15:00:00Z", True),
    ("2020-01-01T00:00:00Z", "<=", "2020-01-01T00:00:00", ERR),
    # equality needs both or neither to have a timezone
    ("2020-01-01T00:00:00Z", "=", "2020-01-01T00:00:00", False),
    ("2020-01-01T00:00:00Z", "!=", "2020-01-01T00:00:00", True),
    ("2020-01-01T00:00:00", "=", "2020-01-01T00:00:00", True),
    ("2020-01-01T00:00:00+14:00", "<", "2020-01-01T00:00:00Z", True),
])
def test_datetime_comparison(a, op, b, expected):
    assert holds(f'"{a}"{DT} {op} "{b}"{DT}') == expected


@pytest.mark.parametrize("lexical", [
    "2020-02-30T00:00:00Z", "2021-02-29T00:00:00Z", "2020-1-01T00:00:00Z", "2020-01-01T00:00Z",
    "2020-01-01T00:00:60Z", "2020-01-01T24:00:01Z", "02020-01-01T00:00:00Z",
    "2020-01-01T00:00:00+14:01", "2020-01-01T00:00:00+15:00", "2020-01-01T00:00:00.Z",
    "2020-01-01 00:00:00Z", "2020-13-01T00:00:00Z",
])
def test_invalid_datetimes(lexical):
    assert info(typed(lexical, "dateTime"))[0] == K_BAD
    assert holds(f'"{lexical}"{DT} < "2030-01-01T00:00:00Z"{DT}') == ERR


def test_datetime_canonical_string():
    assert value_of(f'xsd:string("2020-01-01T00:00:00+00:00"{DT})') == "2020-01-01T00:00:00Z"
    assert value_of(f'xsd:string("2020-12-31T24:00:00.50"{DT})') == "2020-12-31T24:00:00.50"  # ill-typed
    assert value_of(f'xsd:string("2020-12-31T24:00:00-05:30"{DT})') == "2021-01-01T00:00:00-05:30"
    assert value_of(f'xsd:string("2020-01-01T10:00:05.250Z"{DT})') == "2020-01-01T10:00:05.25Z"
    assert value_of(f'STR("2020-01-01T00:00:00+00:00"{DT})') == "2020-01-01T00:00:00+00:00"


# ---------------------------------------------------------------- effective boolean value


@pytest.mark.parametrize("term, spec, oxigraph", [
    ("true", True, True),
    ("false", False, False),
    ('"1"^^xsd:boolean', True, True),
    ('"maybe"^^xsd:boolean', False, ERR),  # ill-typed boolean/numeric: false (17.2.2)
    ('"abc"^^xsd:integer', False, ERR),
    # out of range, so ill-typed; both dialects share the spec's literal analysis (pyoxigraph
    # itself reads 1200 and says true)
    ('"1200"^^xsd:byte', False, ERR),
    ("0", False, False),
    ("1", True, True),
    ("0.0", False, False),
    ('"-0"^^xsd:double', False, False),
    ('"NaN"^^xsd:double', False, False),
    ('"NaN"^^xsd:float', False, False),
    ('"INF"^^xsd:double', True, True),
    ("0.5", True, True),
    ('""', False, False),
    ('"0"', True, True),
    ('"false"', True, True),
    ('""^^xsd:string', False, False),
    ('"a"@en', True, ERR),  # a "plain literal" in the SPARQL 1.1 text
    ('""@en', False, ERR),
    ("<http://a>", ERR, ERR),
    ('"2020-01-01T00:00:00Z"^^xsd:dateTime', ERR, ERR),
    ('"x"^^<http://t>', ERR, ERR),
])
def test_effective_boolean_value(term, spec, oxigraph):
    assert holds(term) == spec
    assert holds(term, OXIGRAPH) == oxigraph
    # through !, || and IF as well
    assert holds(f"IF({term}, true, false)") == spec
    expected_not = ERR if spec == ERR else (not spec)
    assert holds(f"!({term})") == expected_not


def test_ebv_of_blank_node_and_unbound():
    assert holds("?x", x=BlankNode("b")) == ERR
    assert holds("?x") == ERR


# ---------------------------------------------------------------- logical operators


@pytest.mark.parametrize("text, expected", [
    ("true || (1/0)", True),
    ("(1/0) || true", True),
    ("false || (1/0)", ERR),
    ("(1/0) || false", ERR),
    ("(1/0) || (1/0)", ERR),
    ("false || false", False),
    ("false && (1/0)", False),
    ("(1/0) && false", False),
    ("true && (1/0)", ERR),
    ("(1/0) && true", ERR),
    ("true && true", True),
    ("!(1/0)", ERR),
    ("?u || true", True),  # unbound variables are errors
    ("?u && false", False),
    ("BOUND(?u) || ?u", ERR),
])
def test_three_valued_logic(text, expected):
    assert holds(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("1 IN (1/0, 1)", True),
    ("1 IN (1/0, 2)", ERR),
    ("1 NOT IN (1/0, 1)", False),
    ("1 NOT IN (1/0, 2)", ERR),
    ("1 IN ()", False),
    ("<http://a> IN ()", False),  # pyoxigraph: an error
    ("1 NOT IN ()", True),
    ("?u IN ()", ERR),  # the tested term is evaluated first
    ('"a" IN (1, "a")', True),
    ('"a" IN (1)', ERR),  # "a" = 1 is an error in SPARQL 1.1
    ("1 IN (1.0)", True),
    ('1 IN ("x"^^<http://t>, 1)', True),
    ('1 IN ("x"^^<http://t>)', ERR),
    ("2 IN (1, 2, 3)", True),
    ("2 NOT IN (1, 3)", True),
])
def test_in(text, expected):
    assert holds(text) == expected


def test_bound_if_coalesce():
    a = iri("a")
    assert holds("BOUND(?x)", x=a) is True
    assert holds("BOUND(?x)") is False
    assert info(value_of("IF(true, 1, 1/0)")) == (K_INT, 1)
    assert info(value_of("IF(false, 1/0, 2)")) == (K_INT, 2)
    assert value_of("IF(1/0, 1, 2)") == ERR
    assert info(value_of('IF("", 1, 2)')) == (K_INT, 2)
    assert info(value_of("COALESCE(1/0, ?u, 3)")) == (K_INT, 3)
    assert value_of("COALESCE(?x, 3)", x=a) == a
    assert value_of("COALESCE(1/0)") == ERR
    assert value_of("COALESCE()") == ERR


# ---------------------------------------------------------------- term functions


def test_str_lang_datatype():
    assert value_of('STR("14.0"^^xsd:double)') == "14.0"  # the lexical form as written
    assert value_of('STR("01"^^xsd:integer)') == "01"
    assert value_of("STR(1.0 + 1)") == "2"
    assert value_of("STR(1e7 * 1)") == "10000000"
    assert value_of("STR(1.5e-7 * 1)") == "0.00000015"
    assert value_of("STR(-0e0 * 1)") == "-0"
    assert value_of("STR(0.1e0 * 3)") == "0.30000000000000004"
    assert value_of('STR(xsd:float("0.3"))') == "0.3"
    assert value_of('STR(xsd:float(16777217))') == "16777216"
    assert value_of('STR(1e0 / 0)') == "INF"
    assert value_of('STR(0e0 / 0)') == "NaN"
    assert value_of("STR(<http://a>)") == "http://a"
    assert value_of("STR(?x)", x=BlankNode("b")) == ERR
    assert value_of("STR(true)") == "true"
    assert value_of('LANG("a"@en-US)') == "en-us"
    assert value_of('LANG("a")') == ""
    assert value_of("LANG(1)") == ""
    assert value_of("LANG(<http://a>)") == ERR
    assert value_of('LANG(UCASE("a"@fr))') == "fr"
    assert value_of('DATATYPE("a")') == XSD_STRING
    assert value_of('DATATYPE("a"@en)') == RDF_LANGSTRING
    assert value_of("DATATYPE(1/2)") == XSD_DECIMAL
    assert value_of('DATATYPE(1 * "1.5"^^xsd:float)') == XSD_FLOAT
    assert value_of("DATATYPE(1 < 2)") == XSD_BOOLEAN
    assert value_of("DATATYPE(<http://a>)") == ERR
    assert value_of('DATATYPE("x"^^<http://t>)') == NamedNode("http://t")


def test_iri_and_type_tests():
    assert value_of('IRI("http://a")') == NamedNode("http://a")
    assert value_of('URI("http://a"^^xsd:string)') == NamedNode("http://a")
    assert value_of("IRI(<http://a>)") == NamedNode("http://a")
    assert value_of('IRI("foo")') == ERR  # relative, and no base
    assert value_of('IRI("http://a b")') == ERR
    assert value_of('IRI("http://a"@en)') == ERR
    assert value_of("IRI(1)") == ERR
    b = BlankNode("b")
    for text, expected in [("isIRI(<http://a>)", True), ('isURI("a")', False), ("isBLANK(?b)", True),
                           ("isLITERAL(1)", True), ("isLITERAL(?b)", False), ("isLITERAL(?u)", ERR),
                           ('isNUMERIC("abc"^^xsd:integer)', False), ("isNUMERIC(1.5)", True),
                           ('isNUMERIC("x"^^<http://t>)', False), ("isIRI(IRI(\"http://a\"))", True)]:
        assert holds(text, b=b) == expected, text
    assert holds('sameTerm(1, 1.0)') is False
    assert holds('sameTerm("01"^^xsd:integer, 1)') is False  # pyoxigraph: true (canonical forms)
    assert holds("sameTerm(1 + 1, 2)") is True
    assert holds('sameTerm("-0"^^xsd:double, "0"^^xsd:double)') is False
    assert holds('sameTerm("a"@en, "a"@EN)') is True
    assert holds("sameTerm(?u, ?u)") == ERR


# ---------------------------------------------------------------- string functions


@pytest.mark.parametrize("text, expected", [
    ('STRLEN("abc"@en)', 3),
    ('STRLEN("é😀")', 2),
    ("STRLEN(1)", ERR),
    ('UCASE("abc"@en)', LangStr("ABC", "en")),
    ('UCASE("ß")', "SS"),
    ('LCASE("ǅ")', "ǆ"),
    ("UCASE(1)", ERR),
    ('SUBSTR("abc", 2)', "bc"),
    ('SUBSTR("abc", 0, 2)', "a"),
    ('SUBSTR("abc", -1, 3)', "a"),
    ('SUBSTR("abc", 2, -1)', ""),
    ('SUBSTR("abc", 10)', ""),
    ('SUBSTR("abc", 1, 100)', "abc"),
    ('SUBSTR("abc"@en, 2)', LangStr("bc", "en")),
    ('SUBSTR("abc", "2"^^xsd:byte)', "bc"),
    ('SUBSTR("abc", 1.5, 1)', ERR),
    ('SUBSTR("abc", 2e0)', ERR),
    ("SUBSTR(<http://a>, 1)", ERR),
    ('SUBSTR("😀ab", 2, 1)', "a"),
    ('CONCAT("a"@en, "b"@en)', LangStr("ab", "en")),
    ('CONCAT("a"@en, "b")', "ab"),
    ('CONCAT("a"@en, "b"@fr)', "ab"),
    ("CONCAT()", ""),
    ('CONCAT("a", 1)', ERR),
    ('CONCAT("a"^^xsd:string, "b")', "ab"),
    ('CONTAINS("abc"@en, "b")', True),
    ('CONTAINS("abc"@en, "b"@en)', True),
    ('CONTAINS("abc"@en, "b"@fr)', ERR),
    ('CONTAINS("abc", "b"@en)', ERR),
    ('CONTAINS("abc", "")', True),
    ("CONTAINS(1, \"1\")", ERR),
    ('STRSTARTS("abc", "ab")', True),
    ('STRSTARTS("abc", "b")', False),
    ('STRENDS("abc"@en, "bc"^^xsd:string)', True),
    ('LANGMATCHES("en-US", "en")', True),
    ('LANGMATCHES("en-US", "EN")', True),
    ('LANGMATCHES("english", "en")', False),
    ('LANGMATCHES("en", "*")', True),
    ('LANGMATCHES("", "*")', False),
    ('LANGMATCHES("", "")', True),
    ('LANGMATCHES("en", "")', False),
    ('LANGMATCHES("en"@en, "en")', ERR),
    ('LANGMATCHES(LANG("a"@de-CH), "de")', True),
])
def test_string_functions(text, expected):
    got = value_of(text)
    assert same(got, expected) or got == expected == ERR, (text, got)


@pytest.mark.parametrize("text, expected", [
    ('REGEX("abc", "b")', True),
    ('REGEX("abc", "^b")', False),
    ('REGEX("abc\\n", "c$")', False),  # $ only at the very end (Python's $ would match)
    ('REGEX("ab\\nc", "^c", "m")', True),
    ('REGEX("ab\\nc", "b$", "m")', True),
    ('REGEX("ab\\nc", "b.c")', False),
    ('REGEX("ab\\rc", "b.c")', False),  # XPath's . excludes \\r too (pyoxigraph: true)
    ('REGEX("ab\\nc", "b.c", "s")', True),
    ('REGEX("ABC", "b", "i")', True),
    ('REGEX("ab", "a b", "x")', True),
    ('REGEX("a b", "a[ ]b", "x")', True),  # x keeps whitespace inside classes
    ('REGEX("ab", "a#x\\nb", "x")', False),  # no comments in XPath's x mode
    ('REGEX("a.b", ".", "q")', True),
    ('REGEX("axb", "a.b", "q")', False),
    ('REGEX("A.B", "a.b", "qi")', True),
    ('REGEX("ab", "a", "z")', ERR),  # invalid flag
    ('REGEX("ab"@en, "a")', True),
    ('REGEX("ab", "a"@en)', ERR),
    ('REGEX("ab", "a"^^xsd:string)', True),
    ("REGEX(1, \"1\")", ERR),
    ('REGEX("ab", "")', True),
    ('REGEX("aaa", "^a{2}$")', False),
    ('REGEX("a1", "\\\\d")', True),
    ('REGEX("a b", "a\\\\sb")', True),
    ('REGEX("a\\u000Bb", "a\\\\sb")', False),  # XPath \\s is [ \\t\\n\\r] only
    ('REGEX("a-b", "[a\\\\-]-b")', True),
    ('REGEX("]", "[\\\\]]")', True),
    ('REGEX("ab", "(?:a|x)b")', True),
])
def test_regex(text, expected):
    assert holds(text) == expected


@pytest.mark.parametrize("pattern", ["\\w", "\\p{L}", "[a-z-[aeiou]]", "(?i)a", "\\b", "(a)\\1",
                                     "a{,2}", "[]a]", "a*+", "\\i", "(?=a)", "a}"])
def test_untranslated_regexes_are_left_to_pyoxigraph(pattern):
    with pytest.raises(UnsupportedRegex):
        translate_regex(pattern, "")
    body = f"{{ ?s ?p ?o FILTER(REGEX(?o, {Literal(pattern)})) }}"
    assert compile_pattern(group_of(body)) is None


def test_regex_with_a_variable_pattern_is_left_to_pyoxigraph():
    assert compile_pattern(group_of('{ ?s ?p ?o FILTER(REGEX(?o, ?s)) }')) is None
    assert compile_pattern(group_of('{ ?s ?p ?o FILTER(REGEX(?o, "a", ?s)) }')) is None


# ---------------------------------------------------------------- numeric functions and casts


@pytest.mark.parametrize("text, expected", [
    ("ROUND(2.5)", Decimal(3)),
    ("ROUND(-2.5)", Decimal(-2)),  # half towards positive infinity
    ("ROUND(-2.5e0)", -2.0),
    ("ROUND(-0.3e0)", -0.0),
    ("ROUND(0.49999999999999994e0)", 0.0),
    ('ROUND("2.5"^^xsd:float)', F32(3.0)),
    ('ROUND("NaN"^^xsd:double)', math.nan),
    ("ROUND(7)", 7),
    ("CEIL(-0.5)", Decimal(0)),
    ("CEIL(-0.5e0)", -0.0),
    ("CEIL(1.2)", Decimal(2)),
    ("FLOOR(-0.5)", Decimal(-1)),
    ("FLOOR(1e300)", 1e300),
    ("ABS(-0e0)", 0.0),
    ('ABS("-1"^^xsd:byte)', 1),
    ("ABS(-1.5)", Decimal("1.5")),
    ('ABS("a")', ERR),
    ("xsd:integer(12.7)", 12),
    ("xsd:integer(-12.7e0)", -12),
    ('xsd:integer("NaN"^^xsd:double)', ERR),
    ("xsd:integer(true)", 1),
    ('xsd:integer("+5")', 5),
    ('xsd:integer("12.5")', ERR),
    ('xsd:integer("5"@en)', ERR),
    ("xsd:integer(<http://a>)", ERR),
    ('xsd:integer("abc"^^xsd:integer)', ERR),
    ('xsd:decimal("1e2")', ERR),
    ('xsd:decimal(".5")', Decimal("0.5")),
    ("xsd:decimal(1.5e0)", Decimal("1.5")),
    ("xsd:decimal(0.1e0)", Decimal("0.1")),
    ("xsd:decimal(false)", Decimal(0)),
    ('xsd:decimal("INF"^^xsd:double)', ERR),
    ('xsd:double("1e2")', 100.0),
    ('xsd:double("-INF")', -math.inf),
    ('xsd:double("inf")', ERR),  # pyoxigraph: INF
    ("xsd:double(true)", 1.0),
    ('xsd:double("0x10")', ERR),
    ('xsd:float("0.1")', F32(f32(0.1))),
    ('xsd:float("1e39")', F32(math.inf)),
    ('xsd:boolean("1")', True),
    ('xsd:boolean("TRUE")', ERR),
    ("xsd:boolean(0.0e0)", False),
    ('xsd:boolean("NaN"^^xsd:double)', False),
    ("xsd:boolean(2)", True),
    ("xsd:string(1.50)", "1.5"),
    ('xsd:string("01"^^xsd:integer)', "1"),  # a cast works on the value
    ('xsd:string("a"@en)', "a"),
    ("xsd:string(<http://a>)", "http://a"),
    ('xsd:string("1"^^xsd:boolean)', "true"),
    ('xsd:string("abc"^^xsd:integer)', "abc"),
    ('xsd:string("x"^^<http://t>)', "x"),
])
def test_numeric_functions_and_casts(text, expected):
    got = value_of(text)
    assert same(got, expected) or got == expected == ERR, (text, got)


def test_casts_from_strings_collapse_whitespace_in_spec_only():
    assert value_of('xsd:integer(" 12 ")') == 12
    assert value_of('xsd:double(" 1e2\\n")') == 100.0
    assert value_of('xsd:boolean(" true")') is True
    assert value_of('xsd:integer(" 12 ")', OXIGRAPH) == ERR


def test_oxigraph_dialect_zero_divided_by_fraction():
    assert value_of("0 / 1.5") == Decimal(0)
    assert value_of("0 / 1.5", OXIGRAPH) == ERR
    assert value_of("0 / 2.0", OXIGRAPH) == Decimal(0)


def test_formatting_of_computed_values():
    assert format_double(1e300).startswith("1000000000")
    assert format_double(123456789012345678.0) == "123456789012345680"
    assert format_float(f32(1e-40)) == "0.0000000000000000000000000000000000000001"
    assert format_float(f32(3.4028235e38)) == "340282350000000000000000000000000000000"
    assert format_decimal(Decimal("-0.0")) == "0"
    assert format_decimal(Decimal("1.500")) == "1.5"
    assert format_decimal(Decimal("1E+2")) == "100"
    assert str(to_term(Decimal("2"))) == '"2"^^<http://www.w3.org/2001/XMLSchema#decimal>'
    assert to_term(LangStr("a", "en")) == Literal("a", language="en")
    assert to_term("a") == Literal("a")


# ---------------------------------------------------------------- EventIndex


def test_event_index():
    a, b, p, q = iri("a"), iri("b"), iri("p"), iri("q")
    one = typed("1", "integer")
    triples = [Triple(a, p, one), Triple(b, p, one), Triple(a, q, b), Triple(a, p, one)]
    index = EventIndex.of(triples)
    assert index.by_pred[p] == [(a, one), (b, one)]  # the repeated triple is dropped
    assert index.by_pred[q] == [(a, b)]
    assert index.predicates == frozenset({p, q})
    assert len(index) == 3
    assert index.by_subject(p) == {a: [(a, one)], b: [(b, one)]}
    assert index.by_object(p) == {one: [(a, one), (b, one)]}
    assert index.by_subject(iri("none")) == {}
    assert sorted(map(str, index.triples())) == sorted(map(str, set(triples)))
    assert EventIndex.of(triples, assume_distinct=True).by_pred[p] == [(a, one), (b, one), (a, one)]
    assert EventIndex.of([]).by_pred == {}


# ---------------------------------------------------------------- compile_pattern


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
    "{ ?s ?p ?o FILTER(xsd:date(?o) = ?o) }",
    "{ ?s ?p ?o FILTER(STRBEFORE(?o, \"a\") = \"\") }",
    "{ ?s ?p ?o FILTER(xsd:dateTime(?o) > NOW()) }",
    "{ ?s ?p ?o FILTER(REPLACE(?o, \"a\", \"b\") = \"b\") }",
    "{ GRAPH <http://kb> { ?s ?p ?o } }",
    "{ { ?s ?p ?o } }",
])
def test_unsupported_bodies_give_none(body):
    assert compile_pattern(group_of(body)) is None


def test_iri_function_is_left_to_pyoxigraph_with_a_base():
    group = group_of('{ ?s ?p ?o FILTER(IRI("x") = ?s) }')
    assert compile_pattern(group) is not None
    assert compile_pattern(group, base_iri="http://base/") is None


def test_graph_elements_with_allow_graph():
    group = group_of("{ ?s <http://ex.org/p> ?o . GRAPH <http://kb> { ?o <http://ex.org/q> ?k } "
                     "FILTER(?k > 1) FILTER(?o != 0) }")
    assert compile_pattern(group) is None
    c = compile_pattern(group, allow_graph=True)
    assert c is not None
    (g,) = c.graph_elements
    assert isinstance(g, A.GraphPattern) and g.graph == NamedNode("http://kb")
    assert c.variables == ("s", "o")
    assert set(c.filter_variables) == {"k", "o"}
    index = EventIndex.of([Triple(iri("a"), iri("p"), typed("5", "integer"))])
    assert c.base(index) == [{"s": iri("a"), "o": typed("5", "integer")}]
    with pytest.raises(ValueError):
        c.solutions(index, {})
    assert c.check({"s": iri("a"), "o": typed("5", "integer"), "k": typed("2", "integer")})
    assert not c.check({"s": iri("a"), "o": typed("5", "integer"), "k": typed("1", "integer")})
    assert not c.check({"s": iri("a"), "o": typed("5", "integer")})  # ?k unbound: error


def test_compiled_pattern_api():
    group = group_of("{ ?s <http://ex.org/p> ?o . ?s <http://ex.org/q> [ <http://ex.org/r> ?x ] . "
                     "FILTER(?o > ?min) }")
    c = compile_pattern(group)
    assert c.required_predicates == frozenset({iri("p"), iri("q"), iri("r")})
    assert c.variables == ("s", "o", "x")  # the blank node is not a variable of the result
    assert c.filter_variables == ("min", "o")
    a, b, n1, n2 = iri("a"), iri("b"), BlankNode("n1"), BlankNode("n2")
    one, two, five = (typed(str(i), "integer") for i in (1, 2, 5))
    triples = [Triple(a, iri("p"), five), Triple(a, iri("q"), n1), Triple(a, iri("q"), n2),
               Triple(n1, iri("r"), one), Triple(n2, iri("r"), one), Triple(b, iri("p"), one)]
    index = EventIndex.of(triples)
    assert c.may_match(index)
    assert not c.may_match(EventIndex.of(triples[:1]))
    # two blank nodes lead to the same projected solution: distinct
    assert c.base(index) == [{"s": a, "o": five, "x": one}]
    assert c.rows(index) == [(a, five, one)]
    assert c.solutions(index, {"min": two}) == [{"min": two, "s": a, "o": five, "x": one}]
    assert c.solutions(index, {"min": five}) == []
    assert c.solutions(index, {}) == []  # ?min unbound: the FILTER is an error
    assert c.solutions(index, {"min": two, "s": b}) == []  # incompatible context
    other = {"min": two, "s": a, "zz": iri("z")}
    assert c.solutions(index, other) == [{**other, "o": five, "x": one}]
    assert c.base_bound(index, {"s": a}) == [{"s": a, "o": five, "x": one}]
    assert c.base_bound(index, {"s": b}) == []
    assert c.check({"o": five, "min": two}) and not c.check({"o": one, "min": two})
    assert "def _solutions" in c.source


def test_empty_and_filter_only_bodies():
    c = compile_pattern(group_of("{ }"))
    assert c.base(EventIndex.of([])) == [{}]
    assert c.required_predicates == frozenset()
    mu = {"p1": typed("3", "integer")}
    assert c.solutions(EventIndex.of([]), mu) == [mu]
    f = compile_pattern(group_of("{ FILTER(?p1 > 2) }"))
    assert f.solutions(EventIndex.of([]), mu) == [mu]
    assert f.solutions(EventIndex.of([]), {"p1": typed("1", "integer")}) == []
    never = compile_pattern(group_of("{ FILTER(1/0) }"))
    assert never.solutions(EventIndex.of([]), {}) == []


def test_join_shapes():
    a, b, c_, p, q = iri("a"), iri("b"), iri("c"), iri("p"), iri("q")
    triples = [Triple(a, p, a), Triple(a, p, b), Triple(b, q, c_), Triple(b, p, b), Triple(c_, q, a)]
    index = EventIndex.of(triples)

    def answer(body):
        comp = compile_pattern(group_of(body))
        return sorted(tuple(sorted((k, v.value) for k, v in s.items())) for s in comp.base(index))

    assert answer(f"{{ ?x <{EX}p> ?x }}") == [(("x", EX + "a"),), (("x", EX + "b"),)]
    assert answer("{ ?x ?x ?y }") == []
    assert answer(f"{{ <{EX}a> ?p ?o . ?o ?p ?z }}") == [
        (("o", EX + "a"), ("p", EX + "p"), ("z", EX + "a")),
        (("o", EX + "a"), ("p", EX + "p"), ("z", EX + "b")),
        (("o", EX + "b"), ("p", EX + "p"), ("z", EX + "b")),
    ]
    assert answer(f"{{ ?x <{EX}p> ?y . ?y <{EX}q> ?z . ?z <{EX}q> ?w }}") == [
        (("w", EX + "a"), ("x", EX + "a"), ("y", EX + "b"), ("z", EX + "c")),
        (("w", EX + "a"), ("x", EX + "b"), ("y", EX + "b"), ("z", EX + "c")),
    ]
    assert answer(f"{{ ?x <{EX}p> <{EX}b> }}") == [(("x", EX + "a"),), (("x", EX + "b"),)]
    assert answer(f"{{ ?x <{EX}none> ?y }}") == []


def test_hash_join_path_agrees_with_scanning():
    p, q = iri("p"), iri("q")
    subjects = [iri(f"s{i}") for i in range(40)]
    triples = [Triple(s, p, typed(str(i), "integer")) for i, s in enumerate(subjects)]
    triples += [Triple(s, q, typed(str(i % 3), "integer")) for i, s in enumerate(subjects)]
    index = EventIndex.of(triples)
    body = f"{{ ?s <{EX}p> ?v . ?s <{EX}q> ?w . ?t <{EX}q> ?w FILTER(?v < 6) }}"
    comp = compile_pattern(group_of(body))
    assert "by_subject" in comp.source and "by_object" in comp.source
    got = comp.solutions(index, {})
    expected = pyoxigraph_answer([(t.subject, t.predicate, t.object) for t in triples], body, {},
                                 comp.variables)
    assert {frozenset(s.items()) for s in got} == expected
    assert len(got) == 2 * 14 + 4 * 13  # ?w = 0 has 14 subjects, 1 and 2 have 13
