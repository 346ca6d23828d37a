"""What operators and SPARQL clients ask of a running server, against a real one (``--data``,
``--token``, ``--token-reads``): the SPARQL 1.1 Service Description at ``GET /sparql``,
``/health`` (open without the token; 503 while the journal cannot be written), ``/metrics``
(Prometheus text, equal to the counts the routes give), and ndjson matches numbered and
resumed by ``Last-Event-ID`` and ``?since``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pyoxigraph import BlankNode, RdfFormat, Store, parse

from spaseq.engine.server.app import create_app
from spaseq.engine.server.config import ServerConfig

from .conftest import SG_KB, Server, start_server

AUTH = {"Authorization": "Bearer s3cret"}
HTTP = httpx.Client(timeout=10, headers=AUTH)  # one client: a new one per request costs ~0.1 s
ANONYMOUS = httpx.Client(timeout=10)
QUERY = """PREFIX : <http://ex.org/>
SELECT ?a ?b WITHIN 10 SECONDS FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A ; B) DEFINE GPM A ON S { ?x :a ?a } DEFINE GPM B ON S { ?x :b ?b } }"""
EVENTS = [(1, "a"), (2, "b"), (3, "a"), (4, "b"), (0, "b")]  # the last is late


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("obs") / "data"


@pytest.fixture(scope="module")
def srv(data: Path) -> Iterator[Server]:
    server = start_server("--kb", SG_KB, "--data", str(data), "--token", "s3cret", "--token-reads")
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def pushed(srv: Server) -> dict:
    """Two queries registered (the second to be deleted), the events pushed: q1's details."""
    for _ in range(2):
        r = HTTP.post(f"{srv.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
        assert r.status_code == 201, r.text
    for t, p in EVENTS:
        r = HTTP.post(f"{srv.url}/events", params={"stream": "http://ex.org/s", "time": str(t)},
                      content=f"<http://ex.org/x> <http://ex.org/{p}> {t} .".encode(),
                      headers={"Content-Type": "text/turtle"})
        assert r.status_code == 200, r.text
    details = HTTP.get(f"{srv.url}/queries/q1").json()
    assert details["results"] >= 2 and details["late"] == 1
    return details


def test_the_service_description(srv: Server) -> None:
    r = HTTP.get(f"{srv.url}/sparql")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/turtle")
    described = Store()
    described.load(r.content, format=RdfFormat.TURTLE)
    asked = described.query(f"""
        PREFIX sd: <http://www.w3.org/ns/sparql-service-description#>
        PREFIX formats: <http://www.w3.org/ns/formats/>
        PREFIX spaseq: <https://w3id.org/spaseq#>
        ASK {{ <{srv.url}/sparql> a sd:Service ; sd:endpoint <{srv.url}/sparql> ;
                 sd:supportedLanguage sd:SPARQL11Query, sd:SPARQL11Update, spaseq:SPAseq ;
                 sd:resultFormat formats:SPARQL_Results_JSON, formats:SPARQL_Results_CSV, formats:Turtle ;
                 spaseq:queriesEndpoint <{srv.url}/queries> ; spaseq:eventsEndpoint <{srv.url}/events> ;
                 spaseq:heartbeatEndpoint <{srv.url}/heartbeat> ; spaseq:graphStoreEndpoint <{srv.url}/store> ;
                 spaseq:eventFormat formats:TriG ;
                 sd:defaultDataset [ sd:defaultGraph [] ;
                                     sd:namedGraph [ sd:name <http://smartgrid.org/db> ] ] .
               spaseq:SPAseq a sd:Language }}""")
    assert bool(asked)
    # the same graph in JSON-LD and N-Triples, by Accept; nothing it cannot give
    for media, fmt in (("application/ld+json", RdfFormat.JSON_LD), ("application/n-triples", RdfFormat.N_TRIPLES)):
        other = HTTP.get(f"{srv.url}/sparql", headers={"Accept": media})
        assert other.headers["content-type"].startswith(media)
        assert _ground(parse(other.content, format=fmt)) == _ground(parse(r.content, format=RdfFormat.TURTLE))
    assert HTTP.get(f"{srv.url}/sparql", headers={"Accept": "text/csv"}).status_code == 406
    # a parameter without a query is still a request for a query: 400, as before
    assert HTTP.get(f"{srv.url}/sparql", params={"default-graph-uri": "http://ex.org/g"}).status_code == 400


def _ground(quads: Iterator) -> set:
    """The triples without a blank node (blank node labels differ between serialisations)."""
    return {q.triple for q in quads if not isinstance(q.subject, BlankNode) and not isinstance(q.object, BlankNode)}


def test_health_is_open_and_says_when_the_journal_cannot_be_written(srv: Server, data: Path) -> None:
    r = ANONYMOUS.get(f"{srv.url}/health")
    assert r.status_code == 200
    assert r.json() == {"ready": True, "checks": {"engine": "ok", "kb": "ok", "journal": "ok"}}
    assert ANONYMOUS.get(f"{srv.url}/health/live").json() == {"live": True}
    assert ANONYMOUS.get(f"{srv.url}/queries").status_code == 401  # reads need the token, health does not
    away = data.with_name("away")
    os.rename(data, away)  # the disk is gone from under the server (root ignores permissions)
    try:
        r = ANONYMOUS.get(f"{srv.url}/health")
        assert r.status_code == 503 and r.json()["ready"] is False
        assert r.json()["checks"]["journal"].startswith(f"cannot write in {data}")
    finally:
        os.rename(away, data)
    assert ANONYMOUS.get(f"{srv.url}/health").status_code == 200


def _samples(text: str) -> dict[tuple, float]:
    """{(sample name, (label, value) pairs): value} of a Prometheus text exposition."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_equal_what_the_routes_say(srv: Server, pushed: dict) -> None:
    assert ANONYMOUS.get(f"{srv.url}/metrics").status_code == 401  # --token-reads: a read like any
    r = HTTP.get(f"{srv.url}/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=0.0.4")
    got = _samples(r.text)
    q1 = (("query", "q1"),)
    assert got[("spaseq_events_accepted_total", ())] == HTTP.get(f"{srv.url}/").json()["events"] == len(EVENTS)
    assert got[("spaseq_queries", ())] == 2
    assert got[("spaseq_matches_total", q1)] == pushed["results"]
    assert got[("spaseq_late_events_total", q1)] == pushed["late"] == 1
    assert got[("spaseq_runs_total", q1)] == pushed["statistics"]["runs"] > 0
    assert got[("spaseq_batch_seconds_count", ())] == len(EVENTS)  # one per accepted batch
    assert got[("spaseq_batch_seconds_bucket", (("le", "+Inf"),))] == len(EVENTS)
    assert got[("spaseq_match_delay_seconds_count", q1)] == pushed["results"]
    assert 0 < got[("spaseq_match_delay_seconds_sum", q1)] < 60
    # a deleted query's series go with it
    assert HTTP.delete(f"{srv.url}/queries/q2").status_code == 204
    after = _samples(HTTP.get(f"{srv.url}/metrics").text)
    assert not [key for key in after if ("query", "q2") in key[1]]
    assert after[("spaseq_queries", ())] == 1
    om = HTTP.get(f"{srv.url}/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert om.headers["content-type"].startswith("application/openmetrics-text") and om.text.endswith("# EOF\n")


def test_each_app_has_its_own_registry() -> None:
    """Two applications in one process (as here, and in test_fuzz) do not clash over metric names."""
    first, second = create_app(ServerConfig()), create_app(ServerConfig())
    assert first is not second


def _ndjson(url: str, n: int, **kwargs) -> list[dict]:
    lines: list[dict] = []
    with HTTP.stream("GET", url, **kwargs) as r:
        assert r.headers["content-type"].startswith("application/x-ndjson")
        for line in r.iter_lines():
            lines.append(json.loads(line))
            if len(lines) == n:
                break
    return lines


def test_ndjson_matches_carry_their_number_and_resume(srv: Server, pushed: dict) -> None:
    n = pushed["results"]
    url = srv.url + pushed["matches"]
    ndjson = {"Accept": "application/x-ndjson"}
    lines = _ndjson(url, n, headers=ndjson)
    assert [line["id"] for line in lines] == list(range(1, n + 1))
    assert list(lines[0])[:2] == ["id", "time"]  # the number first, then the jsonl contract object
    results = HTTP.get(url, headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
    assert [line["bindings"]["b"]["value"] for line in lines] == [row["b"]["value"] for row in results]
    assert _ndjson(url, n - 1, headers={**ndjson, "Last-Event-ID": "1"}) == lines[1:]
    assert _ndjson(url, 1, headers=ndjson, params={"since": n - 1}) == lines[-1:]
