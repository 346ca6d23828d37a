"""Reading dumps in Spark: expand the arguments, parse every line in the executors, write
the rejects with file and line number, and export the distinct quads as N-Quads parts."""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from spaseq.engine.compile.kb_relevance import QuadFilter
from spaseq.engine.errors import UsageError
from spaseq.engine.kb.parse import BAD, COUNT, OK, PRUNED, line_offsets, parse_rows

ROW_SCHEMA = StructType([
    StructField("kind", IntegerType(), False),
    StructField("text", StringType(), True),
    StructField("graph", StringType(), True),
    StructField("file", StringType(), True),
    StructField("block", LongType(), True),
    StructField("idx", LongType(), True),
    StructField("reason", StringType(), True),
])


def expand_sources(sources: Sequence[str], store: Path) -> list[str]:
    """Absolute paths of the files, directories and glob matches given; UsageError for none
    or for a path inside (or holding) the store directory."""
    out: list[str] = []
    for src in sources:
        matches = sorted(glob.glob(src)) if glob.has_magic(src) else [src]
        if not matches:
            raise UsageError(f"{src}: no file matches this pattern")
        for m in matches:
            if not os.path.exists(m):
                raise UsageError(f"{m}: no such file or directory")
            path = Path(m).absolute()
            if path == store or store in path.parents or path in store.parents:
                raise UsageError(f"{m}: a dump cannot be inside the store directory or contain it")
            out.append(str(path))
    return list(dict.fromkeys(out))


@dataclass
class ParsedDumps:
    """The parsed lines of a set of dumps (persisted until ``release``) and their tallies."""

    rows: DataFrame
    statements: int = 0
    rejected: int = 0
    pruned: int = 0
    lines: int = 0
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)

    def good(self) -> DataFrame:
        """Distinct (nq, graph) of the accepted statements."""
        return (self.rows.filter(F.col("kind") == OK)
                .select(F.col("text").alias("nq"), "graph").distinct())

    def write_rejects(self, path: Path) -> int:
        """Bad lines as JSON lines ``{file, line, reason, text}`` ordered by file and line."""
        path.parent.mkdir(parents=True, exist_ok=True)
        n = 0
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            if self.rejected:
                bad = self.rows.filter(F.col("kind") == BAD).orderBy("file", "block", "idx")
                for r in bad.toLocalIterator():
                    line = self.offsets.get((r["file"], r["block"]), 0) + r["idx"] + 1
                    out.write(json.dumps({"file": _local(r["file"]), "line": line, "reason": r["reason"],
                                          "text": r["text"]}) + "\n")
                    n += 1
        os.replace(tmp, path)
        return n

    def release(self) -> None:
        self.rows.unpersist()


def _local(uri: str) -> str:
    return uri[len("file:"):] if uri.startswith("file:") else uri


def parse_dumps(spark: SparkSession, sources: Sequence[str], graph: str | None,
                keep: QuadFilter | None) -> ParsedDumps:
    """Read the dumps as Spark text (gzip by extension) and parse them in the executors."""
    text = (spark.read.option("recursiveFileLookup", "true").text(list(sources))
            .select("value", F.col("_metadata.file_path").alias("file"),
                    F.col("_metadata.file_block_start").alias("block")))
    rdd = text.rdd.mapPartitions(
        lambda rows: parse_rows(((r[0], r[1], r[2]) for r in rows), graph, keep))
    rows = spark.createDataFrame(rdd, ROW_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    tallies = (rows.filter(F.col("kind") != OK)
               .filter(F.col("kind") != BAD)
               .select("kind", "file", "block", "idx").collect())
    totals = {r["kind"]: r["n"] for r in rows.groupBy("kind").agg(F.count("*").alias("n")).collect()}
    counts = [(r["file"], r["block"], r["idx"]) for r in tallies if r["kind"] == COUNT]
    parsed = ParsedDumps(rows)
    parsed.statements = totals.get(OK, 0)
    parsed.rejected = totals.get(BAD, 0)
    parsed.pruned = sum(r["idx"] for r in tallies if r["kind"] == PRUNED)
    parsed.lines = sum(n for _, _, n in counts)
    parsed.offsets = line_offsets(counts)
    return parsed


def write_export(good: DataFrame, directory: Path) -> None:
    """The distinct quads as N-Quads part files (``part-*.txt``) in a new directory."""
    good.select("nq").write.mode("errorifexists").text(directory.as_uri())


def export_parts(directory: Path) -> list[Path]:
    """The N-Quads part files of an export directory, in name order."""
    return sorted(p for p in directory.iterdir() if p.name.startswith("part-") and p.stat().st_size)


def graph_counts(good: DataFrame) -> dict[str, int]:
    """Distinct quads per graph ("" = the default graph)."""
    return {r["graph"]: r["n"] for r in good.groupBy("graph").agg(F.count("*").alias("n")).collect()}


def check_graph_iri(graph: str | None) -> None:
    """UsageError unless ``--graph`` is an absolute IRI."""
    if graph is None:
        return
    from pyoxigraph import NamedNode

    try:
        NamedNode(graph)
    except ValueError as exc:
        raise UsageError(f"--graph {graph}: not a valid absolute IRI ({exc})") from None
    if ":" not in graph:
        raise UsageError(f"--graph {graph}: not an absolute IRI")
