"""The package says what it is: an MIT LICENSE shipped as license-files, the license as an
SPDX expression (PEP 639, no setuptools deprecation warning), and a CHANGELOG whose newest
release is the package's version."""

from __future__ import annotations

import re
from importlib.metadata import metadata
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_an_spdx_expression_with_its_file() -> None:
    project = pyproject()["project"]
    assert project["license"] == "MIT"  # a string: the {text = ...} table is deprecated
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "the spaseq authors" in text
    # PEP 639 needs setuptools 77 or later to build it
    requires = pyproject()["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(\d+)", r) and int(r.split(">=")[1]) >= 77 for r in requires)


def test_the_installed_metadata_carries_the_license() -> None:
    meta = metadata("spaseq")
    assert meta["License-Expression"] == "MIT", "reinstall spaseq (make test does) after a pyproject change"
    assert "LICENSE" in (meta.get_all("License-File") or [])


def test_changelog_has_unreleased_and_the_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\]", changelog, re.M)
    assert versions[0] == "Unreleased"
    assert versions[1] == pyproject()["project"]["version"]
