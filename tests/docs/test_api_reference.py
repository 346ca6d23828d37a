"""`make docs`: the API reference is built from the docstrings with no warning, documents
the public modules, and needs neither pyspark nor Java; a warning fails the build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILDER = ROOT / "docs" / "api_reference.py"


def run(code: str, cwd: Path, pythonpath: str = "") -> subprocess.CompletedProcess:
    env_path = f"{ROOT / 'docs'}:{pythonpath}" if pythonpath else str(ROOT / "docs")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": env_path})


def test_the_reference_builds_without_warnings(tmp_path: Path) -> None:
    done = run("import sys, api_reference\n"
               f"status = api_reference.main([{str(tmp_path / 'out')!r}])\n"
               "print('pyspark loaded:', 'pyspark' in sys.modules)\n"
               "sys.exit(status)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "docs:" not in done.stderr
    assert "pyspark loaded: False" in done.stdout
    out = tmp_path / "out" / "spaseq"
    for module in ("engine/api", "engine/matches", "engine/errors", "engine/events", "engine/composition",
                   "plugin", "plugin/processor", "extension_functions"):
        assert (out / f"{module}.html").is_file(), module
    api = (out / "engine" / "api.html").read_text(encoding="utf-8")
    assert 'id="Engine.push"' in api and 'id="Engine.register"' in api
    functions = (out / "extension_functions.html").read_text(encoding="utf-8")
    assert 'id="register_rdflib"' in functions and 'id="pyoxigraph_functions"' in functions


def test_a_warning_fails_the_build(tmp_path: Path) -> None:
    (tmp_path / "brokendoc.py").write_text('"""A module."""\n\n\ndef f(x: "Missing") -> None:\n    """f."""\n')
    done = run("import sys, api_reference\n"
               "api_reference.MODULES[:] = ['brokendoc']\n"
               f"sys.exit(api_reference.main([{str(tmp_path / 'out')!r}]))", tmp_path, str(tmp_path))
    assert done.returncode == 1
    assert "docs: UserWarning: Error parsing type annotation Missing for brokendoc.f" in done.stderr
