"""The one SparkSession builder of the KB jobs: ``local[*]`` unless ``--master`` says
otherwise, ``--conf k=v`` pairs, quiet logs, and Spark's console progress bar on stderr
unless the output is ``--json``."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from spaseq.engine.errors import UsageError

DEFAULT_MASTER = "local[*]"
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
"""


def _log4j_file() -> str:
    """A log4j2 configuration that only lets errors through (Spark's default is chatty)."""
    path = Path(tempfile.gettempdir()) / "spaseq-log4j2.properties"
    if not path.exists() or path.read_text(encoding="utf-8") != _LOG4J:
        tmp = path.with_name(f"{path.name}.{os.getpid()}")
        tmp.write_text(_LOG4J, encoding="utf-8")
        os.replace(tmp, path)
    return str(path)


def parse_conf(pairs: Sequence[str]) -> dict[str, str]:
    """``k=v`` strings to a dict; UsageError for a pair without ``=``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def require_java() -> None:
    """UsageError naming the fix when no Java runtime is available for Spark."""
    if os.environ.get("JAVA_HOME") or shutil.which("java"):
        return
    raise UsageError("the knowledge-base jobs run on Spark, which needs Java 17 or later "
                     "(e.g. apt-get install -y openjdk-17-jre-headless)")


def spark_session(master: str | None = None, conf: dict[str, str] | None = None,
                  progress: bool = True, app: str = "spaseq-kb"):
    """Get or create the SparkSession the jobs run in."""
    require_java()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if (master or DEFAULT_MASTER).startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    java_opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    builder = (
        SparkSession.builder.appName(app)
        .master(master or DEFAULT_MASTER)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "true" if progress else "false")
        .config("spark.log.level", "ERROR")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        .config("spark.sql.sources.ignoreCorruptFiles", "false")
    )
    if (master or DEFAULT_MASTER).startswith("local") and "spark.sql.shuffle.partitions" not in (conf or {}):
        # Spark's 200 shuffle partitions only pay off on a cluster
        builder = builder.config("spark.sql.shuffle.partitions", str(max(2, 2 * (os.cpu_count() or 1))))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
