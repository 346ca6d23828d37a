"""The knowledge base through the endpoint: /sparql over a versioned store (``--kb-store``),
read-only there (SPARQL Update and the Graph Store Protocol's writes alike) and followed
across a new version without dropping runs; SPARQL Update on the in-memory KB (``--kb``),
token-protected, seen by the engine and kept by ``--data``."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from pyoxigraph import Literal, NamedNode, Quad, Store
from SPARQLWrapper import JSON, SPARQLWrapper

from spaseq.engine.kb.layout import StoreLayout

from .conftest import start_server

EX = "http://ex.org/"
DB = "http://ex.org/db"
AUTH = {"Authorization": "Bearer s3cret"}
QUERY = f"""PREFIX : <{EX}>
SELECT ?h ?o WITHIN 100 SECONDS
FROM STREAM U1 <{EX}u1> FROM STREAM U2 <{EX}u2>
WHERE {{ SEQ(A; B)
  DEFINE GPM A ON U1 {{ ?h :power ?p }}
  DEFINE GPM B ON U2 {{ ?h :alarm ?a . GRAPH <{DB}> {{ ?h :owner ?o }} }} }}"""
OWNERS = f"SELECT ?h ?o WHERE {{ GRAPH <{DB}> {{ ?h <{EX}owner> ?o }} }} ORDER BY ?h"


def new_version(root: Path, owners: dict[str, str]) -> int:
    """A store version holding ``owners`` in graph DB, made current (what ``kb load`` and
    ``kb refresh`` leave, without starting Spark)."""
    layout = StoreLayout.at(root)
    if not layout.root.exists() or layout.current() is None:
        layout.initialise()
    with layout.new_version("load") as pending:
        store = Store(str(layout.oxigraph_dir(pending.number)))
        store.extend(Quad(NamedNode(EX + h), NamedNode(EX + "owner"), Literal(o), NamedNode(DB))
                     for h, o in owners.items())
        store.flush()
        del store
        pending.meta = {"quads": len(owners)}
    return pending.number


def push(url: str, stream: str, t: int, turtle: str, headers: dict | None = None) -> httpx.Response:
    return httpx.post(f"{url}/events", params={"stream": EX + stream, "time": str(t)},
                      content=f"PREFIX : <{EX}>\n{turtle}".encode(),
                      headers={"Content-Type": "text/turtle", **(headers or {})})


def owners(url: str) -> list[tuple[str, str]]:
    client = SPARQLWrapper(f"{url}/sparql")
    client.setQuery(OWNERS)
    client.setReturnFormat(JSON)
    rows = client.queryAndConvert()["results"]["bindings"]
    return [(r["h"]["value"].removeprefix(EX), r["o"]["value"]) for r in rows]


def rows(url: str, qid: str) -> list[tuple[str, str]]:
    got = httpx.get(f"{url}/queries/{qid}/matches").json()["results"]["bindings"]
    return [(r["h"]["value"].removeprefix(EX), r["o"]["value"]) for r in got]


def test_sparql_over_a_versioned_store_follows_a_refresh_without_dropping_runs(tmp_path: Path) -> None:
    new_version(tmp_path / "kb", {"H1": "Alice", "H2": "Bob"})
    srv = start_server("--kb-store", str(tmp_path / "kb"))
    try:
        assert owners(srv.url) == [("H1", "Alice"), ("H2", "Bob")]
        qid = httpx.post(f"{srv.url}/queries", content=QUERY,
                         headers={"Content-Type": "application/sparql-query"}).json()["id"]
        assert push(srv.url, "u1", 1, ":H1 :power 5 .").status_code == 200
        assert push(srv.url, "u2", 2, ":H1 :alarm 1 .").status_code == 200
        assert push(srv.url, "u1", 3, ":H1 :power 6 .").status_code == 200  # a run open across the switch
        assert rows(srv.url, qid) == [("H1", "Alice")]
        new_version(tmp_path / "kb", {"H1": "Alan"})  # what `spaseq kb refresh` does
        deadline = time.monotonic() + 10
        while owners(srv.url) != [("H1", "Alan")]:  # the store is checked once a second
            assert time.monotonic() < deadline, owners(srv.url)
            time.sleep(0.2)
        assert push(srv.url, "u2", 10, ":H1 :alarm 2 .").status_code == 200
        # the run started at t=3 survived and read the new version; nothing was matched twice
        assert rows(srv.url, qid) == [("H1", "Alice"), ("H1", "Alan")]
        r = httpx.post(f"{srv.url}/sparql", content=f"INSERT DATA {{ GRAPH <{DB}> {{ <{EX}H9> <{EX}owner> 'X' }} }}",
                       headers={"Content-Type": "application/sparql-update"})
        assert r.status_code == 403 and "kb refresh" in r.json()["error"]
        # the Graph Store Protocol reads the version followed, and is refused writes alike
        got = httpx.get(f"{srv.url}/store", params={"graph": DB}, headers={"Accept": "application/n-triples"})
        assert got.status_code == 200 and got.text == f'<{EX}H1> <{EX}owner> "Alan" .\n'
        for method in ("PUT", "POST", "DELETE"):
            r = httpx.request(method, f"{srv.url}/store", params={"graph": DB}, content=f"<{EX}H9> <{EX}owner> 'X' .",
                              headers={"Content-Type": "text/turtle"})
            assert r.status_code == 403 and "kb refresh" in r.json()["error"], (method, r.text)
        assert owners(srv.url) == [("H1", "Alan")]
    finally:
        assert srv.stop() == 0


@pytest.mark.parametrize("data", [False, True])
def test_sparql_update_on_the_in_memory_kb(tmp_path: Path, data: bool) -> None:
    kb = tmp_path / "kb.nt"
    kb.write_text(f'<{EX}H1> <{EX}owner> "Alice" .\n', encoding="utf-8")
    args = ["--kb", f"{DB}={kb}", "--token", "s3cret", *(["--data", str(tmp_path / "d")] if data else [])]
    srv = start_server(*args)
    try:
        qid = httpx.post(f"{srv.url}/queries", content=QUERY, headers={
            "Content-Type": "application/sparql-query", **AUTH}).json()["id"]
        update = f'DELETE DATA {{ GRAPH <{DB}> {{ <{EX}H1> <{EX}owner> "Alice" }} }} ;' \
                 f' INSERT DATA {{ GRAPH <{DB}> {{ <{EX}H1> <{EX}owner> "Alan" }} }}'
        refused = httpx.post(f"{srv.url}/sparql", data={"update": update})
        assert refused.status_code == 401
        bad = httpx.post(f"{srv.url}/sparql", content="INSERT NONSENSE",
                         headers={"Content-Type": "application/sparql-update", **AUTH})
        assert bad.status_code == 400 and bad.json()["error"]
        assert push(srv.url, "u1", 1, ":H1 :power 5 .", AUTH).status_code == 200
        assert push(srv.url, "u2", 2, ":H1 :alarm 1 .", AUTH).status_code == 200
        ok = httpx.post(f"{srv.url}/sparql", data={"update": update}, headers=AUTH)
        assert ok.status_code == 204, ok.text
        assert owners(srv.url) == [("H1", "Alan")]
        assert push(srv.url, "u1", 3, ":H1 :power 6 .", AUTH).status_code == 200
        assert push(srv.url, "u2", 4, ":H1 :alarm 2 .", AUTH).status_code == 200
        # the engine reads the updated KB (not a cached row of the old one)
        assert rows(srv.url, qid)[-1] == ("H1", "Alan") and rows(srv.url, qid)[0] == ("H1", "Alice")
    finally:
        assert srv.stop() == 0
    if data:  # the update is part of the state a restart continues from
        srv = start_server(*args)
        try:
            assert owners(srv.url) == [("H1", "Alan")]
        finally:
            assert srv.stop() == 0


def test_a_restart_with_another_kb_leaves_no_graph_of_the_old_one(tmp_path: Path) -> None:
    """With --data the /sparql store is on disk: a restart on a KB that no longer has a graph
    an earlier run copied removes it (the copied graphs are recorded beside the store)."""
    old, new = tmp_path / "old.nt", tmp_path / "new.nt"
    old.write_text(f"<{EX}h1> <{EX}owner> \"alice\" .\n", encoding="utf-8")
    new.write_text(f"<{EX}h2> <{EX}owner> \"bob\" .\n", encoding="utf-8")
    graphs = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g"

    def names(url: str) -> list[str]:
        r = httpx.get(f"{url}/sparql", params={"query": graphs}, headers={"Accept": "application/sparql-results+json"})
        return [b["g"]["value"] for b in r.json()["results"]["bindings"]]

    srv = start_server("--kb", f"{EX}old={old}", "--data", str(tmp_path / "data"))
    try:
        assert names(srv.url) == [f"{EX}old"]
    finally:
        assert srv.stop() == 0
    srv = start_server("--kb", f"{EX}new={new}", "--data", str(tmp_path / "data"))
    try:
        assert names(srv.url) == [f"{EX}new"]
    finally:
        assert srv.stop() == 0
