"""Replay files read by Spark into a DataFrame of events (``read_events``), and such rows back
into the engine's ``Event``s. Each file is read whole on an executor by the native replay
reader (``io.native_events.read_batch``: TriG or N-Quads, gzip undone first, times as
``spaseq run`` reads them); the events are then numbered in ``spaseq run``'s order: by time,
ties by the input's place among the inputs, then by file name, then by first appearance."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from spaseq.engine.errors import UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.native_events import read_batch
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


def _file_events(item: tuple[str, bytes], stream: str, rank: int, format: str | None,
                 time_predicate: str | None) -> Iterator[tuple]:
    """The events of one replay file as (time, rank, path, position, row-without-seq)."""
    path, data = item
    if path.lower().endswith(".gz"):
        data = gzip.decompress(data)
    for e in read_batch(data, replay_format(path, format), stream, path, time_predicate):
        triples = "".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in e.triples)
        yield (e.time, rank, path, e.seq, (stream, e.time, e.dated, str(e.name), triples))


def _reader(stream: str, rank: int, format: str | None,
            time_predicate: str | None) -> Callable[[tuple[str, bytes]], Iterator[tuple]]:
    """What reads one file of input ``rank`` (on an executor)."""
    return lambda item: _file_events(item, stream, rank, format, time_predicate)


def read_events(spark: SparkSession, streams: Mapping[str, str | Sequence[str]], *,
                time_predicate: str | None = None, format: str | None = None) -> DataFrame:
    """A DataFrame of the events of the replay files ``streams`` names (stream IRI -> a path, a
    folder, a glob or a list of them: any URI Spark reads), with ``EVENT_SCHEMA``'s columns,
    numbered (``seq``) as ``spaseq run --stream`` would number them, inputs in the mapping's
    order."""
    rdds = []
    for rank, (stream, paths) in enumerate(streams.items()):
        for path in [paths] if isinstance(paths, str) else list(paths):
            files = spark.sparkContext.binaryFiles(path)
            rdds.append(files.flatMap(_reader(stream, rank, format, time_predicate)))
    if not rdds:
        raise UsageError("read_events: no stream given")
    events = spark.sparkContext.union(rdds).sortBy(lambda e: e[:4])
    rows = events.zipWithIndex().map(lambda ei: (*ei[0][4][:3], ei[1], *ei[0][4][3:]))
    return spark.createDataFrame(rows, EVENT_SCHEMA)


def to_events(rows: Iterable[Any]) -> list[Event]:
    """Rows of an events DataFrame (or pandas tuples with its columns) as ``Event``s, in
    ``seq`` order."""
    import pyoxigraph

    out = []
    for row in sorted(rows, key=lambda r: r.seq):
        triples = tuple(q.triple for q in pyoxigraph.parse(row.triples, format=pyoxigraph.RdfFormat.N_TRIPLES))
        name = row.graph
        graph = pyoxigraph.NamedNode(name[1:-1]) if name.startswith("<") else pyoxigraph.BlankNode(name[2:])
        out.append(Event(row.stream, Decimal(row.time), triples, int(row.seq), graph, None, bool(row.dated)))
    return out
