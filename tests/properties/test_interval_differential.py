"""Events that last (docs/decisions.md 71): the native core planned for them
(``EngineOptions(intervals=True)``) against the reference evaluator, on random queries (every
operator, modifier, window and policy the point suite generates) over random streams whose
events overlap, nest, touch and equal each other. On point events the interval plan must
find the point answers too (it only keeps runs longer)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import api, reference
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from tests.properties.test_differential import (
    EXAMPLES,
    STEPS,
    event_parts,
    kb,
    options,
    queries,
)
from tests.properties.test_differential import events as point_events
from tests.util import EX, QUERY_PREFIXES, ev, match_identity


@st.composite
def lasting_events(draw) -> list[Event]:
    """Up to 12 events on two streams, each over ``[end - k·step, end]`` (k 0-3, a point for
    0): intervals overlapping, nested, touching (one's end another's start) and equal, ends
    tied across streams; in time order (by end, then arrival)."""
    n = draw(st.integers(min_value=0, max_value=12))
    step = draw(st.sampled_from(STEPS))
    out = []
    for i in range(n):
        stream = draw(st.sampled_from(["u1", "u2"]))
        end = step * draw(st.integers(min_value=0, max_value=8))
        start = max(end - step * draw(st.sampled_from([0, 0, 1, 2, 3])), 0)
        e = ev(stream, end, " ".join(event_parts(draw, i)), seq=i)
        out.append(Event(e.stream, e.time, e.triples, e.seq, e.name, start=start))
    return sorted(out, key=Event.sort_key)


def _check(text: str, evs: list[Event], opts, end_of_input: bool) -> None:
    q = parse_query(text)
    store = kb()
    expected = reference.evaluate(q, evs, store, end_of_input=end_of_input)
    got = api.evaluate(q, evs, store, dataclasses.replace(opts, intervals=True), end_of_input=end_of_input)
    assert [match_identity(m) for m in got] == [match_identity(m) for m in expected], text


@settings(max_examples=EXAMPLES, deadline=None)
@given(queries(), lasting_events(), options, st.booleans())
def test_the_engine_equals_the_reference_on_events_that_last(text, evs, opts, end_of_input) -> None:
    """Match for match, in the reference's order, under any optimisation switches."""
    _check(text, evs, opts, end_of_input)


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(queries(), point_events(), options, st.booleans())
def test_planned_for_intervals_the_engine_gives_the_point_answers(text, evs, opts, end_of_input) -> None:
    """Point events under the interval plan: the same matches, in the same order."""
    _check(text, evs, opts, end_of_input)


TIMER_BODIES = ["{ ?t :val ?w }", "{ ?t :key ?k ; :val ?w }", "{ ?t :val ?w FILTER(?w >= ?v0) }",
                "{ ?t :tag ?g }"]
TIMER_BASE = ["{{ ?s{i} :key ?k ; :val ?v{i} }}", "{{ ?s{i} :val ?v{i} }}",
              "{{ ?s{i} :val ?v{i} FILTER(?v{i} >= {c}) }}", "{{ ?s{i} :key ?k ; :val ?v{i} FILTER(?v{i} > ?v{j}) }}"]


@st.composite
def timer_queries(draw) -> str:
    """A sequence of 1-3 GPM atoms with a relative timer atom after its anchor (AFTER or
    BEFORE, NOT or COLLECT, of 0.1 to 3 seconds), under any window kind; a COLLECT sometimes
    aggregated by SELECT expressions."""
    n = draw(st.integers(1, 3))
    defines = []
    atoms = []
    for i in range(n):
        body = draw(st.sampled_from(TIMER_BASE)).format(i=i, j=max(i - 1, 0), c=draw(st.integers(0, 3)))
        if i == 0:  # ?v0 and ?s0 bound by the first atom, whatever its body
            body = "{ ?s0 :val ?v0 }" if "?v0" not in body or "?v0 > ?v0" in body else body
        defines.append(f"DEFINE GPM G{i} ON {draw(st.sampled_from(['U1', 'U2']))} {body}")
        atoms.append(f"G{i}")
    anchor = draw(st.integers(0, n - 1))
    side = draw(st.sampled_from(["AFTER", "BEFORE"]))
    mode = draw(st.sampled_from(["NOT", "COLLECT"]))
    seconds = draw(st.sampled_from(["0.1", "1", "2", "3"]))
    defines.append(f"DEFINE GPM T ON {draw(st.sampled_from(['U1', 'U2']))} {side} G{anchor} FOR {seconds} SECONDS "
                   f"{mode} {draw(st.sampled_from(TIMER_BODIES))}")
    atoms.insert(draw(st.integers(anchor + 1, n)), "T")
    parts = [atoms[0]]
    for a in atoms[1:]:
        parts += [draw(st.sampled_from([" , ", " ; ", " : "])), a]
    window = draw(st.sampled_from(["", "WITHIN 3 SECONDS", "WITHIN 6 SECONDS", "WITHIN 4 EVENTS",
                                   "WITHIN 5 SECONDS TUMBLING"]))
    select = "*"
    if mode == "COLLECT" and "?w" in defines[-1] and draw(st.booleans()):
        # the folds the core computes itself (aggregate.rs), and one it leaves to spareval
        select = draw(st.sampled_from([
            "?s0 (COUNT(?w) AS ?n) (SUM(?w) AS ?total) (MAX(?w) AS ?top)",
            "(COUNT(*) AS ?n) (AVG(?w) AS ?mean) (MIN(?w) AS ?low)",
            "?s0 (AVG(?w) * 2 AS ?twice)",
        ]))
    return (f"{QUERY_PREFIXES}SELECT {select} {window}\nFROM STREAM U1 <{EX}u1>\nFROM STREAM U2 <{EX}u2>\n"
            f"WHERE {{ SEQ({''.join(parts)}) {' '.join(defines)} }}")


@settings(max_examples=EXAMPLES, deadline=None)
@given(timer_queries(), st.one_of(lasting_events(), point_events()), options, st.booleans())
def test_the_engine_equals_the_reference_on_relative_timers(text, evs, opts, end_of_input) -> None:
    """Timers (docs/decisions.md 71) on events that last and on points: match for match, with
    the SELECT expressions' values, in the reference's order."""
    _check(text, evs, opts, end_of_input)
