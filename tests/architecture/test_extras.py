"""The base install (lark, pyoxigraph) runs queries; the server and the rdflib plugin are the
``spaseq[server]`` and ``spaseq[rdflib]`` extras (docs/decisions.md 52). The base import path
imports none of their dependencies, and without them ``spaseq serve``, ``spaseq.plugin`` and
``register_rdflib`` say which extra to install. The processes below run with packages first on
their path whose import fails, as if the extras were not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SG = ROOT / "fixtures" / "smartgrid"
#: the top-level modules of the server and rdflib extras (and of the test extra's client)
EXTRA_MODULES = {"server": ("fastapi", "uvicorn", "sse_starlette", "starlette", "fastapi_offline", "prometheus_client"), "rdflib": ("rdflib",),
                 "test": ("SPARQLWrapper", "httpx"), "arrow": ("pyarrow",), "mqtt": ("paho",)}
BLOCKED = [m for modules in EXTRA_MODULES.values() for m in modules]


@pytest.fixture(scope="module")
def no_extras(tmp_path_factory) -> dict[str, str]:
    """The environment of a process in which importing any of ``BLOCKED`` fails."""
    blocker = tmp_path_factory.mktemp("no-extras")
    for name in BLOCKED:
        (blocker / name).mkdir()
        (blocker / name / "__init__.py").write_text(
            f'raise ImportError("No module named {name!r}", name={name!r})\n', encoding="utf-8")
    path = os.pathsep.join(p for p in (str(blocker), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _python(script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


RUN = f"""
import json, sys
from spaseq.engine.cli.main import main
import spaseq.engine, spaseq.engine.api, spaseq.extension_functions
status = main(["run", {str(SG / "query.rq")!r}, "--stream", "S1={SG / "power.trig"}",
               "--stream", "S2={SG / "weather.trig"}", "--stream", "S3={SG / "storage.trig"}",
               "--kb", {str(SG / "kb.nt")!r}, "--format", "jsonl", "--output", sys.argv[-1]])
blocked = {BLOCKED!r}
print(json.dumps({{"status": status, "imported": sorted(m for m in blocked if sys.modules.get(m))}}))
"""


def test_the_base_import_path_imports_no_extra(tmp_path) -> None:
    """With the extras installed (as in the suite), a query run through the CLI and the API
    still imports none of them."""
    out = tmp_path / "rows.jsonl"
    proc = subprocess.run([sys.executable, "-c", RUN, str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"status": 0, "imported": []}
    assert len(out.read_text().splitlines()) == 6


def test_queries_run_without_the_extras(no_extras, tmp_path) -> None:
    out = tmp_path / "rows.jsonl"
    proc = subprocess.run([sys.executable, "-c", RUN, str(out)], env=no_extras, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"status": 0, "imported": []}
    assert len(out.read_text().splitlines()) == 6


def test_serve_says_to_install_the_server_extra(no_extras) -> None:
    proc = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "serve", "--port", "0"],
                          env=no_extras, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "spaseq: spaseq serve needs fastapi: pip install 'spaseq[server]'\n"


def test_arrow_output_says_to_install_the_arrow_extra(no_extras, tmp_path) -> None:
    out = tmp_path / "rows.parquet"
    proc = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(SG / "query.rq"),
                           "--stream", f"S1={SG / 'power.trig'}", "--format", "parquet", "--output", str(out)],
                          env=no_extras, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.endswith("spaseq: --format parquet needs pyarrow: pip install 'spaseq[arrow]'\n"), proc.stderr
    assert not out.exists()  # refused before the output was opened


def test_mqtt_says_to_install_the_mqtt_extra(no_extras) -> None:
    proc = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(SG / "query.rq"),
                           "--mqtt", "127.0.0.1:1883", "--subscribe", "grid/power=S1"],
                          env=no_extras, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.endswith("spaseq: --mqtt needs paho: pip install 'spaseq[mqtt]'\n"), proc.stderr


def test_the_rdflib_plugin_says_to_install_the_rdflib_extra(no_extras) -> None:
    script = """
import json
from spaseq.engine.errors import MissingExtraError
out = {}
try:
    import spaseq.plugin
except MissingExtraError as err:
    out["plugin"] = str(err)
from spaseq.extension_functions import register_rdflib
try:
    register_rdflib()
except ImportError as err:  # MissingExtraError is an ImportError
    out["register_rdflib"] = str(err)
print(json.dumps(out))
"""
    proc = _python(script, no_extras)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "plugin": "spaseq.plugin needs rdflib: pip install 'spaseq[rdflib]'",
        "register_rdflib": "register_rdflib needs rdflib: pip install 'spaseq[rdflib]'",
    }


def test_pyproject_lists_the_extras() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {d.split(">")[0].split("=")[0].lower() for d in project["dependencies"]}
    assert base == {"lark", "regex", "pyoxigraph"}  # regex: lark imports it for regex=True
    extras = {name: {d.split(">")[0].lower() for d in deps}
              for name, deps in project["optional-dependencies"].items()}
    assert extras["server"] == {"fastapi", "uvicorn", "sse-starlette", "fastapi-offline", "prometheus-client"}
    assert extras["rdflib"] == {"rdflib"}
    assert extras["arrow"] == {"pyarrow"}
    assert extras["mqtt"] == {"paho-mqtt"}
    assert "sparqlwrapper" in extras["test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-e '.[test,spark,server,rdflib,arrow,mqtt]'" in makefile
