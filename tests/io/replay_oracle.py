"""The test oracle of the native replay reader: replay files read in Python, as the engine
read them before the native reader (engine/native/io/src/replay.rs, stream/) became the
only one. The native reader's events, order, times and error messages are checked against
this one (tests/native/test_replay.py, test_stream.py, tests/io/test_replay.py); nothing in
the engine imports it.

Replay files: TriG or N-Quads (optionally gzip-compressed), one named graph per event.

Each named graph ``g`` is one event; its timestamp is the triple ``g <time-predicate> "literal"``
in the default graph (by default ``prov:generatedAtTime``), read with ``to_seconds`` of the
timestamps' oracle (tests/values/timestamps_oracle.py: the engine's own ``to_seconds`` is the
native reader this one checks). Decisions:

* Every other default-graph triple is ignored, and so is a time triple whose subject names no
  graph of the file (an empty graph cannot be told apart from no graph at all).
* A time-predicate triple inside a named graph is ordinary event data, kept in the event.
* An event's triples are its graph's triples in file order, duplicates dropped (a graph is a set);
  a graph written in several blocks is one event. Blank node labels are kept as written.
* Events are sorted by time, ties kept in file order; ``seq`` is ``first_seq`` plus the event's
  rank by first appearance of its graph in the file (dense: the returned events use exactly
  ``first_seq .. first_seq + len(events) - 1``), and ``origin`` is ``FILE:LINE`` with the line
  where the graph's first triple ends (pyoxigraph gives no start positions).
* On an error, ``events`` holds the events whose graphs appear in the file before the bad input
  (for a syntax error, the graph being read when it happened is left out as maybe incomplete),
  so a caller can still evaluate them; ``error`` says what went wrong and where.

The helpers ``open_rdf``, ``LineTrackingReader`` and ``syntax_error_location`` are the
engine's (``engine/io/parsing.py``), shared with the readers that stay in Python.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple, parse

from spaseq.engine.errors import Location, StreamError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.parsing import (
    READ_ERRORS,
    LineTrackingReader,
    extension,
    open_rdf,
    syntax_error_location,
)
from spaseq.engine.vocab import GENERATED_AT_TIME
from tests.values.timestamps_oracle import is_datetime, to_seconds

PROV_GENERATED_AT = GENERATED_AT_TIME.value

#: The prov predicates giving an event's interval (docs/decisions.md 71), by the time they give.
_ROLES = {"http://www.w3.org/ns/prov#startedAtTime": "start", "http://www.w3.org/ns/prov#endedAtTime": "end"}

REPLAY_FORMATS: dict[str, RdfFormat] = {
    "trig": RdfFormat.TRIG,
    "nq": RdfFormat.N_QUADS,
    "nquads": RdfFormat.N_QUADS,
}


def term_text(term: NamedNode | BlankNode | Literal | DefaultGraph) -> str:
    """How a term is shown in messages: ``<iri>``, ``_:id`` or an N-Triples literal."""
    return str(term)


@dataclass
class ReplayResult:
    """The events of a replay file (sorted by time), and the error that stopped reading, if any."""

    events: list[Event]
    error: StreamError | None = None


@dataclass
class _Graph:
    """What was read about one named graph: its triples and first line."""

    name: NamedNode | BlankNode
    index: int
    line: int | None
    triples: dict[Triple, None] = field(default_factory=dict)


@dataclass
class _Stamp:
    """A time triple in the default graph: its literal, the line it is on, and which time it
    gives (``time``: the time predicate's; ``start``/``end``: prov:startedAtTime and
    prov:endedAtTime, docs/decisions.md 71)."""

    value: NamedNode | BlankNode | Literal
    line: int | None
    role: str = "time"


def _replay_format(path: str) -> RdfFormat | None:
    """The replay format named by the file's extension, or None if it names none."""
    return REPLAY_FORMATS.get(extension(path))


def _quads(path: str, fmt: RdfFormat, track_lines: bool,
           data: bytes | None = None) -> Iterator[tuple[Quad, int | None]]:
    """Yield each quad of the file (or of ``data``, read in its place) with the line it ends
    on (None unless ``track_lines``: feeding the parser line by line costs several times the
    parse itself)."""
    with open_rdf(path) if data is None else io.BytesIO(data) as source:
        if not track_lines:
            for quad in parse(source, fmt):
                yield quad, None
            return
        reader = LineTrackingReader(source)
        for quad in parse(reader, fmt):
            yield quad, reader.line


def read_replay(
    path: str,
    stream: str,
    *,
    time_predicate: str = PROV_GENERATED_AT,
    first_seq: int = 0,
    track_lines: bool = False,
    data: bytes | None = None,
    data_format: RdfFormat | None = None,
) -> ReplayResult:
    """Read a TriG/N-Quads replay file into events of ``stream``, sorted by time (ties: file order).

    ``data`` (with its ``data_format``, TriG or N-Quads) is read instead of the file, ``path``
    then only naming it in errors: a batch of events received whole, e.g. by ``spaseq serve``.
    Without ``data``, a ``data_format`` is the file's format whatever its name says.
    Problems with the file are returned in ``ReplayResult.error``; only an invalid
    ``time_predicate`` IRI raises (UsageError). The file is first read at full parser speed;
    only when it has a problem is it read again, line by line, to say where.
    """
    if data is None and not os.path.exists(path):
        return ReplayResult([], StreamError("no such file", Location(path)))
    if data is None and os.path.isdir(path):
        return ReplayResult([], StreamError("is a directory, not a replay file", Location(path)))
    fmt = data_format if data is not None or data_format is not None else _replay_format(path)
    if fmt is None:
        return ReplayResult(
            [],
            StreamError(
                "cannot tell the replay file's format from its name: expected .trig, .nq or .nquads"
                " (optionally followed by .gz)",
                Location(path),
            ),
        )

    graphs: dict[NamedNode | BlankNode, _Graph] = {}
    stamps: dict[NamedNode | BlankNode, list[_Stamp]] = {}
    try:
        time_pred = NamedNode(time_predicate)
    except ValueError as err:
        raise UsageError(f"time predicate {time_predicate!r} is not an absolute IRI ({err})") from None
    read_error: StreamError | None = None
    last_graph: _Graph | None = None
    try:
        for quad, line in _quads(path, fmt, track_lines, data):
            graph_name = quad.graph_name
            if isinstance(graph_name, DefaultGraph):
                role = _ROLES.get(quad.predicate.value, "")
                if quad.predicate == time_pred:
                    role = "time"  # the time predicate wins when it is one of the two
                if role:
                    stamps.setdefault(quad.subject, []).append(_Stamp(quad.object, line, role))
                last_graph = None
                continue
            graph = graphs.get(graph_name)
            if graph is None:
                graph = graphs[graph_name] = _Graph(graph_name, len(graphs), line)
            graph.triples[quad.triple] = None
            last_graph = graph
    except SyntaxError as err:
        location, message = syntax_error_location(err, path)
        read_error = StreamError(f"{fmt.name} syntax error: {message}", location)
    except READ_ERRORS as err:
        read_error = StreamError(f"cannot read the file: {err}", Location(path))

    # Build events; remember the first bad graph (by first appearance) to cut the result there.
    events: list[tuple[_Graph, Decimal, bool, Decimal | None]] = []
    bad_index = len(graphs)
    error = read_error
    if read_error is not None and last_graph is not None:
        bad_index = last_graph.index
    for graph in graphs.values():
        if graph.index >= bad_index:
            break
        graph_stamps = stamps.get(graph.name, [])
        problem: StreamError | None = None
        time = Decimal(0)
        start: Decimal | None = None
        dated = False
        values: dict[str, tuple[Decimal, _Stamp]] = {}
        for stamp in graph_stamps:
            try:
                value = to_seconds(stamp.value)
            except ValueError as err:
                problem = StreamError(
                    f"event {term_text(graph.name)} has a timestamp that is not a time: {err}",
                    Location(path, stamp.line),
                )
                break
            seen = values.get(stamp.role)
            if seen is not None and value != seen[0]:
                problem = StreamError(
                    f"event {term_text(graph.name)} has two different timestamps:"
                    f" {term_text(seen[1].value)} (line {seen[1].line}) and {term_text(stamp.value)}",
                    Location(path, stamp.line),
                )
                break
            values.setdefault(stamp.role, (value, stamp))
        if problem is None:
            end = values.get("end") or values.get("time")
            if end is None:
                if read_error is not None:
                    continue  # its timestamp may come after the syntax error: not an error of its own
                problem = StreamError(
                    f"event {term_text(graph.name)} has prov:startedAtTime but no end (prov:endedAtTime or"
                    f" <{time_predicate}>)" if "start" in values else
                    f"event {term_text(graph.name)} has no timestamp (expected a <{time_predicate}>"
                    " triple on the graph name in the default graph)",
                    Location(path, graph.line),
                )
            else:
                time, dated = end[0], is_datetime(end[1].value)
                if "start" in values:
                    start = values["start"][0]
                    if start > time:  # the native reader's other interval errors: its own tests
                        problem = StreamError(f"event {term_text(graph.name)} starts after it ends",
                                              Location(path, values["start"][1].line))
        if problem is not None:
            error = problem
            break
        events.append((graph, time, dated, start))

    if error is not None and not track_lines:
        return read_replay(path, stream, time_predicate=time_predicate, first_seq=first_seq,
                           track_lines=True, data=data, data_format=data_format)
    result = [
        Event(
            stream=stream,
            time=time,
            triples=tuple(graph.triples),
            seq=first_seq + rank,
            name=graph.name,
            origin=f"{path}:{graph.line}" if graph.line is not None else path,
            dated=dated,
            start=start,
        )
        for rank, (graph, time, dated, start) in enumerate(events)
    ]
    result.sort(key=Event.sort_key)
    return ReplayResult(result, error)
