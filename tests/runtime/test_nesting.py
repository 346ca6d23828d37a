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
