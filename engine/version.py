"""spaseq's version: pyproject.toml's, read back from the installed distribution (one
source of truth; ``spaseq --version`` and ``spaseq.engine.__version__`` give it). Read on
first use: ``importlib.metadata`` costs a command's start-up some 20-35 ms."""

from __future__ import annotations

from functools import cache


@cache
def spaseq_version() -> str:
    """The installed distribution's version ("0+unknown" for a tree imported uninstalled)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("spaseq")
    except PackageNotFoundError:  # pragma: no cover - the tree imported without being installed
        return "0+unknown"

