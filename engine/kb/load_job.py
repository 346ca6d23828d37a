"""``spaseq kb load``: dumps -> Spark (parse, validate, deduplicate, assign graphs, export)
-> a new Oxigraph version -> CURRENT switched atomically."""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from spaseq.engine.compile.kb_relevance import QuadFilter
from spaseq.engine.kb.build import bulk_load
from spaseq.engine.kb.dumps import (
    LiveCounts,
    ParsedDumps,
    check_graph_iri,
    check_reject_limit,
    check_whole_files,
    expand_sources,
    export_parts,
    graph_counts,
    parse_dumps,
    write_export,
)
from spaseq.engine.kb.layout import DEFAULT_RETENTION_S, StoreLayout
from spaseq.engine.kb.progress import Progress
from spaseq.engine.kb.rejects import DEFAULT_LIMIT, RejectLimit


@dataclass
class JobOptions:
    """What the load and refresh jobs share: inputs, target graph, pruning, retention."""

    sources: Sequence[str]
    store: str
    graph: str | None = None
    rejects: str | None = None
    keep: QuadFilter | None = None
    for_query: str | None = None
    retention_s: float = DEFAULT_RETENTION_S
    keep_versions: int = 1
    max_rejects: RejectLimit | None = DEFAULT_LIMIT


def parse_checked(spark: SparkSession, opts: JobOptions, sources: Sequence[str], graph: str | None,
                  keep: QuadFilter | None, rejects: Path, progress: Progress) -> ParsedDumps:
    """Parse the dumps (live counts on the display), refuse a file read whole that does not
    parse, write the bad lines to ``rejects`` and refuse the input if there are more than
    ``--max-rejects`` allows; the caller releases it."""
    live = LiveCounts.of(spark)
    progress.phase(f"reading {len(sources)} input(s)", live.__str__)
    parsed = parse_dumps(spark, sources, graph, keep, live)
    try:
        check_whole_files(parsed)
        parsed.write_rejects(rejects)
        check_reject_limit(parsed, opts.max_rejects, rejects, opts.rejects)
    except BaseException:
        parsed.release()
        raise
    return parsed


def run_load(spark: SparkSession, opts: JobOptions, progress: Progress | None = None) -> dict:
    """Load the dumps into a new version of the store and make it current; the JSON summary."""
    check_graph_iri(opts.graph)
    layout = StoreLayout.at(opts.store)
    sources = expand_sources(opts.sources, layout.root)
    layout.initialise()
    progress = progress or Progress()
    started = time.monotonic()
    with layout.new_version("load") as pending:
        previous, version = pending.previous, pending.number
        rejects = pending.dir / "rejects.jsonl"
        parsed = parse_checked(spark, opts, sources, opts.graph, opts.keep, rejects, progress)
        try:
            good = parsed.good().persist()
            progress.phase(f"exporting the distinct quads of {parsed.statements:,} statements "
                           f"({parsed.rejected:,} bad lines)")
            write_export(good, layout.export_dir(version))
            graphs = graph_counts(good)
            good.unpersist()
        finally:
            parsed.release()
        loaded = sum(graphs.values())
        progress.phase(f"bulk-loading {loaded:,} quads into Oxigraph")
        bulk_load(export_parts(layout.export_dir(version)), layout.oxigraph_dir(version))
        if opts.rejects:
            shutil.copyfile(rejects, opts.rejects)
        seconds = time.monotonic() - started
        pending.meta = meta = {
            "parent": previous, "sources": list(sources), "graph": opts.graph, "quads": loaded,
            "graphs": {g: n for g, n in graphs.items() if g}, "default_graph": graphs.get("", 0),
            "statements": parsed.statements, "lines": parsed.lines, "rejected": parsed.rejected,
            "pruned": parsed.pruned, "filter": opts.keep.to_json() if opts.keep else None,
            "for_query": opts.for_query, "seconds": round(seconds, 3),
        }
    deleted = layout.collect(opts.retention_s, opts.keep_versions)
    return {
        "loaded": loaded, "rejected": parsed.rejected, "version": version, "previous": previous,
        "statements": parsed.statements, "duplicates": parsed.statements - loaded,
        "pruned": parsed.pruned, "lines": parsed.lines, "graphs": meta["graphs"],
        "default_graph": meta["default_graph"], "rejects": opts.rejects or str(rejects),
        "store": str(layout.root), "seconds": round(seconds, 3),
        "quads_per_s": round(parsed.statements / seconds, 1) if seconds > 0 else None,
        "deleted_versions": deleted,
    }
