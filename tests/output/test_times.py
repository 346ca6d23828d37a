"""Times as the input wrote them (``output/times.py``, docs/decisions.md 43): the xsd:dateTime
spelling (exact, UTC, any year), the per-match rule, and the Python API's ways of stamping
an event (numbers, datetimes, literals) kept through a snapshot."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pyoxigraph
import pytest
import rdflib
from hypothesis import given
from hypothesis import strategies as st

from spaseq.engine.api import Engine
from spaseq.engine.errors import UsageError
from spaseq.engine.events import Event
from spaseq.engine.matches import Match, Row, Taken
from spaseq.engine.output.times import dated, input_dated
from spaseq.engine.values.timestamps import datetime_literal, datetime_text, to_seconds
from spaseq.engine.vocab import XSD_DATETIME
from tests.util import render

EX = "http://ex.org/"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
       st.integers(min_value=0, max_value=999))
def test_datetime_text_is_the_utc_instant_to_the_nanosecond(moment, nanos) -> None:
    moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - EPOCH
    seconds = Decimal(delta.days * 86_400 + delta.seconds) + Decimal(delta.microseconds * 1000 + nanos).scaleb(-9)
    text = datetime_text(seconds)
    fraction = f"{delta.microseconds * 1000 + nanos:09d}".rstrip("0")
    assert text == moment.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0") + (f".{fraction}" if fraction else "") + "Z"
    assert to_seconds(datetime_literal(seconds)) == seconds  # read back exactly


def test_datetime_text_beyond_python_datetimes() -> None:
    assert datetime_text(Decimal(-62167219200)) == "0000-01-01T00:00:00Z"
    assert datetime_text(Decimal("-62198755200.5")) == "-0002-12-31T23:59:59.5Z"
    assert datetime_text(Decimal(253402300800)) == "10000-01-01T00:00:00Z"


def _match(*stamps: bool) -> Match:
    taken = tuple(Taken("A", Event(EX + "s", Decimal(i + 1), (), i, dated=d)) for i, d in enumerate(stamps))
    return Match((), taken, Decimal(1), Decimal(len(stamps)))


def test_a_match_is_dated_when_every_event_it_took_was() -> None:
    assert input_dated(_match(True, True))
    assert not input_dated(_match(True, False))
    assert not input_dated(_match())  # no event: nothing says dateTime
    assert dated(_match(False), "dateTime") and not dated(_match(True), "epoch")
    rows = [Row({}, _match(True, True)), Row({}, _match(False, True))]
    assert render("csv", rows, [], with_time=True).splitlines()[1:] == [
        "1970-01-01T00:00:02Z,1970-01-01T00:00:01Z", "2,1"]
    jsonl = [json.loads(line) for line in render("jsonl", rows, []).splitlines()]
    assert jsonl[0]["time_iso"] == "1970-01-01T00:00:02Z" and "time_iso" not in jsonl[1]
    assert "time_iso" not in render("jsonl", rows, [], time_format="epoch")


QUERY = f"""PREFIX : <{EX}>
SELECT ?a ?b WITHIN 1 HOURS FROM STREAM S <{EX}s>
WHERE {{ SEQ(A; B) DEFINE GPM A ON S {{ :x :a ?a }} DEFINE GPM B ON S {{ :x :b ?b }} }}"""


def _triples(p: str) -> list[pyoxigraph.Triple]:
    return [pyoxigraph.Triple(pyoxigraph.NamedNode(EX + "x"), pyoxigraph.NamedNode(EX + p), pyoxigraph.Literal("1"))]


def _times(engine: Engine) -> list[tuple]:
    rows = engine.handles[0].rows()
    return [(r.time, r.start, input_dated(r.match)) for r in rows]


@pytest.mark.parametrize("first, second, expected", [
    (datetime(2024, 1, 1, 10, tzinfo=timezone.utc), datetime(2024, 1, 1, 11, 30, tzinfo=timezone(timedelta(hours=1))),
     (Decimal(1704105000), Decimal(1704103200), True)),
    (pyoxigraph.Literal("2024-01-01T10:00:00Z", datatype=XSD_DATETIME),
     rdflib.Literal("2024-01-01T10:30:00.5Z", datatype=rdflib.XSD.dateTime),
     (Decimal("1704105000.5"), Decimal(1704103200), True)),
    (pyoxigraph.Literal("2024-01-01T10:00:00Z", datatype=XSD_DATETIME), 1704105000,
     (Decimal(1704105000), Decimal(1704103200), False)),
    (rdflib.Literal(5), "6.5", (Decimal("6.5"), Decimal(5), False)),
])
def test_push_takes_numbers_datetimes_and_literals(first, second, expected) -> None:
    engine = Engine()
    engine.register(QUERY)
    engine.push(EX + "s", first, _triples("a"))
    engine.push(EX + "s", second, _triples("b"))
    assert _times(engine) == [expected]


def test_push_refuses_a_naive_datetime_and_a_non_time_literal() -> None:
    engine = Engine()
    engine.register(QUERY)
    with pytest.raises(UsageError, match="no time zone"):
        engine.push(EX + "s", datetime(2024, 1, 1), _triples("a"))
    with pytest.raises(UsageError, match="bad time"):
        engine.push(EX + "s", pyoxigraph.Literal("soon"), _triples("a"))
    engine.advance_to(datetime(2024, 1, 1, 10, tzinfo=timezone.utc))  # a heartbeat takes them too
    with pytest.raises(UsageError, match="no time zone"):
        engine.advance_to(datetime(2024, 1, 1, 11))


def test_a_snapshot_keeps_how_events_were_stamped() -> None:
    """The event a partial match holds keeps its form through snapshot and restore."""
    engine = Engine()
    engine.register(QUERY)
    engine.push(EX + "s", datetime(2024, 1, 1, 10, tzinfo=timezone.utc), _triples("a"))
    restored = Engine.restore(engine.snapshot())
    restored.push(EX + "s", datetime(2024, 1, 1, 10, 5, tzinfo=timezone.utc), _triples("b"))
    assert _times(restored) == [(Decimal(1704103500), Decimal(1704103200), True)]
