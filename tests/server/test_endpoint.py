"""The endpoint end to end: a real server process, real clients (SPARQLWrapper, httpx).
The smart-grid fixture pushed over HTTP gives exactly the rows ``spaseq run`` gives."""

from __future__ import annotations

import json

import httpx
import pytest
from SPARQLWrapper import JSON, POST, SPARQLWrapper

from .conftest import SG, Server, numbered, smartgrid_batches, spaseq_run

QUERY = (SG / "query.rq").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def pushed(server: Server) -> dict:
    """The smart-grid query registered through SPARQLWrapper at /sparql, its events pushed."""
    client = SPARQLWrapper(f"{server.url}/sparql")
    client.setMethod(POST)
    client.setQuery(QUERY)
    client.setReturnFormat(JSON)
    described = client.queryAndConvert()
    accepted = 0
    for stream, body in smartgrid_batches():
        r = httpx.post(f"{server.url}/events", params={"stream": stream}, content=body,
                       headers={"Content-Type": "application/trig"})
        assert r.status_code == 200, r.text
        accepted += r.json()["accepted"]
    assert accepted == 26
    return described


def test_sparqlwrapper_registration_returns_the_description(server: Server, pushed: dict) -> None:
    assert set(pushed) == {"id", "query", "streams", "output", "matches"}
    assert pushed["query"] == QUERY
    assert pushed["streams"] == ["http://smartgrid.org/mainSource", "http://smartgrid.org/weather",
                                 "http://smartgrid.org/storageSource"]
    assert pushed["matches"] == f"/queries/{pushed['id']}/matches"
    listed = httpx.get(f"{server.url}/queries").json()
    assert pushed in listed
    details = httpx.get(f"{server.url}/queries/{pushed['id']}").json()
    assert details["results"] == len(spaseq_run("--format", "jsonl").splitlines())
    # what a client (the console) needs to show it: the events seen on its streams, its
    # variables in spaseq run's order, its prefixes
    assert details["events"] == 26 and details["late"] == 0
    assert details["variables"] == ["house", "fr1", "fr2", "house2", "city", "oname"]
    assert details["prefixes"] == {"": "http://smartgrid.org/ns#"}


def test_sparql_json_matches_equal_spaseq_run(server: Server, pushed: dict) -> None:
    expected = json.loads(spaseq_run("--format", "json", "--with-time"))
    r = httpx.get(server.url + pushed["matches"], headers={"Accept": "application/sparql-results+json"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/sparql-results+json")
    got = r.json()
    assert got["head"] == expected["head"]
    assert got["results"]["bindings"] == expected["results"]["bindings"]
    assert len(got["results"]["bindings"]) >= 2
    page = httpx.get(server.url + pushed["matches"], params={"since": 1},
                     headers={"Accept": "application/sparql-results+json"}).json()
    assert page["results"]["bindings"] == expected["results"]["bindings"][1:]


def test_csv_tsv_xml_matches_come_from_pyoxigraph(server: Server, pushed: dict) -> None:
    rows = len(spaseq_run("--format", "jsonl").splitlines())
    csv = httpx.get(server.url + pushed["matches"], headers={"Accept": "text/csv"})
    assert csv.headers["content-type"].startswith("text/csv")
    assert csv.text.splitlines()[0] == "_time,_start,house,fr1,fr2,house2,city,oname"
    assert len(csv.text.splitlines()) == rows + 1
    tsv = httpx.get(server.url + pushed["matches"], headers={"Accept": "text/tab-separated-values"})
    assert tsv.text.splitlines()[0].split("\t")[:3] == ["?_time", "?_start", "?house"]
    xml = httpx.get(server.url + pushed["matches"], headers={"Accept": "application/sparql-results+xml"})
    assert xml.text.count("<result>") == rows


def test_ndjson_is_the_jsonl_contract_numbered(server: Server, pushed: dict) -> None:
    """Each ndjson line is the jsonl contract object with its match number first (``"id"``,
    the SSE id)."""
    expected = numbered(spaseq_run("--format", "jsonl").splitlines())
    lines = []
    with httpx.stream("GET", server.url + pushed["matches"], headers={"Accept": "application/x-ndjson"},
                      timeout=10) as r:
        assert r.headers["content-type"].startswith("application/x-ndjson")
        for line in r.iter_lines():
            lines.append(line)
            if len(lines) == len(expected):
                break
    assert lines == expected


def _sse(url: str, headers: dict, count: int) -> list[tuple[str, str]]:
    """(id, data) of the first ``count`` SSE events."""
    out: list[tuple[str, str]] = []
    event: dict[str, str] = {}
    with httpx.stream("GET", url, headers={"Accept": "text/event-stream", **headers}, timeout=10) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if not line:
                if "data" in event:
                    out.append((event["id"], event["data"]))
                    if len(out) == count:
                        return out
                event = {}
            elif not line.startswith(":"):
                key, _, value = line.partition(":")
                event[key] = value[1:] if value.startswith(" ") else value
    return out


def test_sse_numbers_matches_and_resumes_after_last_event_id(server: Server, pushed: dict) -> None:
    expected = spaseq_run("--format", "jsonl").splitlines()
    events = _sse(server.url + pushed["matches"], {}, len(expected))
    assert [e[0] for e in events] == [str(i) for i in range(1, len(expected) + 1)]
    assert [e[1] for e in events] == expected
    resumed = _sse(server.url + pushed["matches"], {"Last-Event-ID": "1"}, len(expected) - 1)
    assert resumed == events[1:]


def test_sse_delivers_a_match_as_it_completes(server: Server) -> None:
    """A live follower sees a match pushed after it connected (no polling by the client)."""
    import threading

    q = """PREFIX : <http://ex.org/>
SELECT ?s ?v WITHIN 10 SECONDS FROM STREAM S <http://ex.org/live>
WHERE { SEQ(A) DEFINE GPM A ON S { ?s :v ?v } }"""
    reg = httpx.post(f"{server.url}/queries", content=q, headers={"Content-Type": "application/sparql-query"})
    assert reg.status_code == 201 and reg.headers["location"] == f"/queries/{reg.json()['id']}"
    got: list = []
    follower = threading.Thread(target=lambda: got.extend(_sse(server.url + reg.json()["matches"], {}, 1)))
    follower.start()
    import time

    time.sleep(0.5)
    r = httpx.post(f"{server.url}/events", params={"stream": "http://ex.org/live", "time": "5"},
                   content=b"<http://ex.org/a> <http://ex.org/v> 7 .", headers={"Content-Type": "text/turtle"})
    assert r.json() == {"accepted": 1}
    follower.join(10)
    assert got and got[0][0] == "1" and json.loads(got[0][1])["bindings"]["v"]["value"] == "7"
    assert httpx.delete(server.url + f"/queries/{reg.json()['id']}").status_code == 204
    assert httpx.get(server.url + f"/queries/{reg.json()['id']}").status_code == 404


def test_kb_and_materialised_matches_through_sparqlwrapper(server: Server, pushed: dict) -> None:
    client = SPARQLWrapper(f"{server.url}/sparql")
    client.setReturnFormat(JSON)
    client.setQuery("SELECT (COUNT(*) AS ?n) WHERE { GRAPH <http://smartgrid.org/db> { ?s ?p ?o } }")
    kb = client.queryAndConvert()
    assert kb["results"]["bindings"][0]["n"]["value"] == str(len((SG / "kb.nt").read_text().splitlines()))
    client.setQuery(f"""PREFIX spaseq: <https://w3id.org/spaseq#>
SELECT (COUNT(?m) AS ?n) WHERE {{ ?m spaseq:query <{pushed['output']}> }}""")
    matches = client.queryAndConvert()
    assert matches["results"]["bindings"][0]["n"]["value"] == str(len(spaseq_run("--format", "jsonl").splitlines()))


def test_sparql_protocol_negotiation_and_dataset(server: Server, pushed: dict) -> None:
    construct = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
    r = httpx.get(f"{server.url}/sparql", params={"query": construct, "default-graph-uri": "http://smartgrid.org/db"},
                  headers={"Accept": "application/n-triples"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/n-triples")
    assert len(r.text.splitlines()) == len((SG / "kb.nt").read_text().splitlines())
    r = httpx.post(f"{server.url}/sparql", content="ASK { GRAPH ?g { ?s ?p ?o } }",
                   headers={"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+xml"})
    assert r.status_code == 200 and "<boolean>true</boolean>" in r.text
    r = httpx.get(f"{server.url}/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"},
                  headers={"Accept": "image/png"})
    assert r.status_code == 406


@pytest.mark.parametrize("method, path, kwargs, status, message", [
    ("POST", "/queries", {"content": "SELECT ?x WITHIN 5 SECONDS FROM STREAM S <http://a> WHERE { SEQ(A)\n"
                          " DEFINE GPM A ON S { ?x ?p ?o FILTER( } }",
                          "headers": {"Content-Type": "application/sparql-query"}}, 400, "2:39: "),
    ("GET", "/sparql", {"params": {"query": "SELECT * WHERE {"}}, 400, "1:17: "),
    ("POST", "/events?stream=http://ex.org/s", {"content": b"<http://a> <http://b> <http://c> <http://g> .\n<http://a> <http://b",
                                                "headers": {"Content-Type": "application/n-quads"}}, 400, "2:12: N-Quads syntax error"),
    ("POST", "/events?stream=http://ex.org/s", {"content": b"x", "headers": {"Content-Type": "text/plain"}}, 415, "not text/plain"),
    ("POST", "/events?stream=http://ex.org/s", {"content": b"<http://a> <http://b> 1 .",
                                                "headers": {"Content-Type": "text/turtle"}}, 400, "&time="),
    ("GET", "/queries/q999", {}, 404, "no query q999"),
    ("GET", "/queries/q999/matches", {}, 404, "no query q999"),
    ("PUT", "/queries", {}, 405, "Method Not Allowed"),
    ("POST", "/sparql", {"content": "x", "headers": {"Content-Type": "text/plain"}}, 415, "not text/plain"),
])
def test_errors(server: Server, method: str, path: str, kwargs: dict, status: int, message: str) -> None:
    r = httpx.request(method, server.url + path, **kwargs)
    assert r.status_code == status, r.text
    assert message in r.json()["error"]


def test_a_bad_batch_applies_none_of_its_events(server: Server) -> None:
    before = httpx.get(server.url + "/").json()["events"]
    body = (b'@prefix prov: <http://www.w3.org/ns/prov#> .\n'
            b'<http://e/1> prov:generatedAtTime 100 .\n<http://e/1> { <http://a> <http://b> 1 }\n'
            b'<http://e/2> { <http://a> <http://b> 2 }\n')  # e/2 has no timestamp
    r = httpx.post(f"{server.url}/events", params={"stream": "http://ex.org/batch"}, content=body,
                   headers={"Content-Type": "application/trig"})
    assert r.status_code == 400 and "has no timestamp" in r.json()["error"]
    assert r.json()["error"].startswith("4: ")
    assert httpx.get(server.url + "/").json()["events"] == before


def test_a_late_event_is_dropped_and_answered(server: Server, pushed: dict) -> None:
    """By default (``--late drop``) a late event is accepted, dropped by the queries it is late
    for, and the answer says so (``--late error``'s 409: tests/server/test_lateness.py)."""
    r = httpx.post(f"{server.url}/events", params={"stream": "http://smartgrid.org/weather", "time": "10"},
                   content=b"<http://a> <http://b> 1 .", headers={"Content-Type": "text/turtle"})
    assert r.status_code == 200, r.text
    (late,) = r.json()["late"]
    assert late["stream"] == "http://smartgrid.org/weather" and late["time"] == "10"
    assert pushed["id"] in late["queries"]


def test_openapi_is_served(server: Server) -> None:
    spec = httpx.get(server.url + "/openapi.json").json()
    assert {"/sparql", "/queries", "/queries/{qid}", "/events", "/heartbeat", "/queries/{qid}/matches"} <= set(spec["paths"])


def test_times_are_given_as_the_input_wrote_them(server: Server, pushed: dict) -> None:
    """The smart-grid events are stamped with xsd:dateTime: the results' _time/_start are
    xsd:dateTime in every format, the match log's records carry time_iso/start_iso beside the
    numbers, and the materialised spaseq:time is an xsd:dateTime (decision 43)."""
    xsd = "http://www.w3.org/2001/XMLSchema#"
    got = httpx.get(server.url + pushed["matches"], headers={"Accept": "application/sparql-results+json"}).json()
    first = got["results"]["bindings"][0]
    assert first["_time"] == {"type": "literal", "value": "2026-11-01T10:03:00Z", "datatype": xsd + "dateTime"}
    assert first["_start"]["value"] == "2026-11-01T10:00:00Z"
    csv = httpx.get(server.url + pushed["matches"], headers={"Accept": "text/csv"}).text.splitlines()
    assert csv[1].startswith("2026-11-01T10:03:00Z,2026-11-01T10:00:00Z,")
    xml = httpx.get(server.url + pushed["matches"], headers={"Accept": "application/sparql-results+xml"}).text
    assert f'<literal datatype="{xsd}dateTime">2026-11-01T10:03:00Z</literal>' in xml
    with httpx.stream("GET", server.url + pushed["matches"], headers={"Accept": "application/x-ndjson"},
                      timeout=10) as r:
        record = json.loads(next(r.iter_lines()))
    assert (record["time"], record["time_iso"], record["start_iso"]) == (
        1793527380, "2026-11-01T10:03:00Z", "2026-11-01T10:00:00Z")
    client = SPARQLWrapper(f"{server.url}/sparql")
    client.setReturnFormat(JSON)
    client.setQuery(f"""PREFIX spaseq: <https://w3id.org/spaseq#>
SELECT DISTINCT (DATATYPE(?t) AS ?d) WHERE {{ ?m spaseq:query <{pushed['output']}> ; spaseq:time ?t }}""")
    rows = client.queryAndConvert()["results"]["bindings"]
    assert [row["d"]["value"] for row in rows] == [xsd + "dateTime"]


def test_time_format_epoch_restores_decimal_seconds() -> None:
    """``spaseq serve --time-format epoch``: the same events, times as xsd:decimal seconds and
    no time_iso, exactly as ``spaseq run --time-format epoch``."""
    from .conftest import SG_KB, start_server

    srv = start_server("--kb", SG_KB, "--time-format", "epoch")
    try:
        r = httpx.post(f"{srv.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
        assert r.status_code in (200, 201), r.text
        matches = r.json()["matches"]
        for stream, body in smartgrid_batches():
            httpx.post(f"{srv.url}/events", params={"stream": stream}, content=body,
                       headers={"Content-Type": "application/trig"}).raise_for_status()
        got = httpx.get(srv.url + matches, headers={"Accept": "application/sparql-results+json"}).json()
        expected = json.loads(spaseq_run("--format", "json", "--with-time", "--time-format", "epoch"))
        assert got["results"]["bindings"] == expected["results"]["bindings"]
        assert got["results"]["bindings"][0]["_time"]["datatype"].endswith("#decimal")
        with httpx.stream("GET", srv.url + matches, headers={"Accept": "application/x-ndjson"}, timeout=10) as s:
            assert "time_iso" not in json.loads(next(s.iter_lines()))
    finally:
        assert srv.stop() == 0


def test_events_of_a_stream_no_query_reads_are_accepted_and_counted(server: Server) -> None:
    """Producers need not follow which queries are registered (decision 44): accepted, seen by
    no query, counted in ``events_unread``."""
    before = httpx.get(server.url + "/").json()
    r = httpx.post(f"{server.url}/events", params={"stream": "http://ex.org/nobody-reads", "time": "1"},
                   content=b"<http://ex.org/a> <http://ex.org/v> 1 .", headers={"Content-Type": "text/turtle"})
    assert r.status_code == 200 and r.json() == {"accepted": 1}
    after = httpx.get(server.url + "/").json()
    assert after["events_unread"] == before["events_unread"] + 1
    assert after["events"] == before["events"] + 1


def test_events_that_last_over_http(server: Server) -> None:
    """Decision 71 over HTTP: a batch's events that last (prov:startedAtTime/endedAtTime) and a
    Turtle event's ``&start=`` reach a query planned for them (a timer's: burnt_down derives
    the chapter's [70, 92]); while a query of point events reads the stream, such a batch is
    refused whole (400, nothing applied), as is a start after the end."""
    from tests.cera.test_program_p import FIXTURES

    sensors, chapter = "http://example.org/sensors", (FIXTURES / "chapter.trig").read_bytes()

    def register(name: str) -> str:
        r = httpx.post(f"{server.url}/queries", content=(FIXTURES / f"{name}.rq").read_text(),
                       headers={"Content-Type": "application/sparql-query"})
        assert r.status_code == 201, r.text
        return r.json()["id"]

    def events() -> int:
        return httpx.get(server.url + "/").json()["events"]

    def post(body: bytes, media: str = "application/trig", **params: str) -> httpx.Response:
        return httpx.post(f"{server.url}/events", params={"stream": sensors, **params}, content=body,
                          headers={"Content-Type": media})

    fire = register("fire")  # no timer: planned for point events (serve without --intervals)
    before = events()
    refused = post(chapter)
    assert refused.status_code == 400 and "was planned for point events" in refused.json()["error"]
    assert events() == before
    assert httpx.delete(f"{server.url}/queries/{fire}").status_code == 204
    burnt = register("burnt_down")
    assert post(chapter).json() == {"accepted": 3}
    smoke = b"<http://example.org/sensors#s2> a <http://example.org/sensors#Smoke> ."
    assert post(smoke, "text/turtle", time="100", start="101").status_code == 400  # starts after it ends
    assert post(smoke, "text/turtle", time="100", start="99").json() == {"accepted": 1}  # the clock passes 92
    rows = httpx.get(f"{server.url}/queries/{burnt}/matches",
                     headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
    assert [(r["_start"]["value"], r["_time"]["value"], r["sensor"]["value"]) for r in rows] == [
        ("70", "92", "http://example.org/sensors#s")]
    assert httpx.delete(f"{server.url}/queries/{burnt}").status_code == 204
