"""Lexical forms of numbers and booleans: reading XSD spellings and writing canonical ones."""

from __future__ import annotations

import math
import re
from decimal import Decimal

from spaseq.engine.values.numbers import DCTX, INF, f32

_RE_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
_RE_DOUBLE = re.compile(r"(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN)\Z")


def _plain_decimal(s: str) -> bool:
    """Fast check for the common lexical form [+-]digits[.digits] (ASCII only)."""
    if s[:1] in ("+", "-"):
        s = s[1:]
    a, _, b = s.partition(".")
    return (
        s.isascii()
        and (a.isdigit() or (not a and b != ""))
        and (b == "" or b.isdigit())
    )


def parse_integer(s: str) -> int | None:
    """An xsd:integer lexical form's value, None if ``s`` is not one (no whitespace)."""
    t = s[1:] if s[:1] in ("+", "-") else s
    if t.isascii() and t.isdigit():
        return int(s)
    return None


def parse_decimal(s: str) -> Decimal | None:
    """An xsd:decimal lexical form's value, None if ``s`` is not one."""
    if not _plain_decimal(s) and _RE_DECIMAL.match(s) is None:
        return None
    d = Decimal(s)
    return d if d else Decimal(0)


def parse_double(s: str) -> float | None:
    """An xsd:double (or xsd:float) lexical form's value, None if ``s`` is not one."""
    if _plain_decimal(s):
        return float(s)
    if _RE_DOUBLE.match(s) is None:
        return None
    if s.endswith("INF"):
        return -INF if s[0] == "-" else INF
    return float(s)


def parse_boolean(s: str) -> bool | None:
    """An xsd:boolean lexical form's value, None if ``s`` is not one."""
    if s == "true" or s == "1":
        return True
    if s == "false" or s == "0":
        return False
    return None


def format_decimal(d: Decimal) -> str:
    """A computed decimal as SPARQL engines print it (pyoxigraph): no exponent, no trailing
    zeros, an integral value without a point ("2", "1.5")."""
    if not d:
        return "0"
    return format(d.normalize(DCTX), "f")


def canonical_decimal(d: Decimal) -> str:
    """The XSD 1.1 canonical spelling of a decimal, as pyoxigraph writes one (so a value is
    the same RDF term in our outputs and in the store): no exponent, no trailing zeros, an
    integral value without a point ("10", "0.5", "-3.25")."""
    if not d.is_finite():
        raise ValueError(f"{d} is not a decimal number")
    return format_decimal(d)


def format_double(x: float) -> str:
    """A computed double's lexical form (no exponent, as pyoxigraph prints it)."""
    if x != x:
        return "NaN"
    if x == INF:
        return "INF"
    if x == -INF:
        return "-INF"
    return format(Decimal(repr(x)).normalize(DCTX), "f")


def format_float(x: float) -> str:
    """A computed float's lexical form: the shortest spelling that reads back to ``x``."""
    if x != x or x in (INF, -INF):
        return format_double(x)
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    for p in range(1, 10):
        s = f"{x:.{p}g}"
        if f32(float(s)) == x:
            break
    return format(Decimal(s).normalize(DCTX), "f")
