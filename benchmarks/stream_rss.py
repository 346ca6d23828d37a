"""Peak RSS of the native streaming replay (``_native.ReplayStream``) over replay files of
10^5 and 10^6 events, in time order and out of order, each measured in a fresh child process
(``ru_maxrss``, minus nothing: the child's whole peak, its baseline after import reported
alongside). JSON on stdout (and in ``--output``):

    .venv/bin/python -m benchmarks.stream_rss [--sizes 100000 1000000] [--memory-events N]

Inputs are the stock workload's generated N-Quads (``generators.generate``, cached in
``benchmarks/data/``); the out-of-order file is the same file with its event times permuted
(``(i * 7919) mod n``), written next to it once. ``--python-max`` also measures the Python
reader the engine had before (now the tests' oracle, ``tests/io/replay_oracle.py``,
``read_replay``, whole file) on sizes up to that many events; run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the `benchmarks` package importable
    sys.path.insert(0, str(ROOT))

from benchmarks.generators import datetime_literal, generate  # noqa: E402
from benchmarks.report import emit  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
STAMP = re.compile(r'^(<[^>]*> <http://www\.w3\.org/ns/prov#generatedAtTime> )"[^"]*"\^\^<[^>]*>( \.)$')
PERMUTATION = 7919  # a prime: (i * p) mod n permutes 0..n-1 unless p divides n

CHILD_NATIVE = """
import json, resource, sys, time
from spaseq.engine import _native
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
stream = _native.ReplayStream([("http://ex.org/stock", sys.argv[1])], spill_dir=sys.argv[2],
                              memory_events=int(sys.argv[3]))
events = triples = 0
for batch in stream:
    events += len(batch)
    triples += sum(len(e[4]) for e in batch)
print(json.dumps({"events": events, "triples": triples, "elapsed_s": time.perf_counter() - start,
                  "import_rss_mb": base / 1024,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "modes": stream.modes, "spilled_runs": stream.spilled_runs, "notes": stream.notes}))
"""

CHILD_PYTHON = """
import json, resource, sys, time
from tests.io.replay_oracle import read_replay
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
result = read_replay(sys.argv[1], "http://ex.org/stock")
print(json.dumps({"events": len(result.events), "elapsed_s": time.perf_counter() - start,
                  "import_rss_mb": base / 1024,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def out_of_order(path: str, events: int) -> str:
    """The file with event ``i``'s time replaced by ``(i * PERMUTATION) mod events`` seconds,
    written once next to it, line by line (its stamp lines are the generator's)."""
    target = path[: -len(".nq")] + "-shuffled.nq"
    if os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(path):
        return target
    i = 0
    with open(path, encoding="utf-8") as src, open(target + ".part", "w", encoding="utf-8") as out:
        for line in src:
            match = STAMP.match(line.rstrip("\n"))
            if match:
                seconds = i * PERMUTATION % events
                line = f"{match.group(1)}{datetime_literal(seconds)}{match.group(2)}\n"
                i += 1
            out.write(line)
    os.replace(target + ".part", target)
    return target


def child(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter (in the repository root: the Python reader is the
    tests' oracle, ``tests.io.replay_oracle``) and return the JSON it prints."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False,
                          cwd=ROOT)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else f"exit {done.returncode}"}
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--memory-events", type=int, default=10_000)
    parser.add_argument("--python-max", type=int, default=0,
                        help="also measure the Python reader on sizes up to this many events")
    parser.add_argument("--spill-dir", default=None, help="where out-of-order files are sorted")
    parser.add_argument("--output", help="also write the JSON here")
    args = parser.parse_args(argv)
    spill = args.spill_dir or str(DATA / "spill")
    os.makedirs(spill, exist_ok=True)
    rows = []
    for size in args.sizes:
        dataset = generate("stock", size, DATA)
        ordered = dataset.files()[0]
        files = {"in_order": ordered, "out_of_order": out_of_order(ordered, dataset.events)}
        for order, path in files.items():
            row = {"events": size, "order": order, "file_mb": os.path.getsize(path) / 2**20,
                   "memory_events": args.memory_events, "reader": "native-stream"}
            row.update(child(CHILD_NATIVE, path, spill, str(args.memory_events)))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
            if size <= args.python_max:
                row = {"events": size, "order": order, "reader": "python"}
                row.update(child(CHILD_PYTHON, path))
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    emit({"benchmark": "stream_rss", "rows": rows}, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
