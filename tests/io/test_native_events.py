"""The native reader's events as Python ``Event``s (engine/io/native_events.py: what composed
queries, ``--engine reference``, ``--stream-file`` runs, ``spaseq serve``'s bodies and the
rdflib processor read) against the oracle (tests/io/replay_oracle.py): the same events, every
field, in the same order, and the same errors at the same places; on every replay fixture,
merged files, and request bodies (fixtures and generated ones)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import RdfFormat

from spaseq.engine.cli.run import Input
from spaseq.engine.errors import StreamError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.io.native_events import read_batch, read_replay_files, replay_events
from tests.io.replay_oracle import read_replay

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "fixtures" / "io" / "replay"
FIXTURES = sorted(p for pattern in ("*.trig", "*.nq", "*.nq.gz", "*.trig.gz")
                  for p in ROOT.glob(f"fixtures/**/{pattern}"))
EX = "http://ex.org/"
LABEL = "<body>"


def fields(e: Event, origin: bool = True, seq: bool = True) -> tuple:
    return (e.stream, e.time, e.triples, *((e.seq,) if seq else ()), e.name, e.dated,
            *((e.origin,) if origin else ()))


def oracle(files: list[tuple[str, str]]) -> tuple[list[tuple], str | None]:
    """What the engine read with the Python reader (cli/run.py's ``_read_input`` before):
    each file whole, numbered after the earlier ones, cut by ``Input.usable``."""
    inp = Input()
    seq = 0
    for iri, path in files:
        res = read_replay(path, iri, first_seq=seq)
        seq += len(res.events) + 1
        inp.events.extend(res.events)
        if res.error is not None:
            inp.errors.append((res.error, max((e.time for e in res.events), default=float("-inf"))))
    events, _ = inp.usable()
    return ([fields(e, origin=False) for e in sorted(events, key=Event.sort_key)],
            str(inp.errors[0][0]) if inp.errors else None)


def native(files: list[tuple[str, str]]) -> tuple[list[tuple], str | None]:
    """The native reader's events (whose origin is their file: the oracle's is ``FILE:LINE``
    after an error, when it read the file again with lines) and error."""
    events, error = read_replay_files(files)
    paths = dict(files)
    assert all(e.origin == paths[e.stream] for e in events)
    return [fields(e, origin=False) for e in events], (str(error) if error is not None else None)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_gives_the_oracles_events(path: Path) -> None:
    assert native([(EX + "s", str(path))]) == oracle([(EX + "s", str(path))])


def test_merged_files_and_a_failing_one() -> None:
    sg = ROOT / "fixtures" / "smartgrid"
    files = [(EX + name, str(sg / f"{name}.trig")) for name in ("power", "weather", "storage")]
    assert native(files) == oracle(files)
    files.append((EX + "bad", str(REPLAY / "syntax_error.trig")))
    got = native(files)
    assert got == oracle(files)
    assert got[1] is not None and got[1].startswith(f"{REPLAY / 'syntax_error.trig'}:")


def test_the_error_is_located_and_comes_after_the_events() -> None:
    items = list(replay_events([(EX + "s", str(REPLAY / "two_timestamps.trig"))]))
    *events, error = items
    assert all(isinstance(e, Event) for e in events)
    assert isinstance(error, StreamError) and error.location is not None
    assert error.location.file == str(REPLAY / "two_timestamps.trig") and error.location.line


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    odd = tmp_path / "events.txt"
    odd.write_text("")
    for path in (tmp_path / "gone.trig", odd, tmp_path):
        assert native([(EX + "s", str(path))]) == oracle([(EX + "s", str(path))])


def test_a_bad_time_predicate_is_a_usage_error_as_before() -> None:
    with pytest.raises(UsageError, match="time predicate 'not an iri' is not an absolute IRI"):
        read_replay_files([(EX + "s", str(REPLAY / "basic.trig"))], "not an iri")


def test_one_file_of_a_stream_named_twice_has_no_origin() -> None:
    files = [(EX + "s", str(REPLAY / "basic.trig")), (EX + "s", str(REPLAY / "basic.nq"))]
    assert [fields(e, origin=False) for e in read_replay_files(files)[0]] == oracle(files)[0]
    events, error = read_replay_files(files)
    assert error is None and events and {e.origin for e in events} == {None}


# --- request bodies (spaseq serve): the replay reader's rules on bytes --------------------------

FORMATS = {".trig": ("trig", RdfFormat.TRIG), ".nq": ("nquads", RdfFormat.N_QUADS)}


def body_oracle(data: bytes, fmt: RdfFormat) -> tuple[list[tuple], str | None]:
    res = read_replay(LABEL, EX + "s", data=data, data_format=fmt)
    if res.error is not None:
        return [], str(res.error)
    return [fields(e, origin=False, seq=False) for e in res.events], None


def body_native(data: bytes, fmt: str) -> tuple[list[tuple], str | None]:
    """The batch's events (numbered in the order they are given: ``seq`` is not the oracle's
    rank by first appearance, and no reader of a batch looks at it) and error."""
    try:
        events = read_batch(data, fmt, EX + "s", LABEL)
    except StreamError as err:
        return [], str(err)
    assert [e.seq for e in events] == list(range(len(events)))
    return [fields(e, origin=False, seq=False) for e in events], None


BODIES = sorted(p for p in REPLAY.iterdir() if p.suffix in FORMATS)


@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.name)
def test_a_body_is_read_as_the_oracle_reads_it(path: Path) -> None:
    name, fmt = FORMATS[path.suffix]
    assert body_native(path.read_bytes(), name) == body_oracle(path.read_bytes(), fmt)


@pytest.mark.parametrize("data", [b"", b"\xff\xfe<a> <b> <c> .\n", b"<http://ex.org/a> <http://ex.org/b> .\n",
                                  b'<http://ex.org/a> <http://ex.org/b> "x" <http://ex.org/g> .\n'])
def test_odd_bodies_fail_or_pass_as_the_oracle(data: bytes) -> None:
    for name, fmt in FORMATS.values():
        assert body_native(data, name) == body_oracle(data, fmt)


STAMPS = st.sampled_from(['"1"', '"2.50"^^<http://www.w3.org/2001/XMLSchema#decimal>', '"x"',
                          '"2024-01-01T00:00:01.100Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>',
                          '"1e1"^^<http://www.w3.org/2001/XMLSchema#double>', "<http://ex.org/t>"])
LINES = st.lists(st.one_of(
    st.builds(lambda g, v: f'<http://ex.org/s> <http://ex.org/v> "{v}" <http://ex.org/g{g}> .',
              st.integers(0, 3), st.integers(0, 2)),
    st.builds(lambda g, t: f"<http://ex.org/g{g}> <http://www.w3.org/ns/prov#generatedAtTime> {t} .",
              st.integers(0, 4), STAMPS),
    st.just("<http://ex.org/s> <http://ex.org/v> ."),
), max_size=10)


@settings(max_examples=int(os.environ.get("SPASEQ_DIFF_EXAMPLES", "100")), deadline=None)
@given(lines=LINES)
def test_generated_bodies_are_read_as_the_oracle_reads_them(lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines).encode()
    got, error = body_native(data, "nquads")
    want, want_error = body_oracle(data, RdfFormat.N_QUADS)
    assert error == want_error
    # times compared as values: the native reader keeps no lexical form ("2.50" is 2.5)
    assert got == want
