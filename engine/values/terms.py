"""Values as RDF terms: lexical forms, datatypes, ``to_term``, sameTerm and the term functions
(STR, LANG, DATATYPE, IRI, isIRI, isBlank, isLiteral, isNumeric)."""

from __future__ import annotations

import re
from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values.kinds import F32, K_DBL, K_STR, ExprError, LangStr
from spaseq.engine.values.lexical import format_decimal, format_double, format_float
from spaseq.engine.values.literals import INFO_CACHE, info, info_slow
from spaseq.engine.vocab import (
    RDF_LANGSTRING,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    XSD_STRING,
)


def lexical(v) -> str:
    """The lexical form of a value: a term's own form, a computed value's canonical one."""
    t = type(v)
    if t is Literal or t is NamedNode:
        return v.value
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is Decimal:
        return format_decimal(v)
    if t is float:
        return format_double(v)
    if t is F32:
        return format_float(v)
    if t is LangStr:
        return v[0]
    raise ExprError(f"no lexical form for {v!r}")


_COMPUTED_DATATYPE = {bool: XSD_BOOLEAN, int: XSD_INTEGER, Decimal: XSD_DECIMAL, float: XSD_DOUBLE,
                      F32: XSD_FLOAT, str: XSD_STRING}


def to_term(v):
    """An RDF term for any value (computed literals get their canonical lexical form)."""
    t = type(v)
    if t is Literal or t is NamedNode or t is BlankNode:
        return v
    if t is LangStr:
        return Literal(v[0], language=v[1])
    dt = _COMPUTED_DATATYPE.get(t)
    if dt is None:
        raise ExprError(f"not an RDF value: {v!r}")
    if t is str:
        return Literal(v)
    return Literal(lexical(v), datatype=dt)


def same_term(a, b) -> bool:
    return to_term(a) == to_term(b)


def fn_str(v) -> str:
    if type(v) is BlankNode:
        raise ExprError("STR of a blank node")
    return lexical(v)


def fn_lang(v) -> str:
    t = type(v)
    if t is Literal:
        return v.language or ""
    if t is LangStr:
        return v[1]
    if t is NamedNode or t is BlankNode:
        raise ExprError("LANG of a non-literal")
    return ""


def fn_datatype(v) -> NamedNode:
    t = type(v)
    if t is Literal:
        return v.datatype
    if t is LangStr:
        return RDF_LANGSTRING
    dt = _COMPUTED_DATATYPE.get(t)
    if dt is None:
        raise ExprError("DATATYPE of a non-literal")
    return dt


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def fn_iri(v) -> NamedNode:
    if type(v) is NamedNode:
        return v
    k, x = info(v)
    if k != K_STR:
        raise ExprError("IRI of a non-string")
    if _SCHEME.match(x) is None:
        raise ExprError("IRI() of a relative reference without a base IRI")
    return NamedNode(x)  # ValueError (an error) when invalid


def fn_is_iri(v) -> bool:
    return type(v) is NamedNode


def fn_is_blank(v) -> bool:
    return type(v) is BlankNode


def fn_is_literal(v) -> bool:
    return type(v) is not NamedNode and type(v) is not BlankNode


def fn_is_numeric(v) -> bool:
    return (INFO_CACHE.get(v) or info_slow(v))[0] <= K_DBL
