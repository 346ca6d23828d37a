"""Live input: a stream given as '-' or a named pipe is read incrementally and every match
is written and flushed the moment it completes (a real pipeline, a real FIFO)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
from pathlib import Path

import pytest

QUERY = """PREFIX : <http://ex.org/>
SELECT ?a ?b FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A ; B) DEFINE GPM A ON S { ?x :val ?a } DEFINE GPM B ON S { ?y :val ?b FILTER(?b > ?a) } }
"""
XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"
PROV = "<http://www.w3.org/ns/prov#generatedAtTime>"


def nq_event(i: int, time: int, val: int) -> str:
    g = f"<http://ex.org/g{i}>"
    return (f'<http://ex.org/e{i}> <http://ex.org/val> "{val}"^^{XSD_INT} {g} .\n'
            f'{g} {PROV} "{time}"^^{XSD_INT} .\n')


def spaseq(tmp_path: Path, *args: str, **kw) -> subprocess.Popen:
    query = tmp_path / "q.rq"
    query.write_text(QUERY)
    return subprocess.Popen(
        [sys.executable, "-m", "spaseq.engine.cli", "run", str(query), *args],
        stdin=kw.get("stdin", subprocess.PIPE), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, bufsize=1,
    )


def read_line(proc: subprocess.Popen, timeout: float = 30.0) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no output before the timeout: the match was not flushed"
    return proc.stdout.readline()


def test_match_is_written_while_input_is_still_open(tmp_path: Path) -> None:
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl")
    proc.stdin.write(nq_event(1, 1, 1))
    proc.stdin.write(nq_event(2, 2, 5))
    proc.stdin.flush()
    line = read_line(proc)  # stdin is still open: the engine must not wait for EOF
    rec = json.loads(line)
    assert rec["time"] == 2 and rec["start"] == 1
    assert rec["bindings"]["b"]["value"] == "5"
    assert [e["graph"] for e in rec["events"]] == ["http://ex.org/g1", "http://ex.org/g2"]
    proc.stdin.write(nq_event(3, 3, 0))
    proc.stdin.write(nq_event(4, 4, 9))
    proc.stdin.close()
    rest = proc.stdout.read().splitlines()
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    # e3 (0) ; e4 (9) completes one more match; e1 and e2 are consumed by ';' already
    assert [json.loads(r)["time"] for r in rest] == [4, 4]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "events.nq"
    os.mkfifo(fifo)
    proc = spaseq(tmp_path, "--stream", f"S={fifo}", "--format", "jsonl", stdin=subprocess.DEVNULL)

    def produce() -> None:
        with open(fifo, "w") as w:
            w.write(nq_event(1, 1, 1))
            w.write(nq_event(2, 2, 5))

    t = threading.Thread(target=produce)
    t.start()
    out, err = proc.communicate(timeout=60)
    t.join()
    assert proc.returncode == 0, err
    assert [json.loads(r)["bindings"]["b"]["value"] for r in out.splitlines()] == ["5"]


def test_trig_chunks(tmp_path: Path) -> None:
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl", "--input-format", "trig")
    proc.stdin.write("@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n")
    proc.stdin.write(":g1 { :e1 :val 1 }\n:g1 prov:generatedAtTime 10 .\n")
    proc.stdin.write(":g2 {\n  :e2 :val 7\n}\n:g2 prov:generatedAtTime 11 .\n")
    proc.stdin.flush()
    rec = json.loads(read_line(proc))
    assert (rec["time"], rec["bindings"]["b"]["value"]) == (11, "7")
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


def test_late_event_is_an_error_after_earlier_matches(tmp_path: Path) -> None:
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl")
    out, err = proc.communicate(nq_event(1, 1, 1) + nq_event(2, 2, 5) + nq_event(3, 1, 9), timeout=60)
    assert proc.returncode == 2
    assert len(out.splitlines()) == 1
    assert "late event" in err and "Traceback" not in err


def test_drop_late(tmp_path: Path) -> None:
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl", "--drop-late")
    out, err = proc.communicate(nq_event(1, 1, 1) + nq_event(2, 2, 5) + nq_event(3, 1, 9), timeout=60)
    assert proc.returncode == 0, err
    assert "dropped 1 late event" in err


def test_malformed_line_names_the_line(tmp_path: Path) -> None:
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl")
    out, err = proc.communicate(nq_event(1, 1, 1) + nq_event(2, 2, 5) + "<http://ex.org/x> oops .\n",
                                timeout=60)
    assert proc.returncode == 2
    assert err.startswith("<stdin>:5:"), err
    assert len(out.splitlines()) == 1  # the match found before the bad line is still written
