"""Benchmark: the rdflib processor (``ds.query(text, processor="spaseq")``) against the engine
it wraps, on the same events (generated stock quotes, query ``SEQ(A, B)``).

- ``engine``: ``Engine.push_event`` over the events already in memory, then ``close`` (baseline);
- ``rdflib_memory``: ``Dataset.query`` on rdflib's default in-memory store, which includes reading
  the events out of the Dataset (``read_dataset``, also timed alone) and converting the rows;
- ``rdflib_oxigraph``: the same on oxrdflib's Oxigraph store (``use_store_provided=False``).

Building the Datasets is setup, not timed. Every method must give the same number of matches.
Prints JSON: events/s and each method's ratio to the engine (best of R runs).

    python -m benchmarks.bench_rdflib [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections.abc import Callable

import pyoxigraph
from rdflib import Dataset, Literal, URIRef

from spaseq.engine.api import Engine
from spaseq.engine.events import Event
from spaseq.engine.io.rdflib_terms import to_rdflib
from spaseq.engine.language.query import parse_query
from spaseq.engine.vocab import XSD_DOUBLE, XSD_INTEGER
from spaseq.plugin.dataset_streams import TIME_PREDICATE, read_dataset

PRED = "http://example.org/pred/"
COMPANY = "http://example.org/company/"
STREAM = "http://example.org/stock"

QUERY = f"""PREFIX pred: <{PRED}>
SELECT ?company ?p1 ?p2
FROM STREAM S1 <{STREAM}>
WHERE {{
  SEQ(A, B)
  DEFINE GPM A ON S1 {{ ?company pred:price ?p1 . }}
  DEFINE GPM B ON S1 {{ ?company pred:price ?p2 . ?company pred:volume ?vol2 . FILTER(?p2 > ?p1) }}
}}"""


def make_events(n: int, seed: int = 42) -> list[Event]:
    """``n`` stock quotes (price, volume, time) of 20 companies, one second apart."""
    rng = random.Random(seed)
    price, volume, ts = (pyoxigraph.NamedNode(PRED + p) for p in ("price", "volume", "time"))
    companies = [pyoxigraph.NamedNode(f"{COMPANY}C{i}") for i in range(20)]
    events = []
    for i in range(n):
        c = rng.choice(companies)
        triples = (
            pyoxigraph.Triple(c, price, pyoxigraph.Literal(f"{rng.randint(500, 1500) / 10:g}", datatype=XSD_DOUBLE)),
            pyoxigraph.Triple(c, volume, pyoxigraph.Literal(str(rng.randint(1, 10_000)), datatype=XSD_INTEGER)),
            pyoxigraph.Triple(c, ts, pyoxigraph.Literal(str(i), datatype=XSD_INTEGER)),
        )
        events.append(Event(STREAM, float(i), triples, i))
    return events


def build_dataset(events: list[Event], store: str) -> Dataset:
    """The events as timestamped named graphs (one stream: no spaseq:stream triples needed)."""
    ds = Dataset(store=store)
    for i, e in enumerate(events):
        name = URIRef(f"http://example.org/event/{i}")
        graph = ds.graph(name)
        for t in e.triples:
            graph.add((to_rdflib(t.subject), to_rdflib(t.predicate), to_rdflib(t.object)))
        ds.add((name, TIME_PREDICATE, Literal(int(e.time))))
    return ds


def best(run: Callable[[], int], repeat: int) -> tuple[float, int]:
    """The fastest of ``repeat`` runs (seconds) and the match count it gave."""
    times, count = [], -1
    for _ in range(repeat):
        start = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - start)
    return min(times), count


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=5_000)
    ap.add_argument("--repeat", type=int, default=3, help="best of R runs")
    args = ap.parse_args(argv)

    query = parse_query(QUERY)
    events = make_events(args.events)

    def engine() -> int:
        eng = Engine()
        handle = eng.register(query)
        for e in events:
            eng.push_event(e)
        eng.close()
        return len(list(handle.matches()))

    results: dict[str, dict] = {}
    base_s, base_n = best(engine, args.repeat)
    results["engine"] = {"seconds": base_s, "matches": base_n}
    stores = {"rdflib_memory": ("default", {}), "rdflib_oxigraph": ("Oxigraph", {"use_store_provided": False})}
    for label, (store, extra) in stores.items():
        try:
            ds = build_dataset(events, store)
        except Exception as err:  # oxrdflib not installed: report, do not crash
            results[label] = {"error": f"{type(err).__name__}: {err}"}
            continue
        seconds, n = best(lambda ds=ds, extra=extra: len(ds.query(QUERY, processor="spaseq", **extra)), args.repeat)
        read_s, _ = best(lambda ds=ds: len(read_dataset(ds, query).events), args.repeat)
        results[label] = {"seconds": seconds, "read_dataset_seconds": read_s, "matches": n,
                          "matches_agree": n == base_n}
    for r in results.values():
        if "seconds" in r:
            r["events_per_s"] = round(args.events / r["seconds"])
            r["vs_engine"] = round(base_s / r["seconds"], 3)
    report = {"events": args.events, "query": QUERY, "repeat": args.repeat,
              "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
              "results": results}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
