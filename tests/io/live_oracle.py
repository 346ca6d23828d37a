"""The Python live reader, kept as the oracle of the native one (``_native.LiveReader``, spaseq-io
``stream/live.rs``, which ``spaseq run`` reads live input with): the rules below are theirs,
and ``test_live_reader.py`` checks that both read every input alike.

Live stream input: N-Quads lines or TriG chunks read incrementally from stdin or a named
pipe, one event per named graph, each yielded the moment it is complete.

Each named graph ``g`` is one event. Its timestamp is the triple ``g <time-predicate> t`` in
the default graph, which may come before or after the graph's quads.

When an event is complete (the rule; an event is yielded as soon as it holds, never later):

* its timestamp triple has been read (before or after its graph), and
* its graph block has ended:

  - TriG: when the chunk holding ``g { ... }`` ends. The input is cut into chunks of whole
    lines: a chunk ends at a line after which every brace is closed and whose last character
    outside comments, IRIs and strings is ``}`` or ``.``; ``@prefix``/``@base``/``PREFIX``/
    ``BASE`` lines between chunks are kept and put before every later chunk.
  - N-Quads: at the next line holding a quad of another graph, at a blank line, at g's own
    timestamp line when it follows g's quads, or at the end of input. (A timestamp line of
    another graph does not end g's block.) So for the lowest latency write each event's
    timestamp after its quads, or end each event with a blank line; with the timestamp first,
    an event completes when the next event's first quad (or a blank line) arrives.

* Complete events are yielded in the order their graphs first appeared; a complete event
  waits for an earlier incomplete one. An event whose timestamp never comes therefore holds
  back the events after it until the end of input, where it is reported as a StreamError at
  ``FILE:LINE:COLUMN`` of where its graph started (N-Quads: its first quad; TriG: the chunk
  holding its first block, with a column only when that chunk holds nothing else), after
  every earlier event has been yielded; the held-back events are dropped.

Other decisions, as in replay files (``replay_oracle.py``) where liveness allows:

* Every other default-graph triple is ignored, and so is a time triple whose subject never
  names a graph (it is kept, unused, until the end of input: an empty graph cannot be told
  apart from one still to come). A time-predicate triple inside a named graph is event data.
* An event's triples are its graph's triples in arrival order, duplicates dropped; a graph
  written in several blocks is one event as long as it has not been yielded yet. Once yielded,
  the same graph name starts a new event (which needs its own timestamp triple).
* A timestamp that is not a time, or that differs from an earlier one for the same graph not
  yet yielded, is an error at its line (TriG: the line its chunk starts on).
* A syntax error is ``FORMAT syntax error: MESSAGE`` at the parser's line and column.
* ``origin`` is ``FILE:LINE`` with the line where the graph started.

Bookkeeping is constant work per quad: pending graphs are an OrderedDict keyed by graph name
(in arrival order; only its head is looked at), timestamps a dict keyed by subject. Each line
(N-Quads) or chunk (TriG, after the prefix lines read so far) is parsed by pyoxigraph.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import IO

import pyoxigraph
from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad, Triple

from spaseq.engine.errors import Location, StreamError
from spaseq.engine.events import Event
from spaseq.engine.io.parsing import syntax_error_location
from tests.values.timestamps_oracle import is_datetime, to_seconds

#: The prov predicates of an event that lasts (docs/decisions.md 71).
STARTED_AT_TIME = "http://www.w3.org/ns/prov#startedAtTime"
ENDED_AT_TIME = "http://www.w3.org/ns/prov#endedAtTime"

_PREFIX_LINE = re.compile(r"^\s*(@prefix|@base|PREFIX|BASE)\b", re.IGNORECASE)
_READ_ERRORS = (OSError, UnicodeDecodeError)


@dataclass
class _Graph:
    """A graph seen but not yet yielded: where it started, its triples, whether its block ended."""

    line: int
    column: int | None
    triples: dict[Triple, None] = field(default_factory=dict)
    closed: bool = False


@dataclass
class _Stamp:
    """A timestamp read for a graph not yet yielded: seconds, the literal, its line."""

    seconds: Decimal
    term: object
    line: int


class LiveReader:
    """Turns a text stream into Events of one named stream, incrementally."""

    def __init__(self, source: IO[str], stream: str, path: str, fmt: str,
                 time_predicate: str) -> None:
        self.source = source
        self.stream = stream
        self.path = path
        self.fmt = fmt
        self.time_predicate = NamedNode(time_predicate)
        self.pending: OrderedDict[NamedNode | BlankNode, _Graph] = OrderedDict()
        self.times: dict[object, _Stamp] = {}  # an event's end: the time predicate's or prov:endedAtTime
        self.starts: dict[object, _Stamp] = {}  # prov:startedAtTime (docs/decisions.md 71)
        self.seq = 0
        self.header = ""

    def events(self) -> Iterator[Event]:
        """Events as they complete; raises StreamError (FILE:LINE[:COLUMN]) on bad input."""
        if self.fmt == "nquads":
            yield from self._nquads()
        else:
            yield from self._trig()
        yield from self._finish()

    # ------------------------------------------------------------------ formats

    def _lines(self) -> Iterator[tuple[int, str]]:
        """Numbered lines of the source; a read error becomes a StreamError at the next line."""
        lineno = 0
        try:
            for line in self.source:
                lineno += 1
                yield lineno, line
        except _READ_ERRORS as exc:
            raise StreamError(f"cannot read the input: {exc}", Location(self.path, lineno + 1)) from None

    def _nquads(self) -> Iterator[Event]:
        current = None  # the graph whose block is being read
        for lineno, line in self._lines():
            text = line.strip()
            if not text:
                self._close(current)
                current = None
                yield from self._ready()
                continue
            if text.startswith("#"):
                continue
            for q in self._parse(line, pyoxigraph.RdfFormat.N_QUADS, lineno):
                graph = q.graph_name
                if isinstance(graph, DefaultGraph):
                    if self._timestamp(q, lineno) and q.subject == current:
                        self._close(current)
                        current = None
                    continue
                if graph != current:
                    self._close(current)
                    current = graph
                self._add(graph, q.triple, lineno, len(line) - len(line.lstrip()) + 1)
            yield from self._ready()
        self._close(current)

    def _trig(self) -> Iterator[Event]:
        chunk: list[str] = []
        start = column = 1
        depth = 0
        last = ""  # the chunk's last character outside comments, IRIs and strings
        for lineno, line in self._lines():
            if not chunk:
                if _PREFIX_LINE.match(line):
                    self.header += line if line.endswith("\n") else line + "\n"
                    continue
                text = line.lstrip()
                if not text.strip() or text.startswith("#"):
                    continue
                start, column = lineno, len(line) - len(text) + 1
            chunk.append(line)
            delta, tail = _scan(line)
            depth += delta
            last = tail or last
            if depth < 0 or (depth == 0 and last in ("}", ".")):
                yield from self._trig_chunk("".join(chunk), start, column)
                chunk, depth, last = [], 0, ""
        if chunk:
            yield from self._trig_chunk("".join(chunk), start, column)

    def _trig_chunk(self, text: str, start: int, column: int) -> Iterator[Event]:
        quads = self._parse(self.header + text, pyoxigraph.RdfFormat.TRIG, start,
                            header_lines=self.header.count("\n"))
        graphs: dict = {}
        only_graph = True  # the chunk holds one named graph and nothing else
        for q in quads:
            if isinstance(q.graph_name, DefaultGraph):
                only_graph = False
                self._timestamp(q, start)
            else:
                graphs[q.graph_name] = None
        only_graph = only_graph and len(graphs) == 1
        for q in quads:
            if not isinstance(q.graph_name, DefaultGraph):
                self._add(q.graph_name, q.triple, start, column if only_graph else None)
        for g in graphs:
            self._close(g)
        yield from self._ready()

    # ------------------------------------------------------------------ bookkeeping

    def _parse(self, text: str, fmt, lineno: int, header_lines: int = 0) -> list[Quad]:
        try:
            return list(pyoxigraph.parse(text, format=fmt))
        except SyntaxError as exc:
            line = lineno + max((getattr(exc, "lineno", 1) or 1) - 1 - header_lines, 0)
            column = getattr(exc, "offset", None)
            name = "N-Quads" if fmt == pyoxigraph.RdfFormat.N_QUADS else "TriG"
            msg = f"{name} syntax error: {syntax_error_location(exc, self.path)[1]}"
            raise StreamError(msg, Location(self.path, line, column)) from None

    def _add(self, graph, triple: Triple, lineno: int, column: int | None) -> None:
        entry = self.pending.get(graph)
        if entry is None:
            entry = self.pending[graph] = _Graph(lineno, column)
        entry.closed = False  # its block is being read (again)
        entry.triples[triple] = None

    def _timestamp(self, q: Quad, lineno: int) -> bool:
        """Record a timestamp triple; False if ``q`` is not one (other default-graph data)."""
        if q.predicate == self.time_predicate or q.predicate.value == ENDED_AT_TIME:
            stamps = self.times
        elif q.predicate.value == STARTED_AT_TIME:
            stamps = self.starts
        else:
            return False
        if not isinstance(q.subject, NamedNode | BlankNode):
            return False
        try:
            seconds = to_seconds(q.object)
        except ValueError as exc:
            raise StreamError(f"event {q.subject} has a timestamp that is not a time: {exc}",
                              Location(self.path, lineno)) from None
        known = stamps.get(q.subject)
        if known is None:
            stamps[q.subject] = _Stamp(seconds, q.object, lineno)
        elif known.seconds != seconds:
            raise StreamError(f"event {q.subject} has two different timestamps: {known.term} "
                              f"(line {known.line}) and {q.object}", Location(self.path, lineno))
        return True

    def _close(self, graph) -> None:
        """The block of ``graph`` (if any and not yet yielded) has ended."""
        if graph is not None:
            entry = self.pending.get(graph)
            if entry is not None:
                entry.closed = True

    def _ready(self) -> Iterator[Event]:
        """Complete events, in arrival order (a complete event waits for earlier ones)."""
        pending = self.pending
        while pending:
            g = next(iter(pending))
            if not pending[g].closed or g not in self.times:
                return
            yield self._event(g, pending.popitem(last=False)[1])

    def _finish(self) -> Iterator[Event]:
        """At the end of input every block has ended: the rest, up to one without timestamp."""
        pending = self.pending
        while pending:
            g = next(iter(pending))
            if g not in self.times:
                entry = pending[g]
                raise StreamError(
                    f"event {g} has prov:startedAtTime but no end (prov:endedAtTime or "
                    f"<{self.time_predicate.value}>)" if g in self.starts else
                    f"event {g} has no timestamp (expected a <{self.time_predicate.value}> triple "
                    "on the graph name in the default graph)",
                    Location(self.path, entry.line, entry.column),
                )
            yield self._event(g, pending.popitem(last=False)[1])

    def _event(self, g, entry: _Graph) -> Event:
        self.seq += 1
        stamp = self.times.pop(g)
        start = self.starts.pop(g, None)
        return Event(self.stream, stamp.seconds, tuple(entry.triples), self.seq,
                     g if isinstance(g, NamedNode | BlankNode) else None,
                     f"{self.path}:{entry.line}", is_datetime(stamp.term),
                     None if start is None else start.seconds)


def _scan(line: str) -> tuple[int, str]:
    """Net '{' minus '}' outside IRIs, strings and comments, and the last character there
    that is not blank ('' if none); good enough for chunking."""
    depth = 0
    last = ""
    in_iri = False
    quote = ""
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif in_iri:
            if c == ">":
                in_iri = False
        elif c == "#":
            break
        elif c == "<":
            in_iri = True
        elif c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if not (quote or in_iri or c.isspace()):
            last = c  # a character outside, or the end of an IRI or string
        i += 1
    return depth, last
