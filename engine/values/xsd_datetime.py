"""xsd:dateTime as a SPARQL value (literals, comparisons): the parser of its lexical forms, and
its (partial) order. Event timestamps are read by the native core (docs/decisions.md 57),
tested to agree with this parser."""

from __future__ import annotations

import re
from decimal import Decimal

from spaseq.engine.values.kinds import ExprError
from spaseq.engine.values.lexical import format_decimal
from spaseq.engine.values.numbers import DCTX


class DateTime:
    """An xsd:dateTime value: seconds on the XSD 1.1 timeline (from 0001-01-01T00:00:00,
    UTC-adjusted when there is a timezone) and the timezone offset in minutes or None;
    ``canonical`` is its canonical lexical form (24:00:00 normalised to the next day,
    "+00:00" written "Z")."""

    __slots__ = ("seconds", "tz", "canonical")

    def __init__(self, seconds: Decimal, tz: int | None, canonical: str) -> None:
        self.seconds = seconds
        self.tz = tz
        self.canonical = canonical

    def __repr__(self) -> str:
        return f"DateTime({self.canonical!r})"


_RE_DATETIME = re.compile(
    r"(-?)([0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?\Z"
)
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
FORM = "YYYY-MM-DDThh:mm:ss[.fff][Z|+hh:mm]"


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def _days_in_month(y: int, m: int) -> int:
    return 29 if m == 2 and _leap(y) else _DAYS[m - 1]


def datetime_or_reason(s: str) -> DateTime | str:
    """The value of an xsd:dateTime lexical form (XSD 1.1: year 0000 allowed, 24:00:00
    allowed), or why ``s`` is not one."""
    m = _RE_DATETIME.match(s)
    if m is None:
        return f"expected {FORM}"
    sign, ys, mos, ds, hs, mis, ses, tzs = m.groups()
    if len(ys) > 4 and ys[0] == "0":
        return "a year of more than 4 digits has no leading zero"
    year = -int(ys) if sign else int(ys)
    mo, da, hr, mi = int(mos), int(ds), int(hs), int(mis)
    se = Decimal(ses)
    if not (1 <= mo <= 12):
        return f"month {mo} is out of range"
    if not (1 <= da <= _days_in_month(year, mo)):
        return f"day {da} is out of range for month {mo}"
    if hr > 24 or mi > 59 or se >= 60 or (hr == 24 and (mi or se)):
        return "time of day is out of range"
    tz: int | None = None
    if tzs is not None:
        if tzs == "Z":
            tz = 0
        else:
            th, tm = int(tzs[1:3]), int(tzs[4:6])
            if tm > 59 or th > 14 or (th == 14 and tm):
                return f"time zone {tzs} is out of range"
            tz = (th * 60 + tm) * (-1 if tzs[0] == "-" else 1)
    if hr == 24:  # end of day: the next day's 00:00:00
        hr = 0
        da += 1
        if da > _days_in_month(year, mo):
            da = 1
            mo += 1
            if mo > 12:
                mo = 1
                year += 1
    yr = year - 1
    days = 365 * yr + yr // 400 - yr // 100 + yr // 4
    days += sum(_days_in_month(year, k) for k in range(1, mo)) + da - 1
    whole = days * 86400 + hr * 3600 + (mi - (tz or 0)) * 60
    seconds = DCTX.add(Decimal(whole), se)
    canonical = (
        f"{'-' if year < 0 else ''}{abs(year):04d}-{mo:02d}-{da:02d}T{hr:02d}:{mi:02d}:"
        f"{'0' if se < 10 else ''}{format_decimal(se)}{_format_tz(tz)}"
    )
    return DateTime(seconds, tz, canonical)


def parse_datetime(s: str) -> DateTime | None:
    """The value of an xsd:dateTime lexical form, None if ``s`` is not one."""
    r = datetime_or_reason(s)
    return r if type(r) is DateTime else None


def _format_tz(tz: int | None) -> str:
    if tz is None:
        return ""
    if tz == 0:
        return "Z"
    a = abs(tz)
    return f"{'-' if tz < 0 else '+'}{a // 60:02d}:{a % 60:02d}"


_FOURTEEN_HOURS = Decimal(14 * 3600)


def datetime_compare(a: DateTime, b: DateTime) -> int:
    """-1/0/1 by the XSD 1.1 partial order; ExprError when indeterminate."""
    x, y = a.seconds, b.seconds
    if (a.tz is None) == (b.tz is None):
        return (x > y) - (x < y)
    if a.tz is None:
        lo, hi = _sign(x - _FOURTEEN_HOURS - y), _sign(x + _FOURTEEN_HOURS - y)
    else:
        lo, hi = _sign(x - (y + _FOURTEEN_HOURS)), _sign(x - (y - _FOURTEEN_HOURS))
    if lo != hi:
        raise ExprError("indeterminate dateTime comparison")
    return lo


def _sign(d: Decimal) -> int:
    return (d > 0) - (d < 0)
