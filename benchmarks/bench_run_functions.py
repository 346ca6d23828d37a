"""Micro-benchmark: what calling a spaseq run function in a GPM body costs.

The credit-card workload (``queries/creditcard.rq``, ``SEQ(A, B+)`` with a KB join) is run
through ``api.evaluate`` twice in the same process on the same events: as it is, and with B's
FILTER extended by ``spaseq:count("amount2") >= 0`` (always true, so both give the same
matches). The second makes B run-aware: it loses the per-event shared hot path and gets a
``RunContext`` (its run's Kleene+ iterations) per evaluation. Both are measured on the compiled
GPM path and on the pyoxigraph path (``compiled_gpm=False``: per-run ``custom_functions``).
Prints JSON: events/s per variant and the ratios to the plain query on the same path.

    python benchmarks/bench_run_functions.py [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from pathlib import Path

from pyoxigraph import NamedNode, RdfFormat, Store

from spaseq.engine import api
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.io.native_events import read_replay_files
from spaseq.engine.language.query import parse_query

HERE = Path(__file__).parent
DATA = HERE / "data"
STREAM = "http://creditcard.org/transactions"


def _inputs(size: int) -> tuple[list, Store]:
    events_file = DATA / f"creditcard-{size}-s42-transactions.nq"
    kb_file = DATA / f"creditcard-{size}-s42-kb.nt"
    if not events_file.exists():
        sys.exit(f"{events_file} is missing: run `python -m benchmarks --quick` once to generate it")
    events, error = read_replay_files([(STREAM, str(events_file))])
    if error is not None:
        sys.exit(str(error))
    kb = Store()
    kb.load(path=str(kb_file), format=RdfFormat.N_TRIPLES, to_graph=NamedNode("http://creditcard.org/db"))
    return events, kb


def _queries() -> dict[str, str]:
    plain = (HERE / "queries" / "creditcard.rq").read_text()
    marker = "FILTER (?amount2 >= ?amount1 * 10)"
    assert marker in plain
    aware = "PREFIX spaseq: <https://w3id.org/spaseq#>\n" + plain.replace(
        marker, 'FILTER (?amount2 >= ?amount1 * 10 && spaseq:count("amount2") >= 0)')
    return {"plain": plain, "run_aware": aware}


def _bag(matches) -> Counter:
    return Counter((tuple(id(t.event) for t in m.taken), m.bindings) for m in matches)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000, help="events to use (from the 10^4 file)")
    ap.add_argument("--repeat", type=int, default=3, help="best of R runs")
    args = ap.parse_args(argv)
    events, kb = _inputs(10_000)
    events = events[: args.events]
    out: dict = {"machine": {"python": platform.python_version(), "platform": platform.platform()},
                 "events": len(events), "runs": {}}
    bags = {}
    for path, opts in (("compiled", EngineOptions()), ("pyoxigraph", EngineOptions(compiled_gpm=False))):
        for name, text in _queries().items():
            q = parse_query(text)
            best = float("inf")
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                matches = api.evaluate(q, events, kb, opts)
                best = min(best, time.perf_counter() - t0)
            bags[(path, name)] = _bag(matches)
            out["runs"][f"{path}/{name}"] = {"seconds": round(best, 4), "events_per_s": round(len(events) / best),
                                              "matches": len(matches)}
        plain, aware = out["runs"][f"{path}/plain"], out["runs"][f"{path}/run_aware"]
        out["runs"][f"{path}/run_aware"]["vs_plain"] = round(plain["seconds"] / aware["seconds"], 3)
    out["matches_agree"] = len({frozenset(b.items()) for b in bags.values()}) == 1
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
