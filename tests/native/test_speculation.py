"""A speculative reading (``ReplayReading(speculate=True)``, decision 47): one file read once,
its first pass handing events over as it judges them. When it confirms, it handed over
exactly the events the two-pass reading delivers; when the file is not read as it is written
(out of time order, a graph without a usable timestamp, a syntax error, a graph written again
after it was closed) it fails, and the two-pass reading then gives the truth. On the replay
fixtures and on generated files (the same generator as test_stream), and through
``spaseq run --output FILE``, where a failed speculation is rewound and run again."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import _native
from tests.cli.started import ok, run_spaseq
from tests.native.test_stream import (
    EVENT,
    EX,
    EXAMPLES,
    FIXTURES,
    ITEMS,
    ROOT,
    native_merge,
    valid_items,
    write_items,
)


def speculative_merge(path: Path, memory_events: int, spill: Path) -> tuple[list, str | None, str]:
    """The speculative stream's events and error, and its verdict."""
    reading = _native.ReplayReading([str(path)], spill_dir=str(spill), memory_events=memory_events,
                                    speculate=True)
    assert reading.speculative
    files = [(EX + "s", str(path))]
    events, error, stream = native_merge(files, spill_dir=str(spill), memory_events=memory_events,
                                         reading=reading, batch=3)
    return events, error, stream.speculation


def assert_speculation_holds(path: Path, memory_events: int, spill: Path) -> str:
    """Confirmed: the two-pass reading's events, in order, without an error (and the two-pass
    reading read the file as written too); failed: the stream ended on an error."""
    expected, expected_error, plain = native_merge([(EX + "s", str(path))], spill_dir=str(spill),
                                                   memory_events=memory_events)
    got, error, verdict = speculative_merge(path, memory_events, spill)
    if verdict == "confirmed":
        assert error is None
        assert got == expected
        assert expected_error is None and not plain.notes and plain.modes[0] in ("stream", "memory")
    else:
        assert verdict == "failed"
        assert error is not None
    return verdict


@pytest.mark.parametrize("path", FIXTURES,
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_reads_speculatively_as_in_two_passes(path: Path, tmp_path: Path) -> None:
    assert_speculation_holds(path, 10_000, tmp_path)


@settings(max_examples=EXAMPLES)
@given(items=ITEMS, trig=st.booleans(), broken=st.booleans(), memory_events=st.integers(1, 4))
def test_generated_files_read_speculatively_as_in_two_passes(tmp_path_factory, items, trig, broken,
                                                             memory_events) -> None:
    directory = tmp_path_factory.mktemp("spec")
    path = directory / f"f.{'trig' if trig else 'nq'}"
    write_items(path, items, trig, broken)
    spill = directory / "spill"
    spill.mkdir()
    assert_speculation_holds(path, memory_events, spill)


@settings(max_examples=EXAMPLES)
@given(events=st.lists(EVENT, min_size=1, max_size=12), memory_events=st.integers(1, 3),
       trig=st.booleans())
def test_a_file_read_as_written_is_confirmed(tmp_path_factory, events, memory_events, trig) -> None:
    """Each graph stamped once, times in file order: the speculation confirms, unless a split
    graph outruns the window (a graph written again after it was closed: read whole)."""
    events = sorted(events, key=lambda e: e[1])
    directory = tmp_path_factory.mktemp("asw")
    path = directory / f"f.{'trig' if trig else 'nq'}"
    write_items(path, valid_items(events), trig, False)
    spill = directory / "spill"
    spill.mkdir()
    _, _, plain = native_merge([(EX + "s", str(path))], spill_dir=str(spill), memory_events=memory_events)
    verdict = assert_speculation_holds(path, memory_events, spill)
    assert verdict == ("failed" if plain.modes == ["whole"] else "confirmed")


def stock_file(path: Path, times: list[int]) -> Path:
    """Events of one company's price, stamped with ``times`` in file order."""
    lines = []
    for i, t in enumerate(times):
        g = f"<{EX}e{i}>"
        lines.append(f'{g} <http://www.w3.org/ns/prov#generatedAtTime> "{t}"^^'
                     f"<http://www.w3.org/2001/XMLSchema#integer> .")
        lines.append(f'<{EX}c> <{EX}price> "{(i * 7) % 10}"^^<http://www.w3.org/2001/XMLSchema#integer> {g} .')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


QUERY = """PREFIX ex: <http://ex.org/>
SELECT ?p1 ?p2 WITHIN 30 SECONDS FROM STREAM S <http://ex.org/s> WHERE {
  SEQ (A: B)
  DEFINE GPM A ON S { ?c ex:price ?p1 . }
  DEFINE GPM B ON S { ?c ex:price ?p2 . FILTER (?p2 > ?p1) }
}
"""


@pytest.mark.parametrize("order", ["in order", "out of order"])
def test_run_into_a_file_gives_what_it_writes_to_stdout(tmp_path: Path, order: str) -> None:
    """``--output FILE`` reads a single file speculatively; an out-of-order file is found
    again from the start (the output rewound), and both give the stdout run's rows."""
    times = list(range(0, 400, 2))
    if order == "out of order":
        times[150], times[30] = times[30], times[150]  # found late, after many matches
    stock_file(tmp_path / "s.nq", times)
    (tmp_path / "q.rq").write_text(QUERY, encoding="utf-8")
    to_file = ok(run_spaseq(tmp_path, ("run", "q.rq", "--stream", "S=s.nq", "--format", "jsonl",
                                       "--output", "out.jsonl", "-v")))
    to_stdout = ok(run_spaseq(tmp_path, ("run", "q.rq", "--stream", "S=s.nq", "--format", "jsonl")))
    written = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    assert written == to_stdout.stdout
    assert written.count("\n") > 1000
    assert ("found again" in to_file.stderr) == (order == "out of order")


@pytest.mark.parametrize(("extra", "speculative"), [
    (("--output", "out.jsonl"), True),
    ((), False),  # stdout cannot be taken back
    (("--output", "out.jsonl", "--materialize", "m"), False),  # nor materialised files
    (("--output", "out.jsonl", "--stream", "S2=t.nq"), False),  # several files are merged
])
def test_only_an_output_file_of_ours_is_speculated_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      extra: tuple[str, ...], speculative: bool) -> None:
    from spaseq.engine.cli.main import build_parser
    from spaseq.engine.cli.run import _start_reading

    stock_file(tmp_path / "s.nq", [0, 1, 2])
    stock_file(tmp_path / "t.nq", [0, 1, 2])
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["run", "q.rq", "--stream", "S=s.nq", *extra])
    reading = _start_reading(args)
    assert reading is not None and reading.speculative == speculative
