"""``spark.order``: the bytes the Spark merge sorts by give the single engine's release order.
For random queries and streams, the matches of every part the plan allows (as
``tests/compile/test_splitting.py`` cuts them), each keyed by ``order_key``, sorted, are
exactly the single engine's matches in the order it released them; and ``rank`` compares as
``match_order``'s tuples do. No Spark here: the order is plain Python."""

from __future__ import annotations

from decimal import Decimal
from functools import cmp_to_key

from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import api
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.compile.splitting import KEY, TIME, event_keys
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import match_order
from spaseq.spark.found import found
from spaseq.spark.order import clock_close, order_key, rank
from tests.properties.test_differential import EXAMPLES, events, kb, queries
from tests.util import match_identity


def _parts(q, evs, split, cuts):
    """The matches each part keeps (as ``spark.matching`` keeps them)."""
    if split.kind == KEY:
        parts: dict[str, list] = {}
        for e in evs:
            for key in event_keys(q, split.keys, e, kb()):
                parts.setdefault(key, []).append(e)
        for key, part in parts.items():
            for m in api.evaluate(q, part, kb()):
                bound = dict(m.bindings)
                if " ".join(str(bound[k]) for k in split.keys) == key:
                    yield m
    else:
        bounds = [Decimal("-Infinity"), *cuts, Decimal("Infinity")]
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            part = [e for e in evs if lo - split.before <= e.time <= hi + split.after]
            yield from (m for m in api.evaluate(q, part, kb()) if lo <= m.start < hi)


@settings(max_examples=EXAMPLES)
@given(queries(), events(), st.data())
def test_merged_parts_sorted_by_order_key_come_in_the_single_engines_order(text, evs, data) -> None:
    q = parse_query(text)
    split = plan_query(q).split
    if split.kind not in (KEY, TIME):
        return  # one part: its release order is the order (``released``)
    times = sorted({e.time for e in evs})
    cuts = sorted(data.draw(st.lists(st.sampled_from(times), max_size=3, unique=True), label="cuts")) if times else []
    merged = sorted(_parts(q, evs, split, cuts), key=lambda m: order_key(found(m), clock_close(q, found(m))))
    single = api.evaluate(q, evs, kb())
    assert [match_identity(m) for m in merged] == [match_identity(m) for m in single], (text, split, cuts)


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


@settings(max_examples=EXAMPLES)
@given(queries(), events())
def test_rank_compares_as_match_order(text, evs) -> None:
    matches = api.evaluate(parse_query(text), evs, kb())
    for a in matches:
        for b in matches:
            by_tuple = _sign((match_order(a) > match_order(b)) - (match_order(a) < match_order(b)))
            by_bytes = _sign((rank(found(a)) > rank(found(b))) - (rank(found(a)) < rank(found(b))))
            assert by_tuple == by_bytes, (a, b)


def test_a_string_sorts_before_its_extensions_and_nul_stays_in_order() -> None:
    from spaseq.spark.order import _text

    words = ["", "a", "a\x00", "a\x00b", "a\x01", "ab", "b", "é"]
    assert sorted(words, key=cmp_to_key(lambda x, y: (_text(x) > _text(y)) - (_text(x) < _text(y)))) == sorted(words)
