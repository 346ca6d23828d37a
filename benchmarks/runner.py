"""The benchmark runner: plan workload x window x size, measure every system, report.

Each measurement runs in a fresh ``multiprocessing`` spawn process (so peak RSS is its own)
with a time budget and a hard timeout. Per (workload, window, size) it measures spaseq as a
whole ``spaseq run --format jsonl`` process writing to a file (when the engine API does not
exist, the reference evaluator on a small prefix, labelled "reference"), the engine API in
process (``api``), the engine with each optimisation off (in process), the window-store
SPARQL baseline and the parse-only ceiling, then writes ``<out>/<timestamp>.json``, a chart
``<out>/<timestamp>.png`` if matplotlib is importable, and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import measure
from benchmarks.baselines import BASELINE_EXACT, BASELINE_QUERIES
from benchmarks.generators import DEFAULT_SEED, Dataset, generate
from benchmarks.peers import pyflink_stock
from benchmarks.workloads import WORKLOADS, Workload

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "results"
DEFAULT_DATA = HERE / "data"
SYSTEMS = ("spaseq", "api", "ablations", "reference", "baseline", "ceiling", "pyflink", "floor", "prototype",
           "events", "arrow")
#: the cheaper jsonl forms measured with ``--systems ...,events`` (``spaseq run --events FORM``)
EVENT_FORMS = ("ids", "none")
#: the bulk formats measured with ``--systems ...,arrow`` (``spaseq run --format FORM``)
ARROW_FORMS = ("arrow", "parquet")
#: the row of writing spaseq run's output alone (``--systems ...,floor``)
FLOOR_LABEL = "write floor (output only)"
DEFAULT_SYSTEMS = ("spaseq", "api", "ablations", "baseline", "ceiling", "prototype")
PROTOTYPE_LABEL = "prototype (purpose-built)"
"""The purpose-built matcher of a workload that has one (``benchmarks/prototype``)."""
API_LABEL = "spaseq api (in-process)"
"""The label of the ``api`` rows: the engine API in the measuring process, matches counted by a
callback (the ``spaseq`` rows are whole ``spaseq run --format jsonl`` processes)."""
PYFLINK_PARALLELISM = (1, 2)
"""The PyFlink peer (optional, ``pip install .[bench-peers]``) runs at each of these parallelisms."""
SCHEMA = "spaseq-bench/1"
RUN_KEYS = (
    "workload", "dataset", "window_minutes", "size", "system", "label", "option", "option_value", "status",
    "reason", "events", "triples", "matches", "elapsed_s", "cpu_s", "setup_s", "events_per_s",
    "triples_per_s", "peak_rss_mb", "setup_rss_mb", "capped", "vs_baseline", "vs_ceiling", "vs_prototype",
    "matches_agree",
)


@dataclass(frozen=True)
class Mode:
    """The defaults of one run mode (``--quick``, default, ``--full``)."""

    name: str
    sizes: tuple[int, ...]
    budget_s: float
    baseline_budget_s: float
    baseline_max_events: int
    reference_max_events: int
    reference_timeout_s: float
    all_ablations: bool

    def windows(self, workload: Workload) -> tuple[int, ...]:
        """The windows (minutes) this mode measures for a workload."""
        if self.name == "quick":
            return (workload.quick_window,)
        if self.name == "full":
            return workload.full_windows
        return workload.windows


MODES: dict[str, Mode] = {
    "quick": Mode("quick", (10_000,), 0.6, 2.0, 10_000, 1_000, 60.0, False),
    "default": Mode("default", (100_000,), 2.0, 6.0, 10_000, 5_000, 180.0, False),
    "full": Mode("full", (10_000, 100_000, 1_000_000), 300.0, 60.0, 10_000, 10_000, 900.0, True),
}


@dataclass
class Config:
    """Everything a run needs, resolved from the command line."""

    mode: Mode
    workloads: list[str]
    sizes: list[int]
    windows: list[int] | None
    systems: list[str]
    budget_s: float
    baseline_budget_s: float
    baseline_max_events: int
    reference_max_events: int
    reference_timeout_s: float
    all_ablations: bool
    output_dir: Path
    data_dir: Path
    seed: int
    chart: bool
    subprocess: bool = True
    repeat: int = 1
    timestamp: str = field(default_factory=lambda: datetime.now().strftime("%Y%m%dT%H%M%S"))

    def windows_for(self, workload: Workload) -> list[int]:
        """The windows (minutes) measured for one workload."""
        return list(self.windows) if self.windows else list(self.mode.windows(workload))


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m benchmarks`` command line."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmark spaseq against a window-store SPARQL baseline and a parse-only ceiling.",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="about a minute: 10^4 events, one window each")
    size.add_argument("--full", action="store_true", help="10^4..10^6 events, all windows, all ablations (hours)")
    p.add_argument("--workloads", help=f"comma-separated subset of: {', '.join(WORKLOADS)}")
    p.add_argument("--sizes", help="comma-separated event counts, e.g. 10000,100000 (10^4..10^6)")
    p.add_argument("--windows", help="comma-separated window sizes in minutes (1..60) for every workload")
    p.add_argument("--systems", help=f"comma-separated subset of: {', '.join(SYSTEMS)} "
                   f"(default: {','.join(DEFAULT_SYSTEMS)}; 'spaseq' is the reference when the engine API is missing; "
                   f"'pyflink' needs {pyflink_stock.INSTALL_HINT}; 'floor', with 'spaseq': writing that "
                   "run's output alone, the speed limit its output sets; 'events': the run with --events "
                   "ids and none; 'arrow': the run with --format arrow and parquet)")
    p.add_argument("--budget", type=float, help="seconds per engine measurement before it stops early")
    p.add_argument("--baseline-budget", type=float, help="seconds per baseline measurement")
    p.add_argument("--baseline-max-events", type=int, help="events the baseline is given at most (default 10^4)")
    p.add_argument("--reference-max-events", type=int, help="events the reference evaluator is given")
    p.add_argument("--repeat", type=int, default=1,
                   help="measure each system N times and keep the run with the median events/s (%(default)s)")
    p.add_argument("--all-ablations", action="store_true",
                   help="also turn off optimisations that cannot apply to a workload's query")
    p.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help="where results go (%(default)s)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="generated inputs cache (%(default)s)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed (%(default)s)")
    p.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    p.add_argument("--in-process", action="store_true",
                   help="measure in this process (faster start, but peak RSS is shared: for tests)")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    return p


def _csv(text: str | None, convert: type = str) -> list:
    """Split a comma-separated option value."""
    return [convert(x.strip()) for x in text.split(",") if x.strip()] if text else []


def resolve(args: argparse.Namespace) -> Config:
    """Turn parsed arguments into a Config (mode defaults, overrides, validation)."""
    mode = MODES["quick" if args.quick else "full" if args.full else "default"]
    workloads = _csv(args.workloads) or list(WORKLOADS)
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown workload(s): {', '.join(unknown)}; expected: {', '.join(WORKLOADS)}")
    systems = _csv(args.systems) or list(DEFAULT_SYSTEMS)
    bad = [s for s in systems if s not in SYSTEMS]
    if bad:
        raise SystemExit(f"unknown system(s): {', '.join(bad)}; expected: {', '.join(SYSTEMS)}")
    sizes = _csv(args.sizes, int) or list(mode.sizes)
    if any(s < 1 for s in sizes):
        raise SystemExit("sizes must be positive")
    windows = _csv(args.windows, int) or None
    return Config(
        mode=mode,
        workloads=workloads,
        sizes=sizes,
        windows=windows,
        systems=systems,
        budget_s=args.budget if args.budget is not None else mode.budget_s,
        baseline_budget_s=args.baseline_budget if args.baseline_budget is not None else mode.baseline_budget_s,
        baseline_max_events=args.baseline_max_events or mode.baseline_max_events,
        reference_max_events=args.reference_max_events or mode.reference_max_events,
        reference_timeout_s=mode.reference_timeout_s,
        all_ablations=args.all_ablations or mode.all_ablations,
        output_dir=args.output_dir,
        data_dir=args.data_dir,
        seed=args.seed,
        chart=not args.no_chart,
        subprocess=not args.in_process,
        repeat=max(1, args.repeat),
    )


def machine_info(probe: measure.EngineProbe) -> dict[str, object]:
    """CPU count, Python, pyoxigraph and platform; whether the engine API and matplotlib exist."""
    import pyoxigraph

    try:
        import matplotlib  # noqa: F401

        has_matplotlib = True
    except ImportError:
        has_matplotlib = False
    return {
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "pyoxigraph": getattr(pyoxigraph, "__version__", "unknown"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "engine_api": probe.available,
        "matplotlib": has_matplotlib,
    }


def _lazy_chain_applies(query: object) -> bool:
    """The engine's own decision (``lazychain.lazy_prefix_length``), not a re-derivation."""
    try:
        from spaseq.engine.api import Engine, EngineOptions
    except ImportError:  # no engine API: nothing to measure anyway
        return False
    engine = Engine(options=EngineOptions(lazy_chain=True))
    return engine.register(query, keep=False).plan.lazy_chain > 0


def applicable_options(workload: Workload) -> dict[str, str | None]:
    """Per optimisation: None if it can matter for the workload's query, else why it cannot."""
    from spaseq.engine.algebra import operators as A
    from spaseq.engine.language.query import parse_query

    query = parse_query(workload.query_text(workload.quick_window))
    kinds: set[str] = set()

    def walk(op: object) -> None:
        if isinstance(op, A.Conjunction):
            kinds.add("conjunction")
        elif isinstance(op, A.Disjunction):
            kinds.add("disjunction")
        for child in getattr(op, "operands", ()):
            walk(child)

    for atom in query.seq.atoms:
        walk(atom.operand)
    out: dict[str, str | None] = {}
    if "conjunction" not in kinds:
        out["lazy_conjunction"] = "the query has no conjunction"
    if "disjunction" not in kinds:
        out["cost_ordered_disjunction"] = "the query has no disjunction"
    if len(set(query.streams.values())) < 2:
        out["index_streams"] = "the query reads one stream"
    if not _lazy_chain_applies(query):
        out["lazy_chain"] = "the query has no lazily evaluable 'X : Y ...' prefix"
    if workload.intervals:
        out["intervals"] = "the query reads events that last: always planned for them"
    return out


def run_spec(spec: dict, timeout_s: float, subprocess: bool = True) -> dict:
    """Run one measurement, in a fresh spawn process unless ``subprocess`` is False."""
    if not subprocess:
        return measure.measure(spec)
    ctx = multiprocessing.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=measure.child_main, args=(spec, sender), daemon=True)
    proc.start()
    sender.close()
    try:
        if receiver.poll(timeout_s):
            try:
                return receiver.recv()
            except EOFError:
                proc.join(5)
                return {"status": "error", "reason": f"measurement process died (exit code {proc.exitcode})"}
        return {"status": "timeout", "reason": f"killed after {timeout_s:.0f} s"}
    finally:
        receiver.close()
        proc.join(2)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()


def _row(workload: Workload, window: int, size: int, system: str, label: str, result: dict,
         option: str | None = None, option_value: bool | None = None) -> dict:
    """A result row with every RUN_KEYS key."""
    row = dict.fromkeys(RUN_KEYS)
    row.update({k: v for k, v in result.items() if k not in ("traceback",)})
    row.update({
        "workload": workload.name, "dataset": workload.dataset, "window_minutes": window,
        "size": size, "system": system, "label": label, "option": option, "option_value": option_value,
    })
    if row["capped"] is None:
        row["capped"] = False
    if "traceback" in result:
        row["traceback"] = result["traceback"]
    return row


def _na(reason: str) -> dict:
    """A result for a measurement that cannot be made."""
    return {"status": "n/a", "reason": reason}


def _progress(message: str) -> None:
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def run(config: Config) -> tuple[Path, dict]:
    """Measure everything the config asks for; write the JSON (and chart); return its path and content."""
    measure.compile_bytecode()
    probe = measure.probe_engine()
    started = datetime.now(timezone.utc)
    rows: list[dict] = []
    datasets: dict[tuple[str, int], Dataset] = {}
    ceiling_cache: dict[tuple[str, int], dict] = {}
    baseline_cache: dict[tuple, tuple[str, dict]] = {}
    applicability = {name: applicable_options(WORKLOADS[name]) for name in config.workloads}
    plan = [(WORKLOADS[w], window, size) for size in config.sizes for w in config.workloads
            for window in config.windows_for(WORKLOADS[w])]
    engine_label = "spaseq" if probe.available else "reference"
    if "spaseq" in config.systems and not probe.available:
        _progress(f"note: {probe.reason}; measuring the reference evaluator on at most "
                  f"{config.reference_max_events} events instead (labelled 'reference')")
    interrupted = False
    try:
        for index, (workload, window, size) in enumerate(plan, 1):
            key = (workload.dataset, size)
            if key not in datasets:
                t0 = time.perf_counter()
                datasets[key] = generate(workload.dataset, size, config.data_dir, seed=config.seed)
                _progress(f"dataset {workload.dataset} n={size}: {datasets[key].events} events "
                          f"({time.perf_counter() - t0:.1f} s)")
            dataset = datasets[key]
            group = _measure_group(config, probe, engine_label, workload, window, size, dataset,
                                   applicability[workload.name], ceiling_cache, baseline_cache,
                                   f"[{index}/{len(plan)}]")
            _add_ratios(group)
            rows.extend(group)
    except KeyboardInterrupt:
        interrupted = True
        _progress("interrupted: writing what was measured")
    report = {
        "schema": SCHEMA,
        "timestamp": config.timestamp,
        "started": started.isoformat(),
        "finished": datetime.now(timezone.utc).isoformat(),
        "interrupted": interrupted,
        "mode": config.mode.name,
        "machine": machine_info(probe),
        "engine": {"label": engine_label, "api": probe.available, "reason": probe.reason,
                   "options": {name: asdict(info) for name, info in probe.options.items()}},
        "config": _config_json(config),
        "workloads": {
            name: {"dataset": WORKLOADS[name].dataset, "query": f"benchmarks/queries/{WORKLOADS[name].query_file}",
                   "note": WORKLOADS[name].note, "baseline_exact": name in BASELINE_EXACT,
                   "windows": config.windows_for(WORKLOADS[name])}
            for name in config.workloads
        },
        "datasets": [d.to_json() for d in datasets.values()],
        "runs": rows,
    }
    config.output_dir.mkdir(parents=True, exist_ok=True)
    path = config.output_dir / f"{config.timestamp}.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return path, report


def _config_json(config: Config) -> dict[str, object]:
    """The resolved configuration, JSON-ready."""
    return {
        "mode": config.mode.name, "workloads": config.workloads, "sizes": config.sizes,
        "windows": config.windows, "systems": config.systems, "budget_s": config.budget_s,
        "baseline_budget_s": config.baseline_budget_s, "baseline_max_events": config.baseline_max_events,
        "reference_max_events": config.reference_max_events, "reference_timeout_s": config.reference_timeout_s,
        "all_ablations": config.all_ablations, "seed": config.seed, "subprocess": config.subprocess,
        "repeat": config.repeat,
        "mode_defaults": asdict(config.mode),
    }


def _measure_group(
    config: Config, probe: measure.EngineProbe, engine_label: str, workload: Workload, window: int,
    size: int, dataset: Dataset, applicable: dict[str, str | None],
    ceiling_cache: dict[tuple[str, int], dict], baseline_cache: dict[tuple, tuple[str, dict]], tag: str,
) -> list[dict]:
    """Every system on one (workload, window, size)."""
    rows: list[dict] = []
    base = {"dataset": dataset.to_json(), "workload": workload.name, "window_minutes": window}
    where = f"{tag} {workload.name} w={window}min n={size}"

    def run_one(label: str, spec: dict, timeout: float) -> dict:
        results = []
        for _ in range(config.repeat):
            results.append(run_spec(spec, timeout, config.subprocess))
            if results[-1].get("status") != "ok":
                break
        result = _median(results)
        _progress(f"{where} {label}: {_summary(result)}")
        return result

    if "spaseq" in config.systems:
        if probe.available:  # a whole `spaseq run --format jsonl` process, writing to a file
            spec = {**base, "kind": "cli", "budget_s": config.budget_s}
            result = run_one("spaseq", spec, config.budget_s + 240)
        else:
            spec = {**base, "kind": "reference", "max_events": config.reference_max_events}
            result = run_one("reference", spec, config.reference_timeout_s)
        rows.append(_row(workload, window, size, engine_label, engine_label, result))
        forms = [(engine_label, result)]
        if "events" in config.systems and probe.available:
            for form in EVENT_FORMS:  # the same run writing less per match (--events)
                label = f"spaseq --events {form}"
                spec = {**base, "kind": "cli", "budget_s": config.budget_s, "cli_args": ("--events", form)}
                cheaper = run_one(label, spec, config.budget_s + 240)
                rows.append(_row(workload, window, size, "spaseq", label, cheaper))
                forms.append((label, cheaper))
        if "arrow" in config.systems and probe.available:
            for form in ARROW_FORMS:  # the same run in a bulk format, its floor measured by it
                label = f"spaseq --format {form}"
                spec = {**base, "kind": "cli", "budget_s": config.budget_s, "cli_args": ("--format", form)}
                bulk = run_one(label, spec, config.budget_s + 240)
                rows.append(_row(workload, window, size, "spaseq", label, bulk))
                if "floor" in config.systems and bulk.get("floor_s"):
                    floor = measure.result_of(bulk["events"], bulk["triples"], bulk["matches"], bulk["floor_s"],
                                    bulk["floor_cpu_s"], 0.0, None, False)
                    rows.append(_row(workload, window, size, "floor", f"{FLOOR_LABEL}, --format {form}",
                                     {**floor, "output_bytes": bulk["output_bytes"]}))
        for label, written in forms:
            if "floor" in config.systems and written.get("output_bytes"):
                # writing the run's output alone, its size as measured (``_run_write_floor``)
                spec = {**base, "kind": "write_floor", "bytes": written["output_bytes"]}
                floor = FLOOR_LABEL if label == engine_label else f"{FLOOR_LABEL}, {label.removeprefix('spaseq ')}"
                rows.append(_row(workload, window, size, "floor", floor, run_one(floor, spec, 600)))
    if "api" in config.systems and probe.available:
        spec = {**base, "kind": "engine", "budget_s": config.budget_s, "max_events": None}
        rows.append(_row(workload, window, size, "api", API_LABEL,
                         run_one(API_LABEL, spec, config.budget_s + 120)))
    if "reference" in config.systems and probe.available:
        spec = {**base, "kind": "reference", "max_events": config.reference_max_events}
        rows.append(_row(workload, window, size, "reference", "reference",
                         run_one("reference", spec, config.reference_timeout_s)))
    if "ablations" in config.systems:
        for option, info in probe.options.items():
            value = info.measured_value
            label = f"spaseq {info.label}{option}"
            problem = info.problem
            if problem is None and not config.all_ablations and applicable.get(option):
                problem = f"not applicable: {applicable[option]}"
            if problem is not None:
                result = _na(problem)
            else:
                spec = {**base, "kind": "engine", "budget_s": config.budget_s, "max_events": None,
                        "option": option, "option_value": value}
                result = run_one(label, spec, config.budget_s + 120)
                if value:
                    result["reason"] = f"{option} is off by default: this run turns it on"
            rows.append(_row(workload, window, size, "ablation", label, result, option,
                             value if problem is None else None))
    if "pyflink" in config.systems:
        rows.extend(_measure_pyflink(config, run_one, base, workload, window, size))
    if "baseline" in config.systems and workload.name not in BASELINE_QUERIES:
        rows.append(_row(workload, window, size, "baseline", "baseline",
                         _na("no SPARQL baseline for timers and events that last")))
    elif "baseline" in config.systems:
        bkey = (workload.dataset, size, window, tuple(sorted(BASELINE_QUERIES[workload.name].items())))
        if bkey in baseline_cache:
            first, result = baseline_cache[bkey]
            result = {**result, "reason": f"same baseline query and data as {first}: measured once"}
        else:
            spec = {**base, "kind": "baseline", "budget_s": config.baseline_budget_s,
                    "max_events": config.baseline_max_events}
            result = run_one("baseline", spec, config.baseline_budget_s + 60)
            baseline_cache[bkey] = (workload.name, result)
        rows.append(_row(workload, window, size, "baseline", "baseline", result))
    if "prototype" in config.systems and workload.prototype is not None:
        spec = {**base, "kind": "prototype"}
        rows.append(_row(workload, window, size, "prototype", PROTOTYPE_LABEL, run_one(PROTOTYPE_LABEL, spec, 600)))
    if "ceiling" in config.systems:
        ckey = (workload.dataset, size)
        if ckey not in ceiling_cache:
            spec = {**base, "kind": "ceiling"}
            ceiling_cache[ckey] = run_one("ceiling", spec, 600)
        rows.append(_row(workload, window, size, "ceiling", "ceiling (parse only)", ceiling_cache[ckey]))
    return rows


def _measure_pyflink(config: Config, run_one: Callable[[str, dict, float], dict], base: dict,
                     workload: Workload, window: int, size: int) -> list[dict]:
    """The PyFlink peer at each parallelism, or one n/a row saying why it cannot run."""
    problem = pyflink_stock.unavailable()
    if workload.name != pyflink_stock.WORKLOAD:
        problem = f"the PyFlink peer implements {pyflink_stock.WORKLOAD} only"
    if problem is not None:
        return [_row(workload, window, size, "pyflink", "pyflink", _na(problem))]
    rows = []
    for parallelism in PYFLINK_PARALLELISM:
        spec = {**base, "kind": "pyflink", "parallelism": parallelism, "max_events": None}
        label = f"pyflink p{parallelism}"
        rows.append(_row(workload, window, size, "pyflink", label, run_one(label, spec, 600 + size / 500)))
    return rows


def _median(results: list[dict]) -> dict:
    """The measurement with the median events/s of repeated ones (the first failure, if any)."""
    failed = [r for r in results if r.get("status") != "ok"]
    if failed:
        return failed[0]
    if len(results) == 1:
        return results[0]
    ordered = sorted(results, key=lambda r: r.get("events_per_s") or 0.0)
    median = dict(ordered[(len(ordered) - 1) // 2])
    median["repeats_events_per_s"] = [r.get("events_per_s") for r in results]
    return median


def _summary(result: dict) -> str:
    """One line about a measurement result, for progress output."""
    if result.get("status") != "ok":
        return f"{result.get('status')}: {result.get('reason', '')}"
    rate = result.get("events_per_s")
    capped = " (capped)" if result.get("capped") else ""
    matches = result.get("matches")
    return (f"{result['events']} events{capped}, {'-' if matches is None else matches} matches, "
            f"{_fmt(rate)} ev/s, {result['elapsed_s']:.2f} s")


def _add_ratios(group: list[dict]) -> None:
    """Throughput ratios of each row to the baseline and to the ceiling of its group."""
    def rate(system: str) -> float | None:
        for r in group:
            if r["system"] == system and r["status"] == "ok" and r["events_per_s"]:
                return r["events_per_s"]
        return None

    baseline, ceiling, prototype = rate("baseline"), rate("ceiling"), rate("prototype")
    proto_row = next((r for r in group if r["system"] == "prototype" and r["status"] == "ok"), None)
    base_row = next((r for r in group if r["system"] == "baseline" and r["status"] == "ok"), None)
    engine_row = next((r for r in group if r["system"] in ("spaseq", "reference") and r["status"] == "ok"), None)
    for r in group:
        exact = r["workload"] in BASELINE_EXACT and r["system"] in ("spaseq", "api", "reference", "ablation")
        if exact and base_row is not None and r["status"] == "ok" and r["events"] == base_row["events"]:
            r["matches_agree"] = r["matches"] == base_row["matches"]
        if r["system"] == "pyflink" and r["status"] == "ok":
            # the peer computes spaseq's answer exactly: compare with whichever ran the same events
            for other in (engine_row, base_row):
                if other is not None and other["events"] == r["events"]:
                    r["matches_agree"] = r["matches"] == other["matches"]
                    r["matches_checked_against"] = other["label"]
                    break
        if (proto_row is not None and r["system"] in ("spaseq", "api", "ablation") and r["status"] == "ok"
                and r["events"] == proto_row["events"]):
            r["matches_agree"] = r["matches"] == proto_row["matches"]
            r["matches_checked_against"] = PROTOTYPE_LABEL
        if r["status"] != "ok" or not r["events_per_s"]:
            continue
        r["vs_baseline"] = r["events_per_s"] / baseline if baseline else None
        r["vs_ceiling"] = r["events_per_s"] / ceiling if ceiling else None
        r["vs_prototype"] = r["events_per_s"] / prototype if prototype else None


def _fmt(value: float | None, digits: int = 3) -> str:
    """A number in a short human form (12.3k, 4.56M); '-' for None."""
    if value is None:
        return "-"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        text = f"{value / scale:.{digits}g}"  # judged once rounded: 999.95M is 1G, not 1e+03M
        if abs(float(text)) >= 1:
            return f"{text}{suffix}"
    return f"{value:.{digits}g}"


def format_table(rows: Sequence[dict]) -> str:
    """The compact results table: one line per measurement, n/a ablations folded per reason."""
    header = ("workload", "win", "size", "system", "events", "matches", "ev/s", "triples/s",
              "MB", "xbase", "xceil", "xproto", "note")
    lines: list[tuple[str, ...]] = [header]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["workload"], r["window_minutes"], r["size"]), []).append(r)
    for (workload, window, size), group in groups.items():
        folded: dict[str, list[str]] = {}
        for r in group:
            if r["system"] == "ablation" and r["status"] == "n/a":
                folded.setdefault(r["reason"] or "", []).append(r["label"].removeprefix("spaseq "))
        for r in group:
            if r["system"] == "ablation" and r["status"] == "n/a":
                continue
            if r["system"] in ("baseline", "ceiling") and folded:
                lines.append(_folded_line(workload, window, size, folded))
                folded = {}
            lines.append(_table_row(workload, window, size, r))
        if folded:
            lines.append(_folded_line(workload, window, size, folded))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = []
    for line in lines:
        cells = [c.rjust(w) if 4 <= i <= 11 else c.ljust(w)
                 for i, (c, w) in enumerate(zip(line[:-1], widths, strict=True))]
        out.append(("  ".join(cells) + ("  " + line[-1] if line[-1] else "")).rstrip())
    return "\n".join(out)


def _folded_line(workload: str, window: int, size: int, folded: dict[str, list[str]]) -> tuple[str, ...]:
    """One table line for the ablations that could not be measured, with why."""
    count = sum(len(labels) for labels in folded.values())
    if len(folded) == 1:
        reason, labels = next(iter(folded.items()))
        note = f"{' '.join(labels)}: {reason}"
    else:
        note = ", ".join(f"{label} ({reason.removeprefix('not applicable: the query ')})"
                         for reason, labels in folded.items() for label in labels)
    return (workload, f"{window}m", str(size), f"n/a ablations ({count})", "", "", "", "", "", "", "", "", note)


def _ratio(value: float | None) -> str:
    """A throughput ratio for the table (three significant digits, no exponent)."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}" if value >= 0.001 else f"{value:.1e}"


def _table_row(workload: str, window: int, size: int, r: dict) -> tuple[str, ...]:
    """One table line."""
    ok = r["status"] == "ok"
    notes = [] if ok else [f"{r['status']}: {r['reason'] or ''}"]
    if ok and r.get("capped"):
        notes.append(f"ran {r['events']} of {size} events")
    if ok and r.get("reason"):
        notes.append(r["reason"])
    against = r.get("matches_checked_against", "baseline")
    if r.get("matches_agree") is True:
        notes.append(f"matches = {against}'s")
    elif r.get("matches_agree") is False:
        notes.append(f"MATCHES DIFFER from the {against}'s")
    note = "; ".join(notes)
    return (
        workload, f"{window}m", str(size), r["label"],
        str(r["events"]) if ok else "-",
        str(r["matches"]) if ok and r["matches"] is not None else "-",
        _fmt(r["events_per_s"]) if ok else "-",
        _fmt(r["triples_per_s"]) if ok else "-",
        f"{r['peak_rss_mb']:.0f}" if r.get("peak_rss_mb") else "-",
        _ratio(r["vs_baseline"]), _ratio(r["vs_ceiling"]), _ratio(r.get("vs_prototype")), note,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks``: run, write the JSON and the chart, print the table."""
    args = build_parser().parse_args(argv)
    if args.list:
        for w in WORKLOADS.values():
            windows = f"{','.join(map(str, w.windows))} (quick {w.quick_window}; full {','.join(map(str, w.full_windows))})"
            print(f"{w.name:15} {w.dataset:11} {w.query_file:19} {windows:33} {w.note}")
        return 0
    config = resolve(args)
    path, report = run(config)
    print(format_table(report["runs"]))
    print(f"\nresults: {path}")
    if config.chart:
        from benchmarks.chart import write_chart

        print(write_chart(report, path.with_suffix(".png")))
    return 0
