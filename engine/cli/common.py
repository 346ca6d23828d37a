"""What the subcommands share: the engine options asked for on the command line, the exit
status of user errors, and warnings on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from spaseq.engine.compile.plan import EngineOptions

EXIT_USER_ERROR = 2


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The opt-in optimisations (``EngineOptions``), for ``run`` and ``explain`` alike."""
    parser.add_argument("--lazy-chain", action="store_true",
                        help="evaluate a leading 'X : Y ...' lazily, when its last atom matches (faster "
                             "when that atom is rare; same matches)")
    parser.add_argument("--lazy-conjunction", action="store_true",
                        help="evaluate conjunction operands once their timestamp is complete, cheapest "
                             "first (same matches)")


def engine_options(args: argparse.Namespace) -> EngineOptions:
    """The engine's optimisations: the defaults, plus the opt-in ones asked for."""
    return EngineOptions(lazy_chain=args.lazy_chain, lazy_conjunction=args.lazy_conjunction)


def warn(lines: Sequence[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)
