"""The Spark tests' fixtures beyond the suite's local session: a standalone cluster."""

from tests.spark.cluster import cluster  # noqa: F401  (a fixture: pytest finds it here)
