"""``spaseq serve`` throughput and SSE delivery latency, against ``spaseq run`` on the same
events in the same run.

One stream of synthetic readings (``{ ?sensor :value ?v }``, 4 sensors, one event a second,
seeded), one query (a reading above 50, then a higher one on the same sensor within 5 s). Each
measurement starts its own server on a free loopback port, registers the query, then:

- ``single``: ``--single`` events, one ``POST /events`` (N-Quads) each, back to back;
- ``batch100`` / ``batch1000``: ``--events`` events in batches of 100 / 1,000;
- ``sse``: ``--latency-events`` single-event POSTs paced at ``--rate`` events/s while a client
  follows ``/queries/{id}/matches`` as ``text/event-stream``; a match's latency is its arrival at
  the client minus the moment the POST of the event completing it (the event whose time is the
  match's ``time``) was sent: HTTP, parsing, the engine, the match log and SSE together.

Events/s are over the pushing only (the server's start-up and the registration are setup); each
row's ``matches`` is checked against ``spaseq run`` on the same events (``matches_agree``).
``spaseq run`` (a whole process, start-up included, jsonl to a pipe) is timed on the ``--events``
file. One command, JSON out::

    .venv/bin/python -m benchmarks.serve_bench [--events 20000] [--single 2000]
        [--latency-events 1000] [--rate 200] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from benchmarks.report import emit

ROOT = Path(__file__).resolve().parent.parent
STREAM = "http://ex.org/bench/readings"
TIME = "<http://www.w3.org/ns/prov#generatedAtTime>"
INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"
QUERY = f"""PREFIX : <http://ex.org/>
SELECT ?s ?v1 ?v2 WITHIN 5 SECONDS FROM STREAM S <{STREAM}>
WHERE {{ SEQ(A; B)
  DEFINE GPM A ON S {{ ?s :value ?v1 FILTER(?v1 > 50) }}
  DEFINE GPM B ON S {{ ?s :value ?v2 FILTER(?v2 > ?v1) }} }}"""
NQUADS = {"Content-Type": "application/n-quads"}


def events(n: int, seed: int = 1) -> list[str]:
    """``n`` events as N-Quads blocks (a reading, then the graph's timestamp ``i``)."""
    rng = random.Random(seed)
    return [f"<urn:bench:sensor{rng.randrange(4)}> <http://ex.org/value> "
            f"\"{rng.randrange(100)}\"^^{INTEGER} <urn:bench:e{i}> .\n"
            f"<urn:bench:e{i}> {TIME} \"{i}\"^^{INTEGER} .\n" for i in range(n)]


class Server:
    """``spaseq serve --port 0`` on loopback, with the query registered."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "spaseq.engine.cli", "serve", "--port", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening on" not in line:
            self.process.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        self.url = line.rsplit(" ", 1)[1].strip()
        r = httpx.post(f"{self.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
        r.raise_for_status()
        self.qid = r.json()["id"]

    def matches(self) -> int:
        return httpx.get(f"{self.url}/queries/{self.qid}").json()["results"]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def cli(blocks: list[str]) -> tuple[int, float]:
    """``spaseq run`` on these events: (matches, wall seconds of the whole process)."""
    with tempfile.TemporaryDirectory() as tmp:
        data, query = Path(tmp, "events.nq"), Path(tmp, "query.rq")
        data.write_text("".join(blocks), encoding="utf-8")
        query.write_text(QUERY, encoding="utf-8")
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(query),
                              f"--stream={STREAM}={data}", "--format", "jsonl"],
                             capture_output=True, text=True, check=True)
        return len(out.stdout.splitlines()), time.perf_counter() - start


def throughput(blocks: list[str], batch: int) -> dict:
    """Push ``blocks`` in batches of ``batch`` on one keep-alive connection: events/s."""
    server = Server()
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            start = time.perf_counter()
            for i in range(0, len(blocks), batch):
                r = client.post("/events", params={"stream": STREAM},
                                content="".join(blocks[i:i + batch]).encode(), headers=NQUADS)
                r.raise_for_status()
            elapsed = time.perf_counter() - start
        matches = server.matches()
    finally:
        server.stop()
    return {"events": len(blocks), "batch": batch, "requests": -(-len(blocks) // batch),
            "elapsed_s": round(elapsed, 3), "events_per_s": round(len(blocks) / elapsed, 1),
            "matches": matches}


def sse_latency(blocks: list[str], rate: float) -> dict:
    """Single-event POSTs at ``rate``/s while an SSE client follows the matches."""
    server = Server()
    arrivals: list[tuple[float, int]] = []  # (arrival, match time)
    ready = threading.Event()
    done = threading.Event()

    def follow() -> None:
        try:
            _follow()
        except httpx.HTTPError:  # the server stopping ends the stream
            pass

    def _follow() -> None:
        with httpx.stream("GET", f"{server.url}/queries/{server.qid}/matches",
                          headers={"Accept": "text/event-stream"}, timeout=None) as r:
            ready.set()
            for line in r.iter_lines():
                if line.startswith("data:"):
                    arrivals.append((time.perf_counter(), int(float(json.loads(line[5:])["time"]))))
                if done.is_set():
                    return

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    ready.wait(10)
    sent: dict[int, float] = {}
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            start = time.perf_counter()
            for i, block in enumerate(blocks):
                due = start + i / rate
                while (now := time.perf_counter()) < due:
                    time.sleep(min(due - now, 0.001))
                sent[i] = time.perf_counter()
                client.post("/events", params={"stream": STREAM}, content=block.encode(),
                            headers=NQUADS).raise_for_status()
        expected = server.matches()
        deadline = time.perf_counter() + 10
        while len(arrivals) < expected and time.perf_counter() < deadline:
            time.sleep(0.01)
        done.set()
    finally:
        server.stop()
    latencies = sorted((arrived - sent[t]) * 1000 for arrived, t in arrivals if t in sent)
    pct = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) >= 2 else latencies * 99
    return {"events": len(blocks), "rate_events_per_s": rate, "matches": expected,
            "received": len(arrivals),
            "latency_ms": {"p50": round(pct[49], 2), "p99": round(pct[98], 2),
                           "max": round(latencies[-1], 2)} if latencies else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=20000, help="events for the batch runs and spaseq run")
    p.add_argument("--single", type=int, default=2000, help="events for the single-event POST run")
    p.add_argument("--latency-events", type=int, default=1000)
    p.add_argument("--rate", type=float, default=200.0, help="events/s of the SSE latency run")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    blocks = events(args.events)
    cli_matches, cli_s = cli(blocks)
    runs = {"single": throughput(blocks[:args.single], 1),
            "batch100": throughput(blocks, 100),
            "batch1000": throughput(blocks, 1000)}
    prefix_matches = {n: cli(blocks[:n])[0] for n in {args.single, args.latency_events}}
    for run in runs.values():
        run["matches_agree"] = run["matches"] == (cli_matches if run["events"] == args.events
                                                  else prefix_matches[run["events"]])
    runs["sse"] = sse_latency(blocks[:args.latency_events], args.rate)
    runs["sse"]["matches_agree"] = runs["sse"]["received"] == prefix_matches[args.latency_events]
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "query": QUERY,
        "spaseq_run": {"events": args.events, "elapsed_s": round(cli_s, 3),
                       "events_per_s": round(args.events / cli_s, 1), "matches": cli_matches},
        "serve": runs,
    }
    emit(result, args.out)
    return 0 if all(r["matches_agree"] for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
