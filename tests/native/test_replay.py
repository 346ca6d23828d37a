"""The native core's replay reader (engine/native/core/src/replay.rs) against the Python one
(engine/io/replay.py): the same events, in the same order, at the same exact times, with
the same triples, on every replay fixture; and bad input located as FILE:LINE:COLUMN."""

from __future__ import annotations

import gzip
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from spaseq.engine import _native
from spaseq.engine.io.replay import read_replay

ROOT = Path(__file__).resolve().parents[2]
GOOD = sorted(
    p for p in [*ROOT.glob("fixtures/**/*.trig"), *ROOT.glob("fixtures/**/*.nq")]
    if read_replay(str(p), "http://ex.org/s").error is None
)
AT = "http://example.org/at"


def _python_view(path: Path, predicate: str | None = None) -> list[tuple[str, int, list[tuple[str, str, str]]]]:
    kwargs = {"time_predicate": predicate} if predicate else {}
    result = read_replay(str(path), "http://ex.org/s", **kwargs)
    assert result.error is None
    return [(str(e.name), int(e.time * Decimal(10**9)),
             [(str(t.subject), str(t.predicate), str(t.object)) for t in e.triples])
            for e in result.events]


@pytest.mark.parametrize("path", GOOD, ids=lambda p: str(p.relative_to(ROOT)))
def test_native_reader_agrees_with_the_python_reader(path: Path) -> None:
    expected = _python_view(path)
    assert _native.read_replay(str(path)) == expected
    events, triples, _terms = _native.count_replay(str(path))
    assert (events, triples) == (len(expected), sum(len(e[2]) for e in expected))


def test_gzip_and_a_custom_time_predicate(tmp_path: Path) -> None:
    src = ROOT / "fixtures/io/replay/custom_predicate.trig"  # stamped by ex:at, one as "3.5e0"
    packed = tmp_path / "custom.trig.gz"
    with src.open("rb") as f, gzip.open(packed, "wb") as g:
        shutil.copyfileobj(f, g)
    got = _native.read_replay(str(packed), AT)
    assert got == _python_view(src, AT)
    assert [time for _, time, _ in got] == [3_500_000_000, 5_000_000_000]


@pytest.mark.parametrize(("name", "message"), [
    ("syntax_error.trig", r"syntax_error\.trig:\d+:\d+: "),
    ("syntax_error.nq", r"syntax_error\.nq:\d+:\d+: "),
    ("no_timestamp.trig", "has no timestamp"),
    ("two_timestamps.trig", "has two different timestamps"),
    ("bad_timestamp.trig", "has a timestamp that is not a time"),
])
def test_bad_input_is_located(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _native.read_replay(str(ROOT / "fixtures/io/replay" / name))


def test_a_file_of_unknown_format_is_refused(tmp_path: Path) -> None:
    odd = tmp_path / "events.txt"
    odd.write_text("")
    with pytest.raises(ValueError, match="cannot tell the replay file's format"):
        _native.read_replay(str(odd))
