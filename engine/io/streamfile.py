"""Stream description files of the original Java SPAseq implementation, and their N-Triples data.

A description file has one stream per line, ``<stream-iri> <data.nt> N`` (blank lines and ``#``
comment lines skipped): the data file (relative to the description file's directory, with or
without angle brackets, gzip allowed) is N-Triples cut into events of ``N`` consecutive triples, the
last one possibly shorter. Decisions:

* A triple whose predicate IRI ends with ``occursat`` (any letter case) gives its event's time in
  seconds (its object's lexical value as a number, or an ``xsd:dateTime``) and is removed from the
  event. An event without one is stamped by arrival: the k-th arrival (k = 1, 2, ... over all
  streams, dropped late events included) gets time ``k / 1000`` seconds. An event that lasts
  (docs/decisions.md 71) has a ``prov:startedAtTime`` triple and its end (``prov:endedAtTime``,
  or the occursat time; both: equal), removed likewise; a start without an end, after it or of
  another kind (a dateTime and a number) is an error.
* Streams are interleaved round-robin in description order (event 1 of each stream, then event 2
  of each, ...; a stream that has run out is skipped). ``seq`` is the 0-based arrival index.
* An event whose time is smaller than the largest time already seen on its stream is late: an
  error by default, dropped and counted with ``drop_late=True``.
* Duplicate triples inside one event are dropped (a graph is a set). A stream listed twice is an
  error, as is a description listing no stream.
* Description errors (bad line, missing data file, bad N) are found before any event is read and
  give no events; a data error (syntax, bad ``occursat`` value, late event) stops reading there and
  ``events`` holds everything that arrived before it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import Literal, NamedNode, RdfFormat, Triple, parse

from spaseq.engine.errors import Location, StreamError
from spaseq.engine.events import Event
from spaseq.engine.io.parsing import READ_ERRORS, LineTrackingReader, open_rdf, syntax_error_location
from spaseq.engine.values.timestamps import interval_problem, is_datetime, number_from_lexical, to_seconds
from spaseq.engine.vocab import ENDED_AT_TIME, STARTED_AT_TIME, XSD_DATETIME, XSD_DATETIMESTAMP

_LINE_RE = re.compile(r"(<[^<>]*>|[^\s<>]+)\s+(<[^<>]*>|[^\s<>]+)\s+(\S+)")
_EXPECTED = "expected `<stream-IRI> <data-file> N` (N = number of triples per event)"


@dataclass
class StreamFileResult:
    """Events of all described streams in arrival order, the stream IRIs, and any error."""

    events: list[Event]
    streams: list[str]
    dropped_late: int = 0
    error: StreamError | None = None


@dataclass(frozen=True)
class StreamSource:
    """One line of a description file: a stream, its data file and its triples per event."""

    stream: str
    data_path: str
    size: int
    line: int


@dataclass
class _Chunk:
    """N consecutive triples of a data file, with the time its occursat triple gives, if any
    (``dated``: given as an xsd:dateTime)."""

    triples: tuple[Triple, ...]
    time: Decimal | None
    line: int
    dated: bool = False
    start: Decimal | None = None  # prov:startedAtTime's, for an event that lasts


def _unbracket(text: str) -> str:
    """A token without its surrounding angle brackets, if it has them."""
    return text[1:-1] if text.startswith("<") and text.endswith(">") else text


def parse_description(path: str) -> tuple[list[StreamSource], StreamError | None]:
    """The streams a description file lists, or the first error in it."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return [], StreamError("no such file", Location(path))
    except IsADirectoryError:
        return [], StreamError("is a directory, not a stream description file", Location(path))
    except (OSError, UnicodeDecodeError) as err:
        return [], StreamError(f"cannot read the stream description file: {err}", Location(path))
    base = os.path.dirname(path)
    sources: list[StreamSource] = []
    listed: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        m = _LINE_RE.fullmatch(text)
        if m is None:
            return sources, StreamError(f"malformed stream description line: {_EXPECTED}", Location(path, number))
        stream = _unbracket(m[1])
        try:
            NamedNode(stream)
        except ValueError as err:
            return sources, StreamError(
                f"stream name {m[1]} is not an absolute IRI ({err}); {_EXPECTED}", Location(path, number)
            )
        if stream in listed:
            return sources, StreamError(
                f"stream <{stream}> is already described on line {listed[stream]}", Location(path, number)
            )
        if not re.fullmatch(r"[0-9]+", m[3]) or int(m[3]) <= 0:
            return sources, StreamError(
                f"the number of triples per event must be a positive integer, not {m[3]!r}",
                Location(path, number),
            )
        data_path = os.path.normpath(os.path.join(base, _unbracket(m[2])))
        if not os.path.isfile(data_path):
            what = "is a directory" if os.path.isdir(data_path) else "does not exist"
            return sources, StreamError(f"data file {data_path} {what}", Location(path, number))
        listed[stream] = number
        sources.append(StreamSource(stream, data_path, int(m[3]), number))
    if not sources:
        return sources, StreamError(f"the stream description file lists no stream; {_EXPECTED}", Location(path))
    return sources, None


def _is_occursat(triple: Triple) -> bool:
    """Whether a triple carries its event's time (the Java implementation's convention)."""
    return triple.predicate.value.lower().endswith("occursat")


def _occursat_seconds(triple: Triple) -> Decimal:
    """The time in seconds an occursat triple's object gives; ValueError if it is no number."""
    obj = triple.object
    if not isinstance(obj, Literal):
        raise ValueError(f"{obj} is not a literal")
    if obj.datatype in (XSD_DATETIME, XSD_DATETIMESTAMP):
        return to_seconds(obj)
    return number_from_lexical(obj.value)


def _make_chunk(items: list[tuple[Triple, int]], data_path: str) -> _Chunk:
    """An event's chunk from its triples and their lines, taking out the occursat triples (and
    the prov:startedAtTime/endedAtTime of an event that lasts)."""
    found: dict[str, tuple[Decimal, bool, int]] = {}  # occursat, start, end: (value, dated, line)
    kept: dict[Triple, None] = {}
    for triple, line in items:
        role = ("start" if triple.predicate == STARTED_AT_TIME else "end" if triple.predicate == ENDED_AT_TIME
                else "occursat" if _is_occursat(triple) else None)
        if role is None:
            kept[triple] = None
            continue
        try:
            value = _occursat_seconds(triple)
        except ValueError as err:
            raise StreamError(
                f"the {role} value {triple.object} is not a time (a number of seconds): {err}",
                Location(data_path, line),
            ) from None
        if role in found and value != found[role][0]:
            raise StreamError(
                f"event has two different {role} times, {found[role][0]} (line {found[role][2]}) and {value}",
                Location(data_path, line),
            )
        found.setdefault(role, (value, is_datetime(triple.object), line))
    start, end = found.get("start"), found.get("end") or found.get("occursat")
    if "end" in found and "occursat" in found and found["end"][0] != found["occursat"][0]:
        raise StreamError(f"event has two different ends, {found['occursat'][0]} (occursat, line "
                          f"{found['occursat'][2]}) and {found['end'][0]} (prov:endedAtTime)",
                          Location(data_path, found["end"][2]))
    if start is not None:
        if end is None:
            raise StreamError("event has a prov:startedAtTime but no end (prov:endedAtTime or occursat)",
                              Location(data_path, start[2]))
        problem = interval_problem(start[0], start[1], end[0], end[1])
        if problem is not None:
            raise StreamError(f"event {problem}", Location(data_path, start[2]))
    return _Chunk(tuple(kept), None if end is None else end[0], items[0][1], end is not None and end[1],
                  None if start is None else start[0])


def _chunks(source: StreamSource) -> Generator[_Chunk, None, None]:
    """The events of one data file in order; raises StreamError where the data goes wrong."""
    try:
        with open_rdf(source.data_path) as f:
            reader = LineTrackingReader(f)
            items: list[tuple[Triple, int]] = []
            for quad in parse(reader, RdfFormat.N_TRIPLES):  # type: ignore[arg-type]  # pyoxigraph reads any object with read(); its stubs ask for an IO
                items.append((quad.triple, reader.line))
                if len(items) == source.size:
                    yield _make_chunk(items, source.data_path)
                    items = []
            if items:
                yield _make_chunk(items, source.data_path)
    except SyntaxError as err:
        location, message = syntax_error_location(err, source.data_path)
        raise StreamError(f"N-Triples syntax error: {message}", location) from None
    except READ_ERRORS as err:
        raise StreamError(f"cannot read the data file: {err}", Location(source.data_path)) from None


def read_stream_description(path: str, *, drop_late: bool = False) -> StreamFileResult:
    """Read a description file and its data files into events, in round-robin arrival order."""
    sources, error = parse_description(path)
    streams = [s.stream for s in sources]
    if error is not None:
        return StreamFileResult([], streams, 0, error)
    events: list[Event] = []
    dropped = 0
    latest: dict[str, Decimal] = {}
    arrivals = 0
    readers = [(source, _chunks(source)) for source in sources]
    active = list(readers)
    try:
        while active:
            still_active = []
            for source, chunks in active:
                try:
                    chunk = next(chunks)
                except StopIteration:
                    continue
                except StreamError as err:
                    return StreamFileResult(events, streams, dropped, err)
                still_active.append((source, chunks))
                arrivals += 1
                time = chunk.time if chunk.time is not None else Decimal(arrivals) / 1000  # exact ms
                previous = latest.get(source.stream)
                if previous is not None and time < previous:
                    if drop_late:
                        dropped += 1
                        continue
                    return StreamFileResult(
                        events,
                        streams,
                        dropped,
                        StreamError(
                            f"late event on stream <{source.stream}>: its time {time} s is earlier than"
                            f" {previous} s, already seen on that stream (--late drop, the default,"
                            " drops late events instead of rejecting them)",
                            Location(source.data_path, chunk.line),
                        ),
                    )
                latest[source.stream] = time
                events.append(
                    Event(
                        stream=source.stream,
                        time=time,
                        triples=chunk.triples,
                        seq=arrivals - 1,
                        name=None,
                        origin=f"{source.data_path}:{chunk.line}",
                        dated=chunk.dated,
                        start=chunk.start,
                    )
                )
            active = still_active
    finally:
        for _, chunks in readers:
            chunks.close()
    return StreamFileResult(events, streams, dropped, None)
