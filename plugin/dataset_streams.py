"""A recorded stream held in an rdflib Dataset: which named graphs are events, their timestamps
and streams, and which named graphs form the background knowledge base.

The convention (README "rdflib", docs/decisions.md), the same as the replay files':

* an **event** is a named graph ``g`` with a timestamp ``g prov:generatedAtTime "..."`` in the
  default graph (``xsd:dateTime`` or a number of seconds, read by ``engine.io.timestamps``);
  an event that lasts has ``prov:startedAtTime`` and ``prov:endedAtTime`` (its end, instead of
  or besides the timestamp), as in replay files (docs/decisions.md 71);
* its **stream** is given by ``g spaseq:stream <stream-iri>`` in the default graph; an event
  without one belongs to the query's stream when the query reads a single stream, and is an
  error otherwise; events of streams the query does not read are not part of its input;
* every other named graph is **background knowledge**, seen by the GPMs' ``GRAPH`` clauses;
  other default-graph triples are ignored.

A Dataset is a set of graphs with no order, so events with equal timestamps are ordered by
graph name (N-Triples spelling), which makes the order the same on every store.

``load_streams`` writes the convention: replay files (the CLI's ``--stream`` inputs, read by
the same native reader, ``engine.io.native_events``) into a Dataset, each event tagged with
its stream.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import Quad, Store, Triple
from rdflib import Dataset, Graph, URIRef
from rdflib.graph import ConjunctiveGraph
from rdflib.term import IdentifiedNode, Identifier

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import Location, StreamError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.native_events import read_replay_files
from spaseq.engine.io.rdflib_terms import TermCache, to_oxigraph, to_rdflib
from spaseq.engine.values.timestamps import (
    datetime_literal,
    interval_problem,
    is_datetime,
    seconds_literal,
    to_seconds,
)
from spaseq.engine.vocab import ENDED_AT_TIME, GENERATED_AT_TIME, SPASEQ_NS, STARTED_AT_TIME

STREAM_PREDICATE = URIRef(SPASEQ_NS + "stream")
TIME_PREDICATE = URIRef(GENERATED_AT_TIME.value)
STARTED_PREDICATE = URIRef(STARTED_AT_TIME.value)
ENDED_PREDICATE = URIRef(ENDED_AT_TIME.value)

GraphName = IdentifiedNode  # a URIRef or a BNode


@dataclass
class Recording:
    """What a query reads from a Dataset: its events in time order and the KB store (None when
    the Dataset has no knowledge-base graph)."""

    events: list[Event]
    kb: Store | None
    kb_graphs: list[GraphName]


def _named_graphs(dataset: Graph) -> tuple[Graph, list[Graph]]:
    """The default graph and the named graphs of a Dataset (or ConjunctiveGraph)."""
    if isinstance(dataset, Dataset):
        default = dataset.default_graph
        graphs = list(dataset.graphs())
    elif isinstance(dataset, ConjunctiveGraph):
        default = dataset.default_context
        graphs = list(dataset.contexts())
    else:
        raise UsageError(
            "processor='spaseq' reads a recorded stream from named graphs: query an rdflib Dataset"
            f" (or ConjunctiveGraph), not a {type(dataset).__name__}"
        )
    return default, [g for g in graphs if g.identifier != default.identifier]


def _by_subject(default: Graph, predicate: URIRef) -> dict[object, list[object]]:
    """The objects of ``predicate`` per subject in the default graph."""
    out: dict[object, list[object]] = {}
    for s, _, o in default.triples((None, predicate, None)):
        out.setdefault(s, []).append(o)
    return out


def _name(term: object) -> str:
    """How a graph name or term is shown in messages."""
    return term.n3() if hasattr(term, "n3") else repr(term)


def _timestamp(graph: GraphName, values: list[object], what: str = "timestamp") -> tuple[Decimal, bool]:
    """The one timestamp (or start, or end: ``what``) of an event graph and whether it was
    first written as an xsd:dateTime; StreamError when it is not a time or not one."""
    times: dict[Decimal, object] = {}
    for value in values:
        try:
            times.setdefault(to_seconds(to_oxigraph(value)), value)  # type: ignore[arg-type]
        except ValueError as err:
            raise StreamError(f"event {_name(graph)} has a {what} that is not a time: {err}") from None
    if len(times) > 1:
        shown = " and ".join(_name(v) for v in times.values())
        raise StreamError(f"event {_name(graph)} has two different {what}s: {shown}")
    return next(iter(times)), is_datetime(to_oxigraph(values[0]))  # type: ignore[arg-type]


def _interval(graph: GraphName, stamps: list[object], starts: list[object],
              ends: list[object]) -> tuple[Decimal, Decimal, bool]:
    """An event graph's (start, end, dated) by the replay files' rules (decision 71): the end
    is ``prov:endedAtTime``'s, else the timestamp's (both given: equal), the start
    ``prov:startedAtTime``'s, else the end; StreamError for a start without an end, a start
    after the end, or a start and an end of different kinds."""
    if not ends and not stamps:
        raise StreamError(f"event {_name(graph)} has a prov:startedAtTime but no end "
                          "(prov:endedAtTime or its timestamp)")
    end, dated = _timestamp(graph, ends or stamps, "end" if ends else "timestamp")
    if ends and stamps and _timestamp(graph, stamps)[0] != end:
        raise StreamError(f"event {_name(graph)} has two different ends: its prov:endedAtTime "
                          f"{_name(ends[0])} and its timestamp {_name(stamps[0])}")
    if not starts:
        return end, end, dated
    start, start_dated = _timestamp(graph, starts, "start")
    problem = interval_problem(start, start_dated, end, dated, (_name(starts[0]), _name((ends or stamps)[0])))
    if problem is not None:
        raise StreamError(f"event {_name(graph)} {problem}")
    return start, end, dated


def _stream(graph: GraphName, values: list[object], query: A.Query) -> str:
    """The stream IRI an event is on, by its spaseq:stream triple or the single-stream fallback."""
    iris = {str(v) for v in values if isinstance(v, URIRef)}
    if len(iris) > 1 or len(iris) != len(set(values)):
        shown = ", ".join(sorted(_name(v) for v in set(values)))
        raise StreamError(f"event {_name(graph)} must be on one stream IRI, but spaseq:stream gives {shown}")
    if iris:
        return iris.pop()
    streams = query.stream_iris
    if len(streams) == 1:
        return streams[0]
    known = ", ".join(f"<{s}>" for s in streams)
    raise StreamError(
        f"event {_name(graph)} has no stream: the query reads several streams ({known}), so give"
        f" each event graph a triple {_name(graph)} <{STREAM_PREDICATE}> <stream-iri> in the default graph"
    )


def _triples(graph: Graph, terms: TermCache) -> tuple[Triple, ...]:
    return tuple(Triple(terms[s], terms[p], terms[o]) for s, p, o in graph)


def read_dataset(dataset: Graph, query: A.Query, time_predicate: str | None = None) -> Recording:
    """The events (of the query's streams, time-ordered) and the KB of a Dataset."""
    predicate = URIRef(time_predicate) if time_predicate else TIME_PREDICATE
    default, graphs = _named_graphs(dataset)
    stamps = _by_subject(default, predicate)
    starts = _by_subject(default, STARTED_PREDICATE)
    ends = _by_subject(default, ENDED_PREDICATE)
    stream_of = _by_subject(default, STREAM_PREDICATE)
    wanted = set(query.stream_iris)
    found: list[tuple[Decimal, str, Graph, str, bool, Decimal]] = []
    kb_graphs: list[Graph] = []
    for graph in graphs:
        name = graph.identifier
        if name not in stamps and name not in ends and name not in starts:
            kb_graphs.append(graph)
            continue
        start, time, dated = _interval(name, stamps.get(name, []), starts.get(name, []), ends.get(name, []))
        stream = _stream(name, stream_of.get(name, []), query)
        if stream in wanted:
            found.append((time, _name(name), graph, stream, dated, start))
    found.sort(key=lambda item: (item[0], item[1]))
    terms = TermCache()
    events = [
        Event(stream, time, _triples(graph, terms), seq, terms[graph.identifier],
              dated=dated, start=start)
        for seq, (time, _, graph, stream, dated, start) in enumerate(found)
    ]
    kb = _kb_store(kb_graphs, terms) if kb_graphs else None
    names = [g.identifier for g in kb_graphs]
    _warn_missing(query, names)
    return Recording(events, kb, names)


def _kb_store(graphs: Iterable[Graph], terms: TermCache) -> Store:
    """A pyoxigraph store holding the knowledge-base graphs, each under its own name."""
    store = Store()
    for graph in graphs:
        name = terms[graph.identifier]
        store.extend(Quad(terms[s], terms[p], terms[o], name) for s, p, o in graph)
    return store


def _warn_missing(query: A.Query, kb_names: list[GraphName]) -> None:
    """Warn (as the CLI does) about GRAPH clauses naming a graph the Dataset does not have."""
    present = {str(n) for n in kb_names if isinstance(n, URIRef)}
    for iri in query.graph_iris():
        if iri not in present:
            warnings.warn(
                f"GRAPH <{iri}> names a graph the Dataset does not have (or has as an event): it matches nothing",
                stacklevel=4,
            )


def load_streams(dataset: Dataset, streams: Mapping[str, str | os.PathLike[str]],
                 time_predicate: str | None = None) -> Dataset:
    """Add replay files to ``dataset``, ``{stream IRI: path}`` (TriG or N-Quads, maybe
    gzipped), so that ``dataset.query(text, processor="spaseq")`` reads what ``spaseq run
    --stream NAME=PATH`` reads: each event as its named graph, with ``prov:generatedAtTime``
    (its time as the file stamped it: an ``xsd:dateTime`` in UTC, or ``xsd:decimal``
    seconds, so results give times in the same form, decision 43), for an event that lasts
    ``prov:startedAtTime`` and ``prov:endedAtTime`` too, and ``spaseq:stream`` in the
    default graph.
    ``time_predicate`` is the files' timestamp predicate. Every file is read before the
    Dataset changes: a file's error (StreamError, located) or an event graph name already an
    event of the Dataset (or of another file) leaves it as it was. Returns ``dataset``."""
    read: list[tuple[str, str, list[Event]]] = []
    for stream, path in streams.items():
        events, error = read_replay_files([(stream, os.fspath(path))], time_predicate)
        if error is not None:
            raise error
        read.append((stream, os.fspath(path), events))
    default, _ = _named_graphs(dataset)
    taken: dict[object, str] = {s: "the Dataset" for p in (TIME_PREDICATE, ENDED_PREDICATE)
                                for s in default.subjects(p, None)}
    cache: dict[object, Identifier] = {}  # each term converted once

    def term(t: object) -> Identifier:
        found = cache.get(t)
        if found is None:
            found = cache[t] = to_rdflib(t)  # type: ignore[arg-type]  # replay terms (no RDF-star)
        return found

    for _stream, path, events in read:
        for event in events:
            name = term(event.name)
            if name in taken:
                raise StreamError(f"event {_name(name)} is already an event of {taken[name]}: graph "
                                  "names must differ across the files", Location(path))
            taken[name] = path
    for stream, _path, events in read:
        iri = URIRef(stream)
        for event in events:
            name = term(event.name)
            graph = dataset.graph(name)
            dataset.addN((term(t.subject), term(t.predicate), term(t.object), graph) for t in event.triples)
            spell = datetime_literal if event.dated else seconds_literal
            dataset.add((name, TIME_PREDICATE, to_rdflib(spell(event.time))))
            if event.start != event.time:
                dataset.add((name, STARTED_PREDICATE, to_rdflib(spell(event.start))))
                dataset.add((name, ENDED_PREDICATE, to_rdflib(spell(event.time))))
            dataset.add((name, STREAM_PREDICATE, iri))
    return dataset


__all__ = ["Recording", "STREAM_PREDICATE", "TIME_PREDICATE", "load_streams", "read_dataset"]
