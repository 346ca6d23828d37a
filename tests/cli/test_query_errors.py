"""``spaseq run`` and ``spaseq explain`` on a query with a syntax error: the message of
engine/language/syntax_errors.py as ``FILE:LINE:COLUMN: message`` on stderr, exit status 2, no
traceback and nothing on stdout (no partial table); upper-case booleans run as lower-case ones.
The invocations start together (tests/cli/started.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.started import ok, started, user_error

ROOT = Path(__file__).resolve().parents[2]

QUERY = """\
PREFIX : <http://ex.org/>
SELECT ?s ?a ?b
WITHIN 10 SECONDS
FROM STREAM S1 <http://ex.org/s1>
WHERE {
  SEQ(A; B)
  DEFINE GPM A ON S1 { ?s :a ?a }
  DEFINE GPM B ON S1 { ?s :b ?b FILTER(?b > ?a && true) }
}
"""

STREAM = """\
@prefix : <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
:e1 prov:generatedAtTime 1 .
:e1 { :x :a 1 . }
:e2 prov:generatedAtTime 2 .
:e2 { :x :b 5 . }
"""

FILES = {
    "s1.trig": STREAM,
    # A's '}' missing: the parser meets B's DEFINE (8:3) inside A's body (its '{' at 7:22)
    "brace.rq": QUERY.replace("?s :a ?a }", "?s :a ?a"),
    # WITHIN misspelt at 3:1
    "withn.rq": QUERY.replace("WITHIN", "WITHN"),
    # one ')' too many at 8:54
    "paren.rq": QUERY.replace("&& true)", "&& true))"),
    # an operator missing before ?a at 8:43
    "operator.rq": QUERY.replace("?b > ?a", "?b ?a"),
    "upper.rq": QUERY.replace("&& true", "&& TRUE"),  # q.rq as spargebra and pyoxigraph read it
}

RUNS = {
    "run-brace": ("run", "brace.rq", "--stream", "S1=s1.trig"),
    "run-withn": ("run", "withn.rq", "--stream", "S1=s1.trig", "--format", "jsonl"),
    "explain-paren": ("explain", "paren.rq"),
    "explain-operator": ("explain", "operator.rq"),
    "run-upper": ("run", "upper.rq", "--stream", "S1=s1.trig", "--format", "jsonl"),
}


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    with started(tmp_path_factory.mktemp("query-errors"), FILES, {k: (a, None) for k, a in RUNS.items()}) as runs:
        yield runs


def test_a_brace_never_closed(cli):
    proc = cli("run-brace")
    assert user_error(proc) == "brace.rq:8:3: '{' opened at 7:22 is never closed (a '}' is missing before 'DEFINE')\n"
    assert proc.stdout == ""


def test_a_misspelt_keyword(cli):
    proc = cli("run-withn")
    assert user_error(proc) == "withn.rq:3:1: unexpected 'WITHN'; did you mean WITHIN?\n"
    assert proc.stdout == ""


def test_a_parenthesis_too_many(cli):
    proc = cli("explain-paren")
    assert user_error(proc) == "paren.rq:8:56: this ')' closes nothing (the '(' opened at 8:39 was closed at 8:55)\n"
    assert proc.stdout == ""


def test_the_readme_shows_these_messages(cli):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- query-errors-example[^>]*-->\n```\n(.*?)```", readme, re.S)
    assert found is not None, "the README's query error examples are missing"
    keys = ("run-brace", "explain-paren", "run-withn", "explain-operator")
    assert found.group(1) == "".join(user_error(cli(key)) for key in keys)


def test_upper_case_true_runs_as_lower_case_true(cli):
    (match,) = [json.loads(line) for line in ok(cli("run-upper")).stdout.splitlines()]
    assert (match["start"], match["time"]) == (1, 2)
    assert {k: v["value"] for k, v in match["bindings"].items()} == {"s": "http://ex.org/x", "a": "1", "b": "5"}
