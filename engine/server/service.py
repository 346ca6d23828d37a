"""The engine service: one ``Engine`` for every registered query, driven from one thread of
its own (the native core's objects stay on the thread that made them), each query's results
numbered in a ``MatchLog`` and materialised in the store ``/sparql`` answers over, and, with
``--data``, every change journaled before it is acknowledged (``journal``).

Routes call the ``async`` methods; waiting clients wait on ``changed`` (renewed after every
change), so ingestion never waits for a reader."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import os
from collections import Counter, OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from time import perf_counter
from time import time as wall_time
from typing import Any, TypeVar

from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Store, serialize

from spaseq.engine.algebra import operators as A
from spaseq.engine.api import Engine, QueryHandle
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.errors import SpaseqError, UsageError
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import Row
from spaseq.engine.output.construct import template_variables
from spaseq.engine.output.derived import Derived
from spaseq.engine.output.match_rdf import QUERY, stamp_quads
from spaseq.engine.output.materialize import Materializer
from spaseq.engine.output.native import jsonl_line
from spaseq.engine.values.timestamps import datetime_literal, datetime_text, seconds_literal
from spaseq.engine.vocab import PROV_NS, SPASEQ_NS, XSD_NS

from .bodies import BodyError, IncomingEvent, check_iri, located, parse_time, read_batch, read_single
from .config import ServerConfig
from .journal import Journal
from .kb import KbMirror, UpdatableKb, UpdateError
from .matchlog import MatchLog

log = logging.getLogger(__name__)

T = TypeVar("T")
#: A late event as a batch's answer tells it: {"stream", "time", "queries": [query ids]}.
Late = dict[str, Any]


class ServiceError(Exception):
    """A request the service refuses: the HTTP status and the message sent back."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclass
class Registered:
    """A registered query as the server knows it."""

    id: str
    text: str
    query: A.Query = field(repr=False)
    output: str
    log: MatchLog = field(repr=False)
    handle: QueryHandle | None = field(default=None, repr=False)
    produced: int = 0  # results the engine has given (len(log), except while the journal replays)
    late: int = 0  # the late events it dropped: the core's count, read on the engine's thread
    events: int = 0  # events accepted on its streams since it was registered (late ones too)

    @property
    def construct(self) -> bool:
        return self.query.match.is_construct

    def describe(self) -> dict[str, Any]:
        """The registration answer: ``{"id", "query", "streams", "output", "matches"}``."""
        return {"id": self.id, "query": self.text, "streams": list(dict.fromkeys(self.query.streams.values())),
                "output": self.output, "matches": f"/queries/{self.id}/matches"}

    @property
    def variables(self) -> list[str]:
        """Its result variables, in the order ``spaseq run`` writes them."""
        q = self.query
        if q.match.is_construct:
            return template_variables(q.match.template)
        if q.match.variables is not None:
            return list(q.match.variables)
        return sorted({v for ev in q.events.values() for v in ev.variables})

    def details(self) -> dict[str, Any]:
        """The description with the form, the stream names, statistics, the events seen on
        its streams and the late events it dropped (``late``, decision 64); its variables
        and PREFIXes, for a client to show its matches (the console, decision 77)."""
        stats = dict(self.handle.stats) if self.handle is not None else {}
        return {**self.describe(), "form": "construct" if self.construct else "select",
                "stream_names": dict(self.query.streams), "results": len(self.log),
                "events": self.events, "late": self.late,
                "variables": self.variables, "prefixes": dict(self.query.prefixes),
                "statistics": {k: v for k, v in stats.items() if isinstance(v, int | float)}}


class EngineService:
    """The engine, the registered queries and their results, behind one thread."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.queries: dict[str, Registered] = {}
        self.store: Store | None = None        # what /sparql answers over
        self.changed = asyncio.Event()        # set (and renewed) after every change
        self.clock: Decimal | None = None      # the latest event time or heartbeat
        self.events_accepted = 0
        self.events_unread = 0  # the engine's dropped_unread, as of its last batch
        self._next_id = 1
        self._engine: Engine | None = None
        self._now: float | None = None  # the processing time of the batch being applied
        # stream idleness (decision 63): when each stream last sent (processing time), and
        # when idleness was last looked at (a batch, a heartbeat or a journaled tick)
        self._arrived: dict[str, float] = {}
        self._looked: float = 0.0
        self._kb: Any = None
        self._mirror: KbMirror | None = None
        self._updates: list[str] = []        # SPARQL Updates applied to the in-memory KB, in order
        # idempotency keys of accepted batches -> [digest of the request, events accepted, the
        # late events dropped (``Late`` answers)]
        self._batches: OrderedDict[str, list] = OrderedDict()
        self._materializer: Materializer | None = None
        self._journal: Journal | None = None
        self._replaying = False
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spaseq-engine")
        # what /metrics observes, told on the engine's thread: each accepted batch's processing
        # time (seconds), and each new match's delay (query id, seconds) since the engine began
        # the write that completed it (a batch, a heartbeat or an idle tick: ``_began``)
        self.on_batch: list[Callable[[float], None]] = []
        self.on_match: list[Callable[[str, float], None]] = []
        self._began: float | None = None

    # ------------------------------------------------------------------ plumbing

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the engine's thread, then wake whoever waits for results."""
        try:
            return await asyncio.wrap_future(self._thread.submit(fn, *args))
        finally:
            self._notify()

    def _notify(self) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()

    async def start(self) -> None:
        """Load the KB, recover ``--data`` (snapshot, then the journal after it), open the store."""
        await self._run(self._start)

    async def stop(self) -> None:
        """Checkpoint (with ``--data``) and let the engine go."""
        await self._run(self._stop)
        self._thread.shutdown(wait=True)

    def _start(self) -> None:
        self._kb = self._load_kb()
        data = self.config.data
        if data:
            try:
                os.makedirs(data, exist_ok=True)
            except OSError as exc:
                raise UsageError(f"--data {data}: {exc.strerror or exc}") from None
        self.store = Store(os.path.join(data, "store")) if data else Store()
        self._materializer = Materializer(self.store, self.config.time_format)
        if data is None:
            self._mirror = KbMirror(self._kb, self.store)
            self._mirror.sync(force=True)
            # events of a stream no query reads (yet) are accepted and counted, not refused:
            # producers need not follow which queries are registered (decision 44)
            self._engine = Engine(self._kb, self._options(), query_clocks=True, drop_unread=True,
                                  lateness=self.config.lateness, idle_timeout=self.config.idle_timeout,
                                  clock=self._processing_time, late=self.config.late)
            return
        self._journal = Journal(data)
        found = self._journal.recover()
        server = found.server
        if isinstance(self._kb, UpdatableKb):  # the KB files again, then the updates made since
            for text in server.get("updates", []):
                self._apply_update(text)
        self._mirror = KbMirror(self._kb, self.store, os.path.join(data, "kb-graphs.json"))
        self._mirror.sync(force=True)
        self._engine = (Engine.restore(found.snapshot, kb=self._kb, clock=self._processing_time) if found.snapshot
                        else Engine(self._kb, self._options(), query_clocks=True, clock=self._processing_time))
        self._engine.options = self._options()  # for queries registered from now on
        self._engine.drop_unread = True  # as above (a snapshot of an older spaseq lacks it)
        self._engine.lateness = self.config.lateness  # for queries registered from now on
        self._engine.idle_timeout = self.config.idle_timeout
        self._next_id = server.get("next_id", 1)
        self.clock = Decimal(server["clock"]) if server.get("clock") else None
        self.events_accepted = server.get("events", 0)
        self.events_unread = self._engine.dropped_unread
        self._batches = OrderedDict((k, v) for k, v in server.get("batches", []))
        for q in server.get("queries", []):
            reg = self._registered(q["id"], q["text"], parse_query(q["text"]), q["output"])
            reg.produced = q["produced"]
            reg.events = q.get("events", 0)
            reg.handle = self._engine.query(q["output"])
            reg.handle.output.listeners.append(self._collector(reg))  # type: ignore[union-attr]
        # the journal holds accepted batches only: replayed under "drop" they are judged as
        # when they were accepted (under "error" none was late), whatever --late says now
        self._engine.late_policy = "drop"
        self._replaying = True
        try:
            for record in found.records:
                self._replay(record)
        finally:
            self._replaying = False
        self._engine.late_policy = self.config.late
        # a restored engine counts the streams it had seen as sending at the restore: so does
        # the idle timer (those the journal replayed keep their batches' times)
        restored = wall_time()
        for reg in self.queries.values():
            for stream in reg.query.stream_iris:
                self._arrived.setdefault(stream, restored)
        self._read_late()
        self._materializer.flush()
        self._checkpoint()

    def _stop(self) -> None:
        if self._journal is not None:
            self._checkpoint()
            self._journal.close()
        if self._materializer is not None:
            self._materializer.flush()
        for reg in self.queries.values():
            reg.log.close()

    def _load_kb(self) -> Any:
        """The engine's KB: the ``--kb-store`` directory (read-only, versioned), or the
        ``--kb`` files in an in-memory store that SPARQL Update may change (empty without
        files)."""
        if self.config.kb_store:
            from spaseq.engine.kb.reader import KbStore

            return KbStore(self.config.kb_store)
        if not self.config.kb:
            return UpdatableKb(Store())
        from spaseq.engine.io.kb import load_kb, parse_kb_option

        return UpdatableKb(load_kb([parse_kb_option(text) for text in self.config.kb], []).store)

    def kb_graphs(self) -> list[Any]:
        """The KB's named graphs as ``/sparql`` sees them (the service description lists them)."""
        return self._mirror.graphs if self._mirror is not None else []

    async def follow_kb(self) -> None:
        """Before a /sparql query: pick up a new KB store version (``spaseq kb refresh``) in
        the /sparql copy, on the engine's thread so the engine and the copy agree."""
        await self._run(self._follow_kb)

    def _follow_kb(self) -> None:
        if self._mirror is not None:
            self._mirror.sync()

    async def update(self, text: str) -> None:
        """SPARQL Update on the in-memory KB (ServiceError 403 on a versioned store, 400 for
        a bad update); journaled like every write, and kept in checkpoints."""
        await self._run(self._update, text)

    def check_writable(self) -> None:
        """ServiceError 403 when the KB is a versioned store (--kb-store), read-only here."""
        if self._mirror is not None and self._mirror.read_only:
            raise ServiceError(403, "the knowledge base is a versioned store (--kb-store), read-only "
                               "here: change it with 'spaseq kb refresh', which this server follows")

    def _update(self, text: str) -> None:
        assert self._mirror is not None
        self.check_writable()
        self._apply_update(text)
        if self._journal is not None:
            self._journal.append({"op": "update", "text": text})
            self._after_write()

    async def write_graphs(self, text: str, graphs: list[NamedNode], create: bool) -> bool:
        """A Graph Store Protocol write of the KB's ``graphs`` as its SPARQL Update ``text``
        (applied and journaled as an update): whether they all existed. A graph the KB lacks
        is made only when ``create`` (PUT, POST), else 404; a graph of the materialised
        matches (a CONSTRUCT result) is the engine's: 409. Nothing is applied on a refusal."""
        return await self._run(self._write_graphs, text, graphs, create)

    def _write_graphs(self, text: str, graphs: list[NamedNode], create: bool) -> bool:
        assert self.store is not None
        self.check_writable()
        existed = True
        for graph in graphs:
            if self._kb.store.contains_named_graph(graph):
                continue
            existed = False
            if self.store.contains_named_graph(graph):
                raise ServiceError(409, f"<{graph.value}> is a graph of the materialised matches (a CONSTRUCT "
                                   "query's result), written by the engine, not a graph of the knowledge base")
            if not create:
                raise ServiceError(404, f"the knowledge base has no graph <{graph.value}>")
        self._update(text)
        return existed

    def _apply_update(self, text: str) -> None:
        """Change the KB; the engine sees the new version at its next event, /sparql now."""
        try:
            self._kb.update(text)
        except UpdateError as exc:
            raise ServiceError(400, str(exc)) from None
        self._updates.append(text)
        if self._mirror is not None:
            self._mirror.sync()

    # ------------------------------------------------------------------ queries

    def _registered(self, qid: str, text: str, query: A.Query, output: str) -> Registered:
        path = os.path.join(self.config.data, "matches", f"{qid}.jsonl") if self.config.data else None
        reg = Registered(qid, text, query, output, MatchLog(path, keep=self.config.keep_matches))
        self.queries[qid] = reg
        return reg

    def _collector(self, reg: Registered) -> Callable[[Derived], None]:
        """The listener numbering a query's results: materialised, then logged (so a result
        logged is in the store); while the journal is replayed after a crash, results the
        log already holds are recognised by number and not given again."""
        variables = template_variables(reg.query.match.template) if reg.construct else None
        prefixes = {"prov": PROV_NS, "xsd": XSD_NS, "spaseq": SPASEQ_NS, **reg.query.prefixes}

        def collect(derived: Derived) -> None:
            reg.produced += 1
            if not self._replaying or not self._materialized(derived):
                self._materializer(derived)  # type: ignore[misc]
            if reg.produced <= len(reg.log):
                return
            row = derived.row
            trig = None
            if variables is not None:
                row = Row({v: row.bindings[v] for v in variables if v in row.bindings}, row.match)
                quads = stamp_quads(derived.name, derived.start, derived.time)
                quads += [Quad(t.subject, t.predicate, t.object, derived.name) for t in derived.triples]
                trig = serialize(quads, format=RdfFormat.TRIG, prefixes=prefixes).decode()  # type: ignore[union-attr]  # pyoxigraph's stubs: bytes, not None, without an output
            reg.log.append(jsonl_line(row, self.config.time_format), trig)
            if self._began is not None and not self._replaying:
                for observe in self.on_match:
                    observe(reg.id, perf_counter() - self._began)

        return collect

    def _materialized(self, derived: Derived) -> bool:
        assert self.store is not None and self._materializer is not None
        self._materializer.write()
        return next(self.store.quads_for_pattern(derived.name, QUERY, None, DefaultGraph()), None) is not None

    async def register(self, text: str, output: str | None = None) -> Registered:
        """Register a continuous query (ServiceError 400 for a bad query, 409 for a clash)."""
        return await self._run(self._register, text, output)

    def _register(self, text: str, output: str | None) -> Registered:
        if len(self.queries) >= self.config.max_queries:
            raise ServiceError(429, f"{len(self.queries)} queries are registered, the most this "
                               "server takes (--max-queries); delete one first", {"Retry-After": "60"})
        try:
            query = parse_query(text)
            if output is not None:
                check_iri(output, "output-stream")
        except SpaseqError as exc:
            raise ServiceError(400, located(exc)) from None
        qid = f"q{self._next_id}"
        reg = self._apply_register(qid, text, query, output or f"urn:spaseq:query:{qid}")
        if self._journal is not None:
            # the lateness it runs with (its own, or --lateness), and whether it was planned for
            # events that last (--intervals): a restart replays it so
            lateness = reg.handle.query.lateness if reg.handle is not None else None
            plan = reg.handle.plan if reg.handle is not None else None
            self._journal.append({"op": "register", "id": qid, "text": text, "output": reg.output,
                                  "lateness": None if lateness is None else str(lateness),
                                  "intervals": bool(plan is not None and plan.options.intervals)})
            self._after_write()
        return reg

    def _apply_register(self, qid: str, text: str, query: A.Query, output: str,
                        intervals: bool = False) -> Registered:
        """Register ``query`` (planned for events that last with ``intervals``, as it was
        when a journal record says so, whatever --intervals says now)."""
        assert self._engine is not None and self._materializer is not None
        if any(r.output == output for r in self.queries.values()):
            raise ServiceError(409, f"<{output}> is already the output stream of a registered query")
        try:
            if not self._replaying:
                self._materializer.check_query(output)
            planned = (plan_query(query, dataclasses.replace(self._engine.options, intervals=True))
                       if intervals else query)
            handle = self._engine.register(planned, keep=False, output=output)
        except SpaseqError as exc:
            raise ServiceError(409, str(exc)) from None
        self._materializer.add_query(output, query, resume=True)
        self._next_id = max(self._next_id, int(qid[1:]) + 1)
        reg = self._registered(qid, text, query, output)
        reg.handle = handle
        handle.output.listeners.append(self._collector(reg))  # type: ignore[union-attr]
        return reg

    def get(self, qid: str) -> Registered:
        reg = self.queries.get(qid)
        if reg is None:
            raise ServiceError(404, f"no query {qid} is registered")
        return reg

    async def delete(self, qid: str) -> None:
        await self._run(self._delete, qid)

    def _delete(self, qid: str) -> None:
        self._apply_delete(qid)
        if self._journal is not None:
            self._journal.append({"op": "delete", "id": qid})
            self._after_write()

    def _apply_delete(self, qid: str) -> None:
        assert self._engine is not None
        reg = self.get(qid)
        try:
            self._engine.unregister(reg.handle)  # type: ignore[arg-type]
        except SpaseqError as exc:
            raise ServiceError(409, str(exc)) from None
        del self.queries[qid]
        reg.log.close(remove=True)

    # ------------------------------------------------------------------ events

    async def push(self, stream: str, body: bytes, media: str, time: str | None = None,
                   name: str | None = None, key: str | None = None,
                   start: str | None = None) -> tuple[int, bool, list[Late]]:
        """Read a body of events and apply all of them or none: the number accepted, whether
        ``key`` named a batch accepted before (then nothing is applied again), and the late
        events the queries dropped (under ``--late drop``; ``--late error`` refuses a batch
        with a late event, 409)."""
        return await self._run(self._push, stream, body, media, time, name, key, start)

    def _push(self, stream: str, body: bytes, media: str, time: str | None, name: str | None,
              key: str | None, start: str | None = None) -> tuple[int, bool, list[Late]]:
        self._began = perf_counter()
        try:
            answer = self._push_batch(stream, body, media, time, name, key, start)
        finally:
            began, self._began = self._began, None
        if not answer[1]:  # accepted now (not a batch sent again)
            for observe in self.on_batch:
                observe(perf_counter() - began)
        return answer

    def _push_batch(self, stream: str, body: bytes, media: str, time: str | None, name: str | None,
                    key: str | None, start: str | None) -> tuple[int, bool, list[Late]]:
        digest = _digest(stream, body, media, time, name, start)
        if key is not None and key in self._batches:
            seen, accepted, *late = self._batches[key]
            if seen != digest:
                raise ServiceError(422, f"idempotency key {key!r} was used for a different batch")
            return accepted, True, late[0] if late else []
        events = self._read(stream, body, media, time, name, start)
        if events:
            assert self._engine is not None
            lasting = next((e for e in events if e.start is not None), None)
            try:
                refused = self._engine.late(stream, _as_sent(events[0].time, events[0].dated))
                if lasting is not None and lasting.start is not None:  # refused by a query of points
                    self._engine.late(stream, _as_sent(lasting.time, lasting.dated),
                                      start=_as_sent(lasting.start, lasting.dated))
            except SpaseqError as exc:
                raise ServiceError(400, str(exc)) from None
            if refused is not None and self.config.late == "error":
                raise ServiceError(409, refused)
        self._now = wall_time()  # the batch's processing time, journaled: a replay sees it again
        if self._journal is not None:
            self._journal.append({"op": "events", "stream": stream, "media": media,
                                  "body": body.decode("utf-8"), "time": time, "name": name, "key": key,
                                  "now": self._now, "start": start})
        try:
            late = self._apply_events(events)
        finally:
            self._now = None
        self._remember(key, digest, len(events), late)
        if self._journal is not None:
            self._after_write()
        return len(events), False, late

    def _remember(self, key: str | None, digest: str, accepted: int, late: list[Late]) -> None:
        """Note an accepted batch's key and answer (the newest ``--idempotency-keys`` are kept)."""
        if key is None:
            return
        self._batches[key] = [digest, accepted, late]
        while len(self._batches) > self.config.idempotency_keys:
            self._batches.popitem(last=False)

    def _read(self, stream: str, body: bytes, media: str, time: str | None,
              name: str | None, start: str | None = None) -> list[IncomingEvent]:
        try:
            check_iri(stream, "stream")
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ServiceError(400, f"the body is not UTF-8: {exc}") from None
        except BodyError as exc:
            raise ServiceError(400, str(exc)) from None
        try:
            if media in ("application/trig", "application/n-quads"):
                events = read_batch(body, media, stream)
                if not events and time is not None:  # an empty batch with a time: a heartbeat
                    self._apply_heartbeat(time)
                return events
            return [read_single(body, media, stream, time, name, start)]
        except BodyError as exc:
            raise ServiceError(400, str(exc)) from None

    def _options(self) -> EngineOptions:
        """How queries registered here are planned: for events that last with --intervals."""
        return EngineOptions(intervals=self.config.intervals)

    def _processing_time(self) -> float:
        """The engine's processing time (seconds): the accepted batch's, journaled with it, so
        that a replay after a restart judges stream idleness as the first run did; wall-clock
        time otherwise (comparable across restarts, unlike a monotonic clock)."""
        return self._now if self._now is not None else wall_time()

    def _apply_events(self, events: list[IncomingEvent]) -> list[Late]:
        """Push ``events``; the late ones, each with the queries that dropped it."""
        assert self._engine is not None
        late: list[Late] = []
        now = self._processing_time()
        self._looked = now
        for e in events:
            self._arrived[e.stream] = now
            pushed = self._engine.push(e.stream, _as_sent(e.time, e.dated), e.triples, name=e.name,
                                       start=None if e.start is None else _as_sent(e.start, e.dated))
            if pushed.late_for:
                late.append(self._late(e, pushed.late_for))
            self.clock = e.time if self.clock is None else max(self.clock, e.time)
        self.events_accepted += len(events)
        arrived = Counter(e.stream for e in events)
        for reg in self.queries.values():
            reg.events += sum(arrived[s] for s in reg.query.stream_iris)
        # read here, on the engine's thread (the core is not shared across threads), for status()
        self.events_unread = self._engine.dropped_unread
        if late:
            self._read_late()
        self._materializer.write()  # type: ignore[union-attr]
        self._follow_kb()  # the engine may have switched to a new KB store version
        return late

    def _read_late(self) -> None:
        """Each query's late count, read from the core (on the engine's thread) for ``details``."""
        for reg in self.queries.values():
            if reg.handle is not None:
                reg.late = reg.handle.late

    def _late(self, e: IncomingEvent, handles: tuple[QueryHandle, ...]) -> Late:
        """How a batch's answer tells a late event: its stream, its time as the body wrote it
        (an ``xsd:dateTime`` or seconds) and the ids of the queries it was late for."""
        ids = {id(r.handle): r.id for r in self.queries.values()}
        return {"stream": e.stream,
                "time": datetime_text(e.time) if e.dated else seconds_literal(e.time).value,
                "queries": [ids[id(h)] for h in handles if id(h) in ids]}

    async def heartbeat(self, time: str) -> None:
        await self._run(self._heartbeat, time)

    def _heartbeat(self, time: str) -> None:
        self._began = perf_counter()
        try:
            self._apply_heartbeat(time)
        except BodyError as exc:
            raise ServiceError(400, str(exc)) from None
        finally:
            self._began = None
        if self._journal is not None:
            self._journal.append({"op": "heartbeat", "time": time})
            self._after_write()

    def _apply_heartbeat(self, time: str) -> None:
        assert self._engine is not None
        self._looked = self._processing_time()
        seconds = parse_time(time)
        self._engine.advance_to(seconds)
        self.clock = seconds if self.clock is None else max(self.clock, seconds)
        self._materializer.write()  # type: ignore[union-attr]

    # ------------------------------------------------------------------ idleness

    async def idle_ticks(self) -> None:
        """While the server runs, let a stream silent for its idle timeout stop holding back the
        watermarks of queries with a LATENESS (decision 63) when no batch comes, as ``spaseq
        run``'s live loop does: the engine is told only when a stream's silence crosses an
        idle timeout (nothing else changes a watermark), and that tick is journaled with its
        processing time, so that a restart replays it."""
        while True:
            await asyncio.sleep(self._tick_period())
            if await asyncio.wrap_future(self._thread.submit(self._idle_tick)):
                self._notify()

    def _idle_timeouts(self) -> set[float]:
        """The idle timeouts in force (seconds): --idle-timeout, else each query's lateness."""
        if self.config.idle_timeout is not None:
            return {float(self.config.idle_timeout)}
        return {float(r.handle.query.lateness) for r in self.queries.values()
                if r.handle is not None and r.handle.query.lateness}

    def _tick_period(self) -> float:
        """How often idleness is looked at: a quarter of the shortest idle timeout, within
        [0.05, 1] s (the precision of the idleness the server sees)."""
        timeouts = self._idle_timeouts()
        return min(max(min(timeouts) / 4, 0.05), 1.0) if timeouts else 1.0

    def _idle_tick(self) -> bool:
        """On the engine's thread: whether a stream's silence crossed an idle timeout since
        idleness was last looked at, in which case the engine was told (and it journaled)."""
        if self._engine is None or not self._arrived:
            return False
        now = wall_time()
        timeouts = self._idle_timeouts()
        crossed = any(self._looked < last + d <= now for last in self._arrived.values() for d in timeouts)
        if not crossed:
            return False
        self._began = perf_counter()
        try:
            self._apply_tick(now)
        finally:
            self._began = None
        if self._journal is not None:
            self._journal.append({"op": "tick", "now": now})
            self._after_write()
        return True

    def _apply_tick(self, now: float) -> None:
        """Idleness looked at, at processing time ``now``: the held queries released as far as
        their watermarks now allow."""
        assert self._engine is not None
        self._now = now
        try:
            self._engine.tick()
        finally:
            self._now = None
        self._looked = now
        self._materializer.write()  # type: ignore[union-attr]

    # ------------------------------------------------------------------ durability

    def _replay(self, record: dict) -> None:
        """Apply one journal record again after a restart (it was accepted before)."""
        op = record["op"]
        try:
            if op == "register":
                query = parse_query(record["text"])
                if record.get("lateness") is not None and query.lateness is None:  # as accepted
                    query = dataclasses.replace(query, lateness=Decimal(record["lateness"]))
                self._apply_register(record["id"], record["text"], query, record["output"],
                                     record.get("intervals", False))
            elif op == "delete":
                self._apply_delete(record["id"])
            elif op == "heartbeat":
                self._apply_heartbeat(record["time"])
            elif op == "tick":
                self._apply_tick(record["now"])
            elif op == "update":
                self._apply_update(record["text"])
            elif op == "events":
                body = record["body"].encode()
                events = self._read(record["stream"], body, record["media"], record["time"], record["name"],
                                    record.get("start"))
                self._now = record.get("now")  # when it was accepted (stream idleness, decision 63)
                try:
                    late = self._apply_events(events)
                finally:
                    self._now = None
                self._remember(record.get("key"), _digest(record["stream"], body, record["media"], record["time"],
                                                          record["name"], record.get("start")),
                               len(events), late)
        except (ServiceError, SpaseqError) as exc:  # it was accepted once: say so, go on
            log.warning("journal record %s not applied again: %s", op, exc)

    def _after_write(self) -> None:
        assert self._journal is not None
        if self._journal.appended >= self.config.snapshot_every:
            self._checkpoint()

    def _checkpoint(self) -> None:
        """Snapshot the engine, note what the server knows, empty the journal."""
        assert self._engine is not None and self._journal is not None
        snapshot = self._engine.snapshot()  # releases pending results to the collectors first
        self._materializer.flush()  # type: ignore[union-attr]
        server = {"next_id": self._next_id, "events": self.events_accepted, "updates": self._updates,
                  "batches": list(self._batches.items()),
                  "clock": None if self.clock is None else str(self.clock),
                  "queries": [{"id": r.id, "text": r.text, "output": r.output, "produced": r.produced,
                               "events": r.events}
                              for r in self.queries.values()]}
        self._journal.checkpoint(snapshot, server)
        for reg in self.queries.values():  # only now: the journal no longer replays dropped results
            reg.log.trim()

    async def checkpoint(self) -> None:
        if self._journal is not None:
            await self._run(self._checkpoint)

    async def readiness(self, timeout: float = 5.0) -> dict[str, str]:
        """Whether the server can take requests, per part (``"ok"`` or what is wrong): the
        engine's thread answers within ``timeout`` seconds, the KB is open and readable, the
        ``--data`` journal takes a synced write (``"not used"`` without --data)."""
        try:
            return await asyncio.wait_for(asyncio.wrap_future(self._thread.submit(self._readiness)), timeout)
        except asyncio.TimeoutError:  # noqa: UP041 (not TimeoutError before Python 3.11)
            return {"engine": f"busy: no answer from the engine within {timeout:g} s"}
        except RuntimeError as exc:  # the engine's thread is shut down (the server stops)
            return {"engine": f"stopped: {exc}"}

    def _readiness(self) -> dict[str, str]:
        checks = {"engine": "ok" if self._engine is not None else "not started"}
        try:
            next(iter(self._kb.store.quads_for_pattern(None, None, None)), None)
            checks["kb"] = "ok"
        except (SpaseqError, OSError, RuntimeError, ValueError, AttributeError) as exc:
            checks["kb"] = f"cannot read the knowledge base: {exc}"
        if self._journal is None:
            checks["journal"] = "not used" if self.config.data is None else "not open"
        else:
            problem = self._journal.writable()
            checks["journal"] = "ok" if problem is None else problem
        return checks

    def status(self) -> dict[str, Any]:
        return {"queries": len(self.queries), "events": self.events_accepted,
                "events_unread": self.events_unread,
                "clock": None if self.clock is None else str(self.clock),
                "durable": self.config.data is not None}


def _as_sent(time: Decimal, dated: bool) -> Decimal | Literal:
    """A time read from a request as the engine is given it: an xsd:dateTime literal when the
    request wrote one (results then give their times so, decision 43), else seconds."""
    return datetime_literal(time) if dated else time


def _digest(stream: str, body: bytes, media: str, time: str | None, name: str | None,
            start: str | None = None) -> str:
    """What identifies a batch's request, so a key reused for another batch is refused."""
    h = hashlib.sha256()
    for part in (stream, media, time or "", name or "", *((start,) if start else ())):
        h.update(part.encode() + b"\0")
    h.update(body)
    return h.hexdigest()
