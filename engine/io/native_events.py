"""Python ``Event``s from the native readers, for what takes events one by one in Python:
the reference evaluator (``--engine reference``), a run with a ``--stream-file``, ``spaseq
serve``'s request bodies and the rdflib processor's ``load_streams``. A run over replay files
or live sources takes the native streams whole instead (``Engine.run_replay``,
``Engine.run_live``), composed queries included.

Everything about reading is the native core's, written once (decisions 36, 46, 52): the
formats (TriG, N-Quads, gzip), timestamps and the time predicate, when an event is
complete, the order of an out-of-order replay file (sorted in bounded memory), ``seq``, and
the errors and their places (``FILE:LINE:COLUMN``). Here an event's terms, which the binding
spells in N-Triples, are read by pyoxigraph, one parse per batch of events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence

import pyoxigraph
from pyoxigraph import BlankNode, NamedNode

from spaseq.engine.errors import Location, SpaseqError, StreamError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.values.timestamps import from_nanoseconds
from spaseq.engine.vocab import GENERATED_AT_TIME

log = logging.getLogger(__name__)

#: The time predicate of recorded events unless told otherwise (``prov:generatedAtTime``).
DEFAULT_TIME_PREDICATE = GENERATED_AT_TIME.value

#: A native event: (stream IRI, seq, time ns, graph, [(s, p, o)], dated[, origin], start ns),
#: terms in N-Triples (``ReplayStream``'s; ``LiveStream``'s with its origin); the start last.
NativeItem = tuple
#: An event's origin, from its native tuple.
Origin = Callable[[NativeItem], "str | None"]


def stream_error(exc: BaseException) -> StreamError:
    """A native reader's error as the error it stands for: a ``_native.LocatedError`` located
    by its ``path``, ``line`` and ``column`` (its ``message`` without them), any other
    exception by its text alone."""
    from spaseq.engine._native import LocatedError

    if isinstance(exc, LocatedError) and exc.path is not None:
        return StreamError(exc.message, Location(exc.path, exc.line, exc.column))
    return StreamError(str(exc))


def checked_time_predicate(iri: str | None) -> str:
    """The time predicate to read with (the default for None); UsageError if it is not an
    absolute IRI."""
    if iri is None:
        return DEFAULT_TIME_PREDICATE
    try:
        NamedNode(iri)
    except ValueError as err:
        raise UsageError(f"time predicate {iri!r} is not an absolute IRI ({err})") from None
    return iri


def replay_events(files: Sequence[tuple[str, str]], time_predicate: str | None = None,
                  format: str | None = None, batch: int = 1024) -> Iterator[Event | StreamError]:
    """The events of replay files (``(stream IRI, path)``, one per stream) as ``spaseq run``
    reads them (``_native.ReplayStream``, decision 36): merged by (time, seq), ties by the
    file's place in ``files`` then by first appearance, in bounded memory; after a file's
    error, the events up to that file's last time, then the first failing file's error,
    located. ``format`` (``trig`` or ``nquads``) is every file's whatever its name says.
    An event's ``origin`` is its file (None when several files give its stream). The files'
    first pass runs here, before the first event is asked for; UsageError at once for a time
    predicate that is not an IRI."""
    from spaseq.engine._native import ReplayStream

    predicate = checked_time_predicate(time_predicate)
    try:
        stream = ReplayStream(list(files), predicate, format=format, batch=batch)
    except ValueError as exc:
        return iter([stream_error(exc)])
    for note in stream.notes:
        log.info("%s", note)
    origins: dict[str, str | None] = {}
    for iri, path in files:
        origins[iri] = None if iri in origins else path
    return _replayed(stream, lambda item: origins[item[0]])


def _replayed(stream: Iterator[list[NativeItem]], origin: Origin) -> Iterator[Event | StreamError]:
    """The events of a ``_native.ReplayStream``, then its error, located."""
    try:
        for native in stream:
            yield from _events(native, origin)
    except ValueError as exc:
        yield stream_error(exc)


def read_replay_files(files: Sequence[tuple[str, str]], time_predicate: str | None = None,
                      format: str | None = None) -> tuple[list[Event], StreamError | None]:
    """``replay_events`` read to the end: the events, and the error after them if any."""
    events: list[Event] = []
    for item in replay_events(files, time_predicate, format):
        if isinstance(item, SpaseqError):
            return events, item
        events.append(item)
    return events, None


def read_batch(data: bytes, format: str, stream: str, label: str,
               time_predicate: str | None = None) -> list[Event]:
    """The events of ``stream`` in a replay batch held in memory (``format`` ``trig`` or
    ``nquads``; a request body), read whole by the replay reader's rules: sorted by time,
    ties in order of first appearance, numbered from 0. For any problem in it, none of its
    events but a StreamError located in ``label`` (which names the batch as a path names a
    file)."""
    from spaseq.engine._native import read_batch as native_read_batch

    try:
        native = native_read_batch(data, format, label, checked_time_predicate(time_predicate))
    except ValueError as exc:
        raise stream_error(exc) from None
    items = [(stream, seq, ns, graph, triples, dated, start)
             for seq, (graph, ns, triples, dated, start) in enumerate(native)]
    return _events(items, lambda item: None)


#: ``read_columns``' columns: graph names and triples as Arrow string buffers (offsets, data),
#: times in nanoseconds, dated, starts in nanoseconds.
Columns = tuple[tuple[bytes, bytes], list[int], tuple[bytes, bytes], list[bool], list[int]]


def read_columns(data: bytes, format: str, label: str, time_predicate: str | None = None) -> Columns:
    """``read_batch``'s events as columns, no Python object per event (what Spark's readers
    hand to Arrow): graph names and triples (one per line) in N-Triples as Arrow string
    buffers (32-bit offsets, data), times in nanoseconds, whether each time was an
    xsd:dateTime, starts in nanoseconds (the time for a point event). A StreamError as
    ``read_batch``'s."""
    from spaseq.engine._native import read_columns as native_read_columns

    try:
        return native_read_columns(data, format, label, checked_time_predicate(time_predicate))
    except ValueError as exc:
        raise stream_error(exc) from None


def _events(native: list[NativeItem], origin: Origin) -> list[Event]:
    """A batch of native events as ``Event``s, their triples read in one parse."""
    parsed = _triples([t for item in native for t in item[4]])
    out = []
    at = 0
    for item in native:
        stream, seq, ns, graph, triples, dated = item[:6]
        end = at + len(triples)
        start = item[-1]  # last: after a live event's origin
        out.append(Event(stream, from_nanoseconds(ns), tuple(parsed[at:end]), seq, graph_node(graph), origin(item), dated,
                         None if start == ns else from_nanoseconds(start)))
        at = end
    return out


def graph_node(text: str) -> NamedNode | BlankNode:
    """A graph name in N-Triples."""
    return NamedNode(text[1:-1]) if text.startswith("<") else BlankNode(text[2:])


def _triples(triples: list[tuple[str, str, str]]) -> list[pyoxigraph.Triple]:
    """Triples in N-Triples, read in one parse."""
    if not triples:
        return []
    text = "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
    return [q.triple for q in pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.N_TRIPLES)]
