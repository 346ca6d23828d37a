"""PySpark is the ``spaseq[spark]`` extra: without it every entry point but the KB jobs imports
and works, and ``spaseq kb load|refresh`` say how to install it. The processes below run with
a ``pyspark`` package first on their path whose import fails, as if it were not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SG = ROOT / "fixtures" / "smartgrid"
#: the modules that run Spark: the only ones allowed to import PySpark when imported
SPARK_MODULES = {"spaseq.engine.kb.dumps", "spaseq.engine.kb.load_job", "spaseq.engine.kb.refresh_job"}
MESSAGE = "spaseq: the knowledge-base jobs need PySpark: pip install 'spaseq[spark]'\n"


@pytest.fixture(scope="module")
def no_pyspark(tmp_path_factory) -> dict[str, str]:
    """The environment of a process in which ``import pyspark`` fails."""
    blocker = tmp_path_factory.mktemp("no-pyspark")
    (blocker / "pyspark").mkdir()
    (blocker / "pyspark" / "__init__.py").write_text(
        'raise ImportError("No module named \'pyspark\'", name="pyspark")\n', encoding="utf-8")
    path = os.pathsep.join(p for p in (str(blocker), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _spaseq(env: dict[str, str], *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spaseq.engine.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_every_module_but_the_spark_jobs_imports_without_pyspark(no_pyspark):
    script = f"""
import importlib, json, pkgutil, sys
import spaseq.engine, spaseq.plugin, spaseq.extension_functions
spark = {sorted(SPARK_MODULES)!r}
names = sorted(m.name for pkg in (spaseq.engine, spaseq.plugin, spaseq.extension_functions)
               for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
               if not m.name.endswith("__main__") and m.name not in spark)
for name in names:
    importlib.import_module(name)
failed = []
for name in spark:
    try:
        importlib.import_module(name)
    except ImportError:
        failed.append(name)
print(json.dumps({{"imported": names, "spark_failed": sorted(failed),
                   "pyspark": "pyspark" in sys.modules and sys.modules["pyspark"] is not None}}))
"""
    proc = subprocess.run([sys.executable, "-c", script], env=no_pyspark, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert {"spaseq.engine.api", "spaseq.engine.cli.main", "spaseq.engine.server.app", "spaseq.engine.kb.reader",
            "spaseq.engine.kb.session", "spaseq.plugin.processor"} <= set(result["imported"])
    assert result["spark_failed"] == sorted(SPARK_MODULES)  # the blocker works
    assert not result["pyspark"]


def test_run_and_kb_info_work_and_the_spark_jobs_say_how_to_install_pyspark(no_pyspark, tmp_path):
    out = tmp_path / "rows.jsonl"
    proc = _spaseq(no_pyspark, "run", str(SG / "query.rq"), "--stream", f"S1={SG / 'power.trig'}",
                   "--stream", f"S2={SG / 'weather.trig'}", "--stream", f"S3={SG / 'storage.trig'}",
                   "--kb", str(SG / "kb.nt"), "--format", "jsonl", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert len(out.read_text().splitlines()) == 6
    for command in ("load", "refresh"):
        proc = _spaseq(no_pyspark, "kb", command, str(SG / "kb.nt"), "--store", str(tmp_path / "kb"))
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", MESSAGE)
    assert not (tmp_path / "kb").exists()
    proc = _spaseq(no_pyspark, "run", str(SG / "query.rq"), "--stream", f"S1={SG / 'power.trig'}", "--spark")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2, "", "spaseq: queries on Spark (--spark) need PySpark: pip install 'spaseq[spark]'\n")
    proc = _spaseq(no_pyspark, "kb", "info", "--store", str(tmp_path / "kb"))  # pure pyoxigraph
    assert proc.returncode == 2 and "kb: no such knowledge-base store" in proc.stderr
