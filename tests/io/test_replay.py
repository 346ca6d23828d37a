"""Tests of timestamp conversion (engine/values/timestamps.py) and of the Python replay reader,
the native reader's oracle (tests/io/replay_oracle.py), on TriG/N-Quads replay files."""

from __future__ import annotations

import gzip
import re
import shutil
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from spaseq.engine.errors import StreamError, UsageError
from spaseq.engine.values.timestamps import to_seconds
from tests.io.replay_oracle import PROV_GENERATED_AT, read_replay

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "io" / "replay"
XSD = "http://www.w3.org/2001/XMLSchema#"
EX = "http://example.org/"
STREAM = "http://example.org/stream"


def lit(value: str, datatype: str | None = None) -> Literal:
    """A literal with an xsd datatype given by its local name (plain string if None)."""
    return Literal(value) if datatype is None else Literal(value, datatype=NamedNode(XSD + datatype))


def fixture(name: str) -> str:
    """Path of a replay fixture file, as a string."""
    return str(FIXTURES / name)


# --- to_seconds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "datatype", "expected"),
    [
        ("1970-01-01T00:00:00Z", "dateTime", 0.0),
        ("1970-01-01T00:00:00", "dateTime", 0.0),
        ("2024-01-01T00:00:10.5Z", "dateTime", 1704067210.5),
        ("2024-01-01T01:00:00+01:00", "dateTime", 1704067200.0),
        ("2023-12-31T19:00:00-05:00", "dateTime", 1704067200.0),
        ("2024-01-01T00:00:00.125", "dateTime", 1704067200.125),
        ("2024-01-01T24:00:00Z", "dateTime", 1704153600.0),
        ("1969-12-31T23:59:59Z", "dateTime", -1.0),
        ("2000-02-29T00:00:00Z", "dateTime", 951782400.0),
        ("2024-01-01T00:00:00Z", "dateTimeStamp", 1704067200.0),
        ("42", "integer", 42.0),
        ("-7", "long", -7.0),
        ("5", "nonNegativeInteger", 5.0),
        ("3", "unsignedByte", 3.0),
        ("10.25", "decimal", 10.25),
        (".5", "decimal", 0.5),
        ("1.5e3", "double", 1500.0),
        ("2E-1", "float", 0.2),
        ("12", "string", 12.0),
        (" 3.5 ", "string", 3.5),
    ],
)
def test_to_seconds_accepts_times_and_numbers(value: str, datatype: str, expected: float) -> None:
    """Exact: the decimal the literal writes (even for xsd:float/double: "2E-1" is 0.2)."""
    got = to_seconds(lit(value, datatype))
    assert isinstance(got, Decimal) and got == Decimal(repr(expected))


def test_to_seconds_plain_literal_number() -> None:
    assert to_seconds(Literal("20")) == 20.0


@pytest.mark.parametrize(
    ("term", "reason"),
    [
        (lit("yesterday"), "neither an xsd:dateTime nor a number"),
        (lit("1_000"), "neither an xsd:dateTime nor a number"),
        (lit("x", "integer"), "not a valid xsd:integer"),
        (lit("1.5", "integer"), "not a valid xsd:integer"),
        (lit("1e3", "decimal"), "not a valid xsd:decimal"),
        (lit("INF", "double"), "not a finite xsd:double"),
        (lit("NaN", "float"), "not a finite xsd:float"),
        (lit("2024-01-01", "date"), "expected an xsd:dateTime or a number"),
        (lit("2024-01-01T00:00:00", "dateTimeStamp"), "needs a time zone"),
        (lit("2023-02-29T00:00:00Z", "dateTime"), "day 29 is out of range for month 2"),
        (lit("2024-13-01T00:00:00Z", "dateTime"), "month 13 is out of range"),
        (lit("2024-01-01T25:00:00Z", "dateTime"), "time of day is out of range"),
        (lit("2024-01-01T00:00:00+15:00", "dateTime"), "time zone +15:00 is out of range"),
        (lit("2024-01-01 00:00:00", "dateTime"), "is not an xsd:dateTime"),
        (Literal("12", language="en"), "expected an xsd:dateTime or a number"),
        (NamedNode("http://example.org/t"), "is an IRI"),
        (BlankNode("b"), "is a blank node"),
        ("12", "is not an RDF literal"),
    ],
)
def test_to_seconds_rejects_non_times(term: object, reason: str) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        to_seconds(term)


@given(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.integers(min_value=-14 * 60, max_value=14 * 60),
)
def test_to_seconds_agrees_with_datetime(moment: datetime, offset_minutes: int) -> None:
    zone = timezone(timedelta(minutes=offset_minutes))
    aware = moment.replace(tzinfo=zone)
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    text = moment.isoformat(timespec="microseconds") + f"{sign}{hours:02d}:{minutes:02d}"
    delta = aware - datetime(1970, 1, 1, tzinfo=timezone.utc)
    expected = Decimal(delta.days * 86400 + delta.seconds) + Decimal(delta.microseconds) / 10**6
    assert to_seconds(lit(text, "dateTime")) == expected  # exactly, microseconds included


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
def test_to_seconds_utc_form_agrees_with_datetime_twice(moment: datetime) -> None:
    """"YYYY-MM-DDThh:mm:ssZ" takes a fast path with a cache of day starts: same answer
    on the first (uncached) and the second (cached) reading."""
    text = moment.replace(microsecond=0).isoformat() + "Z"
    expected = (moment.replace(microsecond=0, tzinfo=timezone.utc)
                - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()
    assert to_seconds(lit(text, "dateTime")) == expected
    assert to_seconds(lit(text, "dateTime")) == expected


@pytest.mark.parametrize("text", ["2024-01-01T24:00:01Z", "2024-01-01T23:60:00Z", "2024-01-01T23:00:60Z"])
def test_to_seconds_fast_path_keeps_range_checks(text: str) -> None:
    to_seconds(lit("2024-01-01T00:00:00Z", "dateTime"))  # the day is now cached
    with pytest.raises(ValueError, match="time of day is out of range"):
        to_seconds(lit(text, "dateTime"))


# --- read_replay: well-formed files -------------------------------------------------------------


def test_trig_events_sorted_by_time_ties_in_file_order() -> None:
    path = fixture("basic.trig")
    result = read_replay(path, STREAM)
    assert result.error is None
    names = [e.name for e in result.events]
    assert names == [NamedNode(EX + "e2"), NamedNode(EX + "e3"), NamedNode(EX + "e1")]
    assert [e.time for e in result.events] == [1704067200.0, 1704067200.0, 1704067210.5]
    assert [e.seq for e in result.events] == [1, 2, 0]
    assert all(e.stream == STREAM for e in result.events)
    # well-formed files are read at full parser speed: origins name the file; with
    # track_lines (what a file with a problem is re-read with) they name the graph's line
    assert [e.origin for e in result.events] == [path] * 3
    tracked = read_replay(path, STREAM, track_lines=True)
    assert [e.origin for e in tracked.events] == [f"{path}:11", f"{path}:14", f"{path}:7"]
    assert [(e.name, e.time, e.seq) for e in tracked.events] == [
        (e.name, e.time, e.seq) for e in result.events]


def test_trig_event_triples_in_file_order_deduplicated_across_blocks() -> None:
    e1 = next(e for e in read_replay(fixture("basic.trig"), STREAM).events if e.name == NamedNode(EX + "e1"))
    s = NamedNode(EX + "s")
    assert all(isinstance(t, Triple) for t in e1.triples)
    assert e1.triples == (
        Triple(s, NamedNode(EX + "price"), lit("10", "integer")),
        Triple(s, NamedNode(EX + "volume"), lit("5", "integer")),
        Triple(s, NamedNode(EX + "note"), lit("more")),
    )


def test_default_graph_triples_other_than_timestamps_are_ignored() -> None:
    events = read_replay(fixture("basic.trig"), STREAM).events
    assert len(events) == 3  # ex:nothing has a timestamp but no graph: no event
    for event in events:
        assert all(t.predicate != NamedNode(EX + "comment") for t in event.triples)
        assert all(t.predicate != NamedNode(PROV_GENERATED_AT) for t in event.triples)


def test_nquads_with_blank_graph_name_and_plain_numeric_timestamp() -> None:
    path = fixture("basic.nq")
    result = read_replay(path, STREAM, first_seq=100, track_lines=True)
    assert result.error is None
    assert [(str(e.name), e.time, e.seq, len(e.triples)) for e in result.events] == [
        ("<http://example.org/e2>", 10.25, 101, 1),
        ("_:g3", 20.0, 102, 1),
        ("<http://example.org/e1>", 30.0, 100, 2),
    ]
    assert isinstance(result.events[1].name, BlankNode)
    assert result.events[2].origin == f"{path}:2"


def test_custom_time_predicate() -> None:
    result = read_replay(fixture("custom_predicate.trig"), STREAM, time_predicate=EX + "at")
    assert result.error is None
    assert [(e.name, e.time) for e in result.events] == [(NamedNode(EX + "e2"), 3.5), (NamedNode(EX + "e1"), 5.0)]


@pytest.mark.parametrize("name", ["events.nq.gz", "events.nquads.gz", "events.nq", "events.nquads"])
def test_gzip_nquads_by_extension_and_by_magic_bytes(tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    target.write_bytes(gzip.compress((FIXTURES / "basic.nq").read_bytes()))
    result = read_replay(str(target), STREAM)
    assert result.error is None
    assert [e.time for e in result.events] == [10.25, 20.0, 30.0]
    assert read_replay(str(target), STREAM, track_lines=True).events[0].origin == f"{target}:5"


def test_gzip_trig(tmp_path: Path) -> None:
    target = tmp_path / "events.trig.gz"
    target.write_bytes(gzip.compress((FIXTURES / "basic.trig").read_bytes()))
    plain = read_replay(fixture("basic.trig"), STREAM)
    packed = read_replay(str(target), STREAM)
    assert packed.error is None
    assert [(e.name, e.time, e.triples) for e in packed.events] == [
        (e.name, e.time, e.triples) for e in plain.events
    ]


def test_uncompressed_file_named_gz_is_read_as_is(tmp_path: Path) -> None:
    target = tmp_path / "events.nq.gz"
    shutil.copy(FIXTURES / "basic.nq", target)
    assert len(read_replay(str(target), STREAM).events) == 3


# --- read_replay: errors ------------------------------------------------------------------------


def test_missing_timestamp_names_file_line_and_graph() -> None:
    path = fixture("no_timestamp.trig")
    result = read_replay(path, STREAM)
    assert isinstance(result.error, StreamError)
    assert str(result.error) == (
        f"{path}:7: event <http://example.org/e2> has no timestamp (expected a"
        f" <{PROV_GENERATED_AT}> triple on the graph name in the default graph)"
    )
    # Events that appear before the bad one are still returned.
    assert [e.name for e in result.events] == [NamedNode(EX + "e1")]


def test_two_different_timestamps() -> None:
    path = fixture("two_timestamps.trig")
    result = read_replay(path, STREAM)
    assert result.error is not None
    assert result.error.location is not None and result.error.location.line == 8
    assert "event <http://example.org/e2> has two different timestamps" in result.error.message
    assert '"7"' in result.error.message
    # e1 has "1" and "1.0": the same time, not an error.
    assert [(e.name, e.time) for e in result.events] == [(NamedNode(EX + "e1"), 1.0)]


def test_timestamp_that_is_not_a_time() -> None:
    path = fixture("bad_timestamp.trig")
    result = read_replay(path, STREAM)
    assert result.error is not None
    assert str(result.error).startswith(f"{path}:6: event <http://example.org/e2> has a timestamp that is not a time")
    assert '"yesterday"' in result.error.message
    assert len(result.events) == 1


def test_trig_syntax_error_has_line_and_column_and_keeps_earlier_events() -> None:
    path = fixture("syntax_error.trig")
    result = read_replay(path, STREAM)
    assert result.error is not None
    assert str(result.error) == f"{path}:8:14: TriG syntax error: . is not a valid RDF object"
    # e2 was being read when the error struck: left out; e3 comes after it.
    assert [e.name for e in result.events] == [NamedNode(EX + "e1")]


def test_nquads_syntax_error() -> None:
    path = fixture("syntax_error.nq")
    result = read_replay(path, STREAM)
    assert result.error is not None
    loc = result.error.location
    assert loc is not None and (loc.file, loc.line) == (path, 4)
    assert loc.column is not None
    assert "N-Quads syntax error" in result.error.message
    assert [e.name for e in result.events] == [NamedNode(EX + "e1")]


def test_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "absent.trig")
    result = read_replay(path, STREAM)
    assert result.events == []
    assert str(result.error) == f"{path}: no such file"


def test_unknown_extension(tmp_path: Path) -> None:
    target = tmp_path / "events.ttl"
    target.write_text("<http://a> <http://b> <http://c> .\n")
    result = read_replay(str(target), STREAM)
    assert result.events == []
    assert result.error is not None and ".trig, .nq or .nquads" in result.error.message


def test_syntax_error_skips_unstamped_graphs_and_numbers_densely(tmp_path: Path) -> None:
    target = tmp_path / "events.trig"
    target.write_text(
        "@prefix ex: <http://example.org/> .\n"
        "@prefix prov: <http://www.w3.org/ns/prov#> .\n"
        "ex:e0 { ex:s ex:p 0 . }\n"  # its timestamp would come after the error
        "ex:e1 { ex:s ex:p 1 . }\n"
        "ex:e1 prov:generatedAtTime 1 .\n"
        "ex:e2 { ex:s ex:p 2 . }\n"
        "ex:e2 prov:generatedAtTime 2 .\n"
        "ex:e3 { ex:s ex:p 3 .\n"
        "  ex:s ex:p }\n"
        "ex:e0 prov:generatedAtTime 0 .\n"
    )
    result = read_replay(str(target), STREAM, first_seq=7)
    assert result.error is not None and result.error.location is not None
    assert result.error.location.line == 9
    # e0 lacks a timestamp so far, e3 was being read: both left out; e2 is complete.
    assert [(e.name, e.seq) for e in result.events] == [(NamedNode(EX + "e1"), 7), (NamedNode(EX + "e2"), 8)]


def test_invalid_time_predicate_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not an absolute IRI"):
        read_replay(fixture("basic.trig"), STREAM, time_predicate="not an iri")


def test_a_directory_is_named_whatever_its_name(tmp_path: Path) -> None:
    for name in ("recording", "recording.trig"):
        target = tmp_path / name
        target.mkdir()
        result = read_replay(str(target), STREAM)
        assert str(result.error) == f"{target}: is a directory, not a replay file"


def test_a_given_format_wins_over_the_name(tmp_path: Path) -> None:
    from pyoxigraph import RdfFormat

    target = tmp_path / "events.txt"
    target.write_text(f'<{EX}g> <{PROV_GENERATED_AT}> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
                      f"<{EX}s> <{EX}p> <{EX}o> <{EX}g> .\n")
    result = read_replay(str(target), STREAM, data_format=RdfFormat.N_QUADS)
    assert result.error is None
    assert [(e.name, e.time) for e in result.events] == [(NamedNode(EX + "g"), 1)]
    as_trig = read_replay(str(target), STREAM, data_format=RdfFormat.TRIG)
    assert as_trig.error is not None and "TriG syntax error" in as_trig.error.message
