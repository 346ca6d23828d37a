"""Shared test configuration: hypothesis profiles (ci is the default, dev runs more), a
query cache folder of the session's own, and the one SparkSession of the suite."""

import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# checked queries cached by spaseq run (engine/language/cache.py) go to a folder of this test
# session, not the user's ~/.cache; subprocesses inherit it
os.environ["SPASEQ_QUERY_CACHE"] = tempfile.mkdtemp(prefix="spaseq-query-cache-")
atexit.register(shutil.rmtree, os.environ["SPASEQ_QUERY_CACHE"], ignore_errors=True)


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the suite (local[2], small shuffles, no UI), shared by the KB
    jobs' tests and the queries-on-Spark tests: the driver JVM starts once. Its inputs are
    all small, so it is set up as spaseq sets up a small local job (C1 only, the serial
    collector, the class archive, interpreted expressions: session.SMALL_INPUT_CONF), which
    takes a third off a warm job here."""
    from spaseq.engine.kb.session import spark_session

    session = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2",
                                         "spark.default.parallelism": "2"}, input_bytes=0)
    yield session
    session.stop()
