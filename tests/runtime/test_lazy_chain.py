"""The lazy chain (planned by engine/compile/planner.py, run natively; decision 49): which
prefixes it takes, and on a skewed stream the same matches as the eager automaton and the
reference evaluator with far fewer runs."""

from __future__ import annotations

import pytest

from spaseq.engine import api, reference
from spaseq.engine.api import Engine
from spaseq.engine.compile.explain import plan_lines
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.query import parse_query
from tests.util import events, query_text
from tests.util import match_bag as bag

PLAIN = "DEFINE GPM A ON U1 { ?a :val ?v1 } DEFINE GPM B ON U1 { ?b :val ?v2 FILTER(?v2 > ?v1) } " \
        "DEFINE GPM C ON U1 { ?c :big ?v3 FILTER(?v3 > ?v2) }"


def trigger(seq: str, within: str = "10 SECONDS", defines: str = PLAIN) -> int:
    engine = Engine(options=EngineOptions(lazy_chain=True))
    return engine.register(query_text(seq, defines, within=within, streams=("u1",))).plan.lazy_chain


@pytest.mark.parametrize(("seq", "within", "expected"), [
    ("A : B : C", "10 SECONDS", 2),     # the whole sequence: triggered by C
    ("A : B ; C", "10 SECONDS", 1),     # the ':' prefix only
    ("A : B : C", "", 2),               # no window
    ("A ; B : C", "10 SECONDS", 0),     # skip-till-next first: eager
    ("A , B", "10 SECONDS", 0),
    ("A : B+", "10 SECONDS", 0),        # Kleene+ is not a plain atom
    ("A : B : C", "5 EVENTS", 0),       # count windows: eager
    ("A : B : C", "10 SECONDS TUMBLING", 0),
])
def test_prefix_the_lazy_chain_takes(seq: str, within: str, expected: int) -> None:
    assert trigger(seq, within) == expected


def test_graph_clauses_and_run_functions_stay_eager() -> None:
    kb = "DEFINE GPM A ON U1 { ?a :val ?v1 GRAPH :kb { ?a :owner ?o } } DEFINE GPM B ON U1 { ?b :val ?v2 }"
    assert trigger("A : B", defines=kb) == 0
    run = ("DEFINE GPM A ON U1 { ?a :val ?v1 } "
           "DEFINE GPM B ON U1 { ?b :val ?v2 FILTER(<https://w3id.org/spaseq#eventTime>() > 0) }")
    assert trigger("A : B", defines=run) == 0


def skewed() -> list:
    """Every second a reading; every tenth second also a rare 'big' reading."""
    specs = []
    for t in range(60):
        specs.append(("u1", t, f":r{t} :val {t % 7} ."))
        if t % 10 == 9:
            specs.append(("u1", t, f":x{t} :big {t % 5 + 4} ."))
    return events(*specs)


def test_skewed_stream_same_matches_fewer_runs() -> None:
    q = parse_query(query_text("A : B : C", PLAIN, within="8 SECONDS", streams=("u1",)))
    evs = skewed()
    expected = bag(reference.evaluate(q, evs))
    assert sum(expected.values()) > 50  # the stream has plenty of matches to compare
    runs = {}
    for lazy in (False, True):
        engine = Engine(options=EngineOptions(lazy_chain=lazy))
        handle = engine.register(q)
        for e in evs:
            engine.push_event(e)
        engine.close()
        assert bag(handle.matches()) == expected
        runs[lazy] = handle.stats["runs"]
    # eager: a run per A and per (A, B) pair; lazy: nothing waits before C (the last atom)
    assert runs[True] == 0 < runs[False]


def test_lazy_prefix_then_eager_suffix() -> None:
    q = parse_query(query_text("A : B ; C", PLAIN, within="8 SECONDS", streams=("u1",)))
    evs = skewed()
    expected = bag(reference.evaluate(q, evs))
    assert expected
    got = bag(api.evaluate(q, evs, options=EngineOptions(lazy_chain=True)))
    assert got == expected


def test_the_planner_leaves_the_lazy_chain_to_the_user() -> None:
    """Decision 49: possible over A : B, not chosen by default, and explain says so."""
    q = parse_query(query_text("A : B", PLAIN, within="1000000 DAYS", streams=("u1",)))
    plan = plan_query(q)
    assert (plan.explain.lazy_prefix, plan.lazy_chain) == (1, 0)
    said = [line for line in plan_lines(plan) if "lazy chain" in line]
    assert said == ["  lazy chain: possible over x0..x1, not chosen (it pays only when B is rarer than the "
                    "atoms before it, which the planner cannot know: decision 49); --lazy-chain turns it on"]
    chosen = plan_query(q, EngineOptions(lazy_chain=True))
    assert chosen.lazy_chain == 1
    assert [line for line in plan_lines(chosen) if "lazy chain" in line] == [
        "  lazy chain (--lazy-chain): no runs before x1; events A can take are buffered for the window "
        "and chained when B matches"]
