"""Calendar values (``xsd:date``, ``xsd:time``, ``xsd:gYear*``, durations, ``xsd:dateTime``)
in generated events, compared and computed by GPM bodies on both evaluation paths (the
compiled FILTER programs and the SPARQL path on spareval), against the reference evaluator
(issue 24 A: the SPARQL path had them all as errors, and no generator made them)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine.api import Engine
from tests.properties.test_differential import EXAMPLES, STEPS, check_against_reference, options
from tests.util import EX, QUERY_PREFIXES, ev

#: values of one calendar type each, some equal in value but not in spelling or time zone
CALENDAR = {
    "date": ['"2023-01-01"^^xsd:date', '"2023-06-01"^^xsd:date', '"2023-01-01Z"^^xsd:date',
             '"2023-01-02+01:00"^^xsd:date'],
    "dateTime": ['"2023-01-01T00:00:00Z"^^xsd:dateTime', '"2023-01-01T01:00:00+01:00"^^xsd:dateTime',
                 '"2023-01-01T12:30:00"^^xsd:dateTime'],
    "time": ['"10:00:00"^^xsd:time', '"11:00:00Z"^^xsd:time', '"10:00:00.5"^^xsd:time'],
    "gYear": ['"2023"^^xsd:gYear', '"2024"^^xsd:gYear', '"2023Z"^^xsd:gYear'],
    "gYearMonth": ['"2023-01"^^xsd:gYearMonth', '"2023-02"^^xsd:gYearMonth'],
    "duration": ['"P1D"^^xsd:dayTimeDuration', '"PT24H"^^xsd:dayTimeDuration', '"PT1H"^^xsd:dayTimeDuration',
                 '"P1Y"^^xsd:yearMonthDuration', '"P12M"^^xsd:yearMonthDuration', '"P1DT1H"^^xsd:duration'],
}
#: a constant of each type to compare with (and a number: comparing with it is an error)
CONSTANTS = {"date": '"2023-03-01"^^xsd:date', "dateTime": '"2023-01-01T00:30:00Z"^^xsd:dateTime',
             "time": '"10:30:00"^^xsd:time', "gYear": '"2023"^^xsd:gYear',
             "gYearMonth": '"2023-01"^^xsd:gYearMonth', "duration": '"P1D"^^xsd:dayTimeDuration'}

OPTIONAL = "OPTIONAL {{ ?s{i} :tag ?t{i} }} "  # outside the compiled subset: the SPARQL path
FILTERS = [
    "?d{i} < {c}", "?d{i} = {c}", "?d{i} != {c}", "?d{i} >= ?d{j}", "?d{i} != ?d{j}",
    "?d{i} != 1", "sameTerm(?d{i}, {c})", "DATATYPE(?d{i}) = DATATYPE({c})",
    "?d{i} - ?d{j} > \"PT0S\"^^xsd:dayTimeDuration", "?d{i} - \"PT1H\"^^xsd:dayTimeDuration < ?d{j}",
    "YEAR(?d{i}) = 2023", "STR(?d{i}) < STR(?d{j})",
]


@st.composite
def calendar_events(draw):
    """Events each with a :day of one calendar type (the query's, mostly), a :tag sometimes."""
    kind = draw(st.sampled_from(sorted(CALENDAR)))
    n = draw(st.integers(0, 10))
    step = draw(st.sampled_from(STEPS))
    out = []
    for i in range(n):
        k = kind if draw(st.integers(0, 4)) else draw(st.sampled_from(sorted(CALENDAR)))
        parts = [f":e{i} :day {draw(st.sampled_from(CALENDAR[k]))} ."]
        if draw(st.booleans()):
            parts.append(f":e{i} :tag :T{draw(st.integers(0, 1))} .")
        time = step * draw(st.integers(0, 6))
        out.append(ev(draw(st.sampled_from(["u1", "u2"])), time, " ".join(parts), seq=i))
    return kind, sorted(out, key=lambda e: (e.time, e.seq))


@st.composite
def calendar_queries(draw, kind: str) -> str:
    n = draw(st.integers(1, 3))
    defines, parts = [], []
    for i in range(n):
        f = draw(st.sampled_from(FILTERS)).format(i=i, j=max(i - 1, 0), c=CONSTANTS[kind])
        optional = OPTIONAL.format(i=i) if draw(st.booleans()) else ""
        defines.append(f"DEFINE GPM G{i} ON {draw(st.sampled_from(['U1', 'U2']))} "
                       f"{{ ?s{i} :day ?d{i} {optional}FILTER({f}) }}")
        if i:
            parts.append(draw(st.sampled_from([" , ", " ; ", " : "])))
        parts.append(f"G{i}" + draw(st.sampled_from(["", "", "+"])) if i else "G0")
    window = draw(st.sampled_from(["", "WITHIN 3 SECONDS", "WITHIN 4 EVENTS"]))
    return (f"{QUERY_PREFIXES}SELECT * {window}\nFROM STREAM U1 <{EX}u1>\nFROM STREAM U2 <{EX}u2>\n"
            f"WHERE {{ SEQ({''.join(parts)}) {' '.join(defines)} }}")


@st.composite
def calendar_cases(draw):
    kind, evs = draw(calendar_events())
    return draw(calendar_queries(kind)), evs


@settings(max_examples=EXAMPLES, deadline=None)
@given(calendar_cases(), options, st.booleans())
def test_calendar_values_equal_the_reference(case, opts, end_of_input) -> None:
    text, evs = case
    check_against_reference(text, evs, opts, end_of_input)


def test_the_generator_reaches_both_paths() -> None:
    """Both evaluation paths are generated: a GPM with OPTIONAL runs on spareval, one without
    on the compiled programs (as ``spaseq explain`` would say)."""
    for optional, expected in (("", set()), (OPTIONAL.format(i=0), {"G0"})):
        text = (f"{QUERY_PREFIXES}SELECT * FROM STREAM U1 <{EX}u1>\nWHERE {{ SEQ(G0) DEFINE GPM G0 ON U1 "
                f"{{ ?s0 :day ?d0 {optional}FILTER(?d0 < {CONSTANTS['date']}) }} }}")
        handle = Engine().register(text)
        assert set(handle.runtime.matchers) == set()  # nothing called back to Python either way
        from spaseq.engine import _native
        from spaseq.engine.compile.plan_json import plan_to_json

        paths = {name for name, path, _ in _native.gpm_evaluators(plan_to_json(handle.plan)) if path == "spareval"}
        assert paths == expected
