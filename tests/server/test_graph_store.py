"""The SPARQL 1.1 Graph Store HTTP Protocol at ``/store`` against a real server (``--kb``,
``--data``, ``--token``) and real clients: each method's status codes, content negotiation,
bodies in every RDF format pyoxigraph reads, refusals that change nothing, the engine and
``/sparql`` seeing what was written, and a restart after ``kill -9`` on the same --data
directory holding the same KB. The read-only ``--kb-store`` case
is in test_kb.py, beside that server."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple, parse, serialize

from .conftest import SG_KB, Server, start_server

EX = "http://ex.org/"
SPASEQ = "https://w3id.org/spaseq#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
OWNERS = EX + "owners"
AUTH = {"Authorization": "Bearer s3cret"}
HTTP = httpx.Client(timeout=10)  # one client: a new one per request costs ~0.1 s (its TLS setup)
QUERY = f"""PREFIX : <{EX}>
SELECT ?h ?o WITHIN 100 SECONDS FROM STREAM S <{EX}s>
WHERE {{ SEQ(A) DEFINE GPM A ON S {{ ?h :alarm ?a . GRAPH <{OWNERS}> {{ ?h :owner ?o }} }} }}"""


class Running:
    """The module's server; the last test replaces it by restarts on the same --data."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.server = self.start()

    def start(self) -> Server:
        return start_server("--kb", SG_KB, "--data", str(self.data), "--token", "s3cret")

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    running = Running(tmp_path_factory.mktemp("gsp") / "data")
    yield running
    assert running.server.stop() == 0


def store(url: str, graph: str | None = None, default: bool = False) -> str:
    """``/store``, ``/store?graph=IRI`` or ``/store?default``."""
    if graph is not None:
        return f"{url}/store?graph={quote(graph, safe='')}" + ("&default" if default else "")
    return f"{url}/store?default" if default else f"{url}/store"


def kb_quads(url: str) -> set[Quad]:
    """The store's named graphs (the KB's, and CONSTRUCT matches' if any), by GET /store."""
    got = HTTP.get(store(url), headers={"Accept": "application/n-quads"})
    assert got.status_code == 200, got.text
    return {q for q in parse(got.content, format=RdfFormat.N_QUADS) if not isinstance(q.graph_name, DefaultGraph)}


def triples(text: bytes | str, fmt: RdfFormat = RdfFormat.TURTLE) -> set[Triple]:
    return {q.triple for q in parse(text.encode() if isinstance(text, str) else text, format=fmt)}


def owners_ttl(**owners: str) -> str:
    return "".join(f'<{EX}{h}> <{EX}owner> "{o}" .\n' for h, o in owners.items())


def get_graph(url: str, graph: str, accept: str = "text/turtle") -> httpx.Response:
    return HTTP.get(store(url, graph), headers={"Accept": accept})


def test_put_creates_then_replaces_post_adds_delete_removes(srv: Running) -> None:
    r = HTTP.put(store(srv.url, OWNERS), content=owners_ttl(H1="Alice", H2="Bob"),
                  headers={"Content-Type": "text/turtle", **AUTH})
    assert r.status_code == 201 and r.headers["location"] == f"/store?graph={quote(OWNERS, safe='')}"
    got = get_graph(srv.url, OWNERS)
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/turtle")
    assert triples(got.content) == triples(owners_ttl(H1="Alice", H2="Bob"))
    # PUT again replaces the graph: 204
    r = HTTP.put(store(srv.url, OWNERS), content=owners_ttl(H1="Alan"), headers={"Content-Type": "text/turtle", **AUTH})
    assert r.status_code == 204
    assert triples(get_graph(srv.url, OWNERS).content) == triples(owners_ttl(H1="Alan"))
    # POST adds: N-Triples, relative IRIs resolved against the graph's IRI
    r = HTTP.post(store(srv.url, OWNERS), content=b'<H3> <owner> "Carol" .\n',
                   headers={"Content-Type": "text/turtle", **AUTH})
    assert r.status_code == 204
    assert triples(get_graph(srv.url, OWNERS, "application/n-triples").content,
                   RdfFormat.N_TRIPLES) == triples(owners_ttl(H1="Alan", H3="Carol"))
    # the other graph formats, by Accept; HEAD is GET without the body
    xml = get_graph(srv.url, OWNERS, "application/rdf+xml")
    assert xml.headers["content-type"].startswith("application/rdf+xml")
    assert triples(xml.content, RdfFormat.RDF_XML) == triples(owners_ttl(H1="Alan", H3="Carol"))
    head = HTTP.head(store(srv.url, OWNERS), headers={"Accept": "application/n-triples"})
    assert head.status_code == 200 and head.content == b"" and head.headers["content-type"].startswith(
        "application/n-triples")
    assert get_graph(srv.url, OWNERS, "text/csv").status_code == 406
    # a new graph by POST (RDF/XML body): 201; DELETE: 204, then 404 for GET and DELETE
    body = serialize([Triple(NamedNode(EX + "a"), NamedNode(EX + "b"), Literal("c"))], format=RdfFormat.RDF_XML)
    r = HTTP.post(store(srv.url, EX + "tmp"), content=body, headers={"Content-Type": "application/rdf+xml", **AUTH})
    assert r.status_code == 201
    assert HTTP.delete(store(srv.url, EX + "tmp"), headers=AUTH).status_code == 204
    assert get_graph(srv.url, EX + "tmp").status_code == 404
    gone = HTTP.delete(store(srv.url, EX + "tmp"), headers=AUTH)
    assert gone.status_code == 404 and gone.json() == {"error": f"the knowledge base has no graph <{EX}tmp>"}
    # PUT with an empty body leaves an empty graph: it exists
    assert HTTP.put(store(srv.url, EX + "empty"), content=b"",
                     headers={"Content-Type": "text/turtle", **AUTH}).status_code == 201
    empty = get_graph(srv.url, EX + "empty")
    assert empty.status_code == 200 and empty.content.strip() == b""


def test_the_whole_store_and_the_default_graph(srv: Running) -> None:
    """No parameter: the dataset (TriG, N-Quads); POST adds a dataset's graphs. ?default: the
    materialised matches, read-only."""
    quads = [Quad(NamedNode(EX + "x"), NamedNode(EX + "p"), Literal("1"), NamedNode(EX + "g1")),
             Quad(NamedNode(EX + "y"), NamedNode(EX + "p"), Literal("2"), NamedNode(EX + "g2"))]
    r = HTTP.post(store(srv.url), content=serialize(quads, format=RdfFormat.N_QUADS),
                   headers={"Content-Type": "application/n-quads", **AUTH})
    assert r.status_code == 204, r.text
    everything = HTTP.get(store(srv.url))
    assert everything.headers["content-type"].startswith("application/trig")
    held = set(parse(everything.content, format=RdfFormat.TRIG))
    assert set(quads) <= held
    assert any(q.graph_name == NamedNode("http://smartgrid.org/db") for q in held)  # the --kb file's graph
    nquads = HTTP.get(store(srv.url), headers={"Accept": "application/n-quads"})
    assert set(parse(nquads.content, format=RdfFormat.N_QUADS)) == held
    for method in ("PUT", "POST", "DELETE"):
        r = HTTP.request(method, store(srv.url, default=True), content=b"<http://a> <http://b> <http://c> .",
                          headers={"Content-Type": "text/turtle", **AUTH})
        assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD" and "matches" in r.json()["error"]


def test_refusals_are_clear_and_change_nothing(srv: Running) -> None:
    before = kb_quads(srv.url)
    turtle = {"Content-Type": "text/turtle", **AUTH}
    cases = [
        (HTTP.put(store(srv.url, OWNERS), content=owners_ttl(H1="X"), headers={"Content-Type": "text/turtle"}),
         401, "Bearer"),
        (HTTP.put(store(srv.url, OWNERS), content=b'<http://a> <http://b> "ok" .\n<http://a> <http://b> "open .',
                   headers=turtle), 400, "2:"),
        (HTTP.put(store(srv.url, OWNERS), content=b"<http://g> { <http://a> <http://b> 1 . }",
                   headers={"Content-Type": "application/trig", **AUTH}), 400, "named graph"),
        (HTTP.post(store(srv.url), content=b"<http://a> <http://b> 1 .", headers=turtle), 400, "default graph"),
        (HTTP.put(store(srv.url, OWNERS), content=b"x", headers={"Content-Type": "text/csv", **AUTH}), 415, "text/csv"),
        (HTTP.put(store(srv.url, "not-an-iri"), content=b"", headers=turtle), 400, "not an absolute IRI"),
        (HTTP.get(store(srv.url, OWNERS, default=True)), 400, "not both"),
        (HTTP.delete(store(srv.url), headers=AUTH), 405, "?graph=IRI"),
    ]
    for response, status, said in cases:
        assert response.status_code == status, response.text
        assert said in response.json()["error"], response.text
    assert kb_quads(srv.url) == before


def test_the_engine_and_sparql_see_what_was_written(srv: Running) -> None:
    """A query joining the KB graph: a match once PUT wrote the owner, none once DELETE
    removed it; /sparql answers over the same graphs."""
    qid = HTTP.post(f"{srv.url}/queries", content=QUERY,
                     headers={"Content-Type": "application/sparql-query", **AUTH}).json()["id"]

    def alarm(t: int) -> None:
        r = HTTP.post(f"{srv.url}/events", params={"stream": EX + "s", "time": str(t)},
                       content=f"<{EX}H1> <{EX}alarm> {t} .".encode(), headers={"Content-Type": "text/turtle", **AUTH})
        assert r.status_code == 200, r.text

    assert HTTP.put(store(srv.url, OWNERS), content=owners_ttl(H1="Dora"),
                     headers={"Content-Type": "text/turtle", **AUTH}).status_code == 204
    alarm(1)
    assert HTTP.delete(store(srv.url, OWNERS), headers=AUTH).status_code == 204
    alarm(2)
    rows = HTTP.get(f"{srv.url}/queries/{qid}/matches").json()["results"]["bindings"]
    assert [(r["h"]["value"], r["o"]["value"]) for r in rows] == [(EX + "H1", "Dora")]
    assert HTTP.put(store(srv.url, OWNERS), content=owners_ttl(H1="Eve"),
                     headers={"Content-Type": "text/turtle", **AUTH}).status_code == 201
    asked = HTTP.get(f"{srv.url}/sparql", params={"query": f"SELECT ?o WHERE {{ GRAPH <{OWNERS}> {{ ?h ?p ?o }} }}"})
    assert [b["o"]["value"] for b in asked.json()["results"]["bindings"]] == ["Eve"]
    # ?default: the materialised matches, as /sparql's default graph
    default = HTTP.get(store(srv.url, default=True), headers={"Accept": "application/n-triples"})
    assert default.status_code == 200
    match = Triple(NamedNode(f"urn:spaseq:query:{qid}#match-1"), NamedNode(RDF_TYPE), NamedNode(SPASEQ + "Match"))
    assert match in triples(default.content, RdfFormat.N_TRIPLES)


def test_a_restart_on_the_same_data_has_the_same_kb(srv: Running) -> None:
    """The writes are journaled as SPARQL Updates: after kill -9 the journal gives them back
    (after a clean stop the checkpoint does, as for every Update: test_kb.py)."""
    kb = kb_quads(srv.url)
    assert any(q.graph_name == NamedNode(OWNERS) for q in kb)  # written by the tests above
    srv.server.process.send_signal(signal.SIGKILL)
    assert srv.server.stop() == -signal.SIGKILL
    srv.server = srv.start()
    assert kb_quads(srv.url) == kb
    assert HTTP.get(store(srv.url, EX + "empty")).status_code == 200  # the empty graph too
