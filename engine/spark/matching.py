"""A query's matches over an events DataFrame (``match``): the input split as the plan says
(``Plan.split``, docs/decisions.md 67), one native engine per part inside
``groupBy(...).applyInPandas``, the parts' matches kept so that their union is exactly the
single engine's: by key, each part keeps the matches of its own key (an event giving several
keys goes to each); by time, each chunk reads its range widened by the plan's overlaps and
keeps the matches that start in it; otherwise one part holds every event."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from spaseq.engine.algebra import operators as A
from spaseq.engine.api import evaluate
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.compile.splitting import KEY, NONE, TIME, SplitPlan, event_keys
from spaseq.engine.errors import UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.kb import parse_kb_option
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import Match
from spaseq.spark.events import EVENT_SCHEMA, graph_text, to_events
from spaseq.spark.order import clock_close, order_key, released

if TYPE_CHECKING:
    import pandas as pd
    from pyoxigraph import Store
    from pyspark.sql import DataFrame

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

    def parted(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield _parts(batch, text, split, cuts, source)

    def matched(part: pd.DataFrame) -> pd.DataFrame:
        return _matched(part, text, split, cuts, source, options)

    return (events.mapInPandas(parted, schema=_PARTED)
                  .groupBy("part").applyInPandas(matched, schema=MATCH_SCHEMA))


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


def _parts(batch: pd.DataFrame, text: str, split: SplitPlan, cuts: list[Decimal], source: KbSource) -> pd.DataFrame:
    """Each event of ``batch`` with the part(s) it goes to: its keys (as N-Triples), the time
    chunks whose widened range holds it, or the one part."""
    import pandas as pd

    rows = list(batch.itertuples(index=False))
    if split.kind == KEY:
        q = query_of(text)
        kb = routing_kb(split, source, text)
        parts: list[list[str]] = [sorted(event_keys(q, split.keys, e, kb)) for e in to_events(rows)]
    elif split.kind == TIME:
        bounds = _bounds(cuts)
        parts = []
        for row in rows:
            t = Decimal(row.time)
            parts.append([str(i) for i in range(len(bounds) - 1)
                          if bounds[i] - split.before <= t <= bounds[i + 1] + split.after])
    else:
        parts = [["0"]] * len(rows)
    out = [(part, *row) for row, mine in zip(rows, parts, strict=True) for part in mine]
    return pd.DataFrame(out, columns=["part", *batch.columns])


def _matched(part: pd.DataFrame, text: str, split: SplitPlan, cuts: list[Decimal],
             source: KbSource, options: EngineOptions | None) -> pd.DataFrame:
    """The matches one part keeps, found by the native engine over its events."""
    import pandas as pd

    q = query_of(text)
    name = str(part["part"].iloc[0])
    events = to_events(part.drop(columns=["part"]).itertuples(index=False))
    found = evaluate(q, events, match_store(source, text), options)
    if split.kind == NONE:  # one engine: its release order is the order
        rows = [match_row(m, released(i)) for i, m in enumerate(found)]
    else:
        if split.kind == KEY:
            found = [m for m in found if match_key(m, split.keys) == name]
        else:
            bounds = _bounds(cuts)
            lo, hi = bounds[int(name)], bounds[int(name) + 1]
            found = [m for m in found if lo <= m.start < hi]
        rows = [match_row(m, order_key(m, clock_close(q, m))) for m in found]
    return pd.DataFrame(rows, columns=["order", "start", "time", "bindings", "events"])


def _bounds(cuts: list[Decimal]) -> list[Decimal]:
    """The time chunks' bounds: chunk i is [bounds[i], bounds[i + 1])."""
    return [Decimal("-Infinity"), *cuts, Decimal("Infinity")]


def match_key(m: Match, keys: tuple[str, ...]) -> str:
    """The key of a match split by key: its terms for ``keys`` in N-Triples, joined by a space."""
    bound = dict(m.bindings)
    return " ".join(str(bound[k]) if k in bound else "" for k in keys)


def match_row(m: Match, order: bytes) -> tuple[Any, ...]:
    """A match as a row of ``MATCH_SCHEMA``."""
    return (order, m.start, m.time, {v: str(t) for v, t in m.bindings},
            [event_struct(t.atom, t.event, t.bindings) for t in m.taken])


def event_struct(atom: str | None, e: Event, bindings: tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    """An event as ``MATCH_SCHEMA``'s ``events`` hold it: the GPM that took it (None for a late
    event), where and when it came, and the variables the GPM bound there."""
    return {"atom": atom, "stream": e.stream, "time": e.time, "dated": e.dated, "seq": e.seq,
            "graph": graph_text(e.name), "bindings": {v: str(term) for v, term in bindings}}
