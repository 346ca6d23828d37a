"""What ``Engine.snapshot()`` and ``Engine.restore()`` cost: a workload's events pushed through
the API, then at a few points the snapshot's size and the time to take it and to restore it
(and a state-only snapshot's: taken, and restored in place into an engine with the query),
beside the state it holds (open runs, events held) and the time to push the events that led
there (the baseline: restoring must cost far less than replaying). One command, JSON out::

    .venv/bin/python -m benchmarks.snapshot_cost [--workload vshape-next] [--events 20000]
        [--window 10] [--points 4] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.generators import generate
from benchmarks.report import emit
from benchmarks.workloads import WORKLOADS, iter_events, load_kb


def _best(call, repeat: int = 20) -> tuple[object, float]:
    """``call()``'s result and its fastest time of ``repeat`` (sub-millisecond calls: the
    minimum is the least disturbed by a shared machine)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return result, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="vshape-next", choices=sorted(WORKLOADS))
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--window", type=int, default=10, help="minutes")
    parser.add_argument("--points", type=int, default=4, help="snapshots taken, evenly spaced")
    parser.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "spaseq-bench-data"))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    from spaseq.engine.api import Engine

    workload = WORKLOADS[args.workload]
    dataset = generate(workload.dataset, args.events, args.data_dir)
    kb = load_kb(dataset)
    engine = Engine(kb=kb)
    engine.register(workload.query_text(args.window), keep=False)
    switching = Engine(kb=kb)  # the same query: where state-only snapshots are restored
    switching.register(workload.query_text(args.window), keep=False)
    events = list(iter_events(dataset))
    every = max(len(events) // args.points, 1)
    rows = []
    pushed = 0.0
    for k, event in enumerate(events, 1):
        start = time.perf_counter()
        engine.push_event(event)
        pushed += time.perf_counter() - start
        if k % every == 0:
            start = time.perf_counter()
            data = engine.snapshot()
            took = time.perf_counter() - start
            start = time.perf_counter()
            restored = Engine.restore(data, kb=kb)
            back = time.perf_counter() - start
            state, state_took = _best(lambda: engine.snapshot(state_only=True))
            _, state_back = _best(lambda: switching.restore_state(state))  # noqa: B023
            footprint = engine.handles[0].runtime.footprint()
            assert restored.handles[0].runtime.footprint() == footprint
            assert switching.handles[0].runtime.footprint() == footprint
            rows.append({"events": k, "bytes": len(data), "snapshot_s": round(took, 4),
                         "restore_s": round(back, 4), "state_bytes": len(state),
                         "state_snapshot_s": round(state_took, 5), "restore_state_s": round(state_back, 5),
                         "push_so_far_s": round(pushed, 3),
                         "held_events": len(engine._native.engine.held()), **footprint})
    result = {"schema": "spaseq-snapshot/1", "workload": args.workload, "window_minutes": args.window,
              "rows": rows}
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
