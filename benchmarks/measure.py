"""One measurement, run in a fresh process: ``spaseq run`` (a whole process), the engine API in
process, the reference, the baseline or the ceiling.

``child_main(spec, conn)`` is the target of a ``multiprocessing`` spawn process: it runs one
measurement described by ``spec`` (a plain dict) and sends back a plain dict with events,
triples, matches, elapsed/CPU seconds and the process's peak RSS. Reading the replay files is
part of every timed measurement (events are streamed from the files as they are processed);
loading the knowledge base and registering the query are not (``setup_s``).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import resource
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.generators import Dataset

ENGINE_API = "spaseq.engine.api"
ENGINE_OPTIONS = (
    "push_windows",
    "index_streams",
    "partition_runs",
    "range_index",
    "share_context_free",
    "prefilter",
    "cost_ordered_disjunction",
    "lazy_conjunction",
)
CHECK_EVERY = 64
"""Events between two looks at the clock (for the time budget)."""


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


@dataclass
class OptionInfo:
    """One engine optimisation: why it cannot be switched (None if it can) and its default."""

    problem: str | None = None
    default: bool | None = None

    @property
    def measured_value(self) -> bool:
        """The value an ablation run sets: the opposite of the default (off, for one on by default)."""
        return not self.default if self.default is not None else False

    @property
    def label(self) -> str:
        """``-name`` for turning an optimisation off, ``+name`` for turning an off-by-default one on."""
        return "+" if self.measured_value else "-"


@dataclass
class EngineProbe:
    """What of the engine API is there: whether it is usable, why not, and its optimisations."""

    available: bool
    reason: str = ""
    options: dict[str, OptionInfo] = field(default_factory=dict)


def load_engine_api() -> ModuleType | None:
    """``spaseq.engine.api`` if it exists, else None (other import errors propagate)."""
    try:
        return importlib.import_module(ENGINE_API)
    except ModuleNotFoundError as err:
        if err.name is not None and ENGINE_API.startswith(err.name):
            return None
        raise


def _unavailable(reason: str) -> EngineProbe:
    """A probe result saying the engine cannot be measured, every option n/a for that reason."""
    return EngineProbe(False, reason, {name: OptionInfo(reason) for name in ENGINE_OPTIONS})


def probe_engine() -> EngineProbe:
    """Check the engine API (Engine.register/push/close, EngineOptions fields) without running it.

    The seven known optimisations are always listed (n/a when missing); any other boolean field
    of an ``EngineOptions`` dataclass is listed too, so new switches get measured.
    """
    try:
        api = load_engine_api()
    except Exception as err:  # a broken api module is reported, not fatal
        return _unavailable(f"{ENGINE_API} failed to import: {type(err).__name__}: {err}")
    if api is None:
        return _unavailable(f"{ENGINE_API} not available")
    engine = getattr(api, "Engine", None)
    missing = [m for m in ("register", "push", "close") if engine is None or not hasattr(engine, m)]
    if engine is None or missing:
        return _unavailable(f"{ENGINE_API} has no " + ("Engine" if engine is None else "Engine." + "/".join(missing)))
    names = list(ENGINE_OPTIONS)
    options_cls = getattr(api, "EngineOptions", None)
    if options_cls is not None and dataclasses.is_dataclass(options_cls):
        names += [f.name for f in dataclasses.fields(options_cls)
                  if f.name not in names and isinstance(f.default, bool)]
    return EngineProbe(True, "", {name: _option_info(api, name) for name in names})


def _option_info(api: ModuleType, name: str) -> OptionInfo:
    """Whether ``Engine(options=EngineOptions(name=...))`` looks supported, and the default value."""
    options_cls = getattr(api, "EngineOptions", None)
    if options_cls is None:
        return OptionInfo("no EngineOptions in the engine API")
    try:
        params = inspect.signature(api.Engine).parameters
    except (TypeError, ValueError):
        params = {}
    if params and "options" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return OptionInfo("Engine() takes no options")
    if dataclasses.is_dataclass(options_cls):
        fields = {f.name: f for f in dataclasses.fields(options_cls)}
        if name not in fields:
            return OptionInfo(f"EngineOptions has no field {name}")
        default = fields[name].default
        return OptionInfo(None, default if isinstance(default, bool) else None)
    try:
        instance = options_cls()
    except TypeError:
        return OptionInfo("EngineOptions() needs arguments")
    if not hasattr(instance, name):
        return OptionInfo(f"EngineOptions has no field {name}")
    default = getattr(instance, name)
    return OptionInfo(None, default if isinstance(default, bool) else None)


class _Counter:
    """A match callback that only counts."""

    def __init__(self) -> None:
        """Start at zero."""
        self.count = 0

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """Count one match."""
        self.count += 1


def _accepts(function: Any, keyword: str) -> bool:
    """Whether a callable takes the keyword argument ``keyword``."""
    try:
        return keyword in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _run_engine(spec: dict, setup_start: float) -> dict:
    """The engine API: push every event (until the budget runs out), then close."""
    from benchmarks.generators import Dataset
    from benchmarks.workloads import WORKLOADS, iter_events, load_kb

    api = load_engine_api()
    if api is None:
        return {"status": "n/a", "reason": f"{ENGINE_API} not available"}
    dataset = Dataset.from_json(spec["dataset"])
    workload = WORKLOADS[spec["workload"]]
    text = workload.query_text(spec["window_minutes"])
    kwargs: dict[str, Any] = {"kb": load_kb(dataset)}
    options = {"intervals": True} if workload.intervals else {}
    if spec.get("option"):
        options[spec["option"]] = spec["option_value"]
    if options:
        kwargs["options"] = api.EngineOptions(**options)
    engine = api.Engine(**kwargs)
    counter = _Counter()
    register_kwargs: dict[str, Any] = {"on_match": counter}
    if _accepts(engine.register, "keep"):
        register_kwargs["keep"] = False  # count through the callback; do not hoard matches
    engine.register(text, **register_kwargs)
    setup_s = time.perf_counter() - setup_start
    setup_rss = peak_rss_mb()
    budget = spec["budget_s"]
    start, cpu0 = time.perf_counter(), time.process_time()
    if spec.get("max_events") is None and hasattr(engine, "run_replay"):
        # what `spaseq run` does: the files read natively and fed to the native runtime
        error = engine.run_replay(list(dataset.streams.items()))
        if error is not None:
            return {"status": "error", "reason": str(error)}
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
        return result_of(dataset.events, dataset.triples, counter.count, elapsed, cpu, setup_s,
                       setup_rss, False)
    deadline = start + budget
    events = triples = 0
    capped = False
    for event in iter_events(dataset, spec.get("max_events")):
        engine.push(event.stream, event.time, event.triples, name=event.name,
                    start=event.start if event.start != event.time else None)
        events += 1
        triples += len(event.triples)
        if events % CHECK_EVERY == 0 and time.perf_counter() > deadline:
            capped = True
            break
    engine.close()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    return result_of(events, triples, counter.count, elapsed, cpu, setup_s, setup_rss,
                   capped or events < dataset.events)


#: A ``spaseq run`` process writes at most this much (its output file, on a shared disk):
#: skip-till-any over a wide window writes matches faster than any budget stops it (over a
#: 1-minute window, vshape-any's 10^5 events are 5.3 GB of jsonl, which fit).
OUTPUT_CAP = 8 << 30


def _cap_output() -> None:
    """In the child, before exec: files larger than ``OUTPUT_CAP`` refused (EFBIG, which the
    process reports and exits on, rather than the SIGXFSZ that would kill it)."""
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_CAP, OUTPUT_CAP))


def spaseq_run_command(python: str, query: Path, dataset: Dataset, streams: dict[str, str],
                       out: Path, extra: Sequence[str] = ()) -> list[str]:
    """``spaseq run QUERY --stream IRI=FILE ... [--kb GRAPH=FILE] --format jsonl --output
    OUT`` with ``python`` (a tree's interpreter), over ``streams`` (the dataset's or empty
    files), the dataset's KB loaded."""
    args = [python, "-m", "spaseq.engine.cli", "run", str(query)]
    for iri, path in streams.items():
        args += ["--stream", f"{iri}={path}"]
    if dataset.kb is not None:
        args += ["--kb", f"{dataset.kb_graph}={dataset.kb}" if dataset.kb_graph else dataset.kb]
    return [*args, "--format", "jsonl", "--output", str(out), *extra]


def empty_streams(dataset: Dataset, folder: Path) -> dict[str, str]:
    """Empty files named like the dataset's streams (a run over them is start-up alone)."""
    empty: dict[str, str] = {}
    for iri, path in dataset.streams.items():
        empty[iri] = str(folder / f"empty-{len(empty)}{Path(path).suffix}")
        Path(empty[iri]).write_bytes(b"")
    return empty


#: Compiles spaseq's modules to bytecode, as installing a package does (run by the interpreter
#: of the tree measured): an editable install under ``PYTHONDONTWRITEBYTECODE`` (as on the
#: project's machines) would otherwise compile every changed module from source in each
#: measured process (0.26 G instructions, ~0.05 s, of a run's start-up).
COMPILE_BYTECODE = """
import compileall, importlib
for name in ("spaseq.engine", "spaseq.plugin", "spaseq.extension_functions"):
    for directory in importlib.import_module(name).__path__:
        compileall.compile_dir(directory, quiet=1)
"""


def compile_bytecode(python: str = sys.executable) -> None:
    """Run ``COMPILE_BYTECODE`` with ``python``."""
    subprocess.run([python, "-c", COMPILE_BYTECODE], capture_output=True, check=True)


def warm_query_cache(python: str, query: Path, folder: Path, env: dict[str, str],
                     check: bool = False) -> dict[str, str]:
    """``env`` with a cache of checked queries of its own in ``folder``, holding ``query``
    (engine/language/cache.py): the runs measured find the query as a user's repeated run
    does, without parsing it (a first run parses it, ~50 ms). ``check``: CalledProcessError
    when the query does not compile."""
    env = {**env, "SPASEQ_QUERY_CACHE": str(folder)}
    subprocess.run([python, "-m", "spaseq.engine.cli", "explain", str(query)], env=env,
                   capture_output=True, check=check)
    return env


def _run_cli(spec: dict, setup_start: float) -> dict:
    """A whole ``spaseq run QUERY --stream IRI=FILE ... [--kb GRAPH=FILE] --format jsonl
    --output FILE`` process, what the issue measures: start-up, KB loading, reading, the
    engine and writing every match in the jsonl contract to a file, all timed (wall clock
    from start to exit; CPU and peak RSS are the process's own). The matches are the lines
    written. ``startup_s`` is the same command over empty files (start-up and KB loading
    alone), measured after, for the analysis; the rate does not subtract it. The output file
    is deleted afterwards (vshape-any writes ~1 KB per match)."""
    import os
    import tempfile

    from benchmarks.generators import Dataset
    from benchmarks.workloads import WORKLOADS

    dataset = Dataset.from_json(spec["dataset"])
    workload = WORKLOADS[spec["workload"]]
    text = workload.query_text(spec["window_minutes"])
    extra = (*spec.get("cli_args", ()), *(("--intervals",) if workload.intervals else ()))
    with tempfile.TemporaryDirectory(prefix="spaseq-bench-", dir=spec.get("scratch_dir")) as tmp:
        query, out = Path(tmp) / "query.rq", Path(tmp) / "out.jsonl"
        query.write_text(text, encoding="utf-8")

        def command(streams: dict[str, str]) -> list[str]:
            return spaseq_run_command(sys.executable, query, dataset, streams, out, extra)

        # the query was run before: filled in first, untimed
        env = warm_query_cache(sys.executable, query, Path(tmp) / "queries",
                               {**os.environ, "PYTHONHASHSEED": "0"})
        timeout = spec["budget_s"] + 100
        setup_s = time.perf_counter() - setup_start
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            proc = subprocess.run(command(dataset.streams), capture_output=True, text=True,
                                  env=env, timeout=timeout, check=False, preexec_fn=_cap_output)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "reason": f"spaseq run killed after {timeout:.0f} s"}
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0 and "File too large" in proc.stderr:
            return {"status": "capped", "reason": f"its output passed {OUTPUT_CAP >> 30} GiB "
                                                  "(skip-till-any over a wide window)"}
        if proc.returncode != 0:
            return {"status": "error", "reason": f"spaseq run exited {proc.returncode}: "
                                                 f"{proc.stderr.strip()[-300:]}"}
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak = after.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
        output_bytes = out.stat().st_size
        binary = _binary_format(extra)
        floor = {}
        if binary is None:
            matches = count_lines(out)
        else:  # its rows; and writing them alone, read back into memory (the format's floor)
            matches, floor = _arrow_floor(binary, out, Path(tmp) / "floor")
        out.unlink()
        t0 = time.perf_counter()
        subprocess.run(command(empty_streams(dataset, Path(tmp))), capture_output=True, env=env,
                       timeout=timeout, check=False)
        startup_s = time.perf_counter() - t0
    result = result_of(dataset.events, dataset.triples, matches, elapsed, cpu, setup_s, None, False)
    result.update({"peak_rss_mb": peak, "startup_s": startup_s, "output_bytes": output_bytes,
                   "stderr": proc.stderr.strip()[-300:] or None, **floor})
    return result


def _binary_format(args: Sequence[str]) -> str | None:
    """The Arrow format a ``spaseq run`` command line's last ``--format`` names, if any."""
    from spaseq.engine.output.arrow import ARROW_FORMATS

    formats = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--format"]
    return formats[-1] if formats and formats[-1] in ARROW_FORMATS else None


def _arrow_floor(fmt: str, path: Path, scratch: Path) -> tuple[int, dict]:
    """The rows of ``spaseq run``'s Arrow or Parquet output at ``path``, and the time and CPU
    pyarrow takes to write them alone again, from memory, as the run's writer does (the same
    ``open_writer``, the same record batches): ``floor_s``, ``floor_cpu_s``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spaseq.engine.output.arrow import open_writer

    if fmt == "parquet":
        source = pq.ParquetFile(path)
        batches = [source.read_row_group(i).combine_chunks().to_batches()[0]
                   for i in range(source.num_row_groups)]
        schema = source.schema_arrow
    else:
        with pa.ipc.open_stream(path) as reader:
            schema, batches = reader.schema, list(reader)
    start, cpu0 = time.perf_counter(), time.process_time()
    writer = open_writer(fmt, str(scratch), schema)
    for batch in batches:
        writer.write_batch(batch)
    writer.close()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    scratch.unlink()
    return sum(b.num_rows for b in batches), {"floor_s": elapsed, "floor_cpu_s": cpu}


def count_lines(path) -> int:
    """Lines in a file (the jsonl output: one match each), read in large blocks."""
    count = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            count += block.count(b"\n")
    return count


def _run_reference(spec: dict, setup_start: float) -> dict:
    """The reference evaluator on the first ``max_events`` events (it is batch: no budget)."""
    from benchmarks.generators import Dataset
    from benchmarks.workloads import WORKLOADS, iter_events, load_kb
    from spaseq.engine.language.query import parse_query
    from spaseq.engine.reference.evaluator import evaluate

    dataset = Dataset.from_json(spec["dataset"])
    query = parse_query(WORKLOADS[spec["workload"]].query_text(spec["window_minutes"]))
    kb = load_kb(dataset)
    setup_s = time.perf_counter() - setup_start
    setup_rss = peak_rss_mb()
    start, cpu0 = time.perf_counter(), time.process_time()
    events = list(iter_events(dataset, spec.get("max_events")))
    matches = evaluate(query, events, kb)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    triples = sum(len(e.triples) for e in events)
    return result_of(len(events), triples, len(matches), elapsed, cpu, setup_s, setup_rss,
                   len(events) < dataset.events)


def _run_baseline(spec: dict, setup_start: float) -> dict:
    """The window-store SPARQL baseline, until ``max_events`` or the budget."""
    from benchmarks.baselines import WindowStoreBaseline
    from benchmarks.generators import Dataset
    from benchmarks.workloads import iter_events, load_kb

    dataset = Dataset.from_json(spec["dataset"])
    baseline = WindowStoreBaseline(spec["workload"], spec["window_minutes"] * 60.0, load_kb(dataset))
    setup_s = time.perf_counter() - setup_start
    setup_rss = peak_rss_mb()
    start, cpu0 = time.perf_counter(), time.process_time()
    deadline = start + spec["budget_s"]
    events = triples = 0
    capped = False
    for event in iter_events(dataset, spec.get("max_events")):
        baseline.push(event, deadline)
        events += 1
        triples += len(event.triples)
        if time.perf_counter() > deadline:
            capped = True
            break
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    return result_of(events, triples, baseline.matches, elapsed, cpu, setup_s, setup_rss,
                   capped or events < dataset.events)


def _run_ceiling(spec: dict, setup_start: float) -> dict:
    """pyoxigraph parsing every file and touching each quad."""
    from benchmarks.baselines import parse_ceiling
    from benchmarks.generators import Dataset

    dataset = Dataset.from_json(spec["dataset"])
    setup_s = time.perf_counter() - setup_start
    setup_rss = peak_rss_mb()
    start, cpu0 = time.perf_counter(), time.process_time()
    quads = parse_ceiling(dataset)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    result = result_of(dataset.events, dataset.triples, None, elapsed, cpu, setup_s, setup_rss, False)
    result["quads"] = quads
    return result


def result_of(
    events: int, triples: int, matches: int | None, elapsed: float, cpu: float,
    setup_s: float, setup_rss: float, capped: bool,
) -> dict:
    """A successful measurement as a plain dict."""
    return {
        "status": "ok",
        "events": events,
        "triples": triples,
        "matches": matches,
        "elapsed_s": elapsed,
        "cpu_s": cpu,
        "setup_s": setup_s,
        "events_per_s": events / elapsed if elapsed > 0 else None,
        "triples_per_s": triples / elapsed if elapsed > 0 else None,
        "setup_rss_mb": setup_rss,
        "capped": capped,
    }


def _run_pyflink(spec: dict, setup_start: float) -> dict:
    """The optional PyFlink peer (``benchmarks.peers.pyflink_stock``; n/a without PyFlink)."""
    from benchmarks.peers.pyflink_stock import measure_spec

    return measure_spec(spec, setup_start)


def _run_write_floor(spec: dict, setup_start: float) -> dict:
    """Writing ``spec["bytes"]`` bytes (what ``spaseq run`` wrote on the same data: its jsonl
    output's size) to a new file in 1 MiB blocks, as the native writer does, and nothing
    else: the speed limit of any run that writes that output, however fast it finds the
    matches (skip-till-any writes tens of KB per event). The file is deleted afterwards."""
    import tempfile

    from benchmarks.generators import Dataset

    dataset = Dataset.from_json(spec["dataset"])
    size = int(spec["bytes"])
    row = b'{"bindings": {"p": {"type": "literal", "value": "175.30"}}}\n'
    block = (row * ((1 << 20) // len(row) + 1))[: 1 << 20]
    setup_s = time.perf_counter() - setup_start
    with tempfile.TemporaryDirectory(prefix="spaseq-floor-", dir=spec.get("scratch_dir")) as tmp:
        start, cpu0 = time.perf_counter(), time.process_time()
        with open(Path(tmp) / "out.jsonl", "wb", buffering=0) as out:
            left = size
            while left > 0:
                left -= out.write(block[: min(left, len(block))])
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    result = result_of(dataset.events, dataset.triples, None, elapsed, cpu, setup_s, None, False)
    result["output_bytes"] = size
    return result


PROTOTYPE = Path(__file__).resolve().parent / "prototype"


def build_prototype() -> Path:
    """The purpose-built V-shape matcher (``benchmarks/prototype``, std-only Rust), built in
    release mode if it is not (cargo says so quickly when it is)."""
    import subprocess

    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path", str(PROTOTYPE / "Cargo.toml")],
                   check=True)
    return PROTOTYPE / "target" / "release" / "vshape-prototype"


def _run_prototype(spec: dict, setup_start: float) -> dict:
    """The prototype row (issue 29): a program written for this one query, computing the same
    matches as ``spaseq run`` over the same file and writing each (its three graph IRIs) to a
    file, timed as a whole process: how far the engine is from what the hardware does."""
    import json
    import subprocess
    import tempfile

    from benchmarks.generators import Dataset
    from benchmarks.workloads import WORKLOADS

    dataset = Dataset.from_json(spec["dataset"])
    workload = WORKLOADS[spec["workload"]]
    binary = build_prototype()
    (path,) = dataset.files()
    setup_s = time.perf_counter() - setup_start
    with tempfile.TemporaryDirectory(prefix="spaseq-proto-", dir=spec.get("scratch_dir")) as tmp:
        command = [str(binary), "--query", str(workload.prototype), "--window-seconds",
                   str(round(spec["window_minutes"] * 60)), "--out", str(Path(tmp) / "out.txt"), path]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        elapsed = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    counts = json.loads(done.stdout)
    result = result_of(counts["events"], dataset.triples, counts["matches"], elapsed,
                     usage.ru_utime + usage.ru_stime, setup_s, None, False)
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    return result


RUNNERS = {
    "prototype": _run_prototype,
    "cli": _run_cli,
    "engine": _run_engine,
    "reference": _run_reference,
    "baseline": _run_baseline,
    "ceiling": _run_ceiling,
    "pyflink": _run_pyflink,
    "write_floor": _run_write_floor,
}


def measure(spec: dict) -> dict:
    """Run the measurement ``spec`` in this process; errors become a result with status "error"."""
    setup_start = time.perf_counter()
    try:
        result = RUNNERS[spec["kind"]](spec, setup_start)
    except Exception as err:
        tail = traceback.format_exc().strip().splitlines()[-3:]
        result = {"status": "error", "reason": f"{type(err).__name__}: {err}", "traceback": tail}
    result.setdefault("peak_rss_mb", peak_rss_mb())  # a peer with a JVM reports its own total
    return result


def child_main(spec: dict, conn: Connection) -> None:
    """Entry point of a measurement process: measure, send the result, exit."""
    try:
        conn.send(measure(spec))
    finally:
        conn.close()
