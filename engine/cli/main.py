"""The ``spaseq`` command line: the parser and the dispatch to one module per subcommand
(``run``, ``explain``, ``kb``, ``serve``).

User mistakes print ``FILE:LINE:COLUMN: message`` on stderr and exit with status 2, never
a traceback."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from spaseq.engine.cli.common import (
    EXIT_SYSTEM_ERROR,
    EXIT_USER_ERROR,
    add_verbosity_options,
    configure_logging,
)
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
    parser.add_argument("--version", action=_Version)
    add_verbosity_options(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub)
    add_explain_parser(sub)
    add_kb_parser(sub)
    add_serve_parser(sub)
    for leaf in _subcommands(parser):  # -q/-v after the subcommand too: `spaseq run -q ...`
        add_verbosity_options(leaf, default=argparse.SUPPRESS)
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every subcommand's parser, nested ones (``kb load``) included."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases map to one parser
                out += [child, *_subcommands(child)]
    return out


class _Version(argparse.Action):
    """``--version``, its text made only when asked for (it reads the package metadata)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show the versions and exit") -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


def version_text() -> str:
    """``spaseq --version``: spaseq's version, then its native core's and pyoxigraph's (what
    a bug report needs)."""
    import platform

    import pyoxigraph

    from spaseq.engine._native import __version__ as native
    from spaseq.engine.version import spaseq_version

    return (f"spaseq {spaseq_version()} (native core {native}, pyoxigraph {pyoxigraph.__version__}, "
            f"Python {platform.python_version()})")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    debug = os.environ.get("SPASEQ_LOG", "").lower() == "debug"  # the older spelling of -v
    configure_logging(args.verbose - args.quiet + debug)
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
    except OSError as exc:  # the system refused (a full disk, a vanished file): no traceback
        sys.stdout.flush()
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"spaseq: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_SYSTEM_ERROR
    except KeyboardInterrupt:  # Ctrl-C: the matches written so far stay, no traceback
        return 128 + signal.SIGINT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
