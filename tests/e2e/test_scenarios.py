"""The original implementation's scenarios and the smart-grid example, against expected
results derived by hand from SEMANTICS.md (fixtures/*/expected.json, derivations in
expected.md beside each)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from spaseq.engine.io.kb import KbSpec, load_kb
from spaseq.engine.io.streamfile import read_stream_description
from spaseq.engine.language.query import load_query
from spaseq.engine.matches import Row, project
from spaseq.engine.reference.evaluator import evaluate
from spaseq.engine.values.timestamps import datetime_text
from tests.io.replay_oracle import read_replay

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SCENARIOS = sorted(
    d.name for d in (FIXTURES / "original").iterdir() if d.is_dir() and d.name != "credit-card"
)


def _s(t) -> Decimal:
    """A time from JSON (a float) or from the engine (a Decimal), exactly as written."""
    return (Decimal(repr(t)) if isinstance(t, float) else Decimal(t)).normalize()


def key(time, start, bindings: dict[str, str], events: list[tuple[str, object]]):
    return (_s(time), _s(start), tuple(sorted(bindings.items())), tuple((a, _s(t)) for a, t in events))


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


def cli_bag(args: list[str]) -> Counter:
    """Run the real ``spaseq run ... --format jsonl`` and collect its matches as a bag."""
    proc = subprocess.run(
        [sys.executable, "-m", "spaseq.engine.cli", "run", *args, "--format", "jsonl"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    bag: Counter = Counter()
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        # time_iso/start_iso for dateTime-stamped events (decision 43), the same instants
        iso = {"time_iso", "start_iso"} if "time_iso" in rec else set()
        assert set(rec) == {"time", "start", *iso, "bindings", "events"}
        for name in iso:
            assert rec[name] == datetime_text(Decimal(str(rec[name[:-4]])))
        bindings = {v: _nt(t) for v, t in rec["bindings"].items()}
        bag[key(rec["time"], rec["start"], bindings,
                [(e["atom"], e["time"]) for e in rec["events"]])] += 1
    return bag


def _nt(term: dict) -> str:
    """A SPARQL JSON term back in N-Triples syntax, as the expected files write terms."""
    if term["type"] == "uri":
        return f"<{term['value']}>"
    if term["type"] == "bnode":
        return f"_:{term['value']}"
    value = json.dumps(term["value"], ensure_ascii=False)
    if "xml:lang" in term:
        return f"{value}@{term['xml:lang']}"
    datatype = term.get("datatype", "http://www.w3.org/2001/XMLSchema#string")
    return value if datatype.endswith("#string") else f"{value}^^<{datatype}>"


@pytest.mark.parametrize("name", SCENARIOS)
def test_original_scenario_through_cli_jsonl(name: str) -> None:
    folder = FIXTURES / "original" / name
    args = [str(next(folder.glob("*.q"))), "--stream-file", str(next(folder.glob("stream*.txt")))]
    if (folder / "externalKB.nt").exists():
        args += ["--kb", str(folder / "externalKB.nt")]
    assert cli_bag(args) == expected_bag(folder / "expected.json")


def test_smartgrid_through_cli_jsonl() -> None:
    folder = FIXTURES / "smartgrid"
    args = [str(folder / "query.rq"), "--stream", f"S1={folder / 'power.trig'}",
            "--stream", f"S2={folder / 'weather.trig'}", "--stream", f"S3={folder / 'storage.trig'}",
            "--kb", str(folder / "kb.nt")]
    assert cli_bag(args) == expected_bag(folder / "expected.json")
