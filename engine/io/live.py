"""Live input (stdin and named pipes) as Python ``Event``s, for the runs that push events one by
one (composed queries, ``spaseq run --with``): the events of ``_native.LiveStream``, which reads
every source natively on a thread of its own by the rules of spaseq-io ``stream/live.rs`` (when an
event is complete, in which order, its errors) and merges them in arrival order (decision 46),
with their terms read by pyoxigraph. A run of one query takes the native stream whole instead
(``Engine.run_live``)."""

from __future__ import annotations

from collections.abc import Iterator

import pyoxigraph
from pyoxigraph import BlankNode, NamedNode

from spaseq.engine.errors import StreamError, located_error
from spaseq.engine.events import Event
from spaseq.engine.values.timestamps import from_nanoseconds


def live_events(sources: list[tuple[str, str, str]], time_predicate: str) -> Iterator[Event | StreamError]:
    """The events of ``sources`` ((stream IRI, path or '-' for stdin, 'trig' or 'nquads')) as
    each completes, numbered in arrival order; after the last, the first source's error."""
    from spaseq.engine._native import LiveStream

    labels = ["<stdin>" if path == "-" else path for _, path, _ in sources]
    try:
        for batch in LiveStream(sources, time_predicate):
            for stream, seq, ns, graph, triples, dated, origin in batch:
                yield Event(stream, from_nanoseconds(ns), _triples(triples), seq, _node(graph), origin, dated)
    except ValueError as exc:
        yield located_error(str(exc), labels)


def _node(text: str) -> NamedNode | BlankNode:
    """A graph name in N-Triples."""
    return NamedNode(text[1:-1]) if text.startswith("<") else BlankNode(text[2:])


def _triples(triples: list[tuple[str, str, str]]) -> tuple[pyoxigraph.Triple, ...]:
    """Triples in N-Triples, read in one parse."""
    text = "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
    return tuple(q.triple for q in pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.N_TRIPLES))
