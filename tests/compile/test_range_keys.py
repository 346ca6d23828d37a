"""Range keys through lines (engine/compile/range_keys.py): which FILTERs let waiting runs be
sorted by an earlier variable, with the side and the line an event takes its bound through.
That no run is left out is the differential suite's (tests/properties, bodies with lines)."""

from __future__ import annotations

import pytest

from spaseq.engine import api, reference
from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.compile.range_keys import RangeKey, find_range_key
from spaseq.engine.language.query import parse_query
from tests.util import events, match_bag, query_text


def key_of(filter_text: str) -> RangeKey | None:
    q = parse_query(query_text(
        "A ; B",
        "DEFINE GPM A ON U1 { ?t :company ?c ; :price ?p1 } "
        f"DEFINE GPM B ON U2 {{ ?u :company ?c ; :price ?p2 . FILTER({filter_text}) }}"))
    b = q.events["B"]
    filters = [e.expr for e in b.pattern.elements if isinstance(e, A.Filter)]
    return find_range_key(filters, frozenset({"t", "c", "p1"}), frozenset({"u", "c", "p2"}))


@pytest.mark.parametrize(("text", "below", "scale", "offset"), [
    ("?p2 > ?p1", True, 1.0, 0.0),
    ("?p1 >= ?p2", False, 1.0, 0.0),
    ("?p2 < ?p1 * 0.975", False, 0.975, 0.0),
    ("?p2 > 0.975 * ?p1", True, 0.975, 0.0),
    ("?p1 + 5 <= ?p2", True, 1.0, 5.0),
    ("?p2 >= ?p1 - 5", True, 1.0, -5.0),
    ("?p2 < 10 - ?p1", True, -1.0, 10.0),         # p1 < 10 - p2: runs below
    ("?p2 > (2 - ?p1) / 4", False, -0.25, 0.5),   # a negative slope turns the side over
    ("?p2 > -?p1", False, -1.0, 0.0),
    ("?p2 > +?p1 * 2", True, 2.0, 0.0),
    ('?p2 > ?p1 * "2"^^xsd:double + "1"^^xsd:float', True, 2.0, 1.0),
])
def test_lines_of_a_run_variable_are_range_keys(text: str, below: bool, scale: float,
                                               offset: float) -> None:
    key = key_of(text)
    assert key == RangeKey("p1", "p2", below, pytest.approx(scale), pytest.approx(offset))


@pytest.mark.parametrize("text", [
    "?p2 > ?p1 * ?p1",          # not a line
    "?p2 > 2 / ?p1",            # nor is c / ?r
    "?p2 > ?p1 * 0",            # a flat line sorts nothing
    "?p2 > ?p1 * ?t",           # two run variables
    '?p2 > ?p1 * "2"',          # a string is no number
    '?p2 > ?p1 * "2"^^xsd:int',  # derived types are left alone
    "?p2 > ?p1 * 1e400",        # not finite
    "?p2 + 1 > ?p1",            # the event's side is a variable alone
    "?p2 = ?p1 * 2",            # equality is the partitions' job
])
def test_other_comparisons_are_not(text: str) -> None:
    assert key_of(text) is None


# Prices on a grid that puts many pairs exactly on each line (and float/double spellings).
GRID = ['"0"', "0.5", "1", "1.5", "2", "2.5", "3", "3.5", "4", "5", "6", "1.5E0",
        '"0.5"^^xsd:float', '"3"^^xsd:double', "-2"]


@pytest.mark.parametrize("text", [
    "?p2 >= ?p1 * 0.5 + 1", "?p2 > ?p1 * 0.5 + 1", "?p2 <= ?p1 * 0.3 / 0.1",
    "(3 - ?p1) / 2 >= ?p2", "?p2 < 10 - ?p1 * 2", '?p2 >= ?p1 * "0.1"^^xsd:float * 10',
    "?p2 >= -?p1", "?p2 <= ?p1 - 1.5",
])
def test_no_run_on_a_line_is_left_out(text: str) -> None:
    """Every pair of grid prices, A's then B's: the engine with the range index finds exactly
    the reference's matches (a bound off by a rounding would lose the pairs on the line)."""
    q = parse_query(query_text(
        "A : B",
        "DEFINE GPM A ON U1 { ?t :company ?c ; :price ?p1 } "
        f"DEFINE GPM B ON U2 {{ ?u :company ?c ; :price ?p2 . FILTER({text}) }}"))
    plan = plan_query(q)
    assert plan.run_indexes[1].range is not None, "the step is range-sorted"
    specs = [("u1", i + 1, f":a{i} :company :c1 ; :price {p} .") for i, p in enumerate(GRID)]
    specs += [("u2", len(GRID) + i + 1, f":b{i} :company :c1 ; :price {p} .") for i, p in enumerate(GRID)]
    evs = events(*specs)
    expected = match_bag(reference.evaluate(q, evs, None, end_of_input=True))
    assert sum(expected.values()) > 10
    for options in (EngineOptions(), EngineOptions(range_index=False)):
        engine = api.Engine(options=options)
        handle = engine.register(q)
        for e in evs:
            engine.push_event(e)
        engine.close()
        assert match_bag(handle.matches()) == expected, options
