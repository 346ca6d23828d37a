"""``Engine.run_replay(progress=)``: called between batches with the events fed so far and
the clock, never changing the matches (what ``spaseq run``'s progress line reads)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from spaseq.engine.api import Engine

EX = "http://ex.org/"
PROV = "http://www.w3.org/ns/prov#generatedAtTime"
QUERY = """PREFIX : <http://ex.org/>
SELECT ?s ?a ?b WITHIN 10 SECONDS FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A; B) DEFINE GPM A ON S { ?s :a ?a } DEFINE GPM B ON S { ?s :b ?b } }"""


def _run(path: Path, **options) -> list:
    engine = Engine()
    handle = engine.register(QUERY)
    assert engine.run_replay([(EX + "s", str(path))], **options) is None
    return [(m.start, m.time, m.bindings) for m in handle.matches()]


def test_progress_is_called_per_batch_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.nq"
    path.write_text("".join(f'<{EX}g{i}> <{PROV}> "{i}" .\n<{EX}x{i % 3}> <{EX}{"ab"[i // 3 % 2]}> "{i}" <{EX}g{i}> .\n'
                            for i in range(1000)))
    calls: list[tuple[int, Decimal]] = []
    found = _run(path, batch=64, progress=lambda events, clock: calls.append((events, clock)))
    assert found == _run(path) and len(found) > 100
    assert len(calls) >= 1000 // 64  # once per batch, never per event
    assert len(calls) < 1000
    assert [n for n, _ in calls] == sorted(n for n, _ in calls)
    assert calls[-1] == (1000, 999)
