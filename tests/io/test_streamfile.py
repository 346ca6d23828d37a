"""Tests of the Java SPAseq stream description files and their N-Triples data (engine/io/streamfile.py)."""

from __future__ import annotations

import gzip
import math
from decimal import Decimal
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, RdfFormat, Triple, parse

from spaseq.engine.io.streamfile import read_stream_description

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "io" / "streamfile"
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "data" / "spaseq-reference-tests"
MAIN = "http://example.org/main"


def fixture(name: str) -> str:
    """Path of a stream-file fixture, as a string."""
    return str(FIXTURES / name)


def values(triples: tuple[Triple, ...]) -> list[str]:
    """The lexical values of the triples' objects, in order."""
    return [t.object.value for t in triples]


# --- well-formed inputs -------------------------------------------------------------------------


def test_kleene_events_stamped_by_arrival() -> None:
    result = read_stream_description(fixture("streamKleene.txt"))
    assert result.error is None
    assert result.streams == [MAIN]
    assert result.dropped_late == 0
    assert [e.time for e in result.events] == [Decimal(k) / 1000 for k in range(1, 6)]
    assert [len(e.triples) for e in result.events] == [2] * 5
    assert [e.seq for e in result.events] == [0, 1, 2, 3, 4]
    assert all(e.stream == MAIN and e.name is None for e in result.events)
    data = str(FIXTURES / "dataKleene.nt")
    assert [e.origin for e in result.events] == [f"{data}:{n}" for n in (2, 5, 8, 11, 14)]
    assert values(result.events[1].triples) == ["68.61", "88.0"]
    assert result.events[4].triples[1] == Triple(
        NamedNode("http://example/company#eBay"),
        NamedNode("http://example/price"),
        parse_object('"16.0"^^<http://www.w3.org/2001/XMLSchema#double>'),
    )


def parse_object(text: str):
    """An RDF term written in N-Triples syntax, parsed by pyoxigraph."""
    quad = next(iter(parse(f"<http://x> <http://y> {text} .", RdfFormat.N_TRIPLES)))
    return quad.object


def test_conjunction_occursat_gives_times_and_is_removed() -> None:
    result = read_stream_description(fixture("streamConjunction.txt"))
    assert result.error is None
    assert [e.time for e in result.events] == [10.0, 15.0, 15.0, 20.0]
    assert [values(e.triples) for e in result.events] == [
        ["29.83", "14.0"],
        ["29.83", "12.0"],
        ["29.83", "18.0"],
        ["29.83", "16.0"],
    ]
    for event in result.events:
        assert all(not t.predicate.value.endswith("occursat") for t in event.triples)
    assert [e.seq for e in result.events] == [0, 1, 2, 3]


def test_multiple_streams_interleave_round_robin() -> None:
    result = read_stream_description(fixture("multi/streamMulti.txt"))
    assert result.error is None
    power, env, gen = "http://www.smart.com/power", "http://www.smart.com/environmental", "http://www.smart.com/generation"
    assert result.streams == [power, env, gen]
    assert [e.stream for e in result.events] == [power, env, gen] * 4
    assert [e.time for e in result.events] == [Decimal(k) / 1000 for k in range(1, 13)]
    assert [len(e.triples) for e in result.events] == [5] * 12
    assert result.events[3].origin == f"{FIXTURES / 'multi' / 'power1.nt'}:6"
    assert result.events[6].origin == f"{FIXTURES / 'multi' / 'power1.nt'}:13"


def test_exhausted_stream_is_skipped() -> None:
    result = read_stream_description(fixture("roundrobin.txt"))
    assert result.error is None
    assert [(e.stream[-1], values(e.triples)[0], e.time) for e in result.events] == [
        ("A", "a1", Decimal("0.001")),
        ("B", "b1", Decimal("0.002")),
        ("A", "a2", Decimal("0.003")),
        ("A", "a3", Decimal("0.004")),
    ]


def test_trailing_comment_after_final_dot_and_short_last_chunk() -> None:
    result = read_stream_description(fixture("trailing.txt"))
    assert result.error is None
    assert [values(e.triples) for e in result.events] == [["1", "2"], ["3"]]


def test_gzip_data_file_and_relative_to_description(tmp_path: Path) -> None:
    sub = tmp_path / "data"
    sub.mkdir()
    (sub / "d.nt.gz").write_bytes(gzip.compress((FIXTURES / "dataKleene.nt").read_bytes()))
    (tmp_path / "s.txt").write_text("# comment\n\n<http://example.org/main>   data/d.nt.gz   3\n")
    result = read_stream_description(str(tmp_path / "s.txt"))
    assert result.error is None
    assert [len(e.triples) for e in result.events] == [3, 3, 3, 1]


# --- errors -------------------------------------------------------------------------------------


def test_late_event_is_an_error_by_default() -> None:
    result = read_stream_description(fixture("late.txt"))
    data = fixture("late.nt")
    assert result.error is not None
    assert str(result.error).startswith(f"{data}:3: late event on stream <http://example.org/late>")
    assert "5 s is earlier than 10 s" in result.error.message
    assert [e.time for e in result.events] == [10.0]
    assert result.dropped_late == 0


def test_late_event_dropped_and_counted() -> None:
    result = read_stream_description(fixture("late.txt"), drop_late=True)
    assert result.error is None
    assert result.dropped_late == 1
    assert [(e.time, values(e.triples)) for e in result.events] == [(10.0, ["1"]), (12.5, ["3"])]
    assert [e.seq for e in result.events] == [0, 2]


def test_missing_data_file_reported_at_description_line() -> None:
    result = read_stream_description(fixture("missing_data.txt"))
    assert result.events == []
    assert result.error is not None
    assert str(result.error).startswith(f"{fixture('missing_data.txt')}:4: data file ")
    assert "missing.nt does not exist" in result.error.message


@pytest.mark.parametrize(("name", "line", "shown"), [("bad_n_zero.txt", 1, "'0'"), ("bad_n_word.txt", 2, "'two'")])
def test_bad_triples_per_event(name: str, line: int, shown: str) -> None:
    result = read_stream_description(fixture(name))
    assert result.events == []
    assert str(result.error) == (
        f"{fixture(name)}:{line}: the number of triples per event must be a positive integer, not {shown}"
    )


def test_malformed_description_line() -> None:
    result = read_stream_description(fixture("bad_line.txt"))
    assert result.events == []
    assert str(result.error) == (
        f"{fixture('bad_line.txt')}:1: malformed stream description line:"
        " expected `<stream-IRI> <data-file> N` (N = number of triples per event)"
    )


def test_stream_listed_twice() -> None:
    result = read_stream_description(fixture("duplicate.txt"))
    assert result.error is not None and result.error.location is not None
    assert result.error.location.line == 2
    assert "already described on line 1" in result.error.message


def test_ntriples_syntax_error_keeps_earlier_events() -> None:
    result = read_stream_description(fixture("syntax.txt"))
    assert str(result.error) == f"{fixture('syntax.nt')}:6:51: N-Triples syntax error: Quads must be followed by a dot"
    assert [values(e.triples) for e in result.events] == [["1"], ["2"], ["3"]]


def test_occursat_value_not_a_number() -> None:
    result = read_stream_description(fixture("bad_occursat.txt"))
    assert result.error is not None
    assert str(result.error).startswith(f"{fixture('bad_occursat.nt')}:2: the occursat value \"soon\" is not a time")
    assert [values(e.triples) for e in result.events] == [["1"]]


def test_missing_description_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.txt")
    result = read_stream_description(path)
    assert (result.events, result.streams) == ([], [])
    assert str(result.error) == f"{path}: no such file"


def test_empty_description(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("# nothing\n\n")
    result = read_stream_description(str(tmp_path / "s.txt"))
    assert result.error is not None and "lists no stream" in result.error.message


# --- every scenario of the original implementation ----------------------------------------------

SCENARIOS = sorted(REFERENCE.glob("*/stream*.txt")) if REFERENCE.is_dir() else []


@pytest.mark.skipif(not SCENARIOS, reason="shared reference scenarios not available")
@pytest.mark.parametrize("description", SCENARIOS, ids=lambda p: p.parent.name)
def test_reference_scenarios(description: Path) -> None:
    result = read_stream_description(str(description))
    assert result.error is None, str(result.error)
    lines = [line.split() for line in description.read_text().splitlines() if line.strip()]
    assert result.streams == [parts[0].strip("<>") for parts in lines]
    expected_events = 0
    for stream, data, size in lines:
        data_path = description.parent / data.strip("<>")
        triples = list(parse(path=str(data_path), format=RdfFormat.N_TRIPLES))
        occursat = [t for t in triples if t.predicate.value.endswith("occursat")]
        mine = [e for e in result.events if e.stream == stream.strip("<>")]
        assert len(mine) == math.ceil(len(triples) / int(size))
        assert sum(len(e.triples) for e in mine) == len(triples) - len(occursat)
        times = [e.time for e in mine]
        assert times == sorted(times)
        expected_events += len(mine)
    assert len(result.events) == expected_events
    assert [e.seq for e in result.events] == list(range(len(result.events)))


@pytest.mark.skipif(not SCENARIOS, reason="shared reference scenarios not available")
def test_reference_credit_card_size() -> None:
    result = read_stream_description(str(REFERENCE / "credit-card" / "streamCardFB.txt"))
    assert result.error is None
    assert len(result.events) == 20001
    assert result.events[-1].time == Decimal("20.001")


def test_events_that_last_and_their_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Decision 71 in a stream file: an event's prov:startedAtTime and its end (endedAtTime or
    occursat) are taken out as its interval; ``spaseq run --stream-file`` plans the query for
    them (program P's fire over [65, 80]); a start without an end, after it, of another kind,
    or an end given twice with two values, is an error at its line."""
    from spaseq.engine.cli.main import main

    ex, prov = "http://example.org/sensors#", "http://www.w3.org/ns/prov#"
    events = [(60, 63, "Temp", 40), (65, 68, "Smoke", None), (70, 80, "Temp", 41)]
    lines = []
    for i, (start, end, kind, value) in enumerate(events):
        e = f"<{ex}x{i}>"
        lines += [f"{e} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ex}{kind}> .",
                  f"{e} <{ex}area> <{ex}a> .",
                  f"{e} <{ex}value> \"{value or 0}\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
                  f"{e} <{prov}startedAtTime> \"{start}\"^^<http://www.w3.org/2001/XMLSchema#decimal> .",
                  f"{e} <{prov}endedAtTime> \"{end}\"^^<http://www.w3.org/2001/XMLSchema#decimal> ."]
    (tmp_path / "chapter.nt").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.txt").write_text("<http://example.org/sensors> chapter.nt 5\n")
    result = read_stream_description(str(tmp_path / "s.txt"))
    assert result.error is None
    assert [(e.start, e.time, len(e.triples)) for e in result.events] == [(60, 63, 3), (65, 68, 3), (70, 80, 3)]
    fire = Path(__file__).resolve().parents[2] / "fixtures" / "cera" / "fire.rq"
    assert main(["run", str(fire), "--stream-file", str(tmp_path / "s.txt"), "--format", "csv", "--with-time"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [f"80,65,{ex}a"]
    for bad, message in [(lines[3], "no end"), (lines[3].replace('"60"', '"64"') + "\n" + lines[4], "after it ends"),
                         (lines[3].replace('"60"^^<http://www.w3.org/2001/XMLSchema#decimal>',
                                           '"2026-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>')
                          + "\n" + lines[4], "different kinds"),
                         (lines[4] + "\n" + lines[4].replace("endedAtTime", "occursAt").replace('"63"', '"62"'),
                          "two different ends")]:
        (tmp_path / "bad.nt").write_text(bad + "\n")
        (tmp_path / "bad.txt").write_text("<http://example.org/sensors> bad.nt 5\n")
        error = read_stream_description(str(tmp_path / "bad.txt")).error
        assert error is not None and message in error.message and error.location.line is not None, (bad, error)
