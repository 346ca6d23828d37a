"""``spaseq.spark``: SPAseq queries on Spark (issue 27): events read into a DataFrame by
Spark, and matched by the native engine inside Spark's own operators, one engine per part of
the input the plan allows (``compile.splitting``, docs/decisions.md 67 and 68). Needs the
``spark`` extra. Its folder is ``engine/spark`` (the layout's top level is fixed)."""

from __future__ import annotations

from typing import Any

from spaseq.spark.events import EVENT_SCHEMA, read_events
from spaseq.spark.matching import MATCH_SCHEMA, match
from spaseq.spark.streaming import STREAM_SCHEMA, match_stream, read_event_stream

__all__ = ["EVENT_SCHEMA", "MATCH_SCHEMA", "STREAM_SCHEMA", "match", "match_stream", "read_event_stream",
           "read_events", "session"]


def session(master: str = "local[*]", conf: dict[str, str] | None = None) -> Any:
    """A SparkSession for queries (``master``: ``local[*]``, ``spark://host:port``...), its
    Python workers running this interpreter (so they import spaseq), its JVM started quiet:
    the one the KB jobs use (``kb.session``)."""
    from spaseq.engine.kb.session import spark_session

    return spark_session(master, conf, app="spaseq")
