"""The Python literal analysis (engine/values/literals.py) and the spelling of computed values
(lexical.py, terms.to_term), which the run functions, the dialect tables and the result
writers read: the SPARQL 1.1 / XSD reading of a literal, range-checked derived integer
types, arbitrary-precision numbers, XSD's lexical forms."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from pyoxigraph import Literal, NamedNode

from spaseq.engine.values.kinds import K_BAD, K_BOOL, K_DBL, K_DEC, K_FLT, K_INT, LangStr
from spaseq.engine.values.lexical import format_decimal, format_double, format_float
from spaseq.engine.values.literals import info
from spaseq.engine.values.numbers import f32
from spaseq.engine.values.terms import to_term
from spaseq.engine.vocab import XSD_NS


def typed(v: str, dt: str) -> Literal:
    return Literal(v, datatype=NamedNode(XSD_NS + dt))


def test_derived_integer_types_are_range_checked():
    assert info(typed("127", "byte")) == (K_INT, 127)
    assert info(typed("1200", "byte"))[0] == K_BAD  # the spec's own example (pyoxigraph: 1200)
    assert info(typed("-1", "nonNegativeInteger"))[0] == K_BAD
    assert info(typed("-0", "nonNegativeInteger")) == (K_INT, 0)
    assert info(typed("0", "positiveInteger"))[0] == K_BAD
    assert info(typed("18446744073709551615", "unsignedLong")) == (K_INT, 2**64 - 1)


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


def test_decimal_arbitrary_precision():
    assert info(typed("0.1234567890123456789", "decimal"))[1] == Decimal("0.1234567890123456789")
    assert info(typed("99999999999999999999", "integer"))[1] == 10**20 - 1
    assert info(typed("1e39", "float"))[1] == math.inf


@pytest.mark.parametrize("lexical", [
    "2020-02-30T00:00:00Z", "2021-02-29T00:00:00Z", "2020-1-01T00:00:00Z", "2020-01-01T00:00Z",
    "2020-01-01T00:00:60Z", "2020-01-01T24:00:01Z", "02020-01-01T00:00:00Z",
    "2020-01-01T00:00:00+14:01", "2020-01-01T00:00:00+15:00", "2020-01-01T00:00:00.Z",
    "2020-01-01 00:00:00Z", "2020-13-01T00:00:00Z",
])
def test_invalid_datetimes(lexical):
    assert info(typed(lexical, "dateTime"))[0] == K_BAD


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
