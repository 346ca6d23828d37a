"""``spaseq serve`` with RSEP-QL's policies (docs/decisions.md 65): a registered query's
selection and consumption hold over HTTP pushes, and across a SIGKILL and restart on the same
data directory (what a released match used up comes back from the snapshot and journal)."""

from __future__ import annotations

import signal

import httpx

from spaseq.engine.io.native_events import read_replay_files

from .conftest import ROOT, start_server, trig

FIG1 = ROOT / "fixtures" / "rsep_ql" / "fig1.trig"
S = "http://example.org/S"
QUERY = """PREFIX : <http://example.org/>
SELECT ?x ?y ?z WITHIN 10 SECONDS SELECTION RECENT CONSUMPTION MATCHED
FROM STREAM S <http://example.org/S>
WHERE { SEQ(E1 : E2) DEFINE GPM E1 ON S { ?x :p ?y } DEFINE GPM E2 ON S { ?y :q ?z } }"""


def _push(url: str, events) -> None:
    r = httpx.post(f"{url}/events", params={"stream": S}, content=trig(events),
                   headers={"Content-Type": "application/trig"})
    assert r.status_code == 200, r.text


def _rows(url: str, qid: str) -> list[tuple[str, ...]]:
    rows = httpx.get(f"{url}/queries/{qid}/matches",
                     headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
    return [tuple(r[v]["value"].rsplit("/", 1)[1] for v in ("x", "y", "z")) for r in rows]


def test_recent_with_consumption_over_http_survives_a_kill(tmp_path) -> None:
    """The paper's EP-SPARQL recent setting: (a1 b1 c1) at 6 and (a2 b2 c2) at 8, nothing at
    10 because G1's triple was used up at 6, though the server was killed after 8."""
    events, error = read_replay_files([(S, str(FIG1))])
    assert error is None
    data = str(tmp_path / "data")
    first = start_server("--data", data, "--snapshot-every", "2")
    reg = httpx.post(f"{first.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
    assert reg.status_code == 201, reg.text
    qid = reg.json()["id"]
    for e in events[:4]:
        _push(first.url, [e])
    assert _rows(first.url, qid) == [("a1", "b1", "c1"), ("a2", "b2", "c2")]
    first.process.send_signal(signal.SIGKILL)
    assert first.stop() == -signal.SIGKILL
    second = start_server("--data", data)
    try:
        _push(second.url, events[4:])
        assert httpx.post(f"{second.url}/heartbeat", params={"time": "100"}).status_code in (200, 204)
        assert _rows(second.url, qid) == [("a1", "b1", "c1"), ("a2", "b2", "c2")]
    finally:
        second.stop()
