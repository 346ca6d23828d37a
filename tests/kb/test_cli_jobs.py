"""`spaseq kb load|refresh` as a user meets them: our own progress on a terminal and nothing
of Spark's or the JVM's, and ``--max-rejects`` refusing an input with too many bad lines
(exit status 2, the store unchanged). The in-process commands reuse the shared session."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spaseq.engine.cli.main import main
from spaseq.engine.errors import UsageError
from spaseq.engine.kb.layout import StoreLayout
from spaseq.engine.kb.parse import split_reason
from spaseq.engine.kb.progress import Display
from spaseq.engine.kb.rejects import DEFAULT_MAX_REJECTS, RejectLimit
from tests.util import EX

DB = "http://ex.org/db"
SG = Path(__file__).resolve().parents[2] / "fixtures" / "smartgrid"


def _good(n: int) -> str:
    return "".join(f'<{EX}H{i}> <{EX}owner> "o{i}" .\n' for i in range(n))


def _read_terminal(master: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closed it."""
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child exited
            return out
        if not chunk:
            return out
        out += chunk


def test_progress_on_a_terminal_and_nothing_of_spark_or_the_jvm(tmp_path):
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "spaseq.engine.cli", "kb", "load", str(SG / "kb.nt"),
         "--store", str(tmp_path / "kb"), "--graph", "http://smartgrid.org/db", "--master", "local[1]"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    try:
        err = _read_terminal(master).decode("utf-8")
    finally:
        os.close(master)
    out = proc.stdout.read().decode("utf-8")
    proc.stdout.close()
    assert proc.wait(timeout=300) == 0, err
    assert out.startswith("version 1: 14 quads loaded (0 duplicates, 0 rejected lines)")
    # one line redrawn in place: each frame is ours, the last erases it
    frames = [f.removesuffix("\x1b[K") for f in err.replace("\r\n", "\n").split("\r")]
    assert err.endswith("\r\x1b[K") and frames[0] == "" and frames[-1] == ""
    assert all(f.startswith("spaseq kb load: ") and "\n" not in f for f in frames[1:-1]), err
    for phase in ("starting Spark", "reading 1 input(s) · ", "14 lines, 14 statements, 0 rejected",
                  "exporting the distinct quads of 14 statements", "bulk-loading 14 quads into Oxigraph"):
        assert phase in err
    for noise in ("[Stage", "WARN", "incubator", "log4j", "Setting default log level", "NativeCodeLoader",
                  "spark:", "Exception"):
        assert noise not in err


def test_progress_off_a_terminal_is_one_line_per_phase():
    stream = io.StringIO()
    display = Display(stream, "spaseq kb load", live=False)
    display.phase("starting Spark")
    display.phase("reading 2 input(s)", lambda: "10 lines")
    display.close()
    assert stream.getvalue() == "spaseq kb load: starting Spark\nspaseq kb load: reading 2 input(s)\n"
    live = Display(io.StringIO(), "spaseq kb load", live=True)
    live.phase("reading 2 input(s)", lambda: "10 lines")
    live.tasks = lambda: "tasks 1/4"
    assert live.line().startswith("spaseq kb load: reading 2 input(s) · 10 lines · tasks 1/4 · ")
    live.close()


@pytest.mark.parametrize(("text", "count", "ratio"), [
    ("0", 0, None), ("25", 25, None), ("0.1", None, 0.1), ("10%", None, 0.1), ("1.0", None, 1.0),
    (DEFAULT_MAX_REJECTS, None, 0.01)])
def test_max_rejects_is_a_count_or_a_ratio(text, count, ratio):
    limit = RejectLimit.parse(text)
    assert (limit.count, limit.ratio) == (count, ratio) and str(limit) == text


@pytest.mark.parametrize("text", ["-1", "1.5", "200%", "many", "", "nan"])
def test_max_rejects_refuses_other_values(text):
    with pytest.raises(UsageError, match="expected a count"):
        RejectLimit.parse(text)


def test_max_rejects_count_and_ratio_exit_2_and_leave_the_store_unchanged(spark, tmp_path, capsys):
    store = tmp_path / "kb"
    layout = StoreLayout.at(store)
    (tmp_path / "v1.nt").write_text(_good(3), encoding="utf-8")
    (tmp_path / "v2.nt").write_text(_good(6) + "oops\nalso bad <x>\n", encoding="utf-8")  # 2 of 8 bad
    job = ["--store", str(store), "--graph", DB, "--json"]
    assert main(["kb", "load", str(tmp_path / "v1.nt"), *job]) == 0
    capsys.readouterr()
    before = layout.meta(1)
    rejects = tmp_path / "bad.jsonl"
    for command, limit in (("load", "1"), ("refresh", "1"), ("load", "0.2"), ("refresh", "20%")):
        assert main(["kb", command, str(tmp_path / "v2.nt"), *job, "--max-rejects", limit,
                     "--rejects", str(rejects)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        column, reason = split_reason(json.loads(rejects.read_text().splitlines()[0])["reason"])
        assert column == 1 and captured.err == (
            f"{tmp_path / 'v2.nt'}:7:1: 2 of 8 lines are bad, more than --max-rejects {limit} "
            f"allows: the store is unchanged (the first bad line, here: {reason}; all in {rejects})\n")
        assert [json.loads(r)["line"] for r in rejects.read_text().splitlines()] == [7, 8]
        assert layout.current() == 1 and layout.versions() == [1] and layout.meta(1) == before
        assert sorted(d.name for d in layout.versions_dir.iterdir()) == ["000001"]  # no partial version
    for command, limit in (("refresh", "2"), ("load", "25%")):  # at the limit: accepted
        assert main(["kb", command, str(tmp_path / "v2.nt"), *job, "--max-rejects", limit]) == 0
        assert json.loads(capsys.readouterr().out)["rejected"] == 2
    assert layout.current() == 3


def test_a_dump_of_only_bad_lines_fails_by_default(spark, tmp_path, capsys):
    # (a Turtle file is read whole, and one named .nt is refused before Spark: tests/kb/test_whole_files.py)
    (tmp_path / "kb.nt").write_text("ex:H1 ex:owner \"Alice\" .\nex:H2 ex:owner \"Bob\" .\n", encoding="utf-8")
    store = tmp_path / "kb"
    assert main(["kb", "load", str(tmp_path / "kb.nt"), "--store", str(store), "--graph", DB]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{tmp_path / 'kb.nt'}:1:1: 2 of 2 lines are bad, more than "
                                   f"--max-rejects {DEFAULT_MAX_REJECTS} allows: the store is unchanged")
    assert captured.err.endswith("--rejects PATH lists them all)\n")
    assert StoreLayout.at(store).current() is None and StoreLayout.at(store).versions() == []


def test_kb_query_prints_the_table_spaseq_run_prints(spark, tmp_path, capsys):
    """`kb query`'s table is `spaseq run`'s (the native writer's): IRIs under the query's
    prefixes shortened, literals as values, columns two spaces apart, the count in rows."""
    store = tmp_path / "kb"
    (tmp_path / "kb.nt").write_text(_good(2) + f'<{EX}H0> <{EX}age> "41"^^<http://www.w3.org/2001/XMLSchema#integer> .\n',
                                    encoding="utf-8")
    assert main(["kb", "load", str(tmp_path / "kb.nt"), "--store", str(store), "--graph", DB, "--json"]) == 0
    capsys.readouterr()
    query = (f"# the owners\nPREFIX ex: <{EX}>\nprefix : <http://elsewhere.org/>\nSELECT ?h ?o ?age "
             f"WHERE {{ GRAPH <{DB}> {{ ?h ex:owner ?o OPTIONAL {{ ?h ex:age ?age }} }} }} ORDER BY ?h")
    assert main(["kb", "query", "--store", str(store), query]) == 0
    assert capsys.readouterr().out == (
        "?h     ?o    ?age\n"
        "-----  ----  ----\n"
        "ex:H0  \"o0\"  41\n"
        "ex:H1  \"o1\"\n"
        "(2 rows)\n")
    assert main(["kb", "query", "--store", str(store), f"SELECT ?h WHERE {{ GRAPH <{DB}> {{ ?h <{EX}age> 41 }} }}"]) == 0
    assert capsys.readouterr().out == f"?h\n{'-' * (len(EX) + 4)}\n<{EX}H0>\n(1 row)\n"
