"""The README's CONSTRUCT / composition / materialisation examples run as written, writing
only to temporary directories."""

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


def files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


def test_readme_examples_run(tmp_path):
    tree, scratch = tmp_path / "tree", tmp_path / "tmp"   # a clone's work tree, and $TMPDIR
    shutil.copytree(ROOT / "fixtures" / "composition", tree / "fixtures" / "composition")
    scratch.mkdir()
    before = files(tree)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "TMPDIR": str(scratch)}
    outputs = []
    for script in blocks("sh"):
        done = subprocess.run(["bash", "-e", "-c", script], cwd=tree, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert "(1 match)" in outputs[0] and "(1 match)" in outputs[1]  # the same match, from the file
    printed = [line for line in outputs[2].splitlines() if line.startswith("<http://ex.org/alerts#")]
    assert [line.split()[0] for line in printed] == [f"<http://ex.org/alerts#match-{k}>" for k in range(1, 5)]
    assert printed[1].endswith("<http://ex.org/h2>")
    (python,) = blocks("python")
    done = subprocess.run([sys.executable, "-c", python], cwd=tree, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "4 {'s': 'http://ex.org/h1', 'l1': '70', 'p2': '55', 'l2': '80'}\n"
    # the examples' outputs went to temporary directories, never into the work tree
    assert files(tree) == before
    assert any(scratch.iterdir())
