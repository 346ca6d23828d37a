"""Auth and limits: writes need the Bearer token, reads are open, a non-loopback address is
refused without a token, bodies over --max-body get 413; SIGTERM stops cleanly."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from SPARQLWrapper import JSON, POST, SPARQLWrapper

from .conftest import Server, start_server

QUERY = """PREFIX : <http://ex.org/>
SELECT ?s WITHIN 10 SECONDS FROM STREAM S <http://ex.org/s>
WHERE { SEQ(A) DEFINE GPM A ON S { ?s :v ?v } }"""


@pytest.fixture(scope="module")
def guarded() -> Server:
    srv = start_server("--max-body", "2000", env={"SPASEQ_TOKEN": "s3cret"})
    yield srv
    assert srv.stop() == 0


@pytest.mark.parametrize("method, path, kwargs", [
    ("POST", "/queries", {"content": QUERY, "headers": {"Content-Type": "application/sparql-query"}}),
    ("POST", "/sparql", {"content": QUERY, "headers": {"Content-Type": "application/sparql-query"}}),
    ("POST", "/events?stream=http://ex.org/s&time=1", {"content": b"<http://a> <http://b> 1 .",
                                                       "headers": {"Content-Type": "text/turtle"}}),
    ("POST", "/heartbeat?time=5", {}),
    ("DELETE", "/queries/q1", {}),
])
@pytest.mark.parametrize("auth", [None, "Bearer wrong", "Basic s3cret"])
def test_writes_without_the_token_get_401(guarded: Server, method: str, path: str, kwargs: dict,
                                          auth: str | None) -> None:
    kwargs = dict(kwargs)
    headers = dict(kwargs.pop("headers", {}))
    if auth:
        headers["Authorization"] = auth
    r = httpx.request(method, guarded.url + path, headers=headers, **kwargs)
    assert r.status_code == 401, r.text
    assert "Bearer" in r.json()["error"] and r.headers["www-authenticate"].startswith("Bearer")


def test_writes_with_the_token_and_open_reads(guarded: Server) -> None:
    client = SPARQLWrapper(f"{guarded.url}/sparql")
    client.setMethod(POST)
    client.setQuery(QUERY)
    client.setReturnFormat(JSON)
    client.addCustomHttpHeader("Authorization", "Bearer s3cret")
    described = client.queryAndConvert()
    assert described["streams"] == ["http://ex.org/s"]
    r = httpx.post(f"{guarded.url}/events", params={"stream": "http://ex.org/s", "time": "1"},
                   content=b"<http://a> <http://ex.org/v> 1 .",
                   headers={"Content-Type": "text/turtle", "Authorization": "Bearer s3cret"})
    assert r.json() == {"accepted": 1}
    rows = httpx.get(guarded.url + described["matches"]).json()["results"]["bindings"]
    assert [row["s"]["value"] for row in rows] == ["http://a"]
    assert httpx.get(guarded.url + "/queries").status_code == 200


def test_a_body_over_the_limit_gets_413(guarded: Server) -> None:
    r = httpx.post(f"{guarded.url}/events", params={"stream": "http://ex.org/s"}, content=b"#" * 5000,
                   headers={"Content-Type": "application/n-quads", "Authorization": "Bearer s3cret"})
    assert r.status_code == 413 and "--max-body 2000" in r.json()["error"]


def test_a_non_loopback_address_without_a_token_is_refused() -> None:
    out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
                         capture_output=True, text=True, timeout=60, env={"PATH": ""})
    assert out.returncode == 2
    assert "not a loopback address" in out.stderr and "--token" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_bad_kb_file_is_said_in_one_line() -> None:
    out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "serve", "--port", "0", "--kb", "missing.nt"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == "missing.nt: no such file"


def test_token_reads_closes_reads_too() -> None:
    srv = start_server("--token", "s3cret", "--token-reads")
    try:
        for path in ("/", "/queries", "/sparql?query=ASK%7B%7D", "/queries/q1/matches"):
            r = httpx.get(srv.url + path)
            assert r.status_code == 401 and "requests only with Authorization: Bearer" in r.json()["error"], path
        client = SPARQLWrapper(f"{srv.url}/sparql")
        client.setQuery("ASK {}")
        client.setReturnFormat(JSON)
        client.addCustomHttpHeader("Authorization", "Bearer s3cret")
        assert client.queryAndConvert() == {"head": {}, "boolean": True}
        assert httpx.get(srv.url + "/queries", headers={"Authorization": "Bearer s3cret"}).json() == []
    finally:
        assert srv.stop() == 0


def test_token_reads_without_a_token_is_refused() -> None:
    out = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "serve", "--port", "0", "--token-reads"],
                         capture_output=True, text=True, timeout=60, env={"PATH": ""})
    assert out.returncode == 2 and "--token-reads needs a token" in out.stderr
