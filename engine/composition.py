"""Composed queries: a query reads another query's output stream, in the same engine pass.

``Composition`` is the dependency graph (output IRIs, which query consumes which, topological
order, cycles rejected). ``Composer`` runs the consuming queries ("gated" queries): their
events, input and derived alike, wait in a time-ordered buffer and are released only up to
the *watermark* of every query they consume, the earliest time a result still to come from
it can carry. A derived event is stamped with its match's ``time``, which for deferred matches
(trailing negation, lazy conjunction) is earlier than the clock; holding the consumer back
makes it see its events in time order anyway, so a derived event is never late and nothing
is dropped (SEMANTICS.md "Composition", docs/decisions.md).
"""

from __future__ import annotations

import graphlib
import heapq
import itertools
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from pyoxigraph import Store

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import Location, QueryError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.gpm_eval.kb_source import KbSource
from spaseq.engine.gpm_eval.matcher import EventContext, EventGraphs
from spaseq.engine.output.derived import Derived, QueryOutput
from spaseq.engine.runtime.native import QueryRuntime
from spaseq.engine.values.timestamps import INFINITY


class QueryHandle(Protocol):
    """What composition reads of a registered query (``api.QueryHandle`` has it); a protocol,
    so that this module does not import ``api``, which imports it."""

    query: A.Query
    runtime: QueryRuntime
    output: QueryOutput | None  # its output stream

    @property
    def flushed(self) -> Decimal: ...  # flush() closed its instants up to here

INF = INFINITY  # times are Decimal seconds (values.timestamps)


class CycleError(QueryError):
    """Queries that consume each other's output (directly or through others)."""


@dataclass
class _Node:
    iri: str
    streams: frozenset[str]
    label: str


class Composition:
    """Which registered query's output feeds which query."""

    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def check(self, query: A.Query, iri: str) -> None:
        """Raise if registering ``query`` with output ``iri`` would reuse an output IRI or
        close a cycle (the error names the queries around it); changes nothing."""
        label = _label(query, iri)
        if iri in self.nodes:
            raise QueryError(f"output stream <{iri}> is already the output of "
                             f"{self.nodes[iri].label}; give each query its own output IRI")
        nodes = {**self.nodes, iri: _Node(iri, frozenset(query.streams.values()), label)}
        graph = {n.iri: {u for u in n.streams if u in nodes} for n in nodes.values()}
        try:
            tuple(graphlib.TopologicalSorter(graph).static_order())
        except graphlib.CycleError as exc:
            cycle = list(reversed(list(dict.fromkeys(exc.args[1]))))  # consumer first
            steps = [f"{nodes[a].label} reads the output of {nodes[b].label}"
                     for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True)]
            raise CycleError("queries read each other's output in a cycle: " + "; ".join(steps),
                             query_location(query)) from None

    def add(self, query: A.Query, iri: str) -> None:
        self.nodes[iri] = _Node(iri, frozenset(query.streams.values()), _label(query, iri))

    def upstream(self, query: A.Query) -> list[str]:
        """The output IRIs of registered queries that ``query`` reads."""
        return [s for s in dict.fromkeys(query.streams.values()) if s in self.nodes]

    def consumers(self, iri: str) -> list[str]:
        """The registered queries (by output IRI) that read ``iri``."""
        return [n.iri for n in self.nodes.values() if iri in n.streams]

    def order(self) -> list[str]:
        """Output IRIs, producers before consumers (registration order among equals)."""
        graph = {n.iri: {u for u in n.streams if u in self.nodes} for n in self.nodes.values()}
        sorter = graphlib.TopologicalSorter(graph)
        sorter.prepare()
        rank = {iri: i for i, iri in enumerate(self.nodes)}
        out: list[str] = []
        while sorter.is_active():
            ready = sorted(sorter.get_ready(), key=rank.__getitem__)
            out += ready
            sorter.done(*ready)
        return out


def _label(query: A.Query, iri: str) -> str:
    return f"{query.file} <{iri}>" if query.file != "<query>" else f"<{iri}>"


def query_location(query: A.Query) -> Location | None:
    return Location(query.file) if query.file != "<query>" else None


@dataclass
class Gate:
    """A query that reads derived streams: its buffered events and how far it has been run."""

    handle: QueryHandle
    upstream: list[str]                 # output IRIs it reads
    raw: bool                           # does it also read input streams?
    buffer: list[tuple[Decimal, int, Event]] = field(default_factory=list)
    limit: Decimal = -INF                 # its runtime has been advanced to here


class Composer:
    """Runs the gated queries of an engine after each input step, in dependency order."""

    def __init__(self, composition: Composition, kb: Store | KbSource | None) -> None:
        self.composition = composition
        self._kb = kb
        self._graphs: EventGraphs | None = None
        self.handles: dict[str, QueryHandle] = {}   # every registered query by output IRI
        self.gates: dict[str, Gate] = {}            # the gated ones
        self.order: list[Gate] = []
        self.by_stream: dict[str, list[Gate]] = {}  # input streams of gated queries
        self._seq = itertools.count(1)

    @property
    def graphs(self) -> EventGraphs:
        """Gated queries' own event store: their events are processed later than the engine's."""
        if self._graphs is None:
            self._graphs = EventGraphs(self._kb)
        return self._graphs

    def add(self, handle: QueryHandle, iri: str) -> None:
        self.handles[iri] = handle

    def gate(self, handle: QueryHandle, iri: str) -> None:
        """Make ``handle`` a gated query (its runtime must use ``self.graphs``)."""
        query = handle.query
        upstream = self.composition.upstream(query)
        raw = [s for s in query.streams.values() if s not in self.composition.nodes]
        gate = Gate(handle, upstream, bool(raw))
        self.gates[iri] = gate
        for source in upstream:  # only outputs somebody reads are turned into events
            producer = self.handles.get(source)
            if producer is not None and producer.output is not None \
                    and self.deliver not in producer.output.listeners:
                producer.output.listeners.append(self.deliver)
        for s in dict.fromkeys(raw):
            self.by_stream.setdefault(s, []).append(gate)
        self.order = [self.gates[i] for i in self.composition.order() if i in self.gates]

    def needs_gate(self, iri: str) -> bool:
        return bool(self.composition.upstream(self.handles[iri].query)) and iri not in self.gates

    # ------------------------------------------------------------------ input

    def late(self, event: Event) -> Decimal | None:
        """The clock a gated query has passed if ``event`` is late for it, else None; an
        event pushed on a query's output stream is an error."""
        if event.stream in self.composition.nodes:
            raise UsageError(f"<{event.stream}> is the output stream of "
                             f"{self.composition.nodes[event.stream].label}: its events come "
                             "from that query, not from input")
        for gate in self.by_stream.get(event.stream, ()):
            clock = max(gate.limit, gate.handle.runtime.clock)
            if event.time < clock or event.time <= gate.handle.flushed:
                return max(clock, gate.handle.flushed)
        return None

    def on_input(self, event: Event) -> None:
        for gate in self.by_stream.get(event.stream, ()):
            heapq.heappush(gate.buffer, (event.time, next(self._seq), event))

    def deliver(self, derived: Derived) -> None:
        """An output event of some query: buffer it for every gated query that reads it."""
        consumers = [g for g in self.order if derived.stream in g.upstream]
        if consumers:
            event = derived.event(next(self._seq))
            for gate in consumers:
                heapq.heappush(gate.buffer, (event.time, event.seq, event))

    # ------------------------------------------------------------------ running

    def pump(self, frontier: Decimal, flush: bool = False) -> None:
        """Release to each gated query (in dependency order) its events up to the watermark
        of what it reads; ``frontier`` is the engine clock (no input event comes earlier)."""
        for gate in self.order:
            limit = frontier if gate.raw else INF
            for iri in gate.upstream:
                limit = min(limit, self._watermark(iri, frontier))
            self._release(gate, limit)
            if flush and limit >= frontier:
                gate.handle.runtime.flush()  # the core keeps its flushed instant
        if self.order:
            self.graphs.release(min(g.limit for g in self.order))

    def close(self) -> None:
        """End of input: every buffered event is released and every gated query closed."""
        for gate in self.order:
            self._release(gate, INF)
            gate.handle.runtime.close()
        if self._graphs is not None:
            self._graphs.release(INF)

    def _watermark(self, iri: str, frontier: Decimal) -> Decimal:
        """The earliest ``time`` a result of query ``iri`` still to come can carry."""
        handle = self.handles[iri]
        mark = handle.runtime.horizon()
        gate = self.gates.get(iri)
        if gate is None:
            return min(mark, frontier)
        if gate.buffer:
            mark = min(mark, gate.buffer[0][0])
        return min(mark, gate.limit)

    def _release(self, gate: Gate, limit: Decimal) -> None:
        runtime = gate.handle.runtime
        buffer = gate.buffer
        while buffer and buffer[0][0] <= limit:
            _, _, event = heapq.heappop(buffer)
            runtime.on_event(EventContext(event))
        if limit > gate.limit:
            gate.limit = limit
            if limit < INF:
                runtime.advance_time(limit)

