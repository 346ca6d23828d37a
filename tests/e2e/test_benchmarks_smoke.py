"""Smoke test of the benchmark suite: generators, baseline, ceiling and runner at tiny sizes.

The baseline is checked for real against the reference evaluator: on the V-shape under
skip-till-any (``SEQ(A: B: C)``) both must find exactly the same matches.
"""

from __future__ import annotations

import csv
import importlib
import json
import shutil
import sys
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `benchmarks` is a top-level package of the repository, not installed
    sys.path.insert(0, str(ROOT))

generators = importlib.import_module("benchmarks.generators")
workloads = importlib.import_module("benchmarks.workloads")
baselines = importlib.import_module("benchmarks.baselines")
measure = importlib.import_module("benchmarks.measure")
runner = importlib.import_module("benchmarks.runner")
live_latency = importlib.import_module("benchmarks.live_latency")
process_instructions = importlib.import_module("benchmarks.process_instructions")

from spaseq.engine.language.query import parse_query  # noqa: E402
from spaseq.engine.reference.evaluator import evaluate  # noqa: E402
from tests.io.replay_oracle import read_replay  # noqa: E402

TINY = 240


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of tiny generated datasets, shared by the tests of this module."""
    return tmp_path_factory.mktemp("bench-data")


@pytest.mark.parametrize("kind", generators.KINDS)
def test_generator_files_replay_as_generated(kind: str, data_dir: Path) -> None:
    """Each dataset is deterministic, readable by read_replay, and streamed in the same order."""
    ds = generators.generate(kind, TINY, data_dir)
    assert ds.events == TINY and ds.triples > TINY
    again = generators.generate(kind, TINY, data_dir / "again")
    assert [Path(p).read_bytes() for p in ds.files()] == [Path(p).read_bytes() for p in again.files()]
    replayed = []
    for stream, path in ds.streams.items():
        result = read_replay(path, stream, first_seq=len(replayed))
        assert result.error is None, result.error
        replayed += result.events
    replayed.sort(key=lambda e: e.sort_key())
    streamed = list(workloads.iter_events(ds))
    assert [(e.stream, e.time, e.name, e.triples) for e in streamed] == [
        (e.stream, e.time, e.name, e.triples) for e in replayed
    ]
    assert sum(len(e.triples) for e in streamed) == ds.triples
    assert (ds.kb is not None) == (kind in ("creditcard", "smartgrid"))
    if ds.kb is not None:
        kb = workloads.load_kb(ds)
        assert kb is not None and len(kb) == ds.kb_triples
    # event triples + one timestamp each (a start and an end for each event that lasts)
    assert baselines.parse_ceiling(ds) == ds.triples + ds.events + ds.extra.get("lasting", 0)
    assert (ds.extra.get("lasting", 0) > 0) == (kind == "sensors")


def test_every_workload_query_parses_at_each_window() -> None:
    """The benchmark queries are well-formed, warning-free, and take the window they are given."""
    for w in workloads.WORKLOADS.values():
        for minutes in (1, 60):
            query = parse_query(w.query_text(minutes))
            assert query.window.amount == minutes * 60, w.name
            assert not query.warnings, (w.name, query.warnings)


def test_baseline_finds_the_reference_matches_of_vshape_any(data_dir: Path) -> None:
    """The window-store baseline equals the reference evaluator on SEQ(A: B: C), match for match."""
    ds = generators.generate("stock", TINY, data_dir)
    events = list(workloads.iter_events(ds))
    query = parse_query(workloads.WORKLOADS["vshape-any"].query_text(1))
    reference = evaluate(query, events)
    assert len(reference) > 50  # the check must have something to check
    baseline = baselines.WindowStoreBaseline("vshape-any", 60.0, keep_matches=True)
    baseline.run(events)
    time_of = {e.name.value: e.time for e in events}
    expected = sorted(tuple(t.event.time for t in m.taken) for m in reference)
    found = sorted(tuple(time_of[g] for g in row) for row in baseline.found)
    assert found == expected
    assert sorted(baseline.found) == sorted(tuple(t.event.name.value for t in m.taken) for m in reference)


@pytest.mark.parametrize("workload", ["creditcard", "smartgrid", "traffic", "head-shoulders"])
def test_baseline_contains_the_reference_matches(workload: str, data_dir: Path) -> None:
    """On the other workloads the baseline (every combination in the window) finds, for each
    reference match, the combination of its first and last events."""
    w = workloads.WORKLOADS[workload]
    ds = generators.generate(w.dataset, TINY * 2, data_dir)
    kb = workloads.load_kb(ds)
    events = list(workloads.iter_events(ds))
    minutes = 1 if workload == "head-shoulders" else 2  # its 7-way baseline join explodes with the window
    reference = evaluate(parse_query(w.query_text(minutes)), events, kb)
    baseline = baselines.WindowStoreBaseline(workload, minutes * 60.0, kb, keep_matches=True)
    baseline.run(events)
    ends = {(row[0], row[-1]) for row in baseline.found}
    assert {(m.taken[0].event.name.value, m.taken[-1].event.name.value) for m in reference} <= ends
    if workload != "head-shoulders":
        assert reference, "the workload should have matches at this size"


def _run(tmp_path: Path, *args: str) -> dict:
    """Run the benchmark CLI into ``tmp_path`` and return the JSON it wrote."""
    out = tmp_path / "results"
    assert runner.main([*args, "--output-dir", str(out), "--data-dir", str(tmp_path / "data"), "--no-chart"]) == 0
    files = list(out.glob("*.json"))
    assert len(files) == 1
    return json.loads(files[0].read_text(encoding="utf-8"))


def _check_report(report: dict) -> None:
    """The keys every report and every run row must have."""
    for key in ("schema", "timestamp", "mode", "machine", "engine", "config", "workloads", "datasets", "runs"):
        assert key in report, key
    for key in ("cpu_count", "python", "pyoxigraph"):
        assert report["machine"][key], key
    assert report["runs"]
    for row in report["runs"]:
        assert set(runner.RUN_KEYS) <= set(row), set(runner.RUN_KEYS) - set(row)


def test_runner_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tiny in-process run of every system writes the JSON with ratios and prints the table."""
    report = _run(tmp_path, "--quick", "--workloads", "vshape-any", "--sizes", str(TINY), "--in-process",
                  "--budget", "2", "--baseline-budget", "5", "--reference-max-events", str(TINY))
    _check_report(report)
    rows = {row["label"]: row for row in report["runs"]}
    base, ceiling = rows["baseline"], rows["ceiling (parse only)"]
    assert base["status"] == "ok" and base["events"] == TINY and base["matches"] > 0
    assert ceiling["status"] == "ok" and ceiling["vs_ceiling"] == pytest.approx(1.0)
    main = rows[report["engine"]["label"]]
    assert main["status"] == "ok" and main["vs_baseline"] is not None
    assert main["startup_s"] > 0 and main["output_bytes"] > 0  # a whole `spaseq run` process
    api = rows[runner.API_LABEL]
    assert api["status"] == "ok" and api["matches"] == main["matches"]
    if main["events"] == base["events"]:
        assert main["matches_agree"] is True
    ablations = [row for row in report["runs"] if row["system"] == "ablation"]
    assert {row["option"] for row in ablations} >= set(measure.ENGINE_OPTIONS)
    assert all(row["status"] in ("ok", "n/a") for row in ablations), ablations
    table = capsys.readouterr().out
    assert "baseline" in table and "ceiling" in table


def test_write_floor_writes_the_size_of_the_run_s_output(tmp_path: Path) -> None:
    """`--systems spaseq,floor`: a row writing as many bytes as the `spaseq run` process wrote,
    rated over the same events and against the same ceiling; with `arrow`, the run in each
    Arrow format (the same matches, its rows counted in the file) and pyarrow writing them
    alone."""
    report = _run(tmp_path, "--quick", "--workloads", "vshape-any", "--sizes", str(TINY), "--in-process",
                  "--systems", "spaseq,floor,arrow,ceiling", "--budget", "2")
    _check_report(report)
    rows = {row["label"]: row for row in report["runs"]}
    main, floor = rows[report["engine"]["label"]], rows[runner.FLOOR_LABEL]
    assert main["status"] == "ok" and floor["status"] == "ok", floor
    assert floor["system"] == "floor" and floor["events"] == main["events"] == TINY
    assert floor["output_bytes"] == main["output_bytes"] > 0
    assert floor["events_per_s"] > 0 and floor["vs_ceiling"] is not None
    for form in runner.ARROW_FORMS:
        bulk, written = rows[f"spaseq --format {form}"], rows[f"{runner.FLOOR_LABEL}, --format {form}"]
        assert bulk["status"] == written["status"] == "ok", bulk
        assert bulk["matches"] == written["matches"] == main["matches"] > 0
        assert 0 < bulk["output_bytes"] == written["output_bytes"] < main["output_bytes"]
        assert written["events_per_s"] > 0


def test_runner_falls_back_to_the_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the engine API, 'spaseq' is the reference evaluator and every ablation is n/a."""
    monkeypatch.setattr(runner.measure, "probe_engine", lambda: measure._unavailable("no engine for this test"))
    report = _run(tmp_path, "--quick", "--workloads", "vshape-any", "--sizes", str(TINY), "--in-process",
                  "--systems", "spaseq,ablations,baseline", "--reference-max-events", str(TINY))
    _check_report(report)
    rows = {row["label"]: row for row in report["runs"]}
    assert report["engine"]["label"] == "reference"
    assert rows["reference"]["status"] == "ok"
    assert rows["reference"]["matches_agree"] is True  # same 240 events as the baseline, same matches
    assert all(r["status"] == "n/a" for r in report["runs"] if r["system"] == "ablation")


def test_measurement_in_a_spawned_process(data_dir: Path) -> None:
    """A measurement in a fresh spawn process reports its own peak RSS."""
    ds = generators.generate("traffic", TINY, data_dir)
    result = runner.run_spec({"kind": "ceiling", "dataset": ds.to_json(), "workload": "traffic",
                              "window_minutes": 1}, 120)
    assert result["status"] == "ok", result
    assert result["events"] == TINY and result["peak_rss_mb"] > 0


def test_pyflink_peer_flattens_each_event_to_one_row(data_dir: Path) -> None:
    """The PyFlink peer's input: one CSV row per stock event, with the event's own values."""
    peer = importlib.import_module("benchmarks.peers.pyflink_stock")
    ds = generators.generate("stock", TINY, data_dir)
    flat = peer.flatten_stock(ds, data_dir / "trades.csv")
    assert (flat.events, flat.rows, flat.triples) == (TINY, TINY, ds.triples)
    with open(data_dir / "trades.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert len(rows) == TINY
    first = next(workloads.iter_events(ds))
    seq, company, price, volume, ms = rows[0]
    by_predicate = {t.predicate.value: t for t in first.triples}
    price_triple = by_predicate[generators.PRED + "price"]
    assert (int(seq), company, price) == (first.seq, str(price_triple.subject), price_triple.object.value)
    assert volume == str(by_predicate[generators.PRED + "volume"].object)
    assert int(ms) == round(first.time * 1000)


def test_runner_reports_pyflink_na_without_pyflink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PyFlink, `--systems pyflink` gives an n/a row that says how to install it."""
    monkeypatch.setattr(runner.pyflink_stock, "unavailable", lambda: "pyflink not installed: pip install .[bench-peers]")
    report = _run(tmp_path, "--quick", "--workloads", "vshape-any,traffic", "--sizes", str(TINY), "--in-process",
                  "--systems", "pyflink")
    _check_report(report)
    rows = {row["workload"]: row for row in report["runs"]}
    assert rows["vshape-any"]["status"] == "n/a" and "pip install .[bench-peers]" in rows["vshape-any"]["reason"]
    assert rows["traffic"]["status"] == "n/a" and "vshape-any only" in rows["traffic"]["reason"]


def test_live_latency_measures_every_match(data_dir: Path, tmp_path: Path) -> None:
    """A real ``spaseq run`` fed on its stdin at a fixed rate, without and with ``--lateness``:
    every match is timed against the event that completed it, those the watermark released
    waited for it (an event the lateness later, written in real time), those only the end of
    input released are apart, and the JSON report is written."""
    out = tmp_path / "live.json"
    assert live_latency.main(["--events", str(TINY), "--rates", "2000", "--startup", "0.5",
                              "--lateness", "50ms", "--stamps", "wall", "--no-chart",
                              "--data-dir", str(data_dir), "--out", str(out)]) == 0
    base, late = json.loads(out.read_text(encoding="utf-8"))["runs"]  # lateness 0 always runs first
    assert (base["lateness_s"], late["lateness_s"]) == (0, 0.05)
    for run in (base, late):
        assert run["events"] == TINY and run["matches"] > 0 and run["returncode"] == 0
        assert 0 <= run["latency_ms"]["p50"] <= run["latency_ms"]["p99"] <= run["latency_ms"]["max"]
    assert base["measured"] == base["matches"] and base["end_of_input"]["matches"] == 0
    # event i is stamped i/2000 s after the first: 50 ms of event time is 100 events, 50 ms of wall time
    assert late["matches"] == base["matches"] and late["vs_lateness_0"]["same_matches"]
    assert late["measured"] + late["end_of_input"]["matches"] == late["matches"]
    assert late["end_of_input"]["matches"] > 0 and late["nominal_wait_ms"] == 50
    # a floor only: the difference to the first run's latency is a wall clock on a shared machine
    assert late["latency_ms"]["p50"] >= 25 and "p50_added_ms" in late["vs_lateness_0"]


def test_live_latency_restamps_and_releases_at_the_watermark() -> None:
    """``--stamps wall`` stamps event i at the first stamp + i/rate; an event is released by the
    first one at least the lateness later, or (None) only by the end of input."""
    events = [("g0", ['<s> <p> "1" <g0> .', f'<g0> {live_latency.TIME_PREDICATE} "2026-01-01T00:00:00Z"^^<x> .']),
              ("g1", ['<s> <p> "2" <g1> .', f'<g1> {live_latency.TIME_PREDICATE} "2026-01-01T00:00:01Z"^^<x> .'])]
    (_, first), (_, second) = live_latency.restamp(events, 1000)
    assert first[0] == events[0][1][0] and '"2026-01-01T00:00:00.000000Z"' in first[1]
    assert '"2026-01-01T00:00:00.001000Z"' in second[1]
    assert live_latency._releasers([0, 100, 200, 300], 0) == [0, 1, 2, 3]
    assert live_latency._releasers([0, 100, 200, 300], 150) == [2, 3, None, None]
    assert live_latency._releasers([0, 100, 200, 300], 200) == [2, 3, None, None]
    assert [live_latency.lateness_seconds(x) for x in ("0", "100ms", "1s", "2 MINUTES")] == [0, Decimal("0.1"), 1, 120]
    assert live_latency._cli_lateness(live_latency.lateness_seconds("1s")) == "1000ms"


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_process_instructions_count_a_whole_run(data_dir: Path) -> None:
    """Under callgrind, a whole ``spaseq run`` of this tree writes the reference's matches, and
    its instructions per event (start-up subtracted) are counted."""
    ds = generators.generate("stock", TINY, data_dir)
    query = parse_query(workloads.WORKLOADS["vshape-any"].query_text(1))
    expected = len(evaluate(query, list(workloads.iter_events(ds))))
    result = process_instructions.measure(ROOT, "vshape-any", TINY, 1.0, data_dir=data_dir)
    assert result.matches == expected > 50
    assert result.events == TINY
    # reading and matching 240 events costs something, far less than Python's start-up
    assert 1_000 < result.instructions_per_event * TINY < result.startup_instructions
    assert 0 < result.main_thread_instructions_per_event < result.instructions_per_event


def test_a_spaseq_run_process_cannot_fill_the_disk(tmp_path: Path, monkeypatch) -> None:
    """The timed ``spaseq run`` processes write at most ``OUTPUT_CAP`` bytes: beyond it a
    write fails (EFBIG) instead of filling a shared disk, and the process says so."""
    import subprocess

    from benchmarks import measure

    monkeypatch.setattr(measure, "OUTPUT_CAP", 1000)
    target = tmp_path / "big"
    write = f"with open({str(target)!r}, 'wb') as f: f.write(b'x' * 5000)"
    proc = subprocess.run([sys.executable, "-c", write], capture_output=True, text=True,
                          preexec_fn=measure._cap_output, check=False)
    assert proc.returncode == 1 and "File too large" in proc.stderr
    assert target.stat().st_size <= 1000


def test_moment_shapes_find_the_reference_matches(tmp_path: Path) -> None:
    """benchmarks/moment_shapes.py: each shape's run finds the reference evaluator's matches."""
    shapes = importlib.import_module("benchmarks.moment_shapes")
    out = tmp_path / "shapes.json"
    assert shapes.main(["--sizes-conjunction", "12", "--sizes-kleene", "6", "--sizes-chain", "9",
                        "--data-dir", str(tmp_path), "--out", str(out)]) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [(r["shape"], r["n"]) for r in rows] == [
        ("conjunction", 12), ("conjunction-spread", 12), ("kleene", 6), ("chain", 9)]
    for r in rows:
        assert r["status"] == "ok", r
        events = read_replay(str(shapes.input_file(r["shape"], r["n"], tmp_path)), shapes.EX + "s").events
        assert r["matches"] == len(evaluate(parse_query(shapes.query_text(r["shape"])), events)) > 0


def test_moment_shapes_fan_completes_n_squared_matches_at_its_last_event(tmp_path: Path) -> None:
    """benchmarks/moment_shapes.py --shapes fan: n runs, a last event of n triples, n² matches
    (the reference evaluator's), none without that event."""
    shapes = importlib.import_module("benchmarks.moment_shapes")
    out = tmp_path / "shapes.json"
    assert shapes.main(["--shapes", "fan", "--sizes-fan", "7", "--without-last", "--data-dir", str(tmp_path),
                        "--out", str(out)]) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [(r["shape"], r["n"], r["matches"]) for r in rows] == [("fan", 7, 49), ("fan", 7, 0)]
    events = read_replay(str(shapes.input_file("fan", 7, tmp_path)), shapes.EX + "s").events
    assert len(evaluate(parse_query(shapes.query_text("fan")), events)) == 49


def test_moment_shapes_without_last_runs_the_same_input_but_its_last_event(tmp_path: Path) -> None:
    """benchmarks/moment_shapes.py --without-last: each size twice, the control over the
    shape's events but the last (chain's B, kleene's C), which completes every match; with
    --no-compaction the same matches."""
    shapes = importlib.import_module("benchmarks.moment_shapes")
    out = tmp_path / "shapes.json"
    assert shapes.main(["--shapes", "chain,kleene", "--sizes-chain", "9", "--sizes-kleene", "6", "--without-last",
                        "--format", "jsonl", "--no-compaction", "--data-dir", str(tmp_path), "--out", str(out)]) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [(r["shape"], r["n"], r["without_last"]) for r in rows] == [
        ("chain", 9, False), ("chain", 9, True), ("kleene", 6, False), ("kleene", 6, True)]
    for r in rows:
        assert r["status"] == "ok" and r["format"] == "jsonl" and r["compaction"] is False, r
        assert r["matches"] == (0 if r["without_last"] else r["n"])
        full, control = (read_replay(str(shapes.input_file(r["shape"], r["n"], tmp_path, last)),
                                     shapes.EX + "s").events for last in (False, True))
        assert [(e.time, e.triples) for e in control] == [(e.time, e.triples) for e in full[:-1]]


def test_run_rss_runs_every_stream_of_a_dataset(data_dir: Path, tmp_path: Path) -> None:
    """benchmarks/run_rss.py: a ``spaseq run`` over a multi-stream dataset finds the reference
    evaluator's matches and reports its peak RSS and a trace of its resident set."""
    run_rss = importlib.import_module("benchmarks.run_rss")
    ds = generators.generate("traffic", TINY * 4, data_dir)
    text = workloads.WORKLOADS["traffic"].query_text(10)
    query = tmp_path / "traffic.rq"
    query.write_text(text, encoding="utf-8")
    row = run_rss.run_child(str(query), ds, sample_every=0.05)
    assert "error" not in row, row
    assert row["matches"] == len(evaluate(parse_query(text), list(workloads.iter_events(ds)))) > 0
    assert row["peak_rss_mb"] > 0 and row["rss_trace_mb"] and row["cpu_s"] > 0


def test_spark_batch_input_and_workloads_are_what_it_says(tmp_path: Path) -> None:
    """benchmarks/spark_batch.py: its generated parts hold the events in time order, several a
    second, of many sensors, and each workload's query splits as the table says (by key, by time)."""
    from spaseq.engine.compile.planner import plan_query
    from spaseq.engine.io.native_events import read_replay_files

    spark_batch = importlib.import_module("benchmarks.spark_batch")
    data = spark_batch.sensor_input(1000, 3, tmp_path)
    assert len(data.paths) == 3 and spark_batch.sensor_input(1000, 3, tmp_path) == data  # cached
    events, error = read_replay_files([(spark_batch.STREAM, path) for path in data.paths])
    assert error is None and len(events) == data.events == 1000 and data.triples == 2000
    times = [e.time for e in events]
    assert times == sorted(times) and len(set(times)) == 1000 // spark_batch.EVENTS_PER_SECOND
    assert len({t.subject for e in events for t in e.triples}) > 100
    for w in spark_batch.WORKLOADS.values():
        text = (ROOT / "benchmarks" / "queries" / w.query_file).read_text(encoding="utf-8")
        assert plan_query(parse_query(text)).split.kind == w.split, w.name


# the many-key stream has few V-shapes of a company in a short window: 5 minutes there; ';' and
# ',' (few matches on 4 companies) over more events
@pytest.mark.parametrize(("workload", "size", "minutes"), [
    ("vshape-any", TINY, 1), ("vshape-many", TINY * 8, 5), ("vshape-next", TINY * 8, 10),
    ("vshape-strict", TINY * 8, 10)])
def test_the_prototype_finds_the_reference_matches(workload: str, size: int, minutes: int, data_dir: Path,
                                                   tmp_path: Path) -> None:
    """The prototype row's purpose-built matcher (benchmarks/prototype, std-only Rust) computes
    exactly the reference evaluator's matches, each as its three events' graphs."""
    import subprocess

    w = workloads.WORKLOADS[workload]
    ds = generators.generate(w.dataset, size, data_dir)
    reference = evaluate(parse_query(w.query_text(minutes)), list(workloads.iter_events(ds)))
    assert reference, "the workload should have matches at this size"
    out = tmp_path / "matches.txt"
    done = subprocess.run([str(measure.build_prototype()), "--query", str(w.prototype), "--window-seconds",
                           str(minutes * 60), "--out", str(out), *ds.files()],
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"events": ds.events, "matches": len(reference)}
    assert sorted(out.read_text().splitlines()) == sorted(
        " ".join(t.event.name.value for t in m.taken) for m in reference)


def test_the_consumption_prototype_finds_the_engine_s_matches(data_dir: Path, tmp_path: Path) -> None:
    """The prototype of vshape-any-matched (CONSUMPTION MATCHED) computes exactly `spaseq run`'s
    matches. The reference evaluator, which checks the engine's consumption policies in the
    differential tests, needs minutes for a hundred events of this workload, so the engine is
    the yardstick here."""
    import subprocess

    w = workloads.WORKLOADS["vshape-any-matched"]
    ds = generators.generate(w.dataset, TINY * 8, data_dir)
    query, engine_out, proto_out = tmp_path / "q.rq", tmp_path / "engine.jsonl", tmp_path / "proto.txt"
    query.write_text(w.query_text(10), encoding="utf-8")
    subprocess.run(measure.spaseq_run_command(sys.executable, query, ds, ds.streams, engine_out,
                                              ("--events", "ids")), check=True)
    engine = [" ".join(json.loads(line)["events"]) for line in engine_out.read_text().splitlines()]
    assert len(engine) > 100, "the workload should have matches at this size"
    done = subprocess.run([str(measure.build_prototype()), "--query", str(w.prototype), "--window-seconds",
                           "600", "--out", str(proto_out), *ds.files()], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"events": ds.events, "matches": len(engine)}
    assert sorted(proto_out.read_text().splitlines()) == sorted(engine)
