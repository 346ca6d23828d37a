"""Timestamps: literals to seconds (SEMANTICS.md section 1) and seconds to an xsd:decimal literal.

``to_seconds`` accepts an ``xsd:dateTime``/``xsd:dateTimeStamp`` literal (seconds since the Unix
epoch, UTC; no time zone means UTC; fractional seconds kept), a numeric literal (``xsd:integer``
and its subtypes, ``xsd:decimal``, ``xsd:double``, ``xsd:float``) or a plain/``xsd:string`` literal
whose text is a number. Anything else raises ``ValueError``; callers add the location.
dateTimes are read by ``xsd_datetime`` (the one parser), behind a fast path for the usual
stream form ``YYYY-MM-DDThh:mm:ssZ``.

``seconds_literal`` writes a time the one way every output spells it.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values.lexical import canonical_decimal, parse_decimal, parse_double, parse_integer
from spaseq.engine.values.numbers import INT_RANGES
from spaseq.engine.values.xsd_datetime import parse_datetime, read_datetime, unix_seconds
from spaseq.engine.vocab import (
    XSD_DATETIME,
    XSD_DATETIMESTAMP,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_NS,
    XSD_STRING,
)

#: xsd:integer and its derived types (IRIs): numbers of seconds, not range-checked.
INTEGER_TYPES = frozenset(XSD_NS + name for name in INT_RANGES)
_DATETIME = XSD_DATETIME.value
_DATETIMESTAMP = XSD_DATETIMESTAMP.value
_DECIMAL = XSD_DECIMAL.value
_BINARY = (XSD_DOUBLE.value, XSD_FLOAT.value)
_STRING = XSD_STRING.value


def number_from_lexical(text: str) -> float:
    """A finite decimal or scientific number written as text, as float; ValueError otherwise.

    Stricter than ``float()``: no ``inf``/``nan``, no ``1_000``, so odd values are reported.
    """
    stripped = text.strip()
    value = parse_double(stripped)
    if value is None or stripped.lstrip("+-") in ("INF", "NaN"):
        raise ValueError(f"{text!r} is not a number")
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is too large to be a time in seconds")
    return value


_DAY_START: dict[str, int] = {}  # "YYYY-MM-DD" -> its first second, for the fast path
_DAY_CACHE_LIMIT = 100_000
_FAST_DATETIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def datetime_to_seconds(text: str, *, require_timezone: bool = False) -> float:
    """Seconds since the Unix epoch of an ``xsd:dateTime`` lexical form (UTC when no zone)."""
    # the usual stream form "YYYY-MM-DDThh:mm:ssZ": the day's start from a cache (events of a
    # day share their date), filled by the one parser; any other form or value takes the parser
    if len(text) == 20 and _FAST_DATETIME_RE.fullmatch(text):
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        if hour < 24 and minute < 60 and second < 60:
            time_of_day = hour * 3600 + minute * 60 + second
            day = _DAY_START.get(text[:10])
            if day is not None:
                return float(day + time_of_day)
            parsed = parse_datetime(text)
            if parsed is not None:
                seconds = int(unix_seconds(parsed))
                if len(_DAY_START) < _DAY_CACHE_LIMIT:
                    _DAY_START[text[:10]] = seconds - time_of_day
                return float(seconds)
    parsed = read_datetime(text, strip=True)
    if parsed.tz is None and require_timezone:
        raise ValueError(f"{text!r} is not an xsd:dateTimeStamp: it needs a time zone (e.g. Z)")
    return float(unix_seconds(parsed))


def _short(datatype: str) -> str:
    """A datatype IRI as shown in messages: ``xsd:name`` for XML Schema types."""
    return "xsd:" + datatype[len(XSD_NS):] if datatype.startswith(XSD_NS) else f"<{datatype}>"


def to_seconds(term: object) -> float:
    """The time in seconds that a timestamp literal denotes; ValueError says why it is not one."""
    if isinstance(term, NamedNode):
        raise ValueError(f"{term} is an IRI, not a timestamp literal")
    if isinstance(term, BlankNode):
        raise ValueError(f"{term} is a blank node, not a timestamp literal")
    if not isinstance(term, Literal):
        raise ValueError(f"{term!r} is not an RDF literal")
    text = term.value
    datatype = term.datatype.value
    if datatype == _DATETIME or datatype == _DATETIMESTAMP:
        return datetime_to_seconds(text, require_timezone=datatype == _DATETIMESTAMP)
    parse = parse_integer if datatype in INTEGER_TYPES else parse_decimal if datatype == _DECIMAL else None
    if parse is not None or datatype in _BINARY:
        if parse is not None and parse(text.strip()) is None:
            raise ValueError(f"{text!r} is not a valid {_short(datatype)}")
        try:
            return number_from_lexical(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a finite {_short(datatype)} number of seconds") from None
    if datatype == _STRING:
        try:
            return number_from_lexical(text)
        except ValueError:
            raise ValueError(
                f"{term} is neither an xsd:dateTime nor a number of seconds"
            ) from None
    raise ValueError(
        f"{term} is not a timestamp: expected an xsd:dateTime or a number of seconds"
        " (xsd:integer, xsd:decimal, xsd:double or a plain numeric string)"
    )


def exact_seconds(seconds: float | int | Decimal) -> Decimal:
    """A time as the exact decimal it prints as (a float's shortest repr: 0.1 is 0.1)."""
    return seconds if isinstance(seconds, Decimal) else Decimal(repr(float(seconds)))


def seconds_literal(seconds: float | int | Decimal) -> Literal:
    """A time in seconds as an ``xsd:decimal`` literal in the XSD 1.1 canonical spelling
    ("10", "0.5", "-3.25"; never an exponent), pyoxigraph's: every output writes times with it."""
    return Literal(canonical_decimal(exact_seconds(seconds)), datatype=XSD_DECIMAL)
