"""The server's knowledge base: what the engine's GPMs read (a ``KbSource``) and the copy of
its named graphs in the store ``/sparql`` answers over (beside the materialised matches).

Two kinds, as ``spaseq serve`` takes them:

- ``--kb FILE``: an in-memory store that SPARQL Update changes (``UpdatableKb``); each update
  moves its version on, so the engine drops what it cached of the KB (as it does for a new
  store version) and the ``/sparql`` copy is made again.
- ``--kb-store DIR``: the versioned store ``spaseq kb load`` builds, read-only here; a
  ``spaseq kb refresh`` (a new current version) is followed by the engine and, through
  ``sync``, by the ``/sparql`` copy. Runs are not dropped: only KB caches are.

Only named graphs are copied: the default graph of ``/sparql`` is the matches'."""

from __future__ import annotations

import json
import os
from typing import Any

from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Store

from spaseq.engine.gpm_eval.kb_source import KbSource, StaticKb


class UpdateError(Exception):
    """A SPARQL Update the KB refuses (400): the parser's or evaluator's message."""


class UpdatableKb(StaticKb):
    """An in-memory KB that SPARQL Update may change; ``version`` counts the updates."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.version = 0

    def update(self, text: str) -> None:
        """Apply ``text`` (one pyoxigraph transaction) and move the version on."""
        try:
            self.store.update(text)
        except SyntaxError as exc:
            raise UpdateError(exc.msg or str(exc)) from None
        except (OSError, ValueError, RuntimeError) as exc:
            raise UpdateError(str(exc)) from None
        self.version += 1


class KbMirror:
    """Keeps the KB's named graphs copied into ``target`` (the ``/sparql`` store) at the KB's
    current version."""

    def __init__(self, kb: KbSource | None, target: Store, record: str | None = None) -> None:
        """``record``: a file naming the graphs copied, for an on-disk ``target`` (``--data``):
        a restart then removes what an earlier run copied and the KB no longer has."""
        self.kb = kb
        self.target = target
        self.record = record
        self.version: int | None = None   # the KB version copied
        self._graphs: list[Any] = []      # the graphs copied (cleared before a new copy)
        if record is not None and os.path.exists(record):
            with open(record, encoding="utf-8") as f:
                self._graphs = [BlankNode(g[2:]) if g.startswith("_:") else NamedNode(g) for g in json.load(f)]

    @property
    def graphs(self) -> list[Any]:
        """The KB's named graphs, as last copied."""
        return list(self._graphs)

    @property
    def read_only(self) -> bool:
        """Whether SPARQL Update is refused (a versioned store, or no KB object to change)."""
        return not isinstance(self.kb, UpdatableKb)

    def sync(self, force: bool = False) -> bool:
        """Copy the KB again if its version moved on (a versioned store is checked for a newer
        version first, at most once a second unless ``force``); True if it copied."""
        if self.kb is None:
            return False
        self.kb.refresh(force)
        if self.version == self.kb.version:
            return False
        graphs = list(self.kb.graphs())
        for g in {*self._graphs, *graphs}:
            self.target.remove_graph(g)
        self.target.extend(q for q in self.kb.store.quads_for_pattern(None, None, None, None)
                           if not isinstance(q.graph_name, DefaultGraph))
        for g in graphs:  # an empty graph too (made by the Graph Store Protocol's PUT): it exists
            self.target.add_graph(g)
        self._graphs, self.version = graphs, self.kb.version
        if self.record is not None:
            names = [f"_:{g.value}" if isinstance(g, BlankNode) else g.value for g in graphs]
            with open(self.record + ".tmp", "w", encoding="utf-8") as f:
                json.dump(names, f)
            os.replace(self.record + ".tmp", self.record)
        return True
