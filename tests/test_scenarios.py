"""The original implementation's scenarios and the smart-grid example, against expected
results derived by hand from SEMANTICS.md (fixtures/*/expected.json, derivations in
expected.md beside each)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from spaseq.engine.io.kb import KbSpec, load_kb
from spaseq.engine.io.replay import read_replay
from spaseq.engine.io.streamfile import read_stream_description
from spaseq.engine.matches import Row, project
from spaseq.engine.query import load_query
from spaseq.engine.reference import evaluate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCENARIOS = sorted(
    d.name for d in (FIXTURES / "original").iterdir() if d.is_dir() and d.name != "credit-card"
)


def key(time: float, start: float, bindings: dict[str, str], events: list[tuple[str, float]]):
    return (
        round(time, 6),
        round(start, 6),
        tuple(sorted(bindings.items())),
        tuple((a, round(t, 6)) for a, t in events),
    )


def expected_bag(path: Path) -> Counter:
    return Counter(
        key(m["time"], m["start"], m["bindings"], [(e["atom"], e["time"]) for e in m["events"]])
        for m in json.loads(path.read_text())
    )


def actual_bag(rows: list[Row]) -> Counter:
    return Counter(
        key(r.time, r.start, {v: str(t) for v, t in r.bindings.items()},
            [(t.atom, t.event.time) for t in r.taken])
        for r in rows
    )


def run_scenario(folder: Path) -> list[Row]:
    query = load_query(str(next(folder.glob("*.q"))))
    streams = read_stream_description(str(next(folder.glob("stream*.txt"))))
    assert streams.error is None
    kb = None
    if (folder / "externalKB.nt").exists():
        kb = load_kb([KbSpec(str(folder / "externalKB.nt"), None)], query.graph_iris()).store
    matches = evaluate(query, streams.events, kb)
    return list(project(matches, query.match.variables, query.match.distinct))


@pytest.mark.parametrize("name", SCENARIOS)
def test_original_scenario(name: str) -> None:
    folder = FIXTURES / "original" / name
    assert actual_bag(run_scenario(folder)) == expected_bag(folder / "expected.json")


def test_smartgrid_example() -> None:
    folder = FIXTURES / "smartgrid"
    query = load_query(str(folder / "query.rq"))
    events = []
    for name, file in (("S1", "power.trig"), ("S2", "weather.trig"), ("S3", "storage.trig")):
        res = read_replay(str(folder / file), query.streams[name], first_seq=len(events) * 1000)
        assert res.error is None
        events.extend(res.events)
    kb = load_kb([KbSpec(str(folder / "kb.nt"), None)], query.graph_iris()).store
    rows = list(project(evaluate(query, events, kb), query.match.variables))
    assert actual_bag(rows) == expected_bag(folder / "expected.json")
