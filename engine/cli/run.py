"""``spaseq run``: a query (and the queries it reads, ``--with``) over replay files, stream
description files or live input, results written as they complete.

User mistakes print ``FILE:LINE:COLUMN: message`` on stderr and exit with status 2, never
a traceback; matches found before an input error are still written.

The engine and the query's front end are imported when the command runs, not with the
parser: replay files' first pass starts before them, on a thread of its own, so reading
and loading overlap (docs/decisions.md 36)."""

from __future__ import annotations

import argparse
import contextlib
import glob
import logging
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import IO, TYPE_CHECKING

from spaseq.engine.cli.common import (
    add_engine_options,
    add_late_options,
    add_lateness_option,
    add_mqtt_options,
    engine_options,
    mqtt_settings,
    warn,
)
from spaseq.engine.cli.progress import Probe, Progress, progress_wanted
from spaseq.engine.errors import Location, SpaseqError, StreamError, UsageError
from spaseq.engine.output.arrow import ARROW_FORMATS, require_pyarrow
from spaseq.engine.output.native import FORMATS, native_writer, row_writer
from spaseq.engine.output.times import TIME_FORMATS

if TYPE_CHECKING:
    from spaseq.engine._native import ReplayReading
    from spaseq.engine.algebra import operators as A
    from spaseq.engine.api import Engine
    from spaseq.engine.events import Event
    from spaseq.engine.io.mqtt import MessageInlets, MqttClient, MqttSettings
    from spaseq.engine.matches import Match
    from spaseq.engine.output.derived import Derived

log = logging.getLogger(__name__)


def add_run_parser(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="evaluate a query over recorded streams")
    run.add_argument("query", help="SPAseq query file")
    run.add_argument("--stream", action="append", default=[], metavar="NAME=PATH",
                     help="replay file (TriG or N-Quads, optionally .gz) for stream NAME "
                          "(its IRI or its FROM STREAM name); repeatable")
    run.add_argument("--stream-file", metavar="FILE",
                     help="stream description file of the original SPAseq implementation")
    run.add_argument("--kb", action="append", default=[], metavar="[GRAPH-IRI=]PATH",
                     help="background knowledge file loaded into an in-memory store; repeatable")
    run.add_argument("--kb-store", metavar="DIR",
                     help="background knowledge: the current version of a store built by "
                          "'spaseq kb load' (opened read-only; a newer version is picked up)")
    run.add_argument("--format", choices=FORMATS, default=None,
                     help="table (default for SELECT), trig (default for CONSTRUCT: each result "
                          "as a timestamped graph, a replay file), jsonl, json, csv, tsv; for bulk "
                          "output, arrow (an Arrow IPC stream) or parquet (a file: needs --output), "
                          "one row per result with the columns of --spark-output (needs pyarrow)")
    run.add_argument("--with", dest="with_queries", action="append", default=[],
                     metavar="QUERY=IRI",
                     help="also run QUERY, whose results form the stream IRI that the main query "
                          "(or another --with query) reads with FROM STREAM; repeatable")
    run.add_argument("--materialize", metavar="DIR",
                     help="store every result of every query in an Oxigraph store in DIR "
                          "(spaseq vocabulary, queryable with SPARQL)")
    run.add_argument("--output", metavar="FILE", help="write results here instead of stdout")
    run.add_argument("--with-time", action="store_true",
                     help="json/csv/tsv: add _time and _start columns")
    run.add_argument("--events", choices=("full", "ids", "none"), default="full",
                     help="jsonl, arrow, parquet: each match's events as the contract says (full, "
                          "the default), their graph names only (ids), or no events member or "
                          "column (none: cheaper for many matches)")
    run.add_argument("--time-format", choices=TIME_FORMATS, default="input",
                     help="how results write times (_time/_start, jsonl's time_iso/start_iso, "
                          "--materialize's spaseq:time): input (default): xsd:dateTime in UTC for "
                          "a match whose events were all stamped with xsd:dateTime, xsd:decimal "
                          "seconds otherwise; dateTime or epoch: always that form")
    run.add_argument("--engine", choices=("nfa", "reference"), default="nfa",
                     help="nfa: the incremental automaton engine (default); reference: the direct, "
                          "slow implementation of the semantics, for checking")
    run.add_argument("--time-predicate", metavar="IRI",
                     help="predicate of the event timestamp triple (default prov:generatedAtTime)")
    run.add_argument("--input-format", choices=("auto", "trig", "nquads"), default="auto",
                     help="format of every --stream input, whatever its name says; auto (default): "
                          "from the file's extension (.trig, .nq, .nquads, each optionally .gz), and "
                          "for live streams ('-' or a named pipe) N-Quads unless the name ends in .trig")
    add_lateness_option(run)
    add_late_options(run)
    run.add_argument("--drop-late", dest="late", action="store_const", const="drop",
                     help="the default, --late drop (kept for older command lines)")
    run.add_argument("--late-output", metavar="FILE",
                     help="write every late event to FILE as it is dropped: TriG, each event a named "
                          "graph with its stream, time and the queries it was late for (so nothing "
                          "is lost)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="a live line on stderr (events read, events/s, event time reached, open "
                          "partial matches, matches so far); default: only when stderr is a terminal")
    run.add_argument("--stats", nargs="?", const="text", choices=("text", "json"), default=None,
                     help="a final summary on stderr (events, matches, time taken, events/s, event "
                          "time reached, peak of open partial matches); --stats=json: one JSON object")
    run.add_argument("--spark", nargs="?", const="local[*]", default=None, metavar="MASTER",
                     help="run on Spark (MASTER: local[*] by default, local[N], spark://HOST:PORT...): "
                          "the replay files read by Spark (any path or URI it reads, folders too), "
                          "the query split as 'spaseq explain' says, the results written exactly as "
                          "without --spark")
    run.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                     help="with --spark: a Spark setting (spark.executor.memory=4g...); repeatable")
    run.add_argument("--spark-output", metavar="DIR",
                     help="with --spark: write the results as Parquet in DIR (one row per result: "
                          "_number, _start, _time, _dated, _events and a column per variable), for "
                          "results too large for one file")
    add_mqtt_options(run, "the query file, or a --with query's file")
    add_engine_options(run)



@dataclass
class Input:
    """Events read for one run and the first input error, if any."""

    events: list[Event] = field(default_factory=list)
    errors: list[tuple[StreamError, Decimal | float]] = field(default_factory=list)  # and its file's last time

    def usable(self) -> tuple[list[Event], bool]:
        """Events safe to evaluate and whether the input ended normally: after an error,
        only events up to the last timestamp read from the failing file."""
        if not self.errors:
            return self.events, True
        cutoff = min(t for _, t in self.errors)
        return [e for e in self.events if e.time <= cutoff], False


def run_run(args: argparse.Namespace) -> int:
    reading = _start_reading(args)
    from spaseq.engine.events import Event
    from spaseq.engine.language.query import load_query

    query = load_query(args.query)
    _check_inputs(args)
    warn(query.warnings)
    if args.late_output and args.engine == "reference":
        raise UsageError("--late-output needs the nfa engine: the reference evaluator reads recorded "
                         "input in time order and judges no event late")
    withs = _load_with(args)
    _check_composition(args, query, withs)
    _output_format(args, query)
    inputs = _input_view(query, withs)
    mqtt = mqtt_settings(args)
    args.published = _published(args, mqtt)
    if args.spark is not None or args.spark_output:
        return _run_spark(args, query, withs, inputs)
    if mqtt is not None and (args.engine == "reference" or args.stream_file):
        raise UsageError("--mqtt needs the nfa engine and --stream inputs (not --engine reference, "
                         "not --stream-file)")
    if any(_is_live(spec.partition("=")[2]) for spec in args.stream) or (mqtt is not None and mqtt.subscribe):
        return _run_live(args, query, withs, inputs, mqtt)
    if args.engine != "reference" and not args.stream_file:
        return _run_replay(args, query, withs, inputs, reading, mqtt)
    inp = _read_input(args, inputs)
    events, complete = inp.usable()
    if not events and inp.errors:  # nothing to evaluate: the error alone, no empty table
        raise inp.errors[0][0]
    kb = _load_kb(args, query)
    _warn_missing(inputs, {e.stream for e in inp.events} | {iri for iri, _ in _replay_specs(args, inputs)})
    with _open_output(args.output) as out:
        writer, write = _sink(args, query, out, args.engine == "reference" or _python_rows(args))
        writer.start()
        if args.engine == "reference":
            from spaseq.engine.reference.evaluator import evaluate  # the oracle: not on run's way

            if withs:
                raise UsageError("--with (composed queries) needs the nfa engine, not --engine reference")
            found = evaluate(query, events, kb, end_of_input=complete)
            _write_found(args, query, found, write)
            with _watch(args, lambda runs: (len(found), None)) as progress:
                if progress is not None:
                    progress.tick(len(events), max((e.time for e in events), default=None))
        else:
            # the input is read whole: a query over events that last is planned for them
            args.intervals = args.intervals or any(e.start != e.time for e in events)
            engine = _engine(args, query, withs, kb, write, writer=writer)
            ordered = sorted(events, key=Event.sort_key)
            with _watch(args, _probe(engine, args), engine) as progress:
                engine.run(ordered if progress is None else progress.events(ordered, _event_time),
                           end_of_input=complete)
        writer.finish(stopped=not complete)
    if inp.errors:
        raise inp.errors[0][0]
    return 0


def _load_with(args: argparse.Namespace) -> list[tuple[A.Query, str]]:
    """The ``--with QUERY=IRI`` queries and their output stream IRIs."""
    out = []
    for spec in args.with_queries:
        path, sep, iri = spec.rpartition("=")
        if not sep or not path or not iri:
            raise UsageError(f"--with {spec}: expected QUERY=IRI (the stream IRI its results form)")
        if ":" not in iri or iri.startswith("<"):
            raise UsageError(f"--with {spec}: {iri!r} is not an absolute IRI (write it without <>)")
        from spaseq.engine.language.query import load_query

        q = load_query(path)
        warn(q.warnings)
        out.append((q, iri))
    return out


def _check_composition(args: argparse.Namespace, query: A.Query,
                       withs: list[tuple[A.Query, str]]) -> None:
    """Reject cycles and reused output IRIs before any input is read."""
    from spaseq.engine.composition import Composition

    composition = Composition()
    for q, iri in [*withs, (query, _output_iri(args))]:
        composition.check(q, iri)
        composition.add(q, iri)


def _input_view(query: A.Query, withs: list[tuple[A.Query, str]]) -> A.Query:
    """The main query with the input streams of every query run (derived streams left out),
    for resolving --stream names: the main query's short names first."""
    derived = {iri for _, iri in withs}
    streams = {n: s for n, s in query.streams.items() if s not in derived}
    for q, _ in withs:
        for n, s in q.streams.items():
            if s not in derived and s not in streams.values():
                streams.setdefault(n, s)
    return replace(query, streams=streams)


def _output_iri(args: argparse.Namespace) -> str:
    """The main query's output stream IRI: its file's ``file:`` URI."""
    from pathlib import Path

    return Path(args.query).resolve().as_uri()


def _sink(args: argparse.Namespace, query: A.Query, out: IO[str], python_rows: bool = False,
          thread: bool = False):
    """The writer for ``--format`` (``output.native``, on a thread of its own with ``thread``
    when ``out`` allows it) and, when the results come through Python (``python_rows``), the
    function that writes one (a ``Derived``); None when they go straight from the native
    runtime to the writer."""
    fmt = _output_format(args, query)
    writer = native_writer(fmt, query, _variables(query), args.with_time, out, args.time_format,
                           thread, _output_iri(args), args.events)
    if not python_rows:
        log.debug("results written natively (--format %s)", fmt)
        return writer, None
    log.debug("results found in Python, written natively (--format %s)", fmt)
    write_row = row_writer(writer)

    def write(derived: Derived) -> None:
        write_row(derived.row)

    return writer, write


def _output_format(args: argparse.Namespace, query: A.Query) -> str:
    """The run's ``--format`` (its default: the table, TriG for CONSTRUCT), checked with the
    options that depend on it before any output is opened (UsageError)."""
    fmt = args.format or ("trig" if query.match.is_construct else "table")
    if args.events != "full" and fmt not in ("jsonl", *ARROW_FORMATS):
        raise UsageError(f"--events {args.events} is for --format jsonl, arrow or parquet (the other formats "
                         "list no events)")
    if fmt in ARROW_FORMATS:
        require_pyarrow(fmt)
        if args.output is None and (fmt == "parquet" or sys.stdout.isatty()):
            raise UsageError(f"--format {fmt} writes binary " + (
                "to a file: give --output FILE" if fmt == "parquet" else "data: give --output FILE or a pipe"))
    return fmt


def _variables(query: A.Query) -> list[str]:
    """The variables of the query's results, in their columns' order: SELECT's, the CONSTRUCT
    template's (its solutions), or for ``SELECT *`` every GPM's, by name."""
    if query.match.is_construct:
        from spaseq.engine.output.construct import template_variables

        return list(template_variables(query.match.template))
    if query.match.variables is not None:
        return list(query.match.variables)
    return sorted({v for ev in query.events.values() for v in ev.variables})


def _python_rows(args: argparse.Namespace) -> bool:
    """Whether this run's results come through Python (as ``Derived`` events) rather than
    straight from the native runtime: --materialize takes them there, and so does
    ``--publish`` of the main query."""
    return bool(args.materialize) or _output_iri(args) in getattr(args, "published", {})


def _engine(args: argparse.Namespace, query: A.Query, withs: list[tuple[A.Query, str]], kb,
            write, writer=None, client: MqttClient | None = None) -> Engine:
    """The engine of a run: the --with queries and the main query registered, the main
    query's results going to ``write``, or written natively by ``writer`` when ``write`` is
    None, and those ``--publish`` names published by ``client``; late events treated as
    ``--late`` says, written to ``--late-output``."""
    from spaseq.engine.api import Engine

    engine = Engine(kb, options=engine_options(args), late=args.late, late_output=_late_output(args),
                    materialize=args.materialize, time_format=args.time_format,
                    drop_unread=True,  # a --stream-file may describe more streams
                    lateness=args.lateness, idle_timeout=args.idle_timeout)
    handles = [engine.register(q, keep=False, output=iri) for q, iri in withs]
    handle = engine.register(query, keep=False, output=_output_iri(args), on_output=write)
    if write is None:
        handle.runtime.sink = writer
    if client is not None:
        for h in [*handles, handle]:
            for topic in getattr(args, "published", {}).get(h.output.iri, ()):  # type: ignore[union-attr]
                h.output.listeners.append(_publisher(client, topic, h.query, args.time_format))  # type: ignore[union-attr]
    return engine


def _published(args: argparse.Namespace, mqtt: MqttSettings | None) -> dict[str, list[str]]:
    """The topics ``--publish QUERY=TOPIC`` gives each query's results, by the query's output
    IRI; QUERY is the query file (or the file of a ``--with`` query, or its output IRI).
    UsageError for a QUERY that is none of the run's."""
    if mqtt is None:
        return {}
    named = [(args.query, _output_iri(args))]
    for spec in args.with_queries:
        path, _, iri = spec.rpartition("=")
        named.append((path, iri))
    out: dict[str, list[str]] = {}
    for query, topic in mqtt.publish:
        iri = next((iri for path, iri in named if query in (path, iri) or _same_file(query, path)), None)
        if iri is None:
            files = ", ".join(dict.fromkeys(path for path, _ in named))
            raise UsageError(f"--publish {query}={topic}: {query} is none of the run's queries ({files})")
        out.setdefault(iri, []).append(topic)
    return out


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _publisher(client: MqttClient, topic: str, query: A.Query, time_format: str):
    """A listener publishing each result of ``query`` to ``topic`` as its jsonl object (the
    jsonl contract's writer, ``output.native.jsonl_line``; a CONSTRUCT query's with the
    variables its template uses, as ``--format jsonl`` writes them)."""
    from spaseq.engine.matches import Row
    from spaseq.engine.output.native import jsonl_line

    variables = _variables(query) if query.match.is_construct else None

    def publish(derived: Derived) -> None:
        row = derived.row
        if variables is not None:
            row = Row({v: row.bindings[v] for v in variables if v in row.bindings}, row.match)
        client.publish(topic, jsonl_line(row, time_format))

    return publish


@contextlib.contextmanager
def _mqtt_client(mqtt: MqttSettings | None, inlets: MessageInlets | None = None) -> Iterator[MqttClient | None]:
    """The ``--mqtt`` broker's client (None without it), connecting in the background and
    handing messages to ``inlets``; on leaving, the subscriptions' sources closed, then the
    matches published and not yet acknowledged waited for (a few seconds at most)."""
    if mqtt is None:
        yield None
        return
    from spaseq.engine.io.mqtt import MqttClient

    client = MqttClient(mqtt, inlets)
    client.start()
    try:
        yield client
    finally:
        if inlets is not None:
            inlets.close()
        client.close()


@contextlib.contextmanager
def _until_signalled(inlets: MessageInlets | None) -> Iterator[None]:
    """With MQTT subscriptions, SIGINT and SIGTERM end their input (the sources closed on a
    thread of their own, never waiting in a handler); the run then writes what it has and
    exits with status 0 once its other live sources have ended too. A second signal acts as
    it would have (Ctrl-C: status 130)."""
    import signal
    import threading

    if inlets is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGINT, signal.SIGTERM)

    def stop(signum: int, frame: object) -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.info("mqtt: %s: the input ends", signal.Signals(signum).name)
        threading.Thread(target=inlets.close, name="spaseq-mqtt-stop", daemon=True).start()

    previous = {sig: signal.signal(sig, stop) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _late_output(args: argparse.Namespace) -> str | None:
    """``--late-output FILE``, checked: UsageError when FILE is a directory (the engine says
    when it cannot be created)."""
    path = args.late_output
    if path is not None and os.path.isdir(path):
        raise UsageError(f"--late-output {path}: a directory, not a file")
    return path


def _late_counts(engine: Engine, args: argparse.Namespace) -> dict[str, int]:
    """Each query's late events dropped (``QueryHandle.late``), by how the command line named
    it: the main query's file, then each ``--with`` query's (its output IRI added when two
    share a file)."""
    named = [(args.query, _output_iri(args))]
    for spec in args.with_queries:
        path, _, iri = spec.rpartition("=")
        named.append((path, iri))
    files = [f for f, _ in named]
    counts = {}
    for file, iri in named:
        handle = engine.query(iri)
        if handle is not None:
            counts[file if files.count(file) == 1 else f"{file} <{iri}>"] = handle.late
    return counts


def _note_late(engine: Engine, args: argparse.Namespace) -> None:
    """The note after a run that dropped late events: how many, per query when several ran,
    and where they were written."""
    counts = _late_counts(engine, args)
    if not any(counts.values()):
        return
    where = f" (written to {args.late_output})" if args.late_output else ""
    if len(counts) == 1:
        log.info("dropped %d late event(s)%s", next(iter(counts.values())), where)
    else:
        per_query = ", ".join(f"{name} {n}" for name, n in counts.items())
        log.info("dropped late events: %s%s", per_query, where)


def _write_found(args: argparse.Namespace, query: A.Query, matches: Iterable[Match], write) -> None:
    """Matches found elsewhere (the reference evaluator's, or Spark's, in the engine's order)
    through the same output: projected, past DISTINCT and numbered here."""
    from spaseq.engine.matches import project
    from spaseq.engine.output.derived import QueryOutput

    output = QueryOutput(query, _output_iri(args))
    output.listeners.append(write)
    materializer = None
    if args.materialize:
        from spaseq.engine.output.materialize import Materializer

        materializer = Materializer(args.materialize, args.time_format)
        materializer.add_query(output.iri, query)
        output.listeners.append(materializer)
    output.rows(project(matches, query.match.variables, query.match.distinct))
    if materializer is not None:
        materializer.close()


def _run_spark(args: argparse.Namespace, query: A.Query, withs: list[tuple[A.Query, str]],
               inputs: A.Query) -> int:
    """``--spark``: the replay files read by Spark, matched by one engine per part of the input
    the plan allows (``spaseq.spark``), the matches merged in the engine's order and written as
    without ``--spark`` (or as Parquet with ``--spark-output``)."""
    from spaseq.engine.kb.session import require_pyspark

    require_pyspark("queries on Spark (--spark)", ("pyspark", "pandas", "pyarrow"))
    _check_spark_options(args, withs)
    specs = _replay_specs(args, inputs)
    _warn_missing(inputs, {iri for iri, _ in specs})
    kb = _load_kb(args, query)  # checked (and its warnings given) here, loaded again by each executor
    from spaseq.engine.compile.planner import plan_query
    from spaseq.engine.compile.splitting import NONE

    split = plan_query(query, engine_options(args)).split
    if split.kind == NONE:  # said, so that a user does not wait for a parallelism that is not there
        log.info("note: %s", split.why)
    import spaseq.spark as on_spark
    from spaseq.spark.results import ordered_matches, write_parquet

    streams: dict[str, list[str]] = {}
    for iri, path in specs:
        streams.setdefault(iri, []).append(path)
    spark, own = _spark_session(args, [path for _, path in specs])
    events = None
    try:
        events = on_spark.read_events(spark, streams, time_predicate=args.time_predicate,
                                      format=_input_format(args))
        found = on_spark.match(events, query, kb=args.kb, kb_store=kb if args.kb_store else None,
                               options=engine_options(args))
        if args.spark_output:
            if os.path.exists(args.spark_output):
                raise UsageError(f"--spark-output {args.spark_output}: already exists (give a new folder)")
            count = write_parquet(found, args.spark_output, _variables(query), query.match.distinct)
            log.info("%d result(s) written to %s", count, args.spark_output)
            return 0
        with _open_output(args.output) as out:
            writer, write = _sink(args, query, out, True)
            writer.start()
            _write_found(args, query, ordered_matches(found), write)
            writer.finish()
    finally:
        if own:
            spark.stop()
        elif events is not None:  # the session goes on: the events it cached go
            events.unpersist()
    return 0


def _spark_session(args: argparse.Namespace, paths: list[str]):
    """The session of a ``--spark`` run and whether the run started it (a session already
    running in this process, the Python API's, is used and left running)."""
    from pyspark.sql import SparkSession

    from spaseq.engine.kb.session import cluster_shuffle_partitions, parse_conf, spark_session

    existing = SparkSession.getActiveSession()
    sizes = [os.path.getsize(f) for path in paths for f in _files(path)]
    master, conf = args.spark or "local[*]", parse_conf(args.spark_conf)
    spark = spark_session(master, conf, sum(sizes) or None, app="spaseq", largest_file=max(sizes, default=0) or None)
    if existing is None and not master.startswith("local") and "spark.sql.shuffle.partitions" not in conf:
        cores = spark.sparkContext.defaultParallelism  # the executors' cores, once they registered
        spark.conf.set("spark.sql.shuffle.partitions", str(cluster_shuffle_partitions(sum(sizes) or None, cores)))
    return spark, existing is None


def _files(path: str) -> list[str]:
    """The local files a ``--stream`` path names (a file, a glob, or a folder's files)."""
    out = []
    for found in glob.glob(path):
        if os.path.isdir(found):
            out += [os.path.join(root, f) for root, _, files in os.walk(found) for f in files]
        elif os.path.isfile(found):
            out.append(found)
    return out


def _check_spark_options(args: argparse.Namespace, withs: list) -> None:
    """UsageError for what ``--spark`` does not do."""
    refused = [(withs, "--with (composed queries)"), (args.engine == "reference", "--engine reference"),
               (args.mqtt, "--mqtt"),
               (args.stream_file, "--stream-file"), (args.late_output, "--late-output"),
               (args.progress, "--progress (Spark's web UI shows a job's progress)"), (args.stats, "--stats"),
               (args.spark_output and (args.output or args.format or args.materialize),
                "--output, --format or --materialize with --spark-output (Parquet is the output)")]
    for given, what in refused:
        if given:
            raise UsageError(f"{what}: not with --spark")
    for _, _, path in _stream_specs(args):
        if path == "-":
            raise UsageError("--spark reads recorded streams: '-' (standard input) is a live stream")


def _stream_specs(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """The ``--stream NAME=PATH`` options as (option, name, path)."""
    out = []
    for spec in args.stream:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise UsageError(f"--stream {spec}: expected NAME=PATH")
        out.append((spec, name, path))
    return out


def _is_live(path: str) -> bool:
    """'-' (stdin) or a named pipe: read incrementally, not as a recording."""
    if path == "-":
        return True
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _run_live(args: argparse.Namespace, query: A.Query, withs: list[tuple[A.Query, str]],
              inputs: A.Query, mqtt: MqttSettings | None = None) -> int:
    """Push events from live sources as they complete; write each match immediately. Read
    natively (decision 46) and fed to the native engine whole (``Engine.run_live``),
    composed queries (``--with``) included; MQTT messages (``--subscribe``) are sources of
    it too, each message read whole by the native reader (decision 74)."""
    from spaseq.engine.io.mqtt import MessageInlets, Refused
    from spaseq.engine.vocab import GENERATED_AT_TIME

    if args.stream_file:
        raise UsageError("--stream-file cannot be combined with a live stream ('-' or a pipe)")
    sources = []
    for spec, name, path in _stream_specs(args):
        if not _is_live(path):
            raise UsageError(f"--stream {spec}: a replay file cannot be combined with live streams")
        sources.append((_stream_iri(inputs, name), path, _live_format(path, args.input_format)))
    if sum(1 for _, path, _ in sources if path == "-") > 1:
        raise UsageError("only one stream can read standard input")
    refused = Refused()
    inlets = None
    if mqtt is not None and mqtt.subscribe:
        inlets = MessageInlets([(topic, _stream_iri(inputs, name, f"--subscribe {topic}=")) for topic, name in mqtt.subscribe],
                               refused, _input_format(args))
    kb = _load_kb(args, query)
    predicate = args.time_predicate or GENERATED_AT_TIME.value
    # the signals are ours before the client connects (it says when it has subscribed)
    with _until_signalled(inlets), _open_output(args.output) as out, _mqtt_client(mqtt, inlets) as client:
        writer, write = _sink(args, query, out, _python_rows(args))
        writer.start()
        engine = _engine(args, query, withs, kb, write, writer=writer, client=client)
        with _watch(args, _probe(engine, args), engine) as progress:
            try:
                error = engine.run_live(sources, predicate, progress=None if progress is None else progress.tick,
                                        inlets=inlets)
            except SpaseqError:  # a late event under --late error: the matches before it written
                writer.finish(stopped=True)
                raise
        writer.finish(stopped=error is not None)
    _note_late(engine, args)
    summary = refused.summary()
    if summary is not None:
        log.info("%s", summary)
    if error is not None:
        raise error
    return 0


def _live_format(path: str, given: str) -> str:
    """The format a live stream is read in: ``--input-format``'s, else its name's (``.trig``,
    ``.nq``, ``.nquads``), else ``auto``: TriG when its first line can only be TriG's (a
    prefix, a brace, a prefixed name), N-Quads otherwise (decision 76)."""
    if given != "auto":
        return given
    name = path.lower()
    if name.endswith(".trig"):
        return "trig"
    if name.endswith((".nq", ".nquads")):
        return "nquads"
    return "auto"


def _stream_iri(query: A.Query, name: str, option: str = "--stream ") -> str:
    if name.startswith("<") and name.endswith(">"):
        name = name[1:-1]
    if name in query.streams:
        return query.streams[name]
    if name in query.streams.values():
        return name
    known = ", ".join(f"{n} <{iri}>" for n, iri in query.streams.items())
    raise UsageError(f"{option}{name}: the query has no such stream (it has: {known})")


def _start_reading(args: argparse.Namespace) -> ReplayReading | None:
    """The first pass over the replay files, started now on a thread of its own when the run
    will read them natively (``_run_replay``): it reads while the engine is imported and the
    query compiled. Its errors wait for ``run_replay``, so a query's errors still come first."""
    if (args.engine == "reference" or args.stream_file or args.with_queries or not args.stream
            or args.spark is not None or args.spark_output or args.subscribe):
        return None
    try:
        paths = [path for _, _, path in _stream_specs(args)]
    except UsageError:  # told where it was before, after the query's own errors
        return None
    if any(_is_live(path) for path in paths):
        return None
    from spaseq.engine._native import ReplayReading
    from spaseq.engine.vocab import GENERATED_AT_TIME

    # one file into an output file of ours (which a refused speculation can rewind; nothing
    # materialised or published elsewhere): read once, its events fed as its first pass judges them
    # (decision 47)
    speculate = len(paths) == 1 and args.output is not None and not args.materialize and not args.publish and (
        not os.path.exists(args.output) or os.path.isfile(args.output))
    return ReplayReading(paths, args.time_predicate or GENERATED_AT_TIME.value,
                         format=_input_format(args),
                         speculate=speculate)


def _run_replay(args: argparse.Namespace, query: A.Query, withs: list[tuple[A.Query, str]],
                inputs: A.Query, reading: ReplayReading | None = None, mqtt: MqttSettings | None = None) -> int:
    """The query (and the ``--with`` queries it reads, ``inputs`` the streams of them all)
    over replay files: read natively, merged by time in bounded memory and fed to the native
    engine as they are read (``Engine.run_replay``; the core runs composed queries too);
    ``reading``: their first pass, started ahead (``_start_reading``); with ``--publish``,
    the results published too."""
    from spaseq.engine.api import SpeculationFailed

    specs = _replay_specs(args, inputs)
    kb = _load_kb(args, query)
    _warn_missing(inputs, {iri for iri, _ in specs})
    with _open_output(args.output) as out, _mqtt_client(mqtt) as client:
        try:
            error = _replay_into(args, query, withs, specs, kb, out, reading, client)
        except SpeculationFailed:  # the file is not read as written: its matches found again
            log.debug("%s is not read as it is written: its matches are found again", specs[0][1])
            if out is sys.stdout or not out.seekable():
                raise RuntimeError("a speculative reading into an output that cannot be rewound") from None
            out.flush()
            out.seek(0)
            out.truncate()
            error = _replay_into(args, query, withs, specs, kb, out, None, client)
    if error is not None:
        raise error
    return 0


def _replay_into(args: argparse.Namespace, query: A.Query, withs: list[tuple[A.Query, str]],
                 specs: list[tuple[str, str]], kb, out: IO[str],
                 reading: ReplayReading | None, client: MqttClient | None = None) -> SpaseqError | None:
    """One run of ``_run_replay``'s query over its files into ``out``: its input's error, if
    any (SpeculationFailed from a speculative ``reading`` that was refused)."""
    from spaseq.engine.vocab import GENERATED_AT_TIME

    # a replay run's rows are spelled and written on a thread of their own (nothing else
    # writes to ``out`` while it runs; a live run writes each match before the next wait)
    writer, write = _sink(args, query, out, _python_rows(args), thread=True)
    try:
        writer.start()
        engine = _engine(args, query, withs, kb, write, writer=writer, client=client)
        with _watch(args, _probe(engine, args), engine) as progress:
            error = engine.run_replay(specs, time_predicate=args.time_predicate or GENERATED_AT_TIME.value,
                                      format=_input_format(args),
                                      progress=None if progress is None else progress.tick,
                                      reading=reading)
        writer.finish(stopped=error is not None)
    except BaseException:
        # the rows handed to the writing thread written before going on
        with contextlib.suppress(OSError):
            writer.close()
        raise
    return error


def _replay_specs(args: argparse.Namespace, query: A.Query) -> list[tuple[str, str]]:
    """(stream IRI, path) per ``--stream NAME=PATH``; UsageError without any input."""
    if not args.stream and not args.stream_file:
        raise UsageError("no input: give --stream NAME=PATH or --stream-file FILE")
    return [(_stream_iri(query, name), path) for _, name, path in _stream_specs(args)]


@contextlib.contextmanager
def _watch(args: argparse.Namespace, probe: Probe, engine: Engine | None = None) -> Iterator[Progress | None]:
    """The run's progress (None when neither the line nor ``--stats`` is asked for: nothing
    is counted then); on leaving, the line cleared, even when the run stops with an error
    (whose message then starts a clean line), and after a run that ended, the summary."""
    show = progress_wanted(args.progress)
    progress = Progress(sys.stderr, show, probe) if show or args.stats is not None else None
    try:
        yield progress
    finally:
        stats = None
        if progress is not None:
            stats = (progress.finish(engine.dropped_late, _late_counts(engine, args)) if engine is not None
                     else progress.finish())
    if stats is not None and args.stats is not None:
        print(stats.json() if args.stats == "json" else f"spaseq: {stats.text()}", file=sys.stderr)


def _probe(engine: Engine, args: argparse.Namespace) -> Probe:
    """(matches, open runs when asked) of the run's main query, for ``Progress``."""
    iri = _output_iri(args)

    def probe(runs: bool) -> tuple[int, int | None]:
        handle = engine.query(iri)  # looked up each time: compaction replaces its runtime
        assert handle is not None  # the run's main query is registered under this IRI
        runtime = handle.runtime
        return runtime.stats["matches"], runtime.footprint()["waiting_runs"] if runs else None

    return probe


def _event_time(item: Event | SpaseqError) -> Decimal | None:
    """An arrival's time for ``Progress`` (None for a read error)."""
    return None if isinstance(item, SpaseqError) else item.time


def _check_inputs(args: argparse.Namespace) -> None:
    """StreamError for a ``--stream`` replay file or the ``--stream-file`` that cannot be read
    at all (no such file, a directory, a name that tells no format, not readable), found
    before any warning is given or any output opened: such a run has nothing to write
    (decision 76). Live streams are read as they come, and ``--spark`` reads paths Spark
    knows (URIs, folders)."""
    if args.spark is not None or args.spark_output:
        return
    from spaseq.engine._native import LocatedError, check_replay_file
    from spaseq.engine.io.native_events import stream_error

    if args.stream_file:  # the description file itself (its own lines' errors come in order)
        from spaseq.engine.io.streamfile import parse_description

        error = parse_description(args.stream_file)[1]
        if error is not None and error.location is not None and error.location.line is None:
            raise error
    for _, _, path in _stream_specs(args):
        if not _is_live(path):
            try:
                check_replay_file(path, _input_format(args))
            except LocatedError as exc:
                raise stream_error(exc) from None


def _warn_missing(query: A.Query, given: set[str]) -> None:
    """A warning for each of the query's streams no input gives events of."""
    for name, iri in query.streams.items():
        if iri not in given:
            log.warning("stream %s <%s> has no input", name, iri, extra={"location": Location(query.file)})


def _read_input(args: argparse.Namespace, query: A.Query) -> Input:
    """Every event of the run's inputs, in memory: the replay files' as the native reader
    merges them (``Engine.run_replay``'s events; after a file's error, those up to its last
    time), then the stream description file's, numbered after them."""
    from spaseq.engine.io.native_events import read_replay_files
    from spaseq.engine.io.streamfile import read_stream_description

    inp = Input()
    specs = _replay_specs(args, query)
    seq = 0
    if specs:
        events, error = read_replay_files(specs, args.time_predicate, _input_format(args))
        inp.events.extend(events)
        if error is None:
            seq = len(events) + len(specs)  # each file's count plus one, as they are numbered
        else:  # every file cut at the failing one's last time: the latest event read
            inp.errors.append((error, max((e.time for e in events), default=float("-inf"))))
            seq = max((e.seq for e in events), default=-1) + 1
    if args.stream_file:
        res = read_stream_description(args.stream_file, drop_late=args.late == "drop")
        if res.dropped_late:
            log.info("dropped %d late event(s)", res.dropped_late)
        offset = seq
        inp.events.extend(_renumber(res.events, offset))
        if res.error is not None:
            inp.errors.append((res.error, max((e.time for e in res.events), default=float("-inf"))))
    return inp


def _input_format(args: argparse.Namespace) -> str | None:
    """Every replay file's format (``--input-format``), or None: each name's."""
    return None if args.input_format == "auto" else args.input_format


def _renumber(events: list[Event], offset: int) -> list[Event]:
    if offset == 0:
        return events
    from dataclasses import replace

    return [replace(e, seq=e.seq + offset) for e in events]


def _load_kb(args: argparse.Namespace, query: A.Query):
    if args.kb_store:
        return _open_kb_store(args, query)
    if not args.kb:
        for iri in query.graph_iris():
            log.warning("GRAPH <%s> is used but no knowledge base was given (--kb): it matches "
                        "nothing", iri, extra={"location": Location(query.file)})
        return None
    from spaseq.engine.io.kb import load_kb, parse_kb_option

    kb = load_kb([parse_kb_option(text) for text in args.kb], query.graph_iris())
    for iri in kb.missing(query.graph_iris()):
        log.warning("GRAPH <%s> names a graph the knowledge base does not have", iri,
                    extra={"location": Location(query.file)})
    return kb.store


def _open_kb_store(args: argparse.Namespace, query: A.Query):
    """The current version of a ``spaseq kb`` store, read-only (a KbStore the engine follows)."""
    from spaseq.engine.kb.reader import KbStore

    if args.kb:
        raise UsageError("give either --kb files or one --kb-store directory, not both")
    kb = KbStore(args.kb_store)
    present = {g.value for g in kb.graphs()}
    for iri in dict.fromkeys(query.graph_iris()):
        if iri not in present:
            log.warning("GRAPH <%s> names a graph the knowledge-base store (version %s) does not "
                        "have", iri, kb.version, extra={"location": Location(query.file)})
    return kb


@contextlib.contextmanager
def _open_output(path: str | None):
    if path is None:
        yield sys.stdout
        return
    try:
        handle: IO[str] = open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise UsageError(f"--output {path}: {exc.strerror}") from None
    with handle:
        yield handle

