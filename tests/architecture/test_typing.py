"""The public API type-checks: mypy (the test extra) finds no error in the modules
``[tool.mypy] packages`` names, and every package ships ``py.typed`` so that users' type
checkers read spaseq's hints (PEP 561)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.architecture.test_layering import PACKAGES, ROOT


def test_every_package_ships_py_typed() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = config["tool"]["setuptools"]["package-data"]
    for folder, package in PACKAGES.items():
        assert (ROOT / folder / "py.typed").is_file(), folder
        assert "py.typed" in package_data.get(package, []), package


def test_mypy_finds_no_error_in_the_public_api(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is missing: pip install -e '.[test]'")
    # the folders are the spaseq.* packages once installed; mypy reads them through links
    tree = tmp_path / "spaseq"
    tree.mkdir()
    for folder in PACKAGES:
        (tree / folder).symlink_to(ROOT / folder, target_is_directory=True)
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"],
        capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == ""
