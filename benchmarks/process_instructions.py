"""Instructions per event of whole ``spaseq run`` processes under callgrind, for one or more trees.

What the issue's speed table measures (a ``spaseq run QUERY --stream ... [--kb ...] --format
jsonl --output FILE`` process: start-up, the native replay reader and its first pass, the engine
and the native jsonl writer), counted by callgrind instead of timed: the count is the same
whatever else the machine runs, so it compares two trees where wall clocks on a shared machine
do not. Every thread is counted (the first pass and the reader thread run beside the engine, the
native writer after it), so this is work, not latency; the main thread's share (the engine's,
the critical path on two cores) is counted apart: the wall-clock table in the README says how
much of the rest overlaps.

For each workload ``NAME:EVENTS:WINDOW_MINUTES`` and each tree (a checkout with its own
``.venv``, the spaseq package installed in it), it runs the command twice under
``valgrind --tool=callgrind``: over the workload's generated files, then over empty files of the
same names (start-up and KB loading alone), and reports ``(I_files - I_empty) / events``. The
files are the benchmark generators' (``benchmarks/data``, made by ``python -m benchmarks`` or
``benchmarks.generators``); every tree reads the same ones. Matches are the output's lines and
must agree between trees.

    .venv/bin/python -m benchmarks.process_instructions --trees /work/old,/work/main \\
        [--workloads vshape-strict:20000:10,vshape-any:3000:1] [--out FILE.json]

JSON out: ``{"trees": [...], "results": [{"workload", "events", "window_minutes", "tree",
"instructions_per_event", "main_thread_instructions_per_event", "startup_instructions",
"matches"}, ...]}``. About 30 s per workload and tree for 2x10^4 events.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.generators import Dataset
from benchmarks.measure import (
    compile_bytecode,
    count_lines,
    empty_streams,
    spaseq_run_command,
    warm_query_cache,
)
from benchmarks.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
DEFAULT_WORKLOADS = ("vshape-strict:20000:10", "vshape-next:20000:10", "spike-any:20000:10",
                     "creditcard:20000:10", "traffic:10000:10", "smartgrid:10000:10",
                     "vshape-any:3000:1")
_REFS = re.compile(r"refs:\s+([\d,]+)")
_SUMMARY = re.compile(r"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


@dataclass
class Result:
    workload: str
    events: int
    window_minutes: float
    tree: str
    instructions_per_event: float
    #: of the main thread alone (the engine's), start-up subtracted
    main_thread_instructions_per_event: float
    startup_instructions: int
    matches: int


def instructions(command: list[str], env: dict[str, str], scratch: Path) -> tuple[int, int]:
    """Instructions of ``command`` and every thread it starts, and of its main thread alone
    (the engine's: the critical path once reading and writing run beside it), counted by
    callgrind (one profile per thread, in ``scratch``, read and removed)."""
    out = scratch / "callgrind.out"
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                           "--separate-threads=yes", *command],
                          capture_output=True, text=True, env={**env, "PYTHONHASHSEED": "0"},
                          check=False)
    found = _REFS.search(proc.stderr)
    main = None
    for profile in sorted(scratch.glob("callgrind.out-*")):
        if profile.name.endswith("-01"):
            summary = _SUMMARY.search(profile.read_text(encoding="utf-8", errors="replace"))
            main = int(summary.group(1)) if summary else None
        profile.unlink()
    if proc.returncode != 0 or found is None or main is None:
        raise SystemExit(f"{' '.join(command)} failed under valgrind:\n{proc.stderr[-2000:]}")
    return int(found.group(1).replace(",", "")), main


def measure(tree: Path, workload: str, events: int, window: float, data_dir: Path = DATA) -> Result:
    """One workload on one tree: the process over the files, less the process over empty ones
    (``data_dir``: where the generators left the workload's dataset)."""
    spec = WORKLOADS[workload]
    data = data_dir / f"{spec.dataset}-{events}-s42.json"
    if not data.exists():
        raise SystemExit(f"{data} is missing: make it with python -m benchmarks --sizes {events} "
                         f"--workloads {workload} (or benchmarks.generators)")
    dataset = Dataset.from_json(json.loads(data.read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory(prefix="spaseq-instr-") as tmp:
        query, out = Path(tmp) / "query.rq", Path(tmp) / "out.jsonl"
        query.write_text(spec.query_text(window), encoding="utf-8")

        python = str(tree / ".venv" / "bin" / "python")

        def command(streams: dict[str, str]) -> list[str]:  # planned as the timed runs plan it
            extra = ("--intervals",) if spec.intervals else ()
            return spaseq_run_command(python, query, dataset, streams, out, extra)

        # both processes find the query in a cache of checked queries of their own, filled
        # first (a query run again is not parsed)
        compile_bytecode(python)
        env = warm_query_cache(python, query, Path(tmp) / "queries", dict(os.environ), check=True)
        scratch = Path(tmp)
        files, files_main = instructions(command(dataset.streams), env, scratch)
        matches = count_lines(out)
        empty = empty_streams(dataset, Path(tmp))
        startup, startup_main = instructions(command(empty), env, scratch)
    return Result(workload, dataset.events, window, str(tree), (files - startup) / dataset.events,
                  (files_main - startup_main) / dataset.events, startup, matches)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.process_instructions",
                                description=__doc__.split("\n")[0])
    p.add_argument("--trees", default=str(ROOT),
                   help="comma-separated checkouts, each with its .venv (default: this one)")
    p.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                   help="comma-separated NAME:EVENTS:WINDOW_MINUTES")
    p.add_argument("--out", help="write the JSON here too")
    args = p.parse_args(argv)
    trees = [Path(t).resolve() for t in args.trees.split(",") if t]
    results = []
    for item in args.workloads.split(","):
        name, events, window = item.split(":")
        if name not in WORKLOADS:
            p.error(f"unknown workload {name!r}")
        for tree in trees:
            r = measure(tree, name, int(events), float(window))
            results.append(r)
            print(f"{name} ({r.events} events, {window} min) {tree.name}: "
                  f"{r.instructions_per_event:,.0f} instructions per event "
                  f"({r.main_thread_instructions_per_event:,.0f} on the main thread), "
                  f"{r.matches} matches",
                  file=sys.stderr, flush=True)
        found = {r.matches for r in results if r.workload == name}
        if len(found) > 1:
            raise SystemExit(f"{name}: the trees found different numbers of matches: {sorted(found)}")
    text = json.dumps({"trees": [str(t) for t in trees], "results": [asdict(r) for r in results]},
                      indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
