"""Every script in examples/ runs as a user would run it (a subprocess, from another
directory) and prints exactly the matches it should, writing nothing where it ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

PYTHON_API = """\
t=0: d1 opened
t=5: d2 opened
t=12: d1 closed
heartbeat t=40
  match: http://ex.org/d2 opened by http://ex.org/bob at t=5
t=50: d3 opened
end of input
  match: http://ex.org/d3 opened by http://ex.org/carol at t=50
row: {'door': 'http://ex.org/d2', 'who': 'http://ex.org/bob'} time 5
row: {'door': 'http://ex.org/d3', 'who': 'http://ex.org/carol'} time 50
"""

RDFLIB_DATASET = """\
variables: ['customer', 'item', 'amount', 'tier']
20 25 http://ex.org/ben http://ex.org/desk 300 http://ex.org/silver A=http://ex.org/o2@20 B=http://ex.org/p1@25
customer,item,amount,tier
http://ex.org/ben,http://ex.org/desk,300,http://ex.org/silver
"""

COMPOSITION = """\
10:00:03 http://ex.org/alerts#match-1: http://ex.org/h1 60 -> 70 (3 triples)
10:00:04 http://ex.org/alerts#match-2: http://ex.org/h2 90 -> 95 (3 triples)
10:00:05 http://ex.org/alerts#match-3: http://ex.org/h1 70 -> 80 (3 triples)
10:00:05 http://ex.org/alerts#match-4: http://ex.org/h1 55 -> 80 (3 triples)
10:00:05 repeated alert: {'l1': '70', 'l2': '80', 'p2': '55', 's': 'http://ex.org/h1'}
row: {'s': 'http://ex.org/h1', 'l1': '70', 'p2': '55', 'l2': '80'}
"""

# program P's derived events with their intervals, as the chapter states them (the burnt-down
# sensor is released when the clock passes its timer: at the end of the input)
PROGRAM_P = """\
fire{'area': 'a'} over [65, 80]
avg_temp{'avg': '40', 'sensor': 's'} over [10, 80]
burnt_down{'sensor': 's'} over [70, 92]
"""

# the six matches of fixtures/smartgrid/expected.md, in completion order
KB_WITH_SPARK = """\
loaded 14 quads into version 1, graphs {'http://smartgrid.org/db': 14}, rejected 0
10:00-10:03 H1 (Alice, Lyon, near H3) fuel 25 solar 18.5
10:20-10:24 H2 (Bob, Grenoble, near H4) fuel 28 solar 27
10:20-10:24 H2 (Bob, Grenoble, near H5) fuel 28 solar 27
10:40-10:44 H1 (Alice, Lyon, near H3) fuel 35 solar 34
10:46-11:16 H2 (Bob, Grenoble, near H4) fuel 21 solar 12
10:46-11:16 H2 (Bob, Grenoble, near H5) fuel 21 solar 12
"""

EXPECTED = {
    "python_api.py": PYTHON_API,
    "rdflib_dataset.py": RDFLIB_DATASET,
    "composition.py": COMPOSITION,
    "kb_with_spark.py": KB_WITH_SPARK,
    "program_p.py": PROGRAM_P,
}


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_example_prints_its_matches(script: str, tmp_path: Path) -> None:
    if script == "kb_with_spark.py":
        pytest.importorskip("pyspark")
    cwd, scratch = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    scratch.mkdir()
    done = subprocess.run([sys.executable, str(EXAMPLES / script)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED[script]
    assert list(cwd.iterdir()) == []  # nothing written where it ran (temporary files go to TMPDIR)
