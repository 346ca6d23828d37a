"""The one SparkSession builder of the KB jobs: ``local[*]`` unless ``--master`` says
otherwise, ``--conf k=v`` pairs, a local session tuned for quick small jobs (no UI, shuffles
sized to the input, a quick-starting JVM mapping the class archive of class_archive when there
is one, no code generation for small inputs) and a quiet driver JVM (log4j2.properties;
jvm_output drops its start-up lines). Importing this module does not import PySpark:
``require_pyspark`` says how to get it."""

from __future__ import annotations

import math
import os
import shutil
import sys
from collections.abc import Sequence
from importlib import resources

from spaseq.engine.errors import UsageError
from spaseq.engine.kb import class_archive

DEFAULT_MASTER = "local[*]"
#: How to install PySpark, which the KB jobs need and nothing else does (pyproject's extra).
INSTALL_SPARK = "pip install 'spaseq[spark]'"
#: Input bytes per shuffle partition of a local job (a partition is a task on one core).
BYTES_PER_PARTITION = 64 << 20
#: Below this input size a local job's time goes mostly into starting the JVM and planning.
SMALL_INPUT_BYTES = 256 << 20
#: ...so the driver JVM compiles with C1 only: C2's compile time pays off on long runs only
#: (this alone takes 40% off the CPU time of a small load), and uses the serial collector (G1's
#: concurrent threads cost more than they save on a heap this small). The class archive is
#: recorded with these options and keyed by them.
SMALL_INPUT_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: ...and Spark interprets its expressions instead of generating and compiling Java for them
#: (Janino's compile time, for a few rows; its classes cannot be archived: a signed jar).
SMALL_INPUT_CONF = {
    "spark.sql.adaptive.enabled": "false",  # re-planning each stage costs more than it saves
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


def require_pyspark(what: str = "the knowledge-base jobs", modules: Sequence[str] = ("pyspark",)) -> None:
    """UsageError with the install command when PySpark (and the other ``modules`` ``what``
    needs: the queries on Spark need pandas and pyarrow too) cannot be imported."""
    import importlib

    missing = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    if missing:
        names = ", ".join("PySpark" if m == "pyspark" else m for m in missing)
        raise UsageError(f"{what} need {names}: {INSTALL_SPARK}")


def require_java() -> None:
    """UsageError naming the fix when no Java runtime is available for Spark."""
    if os.environ.get("JAVA_HOME") or shutil.which("java"):
        return
    raise UsageError("the knowledge-base jobs run on Spark, which needs Java 17 or later "
                     "(e.g. apt-get install -y openjdk-17-jre-headless)")


def parse_conf(pairs: Sequence[str]) -> dict[str, str]:
    """``k=v`` strings to a dict; UsageError for a pair without ``=``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def log4j_file() -> str:
    """The packaged log4j2 configuration of the driver JVM (errors only)."""
    return str(resources.files("spaseq.engine.kb") / "log4j2.properties")


def shuffle_partitions(input_bytes: int | None) -> int:
    """Shuffle partitions for a local job: one per 64 MiB of input, at most two per core
    (Spark's default of 200 pays off only on a cluster; each costs a task)."""
    cores = os.cpu_count() or 1
    if input_bytes is None:
        return 2 * cores
    return max(1, min(2 * cores, math.ceil(input_bytes / BYTES_PER_PARTITION)))


def cluster_shuffle_partitions(input_bytes: int | None, cores: int) -> int:
    """Shuffle partitions for a job on a cluster of ``cores`` executor cores: one per 64 MiB
    of input, at least one per core (Spark's default of 200 made a 200-event run on a
    one-core executor take 49 s, every stage 200 tasks of a Python worker each)."""
    if input_bytes is None:
        return max(1, 2 * cores)
    return max(1, cores, math.ceil(input_bytes / BYTES_PER_PARTITION))


def small_input(input_bytes: int | None) -> bool:
    """Whether a job's start-up outweighs its work: see ``SMALL_INPUT_JAVA_OPTIONS``."""
    return input_bytes is not None and input_bytes < SMALL_INPUT_BYTES


def small_input_java_options(record_archive: str | None = None) -> str:
    """The driver JVM options of a small local job: ``SMALL_INPUT_JAVA_OPTIONS``, then either
    recording the class archive to ``record_archive`` (prepare_job) or mapping the installed
    one, if there is one for this JDK and PySpark."""
    if record_archive is not None:
        return f"{SMALL_INPUT_JAVA_OPTIONS} {class_archive.record_options(record_archive)}"
    archive = class_archive.ready_archive(SMALL_INPUT_JAVA_OPTIONS)
    return SMALL_INPUT_JAVA_OPTIONS + (f" {class_archive.use_options(archive)}" if archive else "")


def whole_file_memory(largest_file: int, tasks: int) -> str:
    """The driver memory of a local job reading files whole (``spark.read_events``): Spark's
    default 1 GiB, and 8 times the largest file per task (measured: a 47 MB file holds ~5x
    its size at once while Spark turns it into a row and an Arrow batch; two tasks at once
    failed with 1.25 GiB and passed with 1.5), at most half the machine's memory."""
    wanted = (1 << 30) + 8 * largest_file * max(1, tasks)
    try:
        half = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # no such figure here: ask for what is wanted
        half = wanted
    return f"{max(1 << 30, min(wanted, half)) >> 20}m"


def local_tasks(master: str) -> int:
    """How many tasks a local master runs at once (``local[N]``, ``local[*]``, ``local``)."""
    inside = master.partition("[")[2].partition("]")[0].split(",")[0]
    if inside in ("", "*"):
        return os.cpu_count() or 1 if inside == "*" else 1
    return int(inside) if inside.isdigit() else 1


def session_conf(master: str, conf: dict[str, str], input_bytes: int | None, app: str,
                 record_archive: str | None = None, largest_file: int | None = None) -> dict[str, str]:
    """Every setting of the session: spaseq's (quiet, no UI, no console progress bar, small
    shuffles when local, a quick start for small inputs, memory for the files read whole:
    ``largest_file``), then the user's ``--conf`` pairs, which win."""
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j_file()}"
    out = {
        "spark.app.name": app,
        "spark.master": master,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.sources.ignoreCorruptFiles": "false",
    }
    if master.startswith("local"):
        partitions = str(shuffle_partitions(input_bytes))
        out["spark.sql.shuffle.partitions"] = partitions
        out["spark.default.parallelism"] = partitions
        if small_input(input_bytes):
            out["spark.driver.extraJavaOptions"] += " " + small_input_java_options(record_archive)
            out.update(SMALL_INPUT_CONF)
        if largest_file:
            out["spark.driver.memory"] = whole_file_memory(largest_file, local_tasks(master))
    merged = {**out, **conf}
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        if key in conf:  # the user's options come after (and so win over) spaseq's
            merged[key] = f"{out[key]} {conf[key]}"
    return merged


def spark_session(master: str | None = None, conf: dict[str, str] | None = None,
                  input_bytes: int | None = None, app: str = "spaseq-kb", record_archive: str | None = None,
                  largest_file: int | None = None):
    """Get or create the SparkSession the jobs run in (its driver JVM started quiet;
    ``record_archive``: see ``small_input_java_options``; ``largest_file``: of the files a
    job reads whole, in bytes)."""
    require_pyspark()
    require_java()
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    master = master or DEFAULT_MASTER
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark_conf = SparkConf().setAll(list(session_conf(master, conf or {}, input_bytes, app, record_archive,
                                                     largest_file).items()))
    _start_driver(spark_conf)
    return SparkSession.builder.config(conf=spark_conf).getOrCreate()


def _start_driver(conf) -> None:
    """Start the driver JVM with its output on a pipe (jvm_output), unless this process
    already has one (a second session reuses it, as PySpark does)."""
    from pyspark import SparkContext
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    from spaseq.engine.kb.jvm_output import JvmOutput

    if SparkContext._gateway is not None:
        return
    output = JvmOutput(sys.stderr)
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": output.write_fd, "stderr": output.write_fd})
    except PySparkRuntimeError:
        gateway = None
    finally:
        output.started()
    if gateway is None:
        output.wait(10.0)
        raise UsageError("Spark's driver JVM did not start (its output is above)")
    SparkContext(conf=conf, gateway=gateway)
