"""What happens to a late event (docs/decisions.md 64): it is judged per query, by each
query's own promises; under ``late="drop"`` (the default) the queries it is late for skip it
and count it, the others take it, and it can be written to a late-event output; under
``late="error"`` it is refused whole. Counts survive snapshots, restores and compaction."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyoxigraph
import pytest

from spaseq.engine.api import Engine, LateEventError, Pushed, SnapshotError
from spaseq.engine.errors import UsageError
from tests.util import EX, query_text

PAIR = query_text("A ; B", "DEFINE GPM A ON U1 { ?x :a ?a } DEFINE GPM B ON U1 { ?x :b ?b }",
                  select="?a ?b", within="10 SECONDS", streams=("u1",))
HELD = PAIR.replace("WITHIN 10 SECONDS", "WITHIN 10 SECONDS LATENESS 3 SECONDS")
PROV = "http://www.w3.org/ns/prov#"
SPASEQ = "https://w3id.org/spaseq#"
XSD = "http://www.w3.org/2001/XMLSchema#"

#: (time, kind, value): b@2 comes after b@4, a@0.5 after both
ARRIVALS = [(1, "a", 1), (4, "b", 4), (2, "b", 2), (Decimal("0.5"), "a", 0)]


def push(engine: Engine, t: object, kind: str, value: int, name: str | None = None) -> Pushed:
    return engine.push(EX + "u1", t, f"<{EX}x> <{EX}{kind}> {value} .", format="turtle",
                       name=name)


def rows(handle) -> list[tuple[str, str]]:
    return [(r.bindings["a"].value, r.bindings["b"].value) for r in handle.rows()]


def test_an_event_late_for_one_query_is_taken_by_the_other_and_counted_by_the_first() -> None:
    """docs/semantics.md section 15's example: b@2 late for the query without a lateness, on
    time for the one with 3 s, which gives the sorted input's matches."""
    engine = Engine()
    plain, held = engine.register(PAIR), engine.register(HELD)
    pushed = [push(engine, t, k, v) for t, k, v in ARRIVALS]
    engine.close()
    # b@2 is behind plain's clock (4) but within held's lateness (watermark 1); a@0.5 is
    # behind both
    assert pushed[:2] == [Pushed(True), Pushed(True)]
    assert pushed[2] == Pushed(True, (plain,)) and pushed[2].late
    assert pushed[3] == Pushed(False, (plain, held))
    assert (plain.late, held.late, engine.dropped_late) == (2, 1, 1)
    sorted_input = Engine()
    expected = sorted_input.register(HELD)
    for t, k, v in sorted(ARRIVALS[:3]):
        push(sorted_input, t, k, v)
    sorted_input.close()
    assert rows(held) == rows(expected) == [("1", "2")]  # the first B after a@1 (';')
    assert rows(plain) == [("1", "4")]  # b@2 skipped


def test_under_the_error_policy_a_late_event_is_refused_whole() -> None:
    engine = Engine(late="error")
    plain, held = engine.register(PAIR), engine.register(HELD)
    for t, k, v in ARRIVALS[:2]:
        push(engine, t, k, v)
    with pytest.raises(LateEventError, match="already processed on this query's streams"):
        push(engine, 2, "b", 2)  # on time for held, but late for plain: refused for both
    engine.close()
    assert (plain.late, held.late, engine.dropped_late) == (0, 0, 0)
    assert rows(held) == rows(plain) == [("1", "4")]


def test_the_policy_s_spellings() -> None:
    assert Engine().late_policy == "drop" and Engine().drop_late
    assert Engine(drop_late=True).late_policy == "drop"
    assert Engine(drop_late=False).late_policy == "error"
    engine = Engine(late="error")
    assert not engine.drop_late
    engine.drop_late = True
    assert engine.late_policy == "drop"
    with pytest.raises(UsageError, match="disagree"):
        Engine(late="error", drop_late=True)
    with pytest.raises(UsageError, match="expected one of 'drop', 'error'"):
        Engine(late="ignore")


def test_counts_survive_snapshots_restores_and_compaction() -> None:
    engine = Engine()
    engine.register(PAIR)
    engine.register(HELD)
    for t, k, v in ARRIVALS:
        push(engine, t, k, v)
    data = engine.snapshot()
    restored = Engine.restore(data)
    assert [h.late for h in restored.handles] == [2, 1] and restored.dropped_late == 1
    assert restored.late_policy == "drop"
    same = Engine()
    same.register(PAIR)
    same.register(HELD)
    same.restore_state(Engine.snapshot(engine, state_only=True))
    assert [h.late for h in same.handles] == [2, 1]
    engine._compact()
    assert [h.late for h in engine.handles] == [2, 1] and engine.compactions == 1
    push(engine, 3, "b", 3)  # late for plain (4) again, not for held (watermark 1)
    assert [h.late for h in engine.handles] == [3, 1]
    with pytest.raises(SnapshotError, match="other settings"):  # an error-policy engine: not a drop one
        strict = Engine(late="error")
        strict.register(PAIR)
        strict.register(HELD)
        strict.restore_state(data)


def test_the_late_output_holds_each_late_event_with_its_stream_time_and_queries(tmp_path: Path) -> None:
    path = tmp_path / "late.trig"
    engine = Engine(late_output=path)
    plain, held = engine.register(PAIR, output=EX + "plain"), engine.register(HELD, output=EX + "held")
    assert engine.late_output == str(path)
    dated = pyoxigraph.Literal("1970-01-01T00:00:02Z", datatype=pyoxigraph.NamedNode(XSD + "dateTime"))
    for (t, k, v), name in zip(ARRIVALS, [None, None, EX + "g-b2", None], strict=True):
        push(engine, dated if name else t, k, v, name=name)
    engine.close()
    store = pyoxigraph.Store()
    store.load(path=str(path), format=pyoxigraph.RdfFormat.TRIG)
    described = {
        (r["g"].value if isinstance(r["g"], pyoxigraph.NamedNode) else "fresh"):
            (r["t"].value, r["t"].datatype.value, r["s"].value, sorted(r["q"].value.split()))
        for r in store.query(f"""PREFIX prov: <{PROV}> PREFIX spaseq: <{SPASEQ}>
            SELECT ?g ?t ?s (GROUP_CONCAT(STR(?q)) AS ?q) WHERE {{
              ?g prov:generatedAtTime ?t ; spaseq:stream ?s ; spaseq:lateFor ?q }} GROUP BY ?g ?t ?s""")}
    assert described == {
        EX + "g-b2": ("1970-01-01T00:00:02Z", XSD + "dateTime", EX + "u1", [EX + "plain"]),
        "fresh": ("0.5", XSD + "decimal", EX + "u1", [EX + "held", EX + "plain"]),
    }
    graphs = {str(q.object.value) for q in store.quads_for_pattern(None, pyoxigraph.NamedNode(EX + "a"), None)
              if not isinstance(q.graph_name, pyoxigraph.DefaultGraph)}
    graphs |= {str(q.object.value) for q in store.quads_for_pattern(None, pyoxigraph.NamedNode(EX + "b"), None,
                                                                        pyoxigraph.NamedNode(EX + "g-b2"))}
    assert graphs == {"0", "2"}  # each event's own triples, in its graph
    assert (plain.late, held.late) == (2, 1)
