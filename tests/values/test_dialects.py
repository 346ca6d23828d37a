"""The SPEC table (engine/values/dialects.py): the SPARQL 1.1 text's ordering, equality,
effective boolean value, division and casts, which the run functions use (spaseq:min/max/avg).
GPM FILTERs follow pyoxigraph instead (natively: tests/native/test_expression_semantics.py),
which departs from the spec in the cases marked here."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values.casts import CASTS
from spaseq.engine.values.dialects import OPERATORS, SPEC
from spaseq.engine.values.kinds import ERRORS
from spaseq.engine.vocab import XSD_NS, xsd

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


def test_the_table_offers_every_operator():
    assert set(OPERATORS) | {"compare", "equal", "ebv", "op_div"} | set(CASTS.values()) == SPEC.functions().keys()
    assert SPEC.casts.keys() == CASTS.keys()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (A_EN, True),  # pyoxigraph: ERR; a "plain literal" in SPARQL 1.1: its length
        (EMPTY_EN, False),  # pyoxigraph: ERR
        (typed("x", "integer"), False),  # pyoxigraph: ERR; ill-typed numeric: false in SPARQL 1.1
        (typed("1200", "byte"), False),  # pyoxigraph: true (reads 1200); out of range, so ill-typed
        (typed("maybe", "boolean"), False),  # pyoxigraph: ERR
        # the others
        (typed("2024-13-01T00:00:00Z", "dateTime"), ERR),
        (NAN, False),
        (typed("0.0", "decimal"), False),
        (Literal(""), False),
        (Literal("x"), True),
        (typed("1", "boolean"), True),
        (IRI, ERR),
    ],
)
def test_effective_boolean_value(value, expected):
    assert outcome(SPEC.ebv, value) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (typed("true", "boolean"), typed("false", "boolean"), 1),  # pyoxigraph: ERR; op:boolean-less-than
        (NAN, typed("1", "integer"), 2),  # pyoxigraph: ERR; unordered, not an error, in SPARQL 1.1
        (NAN, NAN, 2),  # pyoxigraph: 0, the same term
        (A_EN, B_EN, ERR),  # pyoxigraph: -1, the same language tag
        (A_EN, Literal("b", language="fr"), ERR),
        (IRI, IRI, ERR),  # pyoxigraph: 0; identical terms
        (IRI, NamedNode("http://ex.org/b"), ERR),
        # the others
        (typed("1", "integer"), typed("1.5", "decimal"), -1),
        (Literal("b"), Literal("a"), 1),
        (typed("2024-01-01T00:00:00Z", "dateTime"), typed("2024-01-01T01:00:00+01:00", "dateTime"), 0),
        (typed("2024-01-01T00:00:00", "dateTime"), typed("2024-01-01T00:00:00Z", "dateTime"), ERR),
    ],
)
def test_ordering(a, b, expected):
    assert outcome(SPEC.compare, a, b) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (Literal("a"), typed("1", "integer"), ERR),  # pyoxigraph: False; RDFterm-equal: a type error
        (A_EN, B_EN, ERR),  # pyoxigraph: False
        (A_EN, Literal("a"), ERR),  # pyoxigraph: False
        (typed("1", "integer"), typed("true", "boolean"), ERR),  # pyoxigraph: False
        # the others
        (A_EN, A_EN, True),
        (typed("1", "integer"), typed("1.0", "decimal"), True),
        (IRI, typed("1", "integer"), False),
        (BlankNode("b"), BlankNode("b"), True),
        (typed("2024-01-01", "date"), typed("2024-01-02", "date"), ERR),  # pyoxigraph: False (by value)
    ],
)
def test_equality(a, b, expected):
    assert outcome(SPEC.equal, a, b) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (typed("0", "decimal"), typed("1.5", "decimal"), Decimal(0)),  # pyoxigraph 0.5: ERR, a bug
        (typed("0", "integer"), typed("2.0", "decimal"), Decimal(0)),
        (typed("1", "integer"), typed("4", "integer"), Decimal("0.25")),
        (typed("1", "integer"), typed("0", "integer"), ERR),
    ],
)
def test_division(a, b, expected):
    assert outcome(SPEC.divide, a, b) == expected


def test_casts_from_strings_trim_whitespace():
    assert SPEC.casts[XSD_NS + "integer"](Literal(" 12 ")) == 12  # pyoxigraph: an error
    assert SPEC.casts[XSD_NS + "boolean"](Literal(" true\n")) is True
    assert math.isclose(SPEC.casts[XSD_NS + "double"](Literal("1.5")), 1.5)
    assert SPEC.casts[XSD_NS + "string"](typed("01", "integer")) == "1"  # canonical
