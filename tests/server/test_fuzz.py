"""Fuzzing ``spaseq serve``'s OpenAPI description with schemathesis: requests generated from
``/openapi.json`` for every route, sent to a real server; none may get a 5xx or hang.

Only "no server error" and a per-request time limit are checked: the description documents the
success answers, not every 4xx a bad request may get, so schemathesis' schema-conformance checks
would flag answers the README specifies. The number of examples per route is bounded
(``SPASEQ_FUZZ_EXAMPLES``, default 15) so the whole module runs in seconds; raise it for a
longer hunt. One query is registered first, so ``/queries/{qid}`` routes are not all 404s."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from spaseq.engine.server.app import create_app
from spaseq.engine.server.config import ServerConfig

from .conftest import start_server

EXAMPLES = int(os.environ.get("SPASEQ_FUZZ_EXAMPLES", "15"))
QUERY = """PREFIX : <http://ex.org/>
SELECT ?s ?v WITHIN 10 SECONDS FROM STREAM S <http://ex.org/readings>
WHERE { SEQ(A) DEFINE GPM A ON S { ?s :value ?v } }"""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    srv = start_server()
    r = httpx.post(f"{srv.url}/queries", content=QUERY, headers={"Content-Type": "application/sparql-query"})
    assert r.status_code == 201
    yield srv.url
    assert srv.stop() == 0  # and the server is still alive after the fuzzing


# the text bodies the description names (a query, events) are sent as generated strings
schemathesis.serializer.alias(["application/sparql-query", "application/trig", "application/n-quads",
                               "application/n-triples", "text/turtle"], "text/plain")

# the description the server serves at /openapi.json, built without a server (no lifespan runs)
schema = schemathesis.openapi.from_dict(create_app(ServerConfig()).openapi())


#: every operation of the description, each its own test (schemathesis' own parametrize gives
#: them one node id, which pytest-xdist, scheduling by id, would run as one)
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("operation", OPERATIONS, ids=[op.label for op in OPERATIONS])
def test_no_server_error_no_hang(operation: schemathesis.APIOperation, url: str) -> None:
    # a streaming answer (SSE, ndjson) would never end: ask for the finite forms only
    headers = {"Accept": "application/sparql-results+json, application/json;q=0.9, */*;q=0.1"}
    if operation.path.endswith("/matches"):
        headers["Accept"] = "application/sparql-results+json"

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    def check(case: schemathesis.Case) -> None:
        response = case.call(base_url=url, headers=headers, timeout=10)
        assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text}"

    check()


def test_every_operation_is_fuzzed() -> None:
    """Each route of the description is a test of its own (18 when this was written)."""
    assert len({op.label for op in OPERATIONS}) == len(OPERATIONS) >= 18
