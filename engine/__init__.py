"""spaseq.engine: SPAseq parsing, algebra, evaluation and the command line."""

from spaseq.engine.errors import QueryError, SpaseqError, StreamError, UsageError
from spaseq.engine.version import __version__

__all__ = ["QueryError", "SpaseqError", "StreamError", "UsageError", "__version__"]
