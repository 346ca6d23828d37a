"""The native writers (``_native.NativeWriter``, engine/native/output), which write every
result, against the Python writers, their oracle (``writers_oracle.py``): the same run must
give the same bytes in every format (jsonl, SPARQL JSON, CSV, TSV, the table, TriG, with and
without ``--with-time``, times in every ``--time-format``, events stamped as xsd:dateTime or as
numbers), whether the rows go straight from the native runtime to the writer or come through
Python as values (``write_row``: composed queries, ``--materialize``, ``--engine reference``).
TriG's blank nodes are made afresh on both sides: they are relabelled in order of first
occurrence before comparing.

Two levels: random queries (the differential suite's generator, with projections, DISTINCT,
CONSTRUCT, a DISTINCT CONSTRUCT and variables named ``_time``/``_start`` added) over random
events with awkward terms, names and times, through the engine as ``spaseq run`` wires it
(the rows spelled on the caller's thread, and on a thread of their own into a file); and
``spaseq run`` itself on the fixtures (stream description files, replay files read natively,
a KB, CONSTRUCT, composed queries, --materialize, the reference evaluator, an input error),
with the writing's own errors."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import IO

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine.algebra import operators as A
from spaseq.engine.api import Engine
from spaseq.engine.cli.main import main
from spaseq.engine.cli.run import _output_iri, _sink
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.output.native import TEXT_FORMATS
from spaseq.engine.output.times import TIME_FORMATS
from tests.output import writers_oracle
from tests.properties.test_differential import event_parts, kb, queries
from tests.util import EX, PREFIXES

EXAMPLES = int(os.environ.get("SPASEQ_DIFF_EXAMPLES", "150"))
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"

# ------------------------------------------------------------ random runs, in process

#: objects: numbers, and literals and IRIs that need escaping or carry a language/datatype
VALUES = st.sampled_from([
    "1", "2", "3", "2.5", '"2"^^xsd:double', '"NaN"^^xsd:double', '"3"', "1e0",
    r'"quote \" backslash \\ comma, semicolon;"', r'"line\nbreak\ttab\rcr"@en-GB',
    '"é ∀ 😀"@fr', r'"\u0001 control \u007f del"', '"x y"^^:dt', "_:b1", "<http://ex.org/é?a=b#c>",
    '""', '"typed"^^xsd:string',
])
#: time grids and origins: whole and fractional seconds, steps below 1e-4 (JSON numbers with
#: an exponent), negative times, a wall-clock xsd:dateTime
STEPS = [Decimal(1), Decimal("0.1"), Decimal("0.05"), Decimal("0.00001"), Decimal("0.000000007")]
ORIGINS = [Decimal(0), Decimal("-2.5"), Decimal("1704103220.1"),
           # the table's times: milliseconds rounded half to even, and the wall-clock bound
           Decimal("0.0005"), Decimal("-0.0025"), Decimal("99999999.9995"), Decimal("1704103220.0004995")]


@st.composite
def events(draw) -> list[Event]:
    n = draw(st.integers(min_value=0, max_value=12))
    step, origin = draw(st.sampled_from(STEPS)), draw(st.sampled_from(ORIGINS))
    out = []
    for i in range(n):
        stream = draw(st.sampled_from(["u1", "u2"]))
        time = origin + step * draw(st.integers(min_value=0, max_value=6))
        parts = event_parts(draw, i, VALUES)
        triples = tuple(q.triple for q in pyoxigraph.parse(PREFIXES + " ".join(parts),
                                                           format=pyoxigraph.RdfFormat.TURTLE))
        name = draw(st.sampled_from([None, pyoxigraph.NamedNode(f"{EX}g{i}"),
                                     pyoxigraph.BlankNode(f"g{i}")]))
        # stamped as an xsd:dateTime or as a number: a stream may mix them (decision 43)
        dated = draw(st.booleans())
        out.append(Event(EX + stream, time, triples, i, name, dated=dated))
    return sorted(out, key=Event.sort_key)


#: SELECT clauses: all, a list (an unbound ?zz, a repeat-free order unlike the slots'), DISTINCT,
#: and CONSTRUCT templates (their variables are the columns)
HEADS = [
    "SELECT *", "SELECT ?v1 ?k ?v0 ?zz", "SELECT DISTINCT ?k", "SELECT DISTINCT ?k ?t0 ?o1",
    "SELECT DISTINCT *", "SELECT ?s0",
    "CONSTRUCT { ?s0 :p ?v0 . ?k :q [ :r ?v1 ] }", "CONSTRUCT { ?zz :p ?k }",
]
#: variables renamed to the names --with-time adds (``_time``, ``_start``): bound or not,
#: selected or not
RENAMES = [{}, {"k": "_time"}, {"k": "_time", "v0": "_start"}, {"zz": "_start"}, {"s0": "_start"}]

#: who writes: the oracle, or a native writer taking the runtime's matches or rows as values
WRITERS = ("oracle", "runtime", "rows")


def rename(text: str, names: dict[str, str]) -> str:
    for old, new in names.items():
        text = re.sub(rf"\?{old}\b", f"?{new}", text)
    return text


def run(query: A.Query | str, evs: list[Event], fmt: str, with_time: bool, writer: str,
        options: EngineOptions | None = None, end_of_input: bool = True,
        time_format: str = "input", threaded: bool = False) -> str:
    """The output of ``query`` over ``evs`` as ``spaseq run`` writes it (its ``_sink``), by
    ``writer`` (one of ``WRITERS``); ``threaded``: into a file, the native rows written on a
    thread of their own."""
    if isinstance(query, str):
        query = parse_query(query)
    args = argparse.Namespace(format=fmt, with_time=with_time, time_format=time_format, query="q.rq",
                              events="full")
    with tempfile.TemporaryDirectory() as tmp:
        out: IO[str] = (open(Path(tmp) / "out", "w+", encoding="utf-8", newline="") if threaded
                        else io.StringIO())
        with out:
            if writer == "oracle":
                sink, write = writers_oracle.sink(fmt, query, out, with_time, time_format)
            else:
                sink, write = _sink(args, query, out, python_rows=writer == "rows", thread=threaded)
                assert (write is None) == (writer == "runtime")
                assert not threaded or sink.threaded
            sink.start()
            engine = Engine(kb(), options)
            handle = engine.register(query, keep=False, output=_output_iri(args), on_output=write)
            if write is None:
                handle.runtime.sink = sink
            engine.run(evs, end_of_input=end_of_input)
            sink.finish()
            out.seek(0)
            return relabel(out.read()) if fmt == "trig" else out.read()


_BLANK = re.compile(r"_:([A-Za-z0-9_][A-Za-z0-9_.\-]*)")


def relabel(text: str) -> str:
    """TriG with its blank nodes (made randomly) labelled b0, b1, ... in order of first
    occurrence."""
    labels: dict[str, str] = {}
    return _BLANK.sub(lambda m: "_:" + labels.setdefault(m.group(1), f"b{len(labels)}"), text)


@settings(max_examples=EXAMPLES, deadline=None)
@given(queries(), st.sampled_from(HEADS), st.sampled_from(RENAMES), st.booleans(), events(),
       st.sampled_from(TEXT_FORMATS), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from(TIME_FORMATS))
def test_native_writers_write_the_oracles_bytes(text, head, names, distinct, evs, fmt, with_time,
                                                lazy, end, time_format) -> None:
    query = parse_query(rename(text.replace("SELECT *", head), names))
    if distinct and query.match.is_construct:  # DISTINCT CONSTRUCT: the API's
        query = replace(query, match=replace(query.match, distinct=True))
    options = EngineOptions(lazy_conjunction=lazy, lazy_chain=lazy)
    expected = run(query, evs, fmt, with_time, "oracle", options, end, time_format)
    for writer in ("runtime", "rows"):
        assert run(query, evs, fmt, with_time, writer, options, end, time_format) == expected, (writer, query.source)
    assert run(query, evs, fmt, with_time, "runtime", options, end, time_format, threaded=True) == expected


def test_the_comparison_can_fail() -> None:
    """A run with matches writes rows, so a writer that wrote nothing would be caught."""
    text = (f"PREFIX : <{EX}>\nSELECT * WITHIN 5 SECONDS\nFROM STREAM U1 <{EX}u1>\n"
            "WHERE { SEQ(A; B) DEFINE GPM A ON U1 { ?s :val ?a } DEFINE GPM B ON U1 { ?s :val ?b } }")
    triples = tuple(pyoxigraph.parse(f"<{EX}x> <{EX}val> 1 .", format=pyoxigraph.RdfFormat.TURTLE))
    evs = [Event(EX + "u1", Decimal(t), tuple(q.triple for q in triples), t, None) for t in (1, 2)]
    one = '{"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}'
    assert run(text, evs, "jsonl", False, "runtime") == (
        f'{{"time": 2, "start": 1, "bindings": {{"a": {one}, "b": {one}, "s": {{"type": "uri", '
        f'"value": "{EX}x"}}}}, "events": [{{"atom": "A", "stream": "{EX}u1", "time": 1, '
        f'"graph": null}}, {{"atom": "B", "stream": "{EX}u1", "time": 2, "graph": null}}]}}\n')
    assert run(text, evs, "csv", True, "runtime") == "_time,_start,a,b,s\r\n2,1,1,1,http://ex.org/x\r\n"
    dated = [Event(e.stream, e.time, e.triples, e.seq, dated=True) for e in evs]
    assert run(text, dated, "csv", True, "rows") == (
        "_time,_start,a,b,s\r\n1970-01-01T00:00:02Z,1970-01-01T00:00:01Z,1,1,http://ex.org/x\r\n")
    assert run(text, dated, "csv", True, "runtime", time_format="epoch") == (
        "_time,_start,a,b,s\r\n2,1,1,1,http://ex.org/x\r\n")


def _events(*values: int) -> list[Event]:
    """Events 1 s apart, each ``:x :val`` one of ``values``."""
    return [Event(EX + "u1", Decimal(t + 1), tuple(q.triple for q in pyoxigraph.parse(
                f"<{EX}x> <{EX}val> {v} .", format=pyoxigraph.RdfFormat.TURTLE)), t)
            for t, v in enumerate(values)]


def test_what_the_python_writers_alone_wrote_is_written_natively() -> None:
    """The two cases only the Python writers took, with the runtime's matches and with rows
    given as values: a DISTINCT CONSTRUCT query (DISTINCT over the whole mapping, the
    template's variables written) and a variable named ``_time`` with ``--with-time`` (the
    time in its place)."""
    construct = parse_query(f"PREFIX : <{EX}>\nCONSTRUCT {{ ?s :p ?a }} WITHIN 5 SECONDS\n"
                            f"FROM STREAM U1 <{EX}u1>\nWHERE {{ SEQ(A; B) DEFINE GPM A ON U1 {{ ?s :val ?a }} "
                            "DEFINE GPM B ON U1 { ?s :val ?b } }")
    construct = replace(construct, match=replace(construct.match, distinct=True))  # the API's
    evs = _events(1, 1, 1, 2)
    for writer in ("runtime", "rows"):
        # ?a ?b: (1, 1) at 2 s, again at 3 s (dropped), (1, 2) at 4 s, which writes the same row
        assert run(construct, evs, "csv", True, writer) == (
            "_time,_start,s,a\r\n2,1,http://ex.org/x,1\r\n4,3,http://ex.org/x,1\r\n")
    for fmt in TEXT_FORMATS:
        expected = run(construct, evs, fmt, True, "oracle")
        assert run(construct, evs, fmt, True, "runtime") == expected
        assert run(construct, evs, fmt, True, "rows") == expected
    select = (f"PREFIX : <{EX}>\nSELECT ?_time ?s WITHIN 5 SECONDS FROM STREAM U1 <{EX}u1>\n"
              "WHERE { SEQ(A) DEFINE GPM A ON U1 { ?s :val ?_time } }")
    for writer in ("runtime", "rows"):
        assert run(select, _events(7), "csv", True, writer) == (
            "_time,_start,_time,s\r\n1,1,1,http://ex.org/x\r\n")
        assert json.loads(run(select, _events(7), "json", True, writer))["results"]["bindings"] == [
            {"_time": {"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#decimal"},
             "s": {"type": "uri", "value": f"{EX}x"},
             "_start": {"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#decimal"}}]
        for fmt in TEXT_FORMATS:
            assert run(select, _events(7, 8), fmt, True, writer) == run(select, _events(7, 8), fmt, True, "oracle")


# ------------------------------------------------------------ spaseq run on the fixtures

def _scenario_args(folder: Path) -> list[str]:
    args = [str(next(folder.glob("*.q"))), "--stream-file", str(next(folder.glob("stream*.txt")))]
    if (folder / "externalKB.nt").exists():
        args += ["--kb", str(folder / "externalKB.nt")]
    return args


SMARTGRID = FIXTURES / "smartgrid"
COMPOSITION = FIXTURES / "composition"
SMARTGRID_ARGS = [
    str(SMARTGRID / "query.rq"), "--stream", f"S1={SMARTGRID / 'power.trig'}",
    "--stream", f"S2={SMARTGRID / 'weather.trig'}", "--stream", f"S3={SMARTGRID / 'storage.trig'}",
    "--kb", str(SMARTGRID / "kb.nt")]
CASES = {
    **{f"original/{d.name}": _scenario_args(d)
       for d in sorted((FIXTURES / "original").iterdir()) if d.is_dir() and d.name != "credit-card"},
    "smartgrid (replay files read natively, KB)": SMARTGRID_ARGS,
    "composition/alerts (CONSTRUCT as solutions)": [
        str(COMPOSITION / "alerts.rq"), "--stream", f"S={COMPOSITION / 'readings.trig'}"],
    # the rows come through Python, as values
    "composition/repeated (--with)": [
        str(COMPOSITION / "repeated.rq"), "--with", f"{COMPOSITION / 'alerts.rq'}=http://ex.org/alerts",
        "--stream", f"S={COMPOSITION / 'readings.trig'}"],
    "smartgrid --materialize (on the writing thread)": [*SMARTGRID_ARGS, "--materialize", "{store}"],
    "original/kleeneplus --engine reference": [*_scenario_args(FIXTURES / "original" / "kleeneplus"),
                                               "--engine", "reference"],
}


def cli(args: list[str], tmp_path: Path, writer: str, capsys) -> tuple[int, bytes, str]:
    """``spaseq run ARGS`` written by the native writers (``writer`` "native") or the oracle:
    its status, output (TriG relabelled) and stderr."""
    out = tmp_path / f"out-{writer}"
    store = tmp_path / f"store-{writer}-{len(list(tmp_path.glob('store-*')))}"  # one for each run
    args = [a.replace("{store}", str(store)) for a in args]
    with pytest.MonkeyPatch.context() as patch:
        if writer == "oracle":
            patch.setattr("spaseq.engine.cli.run._sink", writers_oracle.run_sink)
        status = main(["run", *args, "--output", str(out)])
    text = out.read_bytes()
    if "trig" in args:
        text = relabel(text.decode("utf-8")).encode("utf-8")
    return status, text, capsys.readouterr().err


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_spaseq_run_writes_the_oracles_bytes(case, fmt, tmp_path, capsys) -> None:
    for with_time in ([], ["--with-time"], ["--with-time", "--time-format", "dateTime"],
                      ["--with-time", "--time-format", "epoch"]):
        args = [*CASES[case], "--format", fmt, *with_time]
        status, oracle, err = cli(args, tmp_path, "oracle", capsys)
        assert status == 0, err
        assert cli(args, tmp_path, "native", capsys) == (0, oracle, err)
        assert oracle.count(b"\n") >= {"jsonl": 1, "csv": 2, "tsv": 2, "json": 3, "table": 3, "trig": 6}[fmt]  # rows


def write_broken_run(folder: Path) -> None:
    """``q.rq`` and ``bad.trig`` in ``folder``: one match, ``:x`` 1 then 5 at 2.5 s, before a
    syntax error on line 10 of the file."""
    (folder / "q.rq").write_text(
        f"PREFIX : <{EX}>\nSELECT ?s ?a ?b WITHIN 10 SECONDS\nFROM STREAM S1 <{EX}s1>\n"
        "WHERE { SEQ(A; B) DEFINE GPM A ON S1 { ?s :a ?a } DEFINE GPM B ON S1 { ?s :b ?b } }\n")
    (folder / "bad.trig").write_text(
        "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
        ":e1 prov:generatedAtTime 1 .\n:e1 { :x :a 1 . }\n:e2 prov:generatedAtTime 2.5 .\n"
        ":e2 { :x :b 5 . }\n:e3 prov:generatedAtTime 3 .\n:e3 { :y :c 0 . }\n"
        ":e4 prov:generatedAtTime 4 .\n:e4 { :x :b @@ . }\n")


def test_input_error_keeps_the_contract(tmp_path, capsys) -> None:
    """A broken replay file: the matches before it written (and flushed), then
    ``FILE:LINE:COLUMN: message`` and exit status 2, natively as by the oracle, whether the
    rows come from the runtime or through Python."""
    write_broken_run(tmp_path)
    os.chdir(tmp_path)
    for fmt in TEXT_FORMATS:
        for rows in ([], ["--materialize", "{store}"]):
            args = ["q.rq", "--stream", "S1=bad.trig", "--format", fmt, *rows]
            status, oracle, err = cli(args, tmp_path, "oracle", capsys)
            assert status == 2 and err.startswith("bad.trig:10:"), err
            assert {"table": b":x  1   5", "trig": b":x"}.get(fmt, b"http://ex.org/x") in oracle
            assert cli(args, tmp_path, "native", capsys) == (status, oracle, err)


# ------------------------------------------------------------ the writing thread's errors

def _many_matches(tmp_path: Path) -> list[str]:
    """A replay run with tens of thousands of rows (more than a batch and a chunk)."""
    (tmp_path / "q.rq").write_text(
        f"PREFIX : <{EX}>\nSELECT * WITHIN 100 SECONDS\nFROM STREAM S1 <{EX}s1>\n"
        "WHERE { SEQ(A, B) DEFINE GPM A ON S1 { ?s :a ?a } DEFINE GPM B ON S1 { ?s :a ?b } }\n")
    prov = "<http://www.w3.org/ns/prov#generatedAtTime>"
    (tmp_path / "s.nq").write_text("".join(
        f"<{EX}x> <{EX}a> \"{i}\" <{EX}g{i}> .\n<{EX}g{i}> {prov} \"{i}\" .\n" for i in range(400)))
    return [sys.executable, "-m", "spaseq.engine.cli.main", "run", str(tmp_path / "q.rq"),
            "--stream", f"S1={tmp_path / 's.nq'}", "--format", "jsonl"]


#: the rows from the runtime, on the writing thread; through Python (as values), on the
#: writing thread and on the caller's
ROWS = ([], ["--materialize", "{store}"], ["--engine", "reference"])


def test_a_closed_pipe_ends_the_run_quietly(tmp_path) -> None:
    """``spaseq run ... | head``: the writer meets a closed pipe; the run stops with status 0
    and no traceback, wherever the rows came from."""
    command = _many_matches(tmp_path)
    for rows in ROWS:
        rows = [a.replace("{store}", str(tmp_path / "store")) for a in rows]
        proc = subprocess.Popen([*command, *rows], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0 and err == "", err
        assert json.loads(first)["bindings"]["s"]["value"] == f"{EX}x"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_a_message_not_a_traceback(tmp_path) -> None:
    """Rows the system refuses to store: ``spaseq: <why>``, exit status 1, on the writing
    thread or the caller's."""
    command = _many_matches(tmp_path)
    for rows in ROWS:
        rows = [a.replace("{store}", str(tmp_path / "store")) for a in rows]
        proc = subprocess.run([*command, *rows, "--output", "/dev/full"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == "spaseq: No space left on device\n", proc.stderr


@pytest.mark.parametrize("case", ["smartgrid (replay files read natively, KB)", "composition/repeated (--with)",
                                  "original/kleeneplus --engine reference"])
def test_events_ids_and_none_are_the_full_records_cut(case, tmp_path, capsys) -> None:
    """``--events ids`` (issue 29) lists each match's events by graph name, ``--events none``
    leaves the member out; the rest of each record is the contract's, byte for byte, whether
    the rows come from the native runtime or through Python; another format refuses them."""
    args = [*CASES[case], "--format", "jsonl"]
    status, full, err = cli(args, tmp_path, "native", capsys)
    assert status == 0, err
    records = [json.loads(line) for line in full.splitlines()]
    assert records and all(r["events"] for r in records)
    status, ids, _ = cli([*args, "--events", "ids"], tmp_path, "native", capsys)
    assert status == 0
    assert [json.loads(line) for line in ids.splitlines()] == [
        {**r, "events": [e["graph"] for e in r["events"]]} for r in records]
    status, none, _ = cli([*args, "--events", "none"], tmp_path, "native", capsys)
    assert status == 0
    assert none.splitlines() == [re.sub(rb', "events": \[.*\]}$', b"}", line) for line in full.splitlines()]
    assert main(["run", *CASES[case], "--format", "csv", "--events", "none"]) == 2
    assert "--events none is for --format jsonl" in capsys.readouterr().err
