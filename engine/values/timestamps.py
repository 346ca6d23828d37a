"""Timestamp literals to seconds (SEMANTICS.md section 1): the one place times are read.

``to_seconds`` accepts an ``xsd:dateTime``/``xsd:dateTimeStamp`` literal (seconds since the Unix
epoch, UTC; no time zone means UTC; fractional seconds kept), a numeric literal (``xsd:integer``
and its subtypes, ``xsd:decimal``, ``xsd:double``, ``xsd:float``) or a plain/``xsd:string`` literal
whose text is a number. Anything else raises ``ValueError``; callers add the location.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_DATETIME = XSD + "dateTime"
XSD_DATETIMESTAMP = XSD + "dateTimeStamp"
XSD_STRING = XSD + "string"
XSD_DECIMAL = XSD + "decimal"
XSD_DOUBLE = XSD + "double"
XSD_FLOAT = XSD + "float"

INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer", "long", "int", "short", "byte",
        "nonNegativeInteger", "positiveInteger", "nonPositiveInteger", "negativeInteger",
        "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
    )
)

_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DOUBLE_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATETIME_RE = re.compile(
    r"(?P<year>-?[0-9]{4,})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"T(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})(?P<fraction>\.[0-9]+)?"
    r"(?P<tz>Z|[+-][0-9]{2}:[0-9]{2})?"
)


def number_from_lexical(text: str) -> float:
    """A finite decimal or scientific number written as text, as float; ValueError otherwise.

    Stricter than ``float()``: no ``inf``/``nan``, no ``1_000``, so odd values are reported.
    """
    stripped = text.strip()
    if not _DOUBLE_RE.fullmatch(stripped):
        raise ValueError(f"{text!r} is not a number")
    value = float(stripped)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is too large to be a time in seconds")
    return value


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (astronomical year numbering)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _is_leap(year: int) -> bool:
    """Whether a proleptic Gregorian year is a leap year."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


_DAY_START: dict[str, int] = {}  # "YYYY-MM-DD" -> its first second, for the fast path
_FAST_DATETIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def datetime_to_seconds(text: str, *, require_timezone: bool = False) -> float:
    """Seconds since the Unix epoch of an ``xsd:dateTime`` lexical form (UTC when no zone)."""
    # the usual stream form "YYYY-MM-DDThh:mm:ssZ": one regex and a day cache (events of a day
    # share their date); everything else, and any value out of range, takes the full check
    if len(text) == 20 and _FAST_DATETIME_RE.fullmatch(text):
        day = _DAY_START.get(text[:10])
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        if day is not None and hour < 24 and minute < 60 and second < 60:
            return float(day + hour * 3600 + minute * 60 + second)
    m = _DATETIME_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"{text!r} is not an xsd:dateTime (expected YYYY-MM-DDThh:mm:ss[.fff][Z|+hh:mm])")
    year, month, day = int(m["year"]), int(m["month"]), int(m["day"])
    hour, minute, second = int(m["hour"]), int(m["minute"]), int(m["second"])
    fraction = m["fraction"] or ""
    if len(m["year"].lstrip("-")) > 4 and m["year"].lstrip("-").startswith("0"):
        raise ValueError(f"{text!r} is not an xsd:dateTime: a year of more than 4 digits has no leading zero")
    if not 1 <= month <= 12:
        raise ValueError(f"{text!r} is not an xsd:dateTime: month {month} is out of range")
    month_days = [31, 29 if _is_leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    if not 1 <= day <= month_days:
        raise ValueError(f"{text!r} is not an xsd:dateTime: day {day} is out of range for month {month}")
    end_of_day = hour == 24 and minute == 0 and second == 0 and not fraction.strip(".0")
    if not end_of_day and (hour > 23 or minute > 59 or second > 59):
        raise ValueError(f"{text!r} is not an xsd:dateTime: time of day is out of range")
    offset = 0
    tz = m["tz"]
    if tz is None:
        if require_timezone:
            raise ValueError(f"{text!r} is not an xsd:dateTimeStamp: it needs a time zone (e.g. Z)")
    elif tz != "Z":
        tz_hours, tz_minutes = int(tz[1:3]), int(tz[4:6])
        if tz_minutes > 59 or tz_hours * 60 + tz_minutes > 14 * 60:
            raise ValueError(f"{text!r} is not an xsd:dateTime: time zone {tz} is out of range")
        offset = (tz_hours * 3600 + tz_minutes * 60) * (1 if tz[0] == "+" else -1)
    day_start = _days_from_civil(year, month, day) * 86400
    if len(_DAY_START) < 100_000 and m["year"][0] != "-":
        _DAY_START[f"{m['year']}-{m['month']}-{m['day']}"] = day_start  # a valid date
    whole = day_start + hour * 3600 + minute * 60 + second - offset
    if fraction:
        return float(Decimal(whole) + Decimal("0" + fraction))
    return float(whole)


def _short(datatype: str) -> str:
    """A datatype IRI as shown in messages: ``xsd:name`` for XML Schema types."""
    return "xsd:" + datatype[len(XSD):] if datatype.startswith(XSD) else f"<{datatype}>"


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
    if datatype in (XSD_DATETIME, XSD_DATETIMESTAMP):
        return datetime_to_seconds(text, require_timezone=datatype == XSD_DATETIMESTAMP)
    pattern = _INTEGER_RE if datatype in INTEGER_TYPES else _DECIMAL_RE if datatype == XSD_DECIMAL else None
    if pattern is not None or datatype in (XSD_DOUBLE, XSD_FLOAT):
        if pattern is not None and not pattern.fullmatch(text.strip()):
            raise ValueError(f"{text!r} is not a valid {_short(datatype)}")
        try:
            return number_from_lexical(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a finite {_short(datatype)} number of seconds") from None
    if datatype == XSD_STRING:
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
