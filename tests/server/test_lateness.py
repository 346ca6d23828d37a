"""``spaseq serve --lateness``: a producer a little behind is accepted (its events are put in
time order), and the matches are those of the sorted input; an event behind by more than the
lateness is dropped by the queries it is late for, the answer and each query's description
saying so (a restart keeps the counts), or gets 409 under ``--late error``."""

from __future__ import annotations

import httpx
import pytest

from .conftest import start_server

QUERY = """PREFIX : <http://ex.org/>
SELECT ?a ?b WITHIN 10 SECONDS FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A ; B) DEFINE GPM A ON S { ?x :a ?a } DEFINE GPM B ON S { ?x :b ?b } }"""


def post(url: str, time: int | str, triple: str) -> httpx.Response:
    return httpx.post(f"{url}/events", params={"stream": "http://ex.org/s", "time": str(time)},
                      content=triple.encode(), headers={"Content-Type": "text/turtle"})


def test_a_batch_late_within_the_lateness_is_accepted_and_put_in_order() -> None:
    srv = start_server("--lateness", "2sec")
    try:
        reg = httpx.post(f"{srv.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
        assert reg.status_code == 201, reg.text
        assert post(srv.url, 1, "<http://ex.org/x> <http://ex.org/a> 1 .").status_code == 200
        assert post(srv.url, 4, "<http://ex.org/x> <http://ex.org/b> 4 .").status_code == 200
        # 2 s behind 4: within the lateness, and the first B after A once in time order
        assert post(srv.url, 2, "<http://ex.org/x> <http://ex.org/b> 2 .").status_code == 200
        late = post(srv.url, 1, "<http://ex.org/x> <http://ex.org/b> 0 .")
        assert late.status_code == 200, late.text
        assert late.json() == {"accepted": 1, "late": [{"stream": "http://ex.org/s", "time": "1",
                                                        "queries": ["q1"]}]}
        assert httpx.get(f"{srv.url}/queries/q1").json()["late"] == 1
        assert httpx.post(f"{srv.url}/heartbeat", params={"time": "100"}).status_code in (200, 204)
        rows = httpx.get(f"{srv.url}{reg.json()['matches']}",
                         headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
        assert [(r["a"]["value"], r["b"]["value"]) for r in rows] == [("1", "2")]
    finally:
        assert srv.stop() == 0


@pytest.mark.parametrize("snapshot_every", ["2", "1000"])
def test_what_the_lateness_holds_back_survives_a_crash(tmp_path, snapshot_every: str) -> None:
    """kill -9 with an event held back by the lateness: the restarted server (same --data,
    without --lateness: the query keeps the lateness it was accepted with, from the snapshot
    or the journal) still holds it, and the matches are the sorted input's, each once."""
    import signal

    data = str(tmp_path / "data")
    first = start_server("--data", data, "--lateness", "2sec", "--snapshot-every", snapshot_every)
    reg = httpx.post(f"{first.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
    assert reg.status_code == 201, reg.text
    for t, p, v in [(1, "a", 1), (4, "b", 4), (2, "b", 2), (6, "a", 6)]:
        assert post(first.url, t, f"<http://ex.org/x> <http://ex.org/{p}> {v} .").status_code == 200
    first.process.send_signal(signal.SIGKILL)
    assert first.stop() == -signal.SIGKILL
    second = start_server("--data", data)
    try:
        assert post(second.url, 7, "<http://ex.org/x> <http://ex.org/b> 7 .").status_code == 200
        assert httpx.post(f"{second.url}/heartbeat", params={"time": "100"}).status_code in (200, 204)
        rows = httpx.get(f"{second.url}{reg.json()['matches']}",
                         headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
        assert [(r["a"]["value"], r["b"]["value"]) for r in rows] == [("1", "2"), ("6", "7")]
    finally:
        assert second.stop() == 0


def test_under_late_error_a_batch_behind_the_lateness_gets_409() -> None:
    srv = start_server("--lateness", "2sec", "--late", "error")
    try:
        reg = httpx.post(f"{srv.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
        assert reg.status_code == 201, reg.text
        assert post(srv.url, 4, "<http://ex.org/x> <http://ex.org/b> 4 .").status_code == 200
        assert post(srv.url, 2, "<http://ex.org/x> <http://ex.org/b> 2 .").status_code == 200
        late = post(srv.url, 1, "<http://ex.org/x> <http://ex.org/b> 0 .")
        assert late.status_code == 409 and "watermark" in late.json()["error"], late.text
        # its times as the request wrote them (decision 76): an xsd:dateTime is answered so
        late = post(srv.url, "1970-01-01T00:00:01Z", "<http://ex.org/x> <http://ex.org/b> 0 .")
        assert late.status_code == 409, late.text
        assert late.json()["error"].startswith(
            "event at 1970-01-01T00:00:01Z on <http://ex.org/s> is earlier than 1970-01-01T00:00:02Z, the watermark")
        assert httpx.get(f"{srv.url}/queries/q1").json()["late"] == 0
    finally:
        assert srv.stop() == 0


@pytest.mark.parametrize("snapshot_every", ["2", "1000"])
def test_late_counts_and_answers_survive_a_restart(tmp_path, snapshot_every: str) -> None:
    """Two queries on one stream, lateness 0 and 3 s: an event late for the first only, then
    one late for both. After kill -9 the restarted server (its counts from the snapshot, or
    the journal replayed, or both) gives each query's count once, and a batch sent again
    under its key gets the same answer."""
    import signal

    data = str(tmp_path / "data")
    first = start_server("--data", data, "--snapshot-every", snapshot_every)
    for lateness in ("0", "3"):
        text = QUERY.replace("WITHIN 10 SECONDS", f"WITHIN 10 SECONDS LATENESS {lateness} SECONDS")
        assert httpx.post(f"{first.url}/queries", content=text,
                          headers={"Content-Type": "application/sparql-query"}).status_code == 201
    answers = []
    for t, p, v in [(1, "a", 1), (5, "b", 5), (3, "b", 3), (1, "b", 0)]:
        r = httpx.post(f"{first.url}/events", params={"stream": "http://ex.org/s", "time": str(t)},
                       content=f"<http://ex.org/x> <http://ex.org/{p}> {v} .".encode(),
                       headers={"Content-Type": "text/turtle", "Idempotency-Key": f"k{t}{p}"})
        assert r.status_code == 200, r.text
        answers.append(r.json().get("late", []))
    assert answers == [[], [], [{"stream": "http://ex.org/s", "time": "3", "queries": ["q1"]}],
                       [{"stream": "http://ex.org/s", "time": "1", "queries": ["q1", "q2"]}]]
    counts = [httpx.get(f"{first.url}/queries/{q}").json()["late"] for q in ("q1", "q2")]
    assert counts == [2, 1]
    first.process.send_signal(signal.SIGKILL)
    assert first.stop() == -signal.SIGKILL
    second = start_server("--data", data)
    try:
        assert [httpx.get(f"{second.url}/queries/{q}").json()["late"] for q in ("q1", "q2")] == counts
        again = httpx.post(f"{second.url}/events", params={"stream": "http://ex.org/s", "time": "3"},
                           content=b"<http://ex.org/x> <http://ex.org/b> 3 .",
                           headers={"Content-Type": "text/turtle", "Idempotency-Key": "k3b"})
        assert again.headers["idempotent-replayed"] == "true" and again.json()["late"] == answers[2]
        assert [httpx.get(f"{second.url}/queries/{q}").json()["late"] for q in ("q1", "q2")] == counts
    finally:
        assert second.stop() == 0


def _rows(url: str, qid: str) -> list[tuple[str, str]]:
    rows = httpx.get(f"{url}/queries/{qid}/matches",
                     headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
    return [(r["a"]["value"], r["b"]["value"]) for r in rows]


def test_a_silent_producer_stops_holding_the_watermark_back_without_a_heartbeat(tmp_path) -> None:
    """No batch and no heartbeat comes after b at 4: once the stream has been silent for the
    idle timeout (the lateness, 1 s of wall time) the server's idle timer releases the held
    match; the tick is journaled, so after a SIGKILL the restarted server has the match and
    still finds an event at 3 late (its watermark was moved to 4 by the tick)."""
    import signal
    import time

    data = str(tmp_path / "data")
    first = start_server("--lateness", "1sec", "--data", data)
    reg = httpx.post(f"{first.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
    assert reg.status_code == 201, reg.text
    qid = reg.json()["id"]
    assert post(first.url, 1, "<http://ex.org/x> <http://ex.org/a> 1 .").status_code == 200
    assert post(first.url, 4, "<http://ex.org/x> <http://ex.org/b> 4 .").status_code == 200
    assert _rows(first.url, qid) == []  # held: the watermark is 4 - 1 = 3
    deadline = time.monotonic() + 10
    while not _rows(first.url, qid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _rows(first.url, qid) == [("1", "4")]
    first.process.send_signal(signal.SIGKILL)
    assert first.stop() == -signal.SIGKILL
    second = start_server("--lateness", "1sec", "--data", data)
    try:
        assert _rows(second.url, qid) == [("1", "4")]
        late = post(second.url, 3, "<http://ex.org/x> <http://ex.org/b> 3 .")
        assert late.status_code == 200 and late.json()["late"][0]["queries"] == [qid], late.text
    finally:
        second.stop()
