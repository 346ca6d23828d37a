"""How results write their times (docs/decisions.md 43): in the input's form by default.

A match's times (its end and start) are written as ``xsd:dateTime`` in UTC when every event it
took was stamped with an ``xsd:dateTime`` (``Event.dated``), and as ``xsd:decimal`` seconds
otherwise; ``--time-format dateTime`` or ``epoch`` (``TIME_FORMATS``) writes every time in one
form. The native writers (engine/native/output, ``TimeFormat``) apply the same rule.
"""

from __future__ import annotations

from decimal import Decimal

from pyoxigraph import Literal

from spaseq.engine.errors import UsageError
from spaseq.engine.events import Event
from spaseq.engine.matches import Match
from spaseq.engine.values.timestamps import datetime_literal, seconds_literal

#: ``input``: each match as its events were stamped; ``dateTime``, ``epoch``: always that form
TIME_FORMATS = ("input", "dateTime", "epoch")
DEFAULT_TIME_FORMAT = "input"


def check_time_format(time_format: str) -> str:
    """``time_format`` if it is one of TIME_FORMATS; UsageError otherwise."""
    if time_format not in TIME_FORMATS:
        raise UsageError(f"unknown time format {time_format!r}: use {', '.join(TIME_FORMATS)}")
    return time_format


def input_dated(match: Match) -> bool:
    """Whether the input stamped every event ``match`` took (at least one) with an xsd:dateTime."""
    taken = match.taken
    return bool(taken) and all(t.event.dated for t in taken)


def dated(match: Match, time_format: str = DEFAULT_TIME_FORMAT) -> bool:
    """Whether ``match``'s times are written as ``xsd:dateTime`` under ``time_format``."""
    if time_format == "input":
        return input_dated(match)
    return time_format == "dateTime"


def event_dated(event: Event, time_format: str = DEFAULT_TIME_FORMAT) -> bool:
    """Whether an event's own time is written as ``xsd:dateTime`` under ``time_format``."""
    return event.dated if time_format == "input" else time_format == "dateTime"


def time_literal(seconds: Decimal, as_datetime: bool) -> Literal:
    """A time as an ``xsd:dateTime`` (UTC) or ``xsd:decimal`` seconds literal."""
    return datetime_literal(seconds) if as_datetime else seconds_literal(seconds)
