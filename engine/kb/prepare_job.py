"""``spaseq kb prepare``: record the class archive of class_archive once, at install time. A
fresh Python process (this module run with ``-m``) runs a small load and refresh with the
driver JVM recording the classes it loads, stops Spark, closes the JVM's stdin (PySpark's
gateway exits on end of input) and waits for the JVM to exit, so the archive is complete; the
parent checks it and installs it under its keyed path. Small jobs then map it
(session.small_input_java_options); until then they start as before."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spaseq.engine.errors import KnowledgeBaseError
from spaseq.engine.kb import class_archive
from spaseq.engine.kb.session import SMALL_INPUT_JAVA_OPTIONS, require_java, require_pyspark, spark_session

#: The first bytes of a finished JDK dynamic archive (its magic number, little-endian); the JVM
#: writes the header last, after every region.
DYNAMIC_ARCHIVE_MAGIC = (0xF00BABA8).to_bytes(4, "little")
#: Seconds the recording process may take (Spark's start, two jobs, the JVM writing ~150 MB).
RECORD_TIMEOUT_S = 600.0
#: Seconds to wait for the driver JVM to write the archive and exit once told to.
JVM_EXIT_TIMEOUT_S = 300.0


@dataclass
class Prepared:
    """The installed archive, whether this call recorded it, and how long that took."""

    path: Path
    recorded: bool
    seconds: float

    @property
    def megabytes(self) -> float:
        """The archive's size in MB."""
        return self.path.stat().st_size / 1e6


def prepare(force: bool = False) -> Prepared:
    """The archive for this JDK, PySpark and the small-job JVM options: the installed one,
    else (or with ``force``) a newly recorded one. KnowledgeBaseError if recording fails."""
    require_pyspark()
    require_java()
    start = time.monotonic()
    key = class_archive.archive_key(SMALL_INPUT_JAVA_OPTIONS)
    if key is None:
        raise KnowledgeBaseError("cannot locate Java or PySpark's jars for the class archive")
    if not force and (ready := class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS)):
        return Prepared(ready, False, 0.0)
    folder = class_archive.cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / ".prepare.lock"):
        if not force and (ready := class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS)):
            return Prepared(ready, False, 0.0)  # another prepare recorded it meanwhile
        fd, name = tempfile.mkstemp(prefix=".recording-", suffix=".jsa", dir=folder)
        os.close(fd)
        recorded = Path(name)
        try:
            recorded.unlink()  # the JVM creates it; an empty file left over would look recorded
            _record_in_fresh_process(recorded)
            return Prepared(class_archive.install(recorded, key), True, time.monotonic() - start)
        finally:
            recorded.unlink(missing_ok=True)


@contextmanager
def _locked(path: Path):
    """Hold an exclusive lock on ``path`` (POSIX), so two prepares do not install at once."""
    try:
        import fcntl
    except ImportError:  # no fcntl: prepares are not serialised, installs are still atomic
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _record_in_fresh_process(archive: Path) -> None:
    """Run ``record`` in a new Python process (this one may already hold a Spark JVM, which a
    second session would reuse); KnowledgeBaseError unless a whole archive comes out."""
    try:
        proc = subprocess.run([sys.executable, "-m", __name__, str(archive)], capture_output=True, text=True,
                              timeout=RECORD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise KnowledgeBaseError(f"recording the class archive took over {RECORD_TIMEOUT_S:g} s") from None
    if proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-20:]
        raise KnowledgeBaseError("recording the class archive failed (exit status "
                                 f"{proc.returncode}):\n" + "\n".join(detail))
    try:
        with open(archive, "rb") as handle:
            whole = handle.read(len(DYNAMIC_ARCHIVE_MAGIC)) == DYNAMIC_ARCHIVE_MAGIC
    except OSError:
        whole = False
    if not whole:
        raise KnowledgeBaseError(f"the driver JVM wrote no complete class archive to {archive}")


def record(archive: Path) -> None:
    """In this (fresh) process: a small load and refresh with the driver JVM recording its
    classes into ``archive``, then stop Spark and wait for the JVM to write it and exit."""
    from spaseq.engine.kb.load_job import JobOptions, run_load
    from spaseq.engine.kb.refresh_job import run_refresh

    with tempfile.TemporaryDirectory(prefix="spaseq-prepare-") as tmp:
        dump = Path(tmp) / "dump.nq"
        dump.write_text(_quads(range(15)), encoding="utf-8")
        spark = spark_session(input_bytes=dump.stat().st_size, record_archive=str(archive))
        opts = JobOptions([str(dump)], str(Path(tmp) / "store"))
        run_load(spark, opts)
        dump.write_text(_quads(range(5, 20)), encoding="utf-8")
        run_refresh(spark, opts)
        gateway = spark.sparkContext._gateway
        spark.stop()
        jvm = gateway.proc
        gateway.shutdown()
        jvm.stdin.close()  # PythonGatewayServer exits at the end of its input
        try:
            status = jvm.wait(JVM_EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            jvm.kill()
            raise KnowledgeBaseError("the driver JVM did not exit after the recording job") from None
    if status != 0:
        raise KnowledgeBaseError(f"the driver JVM exited with status {status} after the recording job")


def _quads(numbers: range) -> str:
    """N-Quads text: one quad per number, in one named graph."""
    return "".join(f'<http://example.org/s{n}> <http://example.org/p> "{n}" <http://example.org/g> .\n'
                   for n in numbers)


if __name__ == "__main__":
    record(Path(sys.argv[1]))
