"""A real Spark standalone cluster for the tests: a master and two workers of one core each,
separate JVMs on 127.0.0.1 started from PySpark's own launcher (``benchmarks.spark_cluster``,
shared with the benchmark), once per test module, and stopped with all their executors after
it, whether its tests pass or fail."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from benchmarks.spark_cluster import Cluster, start_cluster

#: workers of the test cluster, one core each: a job on it runs in two executor JVMs
WORKERS = 2


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A running master with ``WORKERS`` registered workers (skipped without PySpark or Java)."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("a Spark cluster needs Java")
    with start_cluster(WORKERS, tmp_path_factory.mktemp("spark-cluster"), memory="1g") as running:
        yield running
