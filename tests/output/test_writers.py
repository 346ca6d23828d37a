"""Tests of the result writers as they are given rows found in Python (``NativeWriter.write_row``,
``output.native``): SPARQL 1.1 JSON/CSV/TSV results that rdflib parses back to the same
bindings, the jsonl contract and the table for people; and the same bytes as the Python
writers, their oracle (``writers_oracle.py``), for any row."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode
from rdflib.query import Result

from spaseq.engine._native import NativeWriter
from spaseq.engine.events import Event
from spaseq.engine.matches import Match, Row, Taken
from spaseq.engine.output.arrow import ARROW_FORMATS
from spaseq.engine.output.native import FORMATS, TEXT_FORMATS, jsonl_line, row_writer
from spaseq.engine.output.times import TIME_FORMATS
from tests.output import writers_oracle as oracle
from tests.util import render

EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
STREAM = EX + "s"

IRI = NamedNode("http://ex.org/a?b=c#d")
LANG = Literal("chat", language="fr-BE")
INTEGER = Literal("5", datatype=NamedNode(XSD + "integer"))
DOUBLE = Literal("1.5", datatype=NamedNode(XSD + "double"))  # canonical: rdflib may normalise
CUSTOM = Literal("x y", datatype=NamedNode(EX + "dt"))
EXPLICIT_STRING = Literal("typed string", datatype=NamedNode(XSD + "string"))
BNODE = BlankNode("b0")
TRICKY = Literal('a,b "quoted"\nline 2\ttab\\backslash; \'single\' é ∀ 😀')

ALL = {"iri": IRI, "lang": LANG, "int": INTEGER, "dbl": DOUBLE, "custom": CUSTOM,
       "str": EXPLICIT_STRING, "bn": BNODE, "tricky": TRICKY}
VARIABLES = [*ALL, "unbound"]


def event(time: float, name=None, stream: str = STREAM) -> Event:
    return Event(stream, float(time), (), 0, name)


def row(bindings: dict, start: float = 1.0, time: float = 2.5, taken=None) -> Row:
    if taken is None:
        taken = (Taken("A", event(start, NamedNode(EX + "g1"))), Taken("B", event(time)))
    return Row(dict(bindings), Match(tuple(bindings.items()), tuple(taken), start, time))


ROWS = [row(ALL), row({"iri": NamedNode(EX + "x"), "int": INTEGER}, start=3, time=4)]


def to_rdflib(term):
    """The rdflib term a SPARQL results parser should give back for a pyoxigraph term."""
    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    if term.datatype.value == XSD + "string":
        return rdflib.Literal(term.value)
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))


def parse(text: str, fmt: str) -> Result:
    return Result.parse(io.StringIO(text), format=fmt)


def as_dicts(result: Result) -> list[dict]:
    return [{str(k): v for k, v in b.items()} for b in result.bindings]


# ---------------------------------------------------------------- SPARQL JSON terms



@pytest.mark.parametrize(
    ("term", "expected"),
    [
        (IRI, {"type": "uri", "value": "http://ex.org/a?b=c#d"}),
        (BNODE, {"type": "bnode", "value": "b0"}),
        (Literal("plain"), {"type": "literal", "value": "plain"}),
        (EXPLICIT_STRING, {"type": "literal", "value": "typed string"}),
        (LANG, {"type": "literal", "value": "chat", "xml:lang": "fr-be"}),
        (INTEGER, {"type": "literal", "value": "5", "datatype": XSD + "integer"}),
        (CUSTOM, {"type": "literal", "value": "x y", "datatype": EX + "dt"}),
    ],
)
def test_json_term(term, expected):
    assert json.loads(jsonl_line(row({"x": term})))["bindings"]["x"] == expected
    assert oracle.json_term(term) == expected


# ---------------------------------------------------------------- round trips through rdflib


@pytest.mark.parametrize("fmt", ["json", "tsv"])
def test_json_and_tsv_round_trip_every_kind_of_term(fmt):
    result = parse(render(fmt, ROWS, VARIABLES), fmt)
    assert [str(v) for v in result.vars] == VARIABLES
    assert as_dicts(result) == [
        {k: to_rdflib(t) for k, t in r.bindings.items()} for r in ROWS
    ]


def test_csv_round_trip_gives_lexical_values():
    text = render("csv", ROWS, VARIABLES)
    result = parse(text, "csv")
    assert [str(v) for v in result.vars] == VARIABLES
    got = [{k: str(v) for k, v in b.items()} for b in as_dicts(result)]
    assert got == [
        {"iri": "http://ex.org/a?b=c#d", "lang": "chat", "int": "5", "dbl": "1.5", "custom": "x y",
         "str": "typed string", "bn": "_:b0", "tricky": TRICKY.value},
        {"iri": EX + "x", "int": "5"},
    ]
    assert isinstance(as_dicts(result)[0]["iri"], rdflib.URIRef)


def test_csv_follows_the_sparql_csv_format():
    text = render("csv", [row({"iri": IRI, "tricky": TRICKY})], ["iri", "tricky", "unbound"])
    assert text.startswith("iri,tricky,unbound\r\n")
    assert text.endswith(",\r\n")  # unbound: empty field
    assert '"a,b ""quoted""\nline 2' in text  # quoted field, doubled quotes, raw newline


def test_tsv_follows_the_sparql_tsv_format():
    text = render("tsv", [row({"iri": IRI, "lang": LANG, "int": INTEGER, "bn": BNODE, "tricky": TRICKY})],
                  ["iri", "lang", "int", "bn", "tricky", "unbound"])
    header, line, end = text.split("\n")
    assert header == "?iri\t?lang\t?int\t?bn\t?tricky\t?unbound"
    assert end == ""
    cells = line.split("\t")
    assert cells[:4] == ["<http://ex.org/a?b=c#d>", '"chat"@fr-be', f'"5"^^<{XSD}integer>', "_:b0"]
    assert cells[4].startswith('"a,b \\"quoted\\"\\nline 2\\ttab\\\\backslash')
    assert cells[5] == ""


def test_json_document_structure():
    doc = json.loads(render("json", ROWS, VARIABLES))
    assert doc["head"] == {"vars": VARIABLES}
    assert len(doc["results"]["bindings"]) == 2
    assert doc["results"]["bindings"][1] == {
        "iri": {"type": "uri", "value": EX + "x"},
        "int": {"type": "literal", "value": "5", "datatype": XSD + "integer"},
    }


@pytest.mark.parametrize("fmt", ["json", "csv", "tsv"])
def test_no_rows(fmt):
    text = render(fmt, [], ["a", "b"], with_time=True)
    result = parse(text, fmt)
    assert [str(v) for v in result.vars] == ["_time", "_start", "a", "b"]
    assert list(result.bindings) == []


@pytest.mark.parametrize("fmt", ["json", "tsv"])
def test_with_time_adds_time_and_start(fmt):
    result = parse(render(fmt, ROWS, ["iri"], with_time=True), fmt)
    assert [str(v) for v in result.vars] == ["_time", "_start", "iri"]
    decimal = rdflib.URIRef(XSD + "decimal")
    assert [(b["_time"], b["_start"]) for b in as_dicts(result)] == [
        (rdflib.Literal("2.5", datatype=decimal), rdflib.Literal("1", datatype=decimal)),
        (rdflib.Literal("4", datatype=decimal), rdflib.Literal("3", datatype=decimal)),
    ]


def test_with_time_in_csv():
    result = parse(render("csv", ROWS, ["iri"], with_time=True), "csv")
    assert [{k: str(v) for k, v in b.items()} for b in as_dicts(result)] == [
        {"_time": "2.5", "_start": "1", "iri": "http://ex.org/a?b=c#d"},
        {"_time": "4", "_start": "3", "iri": EX + "x"},
    ]


def test_without_time_there_are_no_time_columns():
    for fmt in ("json", "csv", "tsv"):
        assert [str(v) for v in parse(render(fmt, ROWS, ["iri"]), fmt).vars] == ["iri"]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
# rdflib's TSV parser does not read \uXXXX escapes, which N-Triples uses for control characters
_TSV_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\t\n\r"), min_size=1, max_size=30
)


@settings(max_examples=60, deadline=None)
@given(value=_TEXT, lang=st.sampled_from([None, "en", "de-ch"]))
def test_any_string_round_trips_in_json_and_csv(value, lang):
    term = Literal(value, language=lang) if lang else Literal(value)
    r = row({"x": term})
    (json_row,) = as_dicts(parse(render("json", [r], ["x"]), "json"))
    assert json_row["x"] == to_rdflib(term)
    (csv_row,) = as_dicts(parse(render("csv", [r], ["x"]), "csv"))
    assert str(csv_row["x"]) == value


@settings(max_examples=60, deadline=None)
@given(value=_TSV_TEXT)
def test_any_string_round_trips_in_tsv(value):
    (tsv_row,) = as_dicts(parse(render("tsv", [row({"x": Literal(value)})], ["x"]), "tsv"))
    assert str(tsv_row["x"]) == value


# ---------------------------------------------------------------- jsonl


def test_jsonl_record():
    taken = (
        Taken("A", event(1, NamedNode(EX + "g1"))),
        Taken("B", event(2.25, BlankNode("bg"), stream=EX + "t")),
        Taken("B", event(3)),
    )
    r = row({"iri": IRI, "lang": LANG, "bn": BNODE}, start=1, time=3, taken=taken)
    line = jsonl_line(r)
    assert line == oracle.dumps_exact(oracle.jsonl_record(r))
    rec = json.loads(line)
    assert rec == {
        "time": 3,
        "start": 1,
        "bindings": {
            "iri": {"type": "uri", "value": "http://ex.org/a?b=c#d"},
            "lang": {"type": "literal", "value": "chat", "xml:lang": "fr-be"},
            "bn": {"type": "bnode", "value": "b0"},
        },
        "events": [
            {"atom": "A", "stream": STREAM, "time": 1, "graph": EX + "g1"},
            {"atom": "B", "stream": EX + "t", "time": 2.25, "graph": "_:bg"},
            {"atom": "B", "stream": STREAM, "time": 3, "graph": None},
        ],
    }
    assert isinstance(rec["time"], int) and isinstance(rec["events"][1]["time"], float)


def test_jsonl_writer_writes_one_json_object_per_line():
    text = render("jsonl", ROWS, VARIABLES)
    lines = text.splitlines()
    assert len(lines) == 2 and text.endswith("\n")
    records = [json.loads(line) for line in lines]
    assert records == [json.loads(jsonl_line(r)) for r in ROWS]
    assert [list(r) for r in records] == [["time", "start", "bindings", "events"]] * 2
    assert records[1]["bindings"] == {"iri": {"type": "uri", "value": EX + "x"},
                                      "int": {"type": "literal", "value": "5", "datatype": XSD + "integer"}}
    assert "😀" in text  # not \\u-escaped
    assert render("jsonl", [], VARIABLES) == ""


# ---------------------------------------------------------------- table


def table(rows, variables, prefixes=None) -> str:
    return render("table", rows, variables, prefixes=prefixes)


def test_table_uses_prefixed_names_and_counts_matches():
    rows = [
        row({"s": NamedNode(EX + "x"), "v": INTEGER, "l": LANG}, start=1, time=2.5),
        row({"s": NamedNode("http://other.org/y"), "v": CUSTOM}, start=0.001, time=2),
        row({"s": NamedNode(EX + "ns/z"), "v": Literal("plain")}, start=3, time=4),
    ]
    out = table(rows, ["s", "v", "l"], {"ex": EX, "exns": EX + "ns/"})
    lines = out.splitlines()
    assert lines[0].split() == ["time", "start", "?s", "?v", "?l"]
    assert set(lines[1]) == {"-", " "}
    assert lines[2].split() == ["2.5", "1", "ex:x", "5", '"chat"@fr-be']
    assert lines[3].split() == ["2", "0.001", "<http://other.org/y>", '"x', 'y"^^<http://ex.org/dt>']
    assert lines[4].split() == ["4", "3", "exns:z", '"plain"']  # the longest namespace wins
    assert lines[-1] == "(3 matches)"
    # columns are aligned
    assert lines[0].index("?s") == lines[2].index("ex:x") == lines[3].index("<http") == lines[4].index("exns")


@pytest.mark.parametrize(("n", "last"), [(0, "(0 matches)"), (1, "(1 match)"), (2, "(2 matches)")])
def test_table_match_count(n, last):
    out = table(ROWS[:n], ["iri"], {"ex": EX})
    assert out.splitlines()[-1] == last
    assert out.splitlines()[0].split() == ["time", "start", "?iri"]


def test_table_leaves_unbound_cells_empty():
    out = table([row({"b": INTEGER})], ["a", "b"])
    assert out.splitlines()[2].split() == ["2.5", "1", "5"]


# ---------------------------------------------------------------- writers


def test_formats():
    assert set(TEXT_FORMATS) == {*oracle.FORMATS, "trig"} == {"table", "jsonl", "json", "csv", "tsv", "trig"}
    assert FORMATS == (*TEXT_FORMATS, *ARROW_FORMATS)  # the Arrow ones: tests/output/test_arrow.py


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "tsv"])
def test_writers_are_incremental(fmt):
    buf = io.StringIO()
    w = NativeWriter(fmt, buf, ["iri"], ["iri"], False)
    w.start()
    before = buf.getvalue()
    row_writer(w)(ROWS[1])
    assert EX + "x" in buf.getvalue()[len(before):]  # written before finish()
    w.finish()


def test_table_writes_only_at_finish():
    buf = io.StringIO()
    w = NativeWriter("table", buf, ["iri"], ["iri"], False)
    w.start()
    row_writer(w)(ROWS[1])
    assert buf.getvalue() == ""
    w.finish()
    assert "(1 match)" in buf.getvalue()


def test_a_term_that_is_not_n_triples_is_refused():
    w = NativeWriter("csv", io.StringIO(), ["x"], ["x"], False)
    with pytest.raises(ValueError, match="not an iri"):
        w.write_row(0, 0, [("x", "<not an iri>")], [])
    assert w.rows == 0


# ---------------------------------------------------------------- against the oracle


def oracle_render(fmt: str, rows, variables, with_time: bool = False, time_format: str = "input",
                  prefixes: dict[str, str] | None = None) -> str:
    buf = io.StringIO()
    w = oracle.make_writer(fmt, buf, variables, with_time, prefixes, time_format)
    w.start()
    for r in rows:
        w.row(r)
    w.finish()
    return buf.getvalue()


@pytest.mark.parametrize("fmt", oracle.FORMATS)
@pytest.mark.parametrize("with_time", [False, True])
def test_the_oracles_bytes(fmt, with_time):
    prefixes = {"ex": EX}
    assert render(fmt, ROWS, VARIABLES, with_time, prefixes=prefixes) == \
        oracle_render(fmt, ROWS, VARIABLES, with_time, prefixes=prefixes)


#: terms that need escaping, carry a language or a datatype, or are spelled by the table
TERMS = st.sampled_from([IRI, LANG, INTEGER, DOUBLE, CUSTOM, EXPLICIT_STRING, BNODE, TRICKY,
                         NamedNode("http://ex.org/é?x=y,z;😀"), NamedNode(EX + "ns/z"),
                         Literal("\u0001 control \u007f del"), Literal("")]) | \
    st.builds(Literal, st.text(max_size=8), language=st.sampled_from(["en", "de-CH"])) | \
    st.builds(Literal, st.text(max_size=8))
#: exact times at nanosecond resolution: relative and wall-clock, negative, below 1e-4
TIMES = st.builds(lambda whole, ns: Decimal(whole) + Decimal(ns).scaleb(-9),
                  st.sampled_from([0, -3, 2, 99_999_999, 100_000_000, 1_704_103_220]),
                  st.sampled_from([0, 1, 7, 15_000, 500_000, 1_500_000, 100_000_000, 999_999_999]))
NAMES = ["a", "b", "_time", "_start", "é"]


@st.composite
def rows(draw) -> Row:
    """A projected row: bindings in the variables' order, its match's events (atoms with
    awkward names, graph names of every kind, stamped as xsd:dateTime or not)."""
    bindings = {v: draw(TERMS) for v in NAMES if draw(st.booleans())}
    times = sorted(draw(st.lists(TIMES, min_size=1, max_size=4)))
    taken = tuple(
        Taken(draw(st.sampled_from(["A", "B+", 'Q"u\\o'])),
              Event(draw(st.sampled_from([EX + "s", EX + "t\u00e9"])), t, (), i,
                    draw(st.sampled_from([None, NamedNode(EX + "g"), BlankNode("g1")])),
                    dated=draw(st.booleans())))
        for i, t in enumerate(times))
    return Row(bindings, Match(tuple(bindings.items()), taken, times[0], times[-1]))


@settings(max_examples=150, deadline=None)
@given(st.lists(rows(), max_size=4), st.sampled_from(oracle.FORMATS), st.booleans(),
       st.sampled_from(TIME_FORMATS), st.lists(st.sampled_from(NAMES), unique=True))
def test_any_rows_are_written_as_the_oracle_writes_them(rows, fmt, with_time, time_format, variables):
    """Rows given as values through a native writer and ``jsonl_line`` (projected on the
    columns, as a query's rows are), against the oracle: every format, with and without
    ``--with-time`` (over variables named ``_time``/``_start`` too), every time format."""
    variables = [v for v in NAMES if v in variables]  # the rows' order
    rows = [Row({v: t for v, t in r.bindings.items() if v in variables}, r.match) for r in rows]
    prefixes = {"ex": EX, "exns": EX + "ns/"}
    assert render(fmt, rows, variables, with_time, time_format, prefixes) == \
        oracle_render(fmt, rows, variables, with_time, time_format, prefixes)
    for r in rows:
        assert jsonl_line(r, time_format) == oracle.dumps_exact(oracle.jsonl_record(r, time_format))
