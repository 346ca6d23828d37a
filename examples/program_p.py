"""Program P (the CERA / XChangeEQ chapter's sensor rules) over events that last: a fire, a
burnt-down sensor and a sensor's average temperature, each derived with its interval
(python examples/program_p.py; the queries and the chapter's stream are in fixtures/cera)."""

from pathlib import Path

from spaseq.engine.api import Engine
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.io.native_events import replay_events

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cera"
SENSORS = "http://example.org/sensors"

# the chapter's events last (prov:startedAtTime, prov:endedAtTime): fire.rq has no timer, so
# the engine plans every query for events that last
engine = Engine(options=EngineOptions(intervals=True))
for rule in ("fire", "burnt_down", "avg_temp"):
    def show(match, rule=rule):
        values = {v: t.value.removeprefix("http://example.org/sensors#") for v, t in match.bindings
                  if v in ("area", "sensor", "avg")}
        print(f"{rule}{values} over [{match.start}, {match.time}]")
    engine.register((FIXTURES / f"{rule}.rq").read_text(), on_match=show)

error = engine.run(replay_events([(SENSORS, str(FIXTURES / "chapter.trig"))]))
if error is not None:
    raise SystemExit(f"the recording: {error}")
