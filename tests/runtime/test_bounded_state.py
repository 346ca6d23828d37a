"""Memory stays bounded by the window (issue: no state outlives the runs that need it): after
a long stream, what the engine holds is what the last window needs, not what the stream had."""

from __future__ import annotations

import pyoxigraph
import pytest

from spaseq.engine.api import Engine
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.events import Event
from tests.util import EX, query_text

VAL = pyoxigraph.NamedNode(EX + "val")
KEY = pyoxigraph.NamedNode(EX + "key")

DEFINES = (
    "DEFINE GPM A ON U1 { ?a :key ?k ; :val ?v1 } "
    "DEFINE GPM B ON U1 { ?b :key ?k ; :val ?v2 FILTER(?v2 > ?v1) } "
    "DEFINE GPM C ON U1 { ?c :key ?k ; :val ?v3 FILTER(?v3 < ?v2) } "
    "DEFINE GPM D ON U1 { ?d :key ?k ; :val ?v4 FILTER(?v4 != ?v1) } "
    "DEFINE GPM N ON U1 { ?n :key ?k ; :val 99 }"
)


def stream(n: int):
    """A reading a second, four in a row on each of four keys, values cycling so that every
    pattern (strict contiguity included) keeps matching."""
    for i in range(n):
        s = pyoxigraph.NamedNode(f"{EX}r{i}")
        triples = (pyoxigraph.Triple(s, KEY, pyoxigraph.NamedNode(f"{EX}K{i // 4 % 4}")),
                   pyoxigraph.Triple(s, VAL, pyoxigraph.Literal(str((i * 7) % 11),
                                     datatype=pyoxigraph.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))))
        yield Event(EX + "u1", float(i), triples, i)


def total(footprint: dict[str, int]) -> int:
    return sum(footprint.values())


@pytest.mark.parametrize(("seq", "lazy"), [
    ("A ; B ; C", False), ("A : B : C", False), ("A : B : C", True), ("A , B+ , C", False),
    ("A ; B ; N!", False), ("A ; B? ; C", False), ("A ; (B & D)", False), ("A ; (B | C)", False),
])
def test_state_after_a_long_stream_is_the_windows(seq: str, lazy: bool) -> None:
    engine = Engine(options=EngineOptions(lazy_chain=lazy))
    handle = engine.register(query_text(seq, DEFINES, within="20 SECONDS", streams=("u1",)), keep=False)
    sizes = {}
    for e in stream(3000):
        engine.push_event(e)
        if e.seq + 1 in (500, 3000):
            sizes[e.seq + 1] = handle.runtime.footprint()
    assert handle.stats["matches"] > 100  # the stream keeps the automaton busy
    early, late = total(sizes[500]), total(sizes[3000])
    # six times the stream, the same window: the state does not grow with the stream
    assert late <= 1.25 * early + 20, (sizes[500], sizes[3000])
    # and what is held is of the window's order: 20 events, a few runs per event and key
    assert sizes[3000]["waiting_runs"] <= 20 * 20, sizes[3000]
    assert len(engine.graphs._live) <= 2  # event graphs given to pyoxigraph are released
    engine.close()
    assert total(handle.runtime.footprint()) == 0


def test_a_replay_batch_stops_once_many_matches_wait(tmp_path) -> None:
    """Skip-till-any over a wide window matches many times per event: ``run_replay`` hands
    the matches over once 2^14 wait instead of holding a whole batch's (its peak memory
    would follow the worst batch of the stream), and finds the same matches in the same
    order as with small batches."""
    prov = "http://www.w3.org/ns/prov#generatedAtTime"
    path = tmp_path / "s.nq"
    path.write_text("".join(f'<{EX}g{i}> <{prov}> "{i}" .\n<{EX}x{i}> <{EX}v> "{i}" <{EX}g{i}> .\n'
                            for i in range(1200)))
    text = (f"PREFIX : <{EX}>\nSELECT ?a ?b WITHIN 40 SECONDS FROM STREAM S <{EX}s>\n"
            "WHERE { SEQ(A: B) DEFINE GPM A ON S { ?x :v ?a } DEFINE GPM B ON S { ?y :v ?b } }")

    def run(batch: int) -> tuple[list, list[tuple[int, int]]]:
        engine = Engine()
        handle = engine.register(text, keep=False)
        found: list = []
        handle.callback = lambda m: found.append((m.start, m.time, m.bindings))
        calls: list[tuple[int, int]] = []
        assert engine.run_replay([(EX + "s", str(path))], batch=batch,
                                 progress=lambda events, clock: calls.append((events, len(found)))) is None
        return found, calls

    found, calls = run(4096)  # every event in one batch, but for the matches waiting
    small, _ = run(64)
    assert found == small and len(found) > 40000
    waited = [b[1] - a[1] for a, b in zip([(0, 0), *calls[:-1]], calls, strict=True)]
    assert len(calls) > 2 and max(waited) <= 2**14 + 40  # at most one event's matches over
    assert calls[-1][0] == 1200
