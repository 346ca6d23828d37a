"""Whole replay runs (``Engine.run_replay``, what ``spaseq run`` does on replay files, reading
included) against the parse-only ceiling (pyoxigraph parsing the same files, every quad
touched), per workload, in one process: wall-clock medians and ``x ceiling``, or, with
``--callgrind``, instructions per event of the run (a child under callgrind that sets the
engine up and runs the files, minus one that only sets it up)::

    .venv/bin/python -m benchmarks.replay_speed [--workloads vshape-next,creditcard]
        [--size 100000] [--window 10] [--repeats 3] [--callgrind] [--data-dir DIR]

The data are the project's generators' (``benchmarks.generators.generate``), cached in
``--data-dir``. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = "vshape-strict,vshape-next,spike-any,head-shoulders,creditcard,smartgrid,traffic"


def _engine(workload: str, dataset, window: float):  # noqa: ANN001, ANN202
    from benchmarks.workloads import WORKLOADS, load_kb
    from spaseq.engine.api import Engine

    engine = Engine(kb=load_kb(dataset))
    counter = [0]

    def count(*_args: object, **_kwargs: object) -> None:
        counter[0] += 1

    engine.register(WORKLOADS[workload].query_text(window), on_match=count, keep=False)
    return engine, counter


def _dataset(workload: str, size: int, data_dir: str):  # noqa: ANN202
    from benchmarks.generators import generate
    from benchmarks.workloads import WORKLOADS

    return generate(WORKLOADS[workload].dataset, size, data_dir)


def run_once(workload: str, size: int, window: float, data_dir: str, replay: bool) -> int:
    """Set the engine up and (if ``replay``) run the files; the number of matches."""
    dataset = _dataset(workload, size, data_dir)
    engine, counter = _engine(workload, dataset, window)
    if replay:
        error = engine.run_replay(list(dataset.streams.items()))
        if error is not None:
            raise SystemExit(f"{workload}: {error}")
    else:
        engine.close()
    return counter[0]


def _instructions(args: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             "-m", "benchmarks.replay_speed", "--child", *args],
            check=True, cwd=ROOT, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        text = Path(out).read_text()
    m = re.search(r"^summary: (\d+)", text, re.M) or re.search(r"^totals: (\d+)", text, re.M)
    if m is None:
        raise SystemExit("no callgrind summary")
    return int(m[1])


def callgrind(workload: str, size: int, window: float, data_dir: str) -> dict:
    common = [workload, str(size), str(window), data_dir]
    matches = run_once(workload, size, window, data_dir, True)  # warm-up, data generated
    setup = _instructions([*common, "setup"])
    run = _instructions([*common, "run"])
    return {"events": size, "matches": matches, "setup_instructions": setup,
            "instructions_per_event": round((run - setup) / size)}


def wall(workload: str, size: int, window: float, data_dir: str, repeats: int) -> dict:
    from benchmarks.baselines import parse_ceiling

    dataset = _dataset(workload, size, data_dir)
    runs, ceilings, matches = [], [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        parse_ceiling(dataset)
        ceilings.append(time.perf_counter() - start)
        engine, counter = _engine(workload, dataset, window)
        start = time.perf_counter()
        error = engine.run_replay(list(dataset.streams.items()))
        runs.append(time.perf_counter() - start)
        if error is not None:
            raise SystemExit(f"{workload}: {error}")
        matches = counter[0]
    run, ceiling = statistics.median(runs), statistics.median(ceilings)
    return {"events": size, "matches": matches, "run_s": round(run, 3),
            "ceiling_s": round(ceiling, 3), "events_per_s": round(size / run),
            "x_ceiling": round(ceiling / run, 3)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        workload, size, window, data_dir, what = argv[1:]
        run_once(workload, int(size), float(window), data_dir, what == "run")
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workloads", default=DEFAULT)
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--window", type=float, default=10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--callgrind", action="store_true")
    p.add_argument("--data-dir", default=str(ROOT / "benchmarks/data"))
    args = p.parse_args(argv)
    out = {}
    for workload in args.workloads.split(","):
        if args.callgrind:
            out[workload] = callgrind(workload, args.size, args.window, args.data_dir)
        else:
            out[workload] = wall(workload, args.size, args.window, args.data_dir, args.repeats)
        print(workload, json.dumps(out[workload]), file=sys.stderr)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
