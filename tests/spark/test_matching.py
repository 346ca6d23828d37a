"""Queries on Spark (issue 27): ``read_events`` reads replay files with Spark in the order
``spaseq run`` numbers them, and ``match`` finds exactly the single engine's matches, for a
query split by key (with a knowledge base on the executors), one split by time (cut in
several chunks) and one that cannot be split, in the order the single engine releases them
(sorted by ``order``), in the suite's local[2] session."""

from __future__ import annotations

import gzip
import random
from collections import Counter
from pathlib import Path

import pyoxigraph
import pytest

from spaseq.engine.api import evaluate
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.io.native_events import read_replay_files
from spaseq.engine.language.query import parse_query
from spaseq.engine.output.match_rdf import stamp_literal
from spaseq.engine.vocab import GENERATED_AT_TIME
from tests.util import EX, ev, query_text

pytest.importorskip("pandas")

KB = EX + "kb"
DEFINES = ("DEFINE GPM A ON U1 { ?a :kind :a ; :key ?k ; :v ?va } "
           "DEFINE GPM B ON U2 { ?b :kind :b ; :key ?k ; :v ?vb FILTER(?vb > ?va) } "
           "DEFINE GPM C ON U1 { ?c :kind :c ; :key ?k GRAPH :kb { ?k :owner ?o } }")
QUERIES = {
    "key": "SEQ(A ; B : C) WITHIN 6 SECONDS",
    "time": "SEQ(A , B ; C) WITHIN 4 SECONDS",
    "none": "SEQ(A ; B ; C) WITHIN 5 EVENTS",
}


def _text(name: str) -> str:
    seq, within = QUERIES[name].removeprefix("SEQ(").split(") WITHIN ", 1)
    return query_text(seq, DEFINES, within=within)


def _streams(tmp: Path) -> dict[str, str]:
    """Two replay files (one gzipped) of 120 events on three keys, with ties across streams."""
    rnd = random.Random(7)
    by_stream: dict[str, list] = {"u1": [], "u2": []}
    time = 0
    for i in range(120):
        time += rnd.choice((0, 1, 1))
        stream = rnd.choice(("u1", "u1", "u2"))
        kind = "b" if stream == "u2" else rnd.choice("ac")
        turtle = f":e{i} :kind :{kind} ; :key :K{rnd.randrange(3)} ; :v {rnd.randrange(10)} ."
        by_stream[stream].append(ev(stream, time, turtle, seq=i, name=f"e{i}"))
    paths = {}
    for stream, events in by_stream.items():
        quads = []
        for e in events:
            quads.append(pyoxigraph.Quad(e.name, GENERATED_AT_TIME, stamp_literal(e.time), pyoxigraph.DefaultGraph()))
            quads += [pyoxigraph.Quad(t.subject, t.predicate, t.object, e.name) for t in e.triples]
        data = pyoxigraph.serialize(quads, format=pyoxigraph.RdfFormat.TRIG)
        path = tmp / (f"{stream}.trig.gz" if stream == "u2" else f"{stream}.trig")
        path.write_bytes(gzip.compress(data) if stream == "u2" else data)
        paths[EX + stream] = str(path)
    return paths


def _kb(tmp: Path) -> tuple[dict[str, str], pyoxigraph.Store]:
    path = tmp / "kb.nt"
    path.write_text(f"<{EX}K0> <{EX}owner> \"alice\" .\n<{EX}K1> <{EX}owner> \"bob\" .\n")
    store = pyoxigraph.Store()
    store.load(path=str(path), to_graph=pyoxigraph.NamedNode(KB))
    return {KB: str(path)}, store


def _bag(rows) -> Counter:
    return Counter((Decimal_(r[0]), Decimal_(r[1]), tuple(sorted(r[2].items())),
                    tuple((e[0], e[1], Decimal_(e[2]), e[3], e[4]) for e in r[3])) for r in rows)


def Decimal_(x) -> str:
    return format(x.normalize(), "f")


def test_read_events_numbers_events_as_spaseq_run_does(spark, tmp_path) -> None:
    from spaseq.spark import read_events

    streams = _streams(tmp_path)
    expected, error = read_replay_files(list(streams.items()))
    assert error is None
    got = read_events(spark, streams).orderBy("seq").collect()
    assert [(r.stream, r.time, r.graph) for r in got] == [(e.stream, e.time, str(e.name)) for e in expected]
    assert [r.seq for r in got] == list(range(len(expected)))


@pytest.mark.parametrize("name", QUERIES)
def test_match_finds_the_single_engines_matches(spark, tmp_path, name: str) -> None:
    from spaseq.spark import match, read_events

    q = parse_query(_text(name))
    assert plan_query(q).split.kind == name
    streams = _streams(tmp_path)
    kb_files, store = _kb(tmp_path)
    events, error = read_replay_files(list(streams.items()))
    assert error is None
    rank = {id(e): i for i, e in enumerate(events)}  # the replay numbers per file; Spark in order
    single = [(m.start, m.time, {v: str(t) for v, t in m.bindings},
               [(t.atom, t.event.stream, t.event.time, rank[id(t.event)], str(t.event.name)) for t in m.taken])
              for m in evaluate(q, events, store)]
    assert single  # the stream must give the query matches
    rows = match(read_events(spark, streams), _text(name), kb=kb_files, parts=3).orderBy("order").collect()
    got = [(r.start, r.time, dict(r.bindings), [(e.atom, e.stream, e.time, e.seq, e.graph) for e in r.events])
           for r in rows]
    assert _bag(got) == _bag(single)
    assert [_bag([m]) for m in got] == [_bag([m]) for m in single]  # sorted by order: the release order


def test_kb_files_reach_the_executors_as_absolute_paths(tmp_path, monkeypatch) -> None:
    """An executor of a cluster runs in a folder of its own: a relative KB path is made
    absolute on the driver, as the user meant it (tests/spark/test_cluster.py runs one)."""
    from spaseq.spark.matching import kb_source

    monkeypatch.chdir(tmp_path)
    expected = ("files", ((str(tmp_path / "kb" / "db.nt"), EX + "db"),))
    assert kb_source([f"{EX}db=kb/db.nt"], None) == expected
    assert kb_source({EX + "db": "kb/db.nt"}, None) == expected


def test_relative_stream_paths_are_this_process_s_not_the_jvm_s(spark, tmp_path, monkeypatch) -> None:
    """A relative path is read where the user wrote it (this process's folder), not in the
    folder the session's JVM started in (the suite's session started elsewhere)."""
    from spaseq.spark import read_events

    streams = _streams(tmp_path)
    expected = [r.graph for r in read_events(spark, streams).orderBy("seq").collect()]
    monkeypatch.chdir(tmp_path)
    relative = {iri: Path(path).name for iri, path in streams.items()}
    got = read_events(spark, relative).orderBy("seq").collect()
    assert [r.graph for r in got] == expected and expected


def test_read_events_reads_a_changed_file_again(spark, tmp_path) -> None:
    """Spark reuses cached data for a plan equal to a cached one: each reading is its own."""
    from spaseq.spark import read_events

    path = tmp_path / "s.nq"
    stamp = f'<{EX}g> <{GENERATED_AT_TIME.value}> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
    path.write_text(f'<{EX}e> <{EX}v> "1" <{EX}g> .\n{stamp}')
    first = read_events(spark, {EX + "s": str(path)})
    path.write_text(f'<{EX}e> <{EX}v> "2" <{EX}g> .\n{stamp}')
    second = read_events(spark, {EX + "s": str(path)})
    assert [r.triples for r in first.collect()] == [f'<{EX}e> <{EX}v> "1" .\n']
    assert [r.triples for r in second.collect()] == [f'<{EX}e> <{EX}v> "2" .\n']
    first.unpersist()
    second.unpersist()


def test_times_go_to_arrow_and_back_exactly() -> None:
    """Event times cross to Arrow as decimal(38,9) built from their nanoseconds, and back,
    without a Decimal per row: negative, sub-second and beyond 64 bits, sliced included."""
    from decimal import Decimal

    import pyarrow as pa

    from spaseq.spark.events import nanoseconds, seconds_column

    times = [0, 1, -1, 1_500_000_000, -2_000_000_001, 2**63 - 1, -(2**63), 2**70 + 3, -(2**70)]
    column = seconds_column(times)
    assert column.type == pa.decimal128(38, 9)
    assert column.to_pylist() == [Decimal(t).scaleb(-9) for t in times]
    assert nanoseconds(column) == times
    assert nanoseconds(column.slice(2, 4)) == times[2:6]
    assert nanoseconds(pa.chunked_array([column.slice(0, 3), column.slice(7)])) == times[:3] + times[7:]
    assert nanoseconds(seconds_column(times[:6])) == times[:6]
