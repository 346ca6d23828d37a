"""Helpers for tests: build events and queries from compact text."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence

import pyoxigraph

from spaseq.engine import reference
from spaseq.engine._native import NativeWriter
from spaseq.engine.api import Engine, QueryHandle
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import Row
from spaseq.engine.output.native import row_writer

PREFIXES = "@prefix : <http://ex.org/> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
QUERY_PREFIXES = "PREFIX : <http://ex.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
EX = "http://ex.org/"


def ev(stream: str, time: float | str, turtle: str, seq: int = 0, name: str | None = None) -> Event:
    """An event on stream ``http://ex.org/<stream>`` from Turtle triples using ':' prefix."""
    triples = tuple(
        q.triple for q in pyoxigraph.parse(PREFIXES + turtle, format=pyoxigraph.RdfFormat.TURTLE)
    )
    graph = pyoxigraph.NamedNode(EX + name) if name else None
    return Event(EX + stream, time, triples, seq, graph)  # exact seconds (values.timestamps)


def events(*specs: tuple) -> list[Event]:
    """Events from (stream, time, turtle[, name]) tuples, seq in the order given."""
    return [ev(s[0], s[1], s[2], i, s[3] if len(s) > 3 else None) for i, s in enumerate(specs)]


def query_text(seq: str, defines: str, select: str = "*", within: str = "", streams=("u1", "u2")) -> str:
    froms = "\n".join(f"FROM STREAM {s.upper()} <{EX}{s}>" for s in streams)
    win = f"WITHIN {within}" if within else ""
    return f"{QUERY_PREFIXES}SELECT {select} {win}\n{froms}\nWHERE {{ SEQ({seq}) {defines} }}"


def match_identity(m) -> tuple:
    """What tells two matches apart, and so their order (tests/properties): the events each
    atom took with their bindings, the mapping, start and end."""
    return (tuple((t.atom, t.event.seq, t.bindings) for t in m.taken), m.bindings, m.start, m.time)


def checked_run(engine: Engine, text: str, evs: list[Event],
                store: pyoxigraph.Store | None = None) -> tuple[list, QueryHandle]:
    """``text`` on ``engine`` over ``evs`` (pushed, then the input ended): its matches, checked
    against the reference evaluator's over ``store`` (content and order), and its handle."""
    handle = engine.register(text)
    for e in evs:
        engine.push_event(e)
    engine.close()
    got = list(handle.matches())
    expected = reference.evaluate(parse_query(text), evs, store)
    assert [match_identity(m) for m in got] == [match_identity(m) for m in expected]
    return got, handle


def match_bag(matches) -> Counter:
    """Matches as a bag of (events per atom with iteration bindings, mapping, start, end): what
    makes two evaluations equal (SEMANTICS.md section 3)."""
    return Counter(
        (tuple((t.atom, t.event.seq, t.bindings) for t in m.taken), m.bindings, m.start, m.time)
        for m in matches
    )


def render(fmt: str, rows: Sequence[Row], variables: Sequence[str], with_time: bool = False,
           time_format: str = "input", prefixes: dict[str, str] | None = None) -> str:
    """``rows`` (projected on ``variables``, the columns) written in ``fmt`` by a native
    writer, each given as values (as ``spaseq run`` writes results found in Python)."""
    buf = io.StringIO()
    writer = NativeWriter(fmt, buf, list(variables), list(variables), with_time,
                          time_format=time_format, prefixes=list((prefixes or {}).items()))
    writer.start()
    write = row_writer(writer)
    for r in rows:
        write(r)
    writer.finish()
    return buf.getvalue()
