"""pyoxigraph's parser on the inputs that are not event streams: knowledge-base files (``kb``),
stream description data files (``streamfile``), and event text pushed through the API or
posted to ``spaseq serve`` (a Turtle or N-Triples graph). Opening a file (gzip sniffed by its
magic bytes), its format's name from the file name, feeding the parser a line at a time so
that what it yields has a line, and the place and bare message of its syntax errors.

Replay files and live input are not read here: the native reader reads them (``native_events``)."""

from __future__ import annotations

import gzip
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO

from spaseq.engine.errors import Location

GZIP_MAGIC = b"\x1f\x8b"
#: What reading a file may raise besides the parser's SyntaxError.
READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError)

_PARSER_PREFIX = re.compile(r"^Parser error (?:at|between) [^:]*: ")


def strip_gz(path: str) -> str:
    """The file name without a trailing ``.gz``, to guess the format underneath."""
    return path[:-3] if path.lower().endswith(".gz") else path


def extension(path: str) -> str:
    """The lower-case extension of a file name after removing ``.gz`` (``"trig"``, ``"nq"``...)."""
    base = os.path.basename(strip_gz(path))
    return base.rsplit(".", 1)[1].lower() if "." in base else ""


def open_rdf(path: str) -> BinaryIO:
    """Open a file for binary reading, transparently decompressing gzip (sniffed by magic bytes)."""
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == GZIP_MAGIC:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")  # the caller closes it


@dataclass
class LineTrackingReader:
    """A file-like reader feeding pyoxigraph one line at a time, so quads can be given a line.

    pyoxigraph yields a quad as soon as its terminating token is read, so ``line`` (the line of
    the last chunk handed over) is the line where the most recently yielded quad ends.
    """

    source: BinaryIO
    line: int = 0
    _newlines: int = field(default=0, repr=False)

    def read(self, size: int = -1) -> bytes:
        """Read at most one line (and at most ``size`` bytes) from the source."""
        chunk = self.source.readline(size if size and size > 0 else -1)
        if chunk:
            self.line = self._newlines + 1
            self._newlines += chunk.count(b"\n")
        return chunk


def syntax_error_location(err: SyntaxError, path: str) -> tuple[Location, str]:
    """The location and the bare message of a pyoxigraph SyntaxError about the file ``path``."""
    message = err.msg if isinstance(err.msg, str) and err.msg else str(err)
    message = _PARSER_PREFIX.sub("", message)
    line = err.lineno if isinstance(err.lineno, int) and err.lineno > 0 else None
    column = err.offset if line is not None and isinstance(err.offset, int) and err.offset > 0 else None
    return Location(path, line, column), message
