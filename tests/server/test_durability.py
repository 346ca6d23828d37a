"""``--data DIR``: a server killed with SIGKILL in the middle of a push sequence and started
again on the same directory keeps its query ids, restores its partial matches (snapshot plus
the journal after it), loses no match and numbers none twice."""

from __future__ import annotations

import json
import os
import signal

import httpx

from .conftest import SG, SG_KB, numbered, smartgrid_batches, spaseq_run, start_server

QUERY = (SG / "query.rq").read_text(encoding="utf-8")



def _ndjson(url: str, qid: str, count: int, since: int = 0) -> list[str]:
    lines: list[str] = []
    if count == 0:
        return lines
    with httpx.stream("GET", f"{url}/queries/{qid}/matches", params={"since": since},
                      headers={"Accept": "application/x-ndjson"}, timeout=10) as r:
        for line in r.iter_lines():
            lines.append(line)
            if len(lines) == count:
                break
    return lines


def _push(url: str, batches: list[tuple[str, bytes]]) -> None:
    for stream, body in batches:
        r = httpx.post(f"{url}/events", params={"stream": stream}, content=body,
                       headers={"Content-Type": "application/trig"})
        assert r.status_code == 200, r.text


def test_kill_9_mid_sequence_then_restart_loses_and_repeats_nothing(tmp_path) -> None:
    expected = numbered(spaseq_run("--format", "jsonl").splitlines())  # as ndjson numbers them
    batches = smartgrid_batches()
    data = str(tmp_path / "data")
    # small snapshot interval: the crash lands after a snapshot, with a journal tail after it
    first = start_server("--kb", SG_KB, "--data", data, "--snapshot-every", "3")
    reg = httpx.post(f"{first.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
    assert reg.status_code == 201
    qid = reg.json()["id"]
    cut = len(batches) // 2
    _push(first.url, batches[:cut])
    before = httpx.get(f"{first.url}/queries/{qid}/matches").json()["results"]["bindings"]
    delivered = _ndjson(first.url, qid, len(before))  # what a client saw before the crash
    first.process.send_signal(signal.SIGKILL)
    assert first.stop() == -signal.SIGKILL
    assert any(name.startswith("snapshot-") for name in os.listdir(data))
    assert 0 < len(delivered) < len(expected)  # the crash is in the middle of the matches

    second = start_server("--kb", SG_KB, "--data", data)
    try:
        listed = httpx.get(f"{second.url}/queries").json()
        assert [q["id"] for q in listed] == [qid] and listed[0]["query"] == QUERY
        _push(second.url, batches[cut:])
        rest = _ndjson(second.url, qid, len(expected) - len(delivered), since=len(delivered))
        assert delivered + rest == expected
        everything = _ndjson(second.url, qid, len(expected))
        assert everything == expected  # numbered once each: 1..N, no duplicate
        details = httpx.get(f"{second.url}/queries/{qid}").json()
        assert details["results"] == len(expected)
        assert details["events"] == 26  # counted across the snapshot and the journal's tail
        sse_ids = []
        with httpx.stream("GET", f"{second.url}/queries/{qid}/matches",
                          headers={"Accept": "text/event-stream", "Last-Event-ID": str(len(delivered))},
                          timeout=10) as r:
            for line in r.iter_lines():
                if line.startswith("id:"):
                    sse_ids.append(int(line[3:]))
                    if len(sse_ids) == len(expected) - len(delivered):
                        break
        assert sse_ids == list(range(len(delivered) + 1, len(expected) + 1))
        stored = httpx.post(f"{second.url}/sparql", headers={"Content-Type": "application/sparql-query"},
                            content=f"""PREFIX spaseq: <https://w3id.org/spaseq#>
SELECT (COUNT(?m) AS ?n) WHERE {{ ?m spaseq:query <{reg.json()['output']}> }}""").json()
        assert stored["results"]["bindings"][0]["n"]["value"] == str(len(expected))
    finally:
        assert second.stop() == 0
    # a clean stop checkpoints: the journal is compacted to nothing
    state = json.loads((tmp_path / "data" / "state.json").read_text())
    assert os.path.getsize(tmp_path / "data" / f"journal-{state['generation']}.jsonl") == 0
    assert [q["produced"] for q in state["server"]["queries"]] == [len(expected)]


def test_the_journal_is_compacted_at_each_snapshot(tmp_path) -> None:
    data = tmp_path / "data"
    srv = start_server("--data", str(data), "--snapshot-every", "4")
    try:
        q = """PREFIX : <http://ex.org/>
SELECT ?a ?b WITHIN 100 SECONDS FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A; B) DEFINE GPM A ON S { ?x :a ?a } DEFINE GPM B ON S { ?x :b ?b } }"""
        assert httpx.post(f"{srv.url}/queries", content=q,
                          headers={"Content-Type": "application/sparql-query"}).status_code == 201
        for t in range(1, 10):
            r = httpx.post(f"{srv.url}/events", params={"stream": "http://ex.org/s", "time": str(t)},
                           content=f"<http://ex.org/x> <http://ex.org/a> {t} .".encode(),
                           headers={"Content-Type": "text/turtle"})
            assert r.status_code == 200
        journals = [n for n in os.listdir(data) if n.startswith("journal-")]
        assert len(journals) == 1
        lines = (data / journals[0]).read_text().splitlines()
        assert len(lines) < 4 and all(json.loads(line)["op"] == "events" for line in lines)
    finally:
        assert srv.stop() == 0
