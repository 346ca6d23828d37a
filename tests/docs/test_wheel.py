"""`make dist` builds a wheel that installs and runs where there is no Rust, and an sdist that
carries the native core's sources: the README's wheel block, run as written in a fresh venv
whose PATH has no cargo, prints the smart-grid matches the development install prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.1.0"
#: the README's marker before the block it runs
MARKER = "<!-- wheel-example:"


def readme_block() -> str:
    """The shell block after the README's wheel-example marker."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(re.escape(MARKER) + r".*?-->\n```sh\n(.*?)```", readme, re.S)
    assert found is not None, "the README's wheel example is missing"
    return found.group(1)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built as `make dist` builds them (but in this venv rather than in
    isolated build environments), into a temporary folder."""
    recipe = (ROOT / "Makefile").read_text(encoding="utf-8").split("\ndist:", 1)[1].split("\n\n", 1)[0]
    assert "-m build --sdist --wheel --outdir dist ." in recipe, "make dist changed: change this test too"
    out = tmp_path_factory.mktemp("dist")
    for stale in (*ROOT.glob("build/lib.*"), *ROOT.glob("build/bdist.*")):
        shutil.rmtree(stale)
    # the interpreter the release artifacts were built for: cargo then rebuilds nothing
    env = {**os.environ, "PYO3_PYTHON": os.environ.get("PYO3_PYTHON", sys.executable)}
    # in this venv (the test extra has the build backend): no isolated build environments to make
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel",
                           "--outdir", str(out), "."],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_wheel_is_abi3_and_carries_the_extension_and_the_package_data(dist: Path) -> None:
    wheel = dist / f"spaseq-{VERSION}-cp310-abi3-linux_x86_64.whl"
    assert wheel.exists(), sorted(p.name for p in dist.iterdir())
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "spaseq/engine/_native.abi3.so" in names
    for data in ("spaseq/engine/language/spaseq.lark", "spaseq/engine/server/static/console.html",
                 "spaseq/engine/server/static/console.js",
                 "spaseq/engine/_native/__init__.pyi", "spaseq/engine/py.typed",
                 f"spaseq-{VERSION}.dist-info/licenses/LICENSE"):
        assert data in names
    # the native core's sources and build are the sdist's, not the wheel's
    assert not [n for n in names if n.endswith((".rs", "Cargo.toml")) or "/target/" in n]


def test_the_sdist_carries_the_native_sources_and_no_build(dist: Path) -> None:
    with tarfile.open(dist / f"spaseq-{VERSION}.tar.gz") as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    tracked = subprocess.run(["git", "ls-files", "engine/native"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    sources = {n for n in tracked if n.endswith((".rs", "Cargo.toml", "Cargo.lock"))}
    assert sources and sources <= names, sorted(sources - names)[:5]
    assert not [n for n in names if "/target/" in n or n.endswith(".so")]
    assert {"pyproject.toml", "README.md", "LICENSE", "engine/language/spaseq.lark"} <= names


def test_the_readme_wheel_block_runs_without_rust(dist: Path, tmp_path: Path) -> None:
    """The README block as written, but for where the venv and dist/ are: no cargo on the PATH."""
    block = readme_block()
    assert "make dist" not in block  # the block follows it: the fixture built dist/
    venv = tmp_path / "venv"
    script = block.replace("/tmp/spaseq-venv", str(venv)).replace("dist/", f"{dist}/")
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if p and not (Path(p) / "cargo").exists() and ".venv" not in p)
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CACHE_DIR": os.environ.get(
               "PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))}
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script.replace("pip install", "pip install -q")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the wheel's module, not the tree's: the venv's site-packages holds the abi3 extension
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import spaseq.engine._native as n; print(n.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert where.strip().endswith("site-packages/spaseq/engine/_native.abi3.so"), where
    # the same table the development install prints
    command = block.split("pip install", 1)[1].split("\n", 1)[1]
    expected = subprocess.run(["bash", "-c", command.replace("spaseq run", f"{Path(sys.executable).parent}/spaseq run", 1)],
                              cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert done.stdout.endswith(expected) and "(6 matches)" in expected, (done.stdout, expected)
    assert "Alice" in expected and "Grenoble" in expected
