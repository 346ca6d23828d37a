"""Per-event latency in live mode: from an event written to ``spaseq run``'s stdin to the match it
completes written on its stdout (p50, p99, max), at steady input rates, and the CPU the run took.

The stock workload's events (``benchmarks.generators``, cached in ``--data-dir``) are written as
N-Quads to ``spaseq run QUERY --stream S1=- --format jsonl`` (vshape-strict by default), each
event's quads then its timestamp, so that it is complete the moment it is written (the live rules:
spaseq-io ``stream/live.rs``), ``--rates`` events per second, one run per rate; the send time of each
event is taken once it is flushed, and a reader thread stamps each output line as it arrives. A
match's latency is its arrival minus the send time of the event that completed it (the one at the
match's ``time``: the stock events have one event per timestamp). ``--spaseq`` runs another build
(e.g. a checkout from before live input was read natively, whose live path was Python's) under
``--label``. One command, JSON printed and written to ``benchmarks/results/``::

    .venv/bin/python -m benchmarks.live_latency [--rates 1000,10000] [--events 20000]
        [--workload vshape-strict] [--window 10] [--spaseq PATH] [--label native] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.generators import generate
from benchmarks.report import emit
from benchmarks.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
TIME_PREDICATE = "<http://www.w3.org/ns/prov#generatedAtTime>"


def _events(path: str) -> list[tuple[str, list[str]]]:
    """The replay file's events in file order: (graph, lines to write: quads then timestamp)."""
    stamps: dict[str, str] = {}
    quads: dict[str, list[str]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        if TIME_PREDICATE in line and line.count("<") + line.count("_:") <= 3:  # default graph
            subject = line.partition(f" {TIME_PREDICATE} ")[0]
            stamps[subject] = line
            quads.setdefault(subject, [])
        else:
            quads.setdefault(line.rsplit(" ", 2)[-2], []).append(line)
    return [(g, [*lines, stamps[g]]) for g, lines in quads.items() if g in stamps]


def _seconds(stamp_line: str) -> float:
    """The time of a timestamp line (an xsd:dateTime) in epoch seconds, as jsonl's ``time``."""
    text = stamp_line.split('"')[1]
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    pct = statistics.quantiles(values, n=100, method="inclusive") if len(values) >= 2 else values * 99
    return {"p50": round(pct[49], 3), "p99": round(pct[98], 3), "max": round(max(values), 3)}


def measure(spaseq: str, query: Path, stream: str, events: list[tuple[str, list[str]]], rate: float,
            startup_s: float) -> dict:
    """One run at ``rate`` events/s: latencies (ms), CPU seconds of the run, matches."""
    proc = subprocess.Popen([spaseq, "run", str(query), "--stream", f"{stream}=-", "--format", "jsonl"],
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
    for i, (_graph, lines) in enumerate(events):
        due = start + i / rate
        while (now := time.perf_counter()) < due:
            time.sleep(min(due - now, 0.0005))
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        sent[_seconds(lines[-1])] = time.perf_counter()
    sending_s = time.perf_counter() - start
    proc.stdin.close()
    reader.join()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    latencies = sorted((arrived - sent[t]) * 1000 for arrived, t in arrivals if t in sent)
    return {
        "rate_events_per_s": rate, "events": len(events),
        "sent_events_per_s": round(len(events) / sending_s, 1) if sending_s > 0 else None,
        "matches": len(arrivals), "measured": len(latencies),
        "latency_ms": _percentiles(latencies),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "returncode": proc.returncode,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workload", default="vshape-strict")
    p.add_argument("--events", type=int, default=20000)
    p.add_argument("--rates", default="1000,10000", help="events per second, one run each")
    p.add_argument("--window", type=int, default=10, help="the query's WITHIN, minutes")
    p.add_argument("--startup", type=float, default=3.0, help="seconds spaseq is given to start")
    p.add_argument("--spaseq", default=str(ROOT / ".venv" / "bin" / "spaseq"), help="the spaseq to run")
    p.add_argument("--label", default="native", help="what --spaseq is, in the results")
    p.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "data")
    p.add_argument("--out", type=Path, help="the JSON file (default: benchmarks/results/live-latency-*.json)")
    args = p.parse_args(argv)
    workload = WORKLOADS[args.workload]
    dataset = generate(workload.dataset, args.events, args.data_dir)
    ((_iri, path),) = dataset.streams.items()
    events = _events(path)[: args.events]
    text = workload.query_text(args.window)
    stream = text.split("FROM STREAM ")[1].split()[0]
    with tempfile.TemporaryDirectory() as tmp:
        query = Path(tmp) / "q.rq"
        query.write_text(text, encoding="utf-8")
        runs = []
        for rate in (float(r) for r in args.rates.split(",")):
            runs.append(measure(args.spaseq, query, stream, events, rate, args.startup))
            print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    report = {
        "benchmark": "live_latency", "label": args.label, "spaseq": args.spaseq,
        "workload": args.workload, "window_minutes": args.window, "events": len(events),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "runs": runs,
    }
    out = args.out or RESULTS / f"live-latency-{args.label}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    emit(report, out)
    print(f"written to {out}", file=sys.stderr)
    return 0 if all(r["returncode"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
