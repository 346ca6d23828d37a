"""The class-data-sharing archive of Spark's classes (class_archive, prepare_job): keyed by what
makes it valid, handed to a JVM only when whole, mapped by small local jobs only, and never a
reason for a warning or a failure: a mismatched or garbage archive is ignored quietly by the
JVM, a truncated one (which the JVM would crash on) is never handed out. Real JVMs, real
Spark jobs in subprocesses, each with its own cache directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, replace
from importlib.util import find_spec
from pathlib import Path

import pytest

from spaseq.engine import user_cache
from spaseq.engine.kb import class_archive
from spaseq.engine.kb.session import SMALL_INPUT_CONF, SMALL_INPUT_JAVA_OPTIONS, session_conf

JARS = Path(next(iter(find_spec("pyspark").submodule_search_locations))) / "jars"
SMALL, LARGE = 1_000, 1 << 30


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache directory of this test's own (and of the processes it starts)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(user_cache.CACHE_ENV, str(folder))
    return folder


def _install(cache: Path, content: bytes) -> Path:
    """Install ``content`` as the archive of the current key, as prepare_job does."""
    cache.mkdir(parents=True, exist_ok=True)
    recorded = cache / "recorded.jsa"
    recorded.write_bytes(content)
    return class_archive.install(recorded, class_archive.archive_key(SMALL_INPUT_JAVA_OPTIONS))


def _mismatched_archive(tmp_path: Path) -> Path:
    """A real dynamic archive recorded with another class path than Spark's (the launcher jar
    alone): a driver JVM given it cannot use it."""
    archive = tmp_path / "other.jsa"
    launcher = next(JARS.glob("spark-launcher*.jar"))
    subprocess.run(["java", f"-XX:ArchiveClassesAtExit={archive}", *class_archive.QUIET.split(), "-cp",
                    str(launcher), "org.apache.spark.launcher.Main"], capture_output=True, timeout=60, check=False)
    assert archive.read_bytes()[:4] == (0xF00BABA8).to_bytes(4, "little")
    return archive


def _spaseq(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spaseq.engine.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def _load_15(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    dump = tmp_path / "d.nq"
    dump.write_text("".join(f'<http://ex.org/s{n}> <http://ex.org/p> "{n}" <http://ex.org/g> .\n' for n in range(15)),
                    encoding="utf-8")
    return _spaseq("kb", "load", "--store", str(tmp_path / "store"), str(dump), "--json", *extra)


def test_the_archive_path_follows_its_key(cache, tmp_path, monkeypatch):
    key = class_archive.archive_key(SMALL_INPUT_JAVA_OPTIONS)
    path = class_archive.archive_path(key)
    assert path.parent == cache and path.suffix == ".jsa"
    assert class_archive.archive_path(class_archive.archive_key(SMALL_INPUT_JAVA_OPTIONS)) == path  # stable
    others = {class_archive.archive_path(class_archive.archive_key("-XX:+UseG1GC")),
              class_archive.archive_path(replace(key, pyspark="__version__: str = '9.9.9'")),
              class_archive.archive_path(replace(key, jars=key.jars + "0")),
              class_archive.archive_path(replace(key, format=key.format + 1))}
    assert path not in others and len(others) == 4
    jdk = tmp_path / "jdk"  # another JDK: its own java and libjvm
    (jdk / "bin").mkdir(parents=True)
    (jdk / "lib" / "server").mkdir(parents=True)
    (jdk / "bin" / "java").write_text("")
    (jdk / "lib" / "server" / "libjvm.so").write_bytes(b"jvm")
    monkeypatch.setenv("JAVA_HOME", str(jdk))
    other = class_archive.archive_key(SMALL_INPUT_JAVA_OPTIONS)
    real = Path(os.path.realpath(jdk))
    assert other.java == str(real / "bin" / "java") and str(real / "lib" / "server" / "libjvm.so") in other.libjvm
    assert class_archive.archive_path(other) != path
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-such-jdk"))
    assert class_archive.archive_key(SMALL_INPUT_JAVA_OPTIONS) is None


def test_an_archive_is_handed_out_only_whole_and_for_its_own_key(cache):
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) is None
    path = _install(cache, b"x" * 4096)
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) == path
    assert class_archive.ready_archive("-XX:+UseG1GC") is None  # recorded with other options
    with open(path, "r+b") as handle:  # truncated: the JVM would crash mapping it
        handle.truncate(2048)
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) is None
    path = _install(cache, b"y" * 4096)
    path.with_suffix(".json").write_text("{not json", encoding="utf-8")
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) is None
    path.with_suffix(".json").unlink()
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) is None


def test_session_conf_maps_the_archive_for_small_local_jobs_only(cache):
    def driver(master: str, size: int | None, **kw) -> str:
        return session_conf(master, {}, size, "t", **kw)["spark.driver.extraJavaOptions"]

    assert "SharedArchiveFile" not in driver("local[2]", SMALL)  # none installed: as before
    assert SMALL_INPUT_JAVA_OPTIONS in driver("local[2]", SMALL)
    path = _install(cache, b"z" * 4096)
    assert f"-XX:SharedArchiveFile={path} {class_archive.QUIET}" in driver("local[2]", SMALL)
    for master, size in (("local[2]", LARGE), ("local[2]", None), ("spark://host:7077", SMALL)):
        assert "SharedArchiveFile" not in driver(master, size), (master, size)
    recording = driver("local[2]", SMALL, record_archive="/tmp/r.jsa")
    assert "-XX:ArchiveClassesAtExit=/tmp/r.jsa" in recording and "SharedArchiveFile" not in recording
    conf = session_conf("local[2]", {"spark.sql.codegen.wholeStage": "true"}, SMALL, "t")
    assert conf["spark.sql.codegen.factoryMode"] == SMALL_INPUT_CONF["spark.sql.codegen.factoryMode"]
    assert conf["spark.sql.codegen.wholeStage"] == "true"  # the user's --conf wins
    assert "spark.sql.codegen.factoryMode" not in session_conf("local[2]", {}, LARGE, "t")


def test_the_jvm_ignores_a_mismatched_or_garbage_archive_quietly(tmp_path):
    classpath = f"{JARS}{os.sep}*"
    garbage = tmp_path / "garbage.jsa"
    garbage.write_bytes(os.urandom(1 << 16))

    def java(archive: Path, *options: str) -> subprocess.CompletedProcess:
        return subprocess.run(["java", f"-XX:SharedArchiveFile={archive}", *options, "-cp", classpath, "-version"],
                              capture_output=True, text=True, timeout=60, check=False)

    for archive in (_mismatched_archive(tmp_path), garbage):
        if archive != garbage:  # the JVM does warn, on its stdout, unless told not to
            assert "[warning][cds" in java(archive).stdout
        quiet = java(archive, *class_archive.use_options(archive).split()[1:])
        assert quiet.returncode == 0 and "[warning]" not in quiet.stdout + quiet.stderr, quiet


def test_a_load_with_a_mismatched_archive_works_and_keeps_stderr_empty(cache, tmp_path):
    _install(cache, _mismatched_archive(tmp_path).read_bytes())
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) is not None  # it is handed to the JVM
    proc = _load_15(tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout)["loaded"] == 15


def test_prepare_installs_an_archive_that_small_loads_map(tmp_path, monkeypatch):
    """``kb prepare`` on the user's own cache, as ``make kb-prepare`` left it (it records there
    first, so this finds it; alone, this records it, about 30 s): installed whole, found again
    without recording, mapped by a small load."""
    monkeypatch.delenv(user_cache.CACHE_ENV, raising=False)
    proc = _spaseq("kb", "prepare", "--json", timeout=600)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    done = json.loads(proc.stdout)
    archive = Path(done["archive"])
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) == archive
    assert archive.parent == user_cache.cache_dir() and archive.with_suffix(".json").is_file()
    assert not list(archive.parent.glob(".recording-*"))  # no recording left
    again = _spaseq("kb", "prepare", "--json")
    assert json.loads(again.stdout) | {"seconds": 0} == done | {"recorded": False, "seconds": 0}
    log = tmp_path / "cds.log"
    proc = _load_15(tmp_path, "--conf", f"spark.driver.extraJavaOptions=-Xlog:cds=info:file={log}")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout)["loaded"] == 15
    assert "Mapped dynamic region" in log.read_text(encoding="utf-8")


def test_an_install_deletes_the_archives_of_environments_gone(cache, tmp_path):
    """Each venv has its own key: one made again per clone would leave a ~160 MB archive behind
    every time. Installing deletes those whose java or jars are gone, and nothing else."""
    live = _install(cache, b"a" * 4096)
    key = class_archive.archive_key(SMALL_INPUT_JAVA_OPTIONS)
    gone_venv = tmp_path / "gone venv" / "pyspark" / "jars"
    stale = [replace(key, jars=f"{gone_venv} 4096 1"), replace(key, java=str(tmp_path / "no-jdk" / "java"))]
    for other in stale:
        recorded = cache / "r.jsa"
        recorded.write_bytes(b"s" * 4096)
        os.replace(recorded, class_archive.archive_path(other))
        class_archive.archive_path(other).with_suffix(".json").write_text(
            json.dumps({"size": 4096, "key": asdict(other)}), encoding="utf-8")
    foreign = cache / "spark-classes-foreign.json"
    foreign.write_text("{not json", encoding="utf-8")
    assert len(list(cache.glob("*.jsa"))) == 3
    assert _install(cache, b"b" * 4096) == live
    assert sorted(p.name for p in cache.glob("spark-classes-*")) == sorted(
        [live.name, live.with_suffix(".json").name, foreign.name])
    assert class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS) == live
