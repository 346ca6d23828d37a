"""Memory of a long run (issue 24): peak RSS of whole ``spaseq run`` processes over the stock
workload's replay files of growing size (it must follow what the windows hold, not the
stream's length), and the resident set of an engine compacting its dictionary ten times
(each compaction must free the native side it replaces). Each measurement runs in a fresh
child process; JSON on stdout (and in ``--output``):

    .venv/bin/python -m benchmarks.run_rss [--sizes 100000 1000000] [--query vshape_any.rq]
        [--dataset stock] [--workload NAME] [--window 120] [--compactions 10] [--output FILE]

    # issue 29: flat to 5x10^6 events, the many-key V-shape, runs only
    .venv/bin/python -m benchmarks.run_rss --workload vshape-many --window 120 \
        --sizes 100000 1000000 5000000 --compactions 0 --output rss.json

``run`` rows: ``spaseq run QUERY --stream IRI=FILE ... [--kb GRAPH=FILE] --format jsonl
--stats=json`` over the dataset ``--dataset`` (every stream of it, its KB loaded; the query's
WITHIN clause replaced by ``--window`` seconds), stdout to /dev/null, the child's
``ru_maxrss`` and CPU from ``os.wait4``, its matches and sampled peak of open runs from
``--stats=json``, and its resident set sampled every ``--sample-every`` seconds
(``/proc/PID/status`` VmRSS; ``rss_trace_mb``: [seconds, MB] pairs, at most 60): where in the
run the peak is reached, and whether the resident set climbs with the stream or stays level.
``--workload`` takes the dataset and query of a runner workload (``benchmarks/workloads.py``,
e.g. ``vshape-many``: ``stockmany`` and ``vshape_many.rq``). ``compaction`` rows: events with fresh terms (an IRI, a price and a note of
``--pad`` characters) pushed through ``Engine.push_event`` with ``Engine.COMPACT_MIN_TERMS``
lowered to ``--min-terms``, until ``--compactions`` compactions; the resident set after
each one (no ``gc.collect()``: what the engine frees by itself), the ``NativeSession`` and
``QueryRuntime`` objects still alive at the end (after ``gc.collect()``) and the
``NativeEngine`` objects they hold, next to the same events pushed without compaction.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(ROOT))

from benchmarks.generators import Dataset, generate  # noqa: E402
from benchmarks.report import emit  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
QUERIES = ROOT / "benchmarks" / "queries"
WITHIN = re.compile(r"WITHIN [0-9]+ [A-Z]+")

CHILD_RUN = "import sys; from spaseq.engine.cli.main import main; sys.exit(main())"

CHILD_COMPACTION = """
import gc, json, resource, sys
from pyoxigraph import Literal, NamedNode, Triple
from spaseq.engine.api import Engine
from spaseq.engine.events import Event

EX = "http://ex.org/"
QUERY = '''PREFIX : <http://ex.org/>
SELECT ?c ?p1 ?p2 WITHIN 10 SECONDS
FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A ; B+)
  DEFINE GPM A ON S { ?e :co ?c ; :price ?p1 }
  DEFINE GPM B ON S { ?f :co ?c ; :price ?p2 FILTER(?p2 > ?p1) } }'''
min_terms, pad, compactions, events = int(sys.argv[1]), "x" * int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def rss_mb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20

def alive():
    names = {"NativeSession": 0, "QueryRuntime": 0}
    engines = set()
    for o in gc.get_objects():
        name = type(o).__name__
        if name in names and type(o).__module__ == "spaseq.engine.runtime.native":
            names[name] += 1
            engines.add(id(o.engine if name == "NativeSession" else o._native))
    return {**names, "NativeEngine": len(engines)}

Engine.COMPACT_MIN_TERMS = min_terms
engine = Engine()
handle = engine.register(QUERY, keep=False)
found = [0]
handle.callback = lambda m: found.__setitem__(0, found[0] + 1)
co, price, note = NamedNode(EX + "co"), NamedNode(EX + "price"), NamedNode(EX + "note")
gc.collect()
start = rss_mb()
after = []
i = 0
while (engine.compactions < compactions) if events == 0 else (i < events):
    e = NamedNode(f"{EX}e{i}")
    engine.push_event(Event(EX + "s", i, (Triple(e, co, NamedNode(f"{EX}C{i % 3}")),
                                          Triple(e, price, Literal(str(i % 97 + i / 1000))),
                                          Triple(e, note, Literal(f"{pad}{i}"))), i))
    i += 1
    if engine.compactions > len(after):  # no gc.collect(): what the engine frees by itself
        after.append(round(rss_mb(), 1))
gc.collect()
print(json.dumps({"events": i, "compactions": engine.compactions, "matches": found[0],
                  "terms": engine._native.engine.terms(), "start_rss_mb": round(start, 1),
                  "rss_after_each_compaction_mb": after, "end_rss_mb": round(rss_mb(), 1),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "alive_at_end": alive()}))
"""


def run_command(query: str, dataset: Dataset) -> list[str]:
    """``spaseq run`` over every stream of ``dataset`` (by IRI), its KB loaded, jsonl on stdout."""
    command = [sys.executable, "-c", CHILD_RUN, "run", query]
    for iri, path in dataset.streams.items():
        command += ["--stream", f"{iri}={path}"]
    if dataset.kb is not None:
        command += ["--kb", f"{dataset.kb_graph}={dataset.kb}" if dataset.kb_graph else dataset.kb]
    return [*command, "--format", "jsonl", "--stats=json", "--no-progress"]


def _vm_rss_mb(pid: int) -> float | None:
    """The resident set of process ``pid`` now (VmRSS), None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _thin(trace: list[tuple[float, float]], most: int = 60) -> list[list[float]]:
    """At most ``most`` evenly spread samples of ``trace`` (the last one and the highest kept)."""
    if len(trace) > most:
        step = len(trace) / (most - 1)
        keep = {int(i * step) for i in range(most - 1)} | {len(trace) - 1}
        keep.add(max(range(len(trace)), key=lambda i: trace[i][1]))
        trace = [trace[i] for i in sorted(keep)]
    return [[round(t, 1), round(mb, 1)] for t, mb in trace]


def run_child(query: str, dataset: Dataset, sample_every: float = 0.5) -> dict:
    """One ``spaseq run`` process over ``dataset``: its peak RSS (``os.wait4``), CPU and wall
    time, its ``--stats`` (matches, open runs), and its resident set sampled as it runs."""
    began = time.perf_counter()
    with tempfile.TemporaryFile("w+b") as err:  # a file: a pipe not read until the end could fill
        proc = subprocess.Popen(run_command(query, dataset), stdout=subprocess.DEVNULL, stderr=err)
        trace: list[tuple[float, float]] = []
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            mb = _vm_rss_mb(proc.pid)
            if mb is not None:
                trace.append((time.perf_counter() - began, mb))
            time.sleep(sample_every)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    row: dict = {"elapsed_s": round(time.perf_counter() - began, 2),
                 "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                 "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}
    if proc.returncode != 0:  # a signal (negative) says itself: a crash may leave no message
        row.update({"error": lines[-1:], "exit_status": proc.returncode})
        return row
    stats = json.loads(lines[-1])
    row.update({"matches": stats["matches"], "open_runs_peak": stats.get("open_runs_peak"),
                "rss_trace_mb": _thin(trace)})
    return row


def compaction_child(*args: str) -> dict:
    """The compaction experiment in a fresh interpreter: the JSON it prints."""
    done = subprocess.run([sys.executable, "-c", CHILD_COMPACTION, *args], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else f"exit {done.returncode}"}
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--query", default="vshape_any.rq", help="a query of benchmarks/queries")
    parser.add_argument("--dataset", default="stock", help="a dataset kind of benchmarks/generators.py")
    parser.add_argument("--workload", help="a workload of benchmarks/workloads.py: its dataset and query")
    parser.add_argument("--sample-every", type=float, default=0.5, help="seconds between RSS samples")
    parser.add_argument("--window", type=int, default=120, help="the query's window, in seconds")
    parser.add_argument("--compactions", type=int, default=10, help="0: no compaction rows")
    parser.add_argument("--min-terms", type=int, default=20_000)
    parser.add_argument("--pad", type=int, default=1000, help="characters of each event's note")
    parser.add_argument("--output", help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.workload:
        from benchmarks.workloads import WORKLOADS

        args.dataset, args.query = WORKLOADS[args.workload].dataset, WORKLOADS[args.workload].query_file
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        query = Path(tmp) / args.query
        text = (QUERIES / args.query).read_text(encoding="utf-8")
        query.write_text(WITHIN.sub(f"WITHIN {args.window} SECONDS", text), encoding="utf-8")
        for size in args.sizes:
            dataset = generate(args.dataset, size, DATA)
            row = {"kind": "run", "events": size, "dataset": args.dataset, "query": args.query,
                   "window_s": args.window, "streams": list(dataset.streams),
                   **run_child(str(query), dataset, args.sample_every)}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    if args.compactions:
        compacted = compaction_child(str(args.min_terms), str(args.pad), str(args.compactions), "0")
        rows.append({"kind": "compaction", **compacted})
        print(json.dumps(rows[-1]), file=sys.stderr)
        if "events" in compacted:
            rows.append({"kind": "no compaction", **compaction_child(str(10**12), str(args.pad), "0",
                                                                     str(compacted["events"]))})
            print(json.dumps(rows[-1]), file=sys.stderr)
    emit({"benchmark": "run_rss", "rows": rows}, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
