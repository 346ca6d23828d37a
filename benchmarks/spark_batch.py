"""``spaseq run --spark`` in batch against ``spaseq run``: whole processes, the same input, in
the same run, per workload (one the planner splits by key, one by time)::

    .venv/bin/python -m benchmarks.spark_batch            # 10^6 events
    .venv/bin/python -m benchmarks.spark_batch --quick    # 10^5 events

Systems: ``spaseq run`` (no Spark), ``--spark local[1]``, ``--spark local[2]`` and a Spark
standalone cluster on this machine (``benchmarks.spark_cluster``) with one worker and with two,
each worker one core (``--cores 1``, pinned to a CPU of its own with ``taskset`` when there is
one per worker). Each row is the wall time of the whole command, start to exit; its start-up
is the same command over a tiny input (``startup_s``), and ``work_events_per_s`` the rate
without it. Every Spark run's jsonl output is compared byte for byte with the plain run's (a
mismatch is printed loudly and makes the exit status 1). JSON and a chart go to
``benchmarks/results/spark-batch-<timestamp>.{json,png}``; a table is printed."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.generators import PROV_GENERATED_AT, datetime_literal, integer, iri
from benchmarks.measure import compile_bytecode, warm_query_cache
from benchmarks.spark_cluster import cluster_env, start_cluster

HERE = Path(__file__).resolve().parent
SCHEMA = "spaseq-spark-batch/1"

#: The generated stream: readings of many sensors, several a second, on one stream IRI.
STREAM = "http://example/sensors"
SENSORS = 200
SITES = 20
EVENTS_PER_SECOND = 10
#: replay files per input: time ranges of the stream (as rolled log files), so that Spark reads
#: them on several executors (each file is read whole on one)
PARTS = 8
#: events of the tiny input whose run is a command's start-up
TINY_EVENTS = 200


@dataclass(frozen=True)
class Workload:
    """A benchmark query over the sensor stream and how the planner must split it."""

    name: str
    query_file: str
    split: str
    note: str


WORKLOADS = {w.name: w for w in (
    Workload("sensor-rise", "sensor_rise.rq", "key", "SEQ(A; B): a reading above 90, then a higher one of the "
             "same sensor within 5 min"),
    Workload("site-pair", "site_pair.rq", "time", "SEQ(A, B): two readings above 90 in a row at the same site "
             "within 1 min"),
)}

#: (label, --spark master or None for the plain run, workers of the standalone cluster or 0)
SYSTEMS = (("spaseq run", None, 0), ("local[1]", "local[1]", 0), ("local[2]", "local[2]", 0),
           ("standalone 1 worker", "cluster", 1), ("standalone 2 workers", "cluster", 2))


@dataclass(frozen=True)
class Input:
    """A generated sensor stream: its replay files (in time order), events and bytes."""

    paths: tuple[str, ...]
    events: int
    triples: int
    bytes: int


def sensor_input(events: int, parts: int, data_dir: Path, seed: int = 42) -> Input:
    """Write (or reuse) ``events`` sensor readings as ``parts`` N-Quads files of consecutive
    time ranges: ``<sensor> pred:value n ; pred:site <site>`` in one named graph per event,
    ``EVENTS_PER_SECOND`` events a second (stamped to the second: ties), values uniform in
    0..100, each sensor at a fixed site."""
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    stem = f"sensors-{events}-p{parts}-s{seed}"
    manifest = data_dir / f"{stem}.json"
    if manifest.exists():
        found = Input(**{k: tuple(v) if k == "paths" else v for k, v in json.loads(manifest.read_text()).items()})
        if all(os.path.exists(p) for p in found.paths):
            return found
    rng = random.Random(f"sensors:{seed}")
    value, site = iri("http://example/value"), iri("http://example/site")
    stamp = f"<{PROV_GENERATED_AT}>"
    sensors = [iri(f"http://example/sensor/{k}") for k in range(SENSORS)]
    sites = [iri(f"http://example/site/{k % SITES}") for k in range(SENSORS)]
    # part boundaries on whole seconds, so that the events of one second are in one file
    seconds = -(-events // EVENTS_PER_SECOND)
    bounds = [min(events, (seconds * k // parts) * EVENTS_PER_SECOND) for k in range(parts + 1)]
    paths, triples = [], 0
    for k in range(parts):
        path = data_dir / f"{stem}-part{k:03d}.nq"
        lines = []
        when, literal = -1, ""
        for i in range(bounds[k], bounds[k + 1]):
            if i // EVENTS_PER_SECOND != when:
                when = i // EVENTS_PER_SECOND
                literal = datetime_literal(when)
            s = rng.randrange(SENSORS)
            g = iri(f"http://example/event/{i}")
            lines.append(f"{g} {stamp} {literal} .\n{sensors[s]} {value} {integer(rng.randint(0, 100))} {g} .\n"
                         f"{sensors[s]} {site} {sites[s]} {g} .\n")
            triples += 2
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(str(path))
    found = Input(tuple(paths), events, triples, sum(os.path.getsize(p) for p in paths))
    manifest.write_text(json.dumps(found.__dict__, indent=2) + "\n", encoding="utf-8")
    return found


def run_command(query: Path, data: Input, out: Path, spark: str | None, conf: list[str]) -> list[str]:
    """``spaseq run QUERY --stream S1=PART ... --format jsonl --output OUT [--spark MASTER
    --spark-conf K=V ...]``."""
    args = [sys.executable, "-m", "spaseq.engine.cli", "run", str(query)]
    for path in data.paths:
        args += ["--stream", f"{STREAM}={path}"]
    args += ["--format", "jsonl", "--output", str(out)]
    if spark is not None:
        args += ["--spark", spark]
        for pair in conf:
            args += ["--spark-conf", pair]
    return args


def timed(command: list[str], env: dict[str, str], timeout_s: float) -> tuple[float, str | None]:
    """The wall time of ``command`` and None, or its time and why it failed."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, f"killed after {timeout_s:.0f} s"
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        return elapsed, f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"
    return elapsed, None


def digest(path: Path) -> str:
    """The SHA-256 of a file, read in large blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def count_lines(path: Path) -> int:
    """Lines of a jsonl output: its matches."""
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


#: the phases of a ``spaseq run --spark`` job, named by where its Spark jobs are started
PHASES = (("events.py", "read and number"), ("matching.py", "time cuts"), ("results.py", "match and merge"))


def stage_times(log_dir: Path) -> dict:
    """Where a Spark run's time went, from its event log (``spark.eventLog.*``): from the
    application's start to its executors' registration, the wall time of its jobs by phase
    (reading and numbering the events, caching them as a DataFrame, the time cuts, matching
    and merging), the driver's time between jobs, and each executor's task time (run and the
    JVM's share of its CPU: the rest of a task's run time is Python's)."""
    events = [json.loads(line) for path in sorted(log_dir.rglob("*")) if path.is_file()
              and not path.name.startswith((".", "appstatus")) for line in path.open(encoding="utf-8")]
    start = next(e["Timestamp"] for e in events if e["Event"] == "SparkListenerApplicationStart")
    end = next((e["Timestamp"] for e in events if e["Event"] == "SparkListenerApplicationEnd"), start)
    added = [e["Timestamp"] for e in events if e["Event"] == "SparkListenerExecutorAdded"]
    jobs: dict[int, list] = {}
    first_sql = None  # read_events' count: the first SQL execution; approxQuantile's has no call site either
    for e in events:
        if e["Event"] == "SparkListenerJobStart":
            properties = e.get("Properties", {})
            site, sql = properties.get("callSite.short", ""), properties.get("spark.sql.execution.id")
            first_sql = sql if first_sql is None and sql is not None and not site else first_sql
            phase = next((name for file, name in PHASES if file in site),
                         "events to a cached DataFrame" if sql == first_sql else "time cuts")
            jobs[e["Job ID"]] = [phase, e["Submission Time"], None]
        elif e["Event"] == "SparkListenerJobEnd":
            jobs[e["Job ID"]][2] = e["Completion Time"]
    phases: dict[str, float] = {}
    for phase, begun, ended in jobs.values():
        phases[phase] = phases.get(phase, 0.0) + ((ended or begun) - begun) / 1000
    spans = sorted((b, e or b) for _, b, e in jobs.values())
    busy, reach = 0.0, start
    for b, e in spans:  # the union of the jobs' spans (jobs may overlap)
        busy += max(0, e - max(b, reach)) / 1000
        reach = max(reach, e)
    executors: dict[str, dict[str, float]] = {}
    for e in events:
        if e["Event"] == "SparkListenerTaskEnd" and e.get("Task Metrics"):
            mine = executors.setdefault(e["Task Info"]["Executor ID"], {"tasks": 0, "run_s": 0.0, "jvm_cpu_s": 0.0})
            mine["tasks"] += 1
            mine["run_s"] += e["Task Metrics"]["Executor Run Time"] / 1000
            mine["jvm_cpu_s"] += e["Task Metrics"]["Executor CPU Time"] / 1e9
    first_job = spans[0][0] if spans else end
    return {"app_s": round((end - start) / 1000, 2),
            "to_executors_s": round((max(added) - start) / 1000, 2) if added else None,
            "to_first_job_s": round((first_job - start) / 1000, 2),
            "jobs_s": {k: round(v, 2) for k, v in phases.items()},
            "driver_between_jobs_s": round((end - first_job) / 1000 - busy, 2),
            "executors": {k: {m: round(v, 2) for m, v in x.items()} for k, x in sorted(executors.items())}}


class Bench:
    """The state of one benchmark run: inputs, queries, the plain runs' outputs, the rows."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.env = warm_env(work, args.workloads)
        self.full = sensor_input(args.events, PARTS, Path(args.data_dir))
        self.tiny = sensor_input(TINY_EVENTS, 2, Path(args.data_dir))
        self.expected: dict[tuple[str, str], tuple[str, int]] = {}  # (workload, input) -> (sha256, lines)
        self.rows: list[dict] = []

    def measure(self, workload: str, label: str, spark: str | None) -> dict:
        """Start-up (tiny input) and the full run(s) of one system on one workload, checked
        against the plain run's output."""
        query = self.work / "queries" / WORKLOADS[workload].query_file
        row: dict = {"workload": workload, "split": WORKLOADS[workload].split, "system": label,
                     "master": spark, "events": self.full.events, "status": "ok"}
        for name, data in (("tiny", self.tiny), ("full", self.full)):
            times = []
            for _ in range(1 if name == "tiny" else self.args.repeat):
                slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{workload}-{label}-{name}-{len(times)}")
                out = self.work / f"{slug}.jsonl"
                _progress(f"{workload} / {label} / {name} input ({data.events:,} events)")
                conf = list(self.args.spark_conf)
                log_dir = self.work / "event-logs" / slug  # no brackets: Hadoop reads them as a glob
                if spark is not None and name == "full" and self.args.stage_times:
                    log_dir.mkdir(parents=True)
                    conf += ["spark.eventLog.enabled=true", f"spark.eventLog.dir=file://{log_dir}",
                             "spark.eventLog.compress=false"]
                elapsed, error = timed(run_command(query, data, out, spark, conf), self.env, self.args.timeout)
                if error is not None:
                    row.update(status="error", reason=f"{name} input: {error}")
                    return self._add(row)
                times.append(elapsed)
                if log_dir.is_dir():
                    row.setdefault("stage_times", []).append({"elapsed_s": round(elapsed, 2), **stage_times(log_dir)})
                found = (digest(out), count_lines(out))
                out.unlink()
                if spark is None:  # the plain run, first: what every Spark run must write
                    self.expected.setdefault((workload, name), found)
                expected = self.expected.get((workload, name))
                if expected is None:
                    row.update(status="unchecked", reason="spaseq run failed: nothing to compare with")
                    return self._add(row)
                if found != expected:
                    row.update(status="MISMATCH", reason=f"{name} input: {found[1]} lines, sha256 {found[0][:12]}; "
                                                         f"spaseq run wrote {expected[1]} lines, {expected[0][:12]}")
                    _progress(f"*** MISMATCH: {workload} / {label}: {row['reason']} ***")
                    return self._add(row)
                row["matches" if name == "full" else "tiny_matches"] = found[1]
            if name == "tiny":
                row["startup_s"] = round(times[0], 3)
            else:
                row["elapsed_s"] = round(statistics.median(times), 3)
                row["repeats_s"] = [round(t, 3) for t in times]
        row["same_bytes"] = True
        row["events_per_s"] = round(self.full.events / row["elapsed_s"])
        work = row["elapsed_s"] - row["startup_s"]
        row["work_events_per_s"] = round(self.full.events / work) if work > 0 else None
        return self._add(row)

    def _add(self, row: dict) -> dict:
        self.rows.append(row)
        print(f"  {_table_line(row)}", file=sys.stderr, flush=True)
        return row


def warm_env(work: Path, workloads: list[str]) -> dict[str, str]:
    """The runs' environment: the cluster's (Spark on loopback, Python workers running this
    interpreter), spaseq compiled to bytecode and the queries checked once (as a user's repeated
    run finds them), so that no run pays for either."""
    compile_bytecode()
    (work / "queries").mkdir(parents=True, exist_ok=True)
    env = cluster_env({"PYTHONHASHSEED": "0"})
    for name in workloads:
        query = work / "queries" / WORKLOADS[name].query_file
        shutil.copy(HERE / "queries" / WORKLOADS[name].query_file, query)
        env = warm_query_cache(sys.executable, query, work / "query-cache", env, check=True)
    return env


def add_ratios(rows: list[dict]) -> dict[str, dict]:
    """Per workload: each Spark row's time per event after start-up over the plain run's
    (``per_event_vs_plain``), and the scaling efficiency of two cores over one, locally and on
    the cluster (rate with 2 / (2 x rate with 1), whole and after start-up)."""
    out: dict[str, dict] = {}
    for workload in dict.fromkeys(r["workload"] for r in rows):
        mine = {r["system"]: r for r in rows if r["workload"] == workload and r["status"] == "ok"}
        plain = mine.get("spaseq run")
        if plain is not None:
            plain_work = plain["elapsed_s"] - plain["startup_s"]
            for r in mine.values():
                work = r["elapsed_s"] - r["startup_s"]
                if r is not plain and plain_work > 0 and work > 0:  # at a few events, noise can exceed the work
                    r["per_event_vs_plain"] = round(work / plain_work, 2)
        scaling = {}
        for name, one, two in (("local", "local[1]", "local[2]"),
                               ("standalone", "standalone 1 worker", "standalone 2 workers")):
            if one in mine and two in mine:
                scaling[name] = {key: _efficiency(mine[one].get(key), mine[two].get(key))
                                 for key in ("events_per_s", "work_events_per_s")}
        out[workload] = scaling
    return out


def _efficiency(one: float | None, two: float | None) -> float | None:
    return round(two / (2 * one), 2) if one and two else None


def _progress(message: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


COLUMNS = ("workload", "split", "system", "matches", "wall s", "start-up s", "ev/s", "ev/s after start-up",
           "x plain per event", "same bytes")


def _table_line(r: dict) -> str:
    return " | ".join(_cells(r))


def _cells(r: dict) -> tuple[str, ...]:
    if r["status"] != "ok":
        return (r["workload"], r["split"], r["system"], "", "", "", "", "", "", f"{r['status']}: {r.get('reason')}")
    work = r.get("work_events_per_s")
    ratio = r.get("per_event_vs_plain")
    return (r["workload"], r["split"], r["system"], f"{r['matches']:,}", f"{r['elapsed_s']:.1f}",
            f"{r['startup_s']:.1f}", f"{r['events_per_s']:,}", f"{work:,}" if work else "-",
            f"{ratio:.2f}" if ratio is not None else "-", "yes")


def format_table(rows: list[dict], scaling: dict[str, dict]) -> str:
    """The rows as a Markdown table, then the scaling efficiencies per workload."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    for workload, found in scaling.items():
        for name, eff in found.items():
            lines.append(f"\n{workload}: scaling efficiency, {name} (rate with 2 / (2 x rate with 1)): "
                         f"{eff['events_per_s']} whole, {eff['work_events_per_s']} after start-up")
    return "\n".join(lines)


def format_stage_table(rows: list[dict]) -> str:
    """Where each Spark run's time went (``--stage-times``), in seconds of its first full run."""
    names = ["read and number", "events to a cached DataFrame", "time cuts", "match and merge"]
    head = ["workload", "system", "wall", "outside the app", "executors up", "first job", *names,
            "driver between jobs", "task run per executor (of which JVM CPU)"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        if not r.get("stage_times"):
            continue
        st = r["stage_times"][0]
        per = ", ".join(f"{k}: {x['run_s']:.1f} ({x['jvm_cpu_s']:.1f})" for k, x in st["executors"].items())
        lines.append("| " + " | ".join([
            r["workload"], r["system"], f"{st['elapsed_s']:.1f}", f"{st['elapsed_s'] - st['app_s']:.1f}",
            f"{st['to_executors_s']:.1f}" if st["to_executors_s"] is not None else "-", f"{st['to_first_job_s']:.1f}",
            *(f"{st['jobs_s'].get(n, 0):.1f}" for n in names), f"{st['driver_between_jobs_s']:.1f}", per]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure every system on every workload, write the JSON and the chart, print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10^5 events instead of 10^6")
    p.add_argument("--events", type=int, help="events of the input (default 10^6, --quick 10^5)")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--systems", default=",".join(label for label, _, _ in SYSTEMS),
                   help="a comma-separated subset of: " + ", ".join(label for label, _, _ in SYSTEMS))
    p.add_argument("--repeat", type=int, default=1, help="full runs per system (the median is kept)")
    p.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting for every Spark run; repeatable")
    p.add_argument("--worker-memory", default="4g", help="memory of each cluster worker (its executors')")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds before a run is killed")
    p.add_argument("--data-dir", default=str(HERE / "data"))
    p.add_argument("--output-dir", default=str(HERE / "results"))
    p.add_argument("--no-chart", action="store_true")
    p.add_argument("--stage-times", action="store_true",
                   help="record each Spark run's event log and say where its time went (JSON and a second table)")
    args = p.parse_args(argv)
    args.events = args.events or (100_000 if args.quick else 1_000_000)
    args.workloads = args.workloads.split(",")
    systems = [s for s in SYSTEMS if s[0] in args.systems.split(",")]
    if systems[0][1] is not None:
        systems.insert(0, SYSTEMS[0])  # every Spark run is checked against the plain run's output
    pin = shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    load_before = os.getloadavg()  # the machine may be shared: the JSON says how busy it was
    clusters: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="spaseq-spark-batch-") as tmp:
        bench = Bench(args, Path(tmp))
        for label, master, workers in systems:
            if master != "cluster":
                for workload in args.workloads:
                    bench.measure(workload, label, master)
                continue
            _progress(f"starting a cluster of {workers} worker(s), 1 core each{', pinned' if pin else ''}")
            start = time.perf_counter()
            with start_cluster(workers, Path(tmp) / f"cluster-{workers}", memory=args.worker_memory,
                               pin=pin) as cluster:
                clusters[workers] = round(time.perf_counter() - start, 2)
                for workload in args.workloads:
                    bench.measure(workload, label, cluster.master_url)
    scaling = add_ratios(bench.rows)
    report = {
        "schema": SCHEMA, "mode": "quick" if args.quick else "default", "started": stamp,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_average_before": load_before, "load_average_after": os.getloadavg()},
        "config": {"events": args.events, "parts": PARTS, "tiny_events": TINY_EVENTS, "sensors": SENSORS,
                   "sites": SITES, "events_per_second": EVENTS_PER_SECOND, "repeat": args.repeat,
                   "spark_conf": args.spark_conf, "stage_times": args.stage_times, "worker_memory": args.worker_memory, "workers_pinned": pin,
                   "cluster_start_s": clusters},
        "input": {"events": bench.full.events, "triples": bench.full.triples, "bytes": bench.full.bytes,
                  "files": len(bench.full.paths)},
        "workloads": {name: w.__dict__ for name, w in WORKLOADS.items() if name in args.workloads},
        "runs": bench.rows, "scaling_efficiency": scaling,
    }
    out_dir = Path(args.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"spark-batch-{stamp}.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(format_table(bench.rows, scaling))
    if args.stage_times:
        print("\nWhere the time went (seconds; Spark's event logs):\n")
        print(format_stage_table(bench.rows))
    print(f"\nJSON: {path}")
    if not args.no_chart:
        from benchmarks.chart import write_spark_batch_chart

        print(write_spark_batch_chart(report, out_dir / f"spark-batch-{stamp}.png"))
    bad = [r for r in bench.rows if r["status"] != "ok"]
    for r in bad:
        print(f"*** {r['status']}: {r['workload']} / {r['system']}: {r.get('reason')} ***", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
