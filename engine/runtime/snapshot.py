"""The snapshot container (``Engine.snapshot``/``Engine.restore``): a magic line, the
format version, the engine's Python state as JSON (registered queries as plans, options,
settings) and the native core's state (its own versioned binary: dictionary, events held,
every partial match, the clocks and promises about time, each query's results numbered,
composition's held-back events; engine/native/automaton ``snapshot.rs``). JSON rather than pickle: restoring a snapshot never runs code from it."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

from spaseq.engine.errors import SpaseqError

MAGIC = b"spaseq-snapshot\n"
VERSION = 3  # 2: numbering, DISTINCT and composition moved to the native state; 3: "late"
_HEADER = struct.Struct("<II")  # format version, length of the JSON part


class SnapshotError(SpaseqError):
    """Bytes that are not a snapshot this spaseq can restore."""


@dataclass(frozen=True)
class Snapshot:
    """A decoded snapshot: the Python state and the native core's bytes."""

    state: dict[str, Any]
    native: bytes

    def encode(self) -> bytes:
        text = json.dumps(self.state, separators=(",", ":"), sort_keys=True).encode()
        return MAGIC + _HEADER.pack(VERSION, len(text)) + text + self.native

    @classmethod
    def decode(cls, data: bytes) -> Snapshot:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise SnapshotError(f"a snapshot is bytes, not {type(data).__name__}")
        data = bytes(data)
        if not data.startswith(MAGIC):
            raise SnapshotError("not a spaseq snapshot (it does not start with the snapshot magic)")
        at = len(MAGIC)
        if len(data) < at + _HEADER.size:
            raise SnapshotError("a truncated snapshot")
        version, length = _HEADER.unpack_from(data, at)
        if version != VERSION:
            raise SnapshotError(f"snapshot format {version}, but this spaseq reads format {VERSION}")
        at += _HEADER.size
        if len(data) < at + length:
            raise SnapshotError("a truncated snapshot")
        try:
            state = json.loads(data[at:at + length])
        except ValueError as exc:
            raise SnapshotError(f"a corrupt snapshot: {exc}") from None
        return cls(state, data[at + length:])
