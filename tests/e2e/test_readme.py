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


def test_spark_example_prints_what_the_readme_shows(spark, capsys) -> None:
    """The Spark example (the spark extra) finds the smart-grid matches the README shows, run
    in this process (its ``session`` is the suite's: one JVM start less) with the repository's
    root as its folder (the JVM's, where its relative paths resolve)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- spark-example[^>]*-->\n```python\n(.*?)```\n\nprints\n\n```\n(.*?)```", readme, re.S)
    assert found is not None, "the Spark example or its output block is missing"
    code, expected = found.groups()
    code = code.replace('"fixtures/', f'"{ROOT}/fixtures/')  # also for Python's own open()
    capsys.readouterr()
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out == expected


def test_spark_command_line_example_writes_what_spaseq_run_writes(spark, capsys, monkeypatch) -> None:
    """The README's `spaseq run --spark` command, run in this process (so in the suite's Spark
    session) from the repository's root, writes the bytes the same command without --spark
    writes."""
    import shlex

    from spaseq.engine.cli.main import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- spark-cli-example[^>]*-->\n```sh\n(.*?)```", readme, re.S)
    assert found is not None, "the README's spaseq run --spark example is missing"
    argv = shlex.split(found.group(1).replace("\\\n", " "))
    assert argv[0] == "spaseq" and "--spark" in argv
    monkeypatch.chdir(ROOT)
    plain = argv[1:argv.index("--spark")] + argv[argv.index("--spark") + 2:]
    assert main(plain) == 0
    expected = capsys.readouterr().out
    assert main(argv[1:]) == 0
    assert capsys.readouterr().out == expected and expected.endswith("(6 matches)\n")
