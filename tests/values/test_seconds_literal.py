"""Times as xsd:decimal literals (engine/values/timestamps.seconds_literal): one canonical
spelling, and the same RDF term from every output that writes a time (the SPARQL JSON
results writer, matches as RDF, the spaseq extension functions)."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode

from spaseq.engine.events import Event
from spaseq.engine.functions.registry import Environment, call
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.matches import Match, Row, Taken
from spaseq.engine.output.derived import result_graph
from spaseq.engine.output.match_rdf import EVENT_TIME, START, TIME
from spaseq.engine.values.timestamps import seconds_literal, to_seconds
from spaseq.engine.vocab import SPASEQ_NS, XSD_DECIMAL, XSD_INTEGER
from tests.util import render

#: the XSD 1.1 canonical decimal (pyoxigraph's): no exponent, no trailing zero, no point if integral
CANONICAL = re.compile(r"0|-?[1-9][0-9]*|-?(0|[1-9][0-9]*)\.[0-9]*[1-9]")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (10.0, "10"),
        (10, "10"),
        (0.5, "0.5"),
        (-3.25, "-3.25"),
        (0, "0"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (0.001, "0.001"),
        (0.00005, "0.00005"),
        (1.5e-7, "0.00000015"),
        (1e20, "100000000000000000000"),
        (1762000000.25, "1762000000.25"),
        (1704103200.0, "1704103200"),
        (Decimal("1.500"), "1.5"),
        (Decimal("1E+2"), "100"),
    ],
)
def test_spelling(seconds, text):
    assert seconds_literal(seconds) == Literal(text, datatype=XSD_DECIMAL)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_is_spelled_canonically_and_exactly(seconds):
    text = seconds_literal(seconds).value
    assert CANONICAL.fullmatch(text), text
    assert float(text) == seconds
    assert Decimal(text) == Decimal(repr(seconds))
    if abs(seconds) < 1e18 and Decimal(repr(seconds)).as_tuple().exponent >= -9:  # a time's range
        assert to_seconds(seconds_literal(seconds)) == Decimal(repr(seconds))


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -math.inf])
def test_no_literal_for_what_is_not_a_time(seconds):
    with pytest.raises(ValueError):
        seconds_literal(seconds)


STREAM = "http://ex.org/s"
TIMES = [10.0, 0.5, 3.25, 60.0, 1704103200.0, 1704105000.5, 1762000000.25]


def _match(start: float, time: float) -> Match:
    taken = (Taken("A", Event(STREAM, start, (), 0, NamedNode("http://ex.org/g1"))),
             Taken("B", Event(STREAM, time, (), 1, None)))
    return Match((), taken, start, time)


def _from_json_results(start: float, time: float) -> tuple[Literal, Literal]:
    match = _match(start, time)
    text = render("json", [Row({}, match)], [], with_time=True)
    (binding,) = json.loads(text)["results"]["bindings"]
    return tuple(Literal(binding[k]["value"], datatype=NamedNode(binding[k]["datatype"]))
                 for k in ("_start", "_time"))


def _from_match_rdf(start: float, time: float) -> tuple[Literal, Literal]:
    triples = result_graph("http://ex.org/q", 1, Row({}, _match(start, time)), None)
    by_predicate = {}
    for t in triples:
        by_predicate.setdefault(t.predicate, []).append(t.object)
    assert by_predicate[EVENT_TIME] == [by_predicate[START][0], by_predicate[TIME][0]]
    return by_predicate[START][0], by_predicate[TIME][0]


def _from_functions(start: float, time: float) -> tuple[Literal, Literal]:
    run = Environment(None, RunContext(time, STREAM, start))
    got = call(SPASEQ_NS + "runStart", (), run), call(SPASEQ_NS + "eventTime", (), run)
    # spaseq:timestamp of a number of seconds, and of that number written as an integer
    assert call(SPASEQ_NS + "timestamp", got[1:], Environment()) == got[1]
    if float(time).is_integer():
        integer = Literal(str(int(time)), datatype=XSD_INTEGER)
        assert call(SPASEQ_NS + "timestamp", (integer,), Environment()) == got[1]
    return got


@pytest.mark.parametrize("time", TIMES)
def test_every_output_writes_the_same_term(time):
    start = time / 2
    expected = (seconds_literal(start), seconds_literal(time))
    assert _from_json_results(start, time) == expected
    assert _from_match_rdf(start, time) == expected
    assert _from_functions(start, time) == expected


@pytest.mark.parametrize("text", ["1e400", "0.0000000001", "-1e30"])
def test_a_time_given_as_text_is_checked_like_the_others(text: str) -> None:
    """exact_seconds checks a numeric string as it checks Decimals, ints and floats (range,
    nanosecond resolution): the one conversion every entry point relies on."""
    from spaseq.engine.values.timestamps import exact_seconds

    with pytest.raises(ValueError):
        exact_seconds(text)
    assert exact_seconds("1.5") == Decimal("1.5")
