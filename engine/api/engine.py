"""The Engine: registration, push and lateness, dictionary compaction, lifecycle, and the
snapshot, instant and driver work its methods hand to the other modules of ``spaseq.engine.api``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable
from datetime import datetime
from decimal import Decimal
from operator import attrgetter
from time import monotonic
from typing import TYPE_CHECKING

from pyoxigraph import BlankNode, NamedNode, Quad, Store, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.api import drivers, instants, snapshots
from spaseq.engine.api.convert import event_time, event_triples
from spaseq.engine.api.errors import LateEventError, UnreadStreamError
from spaseq.engine.api.handle import QueryHandle
from spaseq.engine.api.pushed import Pushed
from spaseq.engine.compile.plan import EngineOptions, Plan
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.composition import Composition, query_label
from spaseq.engine.errors import SpaseqError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.gpm_eval.matcher import EventContext, EventGraphs
from spaseq.engine.kb.reader import KbStore
from spaseq.engine.language.query import parse_query
from spaseq.engine.language.translate import parse_duration
from spaseq.engine.matches import Match
from spaseq.engine.output.derived import Derived, QueryOutput
from spaseq.engine.output.materialize import Materializer
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, check_time_format
from spaseq.engine.runtime.native import (
    LastingEvent,
    LateEvent,
    LateOutput,
    NativeEngine,
    NativeSession,
    OutputStream,
    QueryRuntime,
    UnreadStream,
)
from spaseq.engine.runtime.snapshot import SnapshotError
from spaseq.engine.values.timestamps import INFINITY, exact_seconds, interval_problem, to_nanoseconds

if TYPE_CHECKING:
    from spaseq.engine._native import EventRows, ReplayReading


_RUNTIME = attrgetter("runtime")  # a handle's runtime, read at C speed per event
_FED, _NOT_FED = Pushed(True), Pushed(False)  # what most pushes did: made once

#: What ``Engine(late=...)`` accepts: what is done with an event late for a query (decision 64).
LATE_POLICIES = ("drop", "error")

class Engine:
    """One pass over pushed events for every registered query."""

    def __init__(self, kb: Store | KbStore | str | os.PathLike | None = None, options: EngineOptions | None = None,
                 drop_late: bool | None = None, materialize: Store | str | None = None,
                 query_clocks: bool = False, time_format: str = DEFAULT_TIME_FORMAT,
                 drop_unread: bool = False, lateness: float | int | Decimal | str | None = None,
                 idle_timeout: float | int | Decimal | str | None = None,
                 clock: Callable[[], float] = monotonic, late: str | None = None,
                 late_output: str | os.PathLike | None = None) -> None:
        """``materialize``: a pyoxigraph Store or a directory for an on-disk one, where every
        result of every query is stored (``materialize`` module, docs/vocabulary.md), its
        times as ``time_format`` says (``input``, ``dateTime``, ``epoch``: ``output.times``).
        ``query_clocks``: each query's clock moves only with the events of its own streams and
        with heartbeats (``advance_to``), so streams may be pushed by independent producers,
        each in its own time order; by default an event moves every query's clock.
        ``drop_unread``: an event on a stream no registered query reads is dropped and counted
        (``dropped_unread``) instead of raising ``UnreadStreamError`` (decision 44).
        ``lateness``: the LATENESS of queries registered without one (seconds, or a duration
        such as ``"500ms"``): an event that many seconds behind the latest time seen on its
        stream is still evaluated in time order (decision 63). ``idle_timeout``: a stream that
        sends nothing for that long (processing time, read from ``clock``, seconds; default:
        each query's lateness) stops holding its queries' watermarks back; ``tick()`` looks
        at it while no event comes.
        ``late``: what is done with an event late for a query (earlier than its clock, its
        watermark, a flush or a heartbeat; decision 64): ``"drop"`` (the default) feeds it to
        the queries it is on time for, and each query it is late for skips it and counts it
        (``QueryHandle.late``; ``push`` says which, ``Pushed``); ``"error"`` raises
        ``LateEventError`` for it, nothing of it applied (``late_policy`` afterwards).
        ``drop_late`` is the older spelling: True is ``"drop"``, False ``"error"``.
        ``late_output``: a TriG file the late events are written to as they are dropped, with
        their stream, time and the queries they were late for (docs/vocabulary.md), so that
        nothing is lost; closed by ``close()``."""
        self.options = options or EngineOptions()
        self._lateness = _lateness(lateness)
        self._idle_timeout = _idle(idle_timeout)
        self._clock_source = clock
        self._owned_kb: KbStore | None = None  # a store this engine opened, released by close()
        if isinstance(kb, str | os.PathLike):  # the directory of a `spaseq kb load` store
            kb = self._owned_kb = KbStore(kb)
        self.graphs = EventGraphs(kb)
        self.time_format = check_time_format(time_format)
        self.materializer = Materializer(materialize, time_format) if materialize is not None else None
        self.composition = Composition()
        self.handles: list[QueryHandle] = []  # every registered query, in registration order
        self._by_iri: dict[str, QueryHandle] = {}  # the same, by output IRI
        # the same in the order the core releases their results (producers before readers)
        self._released: list[QueryHandle] = []
        self._timed = False  # a registered query has a LATENESS: pushes tell the processing time
        self._late = _late_policy(late, drop_late)
        self._late_output = _late_output(late_output)
        # False: an event of any stream moves every query's clock (streams pushed in one time
        # order); True: a query's clock moves with its own streams' events and heartbeats only,
        # so producers of different streams need not wait for each other (docs/decisions.md 40)
        self._query_clocks = query_clocks
        self._drop_unread = drop_unread
        self.closed = False
        self._seq = 0
        self._native: NativeSession | None = None  # the native runtime's side, on first use
        self._resuming = False  # registering a snapshot's queries again (Engine.restore)
        self._pinned_noted = False  # the KB version pinned for a native run is said once
        self.compactions = 0

    def register(self, query: str | A.Query | Plan, on_match: Callable[[Match], None] | None = None,
                 file: str = "<query>", keep: bool = True, output: str | None = None,
                 on_output: Callable[[Derived], None] | None = None) -> QueryHandle:
        """Add a query (text, parsed, or a plan: ``compile.planner.plan_query``, or read back with
        ``compile.plan_json.plan_from_json``; its own options then apply); matches go to
        ``on_match`` and/or the handle.

        ``output`` is the IRI of the query's output stream (default ``urn:spaseq:query:N``):
        another query naming it in ``FROM STREAM`` consumes this query's results, in the same
        pass; ``on_output`` receives each result as a graph event (``derived.Derived``)."""
        self._check_open()
        plan = query if isinstance(query, Plan) else None  # e.g. read back from `explain --plan`
        q = query.query if isinstance(query, Plan) else parse_query(query, file) if isinstance(query, str) else query
        if plan is None and q.lateness is None and self._lateness:  # the engine's default LATENESS
            q = dataclasses.replace(q, lateness=self._lateness)
        iri = output or f"urn:spaseq:query:{len(self.composition) + 1}"
        self.composition.check(q, iri)
        if self.composition.consumers(iri) and self._seq:
            # its readers would be rebuilt as gated queries, losing what they hold; a new
            # reader of existing output streams is fine at any time: it sees what comes next
            raise UsageError("a query whose output stream registered queries already read must be "
                             "registered before the first event")
        if self.materializer is not None and not self._resuming:
            self.materializer.check_query(iri)
        handle = QueryHandle(q, None, callback=on_match, keep=keep, plan=plan)  # type: ignore[arg-type]
        for reader in self.composition.consumers(iri):  # registered first, planned for points
            self._plan_for_results(self._by_iri[reader])
        self._build(handle)
        native = self._session().engine
        try:  # never input; a query reading it is fed its results by the core (composition.rs)
            native.set_output(handle.runtime.number, iri, query_label(q, iri))
        except ValueError as exc:  # not an IRI: nothing stays registered
            native.unregister(handle.runtime.number)
            raise UsageError(str(exc)) from None
        handle.output = QueryOutput(q, iri)
        if on_output is not None:
            handle.output.listeners.append(on_output)
        if self.materializer is not None:
            self.materializer.add_query(iri, q, resume=self._resuming)
            handle.output.listeners.append(self.materializer)
        self.composition.add(q, iri)
        self.handles.append(handle)
        self._by_iri[iri] = handle
        self._order_releases()
        return handle

    def _order_releases(self) -> None:
        """Drain the queries' matches in the order the core releases them, so that a result
        reaches its callbacks before the results of the queries reading it; and note whether
        any query has a LATENESS (only then does a push read the processing time)."""
        native = self._session()
        by_number = {h.runtime.number: h for h in self.handles}
        self._released = [by_number[n] for n in native.engine.release_order()]
        self._timed = any(h.query.lateness for h in self.handles)

    def _check_open(self) -> None:
        if self.closed:
            raise UsageError("the engine is closed (its input has ended): start a new Engine")

    def _build(self, handle: QueryHandle) -> None:
        """Give the handle a runtime, from its plan (made now, under the engine's options,
        unless it was registered as a plan)."""
        made = handle.plan or plan_query(handle.query, self.options)
        plan = handle.plan = _results_plan(made, bool(self.composition.upstream(handle.query)))
        if self._resuming and plan is not made:  # its state was saved by a runtime of points
            raise SnapshotError(f"the query of {handle.query.file} reads another query's results and "
                                "was planned for point events by an older spaseq: its state cannot go on "
                                "under a plan for events that last; register the queries again")
        handle.runtime = QueryRuntime(plan, self._session(), handle._emit, self.graphs)

    def _plan_for_results(self, handle: QueryHandle) -> None:
        """Plan again, for events that last, a registered query that was planned for points
        and now reads a query's results (registered after it, before the first event)."""
        if handle.plan is None or handle.plan.options.intervals or handle.output is None:
            return
        native = self._session().engine
        native.unregister(handle.runtime.number)
        native.unregister_output(handle.output.iri)
        handle.plan = _results_plan(handle.plan, True)
        handle.runtime = QueryRuntime(handle.plan, self._session(), handle._emit, self.graphs)
        native.set_output(handle.runtime.number, handle.output.iri,
                          query_label(handle.query, handle.output.iri))

    def _session(self, native: NativeEngine | None = None) -> NativeSession:
        """The engine's native side, made on first use (or around ``native``, a restored
        snapshot's, replacing it) and told the engine's settings about time."""
        if native is not None or self._native is None:
            session = NativeSession(native)
            self._configure(session)
            if native is not None:
                return session
            self._native = session
        return self._native

    @property
    def late_policy(self) -> str:
        """What is done with an event late for a query: ``"drop"`` or ``"error"``
        (``Engine(late=...)``). The core applies it: setting it tells the core."""
        return self._late

    @late_policy.setter
    def late_policy(self, value: str) -> None:
        self._late = _late_policy(value, None)
        self._configure()

    @property
    def drop_late(self) -> bool:
        """``late_policy == "drop"``: the older spelling, kept for its callers (setting it
        False is ``late_policy = "error"``)."""
        return self._late == "drop"

    @drop_late.setter
    def drop_late(self, value: bool) -> None:
        self.late_policy = "drop" if value else "error"

    @property
    def late_output(self) -> str | None:
        """The path of the TriG file late events are written to, None without one."""
        return self._late_output.path if self._late_output is not None else None

    @property
    def drop_unread(self) -> bool:
        """An event on a stream no registered query reads is dropped and counted
        (``dropped_unread``) instead of raising ``UnreadStreamError``; the core's, as
        ``late_policy``."""
        return self._drop_unread

    @drop_unread.setter
    def drop_unread(self, value: bool) -> None:
        self._drop_unread = value
        self._configure()

    @property
    def lateness(self) -> Decimal | None:
        """The LATENESS (seconds) of queries registered as text or algebra without one (a plan
        keeps its own); setting it affects the queries registered afterwards."""
        return self._lateness

    @lateness.setter
    def lateness(self, value: float | int | Decimal | str | None) -> None:
        self._lateness = _lateness(value)

    @property
    def idle_timeout(self) -> Decimal | None:
        """How long (processing time, seconds) a stream may send nothing before it stops
        holding LATENESS watermarks back; None: each query's lateness. The core's, as
        ``late_policy``."""
        return self._idle_timeout

    @idle_timeout.setter
    def idle_timeout(self, value: float | int | Decimal | str | None) -> None:
        self._idle_timeout = _idle(value)
        self._configure()

    @property
    def dropped_unread(self) -> int:
        """Events on streams no registered query reads dropped so far (``drop_unread``)."""
        return self._native.engine.dropped_unread() if self._native is not None else 0

    @property
    def query_clocks(self) -> bool:
        """Each query's clock moves only with its own streams' events and heartbeats (see
        ``__init__``); set in the core, as ``late_policy``."""
        return self._query_clocks

    @query_clocks.setter
    def query_clocks(self, value: bool) -> None:
        self._query_clocks = value
        self._configure()

    def _configure(self, session: NativeSession | None = None) -> None:
        """Tell the core (``session``'s, or the engine's once made) the engine's settings."""
        session = session or self._native
        if session is not None:
            idle = None if self._idle_timeout is None else to_nanoseconds(self._idle_timeout)
            session.engine.configure(self._query_clocks, self._late, self.COMPACT_MIN_TERMS,
                                     self._drop_unread, idle, self.MOMENT_CHUNK)

    @property
    def dropped_late(self) -> int:
        """Late events fed to no query so far: late for every query reading their stream
        (under ``late="drop"``). Each query's own count, events it skipped while others took
        them included, is ``QueryHandle.late``."""
        return self._native.engine.dropped_late() if self._native is not None else 0

    @property
    def _clock(self) -> Decimal:
        """The engine clock: the latest time an event or a heartbeat brought."""
        native = self._native
        ns = native.engine.engine_clock() if native is not None else None
        return -INFINITY if ns is None else native.seconds(ns)  # type: ignore[union-attr]

    def push(self, stream: str, time: float | int | Decimal | str | datetime | object = None,
             graph: Iterable[Triple | Quad] | str | bytes | object = None,
             name: NamedNode | BlankNode | str | None = None, format: str = "trig", *,
             start: float | int | Decimal | str | datetime | object = None,
             end: float | int | Decimal | str | datetime | object = None) -> Pushed:
        """Push one event: ``graph`` is an rdflib Graph, pyoxigraph triples/quads, or
        serialized TriG/N-Quads/Turtle text (``format``). ``time`` is in seconds, kept exactly
        (a float as the decimal it prints as, to the nanosecond: ``values.timestamps``), or an
        aware ``datetime`` or a timestamp literal (pyoxigraph or rdflib; an xsd:dateTime or a
        number), as a replay file stamps events: a dateTime makes the event's results give
        their times as xsd:dateTime (docs/decisions.md 43). An event that lasts gives its
        ``start`` too (and its end as ``time`` or ``end``, in the same form: docs/decisions.md
        71). Text that does not parse raises ``EventSyntaxError`` with its line and column; an
        event on a stream no registered query reads raises ``UnreadStreamError`` (see
        ``drop_unread``). Returns what was done with it (``Pushed``: whether a query took it,
        the queries it was late for, see ``late_policy``)."""
        if end is not None:
            if time is not None:
                raise UsageError("give an event's end as time or as end, not both")
            time = end
        if time is None or graph is None:
            raise UsageError("push(stream, time, graph): an event needs its time (or end) and its graph")
        if isinstance(name, str):
            name = NamedNode(name)
        triples = event_triples(graph, format)
        seconds, dated = event_time(time)
        begin = seconds
        if start is not None:
            begin, start_dated = event_time(start)
            problem = interval_problem(begin, start_dated, seconds, dated, (start, time))
            if problem is not None:
                raise UsageError(f"bad time: the event {problem}")
        return self.push_event(Event(stream, seconds, triples, self._seq, name, dated=dated, start=begin))

    def push_event(self, event: Event) -> Pushed:
        """Push an already-built Event (in time order per query, or within its LATENESS; a
        later one is late: see ``late_policy``); what was done with it (``Pushed``)."""
        self._check_open()
        self._seq += 1
        native = self._session()
        if self._timed:  # stream idleness (decision 63); no clock read per event otherwise
            native.engine.set_now(self._now())
        try:  # the core judges lateness and announces a new instant (the KB may switch, decision 22)
            fed, new_instant, late_for = native.push(
                EventContext(event), list(map(_RUNTIME, self._released)),
                self._on_instant if self.graphs.kb is not None else None, self._late_output)
        except LateEvent as exc:
            raise LateEventError(str(exc)) from None
        except UnreadStream as exc:  # no registered query reads its stream (decision 44)
            raise UnreadStreamError(str(exc)) from None
        except (OutputStream, LastingEvent) as exc:  # a query's output stream; a query of points
            raise UsageError(str(exc)) from None
        pushed = Pushed(fed, self._handles_of(late_for)) if late_for else (_FED if fed else _NOT_FED)
        if not fed:  # late for every reader, or unread: dropped
            return pushed
        if self.query_clocks:  # what every query has processed can go
            self._release_graphs(min(h.runtime.clock for h in self.handles))
        elif new_instant:  # deferred work on earlier timestamps ran: their graphs can go
            self._release_graphs(event.time)
        if self._seq % 1024 == 0:
            self._maybe_compact()
        return pushed

    def _handles_of(self, numbers: list[int]) -> tuple[QueryHandle, ...]:
        """The handles of the queries of these native numbers, in registration order."""
        wanted = set(numbers)
        return tuple(h for h in self.handles if h.runtime.number in wanted)

    def _now(self) -> int:
        """The processing time, in ns (stream idleness, decision 63)."""
        return int(self._clock_source() * 1_000_000_000)

    def _live_wait(self) -> float:
        """How long ``run_live`` waits for an event before it looks again: a second, or half
        the shortest idle timeout, so that a silent stream is noticed soon after it goes idle."""
        idle = [self._idle_timeout] if self._idle_timeout is not None else \
            [h.query.lateness for h in self.handles if h.query.lateness]
        return min([self.LIVE_WAIT_SECONDS, *(float(t) / 2 for t in idle if t)])

    def tick(self) -> None:
        """No event came for a while: let the streams silent for the idle timeout stop holding
        back the watermarks of queries with a LATENESS, releasing what their buffers hold up
        to the others' (``run_live`` calls it while it waits; call it from a producer loop)."""
        self._check_open()
        native = self._session()
        native.engine.set_now(self._now())
        native.idle_tick(list(map(_RUNTIME, self._released)))

    def _release_graphs(self, before: Decimal) -> None:
        """The Python matchers' event graphs earlier than ``before`` are done with, unless a
        query reading other queries' output has not been run that far (the core holds its
        events back)."""
        native = self._native
        floor = native.engine.gates_floor() if native is not None else None
        if floor is not None:  # what a held query has yet to evaluate keeps its graph
            before = min(before, native.seconds(floor))  # type: ignore[union-attr]
        self.graphs.release(before)

    def _on_instant(self, time_ns: int) -> None:
        """A new instant starts (the core completed the deferred ones): follow a new KB
        version now, so that every event of the instant is joined with one version."""
        self._poll_kb()

    def _poll_kb(self, force: bool = False) -> None:
        """Follow a new KB store version, at an instant's start only (``instants.poll_kb``)."""
        instants.poll_kb(self, force)

    def _poll_kb_between_batches(self) -> None:
        """The same between a native run's batches (``instants.poll_kb_between_batches``)."""
        instants.poll_kb_between_batches(self)

    def late(self, stream: str, time: float | int | Decimal | str | datetime | object,
             start: float | int | Decimal | str | datetime | object = None) -> str | None:
        """Why an event at ``time`` on ``stream`` pushed now would be late for some query (the
        message ``push`` would raise ``LateEventError`` with under ``late="error"``), or None:
        lets a caller refuse a whole batch before pushing any of it. UsageError for a query's
        output stream, and for an event lasting from ``start`` that a query reading the stream
        was planned to take as a point only (``push`` would refuse it)."""
        seconds, dated = event_time(time)
        begin = None if start is None else to_nanoseconds(event_time(start)[0])
        native = self._native
        try:
            return None if native is None else native.engine.late(stream, to_nanoseconds(seconds), dated, begin)
        except (OutputStream, LastingEvent) as exc:  # a query's output stream; a query of points
            raise UsageError(str(exc)) from None

    def query(self, output: str) -> QueryHandle | None:
        """The registered query whose output stream is ``output`` (e.g. after ``restore``)."""
        return self._by_iri.get(output)

    def unregister(self, handle: QueryHandle) -> None:
        """Stop evaluating a registered query: it takes no more events, its partial matches
        are dropped (a snapshot or compaction leaves it out) and its output IRI is free again.
        A query composed with others (reading or read by another query's output) stays:
        UsageError."""
        iri = handle.output.iri if handle.output is not None else None
        if iri is None or self._by_iri.get(iri) is not handle:
            raise UsageError("this query is not registered in this engine")
        if self.composition.upstream(handle.query) or self.composition.consumers(iri):
            raise UsageError(f"<{iri}> is composed with other queries (it reads or is read by "
                             "another query's output): unregister them together is not supported")
        self.handles.remove(handle)
        if self._native is not None:  # it reads no stream and makes no event late any more
            self._native.engine.unregister(handle.runtime.number)
            self._native.engine.unregister_output(iri)
        del self._by_iri[iri]
        del self.composition.nodes[iri]
        self._order_releases()
        handle.callback = None
        handle.keep = False
        if handle.output is not None:
            handle.output.listeners.clear()

    #: The fewest terms at which the core asks for the dictionary to be compacted (``_compact``;
    #: it asks when the dictionary also holds twice as many as after the last compaction, so
    #: that on an endless stream of fresh terms memory follows what the windows hold). None:
    #: the core's default (2^18). Read when the engine's native side is made.
    COMPACT_MIN_TERMS: int | None = None

    #: Once one event has completed this many matches, the rest of its moment is streamed:
    #: made and released about this many at a time as they are taken, so that memory follows
    #: the runs, not the moment's matches (decision 49). None: the core's default (4096).
    #: Read when the engine's native side is made.
    MOMENT_CHUNK: int | None = None

    def _maybe_compact(self) -> None:
        native = self._native
        if native is not None and native.engine.compaction_due():
            self._compact()

    def _compact(self) -> None:
        """Rebuild the native side from a snapshot of itself: the same runs, windows and
        clocks over a dictionary of only the terms they refer to (decision 38). Handles,
        callbacks and native writers carry over; matches released before keep the old
        dictionary alive for as long as they are referenced."""
        snapshots.compact(self)

    def advance_to(self, time: float | int | Decimal | str | datetime | object) -> None:
        """A heartbeat: no event earlier than ``time`` (given as ``push`` takes it) will come;
        windows may close. An event earlier than it pushed later is late for every query
        (dropped and counted, or ``LateEventError`` under ``late="error"``): its matches may
        already be released."""
        self._check_open()
        time = event_time(time)[0]
        native = self._session()
        native.engine.set_now(self._now())  # idleness judged as of this heartbeat
        new_instant = native.heartbeat(time, list(map(_RUNTIME, self._released)))
        self._release_graphs(time)
        if new_instant:  # after the instants before `time` completed on their version
            self._poll_kb(force=True)

    def flush(self) -> None:
        """No more events will come at the current timestamp: run deferred work (lazy
        conjunction) now rather than when the clock moves on. An event at or before that
        timestamp pushed later is late, as after a heartbeat (its partners are gone), except
        for a query with a LATENESS: a flush moves no watermark (decision 63)."""
        self._check_open()
        # the core keeps each query's flushed instant: an event at or before it is late
        self._session().flush(list(map(_RUNTIME, self._released)))
        if self.materializer is not None:
            self.materializer.flush()

    def close(self) -> None:
        """End of input: close every window (trailing negations complete, their matches are
        released to callbacks and handles), then let go of what the engine holds: the
        materialisation store (flushed) and a KB store it opened itself from a directory.
        The handles keep their matches (``rows()`` still works); any later input (``push``,
        ``advance_to``, ``flush``), ``register`` or ``snapshot`` is a UsageError. A second
        call does nothing."""
        if self.closed:
            return
        self._session().close(list(map(_RUNTIME, self._released)))
        self.graphs.release(INFINITY)
        self._release()

    def _release(self) -> None:
        """Let go of the stores and the late-event output the engine holds; it takes no more
        input."""
        self.closed = True
        if self._late_output is not None:
            self._late_output.close()
        if self.materializer is not None:
            self.materializer.close()
        if self._owned_kb is not None:
            self._owned_kb.close()

    def _end(self, error: SpaseqError | None, end_of_input: bool = True) -> None:
        """Close the run when the input ended normally; otherwise write what was found and
        leave the windows open (what would have followed is unknown). Either way the engine
        takes no more input."""
        if end_of_input and error is None:
            self.close()
        else:
            self.flush()
            self._release()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        """Leaving ``with Engine() as engine:`` ends the input: ``close()`` when the block
        ended normally; when it raised, the input was cut short, so (as ``run`` with an input
        error) the matches already found are released and the stores let go, but windows
        stay open (what would have followed is unknown). The exception propagates."""
        if not self.closed:
            self._end(None, end_of_input=exc_type is None)

    def snapshot(self, state_only: bool = False) -> bytes:
        """The engine's whole state, to continue elsewhere with ``Engine.restore``: every
        registered query (as its plan, in registration order), every partial match, window,
        clock and buffered event, composition's buffers and the output numbering, in a
        versioned binary format. Matches already released are not in it: they belong to the
        callbacks and handles that received them (``rows()`` before snapshotting). Take it
        between pushes; it changes nothing.

        ``state_only``: the state without the plans, only a hash of each (a few hundred bytes
        less per query, and cheap to take): it continues in an engine that has the same
        queries registered, by ``restore_state`` (e.g. one engine switching between the
        states of many keys, as the Spark streaming execution keeps them)."""
        self._check_open()
        return snapshots.take(self, state_only)

    @classmethod
    def restore(cls, data: bytes, kb: Store | KbStore | str | os.PathLike | None = None,
                materialize: Store | str | None = None, clock: Callable[[], float] = monotonic,
                late_output: str | os.PathLike | None = None) -> Engine:
        """An engine continuing from ``snapshot()``'s bytes: the same queries (``handles``,
        registration order, output IRIs), partial matches, windows and clocks, so pushing the
        rest of the input gives exactly the matches the original engine would have given.
        ``kb`` and ``materialize`` are given again (a store is not part of a snapshot;
        materialisation continues the numbering in the same store), and so is ``clock``
        (``Engine``'s: processing time; every stream counts as having spoken at the restore)
        and ``late_output`` (a file of its own; each query's late count is in the snapshot).
        Callbacks are not part
        of a snapshot either: set ``handle.callback`` on the restored handles. Raises
        ``SnapshotError`` for bytes that are not a snapshot this spaseq reads, and for a
        state-only snapshot (it holds no plans: ``restore_state``)."""
        return snapshots.restore(cls, data, kb, materialize, clock, late_output)

    def restore_state(self, data: bytes) -> None:
        """Continue from ``snapshot()``'s bytes (state-only or whole) in this engine, which
        must have the snapshot's queries registered (the same plans, output IRIs and order)
        and its settings (``late_policy``, ``query_clocks``, ``drop_unread``): its own state
        (partial matches, windows, clocks, buffers, numbering) is replaced by the
        snapshot's; handles and their callbacks stay. Matches released before keep reading
        their terms. ``SnapshotError`` when the bytes or the queries differ; the engine is
        then unchanged."""
        self._check_open()
        snapshots.restore_state(self, data)

    def run(self, events: Iterable[Event | SpaseqError], end_of_input: bool = True) -> SpaseqError | None:
        """Push ``events`` in the order given and end the input; the first input error, if any.

        An error among the events is an input that broke while being read: it is not raised
        here (events of other inputs may follow, and are pushed) but returned, for the caller
        to raise once the results are written. The run ends with ``close()`` when the input
        ended normally (``end_of_input`` and no error): every window closes. Otherwise the
        input was cut short: ``flush()`` writes the matches already found and the materializer
        is closed, but windows stay open, since what would have followed is unknown. An error
        of ``push_event`` itself (a late event) propagates at once."""
        return drivers.run(self, events, end_of_input)

    def run_replay(self, files: list[tuple[str, str]], time_predicate: str | None = None,
                   batch: int = 4096, format: str | None = None,
                   progress: Callable[[int, Decimal], None] | None = None,
                   reading: ReplayReading | None = None) -> SpaseqError | None:
        """Run replay files (``(stream IRI, path)``, one per stream) to their end, read and
        merged by time natively in bounded memory (``_native.ReplayStream``, decision 36) and
        fed to the native runtime without a Python object per event; as ``run`` otherwise
        (the input's error returned after the matches before it, notes logged), to every
        registered query, composed ones included (the core feeds a query reading another's
        output its results). A file on a query's output stream is a UsageError. ``format``
        (``trig`` or ``nquads``) is every file's format whatever its name says.
        ``progress(events, clock)`` is called after each batch of events fed, batches then
        sized to take about ``PROGRESS_BATCH_SECONDS`` each (never a call per event).
        ``reading``: the files' first pass, started earlier (``_native.ReplayReading`` of the
        same paths and options; the command line starts it before it loads the engine). A
        speculative one (``speculate=True``) feeds the file's events as its first pass judges
        them; if it then finds the file is not read as it is written, ``SpeculationFailed``
        is raised after the events fed (decision 47)."""
        return drivers.run_replay(self, files, time_predicate, batch, format, progress, reading)

    #: With a ``progress`` callback, ``run_replay``'s batches are sized to take about this
    #: long (at most ``batch`` events), so progress is seen even on slow queries.
    PROGRESS_BATCH_SECONDS = 0.1

    def run_rows(self, rows: EventRows, batch: int = 4096) -> None:
        """Run events given as columns (``_native.EventRows``: stream IRIs, seqs, times in ns,
        dated, graph names and triples in N-Triples, in the order to feed them) to their end,
        fed natively without a Python object per event, as ``run_replay`` feeds its files;
        what Spark's parts run (``spaseq.spark``). Every event must be on a stream a
        registered query reads."""
        drivers.run_rows(self, rows, batch)

    def run_live(self, sources: list[tuple[str, str, str]], time_predicate: str | None = None,
                 batch: int = 1024, progress: Callable[[int, Decimal], None] | None = None,
                 inlets: drivers.Inlets | None = None) -> SpaseqError | None:
        """Run live sources (``(stream IRI, path or '-' for stdin, 'trig', 'nquads' or
        'auto')``, ``auto``: TriG when the first line can only be TriG's, decision 76) to
        their end: each read natively on a thread of its own (``_native.LiveStream``), events
        merged in the order they complete (decision 46) and fed to the native runtime the
        moment they arrive, without a Python object per event; the matches an event completes
        are released (written, and flushed by the native writers) before the next wait. A
        late event (earlier than what a query reading it has processed on its streams, than
        its watermark or a heartbeat, or at a flushed time) is skipped by the queries it is
        late for and counted (``QueryHandle.late``) and written to the late-event output, or
        under ``late="error"`` raises ``LateEventError`` located at its source's line. As
        ``run_replay``
        otherwise (the first source error returned after every source ended).
        ``progress(events, clock)`` is called after each batch of events that had arrived.
        ``inlets`` are sources fed whole messages from Python (``drivers.Inlets``: MQTT's),
        merged with the others; the input ends once every source has ended, an inlet when it
        is closed."""
        return drivers.run_live(self, sources, time_predicate, batch, progress, inlets)

    #: ``run_live`` waits this long at most for an event before it looks at the KB store's
    #: version and reports progress again.
    LIVE_WAIT_SECONDS = 1.0


def _lateness(value: float | int | Decimal | str | None, what: str = "lateness") -> Decimal | None:
    """``Engine(lateness=...)`` (or ``idle_timeout``) in exact seconds: a number of seconds or
    a duration text."""
    if value is None:
        return None
    try:
        seconds = parse_duration(value, what) if isinstance(value, str) else exact_seconds(value)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if seconds < 0:
        raise UsageError(f"{what} {value}: a negative duration; give 0 or more")
    return seconds


def _results_plan(plan: Plan, reads_results: bool) -> Plan:
    """``plan``, or, for a query reading other queries' results (events that last: a result
    spans its events), the same query planned with ``intervals`` on (docs/decisions.md 71)."""
    if not reads_results or plan.options.intervals:
        return plan
    return plan_query(plan.query, dataclasses.replace(plan.options, intervals=True))


def _late_policy(late: str | None, drop_late: bool | None) -> str:
    """``Engine(late=..., drop_late=...)`` as one policy: ``late`` (default ``"drop"``), or
    ``drop_late``'s older spelling of it; UsageError for another value or the two disagreeing."""
    older = None if drop_late is None else ("drop" if drop_late else "error")
    if late is not None and late not in LATE_POLICIES:
        raise UsageError(f"late {late!r}: expected one of {', '.join(map(repr, LATE_POLICIES))}")
    if late is not None and older is not None and late != older:
        raise UsageError(f"late={late!r} and drop_late={drop_late} disagree: give late only")
    return late or older or "drop"


def _late_output(path: str | os.PathLike | None) -> LateOutput | None:
    """The late-event output at ``path`` (created, or emptied), None without a path;
    UsageError when it cannot be written."""
    if path is None:
        return None
    try:
        return LateOutput(os.fspath(path))
    except OSError as exc:
        raise UsageError(f"late output {os.fspath(path)}: {exc.strerror or exc}") from None


def _idle(value: float | int | Decimal | str | None) -> Decimal | None:
    """``Engine(idle_timeout=...)`` in exact seconds: more than 0 (at 0 every stream would be
    idle at once, and the lateness would hold nothing back)."""
    seconds = _lateness(value, "idle_timeout")
    if seconds is not None and seconds <= 0:
        raise UsageError(f"idle_timeout {value}: give a duration above 0")
    return seconds


def evaluate(query: A.Query, events: Iterable[Event], kb: Store | KbStore | None = None,
             options: EngineOptions | None = None, end_of_input: bool = True) -> list[Match]:
    """All matches of ``query`` over ``events`` (sorted by time, ties by arrival), through the
    incremental engine: the counterpart of ``reference.evaluate``."""
    engine = Engine(kb, options, drop_unread=True)  # other streams' events are not its input
    handle = engine.register(query)
    ordered = sorted(events, key=Event.sort_key)
    engine.run(ordered, end_of_input)
    return list(handle.matches())
