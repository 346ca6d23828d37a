"""The benchmark workloads (dataset x SPAseq query), query loading and event streaming."""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter
from pathlib import Path

from pyoxigraph import BlankNode, DefaultGraph, NamedNode, RdfFormat, Store, Triple, parse

from benchmarks.generators import PROV_ENDED_AT, PROV_GENERATED_AT, PROV_STARTED_AT, Dataset
from spaseq.engine.events import Event
from spaseq.engine.values.timestamps import to_seconds

QUERY_DIR = Path(__file__).resolve().parent / "queries"
_WITHIN = re.compile(r"^(\s*)WITHIN\s+\d+(?:\.\d+)?\s+[A-Za-z]+\s*$", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True)
class Workload:
    """One benchmark workload: a dataset kind, a query file and its windows (minutes) per mode."""

    name: str
    dataset: str
    query_file: str
    windows: tuple[int, ...]
    quick_window: int
    full_windows: tuple[int, ...]
    note: str = ""
    intervals: bool = False  # planned for events that last (its data has them: decision 71)
    prototype: str | None = None  # the purpose-built matcher's --query for it (benchmarks/prototype)

    def query_text(self, window_minutes: float) -> str:
        """The workload's SPAseq query with its WITHIN clause set to ``window_minutes``."""
        return with_window((QUERY_DIR / self.query_file).read_text(encoding="utf-8"), window_minutes)


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("vshape-strict", "stock", "vshape_strict.rq", (1, 60), 10, (1, 10, 30, 60),
                 "V-shape, strict contiguity ','", prototype="vshape-strict"),
        Workload("vshape-next", "stock", "vshape_next.rq", (1, 60), 10, (1, 10, 30, 60),
                 "V-shape, skip-till-next ';'", prototype="vshape-next"),
        Workload("vshape-any", "stock", "vshape_any.rq", (1,), 1, (1, 5),
                 "V-shape, skip-till-any ':' (matches grow with the window cubed: small windows only)",
                 prototype="vshape-any"),
        Workload("vshape-many", "stockmany", "vshape_many.rq", (2,), 2, (1, 2, 5),
                 "many-key V-shape, ':', 40 companies, 10 trades/s (0.03, 0.45, 13 matches/event at 1, 2, 5 min)",
                 prototype="vshape-many"),
        Workload("vshape-any-matched", "stock", "vshape_any_matched.rq", (1, 60), 10, (1, 10, 30, 60),
                 "V-shape, ':' with CONSUMPTION MATCHED: each trade in one match at most",
                 prototype="vshape-any-matched"),
        Workload("spike-any", "stock", "spike_any.rq", (1, 10), 10, (1, 10, 30, 60),
                 "rare high-volume trade after any cheaper one, ':' (skewed: for lazy_chain)"),
        Workload("head-shoulders", "stock", "head_shoulders.rq", (1, 60), 10, (1, 10, 30, 60),
                 "head-and-shoulders, 7 GPMs, ','"),
        Workload("creditcard", "creditcard", "creditcard.rq", (1, 60), 10, (1, 10, 30, 60),
                 "big after small, SEQ(A, B+), KB join"),
        Workload("smartgrid", "smartgrid", "smartgrid.rq", (1, 60), 10, (1, 10, 30, 60),
                 "SEQ(A; B+, C) over 3 streams, KB join"),
        Workload("traffic", "traffic", "traffic.rq", (1, 60), 10, (1, 10, 30, 60),
                 "SEQ(A; (B & C)) over 3 streams"),
        Workload("fire", "sensors", "program_p_fire.rq", (1, 10), 1, (1, 10, 30),
                 "program P rule 1: smoke then a hot reading in the area, ':', events that last",
                 intervals=True),
        Workload("burnt-down", "sensors", "program_p_burnt_down.rq", (1, 10), 1, (1, 10, 30),
                 "program P rule 2: a hot reading, then no reading of its sensor for 12 s (AFTER timer NOT)",
                 intervals=True),
        Workload("avg-temp", "sensors", "program_p_avg_temp.rq", (2, 10), 2, (2, 10, 30),
                 "program P rule 3: each reading with the average of its sensor's minute before "
                 "(BEFORE timer COLLECT, AVG)", intervals=True),
    )
}


def with_window(text: str, window_minutes: float) -> str:
    """The query text with its (single) ``WITHIN ...`` line replaced by ``WITHIN n MINUTES``."""
    amount = int(window_minutes) if float(window_minutes).is_integer() else window_minutes
    new, count = _WITHIN.subn(lambda m: f"{m.group(1)}WITHIN {amount} MINUTES", text, count=1)
    if count != 1:
        raise ValueError("the query has no 'WITHIN n UNIT' line to parameterise")
    return new


def load_kb(dataset: Dataset) -> Store | None:
    """The dataset's knowledge base in a fresh pyoxigraph Store (its named graph), or None."""
    if dataset.kb is None:
        return None
    store = Store()
    graph = NamedNode(dataset.kb_graph) if dataset.kb_graph else DefaultGraph()
    store.load(path=dataset.kb, format=RdfFormat.N_TRIPLES, to_graph=graph)
    return store


def _file_events(path: str, stream: str) -> Iterator[tuple[float, NamedNode | BlankNode, list[Triple], float]]:
    """The events of one generated N-Quads file, streamed: (time, graph name, triples, start).

    Relies on the generators' layout (each graph's timestamp triple, or its start and end,
    before its triples, graphs written in one block, in time order); the smoke test checks it
    against ``read_replay``.
    """
    time_preds = (NamedNode(PROV_GENERATED_AT), NamedNode(PROV_ENDED_AT))
    start_pred = NamedNode(PROV_STARTED_AT)
    times: dict[NamedNode | BlankNode, float] = {}
    starts: dict[NamedNode | BlankNode, float] = {}
    triple_of = attrgetter("triple")
    # consecutive quads of one graph: grouped and unpacked at C speed (groupby, attrgetter)
    for graph, quads in groupby(parse(path=path, format=RdfFormat.N_QUADS), key=attrgetter("graph_name")):
        if isinstance(graph, DefaultGraph):
            for quad in quads:
                if quad.predicate in time_preds:
                    times[quad.subject] = to_seconds(quad.object)
                elif quad.predicate == start_pred:
                    starts[quad.subject] = to_seconds(quad.object)
            continue
        try:
            time = times.pop(graph)
        except KeyError:
            raise ValueError(f"{path}: graph {graph} has no timestamp before its triples") from None
        yield time, graph, list(map(triple_of, quads)), starts.pop(graph, time)


def iter_events(dataset: Dataset, limit: int | None = None) -> Iterator[Event]:
    """The dataset's events in streamset order (time, then stream order, then file order), streamed."""

    def tagged(index: int, stream: str, path: str) -> Iterator[
            tuple[float, int, int, str, NamedNode | BlankNode, list[Triple], float]]:
        for k, (time, name, triples, start) in enumerate(_file_events(path, stream)):
            yield time, index, k, stream, name, triples, start

    sources = [tagged(i, s, p) for i, (s, p) in enumerate(dataset.streams.items())]
    for seq, (time, _index, _k, stream, name, triples, start) in enumerate(heapq.merge(*sources)):
        if limit is not None and seq >= limit:
            return
        yield Event(stream=stream, time=time, triples=tuple(triples), seq=seq, name=name, start=start)
