"""The dialect tables (engine/values/dialects.py): one table per dialect, the same operators,
and the answers differing exactly where pyoxigraph departs from the SPARQL 1.1 text."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.gpm_codegen import compile_expression
from spaseq.engine.language.query import parse_query
from spaseq.engine.values.casts import CASTS
from spaseq.engine.values.dialects import DIALECTS, OPERATORS, OXIGRAPH, SPEC, Dialect, dialect_named
from spaseq.engine.values.kinds import ERRORS
from spaseq.engine.vocab import XSD_NS, xsd
from tests.util import QUERY_PREFIXES

ERR = "ERR"


def typed(text: str, local: str) -> Literal:
    return Literal(text, datatype=xsd(local))


def outcome(fn, *args):
    """The result of ``fn(*args)``, or ERR for an expression error."""
    try:
        return fn(*args)
    except ERRORS:
        return ERR


A_EN, B_EN, EMPTY_EN = Literal("a", language="en"), Literal("b", language="en"), Literal("", language="en")
NAN = typed("NaN", "double")
IRI = NamedNode("http://ex.org/a")


def test_tables_are_named_and_found_by_name():
    assert DIALECTS == {"spec": SPEC, "oxigraph": OXIGRAPH}
    assert dialect_named("spec") is SPEC and dialect_named("oxigraph") is OXIGRAPH
    with pytest.raises(ValueError, match="unknown dialect 'sparql'"):
        dialect_named("sparql")


def test_both_tables_offer_the_same_operators():
    spec, ox = SPEC.functions(), OXIGRAPH.functions()
    assert spec.keys() == ox.keys()
    assert set(OPERATORS) | {"compare", "equal", "ebv", "op_div"} | set(CASTS.values()) == spec.keys()
    shared = {name for name in spec if spec[name] is ox[name]}
    assert shared == set(OPERATORS) | {"cast_string"}
    assert SPEC.casts.keys() == OXIGRAPH.casts.keys() == CASTS.keys()


@pytest.mark.parametrize(
    ("value", "spec", "oxigraph"),
    [
        (A_EN, True, ERR),  # a "plain literal" in SPARQL 1.1: its length
        (EMPTY_EN, False, ERR),
        (typed("x", "integer"), False, ERR),  # ill-typed numeric: false in SPARQL 1.1
        (typed("1200", "byte"), False, ERR),  # out of range, so ill-typed
        (typed("maybe", "boolean"), False, ERR),
        # where they agree
        (typed("2024-13-01T00:00:00Z", "dateTime"), ERR, ERR),
        (NAN, False, False),
        (typed("0.0", "decimal"), False, False),
        (Literal(""), False, False),
        (Literal("x"), True, True),
        (typed("1", "boolean"), True, True),
        (IRI, ERR, ERR),
    ],
)
def test_effective_boolean_value(value, spec, oxigraph):
    assert outcome(SPEC.ebv, value) == spec
    assert outcome(OXIGRAPH.ebv, value) == oxigraph


@pytest.mark.parametrize(
    ("a", "b", "spec", "oxigraph"),
    [
        (typed("true", "boolean"), typed("false", "boolean"), 1, ERR),  # op:boolean-less-than
        (NAN, typed("1", "integer"), 2, ERR),  # unordered, not an error, in SPARQL 1.1
        (NAN, NAN, 2, 0),  # pyoxigraph: the same term
        (A_EN, B_EN, ERR, -1),  # same language tag: ordered by pyoxigraph
        (A_EN, Literal("b", language="fr"), ERR, ERR),
        (IRI, IRI, ERR, 0),  # identical terms
        (IRI, NamedNode("http://ex.org/b"), ERR, ERR),
        # where they agree
        (typed("1", "integer"), typed("1.5", "decimal"), -1, -1),
        (Literal("b"), Literal("a"), 1, 1),
        (typed("2024-01-01T00:00:00Z", "dateTime"), typed("2024-01-01T01:00:00+01:00", "dateTime"), 0, 0),
        (typed("2024-01-01T00:00:00", "dateTime"), typed("2024-01-01T00:00:00Z", "dateTime"), ERR, ERR),
    ],
)
def test_ordering(a, b, spec, oxigraph):
    assert outcome(SPEC.compare, a, b) == spec
    assert outcome(OXIGRAPH.compare, a, b) == oxigraph


@pytest.mark.parametrize(
    ("a", "b", "spec", "oxigraph"),
    [
        (Literal("a"), typed("1", "integer"), ERR, False),  # RDFterm-equal: a type error
        (A_EN, B_EN, ERR, False),
        (A_EN, Literal("a"), ERR, False),
        (typed("1", "integer"), typed("true", "boolean"), ERR, False),
        # where they agree
        (A_EN, A_EN, True, True),
        (typed("1", "integer"), typed("1.0", "decimal"), True, True),
        (IRI, typed("1", "integer"), False, False),
        (BlankNode("b"), BlankNode("b"), True, True),
        (typed("2024-01-01", "date"), typed("2024-01-02", "date"), ERR, ERR),
    ],
)
def test_equality(a, b, spec, oxigraph):
    assert outcome(SPEC.equal, a, b) == spec
    assert outcome(OXIGRAPH.equal, a, b) == oxigraph


@pytest.mark.parametrize(
    ("a", "b", "spec", "oxigraph"),
    [
        (typed("0", "decimal"), typed("1.5", "decimal"), Decimal(0), ERR),  # a pyoxigraph bug
        (typed("0", "integer"), typed("2.0", "decimal"), Decimal(0), Decimal(0)),
        (typed("1", "integer"), typed("4", "integer"), Decimal("0.25"), Decimal("0.25")),
        (typed("1", "integer"), typed("0", "integer"), ERR, ERR),
    ],
)
def test_division(a, b, spec, oxigraph):
    assert outcome(SPEC.divide, a, b) == spec
    assert outcome(OXIGRAPH.divide, a, b) == oxigraph


def test_casts_from_strings_trim_whitespace_in_spec_only():
    padded = Literal(" 12 ")
    assert SPEC.casts[XSD_NS + "integer"](padded) == 12
    assert outcome(OXIGRAPH.casts[XSD_NS + "integer"], padded) == ERR
    assert SPEC.casts[XSD_NS + "boolean"](Literal(" true\n")) is True
    assert outcome(OXIGRAPH.casts[XSD_NS + "boolean"], Literal(" true\n")) == ERR
    assert math.isclose(OXIGRAPH.casts[XSD_NS + "double"](Literal("1.5")), 1.5)
    for dialect in (SPEC, OXIGRAPH):
        assert dialect.casts[XSD_NS + "string"](typed("01", "integer")) == "1"  # canonical


def _compiled(text: str, dialect: Dialect):
    query = parse_query(
        f"{QUERY_PREFIXES}SELECT * FROM STREAM S <http://ex.org/s> WHERE {{ SEQ(G) "
        f"DEFINE GPM G ON S {{ FILTER({text}) }} }}"
    )
    (flt,) = query.events["G"].pattern.elements
    assert isinstance(flt, A.Filter)
    fn = compile_expression(flt.expr, dialect=dialect.name)
    assert fn is not None, text
    return fn


@pytest.mark.parametrize(
    ("text", "spec", "oxigraph"),
    [
        ('"a"@en = "b"@en', ERR, False),
        ("true < false", False, ERR),
        ('xsd:integer(" 12 ")', 12, ERR),
        ("0.0 / 1.5", Decimal(0), ERR),
    ],
)
def test_compiled_code_uses_the_table_it_is_given(text, spec, oxigraph):
    assert outcome(_compiled(text, SPEC), {}) == spec
    assert outcome(_compiled(text, OXIGRAPH), {}) == oxigraph
