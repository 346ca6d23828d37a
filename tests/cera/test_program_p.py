"""Program P (cera-xchangeeq-two-semantics.txt, Fig. 1) as three SPAseq queries
(``fixtures/cera/``) on the chapter's stream E: each derives exactly the chapter's event, with
its interval (section 4.2: ``fire{area{a}}[65,80]``, ``burnt_down{sensor{s}}[70,92]``,
``avg_temp{sensor{s},value{40}}[10,80]``; the second measurement is outside the
aggregation's window, so the average is 40, not 40.5), and none other. The stream is the
chapter's, built here as events that last and read from ``fixtures/cera/chapter.trig``
(``prov:startedAtTime``, ``prov:endedAtTime``); the reference evaluator and the native
engine (planned for events that last) run them (docs/decisions.md 71)."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pyoxigraph
import pytest

from spaseq.engine.api import evaluate as native_evaluate
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.reference.evaluator import evaluate

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "cera"
EX = "http://example.org/sensors#"
STREAM = "http://example.org/sensors"


def chapter_stream() -> list[Event]:
    """E: temp{a, s, 40}[60,63], smoke{a}[65,68], temp{a, s, 41}[70,80]."""
    graphs = [(60, 63, "ex:t1 a ex:Temp ; ex:area ex:a ; ex:sensor ex:s ; ex:value 40 ."),
              (65, 68, "ex:s1 a ex:Smoke ; ex:area ex:a ."),
              (70, 80, "ex:t2 a ex:Temp ; ex:area ex:a ; ex:sensor ex:s ; ex:value 41 .")]
    out = []
    for seq, (start, end, turtle) in enumerate(graphs):
        triples = tuple(q.triple for q in pyoxigraph.parse(f"@prefix ex: <{EX}> .\n{turtle}",
                                                            format=pyoxigraph.RdfFormat.TURTLE))
        out.append(Event(STREAM, Decimal(end), triples, seq, pyoxigraph.NamedNode(f"{EX}e{seq + 1}"),
                         start=Decimal(start)))
    return out


def derived(name: str, engine: str = "reference") -> list[tuple[dict[str, str], str, str]]:
    """The events rule ``name`` derives (by the reference evaluator or the native engine):
    its projected bindings (local names, values as written) and its interval."""
    q = parse_query((FIXTURES / f"{name}.rq").read_text(encoding="utf-8"), str(FIXTURES / f"{name}.rq"))
    out = []
    found = (evaluate(q, chapter_stream()) if engine == "reference"
             else native_evaluate(q, chapter_stream(), options=EngineOptions(intervals=True)))
    for m in found:
        bound = dict(m.bindings)
        row = {v: bound[v].value.removeprefix(EX) for v in q.match.variables or () if v in bound}
        out.append((row, str(m.start), str(m.time)))
    return out


@pytest.mark.parametrize(("rule", "expected"), [
    ("fire", [({"area": "a"}, "65", "80")]),
    ("burnt_down", [({"sensor": "s"}, "70", "92")]),
    ("avg_temp", [({"sensor": "s", "avg": "40"}, "10", "80")]),
])
@pytest.mark.parametrize("engine", ["reference", "native"])
def test_program_p_derives_the_chapters_events(rule: str, expected: list, engine: str) -> None:
    assert derived(rule, engine) == expected


def test_with_point_timestamps_the_from_end_timer_holds_its_own_anchor() -> None:
    """The chapter's trap: a point measurement lies in its own timer [t, t + 12], so
    burnt_down never fires on points (events that last are why it can)."""
    q = parse_query((FIXTURES / "burnt_down.rq").read_text(encoding="utf-8"))
    points = [Event(e.stream, e.time, e.triples, e.seq, e.name) for e in chapter_stream()]
    assert evaluate(q, points) == []


def test_a_timer_plans_its_query_for_events_that_last() -> None:
    """A timer's interval lasts: the planner turns ``intervals`` on for its query, so that the
    native engine takes the chapter's events without being asked; a query without one takes
    them when registered with it, and refuses them with a message saying so otherwise."""
    from spaseq.engine.compile.planner import plan_query
    from spaseq.engine.errors import UsageError

    assert plan_query(parse_query((FIXTURES / "burnt_down.rq").read_text(encoding="utf-8"))).options.intervals
    q = parse_query((FIXTURES / "fire.rq").read_text(encoding="utf-8"))
    assert not plan_query(q).options.intervals
    with pytest.raises(UsageError, match="planned for point events: register it with intervals on"):
        native_evaluate(q, chapter_stream())


@pytest.mark.parametrize("engine", [["--engine", "reference"], ["--intervals"]])
@pytest.mark.parametrize(("rule", "expected"), [
    ("fire", [(80, 65, {"area": "http://example.org/sensors#a"})]),
    ("burnt_down", [(92, 70, {"sensor": "http://example.org/sensors#s"})]),
    ("avg_temp", [(80, 10, {"sensor": "http://example.org/sensors#s", "avg": "40"})]),
])
def test_the_cli_runs_program_p_on_the_chapters_file(rule: str, expected: list, engine: list[str],
                                                     tmp_path: Path) -> None:
    """``fixtures/cera/chapter.trig`` states the chapter's stream with ``prov:startedAtTime``
    and ``prov:endedAtTime``; the readers take them, and the reference evaluator and the native
    engine under ``--intervals`` evaluate (without it, the native engine refuses the first
    event that lasts, located at its line, exit status 2)."""
    import json

    from spaseq.engine.cli.main import main

    out = tmp_path / "out.jsonl"
    status = main(["run", str(FIXTURES / f"{rule}.rq"), "--stream", f"S={FIXTURES / 'chapter.trig'}",
                   *engine, "--format", "jsonl", "--output", str(out)])
    assert status == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["time"], r["start"], {v: b["value"] for v, b in r["bindings"].items()}) for r in rows] == expected
    assert main(["run", str(FIXTURES / "fire.rq"), "--stream", f"S={FIXTURES / 'chapter.trig'}"]) == 2


def test_the_readme_s_interval_example_prints_what_it_shows(capsys) -> None:
    """README "Events that last": the command as written, its table as shown."""
    from spaseq.engine.cli.main import main

    readme = (FIXTURES.parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ spaseq run fixtures/cera/avg_temp.rq", 1)[1].split("```", 1)[0]
    command, shown = block.split("\n", 1)
    root = FIXTURES.parents[1]
    args = ["run", str(root / "fixtures/cera/avg_temp.rq"),
            *[a.replace("S=fixtures", f"S={root}/fixtures") for a in command.split()]]
    assert main(args) == 0
    assert capsys.readouterr().out == shown


def test_the_api_pushes_events_that_last() -> None:
    """``Engine.push(..., start=, end=)``: the chapter's stream pushed event by event gives
    burnt_down's [70, 92] (released at the end of input); a start after the end, a start and
    an end of different kinds, an end given twice, are refused before anything is pushed."""
    from spaseq.engine.api import Engine
    from spaseq.engine.errors import UsageError

    engine = Engine()
    burnt = engine.register((FIXTURES / "burnt_down.rq").read_text(encoding="utf-8"))
    for e in chapter_stream():
        engine.push(STREAM, graph=e.triples, name=e.name, start=e.start, end=e.time)
    for kwargs, message in [({"time": 90, "start": 91}, "starts"),
                            ({"time": 90, "start": datetime(2026, 1, 1, tzinfo=timezone.utc)}, "different kinds"),
                            ({"time": 90, "end": 90}, "not both")]:
        with pytest.raises(UsageError, match=message):
            engine.push(STREAM, graph=(), **kwargs)
    engine.close()
    assert [(r.start, r.time, r.bindings["sensor"].value) for r in burnt.rows()] == [(70, 92, EX + "s")]


def test_explain_shows_timers_and_events_that_last(capsys) -> None:
    """``spaseq explain``: a timer's step is one edge judged at the timer's end (no event
    waited for), its plan says so, and a query planned for events that last (a timer's, or
    any with --intervals) says that too."""
    from spaseq.engine.cli.main import main

    assert main(["explain", str(FIXTURES / "burnt_down.rq")]) == 0
    out = capsys.readouterr().out
    assert "  x1 -> x2  [not]  ({S}, after HOT, SILENT)" in out and "x1 -> x1" not in out
    assert "x1: runs waiting for the end of SILENT's timer (AFTER HOT FOR 12 SECONDS)" in out
    assert "events that last (intervals)" in out
    assert main(["explain", str(FIXTURES / "fire.rq")]) == 0
    assert "events that last" not in capsys.readouterr().out
    assert main(["explain", str(FIXTURES / "fire.rq"), "--intervals"]) == 0
    assert "events that last (intervals)" in capsys.readouterr().out


def test_timers_keep_a_bounded_number_of_events() -> None:
    """The events a timer query keeps to look back at (``kept_events``) follow its runs, not
    the stream: burnt_down's AFTER timer (no window) needs none from before its anchor, and
    avg_temp's BEFORE timer within 2 minutes keeps its window and the timer's minute before it
    of readings (an event still to come may begin that early)."""
    from spaseq.engine.api import Engine

    bounded = (FIXTURES / "avg_temp.rq").read_text(encoding="utf-8").replace(
        "FROM STREAM", "WITHIN 2 MINUTES\nFROM STREAM")
    for text, most in [((FIXTURES / "burnt_down.rq").read_text(encoding="utf-8"), 30), (bounded, 190)]:
        engine = Engine()
        handle = engine.register(text)
        kept = []
        for t in range(1, 1500):
            sensor = f"s{t % 7}"
            engine.push(STREAM, t, f"@prefix ex: <{EX}> . ex:r{t} a ex:Temp ; ex:area ex:a ; "
                                   f"ex:sensor ex:{sensor} ; ex:value {30 + t % 15} .",
                        format="turtle", start=t - t % 3)
            kept.append(handle.runtime.footprint()["kept_events"])
        assert 0 < max(kept) <= most, (text[:40], max(kept))
