"""Reading dumps in Spark: expand the arguments, parse every line in the executors (and the
files that are not line-splittable whole, ``whole``), write the rejects with file and line
number, and export the distinct quads as N-Quads parts."""

from __future__ import annotations

import glob
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyspark import Accumulator, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from spaseq.engine.compile.kb_relevance import QuadFilter
from spaseq.engine.errors import KnowledgeBaseError, Location, UsageError
from spaseq.engine.kb.parse import BAD, BROKEN, COUNT, OK, PRUNED, Row, line_offsets, parse_rows, split_reason
from spaseq.engine.kb.rejects import RejectLimit
from spaseq.engine.kb.whole import parse_whole, split_dumps

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


def input_bytes(sources: Sequence[str]) -> int:
    """The size on disk of expanded sources (the files under a directory included)."""
    total = 0
    for src in sources:
        files = ([os.path.join(d, f) for d, _, names in os.walk(src) for f in names]
                 if os.path.isdir(src) else [src])
        total += sum(os.path.getsize(f) for f in files)
    return total


@dataclass
class ParsedDumps:
    """The parsed lines of a set of dumps (persisted until ``release``) and their tallies."""

    rows: DataFrame
    statements: int = 0
    rejected: int = 0
    pruned: int = 0
    lines: int = 0
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    #: a file read whole that does not parse: (file, line, reason), the first by file name
    broken: tuple[str, int | None, str] | None = None

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


@dataclass(frozen=True)
class LiveCounts:
    """Accumulators the executors add to as each task ends: lines read, statements, bad lines;
    the progress display polls them while the dumps are parsed (the exact tallies come after)."""

    lines: Accumulator
    statements: Accumulator
    rejected: Accumulator

    @classmethod
    def of(cls, spark: SparkSession) -> LiveCounts:
        sc = spark.sparkContext
        return cls(sc.accumulator(0), sc.accumulator(0), sc.accumulator(0))

    def __str__(self) -> str:
        return (f"{self.lines.value:,} lines, {self.statements.value:,} statements, "
                f"{self.rejected.value:,} rejected")


def _counted(rows: Iterable[Row], live: LiveCounts) -> Iterator[Row]:
    """The rows of one partition, unchanged, counted into ``live`` at the partition's end."""
    lines = statements = rejected = 0
    for row in rows:
        kind = row[0]
        if kind == OK:
            statements += 1
        elif kind == BAD:
            rejected += 1
        elif kind == COUNT:
            lines += row[5] or 0
        yield row
    live.lines.add(lines)
    live.statements.add(statements)
    live.rejected.add(rejected)


def parse_dumps(spark: SparkSession, sources: Sequence[str], graph: str | None,
                keep: QuadFilter | None, live: LiveCounts | None = None) -> ParsedDumps:
    """Read the dumps (local paths, expanded) as Spark text (gzip by extension) and the files
    that are not line-splittable whole (``whole.split_dumps``), parse them in the executors
    and tally the result in one aggregation (statements, bad lines, pruned, lines per split,
    files that do not parse)."""
    live = live or LiveCounts.of(spark)
    line_sources, whole_files = split_dumps(sources)
    rdds = []
    if line_sources:
        text = (spark.read.option("recursiveFileLookup", "true").text([f"file://{s}" for s in line_sources])
                .select("value", F.col("_metadata.file_path").alias("file"),
                        F.col("_metadata.file_block_start").alias("block")))
        rdds.append(text.rdd.mapPartitions(
            lambda rows: _counted(parse_rows(((r[0], r[1], r[2]) for r in rows), graph, keep), live)))
    if whole_files:
        files = spark.read.format("binaryFile").load([f"file://{s}" for s in whole_files]).select("path", "content")
        rdds.append(files.rdd.mapPartitions(
            lambda rows: _counted(parse_whole(((r[0], r[1]) for r in rows), graph, keep), live)))
    rdd = rdds[0] if len(rdds) == 1 else spark.sparkContext.union(rdds)
    rows = spark.createDataFrame(rdd, ROW_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    tallies = (rows.groupBy("kind", "file", "block")
               .agg(F.count("*").alias("n"), F.sum("idx").alias("total")).collect())
    parsed = ParsedDumps(rows)
    counts = []
    for r in tallies:
        if r["kind"] == OK:
            parsed.statements += r["n"]
        elif r["kind"] == BAD:
            parsed.rejected += r["n"]
        elif r["kind"] == PRUNED:
            parsed.pruned += r["total"]
        elif r["kind"] == COUNT:
            counts.append((r["file"], r["block"], r["total"]))
    parsed.lines = sum(n for _, _, n in counts)
    parsed.offsets = line_offsets(counts)
    if any(r["kind"] == BROKEN for r in tallies):
        first = rows.filter(F.col("kind") == BROKEN).orderBy("file").first()
        assert first is not None  # the tallies counted it
        parsed.broken = (_local(first["file"]), first["idx"], first["reason"])
    return parsed


def check_whole_files(parsed: ParsedDumps) -> None:
    """KnowledgeBaseError at the error of a file read whole that does not parse: a syntax
    error is not a bad line set aside (what follows may depend on it), so the job builds
    nothing and the store is unchanged."""
    if parsed.broken is None:
        return
    file, line, reason = parsed.broken
    column, message = split_reason(reason)
    raise KnowledgeBaseError(f"{message} (a file read whole: nothing is loaded, the store is unchanged)",
                             Location(file, line, column))


def check_reject_limit(parsed: ParsedDumps, limit: RejectLimit | None, rejects: Path,
                       copy_to: str | None) -> None:
    """KnowledgeBaseError at the first bad line when there are more bad lines than ``limit``
    allows (the job then builds nothing); the bad lines are copied to ``copy_to`` first."""
    if limit is None or not limit.exceeded(parsed.rejected, parsed.lines):
        return
    if copy_to:
        shutil.copyfile(rejects, copy_to)
    with open(rejects, encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    column, reason = split_reason(first["reason"])
    listed = f"all in {copy_to}" if copy_to else "--rejects PATH lists them all"
    raise KnowledgeBaseError(
        f"{parsed.rejected} of {parsed.lines} lines are bad, more than --max-rejects {limit} allows: "
        f"the store is unchanged (the first bad line, here: {reason}; {listed})",
        Location(first["file"], first["line"], column))


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
