"""Durability under ``--data DIR``: a write-ahead journal of what changes the engine (queries
registered and deleted, event batches as received, heartbeats), fsynced before the client is
answered, and checkpoints (``Engine.snapshot()`` plus the server's own state) after which the
journal starts afresh, so it holds only what came after the last snapshot.

Layout of DIR (generation g counts checkpoints):

    state.json           {"generation": g, "server": {...}}, replaced atomically: the commit
                         point of a checkpoint
    snapshot-g.bin       Engine.snapshot() at checkpoint g (absent for g = 0)
    journal-g.jsonl      one JSON record per line, everything accepted after checkpoint g
    matches/ID.jsonl     each query's numbered results (``matchlog``)
    store/               the on-disk Oxigraph store /sparql answers over (matches materialised)

A crash at any point leaves either the old generation or the new one complete: the new
snapshot and empty journal are written and fsynced before state.json names them, and the old
files are deleted only after. A last journal line cut short by a crash was never answered
and is dropped."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

STATE = "state.json"


@dataclass
class Recovered:
    """What a directory holds at start: the last checkpoint and the journal after it."""

    generation: int = 0
    snapshot: bytes | None = None
    server: dict = field(default_factory=dict)
    records: list[dict] = field(default_factory=list)


class Journal:
    """The journal and checkpoints of one data directory (one server at a time)."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        os.makedirs(os.path.join(directory, "matches"), exist_ok=True)
        self.generation = 0
        self._fd: int | None = None
        self.appended = 0  # records since the last checkpoint

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def recover(self) -> Recovered:
        """Read the last checkpoint and the whole records after it; open the journal for appends."""
        out = Recovered()
        state_path = self.path(STATE)
        if os.path.exists(state_path):
            with open(state_path, encoding="utf-8") as f:
                state = json.load(f)
            out.generation, out.server = state["generation"], state["server"]
            snap = self.path(f"snapshot-{out.generation}.bin")
            if os.path.exists(snap):
                with open(snap, "rb") as f:
                    out.snapshot = f.read()
        self.generation = out.generation
        journal = self.path(f"journal-{out.generation}.jsonl")
        if os.path.exists(journal):
            with open(journal, "rb") as f:
                data = f.read()
            end = data.rfind(b"\n") + 1
            if end < len(data):  # cut short by a crash: never acknowledged
                with open(journal, "r+b") as f:
                    f.truncate(end)
            out.records = [json.loads(line) for line in data[:end].decode().splitlines()]
        self.appended = len(out.records)
        self._fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        return out

    def append(self, record: dict) -> None:
        """Write one record and force it to disk before returning (the 2xx comes after)."""
        assert self._fd is not None, "recover() first"
        os.write(self._fd, (json.dumps(record, ensure_ascii=False) + "\n").encode())
        os.fsync(self._fd)
        self.appended += 1

    def checkpoint(self, snapshot: bytes, server: dict) -> None:
        """Make ``snapshot`` and ``server`` the new starting point and empty the journal."""
        new = self.generation + 1
        _write_synced(self.path(f"snapshot-{new}.bin"), snapshot)
        _write_synced(self.path(f"journal-{new}.jsonl"), b"")
        _write_synced(self.path(STATE + ".tmp"),
                      json.dumps({"generation": new, "server": server}).encode())
        os.replace(self.path(STATE + ".tmp"), self.path(STATE))
        _fsync_dir(self.dir)
        old, self.generation = self.generation, new
        if self._fd is not None:
            os.close(self._fd)
        self._fd = os.open(self.path(f"journal-{new}.jsonl"), os.O_WRONLY | os.O_APPEND)
        self.appended = 0
        for name in (f"snapshot-{old}.bin", f"journal-{old}.jsonl"):
            if os.path.exists(self.path(name)):
                os.remove(self.path(name))

    def writable(self) -> str | None:
        """None if the directory takes a synced write now (a probe file, written, fsynced and
        removed), else what is wrong: a full or read-only disk shows here before a write fails."""
        if self._fd is None:
            return "the journal is closed"
        probe = self.path(".health-probe")
        try:
            _write_synced(probe, b"ok\n")
            os.remove(probe)
        except OSError as exc:
            return f"cannot write in {self.dir}: {exc.strerror or exc}"
        return None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _write_synced(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
