"""The test oracle of the native time parser: timestamp literals read in Python, as the engine
read them before the native core's reader (engine/native/io/src/time.rs, docs/decisions.md 57)
became the only one, and times spelled as ``xsd:dateTime`` text as the engine spelled them
before spaseq-output's ``spell::datetime_seconds`` did. The native functions' values and
messages are checked against these (tests/values/test_timestamps_native.py), and the Python
readers kept as oracles of the native replay and live readers (tests/io/replay_oracle.py,
live_oracle.py) read timestamps with this module, so that they stay independent of the reader
they check. Nothing in the engine imports it.

``to_seconds`` accepts an ``xsd:dateTime``/``xsd:dateTimeStamp`` literal (seconds since the Unix
epoch, UTC; no time zone means UTC; fractional seconds kept), a numeric literal (``xsd:integer``
and its subtypes, ``xsd:decimal``, ``xsd:double``, ``xsd:float``) or a plain/``xsd:string`` literal
whose text is a number. Anything else raises ``ValueError``. dateTimes are read by the FILTER
values' parser (``engine/values/xsd_datetime.py``). Times are exact ``Decimal`` seconds, kept to
the nanosecond: finer is an error, and so is 10^18 seconds or more.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.values.lexical import parse_decimal, parse_double, parse_integer
from spaseq.engine.values.numbers import DCTX, INT_RANGES, exponent
from spaseq.engine.values.xsd_datetime import DateTime, datetime_or_reason
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

NANOSECOND = Decimal("1e-9")
MAX_SECONDS = Decimal("1e18")
ZERO = Decimal(0)
#: 1970-01-01T00:00:00Z on the timeline of ``DateTime.seconds``.
UNIX_EPOCH = Decimal(719162 * 86400)


def read_datetime(s: str, *, strip: bool = False) -> DateTime:
    """The value of an xsd:dateTime lexical form; ValueError saying why ``s`` is not one.
    ``strip``: surrounding whitespace is allowed (XSD's whitespace facet)."""
    r = datetime_or_reason(s.strip() if strip else s)
    if isinstance(r, DateTime):
        return r
    raise ValueError(f"{s!r} is not an xsd:dateTime ({r})" if r.startswith("expected")
                     else f"{s!r} is not an xsd:dateTime: {r}")


def unix_seconds(t: DateTime) -> Decimal:
    """Exact seconds since the Unix epoch (a dateTime without timezone is read as UTC)."""
    return DCTX.subtract(t.seconds, UNIX_EPOCH)


def checked_time(value: Decimal, text: object) -> Decimal:
    """``value`` if it is a time this engine keeps exactly; ValueError says why not."""
    if not value.is_finite():
        raise ValueError(f"{text!r} is not a finite number of seconds")
    # copy_abs, exact: abs() rounds to the context's 28 digits (999999999999999999.9999999999999
    # became 10^18) and overflowed on a huge exponent (decimal.Overflow, not a ValueError), as the
    # engine's reader did until the native core became it
    if value.copy_abs() >= MAX_SECONDS:
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


def datetime_to_seconds(text: str, *, require_timezone: bool = False) -> Decimal:
    """Seconds since the Unix epoch of an ``xsd:dateTime`` lexical form (UTC when no zone)."""
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
    """Whether a timestamp literal is an ``xsd:dateTime`` (or ``xsd:dateTimeStamp``)."""
    return isinstance(term, Literal) and term.datatype.value in (_DATETIME, _DATETIMESTAMP)


def exact_seconds(seconds: float | int | Decimal | str) -> Decimal:
    """A time given by a caller as exact seconds: a Decimal or an int as it is, a numeric
    string as written (all checked like timestamps), a float as the decimal it prints as (its
    shortest repr: 0.1 is 0.1) rounded to the nanosecond."""
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


def datetime_text(seconds: Decimal) -> str:
    """Seconds since the Unix epoch as an ``xsd:dateTime`` in UTC: ``YYYY-MM-DDThh:mm:ss``, the
    fraction only when nonzero (exact, trailing zeros trimmed), ``Z``; the proleptic Gregorian
    calendar, years of at least four digits, negative ones with ``-`` (XSD 1.1: year 0 is
    1 BCE)."""
    whole, fraction = divmod(int(seconds.scaleb(9)), 1_000_000_000)
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
