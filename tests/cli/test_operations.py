"""What a well-kept command line gives its users (issue 14), run as a user runs it, in
subprocesses: ``spaseq --version``; the progress line on a real pseudo-terminal (``pty``)
and its absence elsewhere; ``--stats`` (text and JSON); ``-q``/``-v`` through the logging
module; clear messages for a directory given as a stream, for ``--input-format`` on files
and for a WITHIN amount that is negative or too large.

As in test_cli.py, the invocations that need no terminal are started together when the
first test asks for one."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
from importlib.metadata import version
from pathlib import Path

import pytest

import spaseq.engine
from tests.cli.started import ok, spaseq_command, started, user_error

ROOT = Path(__file__).resolve().parents[2]
EX = "http://ex.org/"
PROV = "http://www.w3.org/ns/prov#generatedAtTime"
XSD = "http://www.w3.org/2001/XMLSchema#"
EVENTS = 600

QUERY = """\
PREFIX : <http://ex.org/>
SELECT ?s ?a ?b
WITHIN 10 SECONDS
FROM STREAM S1 <http://ex.org/s1>
WHERE {
  SEQ(A; B)
  DEFINE GPM A ON S1 { ?s :a ?a }
  DEFINE GPM B ON S1 { ?s :b ?b }
}
"""


def _nquads(count: int) -> str:
    """``count`` events a second apart: an :a then a :b on each of 7 subjects, in turn."""
    lines = []
    for i in range(count):
        p = "a" if (i // 7) % 2 == 0 else "b"
        lines.append(f'<{EX}g{i}> <{PROV}> "{i}"^^<{XSD}integer> .')
        lines.append(f'<{EX}x{i % 7}> <{EX}{p}> "{i}"^^<{XSD}integer> <{EX}g{i}> .')
    return "\n".join(lines) + "\n"


TRIG = (
    "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
    ":e1 prov:generatedAtTime 1 .\n:e1 { :x :a 1 . }\n"
    ":e2 prov:generatedAtTime 2 .\n:e2 { :x :b 2 . }\n"
)

FILES = {
    "q.rq": QUERY,
    "s.nq": _nquads(EVENTS),
    "events.txt": TRIG,  # TriG, whatever its name says
    "events.trig": TRIG,
    "minus.rq": QUERY.replace("WITHIN 10 SECONDS", "WITHIN -5 SECONDS"),
    "huge.rq": QUERY.replace("WITHIN 10 SECONDS", "WITHIN 1e400 SECONDS"),
    "warn.rq": QUERY.replace("SELECT ?s ?a ?b", "SELECT ?s ?a ?b ?zz"),
    # e2 is late (before e1 on the same stream): dropped with --drop-late, and a note says so
    # 300 good events, then a syntax error
    "broken.nq": _nquads(300) + "<http://ex.org/x> <http://ex.org/a> @@ <http://ex.org/g> .\n",
    "late.nq": (f'<{EX}g1> <{PROV}> "5"^^<{XSD}integer> .\n<{EX}x> <{EX}a> "1" <{EX}g1> .\n'
                f'<{EX}g2> <{PROV}> "3"^^<{XSD}integer> .\n<{EX}x> <{EX}b> "2" <{EX}g2> .\n'),
}

RUN = ("run", "q.rq", "--stream", "S1=s.nq", "--format", "jsonl")

RUNS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "version": (("--version",), None),
    "plain": (RUN, None),
    "forced-progress": ((*RUN, "--progress"), None),
    "stats-text": ((*RUN, "--stats"), None),
    "stats-json": ((*RUN, "--stats=json"), None),
    "stats-reference": ((*RUN, "--stats=json", "--engine", "reference"), None),
    "stats-live": (("run", "q.rq", "--stream", "S1=-", "--format", "jsonl", "--stats=json"), "s.nq"),
    "late": (("run", "q.rq", "--stream", "S1=-", "--drop-late"), "late.nq"),
    "late-quiet": (("-q", "run", "q.rq", "--stream", "S1=-", "--drop-late"), "late.nq"),
    "late-stats": (("run", "q.rq", "--stream", "S1=-", "--stats"), "late.nq"),
    "late-error": (("run", "q.rq", "--stream", "S1=-", "--late", "error"), "late.nq"),
    "late-output-dir": (("run", "q.rq", "--stream", "S1=s.nq", "--late-output", "adir"), None),
    "late-output-reference": ((*RUN, "--late-output", "l.trig", "--engine", "reference"), None),
    "warn": (("run", "warn.rq", "--stream", "S1=s.nq", "--format", "jsonl"), None),
    "warn-quiet": (("run", "warn.rq", "--stream", "S1=s.nq", "--format", "jsonl", "-q"), None),
    "warn-quieter": (("run", "warn.rq", "--stream", "S1=s.nq", "--format", "jsonl", "-qq"), None),
    "verbose": ((*RUN, "-v"), None),
    "directory": (("run", "q.rq", "--stream", "S1=adir", "--format", "jsonl"), None),
    "directory-python": (("run", "q.rq", "--stream", "S1=adir", "--engine", "reference"), None),
    "directory-kb": (("run", "q.rq", "--stream", "S1=s.nq", "--kb", "adir"), None),
    "txt-unknown": (("run", "q.rq", "--stream", "S1=events.txt", "--format", "jsonl"), None),
    "txt-trig": (("run", "q.rq", "--stream", "S1=events.txt", "--format", "jsonl",
                  "--input-format", "trig"), None),
    "txt-trig-python": (("run", "q.rq", "--stream", "S1=events.txt", "--format", "jsonl",
                         "--input-format", "trig", "--engine", "reference"), None),
    "trig": (("run", "q.rq", "--stream", "S1=events.trig", "--format", "jsonl"), None),
    "trig-as-nquads": (("run", "q.rq", "--stream", "S1=events.trig", "--format", "jsonl",
                        "--input-format", "nquads"), None),
    "within-negative": (("run", "minus.rq", "--stream", "S1=s.nq"), None),
    "within-huge": (("explain", "huge.rq"), None),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    work = tmp_path_factory.mktemp("ops")
    (work / "adir").mkdir()
    with started(work, FILES, RUNS) as runs:
        yield runs


class Terminal:
    """A pseudo-terminal for a child's stderr, read as it comes by a thread. The parent keeps
    the slave open until ``close``, so what the child wrote is all read (on Linux, reading
    the master after every slave closed may fail before the last bytes are read)."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self._shown = bytearray()
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if not ready:
                if self._stop.is_set():  # asked to stop and quiet: everything is read
                    return
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            with self._changed:
                self._shown += data
                self._changed.notify_all()

    def wait_for(self, text: bytes, timeout: float = 60) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: text in self._shown, timeout), bytes(self._shown)

    def close(self) -> bytes:
        """Everything the terminal showed (call once the child has exited)."""
        self._stop.set()
        self._reader.join(timeout=30)
        os.close(self.slave)
        os.close(self.master)
        return bytes(self._shown)


def on_terminal(cwd: Path, args: tuple[str, ...], stdin: str | None = None,
                status: int = 0) -> tuple[bytes, bytes]:
    """Run ``spaseq`` with stderr on a pseudo-terminal and stdout on a pipe: (what the
    terminal showed, stdout); the exit status must be ``status``."""
    terminal = Terminal()
    try:
        with open(cwd / stdin, "rb") if stdin else open(os.devnull, "rb") as source:
            proc = subprocess.Popen(spaseq_command(args), cwd=cwd, stdin=source, stdout=subprocess.PIPE,
                                    stderr=terminal.slave)
        out, _ = proc.communicate(timeout=120)
    finally:
        shown = terminal.close()
    assert proc.returncode == status, shown
    return shown, out


def _matches(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


# ---------------------------------------------------------------- version


def test_version_is_pyprojects(runs):
    """One source of truth: pyproject.toml's version, as installed, is what --version and
    spaseq.engine.__version__ say."""
    tomllib = pytest.importorskip("tomllib")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert spaseq.engine.__version__ == version("spaseq") == declared
    proc = ok(runs("version"))
    assert proc.stdout.startswith(f"spaseq {declared} (native core ")
    assert "pyoxigraph " in proc.stdout and proc.stderr == ""


# ---------------------------------------------------------------- progress


def test_progress_line_on_a_terminal_leaves_the_results_alone(runs):
    plain = ok(runs("plain"))
    assert plain.stderr == ""  # stderr is a pipe: no progress line
    expected = _matches(plain.stdout)
    assert len(expected) > 100
    shown, out = on_terminal(runs.work, RUN)
    assert out.decode() == plain.stdout  # the same matches, byte for byte
    text = shown.decode()
    assert text.startswith("\rspaseq: ") and text.endswith("\r\x1b[K")  # drawn, then cleared
    last = text.split("\r")[-2]  # the last line drawn
    for field in (f"{EVENTS:,} events", "events/s", f"at {EVENTS - 1}", "open runs",
                  f"{len(expected):,} matches"):
        assert field in last, (field, last)


def test_progress_on_a_terminal_for_live_input(runs):
    shown, out = on_terminal(runs.work, ("run", "q.rq", "--stream", "S1=-", "--format", "jsonl"),
                             stdin="s.nq")
    assert out.decode() == ok(runs("plain")).stdout
    text = shown.decode()
    assert "events/s" in text and "open runs" in text and text.endswith("\r\x1b[K")


def test_an_input_error_is_written_on_a_cleared_line(runs):
    shown, out = on_terminal(runs.work, ("run", "q.rq", "--stream", "S1=broken.nq", "--format", "jsonl"),
                             status=2)
    assert len(_matches(out.decode())) > 100  # the matches before the error are written
    text = shown.decode()
    assert "events/s" in text
    drawn, error = text.rsplit("\r\x1b[K", 1)  # the line cleared, then the error alone
    assert error.startswith("broken.nq:601:") and "N-Quads syntax error" in error
    assert "Traceback" not in text


def test_ctrl_c_ends_a_live_run_quietly(runs):
    """SIGINT while reading a live stream that never ends: status 130, the line cleared, no
    traceback."""
    terminal = Terminal()
    # SIGINT as a terminal delivers it, whatever this process inherited: a shell starts a
    # background job with SIGINT ignored, and the child would inherit that and never stop
    proc = subprocess.Popen(spaseq_command(("run", "q.rq", "--stream", "S1=-", "--format", "jsonl")),
                            cwd=runs.work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=terminal.slave,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        proc.stdin.write(FILES["s.nq"].encode()[:4000])  # some events; the input stays open
        proc.stdin.flush()
        terminal.wait_for(b"events/s")  # the progress line is up: the run is under way
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        shown = terminal.close()
    assert proc.returncode == 128 + signal.SIGINT
    assert shown.endswith(b"\r\x1b[K") and b"Traceback" not in shown


def test_no_progress_turns_it_off_on_a_terminal(runs):
    shown, out = on_terminal(runs.work, (*RUN, "--no-progress"))
    assert shown == b""
    assert out.decode() == ok(runs("plain")).stdout


def test_forced_progress_off_a_terminal_writes_whole_lines(runs):
    proc = ok(runs("forced-progress"))
    assert proc.stdout == ok(runs("plain")).stdout
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith("spaseq: ") and "events/s" in line for line in lines)
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr


# ---------------------------------------------------------------- --stats


def test_stats_json(runs):
    proc = ok(runs("stats-json"))
    stats = json.loads(proc.stderr)
    matches = len(_matches(proc.stdout))
    assert (stats["events"], stats["matches"]) == (EVENTS, matches)
    assert stats["event_time"] == EVENTS - 1
    assert stats["seconds"] > 0 and stats["events_per_second"] > 0
    assert stats["open_runs_peak"] >= 1 and stats["dropped_late"] == 0


def test_stats_text(runs):
    proc = ok(runs("stats-text"))
    matches = len(_matches(proc.stdout))
    assert proc.stderr.startswith(f"spaseq: {EVENTS:,} events in ")
    assert f"event time reached {EVENTS - 1}, {matches:,} matches, at most " in proc.stderr


def test_stats_of_the_other_paths(runs):
    live = ok(runs("stats-live"))
    assert json.loads(live.stderr)["events"] == EVENTS
    assert json.loads(live.stderr)["matches"] == len(_matches(live.stdout))
    reference = ok(runs("stats-reference"))
    stats = json.loads(reference.stderr)
    assert (stats["events"], stats["matches"]) == (EVENTS, len(_matches(reference.stdout)))


# ---------------------------------------------------------------- -q / -v


def test_notes_and_quiet(runs):
    assert ok(runs("late")).stderr == "spaseq: dropped 1 late event(s)\n"
    assert ok(runs("late-quiet")).stderr == ""


def test_late_events_in_the_stats_and_under_late_error(runs):
    assert ", late events dropped: q.rq 1\n" in ok(runs("late-stats")).stderr
    # the second event (its timestamp on line 3, its graph from line 4) is late: refused, located
    assert user_error(runs("late-error")).startswith("<stdin>:4: event at 3 on <http://ex.org/s1> is "
                                                     "earlier than 5")
    assert user_error(runs("late-output-dir")) == "spaseq: --late-output adir: a directory, not a file\n"
    assert "--late-output needs the nfa engine" in user_error(runs("late-output-reference"))


def test_warnings_and_quieter(runs):
    warning = "warn.rq: warning: ?zz is projected but no GPM binds it\n"
    assert ok(runs("warn")).stderr == warning
    assert ok(runs("warn-quiet")).stderr == warning  # -q: warnings only
    assert ok(runs("warn-quieter")).stderr == ""     # -qq: errors only


def test_verbose_shows_debug_lines(runs):
    proc = ok(runs("verbose"))
    assert "spaseq: debug: results written natively (--format jsonl)" in proc.stderr.splitlines()
    assert proc.stdout == ok(runs("plain")).stdout


# ---------------------------------------------------------------- messages


@pytest.mark.parametrize("key", ["directory", "directory-python"])
def test_a_directory_given_as_a_stream_says_so(runs, key):
    assert user_error(runs(key)) == "adir: is a directory, not a replay file\n"


def test_a_directory_given_as_a_kb_says_so(runs):
    assert user_error(runs("directory-kb")) == "adir: is a directory, not an RDF file\n"


def test_input_format_applies_to_files(runs):
    assert "cannot tell the replay file's format" in user_error(runs("txt-unknown"))
    expected = ok(runs("trig")).stdout
    assert len(_matches(expected)) == 1
    assert ok(runs("txt-trig")).stdout == expected
    assert ok(runs("txt-trig-python")).stdout == expected
    # read as N-Quads, the TriG file is a syntax error (the format given wins over the name)
    assert "N-Quads syntax error" in user_error(runs("trig-as-nquads"))


def test_within_amounts_say_what_is_wrong(runs):
    assert user_error(runs("within-negative")) == (
        "minus.rq:3:8: WITHIN -5 SECONDS: a negative window; the WITHIN amount must be positive\n")
    assert user_error(runs("within-huge")) == (
        "huge.rq:3:8: WITHIN 1e400 SECONDS is too large: a window spans at most 10^18 seconds, "
        "the range of times\n")


def test_every_help_text_formats() -> None:
    """``--help`` works for ``spaseq`` and each of its subcommands, however deep: a help
    string with a bare ``%`` (``1%``) makes argparse raise while formatting, a traceback."""
    from spaseq.engine.cli.main import _subcommands, build_parser

    parser = build_parser()
    every = [parser, *_subcommands(parser)]
    assert {p.prog for p in every} >= {"spaseq run", "spaseq kb load", "spaseq kb refresh", "spaseq serve"}
    for each in every:
        assert each.format_help().startswith("usage: "), each.prog
