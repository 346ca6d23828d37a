"""A real ``spaseq serve`` process on 127.0.0.1 (a free port) for the tests of this folder,
and the smart-grid fixture's events as HTTP batches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyoxigraph import DefaultGraph, Quad, RdfFormat, serialize

from spaseq.engine.output.match_rdf import stamp_literal
from spaseq.engine.vocab import GENERATED_AT_TIME
from tests.io.replay_oracle import read_replay

ROOT = Path(__file__).resolve().parents[2]
SG = ROOT / "fixtures" / "smartgrid"
SG_STREAMS = [("http://smartgrid.org/mainSource", SG / "power.trig"),
              ("http://smartgrid.org/weather", SG / "weather.trig"),
              ("http://smartgrid.org/storageSource", SG / "storage.trig")]
SG_KB = f"http://smartgrid.org/db={SG / 'kb.nt'}"


@dataclass
class Server:
    """A running server: its address and process."""

    url: str
    process: subprocess.Popen

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.stdout:
                self.process.stdout.close()


def start_server(*args: str, env: dict | None = None) -> Server:
    """``spaseq serve --port 0 ARGS`` started and waited for (its printed address)."""
    process = subprocess.Popen([sys.executable, "-m", "spaseq.engine.cli", "serve", "--port", "0", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, **(env or {})})
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise AssertionError(f"the server did not start: {line}{process.stderr.read()}")  # type: ignore[union-attr]
    return Server(line.rsplit(" ", 1)[1].strip(), process)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = start_server("--kb", SG_KB)
    yield srv
    assert srv.stop() == 0


def smartgrid_batches() -> list[tuple[str, bytes]]:
    """The fixture's events in the order ``spaseq run`` takes them (time, then the streams'
    order on its command line), consecutive events of one stream sent as one TriG batch."""
    events = []
    for rank, (iri, path) in enumerate(SG_STREAMS):
        for e in read_replay(str(path), iri).events:
            events.append((e.time, rank, e.seq, e))
    events.sort(key=lambda x: x[:3])
    batches: list[tuple[str, list]] = []
    for *_, e in events:
        if batches and batches[-1][0] == e.stream:
            batches[-1][1].append(e)
        else:
            batches.append((e.stream, [e]))
    return [(stream, trig(evs)) for stream, evs in batches]


def trig(events: list) -> bytes:
    """Events as a TriG replay body (each graph with its prov:generatedAtTime)."""
    quads = []
    for e in events:
        quads.append(Quad(e.name, GENERATED_AT_TIME, stamp_literal(e.time), DefaultGraph()))
        quads += [Quad(t.subject, t.predicate, t.object, e.name) for t in e.triples]
    return serialize(quads, format=RdfFormat.TRIG)


def numbered(lines: list[str]) -> list[str]:
    """jsonl lines as ndjson followers get them: each object with its match number first."""
    return [f'{{"id":{k},{line[1:]}' for k, line in enumerate(lines, 1)]


def spaseq_run(*fmt: str) -> str:
    """What ``spaseq run`` writes for the smart-grid fixture."""
    streams = [f"--stream={iri}={path}" for iri, path in SG_STREAMS]
    out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(SG / "query.rq"), *streams,
                          "--kb", SG_KB, *fmt], capture_output=True, text=True, check=True)
    return out.stdout
