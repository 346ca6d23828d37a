"""The one SparkSession of the KB tests (local[2], small shuffles, no UI), shared by their
modules: the driver JVM starts once."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from spaseq.engine.kb.session import spark_session

    session = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2",
                                         "spark.default.parallelism": "2"})
    yield session
    session.stop()
