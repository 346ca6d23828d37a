"""Live input: a stream given as '-' or a named pipe is read incrementally and every match
is written and flushed the moment it completes (a real pipeline, a real FIFO), whether each
event's timestamp triple comes before or after its graph, in TriG and in N-Quads."""

from __future__ import annotations

import errno
import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

QUERY = """PREFIX : <http://ex.org/>
SELECT ?a ?b FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A ; B) DEFINE GPM A ON S { ?x :val ?a } DEFINE GPM B ON S { ?y :val ?b FILTER(?b > ?a) } }
"""
XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"
PROV = "<http://www.w3.org/ns/prov#generatedAtTime>"


def nq_event(i: int, time: int, val: int, time_first: bool = False) -> str:
    g = f"<http://ex.org/g{i}>"
    data = f'<http://ex.org/e{i}> <http://ex.org/val> "{val}"^^{XSD_INT} {g} .\n'
    stamp = f'{g} {PROV} "{time}"^^{XSD_INT} .\n'
    return stamp + data if time_first else data + stamp


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
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl", "--late", "error")
    out, err = proc.communicate(nq_event(1, 1, 1) + nq_event(2, 2, 5) + nq_event(3, 1, 9), timeout=60)
    assert proc.returncode == 2
    assert len(out.splitlines()) == 1  # the match before it is written
    # located where the late event's graph starts in the input (each event is two lines)
    assert err.startswith("<stdin>:5: event at 1 on <http://ex.org/s> is earlier than 2"), err
    assert "late event" in err and "Traceback" not in err


def test_drop_late(tmp_path: Path) -> None:
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl", "--drop-late")
    out, err = proc.communicate(nq_event(1, 1, 1) + nq_event(2, 2, 5) + nq_event(3, 1, 9), timeout=60)
    assert proc.returncode == 0, err
    assert "dropped 1 late event" in err


def test_late_events_are_dropped_by_default_and_written_to_the_late_output(tmp_path: Path) -> None:
    """The default (``--late drop``): the run goes on, ``--stats=json`` counts the late event
    for the query, and ``--late-output`` holds it, read back as RDF: its own graph and
    triples, its time as the input wrote it, its stream and the query (its output IRI)."""
    import pyoxigraph

    late = tmp_path / "late.trig"
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl", "--late-output", str(late),
                  "--stats=json")
    dated = (f'<http://ex.org/e4> <http://ex.org/val> "7"^^{XSD_INT} <http://ex.org/g4> .\n'
             f'<http://ex.org/g4> {PROV} "1970-01-01T00:00:03Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n')
    events = nq_event(1, 1, 1) + nq_event(2, 5, 5) + nq_event(3, 2, 9) + dated + nq_event(5, 6, 8)
    out, err = proc.communicate(events, timeout=60)
    assert proc.returncode == 0, err
    assert [json.loads(line)["time"] for line in out.splitlines()] == [5, 6]
    stats = json.loads(next(line for line in err.splitlines() if line.startswith("{")))
    assert stats["late"] == {str(tmp_path / "q.rq"): 2} and stats["dropped_late"] == 2
    assert f"dropped 2 late event(s) (written to {late})" in err
    store = pyoxigraph.Store()
    store.load(path=str(late), format=pyoxigraph.RdfFormat.TRIG)
    found = sorted((r["g"].value, r["t"].value, r["s"].value, r["q"].value, r["v"].value) for r in store.query(
        """PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX spaseq: <https://w3id.org/spaseq#>
        SELECT ?g ?t ?s ?q ?v WHERE { ?g prov:generatedAtTime ?t ; spaseq:stream ?s ; spaseq:lateFor ?q
                                      GRAPH ?g { ?e <http://ex.org/val> ?v } }"""))
    query_iri = (tmp_path / "q.rq").resolve().as_uri()
    assert found == [("http://ex.org/g3", "2", "http://ex.org/s", query_iri, "9"),
                     ("http://ex.org/g4", "1970-01-01T00:00:03Z", "http://ex.org/s", query_iri, "7")]
    # the file is a replay file of the late events
    again = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(tmp_path / "q.rq"),
                            "--stream", f"S={late}", "--stats=json"], capture_output=True, text=True)
    assert again.returncode == 0 and json.loads(again.stderr)["events"] == 2, again.stderr


def test_malformed_line_names_the_line(tmp_path: Path) -> None:
    proc = spaseq(tmp_path, "--stream", "S=-", "--format", "jsonl")
    out, err = proc.communicate(nq_event(1, 1, 1) + nq_event(2, 2, 5) + "<http://ex.org/x> oops .\n",
                                timeout=60)
    assert proc.returncode == 2
    assert err.startswith("<stdin>:5:"), err
    assert len(out.splitlines()) == 1  # the match found before the bad line is still written


# ------------------------------------------------------- the timestamp before or after its graph

TRIG_HEADER = ("@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
               "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n")
START = datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
VALS = [1, 5, 0, 9, 3, 2, 7, 8, 4, 6]
# events written before the first match is awaited: it needs the second event, which with the
# timestamp first in N-Quads is complete only when the third event's quad arrives
SPLIT = 3
FORMATS = ["trig", "nquads"]
ORDERS = pytest.mark.parametrize("time_first", [True, False], ids=["time-first", "time-last"])
NEEDS_FIFO = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def trig_event(i: int, val: int, time_first: bool, stamp: bool = True) -> str:
    """Event i as the user's TriG: an xsd:dateTime in the default graph, a multi-line block."""
    when = (START + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    time = f':g{i} prov:generatedAtTime "{when}"^^xsd:dateTime .\n'
    graph = f":g{i} {{\n  :e{i} :val {val} .\n}}\n"
    if not stamp:
        return graph
    return time + graph if time_first else graph + time


def event(fmt: str, i: int, val: int, time_first: bool) -> str:
    return trig_event(i, val, time_first) if fmt == "trig" else nq_event(i, i, val, time_first)


def document(fmt: str, time_first: bool) -> tuple[str, str]:
    """The input in two parts: the header and the first SPLIT events, then the rest."""
    events = [event(fmt, i, v, time_first) for i, v in enumerate(VALS, start=1)]
    head = (TRIG_HEADER if fmt == "trig" else "") + "".join(events[:SPLIT])
    return head, "".join(events[SPLIT:])


_REPLAYED: dict[tuple[str, bool], list[str]] = {}


def replayed(tmp_path: Path, fmt: str, time_first: bool) -> list[str]:
    """The jsonl lines of the same data read as a replay file (computed once per layout)."""
    key = (fmt, time_first)
    if key not in _REPLAYED:
        path = tmp_path / ("events.trig" if fmt == "trig" else "events.nq")
        path.write_text("".join(document(fmt, time_first)))
        proc = spaseq(tmp_path, "--stream", f"S={path}", "--format", "jsonl", stdin=subprocess.DEVNULL)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        _REPLAYED[key] = out.splitlines()
    return _REPLAYED[key]


class LiveRun:
    """spaseq reading a live stream (its stdin or a named pipe) that the test feeds; its output
    is read by threads, so every wait has a timeout and nothing can hang."""

    def __init__(self, tmp_path: Path, source: str, fmt: str, *extra: str) -> None:
        if source == "fifo":
            path = str(tmp_path / ("live.trig" if fmt == "trig" else "live.nq"))
            os.mkfifo(path)
        else:
            path = "-"
        self.proc = spaseq(tmp_path, "--stream", f"S={path}", "--input-format", fmt, "--format", "jsonl",
                           *extra, stdin=subprocess.PIPE if path == "-" else subprocess.DEVNULL)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.err: list[str] = []
        self.threads = [threading.Thread(target=self._pump_out, daemon=True),
                        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True)]
        for t in self.threads:
            t.start()
        self.input = self.proc.stdin if path == "-" else self._open_pipe(path)

    def _pump_out(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _open_pipe(self, path: str):
        deadline = time.monotonic() + 30
        while True:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # fails (ENXIO) until spaseq opens it
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.kill()
                    pytest.fail(f"spaseq never opened the pipe: {''.join(self.err)}")
                time.sleep(0.02)
            else:
                os.set_blocking(fd, True)
                return os.fdopen(fd, "w")

    def write(self, text: str) -> None:
        self.input.write(text)
        self.input.flush()

    def line(self, timeout: float = 30.0) -> str:
        """The next output line, while the input may still be open."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            pytest.fail("no match written before the timeout: the event was not yielded or the "
                        "match not flushed")
        assert line is not None, f"spaseq ended early: {''.join(self.err)}"
        return line

    def finish(self, timeout: float = 30.0) -> tuple[list[str], str, int]:
        """Close the input; the remaining output lines, stderr and the exit status."""
        self.input.close()
        try:
            status = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("spaseq did not end after its input was closed")
        for t in self.threads:
            t.join(timeout)
        rest = []
        while (line := self.lines.get(timeout=timeout)) is not None:
            rest.append(line)
        return rest, "".join(self.err), status

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def live(tmp_path: Path):
    runs: list[LiveRun] = []

    def start(source: str, fmt: str, *extra: str) -> LiveRun:
        runs.append(LiveRun(tmp_path, source, fmt, *extra))
        return runs[-1]

    yield start
    for run in runs:
        if run.proc.poll() is None:
            run.kill()
        if run.input is not None and not run.input.closed:
            run.input.close()


@pytest.mark.parametrize("source", ["stdin", pytest.param("fifo", marks=NEEDS_FIFO)])
@pytest.mark.parametrize("fmt", FORMATS)
@ORDERS
def test_timestamp_before_or_after_graph(tmp_path: Path, live, source: str, fmt: str,
                                         time_first: bool) -> None:
    expected = replayed(tmp_path, fmt, time_first)
    assert len(expected) >= 3
    head, tail = document(fmt, time_first)
    run = live(source, fmt)
    run.write(head)
    first = run.line()  # the input is still open: the first match must not wait for its end
    assert [e["graph"] for e in json.loads(first)["events"]] == ["http://ex.org/g1", "http://ex.org/g2"]
    run.write(tail)
    rest, err, status = run.finish()
    assert status == 0, err
    assert [first, *rest] == expected  # the same matches as the same data read as a replay file


def _consumed(fmt: str, time_first: bool, n: int) -> list[int]:
    """For each event the reader yields, how many input lines it had read by then."""
    from spaseq.engine import _native

    text = (TRIG_HEADER if fmt == "trig" else "") + "".join(
        event(fmt, i, i, time_first) for i in range(1, n + 1))
    reader = _native.LiveReader("http://ex.org/s", "<test>", fmt)
    seen: list[int] = []
    lines = text.splitlines(keepends=True)
    for read, (events, error) in [*((i, reader.read(line)) for i, line in enumerate(lines, start=1)),
                                  (len(lines), reader.finish())]:
        assert error is None
        for ev in events:
            assert ev[3] == f"<http://ex.org/g{len(seen) + 1}>" and ev[2] > 0
            seen.append(read)
    return seen


@pytest.mark.parametrize("fmt", FORMATS)
@ORDERS
def test_each_event_is_yielded_as_soon_as_it_is_complete(fmt: str, time_first: bool) -> None:
    n = 4
    if fmt == "trig":  # 3 prefix lines, then 4 lines an event: complete at its '}' or its timestamp
        expected = [3 + 4 * i for i in range(1, n + 1)]
    elif time_first:  # complete when the next event's quad (line 2i + 2) ends its block, or at the end
        expected = [2 * i + 2 for i in range(1, n)] + [2 * n]
    else:  # complete at its own timestamp line
        expected = [2 * i for i in range(1, n + 1)]
    assert _consumed(fmt, time_first, n) == expected


@pytest.mark.parametrize("fmt", FORMATS)
@ORDERS
def test_missing_timestamp_names_its_line(live, fmt: str, time_first: bool) -> None:
    header = TRIG_HEADER if fmt == "trig" else ""
    before = header + event(fmt, 1, 1, time_first) + event(fmt, 2, 5, time_first)
    if fmt == "trig":
        missing = trig_event(3, 9, time_first, stamp=False)
    else:
        missing = nq_event(3, 3, 9).splitlines(keepends=True)[0]  # its quad, not its timestamp
    run = live("stdin", fmt)
    run.write(before + missing)
    first = run.line()  # the match before the bad event is written at once
    run.write(event(fmt, 4, 9, time_first))  # held back behind g3, then dropped
    rest, err, status = run.finish()
    assert status == 2
    line = before.count("\n") + 1  # where g3's graph starts
    assert err.startswith(f"<stdin>:{line}:1: event <http://ex.org/g3> has no timestamp"), err
    assert "Traceback" not in err
    assert [json.loads(r)["bindings"]["b"]["value"] for r in [first, *rest]] == ["5"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_many_live_events(tmp_path: Path, fmt: str) -> None:
    """20,000 events with the timestamp first (once quadratic, then lost) all arrive; rising
    values make each event complete exactly one match with the one before it."""
    n = 20_000
    header = TRIG_HEADER if fmt == "trig" else ""
    proc = spaseq(tmp_path, "--stream", "S=-", "--input-format", fmt, "--format", "jsonl")
    try:
        out, err = proc.communicate(header + "".join(event(fmt, i, i, True) for i in range(1, n + 1)),
                                    timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == n - 1
    assert json.loads(lines[-1])["bindings"]["b"]["value"] == str(n)


def test_composed_queries_read_live_input_as_a_replay_file() -> None:
    """``--with`` over stdin (the native reader's events pushed as Python events) writes what
    the same data written as a replay file gives."""
    comp = Path(__file__).resolve().parents[2] / "fixtures" / "composition"
    base = [sys.executable, "-m", "spaseq.engine.cli", "run", str(comp / "repeated.rq"),
            "--with", f"{comp / 'alerts.rq'}=http://ex.org/alerts", "--format", "jsonl"]
    live = subprocess.run([*base, "--stream", "http://ex.org/readings=-", "--input-format", "trig"],
                          input=(comp / "readings.trig").read_text(), capture_output=True, text=True,
                          timeout=60)
    replay = subprocess.run([*base, "--stream", f"http://ex.org/readings={comp / 'readings.trig'}"],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert live.returncode == replay.returncode == 0, live.stderr + replay.stderr
    assert live.stdout == replay.stdout != ""
