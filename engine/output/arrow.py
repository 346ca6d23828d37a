"""Results as Arrow record batches, written by pyarrow as an Arrow IPC stream or a Parquet file
(``spaseq run --format arrow|parquet``, issue 29): the bulk output of a match-heavy run, where
jsonl spends most of its bytes spelling the same events again.

The native writer (``NativeWriter`` with the ``arrow`` format; ``engine/native/output/src/
columns.rs``) builds each record batch's buffers in Arrow's layout; ``ArrowSink`` wraps them
without copying (``pyarrow.Array.from_buffers``) and writes them. ``result_schema`` is the
one statement of the columns: ``_number`` (int64, from 1, in release order after DISTINCT),
``_start`` and ``_time`` (decimal128(38, 9): exact seconds), ``_dated`` (whether the times
were ``xsd:dateTime``s, as ``--time-format`` says), ``_events`` (``--events full``: a list of
``{atom, stream, time, dated, graph}``; ``ids``: a list of graph names; ``none``: absent),
then one string column per variable of the header: its value in N-Triples, null when unbound.
Graph names are N-Triples too. Every string is dictionary-encoded (each value once per record
batch: a match-heavy run repeats the same events and terms in many rows); readers see
strings. These are the columns ``spaseq run --spark-output`` writes, whose event structs also
carry each event's number and bindings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from spaseq.engine.errors import require_extra

if TYPE_CHECKING:
    import pyarrow as pa

#: the formats written as Arrow record batches (binary: never to a terminal)
ARROW_FORMATS = ("arrow", "parquet")
#: the columns before the variables' (``result_schema``)
LEADING = ("_number", "_start", "_time", "_dated", "_events")


def require_pyarrow(fmt: str) -> None:
    """MissingExtraError (a UsageError) when pyarrow is not installed."""
    require_extra("arrow", f"--format {fmt}", "pyarrow")


def _time_type() -> pa.DataType:
    import pyarrow as pa

    return pa.decimal128(38, 9)


def _text_type() -> pa.DataType:
    """A string column's type: dictionary-encoded, each value once per record batch (a term or
    an event recurs in many matches)."""
    import pyarrow as pa

    return pa.dictionary(pa.int32(), pa.string())


def event_type(events: str) -> pa.DataType | None:
    """The type of the ``_events`` column for ``--events`` (None: no such column)."""
    import pyarrow as pa

    if events == "none":
        return None
    if events == "ids":
        return pa.list_(_text_type())
    return pa.list_(pa.struct([("atom", _text_type()), ("stream", _text_type()), ("time", _time_type()),
                               ("dated", pa.bool_()), ("graph", _text_type())]))


def result_schema(variables: Sequence[str], events: str = "full") -> pa.Schema:
    """The schema of a query's results: the leading columns, then ``variables`` as strings."""
    import pyarrow as pa

    fields = [pa.field("_number", pa.int64(), nullable=False), pa.field("_start", _time_type(), nullable=False),
              pa.field("_time", _time_type(), nullable=False), pa.field("_dated", pa.bool_(), nullable=False)]
    listed = event_type(events)
    if listed is not None:
        fields.append(pa.field("_events", listed, nullable=False))
    fields += [pa.field(v, _text_type()) for v in variables]
    return pa.schema(fields)


def _bits(buffers: tuple[bytes, int], length: int) -> pa.Array:
    import pyarrow as pa

    data, _ = buffers
    return pa.Array.from_buffers(pa.bool_(), length, [None, pa.py_buffer(data)])


def _coded(buffers: tuple[bytes, int, bytes, int, bytes, bytes], length: int) -> pa.Array:
    """A dictionary-encoded string column from its indices and its dictionary's buffers."""
    import pyarrow as pa

    validity, nulls, indices, size, offsets, data = buffers
    dictionary = pa.Array.from_buffers(pa.string(), size, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    codes = pa.Array.from_buffers(pa.int32(), length, [pa.py_buffer(validity) if nulls else None,
                                                        pa.py_buffer(indices)], null_count=nulls)
    return pa.DictionaryArray.from_arrays(codes, dictionary)


def _fixed(kind: pa.DataType, data: bytes, length: int) -> pa.Array:
    import pyarrow as pa

    return pa.Array.from_buffers(kind, length, [None, pa.py_buffer(data)])


def record_batch(schema: pa.Schema, buffers: tuple[Any, ...]) -> pa.RecordBatch:
    """The record batch of the native writer's ``buffers`` (``NativeWriter`` documents their
    order), its lengths and buffer sizes checked (``validate``: a short buffer fails here, not
    in a reader) and every dictionary index checked against its dictionary."""
    import pyarrow as pa

    rows, number, start, time, dated, events, values = buffers
    arrays = [_fixed(pa.int64(), number, rows), _fixed(_time_type(), start, rows),
              _fixed(_time_type(), time, rows), _bits(dated, rows)]
    if events is not None:
        count, offsets, atom, stream, times, dated_events, graph = events
        listed = schema.field("_events").type
        graphs = _coded(graph, count)
        if listed.value_type == _text_type():
            child = graphs
        else:
            child = pa.StructArray.from_arrays(
                [_coded(atom, count), _coded(stream, count), _fixed(_time_type(), times, count),
                 _bits(dated_events, count), graphs], fields=list(listed.value_type))
        arrays.append(pa.ListArray.from_buffers(listed, rows, [None, pa.py_buffer(offsets)], children=[child]))
    arrays += [_coded(v, rows) for v in values]
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    batch.validate(full=False)
    return batch


def open_writer(fmt: str, out: Any, schema: pa.Schema) -> Any:
    """pyarrow's writer of record batches of ``schema`` to ``out`` (a path or a pyarrow
    file) in ``fmt``: an Arrow IPC stream, or Parquet compressed with zstd (each record
    batch a row group). ``write_batch``, then ``close``."""
    import pyarrow as pa

    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetWriter(out, schema, compression="zstd")
    if fmt == "arrow":
        return pa.ipc.new_stream(out, schema)
    raise ValueError(f"not an Arrow format: {fmt!r}")


class ArrowSink:
    """Where a native ``arrow`` writer hands its record batches: written to ``out`` (a binary
    file) as an Arrow IPC stream (``arrow``) or a Parquet file (``parquet``, zstd), which is
    whole once ``finish`` has run."""

    def __init__(self, fmt: str, out: IO[bytes], variables: Sequence[str], events: str = "full") -> None:
        require_pyarrow(fmt)
        import pyarrow as pa

        self.schema = result_schema(variables, events)
        self._writer: Any = open_writer(fmt, pa.PythonFile(out, mode="w"), self.schema)
        self._out = out
        self.rows = 0

    def write_batch(self, buffers: tuple[Any, ...]) -> None:
        """Write one record batch given as the native writer's buffers."""
        batch = record_batch(self.schema, buffers)
        self._writer.write_batch(batch)
        self.rows += batch.num_rows

    def finish(self) -> None:
        """End the stream or write the Parquet footer (once; later calls do nothing)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()
            self._out.flush()
