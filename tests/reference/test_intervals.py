"""Events that last (docs/decisions.md 71, the seed ``cera-xchangeeq-two-semantics.txt``),
evaluated by the reference evaluator: an event occurs over ``[start, time]``; "after" is
CERA's ``before`` (``end(a) < begin(b)``), a gap between a prefix and an event holds the
events lying whole inside it, a match spans its events' hull and ``WITHIN`` bounds the hull.
Every row is written out by hand; point events keep the answers of SEMANTICS.md (the
differential suites run them)."""

from __future__ import annotations

from decimal import Decimal

import pyoxigraph
import pytest
from hypothesis import given, settings

from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.reference.evaluator import evaluate
from tests.properties.test_differential import EXAMPLES, kb, queries
from tests.properties.test_differential import events as point_events
from tests.util import EX, PREFIXES, match_identity, query_text

DEFINES = ("DEFINE GPM A ON U1 { ?a :kind :a } DEFINE GPM B ON U1 { ?b :kind :b } "
           "DEFINE GPM C ON U1 { ?c :kind :c } DEFINE GPM X ON U1 { ?x :kind :x }")


def stream(*specs: str) -> list[Event]:
    """Events ``a1@1-3`` (``:a1 :kind :a`` over [1, 3]) or ``a1@2`` (a point), in the order
    given (their arrival order)."""
    out = []
    for seq, spec in enumerate(specs):
        name, times = spec.split("@")
        start, _, end = times.partition("-")
        triples = tuple(q.triple for q in pyoxigraph.parse(f"{PREFIXES}:{name} :kind :{name[0]} .",
                                                            format=pyoxigraph.RdfFormat.TURTLE))
        out.append(Event(EX + "u1", Decimal(end or start), triples, seq, pyoxigraph.NamedNode(EX + name),
                         start=Decimal(start)))
    return out


def matches(seq: str, evs: list[Event], within: str = "") -> list[tuple[str, str, str]]:
    """Each match as (its events' names, start, time), in completion order."""
    q = parse_query(query_text(seq, DEFINES, within=within, streams=("u1",)))
    return [(" ".join(t.event.name.value.removeprefix(EX) for t in m.taken), str(m.start), str(m.time))
            for m in evaluate(q, evs)]


CASES = [
    # after is end(a) < begin(b): b1 begins before a1 ends
    ("A ; B", "", ["a1@1-3", "b1@2-5", "b2@4-6"], [("a1 b2", "1", "6")]),
    ("A : B", "", ["a1@1-3", "b2@5-6", "b1@4-10"], [("a1 b2", "1", "6"), ("a1 b1", "1", "10")]),
    # ';': a result with no other result lying whole before it; b3 has b2 in its gap
    ("A ; B", "", ["a1@1-3", "b2@5-6", "b3@7-8", "b1@4-10"], [("a1 b2", "1", "6"), ("a1 b1", "1", "10")]),
    # ',': nothing of the streamset lying whole in the gap (3, 4); c1 begins at 4
    ("A , B", "", ["a1@1-3", "c1@4-5", "b1@4-8"], [("a1 b1", "1", "8")]),
    ("A , B", "", ["a1@1-3", "c1@3.5-3.8", "b1@4-8"], []),
    # an event overlapping the prefix is not between: ',' holds
    ("A , B", "", ["a1@1-3", "c1@2-5", "b1@4-8"], [("a1 b1", "1", "8")]),
    # WITHIN bounds the hull: [0, 6]
    ("A ; B", "5 SECONDS", ["a1@0-3", "b1@4-6"], []),
    ("A ; B", "6 SECONDS", ["a1@0-3", "b1@4-6"], [("a1 b1", "0", "6")]),
    # absences: an X lying whole in the gap
    ("A ; X! ; B", "", ["a1@1-2", "x1@1.5-3", "b1@5-6"], [("a1 b1", "1", "6")]),
    ("A ; X! ; B", "", ["a1@1-2", "x1@3-4", "b1@5-6"], []),
    ("A ; X! ; B", "", ["a1@1-2", "x1@3-5.5", "b1@5-6"], [("a1 b1", "1", "6")]),
    # trailing: the rest of the window is (1, 5]
    ("A ; X!", "5 SECONDS", ["a1@0-1", "x1@2-6"], [("a1", "0", "1")]),
    ("A ; X!", "5 SECONDS", ["a1@0-1", "x1@2-4"], []),
    # head: [time - ω, start) = [1, 4)
    ("X! ; A", "5 SECONDS", ["x1@0-2", "a1@4-6"], [("a1", "4", "6")]),
    ("X! ; A", "5 SECONDS", ["x1@1.5-3", "a1@4-6"], []),
    # '&': one end
    ("(A & B)", "", ["b1@3-5", "a1@1-5"], [("a1 b1", "1", "5")]),
    ("(A & B)", "", ["a1@1-4", "b1@3-5"], []),
    # Kleene+: each iteration after the one before (',' between iterations); b1 and b2
    # overlap, so each is a first iteration ';' allows, and only b1 is before b3
    ("A ; B+ ; C", "", ["a1@0-1", "b1@2-3", "b2@2.5-4", "b3@4-5", "c1@6-7"],
     [("a1 b1 b3 c1", "0", "7"), ("a1 b1 c1", "0", "7"), ("a1 b2 c1", "0", "7")]),
]


@pytest.mark.parametrize(("seq", "within", "evs", "expected"), CASES)
def test_interval_events(seq: str, within: str, evs: list[str], expected: list) -> None:
    assert matches(seq, stream(*evs), within) == expected


def test_an_event_cannot_end_before_it_starts() -> None:
    with pytest.raises(ValueError, match="cannot start"):
        Event(EX + "u1", 1, (), start=2)


def test_a_query_planned_for_point_events_refuses_events_that_last() -> None:
    """Never a wrong answer: the native engine takes events that last for a query planned with
    ``intervals`` (decision 71) and refuses them, saying so, for one planned for points."""
    from spaseq.engine.api import evaluate as engine_evaluate
    from spaseq.engine.compile.plan import EngineOptions
    from spaseq.engine.errors import UsageError

    q = parse_query(query_text("A ; B", DEFINES, streams=("u1",)))
    assert engine_evaluate(q, stream("a1@1", "b1@2")) != []
    with pytest.raises(UsageError, match="lasts from 1 to 3, and query <urn:spaseq:query:1> was planned for point events"):
        engine_evaluate(q, stream("a1@1-3", "b1@4-5"))
    assert len(engine_evaluate(q, stream("a1@1-3", "b1@4-5"), options=EngineOptions(intervals=True))) == 1


@pytest.mark.parametrize(("seq", "within", "evs", "expected"), CASES)
def test_the_native_engine_finds_each_row(seq: str, within: str, evs: list[str], expected: list) -> None:
    """Each row of the table, by the native engine planned for events that last."""
    from spaseq.engine.api import evaluate as engine_evaluate
    from spaseq.engine.compile.plan import EngineOptions

    q = parse_query(query_text(seq, DEFINES, within=within, streams=("u1",)))
    got = engine_evaluate(q, stream(*evs), options=EngineOptions(intervals=True))
    assert [(" ".join(t.event.name.value.removeprefix(EX) for t in m.taken), str(m.start), str(m.time))
            for m in got] == expected


@settings(max_examples=EXAMPLES, deadline=None)
@given(queries(), point_events())
def test_on_point_events_the_interval_rules_give_the_point_rules_answers(text, evs) -> None:
    """Decision 71: the interval rules (gaps, containment, hulls) reduce to sections 1-16 on
    point events. The evaluator takes the point rules' shorter path for points; forced onto
    the interval path, it finds the same matches in the same order."""
    from spaseq.engine.reference.evaluator import ReferenceEvaluator

    q = parse_query(text)
    points = ReferenceEvaluator(q, evs, kb())
    forced = ReferenceEvaluator(q, evs, kb())
    forced._intervals = True
    assert [match_identity(m) for m in forced.matches()] == [match_identity(m) for m in points.matches()], text
