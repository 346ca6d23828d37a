"""Request bodies to events: a TriG/N-Quads batch read by the native replay reader (one named
graph per event, timestamped by its ``prov:generatedAtTime`` triple, or lasting from its
``prov:startedAtTime`` to its ``prov:endedAtTime``, exactly as replay files), or a Turtle graph as
one event at ``time`` (from ``start``, for one that lasts) Nothing here touches the engine: a batch is read whole
and checked before any of it is applied (all-or-nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pyoxigraph
from pyoxigraph import BlankNode, NamedNode, RdfFormat, Triple

from spaseq.engine.errors import Location, SpaseqError
from spaseq.engine.io import native_events
from spaseq.engine.io.parsing import syntax_error_location
from spaseq.engine.values.timestamps import datetime_to_seconds, exact_seconds, interval_problem

from . import negotiation as mt

#: the media types an event batch may have, and the replay format each is read as
BATCH_FORMATS: dict[str, str] = {mt.TRIG: "trig", mt.NQUADS: "nquads"}
SINGLE_FORMATS: dict[str, RdfFormat] = {mt.TURTLE: RdfFormat.TURTLE, mt.NTRIPLES: RdfFormat.N_TRIPLES}
EVENT_MEDIA_TYPES = (*BATCH_FORMATS, *SINGLE_FORMATS)

BODY = "<body>"  # how errors name the request body (dropped from the message sent back)


class BodyError(SpaseqError):
    """A request body or parameter that cannot be read: 400 with ``LINE:COLUMN: message``."""


@dataclass(frozen=True)
class IncomingEvent:
    """One event read from a request, ready to push (plain data: no engine object); ``dated``:
    its time was given as an xsd:dateTime (docs/decisions.md 43)."""

    stream: str
    time: Decimal
    triples: tuple[Triple, ...]
    name: NamedNode | BlankNode | None
    dated: bool = False
    start: Decimal | None = None  # when it began, for an event that lasts (decision 71)


def located(error: SpaseqError) -> str:
    """``LINE:COLUMN: message`` for an error in a request body or query text (the file part,
    which names no file here, dropped; no line: the bare message)."""
    loc = error.location
    if loc is None or loc.line is None:
        return error.message
    return f"{Location('', loc.line, loc.column)}: {error.message}".lstrip(":")


def parse_time(text: str, parameter: str = "time") -> Decimal:
    """A ``time=`` (or ``start=``) parameter: an ``xsd:dateTime`` (with a time zone) or a
    number of seconds."""
    try:
        if "T" in text:
            return datetime_to_seconds(text, require_timezone=True)
        return exact_seconds(text)
    except ValueError as exc:
        raise BodyError(f"{parameter}={text}: not a time ({exc}); give an xsd:dateTime with its time "
                        "zone or a number of seconds") from None


def check_iri(text: str, what: str) -> str:
    """An absolute IRI given as a parameter (written without <>), or BodyError."""
    try:
        NamedNode(text)
    except ValueError as exc:
        raise BodyError(f"{what}={text}: not an absolute IRI ({exc})") from None
    return text


def read_batch(body: bytes, media: str, stream: str) -> list[IncomingEvent]:
    """The events of a TriG/N-Quads body, sorted by time (ties in body order), through the
    native replay reader; BodyError for any problem in it (then none of its events is used)."""
    try:
        events = native_events.read_batch(body, BATCH_FORMATS[media], stream, BODY)
    except SpaseqError as err:
        raise BodyError(located(err)) from None
    return [IncomingEvent(stream, e.time, e.triples, e.name, e.dated, e.start if e.start != e.time else None)
            for e in events]


def read_single(body: bytes, media: str, stream: str, time: str | None,
                name: str | None, start: str | None = None) -> IncomingEvent:
    """A Turtle/N-Triples body as one event at ``time`` (required; its end, for one lasting
    from ``start``), named ``name`` if given."""
    if time is None:
        raise BodyError(f"a {media} body is one event: give its time with &time=")
    seconds = parse_time(time)
    begin = None
    if start is not None:
        begin = parse_time(start, "start")
        problem = interval_problem(begin, "T" in start, seconds, "T" in time, (f"start={start}", f"time={time}"))
        if problem is not None:
            raise BodyError(f"the event {problem}")
    node = NamedNode(check_iri(name, "name")) if name is not None else None
    try:
        triples = tuple(q.triple for q in pyoxigraph.parse(body, SINGLE_FORMATS[media]))
    except SyntaxError as err:
        location, message = syntax_error_location(err, BODY)
        raise BodyError(located(SpaseqError(f"{SINGLE_FORMATS[media].name} syntax error: {message}",
                                            location))) from None
    except UnicodeDecodeError as err:
        raise BodyError(f"the body is not UTF-8: {err}") from None
    return IncomingEvent(stream, seconds, triples, node, "T" in time, begin)
