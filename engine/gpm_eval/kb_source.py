"""The knowledge base as GPM evaluation sees it: a pyoxigraph store with a version number that
may move on (``KbSource``). An in-memory store never changes (``StaticKb``); an on-disk store
made by ``spaseq kb load`` (``kb.reader.KbStore``) follows ``kb refresh``. This module knows
only the protocol, so evaluation never loads the store layout's locking code."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pyoxigraph import BlankNode, NamedNode, Store


@runtime_checkable
class KbSource(Protocol):
    """What the evaluators read of a knowledge base."""

    @property
    def store(self) -> Store: ...

    @property
    def version(self) -> int: ...

    def refresh(self, force: bool = False) -> bool: ...

    def graphs(self) -> list: ...


class StaticKb:
    """An in-memory (or caller-managed) pyoxigraph Store as a knowledge base that never changes."""

    version = 0

    def __init__(self, store: Store) -> None:
        self.store = store

    def refresh(self, force: bool = False) -> bool:
        return False

    def graphs(self) -> list[NamedNode | BlankNode]:
        """Every named graph, blank-node names included (a TriG KB file may have them)."""
        return list(self.store.named_graphs())


def kb_source(kb: Store | KbSource) -> KbSource:
    """The evaluators' view of a KB given as a pyoxigraph Store or an existing source."""
    if isinstance(kb, Store):
        return StaticKb(kb)
    if isinstance(kb, KbSource):
        return kb
    raise TypeError(f"a knowledge base must be a pyoxigraph Store, a KbStore or a store path, not {kb!r}")
