"""Checked queries kept on disk by their text, as Python keeps compiled modules: a query file
run again starts without the parser (importing lark and loading its tables is about a third
of a short ``spaseq run``'s start-up).

An entry is the pickled ``Query`` of one (file name, text), under a key that also covers the
front end's code (the path, size and modification time of every source file of
``spaseq.engine``), Python's and pyoxigraph's versions: a changed checkout or an upgrade never
reads an old entry. Only queries that parsed and checked are kept
(errors are always found afresh). The directory is ``$SPASEQ_QUERY_CACHE``, else ``queries``
in spaseq's cache directory (``user_cache``); created private to the user, and not used when it
is anyone else's or others can write to it (an entry is a pickle). ``SPASEQ_QUERY_CACHE=off``
turns the cache off. Any failure to read or write it is silent: the query is then parsed as if
there were no cache."""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from spaseq.engine.algebra.operators import Query

__all__ = ["cached_query", "query_cache_dir"]

#: The folder of the query cache, or ``off``.
QUERY_CACHE_ENV = "SPASEQ_QUERY_CACHE"

#: entries kept; past this, the older half is removed when an entry is written
MAX_ENTRIES = 512
#: the layout of an entry (bumped when it changes)
FORMAT = b"spaseq-query-cache-1"

_fingerprint: bytes | None = None


def query_cache_dir() -> Path | None:
    """Where entries are kept (None: the cache is off)."""
    chosen = os.environ.get(QUERY_CACHE_ENV)
    if chosen:
        return None if chosen == "off" else Path(chosen)
    from spaseq.engine.user_cache import cache_dir

    return cache_dir() / "queries"


def _sources_fingerprint() -> bytes:
    """What the parsed form of a query depends on besides its text (computed once)."""
    global _fingerprint
    if _fingerprint is None:
        import pyoxigraph

        digest = hashlib.sha256(FORMAT)
        # spaseq.engine's folder (an upgrade rewrites its files, so spaseq's version need not
        # be read: importlib.metadata alone costs 10 ms)
        _digest_tree(str(Path(__file__).resolve().parents[1]), digest)
        digest.update(f"{sys.version} {pyoxigraph.__version__}".encode())
        _fingerprint = digest.digest()
    return _fingerprint


def _digest_tree(folder: str, digest: hashlib._Hash) -> None:
    """Every Python source and grammar under ``folder``: its path, size and mtime."""
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in ("__pycache__", "native"):
                    _digest_tree(entry.path, digest)
            elif entry.name.endswith((".py", ".lark")):
                info = entry.stat()
                digest.update(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())


def _private(folder: Path) -> bool:
    """``folder`` exists, is the user's, and only the user can write to it."""
    try:
        info = folder.stat()
    except OSError:
        return False
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def cached_query(text: str, file: str, parse: Callable[[], Query]) -> Query:
    """The checked query of ``text`` read from ``file``: the cache's entry, or ``parse()``
    (whose errors propagate) kept for next time."""
    folder = query_cache_dir()
    if folder is None or not hasattr(os, "getuid"):
        return parse()
    try:
        key = hashlib.sha256(_sources_fingerprint())
    except Exception:  # an unusual install: no fingerprint, no cache
        return parse()
    key.update(file.encode("utf-8", "surrogatepass") + b"\0" + text.encode("utf-8", "surrogatepass"))
    entry = folder / f"{key.hexdigest()[:40]}.pickle"
    if _private(folder):
        try:
            with open(entry, "rb") as f:
                found = pickle.load(f)
            if isinstance(found, Query):
                os.utime(entry)  # recently used: kept when the older entries are pruned
                return found
        except Exception:  # none yet, or a damaged one: parsed (again) and written
            pass
    query = parse()
    _store(folder, entry, query)
    return query


def _store(folder: Path, entry: Path, query: Query) -> None:
    """Write ``entry`` atomically (nothing when the folder cannot be made private)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(folder):
            return
        data = pickle.dumps(query, protocol=pickle.HIGHEST_PROTOCOL)
        names = os.listdir(folder)
        if len(names) >= MAX_ENTRIES:
            _prune(folder, names)
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, entry)
    except Exception:  # a read-only or full disk: no cache this time
        return


def _prune(folder: Path, names: list[str]) -> None:
    """Remove the older half of the entries (by last use: a hit touches its entry)."""
    dated = []
    for name in names:
        try:
            dated.append(((folder / name).stat().st_mtime_ns, name))
        except OSError:
            continue
    dated.sort()
    for _, name in dated[: len(dated) // 2 + 1]:
        try:
            (folder / name).unlink()
        except OSError:
            continue
