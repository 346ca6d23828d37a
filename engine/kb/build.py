"""Building a version's Oxigraph store on the driver: bulk-load an export into a new
directory, or copy the previous version and apply a diff (removed, then added quads)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pyoxigraph import NamedNode, RdfFormat, Store, parse

DELETE_BATCH = 5000


def bulk_load(parts: Iterable[Path], target: Path) -> None:
    """A new Oxigraph store at ``target`` holding the quads of the N-Quads ``parts``."""
    store = Store(str(target))
    for part in parts:
        store.bulk_load(path=str(part), format=RdfFormat.N_QUADS)
    store.flush()
    store.optimize()
    del store


def apply_diff(previous: Path, target: Path, removed: Iterable[Path], added: Iterable[Path]) -> None:
    """A copy of the store at ``previous`` (a RocksDB checkpoint, hard links where possible)
    at ``target``, minus the quads of ``removed``, plus those of ``added``."""
    Store.read_only(str(previous)).backup(str(target))
    store = Store(str(target))
    for part in removed:
        with open(part, "rb") as handle:
            batch = []
            for quad in parse(handle, format=RdfFormat.N_QUADS):
                batch.append(quad)
                if len(batch) >= DELETE_BATCH:
                    _delete(store, batch)
                    batch = []
            _delete(store, batch)
    for part in added:
        store.bulk_load(path=str(part), format=RdfFormat.N_QUADS)
    store.flush()
    store.optimize()
    del store


def _delete(store: Store, quads: list) -> None:
    """Remove a batch of quads in one transaction (SPARQL DELETE DATA)."""
    if not quads:
        return
    body = []
    for q in quads:
        triple = f"{q.subject} {q.predicate} {q.object} ."
        g = q.graph_name
        body.append(f"GRAPH {g} {{ {triple} }}" if isinstance(g, NamedNode) else triple)
    store.update("DELETE DATA { " + "\n".join(body) + " }")


def count_quads(store: Store) -> int:
    return len(store)
