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

    @property
    def numbered(self) -> str:
        """The jsonl object with its number first, as ``"id"`` (an ndjson line): the SSE
        ``id:``, what ``Last-Event-ID`` and ``?since=`` resume from (decision 73)."""
        return f'{{"id":{self.seq},{self.line[1:]}'


class Expired(Exception):
    """Results asked for are no longer kept (``--keep-matches``): the first number still kept."""

    def __init__(self, first: int) -> None:
        super().__init__(first)
        self.first = first


@dataclass
class MatchLog:
    """The results of one query; ``path`` (with ``--data``) is its append-only file.

    ``keep`` (``--keep-matches``) bounds what is kept: the newest ``keep`` results, in memory
    and, from the next ``trim``, in the file (at least one is kept, so numbering survives a
    restart); numbers go on regardless, and asking for results
    already dropped raises ``Expired``."""

    path: str | None = None
    keep: int | None = None
    entries: list[Entry] = field(default_factory=list)
    _fd: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.path is None:
            return
        if os.path.exists(self.path):
            self.entries = list(_read(self.path))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def __len__(self) -> int:
        """The number of results ever given (the last number), kept or not."""
        return self.entries[-1].seq if self.entries else 0

    @property
    def first(self) -> int:
        """The first number still kept (``len + 1`` when none is)."""
        return self.entries[0].seq if self.entries else len(self) + 1

    def append(self, line: str, trig: str | None = None) -> Entry:
        """Number and keep a result (written to the file first, whole, with one write)."""
        entry = Entry(len(self) + 1, line, trig)
        if self._fd is not None:
            os.write(self._fd, f"{entry.seq}\t{line}\t{json.dumps(trig)}\n".encode())
        self.entries.append(entry)
        if self.keep is not None and len(self.entries) > 2 * self.keep:  # amortised
            self._drop()
        return entry

    def since(self, n: int) -> list[Entry]:
        """The results numbered after ``n`` (Expired if some of them are no longer kept)."""
        n = max(n, 0)
        if n + 1 < self.first:
            raise Expired(self.first)
        return self.entries[max(n + 1 - self.first, 0):] if self.entries else []

    def _drop(self) -> None:
        assert self.keep is not None
        if len(self.entries) > self.keep:
            self.entries = self.entries[len(self.entries) - self.keep:]

    def trim(self) -> None:
        """Apply ``keep`` now, to memory and to the file (rewritten atomically: a crash
        leaves the old file or the new one, each numbered as before)."""
        if self.keep is None:
            return
        self._drop()
        if self.path is None or self._fd is None:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            for e in self.entries:
                f.write(f"{e.seq}\t{e.line}\t{json.dumps(e.trig)}\n")
            f.flush()
            os.fsync(f.fileno())
        os.close(self._fd)
        os.replace(tmp, self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

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
