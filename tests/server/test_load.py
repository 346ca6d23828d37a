"""A bounded loopback load test of ``spaseq serve``: several pushers at once, nothing lost.

``PUSHERS`` threads each push their own stream (disjoint streams, each in time order, as
N-Quads batches) while the others push theirs; each stream has its own registered query. When
all are done, every query's match count must equal what ``spaseq run`` finds for the same query
on the same events: a lost, duplicated or reordered event would change it.

The default is the size the issue asks for, 10^5 events in all (about a minute on 2 shared
cores); a quicker local run is one environment variable away::

    SPASEQ_LOAD_EVENTS=20000 .venv/bin/python -m pytest tests/server/test_load.py
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from .conftest import start_server

TOTAL = int(os.environ.get("SPASEQ_LOAD_EVENTS", "100000"))
PUSHERS = 4
BATCH = 500
TIME = "<http://www.w3.org/ns/prov#generatedAtTime>"
INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"


def stream_iri(k: int) -> str:
    return f"http://ex.org/load/stream{k}"


def query_text(k: int) -> str:
    """A rise on one sensor of stream ``k``: a high reading, then a higher one within 5 s."""
    return f"""PREFIX : <http://ex.org/>
SELECT ?s ?v1 ?v2 WITHIN 5 SECONDS FROM STREAM S <{stream_iri(k)}>
WHERE {{ SEQ(A; B)
  DEFINE GPM A ON S {{ ?s :value ?v1 FILTER(?v1 > 90) }}
  DEFINE GPM B ON S {{ ?s :value ?v2 FILTER(?v2 > ?v1) }} }}"""


def events(k: int, n: int) -> list[str]:
    """Stream ``k``'s ``n`` events as N-Quads blocks, one a second, seeded by ``k``."""
    rng = random.Random(k)
    blocks = []
    for i in range(n):
        g = f"<urn:load:{k}:e{i}>"
        blocks.append(f"<urn:load:sensor{rng.randrange(4)}> <http://ex.org/value> "
                      f"\"{rng.randrange(100)}\"^^{INTEGER} {g} .\n"
                      f"{g} {TIME} \"{i}\"^^{INTEGER} .\n")
    return blocks


def cli_matches(k: int, path: Path, tmp: Path) -> int:
    """The number of matches ``spaseq run`` finds for stream ``k``'s query on its file."""
    query = tmp / f"q{k}.rq"
    query.write_text(query_text(k), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(query),
                          f"--stream={stream_iri(k)}={path}", "--format", "jsonl"],
                         capture_output=True, text=True, check=True)
    return len(out.stdout.splitlines())


def test_concurrent_pushers_lose_no_event(tmp_path: Path) -> None:
    per_stream = TOTAL // PUSHERS
    blocks = {k: events(k, per_stream) for k in range(PUSHERS)}
    files = {}
    for k, bs in blocks.items():
        files[k] = tmp_path / f"stream{k}.nq"
        files[k].write_text("".join(bs), encoding="utf-8")

    srv = start_server()
    try:
        qids = {}
        for k in range(PUSHERS):
            r = httpx.post(f"{srv.url}/queries", content=query_text(k),
                           headers={"Content-Type": "application/sparql-query"})
            assert r.status_code == 201, r.text
            qids[k] = r.json()["id"]
        accepted = dict.fromkeys(range(PUSHERS), 0)
        errors: list[str] = []
        start = threading.Barrier(PUSHERS)

        def push(k: int) -> None:
            with httpx.Client(base_url=srv.url, timeout=60) as client:
                start.wait()
                for i in range(0, per_stream, BATCH):
                    r = client.post("/events", params={"stream": stream_iri(k)},
                                    content="".join(blocks[k][i:i + BATCH]).encode(),
                                    headers={"Content-Type": "application/n-quads"})
                    if r.status_code != 200:
                        errors.append(f"stream {k}, batch at {i}: {r.status_code} {r.text}")
                        return
                    accepted[k] += r.json()["accepted"]

        threads = [threading.Thread(target=push, args=(k,)) for k in range(PUSHERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not any(t.is_alive() for t in threads), "a pusher hung"
        assert errors == []
        assert accepted == dict.fromkeys(range(PUSHERS), per_stream)
        assert httpx.get(f"{srv.url}/").json()["events"] == per_stream * PUSHERS
        served = {k: httpx.get(f"{srv.url}/queries/{qid}").json()["results"] for k, qid in qids.items()}
    finally:
        assert srv.stop() == 0

    expected = {k: cli_matches(k, files[k], tmp_path) for k in range(PUSHERS)}
    assert all(n > 0 for n in expected.values())  # the workload does match
    assert served == expected
