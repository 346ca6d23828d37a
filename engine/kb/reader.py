"""Opening a KB store for reading: the current version, read-only, under a lease, and
noticing when a ``kb refresh`` has switched CURRENT to a newer version."""

from __future__ import annotations

import os
import time

from pyoxigraph import NamedNode, Store

from spaseq.engine.errors import KnowledgeBaseError
from spaseq.engine.kb.layout import Lease, StoreLayout


class KbStore:
    """The current version of an on-disk knowledge-base store, opened read-only.

    ``store`` is a pyoxigraph Store; ``refresh()`` switches to a newer version if one became
    current (checked at most once per ``check_interval_s`` unless forced) and releases the
    lease on the old one, so ``kb refresh`` may delete it.
    """

    def __init__(self, path: str | os.PathLike, check_interval_s: float = 1.0,
                 version: int | None = None) -> None:
        """``version``: that version, kept (``refresh`` never switches): what Spark's executors
        open, the version the driver read, so every part of a job joins with the same KB."""
        self.layout = StoreLayout.at(path)
        self.layout.require()
        self.check_interval_s = check_interval_s
        self.pinned = version
        self._lease: Lease | None = None
        self._store: Store | None = None
        self._next_check = 0.0
        self._open(version)

    @property
    def path(self) -> str:
        return str(self.layout.root)

    @property
    def store(self) -> Store:
        if self._store is None:
            raise KnowledgeBaseError("the knowledge-base store is closed", self.layout.location())
        return self._store

    @property
    def version(self) -> int:
        return self._lease.version if self._lease is not None else 0

    @property
    def meta(self) -> dict:
        return self.layout.meta(self.version)

    def graphs(self) -> list[NamedNode]:
        """The named graphs of the open version, sorted by IRI."""
        return sorted((g for g in self.store.named_graphs() if isinstance(g, NamedNode)),
                      key=lambda g: g.value)

    def _open(self, version: int | None = None) -> None:
        lease = self.layout.acquire(version)
        try:
            store = Store.read_only(str(self.layout.oxigraph_dir(lease.version)))
        except (OSError, ValueError, RuntimeError) as exc:
            lease.release()
            raise KnowledgeBaseError(f"corrupt store: cannot open version {lease.version}: {exc}",
                                     self.layout.location()) from None
        old, self._lease, self._store = self._lease, lease, store
        if old is not None:
            old.release()
        self._next_check = time.monotonic() + self.check_interval_s

    def refresh(self, force: bool = False) -> bool:
        """Open the current version if it is newer than the open one; True if it switched."""
        if self._store is None or self.pinned is not None:
            return False
        now = time.monotonic()
        if not force and now < self._next_check:
            return False
        self._next_check = now + self.check_interval_s
        current = self.layout.current()
        if current is None or current == self.version:
            return False
        self._open()
        return True

    def close(self) -> None:
        """Release the lease (the version may then be deleted by a later refresh)."""
        self._store = None
        if self._lease is not None:
            self._lease.release()

    def __enter__(self) -> KbStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        lease = getattr(self, "_lease", None)
        if lease is not None:
            lease.release()
