"""Issue 27's streaming measurements: ``spaseq.spark.match_stream`` (Structured Streaming,
``applyInPandasWithState``) against the batch ``spaseq.spark.match`` on the same events, and a
prototype of the same bucket step on ``transformWithStateInPandas`` (PySpark 4's
``StatefulProcessor``), to pick the state API with measurements.

The input is generated here (``generate``, cached in ``--data-dir``): a key-split query, ``SEQ(A ;
B)`` WITHIN 1 MINUTES over ``--keys`` keys (``?k``, every GPM binds it, so the plan splits by key),
``--rate`` events per second of event time, written as N-Quads replay files of ``--batch`` events
each (one micro-batch each), their modification times in order. Everything runs in one local[2]
session (``spaseq.spark.session``: the package's defaults, 4 shuffle partitions, 16 buckets), each
system first warmed up on a small file of its own (Python workers started, the query compiled in
each), then timed in the same run on the same files:

* ``batch``: ``match(read_events(spark, {stream: folder}), query)``, reading included (the files
  read, sorted and numbered, then matched), aggregated to a count and checksum;
* ``stream (applyInPandasWithState)``: ``match_stream`` as it is over ``read_event_stream(...,
  max_files_per_trigger=1)`` (one file, ``--batch`` events, per micro-batch), trigger
  ``availableNow``, a memory sink of ``kind, start, time``; again with the RocksDB state store
  (``+ RocksDB``), the store ``transformWithStateInPandas`` needs, to tell the API from the store;
* ``stream (transformWithStateInPandas)``: the same routing and the same per-bucket work
  (``spaseq.spark.streaming._step``: restore the bucket's state-only snapshot, move its clock to
  the watermark, push its events, snapshot) in a ``StatefulProcessor`` whose ``ValueState`` holds
  the snapshot bytes (RocksDB state store, ``timeMode="EventTime"`` for the watermark);
* ``stream (applyInPandasWithState, workers gc.freeze())``: ``match_stream``'s plan exactly, each
  Python worker calling ``gc.freeze()`` once after its first routing or step: what freezing the
  heap once the engine is compiled would save of the ``gc.collect()`` PySpark's daemon runs in a
  reused worker after every task (measured last: the workers stay frozen);
* ``stream read only (ceiling)``: the same source, reader and trigger into the memory sink with
  no matching: the speed limit the streaming input sets on any stateful step;
* ``single engine (no Spark)``: ``Engine.run_replay`` over the same events in one file, in the
  driver process (one core): what the Spark machinery costs against the engine alone.

Each row gives events/s (wall clock from ``start()`` to the end), its ratio to the batch rate
(``xbatch``; issue 27's target for streaming is >= 0.5 at 10^4-event micro-batches), to the
batch's match alone (``xmatch``: reading left out) and to the read-only stream (``xceil``), and
the matches (count and the exact sums of starts and ends) checked against the batch's. The streaming rows add Spark's per-micro-batch ``durationMs`` (``addBatch``:
the micro-batch's job, against the rest: offsets, planning, WAL and commit) and the state
operator's figures. ``--profile`` (default on) runs ``match_stream`` once more over the first
three files with py-spy (``pip install py-spy``) sampling the Python workers (the daemon and the
workers it forks) and sorts the samples into where the time goes: reading the files, routing
(``_route``), the bucket step (``_step``: restore_state, advance_to, the rows into ``Event``s,
pushing, the matches into rows, snapshot) and PySpark's own (Arrow/pandas conversion, the
``gc.collect()`` after each task), with the JVM's CPU seconds over the same run.

One command, JSON into ``benchmarks/results/spark-streaming-<timestamp>.json``, a chart beside it
(when matplotlib is importable) and a table on stdout::

    .venv/bin/python -m benchmarks.spark_streaming [--quick] [--events N] [--batch 10000]
        [--keys 256] [--rate 20] [--systems batch,stream,stream-rocksdb,tws,stream-gcfreeze,read,single]
        [--repeat 1] [--no-profile] [--no-chart] [--data-dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DATA = ROOT / "benchmarks" / "data"

NS = "http://example/spark-streaming/"
STREAM = NS + "readings"
PROV = "http://www.w3.org/ns/prov#generatedAtTime"
XSD = "http://www.w3.org/2001/XMLSchema#"
BASE = datetime(2026, 1, 1, tzinfo=timezone.utc)
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
GENERATOR_VERSION = 1

#: The systems, in table order: (name, label).
SYSTEMS = {
    "batch": "batch (match)",
    "stream": "stream (applyInPandasWithState)",
    "stream-rocksdb": "stream (applyInPandasWithState + RocksDB)",
    "tws": "stream (transformWithStateInPandas)",
    "stream-gcfreeze": "stream (applyInPandasWithState, workers gc.freeze())",
    "read": "stream read only (ceiling)",
    "single": "single engine (no Spark)",
}
MODES = {"quick": {"events": 30_000}, "default": {"events": 100_000}}
WARMUP_EVENTS = 1_000
PROFILE_FILES = 3


def query_text(window: str = "1 MINUTES") -> str:
    """The measured query: an A, then the next B of the same key with a greater value."""
    return (f"PREFIX : <{NS}>\n"
            f"SELECT ?k ?a ?b ?va ?vb\nWITHIN {window}\nFROM STREAM S1 <{STREAM}>\n"
            "WHERE {\n  SEQ (A ; B)\n"
            "  DEFINE GPM A ON S1 { ?a :kind :a ; :key ?k ; :v ?va . }\n"
            "  DEFINE GPM B ON S1 { ?b :kind :b ; :key ?k ; :v ?vb . FILTER (?vb > ?va) }\n}\n")


# ------------------------------------------------------------------------------- the input


def _stamp(ms: int) -> str:
    at = datetime.fromtimestamp(BASE.timestamp() + ms / 1000, tz=timezone.utc)
    return f'"{at.strftime("%Y-%m-%dT%H:%M:%S")}.{ms % 1000:03d}Z"^^<{XSD}dateTime>'


def _event_lines(i: int, rng: random.Random, keys: int, rate: float) -> str:
    """Event ``i``: a reading of kind a or b on one of ``keys`` keys, ``i / rate`` s after BASE."""
    g, e = f"<{NS}g{i}>", f"<{NS}e{i}>"
    kind = "a" if rng.random() < 0.5 else "b"
    return (f"{g} <{PROV}> {_stamp(round(i * 1000 / rate))} .\n"
            f"{e} <{NS}kind> <{NS}{kind}> {g} .\n"
            f"{e} <{NS}key> <{NS}K{rng.randrange(keys)}> {g} .\n"
            f'{e} <{NS}v> "{rng.randrange(10)}"^^<{XSD}integer> {g} .\n')


def generate(data_dir: Path, events: int, batch: int, keys: int, rate: float, seed: int = 42) -> dict:
    """The input (cached): ``parts/`` (one file of ``batch`` events per micro-batch, modification
    times in order), ``profile/`` (the first parts, linked), ``all.nq`` (every event, for the
    single engine) and ``warmup/`` (a small file of earlier events); its manifest."""
    name = f"spark-streaming-v{GENERATOR_VERSION}-{events}-b{batch}-k{keys}-r{rate:g}-s{seed}"
    root = data_dir / name
    manifest = root / "manifest.json"
    if manifest.exists():
        return json.loads(manifest.read_text())
    if root.exists():
        shutil.rmtree(root)
    for sub in ("parts", "profile", "warmup"):
        (root / sub).mkdir(parents=True)
    rng = random.Random(seed)
    files = []
    with open(root / "all.nq", "w", encoding="utf-8") as whole:
        for j, start in enumerate(range(0, events, batch)):
            text = "".join(_event_lines(i, rng, keys, rate) for i in range(start, min(events, start + batch)))
            whole.write(text)
            path = root / "parts" / f"part-{j:04d}.nq"
            path.write_text(text, encoding="utf-8")
            os.utime(path, (1_000_000 + j, 1_000_000 + j))  # the source takes files oldest first
            if j < PROFILE_FILES:
                os.link(path, root / "profile" / path.name)
            files.append(str(path))
    warm = random.Random(seed + 1)  # events before the measured ones' times: a stream of their own
    (root / "warmup" / "warmup.nq").write_text(
        "".join(_event_lines(i, warm, keys, rate) for i in range(-WARMUP_EVENTS, 0)), encoding="utf-8")
    info = {"name": name, "root": str(root), "events": events, "batch": batch, "keys": keys,
            "rate_events_per_s": rate, "seed": seed, "files": len(files),
            "event_time_span_s": round((events - 1) / rate, 3), "triples_per_event": 3,
            "bytes": sum(os.path.getsize(f) for f in files)}
    manifest.write_text(json.dumps(info, indent=2))
    return info


# -------------------------------------------------------------------------------- Spark


def spark_session() -> Any:
    """The package's local[2] session (the README's), with the repository on the workers' path
    (this module's processor is imported there) and room for every micro-batch's progress."""
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    from spaseq.spark import session

    return session("local[2]", {"spark.sql.streaming.numRecentProgressUpdates": "1000"})


def _fingerprint(rows: list) -> dict:
    """A matches' count and exact sums of starts and ends (one aggregated row)."""
    count, starts, ends = rows[0] if rows else (0, None, None)
    return {"matches": int(count or 0), "sum_start": str(Decimal(starts or 0).normalize()),
            "sum_time": str(Decimal(ends or 0).normalize())}


def run_batch(spark: Any, folder: str, text: str) -> dict:
    """``match(read_events(...))``: the files read (eagerly, as ``read_events`` does), then matched
    (a count and checksum collected); both timed."""
    from pyspark.sql import functions as F

    from spaseq.spark import match, read_events

    start = time.perf_counter()
    events = read_events(spark, {STREAM: folder})
    read = time.perf_counter()
    found = match(events, text).agg(F.count(F.lit(1)), F.sum("start"), F.sum("time")).collect()
    done = time.perf_counter()
    events.unpersist()
    return {"elapsed_s": done - start, "read_s": read - start, "match_s": done - read, **_fingerprint(found)}


class _GroupStateOfValueState:
    """What ``streaming._step`` asks of applyInPandasWithState's ``GroupState``, on a
    transformWithState ``ValueState`` (one ``get`` call instead of ``exists`` then ``get``)."""

    def __init__(self, value: Any, timers: Any) -> None:
        self._value = value
        self._timers = timers
        self._got = value.get()

    @property
    def exists(self) -> bool:
        return self._got is not None

    @property
    def get(self) -> tuple:
        return self._got

    def update(self, value: tuple) -> None:
        self._value.update(value)

    def remove(self) -> None:
        self._value.clear()

    def getCurrentWatermarkMs(self) -> int:  # noqa: N802 (GroupState's name)
        return self._timers.getCurrentWatermarkInMs()

    def getCurrentProcessingTimeMs(self) -> int:  # noqa: N802
        return self._timers.getCurrentProcessingTimeInMs()


def _processor(text: str, split: Any, count: int, source: Any, options: Any, delay: Decimal) -> Any:
    """A ``StatefulProcessor`` doing ``match_stream``'s bucket step (``streaming._step``), its
    state one ``ValueState`` of ``STATE_SCHEMA`` (the snapshot bytes, the latest time)."""
    from pyspark.sql.streaming import StatefulProcessor

    from spaseq.spark import streaming

    class BucketStep(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self.state = handle.getValueState("bucket", streaming.STATE_SCHEMA)

        def handleInputRows(self, key: Any, rows: Iterator, timerValues: Any) -> Iterator:  # noqa: N802, N803
            state = _GroupStateOfValueState(self.state, timerValues)
            yield streaming._step(int(key[0]), rows, state, text, split, count, source, options, delay)

        def close(self) -> None:
            pass

    return BucketStep()


def _routed(events: Any, text: str, freeze: bool = False) -> tuple:
    """``match_stream``'s plan up to its stateful step: the split, bucket count, KB source and
    lateness, and the events routed to buckets with the watermark (``freeze``: each worker
    freezes its heap after its first routing, see ``_freeze_once``)."""
    from spaseq.engine.compile.planner import plan_query
    from spaseq.engine.compile.splitting import KEY, SplitPlan
    from spaseq.engine.language.query import parse_query
    from spaseq.spark import streaming
    from spaseq.spark.matching import kb_source

    q = parse_query(text)
    split = plan_query(q, None).split
    delay = q.lateness or Decimal(0)
    source = streaming._followed(kb_source(None, None))
    if split.kb and source is not None and source[0] == "store":  # as match_stream: one bucket
        split = SplitPlan()
    count = (streaming.BUCKETS_PER_CORE * events.sparkSession.sparkContext.defaultParallelism
             if split.kind == KEY else 1)

    def route(batches: Iterator) -> Iterator:
        for batch in batches:
            yield streaming._route(batch, text, split, count, source)
            if freeze:
                _freeze_once()

    routed = events.mapInPandas(route, schema=streaming._ROUTED)
    return split, count, source, delay, routed.withWatermark("event_time", f"{int(delay * 1000)} milliseconds")


def tws_stream(events: Any, text: str, time_mode: str = "EventTime") -> Any:
    """``match_stream``'s plan with the bucket step on ``transformWithStateInPandas``: the same
    router, watermark and per-bucket work, the state in a ``ValueState``. (``timeMode`` "None"
    gives no watermark; "ProcessingTime" under ``availableNow`` runs micro-batches without data
    for ever.)"""
    from spaseq.spark import streaming

    split, count, source, delay, routed = _routed(events, text)
    return routed.groupBy("bucket").transformWithStateInPandas(
        _processor(text, split, count, source, None, delay), streaming.STREAM_SCHEMA, "Append", time_mode)


_FROZEN: list[bool] = []


def _freeze_once() -> None:
    """``gc.freeze()`` once per worker process, after its first routing or bucket step (the
    modules imported, the engine compiled): the ``gc.collect()`` PySpark's daemon runs in a
    reused worker after every task then skips everything older."""
    if not _FROZEN:
        import gc

        gc.freeze()
        _FROZEN.append(True)


def frozen_stream(events: Any, text: str) -> Any:
    """``match_stream`` exactly (the same router, watermark, ``applyInPandasWithState`` and
    bucket step), each Python worker freezing its heap once (``_freeze_once``): what calling
    ``gc.freeze()`` in ``streaming._runner`` would save."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    from spaseq.spark import streaming

    split, count, source, delay, routed = _routed(events, text, freeze=True)

    def step(key: tuple, frames: Iterator, state: Any) -> Iterator:
        out = streaming._step(int(key[0]), frames, state, text, split, count, source, None, delay)
        _freeze_once()
        yield out

    return routed.groupBy("bucket").applyInPandasWithState(
        step, streaming.STREAM_SCHEMA, streaming.STATE_SCHEMA, "append", GroupStateTimeout.NoTimeout)


def run_stream(spark: Any, folder: str, text: str, system: str, work: Path, name: str,
               files: int | None = None) -> dict:
    """One streaming query over ``folder`` (one file per micro-batch, trigger availableNow, a
    memory sink of ``kind, start, time``), timed from ``start()`` to its end; its matches'
    fingerprint, late rows, and Spark's progress of every micro-batch."""
    from pyspark.sql import functions as F

    from spaseq.spark import match_stream, read_event_stream

    events = read_event_stream(spark, {STREAM: folder}, max_files_per_trigger=1)
    if system == "read":
        out = events.select(F.lit("event").alias("kind"), "time", "time")
    elif system == "tws":
        out = tws_stream(events, text)
    elif system == "stream-gcfreeze":
        out = frozen_stream(events, text)
    else:
        out = match_stream(events, text)
    out = out.select("kind", "start", "time") if system != "read" else out.toDF("kind", "start", "time")
    previous = spark.conf.get(PROVIDER, None)
    if system in ("tws", "stream-rocksdb"):
        spark.conf.set(PROVIDER, ROCKSDB)
    try:
        start = time.perf_counter()
        query = (out.writeStream.format("memory").queryName(name)
                 .option("checkpointLocation", str(work / f"checkpoint-{name}"))
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        elapsed = time.perf_counter() - start
    finally:
        if previous is None:
            spark.conf.unset(PROVIDER)
        else:
            spark.conf.set(PROVIDER, previous)
    progress = [json.loads(p.json) for p in query.recentProgress]
    kinds = {r[0]: r[1:] for r in spark.sql(
        f"SELECT kind, count(*), sum(start), sum(time) FROM {name} GROUP BY kind").collect()}
    spark.sql(f"DROP VIEW IF EXISTS {name}")
    result = {"elapsed_s": elapsed, "input_rows": sum(p["numInputRows"] for p in progress),
              "late": int(kinds.get("late", (0,))[0]), **_batches(progress)}
    if system == "read":
        result["matches"] = None
    else:
        result.update(_fingerprint([kinds["match"]] if "match" in kinds else []))
    return result


def _batches(progress: list[dict]) -> dict:
    """Spark's per-micro-batch figures: ``durationMs`` (``addBatch`` against the rest) and the
    state operator's, for the micro-batches that read input (medians and totals)."""
    data = [p for p in progress if p["numInputRows"]]
    if not data:
        return {"micro_batches": len(progress)}
    add = [p["durationMs"].get("addBatch", 0) for p in data]
    total = [p["durationMs"].get("triggerExecution", 0) for p in data]
    rest = [t - a for t, a in zip(total, add, strict=True)]
    out: dict[str, Any] = {
        "micro_batches": len(progress), "data_micro_batches": len(data),
        "add_batch_ms_median": statistics.median(add), "rest_ms_median": statistics.median(rest),
        "trigger_ms_median": statistics.median(total), "add_batch_ms_total": sum(add),
        "rest_ms_total": sum(rest), "trigger_ms_total": sum(total),
        "rest_ms_by_phase": {k: statistics.median(p["durationMs"].get(k, 0) for p in data)
                             for k in sorted({k for p in data for k in p["durationMs"]})
                             if k not in ("addBatch", "triggerExecution")},
    }
    states = [p["stateOperators"][0] for p in data if p.get("stateOperators")]
    if states:
        out["state"] = {
            "rows_total_last": states[-1].get("numRowsTotal"),
            "memory_bytes_last": states[-1].get("memoryUsedBytes"),
            "all_updates_ms_median": statistics.median(s.get("allUpdatesTimeMs", 0) for s in states),
            "commit_ms_median": statistics.median(s.get("commitTimeMs", 0) for s in states),
            "custom_last": states[-1].get("customMetrics", {}),
        }
    return out


def run_single(path: str, text: str) -> dict:
    """The engine alone (``Engine.run_replay``, the native reader) over every event, in this
    process: its rate, matches and their sums."""
    from spaseq.engine.api import Engine

    found = [0, Decimal(0), Decimal(0)]

    def count(m: Any) -> None:
        found[0] += 1
        found[1] += m.start
        found[2] += m.time

    start = time.perf_counter()
    engine = Engine(drop_unread=True)
    engine.register(text, on_match=count, keep=False)
    error = engine.run_replay([(STREAM, path)])
    elapsed = time.perf_counter() - start
    if error is not None:
        raise SystemExit(f"{path}: {error}")
    return {"elapsed_s": elapsed, **_fingerprint([tuple(found)])}


# ------------------------------------------------------------------------------ profiling


def _processes() -> list[tuple[int, int, str]]:
    """Every process: (pid, parent pid, command line)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out.append((int(entry), int(stat.rsplit(")", 1)[1].split()[1]), cmd))
    return out


def _descendants(pid: int) -> list[tuple[int, str]]:
    """This process's descendants (pid, command line): the driver JVM, the Python daemons."""
    procs = _processes()
    children: dict[int, list[tuple[int, str]]] = {}
    for p, parent, cmd in procs:
        children.setdefault(parent, []).append((p, cmd))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child[0])
    return out


def _cpu_s(pid: int) -> float:
    """A process's CPU seconds so far (user + system, its waited-for children included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


#: Where a sampled Python stack is, looked up from the leaf: (function names, category);
#: ``_route`` and ``_step`` name the stage, frames under ``pandas``/``pyarrow`` count as such.
STEP = [({"restore_state"}, "restore_state"), ({"snapshot", "take"}, "snapshot"),
        ({"push_event"}, "push_event"), ({"advance_to"}, "advance_to"),
        ({"to_events", "graph_term"}, "rows to Events (N-Triples parsed)"),
        ({"match_row", "order_key", "_pairs", "clock_close", "match_key", "_late_row", "_bucket"}, "matches to rows"),
        ({"idle", "_runner", "_pinned"}, "runner, idle check")]
ROUTE = [({"to_events", "graph_term"}, "rows to Events (N-Triples parsed)"),
         ({"event_keys", "_bgp", "_unify", "_bucket"}, "keys"),
         ({"_timestamp"}, "timestamps")]
#: PySpark's own work in a worker, looked up from the leaf the same way.
PYSPARK = [({"construct_state_pdf"}, "state rows <-> pandas"),
           ({"PandasToArrowConversion", "construct_record_batch", "_create_converter_from_pandas"},
            "pandas -> Arrow (output)"),
           ({"to_pandas", "load_stream", "dataframe_iter", "ArrowBatchTransformer", "ArrowArrayToPandasConversion",
             "RecordBatchStreamReader", "_create_batch", "arrow_to_pandas"}, "Arrow -> pandas (input)")]


def _gc_line() -> int | None:
    """The line of ``gc.collect()`` in PySpark's daemon: what a reused worker runs after every
    task (a full collection of its heap)."""
    try:
        import pyspark.daemon
    except ImportError:
        return None
    for number, line in enumerate(Path(pyspark.daemon.__file__).read_text().splitlines(), 1):
        if line.strip() == "gc.collect()":
            return number
    return None


def _rule(name: str, rules: list) -> str | None:
    """The category ``rules`` give a frame's function (a method matches by its class too)."""
    for functions, category in rules:
        if name in functions or name.rsplit(".", 1)[-1] in functions or name.split(".", 1)[0] in functions:
            return category
    return None


def categorize(stack: list[str], gc_line: int | None = None) -> str:
    """The category of one sampled stack (frames root first, as py-spy's raw output gives):
    the stage (reading, ``_route``, ``_step``, PySpark's worker), then within it the innermost
    frame a rule names. A stack py-spy cut short (no stage frame, spaseq frames in it) is
    sorted by its frames alone."""
    names = [f.split(" (")[0] for f in stack]
    if "_step" in names:
        stage, rules, cut = "step", STEP, names.index("_step")
    elif "_route" in names:
        stage, rules, cut = "route", ROUTE, names.index("_route")
    elif any(n.endswith("_file_reader.<locals>.read") or n == "file_events" for n in names):
        return "read files (mapInPandas: native reader, rows)"
    elif any("engine/" in f for f in stack):
        stage, rules, cut = "spaseq (stack cut short)", STEP + ROUTE, -1
    else:
        if stack and gc_line is not None and stack[-1].startswith("manager (") and \
                stack[-1].endswith(f"daemon.py:{gc_line})"):
            return "pyspark: gc.collect() after each task"
        for name in reversed(names):
            category = _rule(name, PYSPARK)
            if category:
                return f"pyspark: {category}"
        return "pyspark: other (Arrow I/O with the JVM, the worker loop)"
    for frame, name in zip(reversed(stack[cut + 1:]), reversed(names[cut + 1:]), strict=True):
        category = _rule(name, rules)
        if category:
            return f"{stage}: {category}"
        category = _rule(name, PYSPARK)  # the input frames are converted as the step reads them
        if category:
            return f"pyspark: {category}"
        if "/pandas/" in frame or "/pyarrow/" in frame:
            return f"{stage}: pandas"
    return f"{stage}: other (its own lines, sort, list building)"


def read_raw_profile(path: Path) -> dict[str, int]:
    """py-spy's raw output (``frame;frame;... count`` per line) as samples per category."""
    out: dict[str, int] = {}
    gc_line = _gc_line()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [f for f in stack.split(";") if not f.startswith("process ")]
        category = categorize(frames, gc_line)
        out[category] = out.get(category, 0) + int(count)
    return out


def profile_stream(spark: Any, folder: str, text: str, work: Path, rate: int = 200, system: str = "stream") -> dict:
    """``match_stream`` over ``folder`` with py-spy sampling every Python worker (each
    ``pyspark.daemon`` and what it forks), and the CPU seconds of the JVM over the run."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not os.path.exists(spy):
        return {"skipped": "py-spy is not installed (pip install py-spy)"}
    mine = _descendants(os.getpid())
    pythons = {p for p, cmd in mine if "pyspark.daemon" in cmd}
    parents = {p: parent for p, parent, _ in _processes()}
    daemons = [p for p in pythons if parents.get(p) not in pythons]  # the daemons, not their workers
    jvms = [p for p, cmd in mine if "java" in cmd.split(" ", 1)[0]]
    if not daemons:
        return {"skipped": "no pyspark.daemon process found (warm up first)"}
    spies = []
    for pid in daemons:
        out = work / f"py-spy-{pid}.txt"
        spies.append((out, subprocess.Popen(
            [spy, "record", "--pid", str(pid), "--subprocesses", "--rate", str(rate), "--nonblocking",
             "--format", "raw", "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
    time.sleep(1.0)  # py-spy attached
    jvm_before = sum(_cpu_s(p) for p in jvms)
    result = run_stream(spark, folder, text, system, work, f"profiled_{system.replace('-', '_')}")
    jvm_cpu = sum(_cpu_s(p) for p in jvms) - jvm_before
    samples: dict[str, int] = {}
    problems = []
    for out, proc in spies:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if out.exists():
            for k, v in read_raw_profile(out).items():
                samples[k] = samples.get(k, 0) + v
        else:
            problems.append(err.decode(errors="replace")[-500:])
    total = sum(samples.values())
    return {
        "files": len(os.listdir(folder)), "elapsed_s": result["elapsed_s"], "matches": result["matches"],
        "sample_rate_hz": rate, "python_cpu_s": round(total / rate, 2), "jvm_cpu_s": round(jvm_cpu, 2),
        "add_batch_ms_total": result.get("add_batch_ms_total"),
        "categories": {k: {"samples": v, "share": round(v / total, 4), "cpu_s": round(v / rate, 2)}
                       for k, v in sorted(samples.items(), key=lambda kv: -kv[1])} if total else {},
        **({"problems": problems} if problems else {}),
    }


# -------------------------------------------------------------------------------- the run


def measure(args: argparse.Namespace) -> dict:
    """Generate the input, warm every system up, measure each (``--repeat`` times, interleaved:
    the median kept), profile; the report."""
    systems = [s for s in SYSTEMS if s in args.systems]
    data = generate(args.data_dir, args.events, args.batch, args.keys, args.rate, args.seed)
    print(f"input: {data['events']} events in {data['files']} files of {data['batch']} "
          f"({data['bytes'] / 1e6:.1f} MB), {data['keys']} keys, {data['rate_events_per_s']:g} events/s "
          f"of event time", file=sys.stderr, flush=True)
    root = Path(data["root"])
    warmup = str(root / "warmup")
    text = query_text()
    started = datetime.now(timezone.utc)
    spark = spark_session()
    runs: dict[str, list[dict]] = {s: [] for s in systems}
    warm: dict[str, float] = {}
    failed: dict[str, str | None] = {s: unavailable(s) for s in systems}
    missing = {s for s in systems if failed[s] is not None}  # n/a here, not an error
    profile: dict = {}
    # the workers stay frozen once the gc.freeze() ablation ran: it comes after the others
    # and the profile, warm-up included
    groups = [[s for s in systems if s != "stream-gcfreeze"], [s for s in systems if s == "stream-gcfreeze"]]
    with tempfile.TemporaryDirectory(prefix="spaseq-spark-streaming-") as tmp:
        work = Path(tmp)
        for group in groups:
            for system in group:
                if failed[system] is None and system != "single":
                    warm[system], failed[system] = _warm_up(spark, system, warmup, text, work)
            for k in range(args.repeat):
                for system in group:
                    if failed[system] is not None:
                        continue
                    try:
                        result = _run(spark, system, data, text, work, k)
                    except Exception as exc:  # noqa: BLE001 (one system failing is a row, not the run)
                        failed[system] = _reason(exc)
                        print(f"{SYSTEMS[system]}: failed: {failed[system]}", file=sys.stderr, flush=True)
                        continue
                    runs[system].append(result)
                    print(f"{SYSTEMS[system]}: {result['elapsed_s']:.1f} s, {result['events_per_s']:,.0f} events/s, "
                          f"{result.get('matches')} matches", file=sys.stderr, flush=True)
            if group is groups[0] and args.profile and "stream" in systems and failed["stream"] is None:
                try:
                    profile = profile_stream(spark, str(root / "profile"), text, work)
                except Exception as exc:  # noqa: BLE001 (the measurements stand without it)
                    profile = {"skipped": _reason(exc)}
                print(f"profile: {json.dumps(profile)}", file=sys.stderr, flush=True)
    rows = [_median_row(system, runs[system]) if runs[system] else
            {"system": system, "label": SYSTEMS[system], "status": "n/a" if system in missing else "error",
             "reason": failed[system]}
            for system in systems]
    _compare(rows)
    return {
        "benchmark": "spark_streaming", "mode": args.mode, "query": text, "input": data,
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": _machine(spark), "spark_conf": _conf(spark), "warmup_s": warm, "runs": rows,
        "profile": profile, "note": NOTE,
    }


def unavailable(system: str) -> str | None:
    """Why ``system`` cannot run here, or None."""
    if system != "tws":
        return None
    import importlib.util

    from pyspark.sql import GroupedData

    if not hasattr(GroupedData, "transformWithStateInPandas"):
        return "transformWithStateInPandas needs PySpark >= 4.0"
    try:  # a submodule's spec imports its parent: no google package at all is an error here
        found = importlib.util.find_spec("google.protobuf") is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        return "transformWithStateInPandas needs protobuf (pip install protobuf)"
    return None


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]


def _warm_up(spark: Any, system: str, folder: str, text: str, work: Path) -> tuple[float, str | None]:
    """One run of ``system`` over the small warm-up file (Python workers started, the query
    compiled in them, the JVM's code paths warm); its seconds, and why it failed if it did."""
    start = time.perf_counter()
    problem = None
    try:
        if system == "batch":
            run_batch(spark, folder, text)
        else:
            run_stream(spark, folder, text, system, work, f"warm_{system.replace('-', '_')}")
    except Exception as exc:  # noqa: BLE001 (one system failing is a row, not the run)
        problem = _reason(exc)
    seconds = round(time.perf_counter() - start, 2)
    print(f"warm-up {system}: {seconds:.1f} s{f', failed: {problem}' if problem else ''}", file=sys.stderr,
          flush=True)
    return seconds, problem


def _run(spark: Any, system: str, data: dict, text: str, work: Path, k: int) -> dict:
    """One timed run of ``system`` over the whole input, with its rate."""
    root = Path(data["root"])
    if system == "batch":
        result = run_batch(spark, str(root / "parts"), text)
        result["events_per_s_match_only"] = data["events"] / result["match_s"]
    elif system == "single":
        result = run_single(str(root / "all.nq"), text)
    else:
        result = run_stream(spark, str(root / "parts"), text, system, work, f"run{k}_{system.replace('-', '_')}")
        if result.get("trigger_ms_total"):
            result["events_per_s_in_micro_batches"] = data["events"] / (result["trigger_ms_total"] / 1000)
    result["events_per_s"] = data["events"] / result["elapsed_s"]
    return result


NOTE = ("Rates are events of the input over wall-clock seconds (batch: read_events + match; "
        "streams: start() to the end of the availableNow query, every micro-batch of one file). "
        "xbatch = events/s / the batch's (issue 27's target for streaming: >= 0.5); xmatch = events/s / "
        "the batch's match alone (events / match_s, reading left out: the stricter ratio); xceil = "
        "events/s / the read-only stream's. add_batch_ms is Spark's durationMs.addBatch of a micro-batch (its "
        "job: reading, routing, the stateful step, the sink), rest_ms the other phases of "
        "triggerExecution (offsets, planning, WAL, commit). Matches are checked against the batch's "
        "by count and the exact sums of their starts and ends.")


def _median_row(system: str, results: list[dict]) -> dict:
    """The run with the median rate (all rates kept)."""
    ordered = sorted(results, key=lambda r: r["events_per_s"])
    row = {"system": system, "label": SYSTEMS[system], "status": "ok", **ordered[(len(ordered) - 1) // 2]}
    if len(results) > 1:
        row["repeats_events_per_s"] = [round(r["events_per_s"], 1) for r in results]
    return row


def _compare(rows: list[dict]) -> None:
    """Each row's ratios to the batch and to the read-only stream, and whether its matches are
    the batch's."""
    rate = {r["system"]: r["events_per_s"] for r in rows if r["status"] == "ok"}
    batch = next((r for r in rows if r["system"] == "batch" and r["status"] == "ok"), None)
    for r in rows:
        if r["status"] != "ok":
            continue
        r["x_batch"] = r["events_per_s"] / rate["batch"] if "batch" in rate else None
        r["x_batch_match_only"] = r["events_per_s"] / batch["events_per_s_match_only"] if batch else None
        r["x_ceiling"] = r["events_per_s"] / rate["read"] if "read" in rate else None
        if batch is not None and r["system"] not in ("batch", "read"):
            r["matches_agree"] = all(r[k] == batch[k] for k in ("matches", "sum_start", "sum_time"))


def _machine(spark: Any) -> dict:
    import pyspark

    load = os.getloadavg()
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
            "pyspark": pyspark.__version__, "master": spark.sparkContext.master,
            "load_average_at_end": [round(x, 2) for x in load]}


def _conf(spark: Any) -> dict:
    keys = ("spark.sql.shuffle.partitions", "spark.default.parallelism", "spark.sql.adaptive.enabled",
            "spark.sql.execution.arrow.maxRecordsPerBatch", PROVIDER)
    out = {}
    for k in keys:  # the effective value: the session's, else Spark's default
        try:
            out[k] = spark.conf.get(k)
        except Exception:  # noqa: BLE001 (no value and no default)
            out[k] = None
    return out


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def format_table(report: dict) -> str:
    """The results table, then where the streaming time goes."""
    header = ("system", "events", "matches", "s", "ev/s", "xbatch", "xmatch", "xceil", "addBatch ms", "rest ms",
              "note")
    lines = [header]
    for r in report["runs"]:
        if r["status"] != "ok":
            lines.append((r["label"], "-", "-", "-", "-", "-", "-", "-", "-", "-", f"{r['status']}: {r['reason']}"))
            continue
        note = []
        if r.get("matches_agree") is True:
            note.append("matches = batch's")
        elif r.get("matches_agree") is False:
            note.append("MATCHES DIFFER from the batch's")
        if r.get("late"):
            note.append(f"{r['late']} late")
        if r["system"] == "batch":
            note.append(f"read {r['read_s']:.1f} s + match {r['match_s']:.1f} s")
        lines.append((r["label"], str(report["input"]["events"]), "-" if r.get("matches") is None else str(r["matches"]),
                      f"{r['elapsed_s']:.1f}", _fmt(r["events_per_s"]),
                      "-" if r.get("x_batch") is None else f"{r['x_batch']:.2f}",
                      "-" if r.get("x_batch_match_only") is None else f"{r['x_batch_match_only']:.2f}",
                      "-" if r.get("x_ceiling") is None else f"{r['x_ceiling']:.2f}",
                      _fmt(r.get("add_batch_ms_median")), _fmt(r.get("rest_ms_median")), "; ".join(note)))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = ["  ".join([c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line[:-1], widths, strict=True))]
                     + [line[-1]]).rstrip() for line in lines]
    profile = report.get("profile") or {}
    if profile.get("categories"):
        out.append("")
        out.append(f"where match_stream's time goes (py-spy, {profile['files']} micro-batches, {profile['elapsed_s']:.1f} s "
                   f"wall): Python workers {profile['python_cpu_s']:.1f} CPU s, JVM {profile['jvm_cpu_s']:.1f} CPU s")
        for name, c in profile["categories"].items():
            out.append(f"  {c['share'] * 100:5.1f}%  {c['cpu_s']:6.2f} s  {name}")
    elif profile.get("skipped"):
        out.append(f"\nprofile skipped: {profile['skipped']}")
    return "\n".join(out)


def write_chart(report: dict, path: Path) -> str:
    """Events/s per system (the 0.5x batch target marked), the streams' micro-batch time (addBatch
    and the rest, medians) and, when profiled, where the streaming time goes."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "chart skipped: matplotlib is not installed (pip install -e '.[bench]')"
    rows = [r for r in report["runs"] if r["status"] == "ok"]
    if not rows:
        return "chart skipped: no successful measurements"
    profile = (report.get("profile") or {}).get("categories") or {}
    panels = 3 if profile else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.2), squeeze=False)
    ax = axes[0][0]
    labels = [r["label"].replace(" (", "\n(") for r in rows]
    ax.barh(range(len(rows)), [r["events_per_s"] for r in rows], color="#1f4e9c")
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    batch = next((r["events_per_s"] for r in rows if r["system"] == "batch"), None)
    if batch:
        ax.axvline(batch / 2, color="#d6336c", linestyle="--", label="0.5x batch (issue 27's target)")
        ax.legend(fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("events / s (log scale)")
    ax.set_title("throughput", fontsize=10)
    streams = [r for r in rows if r.get("add_batch_ms_median") is not None]
    ax = axes[0][1]
    ys = range(len(streams))
    add = [r["add_batch_ms_median"] for r in streams]
    ax.barh(ys, add, color="#1f4e9c", label="addBatch")
    ax.barh(ys, [r["rest_ms_median"] for r in streams], left=add, color="#7f7f7f", label="rest of the trigger")
    ax.set_yticks(list(ys), [r["label"].replace(" (", "\n(") for r in streams], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ms per micro-batch (median)")
    ax.set_title(f"micro-batches of {report['input']['batch']:,} events", fontsize=10)
    ax.legend(fontsize=7)
    if profile:
        ax = axes[0][2]
        names = list(profile)[:12]
        ax.barh(range(len(names)), [profile[n]["cpu_s"] for n in names], color="#2b8a3e")
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("Python worker CPU s (py-spy samples)")
        ax.set_title("match_stream: where the Python time goes", fontsize=10)
    machine = report["machine"]
    fig.suptitle(f"spaseq on Spark Structured Streaming ({report['input']['events']:,} events, "
                 f"{report['input']['keys']} keys; {machine['master']}, {machine['cpus']} CPUs, "
                 f"PySpark {machine['pyspark']})", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return f"chart: {path}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.spark_streaming", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help=f"{MODES['quick']['events']:,} events (3 micro-batches)")
    p.add_argument("--events", type=int, help=f"events in all (default {MODES['default']['events']:,})")
    p.add_argument("--batch", type=int, default=10_000, help="events per file, one file per micro-batch (%(default)s)")
    p.add_argument("--keys", type=int, default=256, help="distinct keys (%(default)s)")
    p.add_argument("--rate", type=float, default=20, help="events per second of event time (%(default)s)")
    p.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset of: %(default)s")
    p.add_argument("--repeat", type=int, default=1, help="measure each system N times, interleaved (median kept)")
    p.add_argument("--no-profile", dest="profile", action="store_false", help="no py-spy profile of match_stream")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--data-dir", type=Path, default=DATA, help="generated inputs cache (%(default)s)")
    p.add_argument("--out", type=Path, help="the JSON file (default: benchmarks/results/spark-streaming-*.json)")
    p.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    args = p.parse_args(argv)
    args.mode = "quick" if args.quick else "default"
    args.events = args.events or MODES[args.mode]["events"]
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if bad := [s for s in args.systems if s not in SYSTEMS]:
        p.error(f"unknown system(s) {', '.join(bad)}; expected: {', '.join(SYSTEMS)}")
    args.repeat = max(1, args.repeat)
    report = measure(args)
    out = args.out or RESULTS / f"spark-streaming-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(format_table(report))
    print(f"\nresults: {out}")
    if not args.no_chart:
        print(write_chart(report, out.with_suffix(".png")))
    return 0 if all(r.get("matches_agree") is not False and r["status"] != "error" for r in report["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
