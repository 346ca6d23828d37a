"""Live stream input: N-Quads lines or TriG chunks read incrementally from stdin or a named
pipe, one event per named graph, yielded as soon as each event is complete.

An event (named graph ``g``) is complete when its timestamp triple ``g <time-predicate> t``
(default graph) is known and its graph block has ended: in TriG when the ``g { ... }`` block
closes; in N-Quads at a line of another graph, a blank line, the timestamp line itself when
it follows g's quads, or the end of input. (So for the lowest latency, write each event's
quads first and its timestamp last.) Each chunk is parsed by pyoxigraph.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

import pyoxigraph
from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad

from spaseq.engine.errors import Location, StreamError
from spaseq.engine.events import Event
from spaseq.engine.values.timestamps import to_seconds

_PREFIX_LINE = re.compile(r"^\s*(@prefix|@base|PREFIX|BASE)\b", re.IGNORECASE)


@dataclass
class _Pending:
    """Graphs seen but not yet emitted: their triples, timestamps and closed blocks."""

    triples: dict = field(default_factory=dict)
    times: dict = field(default_factory=dict)
    closed: set = field(default_factory=set)
    first_line: dict = field(default_factory=dict)
    order: list = field(default_factory=list)


class LiveReader:
    """Turns a text stream into Events of one named stream, incrementally."""

    def __init__(self, source: IO[str], stream: str, path: str, fmt: str,
                 time_predicate: str) -> None:
        self.source = source
        self.stream = stream
        self.path = path
        self.fmt = fmt
        self.time_predicate = NamedNode(time_predicate)
        self.pending = _Pending()
        self.seq = 0
        self.header = ""

    def events(self) -> Iterator[Event]:
        """Events in arrival order; raises StreamError (FILE:LINE) on malformed input."""
        if self.fmt == "nquads":
            yield from self._nquads()
        else:
            yield from self._trig()
        yield from self._finish()

    # ------------------------------------------------------------------ formats

    def _nquads(self) -> Iterator[Event]:
        current = None
        for lineno, line in enumerate(self.source, start=1):
            if not line.strip():
                if current is not None:
                    self._close(current)
                    current = None
                yield from self._ready()
                continue
            if line.lstrip().startswith("#"):
                continue
            quads = self._parse(line, pyoxigraph.RdfFormat.N_QUADS, lineno)
            for q in quads:
                graph = q.graph_name
                if isinstance(graph, DefaultGraph):
                    if self._timestamp(q, lineno) and current is not None and q.subject == current:
                        self._close(current)
                        current = None
                    continue
                if current is not None and graph != current:
                    self._close(current)
                current = graph
                self._add(graph, q, lineno)
            yield from self._ready()
        if current is not None:
            self._close(current)

    def _trig(self) -> Iterator[Event]:
        chunk: list[str] = []
        start = 1
        depth = 0
        for lineno, line in enumerate(self.source, start=1):
            if not chunk and _PREFIX_LINE.match(line):
                self.header += line if line.endswith("\n") else line + "\n"
                continue
            if not chunk:
                start = lineno
            chunk.append(line)
            depth += _brace_delta(line)
            text = "".join(chunk).strip()
            if depth == 0 and text and text[-1] in "}.":
                quads = self._parse(self.header + "".join(chunk), pyoxigraph.RdfFormat.TRIG, start,
                                    header_lines=self.header.count("\n"))
                chunk = []
                graphs = []
                for q in quads:
                    if isinstance(q.graph_name, DefaultGraph):
                        self._timestamp(q, start)
                    else:
                        self._add(q.graph_name, q, start)
                        graphs.append(q.graph_name)
                for g in dict.fromkeys(graphs):
                    self._close(g)
                yield from self._ready()
        if "".join(chunk).strip():
            self._parse(self.header + "".join(chunk), pyoxigraph.RdfFormat.TRIG, start,
                        header_lines=self.header.count("\n"))

    # ------------------------------------------------------------------ bookkeeping

    def _parse(self, text: str, fmt, lineno: int, header_lines: int = 0) -> list[Quad]:
        try:
            return list(pyoxigraph.parse(text, format=fmt))
        except SyntaxError as exc:
            line = lineno + max((getattr(exc, "lineno", 1) or 1) - 1 - header_lines, 0)
            column = getattr(exc, "offset", None)
            msg = str(exc).split(": ", 1)[-1] if ": " in str(exc) else str(exc)
            raise StreamError(msg, Location(self.path, line, column)) from None

    def _add(self, graph, q: Quad, lineno: int) -> None:
        p = self.pending
        if graph not in p.triples:
            p.triples[graph] = []
            p.first_line[graph] = lineno
            p.order.append(graph)
        p.triples[graph].append(q.triple)

    def _timestamp(self, q: Quad, lineno: int) -> bool:
        if q.predicate != self.time_predicate:
            return False
        if not isinstance(q.subject, NamedNode | BlankNode):
            return False
        try:
            self.pending.times[q.subject] = to_seconds(q.object)
        except ValueError as exc:
            raise StreamError(f"event {q.subject}: {exc}", Location(self.path, lineno)) from None
        if q.subject not in self.pending.order:
            self.pending.order.append(q.subject)
            self.pending.first_line.setdefault(q.subject, lineno)
        return True

    def _close(self, graph) -> None:
        self.pending.closed.add(graph)

    def _ready(self) -> Iterator[Event]:
        """Complete events, in arrival order (a complete event waits for earlier ones)."""
        p = self.pending
        while p.order:
            g = p.order[0]
            if g not in p.closed or g not in p.times:
                return
            p.order.pop(0)
            yield self._event(g)

    def _finish(self) -> Iterator[Event]:
        p = self.pending
        for g in list(p.order):
            if g not in p.times:
                raise StreamError(
                    f"event {g} has no timestamp (expected a <{self.time_predicate.value}> triple "
                    "on the graph name in the default graph)",
                    Location(self.path, p.first_line.get(g)),
                )
            yield self._event(g)
        p.order.clear()

    def _event(self, g) -> Event:
        p = self.pending
        self.seq += 1
        event = Event(self.stream, p.times.pop(g), tuple(p.triples.pop(g, ())), self.seq,
                      g if isinstance(g, NamedNode | BlankNode) else None,
                      f"{self.path}:{p.first_line.pop(g, '?')}")
        p.closed.discard(g)
        return event


def _brace_delta(line: str) -> int:
    """Net '{' minus '}' outside IRIs, strings and comments (good enough for chunking)."""
    depth = 0
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
        i += 1
    return depth
