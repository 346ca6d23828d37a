"""Composition: one query's output stream read by another, in the same pass over the input
(python examples/composition.py; the queries and the recording are in fixtures/composition)."""

from datetime import datetime, timezone
from pathlib import Path

from spaseq.engine.api import Engine
from spaseq.engine.io.native_events import replay_events

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
# graph on the output stream ALERTS, an event over its match's interval (from the first reading
# to the second). repeated.rq (SELECT) reads FROM STREAM <ALERTS>: an alert, then the same
# house's next alert that begins after it ended, within 30 seconds.
engine.register((FIXTURES / "alerts.rq").read_text(), output=ALERTS, on_output=on_alert)
repeated = engine.register((FIXTURES / "repeated.rq").read_text(), on_match=on_repeat)

# the recording's events (times are xsd:dateTime, read as seconds since the epoch), read
# natively in time order; run() pushes each, then ends the input (or returns its error)
error = engine.run(replay_events([("http://ex.org/readings", str(FIXTURES / "readings.trig"))]))
if error is not None:
    raise error

for row in repeated.rows():  # projected as repeated.rq's SELECT says
    print("row:", {v: term.value for v, term in row.bindings.items()})
