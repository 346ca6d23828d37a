"""``spaseq run`` gives times as the input wrote them (docs/decisions.md 43): a match's times
are xsd:dateTime (UTC) when every event it took was stamped with one, xsd:decimal seconds
otherwise, in every format and in the materialised store; ``--time-format dateTime|epoch``
picks one form, and ``epoch`` is exactly what numerically stamped input gives."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from pyoxigraph import Store

from spaseq.engine.cli.main import main
from spaseq.engine.values.timestamps import datetime_text, datetime_to_seconds

ROOT = Path(__file__).resolve().parents[2]
SG = ROOT / "fixtures" / "smartgrid"
KLEENE = ROOT / "fixtures" / "original" / "kleeneplus"
XSD = "http://www.w3.org/2001/XMLSchema#"
STREAMS = {"S1": "power.trig", "S2": "weather.trig", "S3": "storage.trig"}
FORMATS = ("jsonl", "json", "csv", "tsv")


def smartgrid(folder: Path = SG) -> list[str]:
    return [str(SG / "query.rq"), *(f"--stream={n}={folder / f}" for n, f in STREAMS.items()),
            "--kb", f"http://smartgrid.org/db={SG / 'kb.nt'}"]


def iso(seconds: float) -> str:
    """A JSON number of seconds as an xsd:dateTime."""
    return datetime_text(Decimal(str(seconds)))


def run(tmp_path: Path, capsys, *args: str) -> str:
    out = tmp_path / "out"
    assert main(["run", *args, "--output", str(out)]) == 0, capsys.readouterr().err
    return out.read_text(encoding="utf-8")


def numbers_copy(tmp_path: Path) -> Path:
    """The smart-grid streams with every xsd:dateTime stamp written as its epoch seconds."""
    folder = tmp_path / "numbers"
    folder.mkdir()
    stamp = re.compile(r'"([^"]+)"\^\^xsd:dateTime')
    for name in STREAMS.values():
        text = (SG / name).read_text(encoding="utf-8")
        assert stamp.search(text)
        (folder / name).write_text(stamp.sub(lambda m: str(datetime_to_seconds(m[1])), text), encoding="utf-8")
    return folder


#: the rows from the native runtime, or through Python (as values)
ROWS = {"runtime": [], "python": ["--engine", "reference"]}


@pytest.mark.parametrize("rows", sorted(ROWS))
def test_datetime_stamps_give_datetime_times(rows, tmp_path, capsys) -> None:
    how = ROWS[rows]
    records = [json.loads(line) for line in
               run(tmp_path, capsys, *smartgrid(), "--format", "jsonl", *how).splitlines()]
    assert records and all(r["time_iso"] == iso(r["time"]) and r["start_iso"] == iso(r["start"])
                           for r in records)
    assert list(records[0])[:4] == ["time", "start", "time_iso", "start_iso"]  # numbers kept, ISO beside
    assert records[0]["time_iso"] == "2026-11-01T10:03:00Z"
    doc = json.loads(run(tmp_path, capsys, *smartgrid(), "--format", "json", "--with-time", *how))
    first = doc["results"]["bindings"][0]
    assert first["_time"] == {"type": "literal", "value": "2026-11-01T10:03:00Z", "datatype": XSD + "dateTime"}
    assert first["_start"]["value"] == "2026-11-01T10:00:00Z"
    csv = run(tmp_path, capsys, *smartgrid(), "--format", "csv", "--with-time", *how)
    assert csv.splitlines()[1].startswith("2026-11-01T10:03:00Z,2026-11-01T10:00:00Z,")
    tsv = run(tmp_path, capsys, *smartgrid(), "--format", "tsv", "--with-time", *how)
    assert tsv.splitlines()[1].startswith(f'"2026-11-01T10:03:00Z"^^<{XSD}dateTime>\t')


@pytest.mark.parametrize("fmt", FORMATS)
def test_epoch_is_what_number_stamps_give(fmt, tmp_path, capsys) -> None:
    """``--time-format epoch`` over dateTime stamps writes the very bytes the same events
    stamped with their epoch seconds give by default (the output before decision 43)."""
    numbers = run(tmp_path, capsys, *smartgrid(numbers_copy(tmp_path)), "--format", fmt, "--with-time")
    assert "2026-11-01" not in numbers and "time_iso" not in numbers
    assert run(tmp_path, capsys, *smartgrid(), "--format", fmt, "--with-time", "--time-format", "epoch") == numbers
    # and the default differs only by the times' form
    dated = run(tmp_path, capsys, *smartgrid(), "--format", fmt, "--with-time")
    assert dated != numbers and dated.count("\n") == numbers.count("\n")


def test_number_stamps_stay_decimal_unless_datetime_is_asked(tmp_path, capsys) -> None:
    args = [str(KLEENE / "queryKleene.q"), "--stream-file", str(KLEENE / "streamKleene.txt")]
    plain = [json.loads(line) for line in run(tmp_path, capsys, *args, "--format", "jsonl").splitlines()]
    assert plain and all("time_iso" not in r for r in plain)
    forced = [json.loads(line) for line in
              run(tmp_path, capsys, *args, "--format", "jsonl", "--time-format", "dateTime").splitlines()]
    assert [r["time_iso"] for r in forced] == [iso(r["time"]) for r in plain]
    assert forced[0]["time_iso"].startswith("1970-01-01T00:00:")
    tsv = run(tmp_path, capsys, *args, "--format", "tsv", "--with-time")
    assert f"^^<{XSD}decimal>" in tsv and "dateTime" not in tsv


MIXED_QUERY = """PREFIX : <http://ex.org/>
SELECT ?a ?b WITHIN 100 SECONDS
FROM STREAM S1 <http://ex.org/s1>
FROM STREAM S2 <http://ex.org/s2>
WHERE { SEQ(A; B) DEFINE GPM A ON S1 { :x :a ?a } DEFINE GPM B ON S2 { :x :b ?b } }
"""


def mixed_inputs(tmp_path: Path) -> list[str]:
    """Both streams mix xsd:dateTime stamps (events 1, 2, 5) and numbers (3, 4, 6)."""
    head = "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n" \
           "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
    (tmp_path / "q.rq").write_text(MIXED_QUERY, encoding="utf-8")
    (tmp_path / "s1.trig").write_text(
        head + ':e1 prov:generatedAtTime "1970-01-01T00:00:01Z"^^xsd:dateTime .\n:e1 { :x :a 1 }\n'
        ':e3 prov:generatedAtTime 3 .\n:e3 { :x :a 3 }\n'
        ':e5 prov:generatedAtTime "1970-01-01T00:00:05Z"^^xsd:dateTime .\n:e5 { :x :a 5 }\n',
        encoding="utf-8")
    (tmp_path / "s2.trig").write_text(
        head + ':e2 prov:generatedAtTime "1970-01-01T00:00:02.5Z"^^xsd:dateTime .\n:e2 { :x :b 2 }\n'
        ":e4 prov:generatedAtTime 4 .\n:e4 { :x :b 4 }\n"
        ":e6 prov:generatedAtTime 6.5 .\n:e6 { :x :b 6 }\n", encoding="utf-8")
    return [str(tmp_path / "q.rq"), f"--stream=S1={tmp_path / 's1.trig'}", f"--stream=S2={tmp_path / 's2.trig'}"]


@pytest.mark.parametrize("engine", ["nfa", "reference"])
def test_mixed_stamps_decide_per_match(engine, tmp_path, capsys) -> None:
    """A match is dateTime only when every event it took was stamped so, whatever its
    streams' other stamps (and whichever evaluator)."""
    out = run(tmp_path, capsys, *mixed_inputs(tmp_path), "--format", "csv", "--with-time", "--engine", engine)
    assert out.splitlines()[1:] == [
        "1970-01-01T00:00:02.5Z,1970-01-01T00:00:01Z,1,2",    # A@1, B@2.5: both dateTime
        "4,3,3,4",                                            # both numbers
        "6.5,5,5,6",                                          # A@5 dateTime, B@6.5 a number
    ]


@pytest.mark.parametrize("time_format, datatype", [("input", "dateTime"), ("epoch", "decimal")])
def test_materialised_times(time_format, datatype, tmp_path, capsys) -> None:
    store_dir = tmp_path / "store"
    run(tmp_path, capsys, *smartgrid(), "--format", "jsonl", "--materialize", str(store_dir),
        "--time-format", time_format)
    store = Store(str(store_dir))
    kinds = {(r["p"].value, r["d"].value) for r in store.query(
        "PREFIX spaseq: <https://w3id.org/spaseq#> SELECT DISTINCT ?p (DATATYPE(?t) AS ?d) WHERE { "
        "{ ?m spaseq:time ?t BIND(spaseq:time AS ?p) } UNION { ?m spaseq:start ?t BIND(spaseq:start AS ?p) } "
        "UNION { ?e spaseq:eventTime ?t BIND(spaseq:eventTime AS ?p) } }")}
    ns = "https://w3id.org/spaseq#"
    assert kinds == {(ns + p, XSD + datatype) for p in ("time", "start", "eventTime")}
    first = next(iter(store.query(
        "PREFIX spaseq: <https://w3id.org/spaseq#> SELECT ?t WHERE { ?m spaseq:time ?t } ORDER BY ?t LIMIT 1")))
    assert first["t"].value == {"input": "2026-11-01T10:03:00Z", "epoch": "1793527380"}[time_format]


def test_live_input_keeps_the_form(tmp_path) -> None:
    """Events read live from stdin (N-Quads) stamped with xsd:dateTime: jsonl has time_iso."""
    (tmp_path / "q.rq").write_text(MIXED_QUERY.replace("S2 <http://ex.org/s2>", "S2 <http://ex.org/s1>"),
                                   encoding="utf-8")
    at = "<http://www.w3.org/ns/prov#generatedAtTime>"
    lines = [f'<http://ex.org/e{i}> {at} "1970-01-01T00:00:0{i}.25Z"^^<{XSD}dateTime> .\n'
             f'<http://ex.org/x> <http://ex.org/{p}> "{i}" <http://ex.org/e{i}> .\n'
             for i, p in ((1, "a"), (2, "b"))]
    proc = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", "q.rq", "--stream", "S1=-",
                           "--format", "jsonl"], input="".join(lines), capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout.splitlines()[0])
    assert (record["time"], record["time_iso"], record["start_iso"]) == (
        2.25, "1970-01-01T00:00:02.25Z", "1970-01-01T00:00:01.25Z")


def test_unknown_time_format_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(SG / "query.rq"), "--time-format", "iso"])
    assert exit_.value.code == 2
    assert "--time-format" in capsys.readouterr().err
