"""Casts to XSD datatypes (SPARQL 1.1 17.5, XPath casting): ``xsd:integer(v)`` and co.

A string source gets the target type's whitespace facet first (XPath), so ``xsd:integer(" 12 ")``
is 12 (pyoxigraph, which GPM FILTERs follow, makes it an error)."""

from __future__ import annotations

from decimal import Decimal

from spaseq.engine.values.kinds import (
    F32,
    K_BAD,
    K_BNODE,
    K_BOOL,
    K_DBL,
    K_DEC,
    K_DT,
    K_FLT,
    K_INT,
    K_IRI,
    K_LANG,
    K_OTHER,
    K_STR,
    ExprError,
)
from spaseq.engine.values.lexical import parse_boolean, parse_decimal, parse_double, parse_integer
from spaseq.engine.values.literals import INFO_CACHE, info_slow
from spaseq.engine.values.numbers import DCTX, DEC_FRACTION_DIGITS, INF, f32
from spaseq.engine.values.terms import lexical
from spaseq.engine.vocab import XSD_NS

_XSD_WS = " \t\n\r"


def _cast_source(v) -> tuple[int, object]:
    k, x = INFO_CACHE.get(v) or info_slow(v)
    if k == K_STR:
        x = x.strip(_XSD_WS)  # type: ignore[union-attr]
    return k, x


def cast_string(v) -> str:
    k, x = INFO_CACHE.get(v) or info_slow(v)
    if k == K_BNODE:
        raise ExprError("cannot cast a blank node")
    if k == K_IRI or k == K_STR:
        return x.value if k == K_IRI else x  # type: ignore[union-attr,return-value]
    if k == K_LANG:
        return x[0]  # type: ignore[index]
    if k == K_DT:
        return x.canonical  # type: ignore[union-attr]
    if k == K_OTHER:
        return x.value  # type: ignore[union-attr]
    if k == K_BAD:
        return x[1].value  # type: ignore[index]
    return lexical(x)


def _finite(x: float) -> float:
    if x != x or x in (INF, -INF):
        raise ExprError("NaN or INF cannot be cast to an exact number")
    return x


def cast_integer(v) -> int:
    k, x = _cast_source(v)
    if k == K_INT:
        return x  # type: ignore[return-value]
    if k == K_DEC:
        return int(x)  # type: ignore[arg-type]
    if k == K_FLT or k == K_DBL:
        return int(_finite(x))  # type: ignore[arg-type]
    if k == K_BOOL:
        return int(x)  # type: ignore[arg-type]
    if k == K_STR:
        r = parse_integer(x)  # type: ignore[arg-type]
        if r is not None:
            return r
    raise ExprError("cannot cast to xsd:integer")


def cast_decimal(v) -> Decimal:
    k, x = _cast_source(v)
    if k == K_DEC:
        return x  # type: ignore[return-value]
    if k == K_INT or k == K_BOOL:
        return Decimal(int(x))  # type: ignore[arg-type]
    if k == K_FLT or k == K_DBL:
        # pyoxigraph's conversion: the double scaled by 10^18, truncated
        scaled = int(_finite(float(x)) * 1e18)  # type: ignore[arg-type]
        d = Decimal(scaled).scaleb(-DEC_FRACTION_DIGITS, context=DCTX)
        return d if d else Decimal(0)
    if k == K_STR:
        r = parse_decimal(x)  # type: ignore[arg-type]
        if r is not None:
            return r
    raise ExprError("cannot cast to xsd:decimal")


def _cast_binary(v) -> float:
    k, x = _cast_source(v)
    if k <= K_DBL:
        return float(x)  # type: ignore[arg-type]
    if k == K_BOOL:
        return 1.0 if x else 0.0
    if k == K_STR:
        r = parse_double(x)  # type: ignore[arg-type]
        if r is not None:
            return r
    raise ExprError("cannot cast to a floating-point type")


def cast_double(v) -> float:
    return _cast_binary(v)


def cast_float(v) -> F32:
    return F32(f32(_cast_binary(v)))


def cast_boolean(v) -> bool:
    k, x = _cast_source(v)
    if k <= K_DBL:
        return not (x == 0 or x != x)
    if k == K_BOOL:
        return x  # type: ignore[return-value]
    if k == K_STR:
        r = parse_boolean(x)  # type: ignore[arg-type]
        if r is not None:
            return r
    raise ExprError("cannot cast to xsd:boolean")


#: The cast functions by the datatype IRI a query calls them with -> their names in this
#: module (and in ``dialects.Dialect.functions()``).
CASTS = {
    XSD_NS + "string": "cast_string",
    XSD_NS + "integer": "cast_integer",
    XSD_NS + "decimal": "cast_decimal",
    XSD_NS + "double": "cast_double",
    XSD_NS + "float": "cast_float",
    XSD_NS + "boolean": "cast_boolean",
}
