"""``spaseq serve --mqtt``: messages of a subscribed topic are event batches, as ``POST
/events`` bodies are; a registered query's matches are published to a topic as they are
numbered; a malformed message is said with its topic and counted in ``GET /``. A real
server, a real mosquitto and real paho-mqtt clients."""

from __future__ import annotations

import json
import time

import httpx

from tests.server.conftest import start_server

from .conftest import RISING, reading


def test_serve_takes_events_from_a_topic_and_publishes_matches(broker, client) -> None:
    srv = start_server("--mqtt", broker.address, "--subscribe", "serve/readings=http://ex.org/readings",
                       "--publish", "q1=serve/alerts")
    try:
        deadline = time.monotonic() + 20
        while not httpx.get(srv.url + "/").json()["mqtt"]["connected"]:
            assert time.monotonic() < deadline, "the server did not connect to the broker"
            time.sleep(0.05)
        registered = httpx.post(srv.url + "/queries", content=RISING.read_bytes(),
                                headers={"Content-Type": "application/sparql-query"})
        assert registered.status_code == 201 and registered.json()["id"] == "q1"
        client.subscribe("serve/alerts")
        client.publish("serve/readings", reading(1, 60, "trig"))
        client.publish("serve/readings", b"<http://ex.org/e9> { <http://ex.org/h1> }\n")  # malformed
        client.publish("serve/readings", reading(2, 70))
        client.publish("serve/readings", reading(3, 80, "trig"))
        published = [json.loads(p) for _, p in client.messages(2)]
        rows = [(m["id"], m["time"], m["bindings"]["v1"]["value"], m["bindings"]["v2"]["value"]) for m in published]
        assert rows == [(1, 2, "60", "70"), (2, 3, "70", "80")]  # numbered as ndjson lines are
        csv = httpx.get(srv.url + "/queries/q1/matches", headers={"Accept": "text/csv"}).text
        assert csv.splitlines() == ["_time,_start,s,v1,v2", "2,1,http://ex.org/h1,60,70",
                                    "3,2,http://ex.org/h1,70,80"]
        status = httpx.get(srv.url + "/").json()
        assert status["events"] == 3
        assert status["mqtt"] == {"broker": broker.address, "connected": True, "messages": 4, "events": 3,
                                  "refused": {"serve/readings": 1}, "published": 2}
    finally:
        assert srv.stop() == 0
    stderr = srv.process.stderr.read()  # type: ignore[union-attr]
    assert "spaseq: mqtt serve/readings: 1:" in stderr and "TriG syntax error" in stderr, stderr
    assert "Traceback" not in stderr
