"""The `spark` extra is enough for PySpark's pandas functions (issue 27): `mapInPandas` and
`groupBy(...).applyInPandas`, which the Spark runner of queries is built on, run in the suite's
shared local[2] session (they need pandas and pyarrow, which `pyspark[sql]` brings)."""

from __future__ import annotations

from collections.abc import Iterator


def test_pandas_functions_run_with_the_spark_extra(spark) -> None:
    import pandas as pd

    df = spark.createDataFrame([(1, "a"), (2, "b"), (3, "a"), (4, "b"), (5, "a")], ["n", "key"])

    def doubled(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield batch.assign(n=batch["n"] * 2)

    def summed(group: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"key": [group["key"].iloc[0]], "n": [int(group["n"].sum())]})

    out = (df.mapInPandas(doubled, schema="n long, key string")
             .groupBy("key").applyInPandas(summed, schema="key string, n long"))
    assert sorted((r["key"], r["n"]) for r in out.collect()) == [("a", 18), ("b", 12)]
