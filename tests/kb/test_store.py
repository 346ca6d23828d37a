"""The knowledge-base store: Spark load/refresh jobs (the shared local[2] session of conftest), the
versioned on-disk layout, and the engine's GRAPH clauses over it before and after a refresh."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from spaseq.engine.api import Engine
from spaseq.engine.cli.main import main
from spaseq.engine.compile.kb_relevance import query_filter
from spaseq.engine.errors import KnowledgeBaseError
from spaseq.engine.kb.layout import StoreLayout
from spaseq.engine.kb.load_job import JobOptions, run_load
from spaseq.engine.kb.reader import KbStore
from spaseq.engine.kb.refresh_job import run_refresh
from spaseq.engine.kb.rejects import RejectLimit
from spaseq.engine.language.query import parse_query
from spaseq.engine.reference.evaluator import evaluate as reference_evaluate
from tests.util import EX, events, query_text

DB = "http://ex.org/db"
ROOT = Path(__file__).resolve().parents[2]
SG = ROOT / "fixtures" / "smartgrid"


def owners(*pairs: tuple[str, str]) -> str:
    return "".join(f'<{EX}{h}> <{EX}owner> "{o}" .\n' for h, o in pairs)


def kb_rows(kb: KbStore, text: str) -> set[tuple[str, ...]]:
    result = kb.store.query(text)
    return {tuple(str(r[v]) for v in result.variables) for r in result}


def test_load_rejects_duplicates_gzip_and_quads(spark, tmp_path):
    (tmp_path / "a.nt").write_text(
        owners(("H1", "Alice"), ("H1", "Alice"), ("H2", "Bob"))
        + "not a triple\n"
        + f"<{EX}H2> <{EX}city> _:c .\n_:c <{EX}name> \"Lyon\" .\n"
        + f"<{EX}H3> <{EX}owner> \"Eve\"@en-\n",  # bad language tag
        encoding="utf-8")
    with gzip.open(tmp_path / "b.nq.gz", "wt", encoding="utf-8") as out:
        out.write(f'<{EX}H9> <{EX}owner> "Zed" <{EX}other> .\n'
                  f'<{EX}H2> <{EX}owner> "Bob" <{DB}> .\n'  # a duplicate of a.nt's line in the db graph
                  f'<rel> <{EX}p> <{EX}o> .\n')
    summary = run_load(spark, JobOptions([str(tmp_path / "a.nt"), str(tmp_path / "b.nq.gz")],
                                         str(tmp_path / "store"), graph=DB, max_rejects=RejectLimit(count=3),
                                         rejects=str(tmp_path / "rejects.jsonl")))
    assert summary["version"] == 1
    assert summary["rejected"] == 3
    assert summary["statements"] == 7 and summary["loaded"] == 5 and summary["duplicates"] == 2
    assert summary["graphs"] == {DB: 4, f"{EX}other": 1}
    rejects = [json.loads(line) for line in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert [(Path(r["file"]).name, r["line"]) for r in rejects] == [("a.nt", 4), ("a.nt", 7), ("b.nq.gz", 3)]
    assert rejects[0]["text"] == "not a triple" and rejects[0]["reason"]
    with KbStore(tmp_path / "store") as kb:
        assert kb.version == 1 and len(kb.store) == 5
        names = kb_rows(kb, f"SELECT ?n WHERE {{ GRAPH <{DB}> {{ <{EX}H2> <{EX}city> ?c . ?c <{EX}name> ?n }} }}")
        assert names == {('"Lyon"',)}  # the blank node, skolemised, still joins across lines


def test_reject_line_numbers_are_exact_across_file_splits(spark, tmp_path):
    bad = {7, 480, 999}
    lines = [f"<{EX}s{i}> <{EX}p> \"{'x' * 40}\" ." if i not in bad else f"broken {i}" for i in range(1, 1201)]
    (tmp_path / "dumps").mkdir()
    (tmp_path / "dumps" / "big.nt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "8k")
    try:
        summary = run_load(spark, JobOptions([str(tmp_path / "dumps")], str(tmp_path / "store"), graph=DB))
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert summary["lines"] == 1200 and summary["loaded"] == 1197
    rejects = [json.loads(x) for x in Path(summary["rejects"]).read_text().splitlines()]
    assert [(r["line"], r["text"]) for r in rejects] == [(n, f"broken {n}") for n in sorted(bad)]


def _refresh_fixture(spark, tmp_path) -> Path:
    (tmp_path / "v1.nt").write_text(owners(("H1", "Alice"), ("H2", "Bob"), ("H3", "Carol")), encoding="utf-8")
    run_load(spark, JobOptions([str(tmp_path / "v1.nt")], str(tmp_path / "store"), graph=DB))
    return tmp_path / "store"


def test_refresh_adds_removes_and_keeps_a_leased_version(spark, tmp_path):
    store = _refresh_fixture(spark, tmp_path)
    (tmp_path / "v2.nt").write_text(owners(("H1", "Alice"), ("H3", "Carol"), ("H4", "Dave")), encoding="utf-8")
    reader = KbStore(store)
    summary = run_refresh(spark, JobOptions([str(tmp_path / "v2.nt")], str(store)))  # --graph from v1
    assert (summary["added"], summary["removed"], summary["unchanged"]) == (1, 1, 2)
    assert summary["version"] == 2 and summary["changes"] == {DB: {"added": 1, "removed": 1, "quads": 3}}
    layout = StoreLayout.at(store)
    assert layout.current() == 2 and layout.versions() == [1, 2]  # v1 still has a reader
    assert reader.version == 1 and len(reader.store) == 3
    assert reader.refresh(force=True) and reader.version == 2
    assert kb_rows(reader, f"SELECT ?h WHERE {{ GRAPH <{DB}> {{ ?h <{EX}owner> ?o }} }}") == {
        (f"<{EX}H1>",), (f"<{EX}H3>",), (f"<{EX}H4>",)}
    reader.close()
    # unchanged data: an empty diff, and v1 (no reader left) is collected
    summary = run_refresh(spark, JobOptions([str(tmp_path / "v2.nt")], str(store), graph=DB))
    assert (summary["added"], summary["removed"], summary["unchanged"]) == (0, 0, 3)
    assert summary["strategy"] == "patch" and layout.versions() == [3]
    with KbStore(store) as kb:
        assert kb.version == 3 and len(kb.store) == 3


def test_a_failed_load_or_refresh_leaves_current_and_earlier_versions_untouched(spark, tmp_path, monkeypatch):
    store = _refresh_fixture(spark, tmp_path)
    layout = StoreLayout.at(store)
    before = layout.meta(1)
    (tmp_path / "v2.nt").write_text(owners(("H1", "Alice"), ("H4", "Dave")), encoding="utf-8")

    def broken(*_args) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("spaseq.engine.kb.load_job.bulk_load", broken)
    monkeypatch.setattr("spaseq.engine.kb.refresh_job.apply_diff", broken)
    monkeypatch.setattr("spaseq.engine.kb.refresh_job.bulk_load", broken)
    with pytest.raises(OSError, match="disk full"):
        run_load(spark, JobOptions([str(tmp_path / "v2.nt")], str(store), graph=DB))
    with pytest.raises(OSError, match="disk full"):
        run_refresh(spark, JobOptions([str(tmp_path / "v2.nt")], str(store)))
    assert layout.current() == 1 and layout.versions() == [1] and layout.meta(1) == before
    assert sorted(d.name for d in layout.versions_dir.iterdir()) == ["000001"]  # no partial version
    with KbStore(store) as kb:
        assert kb.version == 1 and len(kb.store) == 3


def _version(layout: StoreLayout, kind: str, fail: bool = False) -> int:
    with layout.new_version(kind) as pending:
        layout.oxigraph_dir(pending.number).mkdir()
        if fail:
            raise ValueError("build failed")
        pending.meta = {"quads": 0}
    return pending.number


def test_new_version_is_one_transaction(tmp_path):
    layout = StoreLayout.at(tmp_path / "store")
    layout.initialise()
    assert _version(layout, "load") == 1 and layout.current() == 1
    meta = layout.meta(1)
    assert (meta["version"], meta["kind"], meta["quads"]) == (1, "load", 0) and meta["created"] > 0
    assert not (layout.version_dir(1) / ".writing").exists()
    with pytest.raises(ValueError, match="build failed"):
        _version(layout, "refresh", fail=True)
    with pytest.raises(RuntimeError, match="without setting its meta"), layout.new_version("refresh"):
        pass
    assert layout.current() == 1 and layout.versions() == [1]
    assert sorted(d.name for d in layout.versions_dir.iterdir()) == ["000001"]
    assert _version(layout, "refresh") == 2 and layout.current() == 2 and layout.versions() == [1, 2]
    assert (layout.version_dir(1) / "superseded").is_file()


def test_atomic_switch_under_a_concurrent_reader(spark, tmp_path):
    store = _refresh_fixture(spark, tmp_path)
    (tmp_path / "v2.nt").write_text(owners(*[(f"N{i}", f"n{i}") for i in range(40)]), encoding="utf-8")
    seen: set[tuple[int, int]] = set()
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                with KbStore(store) as kb:
                    seen.add((kb.version, len(kb.store)))
            except BaseException as exc:  # noqa: BLE001 - any failure is the test's finding
                errors.append(exc)
                return

    t = threading.Thread(target=read)
    t.start()
    try:
        run_refresh(spark, JobOptions([str(tmp_path / "v2.nt")], str(store), keep_versions=1))
    finally:
        stop.set()
        t.join()
    assert not errors
    assert seen <= {(1, 3), (2, 40)} and (1, 3) in seen
    with KbStore(store) as kb:
        assert (kb.version, len(kb.store)) == (2, 40)


QUERY = query_text(
    "A; B",
    f"""DEFINE GPM A ON U1 {{ ?h :power ?p }}
        DEFINE GPM B ON U2 {{ ?h :alarm ?a . GRAPH <{DB}> {{ ?h :owner ?o }} }}""",
    select="?h ?o",
)


def test_graph_clause_rows_before_and_after_a_refresh(spark, tmp_path):
    store = _refresh_fixture(spark, tmp_path)
    evs = events(("u1", 1, ":H1 :power 5 ."), ("u2", 2, ":H1 :alarm 1 ."),
                 ("u1", 3, ":H2 :power 5 ."), ("u1", 4, ":H1 :power 6 ."),
                 ("u2", 10, ":H1 :alarm 2 ."), ("u2", 11, ":H2 :alarm 3 ."))
    engine = Engine(kb=str(store))
    handle = engine.register(QUERY)
    polling = Engine(kb=KbStore(store, check_interval_s=0))  # notices the switch on push alone
    polled = polling.register(QUERY)
    for e in evs[:4]:
        engine.push_event(e)
        polling.push_event(e)
    assert {(r.bindings["h"].value, r.bindings["o"].value) for r in handle.rows()} == {(f"{EX}H1", "Alice")}
    # H1 changes owner, H2 disappears; the runs started at t=3 and t=4 survive the switch
    (tmp_path / "v2.nt").write_text(owners(("H1", "Alan"), ("H3", "Carol")), encoding="utf-8")
    run_refresh(spark, JobOptions([str(tmp_path / "v2.nt")], str(store)))
    engine.advance_to(5)
    for e in evs[4:]:
        engine.push_event(e)
        polling.push_event(e)
    engine.close()
    polling.close()
    rows = {(r.bindings["h"].value, r.bindings["o"].value) for r in handle.rows()}
    assert {(r.bindings["h"].value, r.bindings["o"].value) for r in polled.rows()} == {
        (f"{EX}H1", "Alice"), (f"{EX}H1", "Alan")}
    assert rows == {(f"{EX}H1", "Alan")}  # the run from t=4, over the new version; H2 has no owner now
    q = parse_query(QUERY)
    with KbStore(store) as kb:
        ref = reference_evaluate(q, evs, kb)  # the oracle over the new version gives the same rows
        assert {(m.mapping["h"].value, m.mapping["o"].value) for m in ref} == {(f"{EX}H1", "Alan")}
        assert len(ref) == 2  # (t=1, t=2) and (t=4, t=10)


def test_for_query_keeps_only_the_quads_graph_patterns_can_match(spark, tmp_path):
    (tmp_path / "q.rq").write_text(QUERY, encoding="utf-8")
    (tmp_path / "kb.nt").write_text(owners(("H1", "Alice")) + f"<{EX}H1> <{EX}age> \"4\" .\n", encoding="utf-8")
    keep = query_filter(parse_query(QUERY))
    summary = run_load(spark, JobOptions([str(tmp_path / "kb.nt")], str(tmp_path / "store"), graph=DB,
                                         keep=keep, for_query=str(tmp_path / "q.rq")))
    assert summary["loaded"] == 1 and summary["pruned"] == 1
    with KbStore(tmp_path / "store") as kb:
        assert [q.predicate.value for q in kb.store] == [f"{EX}owner"]


def test_cli_load_json_and_run_with_the_store(tmp_path):
    """`spaseq kb load --json` in its own process (stdout one JSON object, stderr empty), then
    `spaseq run --kb-store`."""
    store = tmp_path / "kb"
    proc = subprocess.run(
        [sys.executable, "-m", "spaseq.engine.cli", "kb", "load", str(SG / "kb.nt"), "--store", str(store),
         "--graph", "http://smartgrid.org/db", "--json", "--master", "local[1]"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # with --json: no progress, no JVM or Spark start-up lines, no logs
    summary = json.loads(proc.stdout)
    assert (summary["loaded"], summary["rejected"], summary["version"]) == (14, 0, 1)
    out = tmp_path / "rows.jsonl"
    args = ["run", str(SG / "query.rq"), "--stream", f"S1={SG / 'power.trig'}",
            "--stream", f"S2={SG / 'weather.trig'}", "--stream", f"S3={SG / 'storage.trig'}",
            "--format", "jsonl", "--output"]
    assert main([*args, str(out), "--kb-store", str(store)]) == 0
    assert main([*args, str(tmp_path / "file.jsonl"), "--kb", str(SG / "kb.nt")]) == 0
    rows = sorted(out.read_text().splitlines())
    assert len(rows) == 6 and rows == sorted((tmp_path / "file.jsonl").read_text().splitlines())


def test_missing_or_corrupt_store_is_a_user_error(tmp_path, capsys):
    args = ["run", str(SG / "query.rq"), "--stream", f"S1={SG / 'power.trig'}", "--kb-store"]
    assert main([*args, str(tmp_path / "nope")]) == 2
    assert "nope: no such knowledge-base store" in capsys.readouterr().err
    layout = StoreLayout.at(tmp_path / "bad")
    layout.initialise()
    (tmp_path / "bad" / "CURRENT").write_text("000007\n")
    assert main([*args, str(tmp_path / "bad")]) == 2
    assert "CURRENT names version 7, which is missing" in capsys.readouterr().err
    layout.version_dir(7).mkdir(parents=True)
    layout.oxigraph_dir(7).mkdir()
    (layout.oxigraph_dir(7) / "CURRENT").write_text("garbage")
    layout.write_meta(7, {"version": 7})
    assert main([*args, str(tmp_path / "bad")]) == 2
    assert "corrupt store: cannot open version 7" in capsys.readouterr().err
    assert main(["kb", "info", "--store", str(tmp_path / "nope")]) == 2
    assert main(["kb", "refresh", str(SG / "kb.nt"), "--store", str(tmp_path / "nope")]) == 2
    assert main(["kb", "load", str(tmp_path / "none.nt"), "--store", str(tmp_path / "new")]) == 2
    assert "none.nt: no such file or directory" in capsys.readouterr().err
    with pytest.raises(KnowledgeBaseError):
        Engine(kb=str(tmp_path / "nope"))


def test_relevance_keeps_paths_and_whole_graphs_for_zero_length_paths():
    q = parse_query(query_text(
        "A",
        f"""DEFINE GPM A ON U1 {{ ?h :power ?p .
              GRAPH <{DB}> {{ ?h :owner/:name ?o ; a :House }}
              OPTIONAL {{ GRAPH ?g {{ ?h :near* ?x }} }} }}""", streams=("u1",)))
    f = query_filter(q)
    pats = {(p.graph, p.subject, p.predicate, p.object) for p in f.patterns}
    rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    assert pats == {(DB, None, f"{EX}owner", None), (DB, None, f"{EX}name", None),
                    (DB, None, rdf_type, f"{EX}House"), (None, None, None, None)}
    assert f.keeps(next(iter(_quads(f'<{EX}x> <{EX}y> <{EX}z> <{EX}g> .'))))
    assert not query_filter(parse_query(QUERY)).keeps(next(iter(_quads(f'<{EX}H1> <{EX}age> "4" <{DB}> .'))))


def _quads(text: str):
    from pyoxigraph import RdfFormat, parse

    return parse(text, format=RdfFormat.N_QUADS)

