"""The planner's splitting rules (compile.splitting, docs/decisions.md 67) hold: for random
queries and streams, running the engine on each part the plan allows, independently, and
merging gives the single engine's matches. By key, an event goes to every key its GPMs'
solutions give and each part keeps the matches of its own key; by time, chunk i reads its
range widened by the plan's overlaps and keeps the matches that start in its range."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import api
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.compile.splitting import KEY, NONE, TIME, event_keys, routing_table, split_plan
from spaseq.engine.language.query import parse_query
from tests.properties.test_differential import EXAMPLES, events, kb, queries
from tests.util import EX, QUERY_PREFIXES, match_identity


def _whole(q, evs, store) -> list[tuple]:
    return sorted((match_identity(m) for m in api.evaluate(q, evs, store)), key=repr)


def _by_key(q, evs, store, keys: tuple[str, ...]) -> list[tuple]:
    parts: dict[str, list] = {}
    for e in evs:
        for key in event_keys(q, keys, e, store):
            parts.setdefault(key, []).append(e)
    out = []
    for key, part in parts.items():
        for m in api.evaluate(q, part, store):
            b = dict(m.bindings)
            if " ".join(str(b[k]) for k in keys) == key:
                out.append(match_identity(m))
    return sorted(out, key=repr)


def _by_time(q, evs, store, cuts: list[Decimal], before: Decimal, after: Decimal) -> list[tuple]:
    bounds = [Decimal("-Infinity"), *cuts, Decimal("Infinity")]
    out = []
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        part = [e for e in evs if lo - before <= e.time <= hi + after]
        out += [match_identity(m) for m in api.evaluate(q, part, store) if lo <= m.start < hi]
    return sorted(out, key=repr)


@settings(max_examples=EXAMPLES)
@given(queries(), events(), st.data())
def test_the_parts_the_plan_allows_give_the_single_engines_matches(text, evs, data) -> None:
    q = parse_query(text)
    split = plan_query(q).split
    store = kb()
    whole = _whole(q, evs, store)
    if split.kind == KEY:
        assert _by_key(q, evs, store, split.keys) == whole, (text, split)
    elif split.kind == TIME:
        times = sorted({e.time for e in evs})
        cuts = sorted(data.draw(st.lists(st.sampled_from(times), max_size=3, unique=True), label="cuts")) if times else []
        assert _by_time(q, evs, store, cuts, split.before, split.after) == whole, (text, split, cuts)
    else:
        assert split.kind == NONE and split.why.startswith("not split")


#: GPM bodies binding the key ?k on the event, or only through the KB (a tag's teams)
KEYED = ["{{ ?s{i} :key ?k ; :val ?v{i} }}", "{{ ?s{i} :tag ?t{i} GRAPH :kb {{ ?t{i} :team ?k }} }}",
         "{{ ?s{i} :tag ?t{i} ; :val ?v{i} GRAPH :kb {{ ?t{i} :team ?k }} FILTER(?v{i} >= 1) }}"]


@st.composite
def kb_keyed_queries(draw) -> str:
    """A sequence of 2-3 GPMs binding ?k, some only through a GRAPH join, under a time window."""
    n = draw(st.integers(2, 3))
    defines = " ".join(f"DEFINE GPM G{i} ON {draw(st.sampled_from(['U1', 'U2']))} "
                       f"{draw(st.sampled_from(KEYED)).format(i=i)}" for i in range(n))
    seq = "".join(("" if i == 0 else draw(st.sampled_from([" ; ", " : "]))) + f"G{i}" for i in range(n))
    window = draw(st.sampled_from(["3 SECONDS", "6 SECONDS"]))
    return (f"{QUERY_PREFIXES}SELECT * WITHIN {window}\nFROM STREAM U1 <{EX}u1>\nFROM STREAM U2 <{EX}u2>\n"
            f"WHERE {{ SEQ({seq}) {defines} }}")


#: GPM bodies binding the key ?k on the event: constants (literals compared as terms),
#: shared subjects, OPTIONAL and FILTER (not routing patterns)
ROUTED = ["{{ ?s{i} :key ?k ; :val ?v{i} }}", "{{ ?s{i} :key ?k ; :val 1 }}", "{{ ?s{i} :key ?k . ?s{i} :tag :T1 }}",
          "{{ ?s{i} :key ?k OPTIONAL {{ ?s{i} :tag ?t{i} }} FILTER(!BOUND(?t{i})) }}", "{{ ?s{i} :key ?k ; ?p{i} ?o{i} }}"]


@settings(max_examples=EXAMPLES)
@given(st.lists(st.sampled_from(ROUTED), min_size=1, max_size=3), st.lists(st.sampled_from(["U1", "U2"]), min_size=3,
       max_size=3), events())
def test_the_native_router_gives_events_the_keys_event_keys_gives(bodies, streams, evs) -> None:
    """Spark routes with the native ``Router`` (``spaseq_gpm::routing``); ``event_keys`` is
    the rule over Python terms: the same keys for every event."""
    import pyarrow as pa

    from spaseq.engine._native import Router
    from spaseq.spark.events import string_column

    defines = " ".join(f"DEFINE GPM G{i} ON {streams[i]} {body.format(i=i)}" for i, body in enumerate(bodies))
    seq = " ; ".join(f"G{i}" for i in range(len(bodies)))
    q = parse_query(f"{QUERY_PREFIXES}SELECT * WITHIN 5 SECONDS\nFROM STREAM U1 <{EX}u1>\nFROM STREAM U2 <{EX}u2>\n"
                    f"WHERE {{ SEQ({seq}) {defines} }}")
    split = plan_query(q).split
    assert split.kind == KEY and split.keys == ("k",) and not split.kb
    router = Router(routing_table(q), list(split.keys))
    texts = ["".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in e.triples) for e in evs]
    expected = [sorted(event_keys(q, split.keys, e)) for e in evs]
    columns = (string_column(pa.array(values, pa.string())) for values in ([e.stream for e in evs], texts))
    assert router.keys(*columns) == expected


@settings(max_examples=EXAMPLES)
@given(kb_keyed_queries(), events())
def test_keys_through_a_graph_join_route_events_with_the_kb(text, evs) -> None:
    q = parse_query(text)
    split = plan_query(q).split
    store = kb()
    assert split.kind == KEY and split.keys == ("k",)
    assert split.kb == (":team" in text)  # routed with the KB when some GPM binds ?k only through it
    assert _by_key(q, evs, store, split.keys) == _whole(q, evs, store), text


def _query(seq: str, head: str = "WITHIN 10 SECONDS") -> str:
    return (f"{QUERY_PREFIXES}SELECT * {head}\nFROM STREAM S <{EX}s>\nWHERE {{ SEQ({seq}) "
            "DEFINE GPM A ON S { ?a :kind :a ; :co ?c } DEFINE GPM B ON S { ?b :kind :b ; :co ?c } "
            "DEFINE GPM C ON S { ?x :kind :c } "
            "DEFINE GPM T ON S { ?t :tag ?g GRAPH :kb { ?g :team ?c } } }")


def test_each_rule_says_why() -> None:
    cases = {
        ("A ; B", "WITHIN 10 SECONDS"): (KEY, "by key ?c (every GPM binds it)"),
        ("A : B", "WITHIN 10 SECONDS PARTITION BY ?c"): (KEY, "by key ?c (PARTITION BY)"),
        ("A , B", "WITHIN 10 SECONDS"): (TIME, "not by key: strict contiguity"),
        ("A ; B+", "WITHIN 10 SECONDS"): (TIME, "iterations of B+ follow each other by strict contiguity"),
        ("B+ ; A", "WITHIN 10 SECONDS"): (TIME, "opening the sequence, bind their variables each on its own"),
        ("A ; C", "WITHIN 10 SECONDS"): (TIME, "no variable is bound by every GPM"),
        ("C! ; A ; B", "WITHIN 10 SECONDS"): (TIME, "and before it: the head negation looks back"),
        ("A ; B", "WITHIN 3 EVENTS"): (NONE, "an EVENTS window counts every event"),
        ("A ; B", "WITHIN 10 SECONDS TUMBLING"): (NONE, "tumbling windows are anchored"),
        ("A , B", ""): (NONE, "not by time, the window is unbounded"),
        ("A ; B", "WITHIN 10 SECONDS CONSUMPTION MATCHED"): (NONE, "one triple may serve matches of two keys"),
        ("A ; B", "WITHIN 10 SECONDS SELECTION RECENT"): (KEY, "by key ?c"),
        ("A ; T", "WITHIN 10 SECONDS"): (KEY, "by key ?c (every GPM binds it, some through a GRAPH join"),
    }
    for (seq, head), (kind, why) in cases.items():
        split = split_plan(parse_query(_query(seq, head)))
        assert split.kind == kind and why in split.why, (seq, head, split)
    head_negated = split_plan(parse_query(_query("C! ; A ; B")))
    assert (head_negated.before, head_negated.after) == (Decimal(10), Decimal(10))
