"""The native replay reader against pyoxigraph parsing the same file in Python (every quad
touched): ``ReplayStream`` construction (its first pass), iteration (the second pass, events
as Python tuples) and ``count_replay``; medians and minima of repeats, JSON out::

    .venv/bin/python -m benchmarks.stream_speed [--file FILE.nq] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph
from pyoxigraph import RdfFormat

from spaseq.engine import _native
from spaseq.engine._native import _testing

ROOT = Path(__file__).resolve().parent.parent
STREAM = "http://stockmarket.org/stocks"
GENERATED_AT = "http://www.w3.org/ns/prov#generatedAtTime"


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _parse_only(path: str) -> None:
    for q in pyoxigraph.parse(path=path, format=RdfFormat.N_QUADS):
        q.subject, q.predicate, q.object, q.graph_name  # noqa: B018 - touching each term is the point


def measure(path: str, repeats: int) -> dict:
    times: dict[str, list[float]] = {"parse": [], "construct": [], "iterate": [], "count_replay": []}
    events = 0
    for _ in range(repeats):
        times["parse"].append(_timed(lambda: _parse_only(path)))
        times["construct"].append(_timed(lambda: _native.ReplayStream([(STREAM, path)])))
        stream = _native.ReplayStream([(STREAM, path)])
        start = time.perf_counter()
        events = sum(len(batch) for batch in stream)
        times["iterate"].append(time.perf_counter() - start)
        times["count_replay"].append(_timed(lambda: _testing.count_replay(path, GENERATED_AT)))
    return {
        "file": path, "events": events, "repeats": repeats,
        "median_s": {k: round(statistics.median(v), 4) for k, v in times.items()},
        "min_s": {k: round(min(v), 4) for k, v in times.items()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--file", default=str(ROOT / "benchmarks/data/stock-100000-s42-stocks.nq"))
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    print(json.dumps(measure(args.file, args.repeats), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
