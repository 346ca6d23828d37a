"""Events and the streamset: the data the engine consumes (SEMANTICS.md section 1)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from pyoxigraph import BlankNode, NamedNode, Triple

from spaseq.engine.values.timestamps import exact_seconds


@dataclass(frozen=True, eq=False, init=False)
class Event:
    """One RDF graph event ``(time, graph)`` arriving on the named stream ``stream``.

    ``time`` is in seconds, exact (``Decimal``; any other number is converted once here by
    ``values.timestamps.exact_seconds``): when the event ended, which orders events.
    ``start`` is when it began, ``time`` for a point event (docs/decisions.md 71: an event
    that lasts occurred over ``[start, time]``; ValueError for a start after the end).
    ``seq`` is the arrival index: ties in time are ordered by it. ``name`` is the graph's
    name in the source (a TriG/N-Quads graph label) or None. ``origin`` says where it was
    read from (``FILE:LINE``), for error messages. ``dated``: its timestamp was written as an
    ``xsd:dateTime``, so results give their times in that form (docs/decisions.md 43).
    Events compare by identity: two events with equal content are still distinct events.
    """

    stream: str
    time: Decimal
    triples: tuple[Triple, ...]
    seq: int = 0
    name: NamedNode | BlankNode | None = None
    origin: str | None = None
    dated: bool = False
    start: Decimal = Decimal(0)  # always set by __init__: the end, for a point event

    def __init__(self, stream: str, time: Decimal | float | int, triples: tuple[Triple, ...], seq: int = 0,
                 name: NamedNode | BlankNode | None = None, origin: str | None = None,
                 dated: bool = False, start: Decimal | float | int | None = None) -> None:
        # written straight into __dict__: a frozen dataclass's generated __init__ costs
        # twice as much, and the engine builds one Event per pushed event
        d = self.__dict__
        d["stream"] = stream
        d["time"] = time = time if type(time) is Decimal else exact_seconds(time)
        d["triples"] = triples
        d["seq"] = seq
        d["order"] = (time, seq)  # sort_key(), built once: match ordering reads it per match
        d["name"] = name
        d["origin"] = origin
        d["dated"] = dated
        if start is None:
            d["start"] = time
        else:
            d["start"] = start = start if type(start) is Decimal else exact_seconds(start)
            if start > time:
                raise ValueError(f"an event cannot start ({start}) after it ends ({time})")

    def sort_key(self) -> tuple[Decimal, int]:
        return self.__dict__["order"]


@dataclass
class StreamSet:
    """The events of several named streams, in time order with ties in arrival order."""

    events: list[Event] = field(default_factory=list)

    @classmethod
    def of(cls, events: Iterable[Event]) -> StreamSet:
        return cls(sorted(events, key=Event.sort_key))

    def restricted_to(self, streams: Iterable[str]) -> StreamSet:
        """The streamset a query sees: only events of the streams it names."""
        wanted = set(streams)
        return StreamSet([e for e in self.events if e.stream in wanted])

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self):
        return iter(self.events)
