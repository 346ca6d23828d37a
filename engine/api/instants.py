"""The KB version an instant is evaluated on (decision 22): a knowledge base store that
changes version is followed only at an instant's start, so every event of one timestamp
is joined with one version. Queries under lazy conjunction hold an instant's events until
it completes: the core completes their instants on the version the events arrived under
before it announces a new instant (``Engine._on_instant``, where a new version is looked
for), and a native run keeps its starting version throughout.

Functions of the ``Engine`` (``_Engine``: the part of it they read and write), which its
``push_event``, ``advance_to`` and the drivers call."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Protocol

from spaseq.engine.api.handle import QueryHandle
from spaseq.engine.gpm_eval.matcher import EventGraphs
from spaseq.engine.kb.reader import KbStore
from spaseq.engine.runtime.native import NativeSession

log = logging.getLogger(__name__)


class _Engine(Protocol):
    """The part of an ``Engine`` the KB version switching reads and writes (a Protocol: this
    module does not import ``api.engine``, which imports it)."""

    handles: list[QueryHandle]
    query_clocks: bool
    graphs: EventGraphs
    _native: NativeSession | None
    _pinned_noted: bool


def deferring(engine: _Engine) -> Iterator[QueryHandle]:
    """The queries that hold an instant's events until it completes (lazy conjunction):
    they must be evaluated on the KB version they arrived under (decision 22)."""
    return (h for h in engine.handles if h.plan is not None and h.plan.options.lazy_conjunction)


def defers_instants(engine: _Engine) -> bool:
    return any(deferring(engine))


def poll_kb_between_batches(engine: _Engine) -> None:
    """``poll_kb`` for the native runs, whose batches may end inside an instant: with a
    query deferring instants the KB stays at the version the run started on, so that no
    deferred event is joined with a later one (decision 22)."""
    if not defers_instants(engine):
        poll_kb(engine)
    elif not engine._pinned_noted and engine.graphs.kb is not None and engine.graphs.kb.version:
        engine._pinned_noted = True
        log.info("lazy conjunction: the knowledge base stays at version %d for this run",
                 engine.graphs.kb.version)


def holds_instants(engine: _Engine) -> bool:
    """Whether a query with its own clock still holds events of an unfinished instant
    (lazy conjunction): the KB version must not change under them. Asked only of a
    store that can change version (the footprint walks the query's runs)."""
    return engine.query_clocks and isinstance(engine.graphs.kb, KbStore) and any(
        h.runtime.footprint()["deferred"] for h in deferring(engine))


def poll_kb(engine: _Engine, force: bool = False) -> None:
    """Follow a new KB store version (checked at most once a second unless forced), at
    an instant's start only (decision 22)."""
    if holds_instants(engine):
        return
    engine.graphs.poll_kb(force)
    if engine._native is not None:
        engine._native.follow_kb(engine.graphs.kb_version)
