"""The engine's runtime, native (engine/native/automaton, the NFA_scep of
SEMANTICS.md sections 4-8): ``NativeSession`` holds one engine's ``_native.NativeEngine``
(term dictionary, streams, one runtime per query) and the Python objects its ids stand for;
``QueryRuntime`` is one registered query on it: its plan, its Python matchers and the matches
it released.

Terms cross once: each pyoxigraph term is interned on first sight and kept by id, so matches
come back as ids and are rebuilt from the same objects. Events are prepared once for every
query and forgotten when nothing native holds them. GPMs outside the native evaluator's
subset are evaluated by the Python matchers, which the native runtime calls back with ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from decimal import Decimal
from typing import TypeVar

import pyoxigraph
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from spaseq.engine.compile.plan import Plan
from spaseq.engine.compile.plan_json import plan_to_json
from spaseq.engine.events import Event
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.gpm_eval.matcher import EventContext, EventGraphs, GpmMatcher
from spaseq.engine.matches import Match, Taken, Term
from spaseq.engine.native_core import _native
from spaseq.engine.values.timestamps import INFINITY, from_nanoseconds
from spaseq.engine.values.timestamps import to_nanoseconds as nanoseconds

_T = TypeVar("_T")

NativeEngine = _native.NativeEngine
NativeEvent = _native.NativeEvent
LateOutput = _native.LateOutput  # the late-event output, a TriG file the core writes (decision 64)
LateEvent = _native.LateEvent  # an event that breaks a promise about time (the core's message)
UnreadStream = _native.UnreadStream  # an event on a stream no registered query reads
OutputStream = _native.OutputStream  # an event pushed on a query's output stream
LastingEvent = _native.LastingEvent  # an event that lasts, for a query planned for point events


def _term(kind: str, value: str, datatype: str | None, language: str | None) -> Term:
    """A pyoxigraph term from the parts the native dictionary gives (a triple term, which
    an event's object may be, from its N-Triples: pyoxigraph reads it)."""
    if kind == "iri":
        return NamedNode(value)
    if kind == "bnode":
        return BlankNode(value)
    if kind == "triple":
        quad = next(iter(pyoxigraph.parse(f"<urn:s> <urn:p> {value} .", format=pyoxigraph.RdfFormat.N_TRIPLES)))
        return quad.object  # a triple term (matches.Term leaves them out, pyoxigraph types it)
    if language is not None:
        return Literal(value, language=language)
    return Literal(value, datatype=NamedNode(datatype)) if datatype else Literal(value)


class _Released(Match):
    """A released match read from its native one (``_native``) only when a field is touched,
    each field once: a counter or a callback reading ``time`` converts nothing else. It holds
    the session it is read with (``_session``): a session a compaction replaced lives as long
    as its matches, and no longer (decision 50)."""

    def __init__(self, native: object, session: NativeSession) -> None:
        d = self.__dict__
        d["_native"] = native
        d["_session"] = session

    def __getattr__(self, name: str) -> object:
        d = self.__dict__
        native, session = d.get("_native"), d.get("_session")
        if native is None or session is None:
            return Match.__getattr__(self, name)
        if name in ("start", "time"):
            start, time = native.span
            d["start"], d["time"] = session.seconds(start), session.seconds(time)
        elif name == "number":
            d["number"] = native.number
        elif name == "bindings":
            term = session.term
            d["bindings"] = tuple(sorted(((v, term(i)) for v, i in native.bindings()), key=_name))
        elif name == "taken":
            d["taken"] = session.taken(native.taken())
        else:
            return Match.__getattr__(self, name)
        return d[name]


_Released.__name__ = _Released.__qualname__ = "Match"  # as users see it (repr): a Match

#: A released match as plain values (``released_values``).
ReleasedValues = tuple[int, int, list[tuple[str, str]],
                       list[tuple[str, str, int, bool, int, str | None, list[tuple[str, str]]]]]


def released_values(m: Match) -> ReleasedValues | None:
    """A match the native runtime released as plain values, read from its native match
    without building a term or an event (what Spark's parts keep): (start ns, time ns, its
    bindings sorted by variable, the events it took, first to last: (GPM, stream IRI, time
    ns, dated, seq, graph name, that GPM's bindings)), terms in N-Triples. None for a match
    not released natively."""
    d = m.__dict__
    native, session = d.get("_native"), d.get("_session")
    if native is None or session is None:
        return None
    text, engine = session.text, session.engine
    start, time = native.span
    taken = []
    for atom, uid, pairs in native.taken():
        parts = engine.event_parts(uid)
        if parts is None:
            raise KeyError(f"event {uid} is no longer held")
        stream, ns, dated, seq, graph = parts[:5]
        taken.append((atom, stream, ns, dated, seq, None if graph is None else str(_term(*graph)),
                      [(v, text(i)) for v, i in pairs]))
    return start, time, sorted((v, text(i)) for v, i in native.bindings()), taken


def _name(binding: tuple[str, Term]) -> str:
    return binding[0]


class NativeSession:
    """One engine's native side: the ``NativeEngine`` and the terms and events behind ids."""

    def __init__(self, engine: NativeEngine | None = None) -> None:
        self.engine = engine if engine is not None else NativeEngine()
        self._ids: dict[Term, int] = {}
        self.terms: dict[int, Term] = {}
        self._texts: dict[int, str] = {}  # id -> N-Triples, for plain values (released_values)
        self.contexts: dict[int, EventContext] = {}  # uid -> the event's context
        self.times: dict[int, Decimal] = {}      # ns -> the Decimal events carry
        self._time_uses: dict[int, int] = {}     # ns -> live events at that time
        self._current: tuple[EventContext, NativeEvent] | None = None
        self._kb_version = 0
        self._seconds: dict[int, Decimal] = {}  # ns -> seconds, for times no live event holds
        # a restored snapshot's event times as those events spelled them, kept while the
        # restored events are held (their contexts are built only when a callback needs one)
        self._restored: dict[str, str] = {}  # str(ns) -> the time as spelled
        self._restored_uids: set[int] = set()

    def term_id(self, term: Term | Triple) -> int:
        """The id of an event's term (interned on first sight); an object may be an RDF 1.2
        triple term, interned as its N-Triples ``<<( s p o )>>``."""
        i = self._ids.get(term)  # type: ignore[arg-type]  # a Triple is hashable too
        if i is None:
            text = f"<<( {term} )>>" if isinstance(term, Triple) else str(term)
            i = self._ids[term] = self.engine.intern(text)  # type: ignore[index]
            self.terms[i] = term  # type: ignore[assignment]
        return i

    def text(self, i: int) -> str:
        """The N-Triples spelling of the term behind an id (asked of the engine once)."""
        t = self._texts.get(i)
        if t is None:
            t = self._texts[i] = self.engine.term(i)
        return t

    def term(self, i: int) -> Term:
        """The term behind an id (interned here, or natively: read from its N-Triples)."""
        t = self.terms.get(i)
        if t is None:
            t = self.terms[i] = _term(*self.engine.term_parts(i))
            self._ids[t] = i
        return t

    def event(self, ctx: EventContext, ns: int | None = None) -> NativeEvent:
        """The event prepared for the native runtimes (once per event for every query);
        ``ns``: its time in nanoseconds, when the caller has it already."""
        current = self._current
        if current is not None and current[0] is ctx:
            return current[1]
        e = ctx.event
        term_id = self.term_id
        ids = [term_id(x) for t in e.triples for x in (t.subject, t.predicate, t.object)]
        if ns is None:
            ns = nanoseconds(e.time)
        # the name travels as text: names are usually unique, so neither side keeps it by id
        graph = str(e.name) if e.name is not None else None
        start = None if e.start == e.time else nanoseconds(e.start)
        prepared = self.engine.event(e.stream, ns, e.seq, graph, ids, e.dated, start)
        self._current = (ctx, prepared)
        self._remember(prepared.uid, ctx, ns)
        return prepared

    def context(self, uid: int) -> EventContext:
        """The context of an event the engine holds; built from the native event when it was
        fed natively (``Engine.run_replay``), on first use."""
        ctx = self.contexts.get(uid)
        if ctx is None:
            parts = self.engine.event_parts(uid)
            if parts is None:
                raise KeyError(f"event {uid} is no longer held")
            stream, ns, dated, seq, graph, ids, start_ns = parts
            term = self.term
            # as the engine holds them: a subject is an IRI or a blank node, a predicate an IRI,
            # a graph name an IRI or a blank node (the readers and Engine.push make them so)
            triples = tuple(Triple(term(ids[i]), term(ids[i + 1]), term(ids[i + 2]))  # type: ignore[arg-type]
                            for i in range(0, len(ids), 3))
            name = _term(*graph) if graph is not None else None
            start = None if start_ns == ns else self.seconds(start_ns)
            ctx = EventContext(Event(stream, self.seconds(ns), triples, seq, name, dated=dated,  # type: ignore[arg-type]
                                     start=start))
            self._remember(uid, ctx, ns)
        return ctx

    def _remember(self, uid: int, ctx: EventContext, ns: int) -> None:
        """Keep an event's context while the engine holds it, and its time as the event
        spells it (matches carry that Decimal: "3.0" stays "3.0"); ``forget`` undoes both."""
        self.contexts[uid] = ctx
        if ns not in self.times:  # the first spelling wins, a restored event's included
            spelled = self._restored_time(ns)
            self.times[ns] = ctx.event.time if spelled is None else spelled
        self._time_uses[ns] = self._time_uses.get(ns, 0) + 1

    def taken(self, taken: list) -> tuple[Taken, ...]:
        term, context = self.term, self.context
        return tuple(Taken(g, context(uid).event, tuple((v, term(i)) for v, i in bs)) for g, uid, bs in taken)

    def match(self, native: object) -> Match:
        """A released match whose fields are read from the native one when first touched:
        counting matches costs no conversion."""
        return _Released(native, self)

    def seconds(self, ns: int) -> Decimal:
        """Nanoseconds as the Decimal seconds events at that time carry (exact either way)."""
        t = self.times.get(ns)
        if t is None:
            t = self._seconds.get(ns)
            if t is None:
                if len(self._seconds) > 65536:  # a cache of recent conversions, bounded
                    self._seconds.clear()
                spelled = self._restored_time(ns)
                t = self._seconds[ns] = from_nanoseconds(ns) if spelled is None else spelled
        return t

    def _restored_time(self, ns: int) -> Decimal | None:
        """A restored event's time at ``ns`` as it was spelled (None when none is)."""
        spelled = self._restored.get(str(ns)) if self._restored else None
        return None if spelled is None else Decimal(spelled)

    def follow_kb(self, version: int) -> None:
        """The KB is at ``version``: a new one drops every natively cached KB row."""
        if version != self._kb_version:
            self._kb_version = version
            self.engine.kb_changed()

    def push(self, ctx: EventContext, runtimes: list[QueryRuntime],
             on_instant: Callable[[int], None] | None,
             late_output: LateOutput | None = None) -> tuple[bool, bool, list[int]]:
        """An event through the engine's one fan-out (as a native stream's events are fed):
        the core judges it per query (``LateEvent`` raised under the "error" policy; under
        "drop" the queries it is late for skip it, and it is written to ``late_output``),
        calls ``on_instant`` at a new instant, feeds it to the queries (those reading other
        queries' output as far as that allows); then ``runtimes`` (every registered query's)
        release their matches, in order. Returns (whether some query took it, whether it
        started a new instant, the native numbers of the queries it was late for)."""
        engine, e = self.engine, ctx.event
        ns = nanoseconds(e.time)
        # judged before it is prepared, so that an event dropped whole adds no term to the
        # dictionary (the core judges it again as it is pushed); one to be written is prepared
        dropped = engine.judge(e.stream, ns, e.dated, late_output is not None)
        if dropped is not None:
            return False, False, dropped
        try:
            pushed = engine.push(self.event(ctx, ns), on_instant, late_output)
        finally:  # what completed before a callback or the instant hook raised goes out too
            for r in runtimes:
                r.drain()
                r.stats["runs"] = engine.runs_created(r.number)
        if e.seq % 64 == 0:
            self.forget()
        return pushed

    def heartbeat(self, time: Decimal, runtimes: list[QueryRuntime]) -> bool:
        """No event earlier than ``time`` will come: every query moves its clock to it, and
        ``runtimes`` release what that completes. Whether it started a new instant."""
        return _released_after(lambda: self.engine.heartbeat(nanoseconds(time)), runtimes)

    def idle_tick(self, runtimes: list[QueryRuntime]) -> None:
        """Processing time passed with no event: queries with a LATENESS run as far as their
        watermarks now allow; ``runtimes`` release what that completes."""
        _released_after(self.engine.idle_tick, runtimes)

    def flush(self, runtimes: list[QueryRuntime]) -> None:
        """No more events at the current timestamp: every query runs its deferred work (the
        core keeps each one's flushed instant), and ``runtimes`` release what it completed."""
        _released_after(self.engine.flush, runtimes)

    def close(self, runtimes: list[QueryRuntime]) -> None:
        """End of input: every query's windows close; ``runtimes`` release their matches."""
        try:
            _released_after(self.engine.close, runtimes)
        finally:
            self.forget()

    def snapshot(self, numbers: list[int]) -> tuple[bytes, dict[str, str]]:
        """The native state of the runtimes ``numbers`` (their released matches taken), and
        the times of the events it holds as those events spelled them."""
        return self.engine.snapshot(numbers), {**self._restored, **{str(ns): str(t) for ns, t in self.times.items()}}

    def resume(self, numbers: list[int], times: dict[str, str]) -> None:
        """Continue a restored snapshot (``NativeEngine.from_snapshot``) on the runtimes
        ``numbers``, registered again in the snapshot's order; ``times`` as ``snapshot``
        gave them: the held events' times keep their spelling. Their Python contexts are
        built only if a callback asks (restoring costs no Python work per event)."""
        self.engine.resume(numbers)
        held = self.engine.held()
        if held and times:
            self._restored = times  # read when a time is first asked for (seconds)
            self._restored_uids = set(held)

    def retire(self) -> None:
        """This session is replaced (a compaction): the native engine lets go of its queries'
        callbacks (bound methods of runtimes holding this session, a cycle the garbage
        collector would otherwise have to find); matches it released still read their terms
        from it."""
        self.engine.release()
        self._current = None

    def forget(self) -> None:
        """Drop the events nothing native holds any more."""
        for uid in self.engine.forget():
            ctx = self.contexts.pop(uid, None)
            if self._restored_uids:
                self._restored_uids.discard(uid)
                if not self._restored_uids:  # no restored event is held: their times go
                    self._restored = {}
                    self._seconds.clear()
            if ctx is None:  # fed natively, never seen from Python
                continue
            ns = nanoseconds(ctx.event.time)
            left = self._time_uses[ns] - 1
            if left:
                self._time_uses[ns] = left
            else:
                del self._time_uses[ns]
                del self.times[ns]


def _released_after(step: Callable[[], _T], runtimes: list[QueryRuntime]) -> _T:
    """``step`` (an engine-wide call of the core), then ``runtimes`` release what it
    completed: also when a callback raised in it, so that what came before goes out."""
    try:
        return step()
    finally:
        for r in runtimes:
            r.drain()


class QueryRuntime:
    """One query on the native runtime: events in, matches to ``emit``, the clock and the
    state it holds. GPMs the native evaluator does not cover are evaluated by the engine's
    Python matchers, called back."""

    def __init__(self, plan: Plan, session: NativeSession, emit: Callable[[Match], None],
                 graphs: EventGraphs, prior: QueryRuntime | None = None) -> None:
        """``prior``: the same plan's runtime on another session (a compaction, a restored
        state) whose plan JSON and Python matchers are reused rather than made again."""
        self.plan = plan
        self.session = session
        self.emit = emit
        self._native = session.engine
        self.graphs = graphs
        same = prior if prior is not None and prior.plan is plan and prior.graphs is graphs else None
        self.plan_json: str = same.plan_json if same is not None else plan_to_json(plan)
        # what a state-only snapshot names the query by (hashed once: the plan never changes)
        self.plan_hash: str = (same.plan_hash if same is not None
                               else hashlib.sha256(self.plan_json.encode()).hexdigest())
        # GPMs with GRAPH blocks: joined natively, their KB rows asked of these matchers
        self._kb_matchers: dict[str, GpmMatcher] = same._kb_matchers if same is not None else {
            name: GpmMatcher(gpm, plan.query, graphs, plan.options)
            for name, gpm in plan.gpms.items() if gpm.graph_elements}
        self.number = self._native.register(self.plan_json, self._evaluate, self._kb_rows)
        known: dict[str, GpmMatcher] = same.matchers if same is not None else {}
        self.matchers: dict[str, GpmMatcher] = {
            name: known.get(name) or self._kb_matchers.get(name) or
            GpmMatcher(plan.gpms[name], plan.query, graphs, plan.options)
            for name in self._native.python_gpms(self.number)}
        self.stats = {"runs": 0, "matches": 0}
        # a native writer (``_native.NativeWriter``): when set, released matches are written
        # natively instead of emitted (no Python object per match)
        self.sink = None

    def _kb_rows(self, name: str, element: int, bound: list) -> list[list[tuple[str, int]]]:
        """A GRAPH block's KB rows for the bound values (ids), called back natively once per
        KB version and binding."""
        session = self.session
        rows = self._kb_matchers[name].kb_rows(element, {v: session.term(i) for v, i in bound})
        term_id = session.term_id
        return [[(v, term_id(t)) for v, t in row.items()] for row in rows]

    def _evaluate(self, name: str, uid: int, mu: list, base: bool, start: int | None,
                  taken: list) -> list[list[tuple[str, int]]]:
        """A GPM evaluated in Python, called back by the native runtime with ids."""
        session = self.session
        ctx = session.context(uid)
        m = self.matchers[name]
        if base:
            sols = m.base(ctx)
        else:
            mapping = {v: session.term(i) for v, i in mu}
            if m.run_aware:
                run = RunContext.of(ctx.event, None if start is None else session.seconds(start),
                                    session.taken(taken), self.plan.kleene_gpms)
                sols = m.results(ctx, mapping, run)
            else:
                sols = m.results(ctx, mapping)
        term_id = session.term_id
        return [[(v, term_id(t)) for v, t in sol.items()] for sol in sols]

    @property
    def clock(self) -> Decimal:
        ns = self._native.clock(self.number)
        return -INFINITY if ns is None else self.session.seconds(ns)

    def drain(self) -> None:
        """Emit the matches the native runtime released since the last call (with a
        ``sink``, write their rows natively instead); a streamed moment's chunk by chunk, each
        emitted before the next is made."""
        while True:
            if self.sink is not None:
                taken = self.sink.write_matches(self._native, self.number)
            else:
                matches = self._native.take_matches(self.number)
                taken = len(matches)
                session, emit = self.session, self.emit
                for native in matches:
                    emit(_Released(native, session))
            self.stats["matches"] += taken
            # a take of none ends a moment: a chunk stops short only at its last run
            if not taken or not self._native.moment_pending(self.number):
                return

    @property
    def late(self) -> int:
        """The late events this query dropped (late for it, under the "drop" policy): the
        core's count, kept by snapshots."""
        return self._native.late_count(self.number)

    @property
    def flushed(self) -> Decimal:
        """Where ``flush`` said no more events come (an event at or before it is late)."""
        ns = self._native.flushed(self.number)
        return -INFINITY if ns is None else self.session.seconds(ns)

    def footprint(self) -> dict[str, int]:
        return dict(self._native.footprint(self.number))

    def work(self) -> dict[str, int]:
        """Counts of work done so far (``runtime::query::Work``): tests bound a shape's cost by them."""
        return dict(self._native.work(self.number))
