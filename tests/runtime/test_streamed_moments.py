"""A moment of many matches streamed (decision 49, the core's ``query/moment.rs``): past a
chunk of matches at one event, the runs still to be offered it are offered it a chunk at a
time in the match order, each chunk released before the next is made. The matches and their
order are the reference evaluator's whatever the chunk (ties included), the moment is streamed
when it should be (``work``'s ``moments_streamed``) and not when a chunk would call the host,
and matches are written while most of the moment is still to be made."""

from __future__ import annotations

import random

import pyoxigraph
import pytest

from spaseq.engine import reference
from spaseq.engine.api import Engine
from spaseq.engine.language.query import parse_query
from tests.util import EX, checked_run, events, match_identity, query_text


def run(text: str, evs: list, chunk: int | None) -> tuple[list, dict[str, int]]:
    """The engine's matches of ``text`` over ``evs`` (past ``chunk`` matches at one event, the
    rest of the moment streamed, about ``chunk`` matches at a time), checked against the
    reference evaluator's (content and order), and the work it counted."""
    engine = Engine()
    engine.MOMENT_CHUNK = chunk
    got, handle = checked_run(engine, text, evs)
    return got, handle.runtime.work()


DEFINES = ("DEFINE GPM A ON U1 { ?a :price ?p1 } "
           "DEFINE GPM B ON U1 { ?b :price ?p2 FILTER(?p2 > ?p1) } "
           "DEFINE GPM C ON U1 { ?c :price ?p3 FILTER(?p3 < ?p2) }")


def stream(seed: int, n: int) -> list:
    """n random trades over a few timestamps: some events with two prices (two solutions, so
    runs whose matches tie but for their bindings), several events at one timestamp."""
    rng = random.Random(seed)
    specs = []
    t = 0
    for i in range(n):
        t += rng.choice([0, 1, 1, 2])
        prices = rng.sample(range(1, 30), rng.choice([1, 1, 1, 2]))
        body = " ; ".join(f":price {p}" for p in prices)
        specs.append(("u1", t, f":e{i} {body} ."))
    return events(*specs)


SHAPES = [
    ("A : B", "1000000 DAYS"),       # every B completes the runs of the A's below it
    ("A : B : C", "1000000 DAYS"),
    ("A ; B : C", "1000000 DAYS"),
    ("A : B", "5 SECONDS"),
    ("A : B? : C", "1000000 DAYS"),  # the runs that skip B? wait for C with the others
    ("A : B+", "4 SECONDS"),         # the last step loops: never streamed
    ("A , B : C", "1000000 DAYS"),
]


@pytest.mark.parametrize("chunk", [1, 2, 5])
@pytest.mark.parametrize(("seq", "within"), SHAPES)
def test_streamed_moments_release_the_reference_matches_in_order(seq: str, within: str,
                                                                  chunk: int) -> None:
    text = query_text(seq, DEFINES, within=within, streams=("u1",))
    streamed = 0
    for seed in range(3):
        _, work = run(text, stream(seed, 24), chunk)
        streamed += work["moments_streamed"]
    if seq in ("A : B", "A : B : C", "A ; B : C", "A , B : C"):
        assert streamed > 0
    if seq == "A : B+":
        assert streamed == 0


def test_the_default_chunk_leaves_a_moment_of_fewer_matches_whole() -> None:
    text = query_text("A : B", DEFINES, within="1000000 DAYS", streams=("u1",))
    _, work = run(text, stream(1, 24), None)
    assert work["moments_streamed"] == 0


CHAIN = ("DEFINE GPM A ON U1 { ?a :start ?x } "
         "DEFINE GPM B ON U1 { ?b :stop ?y FILTER(?y > ?x) }")


@pytest.mark.parametrize(("n", "streamed"), [(300, 0), (4096, 0), (4098, 1)])
def test_by_default_a_moment_past_4096_matches_is_streamed(n: int, streamed: int) -> None:
    specs = [("u1", i, f":a{i} :start {i % 7} .") for i in range(n)] + [("u1", n, ":b :stop 9 .")]
    text = query_text("A : B", CHAIN, within="1000000 DAYS", streams=("u1",))
    got, work = run(text, events(*specs), None)
    assert len(got) == n and work["moments_streamed"] == streamed


def test_a_moment_is_written_while_most_of_it_is_still_to_be_made() -> None:
    n, chunk = 600, 16
    specs = [("u1", i, f":a{i} :start 1 .") for i in range(n)] + [("u1", n, ":b :stop 2 .")]
    text = query_text("A : B", CHAIN, within="1000000 DAYS", streams=("u1",))
    engine = Engine()
    engine.MOMENT_CHUNK = chunk
    seen: list[tuple[int, int]] = []  # (matches written so far, the moment's runs still to offer)

    def on_match(_m) -> None:
        seen.append((len(seen) + 1, handle.runtime.footprint()["moment_runs"]))

    handle = engine.register(text, on_match)
    for e in events(*specs):
        engine.push_event(e)
    engine.close()
    assert len(seen) == n
    # each match written before the runs after the next chunk were offered the event
    assert all(left >= n - written - chunk for written, left in seen)
    assert seen[0][1] == n - chunk and seen[-1][1] == 0
    assert handle.runtime.work()["moments_streamed"] == 1
    assert handle.runtime.footprint()["moment_runs"] == 0


def test_a_snapshot_between_pushes_holds_no_half_made_moment() -> None:
    n = 50
    specs = [("u1", i, f":a{i} :price 1 .") for i in range(n)] + [("u1", n, ":b :price 2 .")]
    specs += [("u1", n + 1, ":c :price 3 .")]
    text = query_text("A : B", DEFINES, within="1000000 DAYS", streams=("u1",))
    evs = events(*specs)
    engine = Engine()
    engine.MOMENT_CHUNK = 4
    handle = engine.register(text)
    for e in evs[:n + 1]:
        engine.push_event(e)
    data = engine.snapshot()
    assert len(list(handle.matches())) == n  # the moment's matches all released before it
    restored = Engine.restore(data)
    for e in evs[n + 1:]:
        restored.push_event(e)
    restored.close()
    later = list(restored.handles[0].matches())
    expected = reference.evaluate(parse_query(text), evs)
    assert [match_identity(m) for m in later] == [match_identity(m) for m in expected[n:]]


def test_a_last_step_reading_the_knowledge_base_is_not_streamed() -> None:
    """Its chunks would ask the host for KB rows while being taken, where a failure could not
    be reported: the moment is released whole, the reference's matches in order."""
    store = pyoxigraph.Store()
    store.add(pyoxigraph.Quad(pyoxigraph.NamedNode(EX + "b"), pyoxigraph.NamedNode(EX + "owner"),
                              pyoxigraph.Literal("alice"), pyoxigraph.NamedNode(EX + "kb")))
    defines = ("DEFINE GPM A ON U1 { ?a :start ?x } "
               "DEFINE GPM B ON U1 { ?b :stop ?y GRAPH :kb { ?b :owner ?o } }")
    text = query_text("A : B", defines, within="1000000 DAYS", streams=("u1",))
    evs = events(*[("u1", i, f":a{i} :start {i} .") for i in range(80)], ("u1", 80, ":b :stop 0 ."))
    engine = Engine(kb=store)
    engine.MOMENT_CHUNK = 2
    got, handle = checked_run(engine, text, evs, store)
    assert len(got) == 80 and handle.runtime.work()["moments_streamed"] == 0


def test_matches_a_moment_cannot_tell_apart_keep_the_order_they_were_offered_in() -> None:
    """Two atoms of a disjunction binding the same values on one event: their runs' matches
    differ in the atom alone, so only the order the runs were made in orders them."""
    defines = ("DEFINE GPM A ON U1 { ?a :start ?x } DEFINE GPM A2 ON U1 { ?a :start ?x } "
               "DEFINE GPM B ON U1 { ?b :stop ?y }")
    text = query_text("(A | A2) : B", defines, within="1000000 DAYS", streams=("u1",))
    evs = events(*[("u1", i // 3, f":a{i} :start {i % 4} .") for i in range(90)], ("u1", 40, ":b :stop 0 ."))
    for chunk in (1, 3, None):
        got, _ = run(text, evs, chunk)
        assert len(got) == 180
