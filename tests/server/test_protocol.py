"""The W3C SPARQL 1.1 Protocol tests (rdf-tests, ``sparql/sparql11/protocol/manifest.ttl``)
as pytest cases against a real server's ``/sparql``, one function per manifest entry, named
after it (the entry's ``mf:name`` in the docstring).

The manifest's graphs ``data0.rdf`` .. ``data3.rdf`` are loaded as the KB's named graphs
(``--kb GRAPH=FILE``), each saying it is a ``foaf:Document`` (what the tests ask of them). The
requests are the manifest's, with the path ``/sparql`` (not ``/sparql/``). The ``bad_update_*``
entries are here: a request the protocol calls bad gets a 4xx; so are ``update_post_form``,
``update_post_direct`` and the ``update_dataset_*`` entries (the dataset given as
``using-graph-uri``/``using-named-graph-uri``, which the server writes into the update as USING
clauses). Their updates are the manifest's in substance, checked by ASK queries as there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote
from xml.etree import ElementTree

import httpx
import pytest
from pyoxigraph import RdfFormat, parse

from .conftest import Server, start_server

DATA = "http://kasei.us/2009/09/sparql/data/"
DATA0, DATA1, DATA2, DATA3 = (f"{DATA}data{i}.rdf" for i in range(4))
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
DIRECT = {"Content-Type": "application/sparql-query"}
TWO_DEFAULT = f"ASK {{ <{DATA1}> a ?type . <{DATA2}> a ?type . }}"
TWO_NAMED = f"ASK {{ GRAPH ?g1 {{ <{DATA1}> a ?type }} GRAPH ?g2 {{ <{DATA2}> a ?type }} }}"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder: Path = tmp_path_factory.mktemp("protocol")
    kb = []
    for graph in (DATA0, DATA1, DATA2, DATA3):
        path = folder / graph.rsplit("/", 1)[1].replace(".rdf", ".nt")
        path.write_text(f"<{graph}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://xmlns.com/foaf/0.1/Document> .\n", encoding="utf-8")
        kb += ["--kb", f"{graph}={path}"]
    srv: Server = start_server(*kb)
    yield srv.url + "/sparql"
    assert srv.stop() == 0


def boolean(r: httpx.Response) -> bool:
    """The boolean of an ASK answer in SPARQL results JSON or XML (the protocol allows both)."""
    assert 200 <= r.status_code < 400, r.text
    media = r.headers["content-type"].split(";")[0].strip()
    if media in ("application/sparql-results+json", "application/json"):
        return json.loads(r.content)["boolean"]
    assert media in ("application/sparql-results+xml", "application/xml"), media
    node = ElementTree.fromstring(r.content).find("{http://www.w3.org/2005/sparql-results#}boolean")
    assert node is not None
    return node.text == "true"


def is_4xx(r: httpx.Response) -> bool:
    return 400 <= r.status_code < 500


# ------------------------------------------------------------------ queries


def test_query_post_form(url: str) -> None:
    """query via URL-encoded POST"""
    r = httpx.post(url, params={"default-graph-uri": DATA0}, content="query=ASK%20%7B%7D", headers=FORM)
    assert boolean(r) is True


def test_query_dataset_default_graphs_get(url: str) -> None:
    """GET query with protocol-specified default graph"""
    r = httpx.get(url, params=[("query", TWO_DEFAULT), ("default-graph-uri", DATA1),
                               ("default-graph-uri", DATA2)])
    assert boolean(r) is True


def test_query_dataset_default_graphs_post(url: str) -> None:
    """POST query with protocol-specified default graphs"""
    r = httpx.post(url, params=[("default-graph-uri", DATA1), ("default-graph-uri", DATA2)],
                   content=TWO_DEFAULT, headers=DIRECT)
    assert boolean(r) is True


def test_query_dataset_named_graphs_post(url: str) -> None:
    """POST query with protocol-specified named graphs"""
    r = httpx.post(url, params=[("named-graph-uri", DATA1), ("named-graph-uri", DATA2)],
                   content=TWO_NAMED, headers=DIRECT)
    assert boolean(r) is True


def test_query_dataset_named_graphs_get(url: str) -> None:
    """GET query with protocol-specified named graphs"""
    r = httpx.get(url, params=[("query", TWO_NAMED), ("named-graph-uri", DATA1), ("named-graph-uri", DATA2)])
    assert boolean(r) is True


def test_query_dataset_full(url: str) -> None:
    """query with protocol-specified dataset (both named and default graphs)"""
    query = (f"ASK {{ <{DATA3}> a ?type GRAPH ?g1 {{ <{DATA1}> a ?type }} "
             f"GRAPH ?g2 {{ <{DATA2}> a ?type }} }}")
    r = httpx.post(url, params=[("default-graph-uri", DATA3), ("named-graph-uri", DATA1),
                                ("named-graph-uri", DATA2)], content=query, headers=DIRECT)
    assert boolean(r) is True
    # and the dataset is really the protocol's: without data3 as default graph, false
    r = httpx.post(url, params=[("default-graph-uri", DATA0), ("named-graph-uri", DATA1),
                                ("named-graph-uri", DATA2)], content=query, headers=DIRECT)
    assert boolean(r) is False


def test_query_multiple_dataset(url: str) -> None:
    """query specifying dataset in both query string and protocol; test for use of
    protocol-specified dataset

    (The manifest's request URL encodes its second ``&named-graph-uri=`` by mistake, making one
    odd IRI of both; this sends the two parameters it means.) The protocol's named graphs
    override the query's FROM; the query's own FROM NAMED would not give ``?g1``/``?g2``."""
    query = (f"ASK FROM <{DATA3}> {{ GRAPH ?g1 {{ <{DATA1}> a ?type }} "
             f"GRAPH ?g2 {{ <{DATA2}> a ?type }} }}")
    r = httpx.post(url, params=[("named-graph-uri", DATA1), ("named-graph-uri", DATA2)],
                   content=query, headers=DIRECT)
    assert boolean(r) is True
    # the protocol's dataset wins over FROM NAMED in the query
    query = f"ASK FROM NAMED <{DATA1}> FROM NAMED <{DATA2}> {{ GRAPH ?g {{ <{DATA1}> a ?type }} }}"
    r = httpx.post(url, params=[("named-graph-uri", DATA3)], content=query, headers=DIRECT)
    assert boolean(r) is False


def test_query_get(url: str) -> None:
    """query via GET"""
    r = httpx.get(url, params={"query": "ASK {}", "default-graph-uri": DATA0})
    assert boolean(r) is True


def test_query_post_direct(url: str) -> None:
    """query via POST directly"""
    assert boolean(httpx.post(url, content="ASK {}", headers=DIRECT)) is True


# ------------------------------------------------------------------ content negotiation

TABULAR = ["application/sparql-results+xml", "application/sparql-results+json",
           "text/tab-separated-values", "text/csv"]


@pytest.mark.parametrize("accept", [None, *TABULAR])
def test_query_content_type_select(url: str, accept: str | None) -> None:
    """query appropriate content type (expect one of: XML, JSON, CSV, TSV)"""
    headers = {**DIRECT, **({"Accept": accept} if accept else {})}
    r = httpx.post(url, params={"default-graph-uri": DATA0}, content="SELECT (1 AS ?value) {}",
                   headers=headers)
    assert r.status_code == 200
    media = r.headers["content-type"].split(";")[0].strip()
    assert media == (accept or "application/sparql-results+json")
    assert "value" in r.text and "1" in r.text


@pytest.mark.parametrize("accept", [None, "application/sparql-results+xml",
                                    "application/sparql-results+json"])
def test_query_content_type_ask(url: str, accept: str | None) -> None:
    """query appropriate content type (expect one of: XML, JSON)"""
    headers = {**DIRECT, **({"Accept": accept} if accept else {})}
    r = httpx.post(url, params={"default-graph-uri": DATA0}, content="ASK {}", headers=headers)
    assert boolean(r) is True
    if accept:
        assert r.headers["content-type"].startswith(accept)


RDF = {"text/turtle": RdfFormat.TURTLE, "application/n-triples": RdfFormat.N_TRIPLES,
       "application/rdf+xml": RdfFormat.RDF_XML}


@pytest.mark.parametrize("accept", list(RDF))
def test_query_content_type_describe(url: str, accept: str) -> None:
    """query appropriate content type (expect one of: RDF/XML, Turtle, N-Triples, RDFa)"""
    r = httpx.post(url, params={"default-graph-uri": DATA0}, content=f"DESCRIBE <{DATA0}>",
                   headers={**DIRECT, "Accept": accept})
    assert r.status_code == 200 and r.headers["content-type"].startswith(accept)
    triples = list(parse(r.content, format=RDF[accept]))
    assert [str(t.subject.value) for t in triples] == [DATA0]


@pytest.mark.parametrize("accept", list(RDF))
def test_query_content_type_construct(url: str, accept: str) -> None:
    """query appropriate content type (expect one of: RDF/XML, Turtle, N-Triples, RDFa)"""
    r = httpx.post(url, params={"default-graph-uri": DATA0},
                   content="CONSTRUCT { <http://ex.org/s> <http://ex.org/p> 1 } WHERE {}",
                   headers={**DIRECT, "Accept": accept})
    assert r.status_code == 200 and r.headers["content-type"].startswith(accept)
    (triple,) = parse(r.content, format=RDF[accept])
    assert (triple.subject.value, triple.object.value) == ("http://ex.org/s", "1")


def test_content_negotiation_not_acceptable(url: str) -> None:
    """Not in the manifest: no results format the client accepts is a 406."""
    r = httpx.post(url, content="ASK {}", headers={**DIRECT, "Accept": "image/png"})
    assert r.status_code == 406


# ------------------------------------------------------------------ bad requests


def test_bad_query_method(url: str) -> None:
    """invoke query operation with a method other than GET or POST"""
    r = httpx.put(url, params={"query": "ASK {}", "default-graph-uri": DATA0}, headers=FORM)
    assert is_4xx(r)


def test_bad_multiple_queries(url: str) -> None:
    """invoke query operation with more than one query string"""
    r = httpx.get(url, params=[("query", "ASK {}"), ("query", "SELECT * {}")])
    assert is_4xx(r), r.status_code


def test_bad_query_wrong_media_type(url: str) -> None:
    """invoke query operation with a POST with media type that's not url-encoded or
    application/sparql-query"""
    assert is_4xx(httpx.post(url, content="ASK {}", headers={"Content-Type": "text/plain"}))


def test_bad_query_missing_form_type(url: str) -> None:
    """invoke query operation with url-encoded body, but without
    application/x-www-form-urlencoded media type"""
    assert is_4xx(httpx.post(url, content=b"query=ASK%20%7B%7D"))


def test_bad_query_missing_direct_type(url: str) -> None:
    """invoke query operation with SPARQL body, but without application/sparql-query media type"""
    assert is_4xx(httpx.post(url, content=b"ASK {}"))


def test_bad_query_non_utf8(url: str) -> None:
    """invoke query operation with direct POST, but with a non-UTF8 encoding (UTF-16)"""
    r = httpx.post(url, content="ASK {}".encode("utf-16"),
                   headers={"Content-Type": "application/sparql-query; charset=UTF-16"})
    assert is_4xx(r)


def test_bad_query_syntax(url: str) -> None:
    """invoke query operation with invalid query syntax (4XX result)"""
    r = httpx.get(url, params={"query": "ASK {"})
    assert r.status_code == 400 and r.json()["error"].startswith("1:")  # LINE:COLUMN: message


def test_bad_update_get(url: str) -> None:
    """invoke update operation with GET"""
    assert is_4xx(httpx.get(url, params={"update": "CLEAR ALL"}))


BAD_UPDATES = {
    "bad_multiple_updates": ("invoke update operation with more than one update string",
                             b"update=CLEAR%20NAMED&update=CLEAR%20DEFAULT", FORM),
    "bad_update_wrong_media_type": ("invoke update operation with a POST with media type that's "
                                    "not url-encoded or application/sparql-update",
                                    b"CLEAR NAMED", {"Content-Type": "text/plain"}),
    "bad_update_missing_form_type": ("invoke update operation with url-encoded body, but without "
                                     "application/x-www-form-urlencoded media type",
                                     b"update=CLEAR%20NAMED", {}),
    "bad_update_non_utf8": ("invoke update operation with direct POST, but with a non-UTF8 "
                            "encoding", "CLEAR NAMED".encode("utf-16"),
                            {"Content-Type": "application/sparql-update; charset=UTF-16"}),
    "bad_update_syntax": ("invoke update operation with invalid update syntax",
                          b"update=CLEAR%20XYZ", FORM),
    "bad_update_dataset_conflict": ("invoke update with both using-graph-uri/using-named-graph-uri "
                                    "parameter and USING/WITH clause",
                                    b"update=" + quote(
                                        "PREFIX foaf: <http://xmlns.com/foaf/0.1/> WITH <http://"
                                        "example.org/protocol-update-dataset-test/> DELETE { ?s a "
                                        f"foaf:Document }} USING <{DATA1}> WHERE {{ ?s a foaf:Document }}"
                                    ).encode(), FORM),
}


@pytest.mark.parametrize("name", list(BAD_UPDATES))
def test_bad_update(url: str, name: str) -> None:
    """The manifest's bad_update_* entries (and bad_multiple_updates): each a 4xx."""
    _, body, headers = BAD_UPDATES[name]
    params = {"using-graph-uri": DATA1} if name == "bad_update_dataset_conflict" else {}
    r = httpx.post(url, params=params, content=body, headers=headers)
    assert is_4xx(r), f"{name}: {r.status_code} {r.text}"


# ------------------------------------------------------------------ updates that succeed


@pytest.fixture()
def fresh_url(tmp_path: Path) -> Iterator[str]:
    """A server of its own (the updates below change its KB)."""
    path = tmp_path / "data1.nt"
    path.write_text(f"<{DATA1}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
                    "<http://xmlns.com/foaf/0.1/Document> .\n", encoding="utf-8")
    srv: Server = start_server("--kb", f"{DATA1}={path}")
    yield srv.url + "/sparql"
    assert srv.stop() == 0


ADDED = "http://example.org/protocol-update-dataset-test/"


@pytest.mark.parametrize("how", ["form", "direct"])
def test_update_post(fresh_url: str, how: str) -> None:
    """update_post_form / update_post_direct: an update by URL-encoded POST or a direct POST
    (application/sparql-update) answers 2xx, and a query sees its effect."""
    update = (f"PREFIX foaf: <http://xmlns.com/foaf/0.1/> INSERT DATA {{ GRAPH <{ADDED}> "
              f"{{ <{ADDED}s> a foaf:Document }} }}")
    if how == "form":
        r = httpx.post(fresh_url, content="update=" + quote(update), headers=FORM)
    else:
        r = httpx.post(fresh_url, content=update, headers={"Content-Type": "application/sparql-update"})
    assert 200 <= r.status_code < 300, r.text
    ask = f"ASK {{ GRAPH <{ADDED}> {{ <{ADDED}s> a <http://xmlns.com/foaf/0.1/Document> }} }}"
    assert boolean(httpx.get(fresh_url, params={"query": ask},
                             headers={"Accept": "application/sparql-results+json"})) is True


DC = "PREFIX dc: <http://purl.org/dc/terms/> PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
SETUP = (f"CLEAR ALL ; INSERT DATA {{ GRAPH <{DATA1}> {{ <{DATA1}> a foaf:Document }} "
         f"GRAPH <{DATA2}> {{ <{DATA2}> a foaf:Document }} GRAPH <{DATA3}> {{ <{DATA3}> a foaf:Document }} }} ; ")
UPDATE_DATASET = {
    # entry: (using-graph-uri, using-named-graph-uri, WHERE pattern, documents that must be typed)
    "update_dataset_default_graph": ([DATA1], [], "?s a foaf:Document", [DATA1]),
    "update_dataset_default_graphs": ([DATA1, DATA2], [], "?s a foaf:Document", [DATA1, DATA2]),
    "update_dataset_named_graphs": ([], [DATA1, DATA2], "GRAPH ?g { ?s a foaf:Document }", [DATA1, DATA2]),
    "update_dataset_full": ([DATA3], [DATA1, DATA2], "{ ?s a foaf:Document } UNION { GRAPH ?g { ?s a foaf:Document } }",
                            [DATA1, DATA2, DATA3]),
}


@pytest.mark.parametrize("name", list(UPDATE_DATASET))
def test_update_dataset(fresh_url: str, name: str) -> None:
    """update_dataset_*: the update's dataset given by using-graph-uri/using-named-graph-uri:
    the WHERE sees exactly those graphs (the documents of the others are not typed)."""
    using, named, where, typed = UPDATE_DATASET[name]
    update = (DC + SETUP + f"INSERT {{ GRAPH <{ADDED}> {{ ?s a dc:BibliographicResource }} }} "
              f"WHERE {{ {where} }}")
    params = [("using-graph-uri", g) for g in using] + [("using-named-graph-uri", g) for g in named]
    r = httpx.post(fresh_url, params=params, content="update=" + quote(update), headers=FORM)
    assert 200 <= r.status_code < 300, r.text
    for doc in (DATA1, DATA2, DATA3):
        ask = DC + f"ASK {{ GRAPH <{ADDED}> {{ <{doc}> a dc:BibliographicResource }} }}"
        got = boolean(httpx.get(fresh_url, params={"query": ask}, headers={"Accept": "application/sparql-results+json"}))
        assert got is (doc in typed), (name, doc)
