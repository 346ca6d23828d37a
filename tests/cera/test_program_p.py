"""Program P (cera-xchangeeq-two-semantics.txt, Fig. 1) as three SPAseq queries
(``fixtures/cera/``) on the chapter's stream E: each derives exactly the chapter's event, with
its interval (section 4.2: ``fire{area{a}}[65,80]``, ``burnt_down{sensor{s}}[70,92]``,
``avg_temp{sensor{s},value{40}}[10,80]``; the second measurement is outside the
aggregation's window, so the average is 40, not 40.5), and none other. The stream is the
chapter's, built here as events that last and read from ``fixtures/cera/chapter.trig``
(``prov:startedAtTime``, ``prov:endedAtTime``); the reference evaluator runs them
(docs/decisions.md 71)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyoxigraph
import pytest

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


def derived(name: str) -> list[tuple[dict[str, str], str, str]]:
    """The events rule ``name`` derives: its projected bindings (local names, values as
    written) and its interval."""
    q = parse_query((FIXTURES / f"{name}.rq").read_text(encoding="utf-8"), str(FIXTURES / f"{name}.rq"))
    out = []
    for m in evaluate(q, chapter_stream()):
        bound = dict(m.bindings)
        row = {v: bound[v].value.removeprefix(EX) for v in q.match.variables or () if v in bound}
        out.append((row, str(m.start), str(m.time)))
    return out


@pytest.mark.parametrize(("rule", "expected"), [
    ("fire", [({"area": "a"}, "65", "80")]),
    ("burnt_down", [({"sensor": "s"}, "70", "92")]),
    ("avg_temp", [({"sensor": "s", "avg": "40"}, "10", "80")]),
])
def test_program_p_derives_the_chapters_events(rule: str, expected: list) -> None:
    assert derived(rule) == expected


def test_with_point_timestamps_the_from_end_timer_holds_its_own_anchor() -> None:
    """The chapter's trap: a point measurement lies in its own timer [t, t + 12], so
    burnt_down never fires on points (events that last are why it can)."""
    q = parse_query((FIXTURES / "burnt_down.rq").read_text(encoding="utf-8"))
    points = [Event(e.stream, e.time, e.triples, e.seq, e.name) for e in chapter_stream()]
    assert evaluate(q, points) == []


def test_the_native_engine_refuses_timers_until_it_takes_them() -> None:
    """Never a wrong answer: the native core has no relative timers yet (decision 71); the
    refusal is located at the timer."""
    from spaseq.engine.api import Engine
    from spaseq.engine.errors import QueryError

    text = (FIXTURES / "burnt_down.rq").read_text(encoding="utf-8")
    with pytest.raises(QueryError, match="reference evaluator only so far") as err:
        Engine().register(text, file="burnt_down.rq")
    assert str(err.value).startswith("burnt_down.rq:9:32: ")
    Engine().register((FIXTURES / "fire.rq").read_text(encoding="utf-8"))  # no timer: fine


@pytest.mark.parametrize(("rule", "expected"), [
    ("fire", [(80, 65, {"area": "http://example.org/sensors#a"})]),
    ("burnt_down", [(92, 70, {"sensor": "http://example.org/sensors#s"})]),
    ("avg_temp", [(80, 10, {"sensor": "http://example.org/sensors#s", "avg": "40"})]),
])
def test_the_cli_runs_program_p_on_the_chapters_file(rule: str, expected: list, tmp_path: Path) -> None:
    """``fixtures/cera/chapter.trig`` states the chapter's stream with ``prov:startedAtTime``
    and ``prov:endedAtTime``; the readers take them and ``--engine reference`` evaluates
    (the native engine refuses events that last, located at their event, until it takes them)."""
    import json

    from spaseq.engine.cli.main import main

    out = tmp_path / "out.jsonl"
    status = main(["run", str(FIXTURES / f"{rule}.rq"), "--stream", f"S={FIXTURES / 'chapter.trig'}",
                   "--engine", "reference", "--format", "jsonl", "--output", str(out)])
    assert status == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["time"], r["start"], {v: b["value"] for v, b in r["bindings"].items()}) for r in rows] == expected
    assert main(["run", str(FIXTURES / "fire.rq"), "--stream", f"S={FIXTURES / 'chapter.trig'}"]) == 2
