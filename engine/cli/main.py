"""The ``spaseq`` command line: the parser and the dispatch to one module per subcommand
(``run``, ``explain``, ``kb``, ``serve``).

User mistakes print ``FILE:LINE:COLUMN: message`` on stderr and exit with status 2, never
a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from spaseq.engine.cli.common import EXIT_USER_ERROR
from spaseq.engine.cli.explain import add_explain_parser, run_explain
from spaseq.engine.cli.kb import add_kb_parser, run_kb
from spaseq.engine.cli.run import add_run_parser, run_run
from spaseq.engine.cli.serve import add_serve_parser, run_serve
from spaseq.engine.errors import SpaseqError

__all__ = ["EXIT_USER_ERROR", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spaseq", description="SPAseq: complex event processing over RDF graph streams"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub)
    add_explain_parser(sub)
    add_kb_parser(sub)
    add_serve_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "explain":
            return run_explain(args)
        if args.command == "kb":
            return run_kb(args)
        if args.command == "serve":
            return run_serve(args)
        return run_run(args)
    except SpaseqError as exc:
        sys.stdout.flush()
        print(f"spaseq: {exc}" if exc.location is None else str(exc), file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
