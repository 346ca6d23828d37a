"""CONSTRUCT queries: template instantiation, TriG output (a replay file), the other formats,
and the reference evaluator, checked against hand-computed graphs (fixtures/composition)."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import pytest
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, RdfFormat

from spaseq.engine.algebra import operators as A
from spaseq.engine.cli.main import main
from spaseq.engine.language.query import parse_query
from tests.output.derive_oracle import instantiate

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "composition"
EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PROV = "http://www.w3.org/ns/prov#generatedAtTime"
BASE = 1767261600  # 2026-01-01T10:00:00Z

# alerts.rq over readings.trig, by hand: (time, house, previous, level) in completion order.
ALERTS = [(3, "h1", 60, 70), (4, "h2", 90, 95), (5, "h1", 70, 80), (5, "h1", 55, 80)]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def alert_graphs(trig: str) -> list[tuple[float, str, int, int]]:
    """(time, house, previous, level) of each graph of a TriG output, in graph order."""
    quads = list(pyoxigraph.parse(trig, format=RdfFormat.TRIG))
    stamps = {q.subject: q.object for q in quads if isinstance(q.graph_name, DefaultGraph)
              and q.predicate.value == PROV}
    out = []
    for g in dict.fromkeys(q.graph_name for q in quads if not isinstance(q.graph_name, DefaultGraph)):
        triples = {(q.subject, q.predicate.value, q.object) for q in quads if q.graph_name == g}
        (house, node), = [(s, o) for s, p, o in triples if p == EX + "alert"]
        assert isinstance(node, BlankNode) and len(triples) == 3
        prev = next(o for s, p, o in triples if s == node and p == EX + "previous")
        level = next(o for s, p, o in triples if s == node and p == EX + "level")
        assert stamps[g].datatype.value == XSD + "dateTime"
        from spaseq.engine.values.timestamps import to_seconds

        out.append((to_seconds(stamps[g]) - BASE, house.value[len(EX):], int(prev.value), int(level.value)))
    return out


def test_instantiate_fresh_blank_nodes_and_skips_unbound():
    q = parse_query("PREFIX : <http://ex.org/>\nCONSTRUCT { ?s :p [ :q ?o ] . ?s :r ?missing . "
                    "\"lit\" :p ?s }\nFROM STREAM S <http://ex.org/s>\n"
                    "WHERE { SEQ(A) DEFINE GPM A ON S { ?s :p ?o } }")
    mu = {"s": NamedNode(EX + "x"), "o": Literal("1")}
    first, second = instantiate(q.match.template, mu), instantiate(q.match.template, mu)
    assert len(first) == 2  # the ?missing triple and the literal-subject triple are skipped
    node = next(t.object for t in first if t.predicate.value == EX + "p")
    assert isinstance(node, BlankNode)
    assert {(t.subject, t.predicate.value, t.object) for t in first} == {
        (NamedNode(EX + "x"), EX + "p", node), (node, EX + "q", Literal("1"))}
    other = next(t.object for t in second if t.predicate.value == EX + "p")
    assert other != node  # fresh per match, as in SPARQL CONSTRUCT
    assert any("?missing, which no GPM binds" in w for w in q.warnings)
    assert q.match.template[0] == A.TriplePattern(A.Var("_:anon0"), NamedNode(EX + "q"), A.Var("o"))


def test_construct_trig_output_is_the_hand_computed_graphs(capsys):
    code, out, _ = run(capsys, "run", str(FIX / "alerts.rq"), "--stream", f"S={FIX / 'readings.trig'}")
    assert code == 0
    assert alert_graphs(out) == [(float(t), h, p, v) for t, h, p, v in ALERTS]
    names = [q.graph_name.value for q in pyoxigraph.parse(out, format=RdfFormat.TRIG)
             if not isinstance(q.graph_name, DefaultGraph)]
    uri = (FIX / "alerts.rq").resolve().as_uri()
    assert list(dict.fromkeys(names)) == [f"{uri}#match-{k}" for k in range(1, 5)]


def test_trig_output_round_trips_as_a_replay_file(capsys, tmp_path):
    _, out, _ = run(capsys, "run", str(FIX / "alerts.rq"), "--stream", f"S={FIX / 'readings.trig'}")
    (tmp_path / "alerts.trig").write_text(out)
    # each alert is written over its match's interval (decision 71): as a composed query
    # reads it, match-3 [3, 5] shares its first reading with match-1 [2, 3]
    assert out.count("prov:startedAtTime") == len(ALERTS)
    args = ("run", str(FIX / "repeated.rq"), "--stream", f"AL={tmp_path / 'alerts.trig'}", "--format", "jsonl")
    code, _, err = run(capsys, *args)
    assert code == 2 and "was planned for point events" in err and "--intervals" in err
    code, rows, _ = run(capsys, *args, "--intervals")
    assert code == 0
    got = [(r["time"] - BASE, r["start"] - BASE, {k: v["value"] for k, v in r["bindings"].items()})
           for r in map(json.loads, rows.splitlines())]
    assert got == [(5, 2, {"s": EX + "h1", "l1": "70", "p2": "55", "l2": "80"})]


def test_reference_engine_constructs_the_same_graphs(capsys):
    code, out, _ = run(capsys, "run", str(FIX / "alerts.rq"), "--stream",
                       f"S={FIX / 'readings.trig'}", "--engine", "reference", "--format", "trig")
    assert code == 0
    assert alert_graphs(out) == [(float(t), h, p, v) for t, h, p, v in ALERTS]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_construct_under_solution_formats_gives_the_template_variables(capsys, fmt):
    code, out, _ = run(capsys, "run", str(FIX / "alerts.rq"), "--stream",
                       f"S={FIX / 'readings.trig'}", "--format", fmt)
    assert code == 0
    if fmt == "csv":
        lines = out.splitlines()
        assert lines[0] == "v2,v1,s" or set(lines[0].split(",")) == {"s", "v1", "v2"}
        assert len(lines) == 1 + len(ALERTS)
    else:
        records = [json.loads(line) for line in out.splitlines()]
        assert [(r["time"] - BASE, r["bindings"]["s"]["value"][len(EX):], int(r["bindings"]["v1"]["value"]),
                 int(r["bindings"]["v2"]["value"])) for r in records] == ALERTS
        assert all(set(r["bindings"]) == {"s", "v1", "v2"} for r in records)
