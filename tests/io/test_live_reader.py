"""The native live reader against the Python one kept as its oracle (``live_oracle.py``): fed
the same input a line at a time (``_native.LiveReader``), both yield the same events after the
same line and stop with the same error at the same place, on every fixture and on generated
N-Quads and TriG (quads, timestamps before or after their graph, blank and comment lines,
other default-graph triples, blocks written again, bad timestamps, syntax errors, CRLF); and
``_native.LiveStream`` reading the same input from a file (its own line splitting, threads
and merge) yields what the line-fed reader yields."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spaseq.engine import _native
from spaseq.engine.errors import StreamError
from spaseq.engine.events import Event
from spaseq.engine.values.timestamps import to_nanoseconds
from tests.io.live_oracle import LiveReader
from tests.io.replay_oracle import PROV_GENERATED_AT

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted(p for pattern in ("*.trig", "*.nq") for p in ROOT.glob(f"fixtures/**/{pattern}"))
STREAM = "http://ex.org/s"
LABEL = "<test>"
EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
# hypothesis' default count; SPASEQ_DIFF_EXAMPLES=5000 runs more locally
EXAMPLES = int(os.environ.get("SPASEQ_DIFF_EXAMPLES", "100"))

View = tuple  # (stream, seq, time ns, graph, [(s, p, o)], dated, origin, start ns)
Reading = tuple[list[tuple[int, View]], str | None]  # (lines read, event) each, the error


def lines_of(text: str) -> list[str]:
    """The lines Python reads from a text stream (universal newlines, as stdin is read)."""
    return list(io.StringIO(text, newline=None))


def view(e: Event) -> View:
    return (e.stream, e.seq, to_nanoseconds(e.time), str(e.name),
            [(str(t.subject), str(t.predicate), str(t.object)) for t in e.triples], e.dated, e.origin,
            to_nanoseconds(e.start))


def python_reads(lines: list[str], fmt: str, predicate: str = PROV_GENERATED_AT) -> Reading:
    """The oracle's events, each with the number of lines it had read when it yielded it."""
    read = 0

    def source() -> Iterator[str]:
        nonlocal read
        for line in lines:
            read += 1
            yield line

    out: list[tuple[int, View]] = []
    try:
        for e in LiveReader(source(), STREAM, LABEL, fmt, predicate).events():  # type: ignore[arg-type]
            out.append((read, view(e)))
    except StreamError as exc:
        return out, str(exc)
    return out, None


def native_reads(lines: list[str], fmt: str, predicate: str = PROV_GENERATED_AT) -> Reading:
    """The native reader's events, fed a line at a time, each with the lines read by then."""
    reader = _native.LiveReader(STREAM, LABEL, fmt, predicate)
    out: list[tuple[int, View]] = []
    for n, line in enumerate(lines, start=1):
        events, error = reader.read(line)
        out.extend((n, tuple(e)) for e in events)
        if error is not None:
            return out, str(error)
    events, error = reader.finish()
    out.extend((len(lines), tuple(e)) for e in events)
    return out, None if error is None else str(error)


def stream_reads(path: Path, fmt: str) -> tuple[list[View], str | None]:
    """``LiveStream``'s events (origins named as the reader's) and error, reading ``path``."""
    out: list[View] = []
    try:
        for batch in _native.LiveStream([(STREAM, str(path), fmt)]):
            out.extend((*e[:6], e[6].replace(str(path), LABEL, 1), e[7]) for e in batch)
    except ValueError as exc:
        return out, str(exc).replace(str(path), LABEL, 1)
    return out, None


def assert_agree(text: str, fmt: str, tmp_path: Path | None = None) -> Reading:
    lines = lines_of(text)
    expected = python_reads(lines, fmt)
    got = native_reads(lines, fmt)
    assert got == expected
    if tmp_path is not None:
        path = tmp_path / f"live.{fmt}"
        path.write_bytes(text.encode())
        assert stream_reads(path, fmt) == ([v for _, v in expected[0]], expected[1])
    return expected


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_reads_as_the_python_reader_reads_it(path: Path, tmp_path: Path) -> None:
    fmt = "trig" if path.suffix == ".trig" else "nquads"
    text = path.read_text(encoding="utf-8")
    events, error = assert_agree(text, fmt, tmp_path)
    assert events or error
    assert_agree(text.replace("\n", "\r\n"), fmt, tmp_path)  # CRLF lines
    assert_agree(text.replace("\n", "\r"), fmt, tmp_path)  # old Mac lines


def test_a_custom_time_predicate() -> None:
    path = ROOT / "fixtures/io/replay/custom_predicate.trig"
    lines = lines_of(path.read_text(encoding="utf-8"))
    predicate = "http://example.org/at"
    expected = python_reads(lines, "trig", predicate)
    assert native_reads(lines, "trig", predicate) == expected
    assert expected[0] and expected[1] is None


# ------------------------------------------------------------------------------ generated

GRAPHS = [f"<{EX}g0>", f"<{EX}g1>", "_:g2", f"<{EX}g3>"]
STAMPS = [f'"1"^^<{XSD}integer>', f'"2"^^<{XSD}integer>', f'"2.0"^^<{XSD}decimal>',
          f'"2024-05-01T10:00:00Z"^^<{XSD}dateTime>', '"x"', f"<{EX}t>"]
INDENT = st.sampled_from(["", "", " ", "\t"])
NQ_ITEM = st.one_of(
    st.tuples(st.just("quad"), st.integers(0, 3), st.integers(0, 2), INDENT),
    st.tuples(st.just("quad"), st.integers(0, 3), st.integers(0, 2), INDENT),
    st.tuples(st.just("stamp"), st.integers(0, 4), st.sampled_from(STAMPS), INDENT),
    st.tuples(st.just("stamp"), st.integers(0, 4), st.sampled_from(STAMPS), INDENT),
    st.tuples(st.just("line"), st.just(0),
              st.sampled_from(["", "   ", "# a comment", f"<{EX}s> <{EX}v> <{EX}o> .",
                               f"<{EX}s> <{EX}v> oops .", "\x0b", f"<{EX}s> <{EX}v> \"x\" <{EX}g1> . # c"]),
              INDENT),
)


def nquads(items: list) -> str:
    out = []
    for kind, g, x, indent in items:
        if kind == "quad":
            out.append(f'{indent}<{EX}s> <{EX}v> "{x}" {GRAPHS[g]} .')
        elif kind == "stamp":
            name = GRAPHS[g] if g < len(GRAPHS) else f"<{EX}never>"
            out.append(f"{indent}{name} <{PROV_GENERATED_AT}> {x} .")
        else:
            out.append(indent + x)
    return "".join(line + "\n" for line in out)


PREFIXES = "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
TRIG_GRAPHS = [":g0", ":g1", "_:g2", "<http://ex.org/g3>"]
TRIG_STAMPS = ["1", "2", "2.0", '"2024-05-01T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>',
               '"x"', ":t"]
TRIG_ITEM = st.one_of(
    st.tuples(st.just("block"), st.integers(0, 3), st.lists(st.integers(0, 2), min_size=1, max_size=3),
              st.booleans(), INDENT),
    st.tuples(st.just("block"), st.integers(0, 3), st.lists(st.integers(0, 2), min_size=1, max_size=3),
              st.booleans(), INDENT),
    st.tuples(st.just("stamp"), st.integers(0, 4), st.sampled_from(TRIG_STAMPS), st.booleans(), INDENT),
    st.tuples(st.just("stamp"), st.integers(0, 4), st.sampled_from(TRIG_STAMPS), st.booleans(), INDENT),
    st.tuples(st.just("line"), st.just(0),
              st.sampled_from(["", "# a comment", ":s :v 5 .", "PREFIX ex: <http://ex.org/>",
                               ':s :v "} {" .', ":g1 { :s :v }", ":s :v", "@base <http://ex.org/> .",
                               "ex:g0 { ex:s ex:v 9 } ex:g0 prov:generatedAtTime 7 .", "}"]),
              st.just(False), INDENT),
)


def trig(items: list) -> str:
    out = [PREFIXES]
    for kind, g, x, multiline, indent in items:
        if kind == "block":
            name = TRIG_GRAPHS[g]
            body = " ".join(f":s :v {v} ." for v in x)
            out.append(f"{indent}{name} {{\n  {body}\n}}\n" if multiline else f"{indent}{name} {{ {body} }}\n")
        elif kind == "stamp":
            name = TRIG_GRAPHS[g] if g < len(TRIG_GRAPHS) else ":never"
            out.append(f"{indent}{name} prov:generatedAtTime {x} .\n")
        else:
            out.append(f"{indent}{x}\n")
    return "".join(out)


@settings(max_examples=EXAMPLES, deadline=None)
@given(items=st.lists(NQ_ITEM, max_size=14), crlf=st.booleans())
@example(items=[("stamp", 0, STAMPS[0], ""), ("quad", 0, 1, ""), ("stamp", 1, STAMPS[1], ""),
                ("quad", 1, 1, ""), ("quad", 0, 2, ""), ("stamp", 0, STAMPS[0], "")], crlf=False)
@example(items=[("quad", 2, 0, " "), ("stamp", 2, STAMPS[2], ""), ("stamp", 2, STAMPS[1], "")], crlf=True)
def test_generated_nquads_read_as_the_python_reader_reads_them(items: list, crlf: bool) -> None:
    text = nquads(items)
    assert_agree(text.replace("\n", "\r\n") if crlf else text, "nquads")


@settings(max_examples=EXAMPLES, deadline=None)
@given(items=st.lists(TRIG_ITEM, max_size=10), crlf=st.booleans())
@example(items=[("stamp", 0, "1", False, ""), ("block", 0, [1], True, "  "), ("block", 1, [2], False, ""),
                ("line", 0, "PREFIX ex: <http://ex.org/>", False, ""),
                ("line", 0, "ex:g0 { ex:s ex:v 9 } ex:g0 prov:generatedAtTime 7 .", False, ""),
                ("stamp", 1, "2.0", False, "")], crlf=False)
@example(items=[("block", 0, [1], True, ""), ("line", 0, ":g1 { :s :v }", False, "")], crlf=False)
def test_generated_trig_reads_as_the_python_reader_reads_it(items: list, crlf: bool) -> None:
    text = trig(items)
    assert_agree(text.replace("\n", "\r\n") if crlf else text, "trig")


def test_generated_inputs_read_alike_from_a_file(tmp_path: Path) -> None:
    """A few inputs through ``LiveStream`` (reading a file on its thread) as well."""
    nq = [("stamp", 0, STAMPS[0], ""), ("quad", 0, 1, ""), ("line", 0, "", ""), ("quad", 1, 2, " "),
          ("stamp", 1, STAMPS[3], ""), ("quad", 3, 0, "")]
    events, error = assert_agree(nquads(nq), "nquads", tmp_path)
    assert len(events) == 2 and error is not None and "no timestamp" in error
    tg = [("stamp", 0, "1", False, ""), ("block", 0, [1, 2], True, ""), ("block", 1, [2], False, ""),
          ("stamp", 1, '"x"', False, "")]
    events, error = assert_agree(trig(tg), "trig", tmp_path)
    assert len(events) == 1 and error is not None and error.startswith(f"{LABEL}:8: event <{EX}g1>")


# ------------------------------------------------------------------ what Python cannot say alike


def test_bytes_that_are_not_utf8_stop_at_their_line(tmp_path: Path) -> None:
    """Python decodes a pipe in blocks, so it stops at an unpredictable line before the bad
    bytes; the native reader stops at the line holding them, after the events before it."""
    path = tmp_path / "bad.nq"
    good = nquads([("quad", 0, 1, ""), ("stamp", 0, STAMPS[0], "")])
    path.write_bytes(good.encode() + f'<{EX}s> <{EX}v> "\xff" <{EX}g1> .\n'.encode("latin-1"))
    events, error = stream_reads(path, "nquads")
    assert [e[3] for e in events] == [f"<{EX}g0>"]
    assert error == (f"{LABEL}:3: cannot read the input: 'utf-8' codec can't decode byte 0xff in "
                     "position 37: invalid start byte")


def test_sources_are_merged_in_arrival_order(tmp_path: Path) -> None:
    """Two sources: every event of each, numbered 1.. in arrival order, each source's own
    order kept; a source's error comes after the other's events."""
    first, second = tmp_path / "a.nq", tmp_path / "b.nq"
    first.write_text(nquads([("quad", i % 2, i, "") for i in range(6)] + [("stamp", 0, STAMPS[0], ""),
                                                                         ("stamp", 1, STAMPS[1], "")]))
    second.write_text(nquads([("quad", 3, 1, ""), ("stamp", 3, STAMPS[1], ""), ("line", 0, "<oops", "")]))
    events, error = [], None
    try:
        for batch in _native.LiveStream([(EX + "a", str(first), "nquads"), (EX + "b", str(second), "nquads")]):
            events.extend(batch)
    except ValueError as exc:
        error = str(exc)
    assert [e[1] for e in events] == list(range(1, len(events) + 1))
    assert [(e[0], e[3]) for e in events if e[0] == EX + "a"] == [(EX + "a", f"<{EX}g0>"), (EX + "a", f"<{EX}g1>")]
    assert [e[3] for e in events if e[0] == EX + "b"] == [f"<{EX}g3>"]
    assert error is not None and error.startswith(f"{second}:3:1: N-Quads syntax error")


def test_a_bad_time_predicate_or_format_is_refused() -> None:
    with pytest.raises(ValueError, match="bad time predicate"):
        _native.LiveStream([(STREAM, "-", "nquads")], time_predicate="not an iri")
    with pytest.raises(ValueError, match="unknown live format"):
        _native.LiveReader(STREAM, LABEL, "turtle")
