"""Where the class-data-sharing (CDS) archive of Spark's classes lives and whether it is ready:
a dynamic archive of the classes a small load job loads, which the driver JVM maps instead of
loading and verifying them again (half its start-up CPU). It is recorded once, at install time
(``spaseq kb prepare``, prepare_job), never during a user's job: JDK 17 writes it as the JVM
exits, straight to the path it is given, and maps a truncated one into a crash. So it is
recorded to a temporary file, installed with ``os.replace`` once the JVM has exited, and its
size is kept beside it: an archive whose size differs is never handed to a JVM. Its path is
keyed by what makes it valid (the JVM build, PySpark's jars, the JVM options), so a changed JDK
or environment never maps a stale one. Imports neither PySpark nor Java."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass
from importlib.util import find_spec
from pathlib import Path

from spaseq.engine.user_cache import cache_dir

#: Bumped when what is recorded, or how, changes: older archives are then ignored.
FORMAT = 1
#: Unified-logging selections that keep CDS quiet: a mismatched or unusable archive makes the
#: JVM print warnings on its stdout (and carry on without it), which would reach our stderr.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


@dataclass(frozen=True)
class ArchiveKey:
    """What an archive is valid for: the JVM that recorded it (its libjvm's path, size and
    modification time stand for ``java -version`` without starting a JVM), PySpark's version
    and jars directory, and the driver JVM's options (the GC, the JIT)."""

    java: str
    libjvm: str
    pyspark: str
    jars: str
    java_options: str
    format: int = FORMAT

    def digest(self) -> str:
        """A short hash naming the archive."""
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def java_binary() -> str | None:
    """The ``java`` Spark's launcher runs: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    if os.environ.get("JAVA_HOME"):
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        return java if os.path.isfile(java) else None
    return shutil.which("java")


def _stat_text(path: Path) -> str:
    """Path, size and modification time of a file or directory."""
    st = path.stat()
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def archive_key(java_options: str) -> ArchiveKey | None:
    """The key of the archive for the current JDK and PySpark, or None without either."""
    java = java_binary()
    spec = find_spec("pyspark")
    if java is None or spec is None or not spec.submodule_search_locations:
        return None
    real_java = Path(os.path.realpath(java))
    home = real_java.parent.parent
    libjvm = next(iter(sorted(home.glob("lib/server/libjvm.*"))), real_java)
    package = Path(os.path.realpath(next(iter(spec.submodule_search_locations))))
    jars = package / "jars"
    version_file = package / "version.py"
    try:
        version = version_file.read_text(encoding="utf-8").strip()
        return ArchiveKey(str(real_java), _stat_text(libjvm), version, _stat_text(jars), java_options)
    except OSError:
        return None


def archive_path(key: ArchiveKey) -> Path:
    """Where the archive for ``key`` is (or would be) installed."""
    return cache_dir() / f"spark-classes-{key.digest()}.jsa"


def _meta_path(archive: Path) -> Path:
    return archive.with_suffix(".json")


def ready_archive(java_options: str) -> Path | None:
    """The installed archive for the current JDK, PySpark and ``java_options``, if it is whole
    (its size is the one recorded when it was installed); None otherwise."""
    key = archive_key(java_options)
    if key is None:
        return None
    path = archive_path(key)
    try:
        meta = json.loads(_meta_path(path).read_text(encoding="utf-8"))
        return path if path.stat().st_size == meta["size"] and meta["key"] == asdict(key) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def use_options(archive: Path) -> str:
    """Driver JVM options mapping ``archive`` (quietly ignored by the JVM if it cannot)."""
    return f"-XX:SharedArchiveFile={archive} {QUIET}"


def record_options(archive: str | Path) -> str:
    """Driver JVM options recording the loaded classes into ``archive`` as the JVM exits."""
    return f"-XX:ArchiveClassesAtExit={archive} {QUIET}"


def install(recorded: Path, key: ArchiveKey) -> Path:
    """Move a recorded archive (its JVM has exited) to its keyed path, then record its size
    beside it: until then ``ready_archive`` does not hand it out."""
    final = archive_path(key)
    meta = _meta_path(final)
    with open(recorded, "rb") as handle:  # on disk before its size is vouched for
        os.fsync(handle.fileno())
    meta.unlink(missing_ok=True)  # a reader never pairs the new archive with the old size
    os.replace(recorded, final)
    tmp_meta = recorded.with_suffix(".json.tmp")
    tmp_meta.write_text(json.dumps({"size": final.stat().st_size, "key": asdict(key)}, sort_keys=True),
                        encoding="utf-8")
    os.replace(tmp_meta, meta)
    prune_stale(final.parent)
    return final


def _stale(meta: Path) -> bool:
    """Whether the archive ``meta`` describes can never be mapped again: the java binary or
    PySpark's jars directory it was recorded with is gone (a deleted venv or JDK). An archive of
    another live environment (another venv, other JVM options) is kept."""
    try:
        key = json.loads(meta.read_text(encoding="utf-8"))["key"]
        jars = str(key["jars"]).rsplit(" ", 2)[0]
        return not (os.path.isfile(key["java"]) and os.path.isdir(jars))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False  # not ours to judge: left alone


def prune_stale(folder: Path) -> list[Path]:
    """Delete the archives in ``folder`` recorded for environments that no longer exist (each
    ~160 MB: a venv made again per clone would otherwise leave one behind each time); the
    archives deleted. A JVM still mapping one keeps its pages (POSIX unlink)."""
    pruned = []
    for meta in sorted(folder.glob("spark-classes-*.json")):
        if _stale(meta):
            archive = meta.with_suffix(".jsa")
            meta.unlink(missing_ok=True)  # first: a half-pruned archive is never handed out
            archive.unlink(missing_ok=True)
            pruned.append(archive)
    return pruned
