"""`spaseq kb load` of dumps that are not line-splittable (decision 76; ``engine/kb/whole.py``):
Turtle, TriG and RDF/XML files read whole by the job beside N-Triples lines (the shared
local[2] session of conftest), a syntax error refusing the load at its place with the store
unchanged, and a Turtle file under a line format's name refused before Spark starts."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest

from spaseq.engine.cli.main import main
from spaseq.engine.errors import KnowledgeBaseError
from spaseq.engine.kb.layout import StoreLayout
from spaseq.engine.kb.load_job import JobOptions, run_load
from spaseq.engine.kb.reader import KbStore
from spaseq.engine.kb.rejects import RejectLimit
from spaseq.engine.kb.whole import split_dumps
from tests.util import EX

DB = "http://ex.org/db"
TURTLE = f"""@prefix : <{EX}> .
:H1 :owner "Alice" ;
    :city [ :name "Lyon" ] .
:H2 :owner "Bob" .
"""
TRIG = f"""@prefix : <{EX}> .
:H3 :owner "Carol" .
:other {{ :H4 :owner "Dan" }}
"""
RDF_XML = f"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="{EX}">
  <rdf:Description rdf:about="{EX}H5"><ex:owner>Eve</ex:owner></rdf:Description>
</rdf:RDF>
"""


def test_split_dumps_reads_a_folder_s_whole_files_whole(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    for name in ("d/a.ttl", "d/b.nt", "d/sub/c.rdf.gz", "d/.hidden.ttl", "d/_part.ttl", "plain/e.nq"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    lines, whole = split_dumps([str(tmp_path / "d"), str(tmp_path / "plain"), str(tmp_path / "x.trig")])
    assert lines == [str(tmp_path / "d" / "b.nt"), str(tmp_path / "plain")]  # a folder of lines stays one input
    assert whole == [str(tmp_path / "d" / "a.ttl"), str(tmp_path / "d" / "sub" / "c.rdf.gz"), str(tmp_path / "x.trig")]


def test_turtle_trig_and_rdf_xml_are_loaded_whole_beside_lines(spark, tmp_path):
    folder = tmp_path / "dumps"
    folder.mkdir()
    (folder / "a.ttl").write_text(TURTLE)
    with gzip.open(folder / "b.trig.gz", "wt", encoding="utf-8") as out:
        out.write(TRIG)
    (folder / "c.rdf").write_text(RDF_XML)
    (folder / "d.nt").write_text(f'<{EX}H6> <{EX}owner> "Fay" .\nnot a triple\n<{EX}H1> <{EX}owner> "Alice" .\n')
    summary = run_load(spark, JobOptions([str(folder)], str(tmp_path / "store"), graph=DB,
                                         max_rejects=RejectLimit(count=1)))
    # 4 + 2 + 1 statements read whole, 2 of d.nt's lines (one a duplicate of a.ttl's), 1 bad line
    assert (summary["statements"], summary["loaded"], summary["rejected"]) == (9, 8, 1)
    assert summary["graphs"] == {DB: 7, f"{EX}other": 1}
    assert summary["lines"] == 4 + 3 + 4 + 3
    with KbStore(tmp_path / "store") as kb:
        rows = kb.store.query(f"SELECT ?o WHERE {{ GRAPH <{DB}> {{ ?h <{EX}owner> ?o }} }} ORDER BY ?o")
        assert [r["o"].value for r in rows] == ["Alice", "Bob", "Carol", "Eve", "Fay"]
        # the anonymous node, named by its order in its file, then skolemised: the same IRI each load
        (city,) = list(kb.store.query(f"SELECT ?c WHERE {{ GRAPH <{DB}> {{ <{EX}H1> <{EX}city> ?c }} }}"))
        assert city["c"].value.startswith("https://w3id.org/spaseq#genid-") and city["c"].value.endswith("-b1")


def test_a_syntax_error_in_a_whole_file_refuses_the_load(spark, tmp_path):
    store = tmp_path / "store"
    (tmp_path / "kb.nt").write_text(f'<{EX}H1> <{EX}owner> "Alice" .\n')
    (tmp_path / "bad.ttl").write_text(f"@prefix : <{EX}> .\n:H1 :owner \"Alice\" .\n:H2 :owner .\n:H3 :owner \"C\" .\n")
    with pytest.raises(KnowledgeBaseError) as caught:
        run_load(spark, JobOptions([str(tmp_path / "kb.nt"), str(tmp_path / "bad.ttl")], str(store), graph=DB))
    assert str(caught.value) == (f"{tmp_path / 'bad.ttl'}:3:12: Turtle syntax error: "
                                 ". is not a valid RDF object "
                                 "(a file read whole: nothing is loaded, the store is unchanged)")
    layout = StoreLayout.at(store)
    assert layout.current() is None and layout.versions() == []  # nothing built


def test_turtle_named_as_lines_is_refused_before_spark(tmp_path, capsys):
    (tmp_path / "kb.nt.gz").write_bytes(gzip.compress(b"# exported\n\n" + TURTLE.encode()))
    started = time.monotonic()
    assert main(["kb", "load", str(tmp_path / "kb.nt.gz"), "--store", str(tmp_path / "store")]) == 2
    assert time.monotonic() - started < 5  # no Spark
    assert capsys.readouterr().err == (
        f"{tmp_path / 'kb.nt.gz'}:3:1: a Turtle prefix line in a file read as N-Triples/N-Quads lines (its name "
        "says no other format): name it .ttl or .trig (optionally .gz) and it is read whole\n")
    assert not (tmp_path / "store").exists()
    assert Path(tmp_path / "kb.nt.gz").exists()
