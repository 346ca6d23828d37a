"""The README's CONSTRUCT / composition / materialisation examples run as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = ("## CONSTRUCT output", "## Composing queries", "## Materialising matches")


def blocks(lang: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    out = []
    for heading in SECTIONS:
        start = text.index(heading + "\n")
        end = text.find("\n## ", start + 1)
        out += re.findall(rf"```{lang}\n(.*?)```", text[start:end if end > 0 else None], re.S)
    return out


def test_readme_examples_run(tmp_path):
    shutil.copytree(ROOT / "fixtures" / "composition", tmp_path / "fixtures" / "composition")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    outputs = []
    for script in blocks("sh"):
        done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert "(2 matches)" in outputs[0] and "(2 matches)" in outputs[1]
    printed = [line for line in outputs[2].splitlines() if line.startswith("<http://ex.org/alerts#")]
    assert [line.split()[0] for line in printed] == [f"<http://ex.org/alerts#match-{k}>" for k in range(1, 5)]
    assert printed[1].endswith("<http://ex.org/h2>")
    (python,) = blocks("python")
    done = subprocess.run([sys.executable, "-c", python], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "3 {'s': 'http://ex.org/h1', 'l1': '70', 'p2': '70', 'l2': '80'}\n"
