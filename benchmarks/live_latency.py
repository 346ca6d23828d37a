"""Per-match latency in live mode: from an event written to ``spaseq run``'s stdin to the match
it completes written on its stdout (p50, p99, max), at a steady input rate.

The stock workload's events (``benchmarks.generators``, cached in ``--data-dir``) are written as
N-Quads to ``spaseq run QUERY --stream S1=- --format jsonl``, each event's quads then its
timestamp then a blank line (so it is complete the moment it is written: ``engine/io/live.py``),
``--rate`` events per second; a reader thread stamps each output line as it arrives. A match's
latency is its arrival minus the moment the event with the match's ``time`` was written (the
stock events have one event per timestamp). One command, JSON out::

    .venv/bin/python -m benchmarks.live_latency [--events 20000] [--rate 2000] [--window 10]
        [--workload vshape-next] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.generators import Dataset, generate
from benchmarks.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parent.parent
TIME_PREDICATE = "<http://www.w3.org/ns/prov#generatedAtTime>"


def _events(path: str) -> list[tuple[str, list[str]]]:
    """The replay file's events in file order: (timestamp literal, quad lines)."""
    stamps: dict[str, str] = {}
    quads: dict[str, list[str]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        graph = line.rsplit(" ", 2)[-2]
        if TIME_PREDICATE in line and line.count("<") + line.count("_:") <= 3:  # default graph
            subject, _, literal = line.partition(f" {TIME_PREDICATE} ")
            stamps[subject] = literal.rstrip(" .")
            quads.setdefault(subject, [])
            continue
        quads.setdefault(graph, []).append(line)
    return [(stamps[g], lines) for g, lines in quads.items() if g in stamps]


def _seconds(literal: str) -> float:
    from datetime import datetime

    text = literal.split('"')[1]
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def measure(workload: str, events: int, rate: float, window: int, data_dir: Path,
            startup_s: float = 3.0) -> dict:
    dataset: Dataset = generate(WORKLOADS[workload].dataset, events, data_dir)
    ((_stream, path),) = dataset.streams.items()
    evs = _events(path)[:events]
    query = Path(tempfile.mkstemp(suffix=".rq")[1])
    query.write_text(WORKLOADS[workload].query_text(window), encoding="utf-8")
    name = WORKLOADS[workload].query_text(window).split("FROM STREAM ")[1].split()[0]
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/spaseq"), "run", str(query), "--stream", f"{name}=-",
         "--format", "jsonl"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    arrivals: list[tuple[float, float]] = []  # (arrival, match time in s)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            arrivals.append((time.perf_counter(), float(json.loads(line)["time"])))

    reader = threading.Thread(target=read)
    reader.start()
    sent: dict[float, float] = {}
    assert proc.stdin is not None
    time.sleep(startup_s)  # let spaseq start (imports, query compilation) before the clock runs
    start = time.perf_counter()
    for i, (stamp, lines) in enumerate(evs):
        due = start + i / rate
        while (now := time.perf_counter()) < due:
            time.sleep(min(due - now, 0.001))
        graph = lines[0].rsplit(" ", 2)[-2] if lines else None
        text = "\n".join(lines) + f"\n{graph} {TIME_PREDICATE} {stamp} .\n\n"
        proc.stdin.write(text)
        proc.stdin.flush()
        sent[_seconds(stamp)] = time.perf_counter()
    proc.stdin.close()
    reader.join()
    proc.wait()
    query.unlink()
    latencies = sorted((arrived - sent[t]) * 1000 for arrived, t in arrivals if t in sent)
    pct = statistics.quantiles(latencies, n=100) if len(latencies) >= 2 else latencies * 99
    return {
        "workload": workload, "events": len(evs), "rate_events_per_s": rate, "window_minutes": window,
        "matches": len(arrivals), "measured": len(latencies), "startup_wait_s": startup_s,
        "latency_ms": {"p50": pct[49], "p99": pct[98], "max": latencies[-1] if latencies else None},
        "returncode": proc.returncode,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workload", default="vshape-next")
    p.add_argument("--events", type=int, default=20000)
    p.add_argument("--rate", type=float, default=2000.0)
    p.add_argument("--window", type=int, default=10)
    p.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "data")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    result = measure(args.workload, args.events, args.rate, args.window, args.data_dir)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0 if result["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
