"""Argument and result values of the spaseq SPARQL functions: times, durations, variable
names, and RDF terms moved between pyoxigraph and rdflib.

Every function works on pyoxigraph terms (the engine's terms; ``rdflib_functions`` converts
rdflib's). A bad argument raises ``FunctionError``, a SPARQL expression error (it subclasses
``values.kinds.ExprError``, so the engine's compiled FILTERs treat it as false too).
"""

from __future__ import annotations

import re
from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values import terms
from spaseq.engine.values.kinds import ERRORS, ExprError
from spaseq.engine.values.timestamps import to_seconds
from spaseq.engine.vocab import XSD_DAYTIME_DURATION, XSD_DURATION, XSD_STRING

Term = NamedNode | BlankNode | Literal

_DURATION_TYPES = (XSD_DAYTIME_DURATION.value, XSD_DURATION.value)
_STRING_TYPES = (XSD_STRING.value,)
_DURATION_RE = re.compile(
    r"(?P<sign>-)?P(?:(?P<d>[0-9]+)D)?"
    r"(?:T(?:(?P<h>[0-9]+)H)?(?:(?P<m>[0-9]+)M)?(?:(?P<s>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)S)?)?"
)


class FunctionError(ExprError):
    """A spaseq function was called with arguments it cannot use (a SPARQL error)."""


def arity(args: tuple, low: int, high: int | None, name: str) -> None:
    """FunctionError unless ``low <= len(args) <= high`` (high None: no upper bound)."""
    if len(args) < low or (high is not None and len(args) > high):
        expected = str(low) if low == high else f"at least {low}" if high is None else f"{low} to {high}"
        raise FunctionError(f"spaseq:{name} takes {expected} arguments, got {len(args)}")


def literal_seconds(term: Term) -> Decimal:
    """A timestamp literal (xsd:dateTime or a number of seconds) in seconds."""
    if not isinstance(term, Literal):
        raise FunctionError(f"{term} is not a timestamp literal")
    try:
        return to_seconds(term)
    except ValueError as err:
        raise FunctionError(str(err)) from None


def duration_seconds(term: Term) -> Decimal:
    """An ``xsd:dayTimeDuration`` (or an ``xsd:duration`` without years or months) in seconds."""
    if not isinstance(term, Literal) or term.datatype.value not in _DURATION_TYPES:
        raise FunctionError(f"{term} is not an xsd:dayTimeDuration")
    text = term.value.strip()
    m = _DURATION_RE.fullmatch(text)
    if m is None or text.endswith(("P", "T")) or not any(m[k] for k in "dhms"):
        raise FunctionError(f"{term} is not a valid xsd:dayTimeDuration (e.g. \"PT30M\", \"P1DT2H\")")
    total = (
        Decimal(m["d"] or 0) * 86400 + Decimal(m["h"] or 0) * 3600 + Decimal(m["m"] or 0) * 60
        + Decimal(m["s"] or 0)
    )
    return -total if m["sign"] else total


def variable_name(term: Term) -> str:
    """The variable an aggregate names: a simple (or xsd:string) literal, '?' optional."""
    if not isinstance(term, Literal) or term.language or term.datatype.value not in _STRING_TYPES:
        raise FunctionError(f"{term} is not a variable name (write it as a string, e.g. \"amount\")")
    name = term.value[1:] if term.value.startswith(("?", "$")) else term.value
    if not name:
        raise FunctionError("an empty variable name")
    return name


def to_term(value: object) -> Term:
    """An RDF term for a computed expression value (``values.kinds``' representation)."""
    try:
        return terms.to_term(value)
    except ERRORS as err:
        raise FunctionError(str(err)) from None
