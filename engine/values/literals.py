"""Literal analysis: the ``(kind, value)`` of any expression value, cached per literal.

The analysis is the spec's (pyoxigraph's, which GPM FILTERs follow natively, differs): derived
integer types are range-checked ("1200"^^xsd:byte is ill-typed; pyoxigraph reads 1200),
integers and decimals have arbitrary precision (pyoxigraph: 64-bit integers, 18 fraction
digits), double lexical forms are XSD's ("inf" is ill-typed; pyoxigraph accepts it), and terms
keep their own spelling and datatype (pyoxigraph canonicalises "01"^^xsd:integer to "1" and
"5"^^xsd:byte to "5"^^xsd:integer, which STR, DATATYPE and sameTerm then see).
"""

from __future__ import annotations

from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values.kinds import (
    F32,
    FAMILY_BOOLEAN,
    FAMILY_DATETIME,
    FAMILY_NUMERIC,
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
    LangStr,
)
from spaseq.engine.values.lexical import parse_boolean, parse_decimal, parse_double, parse_integer
from spaseq.engine.values.numbers import INT_RANGES, f32
from spaseq.engine.values.xsd_datetime import parse_datetime
from spaseq.engine.vocab import (
    RDF_LANGSTRING,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_STRING,
    xsd,
)

_NUMERIC_PARSERS: dict[NamedNode, tuple[int, tuple[int | None, int | None] | None]] = {}
for _local, (_lo, _hi) in INT_RANGES.items():
    _NUMERIC_PARSERS[xsd(_local)] = (K_INT, (_lo, _hi))
_NUMERIC_PARSERS[XSD_DECIMAL] = (K_DEC, None)
_NUMERIC_PARSERS[XSD_FLOAT] = (K_FLT, None)
_NUMERIC_PARSERS[XSD_DOUBLE] = (K_DBL, None)

#: literal -> its ``(kind, value)``; read it first (``INFO_CACHE.get(v) or info_slow(v)``,
#: the inlined form of ``info``), ``info_slow`` fills it.
INFO_CACHE: dict[object, tuple[int, object]] = {}
_CACHE_LIMIT = 200_000


def _analyze_literal(lit: Literal) -> tuple[int, object]:
    dt = lit.datatype
    lex = lit.value
    spec = _NUMERIC_PARSERS.get(dt)
    if spec is not None:
        kind, rng = spec
        if kind == K_INT:
            v = parse_integer(lex)
            if v is not None:
                assert rng is not None  # every integer type has its range
                lo, hi = rng
                if (lo is None or v >= lo) and (hi is None or v <= hi):
                    return (K_INT, v)
        elif kind == K_DEC:
            d = parse_decimal(lex)
            if d is not None:
                return (K_DEC, d)
        else:
            x = parse_double(lex)
            if x is not None:
                return (kind, F32(f32(x)) if kind == K_FLT else x)
        return (K_BAD, (FAMILY_NUMERIC, lit))
    if dt == XSD_STRING:
        return (K_STR, lex)
    if dt == RDF_LANGSTRING:
        lang = lit.language
        if lang is not None:
            return (K_LANG, LangStr(lex, lang))
    if dt == XSD_BOOLEAN:
        b = parse_boolean(lex)
        return (K_BAD, (FAMILY_BOOLEAN, lit)) if b is None else (K_BOOL, b)
    if dt == XSD_DATETIME:
        t = parse_datetime(lex)
        return (K_BAD, (FAMILY_DATETIME, lit)) if t is None else (K_DT, t)
    return (K_OTHER, lit)


_TYPE_KIND = {bool: K_BOOL, int: K_INT, Decimal: K_DEC, F32: K_FLT, float: K_DBL, str: K_STR,
              LangStr: K_LANG, NamedNode: K_IRI, BlankNode: K_BNODE}


def info_slow(v: object) -> tuple[int, object]:
    """``info`` without the cache lookup (it stores a literal's analysis in the cache)."""
    if type(v) is Literal:
        r = _analyze_literal(v)
        if len(INFO_CACHE) >= _CACHE_LIMIT:
            INFO_CACHE.clear()
        INFO_CACHE[v] = r
        return r
    kind = _TYPE_KIND.get(type(v))
    if kind is None:
        raise ExprError(f"not an RDF value: {v!r}")
    return (kind, v)


def info(v: object) -> tuple[int, object]:
    """``(kind, value)`` of any expression value (cached for literals)."""
    return INFO_CACHE.get(v) or info_slow(v)


def numeric_value(v: object) -> int | Decimal | float:
    """The numeric value of a numeric literal/value; ExprError otherwise."""
    k, x = info(v)
    if k > K_DBL:
        raise ExprError("not a numeric value")
    return x  # type: ignore[return-value]

