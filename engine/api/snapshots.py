"""The engine's state written and read back: ``Engine.snapshot`` (``take``), ``Engine.restore``
(``restore``: a new engine), ``Engine.restore_state`` (``restore_state``: into an engine
with the same queries) and the dictionary compaction, a snapshot restored in place
(``compact``, decision 38). A snapshot is the native side's bytes (the core's state: clocks,
runs, each query's results numbered and DISTINCT's rows, composition's held-back events)
and, as JSON, the Python side's: settings, each query's plan (or its hash), the times as the
held events spelled them (``runtime.snapshot.Snapshot``).

Functions of the ``Engine`` (``_Engine``: the part of it they read and write), which its
methods of those names call."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from decimal import Decimal
from typing import Protocol, TypeVar

from pyoxigraph import Store

from spaseq.engine.api.handle import QueryHandle
from spaseq.engine.compile.plan import EngineOptions, Plan
from spaseq.engine.compile.plan_json import plan_from_json, plan_to_json
from spaseq.engine.composition import Composition
from spaseq.engine.kb.reader import KbStore
from spaseq.engine.matches import Match
from spaseq.engine.output.materialize import Materializer
from spaseq.engine.runtime.native import NativeEngine, NativeSession, QueryRuntime
from spaseq.engine.runtime.snapshot import Snapshot, SnapshotError


class _Engine(Protocol):
    """The part of an ``Engine`` a snapshot reads and writes (a Protocol: this module does not
    import ``api.engine``, which imports it)."""

    options: EngineOptions
    late_policy: str
    query_clocks: bool
    drop_unread: bool
    lateness: Decimal | None
    idle_timeout: Decimal | None
    materializer: Materializer | None
    compactions: int
    _seq: int
    _native: NativeSession | None
    _resuming: bool
    _by_iri: dict[str, QueryHandle]
    composition: Composition

    def register(self, query: Plan, *, keep: bool, output: str) -> QueryHandle: ...

    def _session(self, native: NativeEngine | None = None) -> NativeSession: ...


_E = TypeVar("_E", bound=_Engine)


def take(engine: _Engine, state_only: bool) -> bytes:
    """``Engine.snapshot``'s bytes (the engine is open)."""
    session = engine._session()
    handles = list(engine._by_iri.values())  # every query, registration order
    for h in handles:
        h.runtime.drain()
    if engine.materializer is not None:  # what was released is stored before the snapshot
        engine.materializer.flush()
    native, times = session.snapshot([h.runtime.number for h in handles])
    state = {
        "options": dataclasses.asdict(engine.options),
        "late": engine.late_policy,
        "query_clocks": engine.query_clocks,
        "drop_unread": engine.drop_unread,
        "lateness": None if engine.lateness is None else str(engine.lateness),
        "idle_timeout": None if engine.idle_timeout is None else str(engine.idle_timeout),
        "seq": engine._seq,  # the clocks, the heartbeat and the events dropped are the core's
        "times": times,
        "queries": [{
            **({} if state_only else {"plan": plan_to_json(h.plan, indent=None)}),  # type: ignore[arg-type]
            "plan_hash": h.runtime.plan_hash,
            "output": iri,
            "keep": h.keep,
            "matches": h.runtime.stats["matches"],
        } for iri, h in engine._by_iri.items()],
    }
    return Snapshot(state, native).encode()


def restore(make: Callable[..., _E], data: bytes, kb: Store | KbStore | str | os.PathLike | None,
            materialize: Store | str | None, clock: Callable[[], float],
            late_output: str | os.PathLike | None) -> _E:
    """``Engine.restore``: an engine made by ``make`` (the class) continuing from ``data``."""
    snap = Snapshot.decode(data)
    s = snap.state
    if s.get("queries") and "plan" not in s["queries"][0]:
        raise SnapshotError("a state-only snapshot holds no queries: restore it with restore_state() "
                            "into an engine that has its queries registered")
    try:
        restored = NativeEngine.from_snapshot(snap.native)
        options = EngineOptions(**s["options"])
        engine = make(kb, options, late=s["late"], late_output=late_output, materialize=materialize,
                      query_clocks=s.get("query_clocks", False),
                      drop_unread=s.get("drop_unread", False), clock=clock,
                      lateness=s.get("lateness"), idle_timeout=s.get("idle_timeout"))
        engine._native = native = engine._session(restored)
        engine._resuming = True
        for q in s["queries"]:
            engine.register(plan_from_json(q["plan"]), keep=q["keep"], output=q["output"])
        engine._resuming = False
        native.resume([h.runtime.number for h in engine._by_iri.values()], s["times"])
        native.engine.forget_arrivals()  # processing times of another process: not this clock's
        _apply_state(engine, s)
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"a snapshot this spaseq cannot restore: {exc}") from None
    return engine


def restore_state(engine: _Engine, data: bytes) -> None:
    """``Engine.restore_state``: ``data``'s state into ``engine`` (open, with the same queries)."""
    snap = Snapshot.decode(data)
    s = snap.state
    handles = list(engine._by_iri.values())
    try:
        wanted = [(q["plan_hash"], q["output"]) for q in s["queries"]]
        settings = (s["late"], s.get("query_clocks", False), s.get("drop_unread", False))
    except (KeyError, TypeError) as exc:
        raise SnapshotError(f"a snapshot this spaseq cannot restore: {exc}") from None
    have = [(h.runtime.plan_hash, iri) for iri, h in engine._by_iri.items()]
    if have != wanted:
        differ = next((i for i, (a, b) in enumerate(zip(have, wanted, strict=False)) if a != b),
                      min(len(have), len(wanted)))
        raise SnapshotError(
            f"the snapshot's queries are not this engine's: it holds {len(wanted)}, this engine "
            f"has {len(have)}, and query {differ + 1} differs (its plan or output IRI)")
    if settings != (engine.late_policy, engine.query_clocks, engine.drop_unread):
        raise SnapshotError("the snapshot was taken with other settings (late, query_clocks, "
                            "drop_unread) than this engine's")
    for h in handles:
        h.runtime.drain()  # what this engine released so far goes out first
    try:
        native = NativeEngine.from_snapshot(snap.native)
    except ValueError as exc:
        raise SnapshotError(f"a snapshot this spaseq cannot restore: {exc}") from None
    try:
        _switch_session(engine, handles, native, s["times"])
        engine._session().engine.forget_arrivals()  # perhaps another process's processing times
        _apply_state(engine, s)  # its terms read back through the new dictionary
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"a snapshot this spaseq cannot restore: {exc}") from None


def compact(engine: _Engine) -> None:
    """``Engine._compact``: the native side rebuilt from a snapshot of itself."""
    handles = list(engine._by_iri.values())
    for h in handles:
        h.runtime.drain()
    old = engine._native
    assert old is not None
    data, times = old.snapshot([h.runtime.number for h in handles])
    _switch_session(engine, handles, NativeEngine.from_snapshot(data), times)
    engine.compactions += 1  # the new dictionary is compacted again when it doubles (the core)


def _switch_session(engine: _Engine, handles: list[QueryHandle], native: NativeEngine,
                    times: dict[str, str]) -> NativeSession:
    """``engine``'s native side replaced by ``native`` (restored from a snapshot): each
    handle's runtime carried over to it and resumed with the snapshot's ``times``; the old
    session retired, freed once no match it released is referenced (a compaction and a
    restored state alike)."""
    session = engine._session(native)
    old = engine._native
    for iri, h in engine._by_iri.items():
        h.runtime = carried_over(h.runtime, session, h._emit)
        session.engine.set_output(h.runtime.number, iri, engine.composition.nodes[iri].label)
    engine._native = session
    if old is not None:
        old.retire()
    session.resume([h.runtime.number for h in handles], times)
    return session


def carried_over(before: QueryRuntime, session: NativeSession, emit: Callable[[Match], None]) -> QueryRuntime:
    """``before``'s query on ``session`` (a compaction's, a restored state's): its stats and
    native writer carried over, the writer's caches by term id dropped."""
    runtime = QueryRuntime(before.plan, session, emit, before.graphs, prior=before)
    runtime.stats = before.stats
    runtime.sink = before.sink
    if before.sink is not None:
        before.sink.forget_terms()
    return runtime


def _apply_state(engine: _Engine, s: dict) -> None:
    """The Python half of a snapshot's state ``s`` onto the engine's registered queries
    (their native runtimes already resumed)."""
    for h, q in zip(engine._by_iri.values(), s["queries"], strict=True):
        h.runtime.stats["matches"] = q["matches"]
    engine._seq = s["seq"]
