"""End-to-end tests of the ``spaseq`` command line (engine/cli/), run in a subprocess.

Every process spends about half a second building the LALR parser, so the invocations are
listed in ``RUNS`` and started together, in parallel, when the module's first test asks for
one; each test then checks the result of its own invocation. All of them run in one working
directory holding the files of ``FILES``, so file names in messages are the relative names
given on the command line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rdflib import Literal as RdfLiteral
from rdflib import URIRef, Variable
from rdflib.query import Result

from tests.cli.started import ok, started, user_error

ROOT = Path(__file__).resolve().parents[2]
KLEENE = ROOT / "fixtures" / "original" / "kleeneplus"
EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PROV = "http://www.w3.org/ns/prov#generatedAtTime"

# ---------------------------------------------------------------- input files

QUERY = """\
PREFIX : <http://ex.org/>
SELECT ?s ?a ?b ?l
WITHIN 10 SECONDS
FROM STREAM S1 <http://ex.org/s1>
WHERE {
  SEQ(A; B)
  DEFINE GPM A ON S1 { ?s :a ?a ; :label ?l }
  DEFINE GPM B ON S1 { ?s :b ?b FILTER(?b > ?a) }
}
"""

TRIG_HEAD = "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
E1_E2 = (
    ":e1 prov:generatedAtTime 1 .\n"           # line 3
    ':e1 { :x :a 1 ; :label "ex"@en . }\n'     # line 4
    ":e2 prov:generatedAtTime 2.5 .\n"         # line 5
    ":e2 { :x :b 5 . }\n"                      # line 6
)

KB_QUERY = """\
PREFIX : <http://ex.org/>
SELECT ?s ?c
FROM STREAM S1 <http://ex.org/s1>
WHERE {
  SEQ(A; B)
  DEFINE GPM A ON S1 { ?s :a ?a GRAPH <http://kb/1> { ?s :city ?c } }
  DEFINE GPM B ON S1 { ?s :b ?b GRAPH <http://kb/2> { ?c :zip ?z } }
}
"""

FILES = {
    "q.rq": QUERY,
    "s1.trig": TRIG_HEAD + E1_E2 + ":e3 prov:generatedAtTime 3 .\n:e3 { :x :b 7 . }\n",
    # a syntax error on line 6, column 9
    "syntax.rq": QUERY.replace("SEQ(A; B)", "SEQ(A B)"),
    # an unknown prefix on line 8, column 27
    "prefix.rq": QUERY.replace("?s :b ?b", "?s ex:b ?b"),
    # warnings: ?zz bound by nothing, GPM C unused, stream S2 without input
    "warn.rq": QUERY.replace("SELECT ?s ?a ?b ?l", "SELECT ?s ?a ?b ?l ?zz")
    .replace("FROM STREAM S1 <http://ex.org/s1>",
             "FROM STREAM S1 <http://ex.org/s1>\nFROM STREAM S2 <http://ex.org/s2>")
    .replace("FILTER(?b > ?a) }\n", "FILTER(?b > ?a) }\n  DEFINE GPM C ON S2 { ?s :c ?c }\n"),
    "two.rq": (
        "PREFIX : <http://ex.org/>\nSELECT *\nFROM STREAM S1 <http://ex.org/s1>\n"
        "FROM STREAM S2 <http://ex.org/s2>\nWHERE {\n  SEQ(A; B)\n"
        "  DEFINE GPM A ON S1 { ?s :a ?a }\n  DEFINE GPM B ON S2 { ?s :c ?c }\n}\n"
    ),
    "s2.nq": (
        f'_:g1 <{PROV}> "2.75"^^<{XSD}decimal> .\n'
        f'<{EX}x> <{EX}c> "z" _:g1 .\n'
        f'<{EX}g2> <{PROV}> "4"^^<{XSD}integer> .\n'
        f'<{EX}y> <{EX}c> "w" <{EX}g2> .\n'
    ),
    # a TriG syntax error on line 10; e3 is the graph being read when it happens
    "bad.trig": TRIG_HEAD + E1_E2 + ":e3 prov:generatedAtTime 3 .\n:e3 { :y :c 0 . }\n"
    ":e4 prov:generatedAtTime 4 .\n:e4 { :x :b @@ . }\n:e5 prov:generatedAtTime 5 .\n:e5 { :x :b 9 . }\n",
    # e3 (line 7) has no timestamp
    "nots.trig": TRIG_HEAD + E1_E2 + ":e3 { :x :b 8 . }\n",
    "kbq.rq": KB_QUERY,
    # head negation: no A before B (within 10 s) whose ?a is below a sixth of B's ?b
    "head.rq": QUERY.replace("SELECT ?s ?a ?b ?l", "SELECT ?s ?b").replace("SEQ(A; B)", "SEQ(A! ; B)")
    .replace("{ ?s :a ?a ; :label ?l }", "{ ?s :a ?a FILTER(?b > ?a * 6) }").replace(" FILTER(?b > ?a) }", " }"),
    # the same without a window: refused, located at A!
    "head-unbounded.rq": QUERY.replace("WITHIN 10 SECONDS\n", "").replace("SEQ(A; B)", "SEQ(A! ; B)"),
    "city.nt": f"<{EX}x> <{EX}city> <{EX}Paris> .\n",
    "zip.nt": f'<{EX}Paris> <{EX}zip> "75000" .\n',
    "badkb.nt": f'<{EX}x> <{EX}city> "Paris" .\n<{EX}x> <{EX}city> "Par\n',
    "junk.rq": QUERY + "junk\n",
    "fn.rq": QUERY.replace("FILTER(?b > ?a)", "FILTER(<http://f.org/fn>(?b))"),
    "any.rq": QUERY.replace("SEQ(A; B)", "SEQ(A : B)"),
    # a quantifier's bounds upside down, on line 6, column 11 (its '{')
    "bounds.rq": QUERY.replace("SEQ(A; B)", "SEQ(A; B{3,1})"),
    "quantified.rq": QUERY.replace("SEQ(A; B)", "SEQ(A; B{2,3})"),
}

STREAM = ("--stream", "S1=s1.trig")
JSONL = ("--format", "jsonl")
KLEENE_ARGS = (str(KLEENE / "queryKleene.q"), "--stream-file", str(KLEENE / "streamKleene.txt"))

RUNS: dict[str, tuple[str, ...]] = {
    "jsonl": ("run", "q.rq", *STREAM, *JSONL),
    "output": ("run", "q.rq", *STREAM, *JSONL, "--output", "out.jsonl"),
    "stream-iri": ("run", "q.rq", "--stream", "http://ex.org/s1=s1.trig", *JSONL),
    "stream-<iri>": ("run", "q.rq", "--stream", "<http://ex.org/s1>=s1.trig", *JSONL),
    "table": ("run", "q.rq", *STREAM),
    "json": ("run", "q.rq", *STREAM, "--format", "json", "--with-time"),
    "csv": ("run", "q.rq", *STREAM, "--format", "csv"),
    "tsv": ("run", "q.rq", *STREAM, "--format", "tsv"),
    "two-streams": ("run", "two.rq", "--stream", "S2=s2.nq", *STREAM, *JSONL),
    "kleene": ("run", *KLEENE_ARGS, *JSONL),
    "kleene-table": ("run", *KLEENE_ARGS),
    "explain": ("explain", "q.rq"),
    "head": ("run", "head.rq", *STREAM, *JSONL),
    "head-explain": ("explain", "head.rq"),
    "head-unbounded": ("run", "head-unbounded.rq", *STREAM),
    "explain-dot": ("explain", "--dot", "q.rq"),
    "explain-error": ("explain", "syntax.rq"),
    "explain-quantified": ("explain", "quantified.rq"),
    "bounds": ("run", "bounds.rq", *STREAM),
    "warnings": ("run", "warn.rq", *STREAM, *JSONL),
    "syntax": ("run", "syntax.rq", *STREAM),
    "prefix": ("run", "prefix.rq", *STREAM),
    "no-query": ("run", "missing.rq", *STREAM),
    "no-stream-name": ("run", "q.rq", "--stream", "S9=s1.trig"),
    "no-stream-path": ("run", "q.rq", "--stream", "S1"),
    "no-input": ("run", "q.rq"),
    "no-stream-file": ("run", "q.rq", "--stream", "S1=nope.trig", *JSONL),
    "bad-trig": ("run", "q.rq", "--stream", "S1=bad.trig", *JSONL),
    "no-timestamp": ("run", "q.rq", "--stream", "S1=nots.trig", *JSONL),
    "kb": ("run", "kbq.rq", *STREAM, "--kb", "http://kb/1=city.nt", "--kb", "<http://kb/2>=zip.nt", *JSONL),
    "kb-ambiguous": ("run", "kbq.rq", *STREAM, "--kb", "city.nt", *JSONL),
    "kb-missing": ("run", "kbq.rq", *STREAM, "--kb", "http://kb/1=nokb.nt"),
    "kb-syntax": ("run", "kbq.rq", *STREAM, "--kb", "http://kb/1=badkb.nt"),
    "kb-no-graph": ("run", "kbq.rq", *STREAM, "--kb", "http://kb/1=city.nt"),
    "bad-output": ("run", "q.rq", *STREAM, "--output", "no/such/dir/out.txt"),
    "bad-format": ("run", "q.rq", *STREAM, "--format", "xml"),
    "junk": ("run", "junk.rq", *STREAM),
    "unknown-function": ("run", "fn.rq", *STREAM),
    "any": ("run", "any.rq", *STREAM, *JSONL),
    "any-lazy": ("run", "any.rq", *STREAM, *JSONL, "--lazy-chain", "--lazy-conjunction"),
}


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    with started(tmp_path_factory.mktemp("cli"), FILES, {k: (a, None) for k, a in RUNS.items()}) as runs:
        yield runs


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def uri(value: str) -> dict:
    return {"type": "uri", "value": value}


def typed(value: str, datatype: str) -> dict:
    return {"type": "literal", "value": value, "datatype": XSD + datatype}


# The one match of q.rq over s1.trig: A on e1 (t=1), B on e2 (t=2.5), the first later event
# where B matches (skip-till-next); e3 would also satisfy B but ';' takes only the first.
EXPECTED = [
    {
        "time": 2.5,
        "start": 1,
        "bindings": {
            "s": uri(EX + "x"),
            "a": typed("1", "integer"),
            "b": typed("5", "integer"),
            "l": {"type": "literal", "value": "ex", "xml:lang": "en"},
        },
        "events": [
            {"atom": "A", "stream": EX + "s1", "time": 1, "graph": EX + "e1"},
            {"atom": "B", "stream": EX + "s1", "time": 2.5, "graph": EX + "e2"},
        ],
    }
]


# ---------------------------------------------------------------- successful runs


def test_jsonl_rows_follow_the_contract(cli):
    proc = ok(cli("jsonl"))
    assert proc.stderr == ""
    records = jsonl(proc.stdout)
    assert records == EXPECTED
    (rec,) = records
    assert list(rec) == ["time", "start", "bindings", "events"]
    assert list(rec["bindings"]) == ["s", "a", "b", "l"]  # SELECT order
    assert all(list(e) == ["atom", "stream", "time", "graph"] for e in rec["events"])
    assert isinstance(rec["start"], int) and isinstance(rec["time"], float)


def test_lazy_options_give_the_same_matches(cli):
    eager = jsonl(ok(cli("any")).stdout)
    assert [r["time"] for r in eager] == [2.5, 3]  # e1 then e2, e1 then e3
    assert jsonl(ok(cli("any-lazy")).stdout) == eager


def test_output_file(cli):
    proc = ok(cli("output"))
    assert proc.stdout == ""
    assert jsonl((cli.work / "out.jsonl").read_text(encoding="utf-8")) == EXPECTED


@pytest.mark.parametrize("key", ["stream-iri", "stream-<iri>"])
def test_stream_by_full_iri(cli, key):
    assert jsonl(ok(cli(key)).stdout) == EXPECTED


def test_default_table_format(cli):
    lines = ok(cli("table")).stdout.splitlines()
    assert lines[0].split() == ["time", "start", "?s", "?a", "?b", "?l"]
    assert lines[2].split() == ["2.5", "1", ":x", "1", "5", '"ex"@en']
    assert lines[-1] == "(1 match)"


def test_json_with_time_parses_as_sparql_results(cli):
    result = Result.parse(io.StringIO(ok(cli("json")).stdout), format="json")
    assert [str(x) for x in result.vars] == ["_time", "_start", "s", "a", "b", "l"]
    (row,) = list(result.bindings)
    assert row[Variable("s")] == URIRef(EX + "x")
    assert row[Variable("a")] == RdfLiteral("1", datatype=URIRef(XSD + "integer"))
    assert row[Variable("l")] == RdfLiteral("ex", lang="en")
    assert row[Variable("_time")] == RdfLiteral("2.5", datatype=URIRef(XSD + "decimal"))
    assert row[Variable("_start")] == RdfLiteral("1", datatype=URIRef(XSD + "decimal"))


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_csv_and_tsv(cli, fmt):
    result = Result.parse(io.StringIO(ok(cli(fmt)).stdout), format=fmt)
    assert [str(x) for x in result.vars] == ["s", "a", "b", "l"]
    (row,) = list(result.bindings)
    assert {str(k): str(v) for k, v in row.items()} == {"s": EX + "x", "a": "1", "b": "5", "l": "ex"}


def test_two_streams_nquads_and_blank_node_graph(cli):
    assert jsonl(ok(cli("two-streams")).stdout) == [
        {
            "time": 2.75,
            "start": 1,
            "bindings": {"a": typed("1", "integer"), "c": {"type": "literal", "value": "z"},
                         "s": uri(EX + "x")},
            "events": [
                {"atom": "A", "stream": EX + "s1", "time": 1, "graph": EX + "e1"},
                {"atom": "B", "stream": EX + "s2", "time": 2.75, "graph": "_:g1"},
            ],
        }
    ]


def _ntriples(term: dict) -> str:
    if term["type"] == "uri":
        return f"<{term['value']}>"
    if "datatype" in term:
        return f"\"{term['value']}\"^^<{term['datatype']}>"
    return json.dumps(term["value"])


def _normalise(rec: dict, bindings: dict) -> tuple:
    return (rec["time"], rec["start"], tuple(sorted(bindings.items())),
            tuple((e["atom"], e["time"]) for e in rec["events"]))


def test_stream_file_kleene_plus(cli):
    records = jsonl(ok(cli("kleene")).stdout)
    assert len(records) == 5
    for rec in records:
        assert set(rec["bindings"]) == {"company", "p1", "p2", "p3"}
        assert all(e["stream"] == "http://example.org/main" and e["graph"] is None for e in rec["events"])
    expected = json.loads((KLEENE / "expected.json").read_text(encoding="utf-8"))
    got = sorted(_normalise(r, {k: _ntriples(t) for k, t in r["bindings"].items()}) for r in records)
    want = sorted(_normalise(r, r["bindings"]) for r in expected)
    assert got == want


def test_stream_file_kleene_plus_table(cli):
    out = ok(cli("kleene-table")).stdout
    assert out.splitlines()[-1] == "(5 matches)"
    assert "c:eBay" in out


# ---------------------------------------------------------------- explain


def test_explain_text(cli):
    lines = ok(cli("explain")).stdout.splitlines()
    assert lines[0] == "MATCH ?s ?a ?b ?l"
    assert lines[1].strip() == "WINDOW 10s"
    assert lines[2].strip() == "SEQ"
    assert lines[3].split() == ["A", "[first]"]
    assert lines[4].strip() == "B   [skip-till-next ';']"
    assert "  EVENT A ON S1 <http://ex.org/s1>" in lines
    assert "  EVENT B ON S1 <http://ex.org/s1>" in lines
    assert any("FILTER(?b > ?a)" in line for line in lines)


def test_explain_shows_automaton_and_plan(cli):
    out = ok(cli("explain")).stdout
    automaton = out[out.index("NFA_scep"):].splitlines()
    assert automaton[0] == "NFA_scep: states x0..x2 (x0 initial, x2 final)"
    assert automaton[1].split() == ["x0", "->", "x1", "[take]", "({S1},", "ø,", "A)"]
    assert automaton[2].split() == ["x1", "->", "x1", "[skip]", "({S1},", ";,", "-)"]
    assert automaton[3].split() == ["x1", "->", "x2", "[take]", "({S1},", ";,", "B)"]
    assert "  x1: runs waiting for B: partitioned by ?s, sorted by ?a (<= B's ?b)" in automaton
    assert "  B: native join and FILTERs, pre-filter on <http://ex.org/b>" in automaton


def test_a_head_negation_drops_the_matches_an_earlier_event_forbids(cli):
    """``SEQ(A! ; B)``: e3's B (?b 7) has e1's A before it, in its window, with 7 > 1 * 6;
    e2's B (?b 5) has not (5 <= 6)."""
    assert [(r["time"], r["bindings"]["b"]["value"]) for r in jsonl(ok(cli("head")).stdout)] == [(2.5, "5")]
    lines = ok(cli("head-explain")).stdout.splitlines()
    assert lines[3].strip() == "A!   [head negation: absent in the window before the first event]"
    assert lines[4].strip() == "B   [first]"
    assert user_error(cli("head-unbounded")).startswith(
        "head-unbounded.rq:5:7: a sequence can start with a negated atom (A!) only under a time window")


def test_explain_dot(cli):
    out = ok(cli("explain-dot")).stdout
    assert out.startswith("digraph spaseq {") and out.rstrip().endswith("}")
    assert 'match [label="MATCH ?s ?a ?b ?l"];' in out
    assert 'window [label="WINDOW 10s"];' in out
    assert 'seq -> atom1 [label=";"];' in out
    assert "atom0 -> ev_A;" in out and "atom1 -> ev_B;" in out
    assert 'x2 [shape=doublecircle, label="x2"];' in out
    assert 'x1 -> x2 [label="{S1}, ;, B"];' in out


def test_explain_shows_a_quantifier(cli):
    out = ok(cli("explain-quantified")).stdout
    lines = out.splitlines()
    assert lines[4].strip() == "B{2,3}   [skip-till-next ';' Kleene, 2 to 3 iterations]"
    automaton = out[out.index("NFA_scep"):].splitlines()
    assert automaton[3].split() == ["x1", "->", "x2", "[take]", "({S1},", "{2,3},", "B)"]
    assert automaton[4].split() == ["x2", "->", "x2", "[iterate]", "({S1},", "{2,3},", "B)"]


def test_a_quantifier_s_bad_bounds_are_a_located_user_error(cli):
    proc = cli("bounds")
    assert user_error(proc) == ("bounds.rq:6:11: B{3,1}: the lower bound 3 is above the upper bound 1; "
                                "write {m,n} with m <= n\n")
    assert proc.stdout == ""


def test_explain_reports_query_errors(cli):
    err = user_error(cli("explain-error"))
    assert err.startswith("syntax.rq:6:9: unexpected 'B'; expected ")


# ---------------------------------------------------------------- warnings


def test_warnings_go_to_stderr_and_keep_exit_zero(cli):
    proc = ok(cli("warnings"))
    assert jsonl(proc.stdout) == EXPECTED
    assert proc.stderr.splitlines() == [
        "warn.rq: warning: ?zz is projected but no GPM binds it",
        "warn.rq:10:14: warning: GPM C is defined but not used in SEQ",
        "warn.rq: warning: stream S2 <http://ex.org/s2> has no input",
    ]


# ---------------------------------------------------------------- user errors


def test_query_syntax_error(cli):
    proc = cli("syntax")
    assert user_error(proc) == ("syntax.rq:6:9: unexpected 'B'; expected a sequence operator (',', ';' or ':'), "
                                "a modifier (+, *, ?, ! or {m,n}) or ')'\n")
    assert proc.stdout == ""


def test_unknown_prefix(cli):
    assert user_error(cli("prefix")) == "prefix.rq:8:27: unknown prefix 'ex:' (no PREFIX declaration)\n"


def test_missing_query_file(cli):
    assert user_error(cli("no-query")) == "missing.rq: no such query file\n"


def test_unknown_stream_name(cli):
    assert user_error(cli("no-stream-name")) == (
        "spaseq: --stream S9: the query has no such stream (it has: S1 <http://ex.org/s1>)\n"
    )


def test_stream_option_without_path(cli):
    assert user_error(cli("no-stream-path")) == "spaseq: --stream S1: expected NAME=PATH\n"


def test_no_input(cli):
    assert user_error(cli("no-input")) == "spaseq: no input: give --stream NAME=PATH or --stream-file FILE\n"


def test_missing_stream_file(cli):
    proc = cli("no-stream-file")
    assert user_error(proc) == "nope.trig: no such file\n"
    assert proc.stdout == ""


def test_malformed_trig_reports_the_line_and_keeps_earlier_rows(cli):
    # the events read before the error are evaluated (minus e3, the graph being read when it
    # happened): the match e1 -> e2 is printed, then the error, with status 2
    proc = cli("bad-trig")
    err = user_error(proc)
    assert err.startswith("bad.trig:10:")
    assert "TriG syntax error" in err
    assert len(err.splitlines()) == 1
    assert jsonl(proc.stdout) == EXPECTED


def test_event_without_timestamp(cli):
    proc = cli("no-timestamp")
    assert user_error(proc) == (
        "nots.trig:7: event <http://ex.org/e3> has no timestamp (expected a "
        "<http://www.w3.org/ns/prov#generatedAtTime> triple on the graph name in the default graph)\n"
    )
    assert jsonl(proc.stdout) == EXPECTED  # e1 and e2, before the bad event, were evaluated


def test_kb_with_graph_iris(cli):
    proc = ok(cli("kb"))
    assert proc.stderr == ""
    assert [r["bindings"] for r in jsonl(proc.stdout)] == [{"s": uri(EX + "x"), "c": uri(EX + "Paris")}]


def test_kb_ambiguous_graph(cli):
    proc = cli("kb-ambiguous")
    err = user_error(proc)
    assert err.startswith("city.nt: the file has triples outside any named graph, but the query's GRAPH "
                          "clauses name several graphs (<http://kb/1>, <http://kb/2>)")
    assert "--kb http://kb/1=city.nt" in err
    assert proc.stdout == ""


def test_kb_missing_file(cli):
    assert user_error(cli("kb-missing")) == "nokb.nt: no such file\n"


def test_kb_syntax_error_has_a_line(cli):
    err = user_error(cli("kb-syntax"))
    assert err.startswith("badkb.nt:2:")
    assert "N-Triples syntax error" in err


def test_kb_missing_graph_is_a_warning(cli):
    proc = ok(cli("kb-no-graph"))
    assert proc.stderr == "kbq.rq: warning: GRAPH <http://kb/2> names a graph the knowledge base does not have\n"
    assert proc.stdout.splitlines()[-1] == "(0 matches)"


def test_output_to_unwritable_place(cli):
    assert user_error(cli("bad-output")) == "spaseq: --output no/such/dir/out.txt: No such file or directory\n"


def test_bad_option_value_is_an_argparse_error(cli):
    proc = cli("bad-format")
    assert proc.returncode == 2
    assert "invalid choice: 'xml'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_text_after_query(cli):
    assert user_error(cli("junk")).startswith("junk.rq:10:1: ")


def test_unsupported_function(cli):
    assert user_error(cli("unknown-function")).startswith("fn.rq:8:")
