"""``spaseq run --format arrow|parquet`` (output/arrow.py and the core's columns.rs): the same
results as the jsonl contract (itself checked byte for byte against the writers' oracle), row
for row, read back by pyarrow; the columns ``result_schema`` states; ``--events``; and a run
that stops on bad input still leaves a whole file with the matches found before."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pyoxigraph
import pytest

from spaseq.engine.cli.main import main
from spaseq.engine.output.arrow import LEADING, result_schema
from tests.output.test_native_writers import CASES, cli, write_broken_run
from tests.util import EX


def read(fmt: str, data: bytes, tmp_path: Path) -> pa.Table:
    """The table an Arrow IPC stream or a Parquet file holds."""
    if fmt == "arrow":
        return pa.ipc.open_stream(data).read_all()
    path = tmp_path / "read.parquet"
    path.write_bytes(data)
    return pq.read_table(path)


def ntriples(binding: dict[str, str] | None) -> str | None:
    """A SPARQL JSON results term as N-Triples, spelled by pyoxigraph."""
    if binding is None:
        return None
    kind, value = binding["type"], binding["value"]
    if kind == "uri":
        return str(pyoxigraph.NamedNode(value))
    if kind == "bnode":
        return str(pyoxigraph.BlankNode(value))
    if "xml:lang" in binding:
        return str(pyoxigraph.Literal(value, language=binding["xml:lang"]))
    return str(pyoxigraph.Literal(value, datatype=pyoxigraph.NamedNode(binding["datatype"]))
               if "datatype" in binding else pyoxigraph.Literal(value))


def graph(name: str | None) -> str | None:
    """A jsonl event's graph name (an IRI or ``_:label``) in N-Triples."""
    return None if name is None or name.startswith("_:") else f"<{name}>"


def rows_of_jsonl(text: bytes, columns: list[str]) -> list[dict[str, Any]]:
    """The Arrow rows a jsonl output stands for (its events without ``dated``: jsonl does not
    say it per event)."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        r = json.loads(line, parse_float=Decimal, parse_int=Decimal)
        rows.append({"_number": number, "_start": r["start"], "_time": r["time"], "_dated": "time_iso" in r,
                     "_events": [{"atom": e["atom"], "stream": e["stream"], "time": e["time"],
                                  "graph": graph(e["graph"])} for e in r["events"]],
                     **{v: ntriples(r["bindings"].get(v)) for v in columns}})
    return rows


def arrow_rows(table: pa.Table) -> list[dict[str, Any]]:
    rows = table.to_pylist()
    for r in rows:
        for e in r["_events"]:
            del e["dated"]
    return rows


@pytest.mark.parametrize("case", sorted(CASES))
def test_arrow_and_parquet_hold_what_jsonl_writes(case, tmp_path, capsys) -> None:
    status, jsonl, err = cli([*CASES[case], "--format", "jsonl"], tmp_path, "native", capsys)
    assert status == 0, err
    for fmt in ("arrow", "parquet"):
        status, data, err = cli([*CASES[case], "--format", fmt], tmp_path, "native", capsys)
        assert status == 0, err
        table = read(fmt, data, tmp_path)
        columns = table.column_names[len(LEADING):]
        assert table.schema == result_schema(columns), case
        assert arrow_rows(table) == rows_of_jsonl(jsonl, columns), (case, fmt)
        assert table.num_rows >= 1


def test_events_ids_and_none(tmp_path, capsys) -> None:
    case = CASES["smartgrid (replay files read natively, KB)"]
    status, full, _ = cli([*case, "--format", "parquet"], tmp_path, "native", capsys)
    assert status == 0
    full_table = read("parquet", full, tmp_path)
    status, ids, _ = cli([*case, "--format", "parquet", "--events", "ids"], tmp_path, "native", capsys)
    ids_table = read("parquet", ids, tmp_path)
    assert ids_table.schema.field("_events").type == pa.list_(pa.dictionary(pa.int32(), pa.string()))
    assert ids_table.column("_events").to_pylist() == [
        [e["graph"] for e in events] for events in full_table.column("_events").to_pylist()]
    status, none, _ = cli([*case, "--format", "arrow", "--events", "none"], tmp_path, "native", capsys)
    none_table = read("arrow", none, tmp_path)
    assert "_events" not in none_table.column_names
    assert none_table.equals(full_table.drop_columns(["_events"]))


def test_times_are_exact_and_dated_follows_the_time_format(tmp_path, capsys) -> None:
    """Times keep every digit the input had (decimal128 with nanoseconds); ``_dated`` says
    whether the other formats write them as xsd:dateTime (``--time-format``)."""
    case = CASES["smartgrid (replay files read natively, KB)"]
    tables = {}
    for form in ("input", "epoch"):
        status, data, _ = cli([*case, "--format", "arrow", "--time-format", form], tmp_path, "native", capsys)
        assert status == 0
        tables[form] = read("arrow", data, tmp_path)
    assert all(tables["input"].column("_dated").to_pylist())  # the smart grid's times are xsd:dateTime
    assert not any(tables["epoch"].column("_dated").to_pylist())
    assert tables["input"].column("_time").equals(tables["epoch"].column("_time"))
    status, jsonl, _ = cli([*case, "--format", "jsonl"], tmp_path, "native", capsys)
    first = json.loads(jsonl.splitlines()[0])
    iso = pyoxigraph.Literal(first["time_iso"], datatype=pyoxigraph.NamedNode(
        "http://www.w3.org/2001/XMLSchema#dateTime"))
    seconds = tables["input"].column("_time")[0].as_py()
    assert isinstance(seconds, Decimal) and seconds.as_tuple().exponent == -9
    assert seconds == Decimal(str(first["time"]))
    assert iso.value.startswith("20")  # a wall-clock time, as the input wrote it


def test_a_run_stopped_by_bad_input_leaves_a_whole_file_with_the_matches_before(tmp_path, capsys) -> None:
    write_broken_run(tmp_path)
    os.chdir(tmp_path)
    for rows in ([], ["--engine", "reference"]):
        status = main(["run", "q.rq", "--stream", "S1=bad.trig", "--format", "parquet", "--output", "o.parquet",
                       *rows])
        assert status == 2
        assert capsys.readouterr().err.startswith("bad.trig:10:")
        table = pq.read_table(tmp_path / "o.parquet")
        assert table.select(["_number", "_time", "s", "a", "b"]).to_pylist() == [
            {"_number": 1, "_time": Decimal("2.5"), "s": f"<{EX}x>",
             "a": '"1"^^<http://www.w3.org/2001/XMLSchema#integer>',
             "b": '"5"^^<http://www.w3.org/2001/XMLSchema#integer>'}]


def test_binary_output_needs_a_file_or_a_pipe(tmp_path, capsys) -> None:
    case = CASES["smartgrid (replay files read natively, KB)"]
    assert main(["run", *case, "--format", "parquet"]) == 2
    assert "--format parquet writes binary to a file: give --output FILE" in capsys.readouterr().err
    assert main(["run", *case, "--format", "csv", "--events", "ids"]) == 2
    assert "--events ids is for --format jsonl, arrow or parquet" in capsys.readouterr().err
