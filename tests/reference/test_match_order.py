"""Which match represents a DISTINCT row: the first in completion order, ties broken by
``matches.match_order`` (start, event positions, then the bindings' N-Triples spelling), the
same in the engine and the reference evaluator (issue 11, defect 3)."""

from __future__ import annotations

import pytest

from spaseq.engine import api, reference
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import project
from tests.util import events, query_text

DEFS = ("DEFINE GPM A ON U1 { ?a :p ?x } DEFINE GPM B ON U1 { ?b :q ?y } "
        "DEFINE GPM C ON U1 { ?c :r ?z } DEFINE GPM D ON U1 { ?d :s ?w }")


def _rows(matches, variables):
    return [(sorted((k, str(v)) for k, v in r.bindings.items()),
             [(t.atom, t.event.seq) for t in r.match.taken])
            for r in project(matches, variables, distinct=True)]


@pytest.mark.parametrize("opts", [EngineOptions(), EngineOptions(partition_runs=False, compiled_gpm=False)])
def test_distinct_over_kleene_keeps_the_reference_representative(opts: EngineOptions) -> None:
    q = parse_query(query_text("A ; B+ : D", DEFS, select="DISTINCT ?a ?d", within="60 SECONDS",
                               streams=("u1",)))
    evs = events(("u1", 0, ":e0 :p 1 ."), ("u1", 1, ":e1 :q 1 ."), ("u1", 2, ":e2 :q 2 ."),
                 ("u1", 3, ":e3 :s 1 ."))
    expected = [([("a", "<http://ex.org/e0>"), ("d", "<http://ex.org/e3>")],
                  [("A", 0), ("B", 1), ("B", 2), ("D", 3)])]
    assert _rows(reference.evaluate(q, evs), ["a", "d"]) == expected
    assert _rows(api.evaluate(q, evs, None, opts), ["a", "d"]) == expected


@pytest.mark.parametrize("opts", [EngineOptions(), EngineOptions(index_streams=False, range_index=False)])
def test_matches_completed_by_one_event_come_in_match_order(opts: EngineOptions) -> None:
    """SEQ(A , B? , C+ ; D): every match completes on D's event; they are ordered by start,
    then by their events' positions."""
    q = parse_query(query_text("A , B? , C+ ; D", DEFS, within="60 SECONDS", streams=("u1",)))
    evs = events(("u1", 0, ":e0 :p 1 ."), ("u1", 1, ":e1 :q 1 ."), ("u1", 2, ":e2 :r 1 ."),
                 ("u1", 3, ":e3 :r 2 ."), ("u1", 4, ":e4 :s 1 ."))
    want = [[("A", 0), ("B", 1), ("C", 2), ("C", 3), ("D", 4)], [("A", 0), ("B", 1), ("C", 2), ("D", 4)]]
    for matches in (reference.evaluate(q, evs), api.evaluate(q, evs, None, opts)):
        assert [[(t.atom, t.event.seq) for t in m.taken] for m in matches] == want


def test_the_tie_break_is_the_bindings_spelling() -> None:
    """Two matches with the same events (two solutions of one event) differ only by
    bindings: the N-Triples spelling orders them, in both evaluators."""
    q = parse_query(query_text("A", "DEFINE GPM A ON U1 { ?a :p ?x }", streams=("u1",)))
    evs = events(("u1", 0, ':e0 :p "b", "a", 10, 9 .'))
    want = ['"10"^^<http://www.w3.org/2001/XMLSchema#integer>',
            '"9"^^<http://www.w3.org/2001/XMLSchema#integer>', '"a"', '"b"']  # as strings: "1 < "9 < "a
    for matches in (reference.evaluate(q, evs), api.evaluate(q, evs)):
        assert [str(dict(m.bindings)["x"]) for m in matches] == want
