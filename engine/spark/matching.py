"""A query's matches over an events DataFrame (``match``): the input split as the plan says
(``Plan.split``, docs/decisions.md 67), one native engine per part inside
``groupBy(...).applyInArrow`` (fed the Arrow buffers: no Python object per event, decision
68), the parts' matches kept so that their union is exactly the single engine's: by key,
each part keeps the matches of its own key (an event giving several keys goes to each); by
time, each chunk reads its range widened by the plan's overlaps and keeps the matches that
start in it; otherwise one part holds every event."""

from __future__ import annotations

import collections
import functools
import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import TYPE_CHECKING, Any

from spaseq.engine.algebra import operators as A
from spaseq.engine.api import Engine
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.compile.splitting import KEY, NONE, TIME, SplitPlan, event_keys, routing_table
from spaseq.engine.errors import UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.kb import parse_kb_option
from spaseq.engine.language.query import parse_query
from spaseq.spark.events import (
    EVENT_SCHEMA,
    NS,
    event_rows,
    graph_text,
    nanoseconds,
    string_column,
    to_events,
)
from spaseq.spark.found import Found, found
from spaseq.spark.order import clock_close, order_key, released

if TYPE_CHECKING:
    import pyarrow as pa
    from pyoxigraph import Store
    from pyspark.sql import DataFrame

    from spaseq.engine._native import Router
    from spaseq.engine.kb.reader import KbStore

#: A match: where it stands among all of them (sort by ``order``: the single engine's release
#: order, ``spark.order``), its start and end, its bindings (variable -> term in N-Triples) and
#: the events it took, in order (the GPM, the event's stream, time, whether that was an
#: xsd:dateTime, number and graph name, and the variables the GPM bound there).
MATCH_SCHEMA = ("order binary, start decimal(38,9), time decimal(38,9), bindings map<string,string>, "
                "events array<struct<atom:string,stream:string,time:decimal(38,9),dated:boolean,seq:long,"
                "graph:string,bindings:map<string,string>>>")

#: The events DataFrame with the part each row goes to.
_PARTED = f"part string, {EVENT_SCHEMA}"

#: Where the executors find the knowledge base: ("files", ((path, graph or None), ...)),
#: ("store", directory, version) or None.
KbSource = tuple[Any, ...] | None


def match(events: DataFrame, query: str | A.Query, *, kb: Mapping[str, str] | Sequence[str] | None = None,
          kb_store: str | KbStore | None = None, options: EngineOptions | None = None,
          parts: int | None = None) -> DataFrame:
    """The matches of ``query`` (text or parsed) over ``events`` (``read_events``' columns),
    as a DataFrame of ``MATCH_SCHEMA``. The knowledge base GRAPH clauses join with: ``kb``,
    RDF files every executor can read (graph IRI -> file, or ``spaseq run --kb``'s
    ``[GRAPH-IRI=]PATH`` texts), or ``kb_store``, a ``spaseq kb`` store every executor can
    open (its current version, or the open version of a ``KbStore``: the same on every
    executor); ``parts``: how many time chunks a query split by time is cut into (default:
    Spark's default parallelism)."""
    text = query if isinstance(query, str) else query.source
    q = parse_query(text) if isinstance(query, str) else query
    split = plan_query(q, options).split
    spark = events.sparkSession
    if split.kind == TIME:
        n = parts or spark.sparkContext.defaultParallelism
        cuts = _cuts(events, n)
    else:
        cuts = []
    source = kb_source(kb, kb_store)

    arrow = match_arrow_schema()

    def parted(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield _parts(batch, text, split, cuts, source)

    def matched(part: pa.Table) -> pa.Table:
        return _matched(part, text, split, cuts, source, options, arrow)

    return (events.mapInArrow(parted, schema=_PARTED)
                  .groupBy("part").applyInArrow(matched, schema=MATCH_SCHEMA))


def match_arrow_schema() -> pa.Schema:
    """``MATCH_SCHEMA`` as Arrow writes it (on the driver: Spark parses the DDL)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    schema = StructType.fromDDL(MATCH_SCHEMA)
    assert isinstance(schema, StructType)
    return to_arrow_schema(schema)


def kb_source(kb: Mapping[str, str] | Sequence[str] | None, kb_store: str | KbStore | None) -> KbSource:
    """Where executors find the knowledge base ``match`` was given (UsageError for both)."""
    if kb and kb_store is not None:
        raise UsageError("give either kb files or a kb_store, not both")
    if kb_store is not None:
        from spaseq.engine.kb.layout import StoreLayout
        from spaseq.engine.kb.reader import KbStore

        if isinstance(kb_store, KbStore):
            return ("store", kb_store.path, kb_store.version)
        layout = StoreLayout.at(kb_store)
        layout.require()
        return ("store", str(layout.root), layout.current())
    if not kb:
        return None
    # absolute on the driver: an executor of a cluster runs in a folder of its own
    if isinstance(kb, Mapping):
        return ("files", tuple((os.path.abspath(path), graph) for graph, path in kb.items()))
    specs = (parse_kb_option(text) for text in kb)
    return ("files", tuple((os.path.abspath(spec.path), spec.graph) for spec in specs))


def _cuts(events: DataFrame, n: int) -> list[Decimal]:
    """Times cutting ``events`` into about ``n`` chunks of as many events (distinct, sorted)."""
    if n <= 1:
        return []
    found = events.selectExpr("CAST(time AS DOUBLE) AS t").approxQuantile("t", [i / n for i in range(1, n)], 0.01)
    return sorted({Decimal(repr(c)) for c in found})


@functools.lru_cache(maxsize=4)
def query_of(text: str) -> A.Query:
    """The query of ``text``, parsed once per worker process (every part and batch needs it)."""
    query = parse_query(text)
    settle()
    return query


def settle() -> None:
    """Leave what a Python worker has built so far (modules, the compiled query) out of the
    garbage collections PySpark runs after every task: they walked the whole heap, a third of
    a streaming worker's time (measured: ``match_stream`` 1.23-1.42x faster). What is frozen
    is never collected, so only long-lived things are built before."""
    import gc

    gc.freeze()


@functools.lru_cache(maxsize=4)
def match_store(source: KbSource, text: str) -> Store | KbStore | None:
    """The knowledge base of ``source``, opened once per worker process (the parts only read
    it): the files loaded as ``spaseq run --kb`` loads them, or the store's version, pinned."""
    if source is None:
        return None
    if source[0] == "store":
        from spaseq.engine.kb.reader import KbStore

        return KbStore(source[1], version=source[2])
    from spaseq.engine.io.kb import KbSpec, load_kb

    return load_kb([KbSpec(path, graph) for path, graph in source[1]], query_of(text).graph_iris()).store


def routing_kb(split: SplitPlan, source: KbSource, text: str) -> Store | None:
    """The store events are routed with, when a key comes through a GRAPH join (``SplitPlan.kb``)."""
    if not split.kb:
        return None
    from spaseq.engine.kb.reader import KbStore

    kb = match_store(source, text)
    return kb.store if isinstance(kb, KbStore) else kb  # a KbStore's open version


def _parts(batch: pa.RecordBatch, text: str, split: SplitPlan, cuts: list[Decimal],
           source: KbSource) -> pa.RecordBatch:
    """Each event of ``batch`` with the part(s) it goes to: its keys (as N-Triples), the time
    chunks whose widened range holds it, or the one part."""
    import pyarrow as pa

    n = batch.num_rows
    if split.kind == KEY:
        parts = keys_of(batch.column("stream"), batch.column("triples"), lambda: _rows(batch), text, split, source)
    elif split.kind == TIME:
        times = nanoseconds(batch.column("time"))
        ranges = [(_ns_at_least(lo - split.before), _ns_at_most(hi + split.after))
                  for lo, hi in itertools.pairwise(_bounds(cuts))]
        parts = [[str(i) for i, (lo, hi) in enumerate(ranges) if lo <= t <= hi] for t in times]
    else:
        parts = [["0"]] * n
    take = [i for i, mine in enumerate(parts) for _ in mine]
    names = pa.array([part for mine in parts for part in mine], pa.string())
    chosen = batch.take(pa.array(take, pa.int64())) if len(take) != n else batch
    return pa.RecordBatch.from_arrays([names, *chosen.columns], names=["part", *batch.schema.names])


def keys_of(streams: pa.Array | pa.ChunkedArray, triples: pa.Array | pa.ChunkedArray, rows: Callable[[], list[Any]],
            text: str, split: SplitPlan, source: KbSource) -> list[list[str]]:
    """The keys each event goes to, sorted, given its stream and triples columns: by the
    native router, or, for a key bound through a GRAPH join, by ``event_keys`` with the KB
    over the events ``rows()`` gives."""
    router = _router(text, split.keys) if not split.kb else None
    if router is not None:
        return router.keys(string_column(streams), string_column(triples))
    q, kb = query_of(text), routing_kb(split, source, text)
    return [sorted(event_keys(q, split.keys, e, kb)) for e in to_events(rows())]


@functools.lru_cache(maxsize=4)
def _router(text: str, keys: tuple[str, ...]) -> Router | None:
    """The native router of a query split by ``keys`` (once per worker), or None when its
    routing patterns hold a term it does not take (then routed in Python)."""
    from spaseq.engine._native import Router

    try:
        return Router(routing_table(query_of(text)), list(keys))
    except ValueError:
        return None


def _ns_at_least(t: Decimal) -> int | float:
    """The first whole nanosecond at or after ``t`` seconds (infinities kept)."""
    return t if t.is_infinite() else int((t * NS).to_integral_value(rounding=ROUND_CEILING))  # type: ignore[return-value]


def _ns_at_most(t: Decimal) -> int | float:
    """The last whole nanosecond at or before ``t`` seconds (infinities kept)."""
    return t if t.is_infinite() else int((t * NS).to_integral_value(rounding=ROUND_FLOOR))  # type: ignore[return-value]


def _rows(table: pa.Table | pa.RecordBatch) -> list[Any]:
    """The rows of an events table as tuples with its columns' names as attributes."""
    row = collections.namedtuple("row", table.schema.names)  # type: ignore[misc]
    return [row(*values) for values in zip(*(c.to_pylist() for c in table.columns), strict=True)]


def _matched(part: pa.Table, text: str, split: SplitPlan, cuts: list[Decimal], source: KbSource,
             options: EngineOptions | None, schema: pa.Schema) -> pa.Table:
    """The matches one part keeps, found by the native engine over its events (fed as
    columns: ``Engine.run_rows``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    q = query_of(text)
    name = part.column("part")[0].as_py()
    part = part.sort_by("seq")
    read = pa.array(sorted(set(q.streams.values())), pa.string())
    part = part.filter(pc.is_in(part.column("stream"), value_set=read))  # as drop_unread does
    engine = Engine(match_store(source, text), options, drop_unread=True)
    handle = engine.register(q)
    engine.run_rows(event_rows(part))
    matches = [found(m) for m in handle.matches()]
    if split.kind == NONE:  # one engine: its release order is the order
        rows = [match_row(m, released(i)) for i, m in enumerate(matches)]
    else:
        if split.kind == KEY:
            matches = [m for m in matches if match_key(m, split.keys) == name]
        else:
            bounds = _bounds(cuts)
            lo, hi = _ns_at_least(bounds[int(name)]), _ns_at_least(bounds[int(name) + 1])
            matches = [m for m in matches if lo <= m.start < hi]
        rows = [match_row(m, order_key(m, clock_close(q, m))) for m in matches]
    return pa.Table.from_pylist([dict(zip(_MATCH_COLUMNS, row, strict=True)) for row in rows], schema=schema)


_MATCH_COLUMNS = ("order", "start", "time", "bindings", "events")


def _bounds(cuts: list[Decimal]) -> list[Decimal]:
    """The time chunks' bounds: chunk i is [bounds[i], bounds[i + 1])."""
    return [Decimal("-Infinity"), *cuts, Decimal("Infinity")]


def match_key(m: Found, keys: tuple[str, ...]) -> str:
    """The key of a match split by key: its terms for ``keys`` in N-Triples, joined by a space."""
    bound = dict(m.bindings)
    return " ".join(bound.get(k, "") for k in keys)


def match_row(m: Found, order: bytes) -> tuple[Any, ...]:
    """A match as a row of ``MATCH_SCHEMA``."""
    events = [{"atom": t.atom, "stream": t.stream, "time": seconds(t.time), "dated": t.dated, "seq": t.seq,
               "graph": t.graph, "bindings": dict(t.bindings)} for t in m.taken]
    return (order, seconds(m.start), seconds(m.time), dict(m.bindings), events)


def seconds(ns: int) -> Decimal:
    """Nanoseconds as the exact seconds of a ``decimal(38,9)`` column."""
    return Decimal(ns).scaleb(-9)


def event_struct(atom: str | None, e: Event, bindings: tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    """An event as ``MATCH_SCHEMA``'s ``events`` hold it: the GPM that took it (None for a late
    event), where and when it came, and the variables the GPM bound there."""
    return {"atom": atom, "stream": e.stream, "time": e.time, "dated": e.dated, "seq": e.seq,
            "graph": graph_text(e.name), "bindings": {v: str(term) for v, term in bindings}}
