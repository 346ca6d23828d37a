"""A matches DataFrame (``match``) as results: back on the driver as ``Match``es in the single
engine's release order (``ordered_matches``: what ``spaseq run --spark`` writes through the
same outputs as ``spaseq run``, so DISTINCT and numbering follow the merge), or written by
Spark as Parquet, DISTINCT and numbering applied in Spark (``write_parquet``: results too
large for one process)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pyoxigraph

from spaseq.engine.events import Event
from spaseq.engine.matches import Match, Taken, Term
from spaseq.spark.events import graph_term

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: The Parquet columns before the variables': the match's number (``<output#match-k>``), its
#: start and end in exact seconds, whether its events all had xsd:dateTime times (so the other
#: outputs write its times as xsd:dateTime), and the events it took (``MATCH_SCHEMA``'s).
PARQUET_COLUMNS = ("_number", "_start", "_time", "_dated", "_events")


def ordered_matches(matches: DataFrame) -> Iterator[Match]:
    """The matches of a ``match`` DataFrame in the single engine's order, brought to the
    driver one partition at a time. The matches are kept (memory, then disk) while they are
    read: the sort first samples its input, which would run the engines twice."""
    from pyspark import StorageLevel

    kept = matches.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        for row in kept.orderBy("order").toLocalIterator(prefetchPartitions=True):
            yield to_match(row)
    finally:
        kept.unpersist()


def to_match(row: Any) -> Match:
    """A row of ``MATCH_SCHEMA`` as the ``Match`` the engine found (terms read back from
    N-Triples, events with what the outputs and the order read: no triples)."""
    terms = iter(_terms([*row.bindings.values(),
                         *(term for e in row.events for term in (e.bindings or {}).values())]))
    bindings = tuple(sorted((v, next(terms)) for v in row.bindings))
    taken = []
    for e in row.events:
        own = tuple(sorted((v, next(terms)) for v in (e.bindings or {})))
        event = Event(e.stream, Decimal(e.time), (), int(e.seq), graph_term(e.graph), None, bool(e.dated))
        taken.append(Taken(e.atom, event, own))
    return Match(bindings, tuple(taken), Decimal(row.start), Decimal(row.time))


def write_parquet(matches: DataFrame, path: str, variables: Sequence[str], distinct: bool) -> int:
    """Write the results of ``matches`` to the Parquet folder ``path``: one row per result, in
    the order (``_number``), the query's ``variables`` each a column (the term in N-Triples,
    null when unbound), after DISTINCT when ``distinct``. Returns how many were written."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    columns = [F.col("bindings").getItem(v).alias(v) for v in variables]
    rows = matches.select("order", "start", "time", "events", *columns)
    if distinct:  # the first match of each projected row, in the order
        first = Window.partitionBy(*variables).orderBy("order")
        rows = rows.withColumn("_first", F.row_number().over(first)).filter("_first = 1").drop("_first")
    rows = rows.persist()  # sampled by the sort, then sorted: found once
    numbered = rows.orderBy("order").rdd.zipWithIndex().map(lambda ri: _parquet_row(ri[0], ri[1] + 1, variables))
    schema = ("_number long, _start decimal(38,9), _time decimal(38,9), _dated boolean, "
              f"_events {matches.schema['events'].dataType.simpleString()}, "
              + ", ".join(f"`{v}` string" for v in variables))
    frame = matches.sparkSession.createDataFrame(numbered, schema.rstrip(", "))
    frame = frame.select(*PARQUET_COLUMNS, *variables).cache()
    try:
        frame.write.mode("errorifexists").parquet(path)
        return frame.count()
    finally:
        frame.unpersist()
        rows.unpersist()


def _parquet_row(row: Any, number: int, variables: Sequence[str]) -> tuple[Any, ...]:
    dated = all(e.dated for e in row.events)
    return (number, row.start, row.time, dated, row.events, *(row[v] for v in variables))


def _terms(texts: Iterable[str]) -> list[Term]:
    """Terms from their N-Triples spellings, read by pyoxigraph (as objects: any term)."""
    texts = list(texts)
    if not texts:
        return []
    doc = "".join(f"<urn:s> <urn:p> {t} .\n" for t in texts)
    return [q.object for q in pyoxigraph.parse(doc, format=pyoxigraph.RdfFormat.N_TRIPLES)]
