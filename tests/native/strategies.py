"""Generators and renderers of the native GPM differential tests (tests/native): literal pools
of every kind, random expression trees and their SPARQL text (``render``), random bodies,
events and contexts (``examples``), and the algebra of a rendered body or expression.

Expression trees are tuples: ``("var", name)``, ``("const", term)``, ``("bin", op, a, b)``,
``("unary", op, a)``, ``("fn", NAME, args)``, ``("in", negated, a, items)``,
``("bound", name)``, ``("regex", a, pattern, flags)``. The pools leave some values to
``tests/native/test_gpm_eval.py``'s own extra pool (dates, durations, out-of-range derived
integers...); dateTime examples here have no binary + and -."""

from __future__ import annotations

from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.language.query import parse_query
from spaseq.engine.values.kinds import K_BAD, K_DBL, K_DT, K_LANG, K_STR
from spaseq.engine.values.literals import info
from spaseq.engine.vocab import XSD_NS

EX = "http://ex.org/"
XSD = XSD_NS


def iri(x: str) -> NamedNode:
    return NamedNode(EX + x)


def typed(v: str, dt: str) -> Literal:
    """A literal of datatype ``dt`` (an xsd local name, or a full IRI)."""
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


# the examples drawn with dateTimes here have no binary + and - (dateTime - dateTime is a
# duration: test_gpm_eval's own pool draws those)
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
        # not empty here (test_gpm_eval's own trees draw empty lists)
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


def tree_consts(e) -> list:
    """The constants of an expression tree."""
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
    """The algebra of a GPM body (text with braces)."""
    q = parse_query(
        "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
        f"SELECT * FROM STREAM S <{EX}s> WHERE {{ SEQ(G) DEFINE GPM G ON S {body} }}"
    )
    return q.events["G"].pattern


def example_literals(example) -> set[Literal]:
    """Every literal an example uses: in its triples, mu, patterns and FILTER constants."""
    triples, body_patterns, filters, mu = example
    used = [t for tr in triples for t in tr] + list(mu.values())
    used += [t[1] for tp in body_patterns for t in tp if isinstance(t, tuple)]
    used += [c for f in filters for c in tree_consts(f)]
    return {t for t in used if isinstance(t, Literal)}




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
    """The algebra of an expression (its SPARQL text)."""
    group = group_of(f"{{ FILTER({text}) }}")
    (flt,) = group.elements
    return flt.expr
