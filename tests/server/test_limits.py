"""Limits and retries: registered queries (429), followers (503), a follower too far behind
cut off with a final message, the match log bounded by --keep-matches (410 for what is
gone), and a batch sent again under its idempotency key applied once, across a crash."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx

from .conftest import Server, start_server

EX = "http://ex.org/"
QUERY = f"""PREFIX : <{EX}>
SELECT ?s WITHIN 10 SECONDS FROM STREAM S <{EX}s>
WHERE {{ SEQ(A) DEFINE GPM A ON S {{ ?s :v ?v }} }}"""
SPARQL_QUERY = {"Content-Type": "application/sparql-query"}


def register(srv: Server) -> httpx.Response:
    return httpx.post(f"{srv.url}/queries", content=QUERY, headers=SPARQL_QUERY)


def batch(times: range) -> bytes:
    """One event per time, each matching QUERY once."""
    return "".join(f'<{EX}e{t}> <http://www.w3.org/ns/prov#generatedAtTime> "{t}"^^<http://www.w3.org/2001/XMLSchema#decimal> .\n'
                   f'<{EX}s{t}> <{EX}v> "{t}" <{EX}e{t}> .\n' for t in times).encode()


def push(srv: Server, times: range, **headers: str) -> httpx.Response:
    return httpx.post(f"{srv.url}/events", params={"stream": f"{EX}s"}, content=batch(times),
                      headers={"Content-Type": "application/n-quads", **headers})


def subjects(srv: Server, qid: str, since: int = 0) -> list[str]:
    r = httpx.get(f"{srv.url}/queries/{qid}/matches", params={"since": since})
    assert r.status_code == 200, r.text
    return [row["s"]["value"].removeprefix(EX) for row in r.json()["results"]["bindings"]]


def test_query_and_follower_limits_answer_with_retry_after() -> None:
    srv = start_server("--max-queries", "1", "--max-clients", "1")
    try:
        qid = register(srv).json()["id"]
        r = register(srv)
        assert r.status_code == 429 and r.headers["retry-after"].isdigit() and "--max-queries" in r.json()["error"]
        with httpx.stream("GET", f"{srv.url}/queries/{qid}/matches", headers={"Accept": "application/x-ndjson"},
                          timeout=10) as follower:
            assert follower.status_code == 200
            push(srv, range(1, 2))
            lines = follower.iter_lines()  # held: a dropped iterator closes the response
            assert json.loads(next(lines))["bindings"]["s"]["value"] == f"{EX}s1"
            assert httpx.get(f"{srv.url}/").json()["followers"] == 1
            second = httpx.get(f"{srv.url}/queries/{qid}/matches", headers={"Accept": "text/event-stream"})
            assert second.status_code == 503 and second.headers["retry-after"].isdigit()
        assert httpx.delete(f"{srv.url}/queries/{qid}").status_code == 204
        assert register(srv).status_code == 201  # room again
    finally:
        assert srv.stop() == 0


def test_a_follower_too_far_behind_is_cut_off_and_ingestion_goes_on() -> None:
    srv = start_server("--follower-lag", "3")
    try:
        qid = register(srv).json()["id"]
        with httpx.stream("GET", f"{srv.url}/queries/{qid}/matches", headers={"Accept": "text/event-stream"},
                          timeout=10) as follower:
            assert push(srv, range(1, 3)).json() == {"accepted": 2}
            lines = follower.iter_lines()
            got: list[str] = []
            for line in lines:
                if line.startswith("data:"):
                    got.append(json.loads(line[5:].strip())["bindings"]["s"]["value"].removeprefix(EX))
                if len(got) == 2:
                    break
            assert got == ["s1", "s2"]
            # a burst of 10 results while this follower holds 3 at most: it is cut off, once
            assert push(srv, range(3, 13)).json() == {"accepted": 10}
            rest = list(lines)
        assert "event: cutoff" in rest
        final = json.loads(next(line for line in rest if line.startswith("data:"))[5:].strip())
        assert final["resume"] == 2 and "--follower-lag" in final["error"]
        assert len(subjects(srv, qid)) == 12  # nothing lost for the others
        assert subjects(srv, qid, since=final["resume"])[0] == "s3"
    finally:
        assert srv.stop() == 0


def test_keep_matches_bounds_the_log_and_numbers_go_on(tmp_path: Path) -> None:
    args = ("--keep-matches", "3", "--data", str(tmp_path / "d"))
    srv = start_server(*args)
    try:
        qid = register(srv).json()["id"]
        push(srv, range(1, 11))
        gone = httpx.get(f"{srv.url}/queries/{qid}/matches", params={"since": 2})
        assert gone.status_code == 410 and "--keep-matches" in gone.json()["error"]
        kept = subjects(srv, qid, since=7)
        assert kept == ["s8", "s9", "s10"]
    finally:
        assert srv.stop() == 0
    assert len((tmp_path / "d" / "matches" / f"{qid}.jsonl").read_text().splitlines()) == 3
    srv = start_server(*args)
    try:
        push(srv, range(11, 12))
        r = httpx.get(f"{srv.url}/queries/{qid}/matches", params={"since": 10})
        assert r.headers["x-spaseq-last"] == "11" and subjects(srv, qid, since=10) == ["s11"]
    finally:
        assert srv.stop() == 0


def test_a_batch_sent_again_under_its_key_is_applied_once_across_a_crash(tmp_path: Path) -> None:
    args = ("--data", str(tmp_path / "d"), "--snapshot-every", "1000")
    srv = start_server(*args)
    try:
        qid = register(srv).json()["id"]
        first = push(srv, range(1, 4), **{"Idempotency-Key": "b-1"})
        assert first.json() == {"accepted": 3} and "idempotent-replayed" not in first.headers
        again = push(srv, range(1, 4), **{"Idempotency-Key": "b-1"})
        assert again.json() == {"accepted": 3} and again.headers["idempotent-replayed"] == "true"
        other = push(srv, range(5, 6), **{"Idempotency-Key": "b-1"})
        assert other.status_code == 422 and "different batch" in other.json()["error"]
        assert httpx.post(f"{srv.url}/events", params={"stream": f"{EX}s", "batch": "b-2"},
                          content=batch(range(4, 5)), headers={"Content-Type": "application/n-quads"}).status_code == 200
    finally:
        srv.stop(signal.SIGKILL)  # the keys are in the journal only
    for stop in (signal.SIGTERM, signal.SIGKILL):  # then in a checkpoint, then in both
        srv = start_server(*args)
        try:
            assert push(srv, range(1, 4), **{"Idempotency-Key": "b-1"}).headers["idempotent-replayed"] == "true"
            r = httpx.post(f"{srv.url}/events", params={"stream": f"{EX}s", "batch": "b-2"},
                           content=batch(range(4, 5)), headers={"Content-Type": "application/n-quads"})
            assert r.headers["idempotent-replayed"] == "true"
            assert subjects(srv, qid) == ["s1", "s2", "s3", "s4"]  # none applied twice
        finally:
            srv.stop(stop)
