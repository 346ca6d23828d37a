"""Timestamps: literals to seconds (docs/semantics.md section 1) and seconds to literals.

``to_seconds`` accepts an ``xsd:dateTime``/``xsd:dateTimeStamp`` literal (seconds since the Unix
epoch, UTC; no time zone means UTC; fractional seconds kept), a numeric literal (``xsd:integer``
and its subtypes, ``xsd:decimal``, ``xsd:double``, ``xsd:float``) or a plain/``xsd:string`` literal
whose text is a number. Anything else raises ``ValueError``; callers add the location.

The reading is the native core's (spaseq-io ``time.rs``, through ``_native.timestamp_ns``,
``seconds_ns`` and ``datetime_ns``; docs/decisions.md 57): the same reader as the replay and live
readers', with its messages, so a timestamp means one thing however it arrives. This module
converts: a Python object to what the core reads, the core's integer nanoseconds to exact
seconds (``from_nanoseconds``). The Python reader it replaced is the tests' oracle
(tests/values/timestamps_oracle.py).

Times are exact: ``Decimal`` seconds since the epoch (or since any origin, for numeric
stamps), kept to the nanosecond (``NANOSECOND``). A timestamp written with a finer fraction is
an error; a float handed to the Python API is read as the decimal it prints as and rounded to
the nanosecond (``exact_seconds``, the one conversion at the door). Window membership and
tumbling boundaries are computed on these exactly (docs/decisions.md, 34).

``seconds_literal`` writes a time as ``xsd:decimal`` seconds, ``datetime_literal`` as an
``xsd:dateTime`` in UTC (exact to the nanosecond, spelled by the core): the two ways outputs
spell times (``output/times.py`` picks one, docs/decisions.md 43); ``is_datetime`` says which
form a timestamp literal was written in.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.native_core import _native
from spaseq.engine.values.lexical import canonical_decimal
from spaseq.engine.values.numbers import exponent
from spaseq.engine.vocab import XSD_DATETIME, XSD_DATETIMESTAMP, XSD_DECIMAL

_DATETIME = XSD_DATETIME.value
_DATETIMESTAMP = XSD_DATETIMESTAMP.value


#: the resolution of times: a nanosecond (epoch seconds then have at most 19 digits, well
#: inside the 28 of Python's default decimal context, so time arithmetic is exact)
NANOSECOND = Decimal("1e-9")
#: the largest time accepted, in seconds (about 3 * 10^10 years either way of the epoch: with
#: nine fractional digits, 27 digits, so differences and sums of times stay exact); the core
#: refuses a timestamp of this many seconds or more, and WITHIN lengths are held to it
MAX_SECONDS = Decimal("1e18")
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
    """``value`` if it is a time this engine keeps exactly; ValueError says why not, naming
    ``text`` as ``repr`` writes it. Checked by the core, on the decimal's text (any finite
    Decimal's ``str`` is a number it reads exactly)."""
    if not value.is_finite():
        raise ValueError(f"{text!r} is not a finite number of seconds")
    _native.seconds_ns(str(value), text)
    return value


def number_from_lexical(text: str) -> Decimal:
    """A finite decimal or scientific number written as text (around whitespace), exactly;
    ValueError otherwise: no number (stricter than ``float()``: no ``inf``/``nan``, no
    ``1_000``), 10^18 seconds or more, or finer than a nanosecond."""
    return from_nanoseconds(_native.seconds_ns(text))


def datetime_to_seconds(text: str, *, require_timezone: bool = False) -> Decimal:
    """Seconds since the Unix epoch of an ``xsd:dateTime`` lexical form (UTC when no zone);
    ``require_timezone``: an ``xsd:dateTimeStamp``, which needs one."""
    return from_nanoseconds(_native.datetime_ns(text, require_timezone))


def to_seconds(term: object) -> Decimal:
    """The time in seconds that a timestamp literal denotes; ValueError says why it is not one."""
    if isinstance(term, Literal):
        language = term.language
        if language is None:
            return from_nanoseconds(_native.timestamp_ns(term.value, term.datatype.value))
        direction = term.direction
        return from_nanoseconds(_native.timestamp_ns(
            term.value, term.datatype.value, language, None if direction is None else direction.value))
    if isinstance(term, NamedNode):
        raise ValueError(f"{term} is an IRI, not a timestamp literal")
    if isinstance(term, BlankNode):
        raise ValueError(f"{term} is a blank node, not a timestamp literal")
    raise ValueError(f"{term!r} is not an RDF literal")


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
        return number_from_lexical(seconds)
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
    """Seconds since the Unix epoch as an ``xsd:dateTime`` in UTC, as the native writers spell
    it (spaseq-output ``spell::datetime_seconds``): ``YYYY-MM-DDThh:mm:ss``, the fraction only
    when nonzero (exact, trailing zeros trimmed), ``Z``; the proleptic Gregorian calendar, years
    of at least four digits, negative ones with ``-`` (XSD 1.1: year 0 is 1 BCE), so any time
    the engine keeps has a spelling (``datetime`` stops at year 9999)."""
    return _native.datetime_text(to_nanoseconds(seconds))


def datetime_literal(seconds: Decimal) -> Literal:
    """A time (seconds since the epoch) as an ``xsd:dateTime`` literal (``datetime_text``)."""
    return Literal(datetime_text(seconds), datatype=XSD_DATETIME)


def interval_problem(start: Decimal, start_dated: bool, end: Decimal, end_dated: bool,
                     shown: tuple[object, object] | None = None) -> str | None:
    """What is wrong with an event lasting from ``start`` to ``end`` (each written as an
    ``xsd:dateTime`` or not), as the readers say it (docs/decisions.md 71), or None: a start
    and an end of different kinds, or a start after the end. ``shown``: how the message
    spells the two (default: the numbers); the words follow "event NAME" in a message."""
    first, second = shown or (start, end)
    if start_dated != end_dated:
        return (f"has a start and an end of different kinds: {first} and {second} (both "
                "xsd:dateTime, or both numbers of seconds)")
    if start > end:
        return f"starts ({first}) after it ends ({second})"
    return None
