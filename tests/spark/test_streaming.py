"""Queries on Spark Structured Streaming (``spaseq.spark.match_stream``, issue 27): the
README's streaming example killed after its first micro-batch and run again from its
checkpoint (in this process, the suite's session) writes every match exactly once; files appearing in folders give the single
engine's matches (a query split by key, in hash buckets); late events within the lateness are
matched and those beyond the watermark come out as late rows; a KB store refreshed mid-stream
is joined at the next micro-batch; a bad file is quarantined with a report; the rate source
works once mapped to events. In-process tests use the suite's local[2] session and a memory
sink; the README's runs in processes of its own."""

from __future__ import annotations

import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pyoxigraph
import pytest

from spaseq.engine.api import evaluate
from spaseq.engine.io.native_events import read_replay_files
from spaseq.engine.language.query import parse_query
from tests.properties.test_differential import kb
from tests.spark.test_run import DEFINES, _stream, _write_inputs
from tests.util import EX, query_text

pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[2]
SG = ROOT / "fixtures" / "smartgrid"
SG_STREAMS = {"power": "http://smartgrid.org/mainSource", "weather": "http://smartgrid.org/weather",
              "storage": "http://smartgrid.org/storageSource"}


def _bag(rows) -> collections.Counter:
    """Matches (rows or ``Match``es) as a bag of (start, end, bindings in N-Triples)."""
    out: collections.Counter = collections.Counter()
    for r in rows:
        if isinstance(r.bindings, dict):
            bindings = r.bindings.items()
        elif hasattr(r.bindings, "asDict"):  # read back from JSON: a struct
            bindings = ((v, t) for v, t in r.bindings.asDict().items() if t is not None)
        else:
            bindings = ((v, str(t)) for v, t in r.bindings)
        out[(Decimal(str(r.start)).normalize(), Decimal(str(r.time)).normalize(), tuple(sorted(bindings)))] += 1
    return out


def _slices(events, n: int) -> list[list]:
    """The events cut in ``n`` slices of time (every stream's slice i before its slice i + 1)."""
    times = sorted({e.time for e in events})
    cuts = [times[len(times) * i // n] for i in range(1, n)]
    out: list[list] = [[] for _ in range(n)]
    for e in events:
        out[sum(e.time >= c for c in cuts)].append(e)
    return out


def _write_trig(path: Path, events) -> None:
    from spaseq.engine.output.match_rdf import stamp_literal
    from spaseq.engine.vocab import GENERATED_AT_TIME

    quads = []
    for e in events:
        quads.append(pyoxigraph.Quad(e.name, GENERATED_AT_TIME, stamp_literal(e.time), pyoxigraph.DefaultGraph()))
        quads += [pyoxigraph.Quad(t.subject, t.predicate, t.object, e.name) for t in e.triples]
    path.write_bytes(pyoxigraph.serialize(quads, format=pyoxigraph.RdfFormat.TRIG) or b"")


#: the README's Structured Streaming example (run here, and on a cluster by test_cluster.py)
_FOUND = re.search(r"<!-- spark-streaming-example[^>]*-->\n```python\n(.*?)```",
                   (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
README_STREAMING = _FOUND.group(1) if _FOUND else ""


def smartgrid_folders(folder: Path, slices: int = 4) -> None:
    """The README example's folder: the smart-grid streams cut in ``slices`` files each (in
    in/power, in/weather, in/storage, oldest first), query.rq and kb.nt."""
    events, error = read_replay_files([(iri, str(SG / f"{name}.trig")) for name, iri in SG_STREAMS.items()])
    assert error is None
    parts = _slices(events, slices)
    for name, iri in SG_STREAMS.items():
        (folder / "in" / name).mkdir(parents=True)
        for i, part in enumerate(parts):
            path = folder / "in" / name / f"{i}.trig"
            _write_trig(path, [e for e in part if e.stream == iri])
            os.utime(path, (1_000_000 + i, 1_000_000 + i))  # the source takes files oldest first
    shutil.copy(SG / "query.rq", folder / "query.rq")
    shutil.copy(SG / "kb.nt", folder / "kb.nt")


def smartgrid_matches() -> list:
    """The smart-grid example's matches, found by the engine in this process."""
    events, _ = read_replay_files([(iri, str(SG / f"{name}.trig")) for name, iri in SG_STREAMS.items()])
    store = pyoxigraph.Store()
    store.load(path=str(SG / "kb.nt"), to_graph=pyoxigraph.NamedNode("http://smartgrid.org/db"))
    return evaluate(parse_query((SG / "query.rq").read_text()), events, store)


def test_the_readme_streaming_example_killed_and_restarted_writes_every_match_once(spark, tmp_path) -> None:
    assert README_STREAMING, "the README's streaming example is missing"
    code = README_STREAMING
    smartgrid_folders(tmp_path)
    commits = tmp_path / "checkpoint" / "commits"
    first = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (commits / "0").exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)  # the driver and its JVM, mid-stream
    first.wait()
    done = sorted(p.name for p in commits.iterdir() if p.name.isdigit()) if commits.exists() else []
    assert done and len(done) < 4, f"not killed mid-stream: {done} {first.stderr.read().decode()[-2000:]}"
    # the restart in this process (the suite's session: one JVM start less), its paths made
    # absolute: the JVM and its Python workers resolve relative ones against their own folder
    for name in ('"in/', '"out"', '"checkpoint"', '"kb.nt"', '"query.rq"'):
        code = code.replace(name, f'"{tmp_path}/{name[1:]}')
    exec(compile(code, "README.md", "exec"), {})
    assert len([p for p in commits.iterdir() if p.name.isdigit()]) >= 4
    rows = spark.read.json(str(tmp_path / "out")).collect()
    single = smartgrid_matches()
    assert len(single) == 6 and all(r.kind == "match" for r in rows)
    assert _bag(r for r in rows) == _bag(single)  # each match once: none lost, none repeated


#: the GPMs of the tests, all on stream u1: files of one folder appear in order (the files of
#: two folders could be taken by two micro-batches in either order, making events late)
DEFINES_U1 = DEFINES.replace("ON U2", "ON U1")


def _on_u1(events) -> list:
    """The events, all on stream u1."""
    from spaseq.engine.events import Event

    return [Event(EX + "u1", e.time, e.triples, e.seq, e.name) for e in events]


def _file_stream(spark, tmp_path: Path, chunks: list[list], text: str, **options):
    """``match_stream`` over folders u1, u2 where each chunk's files appear in turn; the rows
    after each chunk (a memory sink)."""
    import spaseq.spark as on_spark

    for s in ("u1", "u2"):
        (tmp_path / s).mkdir()
    stream = on_spark.read_event_stream(spark, {EX + "u1": str(tmp_path / "u1"), EX + "u2": str(tmp_path / "u2")},
                                        quarantine=options.pop("quarantine", None))
    name = f"m{abs(hash(str(tmp_path)))}"
    query = (on_spark.match_stream(stream, text, **options).writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        for i, chunk in enumerate(chunks):
            folder = tmp_path / f"chunk{i}"
            _write_inputs(folder, chunk, kb())
            for s in ("u1", "u2"):
                shutil.copy(folder / f"{s}.trig", tmp_path / s / f"{i}.trig")
            query.processAllAvailable()
        return spark.sql(f"SELECT * FROM {name}").collect()
    finally:
        query.stop()


def test_files_appearing_give_the_single_engines_matches_in_key_buckets(spark, tmp_path) -> None:
    evs = _on_u1(_stream(n=160))
    text = query_text("A ; B : C", DEFINES_U1, within="6 SECONDS")
    kb_file = tmp_path / "kb.nq"
    kb_file.write_bytes(pyoxigraph.serialize(kb(), format=pyoxigraph.RdfFormat.N_QUADS) or b"")
    rows = _file_stream(spark, tmp_path, [evs[:80], evs[80:]], text, buckets=3,
                        kb=[str(kb_file)])
    single = evaluate(parse_query(text), evs, kb())
    assert len(single) > 5 and _bag(rows) == _bag(single)


def test_files_of_one_millisecond_in_one_micro_batch_are_each_routed_by_their_own_keys(spark, tmp_path) -> None:
    """Events of two files modified at the same instant share their numbers (time of the
    file, then position): routing pairs rows and events by place, not by number."""
    import spaseq.spark as on_spark

    evs = _on_u1(_stream(n=120))
    text = query_text("A ; B", DEFINES_U1, within="5 SECONDS")
    (tmp_path / "u1").mkdir()
    for i, part in enumerate(evs[j:j + 10] for j in range(0, 120, 10)):  # several files a partition
        _write_inputs(tmp_path / f"chunk{i}", part, kb())
        path = tmp_path / "u1" / f"{i}.trig"
        shutil.copy(tmp_path / f"chunk{i}" / "u1.trig", path)
        os.utime(path, (1_000_000, 1_000_000))
    stream = on_spark.read_event_stream(spark, {EX + "u1": str(tmp_path / "u1")})
    query = (on_spark.match_stream(stream, text, buckets=3).writeStream.format("memory")
             .queryName("samems").option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        query.processAllAvailable()
        rows = spark.sql("SELECT * FROM samems").collect()
    finally:
        query.stop()
    single = evaluate(parse_query(text), evs, kb())
    assert len(single) > 5 and _bag(rows) == _bag(single)


def test_late_events_within_the_lateness_are_matched_and_those_beyond_the_watermark_come_out_late(
        spark, tmp_path) -> None:
    from tests.util import ev

    text = query_text("A ; B", DEFINES_U1, within="10 SECONDS")
    first = [ev("u1", t, f":a{t} :kind :a ; :key :K0 ; :v 1 .", seq=t) for t in (10, 20, 30)]
    second = [ev("u1", 28, ":b28 :kind :b ; :key :K0 ; :v 5 .", seq=100),   # within 5 s of 30: in time
              ev("u1", 12, ":b12 :kind :b ; :key :K0 ; :v 5 .", seq=101),   # before the watermark (25)
              ev("u1", 40, ":a40 :kind :a ; :key :K0 ; :v 1 .", seq=102)]   # the clock past 28 + 5
    rows = _file_stream(spark, tmp_path, [first, second], text, lateness=5)
    matches = [r for r in rows if r.kind == "match"]
    late = [r for r in rows if r.kind == "late"]
    assert [(m.bindings["a"], m.bindings["b"]) for m in matches] == [(f"<{EX}a20>", f"<{EX}b28>")]
    assert [(r.events[0].time, r.events[0].stream, r.events[0].graph) for r in late] == [
        (Decimal(12), EX + "u1", f"<{EX}g101>")]


def test_a_kb_store_refreshed_mid_stream_is_joined_from_the_next_micro_batch(spark, tmp_path) -> None:
    from spaseq.engine.kb.build import bulk_load
    from spaseq.engine.kb.layout import StoreLayout

    layout = StoreLayout.at(tmp_path / "kb")
    layout.initialise()

    def version(owner: str) -> None:
        dump = tmp_path / f"{owner}.nq"
        dump.write_text(f"<{EX}K0> <{EX}owner> \"{owner}\" <{EX}kb> .\n")
        with layout.new_version("load") as pending:
            bulk_load([dump], layout.oxigraph_dir(pending.number))
            pending.meta = {"quads": 1}

    version("alice")
    text = query_text("A ; C", DEFINES, within="5 SECONDS")
    chunks = [[ev for ev in _two(i)] for i in range(2)]
    import spaseq.spark as on_spark

    for s in ("u1", "u2"):
        (tmp_path / s).mkdir()
    stream = on_spark.read_event_stream(spark, {EX + "u1": str(tmp_path / "u1"), EX + "u2": str(tmp_path / "u2")})
    query = (on_spark.match_stream(stream, text, kb_store=str(tmp_path / "kb")).writeStream.format("memory")
             .queryName("kbrefresh").option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        for i, chunk in enumerate(chunks):
            if i == 1:
                version("zed")  # between two micro-batches
            _write_inputs(tmp_path / f"chunk{i}", chunk, kb())
            shutil.copy(tmp_path / f"chunk{i}" / "u1.trig", tmp_path / "u1" / f"{i}.trig")
            query.processAllAvailable()
        rows = spark.sql("SELECT * FROM kbrefresh").collect()
    finally:
        query.stop()
    owners = sorted((m.start, m.bindings["o"]) for m in rows if m.kind == "match")
    assert owners == [(Decimal(1), '"alice"'), (Decimal(11), '"zed"')]


def _two(i: int) -> list:
    """An A then a C on key K0, ten seconds after the previous pair."""
    from tests.util import ev

    t = 10 * i + 1
    return [ev("u1", t, f":a{i} :kind :a ; :key :K0 ; :v 1 .", seq=2 * i),
            ev("u1", t + 1, f":c{i} :kind :c ; :key :K0 .", seq=2 * i + 1)]


def test_a_bad_file_is_quarantined_with_a_report_and_the_stream_goes_on(spark, tmp_path) -> None:
    evs = _on_u1(_stream(n=80))
    text = query_text("A ; B", DEFINES_U1, within="5 SECONDS")
    quarantine = tmp_path / "quarantine"
    import spaseq.spark as on_spark

    for s in ("u1", "u2"):
        (tmp_path / s).mkdir()
    stream = on_spark.read_event_stream(spark, {EX + "u1": str(tmp_path / "u1"), EX + "u2": str(tmp_path / "u2")},
                                        quarantine=str(quarantine))
    query = (on_spark.match_stream(stream, text).writeStream.format("memory").queryName("quarantined")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        _write_inputs(tmp_path / "chunk", evs, kb())
        (tmp_path / "u2" / "0.trig").write_text("<http://ex.org/g> {\n  <http://ex.org/s> <oops\n")
        shutil.copy(tmp_path / "chunk" / "u1.trig", tmp_path / "u1" / "1.trig")
        query.processAllAvailable()
        rows = spark.sql("SELECT * FROM quarantined").collect()
    finally:
        query.stop()
    report = (quarantine / "0.trig.error").read_text()
    assert report.startswith(f"{tmp_path / 'u2' / '0.trig'}:2:") and "syntax error" in report
    assert (quarantine / "0.trig").read_text().startswith("<http://ex.org/g>")
    assert _bag(rows) == _bag(evaluate(parse_query(text), evs, kb())) and rows


def test_the_rate_source_mapped_to_events(spark, tmp_path) -> None:
    """Spark's rate source (one row per value) as events of stream u1: an A every value, a
    B every third, keyed by value mod 2; the matches of the values processed are the single
    engine's."""
    from pyspark.sql import functions as F

    import spaseq.spark as on_spark

    rate = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 30).option("numPartitions", 2)
            .load())
    triples = F.format_string(
        f"<{EX}e%d> <{EX}kind> <{EX}%s> .\n<{EX}e%d> <{EX}key> <{EX}K%d> .\n<{EX}e%d> <{EX}v> \"%d\"^^"
        "<http://www.w3.org/2001/XMLSchema#integer> .\n",
        "value", F.when(F.col("value") % 3 == 2, "b").otherwise("a"), "value", F.col("value") % 2, "value",
        F.col("value") % 7)
    events = rate.select(F.lit(EX + "u1").alias("stream"), F.col("value").cast("decimal(38,9)").alias("time"),
                         F.lit(False).alias("dated"), F.col("value").alias("seq"),
                         F.format_string(f"<{EX}g%d>", "value").alias("graph"), triples.alias("triples"))
    text = query_text("A ; B", DEFINES_U1, within="4 SECONDS")
    query = (on_spark.match_stream(events, text, buckets=2).writeStream.format("memory").queryName("rated")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(processingTime="200 milliseconds")
             .start())
    try:
        deadline = time.monotonic() + 120
        while sum(p["numInputRows"] for p in query.recentProgress) < 90 and time.monotonic() < deadline:
            time.sleep(0.2)
        query.stop()
        processed = sum(p["numInputRows"] for p in query.recentProgress)
        rows = spark.sql("SELECT * FROM rated").collect()
    finally:
        query.stop()
    from tests.util import ev

    single = evaluate(parse_query(text), [
        ev("u1", v, f":e{v} :kind :{'b' if v % 3 == 2 else 'a'} ; :key :K{v % 2} ; :v {v % 7} .", seq=v)
        for v in range(processed)], kb())
    assert processed >= 90 and len(single) > 10 and _bag(rows) == _bag(single)
