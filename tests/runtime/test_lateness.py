"""LATENESS (docs/decisions.md 63): a query with a lateness evaluates its input in time order
once its watermark (the latest time seen on its streams minus the lateness) passes it, so
that input out of order by up to the lateness gives the matches of the same input sorted;
an event later than that is late. Checked against the reference evaluator on the sorted
input, over the differential suite's random queries and streams, with snapshots cut
anywhere."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import reference
from spaseq.engine.api import Engine, LateEventError, Pushed
from spaseq.engine.errors import QueryError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from tests.properties.test_differential import EXAMPLES, events, kb, options, queries
from tests.util import EX, query_text
from tests.util import match_bag as bag


def STILL() -> float:  # noqa: N802 - a clock, named as one
    """Processing time that never moves (the properties are about event time only)."""
    return 0.0


PAIR = query_text("A ; B", "DEFINE GPM A ON U1 { ?x :a ?a } DEFINE GPM B ON U1 { ?x :b ?b }",
                  within="10 SECONDS", streams=("u1",))


def with_lateness(text: str, seconds: Decimal) -> str:
    """``text`` (a generated query) with a LATENESS clause."""
    return text.replace("\nFROM STREAM U1", f" LATENESS {seconds} SECONDS\nFROM STREAM U1", 1)


def disordered(evs: list[Event], lateness: Decimal, rnd: random.Random) -> list[Event]:
    """``evs`` (sorted) in an arrival order out of time order by at most ``lateness``: each
    timestamp's events arrive together, in their order, up to ``lateness`` later."""
    delay = {t: Decimal(rnd.randint(0, 4)) / 4 * lateness for t in {e.time for e in evs}}
    return sorted(evs, key=lambda e: (e.time + delay[e.time], e.time, e.seq))


@settings(max_examples=EXAMPLES)
@given(queries(), events(), options, st.sampled_from([Decimal(0), Decimal("0.1"), Decimal(2), Decimal(7)]),
       st.randoms(use_true_random=False))
def test_disorder_within_the_lateness_gives_the_sorted_input_s_matches(text, evs, opts, lateness, rnd) -> None:
    q = parse_query(with_lateness(text, lateness))
    store = kb()
    expected = bag(reference.evaluate(q, evs, store, end_of_input=True))
    engine = Engine(store, opts, clock=STILL)  # no stream goes idle: processing time stands still
    handle = engine.register(q)
    arrivals = disordered(evs, lateness, rnd) if lateness else evs
    for e in arrivals:
        engine.push_event(e)
    engine.close()
    assert bag(list(handle.matches())) == expected, (q.source, [(e.time, e.seq) for e in arrivals])


@settings(max_examples=max(EXAMPLES // 3, 20))
@given(queries(), events(), st.randoms(use_true_random=False), st.data())
def test_a_snapshot_carries_what_the_lateness_holds_back(text, evs, rnd, data) -> None:
    q = parse_query(with_lateness(text, Decimal(2)))
    store = kb()
    arrivals = disordered(evs, Decimal(2), rnd)
    whole = Engine(store, clock=STILL)
    expected = whole.register(q)
    for e in arrivals:
        whole.push_event(e)
    whole.close()
    cut = data.draw(st.integers(0, len(arrivals)), label="cut")
    engine = Engine(store, clock=STILL)
    handle = engine.register(q)
    for e in arrivals[:cut]:
        engine.push_event(e)
    got = list(handle.matches())
    engine = Engine.restore(engine.snapshot(), kb=store, clock=STILL)
    for e in arrivals[cut:]:
        engine.push_event(e)
    engine.close()
    got += list(engine.handles[0].matches())
    assert bag(got) == bag(list(expected.matches()))


def push(engine: Engine, t: float, body: str, stream: str = "u1") -> Pushed:
    return engine.push(EX + stream, t, body, format="turtle")


def test_matches_come_when_the_watermark_passes_and_a_later_event_is_late() -> None:
    engine = Engine(late="error")  # a late event refused, to read why
    handle = engine.register(PAIR.replace("WITHIN 10 SECONDS", "WITHIN 10 SECONDS LATENESS 3 SECONDS"))
    seen = []
    for t, body in [(1, ":x :a 1"), (4, ":x :b 4"), (2, ":x :b 2"), (5, ":x :a 5")]:
        push(engine, t, f"@prefix : <{EX}> . {body} .")
        seen.append([r.bindings["b"].value for r in handle.rows()])
    # b@2 arrived after b@4 but is the first B after a@1 (';'); it is released at 5 (5 - 3)
    assert seen == [[], [], [], ["2"]]
    with pytest.raises(LateEventError, match=r"event at 1 on <http://ex.org/u1> is earlier than 2, the "
                                             r"watermark a query reading it reached"):
        push(engine, 1, f"@prefix : <{EX}> . :x :b 0 .")
    assert engine.late(EX + "u1", 2) is None and engine.late(EX + "u1", Decimal("1.5")) is not None
    engine.advance_to(9)  # a heartbeat moves the watermark on
    engine.close()


def test_the_engine_s_lateness_is_the_default_of_queries_without_one() -> None:
    engine = Engine(lateness="3 SECONDS")
    default = engine.register(PAIR)
    own = engine.register(PAIR.replace("WITHIN 10 SECONDS", "WITHIN 10 SECONDS LATENESS 0 SECONDS"))
    assert (default.query.lateness, own.query.lateness) == (Decimal(3), Decimal(0))
    assert Engine(lateness=0.5).lateness == Decimal("0.5")
    with pytest.raises(UsageError, match="lateness '1 EVENTS'|lateness takes a time unit"):
        Engine(lateness="1 EVENTS")


@pytest.mark.parametrize(("clause", "at", "message"), [
    ("LATENESS -2 SECONDS", "-2", "LATENESS -2 SECONDS: a negative duration; give 0 or more"),
    ("LATENESS 2 EVENTS", "EVENTS", "LATENESS takes a time unit, not EVENTS"),
    ("LATENESS 1 SECONDS LATENESS 2 SECONDS", "LATENESS 2", "a query has at most one LATENESS clause"),
])
def test_a_bad_lateness_is_a_located_error(clause, at, message) -> None:
    text = PAIR.replace("WITHIN 10 SECONDS", f"WITHIN 10 SECONDS {clause}")
    line = next(i for i, line in enumerate(text.splitlines(), 1) if clause in line)
    column = text.splitlines()[line - 1].index(at) + 1
    with pytest.raises(QueryError) as info:
        parse_query(text, "q.rq")
    assert message in info.value.message
    assert info.value.location is not None, str(info.value)
    assert (info.value.location.line, info.value.location.column) == (line, column), str(info.value)


def test_events_of_a_later_stream_do_not_release_an_earlier_one_s_events_past_its_lateness() -> None:
    """Two streams: the watermark is the least of theirs (each latest minus the lateness)."""
    text = query_text("A ; B", "DEFINE GPM A ON U1 { ?x :a ?a } DEFINE GPM B ON U2 { ?x :b ?b }",
                      within="10 SECONDS", streams=("u1", "u2"))
    engine = Engine(lateness=1)
    handle = engine.register(text)
    push(engine, 1, f"<{EX}x> <{EX}a> 1 .")
    push(engine, 9, f"<{EX}x> <{EX}b> 9 .", stream="u2")  # u1's watermark is 0: nothing is released
    assert handle.rows() == []
    push(engine, 3, f"<{EX}x> <{EX}a> 3 .")  # u1 reaches 2: a@1 is released, b@9 is not yet
    assert handle.rows() == []
    engine.close()  # the end of input releases the rest: b@9 follows a@1 and a@3
    assert [r.bindings["a"].value for r in handle.rows()] == ["1", "3"]


def test_spaseq_run_reads_live_input_out_of_order_within_its_lateness(tmp_path) -> None:
    """``--lateness`` on a live stream: the B two seconds behind is taken in time order; without
    it, that event is late: dropped (the run goes on, a note says so), or under ``--late
    error`` the run stops at it with the late event's message (exit status 2)."""
    import subprocess
    import sys

    query = tmp_path / "q.rq"
    query.write_text(PAIR, encoding="utf-8")
    prov = "<http://www.w3.org/ns/prov#generatedAtTime>"
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    lines = "".join(f'<{EX}x> <{EX}{p}> "{v}"^^{integer} <{EX}g{t}> .\n<{EX}g{t}> {prov} "{t}"^^{integer} .\n'
                    for t, p, v in [(1, "a", 1), (4, "b", 4), (2, "b", 2)])
    run = [sys.executable, "-m", "spaseq.engine.cli", "run", str(query), "--stream", "U1=-", "--format", "csv"]
    ok = subprocess.run([*run, "--lateness", "2sec"], input=lines, capture_output=True, text=True, timeout=60)
    assert (ok.returncode, ok.stdout.splitlines()) == (0, ["a,b,x", f"1,2,{EX}x"]), ok.stderr
    dropped = subprocess.run(run, input=lines, capture_output=True, text=True, timeout=60)
    assert (dropped.returncode, dropped.stdout.splitlines()) == (0, ["a,b,x", f"1,4,{EX}x"]), dropped.stderr
    assert dropped.stderr == "spaseq: dropped 1 late event(s)\n"
    refused = subprocess.run([*run, "--late", "error"], input=lines, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "late event" in refused.stderr


class FakeClock:
    """Processing time that moves only when told (seconds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_silent_stream_stops_holding_the_watermark_back_after_the_idle_timeout() -> None:
    """Two streams, lateness 1 s: u2 spoke once and went silent; u1's events wait for it
    until u2 has been silent for the idle timeout (default: the lateness, in processing
    time), then ``tick()`` releases them up to u1's own watermark."""
    text = query_text("A ; B", "DEFINE GPM A ON U1 { ?x :a ?a } DEFINE GPM B ON U1 { ?x :b ?b }",
                      within="10 SECONDS", streams=("u1", "u2"))
    text = text.replace("DEFINE GPM B ON U1", "DEFINE GPM C ON U2 { ?x :c ?c } DEFINE GPM B ON U1")
    text = text.replace("SEQ(A ; B)", "SEQ(A ; (B | C))")
    clock = FakeClock()
    engine = Engine(lateness=1, clock=clock)
    handle = engine.register(text)
    push(engine, 1, f"<{EX}y> <{EX}c> 0 .", stream="u2")
    clock.now = 0.8  # u1 speaks later (processing time)
    push(engine, 2, f"<{EX}x> <{EX}a> 1 .")
    push(engine, 3, f"<{EX}x> <{EX}b> 2 .")
    push(engine, 9, f"<{EX}x> <{EX}b> 3 .")
    engine.tick()
    assert handle.rows() == []  # u2 (latest 1, so watermark 0) holds everything back
    clock.now = 1.0  # u2 silent for 1 s, u1 for 0.2 s: u1's watermark (9 - 1) rules
    engine.tick()
    assert [(r.bindings["a"].value, r.bindings["b"].value) for r in handle.rows()] == [("1", "2")]
    assert not push(engine, 8.5, f"<{EX}x> <{EX}b> 4 .").late  # behind 9 by less than the lateness
    # what u2 would send now is late: dropped (the default), counted by the query
    assert push(engine, 2, f"<{EX}y> <{EX}c> 1 .", stream="u2").late_for == (handle,)
    clock.now = 5.0  # every stream silent: the watermark is the latest time seen, 9
    engine.tick()
    assert push(engine, 8.7, f"<{EX}x> <{EX}b> 5 .").late_for == (handle,)
    assert handle.late == 2 and engine.dropped_late == 2
    other = Engine(lateness=1, idle_timeout="3 SECONDS", clock=clock)
    assert other.idle_timeout == Decimal(3)


def test_a_restored_engine_keeps_its_lateness_and_idle_timeout_and_heartbeats_judge_idleness() -> None:
    clock = FakeClock()
    engine = Engine(lateness=2, idle_timeout="1 SECONDS", clock=clock)
    engine.register(PAIR)
    push(engine, 5, f"<{EX}x> <{EX}a> 1 .")
    restored = Engine.restore(engine.snapshot(), clock=clock)
    assert (restored.lateness, restored.idle_timeout) == (Decimal(2), Decimal(1))
    assert restored.register(PAIR, output="urn:again").query.lateness == Decimal(2)
    with pytest.raises(UsageError, match="idle_timeout 0: give a duration above 0"):
        Engine(idle_timeout=0)
    with pytest.raises(UsageError, match="lateness 2 EVENTS|lateness takes a time unit"):
        engine.lateness = "2 EVENTS"
    # a heartbeat judges idleness as of its own processing time: u1 silent for 1 s, so its
    # watermark is its latest time (5), not 5 - 2
    clock.now = 1.0
    engine.advance_to(4)
    assert engine.late(EX + "u1", Decimal("4.5")) is not None
