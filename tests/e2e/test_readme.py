"""The README's Python API example runs as written and prints what the README says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_python_api_example_prints_what_the_readme_shows() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- api-example[^>]*-->\n```python\n(.*?)```\n\nprints\n\n```\n(.*?)```", readme, re.S)
    assert found is not None, "the API example or its output block is missing"
    code, expected = found.groups()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout == expected


def test_spark_example_prints_what_the_readme_shows() -> None:
    """The Spark example (the spark extra, a local[2] session of its own) finds the smart-grid
    matches the README shows, in a fresh process from the repository's root."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- spark-example[^>]*-->\n```python\n(.*?)```\n\nprints\n\n```\n(.*?)```", readme, re.S)
    assert found is not None, "the Spark example or its output block is missing"
    code, expected = found.groups()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=300)
    assert out.stdout == expected
