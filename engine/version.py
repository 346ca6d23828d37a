"""spaseq's version: pyproject.toml's, read back from the installed distribution (one
source of truth; ``spaseq --version`` and ``spaseq.engine.__version__`` give it)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spaseq")
except PackageNotFoundError:  # pragma: no cover - the tree imported without being installed
    __version__ = "0+unknown"
