"""The native core's replay reader (engine/native/io/src/replay.rs) against the Python one,
the oracle (tests/io/replay_oracle.py): the same events, in the same order, at the same exact times, with
the same triples, on every replay fixture; and bad input located as FILE:LINE:COLUMN."""

from __future__ import annotations

import gzip
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import _native
from spaseq.engine._native import _testing
from tests.io.replay_oracle import read_replay

ROOT = Path(__file__).resolve().parents[2]
GOOD = sorted(
    p for p in [*ROOT.glob("fixtures/**/*.trig"), *ROOT.glob("fixtures/**/*.nq")]
    if read_replay(str(p), "http://ex.org/s").error is None
)
AT = "http://example.org/at"


def _python_view(path: Path, predicate: str | None = None) -> list[tuple[str, int, list[tuple[str, str, str]], bool, int]]:
    kwargs = {"time_predicate": predicate} if predicate else {}
    result = read_replay(str(path), "http://ex.org/s", **kwargs)
    assert result.error is None
    return [(str(e.name), int(e.time * Decimal(10**9)),
             [(str(t.subject), str(t.predicate), str(t.object)) for t in e.triples], e.dated,
             int(e.start * Decimal(10**9)))
            for e in result.events]


@pytest.mark.parametrize("path", GOOD, ids=lambda p: str(p.relative_to(ROOT)))
def test_native_reader_agrees_with_the_python_reader(path: Path) -> None:
    expected = _python_view(path)
    assert _testing.read_replay(str(path)) == expected
    events, triples, _terms = _testing.count_replay(str(path))
    assert (events, triples) == (len(expected), sum(len(e[2]) for e in expected))


def test_gzip_and_a_custom_time_predicate(tmp_path: Path) -> None:
    src = ROOT / "fixtures/io/replay/custom_predicate.trig"  # stamped by ex:at, one as "3.5e0"
    packed = tmp_path / "custom.trig.gz"
    with src.open("rb") as f, gzip.open(packed, "wb") as g:
        shutil.copyfileobj(f, g)
    got = _testing.read_replay(str(packed), AT)
    assert got == _python_view(src, AT)
    assert [time for _, time, _, _, _ in got] == [3_500_000_000, 5_000_000_000]


@pytest.mark.parametrize(("name", "message"), [
    ("syntax_error.trig", r"syntax_error\.trig:\d+:\d+: "),
    ("syntax_error.nq", r"syntax_error\.nq:\d+:\d+: "),
    ("no_timestamp.trig", "has no timestamp"),
    ("two_timestamps.trig", "has two different timestamps"),
    ("bad_timestamp.trig", "has a timestamp that is not a time"),
])
def test_bad_input_is_located(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _testing.read_replay(str(ROOT / "fixtures/io/replay" / name))


def test_a_file_of_unknown_format_is_refused(tmp_path: Path) -> None:
    odd = tmp_path / "events.txt"
    odd.write_text("")
    with pytest.raises(ValueError, match="cannot tell the replay file's format"):
        _testing.read_replay(str(odd))


# The error messages, in full: the native reader's (whole file, and streamed) are the Python
# reader's, word for word, on the bad fixtures and on generated bad timestamps.
REPLAY = sorted((ROOT / "fixtures/io/replay").iterdir())
XSD = "http://www.w3.org/2001/XMLSchema#"


def _errors(path: Path, predicate: str | None = None) -> tuple[str | None, str | None, str | None]:
    """The Python reader's error, the native reader's and the native stream's."""
    kwargs = {"time_predicate": predicate} if predicate else {}
    python = read_replay(str(path), "http://ex.org/s", **kwargs).error
    try:
        _testing.read_replay(str(path), *([predicate] if predicate else []))
        whole = None
    except ValueError as err:
        whole = str(err)
    stream = _native.ReplayStream([("http://ex.org/s", str(path))], memory_events=1, **kwargs)
    try:
        for _ in stream:
            pass
        streamed = None
    except ValueError as err:
        streamed = str(err)
    return (str(python) if python else None), whole, streamed


@pytest.mark.parametrize("path", REPLAY, ids=lambda p: p.name)
def test_error_messages_are_the_python_readers_on_the_fixtures(path: Path) -> None:
    python, whole, streamed = _errors(path)
    assert whole == python
    assert streamed == python


def _stamped(tmp_path: Path, literal: str) -> Path:
    path = tmp_path / "stamp.nq"
    path.write_text(f'<http://ex.org/s> <http://ex.org/v> "1" <http://ex.org/g> .\n'
                    f"<http://ex.org/g> <http://www.w3.org/ns/prov#generatedAtTime> {literal} .\n",
                    encoding="utf-8")
    return path


def _typed(text: str, datatype: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"^^<{XSD}{datatype}>' if datatype != "string" else f'"{escaped}"'


BAD_STAMPS = [
    ("x", "string"), ("x", "integer"), ("1.5", "integer"), (" 7x ", "long"), ("1e3", "decimal"),
    ("0.0000000001", "decimal"), ("1e18", "double"), ("INF", "double"), ("NaN", "float"),
    ("yesterday", "dateTime"), ("2024-13-01T00:00:00Z", "dateTime"),
    ("2023-02-29T00:00:00Z", "dateTime"), ("2024-01-01T24:00:01Z", "dateTime"),
    ("2024-01-01T00:00:00+15:00", "dateTime"), ("02024-01-01T00:00:00Z", "dateTime"),
    ("2024-01-01T00:00:00.0000000001Z", "dateTime"), ("99999999999-01-01T00:00:00Z", "dateTime"),
    ("2024-01-01T00:00:00", "dateTimeStamp"), ("2024-13-01T00:00", "dateTimeStamp"),
    ("it's", "dateTime"), ('say "x"', "integer"), ("tab\there", "decimal"), ("1", "boolean"),
]


@pytest.mark.parametrize(("text", "datatype"), BAD_STAMPS)
def test_error_messages_are_the_python_readers_on_bad_timestamps(tmp_path: Path, text: str,
                                                                 datatype: str) -> None:
    python, whole, streamed = _errors(_stamped(tmp_path, _typed(text, datatype)))
    assert python is not None and "is not a time" in python
    assert (whole, streamed) == (python, python)


@pytest.mark.parametrize("literal", ["<http://ex.org/t>", "_:b", '"1"@en'])
def test_a_timestamp_that_is_no_literal_or_a_tagged_one(tmp_path: Path, literal: str) -> None:
    python, whole, streamed = _errors(_stamped(tmp_path, literal))
    assert python is not None
    assert (whole, streamed) == (python, python)


TIME_TEXT = st.text(st.sampled_from("0123456789-+.eE:TZ \t"), max_size=28)
DATETIME_TEXT = st.builds(
    lambda y, mo, d, h, mi, s, frac, tz: f"{y}-{mo}-{d}T{h}:{mi}:{s}{frac}{tz}",
    st.sampled_from(["2024", "-0001", "0000", "1969", "10000", "012345", "99999999999"]),
    st.sampled_from(["01", "02", "12", "13", "00"]), st.sampled_from(["01", "28", "29", "31", "32"]),
    st.sampled_from(["00", "23", "24"]), st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["00", "59", "60", "5"]), st.sampled_from(["", ".5", ".000000001", ".0000000001", "."]),
    st.sampled_from(["", "Z", "+01:00", "-14:00", "+14:01", "+15:00", "-00:60"]))


@settings(max_examples=int(os.environ.get("SPASEQ_DIFF_EXAMPLES", "100")), deadline=None)
@given(text=st.one_of(TIME_TEXT, DATETIME_TEXT),
       datatype=st.sampled_from(["string", "integer", "decimal", "double", "dateTime", "dateTimeStamp"]))
def test_timestamps_are_read_as_the_python_reader_reads_them(tmp_path_factory, text: str,
                                                             datatype: str) -> None:
    """Accepted or not, at the same time, with the same message."""
    path = _stamped(tmp_path_factory.mktemp("stamp"), _typed(text, datatype))
    python, whole, streamed = _errors(path)
    assert (whole, streamed) == (python, python)
    if python is None:
        assert _testing.read_replay(str(path)) == _python_view(path)


def test_a_gzip_file_cut_short_says_so_as_the_python_reader(tmp_path: Path) -> None:
    packed = gzip.compress((ROOT / "fixtures/io/replay/basic.trig").read_bytes())
    path = tmp_path / "cut.trig.gz"
    path.write_bytes(packed[: len(packed) - 5])  # inside the trailer: every event was read
    python, whole, streamed = _errors(path)
    assert python == f"{path}: cannot read the file: Compressed file ended before the end-of-stream marker was reached"
    assert streamed == python
    assert whole is not None and whole.endswith(python.split(": ", 1)[1])
