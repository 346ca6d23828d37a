"""The package type-checks: mypy (the test extra) finds no error in the modules ``[tool.mypy]
packages`` names (every package of spaseq), stubtest finds the extension's stubs
(``engine/_native/*.pyi``) true to the compiled module, and every package ships ``py.typed``
so that users' type checkers read spaseq's hints (PEP 561)."""

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


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A folder holding ``spaseq/``, whose packages are links to the repository's folders (they
    are the spaseq.* packages only once installed; mypy reads them through the links)."""
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is missing: pip install -e '.[test]'")
    root = tmp_path_factory.mktemp("typing")
    (root / "spaseq").mkdir()
    for folder, package in PACKAGES.items():
        (root / "spaseq" / package.split(".")[-1]).symlink_to(ROOT / folder, target_is_directory=True)
    return root


def _mypy(tree: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MYPYPATH": str(tree)}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=tree, env=env,
                          timeout=600)


def test_mypy_finds_no_error_in_the_package(tree: Path) -> None:
    out = _mypy(tree, "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                "--cache-dir", str(tree / "cache"), "--no-error-summary")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == ""


def test_mypy_checks_every_module() -> None:
    """``[tool.mypy] packages`` names whole packages, so a new module is checked too, and no
    module's errors go unreported."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert sorted(config["packages"]) == sorted(PACKAGES.values())
    assert "follow_imports" not in config  # every module's own errors are reported
    assert "ignore_errors" not in config
    exempt = [o["module"] for o in config.get("overrides", []) if o.get("ignore_errors")]
    assert not exempt, f"modules whose mypy errors are not reported: {exempt}"


def test_stubtest_finds_the_stubs_true_to_the_extension(tree: Path) -> None:
    """``python -m mypy.stubtest``: every name, class and signature of ``spaseq.engine._native``
    and its ``_testing`` submodule is in the stubs as at runtime, and nothing more. (No
    allowlist: should stubtest ever need one for a limitation of its own, give it here with
    ``--allowlist``, one commented line per entry.)"""
    out = _mypy(tree, "mypy.stubtest", "spaseq.engine._native", "--mypy-config-file",
                str(ROOT / "pyproject.toml"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == "Success: no issues found in 2 modules\n", out.stdout  # _native and _testing
