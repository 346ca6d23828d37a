"""The incremental engine against the reference evaluator on random streams and random
queries: every operator, nesting, every window kind, stateful FILTERs across GPMs, join
keys (partitioned runs), KB GRAPH clauses and a body only pyoxigraph evaluates. Matches are
compared as bags of (events per atom with iteration bindings, mapping, start, end); every
combination of optimisation switches must give the same bag."""

from __future__ import annotations

import os

import pyoxigraph
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import api, reference
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import project
from tests.util import EX, QUERY_PREFIXES, ev
from tests.util import match_bag as bag

EXAMPLES = int(os.environ.get("SPASEQ_DIFF_EXAMPLES", "150"))

BODIES = [
    "{{ ?s{i} :key ?k ; :val ?v{i} }}",
    "{{ ?s{i} :val ?v{i} }}",
    "{{ ?s{i} :val ?v{i} }}",
    "{{ ?s{i} :key ?k ; :val ?v{i} FILTER(?v{i} >= {c}) }}",
    "{{ ?s{i} :val ?v{i} FILTER(?v{i} > ?v{j}) }}",
    "{{ ?s{i} :key ?k ; :val ?v{i} FILTER(?v{j} >= ?v{i}) }}",
    "{{ ?s{i} :key ?k ; :val ?v{i} FILTER(?v{i} != ?v{j}) }}",
    "{{ ?s{i} :tag ?t{i} }}",
    "{{ ?s{i} :key ?k GRAPH :kb {{ ?k :owner ?o{i} }} }}",
    "{{ ?s{i} :val ?v{i} OPTIONAL {{ ?s{i} :tag ?t{i} }} FILTER(!BOUND(?t{i}) || ?v{i} < 3) }}",
]


# mostly small integers; sometimes other numerics, NaN or a string (range-index corners)
VALUES = st.one_of(
    st.integers(0, 4).map(str),
    st.sampled_from(['2.5', '"2"^^xsd:double', '"NaN"^^xsd:double', '"3"', '1e0', '"2"^^xsd:float']),
)


@st.composite
def events(draw):
    n = draw(st.integers(min_value=0, max_value=14))
    out = []
    for i in range(n):
        stream = draw(st.sampled_from(["u1", "u2"]))
        time = draw(st.integers(min_value=0, max_value=7))
        parts = []
        if draw(st.integers(0, 4)):
            parts.append(f":e{i} :key :K{draw(st.integers(0, 1))} .")
        parts.append(f":e{i} :val {draw(VALUES)} .")
        if draw(st.booleans()):
            parts.append(f":e{i} :tag :T{draw(st.integers(0, 1))} .")
        out.append(ev(stream, time, " ".join(parts), seq=i))
    return sorted(out, key=lambda e: (e.time, e.seq))


@st.composite
def queries(draw, lazy_prefix: bool = False):
    """A random query; ``lazy_prefix``: it starts with 2-3 plain GPMs joined by ':' under a
    sliding time window or none (what the lazy chain evaluates lazily)."""
    counter = iter(range(100))
    defines: list[str] = []

    def gpm() -> str:
        i = next(counter)
        body = draw(st.sampled_from(BODIES)).format(i=i, j=max(i - 1, 0), c=draw(st.integers(0, 3)))
        stream = draw(st.sampled_from(["U1", "U2"]))
        defines.append(f"DEFINE GPM G{i} ON {stream} {body}")
        return f"G{i}"

    def operand(depth: int, group: bool = False) -> str:
        if group or (depth > 0 and draw(st.integers(0, 3)) == 0):
            sym = draw(st.sampled_from([" & ", " | "]))
            return "(" + sym.join(operand(depth - 1) for _ in range(2)) + ")"
        return gpm()

    n = draw(st.sampled_from([1, 2, 2, 2, 3, 3, 4]))
    parts = []
    first = 0
    if lazy_prefix:
        first = draw(st.integers(2, 3))
        parts.append(" : ".join(gpm() for _ in range(first)))
        n = first + draw(st.integers(0, 2))
    for k in range(first, n):
        kind = draw(st.sampled_from(["plain", "plain", "group", "+", "?", "!"]))
        if k == 0 and kind in ("?", "!"):
            kind = "plain"
        if k == n - 1 and kind == "?":
            kind = "plain"
        atom = operand(1, group=True) if kind == "group" else gpm() + ("" if kind == "plain" else kind)
        if k:
            parts.append(draw(st.sampled_from([" , ", " ; ", " : "])))
        parts.append(atom)
    window = draw(st.sampled_from(
        ["", "WITHIN 3 SECONDS", "WITHIN 6 SECONDS"] if lazy_prefix else
        ["", "WITHIN 3 SECONDS", "WITHIN 6 SECONDS", "WITHIN 4 EVENTS", "WITHIN 5 SECONDS TUMBLING",
         "WITHIN 3 EVENTS TUMBLING"]))
    text = (f"{QUERY_PREFIXES}SELECT * {window}\nFROM STREAM U1 <{EX}u1>\nFROM STREAM U2 <{EX}u2>\n"
            f"WHERE {{ SEQ({''.join(parts)}) {' '.join(defines)} }}")
    return text


def kb() -> pyoxigraph.Store:
    store = pyoxigraph.Store()
    g = pyoxigraph.NamedNode(EX + "kb")
    for k, owner in (("K0", "alice"), ("K1", "bob"), ("K1", "carol")):
        store.add(pyoxigraph.Quad(pyoxigraph.NamedNode(EX + k), pyoxigraph.NamedNode(EX + "owner"),
                                  pyoxigraph.Literal(owner), g))
    return store


options = st.builds(EngineOptions, **{f: st.booleans() for f in (
    "push_windows", "index_streams", "partition_runs", "range_index", "share_context_free", "prefilter",
    "cost_ordered_disjunction", "lazy_conjunction", "compiled_gpm", "lazy_chain")})


@settings(max_examples=EXAMPLES)
@given(queries(), events(), options, st.booleans())
def test_engine_equals_reference(text, evs, opts, end_of_input) -> None:
    q = parse_query(text)
    store = kb()
    expected = bag(reference.evaluate(q, evs, store, end_of_input=end_of_input))
    got = bag(api.evaluate(q, evs, store, opts, end_of_input=end_of_input))
    assert got == expected, text


@settings(max_examples=EXAMPLES)
@given(queries(lazy_prefix=True), events(), st.booleans(), st.booleans())
def test_lazy_chain_equals_reference(text, evs, partition_runs, end_of_input) -> None:
    """Queries the lazy chain applies to (when their bodies compile), against the reference."""
    q = parse_query(text)
    store = kb()
    expected = bag(reference.evaluate(q, evs, store, end_of_input=end_of_input))
    opts = EngineOptions(lazy_chain=True, partition_runs=partition_runs)
    got = bag(api.evaluate(q, evs, store, opts, end_of_input=end_of_input))
    assert got == expected, text


def _identity(m) -> tuple:
    return (tuple((t.atom, t.event.seq, t.bindings) for t in m.taken), m.bindings, m.start, m.time)


@settings(max_examples=EXAMPLES)
@given(queries(), events(), options, st.booleans())
def test_engine_emits_in_the_reference_order(text, evs, opts, end_of_input) -> None:
    """The order is total (matches.match_order) and the same in both: match for match, and
    so DISTINCT keeps the same representative of each row."""
    q = parse_query(text)
    store = kb()
    expected = reference.evaluate(q, evs, store, end_of_input=end_of_input)
    got = api.evaluate(q, evs, store, opts, end_of_input=end_of_input)
    assert [_identity(m) for m in got] == [_identity(m) for m in expected], text
    vars_ = sorted({v for m in expected for v, _ in m.bindings})[:2]
    rows = [(r.bindings, _identity(r.match)) for r in project(got, vars_, distinct=True)]
    assert rows == [(r.bindings, _identity(r.match)) for r in project(expected, vars_, distinct=True)]
