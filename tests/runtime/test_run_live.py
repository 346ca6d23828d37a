"""``Engine.run_live``: live sources read natively and fed to the native runtime as they
complete give the matches the same events give as a replay file; late events raise or are
dropped and counted; the same native stream read as Python events and pushed one by one
(``live_events`` below) gives them too; a source's error comes located after the others'
events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spaseq.engine._native import LiveStream
from spaseq.engine.api import Engine, LateEventError
from spaseq.engine.errors import StreamError
from spaseq.engine.events import Event
from spaseq.engine.io import native_events
from spaseq.engine.io.native_events import stream_error

S = "http://ex.org/s"
QUERY = """PREFIX : <http://ex.org/>
SELECT ?a ?b FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A ; B) DEFINE GPM A ON S { ?x :val ?a } DEFINE GPM B ON S { ?y :val ?b FILTER(?b > ?a) } }
"""
PROV = "<http://www.w3.org/ns/prov#generatedAtTime>"


def live_events(sources: list[tuple[str, str, str]], time_predicate: str) -> Iterator[Event | StreamError]:
    """The events of live ``sources`` as Python ``Event``s, merged in arrival order, then the
    first source's error: what ``Engine.run`` pushes one by one, against ``run_live``."""
    try:
        for native in LiveStream(sources, time_predicate):
            yield from native_events._events(native, lambda item: item[6])
    except ValueError as exc:
        yield stream_error(exc)
INT = "<http://www.w3.org/2001/XMLSchema#integer>"


def nquads(events: list[tuple[int, int]]) -> str:
    """Events (time, value), each graph's quad then its timestamp."""
    return "".join(f'<http://ex.org/e{i}> <http://ex.org/val> "{v}"^^{INT} <http://ex.org/g{i}> .\n'
                   f'<http://ex.org/g{i}> {PROV} "{t}"^^{INT} .\n' for i, (t, v) in enumerate(events))


def rows(engine: Engine) -> list[tuple[int, str, str]]:
    """The query's rows so far: (time, ?a, ?b)."""
    (handle,) = engine.handles
    return [(int(r.match.time), r.bindings["a"].value, r.bindings["b"].value) for r in handle.rows()]


def test_live_matches_are_the_replay_files(tmp_path: Path) -> None:
    path = tmp_path / "events.nq"
    path.write_text(nquads([(1, 1), (2, 5), (3, 0), (4, 9), (5, 3), (6, 7)]))
    live, replay = Engine(), Engine()
    live.register(QUERY)
    replay.register(QUERY)
    assert live.run_live([(S, str(path), "nquads")]) is None
    assert replay.run_replay([(S, str(path))]) is None
    assert rows(live) == rows(replay) != []
    assert live.closed


def test_a_late_event_raises_or_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "late.nq"
    path.write_text(nquads([(1, 1), (2, 5), (1, 9), (3, 7)]))
    engine = Engine(late="error")
    engine.register(QUERY)
    with pytest.raises(LateEventError, match=r"event at 1 on <http://ex.org/s> is earlier than 2, "
                                             r"already processed on this query's streams \(late event\)$") as refused:
        engine.run_live([(S, str(path), "nquads")])
    assert str(refused.value.location) == f"{path}:5"  # where the late event's graph starts
    assert rows(engine) == [(2, "1", "5")]  # the match before the late event was released
    dropping = Engine()  # late="drop", the default
    handle = dropping.register(QUERY)
    assert dropping.run_live([(S, str(path), "nquads")]) is None
    assert dropping.dropped_late == 1 and handle.late == 1
    pushed = Engine(drop_late=True)  # the same events pushed one by one
    pushed.register(QUERY)
    assert pushed.run(live_events([(S, str(path), "nquads")], PROV[1:-1])) is None
    assert pushed.dropped_late == 1
    assert rows(dropping) == rows(pushed) == [(2, "1", "5"), (3, "5", "7")]


def test_a_source_error_is_returned_located_after_the_matches(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.nq", tmp_path / "bad.nq"
    good.write_text(nquads([(1, 1), (2, 5)]))
    bad.write_text("<http://ex.org/x> oops .\n")
    engine = Engine()
    engine.register(QUERY)
    error = engine.run_live([(S, str(good), "nquads"), (S, str(bad), "nquads")])
    assert isinstance(error, StreamError)
    assert str(error) == f"{bad}:1:19: N-Quads syntax error: The predicate of a triple must be an IRI"
    assert rows(engine) == [(2, "1", "5")]


def test_composed_queries_take_the_native_events_as_python_events(tmp_path: Path) -> None:
    path = tmp_path / "events.trig"
    path.write_text("@prefix : <http://ex.org/> .\n:g1 { :e :val 1 }\n:g1 "
                    '<http://www.w3.org/ns/prov#generatedAtTime> "2024-05-01T10:00:00Z"'
                    "^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n_:g2 { :e :val 2 . :e :val 2 }\n"
                    "_:g2 <http://www.w3.org/ns/prov#generatedAtTime> 7 .\n")
    events = list(live_events([(S, str(path), "trig")], "http://www.w3.org/ns/prov#generatedAtTime"))
    assert all(isinstance(e, Event) for e in events)
    first, second = events
    assert (first.seq, first.dated, str(first.name), first.origin) == (1, True, "<http://ex.org/g1>", f"{path}:2")
    assert (second.seq, second.dated, str(second.name), second.time) == (2, False, "_:g2", 7)
    assert [str(t.object) for t in second.triples] == ['"2"^^<http://www.w3.org/2001/XMLSchema#integer>']
    bad = tmp_path / "bad.trig"
    bad.write_text(":g1 { :e :val 1 }\n")
    (error,) = live_events([(S, str(bad), "trig")], "http://www.w3.org/ns/prov#generatedAtTime")
    assert isinstance(error, StreamError) and error.location is not None
    assert (error.location.file, error.location.line, error.location.column) == (str(bad), 1, 1)
    assert error.message.startswith("TriG syntax error: ")
