"""``spaseq kb load|refresh|info|query``: argparse definitions and their handlers."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from typing import IO

from spaseq.engine.errors import KnowledgeBaseError, Location, UsageError
from spaseq.engine.kb.layout import DEFAULT_RETENTION_S, StoreLayout
from spaseq.engine.kb.rejects import DEFAULT_LIMIT, DEFAULT_MAX_REJECTS, RejectLimit

log = logging.getLogger(__name__)


def add_kb_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``kb`` and its subcommands to the ``spaseq`` parser."""
    kb = sub.add_parser("kb", help="background knowledge base: a versioned on-disk Oxigraph store "
                                   "built from RDF dumps by Spark jobs")
    ksub = kb.add_subparsers(dest="kb_command", required=True)

    def job(name: str, help_text: str) -> argparse.ArgumentParser:
        p = ksub.add_parser(name, help=help_text)
        p.add_argument("dumps", nargs="+", metavar="DUMP",
                       help="files, directories or globs (.gz decompressed): N-Triples/N-Quads read a "
                            "line at a time, bad lines set aside; Turtle, TriG, RDF/XML, N3 and JSON-LD "
                            "(.ttl, .trig, .rdf, .owl, .n3, .jsonld) read whole, a syntax error refusing "
                            "the load")
        p.add_argument("--store", required=True, metavar="DIR", help="the store directory")
        p.add_argument("--graph", metavar="IRI", help="named graph for triples (quads keep theirs)")
        p.add_argument("--rejects", metavar="PATH",
                       help="also write the bad lines (JSON lines: file, line, reason, text) here; "
                            "they are always kept in the version's rejects.jsonl")
        p.add_argument("--for-query", metavar="Q.rq",
                       help="keep only the quads the query's GRAPH patterns can match")
        p.add_argument("--master", metavar="URL", help="Spark master (default local[*])")
        p.add_argument("--conf", action="append", default=[], metavar="K=V",
                       help="Spark configuration; repeatable")
        p.add_argument("--retention", type=float, default=DEFAULT_RETENTION_S, metavar="SECONDS",
                       help="delete a superseded version still leased by a reader after this long "
                            f"(default {DEFAULT_RETENTION_S:g})")
        p.add_argument("--keep-versions", type=int, default=1, metavar="N",
                       help="always keep the N newest versions (default 1: the current one)")
        p.add_argument("--max-rejects", type=RejectLimit.parse, default=DEFAULT_LIMIT, metavar="N|RATIO",
                       help="fail (exit status 2, store unchanged) if more lines than this are bad: "
                            f"a count, or a ratio of the lines read (0.01 or 1%%); default {DEFAULT_MAX_REJECTS.replace('%', '%%')}")
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show the job's progress on stderr (default: when stderr is a terminal "
                            "and the output is not --json)")
        p.add_argument("--json", action="store_true", help="print one JSON object; stderr stays empty "
                                                           "unless something is wrong")
        return p

    job("load", "load dumps into a new version of the store")
    job("refresh", "apply the difference between new dumps and the current version")
    info = ksub.add_parser("info", help="versions, graphs and quad counts of a store")
    info.add_argument("--store", required=True, metavar="DIR")
    info.add_argument("--json", action="store_true")
    query = ksub.add_parser("query", help="run a plain SPARQL query on the current version")
    query.add_argument("--store", required=True, metavar="DIR")
    query.add_argument("query", metavar="QUERY", help="SPARQL text, or a file holding it")
    query.add_argument("--format", choices=("table", "json", "csv", "tsv"), default="table")
    prepare = ksub.add_parser("prepare", help="record the class archive that lets small load and refresh "
                                              "jobs start Spark quicker (once per JDK and PySpark; "
                                              "make run/test do it)")
    prepare.add_argument("--force", action="store_true", help="record it again even if it is there")
    prepare.add_argument("--json", action="store_true")


def run_kb(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """Dispatch a parsed ``spaseq kb ...`` command."""
    out = out or sys.stdout
    if args.kb_command in ("load", "refresh"):
        return _job(args, out)
    if args.kb_command == "info":
        return _info(args, out)
    if args.kb_command == "prepare":
        return _prepare(args, out)
    return _query(args, out)


def _job(args: argparse.Namespace, out: IO[str]) -> int:
    from spaseq.engine.kb.session import parse_conf, require_pyspark, spark_session

    require_pyspark()
    from spaseq.engine.compile.kb_relevance import query_filter
    from spaseq.engine.kb.dumps import check_graph_iri, expand_sources, input_bytes
    from spaseq.engine.kb.load_job import JobOptions, run_load
    from spaseq.engine.kb.progress import Display, Progress, spark_tasks
    from spaseq.engine.kb.refresh_job import run_refresh
    from spaseq.engine.kb.whole import check_line_dumps
    from spaseq.engine.language.query import load_query

    conf = parse_conf(args.conf)
    keep = query_filter(load_query(args.for_query)) if args.for_query else None
    if args.keep_versions < 1:
        raise UsageError("--keep-versions must be at least 1")
    opts = JobOptions(args.dumps, args.store, args.graph, args.rejects, keep, args.for_query,
                      args.retention, args.keep_versions, args.max_rejects)
    layout = StoreLayout.at(args.store)
    if args.kb_command == "refresh":
        layout.require()
    check_graph_iri(args.graph)
    sources = expand_sources(args.dumps, layout.root)  # bad paths fail before Spark starts
    check_line_dumps(sources)  # and a Turtle file under a line format's name
    terminal = sys.stderr.isatty()
    show = args.progress if args.progress is not None else terminal and not args.json
    progress: Progress = Display(sys.stderr, f"spaseq kb {args.kb_command}", live=terminal) if show else Progress()
    try:
        progress.phase("starting Spark")
        spark = spark_session(args.master, conf, input_bytes=input_bytes(sources))
        if isinstance(progress, Display):
            progress.tasks = spark_tasks(spark)
        run = run_load if args.kb_command == "load" else run_refresh
        summary = run(spark, opts, progress)
    finally:
        progress.close()
    if args.json:
        print(json.dumps(summary, sort_keys=True), file=out)
    elif args.kb_command == "load":
        print(f"version {summary['version']}: {summary['loaded']} quads loaded "
              f"({summary['duplicates']} duplicates, {summary['rejected']} rejected lines"
              f"{', ' + str(summary['pruned']) + ' pruned' if summary['pruned'] else ''}) "
              f"in {summary['seconds']:.1f} s, {summary['quads_per_s'] or 0:.0f} quads/s", file=out)
        _warn_rejects_and_default(summary)
    else:
        print(f"version {summary['version']}: +{summary['added']} -{summary['removed']} quads "
              f"({summary['unchanged']} unchanged, {summary['rejected']} rejected lines, "
              f"{summary['strategy']}) in {summary['seconds']:.1f} s", file=out)
        for g, c in summary["changes"].items():
            print(f"  <{g}>: +{c['added']} -{c['removed']} = {c['quads']}", file=out)
        _warn_rejects_and_default(summary)
    return 0


def _warn_rejects_and_default(summary: dict) -> None:
    """A finished job's warnings, as ``spaseq`` log records (``-q`` keeps them, ``-qq`` not)."""
    if summary["rejected"]:
        log.warning("%s bad line(s) rejected; see %s", summary["rejected"], summary["rejects"])
    if summary.get("default_graph"):
        log.warning("%s triple(s) went into the default graph, which GRAPH clauses do not see; "
                    "give --graph IRI", summary["default_graph"])


def store_info(path: str) -> dict:
    """Versions, graphs and quad counts of a store (for ``kb info``)."""
    layout = StoreLayout.at(path)
    layout.require()
    current = layout.current()
    leases = layout.live_leases()
    versions = []
    for v in layout.versions():
        meta = layout.meta(v)
        versions.append({
            "version": v, "current": v == current, "kind": meta.get("kind"), "quads": meta.get("quads"),
            "graphs": meta.get("graphs", {}), "default_graph": meta.get("default_graph", 0),
            "created": meta.get("created"), "readers": leases.get(v, 0),
            "added": meta.get("added"), "removed": meta.get("removed"), "rejected": meta.get("rejected"),
            "for_query": meta.get("for_query"),
        })
    return {"store": str(layout.root), "current": current, "versions": versions}


def _prepare(args: argparse.Namespace, out: IO[str]) -> int:
    from spaseq.engine.kb.prepare_job import prepare

    done = prepare(force=args.force)
    if args.json:
        print(json.dumps({"archive": str(done.path), "recorded": done.recorded, "megabytes": round(done.megabytes, 1),
                          "seconds": round(done.seconds, 1)}, sort_keys=True), file=out)
    elif done.recorded:
        print(f"class archive recorded in {done.seconds:.0f} s: {done.path} ({done.megabytes:.0f} MB)", file=out)
    else:
        print(f"class archive ready: {done.path} ({done.megabytes:.0f} MB)", file=out)
    return 0


def _info(args: argparse.Namespace, out: IO[str]) -> int:
    info = store_info(args.store)
    if args.json:
        print(json.dumps(info, sort_keys=True), file=out)
        return 0
    print(f"store {info['store']}: current version {info['current']}", file=out)
    for v in info["versions"]:
        mark = "*" if v["current"] else " "
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(v["created"])) if v["created"] else "?"
        change = f" (+{v['added']} -{v['removed']})" if v["kind"] == "refresh" else ""
        print(f"{mark} version {v['version']}: {v['kind']}{change}, {v['quads']} quads, {created}, "
              f"{v['readers']} reader(s)", file=out)
        for g, n in sorted(v["graphs"].items()):
            print(f"      <{g}> {n}", file=out)
        if v["default_graph"]:
            print(f"      (default graph) {v['default_graph']}", file=out)
    return 0


def _query(args: argparse.Namespace, out: IO[str]) -> int:
    from pyoxigraph import QueryBoolean, QueryResultsFormat, QuerySolutions, RdfFormat

    from spaseq.engine.kb.reader import KbStore

    text = args.query
    label = "<query>"
    if os.path.isfile(text):
        label = text
        with open(text, encoding="utf-8") as handle:
            text = handle.read()
    with KbStore(args.store) as kb:
        try:
            result = kb.store.query(text)
        except SyntaxError as exc:
            raise UsageError(f"SPARQL syntax error: {exc}", None if label == "<query>" else Location(label)) from None
        except OSError as exc:
            raise KnowledgeBaseError(f"query failed: {exc}", kb.layout.location()) from None
        if isinstance(result, QueryBoolean):
            print("true" if bool(result) else "false", file=out)
        elif isinstance(result, QuerySolutions):
            if args.format == "table":
                from spaseq.engine.language.prologue import sparql_prefixes
                from spaseq.engine.output.native import solutions_table

                variables = [v.value for v in result.variables]
                solutions_table(variables, ([s[v] for v in variables] for s in result),
                                sparql_prefixes(text), out)
            else:
                fmt = {"json": QueryResultsFormat.JSON, "csv": QueryResultsFormat.CSV,
                       "tsv": QueryResultsFormat.TSV}[args.format]
                out.write(result.serialize(format=fmt).decode("utf-8"))  # type: ignore[union-attr]  # pyoxigraph's stubs: bytes, not None, without an output
        else:
            out.write(result.serialize(format=RdfFormat.N_TRIPLES).decode("utf-8"))  # type: ignore[union-attr]  # pyoxigraph's stubs: bytes, not None, without an output
    return 0

