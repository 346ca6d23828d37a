"""Per-event latency in live mode: from an event written to ``spaseq run``'s stdin to the match it
completes written on its stdout (p50, p99, max), at steady input rates and LATENESS values, and the
CPU the run took.

The stock workload's events (``benchmarks.generators``, cached in ``--data-dir``) are written as
N-Quads to ``spaseq run QUERY --stream S1=- --format jsonl`` (vshape-strict by default), each
event's quads then its timestamp, so that it is complete the moment it is written (the live rules:
spaseq-io ``stream/live.rs``), ``--rates`` events per second, one run per rate, stamps and lateness;
the send time of each event is taken once it is flushed, and a reader thread stamps each output line
as it arrives. A match's latency is its arrival minus the send time of the event that completed it
(the one at the match's ``time``: the events have one event per timestamp). ``--spaseq`` runs
another build (e.g. a checkout from before live input was read natively, whose live path was
Python's) under ``--label``.

**Lateness** (decision 63): ``--lateness 0,100ms,1s`` runs the same workload with ``spaseq run
--lateness X`` (none for 0: the plain command, the baseline, always run and reported beside the
others as ``vs_lateness_0``). A query with a lateness ``L`` evaluates an event at ``t`` only once
its watermark (the latest time seen on each stream it reads, minus ``L``) reaches ``t``, that is
once an event at ``t + L`` or later has come on every stream it reads; so its matches wait for that
event to be *written*, and what ``L`` (event time) costs in wall time depends on how fast event time
runs on the producer's side. ``--stamps`` says: ``file`` keeps the generated stamps (one event per
second of event time), so at ``R`` events/s event time runs ``R`` times faster than wall time and a
lateness of 1 s waits for the next event, ``1/R`` s of wall time; ``wall`` restamps event ``i`` at
the first stamp ``+ i/R`` seconds, as a producer stamping events as it writes them in real time
does, so a lateness of ``L`` waits about ``L`` of wall time. Each run reports that wait
(``watermark_wait_ms``: from the completing event's send to the send of the first event that
moved the watermark past it, ``nominal_wait_ms`` the same on the schedule) and the rest of the
latency (``after_release_ms``). The run ends by closing stdin, which releases every event still
held: the matches completed by events the final watermark did not reach (the last ``L`` of event
time) are not in ``latency_ms`` but in ``end_of_input``, with their own percentiles.

One command, JSON printed and written to ``benchmarks/results/``, and a chart beside it (p50/p99
per lateness; needs matplotlib, the ``bench`` extra)::

    .venv/bin/python -m benchmarks.live_latency [--rates 1000,10000] [--events 20000]
        [--lateness 0,100ms,1s] [--stamps file|wall|wall,file] [--workload vshape-strict]
        [--window 10] [--spaseq PATH] [--label native] [--out FILE] [--no-chart]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

from benchmarks.generators import generate
from benchmarks.report import emit
from benchmarks.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
TIME_PREDICATE = "<http://www.w3.org/ns/prov#generatedAtTime>"
STAMPS = ("file", "wall")
NOTE = ("A match of a query with lateness L is written once the watermark (latest time seen on "
        "each stream it reads minus L) reaches the event that completed it, i.e. once an event L "
        "later in event time has been written. With stamps 'file' (one event per second of event "
        "time, written at rate R events/s) that is ceil(L / 1 s) events later: ceil(L / 1 s) / R "
        "seconds of wall time. With stamps 'wall' (event i stamped i/R s after the first, "
        "event time running with wall time, as a producer stamping events in real time) it is "
        "about L of wall time. watermark_wait_ms measures that wait, after_release_ms the rest. "
        "Matches released only by the end of input (closing stdin) are in end_of_input, not in "
        "latency_ms.")


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


def _key(seconds: float) -> int:
    """A time as a dictionary key: whole microseconds (the stamps' resolution here)."""
    return round(seconds * 1_000_000)


def restamp(events: list[tuple[str, list[str]]], rate: float) -> list[tuple[str, list[str]]]:
    """The events with event ``i`` stamped ``i / rate`` seconds after the first one's stamp (to the
    microsecond): event time runs with the wall time of a producer writing ``rate`` events/s."""
    if not events:
        return []
    first = datetime.fromisoformat(events[0][1][-1].split('"')[1].replace("Z", "+00:00"))
    out = []
    for i, (graph, lines) in enumerate(events):
        at = first + timedelta(microseconds=round(i * 1_000_000 / rate))
        text = at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        head, _old, tail = lines[-1].split('"', 2)
        out.append((graph, [*lines[:-1], f'{head}"{text}"{tail}']))
    return out


_LATENESS = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$")


def lateness_seconds(text: str) -> Decimal:
    """``--lateness`` values: ``0``, ``100ms``, ``1s``, ``1.5s`` (a bare number is seconds), or any
    duration ``spaseq run --lateness`` takes (``500 MILLISECONDS``, ``2min``)."""
    m = _LATENESS.match(text)
    if m:
        amount = Decimal(m.group(1))
        return amount / 1000 if m.group(2) == "ms" else amount
    from spaseq.engine.language.translate import parse_duration

    return parse_duration(text, "--lateness")


def _cli_lateness(seconds: Decimal) -> str:
    """The lateness as ``spaseq run --lateness`` takes it (milliseconds: ``100ms``, ``1000ms``)."""
    return f"{format((seconds * 1000).normalize(), 'f')}ms"


def _percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    pct = statistics.quantiles(values, n=100, method="inclusive") if len(values) >= 2 else values * 99
    return {"p50": round(pct[49], 3), "p99": round(pct[98], 3), "max": round(max(values), 3)}


def _releasers(times: list[int], lateness_us: int) -> list[int | None]:
    """For each event, the first event (itself or later) whose stamp moves the watermark to it
    (stamp - lateness >= its stamp; the core releases held events up to the watermark inclusive),
    or None when no event does: then only the end of input releases it."""
    out: list[int | None] = []
    j = 0
    for i, t in enumerate(times):
        j = max(j, i)
        while j < len(times) and times[j] - lateness_us < t:
            j += 1
        out.append(j if j < len(times) else None)
    return out


def measure(spaseq: str, query: Path, stream: str, events: list[tuple[str, list[str]]], rate: float,
            startup_s: float, lateness: Decimal = Decimal(0), stamps: str = "file") -> dict:
    """One run at ``rate`` events/s (``spaseq run --lateness`` when ``lateness``): latencies (ms)
    of the matches the watermark released, those the end of input released, the wait for the
    watermark, CPU seconds of the run, matches."""
    cmd = [spaseq, "run", str(query), "--stream", f"{stream}=-", "--format", "jsonl"]
    if lateness:
        cmd += ["--lateness", _cli_lateness(lateness)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    arrivals: list[tuple[float, int]] = []  # (arrival, match time as a key)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            arrivals.append((time.perf_counter(), _key(float(json.loads(line)["time"]))))

    reader = threading.Thread(target=read)
    reader.start()
    times = [_key(_seconds(lines[-1])) for _graph, lines in events]
    index = {t: i for i, t in enumerate(times)}
    sent: list[float] = []
    assert proc.stdin is not None
    time.sleep(startup_s)  # let spaseq start (imports, query compilation) before the clock runs
    start = time.perf_counter()
    for i, (_graph, lines) in enumerate(events):
        due = start + i / rate
        while (now := time.perf_counter()) < due:
            time.sleep(min(due - now, 0.0005))
        # stamped before the write: once written, spaseq may answer (and the reader thread
        # record the arrival) before this thread runs again
        sent.append(time.perf_counter())
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
    sending_s = time.perf_counter() - start
    proc.stdin.close()
    closed = time.perf_counter()
    reader.join()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    releaser = _releasers(times, round(lateness * 1_000_000))
    latencies, waits, nominal, after, tail, tail_after_close = [], [], [], [], [], 0
    for arrived, t in arrivals:
        i = index.get(t)
        if i is None:
            continue
        j = releaser[i]
        if j is None:  # released by closing stdin: its own figures, not the watermark's
            tail.append((arrived - sent[i]) * 1000)
            tail_after_close += arrived >= closed
            continue
        latencies.append((arrived - sent[i]) * 1000)
        waits.append((sent[j] - sent[i]) * 1000)
        nominal.append((j - i) / rate * 1000)
        after.append((arrived - sent[j]) * 1000)
    return {
        "rate_events_per_s": rate, "events": len(events),
        "sent_events_per_s": round(len(events) / sending_s, 1) if sending_s > 0 else None,
        "matches": len(arrivals), "measured": len(latencies),
        "latency_ms": _percentiles(sorted(latencies)),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "returncode": proc.returncode,
        "lateness_s": float(lateness), "stamps": stamps,
        "event_time_per_wall_s": _event_time_rate(times, rate),
        "nominal_wait_ms": round(statistics.median(nominal), 3) if nominal else None,
        "watermark_wait_ms": _percentiles(sorted(waits)),
        "after_release_ms": _percentiles(sorted(after)),
        "end_of_input": {"matches": len(tail), "arrived_after_close": tail_after_close,
                         "latency_ms": _percentiles(sorted(tail))},
    }


def _event_time_rate(times: list[int], rate: float) -> float | None:
    """Seconds of event time per second of wall time on the producer's schedule."""
    if len(times) < 2:
        return None
    return round((times[-1] - times[0]) / 1_000_000 / ((len(times) - 1) / rate), 3)


def compare(runs: list[dict]) -> None:
    """Add ``vs_lateness_0`` to every run with a lateness: its latency against the run without one
    at the same rate and stamps, in the same invocation (differences in ms, ratios)."""
    base = {(r["stamps"], r["rate_events_per_s"]): r for r in runs if r["lateness_s"] == 0}
    for r in runs:
        b = base.get((r["stamps"], r["rate_events_per_s"]))
        if r["lateness_s"] == 0 or b is None:
            continue
        out: dict[str, float | None] = {}
        for p in ("p50", "p99", "max"):
            mine, theirs = r["latency_ms"][p], b["latency_ms"][p]
            ok = mine is not None and theirs is not None
            out[f"{p}_added_ms"] = round(mine - theirs, 3) if ok else None
            out[f"{p}_ratio"] = round(mine / theirs, 1) if ok and theirs > 0 else None
        out["cpu_ratio"] = round(r["cpu_s"] / b["cpu_s"], 2) if b["cpu_s"] else None
        out["same_matches"] = r["matches"] == b["matches"]
        r["vs_lateness_0"] = out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workload", default="vshape-strict")
    p.add_argument("--events", type=int, default=20000)
    p.add_argument("--rates", default="1000,10000", help="events per second, one run each")
    p.add_argument("--lateness", default="0,100ms,1s",
                   help="spaseq run --lateness values, one run each (0: none; always run, the baseline)")
    p.add_argument("--stamps", default="file",
                   help="event times: file (the generated ones, 1 event per second of event time), "
                        "wall (event i at the first + i/rate s: event time runs with wall time), or both")
    p.add_argument("--window", type=int, default=10, help="the query's WITHIN, minutes")
    p.add_argument("--startup", type=float, default=3.0, help="seconds spaseq is given to start")
    p.add_argument("--spaseq", default=str(ROOT / ".venv" / "bin" / "spaseq"), help="the spaseq to run")
    p.add_argument("--label", default="native", help="what --spaseq is, in the results")
    p.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "data")
    p.add_argument("--out", type=Path, help="the JSON file (default: benchmarks/results/live-latency-*.json)")
    p.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    args = p.parse_args(argv)
    latenesses = [lateness_seconds(x) for x in args.lateness.split(",")]
    latenesses = sorted(set([Decimal(0), *latenesses]))  # the baseline is always in the run
    stamps_list = [s.strip() for s in args.stamps.split(",")]
    if bad := [s for s in stamps_list if s not in STAMPS]:
        p.error(f"--stamps {','.join(bad)}: expected file, wall or both")
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
        for stamps in stamps_list:
            for rate in (float(r) for r in args.rates.split(",")):
                mine = restamp(events, rate) if stamps == "wall" else events
                for lateness in latenesses:
                    runs.append(measure(args.spaseq, query, stream, mine, rate, args.startup, lateness, stamps))
                    print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    compare(runs)
    report = {
        "benchmark": "live_latency", "label": args.label, "spaseq": args.spaseq,
        "workload": args.workload, "window_minutes": args.window, "events": len(events),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "note": NOTE, "runs": runs,
    }
    out = args.out or RESULTS / f"live-latency-{args.label}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    emit(report, out)
    print(f"written to {out}", file=sys.stderr)
    if not args.no_chart:
        from benchmarks.chart import write_latency_chart

        print(write_latency_chart(report, out.with_suffix(".png")), file=sys.stderr)
    return 0 if all(r["returncode"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
