"""Replay files read by Spark into a DataFrame of events (``read_events``), and such rows back
into the engine's ``Event``s. Each file is read whole on an executor by the native replay
reader as columns (``io.native_events.read_columns``: TriG or N-Quads, gzip undone first,
times as ``spaseq run`` reads them) and handed to Spark as Arrow; the events are then numbered in ``spaseq run``'s order: by time,
ties by the input's place among the inputs, then by file name, then by first appearance."""

from __future__ import annotations

import functools
import glob
import gzip
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from pyoxigraph import BlankNode, NamedNode

from spaseq.engine.errors import Location, SpaseqError, StreamError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.native_events import Columns, graph_node, read_columns
from spaseq.engine.io.parsing import extension, strip_gz

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from spaseq.engine._native import EventRows

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


def file_columns(path: str, data: bytes, given: str, format: str | None,
                 time_predicate: str | None) -> tuple[Columns | None, StreamError | None]:
    """The events of one replay file read natively (``io.native_events.read_columns``), as
    columns; or the StreamError of a file that cannot be read, naming it as the user did
    (``given``: its path, folder or glob)."""
    label = _label(path, given)
    try:
        if path.lower().endswith(".gz"):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as exc:
                raise StreamError(f"cannot read the gzip file: {exc}", Location(label)) from None
        columns = read_columns(data, replay_format(label, format), label, time_predicate)
        if columns[4] != columns[1]:  # Spark's events are points so far (decision 71)
            raise StreamError("events that last (prov:startedAtTime) are not read on Spark yet "
                              "(docs/decisions.md 71)", Location(label))
        return columns, None
    except SpaseqError as exc:
        return None, StreamError(exc.message, exc.location or Location(label))


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
    before anything is matched. Everything but the reading (Arrow batches on the executors)
    is Spark's own: sorting, numbering and caching run in its JVMs. ``unpersist()`` the
    DataFrame when done with it. Each file is read whole by one task, which holds about five
    times its size in the JVM at once: give executors (a local driver) that much per task
    (``spaseq run --spark`` sizes a local driver so: ``kb.session.whole_file_memory``)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    inputs = [(stream, path) for stream, paths in streams.items()
              for path in ([paths] if isinstance(paths, str) else list(paths))]
    if not inputs:
        raise UsageError("read_events: no stream given")
    frames = []
    # this reading's own token, a column of its plan: Spark reuses cached data for a plan
    # equal to one cached before, which would give a file's earlier content
    token = F.lit(uuid.uuid4().hex).alias("reading")
    for rank, (stream, path) in enumerate(inputs):  # rank: the input's place, for ties
        files = spark.read.format("binaryFile").load(_located(path)).select("path", "content", token)
        frames.append(files.mapInArrow(_reader(path, stream, rank, format, time_predicate), schema=_READ_SCHEMA))
    read = functools.reduce(lambda a, b: a.unionByName(b), frames).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        errors = read.where("error IS NOT NULL").select("error", "path", "line", "col").collect()
        if errors:
            first = min(errors, key=lambda e: (e.path, e.line or 0, e.col or 0))
            raise StreamError(first.error, Location(first.path, first.line, first.col))
        # sorted and kept while numbered: a row's place in its sorted partition is _id's low
        # 33 bits (monotonically_increasing_id), the partitions' sizes give their first numbers
        ordered = (read.orderBy("time", "rank", "path", "pos")
                       .withColumn("_part", F.spark_partition_id())
                       .withColumn("_id", F.monotonically_increasing_id())
                       .persist(StorageLevel.MEMORY_AND_DISK))
        try:
            sizes: dict[int, int] = dict(ordered.groupBy("_part").count().collect())
            offsets, before = [], 0
            for part in range(max(sizes, default=-1) + 1):
                offsets.append(before)
                before += sizes.get(part, 0)
            seq = (F.element_at(F.array(*(F.lit(o) for o in offsets or [0])), F.col("_part") + 1)
                   + F.col("_id").bitwiseAND((1 << 33) - 1))
            frame = (ordered.select("stream", "time", "dated", seq.cast("long").alias("seq"), "graph", "triples")
                            .persist(StorageLevel.MEMORY_AND_DISK))
            frame.count()
        finally:
            ordered.unpersist()
    finally:
        read.unpersist()
    return frame


#: What reading a file gives: its events (``error`` null) with what orders them (their
#: input's ``rank``, ``path`` and place in the file, ``pos``), or its error, located.
_READ_SCHEMA = ("stream string, time decimal(38,9), dated boolean, graph string, triples string, rank int, "
                "path string, pos long, error string, line long, col long")


def _reader(given: str, stream: str, rank: int, format: str | None,
            time_predicate: str | None) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """What reads the files of input ``rank`` (``given``: its path, folder or glob) into
    ``_READ_SCHEMA``'s rows, on an executor."""
    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numpy as np
        import pyarrow as pa

        schema = _read_arrow_schema()
        for batch in batches:
            for path, content in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist(),
                                     strict=True):
                columns, error = file_columns(path, content, given, format, time_predicate)
                if error is not None:
                    where = error.location
                    row = {"error": error.message, "path": where.file if where else None,
                           "line": where.line if where else None, "col": where.column if where else None}
                    yield pa.RecordBatch.from_pylist([row], schema=schema)
                    continue
                assert columns is not None
                graphs, times, triples, dated, _ = columns
                n = len(times)
                yield pa.RecordBatch.from_arrays([
                    _repeated(stream, n), seconds_column(times), pa.array(dated, pa.bool_()),
                    string_array(graphs, n), string_array(triples, n), pa.array(np.full(n, rank, np.int32)),
                    _repeated(path, n), pa.array(np.arange(n, dtype=np.int64)),
                    pa.nulls(n, pa.string()), pa.nulls(n, pa.int64()), pa.nulls(n, pa.int64())], schema=schema)

    return read


@functools.cache
def _read_arrow_schema() -> pa.Schema:
    """``_READ_SCHEMA`` in Arrow."""
    import pyarrow as pa

    return pa.schema([("stream", pa.string()), ("time", pa.decimal128(38, 9)), ("dated", pa.bool_()),
                      ("graph", pa.string()), ("triples", pa.string()), ("rank", pa.int32()),
                      ("path", pa.string()), ("pos", pa.int64()), ("error", pa.string()),
                      ("line", pa.int64()), ("col", pa.int64())])


def event_batch(stream: str, columns: Columns, seqs: Iterable[int]) -> pa.RecordBatch:
    """``file_columns``' events of ``stream`` as an Arrow batch of ``EVENT_SCHEMA``, numbered
    ``seqs``."""
    import pyarrow as pa

    graphs, times, triples, dated, _ = columns
    n = len(times)
    return pa.RecordBatch.from_arrays(
        [_repeated(stream, n), seconds_column(times), pa.array(dated, pa.bool_()), pa.array(seqs, pa.int64()),
         string_array(graphs, n), string_array(triples, n)],
        names=["stream", "time", "dated", "seq", "graph", "triples"])


def string_array(buffers: tuple[bytes, bytes], n: int) -> pa.Array:
    """An Arrow string array of ``n`` values from its buffers (32-bit offsets, data), as the
    native readers write them."""
    import pyarrow as pa

    offsets, data = buffers
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def string_column(column: pa.Array | pa.ChunkedArray) -> tuple[bytes, bytes, int, int]:
    """An Arrow string column (no nulls) as the native core reads it: its offsets and data
    buffers, its offset into them and its length (``arrow::StrColumn``)."""
    arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if arr.null_count:
        raise ValueError("a string column of events holds a null")
    if len(arr) == 0:
        return b"\0\0\0\0", b"", 0, 0
    _, offsets, data = arr.buffers()
    return offsets.to_pybytes(), b"" if data is None else data.to_pybytes(), arr.offset, len(arr)


def _repeated(value: str, n: int) -> pa.Array:
    """A string column holding ``value`` ``n`` times, built without a list of them."""
    import pyarrow as pa

    return pa.repeat(pa.scalar(value, pa.string()), n)


def seconds_column(times: list[int]) -> pa.Array:
    """Times in nanoseconds as an Arrow ``decimal(38,9)`` column of exact seconds, built from
    the unscaled values without a Decimal per row (a time beyond 64 bits through its Decimal)."""
    import numpy as np
    import pyarrow as pa

    kind = pa.decimal128(38, 9)
    try:
        low = np.asarray(times, dtype=np.int64)
    except OverflowError:
        return pa.array([Decimal(t).scaleb(-9) for t in times], kind)
    words = np.empty((len(times), 2), dtype="<i8")
    words[:, 0], words[:, 1] = low, low >> 63
    return pa.Array.from_buffers(kind, len(times), [None, pa.py_buffer(words.tobytes())])


def _located(path: str) -> str:
    """``path`` as Spark is to load it: a relative local path made absolute (against this
    process's folder, where the user wrote it, not the one the session's JVM started in);
    UsageError for a local path (or ``file:`` URI) that names nothing (a glob: no match).
    Other file systems are Spark's to check."""
    local = local_path(path)
    if "://" in local or (":" in local.split("/", 1)[0] and not local.startswith("/")):
        return path
    if not glob.glob(local):
        raise UsageError(f"{local}: no such file or folder")
    return path if local.startswith("/") else os.path.abspath(local)


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


def nanoseconds(column: pa.Array | pa.ChunkedArray) -> list[int]:
    """An events column of exact seconds (``decimal(38,9)``, never null) in nanoseconds,
    read from the decimals' unscaled values without a Decimal per row (a value beyond 64
    bits through its Decimal)."""
    import numpy as np
    import pyarrow as pa

    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    words = np.frombuffer(arr.buffers()[1], dtype="<i8").reshape(-1, 2)[arr.offset:arr.offset + len(arr)]
    low, high = words[:, 0], words[:, 1]
    out = low.tolist()
    for i in np.flatnonzero(high != (low >> 63)).tolist():  # wider than 64 bits
        out[i] = int(arr[i].as_py().scaleb(9))
    return out


def event_rows(table: pa.Table | pa.RecordBatch) -> EventRows:
    """Rows of an events DataFrame, in their order, as the native core's ``EventRows``
    (``Engine.run_rows``): parsed natively, no Python object per triple."""
    from spaseq.engine._native import EventRows

    col = table.column
    return EventRows(string_column(col("stream")), col("seq").to_pylist(), nanoseconds(col("time")),
                     col("dated").to_pylist(), string_column(col("graph")), string_column(col("triples")))


def graph_text(name: NamedNode | BlankNode | None) -> str | None:
    """An event's graph name as the rows keep it: N-Triples (None: none)."""
    return None if name is None else str(name)


def graph_term(name: str | None) -> NamedNode | BlankNode | None:
    """An event's graph name from the N-Triples spelling the rows keep (None: none)."""
    return None if name is None else graph_node(name)
