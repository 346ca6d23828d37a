"""Instructions per event under callgrind: a deterministic speed measure for comparing two trees.

Wall-clock rates on a shared machine vary by tens of percent between runs; instruction counts do
not (to within a few instructions per event). For each workload this measures, with
``valgrind --tool=callgrind --callgrind-out-file=/dev/null``, three child Python processes that
each import the engine, load the workload's knowledge base (if any), create
``spaseq.engine.api.Engine`` and ``register`` the workload's query (with its quick-mode ``WITHIN``
window, or ``--window``) and finally ``close()`` the engine:

* ``startup``: nothing else (0 events);
* ``read``: also reads the workload's N-Quads replay files with the replay reader (the native
  one as Python events, ``spaseq.engine.io.native_events.read_replay_files``, or in a tree from
  before it the Python ``read_replay``), merged across streams in time order, then stream order,
  then file order, and keeps the first N events, without pushing them;
* ``run``: also pushes those N events with ``Engine.push(stream, time, triples, name=...)``.

It reports ``instructions_per_event = (I_run - I_startup) / N`` (reading the files included, as in
the README's "Noise" section), split into ``read_instructions_per_event = (I_read - I_startup) / N``
and ``engine_instructions_per_event = (I_run - I_read) / N``, and the number of matches (counted by
the ``on_match`` callback; it must be the same in both trees). The replay data are made by the
project's generators (``benchmarks.generators.generate``) with exactly N events, cached in
``--data-dir``; point both trees at the same directory so that they read the same files.

Only the public API is used in the child (``Engine`` and ``EngineOptions`` from
``spaseq.engine.api``, the replay reader, pyoxigraph's ``Store`` for the KB), so the same
script runs on a tree from before the engine's reorganisation. ``read_instructions_per_event``
of a tree with the native reader and one with the Python reader compare the two readers;
``engine_instructions_per_event`` compares the engines. Children run with
``PYTHONHASHSEED=0``, after one untimed warm-up run without valgrind (so ``.pyc`` files and lark's
grammar cache exist, and the matches are checked against it). Repeated runs give the same counts to
within a few instructions per event.

Other people may be editing the tree while it is measured: every child lists the tree's modules
it imported with their mtime and size, and when a file differs between the four runs or on disk
afterwards (some run compiled and ran other code), or when a child fails (a module caught half
edited), the workload is measured again after a minute (up to 5 times; then a failure is raised,
and changed sources are recorded in the workload's ``sources_changed`` and named by
``meta.sources_changed_during_run``). ``sources_sha256`` hashes the modules the measured run imported, to tell which code it was, and
each workload records the tree's ``commit`` (and whether ``engine/`` was ``dirty``) when it was
measured; the top-level ``commit`` is the one at the start, ``meta.commit_after`` at the end.

Run from the repository root with the tree's own interpreter::

    .venv/bin/python -m benchmarks.instructions [--workloads vshape-next,creditcard,vshape-any,traffic]
        [--events N] [--window MINUTES] [--option NAME=true|false ...]
        [--data-dir DIR] [--out FILE.json]
    .venv/bin/python -m benchmarks.instructions --compare OLD.json NEW.json

Defaults: vshape-next 3000 events, creditcard 5000, vshape-any 1000, traffic 2000 (``--events``
sets one N for all); callgrind runs about 50x slower than Python alone, so the four workloads take
several minutes. The JSON is ``{"commit": ..., "meta": {...}, WORKLOAD: {"events", "matches",
"instructions_per_event", ...}, ...}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WORKLOADS = ("vshape-next", "creditcard", "vshape-any", "traffic")
DEFAULT_EVENTS = {"vshape-next": 3000, "creditcard": 5000, "vshape-any": 1000, "traffic": 2000}
FALLBACK_EVENTS = 2000
READER_MODULES = ("spaseq.engine.io.native_events", "spaseq.engine.io.replay", "spaseq.engine.replay")
"""Where the replay reader may live (the first importable one is used): ``read_replay_files``
(the native reader's events) or, before it, the Python ``read_replay``."""
MODES = ("startup", "read", "run")
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)\s*$", re.MULTILINE)


# --------------------------------------------------------------------------- child (under valgrind)


def _child(spec_path: str) -> None:
    """One measured process: set up, maybe read and push the events, close; write the result."""
    import heapq
    import importlib

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    from pyoxigraph import DefaultGraph, NamedNode, RdfFormat, Store

    from spaseq.engine import api

    reader_name, read_replay = None, None
    for name in READER_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        reader_name = name
        if hasattr(module, "read_replay_files"):
            def read_replay(path, stream, _read=module.read_replay_files):
                events, error = _read([(stream, path)])
                return argparse.Namespace(events=events, error=error)
        else:
            read_replay = module.read_replay
        break
    if read_replay is None:
        raise SystemExit(f"no replay reader among {', '.join(READER_MODULES)}")

    kb = None
    if spec["kb"]:
        kb = Store()
        graph = NamedNode(spec["kb_graph"]) if spec["kb_graph"] else DefaultGraph()
        kb.load(path=spec["kb"], format=RdfFormat.N_TRIPLES, to_graph=graph)
    kwargs = {"kb": kb}
    if spec["options"]:
        kwargs["options"] = api.EngineOptions(**spec["options"])
    engine = api.Engine(**kwargs)
    matches = [0]

    def on_match(*_args, **_kwargs) -> None:
        matches[0] += 1

    engine.register(spec["query"], on_match=on_match, keep=False)

    events = []
    if spec["mode"] in ("read", "run"):
        sources = []
        for index, (stream, path) in enumerate(spec["streams"]):
            result = read_replay(path, stream)
            if result.error is not None:
                raise SystemExit(f"{path}: {result.error}")
            sources.append([(e.time, index, k, e) for k, e in enumerate(result.events)])
        limit = spec["events"]
        for _time, _index, _k, event in heapq.merge(*sources, key=lambda item: item[:3]):
            if len(events) >= limit:
                break
            events.append(event)
    if spec["mode"] == "run":
        push = engine.push
        for event in events:
            push(event.stream, event.time, event.triples, name=event.name)
    engine.close()
    Path(spec["out"]).write_text(json.dumps(
        {"mode": spec["mode"], "events": len(events), "matches": matches[0], "reader": reader_name,
         "sources": _loaded_sources()}
    ), encoding="utf-8")


def _loaded_sources() -> dict[str, list[int]]:
    """The tree's own modules this process imported: path -> [mtime_ns, size] (not the venv's)."""
    sources = {}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if not name:
            continue
        path = Path(name).resolve()
        if ROOT in path.parents and ".venv" not in path.relative_to(ROOT).parts:
            stat = path.stat()
            sources[str(path)] = [stat.st_mtime_ns, stat.st_size]
    return sources


# --------------------------------------------------------------------------- parent


def _engine_hash() -> str:
    """A hash of every source file under ``engine/`` (to notice edits during a measurement)."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "engine").rglob("*")):
        if path.suffix in (".py", ".lark") and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _git(*args: str) -> str:
    """The output of a git command in the tree (empty if git fails)."""
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


class ChildFailed(RuntimeError):
    """A child process exited with an error (e.g. a module of the tree is being edited)."""


def _run_child(spec: dict, work: Path, valgrind: bool) -> tuple[dict, int | None, float]:
    """Run one child (under callgrind if ``valgrind``): its result, instructions, wall seconds."""
    spec_path = work / f"spec-{spec['workload']}-{spec['mode']}.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    command = [sys.executable, "-m", "benchmarks.instructions", "--child", str(spec_path)]
    if valgrind:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise ChildFailed(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    result = json.loads(Path(spec["out"]).read_text(encoding="utf-8"))
    instructions = None
    if valgrind:
        found = _COLLECTED.findall(done.stderr)
        if not found:
            raise RuntimeError(f"no 'Collected :' line in callgrind's output:\n{done.stderr[-4000:]}")
        instructions = int(found[-1])
    return result, instructions, seconds


def _progress(message: str) -> None:
    """A line on stderr."""
    print(message, file=sys.stderr, flush=True)


def _sources_problem(records: list[dict[str, list[int]]]) -> str | None:
    """Why the children may not have run the same code (a module of the tree changed), or None.

    Every child lists the tree's modules it imported with their mtime and size: a file must look
    the same in every list and on disk now, else some child compiled and ran other code."""
    seen: dict[str, list[int]] = {}
    for record in records:
        for path, stamp in record.items():
            if seen.setdefault(path, stamp) != stamp:
                return f"{path} changed between two runs"
    for path, stamp in seen.items():
        try:
            stat = os.stat(path)
        except OSError:
            return f"{path} disappeared"
        if [stat.st_mtime_ns, stat.st_size] != stamp:
            return f"{path} changed after the runs"
    return None


def _sources_sha256(paths: list[str]) -> str:
    """A hash of the named files' paths (relative to the tree) and contents."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(Path(path).relative_to(ROOT)).encode() + b"\0")
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def measure(workload_name: str, events: int, window: float | None, options: dict, data_dir: Path,
            work: Path, attempts: int = 5, pause_s: float = 60.0) -> dict:
    """The callgrind runs of one workload, repeated (after ``pause_s``) while the tree's modules
    change under them or a child fails, up to ``attempts`` times (then a failure is raised)."""
    for attempt in range(1, attempts + 1):
        try:
            result, problem = _measure_once(workload_name, events, window, options, data_dir, work)
        except ChildFailed as err:
            if attempt == attempts:
                raise
            last = [line for line in str(err).splitlines() if line and not line.startswith("==")]
            result, problem = {}, "a child failed: " + (last[-1] if last else "?")
        result["attempts"] = attempt
        if problem is None:
            return result
        _progress(f"  {workload_name}: {problem} (other edits?): "
                  + (f"again in {pause_s:.0f} s" if attempt < attempts else "giving up"))
        if attempt < attempts:
            time.sleep(pause_s)
    result["sources_changed"] = problem
    return result


def _measure_once(workload_name: str, events: int, window: float | None, options: dict, data_dir: Path,
                  work: Path) -> tuple[dict, str | None]:
    """The three callgrind runs of one workload, the per-event figures, and a sources problem."""
    from benchmarks.generators import generate
    from benchmarks.workloads import WORKLOADS

    workload = WORKLOADS[workload_name]
    minutes = workload.quick_window if window is None else window
    dataset = generate(workload.dataset, events, data_dir)
    n = min(events, dataset.events)
    base = {
        "workload": workload_name,
        "query": workload.query_text(minutes),
        "streams": list(dataset.streams.items()),
        "kb": dataset.kb,
        "kb_graph": dataset.kb_graph,
        "events": n,
        "options": options,
    }
    warm, _, warm_s = _run_child(dict(base, mode="run", out=str(work / "warm.json")), work, False)
    _progress(f"{workload_name}: {n} events, window {minutes} min, {warm['matches']} matches "
              f"(warm-up {warm_s:.1f} s without valgrind)")
    counts: dict[str, int] = {}
    seconds: dict[str, float] = {}
    results: dict[str, dict] = {}
    for mode in MODES:
        results[mode], counts[mode], seconds[mode] = _run_child(
            dict(base, mode=mode, out=str(work / f"{mode}.json")), work, True)
        _progress(f"  {mode:8} {counts[mode]:>15,} instructions ({seconds[mode]:.0f} s)")
    run = results["run"]
    records = [warm["sources"], *(results[mode]["sources"] for mode in MODES)]
    problem = _sources_problem(records)
    if problem is None and (run["matches"] != warm["matches"] or run["events"] != n):
        raise RuntimeError(f"{workload_name}: the callgrind run saw {run['events']} events and "
                           f"{run['matches']} matches, the warm-up {n} and {warm['matches']}")
    per_event = (counts["run"] - counts["startup"]) / n
    _progress(f"  => {per_event:,.0f} instructions per event "
              f"(reading {(counts['read'] - counts['startup']) / n:,.0f}, "
              f"engine {(counts['run'] - counts['read']) / n:,.0f})")
    return {
        "events": n,
        "matches": run["matches"],
        "instructions_per_event": round(per_event, 1),
        "read_instructions_per_event": round((counts["read"] - counts["startup"]) / n, 1),
        "engine_instructions_per_event": round((counts["run"] - counts["read"]) / n, 1),
        "instructions": counts,
        "callgrind_seconds": {k: round(v, 1) for k, v in seconds.items()},
        "window_minutes": minutes,
        "dataset": {"kind": dataset.kind, "size": dataset.size, "seed": dataset.seed,
                    "files": dataset.files(), "kb": dataset.kb},
        "reader": run["reader"],
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--", "engine")),
        "sources_sha256": _sources_sha256(list(run["sources"])) if problem is None else None,
    }, problem


def _option(text: str) -> tuple[str, bool]:
    """``NAME=true|false`` as a pair."""
    name, _, value = text.partition("=")
    if value.lower() not in ("true", "false", "1", "0", "on", "off"):
        raise argparse.ArgumentTypeError(f"expected NAME=true|false, got {text!r}")
    return name, value.lower() in ("true", "1", "on")


def compare(old_path: str, new_path: str) -> None:
    """Print a Markdown table comparing two result files."""
    old = json.loads(Path(old_path).read_text(encoding="utf-8"))
    new = json.loads(Path(new_path).read_text(encoding="utf-8"))
    print(f"old {old.get('commit', '?')[:10]}  new {new.get('commit', '?')[:10]}"
          f"{' (dirty)' if new.get('meta', {}).get('dirty') else ''}")
    print("| workload | events | matches old / new | instructions/event old | new | change |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, row in new.items():
        if not isinstance(row, dict) or "instructions_per_event" not in row or name not in old:
            continue
        before = old[name]
        events = str(row["events"]) if row["events"] == before["events"] else f"{before['events']} / {row['events']}"
        same = "" if row["matches"] == before["matches"] else " **DIFFER**"
        change = (row["instructions_per_event"] / before["instructions_per_event"] - 1) * 100
        print(f"| {name} | {events} | {before['matches']} / {row['matches']}{same} | "
              f"{before['instructions_per_event']:,.0f} | {row['instructions_per_event']:,.0f} | "
              f"{change:+.2f}% |")


def main(argv: list[str] | None = None) -> int:
    """Command line: measure workloads, or compare two result files."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__.split("\n")[0])
    p.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS), help="comma-separated (%(default)s)")
    p.add_argument("--events", type=int, help="events per workload (default: per workload, see the docstring)")
    p.add_argument("--window", type=float, help="WITHIN minutes (default: the workload's quick-mode window)")
    p.add_argument("--option", type=_option, action="append", default=[], metavar="NAME=BOOL",
                   help="an EngineOptions field to set (repeatable)")
    p.add_argument("--data-dir", type=Path, default=ROOT / "benchmarks" / "data",
                   help="generated replay data cache (%(default)s)")
    p.add_argument("--out", type=Path, help="write the JSON here (also printed)")
    p.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="print a table of two result files")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child)
        return 0
    if args.compare:
        compare(*args.compare)
        return 0
    from benchmarks.workloads import WORKLOADS

    names = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True)
    report: dict = {
        "commit": _git("rev-parse", "HEAD"),
        "meta": {
            "tree": str(ROOT),
            "dirty": bool(_git("status", "--porcelain", "--", "engine")),
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "valgrind": valgrind.stdout.strip(),
            "options": dict(args.option),
            "data_dir": str(args.data_dir),
            "engine_sources_sha256": _engine_hash(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        },
    }
    with tempfile.TemporaryDirectory(prefix="spaseq-instr-") as tmp:
        for name in names:
            events = args.events or DEFAULT_EVENTS.get(name, FALLBACK_EVENTS)
            report[name] = measure(name, events, args.window, dict(args.option), args.data_dir, Path(tmp))
    report["meta"]["commit_after"] = _git("rev-parse", "HEAD")
    changed = [name for name in names if report[name].get("sources_changed")]
    report["meta"]["sources_changed_during_run"] = changed
    report["meta"]["engine_sources_sha256_after"] = _engine_hash()
    if changed:
        _progress(f"warning: the tree's modules kept changing while measuring {', '.join(changed)}:"
                  " those figures are not reliable; measure again")
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
