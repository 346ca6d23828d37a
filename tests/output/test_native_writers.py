"""The native writers (``_native.NativeWriter``, engine/native/output) against the
Python writers, their oracle: the same run must give the same bytes in every format they
cover (jsonl, SPARQL JSON, CSV, TSV, the table, TriG, with and without ``--with-time``, times in
every ``--time-format``, events stamped as xsd:dateTime or as numbers). TriG's blank nodes are
made afresh on both sides: they are relabelled in order of first occurrence before comparing.

Two levels: random queries (the differential suite's generator, with projections, DISTINCT
and CONSTRUCT added) over random events with awkward terms, names and times, through the
engine as ``spaseq run`` wires it (the rows spelled on the caller's thread, and on a thread of
their own into a file); and ``spaseq run`` itself on the fixtures (stream description files,
replay files read natively, a KB, CONSTRUCT, an input error), with the writing's own errors."""

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

from spaseq.engine.api import Engine
from spaseq.engine.cli.main import main
from spaseq.engine.cli.run import _output_iri, _sink
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.output.native import NATIVE_FORMATS, why_not_native
from spaseq.engine.output.times import TIME_FORMATS
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


def run(text: str, evs: list[Event], fmt: str, with_time: bool, writer: str,
        options: EngineOptions | None = None, end_of_input: bool = True,
        time_format: str = "input", threaded: bool = False) -> str:
    """The output of ``text`` over ``evs`` as ``spaseq run`` writes it (its ``_sink``);
    ``threaded``: into a file, the native rows written on a thread of their own."""
    query = parse_query(text)
    args = argparse.Namespace(format=fmt, with_time=with_time, writer=writer, time_format=time_format,
                              query="q.rq")
    with tempfile.TemporaryDirectory() as tmp:
        out: IO[str] = (open(Path(tmp) / "out", "w+", encoding="utf-8", newline="") if threaded
                        else io.StringIO())
        with out:
            sink, write = _sink(args, query, out, thread=threaded)
            assert (write is None) == (writer == "native")
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
@given(queries(), st.sampled_from(HEADS), events(), st.sampled_from(NATIVE_FORMATS),
       st.booleans(), st.booleans(), st.booleans(), st.sampled_from(TIME_FORMATS))
def test_native_writers_write_the_python_bytes(text, head, evs, fmt, with_time, lazy, end,
                                               time_format) -> None:
    text = text.replace("SELECT *", head)
    options = EngineOptions(lazy_conjunction=lazy, lazy_chain=lazy)
    expected = run(text, evs, fmt, with_time, "python", options, end, time_format)
    assert run(text, evs, fmt, with_time, "native", options, end, time_format) == expected, text
    assert run(text, evs, fmt, with_time, "native", options, end, time_format, threaded=True) == expected


def test_the_comparison_can_fail() -> None:
    """A run with matches writes rows, so a writer that wrote nothing would be caught."""
    text = (f"PREFIX : <{EX}>\nSELECT * WITHIN 5 SECONDS\nFROM STREAM U1 <{EX}u1>\n"
            "WHERE { SEQ(A; B) DEFINE GPM A ON U1 { ?s :val ?a } DEFINE GPM B ON U1 { ?s :val ?b } }")
    triples = tuple(pyoxigraph.parse(f"<{EX}x> <{EX}val> 1 .", format=pyoxigraph.RdfFormat.TURTLE))
    evs = [Event(EX + "u1", Decimal(t), tuple(q.triple for q in triples), t, None) for t in (1, 2)]
    one = '{"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}'
    assert run(text, evs, "jsonl", False, "native") == (
        f'{{"time": 2, "start": 1, "bindings": {{"a": {one}, "b": {one}, "s": {{"type": "uri", '
        f'"value": "{EX}x"}}}}, "events": [{{"atom": "A", "stream": "{EX}u1", "time": 1, '
        f'"graph": null}}, {{"atom": "B", "stream": "{EX}u1", "time": 2, "graph": null}}]}}\n')
    assert run(text, evs, "csv", True, "native") == "_time,_start,a,b,s\r\n2,1,1,1,http://ex.org/x\r\n"
    dated = [Event(e.stream, e.time, e.triples, e.seq, dated=True) for e in evs]
    assert run(text, dated, "csv", True, "native") == (
        "_time,_start,a,b,s\r\n1970-01-01T00:00:02Z,1970-01-01T00:00:01Z,1,1,http://ex.org/x\r\n")
    assert run(text, dated, "csv", True, "native", time_format="epoch") == (
        "_time,_start,a,b,s\r\n2,1,1,1,http://ex.org/x\r\n")


def test_what_is_left_to_python() -> None:
    select = parse_query(f"PREFIX : <{EX}>\nSELECT ?_time FROM STREAM U1 <{EX}u1>\n"
                         "WHERE { SEQ(A) DEFINE GPM A ON U1 { ?s :val ?_time } }")
    assert why_not_native("jsonl", select, ["_time"], False) is None
    assert why_not_native("csv", select, ["_time"], True) is not None  # the column clashes
    assert why_not_native("table", select, ["_time"], True) is None  # the table has no _time column
    assert why_not_native("trig", select, ["_time"], True) is None  # TriG has no _time column
    construct = parse_query(f"PREFIX : <{EX}>\nCONSTRUCT {{ ?s :p ?a }} FROM STREAM U1 <{EX}u1>\n"
                            "WHERE { SEQ(A) DEFINE GPM A ON U1 { ?s :val ?a } }")
    assert why_not_native("trig", construct, ["s", "a"], False) is None
    construct = replace(construct, match=replace(construct.match, distinct=True))  # the API's
    assert why_not_native("trig", construct, ["s", "a"], False) is not None


# ------------------------------------------------------------ spaseq run on the fixtures

def _scenario_args(folder: Path) -> list[str]:
    args = [str(next(folder.glob("*.q"))), "--stream-file", str(next(folder.glob("stream*.txt")))]
    if (folder / "externalKB.nt").exists():
        args += ["--kb", str(folder / "externalKB.nt")]
    return args


SMARTGRID = FIXTURES / "smartgrid"
CASES = {
    **{f"original/{d.name}": _scenario_args(d)
       for d in sorted((FIXTURES / "original").iterdir()) if d.is_dir() and d.name != "credit-card"},
    "smartgrid (replay files read natively, KB)": [
        str(SMARTGRID / "query.rq"), "--stream", f"S1={SMARTGRID / 'power.trig'}",
        "--stream", f"S2={SMARTGRID / 'weather.trig'}", "--stream", f"S3={SMARTGRID / 'storage.trig'}",
        "--kb", str(SMARTGRID / "kb.nt")],
    "composition/alerts (CONSTRUCT as solutions)": [
        str(FIXTURES / "composition" / "alerts.rq"),
        "--stream", f"S={FIXTURES / 'composition' / 'readings.trig'}"],
}


def cli(args: list[str], tmp_path: Path, writer: str, capsys) -> tuple[int, bytes, str]:
    out = tmp_path / f"out-{writer}"
    status = main(["run", *args, "--writer", writer, "--output", str(out)])
    text = out.read_bytes()
    if "trig" in args:
        text = relabel(text.decode("utf-8")).encode("utf-8")
    return status, text, capsys.readouterr().err


@pytest.mark.parametrize("fmt", NATIVE_FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_spaseq_run_writes_the_python_bytes(case, fmt, tmp_path, capsys) -> None:
    for with_time in ([], ["--with-time"], ["--with-time", "--time-format", "dateTime"],
                      ["--with-time", "--time-format", "epoch"]):
        args = [*CASES[case], "--format", fmt, *with_time]
        status, python, err = cli(args, tmp_path, "python", capsys)
        assert status == 0, err
        assert cli(args, tmp_path, "native", capsys) == (0, python, err)
        assert python.count(b"\n") >= {"jsonl": 1, "csv": 2, "tsv": 2, "json": 3, "table": 3, "trig": 6}[fmt]  # rows


def test_input_error_keeps_the_contract(tmp_path, capsys) -> None:
    """A broken replay file: the matches before it written (and flushed), then
    ``FILE:LINE:COLUMN: message`` and exit status 2, natively as in Python."""
    (tmp_path / "q.rq").write_text(
        f"PREFIX : <{EX}>\nSELECT ?s ?a ?b WITHIN 10 SECONDS\nFROM STREAM S1 <{EX}s1>\n"
        "WHERE { SEQ(A; B) DEFINE GPM A ON S1 { ?s :a ?a } DEFINE GPM B ON S1 { ?s :b ?b } }\n")
    (tmp_path / "bad.trig").write_text(
        "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
        ":e1 prov:generatedAtTime 1 .\n:e1 { :x :a 1 . }\n:e2 prov:generatedAtTime 2.5 .\n"
        ":e2 { :x :b 5 . }\n:e3 prov:generatedAtTime 3 .\n:e3 { :y :c 0 . }\n"
        ":e4 prov:generatedAtTime 4 .\n:e4 { :x :b @@ . }\n")
    os.chdir(tmp_path)
    for fmt in NATIVE_FORMATS:
        args = ["q.rq", "--stream", "S1=bad.trig", "--format", fmt]
        status, python, err = cli(args, tmp_path, "python", capsys)
        assert status == 2 and err.startswith("bad.trig:10:"), err
        assert {"table": b":x  1   5", "trig": b":x"}.get(fmt, b"http://ex.org/x") in python
        assert cli(args, tmp_path, "native", capsys) == (status, python, err)


def test_writer_native_refuses_what_it_does_not_cover(tmp_path, capsys) -> None:
    args = [*CASES["original/kleeneplus"], "--format", "trig", "--writer", "native",
            "--materialize", str(tmp_path / "store")]
    assert main(["run", *args]) == 2
    assert "--writer native: --materialize is written in Python" in capsys.readouterr().err


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


def test_a_closed_pipe_ends_the_run_quietly(tmp_path) -> None:
    """``spaseq run ... | head``: the writing thread meets a closed pipe; the run stops with
    status 0 and no traceback, as when Python wrote the rows."""
    command = _many_matches(tmp_path)
    for writer in ("native", "python"):
        proc = subprocess.Popen([*command, "--writer", writer], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0 and err == "", err
        assert json.loads(first)["bindings"]["s"]["value"] == f"{EX}x"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_a_message_not_a_traceback(tmp_path) -> None:
    """Rows the system refuses to store: ``spaseq: <why>``, exit status 1, for the writing
    thread as for the Python writers."""
    command = _many_matches(tmp_path)
    for writer in ("native", "python"):
        proc = subprocess.run([*command, "--writer", writer, "--output", "/dev/full"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == "spaseq: No space left on device\n", proc.stderr
