"""The run functions inside GPM bodies (spaseq:eventTime/eventStream/runStart and the Kleene+
aggregates) in whole queries: hand-checked matches from the reference evaluator and the
incremental engine (compiled and pyoxigraph paths), static errors for bad calls, and a
differential hypothesis test of engine against reference on random streams."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import api, reference
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.errors import QueryError
from spaseq.engine.language.query import parse_query
from tests.properties.test_differential import check_against_reference, events, options
from tests.util import EX, QUERY_PREFIXES, query_text
from tests.util import events as make_events

FN = "PREFIX spaseq: <https://w3id.org/spaseq#>\n"
EXAMPLES = int(os.environ.get("SPASEQ_RUN_FUNCTION_EXAMPLES", "60"))


def run_all(text: str, evs) -> list[tuple]:
    """Matches as (events taken by seq, projected bindings as text); every evaluator agrees."""
    q = parse_query(FN + text)
    results = [
        reference.evaluate(q, evs),
        api.evaluate(q, evs),
        api.evaluate(q, evs, options=EngineOptions(compiled_gpm=False)),
        api.evaluate(q, evs, options=EngineOptions(share_context_free=False, partition_runs=False,
                                                  index_streams=False)),
    ]
    shown = [
        [(tuple(t.event.seq for t in m.taken),
          {k: v.value for k, v in m.bindings if k in (q.match.variables or dict(m.bindings))})
         for m in ms]
        for ms in results
    ]
    for other in shown[1:]:
        assert sorted(map(repr, other)) == sorted(map(repr, shown[0]))
    return shown[0]


INCREASING = query_text(
    "O ; W+ ; R",
    'DEFINE GPM O ON U1 { ?o :opens ?acct } '
    'DEFINE GPM W ON U1 { ?w :acct ?acct ; :amount ?amt '
    '                     FILTER(?amt > COALESCE(spaseq:max("amt"), 0)) } '
    'DEFINE GPM R ON U2 { ?r :reviews ?acct FILTER(spaseq:count("amt") >= 3) }',
    select="?acct ?amt",
)


def withdrawals(third: int):
    return make_events(
        ("u1", 1, ":o1 :opens :A1 ."),
        ("u1", 2, ":w1 :acct :A1 ; :amount 10 ."),
        ("u1", 3, ":w2 :acct :A1 ; :amount 20 ."),
        ("u1", 4, f":w3 :acct :A1 ; :amount {third} ."),
        ("u2", 5, ":r1 :reviews :A1 ."),
    )


def test_withdrawals_keep_increasing() -> None:
    """Three withdrawals, each larger than every earlier one, then a review: one match (the
    runs with one or two withdrawals fail the count)."""
    assert run_all(INCREASING, withdrawals(30)) == [
        ((0, 1, 2, 3, 4), {"acct": EX + "A1", "amt": "30"})
    ]


def test_a_smaller_withdrawal_breaks_the_run() -> None:
    """15 < 20: the third iteration fails, and later iterations attach by strict contiguity,
    so no run reaches three withdrawals."""
    assert run_all(INCREASING, withdrawals(15)) == []


READINGS = query_text(
    "T+ ; A",
    'DEFINE GPM T ON U1 { ?s :temp ?temp } '
    'DEFINE GPM A ON U2 { ?a :alarm ?z FILTER(spaseq:count("temp") >= 3 && spaseq:avg("temp") > 22) }',
    select="?temp ?z",
)


def test_at_least_three_readings_averaging_above_22() -> None:
    """Runs of readings ending before the alarm: [21 25 19] averages 21.67 (no), [21 25 19 30]
    23.75 and [25 19 30] 24.67 (yes); shorter runs have fewer than three readings."""
    evs = make_events(
        ("u1", 1, ":s :temp 21 ."), ("u1", 2, ":s :temp 25 ."), ("u1", 3, ":s :temp 19 ."),
        ("u1", 4, ":s :temp 30 ."), ("u2", 5, ':a :alarm "on" .'),
    )
    assert sorted(run_all(READINGS, evs)) == [
        ((0, 1, 2, 3, 4), {"temp": "30", "z": "on"}),
        ((1, 2, 3, 4), {"temp": "30", "z": "on"}),
    ]


def test_event_time_stream_and_run_start() -> None:
    """B must come on u2 at most 2 s after the run's start (A's time)."""
    text = query_text(
        "A : B",
        "DEFINE GPM A ON U1 { ?a :p ?x } "
        "DEFINE GPM B ON U2 { ?b :q ?x FILTER(spaseq:eventTime() - spaseq:runStart() <= 2 "
        "&& spaseq:eventStream() = :u2 && spaseq:runStart() = ?x) }",
        select="?x ?b",
    )
    evs = make_events(
        ("u1", 1, ":a1 :p 1 ."), ("u1", 2, ":a2 :p 2 ."), ("u2", 3, ":b1 :q 1 ."),
        ("u2", 4, ":b2 :q 2 ."), ("u2", 5, ":b3 :q 2 ."),
    )
    assert sorted(run_all(text, evs)) == [
        ((0, 2), {"x": "1", "b": EX + "b1"}),
        ((1, 3), {"x": "2", "b": EX + "b2"}),
    ]


def test_run_functions_in_a_negated_atom_see_the_prefix() -> None:
    """A quiet period: no N event within 2 s of the run's start may come between A and B."""
    text = query_text(
        "A ; N! ; B",
        "DEFINE GPM A ON U1 { ?a :start ?k } "
        "DEFINE GPM N ON U1 { ?n :noise ?k FILTER(spaseq:eventTime() - spaseq:runStart() <= 2) } "
        "DEFINE GPM B ON U2 { ?b :end ?k }",
        select="?a ?b",
    )
    evs = make_events(
        ("u1", 1, ":a1 :start :K ."), ("u1", 2, ":a2 :start :K ."), ("u1", 4, ":n1 :noise :K ."),
        ("u2", 5, ":b1 :end :K ."),
    )
    # noise at 4 is 3 s after a1 (allowed) but 2 s after a2 (forbidden)
    assert run_all(text, evs) == [((0, 3), {"a": EX + "a1", "b": EX + "b1"})]


def test_run_functions_in_bodies_only_pyoxigraph_evaluates() -> None:
    """OPTIONAL and BIND bodies go through pyoxigraph with per-run custom functions."""
    text = query_text(
        "T+ , E",
        'DEFINE GPM T ON U1 { ?s :temp ?temp } '
        'DEFINE GPM E ON U1 { ?e :end ?z OPTIONAL { ?e :note ?n } '
        'BIND(spaseq:sum("temp") AS ?total) FILTER(?total >= 40) }',
        select="?total",
        streams=("u1",),
    )
    evs = make_events(
        ("u1", 1, ":s :temp 15 ."), ("u1", 2, ":s :temp 25 ."), ("u1", 3, ":e :end 1 ."),
    )
    assert run_all(text, evs) == [((0, 1, 2), {"total": "40"})]


@pytest.mark.parametrize("body,message", [
    ('?s :temp ?temp FILTER(spaseq:sum(?temp) > 3)', 'spaseq:sum takes the name of a Kleene+ variable as a string, e.g. spaseq:sum("temp")'),
    ('?s :temp ?temp FILTER(spaseq:count("tmp") > 3)', 'spaseq:count("tmp"): no Kleene+ atom\'s GPM binds ?tmp'),
    ("?s :temp ?temp FILTER(spaseq:evenTime() > 3)", "spaseq:evenTime is not a spaseq function"),
    ("?s :temp ?temp FILTER(spaseq:runStart(1) > 3)", "spaseq:runStart takes 0 arguments, got 1"),
    ("?s :temp ?temp FILTER(spaseq:ordered(?s))", "spaseq:ordered takes at least 2 arguments, got 1"),
])
def test_bad_calls_are_query_errors(body: str, message: str) -> None:
    text = FN + query_text("T+ ; A", "DEFINE GPM T ON U1 { ?s :temp ?temp } "
                           f"DEFINE GPM A ON U2 {{ {body} }}")
    with pytest.raises(QueryError) as err:
        parse_query(text)
    assert message in str(err.value)
    assert ":" in str(err.value).split(" ")[0]  # FILE:LINE:COLUMN


# ---------------------------------------------------------------- differential

RUN_BODIES = [
    '{{ ?s{i} :val ?v{i} FILTER(?v{i} > COALESCE(spaseq:max("{kv}"), -1)) }}',
    '{{ ?s{i} :val ?v{i} FILTER(spaseq:count("{kv}") >= {c}) }}',
    "{{ ?s{i} :val ?v{i} FILTER(spaseq:eventTime() - spaseq:runStart() <= {c}) }}",
    '{{ ?s{i} :key ?k ; :val ?v{i} FILTER(spaseq:sum("{kv}") > {c} || spaseq:eventStream() = :u2) }}',
    '{{ ?s{i} :val ?v{i} FILTER(?v{i} >= spaseq:avg("{kv}")) }}',
    '{{ ?s{i} :val ?v{i} FILTER(?v{i} != spaseq:last("{kv}") && spaseq:min("{kv}") < 3) }}',
    '{{ ?s{i} :val ?v{i} FILTER(?v{i} >= COALESCE(spaseq:first("{kv}"), 0)) }}',
    '{{ ?s{i} :val ?v{i} OPTIONAL {{ ?s{i} :tag ?t{i} }} FILTER(spaseq:count("{kv}") != {c}) }}',
    '{{ ?s{i} :val ?v{i} BIND(spaseq:count("{kv}") AS ?n{i}) FILTER(?n{i} < 3) }}',
    '{{ ?s{i} :val ?v{i} FILTER(spaseq:count("{kv}") < 4) }}',
    "{{ ?s{i} :val ?v{i} FILTER(spaseq:eventTime() >= spaseq:runStart()) }}",
    "{{ ?s{i} :val ?v{i} }}",
    "{{ ?s{i} :val ?v{i} }}",
]


@st.composite
def run_queries(draw) -> str:
    """A sequence with one Kleene+ atom whose variable ?v<k> the other bodies aggregate."""
    n = draw(st.integers(1, 3))
    k = draw(st.integers(0, n - 1))
    atoms, defines = [], []
    for i in range(n):
        body = draw(st.sampled_from(RUN_BODIES)).format(i=i, kv=f"v{k}", c=draw(st.integers(0, 3)))
        defines.append(f"DEFINE GPM G{i} ON {draw(st.sampled_from(['U1', 'U2']))} {body}")
        kind = "+" if i == k else draw(st.sampled_from(["", "", "!"] if 0 < i < n - 1 or i == n - 1 and i else [""]))
        if i:
            atoms.append(draw(st.sampled_from([" , ", " ; ", " : "])))
        atoms.append(f"G{i}{kind}")
    window = draw(st.sampled_from(["", "WITHIN 3 SECONDS", "WITHIN 4 EVENTS", "WITHIN 5 SECONDS TUMBLING"]))
    return (f"{FN}{QUERY_PREFIXES}SELECT * {window}\nFROM STREAM U1 <{EX}u1>\nFROM STREAM U2 <{EX}u2>\n"
            f"WHERE {{ SEQ({''.join(atoms)}) {' '.join(defines)} }}")


@settings(max_examples=EXAMPLES, deadline=None)
@given(run_queries(), events(), options, st.booleans())
def test_engine_equals_reference_with_run_functions(text, evs, opts, end_of_input) -> None:
    check_against_reference(text, evs, opts, end_of_input)


def test_run_functions_through_the_rdflib_processor() -> None:
    """The rdflib processor runs the same engine: run functions need no registration there."""
    from rdflib import Dataset

    ds = Dataset()
    ds.parse(format="trig", data=f"""@prefix : <{EX}> . @prefix prov: <http://www.w3.org/ns/prov#> .
        :e1 prov:generatedAtTime 1 . :e2 prov:generatedAtTime 2 . :e3 prov:generatedAtTime 3 .
        :e1 {{ :a :v 2 }} :e2 {{ :a :v 3 }} :e3 {{ :b :w 1 }}""")
    text = FN + f"""PREFIX : <{EX}>
        SELECT ?v ?total FROM STREAM S <{EX}s>
        WHERE {{ SEQ(A+; B)
          DEFINE GPM A ON S {{ ?a :v ?v }}
          DEFINE GPM B ON S {{ ?b :w ?w BIND(spaseq:sum("v") AS ?total) FILTER(?total > 2) }} }}"""
    result = ds.query(text, processor="spaseq")
    rows = sorted((m.start, m.time, int(row.v), int(row.total)) for row, m in zip(result, result.bindings, strict=True))
    assert rows == [(1.0, 3.0, 3, 5), (2.0, 3.0, 3, 3)]
