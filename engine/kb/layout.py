"""The store directory: numbered versions, an atomically switched CURRENT pointer, reader
leases and retention.

    DIR/store.json                  marks the directory as a spaseq KB store
    DIR/CURRENT                     the current version number, replaced with os.replace
    DIR/versions/000003/meta.json   counts, graphs, sources of the version (written last)
    DIR/versions/000003/oxigraph/   the Oxigraph store (opened read-only by readers)
    DIR/versions/000003/export/     the version's distinct quads as partitioned N-Quads
    DIR/leases/000003.<host>.<pid>.<id>   one per reader of a version

A version directory is complete once its ``meta.json`` exists; CURRENT only ever names a
complete version, so readers never see a half-loaded store. A version that is no longer
current is deleted once no live reader holds a lease on it, or once it has been superseded
for longer than the retention limit. A shared/exclusive ``flock`` on ``DIR/.lock`` makes
"read CURRENT and take a lease" atomic with respect to deletion.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from spaseq.engine.errors import KnowledgeBaseError, Location

STORE_FORMAT = "spaseq-kb-store"
LAYOUT_VERSION = 1
#: How long a superseded version is kept for readers that still hold a lease (seconds).
DEFAULT_RETENTION_S = 3600.0


def version_name(version: int) -> str:
    return f"{version:06d}"


@dataclass(frozen=True)
class Lease:
    """A reader's claim on one version: the version is not deleted while the file exists."""

    path: Path
    version: int

    def release(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


@dataclass
class NewVersion:
    """A version being built inside ``StoreLayout.new_version``: its number and directory, the
    version that was current when it began (None for a new store), and the metadata the block
    sets for meta.json."""

    number: int
    previous: int | None
    dir: Path
    meta: dict | None = None


@dataclass(frozen=True)
class StoreLayout:
    """Paths and pointer operations of one store directory."""

    root: Path

    @classmethod
    def at(cls, path: str | os.PathLike) -> StoreLayout:
        return cls(Path(path).absolute())

    # ---------------------------------------------------------------- paths
    @property
    def marker(self) -> Path:
        return self.root / "store.json"

    @property
    def current_file(self) -> Path:
        return self.root / "CURRENT"

    @property
    def versions_dir(self) -> Path:
        return self.root / "versions"

    @property
    def leases_dir(self) -> Path:
        return self.root / "leases"

    @property
    def tmp_dir(self) -> Path:
        return self.root / "tmp"

    def version_dir(self, version: int) -> Path:
        return self.versions_dir / version_name(version)

    def oxigraph_dir(self, version: int) -> Path:
        return self.version_dir(version) / "oxigraph"

    def export_dir(self, version: int) -> Path:
        return self.version_dir(version) / "export"

    def meta_file(self, version: int) -> Path:
        return self.version_dir(version) / "meta.json"

    # ---------------------------------------------------------------- checks
    def location(self) -> Location:
        return Location(str(self.root))

    def exists(self) -> bool:
        return self.marker.is_file()

    def require(self) -> None:
        """KnowledgeBaseError unless this is an existing spaseq KB store with a current version."""
        if not self.root.exists():
            raise KnowledgeBaseError("no such knowledge-base store (create one with spaseq kb load)",
                                     self.location())
        if not self.root.is_dir():
            raise KnowledgeBaseError("is a file, not a knowledge-base store directory", self.location())
        if not self.exists():
            raise KnowledgeBaseError("not a spaseq knowledge-base store (no store.json; create one "
                                     "with spaseq kb load)", self.location())
        try:
            marker = json.loads(self.marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise KnowledgeBaseError(f"corrupt store.json: {exc}", self.location()) from None
        if not isinstance(marker, dict) or marker.get("format") != STORE_FORMAT:
            raise KnowledgeBaseError("corrupt store.json: not a spaseq knowledge-base store",
                                     self.location())
        with self._lock(fcntl.LOCK_SH):  # CURRENT and the version it names, read together
            self.current()

    def initialise(self) -> None:
        """Create the directory structure of a new store (idempotent); refuse a foreign directory."""
        if self.root.exists() and not self.root.is_dir():
            raise KnowledgeBaseError("is a file, not a knowledge-base store directory", self.location())
        if self.root.exists() and not self.exists() and any(self.root.iterdir()):
            raise KnowledgeBaseError("exists and is not a spaseq knowledge-base store (not empty, "
                                     "no store.json); give a new or empty directory", self.location())
        for d in (self.versions_dir, self.leases_dir, self.tmp_dir):
            d.mkdir(parents=True, exist_ok=True)
        if not self.exists():
            write_atomic(self.marker, json.dumps({"format": STORE_FORMAT, "layout": LAYOUT_VERSION}) + "\n")

    # ---------------------------------------------------------------- versions
    def current(self) -> int | None:
        """The current version, None for a store with no version yet; KnowledgeBaseError if corrupt."""
        try:
            text = self.current_file.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise KnowledgeBaseError(f"cannot read CURRENT: {exc}", self.location()) from None
        if not text.isdigit():
            raise KnowledgeBaseError(f"corrupt CURRENT pointer {text[:40]!r} (expected a version number)",
                                     self.location())
        version = int(text)
        if not self.meta_file(version).is_file() or not self.oxigraph_dir(version).is_dir():
            raise KnowledgeBaseError(f"corrupt store: CURRENT names version {version}, which is missing "
                                     "or incomplete", self.location())
        return version

    def versions(self) -> list[int]:
        """Complete versions on disk, oldest first."""
        if not self.versions_dir.is_dir():
            return []
        out = []
        for d in self.versions_dir.iterdir():
            if d.name.isdigit() and (d / "meta.json").is_file():
                out.append(int(d.name))
        return sorted(out)

    def current_at(self, seconds: float) -> int | None:
        """The version that was current at ``seconds`` (epoch time): the newest complete version
        created by then (a version becomes current as its meta.json is stamped, ``new_version``),
        or the oldest one there is; None for a store with no version. How the streaming Spark
        executors agree on one version per micro-batch (its timestamp is the same on all)."""
        found = None
        versions = self.versions()
        for version in versions:
            if self.meta(version).get("created", 0) <= seconds:
                found = version
        return found if found is not None else (versions[0] if versions else None)

    def next_version(self) -> int:
        existing = [int(d.name) for d in self.versions_dir.iterdir() if d.name.isdigit()]
        return max(existing, default=0) + 1

    def meta(self, version: int) -> dict:
        try:
            return json.loads(self.meta_file(version).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise KnowledgeBaseError(f"corrupt meta.json of version {version}: {exc}",
                                     self.location()) from None

    def write_meta(self, version: int, meta: dict) -> None:
        """Write meta.json last: it marks the version complete."""
        write_atomic(self.meta_file(version), json.dumps(meta, indent=2, sort_keys=True) + "\n")

    def switch(self, version: int) -> None:
        """Make a complete version current, atomically; mark the previous one superseded."""
        with self._lock(fcntl.LOCK_EX):
            previous = self.current()
            write_atomic(self.current_file, version_name(version) + "\n")
            if previous is not None and previous != version:
                write_atomic(self.version_dir(previous) / "superseded", f"{time.time():.3f}\n")

    # ---------------------------------------------------------------- leases
    def acquire(self, version: int | None = None) -> Lease:
        """A lease on ``version`` (default: the current one), taken atomically with reading CURRENT."""
        self.leases_dir.mkdir(parents=True, exist_ok=True)
        with self._lock(fcntl.LOCK_SH):
            v = self.current() if version is None else version
            if v is None:
                raise KnowledgeBaseError("the store has no version yet (run spaseq kb load)", self.location())
            if not self.meta_file(v).is_file():
                raise KnowledgeBaseError(f"version {v} no longer exists", self.location())
            path = self.leases_dir / f"{version_name(v)}.{os.uname().nodename}.{os.getpid()}.{os.urandom(4).hex()}"
            path.touch()
        return Lease(path, v)

    def live_leases(self) -> dict[int, int]:
        """Number of live leases per version (a lease of a dead process on this host is stale)."""
        out: dict[int, int] = {}
        if not self.leases_dir.is_dir():
            return out
        host = os.uname().nodename
        for f in self.leases_dir.iterdir():
            parts = f.name.split(".")
            if len(parts) < 4 or not parts[0].isdigit():
                continue
            pid = parts[-2]
            lease_host = ".".join(parts[1:-2])
            if lease_host == host and pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()
                continue
            out[int(parts[0])] = out.get(int(parts[0]), 0) + 1
        return out

    def collect(self, retention_s: float = DEFAULT_RETENTION_S, keep: int = 1) -> list[int]:
        """Delete superseded versions no reader uses (or superseded longer than ``retention_s``
        ago), keeping the ``keep`` newest versions in any case; also incomplete leftovers of
        failed jobs. Returns the deleted versions."""
        deleted: list[int] = []
        trash: list[Path] = []
        with self._lock(fcntl.LOCK_EX):
            current = self.current()
            leases = self.live_leases()
            complete = self.versions()
            protected = set(complete[-keep:]) if keep > 0 else set()
            now = time.time()
            for d in sorted(self.versions_dir.iterdir()):
                if not d.name.isdigit():
                    continue
                v = int(d.name)
                if v == current or v in protected:
                    continue
                if (d / "meta.json").is_file():
                    superseded = _read_float(d / "superseded")
                    expired = superseded is not None and now - superseded > retention_s
                    if leases.get(v) and not expired:
                        continue
                elif self._writing(d):
                    continue
                target = self.tmp_dir / f"trash-{d.name}-{os.urandom(4).hex()}"
                self.tmp_dir.mkdir(parents=True, exist_ok=True)
                os.replace(d, target)
                trash.append(target)
                deleted.append(v)
        for t in trash:
            shutil.rmtree(t, ignore_errors=True)
        return sorted(deleted)

    def _writing(self, d: Path) -> bool:
        """An incomplete version directory belongs to a job whose process is still alive."""
        pid = _read_float(d / ".writing")
        return pid is not None and _alive(int(pid))

    @contextlib.contextmanager
    def new_version(self, kind: str) -> Iterator[NewVersion]:
        """The one transaction that adds a version (``kb load`` and ``kb refresh``).

        Under the writer lock: create the next version's directory (tagged with this
        process's id, so ``collect`` leaves it alone while the job lives), let the block build
        it and set ``meta``, then write meta.json (stamped with the version number, ``kind``
        and creation time; it marks the version complete) and switch CURRENT to it. If the
        block or any of these steps fails before CURRENT names the new version, its directory
        is removed and the error propagates: CURRENT and the earlier versions are untouched."""
        with self.writer():
            number = self.next_version()
            pending = NewVersion(number, self.current(), self.version_dir(number))
            pending.dir.mkdir(parents=True)
            try:
                (pending.dir / ".writing").write_text(f"{os.getpid()}\n", encoding="ascii")
                yield pending
                if pending.meta is None:
                    raise RuntimeError(f"version {pending.number} was built without setting its meta")
                self.write_meta(pending.number, {**pending.meta, "version": pending.number, "kind": kind,
                                                 "created": time.time()})
                (pending.dir / ".writing").unlink()
                self.switch(pending.number)
            except BaseException:
                if not self._is_current(pending.number):
                    shutil.rmtree(pending.dir, ignore_errors=True)
                raise

    def _is_current(self, version: int) -> bool:
        """CURRENT names ``version`` (read raw: no completeness check, no error)."""
        try:
            return self.current_file.read_text(encoding="ascii").strip() == version_name(version)
        except (OSError, UnicodeDecodeError):
            return False

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """Exclusive right to build new versions; KnowledgeBaseError if another job holds it."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".write.lock", "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise KnowledgeBaseError("another spaseq kb load/refresh is writing this store",
                                         self.location()) from None
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def _lock(self, mode: int) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as handle:
            fcntl.flock(handle, mode)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomic(path: Path, text: str) -> None:
    """Write a small file so that readers see the old or the new content, never a mix."""
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    with contextlib.suppress(OSError):
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_float(path: Path) -> float | None:
    try:
        return float(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None

