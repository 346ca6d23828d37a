"""The README's ``spaseq serve`` examples (curl, then SPARQLWrapper, then the Graph Store
Protocol with curl) run against a real server and print what the README says they print."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from .conftest import ROOT, start_server

README_URL = "http://127.0.0.1:7878"


def test_readme_curl_and_sparqlwrapper_examples() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- serve-example[^>]*-->\n```sh\n(.*?)```\n\n```python\n(.*?)```", readme, re.S)
    assert found is not None, "the serve examples are missing from the README"
    shell, python = found.groups()
    srv = start_server()
    try:
        out = subprocess.run(["bash", "-e", "-c", shell.replace(README_URL, srv.url)],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        described, end = json.JSONDecoder().raw_decode(out)
        rest = out[end:]
        assert described["id"] == "q1" and described["streams"] == ["http://ex.org/readings"]
        assert rest.count('{"accepted":1}') == 3
        csv = rest.replace('{"accepted":1}', "").strip().splitlines()
        assert csv == ["_time,_start,s,v1,v2", "3,2,http://ex.org/h1,70,80"]
        printed = subprocess.run([sys.executable, "-c", python.replace(README_URL, srv.url)],
                                 capture_output=True, text=True, timeout=60, check=True).stdout
        assert printed.splitlines() == ["q2 /queries/q2/matches", "urn:spaseq:query:q1 2"]
        gsp = re.search(r"<!-- gsp-example[^>]*-->\n```sh\n(.*?)```", readme, re.S)
        assert gsp is not None, "the Graph Store Protocol example is missing from the README"
        out = subprocess.run(["bash", "-e", "-c", gsp.group(1).replace(README_URL, srv.url)], cwd=ROOT,
                             capture_output=True, text=True, timeout=60, check=True).stdout
        assert out.splitlines() == ["201", "n", "14", "1", "204",
                                    '{"error":"no graph <http://smartgrid.org/db> (GET /store lists them all)"}',
                                    "404"]
    finally:
        assert srv.stop() == 0
