"""``spaseq run --mqtt``: events from MQTT topics (one TriG or N-Quads message per event) and
matches published to a topic, against a real mosquitto with real paho-mqtt clients. The
matches are exactly those of ``spaseq run`` over the same events as replay files; a
malformed message is said with its topic and counted, and the engine goes on; a broker
killed and started again is reconnected to, and later events still match."""

from __future__ import annotations

import json

from pyoxigraph import DefaultGraph, Quad, RdfFormat, serialize

from spaseq.engine.output.match_rdf import stamp_literal
from spaseq.engine.vocab import GENERATED_AT_TIME
from tests.io.replay_oracle import read_replay
from tests.server.conftest import SG, SG_KB, SG_STREAMS, spaseq_run

from .conftest import RISING, Broker, Client, Spaseq, reading

TOPICS = {"http://smartgrid.org/mainSource": "grid/power", "http://smartgrid.org/weather": "grid/weather",
          "http://smartgrid.org/storageSource": "grid/storage"}


def smartgrid_messages() -> list[tuple[str, bytes]]:
    """The smart-grid fixture's events in the order ``spaseq run`` takes them, one message
    each: the weather events as N-Quads, the others as TriG."""
    events = []
    for rank, (iri, path) in enumerate(SG_STREAMS):
        events += [(e.time, rank, e.seq, e) for e in read_replay(str(path), iri).events]
    out = []
    for *_, e in sorted(events, key=lambda x: x[:3]):
        quads = [Quad(e.name, GENERATED_AT_TIME, stamp_literal(e.time), DefaultGraph()),
                 *(Quad(t.subject, t.predicate, t.object, e.name) for t in e.triples)]
        fmt = RdfFormat.N_QUADS if e.stream == "http://smartgrid.org/weather" else RdfFormat.TRIG
        out.append((TOPICS[e.stream], serialize(quads, format=fmt)))
    return out


def test_the_smart_grid_over_mqtt_matches_as_the_files_do(broker, client) -> None:
    expected = spaseq_run("--format", "jsonl").splitlines()
    assert len(expected) == 6
    run = Spaseq("run", str(SG / "query.rq"), "--kb", SG_KB, "--format", "jsonl", "--mqtt", broker.address,
                 "--subscribe", "grid/power=S1", "--subscribe", "grid/weather=S2",
                 "--subscribe", "grid/storage=http://smartgrid.org/storageSource",
                 "--publish", f"{SG / 'query.rq'}=grid/alerts")
    run.wait_for("subscribed to grid/power, grid/weather, grid/storage")
    client.subscribe("grid/alerts")
    messages = smartgrid_messages()
    for i, (topic, payload) in enumerate(messages):
        client.publish(topic, payload)
        if i == 3:  # malformed: said with its topic, counted, and the engine goes on
            client.publish("grid/power", b"<http://smartgrid.org/x> oops .\n")
    published = client.messages(6)
    status, out = run.stop()
    assert status == 0, run.stderr
    assert out.splitlines() == expected
    assert [p for _, p in published] == expected
    assert {t for t, _ in published} == {"grid/alerts"}
    stderr = "".join(run.stderr)
    assert "spaseq: mqtt grid/power: 1:26: N-Quads syntax error: The predicate of a triple must be an IRI" in stderr
    assert "spaseq: mqtt: 1 message(s) refused (grid/power 1)" in stderr
    assert "Traceback" not in stderr


def test_a_broker_started_again_is_reconnected_to(broker_factory, tmp_path) -> None:
    own = Broker(tmp_path)
    broker_factory.append(own)
    run = Spaseq("run", str(RISING), "--mqtt", own.address, "--subscribe", "home/readings=S",
                 "--publish", f"{RISING}=home/alerts", "--format", "jsonl")
    run.wait_for("connected to " + own.address)
    first = Client(own.port)
    first.publish("home/readings", reading(1, 60))
    first.close()
    own.kill()
    run.wait_for("lost the connection to " + own.address)
    own.start()
    run.wait_for("reconnected to " + own.address)
    second = Client(own.port)
    second.subscribe("home/alerts")
    second.publish("home/readings", reading(2, 70, "trig"))
    second.publish("home/readings", reading(3, 80))
    published = [json.loads(p) for _, p in second.messages(2)]
    second.close()
    status, out = run.stop()
    assert status == 0, run.stderr
    rows = [(m["time"], m["bindings"]["v1"]["value"], m["bindings"]["v2"]["value"]) for m in published]
    assert rows == [(2, "60", "70"), (3, "70", "80")]  # the event before the restart was kept
    assert [json.loads(line) for line in out.splitlines()] == published
    stderr = "".join(run.stderr)
    assert stderr.count("lost the connection") == 1 and stderr.count("reconnected to") == 1, stderr


def test_a_late_event_under_late_error_names_its_topic_and_message(broker, client) -> None:
    run = Spaseq("run", str(RISING), "--mqtt", broker.address, "--subscribe", "late/readings=S",
                 "--late", "error", "--format", "jsonl")
    run.wait_for("subscribed to late/readings")
    client.publish("late/readings", reading(5, 60))
    client.publish("late/readings", reading(3, 70))
    status, out = run.stop(None)
    assert status == 2, run.stderr
    assert out == ""
    assert run.stderr[-1].startswith("mqtt late/readings:2: event at 3 "), run.stderr
