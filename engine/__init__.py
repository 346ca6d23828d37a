"""spaseq.engine: SPAseq parsing, algebra, evaluation and the command line."""

from spaseq.engine.errors import QueryError, SpaseqError, StreamError, UsageError
from spaseq.engine.version import spaseq_version

__all__ = ["QueryError", "SpaseqError", "StreamError", "UsageError", "__version__"]


def __getattr__(name: str) -> str:
    """``__version__``, read from the package metadata when first asked for (engine/version.py)."""
    if name == "__version__":
        return spaseq_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "__version__"])
