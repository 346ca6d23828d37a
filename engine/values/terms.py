"""Values as RDF terms: a value's lexical form and ``to_term``, the RDF term for a computed
value."""

from __future__ import annotations

from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values.kinds import F32, ExprError, LangStr
from spaseq.engine.values.lexical import format_decimal, format_double, format_float
from spaseq.engine.vocab import (
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
