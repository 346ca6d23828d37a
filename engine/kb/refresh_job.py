"""``spaseq kb refresh``: the difference between new dumps and the current version's export,
computed in Spark (added and removed quads per graph), applied to a copy of the current
Oxigraph store (or, when most of the KB changed, a fresh bulk load) as the next version,
switched to atomically; the previous version stays until no reader uses it."""

from __future__ import annotations

import shutil
import time

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from spaseq.engine.compile.kb_relevance import QuadFilter
from spaseq.engine.errors import KnowledgeBaseError
from spaseq.engine.kb.build import apply_diff, bulk_load
from spaseq.engine.kb.dumps import (
    check_graph_iri,
    expand_sources,
    export_parts,
    graph_counts,
    write_export,
)
from spaseq.engine.kb.layout import StoreLayout
from spaseq.engine.kb.load_job import JobOptions, parse_checked
from spaseq.engine.kb.progress import Progress

#: Above this share of changed quads, the next version is bulk-loaded rather than patched.
RELOAD_RATIO = 0.5


def _graph_of_line(line: str) -> str:
    """The graph IRI of a canonical N-Quads export line ("" for the default graph)."""
    from pyoxigraph import NamedNode, RdfFormat, parse

    for q in parse(line, format=RdfFormat.N_QUADS):
        return q.graph_name.value if isinstance(q.graph_name, NamedNode) else ""
    return ""


def diff(new: DataFrame, old_export: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(added, removed) as DataFrames of (nq, graph)."""
    added = new.join(old_export, "nq", "left_anti")
    graph_udf = F.udf(_graph_of_line, StringType(), useArrow=False)
    removed = (old_export.join(new.select("nq"), "nq", "left_anti")
               .withColumn("graph", graph_udf(F.col("nq"))))
    return added, removed


def run_refresh(spark: SparkSession, opts: JobOptions, progress: Progress | None = None) -> dict:
    """Build and switch to the next version from new dumps; the JSON summary."""
    progress = progress or Progress()
    check_graph_iri(opts.graph)
    layout = StoreLayout.at(opts.store)
    sources = expand_sources(opts.sources, layout.root)
    layout.require()
    started = time.monotonic()
    with layout.new_version("refresh") as pending:
        previous, version = pending.previous, pending.number
        if previous is None:
            raise KnowledgeBaseError("the store has no version to refresh (run spaseq kb load first)",
                                     layout.location())
        lease = layout.acquire(previous)
        try:
            prev_meta = layout.meta(previous)
            graph = opts.graph if opts.graph is not None else prev_meta.get("graph")
            keep = opts.keep
            if keep is None and prev_meta.get("filter"):
                keep = QuadFilter.from_json(prev_meta["filter"])
            summary = _build(spark, layout, sources, graph, keep, previous, version, opts, progress, started)
            summary["for_query"] = opts.for_query or prev_meta.get("for_query")
            pending.meta = {**summary, "filter": keep.to_json() if keep else None}
        finally:
            lease.release()
    summary["deleted_versions"] = layout.collect(opts.retention_s, opts.keep_versions)
    summary["store"] = str(layout.root)
    return summary


def _build(spark: SparkSession, layout: StoreLayout, sources: list[str], graph: str | None,
           keep: QuadFilter | None, previous: int, version: int, opts: JobOptions,
           progress: Progress, started: float) -> dict:
    vdir = layout.version_dir(version)
    rejects = vdir / "rejects.jsonl"
    parsed = parse_checked(spark, opts, sources, graph, keep, rejects, progress)
    try:
        new = parsed.good().persist()
        progress.phase(f"diffing {parsed.statements:,} statements ({parsed.rejected:,} bad lines) "
                       "against the current version")
        old = spark.read.text(layout.export_dir(previous).as_uri()).select(F.col("value").alias("nq"))
        added, removed = diff(new, old)
        added.select("nq").write.text((vdir / "diff" / "added").as_uri())
        removed.select("nq").write.text((vdir / "diff" / "removed").as_uri())
        write_export(new, layout.export_dir(version))
        graphs = graph_counts(new)
        added_by = graph_counts(spark.read.text((vdir / "diff" / "added").as_uri())
                                .select(F.col("value").alias("nq"))
                                .withColumn("graph", F.udf(_graph_of_line, StringType(), useArrow=False)(F.col("nq"))))
        removed_by = graph_counts(spark.read.text((vdir / "diff" / "removed").as_uri())
                                  .select(F.col("value").alias("nq"))
                                  .withColumn("graph", F.udf(_graph_of_line, StringType(), useArrow=False)(F.col("nq"))))
        new.unpersist()
    finally:
        parsed.release()
    quads = sum(graphs.values())
    n_added, n_removed = sum(added_by.values()), sum(removed_by.values())
    strategy = "patch" if n_added + n_removed <= RELOAD_RATIO * max(quads, 1) else "reload"
    progress.phase(f"{strategy}: +{n_added:,} -{n_removed:,} quads into Oxigraph")
    if strategy == "patch":
        apply_diff(layout.oxigraph_dir(previous), layout.oxigraph_dir(version),
                   export_parts(vdir / "diff" / "removed"), export_parts(vdir / "diff" / "added"))
    else:
        bulk_load(export_parts(layout.export_dir(version)), layout.oxigraph_dir(version))
    if opts.rejects:
        shutil.copyfile(rejects, opts.rejects)
    seconds = time.monotonic() - started
    per_graph = {
        g: {"added": added_by.get(g, 0), "removed": removed_by.get(g, 0), "quads": graphs.get(g, 0)}
        for g in sorted(set(graphs) | set(added_by) | set(removed_by)) if g
    }
    return {
        "added": n_added, "removed": n_removed, "unchanged": quads - n_added, "version": version,
        "previous": previous, "quads": quads, "rejected": parsed.rejected,
        "statements": parsed.statements, "pruned": parsed.pruned, "lines": parsed.lines,
        "graphs": {g: n for g, n in graphs.items() if g}, "changes": per_graph,
        "default_graph": graphs.get("", 0), "graph": graph, "sources": list(sources),
        "strategy": strategy, "rejects": opts.rejects or str(rejects), "seconds": round(seconds, 3),
        "quads_per_s": round(parsed.statements / seconds, 1) if seconds > 0 else None,
    }
