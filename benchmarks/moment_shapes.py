"""Issue 24's shapes whose cost grew with the square of one instant or of the open runs, each as
a whole ``spaseq run QUERY --stream S=FILE --format csv --output FILE --stats=json`` process
(wall clock, CPU and peak RSS of the process, matches from ``--stats``), at a few sizes so the
growth curve shows. One command, JSON out::

    .venv/bin/python -m benchmarks.moment_shapes [--shapes conjunction,conjunction-spread,kleene,chain]
        [--sizes-conjunction 5000 10000 20000 40000] [--sizes-kleene 2500 5000 10000]
        [--sizes-chain 10000 20000 40000] [--sizes-chain-frequent 5000 10000] [--sizes-fan 1000 1415]
        [--python PATH] [--cli-args=--lazy-chain] [--timeout S] [--out FILE.json]
        [--without-last] [--format csv|jsonl] [--no-compaction]

    # issue 29: a moment of millions of matches, against the state alone
    .venv/bin/python -m benchmarks.moment_shapes --shapes chain --sizes-chain 1000000 2000000 \
        --without-last --timeout 1800 --out chain.json
    .venv/bin/python -m benchmarks.moment_shapes --shapes fan --without-last --out fan.json

- ``conjunction``: ``SEQ((A & B))``, n events at one timestamp, n/2 A's then n/2 B's, joined
  1:1 on ``?k``: n/2 matches; ``conjunction-spread`` is the same pairs, one per second.
- ``kleene``: ``SEQ(A ; B+ : C)``, an A, n B's a second apart, a C: n matches of 1..n
  iterations at C's moment (written as one csv row each: the output is linear in n).
- ``chain``: ``SEQ(A : B) WITHIN 1000000 DAYS``, n A's a second apart then one B: n matches.
- ``fan``: the same query over n A's and one B event of n triples (n solutions of B for
  every run): n² matches in one moment from n runs, the moment far larger than the state
  (what streaming a moment bounds, docs/decisions.md 49). Not in the default set.
- ``chain-frequent``: the same events, B on A's predicate with an unindexed FILTER
  (``?y = ?x + 5000``): every event is a trigger of the lazy chain (run it with and without
  ``--cli-args=--lazy-chain``: what docs/decisions.md 49 compares; no match below 5,001
  events). Not in the default set.

``--python`` runs another interpreter's spaseq (e.g. an unchanged checkout's venv: the
"before" numbers); ``--cli-args`` adds options to every run (``--lazy-chain``). Inputs are
written once into ``benchmarks/data/shapes/``.

``--without-last`` measures each shape and size twice: as above, then the same input without
its last event (``chain``'s B, ``kleene``'s C: ``"without_last": true`` in the row), the
control whose peak RSS is the state alone (the runs and events waiting for that last event).
When the last event's moment releases its matches as a stream, the two peaks are close,
however many matches (and output bytes) that moment has; a moment that gathered its matches
before writing them would add about n times a match's size. ``--format jsonl`` writes the
jsonl contract (each match with its events in full) instead of csv rows: more bytes per match
(``output_bytes``) through the same moment.

``--no-compaction`` runs each process with the dictionary's compaction off
(``Engine.COMPACT_MIN_TERMS`` raised past any run's terms, set before the command's ``main``
runs). A compaction rebuilds the native side from a snapshot while the old one still lives, so
with a large state (chain's n waiting runs, each with fresh terms) the peak RSS is the
compaction's, about twice the state, and hides what the moment adds; without it the peak is the
state's and the moment's own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from benchmarks.report import emit

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "shapes"
EX = "http://ex.org/"
STAMP = "<http://www.w3.org/ns/prov#generatedAtTime>"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"

T = TypeVar("T")

#: ``spaseq`` with the dictionary's compaction off (``--no-compaction``)
NO_COMPACTION = ("import sys; from spaseq.engine.api.engine import Engine; Engine.COMPACT_MIN_TERMS = 10**15; "
                 "from spaseq.engine.cli.main import main; sys.exit(main())")

HEAD = f"PREFIX : <{EX}>\nSELECT {{select}}\n{{within}}FROM STREAM S <{EX}s>\nWHERE {{{{ SEQ({{seq}})\n"
QUERIES = {
    "conjunction": ("?k", "", "(A & B)",
                    "DEFINE GPM A ON S { ?a :ka ?k } DEFINE GPM B ON S { ?b :kb ?k }"),
    "kleene": ("?a ?c", "WITHIN 1000000 DAYS\n", "A ; B+ : C",
               "DEFINE GPM A ON S { ?a :start ?x } DEFINE GPM B ON S { ?b :step ?y } "
               "DEFINE GPM C ON S { ?c :stop ?z }"),
    "chain": ("?a ?b", "WITHIN 1000000 DAYS\n", "A : B",
              "DEFINE GPM A ON S { ?a :pa ?x } DEFINE GPM B ON S { ?b :pb ?y }"),
}
QUERIES["conjunction-spread"] = QUERIES["conjunction"]
QUERIES["fan"] = QUERIES["chain"]
QUERIES["chain-frequent"] = ("?a ?b", "WITHIN 1000000 DAYS\n", "A : B",
                             "DEFINE GPM A ON S { ?a :pa ?x } "
                             "DEFINE GPM B ON S { ?b :pa ?y FILTER(?y = ?x + 5000) }")
DEFAULT_SIZES = {"conjunction": (5000, 10000, 20000, 40000), "conjunction-spread": (40000,),
                 "kleene": (2500, 5000, 10000), "chain": (10000, 20000, 40000),
                 "chain-frequent": (5000, 10000), "fan": (1000, 1415)}


def query_text(shape: str) -> str:
    """The shape's SPAseq query."""
    select, within, seq, defines = QUERIES[shape]
    return HEAD.format(select=select, within=within, seq=seq) + defines + " }\n"


def events(shape: str, n: int):
    """(time, [(subject, predicate, object)]) of each event of the shape at size ``n``, in
    order."""
    if shape == "fan":
        yield from ((i, [(f"a{i}", "pa", f'"{i}"^^{INT}')]) for i in range(n))
        yield n, [("b", "pb", f'"{i}"^^{INT}') for i in range(n)]
    else:
        yield from ((t, [(s, p, o)]) for t, s, p, o in _single(shape, n))


def _single(shape: str, n: int):
    """(time, subject, predicate, object) of each event of a shape of one triple per event."""
    if shape == "conjunction":
        half = n // 2
        yield from ((0, f"a{i}", "ka", f"<{EX}k{i}>") for i in range(half))
        yield from ((0, f"b{i}", "kb", f"<{EX}k{i}>") for i in range(half))
    elif shape == "conjunction-spread":
        for i in range(n // 2):
            yield i, f"a{i}", "ka", f"<{EX}k{i}>"
            yield i, f"b{i}", "kb", f"<{EX}k{i}>"
    elif shape == "kleene":
        yield 0, "a", "start", f'"0"^^{INT}'
        yield from ((i, f"b{i}", "step", f'"{i}"^^{INT}') for i in range(1, n + 1))
        yield n + 1, "c", "stop", f'"0"^^{INT}'
    else:  # chain, chain-frequent
        yield from ((i, f"a{i}", "pa", f'"{i}"^^{INT}') for i in range(n))
        yield n, "b", "pb", f'"{n}"^^{INT}'


def input_file(shape: str, n: int, data: Path = DATA, without_last: bool = False) -> Path:
    """The shape's replay file at size ``n`` (N-Quads, times in seconds), written once;
    ``without_last``: all but its last event (the control of ``--without-last``)."""
    path = data / f"{shape.removesuffix('-frequent')}-{n}{'-without-last' if without_last else ''}.nq"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".part")
        with open(part, "w", encoding="utf-8") as out:
            written = events(shape, n)
            if without_last:
                written = _all_but_last(written)
            for k, (t, triples) in enumerate(written):
                g = f"<{EX}g{k}>"
                out.write(f'{g} {STAMP} "{t}"^^{INT} .\n')
                out.writelines(f'<{EX}{s}> <{EX}{p}> {o} {g} .\n' for s, p, o in triples)
        os.replace(part, path)
    return path


def _all_but_last(items: Iterable[T]) -> Iterator[T]:
    """``items`` without the last one, streamed."""
    rest = iter(items)
    for previous in rest:  # the first item; the inner loop takes the rest
        for item in rest:
            yield previous
            previous = item


def measure(python: str, shape: str, n: int, cli_args: list[str], timeout: float,
            data_dir: Path = DATA, without_last: bool = False, output_format: str = "csv",
            compaction: bool = True) -> dict:
    """One whole ``spaseq run`` process on the shape at size ``n`` (``without_last``: on its
    input without the last event)."""
    data = input_file(shape, n, data_dir, without_last)
    row: dict = {"shape": shape, "n": n, "cli_args": cli_args, "without_last": without_last,
                 "format": output_format, "compaction": compaction}
    with tempfile.TemporaryDirectory(prefix="spaseq-shapes-") as tmp:
        query, out = Path(tmp) / "query.rq", Path(tmp) / f"out.{output_format}"
        query.write_text(query_text(shape), encoding="utf-8")
        env = {**os.environ, "SPASEQ_QUERY_CACHE": "off", "PYTHONHASHSEED": "0"}
        command = [python, *(("-m", "spaseq.engine.cli") if compaction else ("-c", NO_COMPACTION)),
                   "run", str(query), "--stream", f"S={data}",
                   "--format", output_format, "--output", str(out), "--stats=json", "--no-progress",
                   *cli_args]
        with open(Path(tmp) / "stderr", "w+", encoding="utf-8") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
            try:
                _, status, usage = _wait(proc, timeout)
            except TimeoutError:
                proc.kill()
                proc.wait()
                return {**row, "status": "timeout", "reason": f"killed after {timeout:.0f} s"}
            elapsed = time.perf_counter() - start
            err.seek(0)
            stderr = err.read()
        if status != 0:  # a signal says itself: a crash may leave no message
            said = stderr.strip()[-300:] or (f"killed by signal {-status}" if status < 0 else f"exit {status}")
            return {**row, "status": "error", "reason": said, "exit_status": status,
                    "elapsed_s": round(elapsed, 3), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}
        stats = json.loads(stderr.strip().splitlines()[-1])
        row.update({"status": "ok", "matches": stats["matches"], "elapsed_s": round(elapsed, 3),
                    "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
                    "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
                    "open_runs_peak": stats.get("open_runs_peak"),
                    "output_bytes": out.stat().st_size})
    return row


def _wait(proc: subprocess.Popen, timeout: float):
    """``os.wait4`` on the child (its own rusage: peak RSS of that process alone), polled so
    that a run past ``timeout`` can be killed."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return pid, proc.returncode, usage
        if time.monotonic() > deadline:
            raise TimeoutError
        time.sleep(0.02)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="conjunction,conjunction-spread,kleene,chain")
    for shape in ("conjunction", "kleene", "chain", "chain-frequent", "fan"):
        parser.add_argument(f"--sizes-{shape}", type=int, nargs="+", default=list(DEFAULT_SIZES[shape]))
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose spaseq runs")
    parser.add_argument("--cli-args", default="", help="more `spaseq run` options, space-separated")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--data-dir", type=Path, default=DATA, help="where the inputs are written")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--without-last", action="store_true",
                        help="also run each size without its last event (the state alone)")
    parser.add_argument("--format", choices=("csv", "jsonl"), default="csv", help="the output's format")
    parser.add_argument("--no-compaction", action="store_true",
                        help="the dictionary's compaction off: the peak is the state's, not a compaction's")
    args = parser.parse_args(argv)
    sizes = {"conjunction": args.sizes_conjunction, "conjunction-spread": [max(args.sizes_conjunction)],
             "kleene": args.sizes_kleene, "chain": args.sizes_chain,
             "chain-frequent": args.sizes_chain_frequent, "fan": args.sizes_fan}
    rows = []
    for shape in args.shapes.split(","):
        for n in sizes[shape]:
            for without_last in (False, True) if args.without_last else (False,):
                row = measure(args.python, shape, n, args.cli_args.split(), args.timeout, args.data_dir,
                              without_last, args.format, not args.no_compaction)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    result = {"schema": "spaseq-moment-shapes/1", "python": args.python, "rows": rows}
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
