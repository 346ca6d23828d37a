"""A query over a live stream on Spark Structured Streaming (``match_stream``), and replay
files appearing in folders as such a stream (``read_event_stream``); docs/decisions.md 70.

The events are routed to hash buckets of their keys when the plan splits the query by key
(``compile.splitting``; an event giving several keys goes to each of their buckets), else to
one bucket: a time split's chunks would only follow one another as the stream advances. Each
bucket is one native engine whose state lives in Spark's state store between micro-batches
(``applyInPandasWithState``) as a *state-only snapshot*: the state without the plan, restored
into an engine each Python worker compiles once per query (``restore_state`` checks the plan
hash, so a changed query cannot continue an old checkpoint). Event time: Spark's watermark
trails the latest event time by the query's lateness; a bucket first moves its clock to the
watermark (events before it are late for the query: counted and emitted as ``late`` rows,
the side output), then pushes its batch's events in time order, which its engine reorders
within the lateness. Every micro-batch with data wakes every bucket (the router adds a *tick*
row per bucket): a bucket without events moves to the watermark, closing the windows it passed
(trailing negations complete), and is dropped once it holds no partial match. Spark's own
timeouts are not used: under an event-time timeout Spark drops the late rows before the
function sees them (no side output), and a processing-time timeout runs a micro-batch without
data after every other. Output mode append: every match and late event exactly once, given a replayable source and an idempotent sink (Spark's file sinks)."""

from __future__ import annotations

import functools
import os
import zlib
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.compile.splitting import KEY, SplitPlan
from spaseq.engine.errors import StreamError
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import Match
from spaseq.engine.values.timestamps import exact_seconds
from spaseq.spark.events import EVENT_SCHEMA, event_batch, file_columns, to_events
from spaseq.spark.found import found
from spaseq.spark.matching import (
    MATCH_SCHEMA,
    KbSource,
    event_struct,
    kb_source,
    keys_of,
    match_key,
    match_row,
    match_store,
    query_of,
    settle,
)
from spaseq.spark.order import clock_close, order_key, released

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from spaseq.engine.api import Engine
    from spaseq.engine.kb.reader import KbStore

#: A streaming result: ``kind`` "match" (``MATCH_SCHEMA``'s columns) or "late" (an event the
#: query dropped as late, in ``events``, with its time as ``start`` and ``time``).
STREAM_SCHEMA = f"kind string, {MATCH_SCHEMA}"
#: A bucket's state: its engine's state-only snapshot.
STATE_SCHEMA = "snapshot binary"
#: The events with their bucket and their time as a Spark timestamp (the watermark's column).
_ROUTED = f"bucket int, {EVENT_SCHEMA}, event_time timestamp"
#: The binaryFile source's columns (a stream's schema is given, not inferred).
_FILE_SCHEMA = "path string, modificationTime timestamp, length long, content binary"
#: Buckets per executor core when the query splits by key and none is given.
BUCKETS_PER_CORE = 4


def read_event_stream(spark: SparkSession, streams: Mapping[str, str], *, format: str | None = None,
                      time_predicate: str | None = None, quarantine: str | None = None,
                      max_files_per_trigger: int | None = None) -> DataFrame:
    """A streaming DataFrame of the events of the replay files (TriG or N-Quads, maybe gzipped)
    appearing in the folders ``streams`` names (stream IRI -> folder), with ``EVENT_SCHEMA``'s
    columns: each new file read whole, its events numbered after those of earlier files (by
    modification time, then position). A file that cannot be read stops the query with its
    ``FILE:LINE:COLUMN: message``, or with ``quarantine`` (a folder) is copied there with a
    ``.error`` report beside it and its events left out."""
    frames = []
    for stream, folder in streams.items():
        reader = spark.readStream.format("binaryFile").schema(_FILE_SCHEMA)
        if max_files_per_trigger is not None:
            reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
        files = reader.load(folder).select("path", "modificationTime", "content")
        frames.append(files.mapInArrow(_file_reader(stream, folder, format, time_predicate, quarantine),
                                        schema=EVENT_SCHEMA))
    if not frames:
        raise StreamError("read_event_stream: no stream given")
    return functools.reduce(lambda a, b: a.unionByName(b), frames)


def _file_reader(stream: str, folder: str, format: str | None, time_predicate: str | None,
                 quarantine: str | None) -> Any:
    """What turns batches of new files into event rows (on an executor): each file read
    natively, its events numbered after its modification time (ms) by position."""
    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        for batch in batches:
            modified = batch.column("modificationTime")
            scale = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[modified.type.unit]
            for path, ms, content in zip(batch.column("path").to_pylist(),
                                         (t * scale // 1_000_000 for t in modified.cast(pa.int64()).to_pylist()),
                                         batch.column("content").to_pylist(), strict=True):
                columns, error = file_columns(path, content, folder, format, time_predicate)
                if error is not None:
                    _bad_file(error, content, quarantine)
                    continue
                assert columns is not None
                # ms, then position (ties between files of one millisecond are possible:
                # nothing looks an event up by it)
                base = ms * 1_000_000
                yield event_batch(stream, columns, range(base, base + len(columns[1])))

    return read


def _bad_file(problem: StreamError, content: bytes, quarantine: str | None) -> None:
    """A file that cannot be read: raise its StreamError, or copy it to ``quarantine`` with a
    report (the same name with ``.error``: ``FILE:LINE:COLUMN: message``)."""
    if quarantine is None:
        raise problem
    os.makedirs(quarantine, exist_ok=True)
    assert problem.location is not None  # file_columns names the file
    name = os.path.basename(problem.location.file or "")
    with open(os.path.join(quarantine, name), "wb") as out:
        out.write(content)
    with open(os.path.join(quarantine, name + ".error"), "w", encoding="utf-8") as report:
        report.write(f"{problem}\n")


def match_stream(events: DataFrame, query: str | A.Query, *, kb: Mapping[str, str] | Sequence[str] | None = None,
                 kb_store: str | KbStore | None = None, options: EngineOptions | None = None,
                 buckets: int | None = None, lateness: Decimal | float | str | None = None) -> DataFrame:
    """The matches (and late events) of ``query`` over the streaming DataFrame ``events``
    (``EVENT_SCHEMA``'s columns: ``read_event_stream``'s, or any source mapped to them), as a
    streaming DataFrame of ``STREAM_SCHEMA`` in append mode. ``kb``: as ``match``'s; a
    ``kb_store`` is followed: each micro-batch joins with the version current at its start
    (every executor the same). ``buckets``: how many hash buckets the keys of a query split by
    key fall in (default: 4 per core); ``lateness``: seconds the watermark trails the latest
    event time (default: the query's LATENESS, else 0)."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    text = query if isinstance(query, str) else query.source
    q = parse_query(text) if isinstance(query, str) else query
    split = plan_query(q, options).split
    delay = exact_seconds(lateness) if lateness is not None else (q.lateness or Decimal(0))
    source = _followed(kb_source(kb, kb_store))
    if split.kb and source is not None and source[0] == "store":
        split = SplitPlan()  # keys through a KB that may change between routing and matching: one bucket
    if split.kind == KEY:
        count = buckets or BUCKETS_PER_CORE * events.sparkSession.sparkContext.defaultParallelism
    else:
        count = 1

    def route(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield _route(batch, text, split, count, source)

    def step(key: tuple, frames: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
        yield _step(int(key[0]), frames, state, text, split, count, source, options, delay)

    routed = events.mapInPandas(route, schema=_ROUTED)
    return (routed.withWatermark("event_time", f"{int(delay * 1000)} milliseconds")
                  .groupBy("bucket")
                  .applyInPandasWithState(step, STREAM_SCHEMA, STATE_SCHEMA, "append", GroupStateTimeout.NoTimeout))


def _followed(source: KbSource) -> KbSource:
    """A store source without its version: each micro-batch picks the one current at its start."""
    return ("store", source[1], None) if source is not None and source[0] == "store" else source


def _bucket(key: str, count: int) -> int:
    """The bucket of a key: stable in every process (Python's own hash of a str is not)."""
    return zlib.crc32(key.encode("utf-8")) % count


def _route(batch: pd.DataFrame, text: str, split: SplitPlan, count: int, source: KbSource) -> pd.DataFrame:
    """Each event of ``batch`` with the bucket(s) it goes to and its time as a timestamp, and
    a tick (no stream) for every bucket, at the batch's latest time, which wakes it."""
    import pandas as pd

    rows = list(batch.itertuples(index=False))
    if not rows:
        return pd.DataFrame([], columns=["bucket", *batch.columns, "event_time"])
    if split.kind == KEY:
        import pyarrow as pa

        keys = keys_of(pa.array(batch["stream"], pa.string()), pa.array(batch["triples"], pa.string()),
                       lambda: rows, text, split, source)
        targets = [sorted({_bucket(k, count) for k in mine}) for mine in keys]
    else:
        targets = [[0]] * len(rows)
    out = [(b, *r, _timestamp(r.time)) for r, bs in zip(rows, targets, strict=True) for b in bs]
    latest = max(Decimal(r.time) for r in rows)
    out += [(b, None, latest, False, -1, None, "", _timestamp(latest)) for b in range(count)]
    return pd.DataFrame(out, columns=["bucket", *batch.columns, "event_time"])


def _timestamp(seconds: Any) -> Any:
    """Exact seconds as a pandas timestamp (milliseconds: what a watermark counts)."""
    import pandas as pd

    return pd.Timestamp(int(Decimal(seconds) * 1000), unit="ms")


class _Runner:
    """One worker's engine for a query (compiled once), switched between buckets' states."""

    def __init__(self, text: str, options: EngineOptions | None, kb: Any, delay: Decimal) -> None:
        from spaseq.engine.api import Engine

        self.found: list[Match] = []
        self.engine: Engine = Engine(kb, options, drop_unread=True, lateness=delay)
        self.engine.register(query_of(text), on_match=self.found.append, keep=False)
        self.initial = self.engine.snapshot(state_only=True)

    def idle(self) -> bool:
        """Whether the engine holds no partial match, nothing waiting for its window to close."""
        footprint = self.engine.handles[0].runtime.footprint()
        return not (footprint["waiting_runs"] or footprint["closing_runs"] or footprint["deferred"]
                    or footprint["buffered_events"])


@functools.lru_cache(maxsize=4)
def _runner(text: str, options: EngineOptions | None, source: KbSource, delay: Decimal) -> _Runner:
    """The worker's runner for a query (its engine compiled once), left out of collections."""
    runner = _Runner(text, options, match_store(source, text), delay)
    settle()
    return runner


def _step(bucket: int, frames: Iterator[pd.DataFrame], state: Any, text: str, split: SplitPlan, count: int,
          source: KbSource, options: EngineOptions | None, delay: Decimal) -> pd.DataFrame:
    """One bucket's micro-batch: its state restored, its clock moved to the watermark, its
    events pushed in time order; the matches of its keys and the late events out, its state
    kept (or dropped when it got no event and holds nothing)."""
    import pandas as pd

    runner = _runner(text, options, _pinned(source, state.getCurrentProcessingTimeMs()), delay)
    engine = runner.engine
    if state.exists:
        (snapshot,) = state.get
        engine.restore_state(bytes(snapshot))
    else:
        engine.restore_state(runner.initial)
    runner.found.clear()  # a step that failed may have left some
    rows: list[tuple] = []
    watermark = state.getCurrentWatermarkMs()
    if watermark > 0:
        engine.advance_to(Decimal(watermark) / 1000)
    batch = [r for frame in frames for r in frame.drop(columns=["bucket", "event_time"]).itertuples(index=False)
             if r.stream is not None]  # not the ticks
    for event in sorted(to_events(batch), key=Event.sort_key):
        if engine.push_event(event).late:
            rows.append(_late_row(event))
    q = query_of(text)
    for m in runner.found:
        plain = found(m)
        if split.kind == KEY:
            if _bucket(match_key(plain, split.keys), count) != bucket:
                continue
            order = order_key(plain, clock_close(q, plain))
        else:
            order = released(getattr(m, "number", None) or 0)
        rows.append(("match", *match_row(plain, order)))
    runner.found.clear()  # now: not kept alive through the collection after the task
    if not batch and runner.idle():
        state.remove()
    else:
        state.update((engine.snapshot(state_only=True),))
    return pd.DataFrame(rows, columns=["kind", "order", "start", "time", "bindings", "events"])


def _pinned(source: KbSource, batch_ms: int) -> KbSource:
    """A followed store source pinned to the version current at the micro-batch's start."""
    if source is None or source[0] != "store" or source[2] is not None:
        return source
    return ("store", source[1], _version_at(source[1], batch_ms))


@functools.lru_cache(maxsize=16)
def _version_at(path: str, batch_ms: int) -> int | None:
    """The store's version current at a micro-batch's start, read once per worker and batch
    (every bucket of the batch asks; the versions' meta files are on disk)."""
    from spaseq.engine.kb.layout import StoreLayout

    return StoreLayout.at(path).current_at(batch_ms / 1000)


def _late_row(e: Event) -> tuple:
    return ("late", b"", e.time, e.time, {}, [event_struct(None, e)])
