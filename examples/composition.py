"""Composition: one query's output stream read by another, in the same pass over the input
(python examples/composition.py; the queries and the recording are in fixtures/composition)."""

from datetime import datetime, timezone
from pathlib import Path

from spaseq.engine.api import Engine
from spaseq.engine.io.replay import read_replay

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "composition"
ALERTS = "http://ex.org/alerts"

engine = Engine()


def clock(seconds):
    return datetime.fromtimestamp(int(seconds), timezone.utc).strftime("%H:%M:%S")


def on_alert(alert):
    """Each result of the first query, as the graph event its output stream carries."""
    b = alert.row.bindings
    print(f"{clock(alert.time)} {alert.name.value}: {b['s'].value} {b['v1'].value} -> {b['v2'].value}"
          f" ({len(alert.triples)} triples)")


def on_repeat(match):
    print(f"{clock(match.time)} repeated alert:", {v: t.value for v, t in match.bindings})


# alerts.rq (CONSTRUCT): a reading above 50, then the house's next higher reading -> an alert
# graph on the output stream ALERTS. repeated.rq (SELECT) reads FROM STREAM <ALERTS>: an
# alert, then the same house's next alert within 30 seconds.
engine.register((FIXTURES / "alerts.rq").read_text(), output=ALERTS, on_output=on_alert)
repeated = engine.register((FIXTURES / "repeated.rq").read_text(), on_match=on_repeat)

# the recording's events (times are xsd:dateTime, read as seconds since the epoch)
readings = read_replay(str(FIXTURES / "readings.trig"), "http://ex.org/readings")
if readings.error is not None:
    raise readings.error
engine.run(readings.events)  # push every event in time order, then end the input

for row in repeated.rows():  # projected as repeated.rq's SELECT says
    print("row:", {v: term.value for v, term in row.bindings.items()})
