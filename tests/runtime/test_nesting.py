"""Conjunctions and disjunctions nested in each other: each conjunction, at any depth, combines
results of different events at one timestamp (regression: a conjunction inside a disjunction
used to combine results of one event only, and never matched across events)."""

from __future__ import annotations

import pytest

from spaseq.engine import api, reference
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.language.query import parse_query
from tests.util import events, match_bag, query_text

GPMS = ("DEFINE GPM A ON U1 { ?a :p ?x } DEFINE GPM B ON U2 { ?b :q ?y } "
        "DEFINE GPM C ON U1 { ?c :r ?z } DEFINE GPM D ON U2 { ?d :s ?w } DEFINE GPM E ON U1 { ?e :t ?v }")
EVENTS = events(("u1", 0, ":e0 :t 0 ."), ("u1", 1, ":e1 :p 1 ."), ("u2", 1, ":e2 :q 2 ."),
                ("u1", 2, ":e3 :r 1 ."), ("u2", 2, ":e4 :s 2 ."), ("u1", 3, ":e5 :p 1 ."),
                ("u2", 3, ":e6 :q 2 ."), ("u1", 4, ":e7 :t 1 ."))
BOTH = [EngineOptions(), EngineOptions(lazy_conjunction=True)]


def _taken(matches) -> list[list[tuple[str, int]]]:
    return sorted([(t.atom, t.event.seq) for t in m.taken] for m in matches)


@pytest.mark.parametrize("opts", BOTH, ids=["eager", "lazy-conjunction"])
def test_conjunction_in_a_disjunction_matches_across_events(opts: EngineOptions) -> None:
    """The issue's example: A and B match two events at one timestamp."""
    q = parse_query(query_text("((A & B) | C)", GPMS, within="60 SECONDS"))
    evs = events(("u1", 1, ":e1 :p 1 ."), ("u2", 1, ":e2 :q 2 ."))
    assert _taken(api.evaluate(q, evs, None, opts)) == [[("A", 0), ("B", 1)]]
    assert _taken(reference.evaluate(q, evs)) == [[("A", 0), ("B", 1)]]


@pytest.mark.parametrize("opts", BOTH, ids=["eager", "lazy-conjunction"])
@pytest.mark.parametrize("seq, expected", [
    ("((A & B) | C)", [[("A", 1), ("B", 2)], [("A", 5), ("B", 6)], [("C", 3)]]),
    ("E ; ((A & B) | C)", [[("E", 0), ("A", 1), ("B", 2)]]),
    ("E : ((A & B) | C)", [[("E", 0), ("A", 1), ("B", 2)], [("E", 0), ("A", 5), ("B", 6)],
                           [("E", 0), ("C", 3)]]),
    ("E ; ((A | C) & (B | D))", [[("E", 0), ("A", 1), ("B", 2)]]),
    ("E , ((A & B) | (C & D))", [[("E", 0), ("A", 1), ("B", 2)]]),
    ("E : ((A & B) | (C & D))", [[("E", 0), ("A", 1), ("B", 2)], [("E", 0), ("A", 5), ("B", 6)],
                                 [("E", 0), ("C", 3), ("D", 4)]]),
])
def test_nested_shapes_agree_with_the_reference(seq: str, expected, opts: EngineOptions) -> None:
    q = parse_query(query_text(seq, GPMS, within="60 SECONDS"))
    got = api.evaluate(q, EVENTS, None, opts)
    assert _taken(got) == expected
    assert match_bag(got) == match_bag(reference.evaluate(q, EVENTS))


@pytest.mark.parametrize("opts", BOTH, ids=["eager", "lazy-conjunction"])
def test_a_deferred_conjunction_completes_a_trailing_negation_its_instant_closed(opts: EngineOptions) -> None:
    """Found by the 10^4-example differential run (issue 24): under an event-count window,
    later events of the conjunction's own timestamp close the window while lazy conjunction
    still holds its operands; the input cut short (no close, only a flush), the run it
    extends must complete its trailing negation when the deferred work runs, as eager
    evaluation did at the closing event."""
    q = parse_query(query_text(
        "(A & B) , N!", "DEFINE GPM A ON U1 { ?s :key ?k ; :val ?v } DEFINE GPM B ON U1 { ?t :key ?k ; :val ?w } "
        "DEFINE GPM N ON U1 { ?n :key ?k ; :val ?x }", within="3 EVENTS TUMBLING", streams=("u1",)))
    evs = events(("u1", 0, ":e0 :val 0 ."), ("u1", 0, ":e1 :val 0 ."), ("u1", 0, ":e2 :key :K0 ; :val 0 ."),
                 ("u1", 0, ":e3 :val 0 ."))
    expected = match_bag(reference.evaluate(q, evs, end_of_input=False))
    assert len(expected) == 1
    assert match_bag(api.evaluate(q, evs, None, opts, end_of_input=False)) == expected
