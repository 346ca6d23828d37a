"""The paper's Figure 18 experiment: the cost per event of a GRAPH clause over knowledge
bases of 10^4 to 10^6 triples, plus the throughput of ``spaseq kb load`` and ``kb refresh``.

The KB (graph ``<http://bench.org/db>``) describes N/2 cards: ``?card :holder ?name ;
:limit ?l``. Events ``{ ?card :amount ?a }`` pick cards uniformly from a pool of 1000 cards
of the KB (repeat customers, as in the credit-card workload). The query is one GPM:
``{ ?card :amount ?a . GRAPH <db> { ?card :holder ?name } }``. Measured per KB size, each on
the same events and the same on-disk store (built by the Spark load job, timed), best of
``--repeat`` runs after one untimed warm-up pass over the store:

- ``engine``: ``Engine(kb=KbStore(dir))``, the GRAPH join cached per KB version and binding;
- ``engine_nocache``: the same engine with its KB cache disabled (one KB query per event);
- ``pyoxigraph_per_event``: a plain pyoxigraph query of the KB pattern per event, with the
  card bound (``substitutions``) on the read-only store, and the event part in Python;
- ``engine_no_graph``: the query without its GRAPH clause, to subtract the event part.

``graph_us_per_event`` is (system - engine_no_graph) / events for the engines, and the query
time alone for the pyoxigraph baseline. Load throughput is distinct quads written per second
of job time (Spark parse, dedupe, export, Oxigraph bulk load); refresh throughput is dump
quads per second for a refresh changing 1% of the KB.

    python -m benchmarks.bench_kb [--sizes 10000,100000,1000000] [--events 5000] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pyoxigraph
from pyoxigraph import Literal, NamedNode, Triple, Variable

from benchmarks.report import emit

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "kb"
RESULTS = HERE / "results"
NS = "http://bench.org/"
DB = f"{NS}db"
STREAM = f"{NS}payments"
HOT_CARDS = 1000

QUERY = f"""PREFIX : <{NS}>
SELECT ?card ?a ?name
FROM STREAM S1 <{STREAM}>
WHERE {{ SEQ(A) DEFINE GPM A ON S1 {{ ?card :amount ?a . GRAPH <{DB}> {{ ?card :holder ?name }} }} }}"""
QUERY_NO_GRAPH = f"""PREFIX : <{NS}>
SELECT ?card ?a
FROM STREAM S1 <{STREAM}>
WHERE {{ SEQ(A) DEFINE GPM A ON S1 {{ ?card :amount ?a }} }}"""


def write_kb(path: Path, triples: int, seed: int, change: float = 0.0) -> None:
    """N-Triples of ``triples`` triples about triples/2 cards; ``change`` renames that share of holders."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(triples // 2):
            name = f"holder{i}" if rng.random() >= change else f"renamed{i}"
            out.write(f'<{NS}card/{i}> <{NS}holder> "{name}" .\n'
                      f'<{NS}card/{i}> <{NS}limit> "{1000 + i % 9000}"^^<http://www.w3.org/2001/XMLSchema#integer> .\n')


def make_events(n: int, cards: int, seed: int = 7):
    from spaseq.engine.events import Event

    rng = random.Random(seed)
    pool = rng.sample(range(cards), min(HOT_CARDS, cards))
    amount = NamedNode(f"{NS}amount")
    return [Event(STREAM, float(i), (Triple(NamedNode(f"{NS}card/{rng.choice(pool)}"), amount,
                                            Literal(str(rng.randint(1, 500)))),), i, None)
            for i in range(n)]


def run_engine(store_dir: Path, events, query: str, cache: bool = True) -> tuple[float, int]:
    from spaseq.engine.api import Engine
    from spaseq.engine.kb.reader import KbStore

    with KbStore(store_dir) as kb:
        engine = Engine(kb=kb)
        handle = engine.register(query, keep=False, on_match=lambda m: None)
        count = 0

        def counter(_m) -> None:
            nonlocal count
            count += 1

        handle.callback = counter
        native = handle.runtime.session.engine
        start = time.perf_counter()
        for e in events:
            if not cache:  # the native KB cache forgotten before each event: a query per event
                native.kb_changed()
            engine.push_event(e)
        engine.close()
        return time.perf_counter() - start, count


def run_pyoxigraph(store_dir: Path, events) -> tuple[float, int]:
    """The KB pattern as a plain pyoxigraph query per event (the event part in Python)."""
    store = pyoxigraph.Store.read_only(str(store_dir))
    text = f"SELECT ?card ?name WHERE {{ GRAPH <{DB}> {{ ?card <{NS}holder> ?name }} }}"
    card = Variable("card")
    count = 0
    start = time.perf_counter()
    for e in events:
        for t in e.triples:
            if t.predicate.value == f"{NS}amount":
                count += sum(1 for _ in store.query(text, substitutions={card: t.subject}))
    return time.perf_counter() - start, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3, help="best of R runs per system")
    parser.add_argument("--quick", action="store_true", help="sizes 10^4, 10^5 and 500 events")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = [10_000, 100_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    n_events = 500 if args.quick else args.events

    from spaseq.engine.kb.layout import StoreLayout
    from spaseq.engine.kb.load_job import JobOptions, run_load
    from spaseq.engine.kb.refresh_job import run_refresh
    from spaseq.engine.kb.session import spark_session

    spark = spark_session(args.master)
    DATA.mkdir(parents=True, exist_ok=True)
    report: dict = {
        "schema": "spaseq-bench-kb/1",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "pyoxigraph": pyoxigraph.__version__, "platform": platform.platform()},
        "config": {"sizes": sizes, "events": n_events, "hot_cards": HOT_CARDS, "master": args.master,
                   "repeat": args.repeat},
        "runs": [],
    }
    for size in sizes:
        dump = DATA / f"kb-{size}.nt"
        if not dump.exists():
            write_kb(dump, size, seed=size)
        store = DATA / f"store-{size}"
        shutil.rmtree(store, ignore_errors=True)
        load = run_load(spark, JobOptions([str(dump)], str(store), graph=DB))
        row: dict = {"kb_triples": load["loaded"], "load_s": load["seconds"],
                     "load_quads_per_s": round(load["loaded"] / load["seconds"], 1)}
        if size == max(sizes):
            changed = DATA / f"kb-{size}-changed.nt"
            write_kb(changed, size, seed=size, change=0.02)  # 2% of holders = 1% of the triples
            refresh = run_refresh(spark, JobOptions([str(changed)], str(store)))
            row.update(refresh_s=refresh["seconds"], refresh_added=refresh["added"],
                       refresh_removed=refresh["removed"], refresh_strategy=refresh["strategy"],
                       refresh_quads_per_s=round(refresh["statements"] / refresh["seconds"], 1))
        oxi = StoreLayout.at(store).oxigraph_dir(StoreLayout.at(store).current())
        events = make_events(n_events, size // 2)
        run_pyoxigraph(oxi, events)  # warm the OS page cache and RocksDB's block cache: not timed
        measured = {name: min((fn() for _ in range(args.repeat)), key=lambda r: r[0]) for name, fn in (
            ("engine", lambda: run_engine(store, events, QUERY)),  # noqa: B023 - called at once
            ("engine_nocache", lambda: run_engine(store, events, QUERY, cache=False)),  # noqa: B023
            ("pyoxigraph_per_event", lambda: run_pyoxigraph(oxi, events)),  # noqa: B023
        )}
        base_s, base_n = min((run_engine(store, events, QUERY_NO_GRAPH) for _ in range(args.repeat)),
                             key=lambda r: r[0])
        for name, (elapsed, n) in measured.items():
            graph_s = elapsed if name == "pyoxigraph_per_event" else elapsed - base_s
            row[name] = {"elapsed_s": round(elapsed, 4), "matches": n,
                         "us_per_event": round(1e6 * elapsed / n_events, 2),
                         "graph_us_per_event": round(1e6 * graph_s / n_events, 2)}
        row["engine_no_graph"] = {"elapsed_s": round(base_s, 4), "matches": base_n,
                                  "us_per_event": round(1e6 * base_s / n_events, 2)}
        ref = row["pyoxigraph_per_event"]["graph_us_per_event"]
        for name in ("engine", "engine_nocache"):
            cost = row[name]["graph_us_per_event"]
            row[name]["graph_cost_vs_pyoxigraph"] = round(cost / ref, 3) if ref > 0 else None
        row["matches_agree"] = len({row[n]["matches"] for n in ("engine", "engine_nocache",
                                                                 "pyoxigraph_per_event")}) == 1
        report["runs"].append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    spark.stop()
    args.output.mkdir(parents=True, exist_ok=True)
    out = args.output / f"kb-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
    emit(report, out)
    print(f"written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
