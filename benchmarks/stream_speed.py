"""Native streaming replay reader (ReplayStream: construction = first pass, iteration =
second pass with events as Python tuples) and count_replay, against pyoxigraph parsing the
same file in Python (every quad touched): medians of repeats, JSON out.

    .venv/bin/python benchmarks/stream_speed.py [FILE.nq] [REPEATS]
"""
import json, statistics, sys, time
import pyoxigraph
from pyoxigraph import RdfFormat
from spaseq.engine import _native

path = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/data/stock-100000-s42-stocks.nq"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
iri = "http://stockmarket.org/stocks"

def parse_only():
    for q in pyoxigraph.parse(path=path, format=RdfFormat.N_QUADS):
        q.subject, q.predicate, q.object, q.graph_name

def construct():
    return _native.ReplayStream([(iri, path)])

def stream_full():
    s = _native.ReplayStream([(iri, path)])
    t0 = time.perf_counter()
    n = sum(len(b) for b in s)
    return time.perf_counter() - t0, n

res = {"parse": [], "construct": [], "iterate": [], "count_replay": []}
for _ in range(repeats):
    t = time.perf_counter(); parse_only(); res["parse"].append(time.perf_counter() - t)
    t = time.perf_counter(); construct(); res["construct"].append(time.perf_counter() - t)
    it, n = stream_full(); res["iterate"].append(it)
    t = time.perf_counter(); _native.count_replay(path, "http://www.w3.org/ns/prov#generatedAtTime"); res["count_replay"].append(time.perf_counter() - t)
print(json.dumps({"file": path, "events": n, "repeats": repeats,
                  "median_s": {k: round(statistics.median(v), 4) for k, v in res.items()},
                  "min_s": {k: round(min(v), 4) for k, v in res.items()}}))
