"""The front door from text to algebra: parse, translate, check."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from spaseq.engine.algebra.operators import Query
from spaseq.engine.errors import Location, QueryError
from spaseq.engine.language.checks import check
from spaseq.engine.language.parser import parse_tree
from spaseq.engine.language.translate import translate


def parse_query(text: str, file: str = "<query>", prefixes: Mapping[str, str] | None = None) -> Query:
    """Parse and check a SPAseq query; raise QueryError naming FILE:LINE:COLUMN. ``prefixes``
    are predeclared namespaces (the query's own PREFIX declarations override them)."""
    return check(translate(parse_tree(text, file), text, file, prefixes))


def load_query(path: str) -> Query:
    """Read and parse a query file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise QueryError("no such query file", Location(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise QueryError(f"cannot read query file: {exc}", Location(path)) from None
    return parse_query(text, path)
