"""Composed queries (one query's output consumed by another in the same pass) and
materialised matches, from the API and the CLI, against hand-computed results."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import NamedNode, Store

from spaseq.engine.api import Engine
from spaseq.engine.cli.main import main
from spaseq.engine.composition import CycleError
from spaseq.engine.errors import StreamError, UsageError
from tests.util import ev

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "composition"
EX = "http://ex.org/"
P = "PREFIX : <http://ex.org/>\n"
ALERTS = EX + "alerts"
READINGS = [("h1", 40, 1), ("h1", 60, 2), ("h2", 90, 2), ("h1", 70, 3), ("h2", 95, 4),
            ("h1", 55, 4), ("h1", 80, 5)]  # fixtures/composition/readings.trig, times relative

# Trailing negation upstream: a reading above 50 with no reading under 20 in the next 10 s.
NO_RECOVERY = P + """CONSTRUCT { ?s :alarm ?v } WITHIN 10 SECONDS FROM STREAM S <http://ex.org/readings>
WHERE { SEQ(A; N!) DEFINE GPM A ON S { ?s :value ?v FILTER(?v > 50) }
        DEFINE GPM N ON S { ?s :value ?w FILTER(?w < 20) } }"""
# Downstream reads the alarms and the raw readings: the first reading of 30 after an alarm.
AFTER_ALARM = P + """SELECT ?s ?v ?w WITHIN 30 SECONDS
FROM STREAM AL <http://ex.org/alerts> FROM STREAM S <http://ex.org/readings>
WHERE { SEQ(X; R) DEFINE GPM X ON AL { ?s :alarm ?v } DEFINE GPM R ON S { ?s :value ?w FILTER(?w = 30) } }"""


def push_readings(engine: Engine, readings) -> None:
    for house, value, t in readings:
        engine.push(EX + "readings", t, f"<{EX}{house}> <{EX}value> {value} .", format="turtle")


def values(rows) -> list[tuple]:
    return [(r.time, r.start, *(r.bindings[v].value for v in r.bindings)) for r in rows]


def test_alerts_over_alerts_from_the_api():
    engine = Engine()
    alerts = engine.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    repeated = engine.register((FIX / "repeated.rq").read_text())
    push_readings(engine, READINGS)
    engine.close()
    assert [(r.time, r.bindings["s"].value, r.bindings["v1"].value, r.bindings["v2"].value)
            for r in alerts.rows()] == [(3, EX + "h1", "60", "70"), (4, EX + "h2", "90", "95"),
                                        (5, EX + "h1", "70", "80"), (5, EX + "h1", "55", "80")]
    # an alert is an event over its match's hull (decision 71): match-3 [3, 5] shares the
    # reading at 3 with match-1 [2, 3], so it is not after it; match-4 [4, 5] is
    rows = repeated.rows()
    assert values(rows) == [(5, 2, EX + "h1", "70", "55", "80")]
    assert [(t.event.name.value, t.event.start, t.event.time) for t in rows[0].taken] == [
        (ALERTS + "#match-1", 2, 3), (ALERTS + "#match-4", 4, 5)]


def test_deferred_upstream_match_is_not_late_downstream():
    """The alarm of t=1 completes only when the clock passes 11; the downstream query must
    still see it before the readings of t=3 and 5 (its input is held back to the watermark)."""
    engine = Engine()
    upstream = engine.register(NO_RECOVERY, output=ALERTS)
    down = engine.register(AFTER_ALARM, output=EX + "second")
    seen = []
    for house, value, t in [("h1", 60, 1), ("h1", 30, 3), ("h1", 30, 5), ("h1", 30, 12), ("h1", 30, 25)]:
        push_readings(engine, [(house, value, t)])
        seen.append((t, values(down.rows())))
    engine.close()
    assert values(upstream.rows()) == [(1, 1, EX + "h1", "60")]
    assert seen == [(1, []), (3, []), (5, []), (12, [(3, 1, EX + "h1", "60", "30")]), (25, [])]


def test_consumer_may_be_registered_first_and_cycles_are_rejected():
    engine = Engine()
    repeated = engine.register((FIX / "repeated.rq").read_text(), output=EX + "repeated")
    engine.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    push_readings(engine, READINGS)
    engine.close()
    assert values(repeated.rows()) == [(5, 2, EX + "h1", "70", "55", "80")]  # planned again, for intervals
    cyclic = Engine()
    a = P + "SELECT * FROM STREAM B <http://ex.org/b> WHERE { SEQ(X) DEFINE GPM X ON B { ?s ?p ?o } }"
    cyclic.register(a, output=EX + "a", file="a.rq")
    with pytest.raises(CycleError) as info:
        cyclic.register(a.replace("ex.org/b", "ex.org/a"), output=EX + "b", file="b.rq")
    assert str(info.value) == ("b.rq: queries read each other's output in a cycle: b.rq <http://ex.org/b> "
                               "reads the output of a.rq <http://ex.org/a>; a.rq <http://ex.org/a> "
                               "reads the output of b.rq <http://ex.org/b>")
    assert len(cyclic.composition) == 1  # nothing half-registered
    with pytest.raises(CycleError, match="a2.rq <http://ex.org/s> reads the output of a2.rq"):
        Engine().register(a.replace("ex.org/b", "ex.org/s"), output=EX + "s", file="a2.rq")


def test_a_reader_of_an_output_stream_may_come_after_the_first_event():
    """A query reading another's output, registered once events flowed, sees the results
    from then on; a producer whose output registered queries already read may not come
    late (they would be rebuilt, losing what they hold)."""
    engine = Engine()
    engine.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    push_readings(engine, READINGS[:2])  # no alert completes before t=3
    repeated = engine.register((FIX / "repeated.rq").read_text())
    push_readings(engine, READINGS[2:])
    engine.close()
    whole = Engine()
    whole.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    expected = whole.register((FIX / "repeated.rq").read_text())
    push_readings(whole, READINGS)
    whole.close()
    assert values(repeated.rows()) == values(expected.rows()) != []
    reader = Engine()
    reader.register((FIX / "repeated.rq").read_text(), output=EX + "again")
    reader.push(ALERTS, 0, ())  # an event on the stream it reads (readings: no query reads them)
    with pytest.raises(UsageError, match="before the first event"):
        reader.register((FIX / "alerts.rq").read_text(), output=ALERTS)


def test_composition_misuse_is_a_clear_error():
    other = Engine()
    other.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    other.register((FIX / "repeated.rq").read_text())
    with pytest.raises(UsageError, match="is the output stream of"):
        other.push(ALERTS, 1, "", format="turtle")


def test_run_ends_a_broken_input_with_flush_and_a_whole_one_with_close():
    """Engine.run: an input error among the events is returned, not raised; events after it
    (other inputs) are still pushed; the run then ends with flush (the matches already found
    written and materialised, the materializer closed), not close (the trailing negation of
    the alarm at 15 stays open: what would have followed is unknown)."""
    readings = [ev("readings", t, f":{h} :value {v} .", i) for i, (h, v, t) in
                enumerate([("h1", 60, 1), ("h2", 70, 2), ("h1", 55, 15)])]
    broken, later = StreamError("readings.trig:3: syntax error"), StreamError("other.trig:1: syntax error")
    store = Store()
    engine = Engine(materialize=store)
    alarms = engine.register(NO_RECOVERY, output=ALERTS)
    assert engine.run([readings[0], broken, readings[1], later, readings[2]]) is broken
    assert [r.time for r in alarms.rows()] == [1, 2]
    assert engine.materializer is not None and engine.materializer.store is None  # closed
    assert {q.graph_name.value for q in store if isinstance(q.graph_name, NamedNode)} == {
        ALERTS + "#match-1", ALERTS + "#match-2"}
    whole = Engine()
    alarms = whole.register(NO_RECOVERY, output=ALERTS)
    assert whole.run(readings) is None
    assert [r.time for r in alarms.rows()] == [1, 2, 15]
    cut = Engine()
    alarms = cut.register(NO_RECOVERY, output=ALERTS)
    assert cut.run(readings, end_of_input=False) is None
    assert [r.time for r in alarms.rows()] == [1, 2]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_with_and_materialize(capsys, tmp_path):
    store_dir = tmp_path / "matches"
    args = ("run", str(FIX / "repeated.rq"), "--with", f"{FIX / 'alerts.rq'}={ALERTS}",
            "--stream", f"S={FIX / 'readings.trig'}", "--format", "csv", "--materialize", str(store_dir))
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert out.splitlines() == ["s,l1,p2,l2", "http://ex.org/h1,70,55,80"]
    store = Store(str(store_dir))
    counts = {r["q"].value: int(r["n"].value) for r in store.query(
        "PREFIX spaseq: <https://w3id.org/spaseq#> SELECT ?q (COUNT(?m) AS ?n) "
        "WHERE { ?m a spaseq:Match ; spaseq:query ?q } GROUP BY ?q")}
    assert counts == {ALERTS: 4, (FIX / "repeated.rq").resolve().as_uri(): 1}
    # the repeated match, its events and bindings, back with plain SPARQL
    rows = list(store.query("""PREFIX spaseq: <https://w3id.org/spaseq#>
        SELECT ?time ?atom ?g ?it ?p2 WHERE {
          ?m spaseq:query ?q ; spaseq:time ?time ; spaseq:event ?e ;
             spaseq:binding [ spaseq:variable "p2" ; spaseq:value ?p2 ] .
          ?e spaseq:atom ?atom ; spaseq:graph ?g ; spaseq:iteration ?it ; spaseq:position ?pos .
          FILTER(?q != <http://ex.org/alerts> && ?p2 = 55) } ORDER BY ?pos"""))
    # readings.trig is stamped with xsd:dateTime, so are the alerts (derived events) and the
    # matches over them (decision 43)
    assert [(r["time"].value, r["atom"].value, r["g"].value, r["it"].value, r["p2"].value)
            for r in rows] == [("2026-01-01T10:00:05Z", "X", ALERTS + "#match-1", "1", "55"),
                               ("2026-01-01T10:00:05Z", "Y", ALERTS + "#match-4", "1", "55")]
    # the graph a CONSTRUCT query built is stored too, stamped like a replay file's event
    built = list(store.query("""PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX : <http://ex.org/>
        SELECT ?t ?level WHERE { <http://ex.org/alerts#match-2> prov:generatedAtTime ?t
          GRAPH <http://ex.org/alerts#match-2> { :h2 :alert [ :level ?level ] } }"""))
    assert [(r["t"].value, r["level"].value) for r in built] == [("2026-01-01T10:00:04Z", "95")]
    del store
    code, _, err = run(capsys, *args)
    assert code == 2 and "already holds matches of <http://ex.org/alerts>" in err


def test_cli_cycle_and_reference_engine_errors(capsys, tmp_path):
    code, _, err = run(capsys, "run", str(FIX / "repeated.rq"), "--with",
                       f"{FIX / 'repeated.rq'}={ALERTS}", "--stream", f"S={FIX / 'readings.trig'}")
    assert code == 2 and "reads the output of" in err and "Traceback" not in err
    code, _, err = run(capsys, "run", str(FIX / "repeated.rq"), "--with", f"{FIX / 'alerts.rq'}={ALERTS}",
                       "--stream", f"S={FIX / 'readings.trig'}", "--engine", "reference")
    assert code == 2 and "needs the nfa engine" in err


def test_materialize_from_the_api_with_kleene_iterations():
    store = Store()
    engine = Engine(materialize=store)
    engine.register(P + """SELECT ?s WITHIN 10 SECONDS FROM STREAM S <http://ex.org/readings>
        WHERE { SEQ(A; B+) DEFINE GPM A ON S { ?s :value ?a FILTER(?a < 50) }
                DEFINE GPM B ON S { ?s :value ?b FILTER(?b > 50) } }""", output=EX + "k")
    push_readings(engine, [("h1", 40, 1), ("h1", 60, 2), ("h1", 70, 3)])
    engine.close()
    rows = list(store.query("""PREFIX spaseq: <https://w3id.org/spaseq#>
        SELECT ?m (GROUP_CONCAT(CONCAT(?atom, STR(?it), "@", STR(?t)); separator=" ") AS ?events)
        WHERE { ?m spaseq:event ?e . ?e spaseq:atom ?atom ; spaseq:iteration ?it ; spaseq:eventTime ?t }
        GROUP BY ?m ORDER BY ?m"""))
    assert [(r["m"].value, sorted(r["events"].value.split())) for r in rows] == [
        (EX + "k#match-1", ["A1@1", "B1@2"]), (EX + "k#match-2", ["A1@1", "B1@2", "B2@3"])]
    text = list(store.query("PREFIX spaseq: <https://w3id.org/spaseq#> "
                            "SELECT ?form WHERE { <http://ex.org/k> a spaseq:Query ; spaseq:form ?form }"))
    assert [r["form"].value for r in text] == ["select"]


def test_an_event_at_a_flushed_timestamp_is_late_for_a_composed_query():
    """Issue 24 D for a query reading another's output and raw input: once ``flush()`` has
    run it at a timestamp, an event at that timestamp is late for it too."""
    engine = Engine(late="error")  # refused, to read why
    engine.register(NO_RECOVERY, output=ALERTS)
    engine.register(AFTER_ALARM)
    push_readings(engine, [("h1", 60, 1), ("h1", 30, 20)])
    engine.advance_to(20)
    engine.flush()
    with pytest.raises(StreamError, match="composed query processed \\(or flushed\\) 20"):
        push_readings(engine, [("h1", 30, 20)])
    push_readings(engine, [("h1", 30, 21)])  # later: on time


def test_results_reach_callbacks_producers_first_whatever_the_registration_order():
    """A reader registered before the query it reads: each of its results still comes after
    the result it was made of (the core releases producers' results first)."""
    seen: list[str] = []
    engine = Engine()
    engine.register(AFTER_ALARM, output=EX + "after", on_output=lambda d: seen.append(d.name.value))
    engine.register(NO_RECOVERY, output=ALERTS, on_output=lambda d: seen.append(d.name.value))
    push_readings(engine, [("h1", 60, 1), ("h1", 30, 3), ("h1", 30, 12)])
    engine.close()
    assert seen == [ALERTS + "#match-1", EX + "after#match-1"]


def test_an_output_stream_is_no_input_on_any_way_in(tmp_path):
    """Asking whether an event on a query's output stream is late, or replaying a file as
    that stream, is a UsageError, as pushing one is."""
    engine = Engine()
    engine.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    engine.register((FIX / "repeated.rq").read_text())
    with pytest.raises(UsageError, match="is the output stream of"):
        engine.late(ALERTS, 1)
    with pytest.raises(UsageError, match="is the output stream of"):
        engine.run_replay([(ALERTS, str(FIX / "readings.trig"))])


def test_composed_queries_run_over_replay_files_natively():
    """``Engine.run_replay`` feeds every registered query, composed ones included: the
    same rows as the events pushed one by one."""
    pushed = Engine()
    pushed.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    expected = pushed.register((FIX / "repeated.rq").read_text())
    from spaseq.engine.io.native_events import read_replay_files

    events, error = read_replay_files([(EX + "readings", str(FIX / "readings.trig"))])
    assert error is None
    pushed.run(events)
    fed = Engine()
    fed.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    got = fed.register((FIX / "repeated.rq").read_text())
    assert fed.run_replay([(EX + "readings", str(FIX / "readings.trig"))]) is None
    assert values(got.rows()) == values(expected.rows()) != []


def test_a_waiting_timer_holds_its_readers_back_on_their_own_clocks():
    """A match waiting for its AFTER timer ends no earlier than the timer: with each query on
    its own clock, a reader of its results is not given later events of its other stream
    first (the producer's horizon counts waiting timers), so the derived event over [1, 13]
    still precedes the reading at 20."""
    producer = P + """SELECT ?s FROM STREAM S <http://ex.org/s1> WHERE { SEQ(HOT ; QUIET)
        DEFINE GPM HOT ON S { ?s :value ?v FILTER(?v > 40) }
        DEFINE GPM QUIET ON S AFTER HOT FOR 12 SECONDS NOT { ?s :cool ?c } }"""
    reader = P + """SELECT ?s ?w FROM STREAM O <http://ex.org/hot> FROM STREAM S2 <http://ex.org/s2>
        WHERE { SEQ(X ; Y) DEFINE GPM X ON O { ?m <https://w3id.org/spaseq#binding>
                  [ <https://w3id.org/spaseq#value> ?s ] }
                DEFINE GPM Y ON S2 { ?s :reading ?w } }"""
    engine = Engine(query_clocks=True)
    hot = engine.register(producer, output=EX + "hot")
    after = engine.register(reader)
    engine.push(EX + "s1", 1, f"<{EX}h1> <{EX}value> 50 .", format="turtle")
    engine.push(EX + "s2", 20, f"<{EX}h1> <{EX}reading> 7 .", format="turtle")
    engine.push(EX + "s1", 30, f"<{EX}h2> <{EX}value> 10 .", format="turtle")  # the timer ends
    assert values(hot.rows()) == [(13, 1, EX + "h1")]
    assert values(after.rows()) == [(20, 1, EX + "h1", "7")]


def test_a_plan_for_points_reading_results_is_planned_again_for_intervals():
    """A query registered as a plan made for point events (explain --plan, say) that reads
    another query's results is planned again for events that last, as the core requires;
    registered first, it is planned again when its producer comes."""
    from spaseq.engine.compile.planner import plan_query
    from spaseq.engine.language.query import parse_query

    points = plan_query(parse_query((FIX / "repeated.rq").read_text()))
    assert not points.options.intervals
    for producer_first in (True, False):
        engine = Engine()
        if producer_first:
            engine.register((FIX / "alerts.rq").read_text(), output=ALERTS)
        reader = engine.register(points, output=EX + "repeated")
        if not producer_first:
            engine.register((FIX / "alerts.rq").read_text(), output=ALERTS)
        assert reader.plan is not None and reader.plan.options.intervals
        push_readings(engine, READINGS)
        engine.close()
        assert values(reader.rows()) == [(5, 2, EX + "h1", "70", "55", "80")]


def test_a_snapshot_of_a_reader_planned_for_points_is_refused_whole():
    """A snapshot from before results lasted holds a reader of results planned for point
    events: its state cannot go on under a plan for events that last, so restoring it is
    refused (SnapshotError), never continued wrongly."""
    import json as _json

    from spaseq.engine.runtime.snapshot import Snapshot, SnapshotError

    engine = Engine()
    engine.register((FIX / "alerts.rq").read_text(), output=ALERTS)
    engine.register((FIX / "repeated.rq").read_text(), output=EX + "repeated")
    push_readings(engine, READINGS[:3])
    snap = Snapshot.decode(engine.snapshot())
    Engine.restore(snap.encode())  # as saved: restored
    for q in snap.state["queries"]:
        plan = _json.loads(q["plan"])
        plan["options"]["intervals"] = False
        q["plan"] = _json.dumps(plan)
    with pytest.raises(SnapshotError, match="planned for point events by an older spaseq"):
        Engine.restore(snap.encode())
