"""The drivers: ``Engine.run`` (Python ``Event``s pushed one by one), ``Engine.run_replay``
(replay files read, merged and fed by the native core in batches, decision 36) and
``Engine.run_live`` (live sources, each on a thread of its own, fed as events arrive,
decision 46), with what they do after each batch.

Functions of the ``Engine`` (``_Engine``: the part of it they read and write), which its
methods of those names call."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from decimal import Decimal
from time import monotonic
from typing import TYPE_CHECKING, Protocol, TypeVar

from spaseq.engine.api.errors import LateEventError, SpeculationFailed, UnreadStreamError
from spaseq.engine.api.handle import QueryHandle
from spaseq.engine.api.pushed import Pushed
from spaseq.engine.errors import Location, SpaseqError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.gpm_eval.matcher import EventGraphs
from spaseq.engine.io.native_events import stream_error
from spaseq.engine.runtime.native import LateOutput, NativeSession, OutputStream

if TYPE_CHECKING:
    from spaseq.engine._native import EventRows, LiveInlet, ReplayReading, ReplayStream

log = logging.getLogger(__name__)

_Input = TypeVar("_Input", bound=tuple[str, ...])  # a run's input: (stream IRI, path, ...)


class _Engine(Protocol):
    """The part of an ``Engine`` the drivers read and write (a Protocol: this module does not
    import ``api.engine``, which imports it)."""

    handles: list[QueryHandle]
    _released: list[QueryHandle]
    graphs: EventGraphs
    drop_unread: bool
    PROGRESS_BATCH_SECONDS: float
    LIVE_WAIT_SECONDS: float
    _seq: int
    _native: NativeSession | None
    _late_output: LateOutput | None

    def _release_graphs(self, before: Decimal) -> None: ...

    def _now(self) -> int: ...

    def _live_wait(self) -> float: ...

    @property
    def _clock(self) -> Decimal: ...

    def _session(self) -> NativeSession: ...

    def push_event(self, event: Event) -> Pushed: ...

    def _end(self, error: SpaseqError | None, end_of_input: bool = True) -> None: ...

    def _maybe_compact(self) -> None: ...

    def _poll_kb_between_batches(self) -> None: ...


def run(engine: _Engine, events: Iterable[Event | SpaseqError], end_of_input: bool) -> SpaseqError | None:
    """``Engine.run``: push ``events``, end the input, return the first input error."""
    error = None
    for item in events:
        if isinstance(item, SpaseqError):
            error = error or item
        else:
            engine.push_event(item)
    engine._end(error, end_of_input)
    return error


def run_replay(engine: _Engine, files: list[tuple[str, str]], time_predicate: str | None, batch: int,
               format: str | None, progress: Callable[[int, Decimal], None] | None,
               reading: ReplayReading | None) -> SpaseqError | None:
    """``Engine.run_replay``: replay files fed natively, batch by batch."""
    from spaseq.engine._native import ReplayStream

    files = _read_inputs(engine, files)
    try:
        stream = (ReplayStream(files, time_predicate, format=format, reading=reading) if time_predicate
                  else ReplayStream(files, format=format, reading=reading))
    except ValueError as exc:
        return stream_error(exc)
    for note in stream.notes:
        log.info("%s", note)
    failure = _feed(engine, stream, batch, progress)
    if stream.speculation == "failed":
        raise SpeculationFailed(f"{files[0][1]} is not read as it is written")
    error = stream_error(failure) if failure is not None else None
    engine._end(error)
    return error


def run_rows(engine: _Engine, rows: EventRows, batch: int) -> None:
    """``Engine.run_rows``: events given as columns fed natively, batch by batch; what
    feeding raised (a callback's error) is raised after the matches before it."""
    failure = _feed(engine, rows, batch, None)
    engine._end(None)
    if failure is not None:
        raise failure


class Inlets(Protocol):
    """Sources fed whole messages from Python (``run_live``'s ``inlets``: MQTT's, for ``spaseq
    run``): the (stream IRI, label) of each, and what is told their ``LiveInlet``s once the
    live stream is open (None for a stream no registered query reads, with ``drop_unread``)."""

    streams: list[tuple[str, str]]

    def opened(self, inlets: list[LiveInlet | None]) -> None: ...


def _feed(engine: _Engine, stream: ReplayStream | EventRows, batch: int,
          progress: Callable[[int, Decimal], None] | None) -> ValueError | None:
    """Feed ``stream`` natively to its end, batch by batch, releasing matches after each;
    the stream's error (a ``LocatedError``) or what feeding raised, if any."""
    size = batch
    failure: ValueError | None  # the stream's LocatedError, or what feeding raised
    while True:
        engine._poll_kb_between_batches()
        engine._maybe_compact()
        native = engine._session()
        began = monotonic() if progress is not None else 0.0
        try:
            fed, last, ended, failure = native.engine.feed(stream, size)
        except ValueError as exc:
            fed, last, ended, failure = 0, None, True, exc
        engine._seq += fed
        _after_feed(engine, native, last)
        if progress is not None:
            progress(engine._seq, engine._clock)
            took = monotonic() - began
            if fed == size and took > 0:  # the next batch sized to take about the target
                size = max(64, min(batch, int(size * engine.PROGRESS_BATCH_SECONDS / took)))
        if ended:
            return failure


def run_live(engine: _Engine, sources: list[tuple[str, str, str]], time_predicate: str | None, batch: int,
             progress: Callable[[int, Decimal], None] | None, inlets: Inlets | None = None) -> SpaseqError | None:
    """``Engine.run_live``: live sources (and ``inlets``) fed natively as their events arrive."""
    from spaseq.engine._native import LiveStream

    sources = _read_inputs(engine, sources)
    fed_by = _read_inputs(engine, inlets.streams) if inlets is not None else []
    try:
        stream = (LiveStream(sources, time_predicate, inlets=fed_by) if time_predicate
                  else LiveStream(sources, inlets=fed_by))
    except ValueError as exc:
        return stream_error(exc)
    if inlets is not None:
        made = dict(zip(fed_by, stream.inlets, strict=True))
        inlets.opened([made.get(spec) for spec in inlets.streams])
    error = None
    while True:
        engine._poll_kb_between_batches()
        engine._maybe_compact()
        native = engine._session()
        native.engine.set_now(engine._now())
        fed, last, ended, failure, dropped, late = native.engine.feed_live(
            stream, batch, engine._live_wait(), engine._late_output)
        if not fed:  # quiet: a stream silent for the idle timeout stops holding watermarks back
            native.engine.set_now(engine._now())
            native.idle_tick([h.runtime for h in engine._released])
        engine._seq += fed + dropped
        _after_feed(engine, native, last)
        if progress is not None:
            progress(engine._seq, engine._clock)
        if late is not None:  # the core's LateEvent (late="error"): its message, where it was read
            raise LateEventError(str(late), Location(late.path, late.line))
        if ended:
            error = stream_error(failure) if failure is not None else None
            break
    engine._end(error)
    return error


def _after_feed(engine: _Engine, native: NativeSession, last: int | None) -> None:
    """After a batch fed natively: release every query's matches and free the graphs and
    terms no window holds any more (up to the last event's time, ``last``, nanoseconds)."""
    for h in engine._released:  # producers' results before their readers'
        h.runtime.drain()
    if last is not None:
        engine._release_graphs(native.seconds(last))
    native.forget()


def _read_inputs(engine: _Engine, inputs: list[_Input]) -> list[_Input]:
    """The inputs ((stream IRI, path, ...)) of a native run: UsageError for a query's output
    stream, UnreadStreamError for a stream no registered query reads (dropped, not read at
    all, with ``drop_unread``)."""
    native = engine._session().engine
    for i in inputs:
        try:
            native.check_input(i[0])
        except OutputStream as exc:  # a query's output stream: its events come from the query
            raise UsageError(str(exc)) from None
    reads = native.reads
    unread = [i for i in inputs if not reads(i[0])]
    if unread and not engine.drop_unread:
        raise UnreadStreamError(f"no registered query reads the stream <{unread[0][0]}> "
                                f"of {unread[0][1]}")
    return [i for i in inputs if i not in unread]
