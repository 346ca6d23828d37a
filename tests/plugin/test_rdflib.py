"""The rdflib query processor (plugin/): real rdflib Datasets, the real CLI, oxrdflib's store."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rdflib import BNode, Dataset, Graph, Literal, URIRef, Variable
from rdflib.query import Result

from spaseq.engine.cli import main as cli
from spaseq.engine.errors import QueryError, StreamError, UsageError
from spaseq.engine.vocab import SPASEQ_NS
from spaseq.plugin import load_streams
from spaseq.plugin.result import MatchBindings, SpaseqResult
from tests.output.writers_oracle import jsonl_record

ROOT = Path(__file__).resolve().parents[2]
SG = ROOT / "fixtures" / "smartgrid"
SG_STREAMS = {
    "S1": ("power.trig", "http://smartgrid.org/mainSource"),
    "S2": ("weather.trig", "http://smartgrid.org/weather"),
    "S3": ("storage.trig", "http://smartgrid.org/storageSource"),
}
SG_QUERY = (SG / "query.rq").read_text(encoding="utf-8")
STREAM = URIRef(SPASEQ_NS + "stream")
XSD = "http://www.w3.org/2001/XMLSchema#"

TRADES = """
@prefix : <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:e1 prov:generatedAtTime 1 .  :e1 { :a :kind "a" ; :v 5 ; :label "cinq"@fr ; :w "14.0"^^xsd:double . }
:e2 prov:generatedAtTime 2 .  :e2 { :a :kind "a" ; :v 1 ; :label "one"@en ; :w "1.50"^^xsd:double . }
:e3 prov:generatedAtTime "3.0"^^xsd:decimal .  :e3 { :b :kind "b" ; :v 3 . }
:e4 prov:generatedAtTime 4 .  :e4 { :b :kind "b" ; :v 7 . }
"""
SEQ_AB = """PREFIX : <http://ex.org/>
SELECT ?x ?y ?label ?w
FROM STREAM S <http://ex.org/u>
WHERE {
  SEQ (A; B)
  DEFINE GPM A ON S { ?s :kind "a" ; :v ?x ; :label ?label ; :w ?w }
  DEFINE GPM B ON S { ?t :kind "b" ; :v ?y . FILTER (?y > ?x) }
}"""


def smartgrid(store: str = "default") -> Dataset:
    """The smart-grid example as one Dataset: the CLI's three replay files loaded with
    ``load_streams`` (each event marked with its stream), and kb.nt as the named graph the
    query's GRAPH clause reads."""
    ds = load_streams(Dataset(store=store), {iri: SG / file for file, iri in SG_STREAMS.values()})
    ds.graph(URIRef("http://smartgrid.org/db")).parse(SG / "kb.nt", format="nt")
    return ds


def cli_output(tmp_path_factory, fmt: str) -> str:
    """What ``spaseq run --format FMT`` writes for the smart-grid example."""
    out = tmp_path_factory.mktemp("cli") / f"out.{fmt}"
    args = ["run", str(SG / "query.rq"), "--kb", str(SG / "kb.nt"), "--format", fmt, "--output", str(out)]
    for name, (file, _) in SG_STREAMS.items():
        args += ["--stream", f"{name}={SG / file}"]
    assert cli.main(args) == 0
    return out.read_text(encoding="utf-8")


def canonical(record: dict) -> str:
    """A jsonl record as a sortable string."""
    return json.dumps(record, sort_keys=True)


def trades(extra: str = "") -> Dataset:
    ds = Dataset()
    ds.parse(data=TRADES + extra, format="trig")
    return ds


@pytest.fixture(scope="module")
def cli_jsonl(tmp_path_factory) -> list[dict]:
    """What ``spaseq run --format jsonl`` writes for the smart-grid example."""
    return [json.loads(line) for line in cli_output(tmp_path_factory, "jsonl").splitlines()]


@pytest.fixture(scope="module")
def sg_result() -> Result:
    return smartgrid().query(SG_QUERY, processor="spaseq")


# ---------------------------------------------------------------- equal to `spaseq run`


def test_processor_equals_cli_jsonl(sg_result, cli_jsonl):
    assert len(cli_jsonl) == 6  # the example's hand-checked matches (fixtures/smartgrid/expected.md)
    got = [json.loads(line) for line in sg_result.serialize(format="jsonl").decode().splitlines()]
    # Same matches in the same completion order; matches completed by one event with the same
    # start and events (here: two KB neighbours) may come in either order, as in the engine.
    assert [(r["time"], r["start"], r["events"]) for r in got] == \
        [(r["time"], r["start"], r["events"]) for r in cli_jsonl]
    assert sorted(map(canonical, got)) == sorted(map(canonical, cli_jsonl))


def test_rows_are_the_cli_bindings_as_rdflib_terms(sg_result, cli_jsonl):
    assert sg_result.vars == [Variable(v) for v in ("house", "fr1", "fr2", "house2", "city", "oname")]
    assert len(sg_result) == len(cli_jsonl)
    records = sorted(cli_jsonl, key=canonical)
    pairs = sorted(zip(sg_result, sg_result.bindings, strict=True),
                   key=lambda rb: canonical(jsonl_record(rb[1].row)))
    for (row, binding), record in zip(pairs, records, strict=True):
        assert (binding.time, binding.start) == (record["time"], record["start"])
        for var, term in record["bindings"].items():
            if term["type"] == "uri":
                assert row[var] == URIRef(term["value"])
            else:
                expected = Literal(term["value"], datatype=URIRef(term["datatype"])) if "datatype" in term \
                    else Literal(term["value"])
                assert row[var] == expected and str(row[var]) == term["value"]


def test_reference_engine_gives_the_same_result(sg_result):
    ref = smartgrid().query(SG_QUERY, processor="spaseq", engine="reference")
    assert_same_matches(ref, sg_result)


def assert_same_matches(a: Result, b: Result) -> None:
    """Same matches in the same completion order, up to the order of matches completed by one
    event with the same start and events (their order is not specified)."""
    assert [jsonl_record(m.row)["events"] for m in a.bindings] == [jsonl_record(m.row)["events"] for m in b.bindings]
    assert sorted(canonical(jsonl_record(m.row)) for m in a.bindings) == \
        sorted(canonical(jsonl_record(m.row)) for m in b.bindings)


def test_match_events_name_atoms_streams_and_graphs(sg_result):
    first = sg_result.bindings[0]
    assert isinstance(first, MatchBindings)
    assert [(e.atom, str(e.stream), e.time, str(e.graph)) for e in first.events] == [
        ("A", "http://smartgrid.org/mainSource", 1793527200.0, "http://smartgrid.org/event/power/1"),
        ("B", "http://smartgrid.org/weather", 1793527320.0, "http://smartgrid.org/event/weather/1"),
        ("C", "http://smartgrid.org/storageSource", 1793527380.0, "http://smartgrid.org/event/storage/1"),
    ]


# ---------------------------------------------------------------- the SELECT result


@pytest.mark.parametrize("fmt", ["json", "xml"])
def test_json_and_xml_parse_back_to_the_same_bindings(sg_result, fmt):
    back = Result.parse(io.BytesIO(sg_result.serialize(format=fmt)), format=fmt)
    assert back.vars == sg_result.vars
    assert [dict(b) for b in back.bindings] == [dict(b) for b in sg_result.bindings]


def test_csv_and_txt(sg_result):
    back = Result.parse(io.BytesIO(sg_result.serialize(format="csv")), format="csv")
    assert [[str(v) for v in row] for row in back] == [[str(v) for v in row] for row in sg_result]
    txt = sg_result.serialize(format="txt").decode()
    assert txt.split("\n")[0].split() == "house | fr1 | fr2 | house2 | city | oname".split()
    assert txt.count("Alice") == 2


def test_tsv_is_the_cli_tsv_and_parses_back(sg_result, tmp_path_factory):
    """The same writer as ``spaseq run --format tsv`` (rows in the same order up to matches
    completed together), and rdflib's own TSV parser reads it back to the same bindings."""
    tsv = sg_result.serialize(format="tsv").decode()
    cli_lines = cli_output(tmp_path_factory, "tsv").splitlines()
    lines = tsv.splitlines()
    assert lines[0] == cli_lines[0] == "?house\t?fr1\t?fr2\t?house2\t?city\t?oname"
    assert sorted(lines[1:]) == sorted(cli_lines[1:]) and len(lines) == 7
    back = Result.parse(io.BytesIO(tsv.encode()), format="tsv")
    assert back.vars == sg_result.vars
    assert [dict(b) for b in back.bindings] == [dict(b) for b in sg_result.bindings]
    assert sg_result.serialize(format="text/tab-separated-values").decode() == tsv


def test_tsv_serializes_any_rdflib_select_result():
    """Not only processor='spaseq': rdflib's own SELECT results, unbound cells, language tags
    and a tab inside a literal."""
    res = Dataset().query('SELECT ?x ?y WHERE { VALUES (?x ?y) { (<http://ex.org/a> "t\\tab"@en)'
                          ' (1 UNDEF) } }')
    back = Result.parse(io.BytesIO(res.serialize(format="tsv")), format="tsv")
    assert [dict(b) for b in back.bindings] == [dict(b) for b in res.bindings]
    assert res.serialize(format="tsv").decode().splitlines()[1] == '<http://ex.org/a>\t"t\\tab"@en'
    with pytest.raises(Exception, match="tsv serializes SELECT"):
        Dataset().query("ASK {}").serialize(format="tsv")


def test_load_streams_tags_each_event_with_its_stream_and_time(tmp_path):
    ds = smartgrid()
    power = URIRef("http://smartgrid.org/event/power/1")
    assert set(ds.default_graph.predicate_objects(power)) == {
        (STREAM, URIRef("http://smartgrid.org/mainSource")),
        (URIRef("http://www.w3.org/ns/prov#generatedAtTime"),  # as the file stamped it
         Literal("2026-11-01T10:00:00Z", datatype=URIRef(XSD + "dateTime"), normalize=False)),
    }
    assert (URIRef("http://smartgrid.org/ns#H1"), URIRef("http://smartgrid.org/ns#loc"),
            URIRef("http://smartgrid.org/ns#L1")) in ds.graph(power)


def test_load_streams_changes_nothing_when_a_file_is_bad(tmp_path):
    bad = tmp_path / "bad.trig"
    bad.write_text("@prefix : <http://ex.org/> .\n:e1 { :a :b 1 . }\n:e2 { :a :b \"open }\n")
    ds = Dataset()
    with pytest.raises(StreamError) as caught:
        load_streams(ds, {"http://ex.org/u": SG / "power.trig", "http://ex.org/v": bad})
    assert caught.value.location.file == str(bad) and caught.value.location.line == 3
    assert len(ds) == 0 and list(ds.graphs()) == [ds.default_graph]
    load_streams(ds, {"http://ex.org/u": SG / "power.trig"})
    before = len(list(ds.quads()))
    with pytest.raises(StreamError, match="already an event of the Dataset"):
        load_streams(ds, {"http://ex.org/w": SG / "power.trig"})
    assert len(list(ds.quads())) == before
    copy = tmp_path / "copy.trig"
    copy.write_bytes((SG / "power.trig").read_bytes())
    with pytest.raises(StreamError, match=f"already an event of {SG / 'power.trig'}"):
        load_streams(Dataset(), {"http://ex.org/u": SG / "power.trig", "http://ex.org/w": copy})


def test_with_time_adds_time_and_start_variables():
    """The smart-grid events are stamped with xsd:dateTime: so are the rows' times
    (decision 43); ``time_format="epoch"`` gives xsd:decimal seconds."""
    res = smartgrid().query(SG_QUERY, processor="spaseq", with_time=True)
    assert res.vars[:2] == [Variable("_time"), Variable("_start")]
    first = next(iter(res))
    assert (str(first["_time"]), first["_time"].datatype) == ("2026-11-01T10:03:00Z", URIRef(XSD + "dateTime"))
    assert str(first["_start"]) == "2026-11-01T10:00:00Z"
    back = json.loads(res.serialize(format="json"))
    assert back["head"]["vars"][:2] == ["_time", "_start"]
    assert back["results"]["bindings"][0]["_time"]["datatype"] == XSD + "dateTime"
    epoch = next(iter(smartgrid().query(SG_QUERY, processor="spaseq", with_time=True,
                                        time_format="epoch")))
    assert epoch["_time"] == Literal("1793527380", datatype=URIRef(XSD + "decimal"))
    assert epoch["_start"].toPython() == 1793527200


def test_times_follow_the_input_form_in_rows_and_jsonl():
    """Numerically stamped events give xsd:decimal times (and jsonl no time_iso); dateTime
    ones give xsd:dateTime, and jsonl's time_iso/start_iso beside the numbers."""
    numbers = next(iter(trades().query(SEQ_AB, processor="spaseq", with_time=True)))
    assert numbers["_time"].datatype == URIRef(XSD + "decimal")
    forced = next(iter(trades().query(SEQ_AB, processor="spaseq", with_time=True, time_format="dateTime")))
    assert str(forced["_time"]) == "1970-01-01T00:00:03Z"
    jsonl = [json.loads(line) for line in smartgrid().query(
        SG_QUERY, processor="spaseq", result="spaseq").serialize(format="jsonl").decode().splitlines()]
    assert (jsonl[0]["time"], jsonl[0]["time_iso"], jsonl[0]["start_iso"]) == (
        1793527380, "2026-11-01T10:03:00Z", "2026-11-01T10:00:00Z")
    plain = trades().query(SEQ_AB, processor="spaseq", result="spaseq").serialize(format="jsonl")
    assert b"time_iso" not in plain
    with pytest.raises(UsageError, match="unknown time format"):
        trades().query(SEQ_AB, processor="spaseq", time_format="iso")


def test_result_spaseq_plugin_gives_matches():
    res = trades().query(SEQ_AB, processor="spaseq", result="spaseq")
    assert isinstance(res, SpaseqResult)
    assert [(m.start, m.time, m[Variable("x")].toPython()) for m in res.matches] == [(2.0, 3.0, 1), (1.0, 4.0, 5)]


def test_terms_keep_datatype_language_and_spelling():
    rows = list(trades().query(SEQ_AB, processor="spaseq"))
    # completion order: A@2 then B@3 completes first (3 > 1), A@1 needs B@4 (7 > 5)
    assert [(r.x.toPython(), r.y.toPython()) for r in rows] == [(1, 3), (5, 7)]
    assert rows[0].label == Literal("one", lang="en") and rows[1].label == Literal("cinq", lang="fr")
    assert str(rows[1].w) == "14.0" and rows[1].w.datatype == URIRef(XSD + "double")


# ---------------------------------------------------------------- the stream convention


def test_single_stream_query_needs_no_stream_triples_and_kb_graphs_are_not_events():
    ds = trades(':kb { :b :kind "b" ; :v 100 . }')  # untimestamped: KB, not an event on the stream
    assert len(ds.query(SEQ_AB, processor="spaseq")) == 2


def test_graph_clause_without_such_graph_warns_and_matches_nothing():
    text = SEQ_AB.replace('FILTER (?y > ?x) }', 'FILTER (?y > ?x) GRAPH :kb { ?t :v ?y } }')
    with pytest.warns(UserWarning, match=r"GRAPH <http://ex.org/kb> names a graph the Dataset does not have"):
        assert len(trades().query(text, processor="spaseq")) == 0
    rows = trades(':kb { :b :v 7 . }').query(text, processor="spaseq")
    assert [(r.x.toPython(), r.y.toPython()) for r in rows] == [(5, 7), (1, 7)]  # B@3 fails the KB


def test_events_of_other_streams_are_ignored():
    extra = """@prefix spaseq: <https://w3id.org/spaseq#> .
    :e3 spaseq:stream :elsewhere .  :e4 spaseq:stream :u .
    :e1 spaseq:stream :u . :e2 spaseq:stream :u ."""
    rows = list(trades(extra).query(SEQ_AB, processor="spaseq"))
    assert [(r.x.toPython(), r.y.toPython()) for r in rows] == [(5, 7), (1, 7)]  # same end: by start


def test_several_streams_need_stream_triples():
    two = SEQ_AB.replace("FROM STREAM S <http://ex.org/u>",
                         "FROM STREAM S <http://ex.org/u>\nFROM STREAM T <http://ex.org/v>")
    with pytest.raises(StreamError, match=r"event <http://ex.org/e\d> has no stream.*spaseq#stream"):
        trades().query(two, processor="spaseq")


def test_bad_and_conflicting_timestamps_are_errors_naming_the_graph():
    bad = trades(':e9 prov:generatedAtTime "noon" . :e9 { :x :y :z . }')
    with pytest.raises(StreamError, match=r"event <http://ex.org/e9> has a timestamp that is not a time"):
        bad.query(SEQ_AB, processor="spaseq")
    two = trades(":e1 prov:generatedAtTime 7 .")
    with pytest.raises(StreamError, match=r"event <http://ex.org/e1> has two different timestamps"):
        two.query(SEQ_AB, processor="spaseq")


def test_blank_node_graph_names_are_events_too():
    ds = trades()
    g = BNode()
    ds.graph(g).add((URIRef("http://ex.org/b2"), URIRef("http://ex.org/kind"), Literal("b")))
    ds.graph(g).add((URIRef("http://ex.org/b2"), URIRef("http://ex.org/v"), Literal(2)))
    ds.add((g, URIRef("http://www.w3.org/ns/prov#generatedAtTime"), Literal(2.5)))
    res = ds.query(SEQ_AB, processor="spaseq")
    assert [(b.time, b[Variable("y")].toPython()) for b in res.bindings] == [(2.5, 2), (4.0, 7)]
    assert res.bindings[0].events[1].graph == g


# ---------------------------------------------------------------- initNs, initBindings, options


def test_init_ns_predeclares_prefixes():
    text = SEQ_AB.replace("PREFIX : <http://ex.org/>\n", "").replace(" :", " ex:")
    assert "ex:kind" in text and "PREFIX" not in text
    res = trades().query(text, processor="spaseq", initNs={"ex": "http://ex.org/"})
    assert [b[Variable("x")].toPython() for b in res.bindings] == [1, 5]


def test_init_bindings_are_an_initial_context_not_a_row_filter():
    # With ?y = 7 from the start, A@2 (x=1) skips B@3 (v=3 does not agree) and takes B@4; a
    # filter applied to the rows afterwards would have lost that match instead.
    res = trades().query(SEQ_AB, processor="spaseq", initBindings={"y": Literal(7)})
    assert [(b.start, b.time, b[Variable("x")].toPython(), b[Variable("y")].toPython())
            for b in res.bindings] == [(1.0, 4.0, 5, 7), (2.0, 4.0, 1, 7)]


def test_init_bindings_reject_blank_nodes():
    with pytest.raises(UsageError, match="blank node"):
        trades().query(SEQ_AB, processor="spaseq", initBindings={"y": BNode()})


def test_query_errors_name_line_and_column():
    broken = SEQ_AB.replace("SEQ (A; B)", "SEQ (A; B")
    with pytest.raises(QueryError) as info:
        trades().query(broken, processor="spaseq", file="alerts.rq")
    assert re.match(r"alerts\.rq:6:\d+: ", str(info.value))
    assert info.value.__cause__ is None  # no lark exception chained to the user's error
    with pytest.raises(QueryError, match=r"<query>:\d+:\d+: .*prefix 'nope:'"):
        trades().query(SEQ_AB.replace(":kind \"b\"", "nope:kind \"b\""), processor="spaseq")


def test_unknown_options_and_plain_graphs_are_refused():
    with pytest.raises(UsageError, match="no option speed"):
        trades().query(SEQ_AB, processor="spaseq", speed=3)
    with pytest.raises(UsageError, match="Dataset"):
        Graph().query(SEQ_AB, processor="spaseq")


# ---------------------------------------------------------------- installation and oxrdflib


def test_entry_points_work_in_a_fresh_interpreter_with_no_registration_code():
    code = (
        "from rdflib import Dataset\n"
        "ds = Dataset()\n"
        f"ds.parse(data={TRADES!r}, format='trig')\n"
        f"r = ds.query({SEQ_AB!r}, processor='spaseq')\n"
        "print([(str(x.x), str(x.y)) for x in r], [str(b.time) for b in r.bindings])\n"
        "print(len(r.serialize(format='jsonl').decode().splitlines()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    # exact Decimals, read by the core: "3.0" is 3, as a replay file's would be (decision 57)
    assert out.stdout.splitlines() == ["[('1', '3'), ('5', '7')] ['3', '4']", "2"]


def test_readme_example_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- rdflib-example[^>]*-->\n```python\n(.*?)```", readme, re.S)
    assert block is not None
    out = subprocess.run([sys.executable, "-c", block.group(1)], capture_output=True, text=True,
                         check=True, cwd="/")
    assert out.stdout.splitlines()[0] == "1 2 http://ex.org/ACME 10 12 http://ex.org/Tech"
    assert out.stdout.splitlines()[1:3] == ["stock,p1,p2,sector", "http://ex.org/ACME,10,12,http://ex.org/Tech"]


def test_readme_load_streams_example_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- rdflib-load-example[^>]*-->\n```python\n(.*?)```", readme, re.S)
    assert block is not None
    out = subprocess.run([sys.executable, "-c", block.group(1)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.splitlines() == ["6 matches", "?house\t?fr1\t?fr2\t?house2\t?city\t?oname"]


def test_oxrdflib_store_needs_use_store_provided_false(sg_result):
    pytest.importorskip("oxrdflib")
    ds = smartgrid(store="Oxigraph")
    with pytest.raises(SyntaxError):  # Oxigraph answers the query itself and does not know SEQ
        ds.query(SG_QUERY, processor="spaseq")
    res = ds.query(SG_QUERY, processor="spaseq", use_store_provided=False)
    assert len(res) == 6
    assert_same_matches(res, sg_result)



def test_events_that_last_from_a_dataset_and_back():
    """Decision 71 from rdflib: ``load_streams`` keeps each event's interval
    (prov:startedAtTime/endedAtTime), the processor reads it back and plans the query for
    events that last (program P's fire derives the chapter's [65, 80]); a Dataset's interval
    errors are the replay files', naming the graph."""
    cera = ROOT / "fixtures" / "cera"
    ds = load_streams(Dataset(), {"http://example.org/sensors": cera / "chapter.trig"})
    prov = "http://www.w3.org/ns/prov#"
    e3 = URIRef("http://example.org/sensors#e3")
    assert {p.removeprefix(prov): o.toPython() for p, o in ds.default_graph.predicate_objects(e3)
            if p.startswith(prov)} == {"generatedAtTime": 80, "startedAtTime": 70, "endedAtTime": 80}
    result = ds.query((cera / "fire.rq").read_text(encoding="utf-8"), processor="spaseq")
    assert [(b.start, b.time, str(b[Variable("area")])) for b in result.bindings] == [
        (65, 80, "http://example.org/sensors#a")]
    for extra, message in [(":e9 prov:startedAtTime 5 . :e9 { :x :y :z . }", "has a prov:startedAtTime but no end"),
                           (":e9 prov:startedAtTime 5 ; prov:endedAtTime 4 . :e9 { :x :y :z . }", "starts"),
                           (":e1 prov:endedAtTime 3 .", "has two different ends"),
                           (':e3 prov:startedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .', "different kinds")]:
        with pytest.raises(StreamError, match=f"event <http://ex.org/e[139]> .*{message}"):
            trades(extra).query(SEQ_AB, processor="spaseq")
