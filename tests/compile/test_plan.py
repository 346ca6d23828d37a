"""The plan as data: every query's plan survives JSON without loss, a runtime built from the
plan read back finds the same matches as the reference evaluator, and ``spaseq explain
--plan`` prints it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import _native, api, reference
from spaseq.engine._native import _testing
from spaseq.engine.algebra import operators as A
from spaseq.engine.compile import explain
from spaseq.engine.compile.plan import COMPILED, SPARQL, EngineOptions, Plan
from spaseq.engine.compile.plan_json import plan_from_json, plan_to_json
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.query import load_query, parse_query
from tests.properties.test_differential import EXAMPLES, events, kb, options, queries
from tests.util import ev, match_bag, query_text

ROOT = Path(__file__).resolve().parents[2]
QUERY_FILES = sorted(p for p in ROOT.glob("fixtures/**/*.rq")) + sorted(ROOT.glob("benchmarks/queries/*.rq"))


def _round_trip(plan: Plan) -> Plan:
    text = plan_to_json(plan)
    back = plan_from_json(text)
    assert back == plan
    assert plan_to_json(back) == text  # the fields equality ignores (locations, spans) too
    return back


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_plan_survives_json(path: Path) -> None:
    for opts in (EngineOptions(), EngineOptions(lazy_chain=True, lazy_conjunction=True, compiled_gpm=False)):
        _round_trip(plan_query(load_query(str(path)), opts))


@settings(max_examples=EXAMPLES)
@given(queries(), events(), options, st.booleans())
def test_runtime_from_a_plan_read_back_equals_reference(text, evs, opts, end_of_input) -> None:
    q = parse_query(text)
    store = kb()
    plan = _round_trip(plan_query(q, opts))
    engine = api.Engine(kb=store, options=EngineOptions(compiled_gpm=not opts.compiled_gpm))
    handle = engine.register(plan)  # the plan's options, not the engine's
    assert handle.runtime.plan is plan
    # the plan's options are the engine's, but under a policy the lazy forms are off (decision 65)
    policy = q.selection != "unrestricted" or q.consumption != "none"
    lazy_off = dataclasses.replace(opts, lazy_chain=False, lazy_conjunction=False)
    assert handle.runtime.plan.options == (lazy_off if policy else opts)
    for e in evs:
        engine.push_event(e)
    if end_of_input:
        engine.close()
    else:
        engine.flush()
    expected = match_bag(reference.evaluate(q, evs, store, end_of_input=end_of_input))
    assert match_bag(handle.matches()) == expected, text


def test_plan_records_the_runtime_choices() -> None:
    """The V-shape: B joins A on ?c and compares prices, so runs wait partitioned and sorted."""
    q = parse_query(query_text(
        "A ; B",
        "DEFINE GPM A ON U1 { ?t :company ?c ; :price ?p1 } "
        "DEFINE GPM B ON U2 { ?u :company ?c ; :price ?p2 . FILTER(?p2 > ?p1) }",
        within="60 SECONDS"))
    plan = plan_query(q)
    a, b = plan.gpms["A"], plan.gpms["B"]
    assert a.path == b.path == COMPILED
    assert [str(f) for f in b.filters] and b.variables[0] in ("u", "c", "p2")
    index = plan.run_indexes[1]
    assert index.partition_keys == ("c",)
    assert index.range.run_var == "p1" and index.range.by_gpm["B"].event_var == "p2"
    assert plan.probes == {"http://ex.org/u2": plan.probes["http://ex.org/u2"]}
    assert plan.probes["http://ex.org/u2"][0].step == 1
    off = plan_query(q, EngineOptions(partition_runs=False, compiled_gpm=False))
    assert off.run_indexes[1].partition_keys is None and off.gpms["B"].path == SPARQL


def test_lazy_chain_applicability_is_in_the_plan() -> None:
    q = parse_query(query_text(
        "A : B : C",
        "DEFINE GPM A ON U1 { ?a :v ?x } DEFINE GPM B ON U1 { ?b :v ?y } DEFINE GPM C ON U2 { ?c :w ?x }",
        within="60 SECONDS"))
    assert plan_query(q).explain.lazy_prefix == 2 and plan_query(q).lazy_chain == 0
    assert plan_query(q, EngineOptions(lazy_chain=True)).lazy_chain == 2


def test_explain_plan_prints_the_plan_as_json() -> None:
    path = ROOT / "fixtures" / "smartgrid" / "query.rq"
    out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "explain", "--plan", str(path)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    data = json.loads(out)
    assert data["@type"] == "Plan" and data["version"] == 4
    assert plan_from_json(out) == plan_query(load_query(str(path)))
    lazy = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "explain", "--plan", "--lazy-chain",
                           str(path)], capture_output=True, text=True, timeout=120, check=True).stdout
    assert json.loads(lazy)["options"]["lazy_chain"] is True


def test_a_plan_of_another_version_is_refused() -> None:
    text = plan_to_json(plan_query(load_query(str(ROOT / "fixtures" / "smartgrid" / "query.rq"))))
    data = json.loads(text)
    data["version"] = 99
    with pytest.raises(ValueError, match="version 99"):
        plan_from_json(json.dumps(data))


# ---------------------------------------------------------------- the native core reads it

def _expr(e) -> str:
    if isinstance(e, A.EVar):
        return f"?{e.name}"
    if isinstance(e, A.ETerm):
        return str(e.term)
    if isinstance(e, A.EExists):
        return "(NOT EXISTS)" if e.negated else "(EXISTS)"
    return "(" + " ".join([e.op, *(["DISTINCT"] if e.distinct else []), *(_expr(a) for a in e.args)]) + ")"


def _term(t) -> str:
    return f"?{t.name}" if isinstance(t, A.Var) else "(path)" if isinstance(t, A.Path) else str(t)


def _expected_summary(plan: Plan) -> dict:
    """What the native core must have understood of ``plan`` (engine/native/plan/src/summary.rs)."""
    w = plan.query.window
    window = ({"kind": None} if w.kind is None else
              {"kind": "events", "events": int(w.amount)} if w.kind == "events" else
              {"kind": "time", "nanoseconds": str(int(w.amount * 10**9))})
    steps = []
    for s, ix in zip(plan.steps, plan.run_indexes, strict=True):
        steps.append({
            "index": s.index, "operand": explain.operand_text(s.operand), "modifier": s.modifier,
            "strategy": s.strategy, "streams": sorted(s.streams), "bound_before": sorted(s.bound_before),
            "partition_keys": list(ix.partition_keys) if ix.partition_keys is not None else None,
            "range": None if ix.range is None else {
                "run_var": ix.range.run_var,
                "by_gpm": {g: [k.event_var, k.below, k.scale, k.offset] for g, k in sorted(ix.range.by_gpm.items())}},
        })
    gpms = {}
    for name, g in plan.gpms.items():
        fvars: list[str] = []
        for f in g.filters:
            for v in _expr_vars_in_order(f):
                if v not in fvars:
                    fvars.append(v)
        gpms[name] = {
            "stream": g.stream, "path": g.path, "variables": list(g.variables),
            "join_order": [[_term(tp.subject), _term(tp.predicate), _term(tp.object)] for tp in g.join_order],
            "filters": [_expr(f) for f in g.filters], "filter_variables": fvars,
            "graph_elements": len(g.graph_elements), "required": [p.value for p in g.required],
        }
    return {
        "version": plan.version, "window": window, "tumbling": w.tumbling,
        "streams": [[k, v] for k, v in plan.query.streams.items()], "options": dict(sorted(vars(plan.options).items())),
        "steps": steps, "gpms": gpms,
        "probes": {s: [[p.step, p.ranged, list(p.loops), list(p.gpms)] for p in ps]
                   for s, ps in sorted(plan.probes.items())},
        "kleene_gpms": sorted(plan.kleene_gpms), "lazy_chain": plan.lazy_chain,
    }


def _expr_vars_in_order(e) -> list[str]:
    if isinstance(e, A.EVar):
        return [e.name]
    if isinstance(e, A.ECall):
        return [v for a in e.args for v in _expr_vars_in_order(a)]
    return []


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_native_core_reads_every_fixture_plan(path: Path) -> None:
    for opts in (EngineOptions(), EngineOptions(lazy_chain=True, compiled_gpm=False, partition_runs=False)):
        plan = plan_query(load_query(str(path)), opts)
        got = json.loads(_testing.plan_summary(plan_to_json(plan)))
        assert got == _expected_summary(plan)


@settings(max_examples=EXAMPLES)
@given(queries(), options)
def test_the_native_core_reads_generated_plans(text, opts) -> None:
    plan = plan_query(parse_query(text), opts)
    assert json.loads(_testing.plan_summary(plan_to_json(plan))) == _expected_summary(plan)


def test_the_native_core_names_the_field_it_cannot_read() -> None:
    text = plan_to_json(plan_query(load_query(str(ROOT / "fixtures" / "vshape.rq"))))
    with pytest.raises(ValueError, match=r"^plan\.run_indexes\[1\]\.partition_keys: invalid type: integer `7`, "
                                         r"expected a sequence$"):
        _testing.plan_summary(text.replace('"partition_keys": [\n        "c"\n      ]', '"partition_keys": 7'))


#: the plans the Rust tests read (engine/native/CRATE/tests/data/NAME.plan.json) -> their query
NATIVE_FIXTURES = {
    "plan/tests/data/vshape.plan.json": "fixtures/vshape.rq",
    "plan/tests/data/features.plan.json": "fixtures/plan/features.rq",
    # it reads another query's results, which last: planned for them as Engine.register does
    "engine/tests/data/rises.plan.json": "fixtures/engine/rises.rq+intervals",
    "automaton/tests/data/kleene_strict.plan.json": "fixtures/kleene_strict.rq",
    **{f"automaton/tests/data/{n}.plan.json": f"fixtures/automaton/{n}.rq"
       for n in ("strict", "next", "any", "optional", "negation", "bounded", "star", "exactly",
                 "head_negation")},
}


@pytest.mark.parametrize("data", sorted(NATIVE_FIXTURES))
def test_the_native_test_fixtures_are_current(data: str) -> None:
    """engine/native/CRATE/tests/data/NAME.plan.json is what explain --plan writes today for
    its query, NAME.rq (the Rust tests read them)."""
    source, _, option = NATIVE_FIXTURES[data].partition("+")
    path = ROOT / source
    name = path.stem
    options = EngineOptions(**{option: True}) if option else None
    current = json.loads(plan_to_json(plan_query(load_query(str(path)), options)))
    fixture = json.loads((ROOT / "engine/native" / data).read_text(encoding="utf-8"))
    assert json.dumps(fixture).replace(f'"{name}.rq"', json.dumps(str(path))) == json.dumps(current)


def test_a_plan_of_another_version_is_refused_by_its_version() -> None:
    """Plan version 1 had fields this version dropped: reading it says which version it is
    (not a TypeError about a field), and so does the native core."""
    q = parse_query(query_text("A ; B", "DEFINE GPM A ON U1 { ?t :price ?p1 } "
                               "DEFINE GPM B ON U2 { ?u :price ?p2 FILTER(?p2 > ?p1) }", within="60 SECONDS"))
    data = json.loads(plan_to_json(plan_query(q)))
    old = {**json.loads(json.dumps(data)), "version": 1}
    for g in old["gpms"].values():
        g.update(solver=True, direct_solver=True)
    with pytest.raises(ValueError, match="plan version 1, this spaseq reads version 4"):
        plan_from_json(json.dumps(old))
    with pytest.raises(ValueError, match="plan version 1"):
        _testing.plan_summary(json.dumps(old))
    assert plan_from_json(json.dumps(data)) == plan_query(q)


# ---------------------------------------------------------------- the plan decides the evaluator

EVALUATED = query_text("A ; B", "DEFINE GPM A ON U1 { ?t :price ?p1 } "
                       "DEFINE GPM B ON U2 { ?u :price ?p2 OPTIONAL { ?u :volume ?v } FILTER(?p2 > ?p1) }",
                       within="60 SECONDS")


def _with_evaluator(plan: Plan, name: str, evaluator: str) -> Plan:
    import dataclasses

    gpms = {**plan.gpms, name: dataclasses.replace(plan.gpms[name], evaluator=evaluator)}
    return dataclasses.replace(plan, gpms=gpms)


def test_the_planner_records_what_the_core_answers_and_why() -> None:
    plan = plan_query(parse_query(EVALUATED))
    assert {n: g.evaluator for n, g in plan.gpms.items()} == {"A": "native", "B": "spareval"}
    assert set(plan.explain.evaluators) == {"B"}  # why B is not native, for explain only
    answers = _native.gpm_evaluators(plan_to_json(plan))
    assert [(n, e) for n, e, _ in answers] == [("A", "native"), ("B", "spareval")]
    assert plan_from_json(plan_to_json(plan)).gpms == plan.gpms
    assert "native SPARQL (spareval)" in "\n".join(explain.plan_lines(plan))


def test_the_runtime_follows_the_plan_even_where_it_could_do_otherwise() -> None:
    """A GPM the core could run natively runs on the callback when the plan says so, with
    the same matches: nothing downstream second-guesses the plan."""
    plan = plan_query(parse_query(EVALUATED))
    evs = [ev(f"u{1 + i % 2}", i, f":e{i} :price {(i * 7) % 5} ; :volume {i} .", seq=i) for i in range(12)]

    def run(p: Plan) -> tuple[set[str], object]:
        engine = api.Engine()
        handle = engine.register(p)
        for e in evs:
            engine.push_event(e)
        engine.close()
        return set(handle.runtime.matchers), match_bag(handle.matches())

    natively, called = run(plan), run(_with_evaluator(plan, "A", "callback"))
    assert natively[0] == set() and called[0] == {"A"}
    assert called[1] == natively[1] and sum(natively[1].values()) > 0


@pytest.mark.parametrize(("name", "evaluator", "why"), [
    ("B", "native", "the plan says native, but"),
    ("A", "", "the plan does not say which evaluator"),
])
def test_a_plan_the_core_cannot_follow_is_refused(name: str, evaluator: str, why: str) -> None:
    plan = _with_evaluator(plan_query(parse_query(EVALUATED)), name, evaluator)
    with pytest.raises(ValueError, match=f"the plan cannot run here: GPM {name}: {why}"):
        _native.NativeEngine().register(plan_to_json(plan), lambda *a: [])
    with pytest.raises(ValueError, match="and none is given"):
        _native.NativeEngine().register(plan_to_json(_with_evaluator(plan, "A", "callback")))
