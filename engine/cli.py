"""The ``spaseq`` command line: ``run`` and ``explain``.

User mistakes print ``FILE:LINE:COLUMN: message`` on stderr and exit with status 2, never
a traceback."""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import stat
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import IO

from spaseq.engine import algebra as A
from spaseq.engine.api import Engine
from spaseq.engine.errors import Location, SpaseqError, StreamError, UsageError
from spaseq.engine.events import Event
from spaseq.engine.explain import explain_dot, explain_text
from spaseq.engine.io.output import FORMATS, make_writer
from spaseq.engine.matches import Match, Projector
from spaseq.engine.query import load_query
from spaseq.engine.reference import evaluate

EXIT_USER_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spaseq", description="SPAseq: complex event processing over RDF graph streams"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate a query over recorded streams")
    run.add_argument("query", help="SPAseq query file")
    run.add_argument("--stream", action="append", default=[], metavar="NAME=PATH",
                     help="replay file (TriG or N-Quads, optionally .gz) for stream NAME "
                          "(its IRI or its FROM STREAM name); repeatable")
    run.add_argument("--stream-file", metavar="FILE",
                     help="stream description file of the original SPAseq implementation")
    run.add_argument("--kb", action="append", default=[], metavar="[GRAPH-IRI=]PATH",
                     help="background knowledge file loaded into an in-memory store; repeatable")
    run.add_argument("--format", choices=FORMATS, default="table")
    run.add_argument("--output", metavar="FILE", help="write results here instead of stdout")
    run.add_argument("--with-time", action="store_true",
                     help="json/csv/tsv: add _time and _start columns")
    run.add_argument("--engine", choices=("nfa", "reference"), default="nfa",
                     help="nfa: the incremental automaton engine (default); reference: the direct, "
                          "slow implementation of the semantics, for checking")
    run.add_argument("--time-predicate", metavar="IRI",
                     help="predicate of the event timestamp triple (default prov:generatedAtTime)")
    run.add_argument("--input-format", choices=("auto", "trig", "nquads"), default="auto",
                     help="format of live streams ('-' or a named pipe): N-Quads unless the name "
                          "ends in .trig")
    run.add_argument("--drop-late", action="store_true",
                     help="drop events that arrive out of time order on their stream (counted on "
                          "stderr) instead of stopping with an error")

    ex = sub.add_parser("explain", help="show a query's algebra")
    ex.add_argument("query")
    ex.add_argument("--dot", action="store_true", help="Graphviz DOT instead of text")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "explain":
            return _explain(args)
        return _run(args)
    except SpaseqError as exc:
        sys.stdout.flush()
        print(f"spaseq: {exc}" if exc.location is None else str(exc), file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return 0


def _explain(args: argparse.Namespace) -> int:
    query = load_query(args.query)
    _warn(query.warnings)
    print(explain_dot(query) if args.dot else explain_text(query))
    return 0


def _warn(lines: Sequence[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)


@dataclass
class Input:
    """Events read for one run and the first input error, if any."""

    events: list[Event] = field(default_factory=list)
    errors: list[tuple[StreamError, float]] = field(default_factory=list)

    def usable(self) -> tuple[list[Event], bool]:
        """Events safe to evaluate and whether the input ended normally: after an error,
        only events up to the last timestamp read from the failing file."""
        if not self.errors:
            return self.events, True
        cutoff = min(t for _, t in self.errors)
        return [e for e in self.events if e.time <= cutoff], False


def _run(args: argparse.Namespace) -> int:
    query = load_query(args.query)
    _warn(query.warnings)
    if any(_is_live(spec.partition("=")[2]) for spec in args.stream):
        return _run_live(args, query)
    inp = _read_input(args, query)
    kb = _load_kb(args, query)
    events, complete = inp.usable()
    variables = list(query.match.variables) if query.match.variables is not None else sorted(
        {v for ev in query.events.values() for v in ev.variables}
    )
    with _open_output(args.output) as out:
        writer = make_writer(args.format, out, variables, args.with_time, query.prefixes)
        writer.start()
        projector = Projector(query.match.variables, query.match.distinct)

        def write(match: Match) -> None:
            row = projector(match)
            if row is not None:
                writer.row(row)

        if args.engine == "reference":
            for match in evaluate(query, events, kb, end_of_input=complete):
                write(match)
        else:
            engine = Engine(kb)
            engine.register(query, on_match=write, keep=False)
            for event in sorted(events, key=Event.sort_key):
                engine.push_event(event)
            if complete:
                engine.close()
            else:
                engine.flush()
        writer.finish()
    if inp.errors:
        raise inp.errors[0][0]
    return 0


def _is_live(path: str) -> bool:
    """'-' (stdin) or a named pipe: read incrementally, not as a recording."""
    if path == "-":
        return True
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _run_live(args: argparse.Namespace, query: A.Query) -> int:
    """Push events from live sources as they complete; write each match immediately."""
    from spaseq.engine.io.live import LiveReader
    from spaseq.engine.io.replay import PROV_GENERATED_AT

    if args.stream_file:
        raise UsageError("--stream-file cannot be combined with a live stream ('-' or a pipe)")
    sources = []
    for spec in args.stream:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise UsageError(f"--stream {spec}: expected NAME=PATH")
        if not _is_live(path):
            raise UsageError(f"--stream {spec}: a replay file cannot be combined with live streams")
        fmt = args.input_format
        if fmt == "auto":
            fmt = "trig" if path.endswith(".trig") else "nquads"
        sources.append((_stream_iri(query, name), path, fmt))
    if sum(1 for _, path, _ in sources if path == "-") > 1:
        raise UsageError("only one stream can read standard input")
    kb = _load_kb(args, query)
    events: queue.Queue = queue.Queue()

    def read(iri: str, path: str, fmt: str) -> None:
        try:
            handle = sys.stdin if path == "-" else open(path, encoding="utf-8")
            with contextlib.ExitStack() as stack:
                if path != "-":
                    stack.enter_context(handle)
                label = "<stdin>" if path == "-" else path
                reader = LiveReader(handle, iri, label, fmt, args.time_predicate or PROV_GENERATED_AT)
                for event in reader.events():
                    events.put(event)
        except SpaseqError as exc:
            events.put(exc)
        finally:
            events.put(None)

    threads = [threading.Thread(target=read, args=src, daemon=True) for src in sources]
    for t in threads:
        t.start()
    variables = list(query.match.variables) if query.match.variables is not None else sorted(
        {v for ev in query.events.values() for v in ev.variables}
    )
    error: SpaseqError | None = None
    with _open_output(args.output) as out:
        writer = make_writer(args.format, out, variables, args.with_time, query.prefixes)
        writer.start()
        projector = Projector(query.match.variables, query.match.distinct)

        def write(match: Match) -> None:
            row = projector(match)
            if row is not None:
                writer.row(row)

        engine = Engine(kb, drop_late=args.drop_late)
        engine.register(query, on_match=write, keep=False)
        open_sources = len(threads)
        seq = 0
        while open_sources:
            item = events.get()
            if item is None:
                open_sources -= 1
            elif isinstance(item, SpaseqError):
                error = error or item
            else:
                seq += 1
                engine.push_event(replace(item, seq=seq))
        if error is None:
            engine.close()
        else:
            engine.flush()
        writer.finish()
    if engine.dropped_late:
        print(f"spaseq: dropped {engine.dropped_late} late event(s)", file=sys.stderr)
    if error is not None:
        raise error
    return 0


def _stream_iri(query: A.Query, name: str) -> str:
    if name.startswith("<") and name.endswith(">"):
        name = name[1:-1]
    if name in query.streams:
        return query.streams[name]
    if name in query.streams.values():
        return name
    known = ", ".join(f"{n} <{iri}>" for n, iri in query.streams.items())
    raise UsageError(f"--stream {name}: the query has no such stream (it has: {known})")


def _read_input(args: argparse.Namespace, query: A.Query) -> Input:
    from spaseq.engine.io.replay import PROV_GENERATED_AT, read_replay
    from spaseq.engine.io.streamfile import read_stream_description

    inp = Input()
    if not args.stream and not args.stream_file:
        raise UsageError("no input: give --stream NAME=PATH or --stream-file FILE")
    specs = []
    for spec in args.stream:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise UsageError(f"--stream {spec}: expected NAME=PATH")
        specs.append((_stream_iri(query, name), path))
    seq = 0
    for iri, path in specs:
        res = read_replay(path, iri, time_predicate=args.time_predicate or PROV_GENERATED_AT,
                          first_seq=seq)
        seq += len(res.events) + 1
        inp.events.extend(res.events)
        if res.error is not None:
            inp.errors.append((res.error, max((e.time for e in res.events), default=float("-inf"))))
    if args.stream_file:
        res = read_stream_description(args.stream_file, drop_late=args.drop_late)
        if res.dropped_late:
            print(f"spaseq: dropped {res.dropped_late} late event(s)", file=sys.stderr)
        offset = seq
        inp.events.extend(_renumber(res.events, offset))
        if res.error is not None:
            inp.errors.append((res.error, max((e.time for e in res.events), default=float("-inf"))))
    given = {e.stream for e in inp.events} | {iri for iri, _ in specs}
    for name, iri in query.streams.items():
        if iri not in given:
            print(f"{Location(query.file)}: warning: stream {name} <{iri}> has no input",
                  file=sys.stderr)
    return inp


def _renumber(events: list[Event], offset: int) -> list[Event]:
    if offset == 0:
        return events
    from dataclasses import replace

    return [replace(e, seq=e.seq + offset) for e in events]


def _load_kb(args: argparse.Namespace, query: A.Query):
    if not args.kb:
        for iri in query.graph_iris():
            print(f"{Location(query.file)}: warning: GRAPH <{iri}> is used but no knowledge base "
                  "was given (--kb): it matches nothing", file=sys.stderr)
        return None
    from spaseq.engine.io.kb import load_kb, parse_kb_option

    kb = load_kb([parse_kb_option(text) for text in args.kb], query.graph_iris())
    for iri in kb.missing(query.graph_iris()):
        print(f"{Location(query.file)}: warning: GRAPH <{iri}> names a graph the knowledge base "
              "does not have", file=sys.stderr)
    return kb.store


@contextlib.contextmanager
def _open_output(path: str | None):
    if path is None:
        yield sys.stdout
        return
    try:
        handle: IO[str] = open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise UsageError(f"--output {path}: {exc.strerror}") from None
    with handle:
        yield handle


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
