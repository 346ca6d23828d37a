"""Replay files read by Spark into a DataFrame of events (``read_events``), and such rows back
into the engine's ``Event``s. Each file is read whole on an executor by the native replay
reader (``io.native_events.read_batch``: TriG or N-Quads, gzip undone first, times as
``spaseq run`` reads them); the events are then numbered in ``spaseq run``'s order: by time,
ties by the input's place among the inputs, then by file name, then by first appearance."""

from __future__ import annotations

import glob
import gzip
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from pyoxigraph import BlankNode, NamedNode

from spaseq.engine.errors import Location, SpaseqError, StreamError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.native_events import graph_node, read_batch
from spaseq.engine.io.parsing import extension, strip_gz

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: The events DataFrame: its stream, time (exact seconds), whether the time was an
#: xsd:dateTime, its number in the streamset's order, its graph name and its triples, both in
#: N-Triples (the triples one per line).
EVENT_SCHEMA = ("stream string, time decimal(38,9), dated boolean, seq long, graph string, "
                "triples string")

#: The replay reader's formats by file extension (after a ``.gz``).
FORMATS = {"trig": "trig", "nq": "nquads", "nquads": "nquads"}

#: nanoseconds per second, as the exact divisor of the native reader's times
NS = Decimal(1_000_000_000)


def replay_format(path: str, format: str | None = None) -> str:
    """The replay format of ``path`` (``format`` when given), or UsageError."""
    if format is not None:
        return format
    found = FORMATS.get(extension(path))
    if found is None:
        raise UsageError(f"{path}: a replay file is TriG (.trig) or N-Quads (.nq), maybe gzipped "
                         f"(.gz); give the format for {strip_gz(path).rsplit('/', 1)[-1]!r}")
    return found


def file_events(item: tuple[str, bytes], given: str, stream: str, rank: int, format: str | None,
                 time_predicate: str | None) -> Iterator[tuple]:
    """The events of one replay file as (time, rank, path, position, row-without-seq), or for
    a file that cannot be read, one (None, message, file, line, column)."""
    path, data = item
    label = _label(path, given)
    try:
        if path.lower().endswith(".gz"):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as exc:
                raise StreamError(f"cannot read the gzip file: {exc}", Location(label)) from None
        events = read_batch(data, replay_format(label, format), stream, label, time_predicate)
    except SpaseqError as exc:
        where = exc.location or Location(label)
        yield (None, exc.message, where.file, where.line, where.column)
        return
    for e in events:
        triples = "".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in e.triples)
        yield (e.time, rank, path, e.seq, (stream, e.time, e.dated, graph_text(e.name), triples))


def _reader(given: str, stream: str, rank: int, format: str | None,
            time_predicate: str | None) -> Callable[[tuple[str, bytes]], Iterator[tuple]]:
    """What reads one file of input ``rank`` (``given``: its path, folder or glob; on an
    executor)."""
    return lambda item: file_events(item, given, stream, rank, format, time_predicate)


def _label(uri: str, given: str) -> str:
    """How messages name the file Spark read as ``uri``: as the user wrote it (``given``, or
    inside the folder ``given``), else as a local path or the URI."""
    path = local_path(uri)
    root = os.path.abspath(local_path(given))
    if path == root:
        return given
    if path.startswith(root.rstrip("/") + "/"):
        return os.path.join(given, path[len(root.rstrip("/")) + 1:])
    return path


def local_path(uri: str) -> str:
    """A ``file:`` URI as the local path it names (how errors name the file); others as given."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def read_events(spark: SparkSession, streams: Mapping[str, str | Sequence[str]], *,
                time_predicate: str | None = None, format: str | None = None) -> DataFrame:
    """A DataFrame of the events of the replay files ``streams`` names (stream IRI -> a path, a
    folder, a glob or a list of them: any URI Spark reads), with ``EVENT_SCHEMA``'s columns,
    numbered (``seq``) as ``spaseq run --stream`` would number them, inputs in the mapping's
    order. The files are read now, once, and the DataFrame cached: a file that cannot be read
    raises its StreamError (``FILE:LINE:COLUMN: message``; the first by path when several),
    before anything is matched."""
    from pyspark import StorageLevel

    inputs = [(stream, path) for stream, paths in streams.items()
              for path in ([paths] if isinstance(paths, str) else list(paths))]
    rdds = []
    for rank, (stream, path) in enumerate(inputs):  # rank: the input's place, for ties
        _check_exists(path)
        files = spark.sparkContext.binaryFiles(path)
        rdds.append(files.flatMap(_reader(path, stream, rank, format, time_predicate)))
    if not rdds:
        raise UsageError("read_events: no stream given")
    items = spark.sparkContext.union(rdds).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        errors = sorted(items.filter(lambda e: e[0] is None).map(lambda e: e[1:]).collect(),
                        key=lambda e: (e[1], e[2] or 0, e[3] or 0))
        if errors:
            message, file, line, column = errors[0]
            raise StreamError(message, Location(file, line, column))
        events = items.sortBy(lambda e: e[:4])
        rows = events.zipWithIndex().map(lambda ei: (*ei[0][4][:3], ei[1], *ei[0][4][3:]))
        frame = spark.createDataFrame(rows, EVENT_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
        frame.count()
    finally:
        items.unpersist()
    return frame


def _check_exists(path: str) -> None:
    """UsageError for a local path (or ``file:`` URI) that names nothing (a glob: no match);
    other file systems are Spark's to check."""
    local = local_path(path)
    if "://" in local or (":" in local.split("/", 1)[0] and not local.startswith("/")):
        return
    if not glob.glob(local):
        raise UsageError(f"{local}: no such file or folder")


def to_events(rows: Iterable[Any]) -> list[Event]:
    """Rows of an events DataFrame (or pandas tuples with its columns) as ``Event``s, in the
    rows' order, their triples read in one parse."""
    import pyoxigraph

    rows = list(rows)
    text = "".join(row.triples for row in rows)
    triples = [q.triple for q in pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.N_TRIPLES)] if text else []
    out, at = [], 0
    for row in rows:
        end = at + row.triples.count("\n")  # one triple a line (N-Triples escapes a newline in a term)
        out.append(Event(row.stream, Decimal(row.time), tuple(triples[at:end]), int(row.seq), graph_term(row.graph),
                         None, bool(row.dated)))
        at = end
    return out


def graph_text(name: NamedNode | BlankNode | None) -> str | None:
    """An event's graph name as the rows keep it: N-Triples (None: none)."""
    return None if name is None else str(name)


def graph_term(name: str | None) -> NamedNode | BlankNode | None:
    """An event's graph name from the N-Triples spelling the rows keep (None: none)."""
    return None if name is None else graph_node(name)
