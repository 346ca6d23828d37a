"""Issue 26's constructs (LATENESS, head negation, quantifiers on a GPM and on a group, the
selection and consumption policies) through every way in: `spaseq run`, the Python API (fed
out of order within the lateness), the rdflib processor, a composed query reading the query's
output, and `spaseq serve` (batches out of order within the lateness). Each gives the
reference evaluator's matches on the sorted stream, as (start, end) pairs."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from spaseq.engine import reference
from spaseq.engine.api import Engine
from spaseq.engine.language.query import parse_query
from tests.util import EX, QUERY_PREFIXES, ev, query_text

from .conftest import ROOT, start_server, trig

S = EX + "s"

#: kind, value, time: a little stream of readings (a = alarm, b = burst, c = check)
STREAM = [("a", 1, 1), ("b", 5, 2), ("b", 7, 3), ("c", 2, 4), ("a", 3, 5), ("b", 9, 6),
          ("b", 4, 7), ("b", 8, 8), ("c", 1, 9), ("a", 2, 11), ("c", 6, 12)]

DEFINES = ("DEFINE GPM A ON S { ?a :kind :a ; :v ?va } "
           "DEFINE GPM B ON S { ?b :kind :b ; :v ?vb } "
           "DEFINE GPM C ON S { ?c :kind :c ; :v ?vc }")

CONSTRUCTS = {
    "lateness": "SEQ(A ; B ; C) WITHIN 6 SECONDS LATENESS 3 SECONDS",
    "head negation": "SEQ(C! ; A ; B) WITHIN 4 SECONDS",
    "bounded quantifier": "SEQ(A ; B{2,3} , C) WITHIN 10 SECONDS",
    "iterated group": "SEQ(A ; (B | C){2,3}) WITHIN 10 SECONDS",
    "selection and consumption": "SEQ(A : B : C) WITHIN 10 SECONDS SELECTION RECENT CONSUMPTION MATCHED",
    "latest": "SEQ(A : C) WITHIN 10 SECONDS SELECTION LATEST",
}


def _text(construct: str) -> str:
    seq, within = CONSTRUCTS[construct].removeprefix("SEQ(").split(") WITHIN ", 1)
    return query_text(seq, DEFINES, within=within, streams=("s",))


def _events():
    return [ev("s", t, f":e{i} :kind :{k} ; :v {v} .", seq=i, name=f"e{i}")
            for i, (k, v, t) in enumerate(STREAM)]


def _disordered(events):
    """The stream with each pair of neighbours swapped: out of order by at most 2 s."""
    out = list(events)
    for i in range(0, len(out) - 1, 2):
        out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _expected(construct: str) -> list[tuple[Decimal, Decimal]]:
    got = [(m.start, m.time) for m in reference.evaluate(parse_query(_text(construct)), _events())]
    assert got, construct  # the stream must give the construct something to find
    return sorted(got)


@pytest.fixture(scope="module")
def stream_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "s.trig"
    path.write_bytes(trig(_events()))
    return path


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_spaseq_run(construct: str, stream_file: Path, tmp_path: Path) -> None:
    query = tmp_path / "q.rq"
    query.write_text(_text(construct))
    out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(query),
                          "--stream", f"S={stream_file}", "--format", "jsonl"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert sorted((Decimal(str(r["start"])), Decimal(str(r["time"]))) for r in rows) == _expected(construct)


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_python_api_and_composition(construct: str) -> None:
    """Pushed out of order by up to 2 s under an engine-wide LATENESS of 3 s (a query's own
    wins), and read back by a query over its output stream: both see the sorted matches."""
    engine = Engine(lateness="3")
    handle = engine.register(_text(construct), output=EX + "out")
    reader = engine.register(f"""{QUERY_PREFIXES}PREFIX spaseq: <https://w3id.org/spaseq#>
SELECT ?t WITHIN 100 SECONDS FROM STREAM O <{EX}out>
WHERE {{ SEQ(M) DEFINE GPM M ON O {{ ?m a spaseq:Match ; spaseq:time ?t }} }}""")
    for e in _disordered(_events()):
        engine.push_event(e)
    engine.close()
    matches = list(handle.matches())
    assert sorted((m.start, m.time) for m in matches) == _expected(construct)
    assert handle.late == 0
    assert sorted(Decimal(dict(m.bindings)["t"].value) for m in reader.matches()) == \
        sorted(end for _, end in _expected(construct))


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_rdflib_processor(construct: str, stream_file: Path) -> None:
    rdflib = pytest.importorskip("rdflib")
    from spaseq.plugin.dataset_streams import load_streams

    ds = load_streams(rdflib.Dataset(), {S: stream_file})
    rows = ds.query(_text(construct), processor="spaseq", with_time=True)
    got = sorted((Decimal(str(r["_start"])), Decimal(str(r["_time"]))) for r in rows)
    assert got == _expected(construct)


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_spaseq_serve(construct: str) -> None:
    """Registered over HTTP, fed one event per batch out of order within the lateness (the
    server's --lateness for queries without their own): nothing is late, and the matches
    (ndjson) are the sorted stream's. A server each: a heartbeat's promise is engine-wide."""
    server = start_server("--lateness", "3s")
    try:
        reg = httpx.post(f"{server.url}/queries", content=_text(construct),
                         headers={"Content-Type": "application/sparql-query"})
        assert reg.status_code == 201, reg.text
        qid = reg.json()["id"]
        for e in _disordered(_events()):
            r = httpx.post(f"{server.url}/events", params={"stream": S}, content=trig([e]),
                           headers={"Content-Type": "application/trig"})
            assert r.status_code == 200 and "late" not in r.json(), r.text
        assert httpx.post(f"{server.url}/heartbeat", params={"time": "1000"}).status_code in (200, 204)
        expected = _expected(construct)
        lines: list[str] = []
        with httpx.stream("GET", f"{server.url}/queries/{qid}/matches",
                          headers={"Accept": "application/x-ndjson"}, timeout=10) as r:
            for line in r.iter_lines():
                lines.append(line)
                if len(lines) == len(expected):
                    break
        got = sorted((Decimal(str(json.loads(line)["start"])), Decimal(str(json.loads(line)["time"])))
                     for line in lines)
        assert got == expected
        assert httpx.get(f"{server.url}/queries/{qid}").json()["results"] == len(expected)
    finally:
        assert server.stop() == 0
