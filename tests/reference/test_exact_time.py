"""Time is exact (issue 11, defect 1): timestamps and window lengths are Decimal seconds, so
window membership and tumbling boundaries do not depend on binary floating point. Each case
runs in both evaluators and names the exact rows expected."""

from __future__ import annotations

from decimal import Decimal

import pyoxigraph as ox
import pytest

from spaseq.engine import api, reference
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.errors import QueryError
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.values.timestamps import to_seconds
from tests.util import EX, events, query_text

DEFS = "DEFINE GPM A ON U1 { ?a :p ?x } DEFINE GPM B ON U1 { ?b :q ?y }"
XSD_DATETIME = ox.NamedNode("http://www.w3.org/2001/XMLSchema#dateTime")
BOTH = [
    ("reference", lambda q, evs: reference.evaluate(q, evs)),
    ("engine", lambda q, evs: api.evaluate(q, evs)),
    ("engine-plain", lambda q, evs: api.evaluate(q, evs, None, EngineOptions(
        push_windows=False, partition_runs=False, compiled_gpm=False))),
]


def _rows(matches) -> list[tuple[str, ...]]:
    return [tuple(f"{t.atom}@{t.event.time}" for t in m.taken) for m in matches]


def _query(within: str):
    return parse_query(query_text("A : B", DEFS, within=within, streams=("u1",)))


@pytest.mark.parametrize("name, run", BOTH, ids=[b[0] for b in BOTH])
def test_numeric_stamps_on_a_millisecond_bound(name, run) -> None:
    """0.4 - 0.1 is 0.30000000000000004 in binary floating point: no match there."""
    evs = events(("u1", "0.1", ":e1 :p 1 ."), ("u1", "0.4", ":e2 :q 1 ."), ("u1", "0.400000001", ":e3 :q 2 ."))
    assert _rows(run(_query("300 MILLISECONDS"), evs)) == [("A@0.1", "B@0.4")]


@pytest.mark.parametrize("name, run", BOTH, ids=[b[0] for b in BOTH])
def test_datetime_stamps_on_a_millisecond_bound(name, run) -> None:
    t1, t2, t3 = (to_seconds(ox.Literal(f"2024-01-01T10:00:{s}Z", datatype=XSD_DATETIME))
                  for s in ("20.1", "20.3", "20.300000001"))
    assert (t1, t2) == (Decimal("1704103220.1"), Decimal("1704103220.3"))
    evs = [Event(EX + "u1", t, ev.triples, i) for i, (t, ev) in
           enumerate(zip((t1, t2, t3), events(("u1", 0, ":e1 :p 1 ."), ("u1", 0, ":e2 :q 1 ."),
                                               ("u1", 0, ":e3 :q 2 .")), strict=True))]
    assert _rows(run(_query("200 MILLISECONDS"), evs)) == [("A@1704103220.1", "B@1704103220.3")]


@pytest.mark.parametrize("name, run", BOTH, ids=[b[0] for b in BOTH])
def test_tumbling_boundary_is_exact(name, run) -> None:
    """Windows [0, 0.1), [0.1, 0.2), [0.2, 0.3), [0.3, 0.4): 0.25 and 0.3 are in different
    windows (0.3 / 0.1 is 2.9999999999999996 in floating point); 0.3 and 0.35 share one."""
    evs = events(("u1", "0", ":e0 :r 0 ."), ("u1", "0.25", ":e1 :p 1 ."), ("u1", "0.3", ":e2 :q 1 ."),
                 ("u1", "0.3", ":e3 :p 2 ."), ("u1", "0.35", ":e4 :q 2 ."))
    assert _rows(run(_query("100 MILLISECONDS TUMBLING"), evs)) == [("A@0.3", "B@0.35")]


def test_windows_and_times_are_decimal_end_to_end() -> None:
    q = _query("300 MILLISECONDS")
    assert q.window.amount == Decimal("0.3") and isinstance(q.window.amount, Decimal)
    (m,) = api.evaluate(q, events(("u1", 0.1, ":e1 :p 1 ."), ("u1", 0.4, ":e2 :q 1 .")))
    assert (m.start, m.time) == (Decimal("0.1"), Decimal("0.4"))  # floats read as they print


def test_a_window_finer_than_a_nanosecond_is_refused() -> None:
    with pytest.raises(QueryError, match="finer than a nanosecond"):
        _query("0.0000001 MILLISECONDS")
