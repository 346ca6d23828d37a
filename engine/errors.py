"""Error types for user mistakes: each names the place (file, line, column) it comes from.

The CLI prints them as ``FILE:LINE:COLUMN: message`` and exits with status 2; they never
carry a traceback to the user.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in a user-supplied file; line and column are 1-based, either may be unknown."""

    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class SpaseqError(Exception):
    """Base class of every error caused by user input (exit status 2)."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: {self.message}"


class QueryError(SpaseqError):
    """A syntax or static error in a SPAseq query."""


class StreamError(SpaseqError):
    """Malformed or inconsistent stream input (replay files, stream description files)."""


class KnowledgeBaseError(SpaseqError):
    """A knowledge-base file or store that cannot be used."""


class UsageError(SpaseqError):
    """A command-line mistake (unknown stream name, missing file, bad option value)."""


class MissingExtraError(SpaseqError, ImportError):
    """A feature whose dependencies are an optional extra of spaseq that is not installed (the
    message says which: ``pip install 'spaseq[server]'``); an ImportError too, since it is
    raised where the feature is imported."""


def require_extra(extra: str, feature: str, *modules: str) -> None:
    """MissingExtraError unless every one of ``modules`` (the extra ``extra`` of pyproject.toml)
    imports: what ``feature`` needs beyond the base install (docs/decisions.md 52)."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtraError(f"{feature} needs {module}: pip install 'spaseq[{extra}]'") from None
