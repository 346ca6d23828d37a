"""Composition over HTTP: a query registered with ``output-stream=IRI`` feeds another that
reads that stream, in the server's one engine; the consumer's matches equal what the same two
queries give through the Python API on the same events."""

from __future__ import annotations

import httpx

from spaseq.engine.api import Engine
from tests.util import ev

from .conftest import start_server

P = "PREFIX : <http://ex.org/>\n"
UP = P + """CONSTRUCT { ?s :alarm ?v } WITHIN 10 SECONDS FROM STREAM S <http://ex.org/readings>
WHERE { SEQ(A) DEFINE GPM A ON S { ?s :value ?v FILTER(?v > 50) } }"""
DOWN = P + """SELECT ?s ?v ?w WITHIN 30 SECONDS
FROM STREAM AL <http://ex.org/alerts> FROM STREAM S <http://ex.org/readings>
WHERE { SEQ(X; R) DEFINE GPM X ON AL { ?s :alarm ?v } DEFINE GPM R ON S { ?s :value ?w FILTER(?w < 30) } }"""
READINGS = [("h1", 40, 1), ("h1", 60, 2), ("h2", 90, 2), ("h1", 20, 3), ("h2", 10, 4), ("h1", 55, 5), ("h1", 25, 6)]


def _trig(readings) -> bytes:
    lines = ["@prefix : <http://ex.org/> . @prefix prov: <http://www.w3.org/ns/prov#> ."]
    for i, (house, value, t) in enumerate(readings):
        lines.append(f":g{i} prov:generatedAtTime {t} . :g{i} {{ :{house} :value {value} }}")
    return "\n".join(lines).encode()


def test_a_query_reads_another_querys_output_stream() -> None:
    engine = Engine()
    engine.register(UP, output="http://ex.org/alerts")
    down = engine.register(DOWN)
    for i, (house, value, t) in enumerate(READINGS):
        engine.push_event(ev("readings", t, f":{house} :value {value} .", seq=i))
    engine.close()
    expected = sorted((r.bindings["s"].value, r.bindings["v"].value, r.bindings["w"].value) for r in down.rows())
    assert expected

    srv = start_server()
    try:
        up = httpx.post(f"{srv.url}/queries", params={"output-stream": "http://ex.org/alerts"},
                        content=UP, headers={"Content-Type": "application/sparql-query"})
        assert up.status_code == 201, up.text
        consumer = httpx.post(f"{srv.url}/queries", content=DOWN,
                              headers={"Content-Type": "application/sparql-query"})
        assert consumer.status_code == 201, consumer.text
        pushed = httpx.post(f"{srv.url}/events", params={"stream": "http://ex.org/readings"},
                            content=_trig(READINGS), headers={"Content-Type": "application/trig"})
        assert pushed.status_code == 200, pushed.text
        assert httpx.post(f"{srv.url}/heartbeat", params={"time": "100"}).status_code in (200, 204)
        rows = httpx.get(f"{srv.url}{consumer.json()['matches']}",
                         headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
        got = sorted((r["s"]["value"], r["v"]["value"], r["w"]["value"]) for r in rows)
        assert got == expected
    finally:
        assert srv.stop() == 0
