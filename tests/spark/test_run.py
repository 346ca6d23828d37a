"""``spaseq run --spark`` (issue 27) writes exactly the bytes ``spaseq run`` writes: for
random queries and streams (the differential generators), and for queries split by key, by
time and not at all, trailing negations and DISTINCT included; ``--spark-output`` writes the
same results as Parquet; bad input stops the job with the file, line and column. In the
suite's one local[2] session (``--spark`` uses a session already running)."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings

from spaseq.engine.cli.main import main
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.query import parse_query
from spaseq.engine.output.match_rdf import stamp_literal
from spaseq.engine.vocab import GENERATED_AT_TIME
from tests.properties.test_differential import events, kb, queries
from tests.util import EX, ev, query_text

pytest.importorskip("pandas")

#: examples of the random differential test: each runs Spark jobs (about a second)
SPARK_EXAMPLES = 8


def _write_inputs(folder: Path, evs, store: pyoxigraph.Store) -> list[str]:
    """The events as two TriG replay files (u1, u2) and the KB as N-Quads: the options."""
    folder.mkdir(parents=True, exist_ok=True)
    by_stream: dict[str, list] = {"u1": [], "u2": []}
    for e in evs:
        name = pyoxigraph.NamedNode(f"{EX}g{e.seq}")
        by_stream[e.stream.removeprefix(EX)].append(
            pyoxigraph.Quad(name, GENERATED_AT_TIME, stamp_literal(e.time), pyoxigraph.DefaultGraph()))
        by_stream[e.stream.removeprefix(EX)] += [pyoxigraph.Quad(t.subject, t.predicate, t.object, name)
                                                 for t in e.triples]
    options = []
    for stream, quads in by_stream.items():
        path = folder / f"{stream}.trig"
        path.write_bytes(pyoxigraph.serialize(quads, format=pyoxigraph.RdfFormat.TRIG) or b"")
        options += ["--stream", f"{stream.upper()}={path}"]
    kb_path = folder / "kb.nq"
    kb_path.write_bytes(pyoxigraph.serialize(store, format=pyoxigraph.RdfFormat.N_QUADS) or b"")
    return [*options, "--kb", str(kb_path)]


def _run(folder: Path, text: str, options: list[str], *extra: str) -> tuple[int, bytes]:
    query = folder / "q.rq"
    query.write_text(text, encoding="utf-8")
    out = folder / ("spark.out" if "--spark" in extra else "plain.out")
    status = main(["run", str(query), *options, "--output", str(out), *extra])
    return status, out.read_bytes() if out.exists() else b""


def _same_bytes(folder: Path, text: str, options: list[str], fmt: str = "jsonl") -> bytes:
    plain = _run(folder, text, options, "--format", fmt)
    on_spark = _run(folder, text, options, "--format", fmt, "--spark", "local[2]")
    assert on_spark == plain, text
    return plain[1]


@settings(max_examples=SPARK_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries(), events())
def test_random_queries_write_the_same_bytes_on_spark(spark, tmp_path, text, evs) -> None:
    folder = tmp_path / f"x{abs(hash((text, len(evs))))}"
    _same_bytes(folder, text, _write_inputs(folder, evs, kb()))


DEFINES = ("DEFINE GPM A ON U1 { ?a :kind :a ; :key ?k ; :v ?va } "
           "DEFINE GPM B ON U2 { ?b :kind :b ; :key ?k ; :v ?vb FILTER(?vb > ?va) } "
           "DEFINE GPM C ON U1 { ?c :kind :c ; :key ?k GRAPH :kb { ?k :owner ?o } } "
           "DEFINE GPM N ON U2 { ?n :kind :b ; :key ?k ; :v 9 } "
           "DEFINE GPM H ON U1 { ?h :kind :c ; :v 0 } "
           "DEFINE GPM T ON U1 { ?t :kind :c ; :key ?x GRAPH :kb { ?x :alias ?k } }")
CASES = {
    "key": ("A ; B : C", "6 SECONDS", "*"),
    "key, trailing negation": ("A ; B ; N!", "4 SECONDS", "*"),
    "key, DISTINCT": ("A ; B", "5 SECONDS", "DISTINCT ?k ?va"),
    "key, through the KB": ("A ; T", "4 SECONDS", "*"),
    "time": ("A , B ; C", "6 SECONDS", "*"),
    "time, trailing negation, head negation": ("H! ; A , B ; N!", "3 SECONDS", "*"),
    "none": ("A ; B ; C", "5 EVENTS", "*"),
    "none, consumption": ("A ; B", "5 SECONDS CONSUMPTION MATCHED", "*"),
}


def _stream(seed: int = 7, n: int = 240) -> list:
    """Events of three keys on two streams, with ties across them."""
    import random

    rnd = random.Random(seed)
    out, time = [], 0
    for i in range(n):
        time += rnd.choice((0, 1, 1))
        stream = rnd.choice(("u1", "u1", "u2"))
        kind = "b" if stream == "u2" else rnd.choice("ac")
        out.append(ev(stream, time, f":e{i} :kind :{kind} ; :key :K{rnd.randrange(3)} ; :v {rnd.randrange(10)} .",
                      seq=i))
    return out


@pytest.mark.parametrize("case", CASES)
def test_each_way_of_splitting_writes_the_same_bytes(spark, tmp_path, case: str, capsys) -> None:
    seq, within, select = CASES[case]
    text = query_text(seq, DEFINES, select, within=within)
    assert plan_query(parse_query(text)).split.kind == case.split(",")[0]
    options = _write_inputs(tmp_path, _stream(), kb())
    capsys.readouterr()
    found = _same_bytes(tmp_path, text, options, "table" if "DISTINCT" in select else "jsonl")
    assert found.count(b"\n") >= 2  # the stream gives the query matches
    noted = "note: not split (one partition)" in capsys.readouterr().err  # said plainly, never a wrong answer
    assert noted == case.startswith("none")


def test_spark_output_writes_the_results_as_parquet(spark, tmp_path) -> None:
    text = query_text("A ; B", DEFINES, "DISTINCT ?k ?va ?vb", within="5 SECONDS")
    options = _write_inputs(tmp_path, _stream(), kb())
    _, plain = _run(tmp_path, text, options, "--format", "jsonl")
    expected = [json.loads(line) for line in plain.decode().splitlines()]
    query = tmp_path / "q.rq"
    assert main(["run", str(query), *options, "--spark", "local[2]", "--spark-output", str(tmp_path / "pq")]) == 0
    rows = sorted(spark.read.parquet(str(tmp_path / "pq")).collect(), key=lambda r: r._number)
    assert [r._number for r in rows] == list(range(1, len(expected) + 1))
    assert [r.k for r in rows] == [f"<{row['bindings']['k']['value']}>" for row in expected]
    assert [r.va.split('"')[1] for r in rows] == [row["bindings"]["va"]["value"] for row in expected]
    assert [float(r._time) for r in rows] == [float(row["time"]) for row in expected]
    assert all(r._events and r._events[0].atom == "A" for r in rows)
    # the columns `spaseq run --format parquet` shares with it hold the same values (decision 72)
    import pyarrow.parquet as pq

    _run(tmp_path, text, options, "--format", "parquet")
    local = pq.read_table(tmp_path / "plain.out").to_pylist()
    columns, fields = ("_number", "_start", "_time", "_dated", "k", "va", "vb"), ("atom", "stream", "time", "dated", "graph")
    assert [{**{c: r[c] for c in columns}, "_events": [{f: e[f] for f in fields} for e in r._events]}
            for r in rows] == [{**{c: row[c] for c in columns}, "_events": [{f: e[f] for f in fields}
                                                                           for e in row["_events"]]}
                               for row in local]


def test_a_malformed_input_file_stops_the_job_with_its_place(spark, tmp_path, capsys) -> None:
    text = query_text("A ; B", DEFINES, within="5 SECONDS")
    options = _write_inputs(tmp_path, _stream(), kb())
    bad = tmp_path / "u2.trig"
    lines = bad.read_text().splitlines()
    lines[3] += " <oops"
    bad.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    plain_status, _ = _run(tmp_path, text, options)
    plain_err = capsys.readouterr().err
    status, out = _run(tmp_path, text, options, "--spark", "local[2]")
    err = capsys.readouterr().err
    assert (status, plain_status, out) == (2, 2, b"")  # nothing matched: Spark reads every file first
    error = plain_err[plain_err.index(f"{bad}:"):]
    assert error.startswith(f"{bad}:4:44: TriG syntax error")
    assert err.endswith(error) and "Traceback" not in err


def test_what_spark_does_not_do_is_refused_plainly(spark, tmp_path, capsys) -> None:
    text = query_text("A ; B", DEFINES, within="5 SECONDS")
    options = _write_inputs(tmp_path, _stream(), kb())
    status, _ = _run(tmp_path, text, options, "--spark", "local[2]", "--engine", "reference")
    assert status == 2 and "--engine reference: not with --spark" in capsys.readouterr().err
    status, _ = _run(tmp_path, text, ["--stream", f"U1={tmp_path / 'none.trig'}"], "--spark", "local[2]")
    assert status == 2 and f"{tmp_path / 'none.trig'}: no such file or folder" in capsys.readouterr().err

