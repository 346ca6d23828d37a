"""Timestamps: literals to seconds (SEMANTICS.md section 1) and seconds to an xsd:decimal literal.

``to_seconds`` accepts an ``xsd:dateTime``/``xsd:dateTimeStamp`` literal (seconds since the Unix
epoch, UTC; no time zone means UTC; fractional seconds kept), a numeric literal (``xsd:integer``
and its subtypes, ``xsd:decimal``, ``xsd:double``, ``xsd:float``) or a plain/``xsd:string`` literal
whose text is a number. Anything else raises ``ValueError``; callers add the location.
dateTimes are read by ``xsd_datetime`` (the one parser), behind a fast path for the usual
stream form ``YYYY-MM-DDThh:mm:ssZ``.

Times are exact: ``Decimal`` seconds since the epoch (or since any origin, for numeric
stamps), kept to the nanosecond (``NANOSECOND``). A timestamp written with a finer fraction is
an error; a float handed to the Python API is read as the decimal it prints as and rounded to
the nanosecond (``exact_seconds``, the one conversion at the door). Window membership and
tumbling boundaries are computed on these exactly (docs/decisions.md, 34).

``seconds_literal`` writes a time as ``xsd:decimal`` seconds, ``datetime_literal`` as an
``xsd:dateTime`` in UTC (exact to the nanosecond): the two ways outputs spell times
(``output/times.py`` picks one, docs/decisions.md 43); ``is_datetime`` says which form a
timestamp literal was written in.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values.lexical import canonical_decimal, parse_decimal, parse_double, parse_integer
from spaseq.engine.values.numbers import INT_RANGES, exponent
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


#: the resolution of times: a nanosecond (epoch seconds then have at most 19 digits, well
#: inside the 28 of Python's default decimal context, so time arithmetic is exact)
NANOSECOND = Decimal("1e-9")
#: the largest time accepted, in seconds (about 3 * 10^10 years either way of the epoch: with
#: nine fractional digits, 27 digits, so differences and sums of times stay exact)
MAX_SECONDS = Decimal("1e18")
ZERO = Decimal(0)
INFINITY = Decimal("Infinity")  # "never" / "not yet": compares exactly and fast with times


def to_nanoseconds(seconds: Decimal) -> int:
    """Exact seconds (whole nanoseconds, as every engine time is) as integer nanoseconds:
    how times cross to the native core."""
    return int(seconds.scaleb(9))


def from_nanoseconds(ns: int) -> Decimal:
    """Integer nanoseconds from the native core as exact seconds (integral ones as integers)."""
    whole, rest = divmod(ns, 1_000_000_000)
    return Decimal(whole) if rest == 0 else Decimal(ns).scaleb(-9).normalize()


def checked_time(value: Decimal, text: object) -> Decimal:
    """``value`` if it is a time this engine keeps exactly; ValueError says why not."""
    if not value.is_finite():
        raise ValueError(f"{text!r} is not a finite number of seconds")
    if abs(value) >= MAX_SECONDS:
        raise ValueError(f"{text!r} is too large to be a time in seconds")
    if exponent(value) < -9 and value != value.quantize(NANOSECOND):
        raise ValueError(f"{text!r} is finer than a nanosecond, the resolution of times")
    return value


def number_from_lexical(text: str) -> Decimal:
    """A finite decimal or scientific number written as text, exactly; ValueError otherwise.

    Stricter than ``float()``: no ``inf``/``nan``, no ``1_000``, so odd values are reported.
    """
    stripped = text.strip()
    value = parse_double(stripped)
    if value is None or stripped.lstrip("+-") in ("INF", "NaN"):
        raise ValueError(f"{text!r} is not a number")
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is too large to be a time in seconds")
    try:
        exact = Decimal(stripped)
    except InvalidOperation:  # an exponent beyond Decimal's range: zero, or far below 1 ns
        if not any(c in "123456789" for c in re.split("[eE]", stripped)[0]):
            return ZERO
        raise ValueError(f"{text!r} is finer than a nanosecond, the resolution of times") from None
    return checked_time(exact, text)


_DAY_START: dict[str, int] = {}  # "YYYY-MM-DD" -> its first second, for the fast path
_DAY_CACHE_LIMIT = 100_000
_FAST_DATETIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def datetime_to_seconds(text: str, *, require_timezone: bool = False) -> Decimal:
    """Seconds since the Unix epoch of an ``xsd:dateTime`` lexical form (UTC when no zone)."""
    # the usual stream form "YYYY-MM-DDThh:mm:ssZ": the day's start from a cache (events of a
    # day share their date), filled by the one parser; any other form or value takes the parser
    if len(text) == 20 and _FAST_DATETIME_RE.fullmatch(text):
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        if hour < 24 and minute < 60 and second < 60:
            time_of_day = hour * 3600 + minute * 60 + second
            day = _DAY_START.get(text[:10])
            if day is not None:
                return Decimal(day + time_of_day)
            parsed = parse_datetime(text)
            if parsed is not None:
                seconds = int(unix_seconds(parsed))
                if len(_DAY_START) < _DAY_CACHE_LIMIT:
                    _DAY_START[text[:10]] = seconds - time_of_day
                return Decimal(seconds)
    parsed = read_datetime(text, strip=True)
    if parsed.tz is None and require_timezone:
        raise ValueError(f"{text!r} is not an xsd:dateTimeStamp: it needs a time zone (e.g. Z)")
    return checked_time(unix_seconds(parsed), text)


def _short(datatype: str) -> str:
    """A datatype IRI as shown in messages: ``xsd:name`` for XML Schema types."""
    return "xsd:" + datatype[len(XSD_NS):] if datatype.startswith(XSD_NS) else f"<{datatype}>"


def to_seconds(term: object) -> Decimal:
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


def is_datetime(term: object) -> bool:
    """Whether a timestamp literal is an ``xsd:dateTime`` (or ``xsd:dateTimeStamp``): results
    then give their times in that form (docs/decisions.md 43)."""
    return isinstance(term, Literal) and term.datatype.value in (_DATETIME, _DATETIMESTAMP)


def exact_seconds(seconds: float | int | Decimal | str) -> Decimal:
    """The one conversion of a time given by a caller to the engine's exact seconds: a Decimal
    or an int as it is, a numeric string as written (all checked like timestamps), a float as
    the decimal it prints as (its shortest repr: 0.1 is 0.1) rounded to the nanosecond."""
    if isinstance(seconds, Decimal):
        return checked_time(seconds, seconds)
    if isinstance(seconds, bool):
        raise ValueError(f"{seconds!r} is not a time in seconds")
    if isinstance(seconds, int):
        return checked_time(Decimal(seconds), seconds)
    if isinstance(seconds, str):
        return checked_time(number_from_lexical(seconds), seconds)
    try:
        value = Decimal(repr(float(seconds)))
    except (TypeError, ValueError, InvalidOperation):
        raise ValueError(f"{seconds!r} is not a time in seconds") from None
    if value.is_finite() and exponent(value) < -9:
        value = value.quantize(NANOSECOND, rounding=ROUND_HALF_EVEN)
    return checked_time(value, seconds)


def seconds_literal(seconds: Decimal | float | int) -> Literal:
    """A time in seconds as an ``xsd:decimal`` literal in the XSD 1.1 canonical spelling
    ("10", "0.5", "-3.25"; never an exponent), pyoxigraph's: every output writes times with it."""
    value = seconds if isinstance(seconds, Decimal) else Decimal(repr(float(seconds)))
    return Literal(canonical_decimal(value), datatype=XSD_DECIMAL)


def datetime_text(seconds: Decimal) -> str:
    """Seconds since the Unix epoch as an ``xsd:dateTime`` in UTC: ``YYYY-MM-DDThh:mm:ss``, the
    fraction only when nonzero (exact, trailing zeros trimmed), ``Z``; the proleptic Gregorian
    calendar, years of at least four digits, negative ones with ``-`` (XSD 1.1: year 0 is
    1 BCE), so any time the engine keeps has a spelling (``datetime`` stops at year 9999)."""
    whole, fraction = divmod(to_nanoseconds(seconds), 1_000_000_000)
    days, time = divmod(whole, 86_400)
    # the civil date of a day count (Howard Hinnant's civil_from_days)
    era, doe = divmod(days + 719_468, 146_097)
    yoe = (doe - doe // 1_460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    text = (f"{'-' if year < 0 else ''}{abs(year):04d}-{month:02d}-{day:02d}"
            f"T{time // 3600:02d}:{time // 60 % 60:02d}:{time % 60:02d}")
    if fraction:
        text += "." + f"{fraction:09d}".rstrip("0")
    return text + "Z"


def datetime_literal(seconds: Decimal) -> Literal:
    """A time (seconds since the epoch) as an ``xsd:dateTime`` literal (``datetime_text``)."""
    return Literal(datetime_text(seconds), datatype=XSD_DATETIME)
