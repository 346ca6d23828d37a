"""Each registered query's results, numbered 1, 2, ... in completion order: what every
client reads (SSE ids, ``?since=N``), kept in memory and, with ``--data``, appended to a file
before anyone is told of them, so numbers survive a restart and no result is given twice
under two numbers."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class Entry:
    """One result: its number, the jsonl contract object (as text, exact times), and for a
    CONSTRUCT query the TriG of its graph event."""

    seq: int
    line: str
    trig: str | None = None

    @property
    def record(self) -> dict:
        """The jsonl object, times as Decimals (exact)."""
        return json.loads(self.line, parse_float=Decimal)


@dataclass
class MatchLog:
    """The results of one query; ``path`` (with ``--data``) is its append-only file."""

    path: str | None = None
    entries: list[Entry] = field(default_factory=list)
    _fd: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.path is None:
            return
        if os.path.exists(self.path):
            self.entries = list(_read(self.path))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def __len__(self) -> int:
        return len(self.entries)

    def append(self, line: str, trig: str | None = None) -> Entry:
        """Number and keep a result (written to the file first, whole, with one write)."""
        entry = Entry(len(self.entries) + 1, line, trig)
        if self._fd is not None:
            os.write(self._fd, f"{entry.seq}\t{line}\t{json.dumps(trig)}\n".encode())
        self.entries.append(entry)
        return entry

    def since(self, n: int) -> list[Entry]:
        """The results numbered after ``n``."""
        return self.entries[max(n, 0):]

    def close(self, remove: bool = False) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if remove and self.path is not None and os.path.exists(self.path):
            os.remove(self.path)


def _read(path: str):
    """The entries of a log file; a last line cut short by a crash (no newline) is dropped
    and cut off the file, so appends go on after the last whole entry."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
    for raw in data[:end].decode().splitlines():
        seq, line, trig = raw.split("\t", 2)
        yield Entry(int(seq), line, json.loads(trig))
