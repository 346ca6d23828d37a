"""``_native.LocatedError``: the native readers' errors reach Python typed, a ValueError whose
``path``, ``line``, ``column`` and ``message`` are the core's ``StreamError`` (None where the
place is unknown) and whose text is ``PATH:LINE:COLUMN: message`` as before; raised by the
readers, returned by ``NativeEngine.feed``/``feed_live`` and ``LiveReader``; Python's
``StreamError`` is built from those attributes, never parsed from the text (issue 25 part 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spaseq.engine import _native
from spaseq.engine.api import Engine
from spaseq.engine.errors import Location, StreamError
from spaseq.engine.io.native_events import read_batch, stream_error

S = "http://ex.org/s"
QUERY = """PREFIX : <http://ex.org/>
SELECT ?a FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A) DEFINE GPM A ON S { ?x :val ?a } }
"""
PROV = "<http://www.w3.org/ns/prov#generatedAtTime>"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
GOOD = (f'<http://ex.org/e> <http://ex.org/val> "1"^^{INT} <http://ex.org/g> .\n'
        f'<http://ex.org/g> {PROV} "1"^^{INT} .\n')
BAD = GOOD + "<http://ex.org/s> <http://ex.org/p> \"2 <http://ex.org/g2> .\n"


def located(exc: BaseException) -> tuple:
    assert isinstance(exc, _native.LocatedError) and isinstance(exc, ValueError)
    return exc.path, exc.line, exc.column, exc.message


def test_the_exception_is_a_value_error_with_its_place() -> None:
    assert issubclass(_native.LocatedError, ValueError)
    assert _native.LocatedError.__module__ == "spaseq.engine._native"
    with pytest.raises(_native.LocatedError) as info:
        _native.read_batch(BAD.encode(), "nquads", "<body>")
    path, line, column, message = located(info.value)
    assert (path, line, column) == ("<body>", 3, 37)
    assert message.startswith("N-Quads syntax error")
    assert str(info.value) == f"<body>:3:37: {message}"


def test_a_file_error_without_a_line_has_its_path_only(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.nq")
    with pytest.raises(ValueError) as info:
        list(_native.ReplayStream([(S, missing)]))
    path, line, column, message = located(info.value)
    assert (path, line, column) == (missing, None, None)
    assert str(info.value) == f"{missing}: {message}"
    assert stream_error(info.value).location == Location(missing)


def test_iteration_raises_it_after_the_events(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nq"
    bad.write_text(BAD)
    stream = _native.ReplayStream([(S, str(bad))])
    with pytest.raises(_native.LocatedError) as info:
        for _ in stream:
            pass
    assert located(info.value)[:3] == (str(bad), 3, 37)


def test_the_live_reader_returns_it() -> None:
    reader = _native.LiveReader(S, "<in>", "nquads")
    errors = [reader.read(line)[1] for line in BAD.splitlines(keepends=True)]
    assert errors[:2] == [None, None]
    assert errors[2] is not None and located(errors[2])[:3] == ("<in>", 3, 37)


def test_python_builds_its_stream_error_from_the_attributes() -> None:
    with pytest.raises(StreamError) as info:
        read_batch(BAD.encode(), "nquads", S, "<body>")
    assert info.value.location == Location("<body>", 3, 37)
    assert info.value.message.startswith("N-Quads syntax error")
    plain = stream_error(ValueError("a.nq:1:2: not parsed"))  # text alone is never parsed
    assert plain.location is None and str(plain) == "a.nq:1:2: not parsed"


@pytest.mark.parametrize("live", [False, True])
def test_a_run_returns_the_error_feeding_gave(tmp_path: Path, live: bool) -> None:
    bad = tmp_path / "bad.nq"
    bad.write_text(BAD)
    engine = Engine()
    engine.register(QUERY)
    error = engine.run_live([(S, str(bad), "nquads")]) if live else engine.run_replay([(S, str(bad))])
    assert isinstance(error, StreamError)
    assert error.location == Location(str(bad), 3, 37)
    assert str(error).startswith(f"{bad}:3:37: N-Quads syntax error")
