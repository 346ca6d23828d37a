"""``spaseq run``'s input errors as a user meets them (decision 76), run in subprocesses
started together: an input that cannot be read at all is the only thing said (no empty
table, no warnings first); a run stopped mid-way writes the matches found before the error,
a table saying so; live input's errors name ``<stdin>:LINE``, with times as the input wrote
them; TriG on stdin is read as TriG, or its N-Quads syntax error says it looks like TriG."""

from __future__ import annotations

import json

import pytest

from tests.cli.started import started, user_error

EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PROV = "http://www.w3.org/ns/prov#"

QUERY = """\
PREFIX : <http://ex.org/>
SELECT ?a ?b
WITHIN 10 SECONDS
FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A; B)
  DEFINE GPM A ON S { ?x :v ?a }
  DEFINE GPM B ON S { ?x :w ?b } }
"""
# what would warn if the run got that far: a stream without input, a GRAPH without a KB
WARNS = QUERY.replace("FROM STREAM S <http://ex.org/s>",
                      "FROM STREAM S <http://ex.org/s>\nFROM STREAM T <http://ex.org/t>").replace(
    "?x :w ?b }", "?x :w ?b GRAPH <http://kb/> { ?x :c ?c } }\n  DEFINE GPM C ON T { ?x :u ?u }")

TRIG_HEAD = "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"


def nquad(s: str, p: str, o: str, g: str | None = None) -> str:
    return f"<{EX}{s}> <{p if ':' in p else EX + p}> {o}{f' <{EX}{g}>' if g else ''} .\n"


def dated(text: str) -> str:
    return f'"{text}"^^<{XSD}dateTime>'


def integer(n: int) -> str:
    return f'"{n}"^^<{XSD}integer>'


FILES = {
    "q.rq": QUERY,
    "warns.rq": WARNS,
    # a match (g1 -> g2), then a syntax error on line 9, column 13
    "bad.trig": TRIG_HEAD + ":g1 { :x :v 1 }\n:g1 prov:generatedAtTime 1 .\n:g2 { :x :w 2 }\n"
    ":g2 prov:generatedAtTime 2 .\n:g3 { :x :v 3 }\n:g3 prov:generatedAtTime 3 .\n:g4 { :x :w oops }\n",
    # a syntax error before any match
    "early.trig": TRIG_HEAD + ":g1 { :x :v oops }\n:g1 prov:generatedAtTime 1 .\n",
    # TriG on stdin, without --input-format
    "events.trig": TRIG_HEAD + ":g1 { :x :v 1 }\n:g1 prov:generatedAtTime 1 .\n:g2 { :x :w 2 }\n"
    ":g2 prov:generatedAtTime 2 .\n",
    # TriG whose first line is an N-Quads line too: read as N-Quads, its '{' on line 2 hinted
    "full-iris.trig": nquad("g1", PROV + "generatedAtTime", integer(1))
    + f"<{EX}g1> {{ <{EX}x> <{EX}v> 1 }}\n",
    # an event that lasts (line 3), for a query planned for points, stamped with dateTimes
    "lasting.nq": nquad("x", "v", '"1"', "g1") + nquad("g1", PROV + "generatedAtTime", dated("2026-01-01T10:00:05Z"))
    + nquad("x", "w", '"2"', "g2") + nquad("g2", PROV + "startedAtTime", dated("2026-01-01T10:00:06Z"))
    + nquad("g2", PROV + "generatedAtTime", dated("2026-01-01T10:00:07Z")),
    # a match (g1 -> g2), then g3 (line 5) earlier than g2: late, stamped with dateTimes
    "late.nq": nquad("x", "v", '"1"', "g1") + nquad("g1", PROV + "generatedAtTime", dated("2026-01-01T10:00:05Z"))
    + nquad("x", "w", '"2"', "g2") + nquad("g2", PROV + "generatedAtTime", dated("2026-01-01T10:00:06.5Z"))
    + nquad("x", "w", '"3"', "g3") + nquad("g3", PROV + "generatedAtTime", dated("2026-01-01T10:00:03Z")),
}

RUNS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "missing": (("run", "warns.rq", "--stream", "S=missing.trig", "--format", "table"), None),
    "missing-description": (("run", "warns.rq", "--stream-file", "nope.txt"), None),
    "stopped-table": (("run", "q.rq", "--stream", "S=bad.trig"), None),
    "stopped-reference": (("run", "q.rq", "--stream", "S=bad.trig", "--engine", "reference"), None),
    "stopped-before-any": (("run", "warns.rq", "--stream", "S=early.trig"), None),
    "trig-stdin": (("run", "q.rq", "--stream", "S=-", "--format", "jsonl"), "events.trig"),
    "trig-hint": (("run", "q.rq", "--stream", "S=-"), "full-iris.trig"),
    "lasting-stdin": (("run", "q.rq", "--stream", "S=-"), "lasting.nq"),
    "lasting-file": (("run", "q.rq", "--stream", "S=lasting.nq"), None),
    "late-stdin": (("run", "q.rq", "--stream", "S=-", "--late", "error"), "late.nq"),
}

LASTING = (f"event <{EX}g2> of stream <{EX}s> lasts from 2026-01-01T10:00:06Z to 2026-01-01T10:00:07Z, "
           "and query q.rq <file://{dir}/q.rq> was planned for point events: register it with intervals on "
           "(--intervals, EngineOptions(intervals=True); docs/decisions.md 71)\n")


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    with started(tmp_path_factory.mktemp("input-errors"), FILES, RUNS) as runs:
        yield runs


@pytest.mark.parametrize(("run", "message"), [
    ("missing", "missing.trig: no such file\n"),
    ("missing-description", "nope.txt: no such file\n"),
])
def test_an_input_that_cannot_be_read_is_all_that_is_said(cli, run, message):
    """Not an empty table and ``(0 matches)``, not the warnings of a run that never began (a
    directory, a name that tells no format: the same check, engine/native/io/tests/stream.rs)."""
    proc = cli(run)
    assert user_error(proc) == message
    assert proc.stdout == ""


@pytest.mark.parametrize("run", ["stopped-table", "stopped-reference"])
def test_a_table_stopped_by_an_error_says_its_rows_came_before_it(cli, run):
    proc = cli(run)
    assert user_error(proc) == "bad.trig:9:13: TriG syntax error: oops is not a valid RDF object\n"
    assert proc.stdout == ("time  start  ?a  ?b\n----  -----  --  --\n2     1      1   2\n"
                           "(1 match before the error)\n")


def test_an_error_before_any_match_prints_no_table(cli):
    proc = cli("stopped-before-any")
    err = user_error(proc)
    assert proc.stdout == ""
    # the run began (its warnings are about it), and the error ends what it says
    assert err.endswith("early.trig:3:13: TriG syntax error: oops is not a valid RDF object\n"), err


def test_trig_on_stdin_is_read_as_trig(cli):
    proc = cli("trig-stdin")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (match,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert (match["time"], match["start"], [e["graph"] for e in match["events"]]) == (2, 1, [EX + "g1", EX + "g2"])


def test_trig_read_as_n_quads_is_hinted_at(cli):
    proc = cli("trig-hint")
    assert user_error(proc) == ("<stdin>:2:20: N-Quads syntax error: The predicate of a triple must be an IRI "
                                "(this line looks like TriG: read the input as TriG, --input-format trig)\n")
    assert proc.stdout == ""


@pytest.mark.parametrize(("run", "where"), [("lasting-stdin", "<stdin>:3: "), ("lasting-file", "lasting.nq: ")])
def test_a_refused_event_names_where_it_was_read_and_its_times_as_written(cli, run, where):
    proc = cli(run)
    assert user_error(proc) == where + LASTING.replace("{dir}", str(cli.work))
    assert proc.stdout == ""


def test_a_late_live_event_stops_the_run_at_its_line_with_its_times_as_written(cli):
    proc = cli("late-stdin")
    assert user_error(proc) == (
        f"<stdin>:5: event at 2026-01-01T10:00:03Z on <{EX}s> is earlier than 2026-01-01T10:00:06.5Z, "
        "already processed on this query's streams (late event)\n")
    # the match before it, written as a table (the table was lost before decision 76)
    assert proc.stdout == ('time                      start                 ?a   ?b\n'
                           '------------------------  --------------------  ---  ---\n'
                           '2026-01-01T10:00:06.500Z  2026-01-01T10:00:05Z  "1"  "2"\n'
                           '(1 match before the error)\n')
